//! Driving a built model from Rust: ports by name or [`PortId`], clock, reset, VCD trace.
use crate::build::{build_block, build_model, Dir, ModelBuild, Port};
use libloading::Library;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// Index of a port in [`Model::ports`]; look it up once with [`Model::port`], then use it
/// in the per-cycle loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortId(u32);

impl PortId {
    /// Position in [`Model::ports`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

type NewFn = unsafe extern "C" fn(c_int) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type EvalFn = unsafe extern "C" fn(*mut c_void);
type TickFn = unsafe extern "C" fn(*mut c_void, u64) -> c_int;
type SetFn = unsafe extern "C" fn(*mut c_void, u32, *const u32) -> c_int;
type GetFn = unsafe extern "C" fn(*mut c_void, u32, *mut u32) -> c_int;
type StreamFn =
    unsafe extern "C" fn(*mut c_void, u64, u32, *const u32, *const u32, u32, *const u32, *mut u32) -> c_int;
type TraceFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int;
type CountFn = unsafe extern "C" fn() -> u32;
type NameFn = unsafe extern "C" fn(u32) -> *const c_char;

/// The loaded library of one model (shared by every instance of it).
struct Lib {
    _lib: Library,
    new: NewFn,
    free: FreeFn,
    eval: EvalFn,
    tick: TickFn,
    set: SetFn,
    get: GetFn,
    trace: TraceFn,
    stream: StreamFn,
}

impl Lib {
    fn load(build: &ModelBuild) -> Result<Lib, String> {
        let path = &build.library;
        // SAFETY: the library is our own harness, built for this process' architecture; its
        // initialisers only set up Verilator statics.
        let lib = unsafe { Library::new(path) }.map_err(|e| format!("loading {}: {e}", path.display()))?;
        // SAFETY: the symbol types match the `extern "C"` definitions in build::harness.
        unsafe {
            let sym = |name: &str| format!("symbol {name} missing in {}", path.display());
            let count: CountFn = *lib.get::<CountFn>(b"sim_port_count").map_err(|_| sym("sim_port_count"))?;
            let pname: NameFn = *lib.get::<NameFn>(b"sim_port_name").map_err(|_| sym("sim_port_name"))?;
            // The harness must agree with the port list we parsed.
            let n = count() as usize;
            if n != build.ports.len()
                || (0..n).any(|i| CStr::from_ptr(pname(i as u32)).to_str() != Ok(&build.ports[i].name))
            {
                return Err(format!(
                    "{} does not match its port list; delete {}",
                    path.display(),
                    build.dir.display()
                ));
            }
            Ok(Lib {
                new: *lib.get::<NewFn>(b"sim_new").map_err(|_| sym("sim_new"))?,
                free: *lib.get::<FreeFn>(b"sim_free").map_err(|_| sym("sim_free"))?,
                eval: *lib.get::<EvalFn>(b"sim_eval").map_err(|_| sym("sim_eval"))?,
                tick: *lib.get::<TickFn>(b"sim_tick").map_err(|_| sym("sim_tick"))?,
                set: *lib.get::<SetFn>(b"sim_set").map_err(|_| sym("sim_set"))?,
                get: *lib.get::<GetFn>(b"sim_get").map_err(|_| sym("sim_get"))?,
                trace: *lib.get::<TraceFn>(b"sim_trace_open").map_err(|_| sym("sim_trace_open"))?,
                stream: *lib.get::<StreamFn>(b"sim_stream").map_err(|_| sym("sim_stream"))?,
                _lib: lib,
            })
        }
    }
}

/// Libraries already loaded in this process, by path.
fn loaded(build: &ModelBuild) -> Result<Arc<Lib>, String> {
    static LIBS: OnceLock<Mutex<HashMap<std::path::PathBuf, Arc<Lib>>>> = OnceLock::new();
    let mut libs = LIBS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = libs.get(&build.library) {
        return Ok(l.clone());
    }
    let l = Arc::new(Lib::load(build)?);
    libs.insert(build.library.clone(), l.clone());
    Ok(l)
}

/// One instance of a Verilated block.
///
/// Conventions (those of every rust-hdl block here): a 1-bit input `clock`, optionally a
/// 1-bit synchronous active-high `reset`. [`Model::tick`] is one clock period: clock low,
/// evaluate, clock high, evaluate. Inputs set before a tick are sampled at its rising edge;
/// outputs read after it show the registers it loaded.
pub struct Model {
    lib: Arc<Lib>,
    handle: *mut c_void,
    build: ModelBuild,
    cycles: u64,
    buf: Vec<u32>,
}

impl Model {
    /// Generates block `block` (from `smartnic_hdl::blocks`), builds or reuses its model and
    /// instantiates it.
    pub fn of_block(block: &str) -> Result<Model, String> {
        Model::new(build_block(block)?, false)
    }

