//! A small radix-2 complex FFT for the convolutions of MRAC's E step
//! ([`super::distribution`]): sums over pairs `s + t = v` of the support are convolutions
//! of the per-size weights, `O(N log N)` by FFT instead of `O(n^2)` by enumeration.
//!
//! Plain iterative Cooley-Tukey with twiddles computed directly (`sin_cos` of each angle,
//! not by repeated multiplication), so the round-off stays at a few ulps times `log2 N`.

/// A complex number as `(re, im)`.
pub type C64 = (f64, f64);

/// FFTs of one power-of-two length, with the twiddle factors computed once.
pub struct Fft {
    n: usize,
    /// `exp(-2 pi i k / n)` for `k < n / 2`.
    twiddles: Vec<C64>,
}

impl Fft {
    /// FFTs of length `n`, a power of two.
    pub fn new(n: usize) -> Self {
        assert!(n.is_power_of_two(), "FFT length {n} is not a power of two");
        let step = -2.0 * std::f64::consts::PI / n as f64;
        let twiddles = (0..n / 2)
            .map(|k| {
                let (s, c) = (step * k as f64).sin_cos();
                (c, s)
            })
            .collect();
        Fft { n, twiddles }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// In-place forward transform: `X[k] = sum_j x[j] exp(-2 pi i j k / n)`.
    pub fn forward(&self, x: &mut [C64]) {
        assert_eq!(x.len(), self.n);
        bit_reverse(x);
        let mut half = 1;
        while half < self.n {
            let stride = self.n / (2 * half);
            for start in (0..self.n).step_by(2 * half) {
                for k in 0..half {
                    let w = self.twiddles[k * stride];
                    let (a, b) = (x[start + k], x[start + k + half]);
                    let t = (b.0 * w.0 - b.1 * w.1, b.0 * w.1 + b.1 * w.0);
                    x[start + k] = (a.0 + t.0, a.1 + t.1);
                    x[start + k + half] = (a.0 - t.0, a.1 - t.1);
                }
            }
            half *= 2;
        }
    }

    /// In-place inverse transform, scaled by `1 / n` (so `inverse(forward(x)) = x`).
    pub fn inverse(&self, x: &mut [C64]) {
        for v in x.iter_mut() {
            v.1 = -v.1;
        }
        self.forward(x);
        let scale = 1.0 / self.n as f64;
        for v in x.iter_mut() {
            *v = (v.0 * scale, -v.1 * scale);
        }
    }
}

fn bit_reverse(x: &mut [C64]) {
    let n = x.len();
    let mut j = 0;
    for i in 1..n {
        let mut bit = n >> 1;
        while j & bit != 0 {
            j ^= bit;
            bit >>= 1;
        }
        j |= bit;
        if i < j {
            x.swap(i, j);
        }
    }
}

/// Complex product.
#[inline]
pub fn mul(a: C64, b: C64) -> C64 {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}

/// `a * conj(b)`.
#[inline]
pub fn mul_conj(a: C64, b: C64) -> C64 {
    (a.0 * b.0 + a.1 * b.1, a.1 * b.0 - a.0 * b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transform against the O(n^2) definition, and the round trip.
    #[test]
    fn matches_the_definition_and_inverts() {
        let n = 64;
        let x: Vec<C64> = (0..n).map(|j| ((j * 7 % 13) as f64 - 6.0, (j % 5) as f64 * 0.5)).collect();
        let mut y = x.clone();
        let f = Fft::new(n);
        f.forward(&mut y);
        for (k, yk) in y.iter().enumerate() {
            let mut s = (0.0, 0.0);
            for (j, xj) in x.iter().enumerate() {
                let a = -2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                s.0 += xj.0 * a.cos() - xj.1 * a.sin();
                s.1 += xj.0 * a.sin() + xj.1 * a.cos();
            }
            assert!((s.0 - yk.0).abs() < 1e-9 && (s.1 - yk.1).abs() < 1e-9, "bin {k}");
        }
        f.inverse(&mut y);
        for (a, b) in x.iter().zip(&y) {
            assert!((a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12);
        }
    }

    /// A linear convolution through zero padding.
    #[test]
    fn convolves() {
        let (a, b) = ([1.0, 2.0, 3.0], [4.0, 0.0, -1.0]);
        let f = Fft::new(8);
        let pad = |v: &[f64]| {
            let mut x = vec![(0.0, 0.0); 8];
            x.iter_mut().zip(v).for_each(|(x, &v)| x.0 = v);
            x
        };
        let (mut fa, mut fb) = (pad(&a), pad(&b));
        f.forward(&mut fa);
        f.forward(&mut fb);
        let mut c: Vec<C64> = fa.iter().zip(&fb).map(|(&x, &y)| mul(x, y)).collect();
        f.inverse(&mut c);
        let want = [4.0, 8.0, 11.0, -2.0, -3.0, 0.0, 0.0, 0.0];
        for (got, w) in c.iter().zip(want) {
            assert!((got.0 - w).abs() < 1e-12 && got.1.abs() < 1e-12, "{c:?}");
        }
    }
}
