//! Auto-Tuning RED (`autotune-red`).
//!
//! Reference: `003_b277268f444f7691.txt` (Wu Chen's thesis, citing the
//! algorithm's authors as \[52\]), section 3.3:
//! - Section 3.3.2 (fixed parameters from the round-trip time R, seconds,
//!   and the capacity C, packets/s): w_q = 1 - exp(-1 / (n R C)) with n = 10;
//!   max_th - min_th >= 0.21 R C; with max_th = 3 min_th,
//!   min_th >= 0.13 R C. We take the bounds' values: min_th = 0.13 R C,
//!   max_th = 3 min_th (so max_th - min_th = 0.26 R C >= 0.21 R C).
//! - Section 3.3.3: p_max = (16/3) (N / (R C))^2 at the target queue
//!   q_ref = (min_th + max_th) / 2 (eq. 3.1, 3.2): the right max_p grows
//!   with the number of flows N, hence the adaptation.
//! - Section 3.3.4, eq. 3.4 and 3.5, fig. 3.2: every `interval` (4R),
//!
//! ```text
//! delta = 2 (avg - q_ref) / (max_th - min_th) * max_p          (eq. 3.4)
//! if avg > q_ref and max_p < 0.5:  max_p = min(0.5,  max_p + epsilon zeta delta)
//! if avg < q_ref and max_p > 0.01: max_p = max(0.01, max_p + epsilon zeta delta)
//! ```
//!
//!   with epsilon = 1.5 (acceleration factor) and zeta = 0.1 (the fraction
//!   of the theoretical settling time 40R that makes the interval 4R).
//!   delta p_max is therefore not a constant step: it is the correction that
//!   would move max_p to the value that puts the current average at q_ref
//!   (eq. 3.3, 2 (avg - min_th) / (max_th - min_th) max_p - max_p, which is
//!   algebraically the same as eq. 3.4), and eq. 3.5 applies a fraction
//!   epsilon zeta = 0.15 of it per interval.
//!
//! R and C come from the link: C = rate / (8 mean_pkt_size) packets/s; R is
//! the `rtt` key if given, else the link's mean base round-trip time of its
//! flows (`LinkInfo::rtt`), else (no flows known) 100 ms, the default
//! round-trip time the thesis quotes for ARED (section 3.2.3). Explicit
//! `min_th` + `max_th` (both or neither), `w_q` or `interval` keys take
//! precedence over the rules; the rules are recomputed in `set_link`.
//! Between intervals the scheme is RED ([`super::red`]).

use super::ap_red::RedOptions;
use super::red::{Red, RedParams};
use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Lower bound of max_p (fig. 3.2).
pub const MAX_P_MIN: f64 = 0.01;
/// Upper bound of max_p (fig. 3.2).
pub const MAX_P_MAX: f64 = 0.5;
/// Acceleration factor epsilon (fig. 3.2).
pub const DEFAULT_EPSILON: f64 = 1.5;
/// Fraction zeta of the theoretical settling time (fig. 3.2).
pub const DEFAULT_ZETA: f64 = 0.1;
/// The adaptation interval in round-trip times (fig. 3.2: 4R).
pub const INTERVAL_RTTS: f64 = 4.0;
/// min_th in units of R C (section 3.3.2: min_th >= 0.13 R C).
pub const MIN_TH_PER_RC: f64 = 0.13;
/// max_th / min_th (section 3.3.2's "common guideline").
pub const MAX_TH_RATIO: f64 = 3.0;
/// Time constant of the average in round-trip times (section 3.3.2: n = 10).
pub const N_RTTS: f64 = 10.0;
/// R when neither the `rtt` key nor the link knows it (section 3.2.3's default RTT).
pub const FALLBACK_RTT: SimTime = SimTime::from_millis(100);

/// Parameters of `autotune-red`. `None` fields are computed from R and C.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AutotuneRedParams {
    /// Minimum threshold, packets; default 0.13 R C (section 3.3.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// Maximum threshold, packets; default 3 min_th (section 3.3.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// EWMA weight; default 1 - exp(-1 / (10 R C)) (section 3.3.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w_q: Option<f64>,
    /// Initial max_p, in [0.01, 0.5] (default 0.1, RED's; the thesis gives none).
    pub max_p: f64,
    /// RED's other options (`gentle`, `mode`, `mean_pkt_size`, `ecn`,
    /// `above_max`, `mark_p`, byte mode's count and `wait`), as RED's keys
    /// and defaults; `mean_pkt_size` is also the packet of C.
    #[serde(flatten)]
    pub red: RedOptions,
    /// R, overriding the link's mean base RTT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<SimTime>,
    /// Adaptation period; default 4R (fig. 3.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<SimTime>,
    /// Acceleration factor epsilon, > 0 (default 1.5).
    pub epsilon: f64,
    /// Settling-time fraction zeta, in (0, 1] (default 0.1).
    pub zeta: f64,
}

