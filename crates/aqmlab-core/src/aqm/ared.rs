//! Floyd, Gummadi and Shenker's Adaptive RED (`ared`).
//!
//! References (`003_b277268f444f7691.txt`, Wu Chen's thesis, citing Floyd et
//! al. 2001 as \[22\]):
//! - Section 3.2.2: the AIMD adaptation of `max_p` every `interval`, keeping
//!   the average queue in a target band half way between the thresholds;
//!   `max_p` restricted to [0.01, 0.5]; beta = 0.9.
//! - Section 5.2 and fig. 5.3 (the "Every interval" part, which is ARED's
//!   rule): target band [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th
//!   - min_th)], alpha = min(0.01, max_p / 4), beta = 0.9.
//! - Section 3.2.3: automatic mode, max_th = 3 min_th, min_th =
//!   max(5, d_ref C / 2) packets, w_q = 1 - exp(-1 / C), C the link capacity
//!   in packets per second and d_ref the target queuing delay.
//!
//! Every `interval` (default 0.5 s, the value of Floyd et al. and of the
//! thesis's section 5.5 experiments; section 5.2 mentions 5R instead):
//!
//! ```text
//! if avg > target_hi and max_p <= 0.5:  max_p = min(0.5,  max_p + min(0.01, max_p / 4))
//! if avg < target_lo and max_p >= 0.01: max_p = max(0.01, max_p * beta)
//! ```
//!
//! The conditions are Floyd's; the clamps are section 3.2.2's "restricted
//! within the range [0.01, 0.5]" (so `max_p` never leaves that range; at a
//! bound the rule does nothing and no change is reported). Between packets
//! the scheme is RED ([`super::red`], gentle by default as in Floyd et al.).
//!
//! Modes. `automatic` (the default when none of `min_th`, `max_th`, `w_q` is
//! given) sets those three from the link by section 3.2.3, with C =
//! rate / (8 mean_pkt_size) packets/s and d_ref = `target_delay`, and
//! recomputes them in `set_link` when the rate changes. Manual mode (`automatic
//! = false`, implied by giving any of the three) takes RED's keys and
//! defaults. Giving `automatic = true` together with any of the three, or
//! `target_delay` in manual mode, is an error: there is no silent precedence.

use super::ap_red::RedOptions;
use super::red::{Red, RedParams};
use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Lower bound of `max_p` (section 3.2.2).
pub const MAX_P_MIN: f64 = 0.01;
/// Upper bound of `max_p` (section 3.2.2).
pub const MAX_P_MAX: f64 = 0.5;
/// Largest additive step of `max_p` (fig. 5.3: alpha = min(0.01, max_p / 4)).
pub const ALPHA_MAX: f64 = 0.01;
/// Multiplicative decrease factor (section 3.2.2, fig. 5.3).
pub const DEFAULT_BETA: f64 = 0.9;
/// Adaptation interval (Floyd et al.; thesis section 5.5).
pub const DEFAULT_INTERVAL: SimTime = SimTime::from_millis(500);
/// Target queuing delay of automatic mode (Floyd et al.'s default; the
/// thesis gives d_ref without a value).
pub const DEFAULT_TARGET_DELAY: SimTime = SimTime::from_millis(5);
/// Smallest automatic `min_th`, packets (section 3.2.3).
pub const AUTO_MIN_TH_FLOOR: f64 = 5.0;
/// Lower and upper edges of the target band as fractions of max_th - min_th.
pub const TARGET_LO: f64 = 0.4;
pub const TARGET_HI: f64 = 0.6;

/// The range max_p is kept in (key `bounds`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AredBounds {
    /// Section 3.2.2: max_p clamped to [0.01, 0.5].
    #[default]
    Paper,
    /// ns-2's `red.cc`: a decrease happens while max_p > bottom and an
    /// increase while max_p < top (each step may pass the bound once, no
    /// clamp), with top = 0.5 and bottom = min(0.01, 80 000 / bandwidth in
    /// bit/s), "at most 1/W" for W the window of a 100 ms connection with
    /// 1000-byte packets; set once from the rate the link starts with (ns-2
    /// does not update it when the bandwidth changes).
    Ns2,
}

