//! The Xilinx VC709 board (XC7VX690T-2FFG1761C): the board top's port list with each
//! port's package pins, and the XDC generated from it; the Si5324 start-up sequence in
//! [`si5324`].
//!
//! # The board top's ports
//!
//! The generated board-top Verilog module is named [`TOP`] (`smartnic_vc709`) and has
//! exactly the ports of [`PORTS`], with these names, directions and widths (bit 0 first in
//! each port's pin list). Nothing else may be a top-level port: the XDC is written from this
//! table ([`xdc`]), and Vivado refuses a top port without a pin.
//!
//! | port | dir | width | what |
//! |---|---|---|---|
//! | `sys_clk_p`, `sys_clk_n` | in | 1 | 200 MHz system clock (the board's LVDS oscillator) |
//! | `cpu_reset` | in | 1 | CPU_RESET push button, active high |
//! | `pcie_refclk_p`, `pcie_refclk_n` | in | 1 | 100 MHz PCIe reference clock from the edge connector |
//! | `pcie_perst_n` | in | 1 | PCIe PERST#, active low |
//! | `pcie_rx_p`, `pcie_rx_n`, `pcie_tx_p`, `pcie_tx_n` | in/out | 8 | PCIe Gen3 x8 lanes 0..7 |
//! | `sfp_refclk_p`, `sfp_refclk_n` | in | 1 | 156.25 MHz SFP+ reference clock from the Si5324 |
//! | `sfp_rx_p`, `sfp_rx_n`, `sfp_tx_p`, `sfp_tx_n` | in/out | 4 | the four SFP+ cages |
//! | `sfp_tx_disable` | out | 4 | SFP+ TX_DISABLE, active high |
//! | `i2c_scl`, `i2c_sda` | inout | 1 | the board I2C bus (PCA9548 mux, Si5324 behind it) |
//! | `i2c_mux_reset_n` | out | 1 | PCA9548 RESET#, active low |
//! | `si5324_reset_n` | out | 1 | Si5324 RST#, active low |
//! | `led` | out | 8 | GPIO_LED_0..7 |
//! | `btn` | in | 5 | GPIO_SW_N, E, S, W, C push buttons, active high |
//!
//! SFP+ port `k` (bit `k` of every `sfp_*` port) is transceiver GTHE2_CHANNEL_X1Y(12+k) of
//! quad 113; on the bracket that is cage P3, P2, P4, P5 for k = 0, 1, 2, 3.
//!
//! # Where the pins come from
//!
//! Each group cites the section of Xilinx UG887 ("VC709 Evaluation Board for the Virtex-7
//! FPGA User Guide") that describes it and the board's signal names. Every pin was
//! cross-checked against at least two public constraint files for this board or this package
//! (Xilinx's Gen3 x8 PCIe example design XDC for the VC709, the NetFPGA-10G VC709 reference
//! NIC's 10GBASE-R and I2C constraints, other VC709 designs' XDCs, and for the PCIe lanes
//! FFG1761 designs that annotate each pin with its GTHE2_CHANNEL site).
//!
//! Bank voltages: the 200 MHz system clock is on bank 38, one of the DDR3 SODIMM banks at
//! 1.5 V (hence DIFF_SSTL15, as the public VC709 XDCs have it); every other user I/O used here
//! is 1.8 V (the `_LS` signals are level-shifted to 1.8 V); bank 15 (CPU_RESET, pad
//! IO_L13P_T2_MRCC_15) is 1.8 V. [`BANK_VCCO`] holds the banks whose number a public pad
//! annotation confirms; the other ports state their VCCO without a bank number.

use std::fmt::Write as _;

/// The FPGA part, as Vivado names it.
pub const PART: &str = "xc7vx690tffg1761-2";
/// The board top module's name.
pub const TOP: &str = "smartnic_vc709";
/// The XDC file name the board flow writes and reads.
pub const XDC_FILE: &str = "smartnic_vc709.xdc";
/// The TCL file with the board parameters the Vivado scripts source (written beside the XDC).
pub const PARAMS_FILE: &str = "board_params.tcl";

/// Direction of a top-level port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
    InOut,
}

/// Electrical standard of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// 1.8 V LVCMOS.
    Lvcmos18,
    /// Differential SSTL 1.5 V (the system clock on the DDR3 bank).
    DiffSstl15,
    /// A transceiver data pin (GTH channel): no IOSTANDARD, placed by the transceiver site.
    Gt,
    /// A transceiver reference clock pin (IBUFDS_GTE2): no IOSTANDARD.
    GtRefclk,
}

impl Io {
    /// The XDC IOSTANDARD, or `None` for transceiver pins.
    pub fn iostandard(self) -> Option<&'static str> {
        match self {
            Io::Lvcmos18 => Some("LVCMOS18"),
            Io::DiffSstl15 => Some("DIFF_SSTL15"),
            Io::Gt | Io::GtRefclk => None,
        }
    }

    /// The bank VCCO (millivolts) the standard needs, or `None` for transceiver pins.
    pub fn vcco_mv(self) -> Option<u32> {
        match self {
            Io::Lvcmos18 => Some(1800),
            Io::DiffSstl15 => Some(1500),
            Io::Gt | Io::GtRefclk => None,
        }
    }

    /// The IOSTANDARD named `s`, for parsing an XDC back.
    pub fn from_iostandard(s: &str) -> Option<Io> {
        [Io::Lvcmos18, Io::DiffSstl15].into_iter().find(|io| io.iostandard() == Some(s))
    }
}

