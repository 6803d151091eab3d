//! PIE: Proportional Integral controller Enhanced (RFC 8033).
//!
//! Reference: R. Pan, P. Natarajan, F. Baker, G. White, "Proportional
//! Integral Controller Enhanced (PIE): A Lightweight Control Scheme to
//! Address the Bufferbloat Problem", RFC 8033 (2017). The seed papers
//! (`/work/shared/seeds/`) do not cover PIE; the RFC is the specification.
//!
//! Model:
//! - Random dropping at enqueue (RFC 8033 section 4.1, appendix A
//!   `enque` / `drop_early`): an arriving packet is dropped with
//!   probability `p`, except while the burst allowance lasts and when the
//!   queue is evidently not congested (`qdelay_old < target / 2` and
//!   `p < 0.2`, or at most two `mean_pkt_size` packets queued: the
//!   work-conserving safeguard). The buffer limit is the link's.
//! - Drop probability update every `t_update` (section 4.2, the tick hook):
//!   `p += alpha (qdelay - target) + beta (qdelay - qdelay_old)`, delays in
//!   seconds, alpha and beta in Hz; the increment is first scaled down
//!   when `p` is small (the auto-tuning table of section 4.2: divided by
//!   2048, 512, 128, 32, 8, 2 for `p` below 1e-6, 1e-5, 1e-4, 1e-3, 1e-2,
//!   0.1). When both delays are zero, `p` decays by the factor 0.98.
//!   `p` is bounded to [0, 1]; then `qdelay_old = qdelay`.
//! - Burst allowance (section 4.4): starts at `max_burst`, shrinks by
//!   `t_update` at every update, and is reset to `max_burst` on an arrival
//!   that finds `p == 0` and both delays below target / 2. No packet is
//!   dropped early while it is positive.
//! - Queuing delay (section 4.3): the timestamp method of appendix A
//!   (`current_qdelay = packet.timestamp_delay()` at dequeue), i.e. the
//!   sojourn time `now - enq_time` of the most recently dequeued packet.
//!   Our reading: when that packet leaves the queue empty, the delay is
//!   taken as 0 (an arrival would not wait), so that an idle queue does
//!   not keep a stale delay and the decay rule of section 4.2 can act.
//!   The departure-rate estimator (section 5.2) is not implemented.
//!
//! Optional elements (section 5):
//! - ECN (section 5.1): with `ecn` on, an ECN-capable packet selected for
//!   dropping is CE-marked instead while `p <= mark_ecnth` (10 %); above
//!   it the packet is dropped, with cause [`Cause::Forced`] (the marking
//!   limit), so `drops_forced` counts ECN-capable packets dropped for it.
//!   Every other signal has cause [`Cause::Early`].
//! - De-randomisation (section 5.4): optional, **off** by default
//!   (`derandomize`). When on, `accu_prob += p` on every arrival that
//!   reaches the random test (reset to 0 when `p == 0`); no drop while
//!   `accu_prob < 0.85`, a certain drop at `accu_prob >= 8.5`, a random
//!   one in between; `accu_prob` is reset to 0 after a drop or a mark (the
//!   RFC resets it "after a drop"; a mark replaces a drop).
//! - Linux's enqueue (`enqueue = "linux"`, with `derandomize` on): the
//!   order and tests of `pie_qdisc_enqueue` and `pie_drop_early` in
//!   `net/sched/sch_pie.c` and `pie.h`, where they differ from appendix A:
//!   a full buffer is tested first, and its drop clears `accu_prob`
//!   without the early test (appendix A's order lets the early test count
//!   the packet the link then drops); the safeguard reads the last
//!   departing packet's delay, not the one at the last update; and
//!   `accu_prob` is cleared by a random hit and by every drop, but kept
//!   after a certain hit (`accu_prob >= 8.5`) that is marked, so the next
//!   arrivals are certain hits too until a drop or `p = 0` clears it.
//! - Cap drop adjustment (section 5.5 and appendix B): on by default
//!   (`cap_drop_adjustment`): when `p >= 0.1` an increment is capped at
//!   0.02, so one update cannot raise a high `p` by more than 2 %.
//! - Turning PIE on and off by queue length (section 5.3) is not
//!   implemented: PIE is always active.
//!
//! The per-packet path is a few comparisons and one uniform draw; the
//! controller's arithmetic runs once per `t_update`.
//!
//! Mid-run changes ([`Aqm::set_param`]: `target`, `t_update`, `alpha`,
//! `beta`, `max_burst`, `mark_ecnth`) apply from the next update or
//! arrival (a new `t_update` after the update already due); the drop
//! probability and the delays carry over, and the remaining burst
//! allowance is cut to a smaller `max_burst`.

use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::scenario::Buffer;
use crate::units::SimTime;
use serde::Serialize;

