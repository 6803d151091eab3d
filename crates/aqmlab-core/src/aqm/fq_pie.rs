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
//!   (`flows` = 1024 queues by hash, quantum = 1514 bytes, new flows
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

use super::fq_codel::{check_flows_quantum, flows_fixed, FlowAqm, FlowParams, FlowQueues, Queued, FLOWS, QUANTUM};
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
    /// DRR quantum, bytes, in [1, 1e6]. Default 1514 (Linux: the MTU).
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
        let derandomize = t.bool("derandomize", true)?;
        let mut pie = PieParams::decode(t, default_pkt_size)?;
        pie.derandomize = derandomize;
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

impl FlowParams for FqPieParams {
    #[inline(always)]
    fn flows(&self) -> u32 {
        self.flows
    }
    #[inline(always)]
    fn quantum(&self) -> u32 {
        self.quantum
    }
}

impl FlowAqm for PieState {
    type Params = FqPieParams;
    /// `sch_fq_pie` drops the arrival when the qdisc is full.
    #[inline(always)]
    fn tail_drop(_p: &FqPieParams) -> bool {
        true
    }

    fn new(p: &FqPieParams) -> PieState {
        PieState::new(&p.pie)
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
