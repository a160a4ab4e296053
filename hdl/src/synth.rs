//! Yosys synthesis of generated blocks for the VC709's Virtex-7 (`synth_xilinx -family xc7`)
//! and the resource report.
//!
//! A run fails if Yosys fails, if the design infers any latch (checked both in the log and
//! by `select -assert-none` on latch cells before and after mapping), or if the flattened
//! top module is missing.
use crate::flow::{require_tool, run, write_if_changed};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Resource counts of one synthesized block (Xilinx 7-series primitives).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SynthReport {
    pub block: String,
    /// LUT1..LUT6 (logic LUTs, not LUTRAM/SRL).
    pub lut: u64,
    /// FDRE/FDSE/FDCE/FDPE.
    pub ff: u64,
    pub carry4: u64,
    pub dsp48: u64,
    pub ramb36: u64,
    pub ramb18: u64,
    /// Distributed RAM primitives (RAM32X1D, RAM64M, ...), counted as cells.
    pub lutram: u64,
    /// Shift-register LUTs (SRL16E, SRLC32E).
    pub srl: u64,
    /// Every cell type and count, as Yosys reports them.
    pub cells: BTreeMap<String, u64>,
    /// Wall time of the Yosys run, seconds.
    pub seconds: f64,
}

impl SynthReport {
    fn from_cells(block: &str, cells: BTreeMap<String, u64>, seconds: f64) -> Self {
        let sum = |f: &dyn Fn(&str) -> bool| cells.iter().filter(|(k, _)| f(k)).map(|(_, v)| v).sum();
        SynthReport {
            block: block.to_string(),
            lut: sum(&|k| k.starts_with("LUT") && k.len() == 4),
            ff: sum(&|k| matches!(k, "FDRE" | "FDSE" | "FDCE" | "FDPE")),
            carry4: sum(&|k| k == "CARRY4"),
            dsp48: sum(&|k| k.starts_with("DSP48")),
            ramb36: sum(&|k| k.starts_with("RAMB36")),
            ramb18: sum(&|k| k.starts_with("RAMB18")),
            lutram: sum(&|k| {
                k.starts_with("RAM32")
                    || k.starts_with("RAM64")
                    || k.starts_with("RAM128")
                    || k.starts_with("RAM256")
            }),
            srl: sum(&|k| k.starts_with("SRL")),
            cells,
            seconds,
        }
    }

    /// Header of [`SynthReport::table_row`].
    pub fn table_header() -> String {
        format!(
            "{:<16} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>5}",
            "block", "LUT", "FF", "CARRY4", "DSP48", "RAMB36", "RAMB18", "LUTRAM", "SRL"
        )
    }

    /// One row of the resource table.
    pub fn table_row(&self) -> String {
        format!(
            "{:<16} {:>7} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>5}",
            self.block,
            self.lut,
            self.ff,
            self.carry4,
            self.dsp48,
            self.ramb36,
            self.ramb18,
            self.lutram,
            self.srl
        )
    }

    /// The report as one JSON object (no serde: the shape is fixed and flat).
    pub fn to_json(&self) -> String {
        let cells: Vec<String> = self.cells.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!(
            "{{\"block\":\"{}\",\"lut\":{},\"ff\":{},\"carry4\":{},\"dsp48\":{},\"ramb36\":{},\"ramb18\":{},\"lutram\":{},\"srl\":{},\"seconds\":{:.1},\"cells\":{{{}}}}}",
            self.block, self.lut, self.ff, self.carry4, self.dsp48, self.ramb36, self.ramb18, self.lutram, self.srl,
            self.seconds, cells.join(",")
        )
    }
}

