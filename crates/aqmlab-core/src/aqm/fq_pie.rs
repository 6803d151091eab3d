//! FQ-PIE: the flow-queue scheduler of FQ-CoDel with PIE in every queue,
//! as Linux's `sch_fq_pie`.
//!
//! References: RFC 8290 (the flow-queue scheduler: hash, new and old
//! lists, DRR, sections 4.1 and 4.2), RFC 8033 (PIE: sections 4.1-4.4 and
//! 5.1, 5.4, 5.5), and Linux's `net/sched/sch_fq_pie.c` (G. Ramakrishnan,
//! M. P. Tahiliani et al., 2020) for how the two are put together and its
//! defaults. The seed papers (`/work/shared/seeds/`) do not cover FQ-PIE.
//!
//! Model:
//! - Scheduler: [`super::fq_codel::FlowQueues`], shared with FQ-CoDel
//!   (`flows` = 1024 queues by hash, quantum = 1500 bytes, new flows
//!   first, DRR; RFC 8290 sections 4.1, 4.2).
//! - Per-queue PIE (RFC 8033): each queue has its own [`PieState`] (drop
//!   probability `p`, delays, burst allowance, `accu_prob`) under one
//!   shared [`PieParams`]. At enqueue, `drop_early` (section 4.1) reads
//!   the flow queue's own bytes for its 2 x MEAN_PKTSIZE safeguard (as
//!   `sch_fq_pie` hands `pie_drop_early` the flow's backlog). At dequeue
//!   the queue's delay is the departing packet's sojourn, 0 when it
//!   leaves its queue empty (appendix A's timestamp method, Linux's
//!   default `dq_rate_estimator` off). Every `t_update` every queue's `p`
//!   is updated by section 4.2 (`p += alpha (qdelay - target) + beta
//!   (qdelay - qdelay_old)`, auto-tuned, capped by section 5.5), as
//!   `fq_pie_timer` walks every flow; a queue in the idle state (`p = 0`,
//!   both delays 0) is skipped, which changes nothing (the update would
//!   only shorten its burst allowance, which its next arrival restores).
//! - ECN (section 5.1): with `ecn` on (Linux's default: off), an
//!   ECN-capable packet selected for a signal is CE-marked while the
//!   queue's `p <= ecn_prob` (Linux `ecn_prob`, 10 %), dropped above it
//!   (cause [`super::Cause::Forced`]).
//! - De-randomisation (section 5.4): on by default, as Linux's
//!   `pie_drop_early` always accumulates `accu_prob` (`derandomize =
//!   false` gives RFC 8033's plain Bernoulli test).
//! - Overflow: `sch_fq_pie` drops the arriving packet when the qdisc holds
//!   `limit` packets (10240 by default); here the limit is the link's
//!   buffer (`topology.buffer`; the scenario file sets 10240 packets).
//!   These are the link's overflow drops.
//!
//! Not modelled: `memory_limit` (32 MB in Linux, which only counts the
//! packets above it in `overmemory` and drops none), `bytemode`, the
//! departure-rate estimator, Linux's fixed-point arithmetic and its
//! extras beyond RFC 8033 (the 250 ms "non-linear" boost, the decay by
//! 1/64 instead of 2 %); an empty new queue always moves to the old list
//! (Linux: only when the old list is not empty), as in FQ-CoDel here.
//!
//! Per packet: one hash, PIE's enqueue test and one sojourn; the
//! probability updates cost one pass over the non-idle queues per
//! `t_update`.

use super::fq_codel::{
    check_flows_quantum, flows_fixed, FlowAqm, FlowQueues, Queued, FLOWS, QUANTUM,
};
use super::pie::{departing_sojourn, PieParams, PieState};
use super::{change, Aqm, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// FQ-PIE's parameters (Linux `fq_pie`'s, with RFC 8033's PIE).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FqPieParams {
    /// Number of flow queues, in [1, 65536]. Default 1024 (Linux `flows`).
    pub flows: u32,
    /// DRR quantum, bytes, in [1, 1e6]. Default 1500 (Linux: the device's
    /// MTU with its link-layer header, one full packet).
    pub quantum: u32,
    /// Every queue's PIE: `target` 15 ms, `t_update` 15 ms, `alpha`
    /// 0.125, `beta` 1.25, `max_burst` 150 ms, `ecn` off, `mark_ecnth`
    /// (Linux `ecn_prob`) 0.1, `derandomize` on, `cap_drop_adjustment` on,
    /// `mean_pkt_size` (`tcp.packet_size`).
    #[serde(flatten)]
    pub pie: PieParams,
}

