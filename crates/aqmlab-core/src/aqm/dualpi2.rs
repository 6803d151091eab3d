//! DualPI2: the DualQ Coupled AQM with a PI2 base controller (RFC 9332).
//!
//! Reference: K. De Schepper, B. Briscoe (ed.), G. White, "DualQ Coupled
//! AQMs for Low Latency, Low Loss, and Scalable Throughput (L4S)", RFC 9332
//! (2023), sections 2 and 4.2 and the pseudo-code of appendix A. Where the
//! RFC leaves a choice open, aqmlab follows Linux's `sch_dualpi2` (merged in
//! Linux 6.17), whose defaults are the ones below; each such place says so.
//!
//! Model:
//! - Two FIFOs (RFC 9332 section 2.2): the L queue for packets with the
//!   L4S identifier, ECT(1) or CE (the classifier of section 2.3 and RFC
//!   9331 section 5.1), the C queue for Not-ECT and ECT(0). Each packet is
//!   timestamped at enqueue (appendix A.1, the sojourn technique).
//! - Base PI (section 2.4, appendix A.1 `dualpi2_update`), every
//!   `t_update` (16 ms): with `q` the larger of the two queues' sojourn
//!   times, each read from its head packet (Linux; the RFC's pseudo-code
//!   reads the C queue only),
//!   ```text
//!   p' <- p' + alpha (q - target) + beta (q - q_prev),   q_prev <- q
//!   ```
//!   delays in seconds, alpha = 0.16 Hz, beta = 3.2 Hz, target 15 ms;
//!   p' is bounded to [0, 1] (to [0, 1/k] with `drop_overload` off, as
//!   Linux caps it so that L's marking never passes 100 %).
//! - Coupling (section 2.1, appendix A.1): the classic probability is
//!   p_C = p'^2 and the coupled L4S probability p_CL = k p' with k = 2
//!   (`coupling_factor`; appendix C.2: k = 2 gives rough window parity).
//! - Dequeue (appendix A.1 `dualpi2_dequeue`; Linux decides at dequeue by
//!   default): a C packet is signalled with probability p_C, a mark when
//!   it is ECT(0), a drop when Not-ECT. An L packet is marked with
//!   probability p_CL, and again by the native L4S AQM, a step: marked when
//!   its sojourn exceeds `step_thresh` (1 ms; or, given as a number, when
//!   more than that many packets remain in the L queue), if at its arrival
//!   at least `min_qlen_step` packets were in L (Linux's rule; its default
//!   0 always applies the step, and the L4S team's 2020 kernel applied it
//!   behind more than one packet, `min_qlen_step = 2`). Linux's step and
//!   not the RFC's ramp (appendix A.1 `laqm`, minTh 800 us over 400 us).
//!   Nothing is signalled while the two queues hold fewer than 2 `mtu`
//!   bytes after the packet left (Linux's `must_drop`).
//! - Overload (section 4.2.3, appendix A.2): once p_CL = k p' exceeds 1,
//!   L packets are treated as classic: dropped with p_C = p'^2 (or, with
//!   `drop_overload` off, never dropped), every one that is not dropped is
//!   marked; C packets are dropped with p_C whatever their codepoint.
//! - Scheduler (section 4.2.2): Linux's weighted round robin in bytes, not
//!   the RFC's time-shifted FIFO. A credit counter picks L while it is <= 0
//!   (or C is empty), else C; a packet sent from L while C waits adds
//!   `wc` x its size, one sent from C while L waits takes `wl` x its size
//!   (wc = `c_protection` = 10 %, wl = 100 - wc); when both queues are
//!   empty the credit is reset to mtu x (wc - wl), so L goes first. A
//!   dropped packet moves no credit.
//! - Buffer (section 2.5.1): the link's buffer (`topology.buffer`) holds
//!   both queues; a packet that finds it full is dropped at enqueue (the
//!   link's overflow drops).
//!
//! Signals: the coupled and classic ones have cause `Early`; the step's
//! marks (and drops of a Not-ECT packet in L, which the classifier never
//! puts there) have cause `Forced`.
//!
//! Not modelled: Linux's `drop_early` (signals at enqueue), the `ecn_mask`
//! choice (ECT(1) and CE always go to L),
//! tc filters and the LLLL class, and GSO splitting.
//!
//! The scheduler owns the queued packets (by id), as FQ-CoDel's does, so
//! the link hands them here instead of to its FIFO (`net/link.rs`). Per
//! packet: a `VecDeque` push and pop, at most one uniform draw; the PI runs
//! once per `t_update`.

