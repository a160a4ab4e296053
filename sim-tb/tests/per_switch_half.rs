//! The per-switch half composed (`hdl::per_switch::half`: serializer -> latency tower ->
//! inflated-latency check -> record buffer), behind a hop capture run in lockstep as the
//! core wires it (`smartnic_sim_tb::capture`), under Verilator against the software model of
//! the NIC's half (`host::sketch::per_switch::PerSwitch`), on network-lab traffic: the
//! demo's k = 4 fat-tree with its 1 Gb/s uplink, at half load, so queues build and
//! latencies inflate. Frames go back to back
//! (their headers: the half reads no payload), each descriptor two clocks after its last
//! beat as the parser gives it. Every inflated-latency record read from the buffer must
//! equal the model's, in order, and every bucket of the latency tower's bank must equal the
//! model's.
use smartnic::lab::{LabConfig, Sink};
use smartnic::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use smartnic::trace::frame::{parse_frame, FrameClass, LINKTYPE_ETHERNET};
use smartnic::trace::Packet;
use smartnic_contract::geometry::InsertMode;
use smartnic_contract::lut::{log2_table, Log2Params};
use smartnic_contract::per_switch::InflateRule;
use smartnic_contract::shim::ETHERTYPE_SHIM;
use smartnic_contract::wire::record::{from_words, parse_stream, Record};
use smartnic_contract::wire::vlan::walk_l2;
use smartnic_hdl::core_top::big_stack;
use smartnic_hdl::flow;
use smartnic_hdl::per_switch::half::PerSwitchHalf;
use smartnic_sim_tb::capture::CaptureModel;
use smartnic_sim_tb::Model;
use std::collections::VecDeque;

const DESC_DELAY: u64 = 2;
const EPOCH: u32 = 7;

/// The headers of every frame the hosts received, in delivery order, padded to 60 bytes.
struct Headers(Vec<Vec<u8>>);

impl Sink for Headers {
    fn deliver(&mut self, _: usize, _: u64, headers: &[u8], _: u32) -> std::io::Result<()> {
        let mut h = headers.to_vec();
        if h.len() < 60 {
            h.resize(60, 0);
        }
        self.0.push(h);
        Ok(())
    }
}

/// A frame and its descriptor: its bytes, and for an IP frame its packet (key and hops) and
/// shim position code.
type Frame = (Vec<u8>, Option<(Packet, u8)>);

fn frames() -> Vec<Frame> {
    let t = smartnic::demo::topology().unwrap();
    let mut cfg = LabConfig::default();
    cfg.workload.max_packets = Some(30_000);
    cfg.workload.load = 0.5;
    cfg.workload.seed = 5;
    let mut sink = Headers(Vec::new());
    smartnic::lab::run(&t, &cfg, &mut sink).unwrap();
    sink.0
        .into_iter()
        .map(|b| {
            let d = match (parse_frame(LINKTYPE_ETHERNET, &b), walk_l2(&b)) {
                (FrameClass::Ip { key, hops }, Ok(l2)) => {
                    let sc = if l2.ethertype == ETHERTYPE_SHIM { l2.tags as u8 } else { 0 };
                    Some((Packet { ts_ns: 0, wire_len: b.len() as u32, key, hops: hops.into() }, sc))
                }
                _ => None,
            };
            (b, d)
        })
        .collect()
}