impl Default for AutotuneRedParams {
    fn default() -> Self {
        let red = RedParams::default();
        AutotuneRedParams {
            min_th: None,
            max_th: None,
            w_q: None,
            max_p: red.max_p,
            red: RedOptions::of(&red),
            rtt: None,
            interval: None,
            epsilon: DEFAULT_EPSILON,
            zeta: DEFAULT_ZETA,
        }
    }
}

impl AutotuneRedParams {
    /// Read the keys of an `[aqm]` table with `kind = "autotune-red"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<AutotuneRedParams> {
        let d = AutotuneRedParams::default();
        let p = AutotuneRedParams {
            min_th: t.opt_f64("min_th")?,
            max_th: t.opt_f64("max_th")?,
            w_q: t.opt_f64("w_q")?,
            max_p: t.f64("max_p", d.max_p)?,
            red: RedOptions::decode(
                t,
                &RedOptions {
                    mean_pkt_size: default_pkt_size,
                    ..d.red
                },
            )?,
            rtt: t.opt_time("rtt")?,
            interval: t.opt_time("interval")?,
            epsilon: t.f64("epsilon", d.epsilon)?,
            zeta: t.f64("zeta", d.zeta)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        match (self.min_th, self.max_th) {
            (Some(_), None) | (None, Some(_)) => {
                let k = if self.min_th.is_some() {
                    "min_th"
                } else {
                    "max_th"
                };
                return Err(SpecError::new(
                    f(k),
                    "give both min_th and max_th, or neither (then min_th = 0.13 R C and \
                     max_th = 3 min_th, section 3.3.2)",
                ));
            }
            _ => {}
        }
        // The RED part, with placeholders for the values from R and C.
        self.red_params(1.0, 1.0).validate(path)?;
        check_range(&f("max_p"), self.max_p, MAX_P_MIN, false, MAX_P_MAX)?;
        for (k, v) in [("rtt", self.rtt), ("interval", self.interval)] {
            if v == Some(SimTime::ZERO) {
                return Err(SpecError::new(f(k), "0s is not allowed; give a time > 0"));
            }
        }
        check_range(&f("epsilon"), self.epsilon, 0.0, true, 100.0)?;
        check_range(&f("zeta"), self.zeta, 0.0, true, 1.0)?;
        Ok(())
    }

    /// The round-trip time R used for `link`, seconds.
    pub fn rtt_s(&self, link: &LinkInfo) -> f64 {
        let r = match self.rtt {
            Some(r) => r,
            None if link.rtt > SimTime::ZERO => link.rtt,
            None => FALLBACK_RTT,
        };
        r.as_secs_f64()
    }

    /// The adaptation interval for round-trip time `r_s` seconds.
    pub fn interval_for(&self, r_s: f64) -> SimTime {
        self.interval
            .unwrap_or_else(|| SimTime::from_secs_f64(INTERVAL_RTTS * r_s).max(SimTime(1)))
    }

    /// The RED parameters for round-trip time `r_s` (s) and capacity `c_pps`
    /// (packets/s), section 3.3.2 filling what is not given.
    pub fn red_params(&self, r_s: f64, c_pps: f64) -> RedParams {
        let rc = r_s * c_pps;
        let (min_th, max_th) = match (self.min_th, self.max_th) {
            (Some(a), Some(b)) => (a, b),
            _ => (MIN_TH_PER_RC * rc, MAX_TH_RATIO * MIN_TH_PER_RC * rc),
        };
        // 1 - exp(-1 / (n R C)), without cancellation.
        let w_q = self.w_q.unwrap_or_else(|| -(-1.0 / (N_RTTS * rc)).exp_m1());
        self.red.red_params(min_th, max_th, self.max_p, w_q)
    }
}

/// The running scheme: RED plus fig. 3.2's adaptation of max_p.
#[derive(Clone, Debug)]
pub struct AutotuneRed {
    red: Red,
    p: AutotuneRedParams,
    interval: SimTime,
    /// A step of max_p or new thresholds since the last `take_changed`.
    changed: bool,
}

impl AutotuneRed {
    pub fn new(p: AutotuneRedParams, link: LinkInfo) -> AutotuneRed {
        let r_s = p.rtt_s(&link);
        let c_pps = link.rate.packets_per_sec(p.red.mean_pkt_size);
        AutotuneRed {
            red: Red::new(p.red_params(r_s, c_pps), link),
            interval: p.interval_for(r_s),
            p,
            changed: false,
        }
    }

    /// The RED parameters in force (thresholds, w_q and the current max_p).
    pub fn red_params(&self) -> &RedParams {
        self.red.params()
    }