/// How the timing of a port is constrained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// A clock input ([`CLOCKS`] names its period).
    Clock,
    /// A transceiver data pin: timed inside the transceiver.
    Serial,
    /// Asynchronous to every clock (buttons, LEDs, resets, slow I2C): a false path.
    Async,
}

/// One top-level port of the board top.
#[derive(Clone, Copy, Debug)]
pub struct Port {
    /// Verilog port name.
    pub name: &'static str,
    pub dir: Dir,
    pub io: Io,
    /// Package pin of each bit, bit 0 first (one entry for a scalar port).
    pub pins: &'static [&'static str],
    /// Transceiver site of each bit (GT ports only; empty otherwise).
    pub sites: &'static [&'static str],
    /// Bank VCCO of the pins in millivolts (non-GT ports; 0 for GT ports).
    pub vcco_mv: u32,
    /// The bank number where a public pad listing confirms it.
    pub bank: Option<u16>,
    /// Weak pull-up on the pad (open-drain or undriven-at-reset signals).
    pub pullup: bool,
    pub timing: Timing,
    /// Where the pins come from (UG887 section and signal names).
    pub source: &'static str,
}

impl Port {
    /// Number of bits.
    pub fn width(&self) -> usize {
        self.pins.len()
    }

    /// True when the port is a vector in the Verilog (more than one bit).
    pub fn is_bus(&self) -> bool {
        self.width() > 1
    }

    /// The XDC object name of bit `i`: `name[i]` for a bus, `name` for a scalar.
    pub fn bit_name(&self, i: usize) -> String {
        if self.is_bus() {
            format!("{}[{i}]", self.name)
        } else {
            self.name.to_string()
        }
    }

    /// The XDC pattern that matches every bit of the port.
    pub fn pattern(&self) -> String {
        if self.is_bus() {
            format!("{}[*]", self.name)
        } else {
            self.name.to_string()
        }
    }
}

/// Banks whose number and VCCO are confirmed (bank, millivolts).
pub const BANK_VCCO: &[(u16, u32)] = &[(15, 1800), (38, 1500)];

const SRC_SYSCLK: &str = "UG887 'System Clock Source' (SYSCLK_P/SYSCLK_N, bank 38, a DDR3 bank at 1.5 V)";
const SRC_RESET: &str = "UG887 'User Pushbuttons' (CPU_RESET, IO_L13P_T2_MRCC_15)";
const SRC_PCIE_CLK: &str =
    "UG887 'PCI Express Endpoint Connectivity' (PCIE_CLK_QO_P/N on MGTREFCLK1_115, IBUFDS_GTE2_X1Y11)";
const SRC_PERST: &str = "UG887 'PCI Express Endpoint Connectivity' (PCIE_PERST_LS, level-shifted to 1.8 V)";
const SRC_PCIE: &str = "UG887 'PCI Express Endpoint Connectivity' (PCIE_RX0..7_P/N, PCIE_TX0..7_P/N; quads 114/115, lane 0 = GTHE2_CHANNEL_X1Y23)";
const SRC_SFP_CLK: &str =
    "UG887 'Jitter Attenuated Clock' (SI5324_OUT_C_P/N to MGTREFCLK0_113, IBUFDS_GTE2_X1Y6)";
const SRC_SFP: &str =
    "UG887 'SFP/SFP+ Module Connectors' (SFP1..4_RX/TX_P/N, quad 113 = GTHE2_CHANNEL_X1Y12..15)";
const SRC_SFP_DIS: &str = "UG887 'SFP/SFP+ Module Connectors' (SFP1..4_TX_DISABLE, level-shifted to 1.8 V)";
const SRC_I2C: &str = "UG887 'I2C Bus Switch' (IIC_SCL_MAIN_LS, IIC_SDA_MAIN_LS)";
const SRC_MUX_RST: &str = "UG887 'I2C Bus Switch' (IIC_MUX_RESET_B_LS, the PCA9548's RESET#)";
const SRC_SI_RST: &str = "UG887 'Jitter Attenuated Clock' (SI5324_RST_LS, the Si5324's RST#)";
const SRC_LED: &str = "UG887 'User LEDs' (GPIO_LED_0_LS..GPIO_LED_7_LS)";
const SRC_BTN: &str = "UG887 'User Pushbuttons' (GPIO_SW_N, GPIO_SW_E, GPIO_SW_S, GPIO_SW_W, GPIO_SW_C)";

const PCIE_SITES: &[&str] = &[
    "GTHE2_CHANNEL_X1Y23",
    "GTHE2_CHANNEL_X1Y22",
    "GTHE2_CHANNEL_X1Y21",
    "GTHE2_CHANNEL_X1Y20",
    "GTHE2_CHANNEL_X1Y19",
    "GTHE2_CHANNEL_X1Y18",
    "GTHE2_CHANNEL_X1Y17",
    "GTHE2_CHANNEL_X1Y16",
];
const SFP_SITES: &[&str] =
    &["GTHE2_CHANNEL_X1Y12", "GTHE2_CHANNEL_X1Y13", "GTHE2_CHANNEL_X1Y14", "GTHE2_CHANNEL_X1Y15"];

