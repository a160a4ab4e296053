//! Streaming many operations through a fixed-latency pipeline in one FFI call each chunk.
//!
//! [`Pipe`] owns a model and its port lists; [`Pipe::run`] feeds one row of input words per
//! clock, appends `latency - 1` bubble rows (all inputs 0, so every valid bit is 0) and
//! returns, for every input row, the output row that appeared `latency` clocks after it
//! entered (input set before clock `c`, output read after clock `c + latency - 1`). The
//! model counts clocks, so a test proves "one result per clock" from `cycles` and the
//! number of valid results.
use crate::{Model, PortId};

/// Rows per [`Pipe::run`] call the tests use (bounds the memory of a 10M-operation run).
pub const CHUNK: usize = 1 << 20;

pub struct Pipe {
    pub model: Model,
    pub inputs: Vec<PortId>,
    pub outputs: Vec<PortId>,
    pub latency: usize,
    in_row: usize,
    out_row: usize,
    idle_rows: Vec<u32>,
}

impl Pipe {
    /// `inputs`/`outputs` by port name; `latency` >= 1.
    pub fn new(model: Model, inputs: &[&str], outputs: &[&str], latency: usize) -> Pipe {
        assert!(latency >= 1);
        let ip: Vec<PortId> = inputs.iter().map(|n| model.port(n)).collect();
        let op: Vec<PortId> = outputs.iter().map(|n| model.port(n)).collect();
        let words = |ps: &[PortId]| ps.iter().map(|&p| model.ports()[p_index(p)].words()).sum::<usize>();
        let (in_row, out_row) = (words(&ip), words(&op));
        Pipe { model, inputs: ip, outputs: op, latency, in_row, out_row, idle_rows: Vec::new() }
    }

    pub fn in_row(&self) -> usize {
        self.in_row
    }
    pub fn out_row(&self) -> usize {
        self.out_row
    }

    /// Streams `rows` (whole input rows) back to back, then `latency - 1` bubble rows,
    /// and returns one output row per input row (see the module docs). Callers chunk big
    /// runs (each call drains the pipeline: `n + latency - 1` clocks for `n` rows).
    pub fn run(&mut self, rows: &[u32]) -> Vec<u32> {
        assert!(rows.len().is_multiple_of(self.in_row));
        let n = rows.len() / self.in_row;
        let mut all = self.model.stream(&self.inputs, rows, &self.outputs);
        let bubbles = vec![0u32; (self.latency - 1) * self.in_row];
        if !bubbles.is_empty() {
            all.extend(self.model.stream(&self.inputs, &bubbles, &self.outputs));
        }
        let skip = (self.latency - 1) * self.out_row;
        self.idle_rows = all[..skip].to_vec();
        all.drain(..skip);
        debug_assert_eq!(all.len(), n * self.out_row);
        all
    }

    /// The output rows of the last [`Pipe::run`] that precede its first result (they
    /// belong to no operation of that run; tests check their valid bits are 0).
    pub fn idle_rows(&self) -> &[u32] {
        &self.idle_rows
    }
}

fn p_index(p: PortId) -> usize {
    p.index()
}
