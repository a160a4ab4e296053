//! Fuzzing the generated parser: 100k frames of random bytes (lengths 1..=1600, random
//! tuser), back to back with zero gaps. It never stalls (tready high, one descriptor per
//! frame in the row of its last beat), agrees with the software model on every frame, and
//! the counters explain every frame.
mod parser_util;

use parser_util::{Frame, Harness, Rng};
use std::time::Instant;

#[test]
fn random_bytes_never_stall_and_counters_explain_every_frame() {
    let mut h = Harness::new();
    let mut r = Rng(11);
    let mut none = Rng(0);
    let start = Instant::now();
    let mut total = 0;
    while total < 100_000 {
        let frames: Vec<Frame> = (0..2000)
            .map(|_| {
                let len = 1 + r.below(1600) as usize;
                let mut data = r.bytes(len);
                // Now and then a plausible EtherType so the fuzz also reaches deeper layers.
                if len >= 14 && r.chance(0.3) {
                    let et = [0x0800u16, 0x86DD, 0x8100, 0x88B5][r.below(4) as usize];
                    data[12..14].copy_from_slice(&et.to_be_bytes());
                }
                let mut f = Frame::new(data);
                f.tuser = r.chance(0.05);
                f
            })
            .collect();
        total += frames.len();
        h.run(&frames, 0.0, &mut none);
    }
    h.check_counters();
    let t = h.tally;
    eprintln!("fuzz: {t:?} in {:.1} s", start.elapsed().as_secs_f64());
    assert_eq!(t.frames, total as u64);
    assert_eq!(t.cycles, t.beats);
}
