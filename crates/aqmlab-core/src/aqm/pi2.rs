//! PI2: a PI controller whose output is squared for classic senders, in a
//! single queue.
//!
//! Reference: K. De Schepper, O. Bondarenko, I.-J. Tsang, B. Briscoe,
//! "PI2: A Linearized AQM for both Classic and Scalable TCP", Proc. ACM
//! CoNEXT 2016: section 3 (the classic drop probability is the square of
//! the PI's output, p = p'^2, which linearises the controlled TCP's
//! response so that one set of gains works over a wide range of load, with
//! no auto-tuning table as PIE needs), section 4 (scalable senders marked
//! with a probability linear in p', in the same queue). RFC 9332 (DualQ
//! Coupled AQM) appendix A.1 gives the same base PI and coupling in its
//! terms; aqmlab writes PI2 in those terms, so that PI2 and DualPI2 share
//! their parameters:
//!
//! ```text
//! every t_update:  p' <- p' + alpha (q - target) + beta (q - q_prev),  in [0, 1]
//! classic packet (Not-ECT, ECT(0)):   signalled with p_C = p'^2
//! scalable packet (ECT(1), CE):       marked with p_S = min(k p', 1)
//! ```
//!
//! (The paper's own p' is k times this one: it writes (p'/k)^2 and p'.)
//! Defaults are DualPI2's as Linux sets them: target 15 ms, t_update 16 ms,
//! alpha 0.16 Hz, beta 3.2 Hz, k = 2.
//!
//! Model:
//! - The delay q is the sojourn time of the most recently dequeued packet,
//!   0 when it left the queue empty (PIE's timestamp method, RFC 8033
//!   appendix A; a single queue's head sojourn at the last departure).
//! - Decisions at enqueue (the paper's implementation is Linux's PIE
//!   qdisc changed), so the link plans departures at admission. Nothing is
//!   signalled while fewer than 2 `mtu` bytes wait (as DualPI2 in Linux).
//! - ECN: with `ecn` on, an ECT(0) packet is marked where a Not-ECT one is
//!   dropped, and ECT(1) and CE packets get the scalable probability. With
//!   `ecn` off (the default, as every scheme's) every packet is classic and
//!   dropped with p'^2.
//! - Overload (RFC 9332 section 4.2.3, as DualPI2): once k p' > 1, ECN
//!   gives no more signal to scalable senders; they are dropped with p'^2
//!   and marked otherwise, and ECT(0) packets are dropped, not marked.
//!
//! Signals have cause `Early`. The buffer limit is the link's.

use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

use super::dualpi2::{ALPHA, BETA, COUPLING, GAIN_MAX, TARGET, TIME_MAX, T_UPDATE};

/// PI2's parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pi2Params {
    /// Queue delay target, in [0, 4294.967295 s]. Default 15 ms.
    pub target: SimTime,
    /// Period of the PI update, in [1 us, 4294.967295 s]. Default 16 ms.
    pub t_update: SimTime,
    /// Integral gain, Hz, in (0, 8388608). Default 0.16.
    pub alpha: f64,
    /// Proportional gain, Hz, in (0, 8388608). Default 3.2.
    pub beta: f64,
    /// k: scalable packets are marked with min(k p', 1), in [1, 255]. Default 2.
    pub coupling_factor: u32,
    /// Mark ECN-capable packets instead of dropping them. Default off.
    pub ecn: bool,
    /// Bytes of an MTU, >= 1: no signal while fewer than 2 MTU wait.
    /// Default: `tcp.packet_size`.
    pub mtu: u32,
}

impl Default for Pi2Params {
    fn default() -> Self {
        Pi2Params {
            target: TARGET,
            t_update: T_UPDATE,
            alpha: ALPHA,
            beta: BETA,
            coupling_factor: COUPLING,
            ecn: false,
            mtu: 1000,
        }
    }
}

impl Pi2Params {
    /// Read the PI2 keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<Pi2Params> {
        let d = Pi2Params::default();
        let p = Pi2Params {
            target: t.time("target", d.target)?,
            t_update: t.time("t_update", d.t_update)?,
            alpha: t.f64("alpha", d.alpha)?,
            beta: t.f64("beta", d.beta)?,
            coupling_factor: t.u32("coupling_factor", d.coupling_factor)?,
            ecn: t.bool("ecn", d.ecn)?,
            mtu: t.u32("mtu", default_pkt_size)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        check_pi_core(
            path,
            self.target,
            self.t_update,
            self.alpha,
            self.beta,
            self.coupling_factor,
        )?;
        if self.mtu == 0 {
            return Err(SpecError::new(
                f("mtu"),
                "0 is not allowed; give a size in bytes >= 1",
            ));
        }
        Ok(())
    }
}

/// PI2's running state.
#[derive(Clone, Debug)]
pub struct Pi2 {
    p: Pi2Params,
    /// The PI's output p', in [0, 1].
    prob: f64,
    /// The last dequeued packet's sojourn (0 when it left the queue empty).
    qdelay: SimTime,
    /// The delay at the previous update.
    qdelay_old: SimTime,
}

