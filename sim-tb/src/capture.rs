//! A hop capture (`hdl::per_switch::hop_capture`) as its own model, for the tests of blocks
//! that take its `rec` (the hop serializer, the per-switch half): they run it in lockstep,
//! beats and descriptors into the capture, its `rec` into their `d_rec` in the same clock,
//! exactly as the core wires the two.
use crate::{Model, PortId};
use smartnic_hdl::flow;
use smartnic_hdl::per_switch::hop_capture::HopCapture;

/// The capture's model and its ports.
pub struct CaptureModel {
    pub m: Model,
    tdata: PortId,
    tvalid: PortId,
    tlast: PortId,
    d_valid: PortId,
    d_sc: PortId,
    rec: PortId,
}

impl CaptureModel {
    /// Generates and builds the capture (cached like every model), held in reset one clock.
    pub fn new() -> Result<Self, String> {
        let v = flow::to_verilog("hop_capture", &mut HopCapture::default())?;
        let m = Model::of_verilog("hop_capture", &v)?;
        let mut c = CaptureModel {
            tdata: m.port("tdata"),
            tvalid: m.port("tvalid"),
            tlast: m.port("tlast"),
            d_valid: m.port("d_valid"),
            d_sc: m.port("d_sc"),
            rec: m.port("rec"),
            m,
        };
        c.idle();
        c.m.set_by_name("reset", 1);
        c.m.tick();
        c.m.set_by_name("reset", 0);
        Ok(c)
    }

    /// This clock's beat: up to 8 bytes of a frame (`tdata[7:0]` first), or none.
    pub fn beat(&mut self, bytes: Option<(&[u8], bool)>) {
        match bytes {
            Some((chunk, last)) => {
                let mut w = [0u8; 8];
                w[..chunk.len()].copy_from_slice(chunk);
                self.m.set(self.tdata, u64::from_le_bytes(w) as u128);
                self.m.set(self.tvalid, 1);
                self.m.set(self.tlast, last as u128);
            }
            None => {
                self.m.set(self.tvalid, 0);
                self.m.set(self.tlast, 0);
            }
        }
    }

    /// This clock's descriptor, if any, with its shim position code; returns the record
    /// the capture gives for it (as 32-bit words, low first), to set on `d_rec`.
    pub fn descriptor(&mut self, sc: Option<u8>) -> Vec<u32> {
        self.m.set(self.d_valid, sc.is_some() as u128);
        self.m.set(self.d_sc, sc.unwrap_or(0) as u128);
        self.m.eval();
        self.m.get_words(self.rec).to_vec()
    }

    /// No beat and no descriptor.
    pub fn idle(&mut self) {
        self.beat(None);
        self.m.set(self.d_valid, 0);
    }

    pub fn tick(&mut self) {
        self.m.tick();
    }
}