/// A single-ended 1.8 V port.
const fn lv18(
    name: &'static str,
    dir: Dir,
    pins: &'static [&'static str],
    bank: Option<u16>,
    pullup: bool,
    source: &'static str,
) -> Port {
    Port {
        name,
        dir,
        io: Io::Lvcmos18,
        pins,
        sites: &[],
        vcco_mv: 1800,
        bank,
        pullup,
        timing: Timing::Async,
        source,
    }
}

/// A transceiver port (data or reference clock).
const fn gt(
    name: &'static str,
    dir: Dir,
    io: Io,
    pins: &'static [&'static str],
    sites: &'static [&'static str],
    source: &'static str,
) -> Port {
    let timing = if matches!(io, Io::GtRefclk) { Timing::Clock } else { Timing::Serial };
    Port { name, dir, io, pins, sites, vcco_mv: 0, bank: None, pullup: false, timing, source }
}

/// The 200 MHz system clock's half named `name` on pin `pin`.
const fn sysclk(name: &'static str, pin: &'static [&'static str]) -> Port {
    Port {
        name,
        dir: Dir::In,
        io: Io::DiffSstl15,
        pins: pin,
        sites: &[],
        vcco_mv: 1500,
        bank: Some(38),
        pullup: false,
        timing: Timing::Clock,
        source: SRC_SYSCLK,
    }
}

/// Every top-level port of [`TOP`], in the order of the module's port list.
pub const PORTS: &[Port] = &[
    sysclk("sys_clk_p", &["H19"]),
    sysclk("sys_clk_n", &["G18"]),
    lv18("cpu_reset", Dir::In, &["AV40"], Some(15), false, SRC_RESET),
    gt("pcie_refclk_p", Dir::In, Io::GtRefclk, &["AB8"], &["IBUFDS_GTE2_X1Y11"], SRC_PCIE_CLK),
    gt("pcie_refclk_n", Dir::In, Io::GtRefclk, &["AB7"], &["IBUFDS_GTE2_X1Y11"], SRC_PCIE_CLK),
    lv18("pcie_perst_n", Dir::In, &["AV35"], None, true, SRC_PERST),
    gt(
        "pcie_rx_p",
        Dir::In,
        Io::Gt,
        &["Y4", "AA6", "AB4", "AC6", "AD4", "AE6", "AF4", "AG6"],
        PCIE_SITES,
        SRC_PCIE,
    ),
    gt(
        "pcie_rx_n",
        Dir::In,
        Io::Gt,
        &["Y3", "AA5", "AB3", "AC5", "AD3", "AE5", "AF3", "AG5"],
        PCIE_SITES,
        SRC_PCIE,
    ),
    gt(
        "pcie_tx_p",
        Dir::Out,
        Io::Gt,
        &["W2", "AA2", "AC2", "AE2", "AG2", "AH4", "AJ2", "AK4"],
        PCIE_SITES,
        SRC_PCIE,
    ),
    gt(
        "pcie_tx_n",
        Dir::Out,
        Io::Gt,
        &["W1", "AA1", "AC1", "AE1", "AG1", "AH3", "AJ1", "AK3"],
        PCIE_SITES,
        SRC_PCIE,
    ),
    gt("sfp_refclk_p", Dir::In, Io::GtRefclk, &["AH8"], &["IBUFDS_GTE2_X1Y6"], SRC_SFP_CLK),
    gt("sfp_refclk_n", Dir::In, Io::GtRefclk, &["AH7"], &["IBUFDS_GTE2_X1Y6"], SRC_SFP_CLK),
    gt("sfp_rx_p", Dir::In, Io::Gt, &["AN6", "AM8", "AL6", "AJ6"], SFP_SITES, SRC_SFP),
    gt("sfp_rx_n", Dir::In, Io::Gt, &["AN5", "AM7", "AL5", "AJ5"], SFP_SITES, SRC_SFP),
    gt("sfp_tx_p", Dir::Out, Io::Gt, &["AP4", "AN2", "AM4", "AL2"], SFP_SITES, SRC_SFP),
    gt("sfp_tx_n", Dir::Out, Io::Gt, &["AP3", "AN1", "AM3", "AL1"], SFP_SITES, SRC_SFP),
    lv18("sfp_tx_disable", Dir::Out, &["AB41", "Y42", "AC38", "AC40"], None, false, SRC_SFP_DIS),
    lv18("i2c_scl", Dir::InOut, &["AT35"], None, true, SRC_I2C),
    lv18("i2c_sda", Dir::InOut, &["AU32"], None, true, SRC_I2C),
    lv18("i2c_mux_reset_n", Dir::Out, &["AY42"], None, false, SRC_MUX_RST),
    lv18("si5324_reset_n", Dir::Out, &["AT36"], None, false, SRC_SI_RST),
    lv18(
        "led",
        Dir::Out,
        &["AM39", "AN39", "AR37", "AT37", "AR35", "AP41", "AP42", "AU39"],
        None,
        false,
        SRC_LED,
    ),
    lv18("btn", Dir::In, &["AR40", "AU38", "AP40", "AW40", "AV39"], None, false, SRC_BTN),
];

/// A clock the XDC declares with `create_clock` on a port.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// Clock name in the timing graph.
    pub name: &'static str,
    /// The `_p` port it enters on.
    pub port: &'static str,
    /// Period in picoseconds (exact, so the XDC text round-trips).
    pub period_ps: u32,
}

/// The system clock's period in picoseconds (200 MHz): what the board's housekeeping
/// blocks (the Si5324 bring-up) run on.
pub const SYS_CLK_PS: u32 = 5_000;

