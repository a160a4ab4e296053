//! `smartnic NOUN VERB`: every example parses, every visible command has examples, the old
//! spellings are hidden and run exactly as their new ones, and the new spellings work
//! through the binary.

use clap::Parser;
use smartnic::cli::examples::{argv, visible_commands, PAGES};
use smartnic::cli::{command, Cli};
use smartnic::trace::{generate_files, GenConfig, ShimConfig};
use smartnic_contract::geometry::{SuMaxGeometry, TowerGeometry};
use smartnic_contract::regs::layout::FirmwareInfo;
use smartnic_driver::backend::FileBar;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

fn smartnic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

fn parse(args: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("smartnic").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("`smartnic {}` does not parse: {e}", args.join(" ")))
}

#[test]
fn the_grammar_is_consistent() {
    command().debug_assert();
}

#[test]
fn every_example_parses() {
    for page in PAGES {
        for e in page.examples {
            let words = argv(e.line);
            if let Err(err) = Cli::try_parse_from(&words) {
                panic!("example `smartnic {}` ({}) does not parse: {err}", e.line, page.path.join(" "));
            }
            command().try_get_matches_from(&words).unwrap();
        }
        let shows_itself = page.examples.iter().any(|e| {
            let words = argv(e.line);
            let words: Vec<&str> =
                words.iter().skip(1).map(String::as_str).filter(|w| *w != "--json").collect();
            words.starts_with(page.path)
        });
        assert!(shows_itself, "the page of `{}` has no example of that command", page.path.join(" "));
    }
}

#[test]
fn example_words_split_as_a_shell_splits_them() {
    assert_eq!(
        argv("snapshot query t.snap --flow '1.2.3.4:1>5.6.7.8:2/6'"),
        ["smartnic", "snapshot", "query", "t.snap", "--flow", "1.2.3.4:1>5.6.7.8:2/6"]
    );
    assert_eq!(
        argv("--json trace stats t.pcap > t.json"),
        ["smartnic", "--json", "trace", "stats", "t.pcap"]
    );
}

#[test]
fn every_visible_command_has_exactly_one_page() {
    let visible: BTreeSet<String> =
        visible_commands(&command(), "smartnic").into_iter().map(|(p, _)| p).collect();
    let paged: Vec<String> = PAGES.iter().map(|p| format!("smartnic {}", p.path.join(" "))).collect();
    let paged_set: BTreeSet<String> = paged.iter().cloned().collect();
    assert_eq!(paged.len(), paged_set.len(), "a command has two pages: {paged:?}");
    assert_eq!(visible, paged_set);
}

#[test]
fn the_grammar_is_noun_then_verb() {
    let visible: Vec<String> = visible_commands(&command(), "smartnic").into_iter().map(|(p, _)| p).collect();
    let expected = [
        "trace gen",
        "trace stats",
        "sketch run",
        "sketch eval",
        "snapshot report",
        "snapshot query",
        "snapshot diff",
        "snapshot merge",
        "snapshot export",
        "device list",
        "device status",
        "device configure",
        "device readout",
        "sim run",
        "demo",
        "lab run",
        "lab topo",
        "lab entries",
        "lab score",
        "collect",
        "fleet query",
        "fleet synth",
    ];
    assert_eq!(visible, expected.map(|c| format!("smartnic {c}")));
}