/// When the AIMD rule on max_p runs (key `adapt`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdaptClock {
    /// On a fixed clock, every `interval` (fig. 5.3's and Floyd et al.'s
    /// "Every interval seconds"), on the average at that instant.
    #[default]
    Interval,
    /// ns-2's `red.cc`: on an arrival, right after the average's update and
    /// before the drop decision, once more than `interval` has passed since
    /// max_p last changed (`now > lastset_ + interval_`, where `lastset_`
    /// moves only when the rule changes max_p). An average that leaves the
    /// target band is answered at its first arrival outside it, not at the
    /// next tick of a clock, and nothing adapts while no packet arrives.
    Arrival,
}

impl AdaptClock {
    /// Read the key `adapt` of an `[aqm]` table.
    pub fn decode(t: &mut Table) -> SpecResult<AdaptClock> {
        Ok(
            match t.choice("adapt", &["interval", "arrival"], Some("interval"))? {
                "arrival" => AdaptClock::Arrival,
                _ => AdaptClock::Interval,
            },
        )
    }
}

/// Parameters of `ared`. In automatic mode `min_th`, `max_th` and `w_q` are
/// `None` (computed from the link when the scheme is built); in manual mode
/// they are set and `target_delay` is `None`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AredParams {
    /// Minimum threshold, packets (mean-size packets in byte mode); manual mode only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// Maximum threshold, packets; manual mode only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// EWMA weight of eq. 2.3; manual mode only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w_q: Option<f64>,
    /// Initial max_p, in [0.01, 0.5] (default 0.1, RED's; no source gives
    /// ARED's initial value).
    pub max_p: f64,
    /// RED's other options (`gentle`, `mode`, `mean_pkt_size`, `ecn`,
    /// `above_max`, `mark_p`, byte mode's count and `wait`), as RED's keys;
    /// gentle on by default (Floyd et al.), `mean_pkt_size` also the packet
    /// of C in automatic mode.
    #[serde(flatten)]
    pub red: RedOptions,
    /// Section 3.2.3's automatic setting of min_th, max_th and w_q.
    pub automatic: bool,
    /// d_ref of section 3.2.3, automatic mode only (default 5 ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_delay: Option<SimTime>,
    /// Period of the max_p adaptation, > 0 (default 0.5 s).
    pub interval: SimTime,
    /// The range of max_p: section 3.2.2's or ns-2's.
    pub bounds: AredBounds,
    /// When the rule runs: every `interval`, or ns-2's way.
    pub adapt: AdaptClock,
    /// Multiplicative decrease factor, in (0, 1) (default 0.9).
    pub beta: f64,
}

impl Default for AredParams {
    fn default() -> Self {
        let red = RedParams::default();
        AredParams {
            min_th: None,
            max_th: None,
            w_q: None,
            max_p: red.max_p,
            red: RedOptions {
                gentle: true,
                ..RedOptions::of(&red)
            },
            automatic: true,
            target_delay: Some(DEFAULT_TARGET_DELAY),
            interval: DEFAULT_INTERVAL,
            beta: DEFAULT_BETA,
            bounds: AredBounds::Paper,
            adapt: AdaptClock::Interval,
        }
    }
}

/// Section 3.2.3's automatic thresholds and weight for a link of `c_pps`
/// packets per second: (min_th, max_th, w_q).
pub fn automatic_settings(target_delay: SimTime, c_pps: f64) -> (f64, f64, f64) {
    let min_th = (target_delay.as_secs_f64() * c_pps / 2.0).max(AUTO_MIN_TH_FLOOR);
    let w_q = -(-1.0 / c_pps).exp_m1(); // 1 - exp(-1/C), without cancellation
    (min_th, 3.0 * min_th, w_q)
}

/// The target band [lo, hi] of the average queue (section 5.2).
pub fn target_band(min_th: f64, max_th: f64) -> (f64, f64) {
    let span = max_th - min_th;
    (min_th + TARGET_LO * span, min_th + TARGET_HI * span)
}