/// The board's input clocks: 200 MHz system clock, 100 MHz PCIe reference, 156.25 MHz SFP+
/// reference (the Si5324 output programmed by [`si5324::INIT`]).
pub const CLOCKS: &[Clock] = &[
    Clock { name: "sys_clk", port: "sys_clk_p", period_ps: SYS_CLK_PS },
    Clock { name: "pcie_refclk", port: "pcie_refclk_p", period_ps: 10_000 },
    Clock { name: "sfp_refclk", port: "sfp_refclk_p", period_ps: 6_400 },
];

/// Configuration settings for the VC709's BPI x16 flash (Micron 28F00AG18F, 1 Gbit), as
/// UG887 'Linear BPI Flash Memory' and UG470 ('Master BPI Configuration Interface',
/// 'Bitstream Settings') give them: bank 0 at 1.8 V with CFGBVS tied to GND; BPI x16 with
/// synchronous (burst) reads of type 1, clocked from the board's EMCCLK oscillator through
/// the external master CCLK (the internal CCLK's CONFIGRATE does not apply then).
pub const CONFIG_SETTINGS: &[(&str, &str)] = &[
    ("CFGBVS", "GND"),
    ("CONFIG_VOLTAGE", "1.8"),
    ("CONFIG_MODE", "BPI16"),
    ("BITSTREAM.CONFIG.BPI_SYNC_MODE", "Type1"),
    ("BITSTREAM.CONFIG.EXTMASTERCCLK_EN", "div-1"),
    ("BITSTREAM.GENERAL.COMPRESS", "TRUE"),
    ("BITSTREAM.CONFIG.UNUSEDPIN", "Pullup"),
];

/// The BPI flash as Vivado's `write_cfgmem` and `create_hw_cfgmem` name it.
pub mod flash {
    /// `write_cfgmem -interface`.
    pub const INTERFACE: &str = "BPIx16";
    /// `write_cfgmem -size` in megabytes: the 28F00AG18F holds 1 Gbit.
    pub const SIZE_MB: u32 = 128;
    /// `get_cfgmem_parts` name of the flash.
    pub const PART: &str = "28f00ag18f-bpi-x16";
    /// The bitstream's load address (the flash's first block).
    pub const LOAD_ADDR: &str = "0x00000000";
}

/// Writes the XDC of [`PORTS`], [`CLOCKS`] and [`CONFIG_SETTINGS`].
pub fn xdc() -> String {
    let mut s = String::new();
    s.push_str("# VC709 constraints of the smartnic_vc709 board top.\n");
    s.push_str("# Generated by `board-xdc` from smartnic_contract::board; do not edit.\n");
    for p in PORTS {
        write_port(&mut s, p);
    }
    s.push_str("\n# Clocks\n");
    for c in CLOCKS {
        let ns = c.period_ps as f64 / 1000.0;
        let _ = writeln!(s, "create_clock -period {ns:.3} -name {} [get_ports {{{}}}]", c.name, c.port);
    }
    s.push_str("\n# Asynchronous pins: buttons, LEDs, resets, I2C\n");
    for p in PORTS.iter().filter(|p| p.timing == Timing::Async) {
        write_false_path(&mut s, p);
    }
    s.push_str("\n# Configuration: BPI x16 flash\n");
    for (k, v) in CONFIG_SETTINGS {
        let _ = writeln!(s, "set_property {k} {v} [current_design]");
    }
    s
}

/// The pin lines of one port: one `set_property -dict` per bit.
fn write_port(s: &mut String, p: &Port) {
    let _ = writeln!(s, "\n# {}: {}", p.name, p.source);
    for (i, pin) in p.pins.iter().enumerate() {
        let mut dict = format!("PACKAGE_PIN {pin}");
        if let Some(std) = p.io.iostandard() {
            let _ = write!(dict, " IOSTANDARD {std}");
        }
        if p.pullup {
            dict.push_str(" PULLUP true");
        }
        let site = p.sites.get(i).map(|site| format!(" ;# {site}")).unwrap_or_default();
        let _ = writeln!(s, "set_property -dict {{{dict}}} [get_ports {{{}}}]{site}", p.bit_name(i));
    }
}

/// The false path of an asynchronous port, in the direction(s) it has.
fn write_false_path(s: &mut String, p: &Port) {
    let pat = p.pattern();
    if matches!(p.dir, Dir::In | Dir::InOut) {
        let _ = writeln!(s, "set_false_path -from [get_ports {{{pat}}}]");
    }
    if matches!(p.dir, Dir::Out | Dir::InOut) {
        let _ = writeln!(s, "set_false_path -to [get_ports {{{pat}}}]");
    }
}

/// The device name of [`PART`] without package and speed grade, as the hardware manager
/// names the JTAG device (`xc7vx690t_0`).
pub fn device() -> &'static str {
    PART.split_once("ffg").map_or(PART, |(d, _)| d)
}