/// The command names listed under `Commands:` in a `--help` text.
fn listed_commands(help: &str) -> Vec<String> {
    let section = help.split_once("Commands:\n").expect("a Commands: section").1;
    section
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn old_spellings_are_hidden_from_help() {
    let help = |args: &[&str]| {
        let out = smartnic(args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(
        listed_commands(&help(&["--help"])),
        ["trace", "sketch", "snapshot", "device", "sim", "demo", "lab", "collect", "fleet", "help"]
    );
    assert_eq!(listed_commands(&help(&["sketch", "--help"])), ["run", "eval", "help"]);
    let sim = help(&["sim", "--help"]);
    assert_eq!(listed_commands(&sim), ["run", "help"]);
    assert!(!sim.contains("--trace"), "the old `sim --trace` arguments show in `sim --help`:\n{sim}");
    assert!(help(&["sim", "run", "--help"]).contains("--trace"));
    let old: [(&[&str], &[&str]); 2] = [
        (&["--help"], &["devices", "status", "readout", "report", "eval"]),
        (&["sketch", "--help"], &["query", "diff"]),
    ];
    for (args, names) in old {
        let text = help(args);
        for name in listed_commands(&text) {
            assert!(!names.contains(&name.as_str()), "old spelling `{name}` listed:\n{text}");
        }
    }
}

#[test]
fn help_ends_with_the_pages_examples() {
    let out = smartnic(&["snapshot", "diff", "--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Example:\n  smartnic snapshot diff nic/epoch-000000.snap sw/epoch-000000.snap\n"),
        "{text}"
    );
    let out = smartnic(&["--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("  smartnic device list\n"), "{text}");
}

#[test]
fn old_spellings_run_as_their_new_one() {
    let pairs: [(&[&str], &[&str]); 9] = [
        (&["devices", "--sysfs", "/s"], &["device", "list", "--sysfs", "/s"]),
        (&["status", "--device", "file:b"], &["device", "status", "--device", "file:b"]),
        (
            &["readout", "-d", "x", "-o", "o", "--every", "5s"],
            &["device", "readout", "-d", "x", "-o", "o", "--every", "5s"],
        ),
        (
            &["--json", "report", "t.snap", "--top", "3"],
            &["--json", "snapshot", "report", "t.snap", "--top", "3"],
        ),
        (
            &["eval", "--trace", "t.pcap", "--memory", "1KB"],
            &["sketch", "eval", "--trace", "t.pcap", "--memory", "1KB"],
        ),
        (
            &["sketch", "query", "t.snap", "--flow", "1.2.3.4:1>5.6.7.8:2/6"],
            &["snapshot", "query", "t.snap", "--flow", "1.2.3.4:1>5.6.7.8:2/6"],
        ),
        (&["sketch", "diff", "a", "b"], &["snapshot", "diff", "a", "b"]),
        (
            &["sim", "--trace", "t.pcap", "-o", "d", "--mode", "cm"],
            &["sim", "run", "--trace", "t.pcap", "-o", "d", "--mode", "cm"],
        ),
        (&["sim", "-t", "t.pcap", "--output", "d"], &["sim", "run", "-t", "t.pcap", "--output", "d"]),
    ];
    for (old, new) in pairs {
        let (o, n) = (parse(old), parse(new));
        assert_eq!(o.json, n.json);
        assert_eq!(
            format!("{:?}", o.command.canonical()),
            format!("{:?}", n.command.canonical()),
            "{old:?} vs {new:?}"
        );
    }
}

#[test]
fn a_bare_noun_shows_its_verbs() {
    for noun in ["sim", "sketch", "snapshot", "device"] {
        let out = smartnic(&[noun]);
        assert_eq!(out.status.code(), Some(2), "`smartnic {noun}`");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: smartnic"), "`smartnic {noun}`");
    }
}

fn trace(dir: &Path) -> String {
    let cfg = GenConfig {
        seed: 3,
        packets: 3_000,
        flows: 200,
        shim: Some(ShimConfig::default()),
        ..GenConfig::default()
    };
    let pcap = dir.join("t.pcap");
    generate_files(&cfg, &pcap, &dir.join("t.pcap.truth.json"), None).unwrap();
    pcap.display().to_string()
}

/// Runs both spellings and checks they print the same stdout and exit alike.
fn same_output(old: &[&str], new: &[&str]) -> Output {
    let (o, n) = (smartnic(old), smartnic(new));
    assert_eq!(o.status.code(), n.status.code(), "{old:?}: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&n.stdout), "{old:?} vs {new:?}");
    n
}

#[test]
fn new_spellings_run_the_software_path() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = trace(dir.path());
    let snap = dir.path().join("t.snap");
    let snap = snap.to_str().unwrap();
    let out = smartnic(&["sketch", "run", "--trace", &pcap, "-o", snap, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let report = same_output(&["report", snap, "--json"], &["snapshot", "report", snap, "--json"]);
    assert!(report.status.success());
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(report["packets"], 3_000, "{report}");

    let flow = "10.0.0.1:1234>10.0.0.2:80/6";
    let q = same_output(
        &["sketch", "query", snap, "--flow", flow, "--json"],
        &["snapshot", "query", snap, "--flow", flow, "--json"],
    );
    assert!(q.status.success());

    let d =
        same_output(&["sketch", "diff", snap, snap, "--json"], &["snapshot", "diff", snap, snap, "--json"]);
    assert_eq!(d.status.code(), Some(0));

    // The accuracy lab reports its wall time: compare everything else.
    let eval = ["--trace", &pcap, "--sketch", "cm", "--memory", "20KB", "--tasks", "size", "--json"];
    let (o, n) =
        (smartnic(&[&["eval"][..], &eval].concat()), smartnic(&[&["sketch", "eval"][..], &eval].concat()));
    assert!(o.status.success() && n.status.success(), "{}", String::from_utf8_lossy(&n.stderr));
    let timeless = |out: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        drop_seconds(&mut v);
        v
    };
    assert_eq!(timeless(&o), timeless(&n));
    assert_eq!(timeless(&n)["rows"][0]["sketch"], "cm");
}

/// Removes every `seconds` field (wall times differ between two runs).
fn drop_seconds(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("seconds");
            m.values_mut().for_each(drop_seconds);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_seconds),
        _ => {}
    }
}

#[test]
fn new_spellings_run_the_device_path() {
    let dir = tempfile::tempdir().unwrap();
    let bar = dir.path().join("bar.img");
    let fw = FirmwareInfo { device: 0x7038, version: 0x0001_0002, build_time: 7, git_hash: 0xfeed_beef };
    FileBar::create_device(&bar, fw, &TowerGeometry::sketchint_fpga(), &SuMaxGeometry::nic_default())
        .unwrap();
    let dev = format!("file:{}", bar.display());
    let s = same_output(
        &["status", "--device", &dev, "--json"],
        &["device", "status", "--device", &dev, "--json"],
    );
    assert!(s.status.success());

    let sysfs = dir.path().join("sys");
    std::fs::create_dir_all(sysfs.join("bus/pci/devices")).unwrap();
    let sysfs = sysfs.to_str().unwrap();
    let l = same_output(
        &["devices", "--sysfs", sysfs, "--json"],
        &["device", "list", "--sysfs", sysfs, "--json"],
    );
    assert!(l.status.success());
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&l.stdout).unwrap(), serde_json::json!([]));
}
