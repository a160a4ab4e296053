//! The emulated device's readout-stream engine: the software twin of the core's
//! `StreamEngine` (`hdl::readout::stream`). A START builds the stream of the idle bank at
//! once with the contract's encoder (each word cut to its window's width, as the engine
//! packs it) and hands it to the card-to-host channel; tests can damage it on the way.

use super::EmulatedNic;
use crate::access::{AccessError, C2hChannel};
use smartnic_contract::packing::mask;
use smartnic_contract::regs::stream as regs;
use smartnic_contract::wire::readout::{encode, StreamHeader, WindowSpec};
use std::time::Duration;

/// Damage done to the next stream on the channel (to test the host's checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFault {
    /// Flip bit `bit` of word `word`.
    FlipBit { word: usize, bit: u32 },
    /// Deliver only the first `words` words.
    Truncate { words: usize },
    /// SEQUENCE moves while the stream is written (a swap or clear under it): the end word
    /// carries the new value.
    Torn,
}

/// The engine's state.
#[derive(Clone, Debug)]
pub(super) struct EmulatedStream {
    pub base: u32,
    specs: Vec<WindowSpec>,
    /// The channel is offered to the driver (`RegisterAccess::c2h`).
    pub channel: bool,
    armed: bool,
    delivered: Option<Vec<u64>>,
    streams: u32,
    last_words: u32,
    /// Faults for the next streams, first first.
    pub faults: Vec<StreamFault>,
}

impl EmulatedStream {
    pub fn new(base: u32, specs: Vec<WindowSpec>) -> Self {
        EmulatedStream {
            base,
            specs,
            channel: false,
            armed: false,
            delivered: None,
            streams: 0,
            last_words: 0,
            faults: Vec::new(),
        }
    }

    /// The stream block's registers (`None`: not one of them).
    pub fn read(&self, offset: u32) -> Option<u32> {
        Some(match offset.checked_sub(self.base)? {
            regs::CONTROL | regs::STATUS | regs::LAST_STALLS => 0,
            regs::STREAMS => self.streams,
            regs::LAST_WORDS => self.last_words,
            // One word a clock: the emulated engine has no clock of its own.
            regs::LAST_CLOCKS => self.last_words,
            _ => return None,
        })
    }
}

impl EmulatedNic {
    /// Offers the card-to-host channel, so readouts come by stream (off by default: the
    /// register readout tests keep their path).
    pub fn enable_stream(&mut self) {
        self.stream.as_mut().expect("a device built with_per_switch has the stream block").channel = true;
    }

    /// Damages the next stream (see [`StreamFault`]).
    pub fn fault_next_stream(&mut self, f: StreamFault) {
        self.stream.as_mut().expect("a device built with_per_switch has the stream block").faults.push(f);
    }

    /// A START: the idle bank as one stream, delivered if the channel was armed.
    pub(super) fn start_stream(&mut self) {
        let Some(specs) = self.stream.as_ref().map(|s| s.specs.clone()) else { return };
        let h = StreamHeader {
            epoch: self.epoch,
            sequence: self.sequence,
            table_misses: self.per_switch.as_ref().map_or(0, |p| p.idle_misses),
            idle_packets: self.idle_packets,
        };
        let words: Vec<Vec<u32>> = specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let n = spec.widths.len();
                self.idle(i).iter().enumerate().map(|(k, &v)| v & mask(spec.widths[k % n]) as u32).collect()
            })
            .collect();
        let pairs: Vec<(&WindowSpec, &[u32])> =
            specs.iter().zip(&words).map(|(s, w)| (s, w.as_slice())).collect();
        let st = self.stream.as_mut().expect("checked above");
        let fault = (!st.faults.is_empty()).then(|| st.faults.remove(0));
        let end = if fault == Some(StreamFault::Torn) { h.sequence.wrapping_add(1) } else { h.sequence };
        let mut w = encode(&h, &pairs, end).expect("words are cut to their widths");
        st.streams = st.streams.wrapping_add(1);
        st.last_words = w.len() as u32;
        match fault {
            Some(StreamFault::FlipBit { word, bit }) => w[word] ^= 1 << bit,
            Some(StreamFault::Truncate { words }) => w.truncate(words),
            _ => {}
        }
        if st.armed {
            st.delivered = Some(w);
        }
    }
}

impl C2hChannel for EmulatedNic {
    fn arm(&mut self, _words: usize) -> Result<(), AccessError> {
        let st = self.stream.as_mut().expect("the channel is offered only with the stream block");
        st.armed = true;
        st.delivered = None;
        Ok(())
    }

    fn wait(&mut self, timeout: Duration) -> Result<Vec<u64>, AccessError> {
        let st = self.stream.as_mut().expect("the channel is offered only with the stream block");
        st.armed = false;
        st.delivered.take().ok_or(AccessError::StreamTimeout { waited: timeout, words: 0 })
    }
}