/// The TCL variables the Vivado scripts take from the contract (part, top, XDC name, PCI
/// IDs, flash), so none of them is written twice.
pub fn params_tcl() -> String {
    use crate::regs::{PCI_DEVICE_ID, PCI_VENDOR_ID};
    let mut s = String::from("# Board parameters from smartnic_contract::board; do not edit.\n");
    let vars = [
        ("board_part", PART.to_string()),
        ("board_top", TOP.to_string()),
        ("board_device", device().to_string()),
        ("board_xdc", XDC_FILE.to_string()),
        ("pci_vendor_id", format!("{PCI_VENDOR_ID:04X}")),
        ("pci_device_id", format!("{PCI_DEVICE_ID:04X}")),
        ("axil_bar_size", bar_size_and_scale(register_bar_bytes()).0.to_string()),
        ("axil_bar_scale", bar_size_and_scale(register_bar_bytes()).1.to_string()),
        ("c2h_channels", crate::xdma::C2H_CHANNELS.to_string()),
        ("flash_interface", flash::INTERFACE.to_string()),
        ("flash_size_mb", flash::SIZE_MB.to_string()),
        ("flash_part", flash::PART.to_string()),
        ("flash_load_addr", flash::LOAD_ADDR.to_string()),
    ];
    for (k, v) in vars {
        let _ = writeln!(s, "set {k} {{{v}}}");
    }
    s
}

/// Bytes of the BAR the XDMA's AXI4-Lite master maps onto the register file: the layout of
/// the NIC core's default geometries (flow sketches and the per-switch half).
pub fn register_bar_bytes() -> u32 {
    use crate::per_switch::PerSwitchGeometry;
    use crate::{SuMaxGeometry, TowerGeometry};
    let (t, s, p) =
        (TowerGeometry::sketchint_fpga(), SuMaxGeometry::nic_default(), PerSwitchGeometry::nic_default());
    crate::regs::layout::Layout::with_per_switch(&t, &s, &p).bar_size
}

/// A BAR size as the XDMA core's size/scale pair wants it (a power of two from 1 to 512 in
/// Kilobytes or Megabytes): the largest scale that keeps the size a whole number.
pub fn bar_size_and_scale(bytes: u32) -> (u32, &'static str) {
    if bytes >= 1 << 20 {
        (bytes >> 20, "Megabytes")
    } else {
        (bytes >> 10, "Kilobytes")
    }
}

/// One pin assignment read back from an XDC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinLine {
    /// `name` or `name[i]`.
    pub object: String,
    pub pin: String,
    pub iostandard: Option<String>,
    pub pullup: bool,
}

/// Reads the pin assignments of an XDC written by [`xdc`] (one `set_property -dict {...}
/// [get_ports {...}]` per line); names the line of anything else that sets a pin.
pub fn parse_pins(text: &str) -> Result<Vec<PinLine>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split(";#").next().unwrap_or("").trim();
        if !code.contains("PACKAGE_PIN") {
            continue;
        }
        out.push(parse_pin_line(code).map_err(|e| format!("XDC line {}: {e}: {line}", n + 1))?);
    }
    Ok(out)
}

/// One `set_property -dict {K V ...} [get_ports {OBJ}]` line.
fn parse_pin_line(code: &str) -> Result<PinLine, String> {
    let rest = code.strip_prefix("set_property -dict {").ok_or("not a `set_property -dict {` line")?;
    let (dict, rest) = rest.split_once('}').ok_or("unterminated property dict")?;
    let object = rest
        .trim()
        .strip_prefix("[get_ports {")
        .and_then(|r| r.strip_suffix("}]"))
        .ok_or("no `[get_ports {...}]` object")?;
    let words: Vec<&str> = dict.split_whitespace().collect();
    if !words.len().is_multiple_of(2) {
        return Err("odd number of words in the property dict".into());
    }
    let mut line =
        PinLine { object: object.to_string(), pin: String::new(), iostandard: None, pullup: false };
    for kv in words.chunks(2) {
        match kv[0] {
            "PACKAGE_PIN" => line.pin = kv[1].to_string(),
            "IOSTANDARD" => line.iostandard = Some(kv[1].to_string()),
            "PULLUP" => line.pullup = kv[1] == "true",
            k => return Err(format!("unknown property {k}")),
        }
    }
    Ok(line)
}

pub mod si5324 {
    //! The Si5324 start-up sequence: the I2C writes that make the VC709's Si5324 (fed by its
    //! 114.285 MHz crystal) put out the 156.25 MHz SFP+ reference clock on
    //! MGTREFCLK0_113. The board's I2C init block walks [`INIT`] in order after releasing
    //! [`super::PORTS`]' `i2c_mux_reset_n` and `si5324_reset_n`: first the mux write, then
    //! each register write as one I2C transaction (start, address, register, value, stop).
    //!
    //! The I2C mux is a PCA9548 at 0x74, the Si5324 is on its channel 7 at 0x68 (UG887
    //! 'I2C Bus Switch'; the same addresses and channel byte 0x80 in public VC709 Si5324
    //! programs). Register meanings are from the Si5324 datasheet and the Si53xx Family
    //! Reference Manual (register map, 'Free Run Mode'); the divider values are the DSPLLsim
    //! plan for 114.285 MHz in, 156.25 MHz out: f3 = 114.285 MHz / N3 = 3.75 kHz,
    //! fOSC = f3 x N2_HS x N2_LS = 5.625 GHz, fOUT = fOSC / (N1_HS x NC1_LS) = 156.25 MHz.

    /// PCA9548 7-bit I2C address.
    pub const MUX_ADDR: u8 = 0x74;
    /// The mux channel the Si5324 sits on.
    pub const MUX_CHANNEL: u8 = 7;
    /// Si5324 7-bit I2C address.
    pub const ADDR: u8 = 0x68;
    /// The I2C bus rate of the init block (the PCA9548 and the Si5324 both allow 400 kHz).
    pub const I2C_HZ: u64 = 100_000;
    /// How long the init block holds the mux and the Si5324 in reset, then waits before its
    /// first transaction, in microseconds: margins of our choosing, far above the reset
    /// pulse and the ready time after reset such devices need (check the Si5324 datasheet
    /// before tightening them).
    pub const RESET_HOLD_US: u64 = 1_000;
    pub const SETTLE_US: u64 = 20_000;

