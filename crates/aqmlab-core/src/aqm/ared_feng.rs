//! Feng, Kandlur, Saha and Shin's self-configuring RED (`ared-feng`).
//!
//! Reference: `004_618a487a53bfbc7f.txt` ("A Self-Configuring RED Gateway"),
//! section IV and fig. 8 ("Adaptive RED algorithm"); alpha = 3, beta = 2 and
//! the initial max_p of 0.020 are the values of its fig. 7 experiment.
//!
//! Model: RED ([`super::red`], unchanged: average, drop function, count,
//! gentle, byte mode, ECN) whose `max_p` follows the average queue. On every
//! update of the average (every arrival), fig. 8 classifies the average into
//! a status and scales `max_p` when the status is *entered*:
//!
//! ```text
//! if min_th < avg < max_th:                 status = Between
//! if avg < min_th and status != Below:      status = Below;  max_p = max_p / alpha
//! if avg > max_th and status != Above:      status = Above;  max_p = max_p * beta
//! ```
//!
//! Readings where fig. 8 is silent:
//! - Boundaries are strict as printed: an average exactly at `min_th` or
//!   `max_th` changes neither the status nor `max_p`. Below may go straight
//!   to Above (and back) without passing Between; each entry scales once.
//! - The initial status is Below: the average of the empty queue (0) is
//!   below `min_th`, so the start of the run is not an "entry" into Below and
//!   the initial `max_p` is kept until the average first crosses a threshold.
//! - Fig. 8 does not bound `max_p`. It is a probability, so the increase is
//!   capped at 1 (above 1, RED's drop function would exceed 1 below `max_th`
//!   and the gentle slope would turn negative). Decreases have no floor:
//!   with alpha = 3 > beta = 2, an average that dips below `min_th` as often
//!   as it exceeds `max_th` walks `max_p` down geometrically (8 flows in the
//!   scenario test settle near 3e-7), which is the paper's "less aggressive"
//!   direction taken to its end.
//! - Fig. 8 runs between the update of the average and the arrival's drop
//!   decision ([`Red::update_average`], then [`Red::arrival_verdict`]): a
//!   step of `max_p` applies to the arrival whose average caused it, not
//!   from the next arrival on.
//!
//! Defaults of the RED keys that the paper does not state (thresholds, w_q,
//! gentle, mode, ecn, above_max) are RED's ([`RedParams::default`]). The
//! paper uses ECN-capable TCP for this scheme; `ecn` still defaults to off as
//! for RED, and the example scenario turns it on.

use super::red::{AboveMax, Red, RedCounting, RedMode, RedParams};
use super::{change, Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Fig. 7 experiment: `max_p` is divided by alpha on entering Below.
pub const DEFAULT_ALPHA: f64 = 3.0;
/// Fig. 7 experiment: `max_p` is multiplied by beta on entering Above.
pub const DEFAULT_BETA: f64 = 2.0;
/// Fig. 7 experiment: "We initially set max_p to 0.020".
pub const DEFAULT_INITIAL_MAX_P: f64 = 0.02;
/// Upper bound of the adapted `max_p` (a probability; fig. 8 has none).
pub const MAX_P_CAP: f64 = 1.0;

/// Parameters of `ared-feng`: RED's keys (its `max_p` is the initial value)
/// and fig. 8's two factors.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AredFengParams {
    /// RED's parameters; `max_p` is the initial max_p (default 0.02, fig. 7),
    /// the other defaults are RED's.
    #[serde(flatten)]
    pub red: RedParams,
    /// Divisor of `max_p` on entering Below, >= 1 (default 3, fig. 7).
    pub alpha: f64,
    /// Factor of `max_p` on entering Above, >= 1 (default 2, fig. 7).
    pub beta: f64,
}

impl Default for AredFengParams {
    fn default() -> Self {
        AredFengParams {
            red: RedParams {
                max_p: DEFAULT_INITIAL_MAX_P,
                ..RedParams::default()
            },
            alpha: DEFAULT_ALPHA,
            beta: DEFAULT_BETA,
        }
    }
}

