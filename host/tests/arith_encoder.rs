//! Statistical tests of the randomized multiplicative encoder (PINT section 4.3, `[.]_R`):
//! the code is unbiased in expectation, driven only by the contract's LFSR.

// Inside `mod arith` so that `cargo test -p smartnic arith` selects these tests.
mod arith {
    use smartnic::arith::{Encoder, EncoderParams};
    use smartnic::contract::lut::{ENC_RAND_BITS, LFSR_STEPS_PER_ENCODE};

    /// z-score of the acceptance band: a two-sided 5-sigma band rejects a truly unbiased
    /// encoder with probability 5.7e-7 (the seeds are fixed, so the test is deterministic).
    const Z: f64 = 5.0;

    #[test]
    fn randomized_rounding_is_unbiased() {
        const N: usize = 200_000;
        let values = [3u64, 1000, 12_345, (1 << 20) + 777, 3_000_000_007, 0xDEAD_BEEF_CAFE];
        for (i, &v) in values.iter().enumerate() {
            let mut e = Encoder::new(EncoderParams::DEFAULT, 0x1234_5678 + i as u32).unwrap();
            let x = e.exact_code(v);
            let p = x - x.floor();
            let sum: u64 = (0..N).map(|_| e.encode_randomized(v) as u64).sum();
            let mean = sum as f64 / N as f64;
            // Each code is floor(x) + Bernoulli(p): standard error sqrt(p(1-p)/N). The 16-bit
            // random fraction quantizes p to a multiple of 2^-16, a bias below 2^-16.
            let sigma = (p * (1.0 - p) / N as f64).sqrt();
            let tol = Z * sigma + 2f64.powi(-(ENC_RAND_BITS as i32));
            assert!((mean - x).abs() <= tol, "v={v}: mean {mean} vs exact {x} (p={p}, tol={tol})");
            // And the deterministic code is the rounded exact code.
            assert_eq!(e.encode(v) as f64, (x + 0.5).floor(), "v={v}");
        }
    }

    #[test]
    fn randomized_rounding_removes_the_systematic_error_of_half_up() {
        // Over values with the same fractional code, half-up always rounds the same way (bias
        // |p - round(p)|), randomized rounding averages to the exact code.
        const N: usize = 100_000;
        let mut e = Encoder::new(EncoderParams::DEFAULT, 99).unwrap();
        // The first value from 1000 on whose code is at least 0.3 away from an integer.
        let v = (1000u64..).find(|&v| (e.encode(v) as f64 - e.exact_code(v)).abs() >= 0.3).unwrap();
        let x = e.exact_code(v);
        let p = x - x.floor();
        let det_bias = e.encode(v) as f64 - x;
        let mean = (0..N).map(|_| e.encode_randomized(v) as f64).sum::<f64>() / N as f64;
        let tol = Z * (p * (1.0 - p) / N as f64).sqrt() + 2f64.powi(-(ENC_RAND_BITS as i32));
        assert!(det_bias.abs() > 10.0 * tol, "half-up bias {det_bias} should dwarf tol {tol}");
        assert!((mean - x).abs() <= tol);
    }

    #[test]
    fn lfsr_fractions_are_uniform() {
        // Chi-square of the top 4 bits of the random fraction over 16 cells: 15 degrees of
        // freedom, mean 15, standard deviation sqrt(30); accept within Z standard deviations.
        const N: usize = 160_000;
        let mut s = smartnic::contract::lut::lfsr_seed(0);
        let mut cells = [0u64; 16];
        for _ in 0..N {
            s = smartnic::contract::lut::lfsr_advance(s);
            cells[((s as u16) >> 12) as usize] += 1;
        }
        let expect = N as f64 / 16.0;
        let chi2: f64 = cells.iter().map(|&c| (c as f64 - expect).powi(2) / expect).sum();
        assert!((chi2 - 15.0).abs() <= Z * 30f64.sqrt(), "chi2 = {chi2}, cells {cells:?}");
        assert_eq!(LFSR_STEPS_PER_ENCODE, 16);
    }
}