    /// The crystal on XA/XB, in Hz.
    pub const XTAL_HZ: u64 = 114_285_000;
    /// The output frequency the sequence programs, in Hz.
    pub const OUT_HZ: u64 = 156_250_000;

    /// One register write: (register, value, why).
    pub type Write = (u8, u8, &'static str);

    /// The register writes, in order. The last (ICAL) starts the internal calibration after
    /// every divider is set, as the reference manual requires.
    pub const INIT: &[Write] = &[
        (
            0,
            0x54,
            "FREE_RUN=1 (crystal to CKIN2), CKOUT_ALWAYS_ON=0 (no output until calibrated), BYPASS_REG=0",
        ),
        (1, 0xE4, "CK_PRIOR2=1, CK_PRIOR1=0: CKIN1 first priority"),
        (2, 0x12, "BWSEL_REG=1 (loop bandwidth from DSPLLsim)"),
        (3, 0x15, "CKSEL_REG=0 (CKIN1 when valid), DHOLD=0, SQ_ICAL=1 (outputs squelched during ICAL)"),
        (4, 0x92, "AUTOSEL_REG=2 (automatic revertive), HIST_DEL=0x12"),
        (10, 0x08, "DSBL2_REG=1: CKOUT2 off, CKOUT1 on"),
        (11, 0x40, "both CKIN inputs powered"),
        (25, 0xA0, "N1_HS = 5 + 4 = 9"),
        (31, 0x00, "NC1_LS[19:16]"),
        (32, 0x00, "NC1_LS[15:8]"),
        (33, 0x03, "NC1_LS[7:0]: NC1_LS = 3 + 1 = 4"),
        (40, 0xC2, "N2_HS = 6 + 4 = 10, N2_LS[19:16] = 2"),
        (41, 0x49, "N2_LS[15:8]"),
        (42, 0xEF, "N2_LS[7:0]: N2_LS = 0x249EF + 1 = 150000"),
        (43, 0x00, "N31[18:16]"),
        (44, 0x77, "N31[15:8]"),
        (45, 0x0B, "N31[7:0]: N31 = 0x770B + 1 = 30476"),
        (46, 0x00, "N32[18:16]"),
        (47, 0x77, "N32[15:8]"),
        (48, 0x0B, "N32[7:0]: N32 = 30476 (free run: the crystal on CKIN2)"),
        (136, 0x40, "ICAL=1: calibrate with the new dividers"),
    ];

    /// The byte written to the mux's control register to open [`MUX_CHANNEL`] only.
    pub const fn mux_select() -> u8 {
        1 << MUX_CHANNEL
    }

    /// The value of register `reg` in [`INIT`], if written.
    pub fn reg(reg: u8) -> Option<u8> {
        INIT.iter().find(|w| w.0 == reg).map(|w| w.1)
    }

    /// The dividers [`INIT`] programs, decoded from the register fields as the reference
    /// manual lays them out (each stored as value - 1, the HS dividers as value - 4).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Dividers {
        pub n1_hs: u64,
        pub nc1_ls: u64,
        pub n2_hs: u64,
        pub n2_ls: u64,
        pub n31: u64,
        pub n32: u64,
    }

    /// Decodes [`Dividers`] from [`INIT`]; `None` when a divider register is missing.
    pub fn dividers() -> Option<Dividers> {
        let r = |a| reg(a).map(u64::from);
        let be = |hi: u8, mask: u64| -> Option<u64> {
            Some(((r(hi)? & mask) << 16 | r(hi + 1)? << 8 | r(hi + 2)?) + 1)
        };
        Some(Dividers {
            n1_hs: (r(25)? >> 5) + 4,
            nc1_ls: be(31, 0x0F)?,
            n2_hs: (r(40)? >> 5) + 4,
            n2_ls: be(40, 0x0F)?,
            n31: be(43, 0x07)?,
            n32: be(46, 0x07)?,
        })
    }

    /// The DSPLL's oscillator and output frequencies (Hz) for an input of `in_hz` on CKIN1
    /// or the crystal, as (f3, fOSC, fOUT); `None` if they are not whole numbers of Hz.
    pub fn frequencies(d: &Dividers, in_hz: u64) -> Option<(u64, u64, u64)> {
        if !in_hz.is_multiple_of(d.n31) {
            return None;
        }
        let f3 = in_hz / d.n31;
        let fosc = f3 * d.n2_hs * d.n2_ls;
        let div = d.n1_hs * d.nc1_ls;
        fosc.is_multiple_of(div).then_some((f3, fosc, fosc / div))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn port(name: &str) -> &'static Port {
        PORTS.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no port {name}"))
    }

    #[test]
    fn board_no_pin_or_port_is_used_twice() {
        let mut pins = HashSet::new();
        let mut names = HashSet::new();
        for p in PORTS {
            assert!(names.insert(p.name), "port {} listed twice", p.name);
            for pin in p.pins {
                assert!(pins.insert(*pin), "pin {pin} used twice (again by {})", p.name);
            }
        }
    }

