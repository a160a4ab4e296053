//! Every example the CLI shows, in one table: each command's `--help` ends with its page,
//! `smartnic --help` and the README's CLI section list the overview lines, and a test parses
//! every line with the real grammar, so an example cannot describe a command that is gone.
//!
//! Adding a command: add its page here (the path is the noun and verb as typed).

use super::manifest;

/// One example command line.
pub struct Example {
    /// What follows `smartnic ` on the command line, shell-quoted as typed.
    pub line: &'static str,
    /// What the line does; may be empty.
    pub note: &'static str,
    /// Also listed by `smartnic --help` and in the README.
    pub overview: bool,
}

/// The examples and closing text of one command's `--help`.
pub struct Page {
    /// Noun and verb, e.g. `["snapshot", "report"]`.
    pub path: &'static [&'static str],
    pub examples: &'static [Example],
    /// Printed after the examples; may be empty.
    pub text: &'static str,
}

const fn ex(line: &'static str, note: &'static str) -> Example {
    Example { line, note, overview: false }
}

/// An example that also goes into the overview (`smartnic --help`, README).
const fn top(line: &'static str, note: &'static str) -> Example {
    Example { line, note, overview: true }
}

/// Every command's examples, in the order `smartnic --help` lists the overview.
pub const PAGES: &[Page] = &[
    Page {
        path: &["demo"],
        examples: &[
            top("demo", "a fat-tree with a blackhole and a congested link; every host's simulated NIC; report"),
            ex("demo --software", "the software pipeline only (no simulator needed)"),
            ex("demo --hosts 4 --packets 20000", "a shorter run: 20,000 packets, the NICs of the 4 busiest hosts simulated"),
        ],
        text: "Exit status 1 when the NIC's counters differ from the model's.",
    },
    Page {
        path: &["trace", "gen"],
        examples: &[
            top(
                "trace gen -o t.pcap --shim",
                "seeded trace with INT stacks; exact truth in t.pcap.truth.json",
            ),
            ex("trace gen -o t.pcap", "100k packets over 10k Zipf(1.0) flows; truth in t.pcap.truth.json"),
            ex(
                "trace gen -o caida.pcap --packets 2300000 --flows 170000 --skew 1.0 --seed 7",
                "a CAIDA-sized trace (the papers' 2.3M packets / 170K flows)",
            ),
            ex(
                "trace gen -o int.pcap --shim --hops 2-5 --switches 64 --latency lognormal:2000:0.8",
                "with SketchINT INT stacks: per-flow paths, per-hop latencies with mean 2 us",
            ),
            ex(
                "trace gen -o t.pcap --records t.dat",
                "also write the papers' 21-byte records (13-byte key + u64 LE ns timestamp)",
            ),
        ],
        text: "The same arguments and --seed always produce the same bytes.",
    },
    Page {
        path: &["trace", "stats"],
        examples: &[
            top("trace stats t.pcap --top 10", "packets, flows, non-IP and malformed frames, top flows"),
            ex("trace stats t.pcapng --top 20", ""),
            ex("trace stats t.dat --format records", ""),
            ex(
                "--json trace stats t.pcap --all-flows > t.stats.json",
                "same field names as the generator's truth file, so the two compare directly",
            ),
        ],
        text: "Exit code 1 when the file is cut short or corrupted (the error names the byte offset);\n\
               malformed frames inside an intact file are counted, not fatal.",
    },
    Page {
        path: &["sim", "run"],
        examples: &[top(
            "sim run --trace t.pcap --epoch-packets 100000 -o nic/",
            "replay through the simulated NIC, one snapshot per epoch",
        )],
        text: concat!(
            "Every frame of the trace goes into the NIC (raw-IP captures with an Ethernet header). \
             The simulator is called stalled after SMARTNIC_SIM_DEADLINE seconds without an answer \
             (default 30). Compare with the software twin: `smartnic sketch run` with the same \
             --epoch-packets, then `smartnic snapshot diff`.\n\n",
            manifest::help!()
        ),
    },
    Page {
        path: &["sketch", "run"],
        examples: &[
            top(
                "sketch run --trace t.pcap --epoch-packets 100000 -o sw/",
                "the software twin, epoch for epoch",
            ),
            ex(
                "sketch run --trace t.pcap -o t.snap",
                "TowerSketch (approximate CU) + SuMax at the NIC's geometry: the software twin of the\n\
                 hardware, counter for counter.",
            ),
            ex("sketch run --trace t.pcap --sketch tower-cu --memory 600KB -o cu.snap", ""),
            ex(
                "sketch run --trace t.pcap --table-threshold 1500 --inflate-ratio 3 -o t.snap",
                "with INT stacks: the per-switch half keeps flows above 1500 packets in its table and\n\
                 records hops over 3x their (flow, switch) average",
            ),
            ex(
                "sketch run --trace t.dat --format records -o t.snap",
                "the papers' 21-byte records (13-byte key + timestamp)",
            ),
        ],
        text: concat!(
            "A trace without IP packets gives one snapshot of epoch 0 with 0 packets.\n\n",
            "When the trace carries INT stacks, each epoch that held a hop also gets the NIC's\n",
            "per-switch half (latency tower, key table, inflated-latency records), fed with the\n",
            "first TowerSketch's estimates; --no-per-switch leaves it out. While an epoch runs,\n",
            "its records wait beside its snapshot in <snapshot>.tmp-snapshot.records-spill (so\n",
            "memory does not grow with the epoch), and go into the snapshot at the epoch's end.\n\n",
            manifest::help!()
        ),
    },
    Page {
        path: &["sketch", "eval"],
        examples: &[
            ex("trace gen -o caida.pcap --packets 2300000 --flows 170000 --skew 0.95 --shim", ""),
            top(
                "sketch eval --trace t.pcap --truth t.pcap.truth.json --plot acc.svg",
                "accuracy lab: all seven sketches at 300/600/900KB",
            ),
            ex("sketch eval --trace t.pcap --sketch tower-cu,cu --memory 100KB,200KB --tasks size,heavy", ""),
            ex("sketch eval --trace t.pcap --plot acc.svg --csv > acc.csv", ""),
            ex("sketch eval --trace t.dat --format records", "the papers' 21-byte records"),
        ],
        text: "A trace without IP packets has nothing to score: 0 packets, 0 flows and no rows.\n\n\
               Metrics: size_are/size_aae (flow size), hh_f1/hh_pr/hh_rr/hh_are (heavy hitters), hc_f1\n\
               (heavy changes between the trace's two halves), dist_wmre (MRAC distribution), entropy_re,\n\
               card_re (linear counting), and for SuMax delay_wmre, iat_are, last_aae_us and the partial\n\
               reconstruction p55_/p80_valid and _are. A dash means the sketch cannot answer that task.",
    },
    Page {
        path: &["snapshot", "diff"],
        examples: &[top(
            "snapshot diff nic/epoch-000000.snap sw/epoch-000000.snap",
            "NIC against the software twin",
        )],
        text: "Exit status 1 when anything compared differs.",
    },
    Page {
        path: &["snapshot", "merge"],
        examples: &[
            top("snapshot merge a.snap b.snap -o ab.snap", "two NICs' epochs as one"),
            ex(
                "snapshot merge n0/epoch-000003.snap n1/epoch-000003.snap n2/epoch-000003.snap -o e3.snap --json",
                "three NICs' epoch 3; what was merged as JSON",
            ),
            ex(
                "snapshot merge nic0/epoch-000003.snap nic1/epoch-000003.snap --drop-sumax -o e3.snap",
                "NIC snapshots: their towers and per-switch halves, SuMax left out",
            ),
        ],
        text: "Count-Min towers merge into exactly the sketch of the union stream; CU and ACU towers\n\
               into counters no larger than Count-Min's, estimates no smaller than the truth. The\n\
               per-switch half: latency towers add likewise, key tables unite, records concatenate.\n\
               SuMax sections do not merge (a flow's largest gap may span two parts): they are\n\
               refused unless --drop-sumax leaves them out. Snapshots of different geometry, hash\n\
               parameters or mode are refused.",
    },
    Page {
        path: &["snapshot", "export"],
        examples: &[
            top("snapshot export nic/epoch-000003.snap --ipfix 127.0.0.1:4739", "one epoch to an IPFIX collector"),
            ex(
                "snapshot export nic/epoch-*.snap --ipfix collector.example:4739 --domain 7 --mtu 1200 --json",
                "every epoch, one sequence; messages, records and sequence numbers as JSON",
            ),
            ex(
                "snapshot export nic/epoch-*.snap --parquet fleet/ --device rack7-nic",
                "every epoch as rows of the fleet's Parquet tables (flows, hops, health)",
            ),
        ],
        text: "A flow record per key-table flow (packet estimate), a hop record per switch of its path\n\
               (latency tower count, average ns) as enterprise-specific elements; templates in every\n\
               message. The README's IPFIX export section publishes the templates and the PEN.",
    },
    Page {
        path: &["snapshot", "report"],
        examples: &[
            top("snapshot report nic/epoch-000000.snap", "every task the snapshot answers"),
            ex(
                "snapshot report t.snap --candidates keys.txt --top 20",
                "keys.txt: one flow key per line (SRC:PORT>DST:PORT/PROTO); anything after the key on a\n\
                 line is ignored, lines starting with # are comments",
            ),
            ex("--json snapshot report t.snap > report.json", ""),
            ex(
                "snapshot report sw/epoch-000001.snap --against sw/epoch-000000.snap",
                "per-switch heavy changes (> 750 packets) from the older epoch to the newer",
            ),
            ex("snapshot report t.snap --switch-threshold 1000 --top 20", "heavy hitters per switch above 1000 packets"),
        ],
        text: "A snapshot with the per-switch half answers SketchINT's tasks from itself alone: heavy\n\
               hitters (the key table's flows, sized by the flow tower), heavy hitters per switch,\n\
               average latency per switch along each table flow's path, and the (flow, switch) pairs\n\
               with the most inflated-latency records. With --json they are the object `per_switch`:\n\
               table, heavy_hitters, switch_heavy, latency, inflated, changes (with --against) and\n\
               notes; a part the snapshot lacks is null.",
    },
    Page {
        path: &["snapshot", "query"],
        examples: &[
            top("snapshot query t.snap --flow '10.0.0.1:1234>10.0.0.2:80/6'", "one flow's counters"),
            ex(
                "snapshot query nic/epoch-000003.snap --flow '10.0.0.1:1234>10.0.0.2:80/6' --switch 3,7",
                "its hops, average latency and inflated records at switches 3 and 7",
            ),
        ],
        text: "Every flow sketch's answer, then the flow in the per-switch half (NIC snapshots, and\n\
               software ones run with it): its path from the flow-key table when its size passed\n\
               the table threshold, and per switch of that path (or of --switch) the latency\n\
               tower's hop count and average latency and the flow's inflated-latency records.\n\
               With --json: {flow, epoch, packets, sketches, per_switch} (per_switch null without\n\
               a latency tower).",
    },
    Page {
        path: &["lab", "run"],
        examples: &[
            top(
                "lab run --topo fat-tree:4 --packets 1000000 -o lab/",
                "k = 4 fat-tree, web-search flows at 30 % load; lab/hosts/*.pcapng and lab/truth.json",
            ),
            ex(
                "lab run -o lab/ --fault blackhole:edge1_0:10.0.0.0/24@2ms --fault 'drop:agg0_0>core0:0.01@1ms-3ms'",
                "a blackhole on edge1_0 from 2 ms, 1 % loss on one uplink from 1 to 3 ms",
            ),
            ex(
                "lab run -o lab/ --fault loop:edge0_0:agg0_0:10.0.2.0/24@0ns --packets 10000",
                "edge0_0 and agg0_0 bounce 10.0.2.0/24 between them until the TTL runs out",
            ),
            ex(
                "lab run -o lab/ --fault 'jitter:agg1_1>edge1_0:exp:20000@0ns' --fault path:edge0_0:agg0_1:10.0.3.0/24@5ms",
                "a port that stalls 20 us on average; a route moved to one ECMP member at 5 ms",
            ),
            ex(
                "lab run --topo leaf-spine:4,2,8 --workload zipf:1.1:1MB --load 0.6 --duration 10ms -o ls/",
                "",
            ),
            ex(
                "lab run -o lab/ --packets 10000 --switch-log",
                "also lab/switches/<sw>.{in,out}.pcapng, .entries.txt and .json for scripts/p4-check",
            ),
            ex("sketch run --trace lab/hosts/h1_0_0.pcapng -o h1_0_0.snap", "one host's NIC, in software"),
        ],
        text: "Faults, KIND:WHERE[:ARG]@START[-END] (times in ns, us or ms; no END: to the end of the run):\n  \
               blackhole:SWITCH:PREFIX|FLOW   ACL drop of a prefix (10.0.3.0/24) or a flow (10.0.0.2:1234>10.0.3.2:80/6)\n  \
               loop:SWITCH:NEIGHBOUR:PREFIX   both switches route PREFIX to each other (until the TTL runs out)\n  \
               path:SWITCH:NEIGHBOUR:PREFIX   SWITCH routes PREFIX via NEIGHBOUR only\n  \
               drop:NODE>PEER:P               NODE's port towards PEER loses each packet with probability P\n  \
               jitter:NODE>PEER:DIST          that port stalls before each transmission: const:NS,\n                                 \
               uniform:MIN_NS:MAX_NS or exp:MEAN_NS\n\n\
               A loop or path change on a prefix the switch has no entry for adds one (a longer prefix\n\
               still wins; see lab entries). Quote a fault that holds `>` from the shell. Links\n\
               serialize at their rate counting 24 bytes of preamble, FCS and gap per frame; hop\n\
               latency is transmission start minus arrival at the switch. The same arguments and\n\
               --seed give the same files.",
    },
    Page {
        path: &["lab", "score"],
        examples: &[
            top(
                "lab score --packets 1000000 --load 0.5 --workload zipf:2.0:10MB",
                "the NIC's per-switch answers on 16 NICs against exact answers",
            ),
            ex(
                "lab score --mode acu,cm --flow-memory 2KB,10KB,50KB --latency-memory 100KB,600KB,3MB",
                "SketchINT Fig. 7: the flow tower and the latency tower swept per NIC",
            ),
            ex(
                "lab score --packets 100000 --load 0.5 --workload zipf:2.0:10MB --nic lab-nic/",
                "also the simulated NICs' own snapshots (Verilator), beside the model's rows",
            ),
        ],
        text: "The lab runs once in memory; each host's NIC stream is split into two epochs at the\n\
               time half the packets had arrived. Scores: sw-HH and sw-HC are the F1 of per-switch\n\
               heavy hitters (> 1500 packets) and heavy changes (> 750 between the epochs) over\n\
               (switch, flow); lat ARE is the per-flow per-switch average latency's ARE, also over\n\
               the pairs averaging at least 1 us; inflated is the F1 of the (flow, switch) pairs\n\
               with a hop above 5x the pair's average so far, against the exact rule at the NIC's\n\
               16 ns resolution and, as (ns), on ns latencies; records counts the inflated-latency\n\
               records the NICs delivered. Memory is per NIC. With --nic, each host's capture is\n\
               replayed through the simulated NIC (the Verilator core, banks swapped at the split)\n\
               and the same tasks are answered from its snapshot files (records from its record\n\
               ring): they equal the model's rows.",
    },
    Page {
        path: &["lab", "topo"],
        examples: &[
            top("lab topo --topo fat-tree:4", "nodes, switch IDs, addresses and links"),
            ex("--json lab topo --topo my-net.txt", "a topology file (see p4/src/topology_file.rs)"),
        ],
        text: "",
    },
    Page {
        path: &["lab", "entries"],
        examples: &[
            top("lab entries --switch edge0_0", "the simple_switch_CLI commands of one switch"),
            ex("--json lab entries --switch core0 --topo fat-tree:4", "the same entries as runtime JSON"),
        ],
        text: "",
    },
    Page {
        path: &["device", "list"],
        examples: &[
            top("device list", "SmartNICs on the PCI bus, their driver and what to do next"),
            ex("--json device list", ""),
        ],
        text: "",
    },
    Page {
        path: &["device", "status"],
        examples: &[
            top("device status --device 0000:03:00.0", "firmware, epoch, frame counters, blocks"),
            ex("device status --device file:bar.img", "a BAR image file instead of a board"),
        ],
        text: "",
    },
    Page {
        path: &["device", "configure"],
        examples: &[
            ex("device configure --device 0000:03:00.0", "the per-switch half's mode, Delta_l and Delta_h"),
            top(
                "device configure --device 0000:03:00.0 --mode acu --inflate-ratio 3 --table-threshold 1500",
                "per-switch half: ACU, hops over 3x their (flow, switch) average recorded, flows above\n\
                 1500 packets in the key table",
            ),
            ex("--json device configure --device file:bar.img --inflate-ratio 2.5", "one setting; the others kept"),
        ],
        text: "Delta_l (--inflate-ratio) is SketchINT's inflated-latency rule: a hop whose latency\n\
               exceeds Delta_l times its (flow, switch) pair's average so far is recorded. The NIC\n\
               compares in the log domain, so the device holds log2(Delta_l) in fixed point\n\
               (INFLATE_THRESHOLD); the ratio printed is the one that register stands for, within\n\
               0.1 % of the one asked. Delta_h (--table-threshold): a flow whose estimate is\n\
               strictly above it enters the flow-key table, where per-switch heavy hitters and\n\
               heavy changes are read from. The options above give the reset values.\n\n\
               Without a setting nothing is written. With --json: mode, inflate_threshold,\n\
               inflate_ratio, table_threshold and written (the registers this run wrote); device\n\
               status --json shows the same object as per_switch. Exit status 1 when the device\n\
               has no per-switch half or did not keep a register (the error names it), 2 for a\n\
               mode the hardware lacks (cu) or a ratio below 1.",
    },
    Page {
        path: &["device", "readout"],
        examples: &[
            ex("device readout --device 0000:03:00.0 -o epoch.snap", ""),
            top("device readout --device 0000:03:00.0 --every 5s -o snaps/", "one snapshot per 5 s epoch"),
            ex("device readout --device sim --registers -o epoch.snap", "by register reads, not the readout stream"),
        ],
        text: "The windows come as one readout stream (header, packed windows, CRC) on the card-to-host\n\
               channel when the bitstream has the readout-stream block and the device a channel (the\n\
               simulated NIC has one), else by one register read per counter; --registers and --stream\n\
               choose. Both give the same snapshot. The NIC's records come from the record ring when\n\
               the device has one (no register read per record), else popped by registers; the report\n\
               says which (--json: records_via, ring_words, record_pops, records_dropped).",
    },
    Page {
        path: &["collect"],
        examples: &[
            top(
                "collect --device 0000:03:00.0 --every 5s --dir /var/lib/smartnic --keep 720",
                "the collector: a snapshot per 5 s epoch, the newest hour kept, metrics at :9464/metrics",
            ),
            ex(
                "collect --device vfio:0000:03:00.0 --device vfio:0000:04:00.0 --dir snaps/ --listen 0.0.0.0:9464",
                "two NICs, each in its own directory; metrics for a remote Prometheus",
            ),
            ex(
                "collect --device sim:t.pcap --sim-packets 10000 --every 2s --dir snaps/ --json",
                "the simulated NIC replaying t.pcap, 10,000 packets an epoch; status lines as JSON",
            ),
        ],
        text: "Runs until SIGTERM or SIGINT, which let the current readout and its file finish (a second\n\
               SIGINT exits at once). A device that fails or disappears is opened again every period\n\
               (smartnic_device_up 0, then 1); a snapshot that cannot be written (disk full) is counted\n\
               and logged, and no retained file is touched. Metrics: see the README's Collector section.\n\
               --ipfix and --parquet export every epoch as well (a failed readout: a health row).",
    },
    Page {
        path: &["fleet", "query"],
        examples: &[
            top("fleet query --dir fleet/ --named switch_latency", "per-switch latency percentiles, network-wide"),
            ex("fleet query --list", "the built-in queries and what they answer"),
            ex("fleet query --dir fleet/ --named flow_sizes --csv", "the largest flows across NICs, as CSV"),
        ],
        text: "Your own SQL is the first argument, in quotes: tables flows, hops and health.\n\
               DataFusion embedded, over what collect --parquet or snapshot export --parquet wrote. The\n\
               built-in queries are files of host/src/fleet/queries, in SQL Spark also speaks:\n\
               scripts/fleet-spark --dir fleet/ --named all --master spark://HOST:7077 runs them there.",
    },
    Page {
        path: &["fleet", "synth"],
        examples: &[
            top("fleet synth /tmp/fleet --nics 1000 --epochs 12", "a synthetic 1,000-NIC fleet to measure queries on"),
        ],
        text: "Synthetic counters (Zipf flows on a leaf-spine fabric, a few hot spines) through the real\n\
               Parquet writer: the tables and files are those of a real fleet.",
    },
];

