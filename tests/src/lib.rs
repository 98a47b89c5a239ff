//! Helpers shared by the workspace integration tests: a seeded generator whose
//! sequence never changes between versions, ULP distance against f64, and the test
//! harness (repository paths, manifest, backends present).

pub mod clang;
pub mod harness;
pub mod tiles;

/// SplitMix64: tiny, fast, and fixed forever, so a seed names the same inputs on
/// every machine and in every future version.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next_u32() as u64 * n as u64) >> 32) as u32
    }

    /// A vector of values uniform in [lo, hi), rounded to f32.
    pub fn f32_vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f32> {
        (0..n).map(|_| self.range(lo, hi) as f32).collect()
    }
}

/// Distance of the f32 result `y` from the exact value `r`, in units of the last place
/// of f32 at `r`. Values the library flushes (|r| below 2^-126 with y = ±0) and values
/// that overflow f32 (y = ±inf of r's sign) count as exact; NaN must match NaN.
pub fn ulp_error(y: f32, r: f64) -> f64 {
    if r.is_nan() || y.is_nan() {
        return if r.is_nan() && y.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let min_normal = f32::MIN_POSITIVE as f64;
    if r.abs() < min_normal && y == 0.0 {
        return 0.0;
    }
    if r.abs() >= f32::MAX as f64 * (1.0 + f64::EPSILON) && y.is_infinite() && (y > 0.0) == (r > 0.0) {
        return 0.0;
    }
    if r.is_infinite() || y.is_infinite() {
        return if (y as f64) == r { 0.0 } else { f64::INFINITY };
    }
    let exp = if r == 0.0 { -126 } else { ((r.abs().to_bits() >> 52) as i64 - 1023).max(-126) };
    let ulp = 2f64.powi(exp as i32 - 23);
    ((y as f64) - r).abs() / ulp
}

/// `n` values uniform in `[lo, hi)` from `seed` (splitmix64, the validator's generator).
pub fn uniform(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed;
    (0..n).map(|_| lo + (hi - lo) * ((onekernel_runtime::validate::splitmix(&mut s) >> 40) as f32 / (1u64 << 24) as f32)).collect()
}

/// The bits of each value (bitwise comparisons that tell −0 from +0 and NaNs apart).
pub fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulp_error_counts_units_in_the_last_place() {
        assert_eq!(ulp_error(1.0, 1.0), 0.0);
        let next = f32::from_bits(1.0f32.to_bits() + 1);
        assert_eq!(ulp_error(next, 1.0), 1.0);
        assert_eq!(ulp_error(0.0, 1e-40), 0.0, "flushed");
        assert!(ulp_error(f32::NAN, 1.0).is_infinite());
        assert_eq!(ulp_error(f32::INFINITY, 1e39), 0.0);
    }

    #[test]
    fn rng_is_fixed() {
        let mut r = Rng::new(1);
        assert_eq!(r.next_u64(), 0x910a_2dec_8902_5cc1);
    }
}