use super::step::Threshold;
use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::packet::{Ecn, PktId};
use crate::rng::Rng;
use crate::scenario::decode::{join, SpecError, SpecResult, Table};
use crate::scenario::Buffer;
use crate::units::SimTime;
use serde::Serialize;
use std::collections::VecDeque;

/// Default `target`: 15 ms (RFC 9332 appendix A.1; Linux).
pub const TARGET: SimTime = SimTime::from_millis(15);
/// Default `t_update`: 16 ms (Linux; the RFC's min(target, RTT_max / 3) = 15 ms).
pub const T_UPDATE: SimTime = SimTime::from_millis(16);
/// Default `alpha`: 0.16 Hz (Linux's 41/256; RFC 9332 appendix A.1's
/// 0.1 Tupdate / RTT_max^2 = 0.15 Hz with RTT_max = 100 ms).
pub const ALPHA: f64 = 0.16;
/// Default `beta`: 3.2 Hz (Linux's 819/256; the RFC's 0.3 / RTT_max = 3 Hz).
pub const BETA: f64 = 3.2;
/// Default step threshold of the L queue: 1 ms sojourn (Linux).
pub const STEP_THRESH: SimTime = SimTime::from_millis(1);
/// Default coupling factor k (RFC 9332 section 2.1, appendix C.2).
pub const COUPLING: u32 = 2;
/// Default weight of the C queue in the scheduler, percent (Linux).
pub const C_PROTECTION: u32 = 10;
/// Largest `alpha` and `beta`, Hz: Linux's (2^31 - 1) / 256.
pub const GAIN_MAX: f64 = 8_388_607.996;
/// Longest `target`, `t_update` and time step: Linux's u32 microseconds.
pub const TIME_MAX: SimTime = SimTime::from_nanos(4_294_967_295_000);

/// DualPI2's parameters (Linux's names where they exist).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DualPi2Params {
    /// Queue delay target of the base PI, in [0, 4294.967295 s]. Default 15 ms.
    pub target: SimTime,
    /// Period of the PI update, in [1 us, 4294.967295 s]. Default 16 ms.
    pub t_update: SimTime,
    /// Integral gain, Hz, in (0, 8388608). Default 0.16.
    pub alpha: f64,
    /// Proportional gain, Hz, in (0, 8388608). Default 3.2.
    pub beta: f64,
    /// The L queue's step: a sojourn time (`"1ms"`, the default) or a
    /// number of packets left in the L queue.
    pub step_thresh: Threshold,
    /// Packets the L queue must hold at an arrival for the step to apply to
    /// it (Linux's `min_qlen_step`). Default 0: always.
    pub min_qlen_step: u32,
    /// k: p_CL = k p', in [1, 255]. Default 2.
    pub coupling_factor: u32,
    /// The C queue's weight in the scheduler, percent, in [0, 100]. Default 10.
    pub c_protection: u32,
    /// Drop L packets with p_C once p_CL > 1 (Linux's `drop_overload`,
    /// the default); off: cap p' at 1/k and keep marking.
    pub drop_overload: bool,
    /// Bytes of an MTU, >= 1: no signal below 2 MTU queued; the scheduler's
    /// initial credit. Default: `tcp.packet_size`.
    pub mtu: u32,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            target: TARGET,
            t_update: T_UPDATE,
            alpha: ALPHA,
            beta: BETA,
            step_thresh: Threshold::Sojourn(STEP_THRESH),
            min_qlen_step: 0,
            coupling_factor: COUPLING,
            c_protection: C_PROTECTION,
            drop_overload: true,
            mtu: 1000,
        }
    }
}

