//! `smartnic sketch run|query` through the binary: snapshots equal library runs over the
//! same packets, epochs partition the trace, and mistakes get clear errors.

use smartnic::sketch::per_switch::{PerSwitch, PerSwitchConfig};
use smartnic::sketch::per_switch_worker::SPILL_RECORDS;
use smartnic::sketch::snapshot::{per_switch_sections, to_section};
use smartnic::sketch::SketchKind;
use smartnic::trace::{generate_files, GenConfig, Packet, PacketReader, ShimConfig};
use smartnic_contract::geometry::InsertMode;
use smartnic_driver::snapshot::Snapshot;
use std::path::Path;
use std::process::Command;

fn smartnic(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_smartnic")).args(args).output().expect("binary runs")
}

fn trace(dir: &Path, packets: u64) -> (String, Vec<Packet>) {
    let cfg =
        GenConfig { seed: 9, packets, flows: 400, shim: Some(ShimConfig::default()), ..GenConfig::default() };
    let pcap = dir.join("t.pcap");
    generate_files(&cfg, &pcap, &dir.join("t.json"), None).unwrap();
    let mut r = PacketReader::open(&pcap).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        v.push(p);
    }
    (pcap.display().to_string(), v)
}

/// The sections a library run of the NIC pair produces over `packets`.
fn library_sections(packets: &[Packet]) -> Vec<smartnic_driver::snapshot::Section> {
    let mut sk: Vec<_> =
        [SketchKind::TowerAcu, SketchKind::Sumax].iter().map(|k| k.build_nic().unwrap()).collect();
    for p in packets {
        sk.iter_mut().for_each(|s| s.insert(p));
    }
    sk.iter().map(|s| to_section(s).unwrap()).collect()
}

/// The same counters wherever the parsing runs: on a thread of its own (three threads
/// report their time) or inline on the main thread (two).
#[test]
fn run_writes_the_library_counters() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 20_000);
    let want = library_sections(&packets);
    for (parser, threads) in [
        ("thread", &["parser", "sketches", "per-switch"][..]),
        ("inline", &["parser+sketches", "per-switch"][..]),
    ] {
        let snap = dir.path().join(format!("{parser}.snap"));
        let out = smartnic(&[
            "sketch",
            "run",
            "--trace",
            &pcap,
            "-o",
            snap.to_str().unwrap(),
            "--parser",
            parser,
            "--json",
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["packets"], 20_000);
        // Each thread's CPU time (told on Linux) and time blocked, within the run's.
        let stages = report["stages"].as_array().expect("stages");
        let names: Vec<_> = stages.iter().map(|s| s["stage"].as_str().unwrap()).collect();
        assert_eq!(names, threads, "{report}");
        let wall = report["seconds"].as_f64().unwrap();
        for s in stages {
            let (cpu, waited) =
                (s["cpu_s"].as_f64().expect("CPU time on Linux"), s["waited_s"].as_f64().unwrap());
            assert!(cpu > 0.0 && (0.0..=wall).contains(&waited), "{s} in {wall} s");
        }
        let s = Snapshot::read_file(&snap).unwrap();
        assert_eq!(s.packets, 20_000);
        assert_eq!(s.sections, want, "--parser {parser}");
    }
}

