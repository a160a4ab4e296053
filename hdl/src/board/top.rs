//! The board top `smartnic_vc709` (block of the same name): the VC709's pins (exactly the
//! contract's port table, `smartnic_contract::board::PORTS`), the vendor IP that
//! `constraints/build.tcl` creates, and our [`BoardLogic`](super::logic::BoardLogic)
//! between them. It is structural Verilog written here from tables: each IP's port list
//! ([`black_boxes`], as the IP's generated wrapper has it) and, for every port of every
//! instance, what it is connected to, so a port left out is an error at generation, never
//! a floating pin.
//!
//! # Instances
//! - `xdma_0` (PG195, DMA/Bridge Subsystem for PCI Express on the Virtex-7 XT's Gen3 block:
//!   x8 at 8 GT/s, 256-bit AXI-Stream at 250 MHz, two card-to-host channels and one
//!   host-to-card, AXI4-Lite master on BAR0): its `axi_aclk` is the core clock, its AXI4-Lite
//!   master the register bus (the low 22 bits of the address: the 4 MiB BAR), channel 0 the
//!   readout stream, channel 1 the record ring. The host-to-card channel is drained and
//!   unused; no user interrupt.
//! - `eth_shared` and three `eth_port` (PG157, 10G Ethernet Subsystem, 10GBASE-R MAC + PCS/PMA,
//!   no management interface): SFP+ port 0 carries the shared logic (quad 113's QPLL, the
//!   reference clock's buffer, `coreclk_out`), ports 1..3 take their clocks and resets from
//!   it. The MAC configuration vectors are `80'h2` (bit 1: enable; no VLAN, no custom
//!   preamble), the PCS/PMA vector 0 (no loopback), as Xilinx's example design sets them;
//!   nothing is transmitted. The subsystem is held in reset until the Si5324 is programmed:
//!   before that its reference clock is not 156.25 MHz.
//! - `IBUFDS` for the 200 MHz system clock, `IBUFDS_GTE2` for the PCIe reference clock (the
//!   SFP+ reference clock's buffer is inside `eth_shared`).
//! - The I2C lines are open drain: a pin is driven low or left floating.
//!
//! The port lists are those of the IP wrappers Vivado generates for these configurations
//! (xdma 4.1 and axi_10g_ethernet 3.1 on the XC7VX690T, from public generated stubs and
//! instantiation templates of the same part and settings). A newer Vivado's wrapper should
//! be compared once with [`black_boxes`] (its `<ip>.veo`); `hdl/tests/board_top.rs` lints
//! the top against these lists and checks its wiring with Yosys.
use smartnic_contract::board::{Dir, PORTS, TOP};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A port of a black box: direction, width, name.
pub type BoxPort = (Dir, usize, &'static str);

/// A module the top instantiates but does not define (vendor IP or a primitive).
pub struct BlackBox {
    pub module: &'static str,
    pub ports: Vec<BoxPort>,
    /// A Xilinx primitive: Yosys' cell library knows it, only the lint needs its stub.
    pub primitive: bool,
}

use Dir::{In as I, Out as O};

/// The ports both 10G Ethernet Subsystem variants have.
const ETH_COMMON: &[BoxPort] = &[
    (I, 1, "tx_axis_aresetn"),
    (I, 1, "rx_axis_aresetn"),
    (I, 8, "tx_ifg_delay"),
    (I, 1, "dclk"),
    (O, 1, "txp"),
    (O, 1, "txn"),
    (I, 1, "rxp"),
    (I, 1, "rxn"),
    (I, 1, "signal_detect"),
    (I, 1, "tx_fault"),
    (O, 1, "tx_disable"),
    (O, 8, "pcspma_status"),
    (I, 1, "sim_speedup_control"),
    (O, 1, "rxrecclk_out"),
    (I, 80, "mac_tx_configuration_vector"),
    (I, 80, "mac_rx_configuration_vector"),
    (O, 3, "mac_status_vector"),
    (I, 536, "pcs_pma_configuration_vector"),
    (O, 448, "pcs_pma_status_vector"),
    (I, 64, "s_axis_tx_tdata"),
    (I, 8, "s_axis_tx_tkeep"),
    (I, 1, "s_axis_tx_tlast"),
    (O, 1, "s_axis_tx_tready"),
    (I, 1, "s_axis_tx_tuser"),
    (I, 1, "s_axis_tx_tvalid"),
    (I, 16, "s_axis_pause_tdata"),
    (I, 1, "s_axis_pause_tvalid"),
    (O, 64, "m_axis_rx_tdata"),
    (O, 8, "m_axis_rx_tkeep"),
    (O, 1, "m_axis_rx_tlast"),
    (O, 1, "m_axis_rx_tuser"),
    (O, 1, "m_axis_rx_tvalid"),
    (O, 1, "tx_statistics_valid"),
    (O, 26, "tx_statistics_vector"),
    (O, 1, "rx_statistics_valid"),
    (O, 30, "rx_statistics_vector"),
];

/// The shared-logic variant's own ports (SupportLevel 1).
const ETH_SHARED_OWN: &[BoxPort] = &[
    (O, 1, "areset_datapathclk_out"),
    (O, 1, "txusrclk_out"),
    (O, 1, "txusrclk2_out"),
    (O, 1, "gttxreset_out"),
    (O, 1, "gtrxreset_out"),
    (O, 1, "txuserrdy_out"),
    (O, 1, "coreclk_out"),
    (O, 1, "resetdone_out"),
    (O, 1, "reset_counter_done_out"),
    (O, 1, "qplllock_out"),
    (O, 1, "qplloutclk_out"),
    (O, 1, "qplloutrefclk_out"),
    (I, 1, "refclk_p"),
    (I, 1, "refclk_n"),
    (I, 1, "reset"),
];

/// The variant that takes the shared logic's clocks and resets (SupportLevel 0).
const ETH_PORT_OWN: &[BoxPort] = &[
    (I, 1, "areset_coreclk"),
    (I, 1, "txusrclk"),
    (I, 1, "txusrclk2"),
    (O, 1, "txoutclk"),
    (I, 1, "txuserrdy"),
    (O, 1, "tx_resetdone"),
    (O, 1, "rx_resetdone"),
    (I, 1, "coreclk"),
    (I, 1, "areset"),
    (I, 1, "gttxreset"),
    (I, 1, "gtrxreset"),
    (I, 1, "qplllock"),
    (I, 1, "qplloutclk"),
    (I, 1, "qplloutrefclk"),
    (I, 1, "reset_counter_done"),
];

/// XDMA's ports before its streams.
const XDMA_HEAD: &[BoxPort] = &[
    (I, 1, "sys_clk"),
    (I, 1, "sys_rst_n"),
    (O, 1, "user_lnk_up"),
    (O, 8, "pci_exp_txp"),
    (O, 8, "pci_exp_txn"),
    (I, 8, "pci_exp_rxp"),
    (I, 8, "pci_exp_rxn"),
    (O, 1, "axi_aclk"),
    (O, 1, "axi_aresetn"),
    (I, 1, "usr_irq_req"),
    (O, 1, "usr_irq_ack"),
    (O, 1, "msi_enable"),
    (O, 3, "msi_vector_width"),
    (O, 32, "m_axil_awaddr"),
    (O, 3, "m_axil_awprot"),
    (O, 1, "m_axil_awvalid"),
    (I, 1, "m_axil_awready"),
    (O, 32, "m_axil_wdata"),
    (O, 4, "m_axil_wstrb"),
    (O, 1, "m_axil_wvalid"),
    (I, 1, "m_axil_wready"),
    (I, 1, "m_axil_bvalid"),
    (I, 2, "m_axil_bresp"),
    (O, 1, "m_axil_bready"),
    (O, 32, "m_axil_araddr"),
    (O, 3, "m_axil_arprot"),
    (O, 1, "m_axil_arvalid"),
    (I, 1, "m_axil_arready"),
    (I, 32, "m_axil_rdata"),
    (I, 2, "m_axil_rresp"),
    (I, 1, "m_axil_rvalid"),
    (O, 1, "m_axil_rready"),
];

/// One AXI-Stream channel of XDMA: `s_axis_c2h_*_<n>` (into XDMA) or `m_axis_h2c_*_<n>`.
fn xdma_stream(c2h: bool, n: usize) -> Vec<(Dir, usize, String)> {
    let (pre, d, r) = if c2h { ("s_axis_c2h", I, O) } else { ("m_axis_h2c", O, I) };
    [("tdata", d, 256), ("tlast", d, 1), ("tvalid", d, 1), ("tready", r, 1), ("tkeep", d, 32)]
        .into_iter()
        .map(|(f, dir, w)| (dir, w, format!("{pre}_{f}_{n}")))
        .collect()
}

/// Every module the top instantiates and does not define, with its ports in the wrapper's
/// order. XDMA's streams come channel by channel (C2H 0, H2C 0, C2H 1), as its wrapper
/// lists them. Built once: the stream ports' names are made here and kept.
pub fn black_boxes() -> &'static [BlackBox] {
    static BOXES: std::sync::OnceLock<Vec<BlackBox>> = std::sync::OnceLock::new();
    BOXES.get_or_init(build_black_boxes)
}