impl DualPi2Params {
    /// Read the DualPI2 keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<DualPi2Params> {
        let d = DualPi2Params::default();
        let step_thresh = match t.take("step_thresh") {
            Some(v) => {
                let path = t.field_path("step_thresh");
                match Threshold::decode(&v, &path)? {
                    Threshold::Bytes(_) => {
                        return Err(SpecError::new(
                            path,
                            format!("{v} is not allowed; give a sojourn time (\"1ms\") or a whole number of packets"),
                        ))
                    }
                    th => th,
                }
            }
            None => d.step_thresh,
        };
        let p = DualPi2Params {
            target: t.time("target", d.target)?,
            t_update: t.time("t_update", d.t_update)?,
            alpha: t.f64("alpha", d.alpha)?,
            beta: t.f64("beta", d.beta)?,
            step_thresh,
            min_qlen_step: t.u32("min_qlen_step", d.min_qlen_step)?,
            coupling_factor: t.u32("coupling_factor", d.coupling_factor)?,
            c_protection: t.u32("c_protection", d.c_protection)?,
            drop_overload: t.bool("drop_overload", d.drop_overload)?,
            mtu: t.u32("mtu", default_pkt_size)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        super::pi2::check_pi_core(
            path,
            self.target,
            self.t_update,
            self.alpha,
            self.beta,
            self.coupling_factor,
        )?;
        if let Threshold::Sojourn(s) = self.step_thresh {
            if s > TIME_MAX {
                return Err(SpecError::new(
                    f("step_thresh"),
                    format!("{s} is outside the allowed range [0s, 4294.967295s]"),
                ));
            }
        }
        if self.c_protection > 100 {
            return Err(SpecError::new(
                f("c_protection"),
                format!(
                    "{} is outside the allowed range [0, 100] percent",
                    self.c_protection
                ),
            ));
        }
        if self.mtu == 0 {
            return Err(SpecError::new(
                f("mtu"),
                "0 is not allowed; give a size in bytes >= 1",
            ));
        }
        Ok(())
    }
}

/// A packet held by DualPI2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held {
    pub id: PktId,
    /// Bytes on the wire.
    pub size: u32,
    /// When it was enqueued.
    pub enq_time: SimTime,
    /// Its codepoint on arrival.
    pub ecn: Ecn,
    /// The step may mark it: set by [`DualPi2::enqueue`] (`min_qlen_step`).
    step: bool,
}

impl Held {
    /// Packet `id` of `size` bytes with codepoint `ecn`, arriving at `enq_time`.
    pub fn new(id: PktId, size: u32, enq_time: SimTime, ecn: Ecn) -> Held {
        Held {
            id,
            size,
            enq_time,
            ecn,
            step: true,
        }
    }
}

/// Which of the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The L4S queue (ECT(1), CE).
    L = 0,
    /// The classic queue (Not-ECT, ECT(0)).
    C = 1,
}

/// The scheme: two queues, the base PI and the scheduler's credit.
#[derive(Clone, Debug)]
pub struct DualPi2 {
    p: DualPi2Params,
    l: VecDeque<Held>,
    c: VecDeque<Held>,
    l_bytes: u64,
    c_bytes: u64,
    /// The base probability p', in [0, 1].
    prob: f64,
    /// The delay the PI read at its previous update.
    last_qdelay: SimTime,
    /// Each queue's head sojourn at the last update (for the series).
    l_qdelay: SimTime,
    c_qdelay: SimTime,
    /// The scheduler's credit, byte-percent: L goes while it is <= 0.
    credit: i64,
}

impl DualPi2 {
    pub fn new(p: DualPi2Params, _link: LinkInfo) -> DualPi2 {
        let mut d = DualPi2 {
            p,
            l: VecDeque::new(),
            c: VecDeque::new(),
            l_bytes: 0,
            c_bytes: 0,
            prob: 0.0,
            last_qdelay: SimTime::ZERO,
            l_qdelay: SimTime::ZERO,
            c_qdelay: SimTime::ZERO,
            credit: 0,
        };
        d.credit = d.credit_init();
        d
    }

    pub fn params(&self) -> &DualPi2Params {
        &self.p
    }

    /// The base probability p'.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// The credit the scheduler starts from: mtu x (wc - wl) (Linux).
    fn credit_init(&self) -> i64 {
        let wc = self.p.c_protection as i64;
        self.p.mtu as i64 * (wc - (100 - wc))
    }

    /// Packets and bytes held in both queues.
    #[inline]
    pub fn qlen(&self) -> QueueLen {
        QueueLen {
            pkts: (self.l.len() + self.c.len()) as u32,
            bytes: self.l_bytes + self.c_bytes,
        }
    }

    /// Packets held in the L and C queues.
    pub fn lens(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.l.is_empty() && self.c.is_empty()
    }

    /// Every held packet (L queue, then C queue).
    pub fn iter(&self) -> impl Iterator<Item = &Held> {
        self.l.iter().chain(self.c.iter())
    }