#[test]
fn epochs_partition_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 7_500);
    let out_dir = dir.path().join("epochs");
    let out = smartnic(&[
        "sketch",
        "run",
        "--trace",
        &pcap,
        "--epoch-packets",
        "2000",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (mut total, mut records) = (0, 0);
    for (e, chunk) in packets.chunks(2000).enumerate() {
        let s = Snapshot::read_file(&out_dir.join(format!("epoch-{e:06}.snap"))).unwrap();
        assert_eq!((s.epoch, s.packets), (e as u64, chunk.len() as u64));
        assert_eq!(s.sections, library_sections(chunk), "epoch {e}");
        // The per-switch half (run on its own thread) is the model's over the epoch.
        let half =
            PerSwitch::of_epoch(PerSwitchConfig::nic_default(), InsertMode::Acu, e as u32, chunk).unwrap();
        assert_eq!(s.per_switch, per_switch_sections(&half, half.records()), "epoch {e}");
        total += s.packets;
        records += half.records().len();
    }
    assert_eq!(total, 7_500);
    assert!(records > 0, "no inflated-latency record: the per-switch check proves too little");
    assert!(!out_dir.join("epoch-000004.snap").exists());
}

/// Records enough to be spilled to a file during the run (more than
/// `SPILL_RECORDS` in an epoch) make the snapshot the model's, in a run of one epoch and
/// in a run of two, and no spill file is left beside them.
#[test]
fn spilled_records_make_the_models_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 36_000);
    let config = PerSwitchConfig { inflate_ratio_x256: 256, ..PerSwitchConfig::nic_default() };
    for epoch_packets in [None, Some(18_000)] {
        let out_dir = dir.path().join(format!("out-{epoch_packets:?}"));
        std::fs::create_dir(&out_dir).unwrap();
        let mut args = vec!["sketch", "run", "--trace", &pcap, "--inflate-ratio", "1"];
        let n = epoch_packets.map(|n: usize| n.to_string());
        let output = match &n {
            Some(n) => {
                args.extend(["--epoch-packets", n]);
                out_dir.join("epochs")
            }
            None => out_dir.join("one.snap"),
        };
        args.extend(["-o", output.to_str().unwrap()]);
        let out = smartnic(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for (e, chunk) in packets.chunks(epoch_packets.unwrap_or(packets.len())).enumerate() {
            let path = match epoch_packets {
                Some(_) => output.join(format!("epoch-{e:06}.snap")),
                None => output.clone(),
            };
            let half = PerSwitch::of_epoch(config.clone(), InsertMode::Acu, e as u32, chunk).unwrap();
            assert!(half.records().len() > SPILL_RECORDS, "epoch {e}: {} records", half.records().len());
            let s = Snapshot::read_file(&path).unwrap();
            assert_eq!(
                s.per_switch,
                per_switch_sections(&half, half.records()),
                "{epoch_packets:?} epoch {e}"
            );
        }
        let left = walk(&out_dir);
        let want = if epoch_packets.is_some() { 3 } else { 1 };
        assert_eq!(left.len(), want, "the snapshots (and the manifest), nothing else: {left:?}");
        assert!(left.iter().all(|f| f.ends_with(".snap") || f.ends_with("manifest.json")), "{left:?}");
    }
}

/// The name of every file under `dir`.
fn walk(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flat_map(|e| {
            let e = e.unwrap();
            match e.path().is_dir() {
                true => walk(&e.path()),
                false => vec![e.file_name().to_string_lossy().into_owned()],
            }
        })
        .collect()
}