fn build_black_boxes() -> Vec<BlackBox> {
    let leak = |v: Vec<(Dir, usize, String)>| -> Vec<BoxPort> {
        v.into_iter().map(|(d, w, n)| (d, w, &*Box::leak(n.into_boxed_str()))).collect()
    };
    let mut xdma = XDMA_HEAD.to_vec();
    for s in [xdma_stream(true, 0), xdma_stream(false, 0), xdma_stream(true, 1)] {
        xdma.extend(leak(s));
    }
    let eth = |own: &[BoxPort]| ETH_COMMON.iter().chain(own).copied().collect();
    vec![
        BlackBox { module: "xdma_0", ports: xdma, primitive: false },
        BlackBox { module: "eth_shared", ports: eth(ETH_SHARED_OWN), primitive: false },
        BlackBox { module: "eth_port", ports: eth(ETH_PORT_OWN), primitive: false },
        BlackBox { module: "IBUFDS", ports: vec![(O, 1, "O"), (I, 1, "I"), (I, 1, "IB")], primitive: true },
        BlackBox {
            module: "IBUFDS_GTE2",
            ports: vec![(O, 1, "O"), (O, 1, "ODIV2"), (I, 1, "CEB"), (I, 1, "I"), (I, 1, "IB")],
            primitive: true,
        },
    ]
}