    /// Builds or reuses the model of arbitrary generated Verilog (top module
    /// `smartnic_hdl::flow::module_name(name)`), e.g. a test-specific configuration.
    pub fn of_verilog(name: &str, verilog: &str) -> Result<Model, String> {
        Model::new(build_model(name, verilog)?, false)
    }

    /// Instantiates a built model; `trace` enables VCD support (then call [`Model::trace`]).
    pub fn new(build: ModelBuild, trace: bool) -> Result<Model, String> {
        let lib = loaded(&build)?;
        // SAFETY: sim_new returns a fresh heap object owned by this Model until Drop.
        let handle = unsafe { (lib.new)(trace as c_int) };
        let words = build.ports.iter().map(Port::words).max().unwrap_or(1);
        Ok(Model { lib, handle, build, cycles: 0, buf: vec![0; words] })
    }

    /// The build this model came from (directory, library, build time).
    pub fn build(&self) -> &ModelBuild {
        &self.build
    }

    /// The top-level ports.
    pub fn ports(&self) -> &[Port] {
        &self.build.ports
    }

    /// Looks up a port by name; panics with the port list if there is none.
    pub fn port(&self, name: &str) -> PortId {
        match self.build.ports.iter().position(|p| p.name == name) {
            Some(i) => PortId(i as u32),
            None => {
                let names: Vec<_> = self.build.ports.iter().map(|p| p.name.as_str()).collect();
                panic!("block `{}` has no port `{name}`; ports: {}", self.build.block, names.join(", "))
            }
        }
    }

    fn info(&self, p: PortId) -> &Port {
        &self.build.ports[p.0 as usize]
    }

    /// Sets an input of any width from little-endian 32-bit words (extra bits must be 0).
    pub fn set_words(&mut self, p: PortId, words: &[u32]) {
        let port = self.info(p);
        assert_eq!(port.dir, Dir::In, "port `{}` is an output", port.name);
        assert_eq!(words.len(), port.words(), "port `{}` is {} bits", port.name, port.width);
        let top = port.width % 32;
        assert!(
            top == 0 || words[words.len() - 1] >> top == 0,
            "value does not fit port `{}` ({} bits)",
            port.name,
            port.width
        );
        // SAFETY: handle is live; words has the port's word count.
        let rc = unsafe { (self.lib.set)(self.handle, p.0, words.as_ptr()) };
        assert_eq!(rc, 0);
    }

    /// Sets an input of up to 128 bits.
    pub fn set(&mut self, p: PortId, value: u128) {
        let n = self.info(p).words();
        assert!(n <= 4, "port `{}` is wider than 128 bits: use set_words", self.info(p).name);
        let words: [u32; 4] = std::array::from_fn(|i| (value >> (32 * i)) as u32);
        self.set_words(p, &words[..n]);
    }

    /// Reads a port of any width as little-endian 32-bit words.
    pub fn get_words(&mut self, p: PortId) -> &[u32] {
        let n = self.info(p).words();
        // SAFETY: handle is live; buf holds at least the widest port.
        let rc = unsafe { (self.lib.get)(self.handle, p.0, self.buf.as_mut_ptr()) };
        assert_eq!(rc, 0);
        &self.buf[..n]
    }