/// The examples `smartnic --help` and the README list.
pub fn overview() -> impl Iterator<Item = &'static Example> {
    PAGES.iter().flat_map(|p| p.examples).filter(|e| e.overview)
}

/// `Examples:` and each line, its note indented below: the form every `--help` ends with.
fn examples_help<'a>(examples: impl Iterator<Item = &'a Example>) -> String {
    let mut lines = String::new();
    let mut count = 0;
    for e in examples {
        count += 1;
        lines += &format!("  smartnic {}\n", e.line);
        for note in e.note.lines() {
            lines += &format!("      {note}\n");
        }
    }
    format!("{}:\n{lines}", if count == 1 { "Example" } else { "Examples" })
}

/// The closing text of `smartnic --help`.
pub fn overview_help() -> String {
    examples_help(overview()) + "\nEvery command has its own examples: smartnic NOUN VERB --help."
}

/// The closing text of one command's `--help`: its examples, then the page's text.
pub fn page_help(page: &Page) -> String {
    let out = examples_help(page.examples.iter());
    if page.text.is_empty() {
        return out.trim_end().to_string();
    }
    format!("{out}\n{}", page.text)
}

/// The words a shell would pass for `smartnic LINE`: split at blanks, single quotes kept
/// together, and cut at the first unquoted `>` or `|` (what follows is the shell's).
pub fn argv(line: &str) -> Vec<String> {
    let mut words = vec!["smartnic".to_string()];
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            c if quoted => word.get_or_insert_with(String::new).push(c),
            ' ' => words.extend(word.take()),
            '>' | '|' if word.is_none() => return words,
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The README's CLI section between its markers: the command map (every visible noun and
/// verb with its one-line description, from the grammar itself) and the overview examples.
pub fn readme(cmd: &clap::Command) -> String {
    let mut out = String::from("| command | what it does |\n|---|---|\n");
    for (path, about) in visible_commands(cmd, "smartnic") {
        out += &format!("| `{path}` | {about} |\n");
    }
    out += "\n```sh\n";
    for e in overview() {
        for note in e.note.lines() {
            out += &format!("# {note}\n");
        }
        out += &format!("smartnic {}\n", e.line);
    }
    out + "```\n"
}

/// Every leaf command not hidden, as (`smartnic noun verb`, first line of its description).
pub fn visible_commands(cmd: &clap::Command, prefix: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // In `--help` order (editing a subcommand moves it to the end of the list).
    let mut subs: Vec<_> =
        cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help").collect();
    subs.sort_by_key(|s| s.get_display_order());
    for sub in subs {
        let path = format!("{prefix} {}", sub.get_name());
        let leaves = visible_commands(sub, &path);
        if leaves.is_empty() {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            out.push((path, about.lines().next().unwrap_or_default().to_string()));
        }
        out.extend(leaves);
    }
    out
}