impl AredParams {
    /// Read the keys of an `[aqm]` table with `kind = "ared"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<AredParams> {
        let d = AredParams::default();
        let manual_keys: Vec<&str> = ["min_th", "max_th", "w_q"]
            .into_iter()
            .filter(|k| t.has(k))
            .collect();
        let automatic = t.bool("automatic", manual_keys.is_empty())?;
        if automatic {
            if let Some(k) = manual_keys.first() {
                return Err(SpecError::new(
                    t.field_path(k),
                    "is set by automatic mode (section 3.2.3: min_th, max_th and w_q come \
                     from the link's capacity); remove it, or set automatic = false",
                ));
            }
        } else if t.has("target_delay") {
            return Err(SpecError::new(
                t.field_path("target_delay"),
                "only applies with automatic = true (it sets min_th, max_th and w_q); \
                 remove it, or remove min_th, max_th, w_q and automatic",
            ));
        }
        let red = RedParams::default();
        let (min_th, max_th, w_q, target_delay) = if automatic {
            let td = t.time("target_delay", DEFAULT_TARGET_DELAY)?;
            (None, None, None, Some(td))
        } else {
            (
                Some(t.f64("min_th", red.min_th)?),
                Some(t.f64("max_th", red.max_th)?),
                Some(t.f64("w_q", red.w_q)?),
                None,
            )
        };
        let p = AredParams {
            min_th,
            max_th,
            w_q,
            max_p: t.f64("max_p", d.max_p)?,
            red: RedOptions::decode(
                t,
                &RedOptions {
                    mean_pkt_size: default_pkt_size,
                    ..d.red
                },
            )?,
            automatic,
            target_delay,
            interval: t.time("interval", d.interval)?,
            beta: t.f64("beta", d.beta)?,
            bounds: match t.choice("bounds", &["paper", "ns2"], Some("paper"))? {
                "ns2" => AredBounds::Ns2,
                _ => AredBounds::Paper,
            },
            adapt: AdaptClock::decode(t)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        let manual = [self.min_th, self.max_th, self.w_q];
        if self.automatic {
            if manual.iter().any(Option::is_some) {
                return Err(SpecError::new(
                    f("automatic"),
                    "automatic mode sets min_th, max_th and w_q; do not give them",
                ));
            }
            match self.target_delay {
                Some(td) if td > SimTime::ZERO => {}
                Some(td) => {
                    return Err(SpecError::new(
                        f("target_delay"),
                        format!("{td} is not allowed; give a delay > 0"),
                    ))
                }
                None => return Err(SpecError::new(f("target_delay"), "missing")),
            }
        } else if manual.iter().any(Option::is_none) {
            return Err(SpecError::new(
                f("automatic"),
                "manual mode needs min_th, max_th and w_q",
            ));
        }
        // The RED part, with placeholders for the automatic values.
        self.red_params(1.0).validate(path)?;
        check_range(&f("max_p"), self.max_p, MAX_P_MIN, false, MAX_P_MAX)?;
        if self.interval == SimTime::ZERO {
            return Err(SpecError::new(
                f("interval"),
                "0s is not allowed; give an interval > 0",
            ));
        }
        check_range(&f("beta"), self.beta, 0.0, true, 1.0)?;
        if self.beta == 1.0 {
            return Err(SpecError::new(
                f("beta"),
                "1 is not allowed; the decrease factor must be in (0, 1)",
            ));
        }
        Ok(())
    }

    /// The RED parameters for a link of `c_pps` packets per second (only
    /// automatic mode uses it).
    pub fn red_params(&self, c_pps: f64) -> RedParams {
        let (min_th, max_th, w_q) = match (self.min_th, self.max_th, self.w_q) {
            (Some(a), Some(b), Some(w)) => (a, b, w),
            _ => automatic_settings(self.target_delay.unwrap_or(DEFAULT_TARGET_DELAY), c_pps),
        };
        self.red.red_params(min_th, max_th, self.max_p, w_q)
    }
}