impl Default for FqPieParams {
    fn default() -> Self {
        FqPieParams {
            flows: FLOWS,
            quantum: QUANTUM,
            pie: PieParams {
                derandomize: true,
                ..PieParams::default()
            },
        }
    }
}

impl FqPieParams {
    /// Read the FQ-PIE keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<FqPieParams> {
        let flows = t.u32("flows", FLOWS)?;
        let quantum = t.u32("quantum", QUANTUM)?;
        // Linux's default: de-randomised (`pie_drop_early`).
        let pie = PieParams::decode_with(t, default_pkt_size, FqPieParams::default().pie)?;
        let p = FqPieParams {
            flows,
            quantum,
            pie,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        check_flows_quantum(path, self.flows, self.quantum)?;
        self.pie.validate(path)
    }
}

super::fq_codel::flow_params!(FqPieParams);

impl FlowAqm for PieState {
    type Params = FqPieParams;
    /// PIE decides at enqueue (RFC 8033 section 4.1).
    const HAS_ARRIVAL_HOOK: bool = true;
    /// `sch_fq_pie` drops the arrival when the qdisc is full.
    #[inline(always)]
    fn tail_drop(_p: &FqPieParams) -> bool {
        true
    }

    fn new(p: &FqPieParams) -> PieState {
        PieState::new(&p.pie)
    }

    /// Linux clears the flow's accumulator (`enqueue = "linux"`).
    #[inline]
    fn on_overflow(&mut self, p: &FqPieParams, _now: SimTime) {
        self.clear_on_overflow(&p.pie);
    }

    /// `pie_drop_early` on the flow queue's backlog (RFC 8033 section 4.1).
    #[inline]
    fn on_arrival(
        &mut self,
        p: &FqPieParams,
        pkt: &Queued,
        flow_q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        self.on_arrival(&p.pie, pkt.ecn.capable(), flow_q, rng)
    }

    /// The timestamp method (RFC 8033 appendix A `deque`) per queue.
    #[inline]
    fn on_departure(
        &mut self,
        _p: &FqPieParams,
        now: SimTime,
        pkt: &Queued,
        flow_q: QueueLen,
        _total_bytes: u64,
        _rng: &mut Rng,
    ) -> Verdict {
        self.on_departure(departing_sojourn(now, pkt.enq_time, flow_q.pkts));
        Verdict::Pass
    }

    #[inline]
    fn on_empty(&mut self, _p: &FqPieParams, _now: SimTime) {}
}

/// FQ-PIE: the flow-queue scheduler with PIE in every queue.
pub type FqPie = FlowQueues<PieState>;