/// The Yosys script for one block.
fn script(verilog: &Path, top: &str, stat: &Path) -> String {
    format!(
        "read_verilog {v}\n\
         hierarchy -check -top {top}\n\
         proc\n\
         select -assert-none t:$dlatch t:$adlatch t:$dlatchsr t:$_DLATCH_* t:$_DLATCHSR_*\n\
         synth_xilinx -family xc7 -top {top} -flatten\n\
         select -assert-none t:LDCE t:LDPE t:$_DLATCH_* t:$dlatch\n\
         tee -q -o {s} stat\n",
        v = verilog.display(),
        s = stat.display()
    )
}

/// The cells of module `module` in Yosys' text `stat` output of a design with several
/// modules (its `=== module ===` section): type -> count; empty if it has none.
pub fn module_cells(text: &str, module: &str) -> BTreeMap<String, u64> {
    let Some(at) = text.find(&format!("=== {module} ===")) else { return BTreeMap::new() };
    let section = &text[at..];
    let end = section.find('\n').and_then(|nl| section[nl..].find("\n===").map(|e| e + nl));
    parse_stat(&section[..end.unwrap_or(section.len())])
}

/// Parses the cell list of Yosys' text `stat` output.
fn parse_stat(text: &str) -> BTreeMap<String, u64> {
    let mut cells = BTreeMap::new();
    let mut in_cells = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Number of cells:") {
            in_cells = true;
            continue;
        }
        if in_cells {
            let mut parts = t.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(name), Some(n), None) => match n.parse::<u64>() {
                    Ok(n) => *cells.entry(name.to_string()).or_insert(0) += n,
                    Err(_) => in_cells = false,
                },
                _ => in_cells = false,
            }
        }
    }
    cells
}

/// Synthesizes block `block` from `verilog` (top module `top`) in `work_dir`, which receives
/// the script, the full Yosys log and the stat output.
pub fn synth(verilog: &Path, block: &str, top: &str, work_dir: &Path) -> Result<SynthReport, String> {
    let yosys = require_tool("yosys")?;
    std::fs::create_dir_all(work_dir).map_err(|e| format!("creating {}: {e}", work_dir.display()))?;
    let stat = work_dir.join(format!("{top}.stat.txt"));
    let log = work_dir.join(format!("{top}.yosys.log"));
    let ys = work_dir.join(format!("{top}.ys"));
    let _ = std::fs::remove_file(&stat);
    write_if_changed(&ys, &script(verilog, top, &stat))?;
    let start = Instant::now();
    let result = run(Command::new(yosys).arg("-q").arg("-l").arg(&log).arg("-s").arg(&ys));
    let seconds = start.elapsed().as_secs_f64();
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    if let Err(e) = result {
        let tail: Vec<&str> = log_text.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
        let latch = if log_text.contains("Assertion failed: selection is not empty") {
            " (a latch was inferred: every signal assigned in a combinational block must be assigned on every path)"
        } else {
            ""
        };
        return Err(format!(
            "block `{top}` failed to synthesize{latch}; full log: {}\n{e}\n...\n{}",
            log.display(),
            tail.join("\n")
        ));
    }
    if let Some(line) = log_text.lines().find(|l| l.contains("Latch inferred")) {
        return Err(format!("block `{top}` infers a latch: {line} (log: {})", log.display()));
    }
    let stat_text = std::fs::read_to_string(&stat).map_err(|e| format!("reading {}: {e}", stat.display()))?;
    let cells = parse_stat(&stat_text);
    if cells.is_empty() {
        return Err(format!("block `{top}` synthesized to no cells (stat: {})", stat.display()));
    }
    Ok(SynthReport::from_cells(block, cells, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_yosys_stat() {
        let text = "\n=== hash ===\n\n   Number of wires:                 12\n   Number of cells:                 30\n     FDRE                           10\n     LUT6                           15\n     LUT2                            3\n     RAMB36E1                        2\n\n";
        let c = parse_stat(text);
        let r = SynthReport::from_cells("hash", c, 0.0);
        assert_eq!((r.lut, r.ff, r.ramb36, r.ramb18), (18, 10, 2, 0));
    }
}