impl AredFengParams {
    /// Read the keys of an `[aqm]` table with `kind = "ared-feng"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<AredFengParams> {
        let d = AredFengParams::default();
        let red = RedParams {
            min_th: t.f64("min_th", d.red.min_th)?,
            max_th: t.f64("max_th", d.red.max_th)?,
            max_p: t.f64("max_p", d.red.max_p)?,
            w_q: t.f64("w_q", d.red.w_q)?,
            gentle: t.bool("gentle", d.red.gentle)?,
            mode: match t.choice("mode", &["packet", "byte"], Some("packet"))? {
                "byte" => RedMode::Byte,
                _ => RedMode::Packet,
            },
            mean_pkt_size: t.u32("mean_pkt_size", default_pkt_size)?,
            ecn: t.bool("ecn", d.red.ecn)?,
            above_max: match t.choice("above_max", &["drop", "mark"], Some("drop"))? {
                "mark" => AboveMax::Mark,
                _ => AboveMax::Drop,
            },
            mark_p: t.f64("mark_p", d.red.mark_p)?,
            counting: RedCounting::decode(t, d.red.counting)?,
        };
        let p = AredFengParams {
            red,
            alpha: t.f64("alpha", d.alpha)?,
            beta: t.f64("beta", d.beta)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        self.red.validate(path)?;
        // max_p = 0 could never grow (0 * beta = 0).
        check_range(&join(path, "max_p"), self.red.max_p, 0.0, true, MAX_P_CAP)?;
        check_range(&join(path, "alpha"), self.alpha, 1.0, false, 1e3)?;
        check_range(&join(path, "beta"), self.beta, 1.0, false, 1e3)?;
        Ok(())
    }
}

/// Where the average queue was at its last update (fig. 8's `status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Below,
    Between,
    Above,
}

impl Status {
    /// The value reported to params.parquet as `status`.
    fn code(self) -> f64 {
        match self {
            Status::Below => 0.0,
            Status::Between => 1.0,
            Status::Above => 2.0,
        }
    }
}

/// The running scheme: RED plus fig. 8's status and factors.
#[derive(Clone, Debug)]
pub struct AredFeng {
    red: Red,
    alpha: f64,
    beta: f64,
    status: Status,
    /// A step of `max_p` since the last `take_changed`.
    changed: bool,
}

impl AredFeng {
    pub fn new(p: AredFengParams, link: LinkInfo) -> AredFeng {
        AredFeng {
            red: Red::new(p.red, link),
            alpha: p.alpha,
            beta: p.beta,
            status: Status::Below,
            changed: false,
        }
    }

    /// The current `max_p`.
    pub fn max_p(&self) -> f64 {
        self.red.params().max_p
    }

    /// The current status of fig. 8.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Fig. 8, run on every update of the average: returns whether `max_p` changed.
    fn on_average(&mut self, avg: f64) -> bool {
        let p = self.red.params_mut();
        if p.min_th < avg && avg < p.max_th {
            self.status = Status::Between;
        }
        let old = p.max_p;
        if avg < p.min_th && self.status != Status::Below {
            self.status = Status::Below;
            p.max_p /= self.alpha;
        }
        if avg > p.max_th && self.status != Status::Above {
            self.status = Status::Above;
            p.max_p = (p.max_p * self.beta).min(MAX_P_CAP);
        }
        let stepped = p.max_p != old;
        self.changed |= stepped;
        stepped
    }
}

