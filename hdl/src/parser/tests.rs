//! rust-hdl-side checks of the parser; the Verilator tests against the software model are
//! in `sim-tb/tests/parser*.rs`.
use super::*;

#[test]
fn parser_generates_verilog_with_the_documented_ports() {
    let v = crate::flow::to_verilog("parser", &mut Parser::new()).unwrap();
    let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
    for port in [
        "input wire [63:0] tdata;",
        "input wire [7:0] tkeep;",
        "input wire [63:0] now;",
        "output reg [103:0] d_key;",
        "output reg [31:0] d_len;",
        "output reg [63:0] d_delay;",
        "output reg [63:0] malformed;",
    ] {
        assert!(v.contains(port), "missing `{port}`");
    }
}

/// The parser is three sub-blocks (plus the byte reversal and the hop sum), each its own
/// Verilog module.
#[test]
fn parser_verilog_has_a_module_per_sub_block() {
    let v = crate::flow::to_verilog("parser", &mut Parser::new()).unwrap();
    for sub in ["l2", "chain", "desc", "hops", "rev"] {
        assert!(v.contains(&format!("module nic_parser${sub}(")), "no module for `{sub}`");
    }
}

/// The offsets derived from the contract's field ranges are the ones the module docs
/// describe: L2 fields in frame bytes 12..27, the shim at 14, 18, 22, the step spans, and
/// the L2 slices' window offsets in beat 0 (bytes 12..14 at bit 136, 16..27 at bit 32).
#[test]
fn offsets_from_the_contract_are_the_documented_ones() {
    assert_eq!(l2::L2_FIELDS, 12..28);
    assert_eq!([l2::shim_at(0), l2::shim_at(1), l2::shim_at(2)], [14, 18, 22]);
    assert_eq!(
        [
            chain::IPV4_SPAN,
            chain::IPV6A_SPAN,
            chain::IPV6B_SPAN,
            chain::EXT_SPAN,
            chain::TCP_SPAN,
            chain::UDP_SPAN
        ],
        [19, 23, 15, 7, 12, 7]
    );
    assert_eq!(8 * WIN_BYTES, 448);
    assert_eq!((frame_at_beat0(15), frame_at_beat0(28)), (136, 32));
}

/// Ethernet + VLAN + shim (2 hops, 1000 + 65536 ns) + IPv4 (IHL 6) + UDP 5000 -> 53.
fn sample() -> Vec<u8> {
    let mut f = vec![0u8; 12];
    f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x88, 0xB5]);
    f.extend_from_slice(&[1, 0, 0x08, 0x00, 0, 2, 0, 7, 0, 0, 0x03, 0xE8, 0, 9, 0, 1, 0, 0]);
    f.extend_from_slice(&[0x46, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 1, 1, 1, 1]);
    f.extend_from_slice(&[0x13, 0x88, 0x00, 0x35, 0, 8, 0, 0]);
    f
}

/// rust-hdl's own simulation of `update`: the sample frame, then a runt, back to back;
/// descriptors `LATENCY` clocks after the last beats, the counters one clock later.
#[test]
fn rust_hdl_simulation_parses_a_frame_and_a_runt() {
    let frames = vec![sample(), vec![0xAA; 9]];
    let mut uut = Parser::new();
    uut.connect_all();
    let mut sim = Simulation::new();
    sim.add_clock(5, |x: &mut Box<Parser>| x.clock.next = !x.clock.val());
    sim.add_testbench(move |mut sim: Sim<Parser>| {
        let mut x = sim.init()?;
        x.reset.next = true;
        wait_clock_cycles!(sim, clock, x, 2);
        x.reset.next = false;
        // (tdata, tkeep, tlast) per clock: both frames, then idle clocks.
        let mut beats = Vec::new();
        for f in &frames {
            let n = f.len().div_ceil(8);
            for b in 0..n {
                let chunk = &f[8 * b..f.len().min(8 * b + 8)];
                let mut w = [0u8; 8];
                w[..chunk.len()].copy_from_slice(chunk);
                beats.push(Some((u64::from_le_bytes(w), (1u64 << chunk.len()) - 1, b + 1 == n)));
            }
        }
        beats.extend([None; 4]);
        let mut seen = Vec::new();
        for (now, beat) in (100u64..).zip(beats) {
            if let Some((data, keep, last)) = beat {
                x.tdata.next = data.to_bits();
                x.tkeep.next = keep.to_bits();
                x.tlast.next = last;
            }
            x.tvalid.next = beat.is_some();
            x.now.next = now.to_bits();
            wait_clock_cycle!(sim, clock, x);
            sim_assert!(sim, x.tready.val(), x);
            if x.d_valid.val() {
                seen.push((
                    x.d_class.val().to_u64() as u8,
                    x.d_len.val().to_u64() as usize,
                    x.d_ts.val().to_u64() as usize,
                    x.d_delay.val().to_u64() as usize,
                    x.d_key.val().get_bits::<64>(40).to_u64() as usize,
                ));
            }
        }
        sim_assert_eq!(sim, seen.len(), 2, x);
        // 10.0.0.1 -> 10.0.0.2, ports 5000 -> 53: key bits 103:40.
        sim_assert_eq!(
            sim,
            seen[0],
            (CLASS_IP, 68usize, 100usize, 66536usize, 0x0a00_0001_0a00_0002usize),
            x
        );
        sim_assert_eq!(sim, seen[1], (CLASS_MALFORMED, 9usize, 109usize, 0usize, 0usize), x);
        sim_assert_eq!(sim, x.frames.val().to_u64(), 2, x);
        sim_assert_eq!(sim, x.ip_packets.val().to_u64(), 1, x);
        sim_assert_eq!(sim, x.malformed.val().to_u64(), 1, x);
        sim.done(x)
    });
    sim.run(Box::new(uut), 10_000).unwrap();
}