#[test]
fn the_composed_half_is_the_model_on_lab_traffic() {
    let frames = frames();
    // Built and generated on a big stack: the half is more than a test thread's 2 MB holds.
    let v = big_stack(|| flow::to_verilog("per_switch_half", &mut PerSwitchHalf::new().unwrap())).unwrap();
    let mut m = Model::of_verilog("per_switch_half", &v).unwrap_or_else(|e| panic!("{e}"));
    let p = |m: &Model, n: &str| m.port(n);
    let mut cap = CaptureModel::new().unwrap_or_else(|e| panic!("{e}"));
    let (d_valid, d_ip, d_hops, d_rec, d_key) =
        (p(&m, "d_valid"), p(&m, "d_ip"), p(&m, "d_hops"), p(&m, "d_rec"), p(&m, "d_key"));
    let (pop, head, head_valid, idle) = (p(&m, "pop"), p(&m, "head"), p(&m, "head_valid"), p(&m, "idle"));
    let l2 = Log2Params::DEFAULT;
    let rule = InflateRule::from_ratio_x256(&log2_table(l2), l2, InflateRule::SKETCHINT_RATIO_X256);
    m.set_by_name("reset", 1);
    m.tick();
    m.set_by_name("reset", 0);
    m.set_by_name("mode", 1);
    m.set_by_name("threshold", rule.threshold as u128);
    m.set_by_name("d_bank", 0);
    m.set_by_name("d_epoch", EPOCH as u128);
    let mut cfg = PerSwitchConfig::nic_default();
    cfg.mode = InsertMode::Acu;
    let mut model = PerSwitch::new(cfg).unwrap();

    let mut desc: VecDeque<(u64, usize)> = VecDeque::new();
    let mut words: Vec<u32> = Vec::new();
    let (mut clock, mut hops) = (0u64, 0u64);
    let beats: Vec<(usize, usize)> = frames
        .iter()
        .enumerate()
        .flat_map(|(f, (b, _))| (0..b.len().div_ceil(8)).map(move |i| (f, i)))
        .collect();
    let mut beat = beats.iter();
    loop {
        let cur = beat.next();
        match cur {
            Some(&(f, i)) => {
                let b = &frames[f].0;
                let chunk = &b[8 * i..b.len().min(8 * i + 8)];
                let last = 8 * i + 8 >= b.len();
                cap.beat(Some((chunk, last)));
                if last {
                    desc.push_back((clock + DESC_DELAY, f));
                }
            }
            None => cap.beat(None),
        }
        match desc.front() {
            Some(&(at, f)) if at == clock => {
                desc.pop_front();
                m.set(d_valid, 1);
                let sc = frames[f].1.as_ref().map_or(0, |(_, sc)| *sc);
                m.set_words(d_rec, &cap.descriptor(Some(sc)));
                match &frames[f].1 {
                    Some((pk, _)) => {
                        m.set(d_ip, 1);
                        m.set(d_hops, pk.hops.len() as u128);
                        m.set(d_key, smartnic_hdl::hash::key_to_u128(pk.key.as_bytes()));
                        model.observe(EPOCH, pk, 0);
                        hops += pk.hops.len() as u64;
                    }
                    None => {
                        m.set(d_ip, 0);
                        m.set(d_hops, 0);
                    }
                }
            }
            _ => {
                cap.descriptor(None);
                m.set(d_valid, 0);
            }
        }
        m.eval();
        let hv = m.get(head_valid) == 1;
        if hv {
            words.push(m.get(head) as u32);
        }
        m.set(pop, hv as u128);
        m.tick();
        cap.tick();
        clock += 1;
        if cur.is_none()
            && desc.is_empty()
            && m.get(idle) == 1
            && m.get(head_valid) == 0
            && m.get_by_name("words") == 0
        {
            break;
        }
    }
    assert_eq!(m.get_by_name("dropped"), 0, "the buffer never filled");
    assert_eq!(m.get_by_name("lost"), 0, "no record was refused");
    let bytes = from_words(&words);
    let (records, err) = parse_stream(&bytes);
    assert!(err.is_none(), "{err:?}");
    let want: Vec<Record> = model.records().iter().map(|r| Record::Inflated(*r)).collect();
    assert!(want.len() > 100, "the lab's queues inflate latencies ({} records)", want.len());
    assert_eq!(records.len(), want.len(), "records");
    for (i, (g, w)) in records.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "record {i}");
    }
    // Every bucket of bank 0.
    m.set_by_name("rd_bank", 0);
    let g = model.latency.geometry().clone();
    let mut buckets = 0u64;
    for (a, arr) in g.arrays.iter().enumerate() {
        let (addr, count, sum) =
            (p(&m, &format!("rd_addr{a}")), p(&m, &format!("rd_count{a}")), p(&m, &format!("rd_sum{a}")));
        for i in 0..arr.depth {
            m.set(addr, i as u128);
            m.tick();
            m.tick();
            m.eval();
            let got = (m.get(count) as u32, m.get(sum) as u32);
            assert_eq!(got, model.latency.bucket(a, i), "array {a} bucket {i}");
            buckets += 1;
        }
    }
    eprintln!(
        "{} frames, {hops} hops, {} inflated records, {buckets} buckets equal, {clock} clocks",
        frames.len(),
        want.len()
    );
}