#[test]
fn query_reports_the_flow() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 5_000);
    let snap = dir.path().join("q.snap");
    let snap = snap.to_str().unwrap();
    assert!(smartnic(&["sketch", "run", "--trace", &pcap, "-o", snap]).status.success());
    let flow = packets[0].key;
    let truth = packets.iter().filter(|p| p.key == flow).count() as u64;
    let out = smartnic(&["sketch", "query", snap, "--flow", &flow.to_string(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let answers = &report["sketches"];
    for a in answers.as_array().unwrap() {
        assert!(a["packets"].as_u64().unwrap() >= truth, "{a}");
    }
    assert_eq!(answers[1]["sketch"], "sumax");
    assert_eq!(report["flow"], flow.to_string());
}

/// The heaviest flow at the switches of its path: its table path without `--switch`, and
/// per switch its hop count and average latency from the latency tower.
#[test]
fn query_shows_a_flow_per_switch() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, packets) = trace(dir.path(), 12_000);
    let snap = dir.path().join("q.snap");
    let snap = snap.to_str().unwrap();
    assert!(smartnic(&["sketch", "run", "--trace", &pcap, "-o", snap]).status.success());
    let mut sizes = std::collections::HashMap::new();
    for p in &packets {
        *sizes.entry(p.key).or_insert(0u64) += 1;
    }
    let (&flow, &n) = sizes.iter().max_by_key(|(k, &n)| (n, **k)).unwrap();
    let mine: Vec<&Packet> = packets.iter().filter(|p| p.key == flow).collect();
    let path: Vec<u16> = mine[0].hops.iter().map(|h| h.switch_id).collect();
    assert!(n > 750 && !path.is_empty(), "the trace needs a flow above the table threshold with a path");
    let query = |extra: &[&str]| -> serde_json::Value {
        let out = smartnic(
            &[&["snapshot", "query", snap, "--flow", &flow.to_string(), "--json"][..], extra].concat(),
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let r = query(&[]);
    let ps = &r["per_switch"];
    assert_eq!(ps["table_path"], serde_json::json!(path), "{ps}");
    let first = &ps["switches"][0];
    assert_eq!(first["switch_id"], path[0]);
    assert_eq!(first["hops"], n, "hops of the heaviest flow at its first switch");
    let ns: u64 = mine.iter().map(|p| p.hops[0].latency_ns as u64).sum();
    let avg = first["avg_latency_ns"].as_f64().unwrap();
    assert!(
        (avg - ns as f64 / n as f64).abs() <= 8.0,
        "average {avg} ns against {} ns",
        ns as f64 / n as f64
    );
    // --switch replaces the path: an unrelated switch shows no hops.
    let other = query(&["--switch", "65000"]);
    assert_eq!(other["per_switch"]["switches"][0]["hops"], 0, "{other}");
    let text = smartnic(&["snapshot", "query", snap, "--flow", &flow.to_string()]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("path (flow-key table)"));
}

#[test]
fn mistakes_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = smartnic(&["sketch", "run", "--trace", "/nonexistent.pcap", "-o", "/tmp/x.snap"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent.pcap"));
    let (pcap, _) = trace(dir.path(), 1_000);
    let out = dir.path().join("x.snap");
    let out = out.to_str().unwrap();
    let elastic =
        smartnic(&["sketch", "run", "--trace", &pcap, "--sketch", "elastic", "--memory", "64KB", "-o", out]);
    assert_eq!(elastic.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&elastic.stderr).contains("smartnic sketch eval"));
    let no_size = smartnic(&["sketch", "run", "--trace", &pcap, "--sketch", "cm", "-o", out]);
    assert!(String::from_utf8_lossy(&no_size.stderr).contains("--memory"));
    let bad_flow = smartnic(&["sketch", "query", out, "--flow", "nonsense"]);
    assert_eq!(bad_flow.status.code(), Some(2));
    std::fs::write(dir.path().join("bad.snap"), b"SNICSNAP garbage").unwrap();
    let bad = dir.path().join("bad.snap");
    let corrupt = smartnic(&["sketch", "query", bad.to_str().unwrap(), "--flow", "1.2.3.4:1>5.6.7.8:2/6"]);
    assert_eq!(corrupt.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&corrupt.stderr).is_empty());
}

/// A software snapshot holding `sections` (epoch 0, 1000 packets).
fn snapshot_file(path: &Path, sections: Vec<smartnic_driver::snapshot::Section>) {
    let snap = Snapshot {
        source: smartnic_contract::snapshot::source::SOFTWARE,
        epoch: 0,
        time_ns: 0,
        firmware: Default::default(),
        packets: 1000,
        sections,
        per_switch: Vec::new(),
    };
    snap.write_file(path).unwrap();
}

#[test]
fn diff_compares_what_the_counters_mean() {
    use smartnic_contract::geometry::InsertMode;
    use smartnic_driver::snapshot::Section;
    let dir = tempfile::tempdir().unwrap();
    let (_, packets) = trace(dir.path(), 1_000);
    let acu = library_sections(&packets);
    let p = |n: &str| dir.path().join(n).display().to_string();
    snapshot_file(Path::new(&p("acu.snap")), acu.clone());
    snapshot_file(Path::new(&p("same.snap")), acu.clone());
    let same = smartnic(&["sketch", "diff", &p("acu.snap"), &p("same.snap")]);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));

    // The same counter bytes under the CM label, and a SuMax with another time unit.
    let mut other = acu.clone();
    let Section::Tower { mode, .. } = &mut other[0] else { panic!("tower first") };
    *mode = InsertMode::Cm;
    let Section::SuMax { geometry, .. } = &mut other[1] else { panic!("sumax second") };
    geometry.time_shift += 1;
    snapshot_file(Path::new(&p("cm.snap")), other);
    let out = smartnic(&["sketch", "diff", &p("acu.snap"), &p("cm.snap")]);
    assert_eq!(out.status.code(), Some(1), "an ACU and a CM snapshot are not equal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("insertion mode: acu vs cm"), "{text}");
    assert!(text.contains("time shift: 10 vs 11"), "{text}");
    assert!(!text.contains("equal, counter for counter"), "{text}");
    let json = smartnic(&["sketch", "diff", &p("acu.snap"), &p("cm.snap"), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v[0]["equal"], false);
    assert_eq!(v[0]["differing_bytes"], 0);
    assert_eq!(v[1]["equal"], false);
}

/// A pcap of frames without a single IP packet: two ARP frames, a runt and an empty record.
fn ip_free_trace(path: &Path) {
    use smartnic::trace::frame::{ETHERTYPE_ARP, LINKTYPE_ETHERNET};
    use smartnic::trace::pcap::PcapWriter;
    let mut arp = vec![0xFFu8; 12];
    arp.extend_from_slice(&ETHERTYPE_ARP.to_be_bytes());
    arp.resize(60, 0);
    let mut w = PcapWriter::new(Vec::new(), 65535, LINKTYPE_ETHERNET).unwrap();
    for (ts, frame) in [(1_000, &arp[..]), (2_000, &arp[..8]), (3_000, &arp[..]), (4_000, &[][..])] {
        w.write(ts, frame.len() as u32, frame).unwrap();
    }
    std::fs::write(path, w.into_inner().unwrap()).unwrap();
}

#[test]
fn run_and_eval_agree_on_a_trace_without_ip_packets() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("arp.pcap");
    ip_free_trace(&pcap);
    let pcap = pcap.to_str().unwrap();
    let out_dir = dir.path().join("epochs");
    let out_dir = out_dir.to_str().unwrap();
    let run = smartnic(&["sketch", "run", "--trace", pcap, "--epoch-packets", "10", "-o", out_dir, "--json"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let r: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        (r["packets"].as_u64(), r["non_ip"].as_u64(), r["malformed"].as_u64()),
        (Some(0), Some(2), Some(2))
    );
    let s = Snapshot::read_file(&Path::new(out_dir).join("epoch-000000.snap")).unwrap();
    assert_eq!((s.epoch, s.packets), (0, 0));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(Path::new(out_dir).join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["complete"], true);
    assert_eq!(m["epochs"].as_array().unwrap().len(), 1);

    let eval = smartnic(&["eval", "--trace", pcap, "--sketch", "cm", "--memory", "10KB", "--json"]);
    assert!(eval.status.success(), "eval on an IP-free trace: {}", String::from_utf8_lossy(&eval.stderr));
    let e: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!((e["packets"].as_u64(), e["flows"].as_u64()), (Some(0), Some(0)));
    assert_eq!((e["non_ip"].as_u64(), e["malformed"].as_u64()), (Some(2), Some(2)));
    assert_eq!(e["rows"].as_array().map(Vec::len), Some(0));
    let text = smartnic(&["eval", "--trace", pcap, "--sketch", "cm", "--memory", "10KB"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("nothing to score"));
}

#[test]
fn run_and_eval_read_21_byte_records() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = GenConfig { seed: 5, packets: 3_000, flows: 300, ..GenConfig::default() };
    let records = dir.path().join("t.dat");
    generate_files(&cfg, &dir.path().join("t.pcap"), &dir.path().join("t.json"), Some(&records)).unwrap();
    let mut r = PacketReader::open_as(&records, smartnic::trace::Format::Records).unwrap();
    let mut packets = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        packets.push(p);
    }
    assert_eq!(packets.len(), 3_000);
    let (records, snap) = (records.to_str().unwrap(), dir.path().join("r.snap"));
    let snap_s = snap.to_str().unwrap();

    // Without the flag the error names the flag, and the flag is accepted.
    let plain = smartnic(&["sketch", "run", "--trace", records, "-o", snap_s]);
    assert_eq!(plain.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&plain.stderr).contains("--format records"));
    let run = smartnic(&["sketch", "run", "--trace", records, "--format", "records", "-o", snap_s]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let s = Snapshot::read_file(&snap).unwrap();
    assert_eq!(s.packets, 3_000);
    assert_eq!(s.sections, library_sections(&packets));

    let eval = smartnic(&[
        "eval",
        "--trace",
        records,
        "--format",
        "records",
        "--truth",
        dir.path().join("t.json").to_str().unwrap(),
        "--sketch",
        "cm",
        "--memory",
        "20KB",
        "--tasks",
        "size",
        "--json",
    ]);
    assert!(eval.status.success(), "{}", String::from_utf8_lossy(&eval.stderr));
    let e: serde_json::Value = serde_json::from_slice(&eval.stdout).unwrap();
    assert_eq!(e["packets"], 3_000);
    assert_eq!(e["rows"].as_array().map(Vec::len), Some(1));
}