    /// Enqueue (RFC 9332 appendix A.1 `dualpi2_enqueue`): false when the
    /// buffer is full (the caller drops the packet), else the packet joins
    /// the L queue if it carries the L4S identifier (section 2.3), the C
    /// queue otherwise.
    #[inline]
    pub fn enqueue(&mut self, mut pkt: Held, limit: Buffer) -> bool {
        let pkts = (self.l.len() + self.c.len()) as u32;
        if limit.overflows(pkts, self.l_bytes + self.c_bytes, pkt.size) {
            return false;
        }
        if pkt.ecn.l4s() {
            // Linux's `skb_apply_step`: the L queue's length before it.
            pkt.step = self.l.len() >= self.p.min_qlen_step as usize;
            self.l.push_back(pkt);
            self.l_bytes += pkt.size as u64;
        } else {
            self.c.push_back(pkt);
            self.c_bytes += pkt.size as u64;
        }
        true
    }

    /// Dequeue (appendix A.1 `dualpi2_dequeue`, Linux's scheduler): the
    /// next packet, its queue and its verdict (`Drop`: call again at the
    /// same `now` for the next), or `None` when both queues are empty.
    #[inline]
    pub fn dequeue(&mut self, now: SimTime, rng: &mut Rng) -> Option<(Held, Class, Verdict)> {
        let wc = self.p.c_protection as i64;
        // Section 4.2.2: the weighted round robin decides which queue.
        let (pkt, class, change) = if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0)
        {
            let pkt = self.l.pop_front()?;
            self.l_bytes -= pkt.size as u64;
            let change = if self.c.is_empty() { 0 } else { wc };
            (pkt, Class::L, change * pkt.size as i64)
        } else if let Some(pkt) = self.c.pop_front() {
            self.c_bytes -= pkt.size as u64;
            let change = if self.l.is_empty() { 0 } else { -(100 - wc) };
            (pkt, Class::C, change * pkt.size as i64)
        } else {
            self.credit = self.credit_init();
            return None;
        };
        let v = self.signal(now, &pkt, class, rng);
        if !matches!(v, Verdict::Drop(_)) {
            self.credit += change;
        }
        Some((pkt, class, v))
    }

    /// The verdict on a packet leaving queue `class` (appendix A.1's
    /// dequeue, A.2's overload; Linux's `must_drop` and step).
    #[inline]
    fn signal(&mut self, now: SimTime, pkt: &Held, class: Class, rng: &mut Rng) -> Verdict {
        let ect = pkt.ecn.capable();
        let mut verdict = Verdict::Pass;
        // Linux: no signal while less than 2 MTU remain queued.
        if self.l_bytes + self.c_bytes >= 2 * self.p.mtu as u64 && self.prob > 0.0 {
            let p = self.prob;
            let p_cl = self.p.coupling_factor as f64 * p;
            // Section 4.2.3: L4S marking saturated.
            let overload = p_cl > 1.0;
            verdict = match class {
                Class::C => {
                    // p_C = p'^2 (section 2.1): drop Not-ECT, mark ECT(0);
                    // drop whatever the codepoint under overload.
                    if rng.uniform() < p * p {
                        if overload || !ect {
                            Verdict::Drop(Cause::Early)
                        } else {
                            Verdict::Mark(Cause::Early)
                        }
                    } else {
                        Verdict::Pass
                    }
                }
                Class::L if overload => {
                    // Appendix A.2: classic drop first, then mark all.
                    if self.p.drop_overload && rng.uniform() < p * p {
                        Verdict::Drop(Cause::Early)
                    } else {
                        Verdict::Mark(Cause::Early)
                    }
                }
                Class::L => {
                    // p_CL = k p' (section 2.1).
                    if rng.uniform() < p_cl {
                        if ect {
                            Verdict::Mark(Cause::Early)
                        } else {
                            Verdict::Drop(Cause::Early)
                        }
                    } else {
                        Verdict::Pass
                    }
                }
            };
        }
        if class == Class::L && verdict == Verdict::Pass && pkt.step {
            // The native L4S AQM: Linux's step (section 2.4 leaves its shape open).
            let above = match self.p.step_thresh {
                Threshold::Sojourn(t) => now.saturating_sub(pkt.enq_time) > t,
                Threshold::Packets(n) => self.l.len() > n as usize,
                Threshold::Bytes(b) => self.l_bytes > b,
            };
            if above {
                verdict = if ect {
                    Verdict::Mark(Cause::Forced)
                } else {
                    Verdict::Drop(Cause::Forced)
                };
            }
        }
        verdict
    }

    /// The base PI (appendix A.1 `dualpi2_update`, on the larger of the
    /// two queues' head sojourns as Linux reads them), run every `t_update`.
    pub fn update(&mut self, now: SimTime) {
        let head = |q: &VecDeque<Held>| {
            q.front()
                .map_or(SimTime::ZERO, |h| now.saturating_sub(h.enq_time))
        };
        self.l_qdelay = head(&self.l);
        self.c_qdelay = head(&self.c);
        let q = self.l_qdelay.max(self.c_qdelay);
        let secs = |t: SimTime| t.as_secs_f64();
        let delta = super::pi2::pi_delta(
            self.p.alpha,
            self.p.beta,
            secs(q),
            secs(self.p.target),
            secs(self.last_qdelay),
        );
        self.last_qdelay = q;
        let max = if self.p.drop_overload {
            1.0
        } else {
            1.0 / self.p.coupling_factor as f64
        };
        self.prob = (self.prob + delta).clamp(0.0, max);
    }
}

