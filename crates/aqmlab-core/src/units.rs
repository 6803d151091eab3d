//! Typed units: simulated time in integer nanoseconds, link rates in bit/s.
//!
//! Every user-facing time or rate is written as a string with a unit
//! (`"15ms"`, `"10Mbps"`); these types parse and print that form so that a
//! resolved scenario round-trips through its file format.

use serde::{Serialize, Serializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Simulated time, integer nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub const NS_PER_S: u64 = 1_000_000_000;

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * Self::NS_PER_S)
    }
    /// Nearest nanosecond to `s` seconds (negative values clamp to zero).
    pub fn from_secs_f64(s: f64) -> Self {
        if s <= 0.0 || s.is_nan() {
            SimTime(0)
        } else {
            SimTime::from_nanos_f64(s * 1e9)
        }
    }
    /// Nearest nanosecond to `ns`, halves away from zero (negative values
    /// and NaN to zero): `ns.round() as u64` without the library call that
    /// `round` is on the baseline x86-64 target, for the estimators that
    /// convert per ACK. Below 2^52 a double's fraction is exact, so
    /// comparing it with one half rounds as `round` does; above, a double
    /// is a whole number already.
    #[inline]
    pub fn from_nanos_f64(ns: f64) -> Self {
        const EXACT: f64 = 4_503_599_627_370_496.0; // 2^52
        if (0.0..EXACT).contains(&ns) {
            // Through i64, whose conversion the target has (u64's is
            // longer): the same whole part in this range.
            let t = ns as i64;
            SimTime(t as u64 + u64::from(ns - t as f64 >= 0.5))
        } else {
            SimTime(ns.round() as u64)
        }
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_sub(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(o.0))
    }

    /// Parse `"<number><unit>"` with unit one of ns, us, ms, s.
    pub fn parse(s: &str) -> Result<SimTime, String> {
        let t = s.trim();
        let (num, unit) = split_unit(t);
        let mult: f64 = match unit {
            "ns" => 1.0,
            "us" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            _ => return Err("expected a time such as \"15ms\" (units ns, us, ms, s)".into()),
        };
        let v: f64 = num
            .parse()
            .map_err(|_| "expected a time such as \"15ms\" (units ns, us, ms, s)".to_string())?;
        if !v.is_finite() || v < 0.0 {
            return Err("a time must be a finite non-negative number".into());
        }
        let ns = (v * mult).round();
        if ns > 1e18 {
            return Err("a time must be below 1e9 s".into());
        }
        Ok(SimTime(ns as u64))
    }
}

/// Split `"5e-3 s"` into the number and the unit: the unit is the trailing
/// run of letters, so a number may have an exponent (`5e-3s`, `1.5E6bps`).
fn split_unit(t: &str) -> (&str, &str) {
    let idx = t
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphabetic())
        .last()
        .map_or(t.len(), |(i, _)| i);
    (t[..idx].trim(), t[idx..].trim())
}

impl fmt::Display for SimTime {
    /// The largest unit that represents the value exactly: `15ms`, `1500us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            write!(f, "0s")
        } else if ns % 1_000_000_000 == 0 {
            write!(f, "{}s", ns / 1_000_000_000)
        } else if ns % 1_000_000 == 0 {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns % 1_000 == 0 {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

impl Serialize for SimTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0 + o.0)
    }
}
impl AddAssign for SimTime {
    fn add_assign(&mut self, o: SimTime) {
        self.0 += o.0;
    }
}
impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, o: SimTime) -> SimTime {
        SimTime(self.0 - o.0)
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

impl BitRate {
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Serialisation time of `bytes` at this rate, rounded up to the next nanosecond.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> SimTime {
        // bytes * 8e9 fits in u64 for bytes < 2.3e9; packets are at most 65 535 bytes.
        let num = bytes as u64 * 8_000_000_000;
        SimTime(num.div_ceil(self.0))
    }
    /// Packets of `bytes` per second at this rate.
    pub fn packets_per_sec(self, bytes: u32) -> f64 {
        self.0 as f64 / (8.0 * bytes as f64)
    }

    /// Parse `"<number><unit>"` with unit one of bps, Kbps, Mbps, Gbps.
    pub fn parse(s: &str) -> Result<BitRate, String> {
        let t = s.trim();
        let (num, unit) = split_unit(t);
        const MSG: &str = "expected a rate such as \"10Mbps\" (units bps, Kbps, Mbps, Gbps)";
        let mult: f64 = match unit {
            "bps" => 1.0,
            "Kbps" | "kbps" => 1e3,
            "Mbps" => 1e6,
            "Gbps" => 1e9,
            _ => return Err(MSG.into()),
        };
        let v: f64 = num.parse().map_err(|_| MSG.to_string())?;
        if !v.is_finite() || v <= 0.0 {
            return Err("a rate must be a positive number".into());
        }
        let bps = (v * mult).round();
        if !(1.0..=1e15).contains(&bps) {
            return Err("a rate must lie in [1bps, 1000000Gbps]".into());
        }
        Ok(BitRate(bps as u64))
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b % 1_000_000_000 == 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b % 1_000_000 == 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else if b % 1_000 == 0 {
            write!(f, "{}Kbps", b / 1_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

impl Serialize for BitRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Parse a byte size `"250KB"` (units B, KB = 1000 B, MB, GB, KiB = 1024 B, MiB, GiB).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_unit(t);
    const MSG: &str = "expected a size such as \"250KB\" (units B, KB, MB, GB, KiB, MiB, GiB)";
    let mult: f64 = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GB" => 1e9,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(MSG.into()),
    };
    let v: f64 = num.parse().map_err(|_| MSG.to_string())?;
    if !v.is_finite() || v < 0.0 {
        return Err("a size must be a non-negative number".into());
    }
    Ok((v * mult).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_from_a_double_round_as_round_does() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            -0.4,
            -3.0,
            f64::NAN,
            f64::INFINITY,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            1e30,
        ];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Whole nanoseconds, halves, and arbitrary fractions up to 1e12.
            let v = (x % 2_000_000_000_000) as f64 / 2.0;
            cases.extend([v, v + 0.25, (x >> 11) as f64 * 1e-4]);
        }
        for v in cases {
            assert_eq!(SimTime::from_nanos_f64(v).0, v.round() as u64, "{v}");
        }
    }

    #[test]
    fn time_round_trip() {
        for s in ["15ms", "200s", "1500us", "7ns", "0s"] {
            assert_eq!(SimTime::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(SimTime::parse("0.5s").unwrap(), SimTime::from_millis(500));
        assert!(SimTime::parse("-1s").is_err());
        assert!(SimTime::parse("10").is_err());
        assert!(SimTime::parse("10 min").is_err());
    }

    #[test]
    fn rate_and_tx_time() {
        let r = BitRate::parse("10Mbps").unwrap();
        assert_eq!(r.0, 10_000_000);
        assert_eq!(r.to_string(), "10Mbps");
        // 500 bytes at 10 Mb/s = 400 us exactly.
        assert_eq!(r.tx_time(500), SimTime::from_micros(400));
        // 40 bytes at 1.5 Mb/s = 213333.33 ns -> rounded up.
        assert_eq!(BitRate(1_500_000).tx_time(40), SimTime(213_334));
        assert!(BitRate::parse("0Mbps").is_err());
        assert!(BitRate::parse("-5Mbps").is_err());
        assert!(BitRate::parse("5MBps").is_err());
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("250KB").unwrap(), 250_000);
        assert_eq!(parse_bytes("1KiB").unwrap(), 1024);
        assert!(parse_bytes("12 parsecs").is_err());
    }
}