/// Default `target` (QDELAY_REF): 15 ms (RFC 8033 sections 4.2 and 4.4).
pub const TARGET: SimTime = SimTime::from_millis(15);
/// Default `t_update`: 15 ms (RFC 8033 section 4.2).
pub const T_UPDATE: SimTime = SimTime::from_millis(15);
/// Default `max_burst`: 150 ms (RFC 8033 section 4.4).
pub const MAX_BURST: SimTime = SimTime::from_millis(150);
/// Default `alpha`: 0.125 Hz (RFC 8033 section 4.2).
pub const ALPHA: f64 = 0.125;
/// Default `beta`: 1.25 Hz (RFC 8033 section 4.2).
pub const BETA: f64 = 1.25;
/// Default `mark_ecnth`: 0.1 (RFC 8033 section 5.1).
pub const MARK_ECNTH: f64 = 0.1;

/// De-randomisation thresholds on `accu_prob` (RFC 8033 section 5.4).
const ACCU_LOW: f64 = 0.85;
const ACCU_HIGH: f64 = 8.5;

/// Whose enqueue rules PIE follows (the `enqueue` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Enqueue {
    /// RFC 8033 appendix A's `enque` and `drop_early`.
    Rfc8033,
    /// Linux's `pie_qdisc_enqueue` and `pie_drop_early` (module docs).
    Linux,
}

/// PIE's parameters (RFC 8033 sections 4 and 5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PieParams {
    /// Target queuing delay QDELAY_REF, > 0. Default 15 ms (section 4.2).
    pub target: SimTime,
    /// Period of the drop probability update T_UPDATE, > 0. Default 15 ms (section 4.2).
    pub t_update: SimTime,
    /// Weight of the delay error, Hz, in [0, 1e6]. Default 0.125 (section 4.2).
    pub alpha: f64,
    /// Weight of the delay trend, Hz, in [0, 1e6]. Default 1.25 (section 4.2).
    pub beta: f64,
    /// Burst allowance MAX_BURST, >= 0. Default 150 ms (section 4.4).
    pub max_burst: SimTime,
    /// Mark ECN-capable packets instead of dropping them while
    /// `p <= mark_ecnth` (section 5.1). Default off.
    pub ecn: bool,
    /// Probability above which ECN-capable packets are dropped, not
    /// marked, in [0, 1]. Default 0.1 (section 5.1).
    pub mark_ecnth: f64,
    /// De-randomised dropping (section 5.4). Default off.
    pub derandomize: bool,
    /// The enqueue rules: RFC 8033's or Linux's (needs `derandomize`).
    /// Default RFC 8033's.
    pub enqueue: Enqueue,
    /// Cap an increment of `p >= 0.1` at 0.02 (section 5.5). Default on.
    pub cap_drop_adjustment: bool,
    /// MEAN_PKTSIZE, bytes, >= 1: no early drop while the queue holds at
    /// most two such packets (section 4.1). Default: `tcp.packet_size`.
    pub mean_pkt_size: u32,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: TARGET,
            t_update: T_UPDATE,
            alpha: ALPHA,
            beta: BETA,
            max_burst: MAX_BURST,
            ecn: false,
            mark_ecnth: MARK_ECNTH,
            derandomize: false,
            enqueue: Enqueue::Rfc8033,
            cap_drop_adjustment: true,
            mean_pkt_size: 1000,
        }
    }
}

impl PieParams {
    /// Read the PIE keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<PieParams> {
        PieParams::decode_with(t, default_pkt_size, PieParams::default())
    }

    /// Read the PIE keys of an `[aqm]` table over the defaults `d` (FQ-PIE's
    /// de-randomise by default).
    pub fn decode_with(
        t: &mut Table,
        default_pkt_size: u32,
        d: PieParams,
    ) -> SpecResult<PieParams> {
        let linux = t.either("enqueue", ["rfc8033", "linux"], d.enqueue == Enqueue::Linux)?;
        let p = PieParams {
            target: t.time("target", d.target)?,
            t_update: t.time("t_update", d.t_update)?,
            alpha: t.f64("alpha", d.alpha)?,
            beta: t.f64("beta", d.beta)?,
            max_burst: t.time("max_burst", d.max_burst)?,
            ecn: t.bool("ecn", d.ecn)?,
            mark_ecnth: t.f64("mark_ecnth", d.mark_ecnth)?,
            derandomize: t.bool("derandomize", d.derandomize)?,
            enqueue: if linux {
                Enqueue::Linux
            } else {
                Enqueue::Rfc8033
            },
            cap_drop_adjustment: t.bool("cap_drop_adjustment", d.cap_drop_adjustment)?,
            mean_pkt_size: t.u32("mean_pkt_size", default_pkt_size)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        for (k, v) in [("target", self.target), ("t_update", self.t_update)] {
            if v == SimTime::ZERO {
                return Err(SpecError::new(
                    f(k),
                    "0s is not allowed; give a time > 0 such as \"15ms\"",
                ));
            }
        }
        check_range(&f("alpha"), self.alpha, 0.0, false, 1e6)?;
        check_range(&f("beta"), self.beta, 0.0, false, 1e6)?;
        check_range(&f("mark_ecnth"), self.mark_ecnth, 0.0, false, 1.0)?;
        if self.mean_pkt_size == 0 {
            return Err(SpecError::new(
                f("mean_pkt_size"),
                "0 is not allowed; give a size in bytes >= 1",
            ));
        }
        if self.enqueue == Enqueue::Linux && !self.derandomize {
            return Err(SpecError::new(
                f("enqueue"),
                "\"linux\" needs derandomize = true (Linux's pie always de-randomises); \
                 set derandomize = true or enqueue = \"rfc8033\"",
            ));
        }
        Ok(())
    }
}