impl Aqm for FqPie {
    /// Unused: the link hands FQ-PIE's packets to [`FqPie::enqueue`] and
    /// takes them from [`FqPie::dequeue`].
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
        Some(self.params().pie.t_update)
    }

    /// Section 4.2's update for every queue (`fq_pie_timer`).
    fn on_tick(&mut self, _now: SimTime, _q: QueueLen) {
        let (p, states) = self.states_mut();
        for st in states {
            if !st.is_idle() {
                st.update(&p.pie);
            }
        }
    }

    /// `active_flows`, `new_flows`, and the largest and the mean `p` of
    /// the queues holding packets (`p_max`, `p_mean`), sampled only.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("active_flows", self.active_flows() as f64);
        out("new_flows", self.new_flows_len() as f64);
        let (mut max, mut sum, mut n) = (0.0f64, 0.0, 0u32);
        for st in self.states().filter(|s| s.drop_prob() > 0.0) {
            max = max.max(st.drop_prob());
            sum += st.drop_prob();
            n += 1;
        }
        out("p_max", max);
        out("p_mean", if n == 0 { 0.0 } else { sum / n as f64 });
    }

    /// PIE's `target`, `t_update`, `alpha`, `beta`, `max_burst`,
    /// `mark_ecnth` and the `quantum` may change during a run; every
    /// queue's state carries over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &[
            "target",
            "t_update",
            "alpha",
            "beta",
            "max_burst",
            "mark_ecnth",
            "quantum",
        ];
        let mut p = self.params().clone();
        match key {
            "quantum" => {
                p.quantum = change::count(value)?;
                p.validate("").map_err(|e| change::invalid(key, e))?;
            }
            "flows" => return Err(flows_fixed("FQ-PIE", key, KEYS)),
            _ if !KEYS.contains(&key) => return Err(change::unknown_key("FQ-PIE", key, KEYS)),
            _ => {
                p.pie = p.pie.changed("FQ-PIE", key, value)?;
                let (_, states) = self.states_mut();
                for st in states {
                    st.limit_burst(p.pie.max_burst);
                }
            }
        }
        self.set_params(p);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::pie::Enqueue;
    use crate::aqm::LinkInfo;
    use crate::packet::{Ecn, PktId};
    use crate::rng::Stream;
    use crate::scenario::Buffer;
    use crate::units::BitRate;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// FQ-PIE with 1000-byte MEAN_PKTSIZE, and the first flow id whose
    /// queue is not flow 0's (with seed 1: 2).
    fn sched() -> (FqPie, Rng, u32) {
        let mut p = FqPieParams::default();
        p.pie.mean_pkt_size = 1000;
        let mut s = FqPie::new(p, LinkInfo::new(BitRate(10_000_000), 1000));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let mut ev = Vec::new();
        // Draw the perturbation with a first packet, then take it back out.
        s.enqueue(
            pkt(0, ms(0)),
            0,
            Buffer::Packets(100),
            SimTime::ZERO,
            &mut rng,
            &mut ev,
        );
        s.dequeue(ms(0), &mut rng).unwrap();
        // Flow 0's queue, found empty, leaves the lists.
        assert!(s.dequeue(ms(0), &mut rng).is_none());
        let other = (1..)
            .find(|&f| s.bucket(u64::from(f)) != s.bucket(0))
            .unwrap();
        (s, rng, other)
    }

    fn pkt(id: PktId, at: SimTime) -> Queued {
        Queued {
            id,
            size: 1000,
            enq_time: at,
            ecn: Ecn::NotEct,
        }
    }

    /// Each queue has its own delay and probability: flow 0's queue holds
    /// 3 packets from t = 0; the second leaves at 31 ms with one behind
    /// it (qdelay 31 ms); the other flow's only packet leaves its queue
    /// empty (qdelay 0). One update: flow 0's p = (0.125 x (0.031 -
    /// 0.015) + 1.25 x (0.031 - 0)) / 2048 = (0.002 + 0.03875) / 2048 =
    /// 0.04075 / 2048 (p = 0: the auto-tuning divides by 2048); the other
    /// queue stays idle at p = 0.
    #[test]
    fn per_queue_delay_and_probability() {
        let (mut s, mut rng, f1) = sched();
        let mut ev = Vec::new();
        let lim = Buffer::Packets(100);
        for id in 1..=3 {
            s.enqueue(pkt(id, ms(0)), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        s.enqueue(
            pkt(11, ms(20)),
            u64::from(f1),
            lim,
            SimTime::ZERO,
            &mut rng,
            &mut ev,
        );
        // Flow 0 is new first: packet 1 at 30 ms (deficit 1514 -> 514).
        let (p, v) = s.dequeue(ms(30), &mut rng).unwrap();
        assert_eq!((p.id, v), (1, Verdict::Pass));
        // 514 > 0: packet 2 next, at 31 ms (1 behind: qdelay 31 ms).
        let (p, _) = s.dequeue(ms(31), &mut rng).unwrap();
        assert_eq!(p.id, 2);
        // Flow 0's deficit -486: to the old list; flow 1 sends its only
        // packet, leaving its queue empty: its qdelay is 0.
        let (p, _) = s.dequeue(ms(32), &mut rng).unwrap();
        assert_eq!(p.id, 11);
        let q0 = s.state_of(0).clone();
        let q1 = s.state_of(f1).clone();
        assert_eq!((q0.qdelay(), q1.qdelay()), (ms(31), SimTime::ZERO));
        s.on_tick(ms(45), QueueLen::default());
        // 0.125 x 0.016 + 1.25 x 0.031 = 0.002 + 0.03875 = 0.04075; / 2048.
        let p0 = s.state_of(0).drop_prob();
        assert!((p0 - 0.040_75 / 2048.0).abs() < 1e-15, "{p0}");
        assert!(s.state_of(f1).is_idle());
        assert_eq!(s.state_of(f1).drop_prob(), 0.0);
    }

    /// A full buffer refuses the arrival (Linux `fq_pie`), whatever the
    /// queues hold: limit 2, flow 0 holds 2, flow 1's packet is refused.
    #[test]
    fn overflow_drops_the_arrival() {
        let (mut s, mut rng, f1) = sched();
        let mut ev = Vec::new();
        let lim = Buffer::Packets(2);
        s.enqueue(pkt(1, ms(1)), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        s.enqueue(pkt(2, ms(1)), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        assert!(ev.is_empty());
        let v = s.enqueue(
            pkt(3, ms(1)),
            u64::from(f1),
            lim,
            SimTime::ZERO,
            &mut rng,
            &mut ev,
        );
        assert_eq!((v, ev.as_slice()), (Verdict::Pass, &[3][..]));
        assert_eq!(s.qlen().pkts, 2);
        // A byte limit of 2500: the third 1000-byte packet would make 3000.
        ev.clear();
        s.enqueue(
            pkt(4, ms(1)),
            u64::from(f1),
            Buffer::Bytes(2500),
            SimTime::ZERO,
            &mut rng,
            &mut ev,
        );
        assert_eq!(ev, vec![4]);
    }

    /// Under Linux's enqueue a full buffer clears the arriving flow's
    /// accumulator (`sch_fq_pie` clears it on every drop); under RFC
    /// 8033's it stays: limit 1, flow 1 holds 2.0, flow 0's queue the one
    /// packet.
    #[test]
    fn overflow_clears_the_accumulator_under_linux() {
        for (enqueue, left) in [(Enqueue::Linux, 0.0), (Enqueue::Rfc8033, 2.0)] {
            let (mut s, mut rng, f1) = sched();
            let mut p = s.params().clone();
            p.pie.enqueue = enqueue;
            s.set_params(p);
            let (_, states) = s.states_mut();
            states.for_each(|q| q.set_accu_prob(2.0));
            let mut ev = Vec::new();
            let lim = Buffer::Packets(1);
            s.enqueue(pkt(1, ms(1)), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
            s.enqueue(
                pkt(2, ms(1)),
                u64::from(f1),
                lim,
                SimTime::ZERO,
                &mut rng,
                &mut ev,
            );
            assert_eq!(ev, vec![2]);
            assert_eq!(s.state_of(f1).accu_prob(), left, "{enqueue:?}");
        }
    }

    /// Linux's defaults: 1024 queues, quantum one packet (1500 IP bytes;
    /// Linux's 1514 with the Ethernet header), target and t_update
    /// 15 ms, alpha 0.125, beta 1.25, ECN off with `ecn_prob` 10 %,
    /// de-randomised.
    #[test]
    fn defaults_are_linux_fq_pie() {
        let p = FqPieParams::default();
        assert_eq!((p.flows, p.quantum), (1024, 1500));
        assert_eq!((p.pie.target, p.pie.t_update), (ms(15), ms(15)));
        assert_eq!((p.pie.alpha, p.pie.beta), (0.125, 1.25));
        assert!(!p.pie.ecn && p.pie.derandomize);
        assert_eq!(p.pie.mark_ecnth, 0.1);
    }

    #[test]
    fn set_param_and_validation() {
        let (mut s, _, _) = sched();
        s.set_param("target", 0.02).unwrap();
        s.set_param("quantum", 3000.0).unwrap();
        assert_eq!((s.params().pie.target, s.params().quantum), (ms(20), 3000));
        let e = s.set_param("flows", 8.0).unwrap_err();
        assert!(e.contains("rehashed") && e.contains("quantum"), "{e}");
        let e = s.set_param("ecn", 1.0).unwrap_err();
        assert!(
            e.contains("FQ-PIE") && e.contains("mark_ecnth, quantum"),
            "{e}"
        );
        let e = s.set_param("quantum", 0.0).unwrap_err();
        assert!(e.contains("[1, 1000000]"), "{e}");
        let p = FqPieParams {
            flows: 0,
            ..FqPieParams::default()
        };
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.flows");
        let mut p = FqPieParams::default();
        p.pie.alpha = -1.0;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.alpha");
    }
}