impl Pi2 {
    pub fn new(p: Pi2Params, _link: LinkInfo) -> Pi2 {
        Pi2 {
            p,
            prob: 0.0,
            qdelay: SimTime::ZERO,
            qdelay_old: SimTime::ZERO,
        }
    }

    pub fn params(&self) -> &Pi2Params {
        &self.p
    }

    /// The PI's output p'.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// The PI (paper section 3; RFC 9332 appendix A.1 `dualpi2_update`).
    pub fn update(&mut self) {
        let secs = |t: SimTime| t.as_secs_f64();
        let q = secs(self.qdelay);
        let delta = pi_delta(
            self.p.alpha,
            self.p.beta,
            q,
            secs(self.p.target),
            secs(self.qdelay_old),
        );
        self.prob = (self.prob + delta).clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
    }
}

/// The checks of the keys the PI core shares with DualPI2 (`path`
/// prefixes the field names in errors): the target and update interval
/// within a u32 of microseconds (Linux's), the gains in [0, GAIN_MAX], the
/// coupling factor k in [1, 255].
pub(super) fn check_pi_core(
    path: &str,
    target: SimTime,
    t_update: SimTime,
    alpha: f64,
    beta: f64,
    coupling_factor: u32,
) -> SpecResult<()> {
    let f = |k: &str| join(path, k);
    if target > TIME_MAX {
        return Err(SpecError::new(
            f("target"),
            format!("{target} is outside the allowed range [0s, 4294.967295s]"),
        ));
    }
    if t_update < SimTime::from_micros(1) || t_update > TIME_MAX {
        return Err(SpecError::new(
            f("t_update"),
            format!("{t_update} is outside the allowed range [1us, 4294.967295s]"),
        ));
    }
    check_range(&f("alpha"), alpha, 0.0, true, GAIN_MAX)?;
    check_range(&f("beta"), beta, 0.0, true, GAIN_MAX)?;
    if !(1..=255).contains(&coupling_factor) {
        return Err(SpecError::new(
            f("coupling_factor"),
            format!("{coupling_factor} is outside the allowed range [1, 255]"),
        ));
    }
    Ok(())
}

/// RFC 9332 appendix A's PI step: the change of the base probability p'
/// for the queue delay `q` (this update's) and `q_old` (the last one's),
/// seconds: alpha (q - target) + beta (q - q_old).
#[inline]
pub(super) fn pi_delta(alpha: f64, beta: f64, q: f64, target: f64, q_old: f64) -> f64 {
    alpha * (q - target) + beta * (q - q_old)
}

