//! The long soak of the whole core, run by `scripts/soak` (never by `cargo test`): the
//! acceptance traces of `tests/core.rs` and `tests/core_adversarial.rs` (adversarial, Zipf,
//! the network lab's capture) at sizes too long for the suite, through the same harness
//! (`core_check`: the driver reads every epoch under traffic, by the readout stream and, in
//! the adversarial and Zipf runs, every fifth readout through registers, the MMIO fallback;
//! every tower counter and SuMax cell is compared with the software sketches fed the
//! epoch's packets, the statistics explain every frame). It prints one summary line per
//! run; those figures go into the issue notes.
//!
//! ```sh
//! cargo run --release -p smartnic-sim-tb --example soak -- [PACKETS]   # default 10,000,000
//! ```
// `core_check` allows its own dead code (each test uses part of it).
#[path = "../tests/core_check/mod.rs"]
mod core_check;

use core_check::{generated_trace, lab_capture, CoreRun, Plan};
use smartnic_contract::geometry::InsertMode;
use smartnic_sim_tb::frames::Adversarial;

/// Packets per generated chunk of the Zipf trace (bounds the memory of the frames).
const CHUNK: u64 = 1_000_000;

fn main() {
    let packets: u64 = match std::env::args().nth(1) {
        None => 10_000_000,
        Some(a) => a.replace('_', "").parse().unwrap_or_else(|_| {
            eprintln!("soak: PACKETS must be a number, got `{a}`");
            std::process::exit(2)
        }),
    };
    let plan = Plan { every: 95_000, swap_burst: 2_000, readout_gap: 600, snapshots: None };
    for mode in [InsertMode::Cm, InsertMode::Acu] {
        // Adversarial back to back: every packet repeats a flow 1..16 packets back.
        let mut run = CoreRun::new(mode);
        run.register_every = Some(5);
        let mut src = Adversarial::new(0x50a4 ^ mode as u64, 8);
        run.feed(&mut src.by_ref().take(packets as usize), plan);
        let s = run.finish(&format!("soak adversarial {mode:?}"), plan);
        assert_eq!(s.packets, packets);
    }
    // The generated Zipf trace (shim, IPv6, VLAN, ARP), generated lazily in chunks of
    // distinct seeds; CM for about half the epochs, then ACU.
    let chunks = packets.div_ceil(CHUNK);
    let mut frames =
        (0..chunks).flat_map(|c| generated_trace(0x50a4 + c, CHUNK.min(packets - c * CHUNK)).into_iter());
    let mut run = CoreRun::new(InsertMode::Cm);
    run.register_every = Some(5);
    let half = (packets / 2 / plan.every).max(1) as usize;
    run.feed(&mut frames, Plan { snapshots: Some(half), ..plan });
    run.switch_mode(InsertMode::Acu, plan);
    run.feed(&mut frames, plan);
    let s = run.finish("soak zipf", plan);
    assert_eq!(s.packets, packets);
    // The network lab's traffic (5-hop inter-pod paths, a congested uplink), as the suite's
    // lab capture: PACKETS sent, about two thirds of them delivered; CM for two epochs, then
    // ACU.
    let (delivered, inflated) = lab_capture(packets, plan.every);
    println!("soak lab: {delivered} packets delivered of {packets} sent, {inflated} inflated hops");
}