/// Stub modules of the black boxes (ports only) for Yosys and the lint: the vendor IP
/// always, the primitives only when `primitives` (Yosys has its own).
pub fn stubs(primitives: bool) -> String {
    let mut v = String::from(
        "// Black-box stubs of the vendor IP and primitives the board top instantiates: ports only.\n\
         /* verilator lint_off UNUSEDSIGNAL */\n/* verilator lint_off UNDRIVEN */\n",
    );
    for b in black_boxes().iter().filter(|b| primitives || !b.primitive) {
        let names: Vec<&str> = b.ports.iter().map(|p| p.2).collect();
        let _ = writeln!(v, "(* blackbox *)\nmodule {}({});", b.module, names.join(", "));
        for &(d, w, n) in &b.ports {
            let _ = writeln!(v, "  {} {}{};", dir_word(d), range(w), n);
        }
        v.push_str("endmodule\n");
    }
    v
}

fn dir_word(d: Dir) -> &'static str {
    match d {
        Dir::In => "input",
        Dir::Out => "output",
        Dir::InOut => "inout",
    }
}

fn range(w: usize) -> String {
    if w == 1 {
        String::new()
    } else {
        format!("[{}:0] ", w - 1)
    }
}

/// Verilog of the board top and everything of ours under it (block `smartnic_vc709`):
/// the top module, then `nic_board_logic` and its submodules.
pub fn top_verilog() -> Result<String, String> {
    let logic = super::logic::nic_verilog()?;
    let ports = module_ports(&logic, "nic_board_logic")?;
    Ok(format!("{}\n{logic}", top_module(&ports)?))
}

/// The port names of module `name` in generated Verilog (its header's list).
pub fn module_ports(verilog: &str, name: &str) -> Result<Vec<String>, String> {
    let head = format!("module {name}(");
    let at = verilog.find(&head).ok_or_else(|| format!("no module {name} in the generated Verilog"))?;
    let rest = &verilog[at + head.len()..];
    let end = rest.find(");").ok_or_else(|| format!("module {name}'s port list does not end"))?;
    Ok(rest[..end].split(',').map(|s| s.trim().to_string()).collect())
}

/// What one instance's ports connect to: port name -> expression.
struct Instance {
    module: &'static str,
    name: String,
    conn: BTreeMap<String, String>,
}

impl Instance {
    fn new(module: &'static str, name: &str) -> Self {
        Instance { module, name: name.into(), conn: BTreeMap::new() }
    }
    fn c(&mut self, port: &str, expr: impl Into<String>) -> &mut Self {
        assert!(self.conn.insert(port.into(), expr.into()).is_none(), "{}.{port} connected twice", self.name);
        self
    }
}