impl Aqm for Pi2 {
    #[inline]
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        let p = self.prob;
        if p == 0.0 || q.bytes < 2 * self.p.mtu as u64 {
            return Verdict::Pass;
        }
        let p_s = self.p.coupling_factor as f64 * p;
        let overload = p_s > 1.0;
        if self.p.ecn && pkt.ecn.l4s() {
            // Section 4: the scalable probability, linear in p'.
            if overload {
                if rng.uniform() < p * p {
                    return Verdict::Drop(Cause::Early);
                }
                return Verdict::Mark(Cause::Early);
            }
            return if rng.uniform() < p_s {
                Verdict::Mark(Cause::Early)
            } else {
                Verdict::Pass
            };
        }
        // Section 3: the classic probability, p'^2.
        if rng.uniform() >= p * p {
            return Verdict::Pass;
        }
        if self.p.ecn && pkt.ect && !overload {
            Verdict::Mark(Cause::Early)
        } else {
            Verdict::Drop(Cause::Early)
        }
    }

    /// The timestamp method: the dequeued packet's sojourn, or 0 when it
    /// leaves the queue empty.
    #[inline]
    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        _tx_end: SimTime,
    ) -> Verdict {
        self.qdelay = super::pie::departing_sojourn(now, pkt.enq_time, q.pkts);
        Verdict::Pass
    }

    fn tick_interval(&self) -> Option<SimTime> {
        Some(self.p.t_update)
    }

    fn on_tick(&mut self, _now: SimTime, _q: QueueLen) {
        self.update();
    }

    /// `p` (p'), `p_c` (p'^2), `p_s` (min(k p', 1)) and `qdelay_s`, sampled only.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p", self.prob);
        out("p_c", self.prob * self.prob);
        out("p_s", (self.p.coupling_factor as f64 * self.prob).min(1.0));
        out("qdelay_s", self.qdelay.as_secs_f64());
    }

    /// `target`, `t_update` (seconds), `alpha`, `beta` (Hz) and
    /// `coupling_factor` may change during a run; p' and the delays carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["target", "t_update", "alpha", "beta", "coupling_factor"];
        let mut p = self.p.clone();
        match key {
            "target" => p.target = change::secs(value)?,
            "t_update" => p.t_update = change::secs(value)?,
            "alpha" => p.alpha = value,
            "beta" => p.beta = value,
            "coupling_factor" => p.coupling_factor = change::count(value)?,
            _ => return Err(change::unknown_key("PI2", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.p = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::rng::Stream;
    use crate::units::BitRate;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }
    fn pi2(ecn: bool) -> Pi2 {
        let p = Pi2Params {
            mtu: 1500,
            ecn,
            ..Pi2Params::default()
        };
        Pi2::new(p, LinkInfo::new(BitRate(100_000_000), 1500))
    }
    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 1500,
        }
    }
    fn pkt(ecn: Ecn) -> PacketInfo {
        PacketInfo {
            size: 1500,
            ect: ecn.capable(),
            ecn,
            ..PacketInfo::default()
        }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// By hand: p' = 0.05, delay 25 ms, previous 20 ms, target 15 ms:
    /// 0.16 x 0.010 + 3.2 x 0.005 = 0.0016 + 0.016 = 0.0176: p' = 0.0676,
    /// no table (PIE would divide by 2 below 0.1). Bounded to [0, 1].
    #[test]
    fn pi_update_without_tuning_table() {
        let mut s = pi2(false);
        s.prob = 0.05;
        s.qdelay = ms(25);
        s.qdelay_old = ms(20);
        s.update();
        assert!(close(s.prob, 0.0676), "{}", s.prob);
        assert_eq!(s.qdelay_old, ms(25));
        s.qdelay = SimTime::ZERO;
        s.update(); // 0.0676 - 0.0024 - 0.08 < 0
        assert_eq!(s.prob, 0.0);
        s.prob = 0.999;
        s.qdelay = ms(500);
        s.update();
        assert_eq!(s.prob, 1.0);
    }

    /// p' = 0.3: classic packets dropped with 0.09 (ECT(0) marked with ECN
    /// on), ECT(1) marked with 2 x 0.3 = 0.6; ECN off: ECT(1) dropped with
    /// 0.09 as classic.
    #[test]
    fn squared_classic_and_linear_scalable() {
        let mut rng = Rng::new(5, Stream::Aqm(0));
        let n = 40_000;
        let mut rate = |ecn_on: bool, e: Ecn| {
            let mut s = pi2(ecn_on);
            s.prob = 0.3;
            let (mut m, mut d) = (0, 0);
            for _ in 0..n {
                match s.on_enqueue(ms(0), &pkt(e), q(10), &mut rng) {
                    Verdict::Mark(_) => m += 1,
                    Verdict::Drop(_) => d += 1,
                    Verdict::Pass => {}
                }
            }
            (m as f64 / n as f64, d as f64 / n as f64)
        };
        let (m, d) = rate(true, Ecn::NotEct);
        assert!(m == 0.0 && (d - 0.09).abs() < 0.006, "{m} {d}");
        let (m, d) = rate(true, Ecn::Ect0);
        assert!((m - 0.09).abs() < 0.006 && d == 0.0, "{m} {d}");
        let (m, d) = rate(true, Ecn::Ect1);
        assert!((m - 0.6).abs() < 0.01 && d == 0.0, "{m} {d}");
        let (m, d) = rate(false, Ecn::Ect1);
        assert!(m == 0.0 && (d - 0.09).abs() < 0.006, "{m} {d}");
    }

    /// Below 2 MTU waiting nothing is signalled; overload (k p' > 1)
    /// drops ECT(0) and marks ECT(1) unless the p'^2 draw drops it.
    #[test]
    fn safeguard_and_overload() {
        let mut rng = Rng::new(5, Stream::Aqm(0));
        let mut s = pi2(true);
        s.prob = 1.0;
        assert_eq!(
            s.on_enqueue(ms(0), &pkt(Ecn::NotEct), q(1), &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            s.on_enqueue(ms(0), &pkt(Ecn::Ect0), q(2), &mut rng),
            Verdict::Drop(Cause::Early)
        );
        s.prob = 0.6;
        let v: Vec<Verdict> = (0..1000)
            .map(|_| s.on_enqueue(ms(0), &pkt(Ecn::Ect1), q(5), &mut rng))
            .collect();
        assert!(!v.contains(&Verdict::Pass));
        let drops = v.iter().filter(|v| matches!(v, Verdict::Drop(_))).count();
        assert!((300..420).contains(&drops), "{drops}"); // 0.36 x 1000
    }

    #[test]
    fn delay_validation_and_changes() {
        let mut s = pi2(false);
        let p = PacketInfo {
            enq_time: ms(10),
            ..PacketInfo::default()
        };
        s.on_dequeue(ms(32), &p, q(3), ms(33));
        assert_eq!(s.qdelay, ms(22));
        s.on_dequeue(ms(40), &p, q(0), ms(41));
        assert_eq!(s.qdelay, SimTime::ZERO);
        let mut bad = Pi2Params {
            coupling_factor: 0,
            ..Pi2Params::default()
        };
        assert_eq!(bad.validate("aqm").unwrap_err().path, "aqm.coupling_factor");
        bad = Pi2Params {
            t_update: SimTime::ZERO,
            ..Pi2Params::default()
        };
        assert_eq!(bad.validate("aqm").unwrap_err().path, "aqm.t_update");
        s.set_param("alpha", 0.3).unwrap();
        assert_eq!(s.p.alpha, 0.3);
        assert!(s.set_param("alpha", 0.0).unwrap_err().contains("(0, "));
        assert!(s.set_param("ecn", 1.0).unwrap_err().contains("`ecn`"));
    }
}
