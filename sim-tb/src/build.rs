//! Building a Verilator model of a generated block into a shared library.
//!
//! `target/verilator/<block>-<hash>/` holds, for each distinct (Verilog, harness, flags,
//! Verilator version), the verilated C++ (`obj/`), the harness and `lib<block>.so`. The hash
//! is FNV-1a over all of them, so a changed block rebuilds and an unchanged one is reused,
//! across test binaries and runs. Builds go to a temporary directory renamed into place, so
//! concurrent test processes never see a half-built model, and a build holds a lock file of
//! its model's name, so a second process that wants the same model waits for the first
//! one's build instead of building it again beside it (the test suite runs several test
//! processes at once, and the whole core's model is minutes of a core).
use smartnic_hdl::flow::{self, require_tool, run, write_if_changed};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

/// Direction of a top-level port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

/// A top-level port of a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub width: usize,
    pub dir: Dir,
}

impl Port {
    /// 32-bit words the value occupies.
    pub fn words(&self) -> usize {
        self.width.div_ceil(32)
    }
}

/// A built model: where its library is and what it exposes.
#[derive(Clone, Debug)]
pub struct ModelBuild {
    pub block: String,
    pub dir: PathBuf,
    pub library: PathBuf,
    pub ports: Vec<Port>,
    /// Wall time of the Verilator + C++ build; `None` if the cache was used.
    pub build_seconds: Option<f64>,
}

/// Bumped whenever the harness or the build flags change in a way the hash cannot see.
const HARNESS_VERSION: u32 = 2;

/// Verilator flags of every model build (also part of the cache key).
const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "--build",
    "--exe",
    "--trace",
    "--prefix",
    "Vmodel",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "-CFLAGS",
    "-fPIC -O2",
    "-LDFLAGS",
    "-shared",
    "-MAKEFLAGS",
    "OPT_FAST=-O2 OPT_SLOW=-O1 OBJCACHE=ccache",
];

/// ccache's directory for the model builds, under `target/verilator/` (cleaned with the
/// target, never the user's own cache). Every model compiles Verilator's runtime library
/// (`verilated.cpp`, its VCD writer and thread pool: about 10 s of a core) with the same
/// flags; through ccache only the first model of a run pays for it, which is most of a
/// small block's build.
const CCACHE_DIR: &str = ".ccache";

/// Parses the port list of module `top` from rust-hdl's Verilog (one `input wire [h:l] name;`
/// or `output reg name;` declaration per line, directly after the module header).
pub fn parse_ports(verilog: &str, top: &str) -> Result<Vec<Port>, String> {
    let header = format!("module {top}(");
    let start = verilog.find(&header).ok_or_else(|| format!("module `{top}` not found in the Verilog"))?;
    let mut ports = Vec::new();
    for line in verilog[start..].lines().skip(1) {
        let t = line.trim().trim_end_matches(';');
        if t.is_empty() || t.starts_with("//") {
            if ports.is_empty() {
                continue;
            }
            break;
        }
        let mut words = t.split_whitespace().peekable();
        let dir = match words.next() {
            Some("input") => Dir::In,
            Some("output") => Dir::Out,
            Some("inout") => return Err(format!("module `{top}`: inout ports cannot be simulated")),
            _ => break,
        };
        let mut width = 1;
        let mut name = None;
        for w in words {
            if w == "wire" || w == "reg" || w == "signed" {
                continue;
            }
            if let Some(range) = w.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                let (hi, lo) = range.split_once(':').ok_or_else(|| format!("bad range {w}"))?;
                let hi: usize = hi.parse().map_err(|_| format!("bad range {w}"))?;
                let lo: usize = lo.parse().map_err(|_| format!("bad range {w}"))?;
                width = hi - lo + 1;
            } else {
                name = Some(w.to_string());
            }
        }
        let name = name.ok_or_else(|| format!("no port name in `{t}`"))?;
        ports.push(Port { name, width, dir });
    }
    if ports.is_empty() {
        return Err(format!("module `{top}` has no ports"));
    }
    Ok(ports)
}

/// The C++ type Verilator gives a port of this width.
fn ctype(width: usize) -> &'static str {
    match width {
        0..=8 => "CData",
        9..=16 => "SData",
        17..=32 => "IData",
        33..=64 => "QData",
        _ => "wide",
    }
}