#[test]
fn only_a_complete_epoch_run_leaves_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (pcap, _) = trace(dir.path(), 5_000);
    let out_dir = dir.path().join("epochs");
    let run = |trace: &str, out: &Path| {
        smartnic(&["sketch", "run", "--trace", trace, "--epoch-packets", "1000", "-o", out.to_str().unwrap()])
    };
    let good = run(&pcap, &out_dir);
    assert!(good.status.success(), "{}", String::from_utf8_lossy(&good.stderr));
    let manifest = out_dir.join("manifest.json");
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(m["complete"], true);
    assert_eq!((m["packets"].as_u64(), m["epoch_packets"].as_u64()), (Some(5_000), Some(1_000)));
    let epochs = m["epochs"].as_array().unwrap();
    assert_eq!(epochs.len(), 5);
    for (e, entry) in epochs.iter().enumerate() {
        assert_eq!(entry["file"], format!("epoch-{e:06}.snap"));
        assert_eq!(entry["packets"], 1_000);
        assert!(out_dir.join(entry["file"].as_str().unwrap()).exists());
    }
    assert!(!out_dir.join("manifest.json.partial").exists());

    // The same trace cut in the middle of its records: the epochs before the cut are
    // written, the run fails, and no manifest says the set is whole.
    let bytes = std::fs::read(&pcap).unwrap();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 7 / 10 + 3]).unwrap();
    let cut = cut.to_str().unwrap();
    let fresh = dir.path().join("fresh");
    let bad = run(cut, &fresh);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("truncated"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(fresh.join("epoch-000002.snap").exists());
    assert!(!fresh.join("manifest.json").exists(), "a failed run left a manifest");
    // Nor does the manifest of an earlier, complete run in the same directory survive.
    assert_eq!(run(cut, &out_dir).status.code(), Some(1));
    assert!(!manifest.exists(), "a failed run kept the previous run's manifest");
}