impl Aqm for AredFeng {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        // Fig. 8 runs on the update of the average, before this arrival's
        // drop decision, so a step of max_p applies to the arrival itself.
        let idle = self.red.idle_since();
        self.red.update_average(now, q);
        self.on_average(self.red.avg());
        self.red.arrival_verdict(now, pkt, q, rng, idle)
    }

    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        tx_end: SimTime,
    ) -> Verdict {
        self.red.on_dequeue(now, pkt, q, tx_end)
    }

    fn average(&self) -> Option<f64> {
        Some(self.red.avg())
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("max_p", self.max_p());
        out("avg", self.red.avg());
        out("status", self.status.code());
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        self.red.set_link(now, link);
    }

    /// RED's keys (`min_th`, `max_th`, `max_p`, `w_q`, handed to [`Red`])
    /// and fig. 8's `alpha` and `beta` may change during a run. A new
    /// `max_p` is the value fig. 8 scales from then on; the average, count
    /// and status carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["min_th", "max_th", "max_p", "w_q", "alpha", "beta"];
        let mut red = self.red.clone();
        let mut p = AredFengParams {
            red: red.params().clone(),
            alpha: self.alpha,
            beta: self.beta,
        };
        match key {
            "alpha" => p.alpha = value,
            "beta" => p.beta = value,
            "min_th" | "max_th" | "max_p" | "w_q" => {
                red.set_param(key, value)?;
                p.red = red.params().clone();
            }
            _ => return Err(change::unknown_key("ared-feng", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.red = red;
        self.alpha = p.alpha;
        self.beta = p.beta;
        // max_p is reported to params.parquet.
        self.changed |= key == "max_p";
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::scenario::Value;
    use crate::units::BitRate;

    fn link() -> LinkInfo {
        LinkInfo::new(BitRate(10_000_000), 500)
    }
    fn params() -> AredFengParams {
        let mut p = AredFengParams::default();
        p.red.min_th = 20.0;
        p.red.max_th = 60.0;
        p.red.mean_pkt_size = 500;
        p
    }
    /// A 500-byte packet, and a queue of n of them.
    fn pkt500() -> PacketInfo {
        PacketInfo {
            size: 500,
            ..PacketInfo::default()
        }
    }
    fn q(n: u32) -> QueueLen {
        QueueLen {
            pkts: n,
            bytes: n as u64 * 500,
        }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn defaults_are_fig_7s() {
        let p = AredFengParams::default();
        assert_eq!((p.alpha, p.beta, p.red.max_p), (3.0, 2.0, 0.02));
        assert_eq!((p.red.min_th, p.red.max_th, p.red.w_q), (5.0, 15.0, 0.002));
    }

    /// Fig. 8's transitions with alpha = 3, beta = 2, thresholds 20 / 60.
    #[test]
    fn fig_8_status_transitions() {
        let mut a = AredFeng::new(params(), link());
        assert_eq!(a.status(), Status::Below);
        // Start: below min_th, already Below: no step.
        assert!(!a.on_average(3.0));
        assert!(close(a.max_p(), 0.02));
        // Between: status changes, max_p does not.
        assert!(!a.on_average(30.0));
        assert_eq!(a.status(), Status::Between);
        assert!(close(a.max_p(), 0.02));
        // Entering Above: 0.02 * 2 = 0.04.
        assert!(a.on_average(61.0));
        assert_eq!(a.status(), Status::Above);
        assert!(close(a.max_p(), 0.04));
        // Staying above: no further step.
        assert!(!a.on_average(90.0));
        assert!(close(a.max_p(), 0.04));
        // Exactly at max_th: neither Between nor Above, nothing changes.
        assert!(!a.on_average(60.0));
        assert_eq!(a.status(), Status::Above);
        // Back between, then above again: 0.04 * 2 = 0.08.
        assert!(!a.on_average(45.0));
        assert!(a.on_average(70.0));
        assert!(close(a.max_p(), 0.08));
        // Straight from Above to Below: 0.08 / 3 = 0.026666...
        assert!(a.on_average(10.0));
        assert_eq!(a.status(), Status::Below);
        assert!(close(a.max_p(), 0.08 / 3.0));
        // Exactly at min_th: no change; staying below: no change.
        assert!(!a.on_average(20.0));
        assert!(!a.on_average(0.0));
        assert!(close(a.max_p(), 0.08 / 3.0));
        // Straight from Below to Above: 0.0266... * 2 = 0.05333...
        assert!(a.on_average(100.0));
        assert!(close(a.max_p(), 0.16 / 3.0));
    }

    #[test]
    fn max_p_is_capped_at_one() {
        let mut p = params();
        p.red.max_p = 0.7;
        let mut a = AredFeng::new(p, link());
        // 0.7 * 2 = 1.4, capped to 1.
        assert!(a.on_average(70.0));
        assert_eq!(a.max_p(), 1.0);
        a.on_average(30.0);
        // At the cap an entry into Above changes nothing (and reports no change).
        assert!(!a.on_average(70.0));
        // 1 / 3 on entering Below.
        assert!(a.on_average(1.0));
        assert!(close(a.max_p(), 1.0 / 3.0));
    }

    /// Through the Aqm hooks: with w_q = 1 the average is the queue seen on
    /// arrival; a step is reported once through take_changed.
    #[test]
    fn steps_on_arrivals_and_reports_changes() {
        let mut p = params();
        p.red.w_q = 1.0;
        let mut a = AredFeng::new(p, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = pkt500();
        // Non-empty queue: avg = 1.0 * 40 = 40 -> Between.
        a.on_enqueue(SimTime::from_millis(1), &pkt, q(40), &mut rng);
        assert_eq!(a.status(), Status::Between);
        assert!(!a.take_changed());
        // avg = 80 -> Above, 0.02 * 2 = 0.04.
        a.on_enqueue(SimTime::from_millis(2), &pkt, q(80), &mut rng);
        assert!(close(a.max_p(), 0.04));
        assert!(a.take_changed());
        assert!(!a.take_changed());
        let mut seen = Vec::new();
        Aqm::params(&a, &mut |k, v| seen.push((k, v)));
        assert_eq!(seen, vec![("max_p", 0.04), ("avg", 80.0), ("status", 2.0)]);
        assert_eq!(a.average(), Some(80.0));
    }

    /// The step of max_p applies to the arrival whose average caused it:
    /// gentle RED with max_p 0.5 entering Above at avg = max_th + 1 drops
    /// with p = 1 (max_p 1 after the step), where the max_p before the step
    /// gives about 0.51. Every one of 200 independent gateways drops (with
    /// the step one arrival late, about half of them did).
    #[test]
    fn a_step_applies_to_the_arrival_that_caused_it() {
        let pkt = pkt500();
        let mut dropped = 0;
        for seed in 0..200 {
            let mut p = params();
            p.red.w_q = 1.0;
            p.red.max_p = 0.5;
            p.red.gentle = true;
            let mut a = AredFeng::new(p, link());
            let mut rng = Rng::new(seed, Stream::Aqm(0));
            // The first arrival: straight from Below to Above, and RED's
            // count is still at its start (p_a = p_b).
            let v = a.on_enqueue(SimTime::from_millis(1), &pkt, q(61), &mut rng);
            assert_eq!(a.status(), Status::Above);
            assert_eq!(a.max_p(), 1.0);
            dropped += usize::from(matches!(v, Verdict::Drop(_)));
        }
        assert_eq!(dropped, 200);
    }

    #[test]
    fn set_param_changes_red_keys_and_factors() {
        let mut a = AredFeng::new(params(), link());
        a.on_average(70.0); // Above: max_p 0.02 * 2 = 0.04
        a.take_changed();
        // A new max_p: fig. 8 scales it from now on; the status carries over.
        a.set_param("max_p", 0.1).unwrap();
        assert!(close(a.max_p(), 0.1));
        assert!(a.take_changed(), "max_p is reported");
        assert_eq!(a.status(), Status::Above);
        a.set_param("alpha", 5.0).unwrap();
        a.set_param("beta", 1.5).unwrap();
        assert!(!a.take_changed(), "alpha and beta are not reported");
        a.set_param("min_th", 30.0).unwrap();
        a.set_param("w_q", 0.01).unwrap();
        assert_eq!(a.red.params().min_th, 30.0);
        assert_eq!(a.red.params().w_q, 0.01);
        // Entering Below with alpha = 5: 0.1 / 5 = 0.02; entering Above
        // with beta = 1.5: 0.02 * 1.5 = 0.03.
        assert!(a.on_average(10.0));
        assert!(close(a.max_p(), 0.02));
        assert!(a.on_average(70.0));
        assert!(close(a.max_p(), 0.03));
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut a = AredFeng::new(params(), link());
        let before = (a.red.params().clone(), a.alpha, a.beta);
        // RED allows max_p = 0, ared-feng does not (0 * beta = 0).
        let e = a.set_param("max_p", 0.0).unwrap_err();
        assert!(e.contains('0') && e.contains("(0, 1]"), "{e}");
        let e = a.set_param("alpha", 0.5).unwrap_err();
        assert!(e.contains("0.5") && e.contains("[1, 1000]"), "{e}");
        // min_th above max_th (60): RED's own error.
        let e = a.set_param("min_th", 70.0).unwrap_err();
        assert!(
            e.contains("70") && e.contains("less than max_th (60)"),
            "{e}"
        );
        assert_eq!((a.red.params().clone(), a.alpha, a.beta), before);
        let e = a.set_param("gentle", 0.0).unwrap_err();
        assert!(
            e.contains("`gentle`") && e.contains("min_th, max_th, max_p, w_q, alpha, beta"),
            "{e}"
        );
    }

    fn decode(text: &str) -> SpecResult<AredFengParams> {
        let v: Value = toml::from_str(text).unwrap();
        let mut t = Table::new(v, "aqm").unwrap();
        let p = AredFengParams::decode(&mut t, 500);
        if p.is_ok() {
            t.finish()?;
        }
        p
    }

    #[test]
    fn decode_defaults_and_errors() {
        let p = decode("").unwrap();
        assert_eq!(p.red.max_p, 0.02);
        assert_eq!(p.red.mean_pkt_size, 500);
        let p = decode("alpha = 4\nbeta = 1.5\nmin_th = 20\nmax_th = 60\necn = true").unwrap();
        assert_eq!(
            (p.alpha, p.beta, p.red.min_th, p.red.ecn),
            (4.0, 1.5, 20.0, true)
        );
        assert_eq!(decode("alpha = 0.5").unwrap_err().path, "aqm.alpha");
        assert_eq!(decode("beta = 0.9").unwrap_err().path, "aqm.beta");
        assert_eq!(decode("max_p = 0").unwrap_err().path, "aqm.max_p");
        assert_eq!(decode("max_p = 1.2").unwrap_err().path, "aqm.max_p");
        assert_eq!(
            decode("min_th = 30\nmax_th = 20").unwrap_err().path,
            "aqm.min_th"
        );
        let e = decode("alpha = \"x\"").unwrap_err();
        assert_eq!(e.path, "aqm.alpha");
    }
}