    #[test]
    fn board_every_diff_pair_has_p_and_n_alike() {
        for p in PORTS.iter().filter(|p| p.name.ends_with("_p")) {
            let n = port(&format!("{}_n", p.name.strip_suffix("_p").unwrap()));
            assert_eq!((p.width(), p.dir, p.io, p.sites), (n.width(), n.dir, n.io, n.sites), "{}", p.name);
        }
        for n in PORTS.iter().filter(|p| p.name.ends_with("_n") && !p.name.ends_with("reset_n")) {
            let base = n.name.strip_suffix("_n").unwrap();
            if matches!(n.io, Io::Gt | Io::GtRefclk | Io::DiffSstl15) {
                port(&format!("{base}_p"));
            }
        }
        for p in PORTS.iter().filter(|p| matches!(p.io, Io::Gt | Io::GtRefclk | Io::DiffSstl15)) {
            assert!(p.name.ends_with("_p") || p.name.ends_with("_n"), "{} is differential", p.name);
        }
    }

    #[test]
    fn board_bus_widths_are_consistent() {
        let w = |n: &str| port(n).width();
        for n in ["pcie_rx_p", "pcie_rx_n", "pcie_tx_p", "pcie_tx_n"] {
            assert_eq!(w(n), 8, "{n}: PCIe Gen3 x8");
        }
        for n in ["sfp_rx_p", "sfp_rx_n", "sfp_tx_p", "sfp_tx_n", "sfp_tx_disable"] {
            assert_eq!(w(n), 4, "{n}: four SFP+ cages");
        }
        assert_eq!(w("led"), 8);
        assert_eq!(w("btn"), 5);
        for p in PORTS {
            assert!(p.sites.is_empty() || p.sites.len() == p.width(), "{}: one site per bit", p.name);
        }
    }

    /// The quad a GT site belongs to: channel XnYm is in quad 110 + m/4, reference clock
    /// buffer IBUFDS_GTE2_XnYm in quad 110 + m/2 (the FFG1761's right column starts at 110).
    fn quad(site: &str) -> u32 {
        let y: u32 = site.rsplit('Y').next().unwrap().parse().unwrap();
        if site.starts_with("GTHE2_CHANNEL_") {
            110 + y / 4
        } else {
            110 + y / 2
        }
    }

    #[test]
    fn board_every_gt_pin_is_a_transceiver_site_near_its_refclk() {
        for p in PORTS {
            match p.io {
                Io::Gt => assert!(p.sites.iter().all(|s| s.starts_with("GTHE2_CHANNEL_X1Y")), "{}", p.name),
                Io::GtRefclk => {
                    assert!(p.sites.iter().all(|s| s.starts_with("IBUFDS_GTE2_X1Y")), "{}", p.name)
                }
                _ => assert!(p.sites.is_empty(), "{} has no transceiver site", p.name),
            }
        }
        // A QPLL reaches its own quad and the quads next to it.
        for (lanes, refclk) in [("pcie_rx_p", "pcie_refclk_p"), ("sfp_rx_p", "sfp_refclk_p")] {
            let q = quad(port(refclk).sites[0]);
            for s in port(lanes).sites {
                assert!(quad(s).abs_diff(q) <= 1, "{lanes} {s} is two quads from {refclk}");
            }
        }
        assert_eq!(quad(port("sfp_refclk_p").sites[0]), 113);
        assert_eq!(quad(port("pcie_refclk_p").sites[0]), 115);
    }

    #[test]
    fn board_every_iostandard_matches_its_bank_voltage() {
        let banks: HashMap<u16, u32> = BANK_VCCO.iter().copied().collect();
        let mut seen: HashMap<u16, u32> = HashMap::new();
        for p in PORTS.iter().filter(|p| !matches!(p.io, Io::Gt | Io::GtRefclk)) {
            assert_eq!(p.io.vcco_mv(), Some(p.vcco_mv), "{}: IOSTANDARD against its VCCO", p.name);
            if let Some(b) = p.bank {
                assert_eq!(banks.get(&b), Some(&p.vcco_mv), "{} in bank {b}", p.name);
                assert_eq!(*seen.entry(b).or_insert(p.vcco_mv), p.vcco_mv, "bank {b} mixes voltages");
            }
        }
    }

    #[test]
    fn board_xdc_pins_every_bit_once_and_parses_back_to_the_table() {
        let text = xdc();
        let lines = parse_pins(&text).unwrap();
        let mut by_object: HashMap<String, PinLine> = HashMap::new();
        for l in lines {
            let object = l.object.clone();
            assert!(by_object.insert(object.clone(), l).is_none(), "{object} pinned twice");
        }
        let bits: usize = PORTS.iter().map(Port::width).sum();
        assert_eq!(by_object.len(), bits, "one PACKAGE_PIN per bit and nothing else");
        for p in PORTS {
            for (i, pin) in p.pins.iter().enumerate() {
                let l = &by_object[&p.bit_name(i)];
                assert_eq!(l.pin, *pin, "{}", p.bit_name(i));
                assert_eq!(l.iostandard.as_deref(), p.io.iostandard(), "{}", p.bit_name(i));
                assert_eq!(l.pullup, p.pullup, "{}", p.bit_name(i));
            }
        }
    }