/// The auto-tuning of section 4.2: the factor that scales the increment
/// of `p` by the current `p` (alpha and beta are in effect divided by it).
pub fn tune_divisor(p: f64) -> f64 {
    if p < 0.000_001 {
        2048.0
    } else if p < 0.000_01 {
        512.0
    } else if p < 0.000_1 {
        128.0
    } else if p < 0.001 {
        32.0
    } else if p < 0.01 {
        8.0
    } else if p < 0.1 {
        2.0
    } else {
        1.0
    }
}

/// PIE's running state (the "status variables" of RFC 8033 appendix A),
/// apart from its parameters: [`Pie`] has one, FQ-PIE one per flow queue
/// (all sharing one [`PieParams`]).
#[derive(Clone, Debug)]
pub struct PieState {
    /// Drop probability `drop_prob_`, in [0, 1].
    drop_prob: f64,
    /// Current queuing delay (the last dequeued packet's sojourn).
    qdelay: SimTime,
    /// Queuing delay at the previous update `qdelay_old_`.
    qdelay_old: SimTime,
    /// Remaining burst allowance `burst_allowance_`.
    burst_allowance: SimTime,
    /// De-randomisation accumulator `accu_prob_` (section 5.4).
    accu_prob: f64,
}

impl PieState {
    /// The state at start: `p = 0`, no delay, the full burst allowance.
    pub fn new(p: &PieParams) -> PieState {
        PieState {
            drop_prob: 0.0,
            qdelay: SimTime::ZERO,
            qdelay_old: SimTime::ZERO,
            burst_allowance: p.max_burst,
            accu_prob: 0.0,
        }
    }