/// The running scheme: RED plus the AIMD adaptation of max_p.
#[derive(Clone, Debug)]
pub struct Ared {
    red: Red,
    automatic: bool,
    target_delay: SimTime,
    interval: SimTime,
    beta: f64,
    /// Capacity the automatic settings were computed for, packets/s.
    c_pps: f64,
    /// A step of max_p or new automatic settings since the last `take_changed`.
    changed: bool,
    bounds: AredBounds,
    /// ns-2's `bottom_` for the starting link (`bounds = "ns2"`).
    ns2_bottom: f64,
    clock: AdaptClock,
    /// When the rule last changed max_p (ns-2's `lastset_`; `adapt = "arrival"`).
    last_set: SimTime,
}

impl Ared {
    pub fn new(p: AredParams, link: LinkInfo) -> Ared {
        let c_pps = link.rate.packets_per_sec(p.red.mean_pkt_size);
        Ared {
            red: Red::new(p.red_params(c_pps), link),
            automatic: p.automatic,
            target_delay: p.target_delay.unwrap_or(DEFAULT_TARGET_DELAY),
            interval: p.interval,
            beta: p.beta,
            c_pps,
            changed: false,
            bounds: p.bounds,
            ns2_bottom: MAX_P_MIN.min(80_000.0 / link.rate.bps() as f64),
            clock: p.adapt,
            last_set: SimTime::ZERO,
        }
    }

    /// The RED parameters in force (thresholds, w_q and the current max_p).
    pub fn red_params(&self) -> &RedParams {
        self.red.params()
    }

    /// One adaptation step (fig. 5.3's "Every interval") for average `avg`;
    /// returns whether max_p changed.
    fn adapt(&mut self, avg: f64) -> bool {
        let beta = self.beta;
        let p = self.red.params_mut();
        let (lo, hi) = target_band(p.min_th, p.max_th);
        let old = p.max_p;
        match self.bounds {
            AredBounds::Paper => {
                if avg > hi && p.max_p <= MAX_P_MAX {
                    let alpha = ALPHA_MAX.min(p.max_p / 4.0);
                    p.max_p = (p.max_p + alpha).min(MAX_P_MAX);
                } else if avg < lo && p.max_p >= MAX_P_MIN {
                    p.max_p = (p.max_p * beta).max(MAX_P_MIN);
                }
            }
            // ns-2's updateMaxP: the decrease is tested first.
            AredBounds::Ns2 => {
                if avg < lo && p.max_p > self.ns2_bottom {
                    p.max_p *= beta;
                } else if avg > hi && p.max_p < MAX_P_MAX {
                    p.max_p += ALPHA_MAX.min(p.max_p / 4.0);
                }
            }
        }
        let stepped = p.max_p != old;
        self.changed |= stepped;
        stepped
    }
}

