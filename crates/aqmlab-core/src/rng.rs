//! Deterministic random streams.
//!
//! Every random component of a run (each flow's start time, each link's loss
//! model, each AQM) owns its own stream, derived from the run's seed and a
//! stable stream identifier. Adding a component therefore never shifts the
//! draws of another, and the same seed gives bit-identical runs on any machine.
//!
//! The generator is xoshiro256++ (Blackman and Vigna), seeded through
//! SplitMix64; both are fixed here rather than borrowed from a library whose
//! default generator may change between versions.

use std::convert::Infallible;

/// One seeded random stream (xoshiro256++).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stream identifiers: a kind tag and an index, so that streams of different
/// components never coincide.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// Start times and per-flow draws of traffic group `group`.
    Traffic(u32),
    /// Per-flow draws (access delays) of flow `flow`.
    Flow(u32),
    /// The loss model of link `link`.
    LinkLoss(u32),
    /// The AQM of link `link`.
    Aqm(u32),
    /// Topology construction draws.
    Topology,
    /// Draws of `[[schedule]]` entry `entry`'s repetition `rep` (new delays,
    /// start times); repetition 0 is the entry at its `at`.
    Schedule(u32, u32),
    /// The application of flow `flow` (UDP ON/OFF periods, web sizes and
    /// think times).
    App(u32),
    /// Web session `session` of traffic group `group` whose pages run on
    /// lanes: its RTT and page clock, the same whatever the number of lanes.
    Session(u32, u32),
    /// The TCP sender of flow `flow` (BBR's random start of its gain cycle).
    Tcp(u32),
}

impl Stream {
    fn id(self) -> u64 {
        match self {
            Stream::Traffic(i) => (1 << 32) | i as u64,
            Stream::Flow(i) => (2 << 32) | i as u64,
            Stream::LinkLoss(i) => (3 << 32) | i as u64,
            Stream::Aqm(i) => (4 << 32) | i as u64,
            Stream::Topology => 5 << 32,
            Stream::Schedule(i, 0) => (6 << 32) | i as u64,
            // Bit 62 set: apart from the kinds above and from sessions
            // (repetitions are at most MAX_SCHEDULE_ENTRIES < 2^30).
            Stream::Schedule(i, k) => (1 << 62) | (u64::from(k) << 32) | u64::from(i),
            Stream::App(i) => (7 << 32) | i as u64,
            Stream::Tcp(i) => (8 << 32) | i as u64,
            // Bit 63 set: apart from the kinds above (under 2^35).
            Stream::Session(g, i) => (1 << 63) | (u64::from(g) << 32) | u64::from(i),
        }
    }
}

impl Rng {
    /// A stream derived from the run seed and a stream identifier.
    pub fn new(seed: u64, stream: Stream) -> Rng {
        let mut st = seed ^ stream.id().wrapping_mul(0xD1B5_4A32_D192_ED03);
        // Mix twice so that nearby seeds and ids give unrelated states.
        splitmix64(&mut st);
        let mut s = [0u64; 4];
        for x in s.iter_mut() {
            *x = splitmix64(&mut st);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn uniform_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // Multiply-shift; the bias is below 2^-64 * span, negligible here.
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }

    /// Exponential with mean `mean` (inversion: -mean ln(1 - U), U in [0, 1)).
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Pareto with shape `alpha` and scale (minimum) `x_m`:
    /// x_m / (1 - U)^(1 / alpha); mean alpha x_m / (alpha - 1) for alpha > 1.
    pub fn pareto(&mut self, alpha: f64, x_m: f64) -> f64 {
        x_m / (1.0 - self.uniform()).powf(1.0 / alpha)
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.uniform() < p)
    }
}

/// Lets `rand_distr` distributions draw from our streams.
impl rand::TryRng for Rng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.next_u64() >> 32) as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.next_u64())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let mut a = Rng::new(1, Stream::Flow(3));
        let mut b = Rng::new(1, Stream::Flow(3));
        let mut c = Rng::new(1, Stream::Flow(4));
        let mut d = Rng::new(2, Stream::Flow(3));
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..4).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn uniform_mean() {
        let mut r = Rng::new(7, Stream::Topology);
        let n = 100_000;
        let m: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.01, "{m}");
        let mut hits = 0;
        for _ in 0..n {
            if r.bernoulli(0.1) {
                hits += 1;
            }
        }
        assert!((hits as f64 / n as f64 - 0.1).abs() < 0.005);
    }
}