/// The top module, with `logic_ports` the generated `nic_board_logic`'s ports.
fn top_module(logic_ports: &[String]) -> Result<String, String> {
    let boxes = black_boxes();
    let mut wires: Vec<(usize, String)> = Vec::new();
    let mut unused: Vec<(usize, String)> = Vec::new();
    let mut insts = Vec::new();

    // Clock buffers.
    let mut sysclk = Instance::new("IBUFDS", "sys_clk_ibuf");
    sysclk.c("O", "sys_clk").c("I", "sys_clk_p").c("IB", "sys_clk_n");
    let mut pcieclk = Instance::new("IBUFDS_GTE2", "pcie_refclk_ibuf");
    pcieclk.c("O", "pcie_refclk").c("ODIV2", "pcie_refclk_div2").c("CEB", "1'b0");
    pcieclk.c("I", "pcie_refclk_p").c("IB", "pcie_refclk_n");
    unused.push((1, "pcie_refclk_div2".into()));
    wires.extend([(1, "sys_clk".into()), (1, "pcie_refclk".into())]);
    insts.extend([sysclk, pcieclk]);

    // PCIe: XDMA.
    let mut x = Instance::new("xdma_0", "pcie");
    x.c("sys_clk", "pcie_refclk").c("sys_rst_n", "pcie_perst_n").c("user_lnk_up", "link_up");
    x.c("pci_exp_txp", "pcie_tx_p").c("pci_exp_txn", "pcie_tx_n");
    x.c("pci_exp_rxp", "pcie_rx_p").c("pci_exp_rxn", "pcie_rx_n");
    x.c("axi_aclk", "core_clock").c("axi_aresetn", "core_aresetn");
    x.c("usr_irq_req", "1'b0");
    wires.extend([(1, "link_up".into()), (1, "core_clock".into()), (1, "core_aresetn".into())]);
    for p in ["awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bvalid", "bresp"] {
        x.c(&format!("m_axil_{p}"), format!("axil_{p}"));
    }
    for p in ["bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid", "rready"] {
        x.c(&format!("m_axil_{p}"), format!("axil_{p}"));
    }
    // The BAR is 4 MiB: the register file takes the address's low 22 bits.
    unused.extend([(32, "axil_awaddr".to_string()), (32, "axil_araddr".to_string())]);
    for (w, p) in [(32, "wdata"), (32, "rdata"), (4, "wstrb")] {
        wires.push((w, format!("axil_{p}")));
    }
    for (w, p) in [(2, "bresp"), (2, "rresp")] {
        wires.push((w, format!("axil_{p}")));
    }
    for p in [
        "awvalid", "awready", "wvalid", "wready", "bvalid", "bready", "arvalid", "arready", "rvalid",
        "rready",
    ] {
        wires.push((1, format!("axil_{p}")));
    }
    for c in 0..2 {
        for (f, w) in [("tdata", 256), ("tlast", 1), ("tvalid", 1), ("tready", 1), ("tkeep", 32)] {
            x.c(&format!("s_axis_c2h_{f}_{c}"), format!("c2h{c}_{f}"));
            wires.push((w, format!("c2h{c}_{f}")));
        }
    }
    x.c("m_axis_h2c_tready_0", "1'b1");
    insts.push(x);

    // SFP+: the 10G subsystem, shared logic on port 0.
    wires.extend(
        [
            "mac_clock",
            "mac_areset",
            "eth_reset",
            "txusrclk",
            "txusrclk2",
            "gttxreset",
            "gtrxreset",
            "txuserrdy",
        ]
        .into_iter()
        .chain(["reset_counter_done", "qplllock", "qplloutclk", "qplloutrefclk"])
        .map(|n| (1, n.to_string())),
    );
    for k in 0..4 {
        let mut e = if k == 0 {
            Instance::new("eth_shared", "sfp0")
        } else {
            Instance::new("eth_port", &format!("sfp{k}"))
        };
        e.c("tx_axis_aresetn", "~mac_areset").c("rx_axis_aresetn", "~mac_areset");
        e.c("tx_ifg_delay", "8'd0").c("dclk", "mac_clock");
        e.c("txp", format!("sfp_tx_p[{k}]")).c("txn", format!("sfp_tx_n[{k}]"));
        e.c("rxp", format!("sfp_rx_p[{k}]")).c("rxn", format!("sfp_rx_n[{k}]"));
        e.c("signal_detect", "1'b1").c("tx_fault", "1'b0").c("tx_disable", format!("sfp_tx_disable[{k}]"));
        e.c("pcspma_status", format!("pcspma_status{k}")).c("sim_speedup_control", "1'b0");
        e.c("mac_tx_configuration_vector", "80'h2").c("mac_rx_configuration_vector", "80'h2");
        e.c("pcs_pma_configuration_vector", "536'd0");
        for (f, v) in
            [("tdata", "64'd0"), ("tkeep", "8'd0"), ("tlast", "1'b0"), ("tuser", "1'b0"), ("tvalid", "1'b0")]
        {
            e.c(&format!("s_axis_tx_{f}"), v);
        }
        e.c("s_axis_pause_tdata", "16'd0").c("s_axis_pause_tvalid", "1'b0");
        for (f, w) in [("tdata", 64), ("tkeep", 8), ("tlast", 1), ("tuser", 1), ("tvalid", 1)] {
            e.c(&format!("m_axis_rx_{f}"), format!("rx{k}_{f}"));
            wires.push((w, format!("rx{k}_{f}")));
        }
        // Bit 0 is the PCS block lock (an LED); the other status bits are not used.
        unused.push((8, format!("pcspma_status{k}")));
        if k == 0 {
            e.c("refclk_p", "sfp_refclk_p").c("refclk_n", "sfp_refclk_n").c("reset", "eth_reset");
            e.c("coreclk_out", "mac_clock").c("areset_datapathclk_out", "mac_areset");
            for s in ["txusrclk", "txusrclk2", "gttxreset", "gtrxreset", "txuserrdy", "reset_counter_done"] {
                e.c(&format!("{s}_out"), s);
            }
            for s in ["qplllock", "qplloutclk", "qplloutrefclk"] {
                e.c(&format!("{s}_out"), s);
            }
        } else {
            e.c("coreclk", "mac_clock").c("areset_coreclk", "mac_areset").c("areset", "mac_areset");
            for s in ["txusrclk", "txusrclk2", "gttxreset", "gtrxreset", "txuserrdy", "reset_counter_done"] {
                e.c(s, s);
            }
            for s in ["qplllock", "qplloutclk", "qplloutrefclk"] {
                e.c(s, s);
            }
        }
        insts.push(e);
    }

    // Our logic: every port by name.
    let mut l = Instance::new("nic_board_logic", "board");
    let mut lc = |p: &str, e: String| {
        l.c(p, e);
    };
    lc("sys_clock", "sys_clk".into());
    lc("cpu_reset", "cpu_reset".into());
    lc("mac_clock", "mac_clock".into());
    lc("mac_areset", "mac_areset".into());
    for k in 0..4 {
        for f in ["tdata", "tkeep", "tlast", "tuser", "tvalid"] {
            lc(&format!("rx_{f}${k}"), format!("rx{k}_{f}"));
        }
        lc(&format!("block_lock${k}"), format!("pcspma_status{k}[0]"));
    }
    lc("core_clock", "core_clock".into());
    lc("core_aresetn", "core_aresetn".into());
    lc("link_up", "link_up".into());
    for p in ["awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bvalid", "bresp", "bready"] {
        lc(&format!("bus${p}"), format!("axil_{p}"));
    }
    for p in ["arvalid", "arready", "rdata", "rresp", "rvalid", "rready"] {
        lc(&format!("bus${p}"), format!("axil_{p}"));
    }
    let a = crate::nic::REGS_A;
    lc("bus$awaddr", format!("axil_awaddr[{}:0]", a - 1));
    lc("bus$araddr", format!("axil_araddr[{}:0]", a - 1));
    for c in 0..2 {
        for f in ["tdata", "tkeep", "tlast", "tvalid", "tready"] {
            lc(&format!("c2h_{f}${c}"), format!("c2h{c}_{f}"));
        }
    }
    for s in ["scl_low", "sda_low", "scl_in", "sda_in"] {
        lc(s, s.into());
        wires.push((1, s.into()));
    }
    lc("i2c_rst_n", "i2c_rst_n".into());
    lc("eth_reset", "eth_reset".into());
    wires.push((1, "i2c_rst_n".into()));
    for i in 0..5 {
        lc(&format!("btn${i}"), format!("btn[{i}]"));
    }
    for i in 0..8 {
        lc(&format!("led${i}"), format!("led[{i}]"));
    }
    // The test taps go to wires nobody reads on the board.
    let mut logic = l;
    for (w, p) in [(1, "mon_valid"), (104, "mon_key"), (32, "mon_epoch"), (2, "mon_port"), (64, "now")] {
        let wire = format!("unused_board_{p}");
        logic.c(p, wire.clone());
        unused.push((w, wire));
    }

    // Every black-box port connected (outputs nobody reads go to named unused wires),
    // every connection a real port.
    let mut body = String::new();
    for mut inst in insts {
        let b = boxes.iter().find(|b| b.module == inst.module).expect("a black box");
        for &(d, w, n) in &b.ports {
            if !inst.conn.contains_key(n) {
                if d != Dir::Out {
                    return Err(format!("{} ({}): input {n} is not connected", inst.name, inst.module));
                }
                let wire = format!("unused_{}_{n}", inst.name);
                unused.push((w, wire.clone()));
                inst.conn.insert(n.to_string(), wire);
            }
        }
        write_instance(&mut body, &inst, b.ports.iter().map(|p| p.2))?;
    }
    write_instance(&mut body, &logic, logic_ports.iter().map(String::as_str))?;

    let mut v = String::new();
    let _ = writeln!(v, "// Generated by smartnic-hdl from block `{TOP}`: the VC709 board top. Do not edit.");
    let names: Vec<&str> = PORTS.iter().map(|p| p.name).collect();
    let _ = writeln!(v, "module {TOP}({});", names.join(", "));
    for p in PORTS {
        let _ = writeln!(v, "  {} wire {}{};", dir_word(p.dir), range(p.width()), p.name);
    }
    for (w, n) in &wires {
        let _ = writeln!(v, "  wire {}{n};", range(*w));
    }
    v.push_str("  // Outputs nobody reads, and wires whose bits are partly read.\n  /* verilator lint_off UNUSEDSIGNAL */\n");
    for (w, n) in &unused {
        let _ = writeln!(v, "  wire {}{n};", range(*w));
    }
    v.push_str("  /* verilator lint_on UNUSEDSIGNAL */\n");
    v.push_str(
        "  // The I2C bus is open drain: a line is pulled low or left to its pull-up.\n\
         \x20 assign i2c_scl = scl_low ? 1'b0 : 1'bz;\n\
         \x20 assign i2c_sda = sda_low ? 1'b0 : 1'bz;\n\
         \x20 assign scl_in = i2c_scl;\n\
         \x20 assign sda_in = i2c_sda;\n\
         \x20 assign i2c_mux_reset_n = i2c_rst_n;\n\
         \x20 assign si5324_reset_n = i2c_rst_n;\n",
    );
    v.push_str(&body);
    v.push_str("endmodule\n");
    Ok(v)
}