    /// Reads a port of up to 128 bits.
    pub fn get(&mut self, p: PortId) -> u128 {
        assert!(
            self.info(p).words() <= 4,
            "port `{}` is wider than 128 bits: use get_words",
            self.info(p).name
        );
        self.get_words(p).iter().enumerate().fold(0u128, |acc, (i, &w)| acc | (w as u128) << (32 * i))
    }

    /// Sets an input by name (convenient outside hot loops).
    pub fn set_by_name(&mut self, name: &str, value: u128) {
        let p = self.port(name);
        self.set(p, value)
    }

    /// Reads a port by name.
    pub fn get_by_name(&mut self, name: &str) -> u128 {
        let p = self.port(name);
        self.get(p)
    }

    /// Evaluates combinational logic without a clock edge.
    pub fn eval(&mut self) {
        // SAFETY: handle is live.
        unsafe { (self.lib.eval)(self.handle) }
    }

    /// Runs `n` clock periods.
    pub fn tick_n(&mut self, n: u64) {
        // SAFETY: handle is live.
        let rc = unsafe { (self.lib.tick)(self.handle, n) };
        assert_eq!(rc, 0, "block `{}` has no 1-bit `clock` input", self.build.block);
        self.cycles += n;
    }

    /// Runs one clock period.
    pub fn tick(&mut self) {
        self.tick_n(1)
    }

    /// Runs `n` clocks in one call into the model (no per-port FFI round trips): before
    /// clock `c` the `inputs` are set from row `c` of `in_words` (each port's
    /// [`Port::words`] little-endian words, ports back to back), after it the `outputs` are
    /// read into row `c` of the returned vector (same layout). `in_words` must hold exactly
    /// `n` rows. This is the hot loop of the exhaustive arithmetic tests.
    pub fn stream(&mut self, inputs: &[PortId], in_words: &[u32], outputs: &[PortId]) -> Vec<u32> {
        let in_row: usize = inputs.iter().map(|&p| self.info(p).words()).sum();
        let out_row: usize = outputs.iter().map(|&p| self.info(p).words()).sum();
        for &p in inputs {
            assert_eq!(self.info(p).dir, Dir::In, "port `{}` is an output", self.info(p).name);
        }
        assert!(in_row > 0 && in_words.len().is_multiple_of(in_row), "input rows of {in_row} words expected");
        let n = in_words.len() / in_row;
        let mut out = vec![0u32; n * out_row];
        let ip: Vec<u32> = inputs.iter().map(|p| p.0).collect();
        let op: Vec<u32> = outputs.iter().map(|p| p.0).collect();
        // SAFETY: handle is live; every pointer covers exactly the rows the harness walks
        // (port word counts come from the same port table the harness was generated from).
        let rc = unsafe {
            (self.lib.stream)(
                self.handle,
                n as u64,
                ip.len() as u32,
                ip.as_ptr(),
                in_words.as_ptr(),
                op.len() as u32,
                op.as_ptr(),
                out.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0, "stream on block `{}` failed (no clock?)", self.build.block);
        self.cycles += n as u64;
        out
    }

    /// Clock periods run so far.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// Holds `reset` high for `cycles` clocks, then low. Other inputs are left as they are.
    pub fn reset(&mut self, cycles: u64) {
        let r = self.port("reset");
        self.set(r, 1);
        self.tick_n(cycles);
        self.set(r, 0);
    }

    /// Starts a VCD trace at `path` (the model must be created with `trace = true`).
    pub fn trace(&mut self, path: &Path) -> Result<(), String> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("creating {}: {e}", d.display()))?;
        }
        let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
        // SAFETY: handle is live; c is a valid C string for the duration of the call.
        match unsafe { (self.lib.trace)(self.handle, c.as_ptr()) } {
            0 => Ok(()),
            -1 => Err("a trace is already open".into()),
            _ => Err(format!(
                "cannot open trace {} (was the model created with trace = true?)",
                path.display()
            )),
        }
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: handle came from sim_new and is freed exactly once; closes the trace.
        unsafe { (self.lib.free)(self.handle) }
    }
}