impl Aqm for DualPi2 {
    /// Unused: the link hands DualPI2's packets to [`DualPi2::enqueue`]
    /// and takes them from [`DualPi2::dequeue`].
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        _q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Pass
    }

    fn tick_interval(&self) -> Option<SimTime> {
        Some(self.p.t_update)
    }

    fn on_tick(&mut self, now: SimTime, _q: QueueLen) {
        self.update(now);
    }

    /// `p` (p'), `p_c` (p'^2), `p_cl` (min(k p', 1)), the head sojourns
    /// of the L and C queues at the last update (`l_qdelay_s`,
    /// `c_qdelay_s`, the PI's inputs) and the packets in each queue
    /// (`l_pkts`, `c_pkts`), sampled only.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p", self.prob);
        out("p_c", self.prob * self.prob);
        out("p_cl", (self.p.coupling_factor as f64 * self.prob).min(1.0));
        out("l_qdelay_s", self.l_qdelay.as_secs_f64());
        out("c_qdelay_s", self.c_qdelay.as_secs_f64());
        out("l_pkts", self.l.len() as f64);
        out("c_pkts", self.c.len() as f64);
    }

    /// `target`, `t_update` (seconds), `alpha`, `beta` (Hz),
    /// `coupling_factor`, `c_protection` and `min_qlen_step` may change
    /// during a run; p',
    /// the queues and the credit carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &[
            "target",
            "t_update",
            "alpha",
            "beta",
            "coupling_factor",
            "c_protection",
            "min_qlen_step",
        ];
        let mut p = self.p.clone();
        match key {
            "target" => p.target = change::secs(value)?,
            "t_update" => p.t_update = change::secs(value)?,
            "alpha" => p.alpha = value,
            "beta" => p.beta = value,
            "coupling_factor" => p.coupling_factor = change::count(value)?,
            "c_protection" => p.c_protection = change::count(value)?,
            "min_qlen_step" => p.min_qlen_step = change::count(value)?,
            _ => return Err(change::unknown_key("DualPI2", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.p = p;
        Ok(())
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
    fn us(x: u64) -> SimTime {
        SimTime::from_micros(x)
    }
    fn dq() -> DualPi2 {
        let p = DualPi2Params {
            mtu: 1500,
            ..DualPi2Params::default()
        };
        DualPi2::new(p, LinkInfo::new(BitRate(100_000_000), 1500))
    }
    fn held(id: u32, ecn: Ecn, at: SimTime) -> Held {
        Held::new(id, 1500, at, ecn)
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }
    const BIG: Buffer = Buffer::Packets(1000);

    /// ECT(1) and CE go to L, Not-ECT and ECT(0) to C (section 2.3); a
    /// full buffer refuses the arrival.
    #[test]
    fn classifier_and_limit() {
        let mut d = dq();
        for (i, e) in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce]
            .into_iter()
            .enumerate()
        {
            assert!(d.enqueue(held(i as u32, e, ms(0)), BIG));
        }
        assert_eq!(d.lens(), (2, 2));
        let l: Vec<u32> = d.l.iter().map(|h| h.id).collect();
        assert_eq!(l, vec![1, 3]);
        assert_eq!(
            d.qlen(),
            QueueLen {
                pkts: 4,
                bytes: 6000
            }
        );
        assert!(!d.enqueue(held(9, Ecn::Ect1, ms(0)), Buffer::Packets(4)));
        assert!(!d.enqueue(held(9, Ecn::Ect1, ms(0)), Buffer::Bytes(7000)));
        assert!(d.enqueue(held(9, Ecn::Ect1, ms(0)), Buffer::Bytes(7500)));
    }

    /// The PI's step by hand: p' = 0.1, both heads queued, L's head 5 ms,
    /// C's 20 ms at the update: q = 20 ms; previous 18 ms:
    /// 0.16 (0.020 - 0.015) + 3.2 (0.020 - 0.018) = 0.0008 + 0.0064 =
    /// 0.0072; p' = 0.1072, p_C = 0.01149184, p_CL = 0.2144.
    #[test]
    fn pi_update_on_the_larger_sojourn() {
        let mut d = dq();
        d.prob = 0.1;
        d.last_qdelay = ms(18);
        d.enqueue(held(1, Ecn::Ect1, ms(95)), BIG);
        d.enqueue(held(2, Ecn::NotEct, ms(80)), BIG);
        d.update(ms(100));
        assert!(close(d.prob, 0.1072), "{}", d.prob);
        assert_eq!(
            (d.l_qdelay, d.c_qdelay, d.last_qdelay),
            (ms(5), ms(20), ms(20))
        );
        let mut got = Vec::new();
        Aqm::params(&d, &mut |n, v| got.push((n, v)));
        assert!(close(got[1].1, 0.1072 * 0.1072) && close(got[2].1, 0.2144));
        // Empty queues: q = 0: 0.16 (-0.015) + 3.2 (-0.020) = -0.0664;
        // p' = 0.0408.
        let mut e = dq();
        e.prob = 0.1072;
        e.last_qdelay = ms(20);
        e.update(ms(200));
        assert!(close(e.prob, 0.0408), "{}", e.prob);
        // Empty still: 0.0408 - 0.16 x 0.015 = 0.0384; from 0.002 the
        // same step is bounded at 0; then at 1 (1/k without drop_overload).
        e.update(ms(300));
        assert!(close(e.prob, 0.0384), "{}", e.prob);
        e.prob = 0.002;
        e.update(ms(400));
        assert_eq!(e.prob, 0.0);
        e.prob = 0.99;
        e.last_qdelay = ms(0);
        e.enqueue(held(1, Ecn::NotEct, ms(0)), BIG);
        e.update(ms(500)); // + 0.16 x 0.485 + 3.2 x 0.5
        assert_eq!(e.prob, 1.0);
        e.p.drop_overload = false;
        e.update(ms(600));
        assert_eq!(e.prob, 0.5);
    }

    /// The scheduler by hand (wc = 10, wl = 90, mtu 1500): the credit
    /// starts at 1500 x (10 - 90) = -120000, so L goes first; each L
    /// packet while C waits adds 10 x 1500 = 15000: after 8 L packets the
    /// credit is 0 (still L), after 9 it is 15000 and C goes, taking
    /// 90 x 1500 = 135000: -120000 again. So 9 L packets per C packet
    /// (90 % / 10 %) while both are backlogged.
    #[test]
    fn weighted_round_robin_gives_c_ten_percent() {
        let mut d = dq();
        let mut rng = Rng::new(1, Stream::Aqm(0));
        for i in 0..40 {
            d.enqueue(held(i, Ecn::Ect1, ms(0)), BIG);
            d.enqueue(held(100 + i, Ecn::NotEct, ms(0)), BIG);
        }
        assert_eq!(d.credit, -120_000);
        let order: String = (0..20)
            .map(|_| match d.dequeue(ms(0), &mut rng).unwrap().1 {
                Class::L => 'L',
                Class::C => 'C',
            })
            .collect();
        assert_eq!(order, "LLLLLLLLLCLLLLLLLLLC");
        assert_eq!(d.credit, -120_000);
        // A queue alone moves no credit; empty, the credit is reset.
        let mut d = dq();
        d.credit = 5;
        d.enqueue(held(1, Ecn::NotEct, ms(0)), BIG);
        assert_eq!(d.dequeue(ms(0), &mut rng).unwrap().1, Class::C);
        assert_eq!(d.credit, 5);
        assert!(d.dequeue(ms(0), &mut rng).is_none());
        assert_eq!(d.credit, -120_000);
    }

    /// The step: an L packet that waited more than 1 ms is marked
    /// (`Forced`); 1 ms exactly passes; C packets never see it. With a
    /// threshold of 2 packets, the third packet left in L marks.
    #[test]
    fn native_step_on_sojourn_and_packets() {
        let mut d = dq();
        let mut rng = Rng::new(1, Stream::Aqm(0));
        d.enqueue(held(1, Ecn::Ect1, ms(0)), BIG);
        d.enqueue(held(2, Ecn::Ect1, us(1)), BIG);
        d.enqueue(held(3, Ecn::NotEct, ms(0)), BIG);
        let t = ms(1) + SimTime(1);
        assert_eq!(d.dequeue(ms(1), &mut rng).unwrap().2, Verdict::Pass);
        assert_eq!(d.dequeue(t, &mut rng).unwrap().2, Verdict::Pass);
        let (h, class, v) = d.dequeue(ms(5), &mut rng).unwrap();
        assert_eq!((h.id, class, v), (3, Class::C, Verdict::Pass));
        let (h, _, v) = {
            d.enqueue(held(4, Ecn::Ce, ms(0)), BIG);
            d.dequeue(t, &mut rng).unwrap()
        };
        assert_eq!((h.id, v), (4, Verdict::Mark(Cause::Forced)));
        let mut d = dq();
        d.p.step_thresh = Threshold::Packets(2);
        for i in 0..4 {
            d.enqueue(held(i, Ecn::Ect1, ms(10)), BIG);
        }
        // After the first leaves, 3 remain (> 2): marked; then 2, 1, 0.
        let v: Vec<Verdict> = (0..4)
            .map(|_| d.dequeue(ms(10), &mut rng).unwrap().2)
            .collect();
        assert_eq!(v[0], Verdict::Mark(Cause::Forced));
        assert!(v[1..].iter().all(|v| *v == Verdict::Pass));
    }

    /// `min_qlen_step = 2`: the step spares a packet that arrived behind
    /// fewer than two L packets, however long it waited; the third and
    /// fourth arrivals (behind 2 and 3) are marked. C packets do not count.
    #[test]
    fn step_applies_behind_min_qlen_step_packets() {
        let mut d = dq();
        d.p.min_qlen_step = 2;
        let mut rng = Rng::new(1, Stream::Aqm(0));
        d.enqueue(held(9, Ecn::NotEct, ms(0)), BIG);
        for i in 0..4 {
            d.enqueue(held(i, Ecn::Ect1, ms(0)), BIG);
        }
        let v: Vec<(u32, Verdict)> = (0..5)
            .map(|_| {
                let (h, _, v) = d.dequeue(ms(10), &mut rng).unwrap();
                (h.id, v)
            })
            .collect();
        let marked = Verdict::Mark(Cause::Forced);
        assert_eq!(
            v,
            vec![
                (0, Verdict::Pass),
                (1, Verdict::Pass),
                (2, marked),
                (3, marked),
                (9, Verdict::Pass)
            ]
        );
    }

    /// Coupled and classic probabilities: p' = 0.2 gives p_CL = 0.4 on L
    /// and p_C = 0.04 on C (ECT(0) marked, Not-ECT dropped); no signal
    /// below 2 MTU queued.
    #[test]
    fn coupled_and_squared_probabilities() {
        let mut rng = Rng::new(7, Stream::Aqm(0));
        let n = 40_000;
        let frac = |ecn: Ecn, rng: &mut Rng| {
            let mut d = dq();
            d.prob = 0.2;
            d.p.step_thresh = Threshold::Sojourn(ms(1000));
            let mut hit = (0, 0);
            for i in 0..n {
                // Keep 3 packets behind the one leaving (>= 2 MTU).
                while d.qlen().pkts < 4 {
                    d.enqueue(held(i, ecn, ms(0)), BIG);
                }
                match d.dequeue(ms(0), rng).unwrap().2 {
                    Verdict::Mark(Cause::Early) => hit.0 += 1,
                    Verdict::Drop(Cause::Early) => hit.1 += 1,
                    Verdict::Pass => {}
                    v => panic!("{v:?}"),
                }
            }
            (hit.0 as f64 / n as f64, hit.1 as f64 / n as f64)
        };
        let (m, dr) = frac(Ecn::Ect1, &mut rng);
        assert!((m - 0.4).abs() < 0.01 && dr == 0.0, "{m} {dr}");
        let (m, dr) = frac(Ecn::Ect0, &mut rng);
        assert!((m - 0.04).abs() < 0.004 && dr == 0.0, "{m} {dr}");
        let (m, dr) = frac(Ecn::NotEct, &mut rng);
        assert!(m == 0.0 && (dr - 0.04).abs() < 0.004, "{m} {dr}");
        // One packet behind (1500 bytes < 3000): never signalled.
        let mut d = dq();
        d.prob = 1.0;
        d.enqueue(held(1, Ecn::NotEct, ms(0)), BIG);
        d.enqueue(held(2, Ecn::NotEct, ms(0)), BIG);
        assert_eq!(d.dequeue(ms(0), &mut rng).unwrap().2, Verdict::Pass);
    }

    /// Overload (section 4.2.3): p' = 0.7, k p' = 1.4 > 1: L packets are
    /// dropped with p'^2 = 0.49 and every other one marked; ECT(0) in C is
    /// dropped, not marked. Without `drop_overload`, L is only marked.
    #[test]
    fn overload_drops_l4s_as_classic() {
        let mut rng = Rng::new(3, Stream::Aqm(0));
        let n = 20_000;
        let run = |drop_overload: bool, ecn: Ecn, rng: &mut Rng| {
            let mut d = dq();
            d.p.drop_overload = drop_overload;
            d.prob = 0.7;
            let (mut marks, mut drops) = (0, 0);
            for i in 0..n {
                while d.qlen().pkts < 4 {
                    d.enqueue(held(i, ecn, ms(0)), BIG);
                }
                match d.dequeue(ms(0), rng).unwrap().2 {
                    Verdict::Mark(_) => marks += 1,
                    Verdict::Drop(_) => drops += 1,
                    Verdict::Pass => {}
                }
            }
            (marks as f64 / n as f64, drops as f64 / n as f64)
        };
        let (m, dr) = run(true, Ecn::Ect1, &mut rng);
        assert!((dr - 0.49).abs() < 0.015 && close(m + dr, 1.0), "{m} {dr}");
        let (m, dr) = run(false, Ecn::Ect1, &mut rng);
        assert!(m == 1.0 && dr == 0.0, "{m} {dr}");
        let (m, dr) = run(true, Ecn::Ect0, &mut rng);
        assert!(m == 0.0 && (dr - 0.49).abs() < 0.015, "{m} {dr}");
    }

    #[test]
    fn validation_names_fields_and_ranges() {
        let ok = DualPi2Params::default();
        assert!(ok.validate("aqm").is_ok());
        let bad = |f: &dyn Fn(&mut DualPi2Params)| {
            let mut p = DualPi2Params::default();
            f(&mut p);
            p.validate("aqm").unwrap_err()
        };
        let e = bad(&|p| p.t_update = SimTime::ZERO);
        assert_eq!(e.path, "aqm.t_update");
        assert!(e.msg.contains("[1us, 4294.967295s]"), "{}", e.msg);
        assert_eq!(bad(&|p| p.alpha = 0.0).path, "aqm.alpha");
        assert_eq!(bad(&|p| p.beta = 1e7).path, "aqm.beta");
        let e = bad(&|p| p.coupling_factor = 0);
        assert!(e.path == "aqm.coupling_factor" && e.msg.contains("[1, 255]"));
        let e = bad(&|p| p.c_protection = 101);
        assert!(e.path == "aqm.c_protection" && e.msg.contains("101"));
        assert_eq!(bad(&|p| p.mtu = 0).path, "aqm.mtu");
        assert_eq!(
            bad(&|p| p.target = SimTime::from_secs(5000)).path,
            "aqm.target"
        );
    }

    #[test]
    fn set_param_keeps_the_state() {
        let mut d = dq();
        d.prob = 0.3;
        d.set_param("target", 0.005).unwrap();
        d.set_param("coupling_factor", 3.0).unwrap();
        d.set_param("c_protection", 50.0).unwrap();
        assert_eq!(
            (d.p.target, d.p.coupling_factor, d.p.c_protection),
            (ms(5), 3, 50)
        );
        assert_eq!(d.prob, 0.3);
        let e = d.set_param("c_protection", 150.0).unwrap_err();
        assert!(e.contains("150") && e.contains("[0, 100]"), "{e}");
        let e = d.set_param("mtu", 1.0).unwrap_err();
        assert!(e.contains("`mtu`") && e.contains("coupling_factor"), "{e}");
    }
}