/// The C++ member Verilator gives port `name`: its identifier encoding (letters, digits
/// and single `_` kept; `__` becomes `___05F`; any other character, such as the `$` of a
/// rust-hdl bundle port `bus$awaddr`, becomes `__0` and its two hex digits).
pub fn cpp_member(name: &str) -> String {
    let mut out = String::new();
    let mut chars = name.chars().peekable();
    let mut first = true;
    while let Some(c) = chars.next() {
        let keep = if first { c.is_ascii_alphabetic() } else { c.is_ascii_alphanumeric() };
        if keep {
            out.push(c);
        } else if c == '_' && chars.peek() == Some(&'_') {
            chars.next();
            out += "___05F";
        } else if c == '_' {
            out.push(c);
        } else {
            out += &format!("__0{:02X}", c as u32);
        }
        first = false;
    }
    out
}

/// The C harness: a C ABI over the Verilated model with ports addressed by index (the table
/// keeps the Verilog names, the accessors use [`cpp_member`]).
pub fn harness(ports: &[Port]) -> String {
    let mut set = String::new();
    let mut get = String::new();
    let mut table = String::new();
    for (i, p) in ports.iter().enumerate() {
        table += &format!("    {{\"{}\", {}, {}}},\n", p.name, p.width, if p.dir == Dir::In { 0 } else { 1 });
        let m = cpp_member(&p.name);
        let (s, g) = match ctype(p.width) {
            "QData" => (
                format!("m->{m} = (QData)w[0] | ((QData)w[1] << 32);"),
                format!("w[0] = (uint32_t)m->{m}; w[1] = (uint32_t)(m->{m} >> 32);"),
            ),
            "wide" => (
                format!("for (int k = 0; k < {}; k++) m->{m}[k] = w[k];", p.words()),
                format!("for (int k = 0; k < {}; k++) w[k] = m->{m}[k];", p.words()),
            ),
            t => (format!("m->{m} = ({t})w[0];"), format!("w[0] = m->{m};")),
        };
        if p.dir == Dir::In {
            set += &format!("    case {i}: {s} return 0;\n");
        }
        get += &format!("    case {i}: {g} return 0;\n");
    }
    let has_clock = ports.iter().any(|p| p.name == "clock" && p.dir == Dir::In && p.width == 1);
    let tick = if has_clock {
        "    for (uint64_t i = 0; i < n; i++) {\n        s->m->clock = 0; step(s);\n        s->m->clock = 1; step(s);\n    }\n    return 0;"
    } else {
        "    (void)s; (void)n; return -1;"
    };
    format!(
        r#"// Generated by smartnic-sim-tb: C ABI over one Verilated model. Do not edit.
#include <cstdint>
#include "Vmodel.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

struct PortInfo {{ const char* name; uint32_t width; int dir; }};
static const PortInfo PORTS[] = {{
{table}}};

struct Sim {{
    VerilatedContext* ctx;
    Vmodel* m;
    VerilatedVcdC* vcd;
}};

static void step(Sim* s) {{
    s->m->eval();
    if (s->vcd) s->vcd->dump(s->ctx->time());
    s->ctx->timeInc(1);
}}

extern "C" {{
uint32_t sim_abi_version() {{ return {HARNESS_VERSION}; }}
uint32_t sim_port_count() {{ return sizeof(PORTS) / sizeof(PORTS[0]); }}
const char* sim_port_name(uint32_t i) {{ return PORTS[i].name; }}
uint32_t sim_port_width(uint32_t i) {{ return PORTS[i].width; }}
int sim_port_dir(uint32_t i) {{ return PORTS[i].dir; }}

void* sim_new(int trace) {{
    Sim* s = new Sim;
    s->ctx = new VerilatedContext;
    if (trace) s->ctx->traceEverOn(true);
    s->m = new Vmodel{{s->ctx}};
    s->vcd = nullptr;
    return s;
}}

int sim_trace_open(void* p, const char* path) {{
    Sim* s = (Sim*)p;
    if (s->vcd) return -1;
    s->vcd = new VerilatedVcdC;
    s->m->trace(s->vcd, 99);
    s->vcd->open(path);
    return s->vcd->isOpen() ? 0 : -2;
}}

void sim_free(void* p) {{
    Sim* s = (Sim*)p;
    s->m->final();
    if (s->vcd) {{ s->vcd->close(); delete s->vcd; }}
    delete s->m;
    delete s->ctx;
    delete s;
}}

void sim_eval(void* p) {{ step((Sim*)p); }}

int sim_tick(void* p, uint64_t n) {{
    Sim* s = (Sim*)p;
{tick}
}}

int sim_set(void* p, uint32_t port, const uint32_t* w) {{
    Vmodel* m = ((Sim*)p)->m;
    switch (port) {{
{set}    default: return -1;
    }}
}}

// Batch driving: for each of `n` cycles, set the `n_in` inputs from `in` (their words
// back to back, one row per cycle), run one clock, then read the `n_out` outputs into
// `out` (one row per cycle). Returns 0, or -1 on a bad port / missing clock.
int sim_get(void* p, uint32_t port, uint32_t* w);
int sim_stream(void* p, uint64_t n, uint32_t n_in, const uint32_t* in_ports, const uint32_t* in,
               uint32_t n_out, const uint32_t* out_ports, uint32_t* out) {{
    Sim* s = (Sim*)p;
    for (uint64_t c = 0; c < n; c++) {{
        for (uint32_t j = 0; j < n_in; j++) {{
            if (sim_set(p, in_ports[j], in) != 0) return -1;
            in += (PORTS[in_ports[j]].width + 31) / 32;
        }}
        if (sim_tick(p, 1) != 0) return -1;
        (void)s;
        for (uint32_t j = 0; j < n_out; j++) {{
            if (sim_get(p, out_ports[j], out) != 0) return -1;
            out += (PORTS[out_ports[j]].width + 31) / 32;
        }}
    }}
    return 0;
}}

int sim_get(void* p, uint32_t port, uint32_t* w) {{
    Vmodel* m = ((Sim*)p)->m;
    switch (port) {{
{get}    default: return -1;
    }}
}}
}}

// --exe wants a main; the library never calls it.
int main() {{ return 0; }}
"#
    )
}

