//! The host arithmetic models reproduce every line of the checked-in contract vectors
//! `hdl/contract/vectors/lut.txt` (the same file the Verilator runs of the hardware check).

// Inside `mod arith` so that `cargo test -p smartnic arith` selects these tests.
mod arith {
    use smartnic::arith::{default_arith, delay_bin, Encoder, EncoderParams, Exp2Io, Rounding};
    use smartnic::contract::geometry::DelayBinRule;
    use smartnic::contract::lut::{self, parse_lut_vectors, LUT_FILE};

    fn u(v: i128) -> u64 {
        u64::try_from(v).expect("unsigned vector field")
    }

    #[test]
    fn host_models_reproduce_lut_txt() {
        let a = default_arith();
        let enc = Encoder::default();
        let lines = parse_lut_vectors(LUT_FILE);
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        let mut tables: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
        let names = LUT_FILE
            .lines()
            .filter(|l| l.starts_with("table "))
            .map(|l| l.split_whitespace().nth(1).unwrap());
        let table_lines = lines.iter().filter(|l| l.op == "table");
        for (name, l) in names.zip(table_lines) {
            let t = tables.entry(name.to_string()).or_default();
            assert_eq!(t.len() as i128, l.args[0], "table {name} is contiguous");
            t.extend(l.args[1..].iter().map(|&w| w as u32));
        }
        assert_eq!(tables["log2"], a.log2.table());
        assert_eq!(tables["exp2"], a.exp2.table());
        assert_eq!(tables["mul_direct"], a.direct.mul_table());
        assert_eq!(tables["div_direct"], a.direct.div_table());

        for l in &lines {
            let g = &l.args;
            *counts.entry(l.op.clone()).or_default() += 1;
            match l.op.as_str() {
                "table" => {}
                "const" => {
                    let v = u(g[0]) as u32;
                    assert!(v == enc.k() || v == enc.c(), "{l:?}");
                }
                "log2" => {
                    let got = a.log2(u(g[0]));
                    assert_eq!(got.is_some() as i128, g[1], "{l:?}");
                    assert_eq!(got.unwrap_or(0) as i128, g[2], "{l:?}");
                }
                "exp2" => {
                    let io = Exp2Io { in_frac: g[1] as u8, out_frac: g[2] as u8, out_width: g[3] as u8 };
                    assert_eq!(a.exp2(g[0] as i64, io) as i128, g[4], "{l:?}");
                }
                "mul" => assert_eq!(a.mul(u(g[0]), u(g[1])) as i128, g[2], "{l:?}"),
                "mul_direct" => assert_eq!(a.mul_direct(u(g[0]), u(g[1])) as i128, g[2], "{l:?}"),
                "div" | "div_direct" => {
                    let (x, y, f) = (u(g[0]), u(g[1]), g[2] as u8);
                    let got = if l.op == "div" { a.div(x, y, f) } else { a.div_direct(x, y, f) };
                    assert_eq!(got.is_some() as i128, g[3], "{l:?}");
                    assert_eq!(got.unwrap_or(u64::MAX) as i128, g[4], "{l:?}");
                }
                "encode" => assert_eq!(enc.encode(u(g[0])) as i128, g[1], "{l:?}"),
                "encode_rand" => {
                    let got = enc.encode_with(u(g[0]), Rounding::Random(g[1] as u16));
                    assert_eq!(got as i128, g[2], "{l:?}");
                }
                "decode" => assert_eq!(enc.decode(g[0] as u32) as i128, g[1], "{l:?}"),
                "lfsr" => {
                    assert_eq!(lut::lfsr_step(g[0] as u32) as i128, g[1], "{l:?}");
                    assert_eq!(lut::lfsr_advance(g[0] as u32) as i128, g[2], "{l:?}");
                }
                "encoder_seq" => {} // checked below, statefully
                "delay_bin" => {
                    let rule = DelayBinRule { base_ns: g[0] as u32, bins_per_octave: g[1] as u8 };
                    assert_eq!(delay_bin(&rule, u(g[3]), g[2] as u8, &a.log2) as i128, g[4], "{l:?}");
                }
                other => panic!("unknown vector op {other}"),
            }
        }
        // Stateful randomized encoders: one per seed, i-th encode from reset.
        let mut seq: Vec<&lut::LutLine> = lines.iter().filter(|l| l.op == "encoder_seq").collect();
        seq.sort_by_key(|l| (l.args[0], l.args[1]));
        let mut current: Option<(i128, Encoder)> = None;
        for l in seq {
            let g = &l.args;
            if current.as_ref().map(|c| c.0) != Some(g[0]) {
                current = Some((g[0], Encoder::new(EncoderParams::DEFAULT, g[0] as u32).unwrap()));
            }
            let e = &mut current.as_mut().unwrap().1;
            assert_eq!(e.encode_randomized(u(g[2])) as i128, g[3], "{l:?}");
        }
        for op in [
            "log2",
            "exp2",
            "mul",
            "div",
            "mul_direct",
            "div_direct",
            "encode",
            "encode_rand",
            "decode",
            "lfsr",
            "encoder_seq",
            "delay_bin",
        ] {
            assert!(counts.get(op).copied().unwrap_or(0) >= 10, "too few {op} vectors: {counts:?}");
        }
    }
}