    #[test]
    fn board_xdc_has_clocks_false_paths_and_bpi_settings() {
        let text = xdc();
        for (line, why) in [
            ("create_clock -period 5.000 -name sys_clk [get_ports {sys_clk_p}]", "200 MHz"),
            ("create_clock -period 10.000 -name pcie_refclk [get_ports {pcie_refclk_p}]", "100 MHz"),
            ("create_clock -period 6.400 -name sfp_refclk [get_ports {sfp_refclk_p}]", "156.25 MHz"),
            ("set_false_path -from [get_ports {btn[*]}]", "buttons"),
            ("set_false_path -from [get_ports {cpu_reset}]", "reset button"),
            ("set_false_path -to [get_ports {led[*]}]", "LEDs"),
            ("set_false_path -to [get_ports {si5324_reset_n}]", "Si5324 reset"),
            ("set_property CONFIG_MODE BPI16 [current_design]", "BPI x16"),
            ("set_property CFGBVS GND [current_design]", "1.8 V bank 0"),
            ("set_property CONFIG_VOLTAGE 1.8 [current_design]", "1.8 V bank 0"),
            ("set_property BITSTREAM.CONFIG.BPI_SYNC_MODE Type1 [current_design]", "burst reads"),
        ] {
            assert!(text.lines().any(|l| l == line), "{why}: missing `{line}`");
        }
        for p in PORTS.iter().filter(|p| p.timing != Timing::Async) {
            let tag = format!("[get_ports {{{}", p.name);
            let fp = text.lines().find(|l| l.starts_with("set_false_path") && l.contains(&tag));
            assert!(fp.is_none(), "{} is timed, not a false path: {fp:?}", p.name);
        }
        for p in PORTS.iter().filter(|p| p.timing == Timing::Clock && p.name.ends_with("_p")) {
            assert!(CLOCKS.iter().any(|c| c.port == p.name), "{} has no create_clock", p.name);
        }
    }

    #[test]
    fn board_xdc_parser_names_the_bad_line() {
        let bad = "set_property -dict {PACKAGE_PIN H19 IOSTANDARD} [get_ports {sys_clk_p}]\n";
        let e = parse_pins(bad).unwrap_err();
        assert!(e.contains("XDC line 1") && e.contains("odd number"), "{e}");
        let e = parse_pins("set_property PACKAGE_PIN H19 [get_ports sys_clk_p]\n").unwrap_err();
        assert!(e.contains("not a `set_property -dict {` line"), "{e}");
    }

    #[test]
    fn board_params_come_from_the_contract() {
        let t = params_tcl();
        assert!(t.contains("set board_part {xc7vx690tffg1761-2}"), "{t}");
        assert!(t.contains("set board_top {smartnic_vc709}"), "{t}");
        assert!(t.contains("set board_device {xc7vx690t}"), "{t}");
        assert!(t.contains(&format!("set pci_device_id {{{:04X}}}", crate::regs::PCI_DEVICE_ID)), "{t}");
        assert!(t.contains("set pci_vendor_id {10EE}"), "{t}");
        assert!(t.contains("set flash_size_mb {128}"), "{t}");
        assert!(t.contains(&format!("set axil_bar_size {{{}}}", register_bar_bytes() >> 20)), "{t}");
        assert!(t.contains("set axil_bar_scale {Megabytes}"), "{t}");
        assert!(register_bar_bytes().is_power_of_two() && register_bar_bytes() >= 1 << 20);
    }

    #[test]
    fn board_bar_size_uses_a_scale_the_xdma_core_offers() {
        assert_eq!(bar_size_and_scale(4 << 20), (4, "Megabytes"));
        assert_eq!(bar_size_and_scale(1 << 20), (1, "Megabytes"));
        assert_eq!(bar_size_and_scale(64 << 10), (64, "Kilobytes"));
        let (size, _) = bar_size_and_scale(register_bar_bytes());
        assert!(size.is_power_of_two() && size <= 512, "{size}");
    }

    #[test]
    fn board_si5324_sequence_gives_156_25_mhz_from_the_crystal() {
        use si5324::*;
        assert_eq!(mux_select(), 0x80);
        let d = dividers().expect("every divider register is written");
        assert_eq!(d, Dividers { n1_hs: 9, nc1_ls: 4, n2_hs: 10, n2_ls: 150_000, n31: 30_476, n32: 30_476 });
        let (f3, fosc, fout) = frequencies(&d, XTAL_HZ).expect("whole-Hz plan");
        assert_eq!(fout, OUT_HZ);
        // Si5324 datasheet limits: 2 kHz <= f3 <= 2 MHz, 4.85 GHz <= fOSC <= 5.67 GHz.
        assert!((2_000..=2_000_000).contains(&f3), "f3 = {f3}");
        assert!((4_850_000_000..=5_670_000_000).contains(&fosc), "fOSC = {fosc}");
        // NC1_LS must be 1 or even; free run takes the crystal through N32 as well.
        assert!(d.nc1_ls == 1 || d.nc1_ls.is_multiple_of(2));
        assert_eq!(d.n31, d.n32);
        assert_eq!(INIT.last().map(|w| (w.0, w.1)), Some((136, 0x40)), "ICAL last");
        let regs: Vec<u8> = INIT.iter().map(|w| w.0).collect();
        assert!(regs.windows(2).all(|w| w[0] < w[1]), "each register once, in address order");
        assert_eq!(CLOCKS.iter().find(|c| c.port == "sfp_refclk_p").map(|c| c.period_ps), Some(6_400));
        assert_eq!(1_000_000_000_000 / OUT_HZ, 6_400, "the XDC's SFP clock is the Si5324 output");
    }
}