/// One instance with named connections, in the module's port order; an error if a
/// connection names no port of the module or a port has none. (rust-hdl's `bus$awaddr` is
/// a legal Verilog identifier: `$` may follow the first character.)
fn write_instance<'a>(
    v: &mut String,
    inst: &Instance,
    ports: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    let ports: Vec<&str> = ports.collect();
    if let Some(extra) = inst.conn.keys().find(|k| !ports.contains(&k.as_str())) {
        return Err(format!("{} ({}) has no port {extra}", inst.name, inst.module));
    }
    let _ = writeln!(v, "  {} {} (", inst.module, inst.name);
    let lines: Result<Vec<String>, String> = ports
        .iter()
        .map(|p| {
            let e = inst
                .conn
                .get(*p)
                .ok_or_else(|| format!("{} ({}): port {p} is not connected", inst.name, inst.module))?;
            Ok(format!("    .{p}({e})"))
        })
        .collect();
    let _ = writeln!(v, "{}\n  );", lines?.join(",\n"));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_with_a_port_left_out_or_a_port_too_many_is_refused() {
        let ports = ["I", "IB", "O"];
        let mut i = Instance::new("IBUFDS", "b");
        i.c("I", "p").c("IB", "n");
        let e = write_instance(&mut String::new(), &i, ports.into_iter()).unwrap_err();
        assert!(e.contains("port O is not connected"), "{e}");
        i.c("O", "o").c("X", "x");
        let e = write_instance(&mut String::new(), &i, ports.into_iter()).unwrap_err();
        assert!(e.contains("has no port X"), "{e}");
    }

    #[test]
    fn module_ports_reads_a_header() {
        let v = "// x\nmodule m(a,b$0, c);\n  input a;\nendmodule\n";
        assert_eq!(module_ports(v, "m").unwrap(), ["a", "b$0", "c"]);
        assert!(module_ports(v, "n").is_err());
    }
}