    /// The drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.drop_prob
    }

    /// The current queuing delay estimate.
    pub fn qdelay(&self) -> SimTime {
        self.qdelay
    }

    /// Whether the state is the idle one an update leaves unchanged but
    /// for the burst allowance (`p = 0`, both delays zero), which the next
    /// arrival restores anyway (section 4.4's reset condition holds).
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.drop_prob == 0.0 && self.qdelay == SimTime::ZERO && self.qdelay_old == SimTime::ZERO
    }

    /// `calculate_drop_prob` (RFC 8033 section 4.2 and appendix A; the cap
    /// of section 5.5), run every `t_update`.
    pub fn update(&mut self, p: &PieParams) {
        let cur = self.qdelay.as_secs_f64();
        let old = self.qdelay_old.as_secs_f64();
        let mut delta = p.alpha * (cur - p.target.as_secs_f64()) + p.beta * (cur - old);
        delta /= tune_divisor(self.drop_prob);
        if p.cap_drop_adjustment && self.drop_prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        self.drop_prob += delta;
        if self.qdelay == SimTime::ZERO && self.qdelay_old == SimTime::ZERO {
            // Congestion has gone: decay exponentially.
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub(p.t_update);
    }

    /// `drop_early` (section 4.1; with section 5.4's de-randomisation):
    /// whether the arriving packet is selected for a signal.
    #[inline]
    fn drop_early(&mut self, p: &PieParams, q: QueueLen, rng: &mut Rng) -> bool {
        let half = SimTime(p.target.0 / 2);
        // Safeguard to keep PIE work-conserving (Linux reads the current delay).
        let delay = match p.enqueue {
            Enqueue::Rfc8033 => self.qdelay_old,
            Enqueue::Linux => self.qdelay,
        };
        if (delay < half && self.drop_prob < 0.2) || q.bytes <= 2 * p.mean_pkt_size as u64 {
            return false;
        }
        if !p.derandomize {
            return rng.bernoulli(self.drop_prob);
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < ACCU_LOW {
            false
        } else if self.accu_prob >= ACCU_HIGH {
            // A certain hit keeps the accumulator (Linux; appendix A clears
            // it in `on_arrival` whatever follows).
            true
        } else if rng.bernoulli(self.drop_prob) {
            self.accu_prob = 0.0;
            true
        } else {
            false
        }
    }

    /// `enque` of RFC 8033 appendix A (ECN per section 5.1) for a packet
    /// (`ect`: ECN-capable) arriving at a queue holding `q`.
    #[inline]
    pub fn on_arrival(&mut self, p: &PieParams, ect: bool, q: QueueLen, rng: &mut Rng) -> Verdict {
        let half = SimTime(p.target.0 / 2);
        if self.drop_prob == 0.0 && self.qdelay < half && self.qdelay_old < half {
            self.burst_allowance = p.max_burst;
        }
        if self.burst_allowance > SimTime::ZERO || !self.drop_early(p, q, rng) {
            return Verdict::Pass;
        }
        let v = if p.ecn && ect {
            if self.drop_prob <= p.mark_ecnth {
                Verdict::Mark(Cause::Early)
            } else {
                Verdict::Drop(Cause::Forced)
            }
        } else {
            Verdict::Drop(Cause::Early)
        };
        // Appendix A clears the accumulator after every signal; Linux after a
        // drop (`pie_qdisc_enqueue`), a mark keeping it.
        if p.enqueue == Enqueue::Rfc8033 || matches!(v, Verdict::Drop(_)) {
            self.accu_prob = 0.0;
        }
        v
    }

    /// The buffer was full at this queue's arrival: Linux clears the
    /// accumulator as for any drop (`pie_qdisc_enqueue`, `sch_fq_pie`).
    #[inline]
    pub fn clear_on_overflow(&mut self, p: &PieParams) {
        if p.enqueue == Enqueue::Linux {
            self.accu_prob = 0.0;
        }
    }

    /// The timestamp method (appendix A `deque`): the delay estimate
    /// becomes the departing packet's sojourn (`sojourn`, 0 when it leaves
    /// its queue empty: `departing_sojourn`).
    #[inline]
    pub fn on_departure(&mut self, sojourn: SimTime) {
        self.qdelay = sojourn;
    }

    /// The de-randomisation's accumulator (tests).
    #[cfg(test)]
    pub(super) fn accu_prob(&self) -> f64 {
        self.accu_prob
    }

    /// Set the de-randomisation's accumulator (tests).
    #[cfg(test)]
    pub(super) fn set_accu_prob(&mut self, a: f64) {
        self.accu_prob = a;
    }

    /// Cut the remaining burst allowance to a smaller `max_burst`.
    pub fn limit_burst(&mut self, max_burst: SimTime) {
        self.burst_allowance = self.burst_allowance.min(max_burst);
    }

    /// `p`, `qdelay_s` and `burst_allowance_s`.
    fn report(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p", self.drop_prob);
        out("qdelay_s", self.qdelay.as_secs_f64());
        out("burst_allowance_s", self.burst_allowance.as_secs_f64());
    }
}

/// PIE on a link's FIFO: the parameters and one [`PieState`].
#[derive(Clone, Debug)]
pub struct Pie {
    p: PieParams,
    st: PieState,
    /// The link's buffer, which Linux's enqueue tests before PIE's.
    limit: Buffer,
}

impl Pie {
    pub fn new(p: PieParams, link: LinkInfo) -> Pie {
        Pie {
            st: PieState::new(&p),
            p,
            limit: link.buffer,
        }
    }

    pub fn params(&self) -> &PieParams {
        &self.p
    }

    /// The drop probability.
    pub fn drop_prob(&self) -> f64 {
        self.st.drop_prob
    }

    /// The current queuing delay estimate.
    pub fn qdelay(&self) -> SimTime {
        self.st.qdelay
    }

    /// The probability update of section 4.2 (every `t_update`).
    pub fn update(&mut self) {
        self.st.update(&self.p);
    }
}

/// RFC 8033 appendix A's timestamp method (`deque`): the sojourn of the
/// packet leaving at `now` that entered at `enq_time`, or 0 when it leaves
/// the queue empty (`left`: packets in the queue after it). PIE's, PI2's
/// and FQ-PIE's delay estimate.
#[inline]
pub(super) fn departing_sojourn(now: SimTime, enq_time: SimTime, left: u32) -> SimTime {
    if left == 0 {
        SimTime::ZERO
    } else {
        now.saturating_sub(enq_time)
    }
}

impl Aqm for Pie {
    /// `enque` of RFC 8033 appendix A (ECN per section 5.1).
    #[inline]
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        if self.p.enqueue == Enqueue::Linux && self.limit.overflows(q.pkts, q.bytes, pkt.size) {
            // Linux tests the limit first; the link drops the packet.
            self.st.clear_on_overflow(&self.p);
            return Verdict::Pass;
        }
        self.st.on_arrival(&self.p, pkt.ect, q, rng)
    }

    /// The timestamp method (appendix A `deque`): the dequeued packet's
    /// sojourn, or 0 when it leaves the queue empty.
    #[inline]
    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        _tx_end: SimTime,
    ) -> Verdict {
        self.st
            .on_departure(departing_sojourn(now, pkt.enq_time, q.pkts));
        Verdict::Pass
    }

    fn tick_interval(&self) -> Option<SimTime> {
        Some(self.p.t_update)
    }

    fn on_tick(&mut self, _now: SimTime, _q: QueueLen) {
        self.update();
    }

    /// `p`, `qdelay_s` and `burst_allowance_s`, sampled only: `p` changes
    /// every 15 ms, about as often as the queue is sampled.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.st.report(out);
    }

    /// `target`, `t_update`, `max_burst` (seconds), `alpha`, `beta` (Hz)
    /// and `mark_ecnth` may change during a run; p and the delays carry
    /// over, the burst allowance is cut to a smaller `max_burst`.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        let p = self.p.changed("PIE", key, value)?;
        self.st.limit_burst(p.max_burst);
        self.p = p;
        Ok(())
    }
}