    /// One step of fig. 3.2 for average `avg`; returns whether max_p changed.
    fn adapt(&mut self, avg: f64) -> bool {
        let step = self.p.epsilon * self.p.zeta;
        let p = self.red.params_mut();
        let q_ref = 0.5 * (p.min_th + p.max_th);
        let delta = 2.0 * (avg - q_ref) / (p.max_th - p.min_th) * p.max_p; // eq. 3.4
        let old = p.max_p;
        if avg > q_ref && p.max_p < MAX_P_MAX {
            p.max_p = (p.max_p + step * delta).min(MAX_P_MAX); // eq. 3.5
        } else if avg < q_ref && p.max_p > MAX_P_MIN {
            p.max_p = (p.max_p + step * delta).max(MAX_P_MIN);
        }
        let stepped = p.max_p != old;
        self.changed |= stepped;
        stepped
    }
}

impl Aqm for AutotuneRed {
    super::red::delegate_to_red!();

    fn tick_interval(&self) -> Option<SimTime> {
        Some(self.interval)
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

    /// Recompute the rules from the new R and C; max_p carries over.
    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        self.red.set_link(now, link);
        let r_s = self.p.rtt_s(link);
        let c_pps = link.rate.packets_per_sec(self.p.red.mean_pkt_size);
        let mut new = self.p.red_params(r_s, c_pps);
        let cur = self.red.params_mut();
        new.max_p = cur.max_p;
        if new != *cur {
            *cur = new;
            self.changed = true;
        }
        self.interval = self.p.interval_for(r_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Value;
    use crate::units::BitRate;

    /// 10 Mb/s, 500 B packets (C = 2500 packets/s), flows with R = 100 ms.
    fn link() -> LinkInfo {
        LinkInfo {
            rtt: SimTime::from_millis(100),
            ..LinkInfo::new(BitRate(10_000_000), 500)
        }
    }
    fn params() -> AutotuneRedParams {
        AutotuneRedParams {
            red: RedOptions {
                mean_pkt_size: 500,
                ..AutotuneRedParams::default().red
            },
            ..AutotuneRedParams::default()
        }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn fixed_parameters_section_3_3_2() {
        let a = AutotuneRed::new(params(), link());
        let r = a.red_params();
        // R C = 0.1 * 2500 = 250: min_th = 0.13 * 250 = 32.5, max_th = 97.5
        // (max_th - min_th = 65 = 0.26 R C >= 0.21 R C = 52.5);
        // w_q = 1 - exp(-1 / (10 * 250)) = 3.99920011e-4; interval 4R = 0.4 s.
        assert!(close(r.min_th, 32.5) && close(r.max_th, 97.5));
        assert!((r.w_q - 3.999_200_106_6e-4).abs() < 1e-12, "{}", r.w_q);
        assert_eq!(a.tick_interval(), Some(SimTime::from_millis(400)));
        // The rtt key overrides the link: R = 200 ms gives min_th = 65, max_th = 195,
        // w_q = 1 - exp(-1/5000) = 1.99980001e-4, interval 0.8 s.
        let p = AutotuneRedParams {
            rtt: Some(SimTime::from_millis(200)),
            ..params()
        };
        let a = AutotuneRed::new(p, link());
        assert!(close(a.red_params().min_th, 65.0) && close(a.red_params().max_th, 195.0));
        assert!((a.red_params().w_q - 1.999_800_013_3e-4).abs() < 1e-12);
        assert_eq!(a.tick_interval(), Some(SimTime::from_millis(800)));
        // No RTT known: 100 ms.
        let a = AutotuneRed::new(params(), LinkInfo::new(BitRate(10_000_000), 500));
        assert!(close(a.red_params().min_th, 32.5));
    }

    /// Eq. 3.4 / 3.5 with thresholds 32.5 / 97.5 (q_ref = 65, span 65).
    #[test]
    fn eq_3_4_3_5_steps() {
        let mut a = AutotuneRed::new(params(), link());
        // avg 81.25: delta = 2 * 16.25 / 65 * 0.1 = 0.05; step 1.5 * 0.1 * 0.05
        // = 0.0075; max_p = 0.1075.
        assert!(a.adapt(81.25));
        assert!(close(a.red_params().max_p, 0.1075));
        // avg 48.75: delta = 2 * -16.25 / 65 * 0.1075 = -0.05375;
        // max_p = 0.1075 - 0.15 * 0.05375 = 0.0994375.
        assert!(a.adapt(48.75));
        assert!(close(a.red_params().max_p, 0.099_437_5));
        // At q_ref: no change.
        assert!(!a.adapt(65.0));
        // Far above (avg 2 max_th = 195): delta = 2 * 130 / 65 * 0.4 = 1.6;
        // 0.4 + 0.24 = 0.64, clamped to 0.5; then at 0.5 no change.
        a.red.params_mut().max_p = 0.4;
        assert!(a.adapt(195.0));
        assert!(close(a.red_params().max_p, 0.5));
        assert!(!a.adapt(195.0));
        // Empty queue: delta = 2 * -65 / 65 * 0.011 = -0.022;
        // 0.011 - 0.0033 = 0.0077, clamped to 0.01; then no change.
        a.red.params_mut().max_p = 0.011;
        assert!(a.adapt(0.0));
        assert!(close(a.red_params().max_p, 0.01));
        assert!(!a.adapt(0.0));
    }

    #[test]
    fn ticks_report_changes() {
        let mut a = AutotuneRed::new(params(), link());
        // avg 0 at the first tick: delta = -2 * 65 / 65 * 0.1 = -0.2; 0.1 - 0.03 = 0.07.
        a.on_tick(SimTime::from_millis(400), QueueLen::default());
        assert!(close(a.red_params().max_p, 0.07));
        assert!(a.take_changed());
        assert!(!a.take_changed());
        let mut names = Vec::new();
        Aqm::params(&a, &mut |k, _| names.push(k));
        assert_eq!(names, ["max_p", "min_th", "max_th", "w_q", "avg"]);
    }

    #[test]
    fn set_link_recomputes_rules() {
        let mut a = AutotuneRed::new(params(), link());
        a.adapt(81.25); // max_p 0.1075, kept across the change
        a.take_changed();
        // 20 Mb/s, R = 150 ms: R C = 0.15 * 5000 = 750: min_th = 97.5, max_th = 292.5,
        // interval 0.6 s.
        let l2 = LinkInfo {
            rtt: SimTime::from_millis(150),
            ..LinkInfo::new(BitRate(20_000_000), 500)
        };
        a.set_link(SimTime::from_secs(1), &l2);
        assert!(close(a.red_params().min_th, 97.5) && close(a.red_params().max_th, 292.5));
        assert!(close(a.red_params().max_p, 0.1075));
        assert_eq!(a.tick_interval(), Some(SimTime::from_millis(600)));
        assert!(a.take_changed());
        a.set_link(SimTime::from_secs(2), &l2);
        assert!(!a.take_changed());
        // Explicit thresholds stay.
        let p = AutotuneRedParams {
            min_th: Some(20.0),
            max_th: Some(60.0),
            ..params()
        };
        let mut b = AutotuneRed::new(p, link());
        b.set_link(SimTime::from_secs(1), &l2);
        assert!(close(b.red_params().min_th, 20.0));
    }

    fn decode(text: &str) -> SpecResult<AutotuneRedParams> {
        let v: Value = toml::from_str(text).unwrap();
        let mut t = Table::new(v, "aqm").unwrap();
        let p = AutotuneRedParams::decode(&mut t, 500)?;
        t.finish()?;
        Ok(p)
    }

    #[test]
    fn decode_defaults_and_errors() {
        let p = decode("").unwrap();
        assert_eq!(
            (p.min_th, p.max_th, p.w_q, p.rtt, p.interval),
            (None, None, None, None, None)
        );
        assert_eq!(
            (p.epsilon, p.zeta, p.max_p, p.red.mean_pkt_size),
            (1.5, 0.1, 0.1, 500)
        );
        let p = decode("rtt = \"200ms\"\nmin_th = 20\nmax_th = 60\nw_q = 0.001").unwrap();
        assert_eq!(p.rtt, Some(SimTime::from_millis(200)));
        assert_eq!(
            (p.min_th, p.max_th, p.w_q),
            (Some(20.0), Some(60.0), Some(0.001))
        );
        assert_eq!(decode("min_th = 20").unwrap_err().path, "aqm.min_th");
        assert_eq!(decode("max_th = 20").unwrap_err().path, "aqm.max_th");
        assert_eq!(
            decode("min_th = 30\nmax_th = 20").unwrap_err().path,
            "aqm.min_th"
        );
        assert_eq!(decode("w_q = 0").unwrap_err().path, "aqm.w_q");
        assert_eq!(decode("max_p = 0.7").unwrap_err().path, "aqm.max_p");
        assert_eq!(decode("rtt = \"0s\"").unwrap_err().path, "aqm.rtt");
        assert_eq!(
            decode("interval = \"0s\"").unwrap_err().path,
            "aqm.interval"
        );
        assert_eq!(decode("epsilon = 0").unwrap_err().path, "aqm.epsilon");
        assert_eq!(decode("zeta = 1.5").unwrap_err().path, "aqm.zeta");
        assert_eq!(decode("rtt = 0.1").unwrap_err().path, "aqm.rtt");
    }
}
