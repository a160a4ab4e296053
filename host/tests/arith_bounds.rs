//! Property tests: every LUT function stays inside the error bound derived in
//! `smartnic::arith::bounds` (PINT Appendix C / section 4.3), for the default parameters
//! and for other table sizes, and the monotone functions are monotone.

// Inside `mod arith` so that `cargo test -p smartnic arith` selects these tests.
mod arith {
    use proptest::prelude::*;
    use smartnic::arith::{
        bounds, default_arith, delay_bin, Arith, ArithParams, DirectParams, Encoder, EncoderParams, Exp2Io,
        Exp2Params, Log2Params,
    };
    use smartnic::contract::geometry::DelayBinRule;

    /// Any magnitude: a random word shifted right by a random amount (1..=2^64-1).
    fn any_magnitude() -> impl Strategy<Value = u64> {
        (any::<u64>(), 0u32..64).prop_map(|(w, s)| (w >> s).max(1))
    }

    /// Table parameters other than the defaults: q in 4..=12, frac in q..=20, even direct q.
    fn params() -> impl Strategy<Value = ArithParams> {
        (4u8..=12, 0u8..=8, 4u8..=12, 0u8..=8, 1u8..=6, 4u8..=20).prop_map(|(lq, lf, eq, ef, dh, df)| {
            ArithParams {
                log2: Log2Params { q: lq, frac: lq + lf + 4 },
                exp2: Exp2Params { q: eq, frac: eq + ef + 4 },
                direct: DirectParams { q: 2 * dh, frac: df },
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn log2_within_bound(x in any_magnitude()) {
            let a = default_arith();
            let b = bounds::log2(a.log2.params());
            let got = a.log2(x).unwrap() as f64 / 65536.0;
            let err = got - (x as f64).log2();
            prop_assert!(err >= b.lo - 1e-12 && err <= b.hi + 1e-12, "x={x} err={err} {b:?}");
        }

        #[test]
        fn exp2_within_bound(y in -(40i64 << 16)..(40i64 << 16), out_frac in 0u8..=20) {
            let a = default_arith();
            let io = Exp2Io { in_frac: 16, out_frac, out_width: 64 };
            let exact = (y as f64 / 65536.0).exp2() * 2f64.powi(out_frac as i32);
            let got = a.exp2(y, io) as f64;
            let b = bounds::exp2(a.exp2.params(), 16, out_frac);
            // The bound is in output units: scale the absolute term by 2^out_frac.
            let b = bounds::RelBound { abs: b.abs * 2f64.powi(out_frac as i32), ..b };
            prop_assert!(b.holds(exact, got), "y={y} got={got} exact={exact} {b:?}");
        }

        #[test]
        fn mul_within_bound(x in any_magnitude(), y in any_magnitude()) {
            let a = default_arith();
            let exact = x as f64 * y as f64;
            let b = bounds::mul(a.log2.params(), a.exp2.params());
            let got = a.mul(x, y);
            if exact * b.hi + b.abs < u64::MAX as f64 {
                prop_assert!(b.holds(exact, got as f64), "x={x} y={y} got={got} {b:?}");
            } else if exact * b.lo > u64::MAX as f64 {
                prop_assert_eq!(got, u64::MAX);
            }
            prop_assert_eq!(a.mul(x, 0), 0);
        }

        #[test]
        fn div_within_bound(x in any_magnitude(), y in any_magnitude(), out_frac in 0u8..=32) {
            let a = default_arith();
            let exact = x as f64 / y as f64;
            let b = bounds::div(a.log2.params(), a.exp2.params(), out_frac);
            let unit = 2f64.powi(out_frac as i32);
            let got = a.div(x, y, out_frac).unwrap();
            if exact * unit * b.hi < u64::MAX as f64 {
                prop_assert!(b.holds(exact, got as f64 / unit), "x={x} y={y} got={got} {b:?}");
            }
            prop_assert_eq!(a.div(x, 0, out_frac), None);
        }

        #[test]
        fn direct_within_bound(x in any_magnitude(), y in any_magnitude(), out_frac in 0u8..=32) {
            let a = default_arith();
            let p = a.direct.params();
            let exact = x as f64 * y as f64;
            let b = bounds::mul_direct(p);
            let got = a.mul_direct(x, y);
            if exact < u64::MAX as f64 {
                prop_assert!(b.holds(exact, got as f64), "x={x} y={y} got={got} {b:?}");
            }
            let exact = x as f64 / y as f64;
            let unit = 2f64.powi(out_frac as i32);
            let b = bounds::div_direct(p, out_frac);
            let got = a.div_direct(x, y, out_frac).unwrap();
            if exact * unit * b.hi < u64::MAX as f64 {
                prop_assert!(b.holds(exact, got as f64 / unit), "x={x} y={y} got={got} {b:?}");
            }
        }

        #[test]
        fn bounds_hold_for_other_table_sizes(p in params(), x in any_magnitude(), y in any_magnitude()) {
            let a = Arith::new(p).unwrap();
            let lf = 2f64.powi(p.log2.frac as i32);
            let lb = bounds::log2(p.log2);
            let err = a.log2(x).unwrap() as f64 / lf - (x as f64).log2();
            prop_assert!(err >= lb.lo - 1e-12 && err <= lb.hi + 1e-12, "{p:?} x={x} err={err}");
            let (x, y) = (x >> 32, y >> 32);
            if x > 0 && y > 0 {
                let exact = x as f64 * y as f64;
                prop_assert!(bounds::mul(p.log2, p.exp2).holds(exact, a.mul(x, y) as f64), "{p:?}");
                prop_assert!(bounds::mul_direct(p.direct).holds(exact, a.mul_direct(x, y) as f64), "{p:?}");
                let q = x as f64 / y as f64;
                let d = a.div(x, y, 24).unwrap() as f64 / 2f64.powi(24);
                prop_assert!(bounds::div(p.log2, p.exp2, 24).holds(q, d), "{p:?} x={x} y={y}");
                let d = a.div_direct(x, y, 24).unwrap() as f64 / 2f64.powi(24);
                prop_assert!(bounds::div_direct(p.direct, 24).holds(q, d), "{p:?} x={x} y={y}");
            }
        }

        #[test]
        fn encode_decode_within_bound(v in any_magnitude(), seed in any::<u32>()) {
            let v = v >> 2; // codes of values below 2^62 fit 16 bits at eps = 0.0025
            prop_assume!(v >= 1);
            let mut e = Encoder::new(EncoderParams::DEFAULT, seed).unwrap();
            let p = e.params();
            let b = bounds::encode_decode(&p, false);
            let d = e.decode(e.encode(v));
            prop_assert!(b.holds(v as f64, d as f64), "v={v} decoded={d} {b:?}");
            let b = bounds::encode_decode(&p, true);
            let a = e.encode_randomized(v);
            let d = e.decode(a);
            prop_assert!(b.holds(v as f64, d as f64), "v={v} decoded={d} {b:?}");
        }

        #[test]
        fn encoder_with_other_eps(eps_ppm in 10u32..=1_000_000, v in any_magnitude()) {
            let p = EncoderParams { eps_ppm, alpha_bits: 24, ..EncoderParams::DEFAULT };
            let e = Encoder::new(p, 1).unwrap();
            let a = e.encode(v);
            prop_assume!(a < p.alpha_max());
            let d = e.decode(a);
            let b = bounds::encode_decode(&p, false);
            if v as f64 * b.hi < u64::MAX as f64 {
                prop_assert!(b.holds(v as f64, d as f64), "eps={eps_ppm} v={v} decoded={d} {b:?}");
            }
        }

        #[test]
        fn monotone(x in any_magnitude(), step in 1u64..1 << 20) {
            let a = default_arith();
            let x2 = x.saturating_add(step);
            prop_assert!(a.log2(x) <= a.log2(x2));
            let e = Encoder::default();
            prop_assert!(e.encode(x) <= e.encode(x2));
            let y = (x % (80 << 16)) as i64 - (20 << 16);
            let io = Exp2Io { in_frac: 16, out_frac: 8, out_width: 48 };
            prop_assert!(a.exp2(y, io) <= a.exp2(y + step as i64, io));
        }

        #[test]
        fn delay_bin_tracks_the_ideal_log_bin(
            base in 1u32..100_000,
            bpo in 1u8..=16,
            delay in 0u64..10_000_000,
            cells in 2u8..=32,
        ) {
            let a = default_arith();
            let rule = DelayBinRule { base_ns: base, bins_per_octave: bpo };
            let got = delay_bin(&rule, delay, cells, &a.log2);
            prop_assert!(got < cells);
            prop_assert!(delay_bin(&rule, delay + 1, cells, &a.log2) >= got);
            if delay < base as u64 {
                prop_assert_eq!(got, 0);
            } else {
                // Ideal position in bins, and how far the LUT log difference can move it.
                let pos = bpo as f64 * ((delay as f64).log2() - (base as f64).log2());
                let lb = bounds::log2(a.log2.params());
                let slack = bpo as f64 * (lb.hi - lb.lo);
                let ideal = |p: f64| (1.0 + p.floor()).min(cells as f64 - 1.0) as u8;
                let (lo, hi) = (ideal(pos - slack - 1e-9), ideal(pos + slack + 1e-9));
                prop_assert!(lo <= got && got <= hi, "pos={pos} got={got} lo={lo} hi={hi}");
            }
        }
    }
}