impl PieParams {
    /// These parameters with `key` set to `value` by a scheduled change
    /// (`scheme` names the caller in errors), validated.
    pub(super) fn changed(&self, scheme: &str, key: &str, value: f64) -> Result<PieParams, String> {
        const KEYS: &[&str] = &[
            "target",
            "t_update",
            "alpha",
            "beta",
            "max_burst",
            "mark_ecnth",
        ];
        let mut p = self.clone();
        match key {
            "target" => p.target = change::secs(value)?,
            "t_update" => p.t_update = change::secs(value)?,
            "alpha" => p.alpha = value,
            "beta" => p.beta = value,
            "max_burst" => p.max_burst = change::secs(value)?,
            "mark_ecnth" => p.mark_ecnth = value,
            _ => return Err(change::unknown_key(scheme, key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::units::BitRate;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }
    fn pie() -> Pie {
        let p = PieParams {
            mean_pkt_size: 500,
            ..PieParams::default()
        };
        Pie::new(p, LinkInfo::new(BitRate(10_000_000), 500))
    }
    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 500,
        }
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn auto_tuning_table() {
        assert_eq!(tune_divisor(0.0), 2048.0);
        assert_eq!(tune_divisor(0.000_005), 512.0);
        assert_eq!(tune_divisor(0.000_05), 128.0);
        assert_eq!(tune_divisor(0.000_5), 32.0);
        assert_eq!(tune_divisor(0.005), 8.0);
        assert_eq!(tune_divisor(0.05), 2.0);
        assert_eq!(tune_divisor(0.1), 1.0);
        assert_eq!(tune_divisor(0.5), 1.0);
    }

    #[test]
    fn probability_update_with_scaling() {
        let mut s = pie();
        // p = 0.005 (< 0.01: divide by 8); qdelay 20 ms, old 18 ms, target 15 ms:
        // 0.125 * 0.005 + 1.25 * 0.002 = 0.000625 + 0.0025 = 0.003125;
        // / 8 = 0.000390625; p = 0.005390625.
        s.st.drop_prob = 0.005;
        s.st.qdelay = ms(20);
        s.st.qdelay_old = ms(18);
        s.update();
        assert!(close(s.st.drop_prob, 0.005_390_625), "{}", s.st.drop_prob);
        assert_eq!(s.st.qdelay_old, ms(20));
        // p = 0.2 (no scaling): qdelay 10 ms, old 20 ms:
        // 0.125 * (-0.005) + 1.25 * (-0.01) = -0.000625 - 0.0125 = -0.013125;
        // p = 0.186875.
        s.st.drop_prob = 0.2;
        s.st.qdelay = ms(10);
        s.update();
        assert!(close(s.st.drop_prob, 0.186_875), "{}", s.st.drop_prob);
        // From p = 0 the first step is divided by 2048: qdelay 30 ms, old 10 ms:
        // 0.125 * 0.015 + 1.25 * 0.02 = 0.001875 + 0.025 = 0.026875;
        // / 2048 = 1.31225586e-5.
        s.st.drop_prob = 0.0;
        s.st.qdelay = ms(30);
        s.update();
        assert!(
            close(s.st.drop_prob, 0.026_875 / 2048.0),
            "{}",
            s.st.drop_prob
        );
    }

    #[test]
    fn cap_decay_and_bounds() {
        let mut s = pie();
        // p = 0.5, qdelay 200 ms, old 100 ms: 0.125 * 0.185 + 1.25 * 0.1 =
        // 0.148125, capped at 0.02 (section 5.5): p = 0.52.
        s.st.drop_prob = 0.5;
        s.st.qdelay = ms(200);
        s.st.qdelay_old = ms(100);
        s.update();
        assert!(close(s.st.drop_prob, 0.52), "{}", s.st.drop_prob);
        // Without the cap: 0.52 + 0.125 * 0.185 + 0 = 0.543125.
        s.p.cap_drop_adjustment = false;
        s.update();
        assert!(close(s.st.drop_prob, 0.543_125), "{}", s.st.drop_prob);
        // Bounded at 1: p = 0.99 + 0.125 * 0.185 + 0 = 1.013125 -> 1.
        s.st.drop_prob = 0.99;
        s.update();
        assert_eq!(s.st.drop_prob, 1.0);
        // Both delays zero: p = (0.3 + 0.125 * (-0.015)) * 0.98
        // = (0.3 - 0.001875) * 0.98 = 0.2921625.
        s.st.drop_prob = 0.3;
        s.st.qdelay = SimTime::ZERO;
        s.st.qdelay_old = SimTime::ZERO;
        s.update();
        assert!(close(s.st.drop_prob, 0.292_162_5), "{}", s.st.drop_prob);
        // Bounded at 0: p = 1e-7 + (-0.001875) / 2048 < 0 -> 0.
        s.st.drop_prob = 1e-7;
        s.update();
        assert_eq!(s.st.drop_prob, 0.0);
    }

    #[test]
    fn burst_allowance() {
        let mut s = pie();
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        s.st.drop_prob = 1.0;
        s.st.qdelay = ms(100);
        s.st.qdelay_old = ms(100);
        // 150 ms of allowance: nothing is dropped for 10 updates of 15 ms.
        for _ in 0..9 {
            s.update();
            s.st.drop_prob = 1.0;
            assert_eq!(s.on_enqueue(ms(0), &pkt, q(50), &mut rng), Verdict::Pass);
        }
        s.update();
        assert_eq!(s.st.burst_allowance, SimTime::ZERO);
        s.st.drop_prob = 1.0;
        assert_eq!(
            s.on_enqueue(ms(0), &pkt, q(50), &mut rng),
            Verdict::Drop(Cause::Early)
        );
        // Work-conserving safeguard: two packets queued (1000 bytes = 2 x 500).
        assert_eq!(s.on_enqueue(ms(0), &pkt, q(2), &mut rng), Verdict::Pass);
        // Reset: p = 0 and both delays below 7.5 ms restore 150 ms.
        s.st.drop_prob = 0.0;
        s.st.qdelay = ms(7);
        s.st.qdelay_old = ms(7);
        assert_eq!(s.on_enqueue(ms(0), &pkt, q(50), &mut rng), Verdict::Pass);
        assert_eq!(s.st.burst_allowance, MAX_BURST);
    }

    #[test]
    fn safeguard_low_delay_and_low_p() {
        let mut s = pie();
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo::default();
        s.st.burst_allowance = SimTime::ZERO;
        // qdelay_old 5 ms < 7.5 ms and p 0.19 < 0.2: never drop.
        s.st.drop_prob = 0.19;
        s.st.qdelay_old = ms(5);
        for _ in 0..1000 {
            assert_eq!(s.on_enqueue(ms(0), &pkt, q(50), &mut rng), Verdict::Pass);
        }
        // p 0.2: the random test applies; about 20 % dropped.
        s.st.drop_prob = 0.2;
        let n = 100_000;
        let drops = (0..n)
            .filter(|_| s.on_enqueue(ms(0), &pkt, q(50), &mut rng) != Verdict::Pass)
            .count();
        assert!((drops as f64 / n as f64 - 0.2).abs() < 0.005, "{drops}");
    }

    #[test]
    fn ecn_marks_up_to_mark_ecnth() {
        let mut s = pie();
        s.p.ecn = true;
        s.st.burst_allowance = SimTime::ZERO;
        s.st.qdelay_old = ms(20);
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ect = PacketInfo {
            ect: true,
            ..PacketInfo::default()
        };
        let plain = PacketInfo::default();
        s.st.drop_prob = 0.1;
        let v: Vec<Verdict> = (0..2000)
            .map(|_| s.on_enqueue(ms(0), &ect, q(50), &mut rng))
            .filter(|v| *v != Verdict::Pass)
            .collect();
        assert!(!v.is_empty() && v.iter().all(|v| *v == Verdict::Mark(Cause::Early)));
        s.st.drop_prob = 1.0;
        assert_eq!(
            s.on_enqueue(ms(0), &ect, q(50), &mut rng),
            Verdict::Drop(Cause::Forced)
        );
        assert_eq!(
            s.on_enqueue(ms(0), &plain, q(50), &mut rng),
            Verdict::Drop(Cause::Early)
        );
    }

    #[test]
    fn derandomisation() {
        let mut s = pie();
        s.p.derandomize = true;
        s.st.burst_allowance = SimTime::ZERO;
        s.st.qdelay_old = ms(20);
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo::default();
        // p = 0.01: accu_prob reaches 0.85 only at the 85th arrival, so the
        // first 84 pass; a drop is certain once accu_prob >= 8.5, at the
        // 850th arrival (the 851st with the rounding of 0.01 summed in f64).
        s.st.drop_prob = 0.01;
        for i in 0..84 {
            assert_eq!(
                s.on_enqueue(ms(0), &pkt, q(50), &mut rng),
                Verdict::Pass,
                "{i}"
            );
        }
        let mut since = 84;
        loop {
            since += 1;
            if s.on_enqueue(ms(0), &pkt, q(50), &mut rng) != Verdict::Pass {
                break;
            }
        }
        assert!((85..=851).contains(&since), "{since}");
        assert_eq!(s.st.accu_prob, 0.0);
    }

    #[test]
    fn dequeue_measures_sojourn() {
        let mut s = pie();
        let pkt = PacketInfo {
            enq_time: ms(10),
            ..PacketInfo::default()
        };
        s.on_dequeue(ms(32), &pkt, q(3), ms(33));
        assert_eq!(s.st.qdelay, ms(22));
        // The last packet leaves: no queue, no delay.
        s.on_dequeue(ms(40), &pkt, q(0), ms(41));
        assert_eq!(s.st.qdelay, SimTime::ZERO);
        assert_eq!(s.tick_interval(), Some(ms(15)));
        let mut names = Vec::new();
        Aqm::params(&s, &mut |n, _| names.push(n));
        assert_eq!(names, vec!["p", "qdelay_s", "burst_allowance_s"]);
    }

    #[test]
    fn set_param_applies_from_the_next_update() {
        let mut s = pie();
        s.st.drop_prob = 0.2;
        s.st.qdelay = ms(30);
        s.st.qdelay_old = ms(30);
        s.set_param("target", 0.025).unwrap(); // "25ms" arrives as 0.025 s
        s.set_param("alpha", 0.5).unwrap();
        s.set_param("beta", 2.0).unwrap();
        s.set_param("t_update", 0.030).unwrap();
        assert_eq!(s.tick_interval(), Some(ms(30)));
        assert_eq!(s.st.drop_prob, 0.2, "p carries over");
        // p = 0.2 (no scaling), qdelay 30 ms = old, target 25 ms:
        // 0.5 * 0.005 + 2 * 0 = 0.0025; p = 0.2025.
        s.update();
        assert!(close(s.st.drop_prob, 0.2025), "{}", s.st.drop_prob);
        // The burst allowance (150 ms less one 30 ms update = 120 ms) is cut to 50 ms.
        assert_eq!(s.st.burst_allowance, ms(120));
        s.set_param("max_burst", 0.05).unwrap();
        assert_eq!(s.st.burst_allowance, ms(50));
        s.set_param("mark_ecnth", 0.3).unwrap();
        assert_eq!((s.p.max_burst, s.p.mark_ecnth), (ms(50), 0.3));
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut s = pie();
        let before = s.p.clone();
        let e = s.set_param("target", 0.0).unwrap_err();
        assert!(e.contains("0s is not allowed"), "{e}");
        let e = s.set_param("t_update", -0.015).unwrap_err();
        assert!(e.contains("-0.015") && e.contains("seconds"), "{e}");
        let e = s.set_param("mark_ecnth", 1.5).unwrap_err();
        assert!(e.contains("1.5") && e.contains("[0, 1]"), "{e}");
        let e = s.set_param("beta", -1.0).unwrap_err();
        assert!(e.contains("-1") && e.contains("[0, 1000000]"), "{e}");
        assert_eq!(s.p, before);
        let e = s.set_param("ecn", 1.0).unwrap_err();
        assert!(
            e.contains("`ecn`")
                && e.contains("target, t_update, alpha, beta, max_burst, mark_ecnth"),
            "{e}"
        );
    }

    #[test]
    fn validation_names_fields() {
        let ok = PieParams::default();
        assert!(ok.validate("aqm").is_ok());
        let mut p = ok.clone();
        p.t_update = SimTime::ZERO;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.t_update");
        let mut p = ok.clone();
        p.target = SimTime::ZERO;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.target");
        let mut p = ok.clone();
        p.alpha = -0.1;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.alpha");
        let mut p = ok.clone();
        p.mark_ecnth = 1.5;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.mark_ecnth");
        let mut p = ok.clone();
        p.mean_pkt_size = 0;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.mean_pkt_size");
        let mut p = ok;
        p.enqueue = Enqueue::Linux;
        let e = p.validate("aqm").unwrap_err();
        assert_eq!(e.path, "aqm.enqueue");
        assert!(e.msg.contains("derandomize = true"), "{}", e.msg);
        p.derandomize = true;
        assert!(p.validate("aqm").is_ok());
    }

    /// PIE under `enqueue`'s rules, de-randomised, with ECN, its burst
    /// allowance spent, the delays at 20 ms, `p = 0.05` and `accu_prob` at
    /// `accu`.
    fn primed(limit: Buffer, enqueue: Enqueue, accu: f64) -> Pie {
        let p = PieParams {
            mean_pkt_size: 500,
            derandomize: true,
            enqueue,
            ecn: true,
            ..PieParams::default()
        };
        let mut link = LinkInfo::new(BitRate(10_000_000), 500);
        link.buffer = limit;
        let mut s = Pie::new(p, link);
        s.st.burst_allowance = SimTime::ZERO;
        s.st.qdelay = ms(20);
        s.st.qdelay_old = ms(20);
        s.st.drop_prob = 0.05;
        s.st.accu_prob = accu;
        s
    }

    #[test]
    fn linux_keeps_the_accumulator_after_a_marked_certain_hit() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ect = PacketInfo {
            ect: true,
            ..PacketInfo::default()
        };
        let plain = PacketInfo::default();
        // p = 0.05 and accu_prob 8.47: the arrival adds 0.05 (8.52 >= 8.5),
        // a certain hit, marked (p <= 0.1); the accumulator stays, and so
        // every next ECN-capable arrival is marked too (8.57, 8.62).
        let mut s = primed(Buffer::Packets(1000), Enqueue::Linux, 8.47);
        for want in [8.52, 8.57, 8.62] {
            assert_eq!(
                s.on_enqueue(ms(0), &ect, q(50), &mut rng),
                Verdict::Mark(Cause::Early)
            );
            assert!(close(s.st.accu_prob, want), "{}", s.st.accu_prob);
        }
        // A packet that cannot be marked is dropped, which clears it.
        assert_eq!(
            s.on_enqueue(ms(0), &plain, q(50), &mut rng),
            Verdict::Drop(Cause::Early)
        );
        assert_eq!(s.st.accu_prob, 0.0);
        // RFC 8033's rule clears it after the first mark.
        let mut r = primed(Buffer::Packets(1000), Enqueue::Rfc8033, 8.47);
        assert_eq!(
            r.on_enqueue(ms(0), &ect, q(50), &mut rng),
            Verdict::Mark(Cause::Early)
        );
        assert_eq!(r.st.accu_prob, 0.0);
    }

    #[test]
    fn linux_tests_the_full_buffer_first() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        // 10 packets of 10: the link will drop the arrival; Linux's enqueue
        // clears the accumulator and runs no early test (it would have
        // added p and, at 8.5, hit).
        let mut s = primed(Buffer::Packets(10), Enqueue::Linux, 8.47);
        assert_eq!(s.on_enqueue(ms(0), &pkt, q(10), &mut rng), Verdict::Pass);
        assert_eq!(s.st.accu_prob, 0.0);
        // With room for it the early test runs: 0.05, below 0.85, passes.
        assert_eq!(s.on_enqueue(ms(0), &pkt, q(9), &mut rng), Verdict::Pass);
        assert!(close(s.st.accu_prob, 0.05), "{}", s.st.accu_prob);
        // In bytes: 5 000 bytes hold ten 500-byte packets, not an eleventh.
        let mut b = primed(Buffer::Bytes(5_000), Enqueue::Linux, 1.0);
        assert_eq!(b.on_enqueue(ms(0), &pkt, q(10), &mut rng), Verdict::Pass);
        assert_eq!(b.st.accu_prob, 0.0);
        // RFC 8033's order adds it up and hits; the link drops it after.
        let mut r = primed(Buffer::Packets(10), Enqueue::Rfc8033, 8.47);
        assert_eq!(
            r.on_enqueue(ms(0), &pkt, q(10), &mut rng),
            Verdict::Drop(Cause::Early)
        );
    }

    #[test]
    fn linux_safeguard_reads_the_current_delay() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo::default();
        // p = 0.05 (< 0.2); the delay at the last update 5 ms (< 7.5 ms),
        // the last departure's 20 ms: RFC 8033 reads the first and passes
        // without adding to the accumulator, Linux the second and adds.
        let mut s = primed(Buffer::Packets(1000), Enqueue::Linux, 0.0);
        s.st.qdelay_old = ms(5);
        assert_eq!(s.on_enqueue(ms(0), &pkt, q(50), &mut rng), Verdict::Pass);
        assert!(close(s.st.accu_prob, 0.05), "{}", s.st.accu_prob);
        s.p.enqueue = Enqueue::Rfc8033;
        assert_eq!(s.on_enqueue(ms(0), &pkt, q(50), &mut rng), Verdict::Pass);
        assert!(close(s.st.accu_prob, 0.05), "{}", s.st.accu_prob);
    }
}