impl Aqm for Ared {
    super::red::delegate_to_red!(but_enqueue);

    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        if self.clock == AdaptClock::Interval {
            return self.red.on_enqueue(now, pkt, q, rng);
        }
        let idle = self.red.idle_since();
        self.red.update_average(now, q);
        if now > self.last_set + self.interval && self.adapt(self.red.avg()) {
            self.last_set = now;
        }
        self.red.arrival_verdict(now, pkt, q, rng, idle)
    }

    fn tick_interval(&self) -> Option<SimTime> {
        match self.clock {
            AdaptClock::Interval => Some(self.interval),
            AdaptClock::Arrival => None,
        }
    }

    fn on_tick(&mut self, _now: SimTime, _q: QueueLen) {
        self.adapt(self.red.avg());
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.red.report(out);
        out("avg", self.red.avg());
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        self.red.set_link(now, link);
        let p = self.red.params_mut();
        let c_pps = link.rate.packets_per_sec(p.mean_pkt_size);
        if self.automatic && c_pps != self.c_pps {
            self.c_pps = c_pps;
            (p.min_th, p.max_th, p.w_q) = automatic_settings(self.target_delay, c_pps);
            self.changed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Value;
    use crate::units::BitRate;

    fn link(mbps: u64) -> LinkInfo {
        LinkInfo::new(BitRate(mbps * 1_000_000), 500)
    }
    fn manual() -> AredParams {
        AredParams {
            min_th: Some(20.0),
            max_th: Some(60.0),
            w_q: Some(0.002),
            automatic: false,
            target_delay: None,
            red: RedOptions {
                mean_pkt_size: 500,
                ..AredParams::default().red
            },
            ..AredParams::default()
        }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn automatic_mode_section_3_2_3() {
        let p = AredParams {
            red: RedOptions {
                mean_pkt_size: 500,
                ..AredParams::default().red
            },
            ..AredParams::default()
        };
        // 10 Mb/s, 500 B: C = 10e6 / 4000 = 2500 packets/s.
        // min_th = max(5, 0.005 * 2500 / 2) = 6.25, max_th = 18.75,
        // w_q = 1 - exp(-1/2500) = 3.99920021e-4.
        let a = Ared::new(p.clone(), link(10));
        let r = a.red_params();
        assert!(close(r.min_th, 6.25) && close(r.max_th, 18.75));
        assert!((r.w_q - 3.999_200_106_6e-4).abs() < 1e-12, "{}", r.w_q);
        // 1 Mb/s: C = 250, d_ref C / 2 = 0.625 < 5: min_th = 5, max_th = 15,
        // w_q = 1 - exp(-0.004) = 3.99201065e-3.
        let a = Ared::new(p.clone(), link(1));
        let r = a.red_params();
        assert!(close(r.min_th, 5.0) && close(r.max_th, 15.0));
        assert!((r.w_q - 3.992_010_656e-3).abs() < 1e-11, "{}", r.w_q);
        // target_delay 20 ms at 10 Mb/s: min_th = 0.02 * 2500 / 2 = 25, max_th = 75.
        let p = AredParams {
            target_delay: Some(SimTime::from_millis(20)),
            ..p
        };
        let r = Ared::new(p, link(10)).red_params().clone();
        assert!(close(r.min_th, 25.0) && close(r.max_th, 75.0));
    }

    #[test]
    fn target_band_section_5_2() {
        // 20 + 0.4 * 40 = 36, 20 + 0.6 * 40 = 44.
        let (lo, hi) = target_band(20.0, 60.0);
        assert!(close(lo, 36.0) && close(hi, 44.0));
    }

    /// ns-2's range: bottom = min(0.01, 80 000 / bandwidth), no clamp, each
    /// bound passed at most once; the paper's keeps [0.01, 0.5].
    #[test]
    fn ns2_bounds() {
        let ns2 = AredParams {
            bounds: AredBounds::Ns2,
            ..manual()
        };
        // Decreases from `from` through `steps`, then none.
        let down = |a: &mut Ared, from: f64, steps: &[f64]| {
            a.red.params_mut().max_p = from;
            for &want in steps {
                assert!(a.adapt(10.0));
                let got = a.red_params().max_p;
                assert!(close(got, want), "{got} (want {want})");
            }
            assert!(!a.adapt(10.0));
        };
        // 10 Mb/s: bottom = 0.008.
        down(
            &mut Ared::new(ns2.clone(), link(10)),
            0.0105,
            &[0.00945, 0.008_505, 0.007_654_5],
        );
        // 50 Mb/s: bottom = 0.0016.
        let mut a = Ared::new(ns2, link(50));
        down(&mut a, 0.002, &[0.0018, 0.00162, 0.001_458]);
        // Top: 0.495 + 0.01 = 0.505 (not clamped), then no change.
        a.red.params_mut().max_p = 0.495;
        assert!(a.adapt(50.0));
        assert!(close(a.red_params().max_p, 0.505));
        assert!(!a.adapt(50.0));
        // The key.
        assert_eq!(decode("bounds = \"ns2\"").unwrap().bounds, AredBounds::Ns2);
        assert_eq!(decode("").unwrap().bounds, AredBounds::Paper);
        let e = decode("bounds = \"linux\"").unwrap_err().to_string();
        assert!(e.contains("aqm.bounds") && e.contains("ns2"), "{e}");
    }

    /// `adapt = "arrival"` (ns-2): no clock; the rule runs on an arrival,
    /// after the average's update, once more than `interval` has passed
    /// since max_p last changed, and an arrival inside the band does not
    /// restart that wait.
    #[test]
    fn adapt_on_arrival_as_ns2() {
        let p = AredParams {
            adapt: AdaptClock::Arrival,
            w_q: Some(1.0), // the average is the queue the arrival finds
            ..manual()
        };
        let mut a = Ared::new(p, link(10));
        assert_eq!(a.tick_interval(), None);
        let mut rng = Rng::new(1, crate::rng::Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        let mut arrive = |a: &mut Ared, ms: u64, pkts: u32| {
            let q = QueueLen {
                pkts,
                bytes: 500 * pkts as u64,
            };
            a.on_enqueue(SimTime::from_millis(ms), &pkt, q, &mut rng);
            a.red_params().max_p
        };
        // Not before 0.5 s; at the first arrival after it, above the band
        // (50 > 44): 0.1 + 0.01.
        assert!(close(arrive(&mut a, 400, 50), 0.1));
        assert!(close(arrive(&mut a, 501, 50), 0.11));
        // Not again until 0.5 s after that change.
        assert!(close(arrive(&mut a, 1000, 50), 0.11));
        assert!(close(arrive(&mut a, 1002, 50), 0.12));
        // Inside the band: no change, and the wait is not restarted, so
        // the first arrival below it (30 < 36) steps at once.
        assert!(close(arrive(&mut a, 1600, 40), 0.12));
        assert!(close(arrive(&mut a, 1601, 30), 0.108));
        // The key.
        assert_eq!(
            decode("adapt = \"arrival\"").unwrap().adapt,
            AdaptClock::Arrival
        );
        assert_eq!(decode("").unwrap().adapt, AdaptClock::Interval);
        let e = decode("adapt = \"tick\"").unwrap_err().to_string();
        assert!(e.contains("aqm.adapt") && e.contains("arrival"), "{e}");
    }

    /// Fig. 5.3's AIMD rule with thresholds 20 / 60 (band [36, 44]).
    #[test]
    fn aimd_steps() {
        let mut a = Ared::new(manual(), link(10));
        // Above the band: alpha = min(0.01, 0.1 / 4) = 0.01; 0.1 + 0.01 = 0.11.
        assert!(a.adapt(50.0));
        assert!(close(a.red_params().max_p, 0.11));
        // Inside the band: no change.
        assert!(!a.adapt(40.0));
        assert!(!a.adapt(36.0) && !a.adapt(44.0));
        // Below the band: 0.11 * 0.9 = 0.099.
        assert!(a.adapt(30.0));
        assert!(close(a.red_params().max_p, 0.099));
        // Small max_p: alpha = 0.02 / 4 = 0.005; 0.02 + 0.005 = 0.025.
        a.red.params_mut().max_p = 0.02;
        a.adapt(50.0);
        assert!(close(a.red_params().max_p, 0.025));
        // Lower bound: 0.0105 * 0.9 = 0.00945, clamped to 0.01; then no change.
        a.red.params_mut().max_p = 0.0105;
        assert!(a.adapt(10.0));
        assert!(close(a.red_params().max_p, 0.01));
        assert!(!a.adapt(10.0));
        // Upper bound: 0.495 + 0.01 = 0.505, clamped to 0.5; then no change.
        a.red.params_mut().max_p = 0.495;
        assert!(a.adapt(50.0));
        assert!(close(a.red_params().max_p, 0.5));
        assert!(!a.adapt(50.0));
    }

    #[test]
    fn ticks_adapt_and_report() {
        let mut a = Ared::new(manual(), link(10));
        assert_eq!(a.tick_interval(), Some(SimTime::from_millis(500)));
        // The average starts at 0, below the band: 0.1 * 0.9 = 0.09.
        a.on_tick(SimTime::from_millis(500), QueueLen::default());
        assert!(close(a.red_params().max_p, 0.09));
        assert!(a.take_changed());
        assert!(!a.take_changed());
        let mut names = Vec::new();
        Aqm::params(&a, &mut |k, _| names.push(k));
        assert_eq!(names, ["max_p", "min_th", "max_th", "w_q", "avg"]);
    }

    #[test]
    fn set_link_recomputes_automatic_settings() {
        let p = AredParams {
            red: RedOptions {
                mean_pkt_size: 500,
                ..AredParams::default().red
            },
            ..AredParams::default()
        };
        let mut a = Ared::new(p, link(10));
        // 20 Mb/s: C = 5000, min_th = 0.005 * 5000 / 2 = 12.5, max_th = 37.5.
        a.set_link(SimTime::from_secs(1), &link(20));
        assert!(close(a.red_params().min_th, 12.5));
        assert!(close(a.red_params().max_th, 37.5));
        assert!(a.take_changed());
        // Same rate again: nothing to do.
        a.set_link(SimTime::from_secs(2), &link(20));
        assert!(!a.take_changed());
        // Manual mode keeps its thresholds.
        let mut m = Ared::new(manual(), link(10));
        m.set_link(SimTime::from_secs(1), &link(20));
        assert!(close(m.red_params().min_th, 20.0));
        assert!(!m.take_changed());
    }

    fn decode(text: &str) -> SpecResult<AredParams> {
        let v: Value = toml::from_str(text).unwrap();
        let mut t = Table::new(v, "aqm").unwrap();
        let p = AredParams::decode(&mut t, 500)?;
        t.finish()?;
        Ok(p)
    }

    #[test]
    fn decode_modes_and_errors() {
        let p = decode("").unwrap();
        assert!(p.automatic);
        assert_eq!(p.target_delay, Some(SimTime::from_millis(5)));
        assert_eq!((p.min_th, p.max_th, p.w_q), (None, None, None));
        assert_eq!(p.red.mean_pkt_size, 500);
        let p = decode("min_th = 20\nmax_th = 60").unwrap();
        assert!(!p.automatic);
        assert_eq!(
            (p.min_th, p.max_th, p.w_q),
            (Some(20.0), Some(60.0), Some(0.002))
        );
        let p = decode("automatic = false").unwrap();
        assert_eq!((p.min_th, p.max_th), (Some(5.0), Some(15.0)));
        let p = decode("target_delay = \"10ms\"\ninterval = \"1s\"\nbeta = 0.8").unwrap();
        assert_eq!(p.target_delay, Some(SimTime::from_millis(10)));
        assert_eq!((p.interval, p.beta), (SimTime::from_secs(1), 0.8));
        // Conflicts name the offending key.
        let e = decode("automatic = true\nmax_th = 60").unwrap_err();
        assert_eq!(e.path, "aqm.max_th");
        assert!(e.msg.contains("automatic"), "{}", e.msg);
        let e = decode("w_q = 0.001\ntarget_delay = \"5ms\"").unwrap_err();
        assert_eq!(e.path, "aqm.target_delay");
        // Ranges.
        assert_eq!(decode("max_p = 0.6").unwrap_err().path, "aqm.max_p");
        assert_eq!(decode("max_p = 0.001").unwrap_err().path, "aqm.max_p");
        assert_eq!(decode("beta = 1").unwrap_err().path, "aqm.beta");
        assert_eq!(decode("beta = 0").unwrap_err().path, "aqm.beta");
        assert_eq!(
            decode("interval = \"0s\"").unwrap_err().path,
            "aqm.interval"
        );
        assert_eq!(
            decode("target_delay = \"0ms\"").unwrap_err().path,
            "aqm.target_delay"
        );
        assert_eq!(
            decode("min_th = 60\nmax_th = 20").unwrap_err().path,
            "aqm.min_th"
        );
        assert_eq!(decode("w_q = 2").unwrap_err().path, "aqm.w_q");
    }
}
