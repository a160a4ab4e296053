//! The Vivado scripts of `constraints/` run in `tclsh` against stub Vivado commands
//! (`constraints/test/stub_vivado.tcl`) that record every call; these tests check the calls:
//! part, vendor IP and its configuration, file lists, top, reports, bitstream and flash image.
//! tclsh comes from Debian's `tcl` package (`scripts/setup` installs it); without it the
//! tests fail and say so.

use smartnic_contract::board;
use smartnic_contract::regs::{PCI_DEVICE_ID, PCI_VENDOR_ID};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (this crate is `hdl/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A fresh scratch directory for one test, removed when the test ends.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("vivado_tcl-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// An HDL directory as `scripts/board build` leaves it: the contract's XDC and parameters,
/// and stand-in Verilog files (the stubs never read them).
fn hdl_dir(dir: &Path) -> PathBuf {
    let hdl = dir.join("hdl");
    std::fs::create_dir_all(&hdl).unwrap();
    std::fs::write(hdl.join(board::XDC_FILE), board::xdc()).unwrap();
    std::fs::write(hdl.join(board::PARAMS_FILE), board::params_tcl()).unwrap();
    for v in ["smartnic_vc709.v", "core_top.v"] {
        std::fs::write(hdl.join(v), "module stand_in; endmodule\n").unwrap();
    }
    std::fs::write(hdl.join("notes.txt"), "not Verilog\n").unwrap();
    // The lint's black-box stubs of the vendor IP sit beside the top; Vivado must not read
    // them instead of the IP.
    std::fs::write(hdl.join("smartnic_vc709.stubs.vh"), "module xdma_0; endmodule\n").unwrap();
    hdl
}

/// Runs `script` under the stubs with `args`; returns the process output and the calls,
/// each as its command name followed by its arguments.
fn run_stubbed(dir: &Path, script: &Path, args: &[&Path]) -> (Output, Vec<Vec<String>>) {
    let log = dir.join("calls.log");
    let out = Command::new("tclsh")
        .arg(root().join("constraints/test/stub_vivado.tcl"))
        .arg(&log)
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run tclsh ({e}): install Debian's `tcl` package (scripts/setup does)")
        });
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let calls = text.lines().map(|l| l.split('\t').map(str::to_string).collect()).collect();
    (out, calls)
}

/// Runs one of the board scripts and insists it succeeded.
fn run_ok(dir: &Path, script: &str, args: &[&Path]) -> Vec<Vec<String>> {
    let (out, calls) = run_stubbed(dir, &root().join("constraints").join(script), args);
    assert!(out.status.success(), "{script} failed: {}", String::from_utf8_lossy(&out.stderr));
    calls
}

/// The calls of command `name`.
fn calls_of<'a>(calls: &'a [Vec<String>], name: &str) -> Vec<&'a [String]> {
    calls.iter().filter(|c| c[0] == name).map(|c| &c[1..]).collect()
}

/// The one call of `name`.
fn one<'a>(calls: &'a [Vec<String>], name: &str) -> &'a [String] {
    let c = calls_of(calls, name);
    assert_eq!(c.len(), 1, "{name} called {} times", c.len());
    c[0]
}

/// The value following `flag` in an argument list.
fn flag<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("no {flag} in {args:?}"));
    &args[i + 1]
}

/// The CONFIG.* dictionary set on IP `module`.
fn ip_config(calls: &[Vec<String>], module: &str) -> HashMap<String, String> {
    let set = calls_of(calls, "set_property")
        .into_iter()
        .find(|a| a[0] == "-dict" && a[2] == module)
        .unwrap_or_else(|| panic!("no set_property -dict on {module}"));
    let words: Vec<&str> = set[1].split_whitespace().collect();
    words.chunks(2).map(|kv| (kv[0].to_string(), kv[1].to_string())).collect()
}

#[test]
fn build_tcl_creates_the_ip_reads_the_sources_and_writes_reports_and_bitstream() {
    let dir = scratch("build");
    let hdl = hdl_dir(&dir);
    let out = dir.join("out");
    let calls = run_ok(&dir, "build.tcl", &[&hdl, &out]);

    assert_eq!(one(&calls, "create_project"), ["-in_memory", "-part", "xc7vx690tffg1761-2"]);
    let ips: Vec<(&str, &str)> =
        calls_of(&calls, "create_ip").iter().map(|a| (flag(a, "-name"), flag(a, "-module_name"))).collect();
    assert_eq!(
        ips,
        [("xdma", "xdma_0"), ("axi_10g_ethernet", "eth_shared"), ("axi_10g_ethernet", "eth_port")]
    );

    let x = ip_config(&calls, "xdma_0");
    for (k, v) in [
        ("CONFIG.pl_link_cap_max_link_width", "X8"),
        ("CONFIG.pl_link_cap_max_link_speed", "8.0_GT/s"),
        ("CONFIG.ref_clk_freq", "100_MHz"),
        ("CONFIG.axi_data_width", "256_bit"),
        ("CONFIG.axisten_freq", "250"),
        ("CONFIG.xdma_axi_intf_mm", "AXI_Stream"),
        ("CONFIG.axilite_master_en", "true"),
    ] {
        assert_eq!(x.get(k).map(String::as_str), Some(v), "xdma {k}");
    }
    let channels = smartnic_contract::xdma::C2H_CHANNELS.to_string();
    assert_eq!(x["CONFIG.xdma_wnum_chnl"], channels, "card-to-host channels from the contract");
    assert_eq!(x["CONFIG.vendor_id"], format!("{PCI_VENDOR_ID:04X}"), "vendor ID from the contract");
    assert_eq!(x["CONFIG.pf0_device_id"], format!("{PCI_DEVICE_ID:04X}"), "device ID from the contract");
    let bar =
        (x["CONFIG.axilite_master_size"].parse::<u32>().unwrap(), x["CONFIG.axilite_master_scale"].as_str());
    assert_eq!(bar, board::bar_size_and_scale(board::register_bar_bytes()), "register BAR from the layout");

    for (module, level) in [("eth_shared", "1"), ("eth_port", "0")] {
        let e = ip_config(&calls, module);
        assert_eq!(e["CONFIG.base_kr"], "BASE-R", "{module}");
        assert_eq!(e["CONFIG.SupportLevel"], level, "{module}: shared logic in port 0 only");
        assert_eq!(e["CONFIG.RefClkRate"], "156.25", "{module}");
    }
    for ip in ["xdma_0", "eth_shared", "eth_port"] {
        assert!(calls_of(&calls, "generate_target").iter().any(|a| a[..] == ["all", ip]), "{ip} generated");
        assert!(calls_of(&calls, "synth_ip").iter().any(|a| a[..] == [ip]), "{ip} synthesized");
    }

    let verilog: Vec<String> = one(&calls, "read_verilog")[0].split(' ').map(str::to_string).collect();
    let hdl_s = hdl.display().to_string();
    assert_eq!(
        verilog,
        [format!("{hdl_s}/core_top.v"), format!("{hdl_s}/smartnic_vc709.v")],
        "every .v, nothing else (not the IP stubs)"
    );
    assert_eq!(one(&calls, "read_xdc"), [format!("{hdl_s}/{}", board::XDC_FILE)]);
    assert_eq!(one(&calls, "synth_design"), ["-top", "smartnic_vc709", "-part", "xc7vx690tffg1761-2"]);

    let order: Vec<&str> = calls.iter().map(|c| c[0].as_str()).collect();
    let at = |n: &str| order.iter().position(|c| *c == n).unwrap_or_else(|| panic!("{n} never called"));
    let steps = ["read_xdc", "synth_design", "opt_design", "place_design", "route_design", "write_bitstream"];
    assert!(steps.windows(2).all(|w| at(w[0]) < at(w[1])), "flow order: {order:?}");
    let out_s = out.display().to_string();
    assert_eq!(one(&calls, "report_utilization"), ["-file".to_string(), format!("{out_s}/utilization.rpt")]);
    assert_eq!(
        one(&calls, "report_timing_summary"),
        ["-file".to_string(), format!("{out_s}/timing_summary.rpt")]
    );
    assert_eq!(one(&calls, "write_bitstream"), ["-force".to_string(), format!("{out_s}/smartnic_vc709.bit")]);
}

#[test]
fn build_tcl_refuses_a_directory_without_verilog() {
    let dir = scratch("noverilog");
    let hdl = hdl_dir(&dir);
    for v in ["smartnic_vc709.v", "core_top.v"] {
        std::fs::remove_file(hdl.join(v)).unwrap();
    }
    let (out, calls) = run_stubbed(&dir, &root().join("constraints/build.tcl"), &[&hdl, &dir.join("out")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no generated Verilog"), "{out:?}");
    assert!(calls_of(&calls, "synth_design").is_empty());
}

#[test]
fn flash_tcl_writes_the_bpi_image_and_programs_the_flash() {
    let dir = scratch("flash");
    let hdl = hdl_dir(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("smartnic_vc709.bit"), b"bit").unwrap();
    let calls = run_ok(&dir, "flash.tcl", &[&hdl, &out]);

    let w = one(&calls, "write_cfgmem");
    let out_s = out.display().to_string();
    assert_eq!(flag(w, "-format"), "mcs");
    assert_eq!(flag(w, "-interface"), "BPIx16");
    assert_eq!(flag(w, "-size"), "128", "the 28F00AG18F's 1 Gbit in MB");
    assert_eq!(flag(w, "-loadbit"), format!("up 0x00000000 {out_s}/smartnic_vc709.bit"));
    assert_eq!(flag(w, "-file"), format!("{out_s}/smartnic_vc709.mcs"));

    assert_eq!(one(&calls, "get_hw_devices"), ["xc7vx690t*"]);
    assert_eq!(one(&calls, "get_cfgmem_parts"), ["28f00ag18f-bpi-x16"]);
    assert_eq!(
        one(&calls, "create_hw_cfgmem"),
        ["-hw_device", "xc7vx690t_0", "-mem_dev", "28f00ag18f-bpi-x16"]
    );
    let files = calls_of(&calls, "set_property").into_iter().find(|a| a[0] == "PROGRAM.FILES").unwrap();
    assert_eq!(
        files,
        [String::from("PROGRAM.FILES"), format!("{out_s}/smartnic_vc709.mcs"), "cfgmem_0".into()]
    );
    assert_eq!(one(&calls, "program_hw_cfgmem"), ["-hw_cfgmem", "cfgmem_0"]);
    let order: Vec<&str> = calls.iter().map(|c| c[0].as_str()).collect();
    let at = |n: &str| order.iter().position(|c| *c == n).unwrap();
    assert!(at("write_cfgmem") < at("open_hw_target") && at("program_hw_devices") < at("program_hw_cfgmem"));
}

#[test]
fn flash_and_load_refuse_a_missing_bitstream_before_touching_the_board() {
    for script in ["flash.tcl", "load.tcl"] {
        let dir = scratch(&format!("nobit-{script}"));
        let hdl = hdl_dir(&dir);
        let (out, calls) =
            run_stubbed(&dir, &root().join("constraints").join(script), &[&hdl, &dir.join("out")]);
        assert!(!out.status.success(), "{script}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/board build"), "{script}: {out:?}");
        assert!(calls_of(&calls, "open_hw_target").is_empty(), "{script}");
    }
}

#[test]
fn load_tcl_programs_the_bitstream_over_jtag() {
    let dir = scratch("load");
    let hdl = hdl_dir(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("smartnic_vc709.bit"), b"bit").unwrap();
    let calls = run_ok(&dir, "load.tcl", &[&hdl, &out]);
    let set = calls_of(&calls, "set_property").into_iter().find(|a| a[0] == "PROGRAM.FILE").unwrap();
    assert_eq!(
        set,
        ["PROGRAM.FILE".to_string(), format!("{}/smartnic_vc709.bit", out.display()), "xc7vx690t_0".into()]
    );
    assert_eq!(one(&calls, "program_hw_devices"), ["xc7vx690t_0"]);
    assert!(calls_of(&calls, "write_cfgmem").is_empty(), "a JTAG load leaves the flash alone");
}

#[test]
fn stubs_reject_a_command_they_do_not_know() {
    let dir = scratch("unknown");
    let script = dir.join("new.tcl");
    std::fs::write(&script, "launch_runs impl_1\n").unwrap();
    let (out, _) = run_stubbed(&dir, &script, &[]);
    assert!(!out.status.success(), "an unknown Vivado command must fail the run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown command `launch_runs`"), "{out:?}");
}