/// FNV-1a, 64 bit: stable across Rust versions (unlike `DefaultHasher`).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// Serialises builds inside one process (the machine has few cores; parallel test threads
/// would otherwise build the same model twice).
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Takes the exclusive lock of model `name` under `root` (`.NAME.lock`), waiting while another
/// process holds it; the lock is released when the returned file is dropped (or the process
/// ends, however it ends).
fn lock_model(root: &std::path::Path, name: &str) -> Result<std::fs::File, String> {
    std::fs::create_dir_all(root).map_err(|e| format!("creating {}: {e}", root.display()))?;
    let path = root.join(format!(".{name}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("opening the build lock {}: {e}", path.display()))?;
    file.lock().map_err(|e| format!("locking {}: {e}", path.display()))?;
    Ok(file)
}

/// Root of all model builds: `target/verilator/`.
pub fn verilator_dir() -> PathBuf {
    flow::target_dir().join("verilator")
}

/// Builds (or reuses) the model of `verilog`, whose top module is `flow::module_name(block)`.
pub fn build_model(block: &str, verilog: &str) -> Result<ModelBuild, String> {
    let verilator = require_tool("verilator")?;
    require_tool("g++")?;
    require_tool("make")?;
    require_tool("ccache")?;
    let top = flow::module_name(block);
    let ports = parse_ports(verilog, &top)?;
    let cpp = harness(&ports);
    let version = run(Command::new(&verilator).arg("--version"))?;
    let waivers = flow::waiver_file();
    let flags = VERILATOR_FLAGS.join(" ");
    let hash = fnv1a(&[
        verilog.as_bytes(),
        cpp.as_bytes(),
        version.as_bytes(),
        waivers.as_bytes(),
        flags.as_bytes(),
    ]);
    let dir = verilator_dir().join(format!("{block}-{hash:016x}"));
    let library = dir.join(format!("lib{block}.so"));
    let done = |build_seconds| ModelBuild {
        block: block.to_string(),
        dir: dir.clone(),
        library: library.clone(),
        ports: ports.clone(),
        build_seconds,
    };
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if library.is_file() {
        return Ok(done(None));
    }
    let _build_lock = lock_model(&verilator_dir(), &format!("{block}-{hash:016x}"))?;
    // Another process may have built it while this one waited for the lock.
    if library.is_file() {
        return Ok(done(None));
    }
    let start = Instant::now();
    // Builds inside this process are serialised by BUILD_LOCK, so the pid is unique enough.
    let tmp = verilator_dir().join(format!(".{block}-{hash:016x}.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    write_if_changed(&tmp.join(format!("{block}.v")), verilog)?;
    write_if_changed(&tmp.join("harness.cpp"), &cpp)?;
    write_if_changed(&tmp.join("waivers.vlt"), &waivers)?;
    let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).to_string();
    let result = run(Command::new(&verilator)
        .current_dir(&tmp)
        .env("CCACHE_DIR", verilator_dir().join(CCACHE_DIR))
        .args(VERILATOR_FLAGS)
        .args(["-j", &jobs, "--top-module", &top, "-Mdir", "obj", "-o"])
        .arg(format!("../lib{block}.so"))
        .args(["waivers.vlt", &format!("{block}.v"), "harness.cpp"]));
    if let Err(e) = result {
        let _ = std::fs::write(tmp.join("build.log"), &e);
        return Err(format!("Verilator build of block `{block}` failed (kept in {}):\n{e}", tmp.display()));
    }
    if !tmp.join(format!("lib{block}.so")).is_file() {
        return Err(format!("Verilator build of `{block}` produced no library in {}", tmp.display()));
    }
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => {}
        // Another process finished the same model first: use theirs.
        Err(_) if library.is_file() => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => return Err(format!("moving {} to {}: {e}", tmp.display(), dir.display())),
    }
    Ok(done(Some(start.elapsed().as_secs_f64())))
}

/// Generates a registered block with `smartnic-hdl` and builds its model.
pub fn build_block(block: &str) -> Result<ModelBuild, String> {
    let def = smartnic_hdl::blocks::find(block)?;
    build_model(block, &(def.verilog)()?)
}

/// Path helper for traces: `target/verilator/traces/<name>.vcd`.
pub fn trace_path(name: &str) -> PathBuf {
    verilator_dir().join("traces").join(format!("{name}.vcd"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rust_hdl_port_list() {
        let v = "module nic_x(clock,key,hash);\n    \n    // Module arguments\n    input wire  clock;\n    input wire  [103:0] key;\n    output reg  [31:0] hash;\n    \n    // Constant declarations\n";
        let p = parse_ports(v, "nic_x").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!((p[1].name.as_str(), p[1].width, p[1].dir), ("key", 104, Dir::In));
        assert_eq!((p[2].name.as_str(), p[2].width, p[2].dir), ("hash", 32, Dir::Out));
        assert_eq!(p[1].words(), 4);
    }

    #[test]
    fn bundle_ports_use_verilators_cpp_names() {
        let v =
            "module nic_x(clock,bus$awaddr);\n    input wire  clock;\n    input wire  [20:0] bus$awaddr;\n\n";
        let p = parse_ports(v, "nic_x").unwrap();
        assert_eq!(p[1].name, "bus$awaddr");
        let cpp = harness(&p);
        assert!(cpp.contains("{\"bus$awaddr\", 21, 0}"), "the table keeps the Verilog name");
        assert!(cpp.contains("m->bus__024awaddr = (IData)w[0];"), "{cpp}");
        assert!(!cpp.contains("m->bus$"), "`$` is not a C++ identifier character");
        assert_eq!(cpp_member("a__b"), "a___05Fb");
        assert_eq!(cpp_member("win_req"), "win_req");
    }

    #[test]
    fn a_model_lock_is_held_until_dropped_and_per_model() {
        let root = tempfile::tempdir().unwrap();
        let held = lock_model(root.path(), "core-1").unwrap();
        let open = |name: &str| std::fs::File::open(root.path().join(format!(".{name}.lock"))).unwrap();
        assert!(open("core-1").try_lock().is_err(), "a second holder of the same model is refused");
        let other = lock_model(root.path(), "core-2").unwrap();
        let waiter = std::thread::spawn({
            let root = root.path().to_path_buf();
            move || lock_model(&root, "core-1").map(drop)
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the same model waits for the holder");
        drop(held);
        waiter.join().unwrap().unwrap();
        drop(other);
    }

    #[test]
    fn cache_key_is_order_sensitive() {
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
    }
}
