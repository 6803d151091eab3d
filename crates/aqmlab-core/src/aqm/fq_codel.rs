//! FQ-CoDel: the Flow Queue CoDel packet scheduler and AQM (RFC 8290).
//!
//! Reference: T. Hoeiland-Joergensen, P. McKenney, D. Taht, J. Gettys,
//! E. Dumazet, "The Flow Queue CoDel Packet Scheduler and Active Queue
//! Management Algorithm", RFC 8290 (2018). The seed papers
//! (`/work/shared/seeds/`) do not cover FQ-CoDel; the RFC is the
//! specification.
//!
//! Model:
//! - Classification (RFC 8290 section 4.1): each packet's flow identifier
//!   (our stand-in for the 5-tuple) is hashed into one of `flows` queues
//!   (default 1024, section 5.2.5). The hash is a 64-bit finaliser of the
//!   flow id mixed with a perturbation drawn from the link's AQM random
//!   stream at the first packet, so collisions depend on the run's seed
//!   and are reproducible.
//! - Enqueue (section 4.1): the packet is timestamped and added to the
//!   tail of its queue. A queue that is in neither flow list joins the
//!   tail of the new-flows list with `deficit = quantum`. If the link's
//!   buffer limit (`topology.buffer`, in packets or bytes) is then
//!   exceeded, packets are dropped from the head of the queue with the
//!   largest byte backlog: a batch, until half that backlog is gone or 64
//!   packets are (section 4.1; Linux's `fq_codel_drop` with its default
//!   `drop_batch` of 64, ns-3's `DropBatchSize`), at least one. These
//!   drops are the link's overflow drops.
//! - Dequeue (section 4.2): deficit round robin over the new list, then the
//!   old list. A queue whose deficit is <= 0 gets `quantum` more and moves
//!   to the tail of the old list. Otherwise CoDel dequeues from it (every
//!   queue has its own CoDel state, shared parameters; the state machine
//!   is [`super::codel::CodelState`], not a copy); a sent packet's size is
//!   taken from the deficit. A queue found empty leaves the new list for
//!   the tail of the old list (so a flow cannot stay "new" by emptying its
//!   queue), or leaves the old list altogether.
//! - Quantum (section 5.2.4): 1500 bytes by default, one Ethernet MTU of
//!   the IP bytes aqmlab counts. The RFC's 1514 and Linux's default (the
//!   device's MTU with its link-layer header) are one full 1500-byte packet
//!   with its 14-byte Ethernet header, which aqmlab's packets do not carry:
//!   with 1514 here a flow of 1500-byte packets kept 14 bytes of credit
//!   after each, so a queue it emptied left the lists at once (its next
//!   packet came back as a new flow) where Linux's, its credit spent to
//!   the byte, waits a round on the old list. With 500-byte data packets a
//!   backlogged flow sends 3 packets per round, with 1000-byte packets 1
//!   or 2 (1.5); fairness is in bytes either way.
//! - MAXPACKET (RFC 8289 section 5.5): CoDel sends no signal while at
//!   most `maxpacket` bytes remain queued. By default the bytes are the
//!   whole scheduler's, as Linux's `fq_codel` passes the qdisc's backlog
//!   to CoDel (`maxpacket_backlog = "all"`); `"flow"` reads the flow
//!   queue's own bytes, each queue's CoDel taken as a CoDel of its own.
//!   With many flows each holding one or two packets the difference is
//!   large: under `"flow"` such flows are never signalled.
//! - ECN (section 5.2.6): with `ecn` on, CoDel marks ECN-capable packets
//!   instead of dropping them. CoDel signals have cause [`Cause::Early`].
//! - CE threshold (Linux `fq_codel`'s `ce_threshold` with its selector
//!   set to ECT(1); ns-3's `UseL4s` mode): off unless `ce_threshold` is
//!   given. An ECT(1) packet that CoDel passes is CE-marked when its
//!   sojourn is strictly above the threshold (cause `Forced`). CoDel still
//!   runs on every packet, as in Linux.
//!
//! The scheduler is generic over the per-queue AQM ([`FlowAqm`]):
//! [`FlowQueues<A>`] holds the queues, lists and deficits once, and each
//! scheme supplies its queue state (CoDel's here, PIE's in `fq_pie.rs`,
//! COBALT's in `cobalt.rs`); every hook is resolved at compile time, so
//! FQ-CoDel's code path is CoDel's alone.
//!
//! Mid-run changes ([`Aqm::set_param`]): every queue's CoDel `target`,
//! `interval` and `maxpacket`, and the `quantum` (from each queue's next
//! credit; deficits carry over). The number of queues (`flows`) cannot
//! change: it would rehash every flow.
//!
//! The scheduler owns the queued packets (by id), so the link stores them
//! here instead of in its FIFO (`net/link.rs`). Per packet: one hash, a
//! `VecDeque` push and pop, list moves at round boundaries; no allocation
//! once the queues have grown. An overflow scans the active queues for
//! the largest backlog.

use super::codel::{CodelParams, CodelState};
use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::packet::{Ecn, PktId};
use crate::rng::Rng;
use crate::scenario::decode::{join, SpecError, SpecResult, Table};
use crate::scenario::Buffer;
use crate::units::SimTime;
use serde::Serialize;
use std::collections::VecDeque;

/// Default number of flow queues (RFC 8290 section 5.2.5).
pub const FLOWS: u32 = 1024;
/// Default quantum, bytes: one 1500-byte packet (RFC 8290 section 5.2.4's
/// 1514 is that packet with the Ethernet header aqmlab does not count).
pub const QUANTUM: u32 = 1500;

/// FQ-CoDel's parameters (RFC 8290 section 5.2). The packet limit of
/// section 5.2.3 is the link's buffer (`topology.buffer`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FqCodelParams {
    /// Number of flow queues, in [1, 65536]. Default 1024 (section 5.2.5).
    pub flows: u32,
    /// DRR quantum, bytes, in [1, 1e6]. Default 1500 (section 5.2.4's 1514
    /// less the Ethernet header).
    pub quantum: u32,
    /// Every flow queue's CoDel: `target` (5 ms), `interval` (100 ms),
    /// `maxpacket` (`tcp.packet_size`), `ecn` (sections 5.2.1, 5.2.2, 5.2.6).
    #[serde(flatten)]
    pub codel: CodelParams,
    /// Whose backlog CoDel's MAXPACKET test reads (RFC 8289 section 5.5:
    /// no signal while at most `maxpacket` bytes remain queued).
    pub maxpacket_backlog: Backlog,
    /// Linux's `ce_threshold` with the ECT(1) selector: CE-mark an ECT(1)
    /// packet whose sojourn exceeds it (CoDel still runs). Off by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<SimTime>,
}

/// The bytes CoDel's MAXPACKET test compares with `maxpacket`
/// (`aqm.maxpacket_backlog`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backlog {
    /// Every flow queue's bytes together, as Linux's `fq_codel` does (it
    /// hands CoDel the qdisc's backlog): a flow with one packet behind its
    /// head is still signalled while other flows hold packets. The default.
    All,
    /// The flow queue's own bytes: each queue's CoDel read as a CoDel of
    /// its own (RFC 8290 section 4.2 does not say which), so a flow with
    /// at most `maxpacket` bytes behind its head is never signalled.
    Flow,
}

/// The names `maxpacket_backlog` takes.
pub const BACKLOG_NAMES: &[&str] = &["all", "flow"];

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            flows: FLOWS,
            quantum: QUANTUM,
            codel: CodelParams::default(),
            maxpacket_backlog: Backlog::All,
            ce_threshold: None,
        }
    }
}

impl FqCodelParams {
    /// Read the FQ-CoDel keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<FqCodelParams> {
        let flows = t.u32("flows", FLOWS)?;
        let quantum = t.u32("quantum", QUANTUM)?;
        let codel = CodelParams::decode(t, default_pkt_size)?;
        let maxpacket_backlog = match t.choice("maxpacket_backlog", BACKLOG_NAMES, Some("all"))? {
            "flow" => Backlog::Flow,
            _ => Backlog::All,
        };
        let ce_threshold = if t.has("ce_threshold") {
            Some(t.time("ce_threshold", SimTime::ZERO)?)
        } else {
            None
        };
        let p = FqCodelParams {
            flows,
            quantum,
            codel,
            maxpacket_backlog,
            ce_threshold,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        check_flows_quantum(path, self.flows, self.quantum)?;
        if let Some(th) = self.ce_threshold {
            if th == SimTime::ZERO || th > SimTime::from_secs(10) {
                return Err(SpecError::new(
                    join(path, "ce_threshold"),
                    format!(
                        "{th} is outside the allowed range (0s, 10s]; give a time such as \"1ms\""
                    ),
                ));
            }
        }
        self.codel.validate(path)
    }
}

/// The ranges of a flow scheduler's `flows` and `quantum`.
pub(super) fn check_flows_quantum(path: &str, flows: u32, quantum: u32) -> SpecResult<()> {
    if !(1..=65_536).contains(&flows) {
        return Err(SpecError::new(
            join(path, "flows"),
            format!("{flows} is outside the allowed range [1, 65536]"),
        ));
    }
    if !(1..=1_000_000).contains(&quantum) {
        return Err(SpecError::new(
            join(path, "quantum"),
            format!("{quantum} is outside the allowed range [1, 1000000] bytes"),
        ));
    }
    Ok(())
}

/// A packet held by the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub id: PktId,
    /// Bytes on the wire.
    pub size: u32,
    /// When it was enqueued.
    pub enq_time: SimTime,
    /// Its ECN codepoint.
    pub ecn: Ecn,
}

/// The parameters every flow-queue scheduler has (RFC 8290 section 5.2).
pub trait FlowParams: Clone + std::fmt::Debug {
    /// Number of flow queues.
    fn flows(&self) -> u32;
    /// DRR quantum, bytes.
    fn quantum(&self) -> u32;
}

/// The most packets one overflow drops from the largest queue (RFC 8290
/// section 4.1; Linux's `fq_codel` `drop_batch` and ns-3's `DropBatchSize`
/// default).
pub const DROP_BATCH: u32 = 64;

/// The AQM of one flow queue under the shared scheduler [`FlowQueues`]:
/// CoDel's state for FQ-CoDel, PIE's for FQ-PIE, COBALT's for FQ-COBALT.
/// Every queue has its own state; the parameters are shared.
pub trait FlowAqm: Clone + std::fmt::Debug {
    type Params: FlowParams;
    /// When the link's buffer is full: drop the arriving packet (Linux's
    /// `fq_pie`, ns-3's single-queue COBALT), or the head of the queue
    /// with the largest backlog (RFC 8290 section 4.1, FQ-CoDel).
    fn tail_drop(p: &Self::Params) -> bool;
    /// The most packets one overflow drops from the head of the largest
    /// queue, until half its bytes are gone: [`DROP_BATCH`] for FQ-CoDel
    /// (RFC 8290 section 4.1, Linux, ns-3), one for CAKE's `cake_drop`
    /// (FQ-COBALT), where each dropped packet also raises the queue's BLUE.
    const OVERFLOW_BATCH: u32 = 1;
    /// Whether the AQM needs the dequeue that finds every queue empty
    /// (COBALT's BLUE learns from it). The link dequeues only while packets
    /// wait, so the scheduler replays that dequeue, dated at the end of the
    /// last transmission (`busy_until` of [`FlowQueues::enqueue`]), when
    /// the next packet arrives after it. Off for CoDel and PIE: no cost
    /// there.
    const IDLE_POLL: bool = false;
    /// Whether [`FlowAqm::on_arrival`] may answer other than `Pass` (PIE
    /// acts at enqueue). Off for CoDel and COBALT: the scheduler then asks
    /// nothing at arrival, and the link does not look at its answer.
    const HAS_ARRIVAL_HOOK: bool = false;
    /// A queue's state at start.
    fn new(p: &Self::Params) -> Self;
    /// A packet arrives at a flow queue holding `flow_q`; the default
    /// lets every packet in (CoDel acts at dequeue only).
    #[inline(always)]
    fn on_arrival(
        &mut self,
        _p: &Self::Params,
        _pkt: &Queued,
        _flow_q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Pass
    }
    /// A packet leaves its queue at `now`; `flow_q` is the flow queue
    /// after it left, `total_bytes` every queue's bytes. A `Drop` makes
    /// the scheduler present the queue's next packet at the same `now`.
    fn on_departure(
        &mut self,
        p: &Self::Params,
        now: SimTime,
        pkt: &Queued,
        flow_q: QueueLen,
        total_bytes: u64,
        rng: &mut Rng,
    ) -> Verdict;
    /// The queue was found empty at dequeue, at `now`.
    fn on_empty(&mut self, p: &Self::Params, now: SimTime);
    /// The buffer overflowed at `now` and this queue lost a packet.
    #[inline(always)]
    fn on_overflow(&mut self, _p: &Self::Params, _now: SimTime) {}
}

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue.
#[derive(Clone, Debug)]
struct FlowQueue<A> {
    q: VecDeque<Queued>,
    bytes: u64,
    /// DRR credit, bytes.
    deficit: i64,
    list: List,
    aqm: A,
}

impl<A> FlowQueue<A> {
    #[inline]
    fn len(&self) -> QueueLen {
        QueueLen {
            pkts: self.q.len() as u32,
            bytes: self.bytes,
        }
    }
}

/// The flow-queue scheduler of RFC 8290 (hash, new and old lists, DRR),
/// with the per-queue AQM `A`: [`FqCodel`], [`super::FqPie`],
/// [`super::FqCobalt`].
#[derive(Clone, Debug)]
pub struct FlowQueues<A: FlowAqm> {
    p: A::Params,
    queues: Vec<FlowQueue<A>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    /// Packets and bytes held, over every queue.
    pkts: u32,
    bytes: u64,
    /// Queues holding at least one packet.
    active: u32,
    /// Hash perturbation, drawn at the first packet.
    perturb: Option<u64>,
}

/// FQ-CoDel: the scheduler with CoDel in every queue.
pub type FqCodel = FlowQueues<CodelState>;

/// `FlowParams` for a parameter struct with `flows` and `quantum` fields.
macro_rules! flow_params {
    ($t:ty) => {
        impl $crate::aqm::fq_codel::FlowParams for $t {
            #[inline(always)]
            fn flows(&self) -> u32 {
                self.flows
            }
            #[inline(always)]
            fn quantum(&self) -> u32 {
                self.quantum
            }
        }
    };
}
pub(super) use flow_params;

flow_params!(FqCodelParams);

impl FlowAqm for CodelState {
    type Params = FqCodelParams;
    const OVERFLOW_BATCH: u32 = DROP_BATCH;

    #[inline(always)]
    fn tail_drop(_p: &FqCodelParams) -> bool {
        false
    }

    fn new(_p: &FqCodelParams) -> CodelState {
        CodelState::default()
    }

    #[inline(always)]
    fn on_departure(
        &mut self,
        p: &FqCodelParams,
        now: SimTime,
        pkt: &Queued,
        flow_q: QueueLen,
        total_bytes: u64,
        _rng: &mut Rng,
    ) -> Verdict {
        let sojourn = now.saturating_sub(pkt.enq_time);
        let backlog = match p.maxpacket_backlog {
            Backlog::All => total_bytes,
            Backlog::Flow => flow_q.bytes,
        };
        let v = self.on_packet(&p.codel, now, sojourn, backlog, pkt.ecn.capable());
        match p.ce_threshold {
            None => v,
            Some(th) => ce_threshold_mark(v, pkt.ecn, sojourn, th),
        }
    }

    #[inline(always)]
    fn on_empty(&mut self, p: &FqCodelParams, now: SimTime) {
        CodelState::on_empty(self, &p.codel, now)
    }
}

/// Linux `fq_codel`'s `ce_threshold` with the ECT(1) selector (the L4S
/// mode of ns-3's FqCoDel): an ECT(1) packet that CoDel lets pass is
/// CE-marked when its sojourn exceeds the threshold (strictly, as Linux's
/// `codel_time_after`). Cause [`Cause::Forced`], apart from CoDel's marks.
#[inline]
fn ce_threshold_mark(v: Verdict, ecn: Ecn, sojourn: SimTime, th: SimTime) -> Verdict {
    if v == Verdict::Pass && ecn == Ecn::Ect1 && sojourn > th {
        Verdict::Mark(Cause::Forced)
    } else {
        v
    }
}

impl<A: FlowAqm> FlowQueues<A> {
    pub fn new(p: A::Params, _link: LinkInfo) -> FlowQueues<A> {
        let q = FlowQueue {
            q: VecDeque::new(),
            bytes: 0,
            deficit: 0,
            list: List::None,
            aqm: A::new(&p),
        };
        FlowQueues {
            queues: vec![q; p.flows() as usize],
            p,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            pkts: 0,
            bytes: 0,
            active: 0,
            perturb: None,
        }
    }

    pub fn params(&self) -> &A::Params {
        &self.p
    }

    /// Packets and bytes held.
    #[inline]
    pub fn qlen(&self) -> QueueLen {
        QueueLen {
            pkts: self.pkts,
            bytes: self.bytes,
        }
    }

    /// Whether any packet is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }

    /// Queues holding at least one packet.
    pub fn active_flows(&self) -> u32 {
        self.active
    }

    /// Length of the new-flows list.
    pub fn new_flows_len(&self) -> usize {
        self.new_flows.len()
    }

    /// Every held packet (queue by queue).
    pub fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.queues.iter().flat_map(|f| f.q.iter())
    }

    /// Every queue's AQM state.
    pub fn states(&self) -> impl Iterator<Item = &A> {
        self.queues.iter().map(|f| &f.aqm)
    }

    /// The AQM state of the queue flow `flow` (hash label 0) hashes to.
    pub fn state_of(&self, flow: u32) -> &A {
        &self.queues[self.bucket(u64::from(flow))].aqm
    }

    /// Every queue's AQM state, with the shared parameters.
    pub fn states_mut(&mut self) -> (&A::Params, impl Iterator<Item = &mut A>) {
        (&self.p, self.queues.iter_mut().map(|f| &mut f.aqm))
    }

    /// Replace the shared parameters (a scheduled change, validated by the
    /// caller); the queues and their states carry over.
    pub fn set_params(&mut self, p: A::Params) {
        self.p = p;
    }

    /// The queue of hash key `key` (section 4.1's hash with perturbation;
    /// the key is the flow id with its hash label above, as
    /// [`crate::packet::Packet::hash_key`] makes it).
    #[inline]
    pub fn bucket(&self, key: u64) -> usize {
        let mut z = (key ^ self.perturb.unwrap_or(0)).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z as u128 * self.queues.len() as u128) >> 64) as usize
    }

    /// Enqueue a packet of hash key `key` (its flow and hash label, RFC 8290
    /// section 4.1) at a link
    /// busy sending until `busy_until`. The queue's
    /// AQM may first drop or mark it (the answer; a dropped packet is not
    /// queued). On overflow of `limit`: under a tail-drop AQM the arriving
    /// packet is refused; otherwise packets are dropped from the head of
    /// the queue with the largest backlog until the limit holds. Either
    /// way the overflow's ids are pushed on `evicted` (the arriving packet
    /// may be among them).
    #[inline]
    pub fn enqueue(
        &mut self,
        pkt: Queued,
        key: u64,
        limit: Buffer,
        busy_until: SimTime,
        rng: &mut Rng,
        evicted: &mut Vec<PktId>,
    ) -> Verdict {
        if self.perturb.is_none() {
            self.perturb = Some(rng.next_u64());
        }
        if A::IDLE_POLL && self.pkts == 0 && pkt.enq_time > busy_until {
            // The link's poll when its last transmission ended found every
            // queue empty (a no-op once the lists are cleared).
            let none = self.dequeue(busy_until, rng);
            debug_assert!(none.is_none());
        }
        let i = self.bucket(key);
        let tail_drop = A::tail_drop(&self.p);
        if tail_drop && self.full(limit, pkt.size) {
            self.queues[i].aqm.on_overflow(&self.p, pkt.enq_time);
            evicted.push(pkt.id);
            return Verdict::Pass;
        }
        let quantum = self.p.quantum() as i64;
        let f = &mut self.queues[i];
        let v = if A::HAS_ARRIVAL_HOOK {
            let v = f.aqm.on_arrival(&self.p, &pkt, f.len(), rng);
            if let Verdict::Drop(_) = v {
                return v;
            }
            v
        } else {
            Verdict::Pass
        };
        if f.q.is_empty() {
            self.active += 1;
        }
        f.q.push_back(pkt);
        f.bytes += pkt.size as u64;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = quantum;
            self.new_flows.push_back(i as u32);
        }
        self.pkts += 1;
        self.bytes += pkt.size as u64;
        if !tail_drop && self.over(limit) {
            self.evict_over(limit, pkt.enq_time, evicted);
        }
        v
    }

    /// Drop batches from the head of the queue with the largest backlog
    /// until `limit` holds (RFC 8290 section 4.1; one batch drops at least
    /// one packet, so one batch is enough unless a packet larger than the
    /// rest arrived under a byte limit), pushing the ids on `evicted`.
    /// Out of line: the enqueue path only tests the limit.
    #[cold]
    #[inline(never)]
    fn evict_over(&mut self, limit: Buffer, now: SimTime, evicted: &mut Vec<PktId>) {
        while self.over(limit) {
            if !self.evict_fattest(now, evicted) {
                break;
            }
        }
    }

    /// [`FlowQueues::dequeue`], not inlined (FQ-PIE's and COBALT's calls
    /// from the link, which inlines FQ-CoDel's alone).
    #[inline(never)]
    pub fn dequeue_outlined(&mut self, now: SimTime, rng: &mut Rng) -> Option<(Queued, Verdict)> {
        self.dequeue(now, rng)
    }

    #[inline]
    fn over(&self, limit: Buffer) -> bool {
        match limit {
            Buffer::Packets(n) => self.pkts > n,
            Buffer::Bytes(b) => self.bytes > b,
        }
    }

    /// Whether a packet of `size` bytes would exceed `limit`.
    #[inline]
    fn full(&self, limit: Buffer, size: u32) -> bool {
        limit.overflows(self.pkts, self.bytes, size)
    }

    /// Drop a batch from the head of the queue with the largest byte
    /// backlog (the first such queue in list order: new list, then old
    /// list): packets until half its bytes are gone (the backlog halved
    /// rounding down, as Linux's `maxbacklog >> 1`) or
    /// [`FlowAqm::OVERFLOW_BATCH`] packets are, at least one. False if
    /// every queue is empty.
    fn evict_fattest(&mut self, now: SimTime, evicted: &mut Vec<PktId>) -> bool {
        let mut best: Option<(u64, usize)> = None;
        for &i in self.new_flows.iter().chain(self.old_flows.iter()) {
            let b = self.queues[i as usize].bytes;
            if b > 0 && best.is_none_or(|(bb, _)| b > bb) {
                best = Some((b, i as usize));
            }
        }
        let Some((backlog, i)) = best else {
            return false;
        };
        let f = &mut self.queues[i];
        let (mut gone, mut n) = (0u64, 0u32);
        while let Some(pkt) = f.q.pop_front() {
            f.aqm.on_overflow(&self.p, now);
            f.bytes -= pkt.size as u64;
            self.pkts -= 1;
            self.bytes -= pkt.size as u64;
            evicted.push(pkt.id);
            gone += pkt.size as u64;
            n += 1;
            if n >= A::OVERFLOW_BATCH || gone >= backlog / 2 {
                break;
            }
        }
        if f.q.is_empty() {
            self.active -= 1;
        }
        true
    }

    /// Dequeue (RFC 8290 section 4.2): the next packet to send with its
    /// AQM's verdict (`Pass` or `Mark`), or a packet the AQM dropped
    /// (`Drop`; call again at the same `now` to continue), or `None` when
    /// empty.
    #[inline]
    pub fn dequeue(&mut self, now: SimTime, rng: &mut Rng) -> Option<(Queued, Verdict)> {
        loop {
            let (i, from_new) = if let Some(&i) = self.new_flows.front() {
                (i as usize, true)
            } else if let Some(&i) = self.old_flows.front() {
                (i as usize, false)
            } else {
                return None;
            };
            let f = &mut self.queues[i];
            if f.deficit <= 0 {
                // Round done: more credit, and to the back of the old list.
                f.deficit += self.p.quantum() as i64;
                f.list = List::Old;
                self.pop_list(from_new);
                self.old_flows.push_back(i as u32);
                continue;
            }
            let Some(pkt) = f.q.pop_front() else {
                // The AQM's dequeue on an empty queue (CoDel: RFC 8289
                // section 5.5).
                f.aqm.on_empty(&self.p, now);
                f.list = if from_new { List::Old } else { List::None };
                self.pop_list(from_new);
                if from_new {
                    self.old_flows.push_back(i as u32);
                }
                continue;
            };
            f.bytes -= pkt.size as u64;
            if f.q.is_empty() {
                self.active -= 1;
            }
            self.pkts -= 1;
            self.bytes -= pkt.size as u64;
            let flow_q = f.len();
            let v = f
                .aqm
                .on_departure(&self.p, now, &pkt, flow_q, self.bytes, rng);
            if !matches!(v, Verdict::Drop(_)) {
                f.deficit -= pkt.size as i64;
            }
            return Some((pkt, v));
        }
    }

    #[inline]
    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

impl Aqm for FqCodel {
    /// Unused: the link hands FQ-CoDel's packets to [`FqCodel::enqueue`]
    /// and takes them from [`FqCodel::dequeue`].
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        _q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Pass
    }

    /// `active_flows` (queues holding packets) and `new_flows` (length of
    /// the new-flows list), sampled only.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("active_flows", self.active as f64);
        out("new_flows", self.new_flows.len() as f64);
    }

    /// `target`, `interval` (seconds), `maxpacket` and `quantum` (bytes)
    /// may change during a run; the queues, their deficits and CoDel states
    /// carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["target", "interval", "maxpacket", "quantum"];
        let mut p = self.p.clone();
        match key {
            "target" => p.codel.target = change::secs(value)?,
            "interval" => p.codel.interval = change::secs(value)?,
            "maxpacket" => p.codel.maxpacket = change::count(value)?,
            "quantum" => p.quantum = change::count(value)?,
            "flows" => return Err(flows_fixed("FQ-CoDel", key, KEYS)),
            _ => return Err(change::unknown_key("FQ-CoDel", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.p = p;
        Ok(())
    }
}

/// The error for a scheduled change of a flow scheduler's `flows`.
pub(super) fn flows_fixed(scheme: &str, key: &str, keys: &[&str]) -> String {
    format!(
        "{}; the number of queues cannot change during a run (every flow would be rehashed)",
        change::unknown_key(scheme, key, keys)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::Cause;
    use crate::rng::Stream;
    use crate::units::BitRate;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Dequeue with a throwaway random stream (CoDel draws none).
    trait Deq {
        fn deq(&mut self, now: SimTime) -> Option<(Queued, Verdict)>;
    }
    impl Deq for FqCodel {
        fn deq(&mut self, now: SimTime) -> Option<(Queued, Verdict)> {
            self.dequeue(now, &mut Rng::new(0, Stream::Aqm(0)))
        }
    }

    /// A scheduler with `quantum` whose CoDel never acts (target 1 s), and
    /// flows 0, 1, 2 in distinct queues.
    fn sched(quantum: u32) -> (FqCodel, Rng) {
        let p = FqCodelParams {
            quantum,
            codel: CodelParams {
                target: SimTime::from_secs(1),
                maxpacket: 500,
                ..CodelParams::default()
            },
            ..FqCodelParams::default()
        };
        let mut s = FqCodel::new(p, LinkInfo::new(BitRate(10_000_000), 500));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        // The first perturbation that separates flows 0, 1 and 2 (the
        // seed-1 stream's first draw puts flows 0 and 1 in one queue).
        loop {
            s.perturb = Some(rng.next_u64());
            let b: Vec<usize> = (0..3).map(|f| s.bucket(f)).collect();
            if b[0] != b[1] && b[1] != b[2] && b[0] != b[2] {
                return (s, rng);
            }
        }
    }

    fn pkt(id: PktId, size: u32) -> Queued {
        Queued {
            id,
            size,
            enq_time: SimTime::ZERO,
            ecn: Ecn::NotEct,
        }
    }

    fn drain(s: &mut FqCodel) -> Vec<PktId> {
        let mut out = Vec::new();
        while let Some((p, v)) = s.deq(SimTime::ZERO) {
            assert_eq!(v, Verdict::Pass);
            out.push(p.id);
        }
        out
    }

    /// Quantum 1000; flow 0: A1..A3 of 600 bytes (ids 1-3); flow 1: B1, B2
    /// of 400 (ids 11, 12); returns the scheduler and its overflow events.
    fn two_flows() -> (FqCodel, Vec<PktId>) {
        let (mut s, mut rng) = sched(1000);
        let mut ev = Vec::new();
        let lim = Buffer::Packets(100);
        for id in 1..=3 {
            s.enqueue(pkt(id, 600), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        for id in 11..=12 {
            s.enqueue(pkt(id, 400), 1, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        (s, ev)
    }

    #[test]
    fn drr_order() {
        let (mut s, ev) = two_flows();
        assert_eq!(
            s.qlen(),
            QueueLen {
                pkts: 5,
                bytes: 2600
            }
        );
        assert_eq!(s.active_flows(), 2);
        // A (new, deficit 1000): A1 -> 400, A2 -> -200. A: +1000 = 800, to old.
        // B (new, 1000): B1 -> 600, B2 -> 200. B empty: new -> old (old: A, B).
        // A (old, 800): A3 -> 200. A empty: leaves. B empty: leaves.
        assert_eq!(drain(&mut s), vec![1, 2, 11, 12, 3]);
        assert!(ev.is_empty());
        assert!(s.new_flows.is_empty() && s.old_flows.is_empty());
        assert_eq!((s.qlen(), s.active_flows()), (QueueLen::default(), 0));
    }

    #[test]
    fn set_param_quantum_from_the_next_credit() {
        let (mut s, _) = two_flows();
        // A (new, deficit 1000): A1 -> 400.
        assert_eq!(s.deq(SimTime::ZERO).unwrap().0.id, 1);
        s.set_param("quantum", 200.0).unwrap();
        // A2 -> -200; A: +200 = 0, to old. B (credited 1000 at enqueue):
        // B1 -> 600, B2 -> 200, empty, to old. A (0): +200 = 200, to old;
        // B leaves; A3 -> -400 (with the old quantum: 800 - 600 = 200).
        let ids: Vec<PktId> = (0..4).map(|_| s.deq(SimTime::ZERO).unwrap().0.id).collect();
        assert_eq!(ids, vec![2, 11, 12, 3]);
        assert_eq!(s.queues[s.bucket(0)].deficit, -400);
        s.set_param("target", 0.010).unwrap(); // "10ms" arrives as 0.01 s
        s.set_param("interval", 0.2).unwrap();
        s.set_param("maxpacket", 1500.0).unwrap();
        assert_eq!(
            (s.p.codel.target, s.p.codel.interval, s.p.codel.maxpacket),
            (ms(10), ms(200), 1500)
        );
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let (mut s, _) = sched(1000);
        let before = s.p.clone();
        let e = s.set_param("quantum", 0.0).unwrap_err();
        assert!(
            e.contains("0 is outside the allowed range [1, 1000000] bytes"),
            "{e}"
        );
        let e = s.set_param("quantum", 2.5).unwrap_err();
        assert!(e.contains("2.5") && e.contains("whole number"), "{e}");
        let e = s.set_param("interval", 0.0).unwrap_err();
        assert!(e.contains("0s is not allowed"), "{e}");
        let e = s.set_param("maxpacket", 0.0).unwrap_err();
        assert!(e.contains("0 is not allowed"), "{e}");
        assert_eq!(s.p, before);
        let e = s.set_param("flows", 64.0).unwrap_err();
        assert!(
            e.contains("`flows`")
                && e.contains("target, interval, maxpacket, quantum")
                && e.contains("rehashed"),
            "{e}"
        );
    }

    #[test]
    fn new_flows_go_first() {
        let (mut s, mut rng) = sched(500);
        let mut ev = Vec::new();
        let lim = Buffer::Packets(100);
        for id in 1..=3 {
            s.enqueue(pkt(id, 500), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        // Flow 0: sends 1 (deficit 500 -> 0), then is moved to the old list.
        assert_eq!(s.deq(SimTime::ZERO).unwrap().0.id, 1);
        // Flow 1 arrives: a new flow, served before flow 0's next packet.
        s.enqueue(pkt(21, 500), 1, lim, SimTime::ZERO, &mut rng, &mut ev);
        // Flow 0 (deficit 0): +500, to old; flow 1 (new, 500): sends 21.
        assert_eq!(s.deq(SimTime::ZERO).unwrap().0.id, 21);
        // Flow 1 (deficit 0): to old behind flow 0; flow 0 sends 2; ...
        assert_eq!(drain(&mut s), vec![2, 3]);
    }

    #[test]
    fn overflow_drops_from_the_largest_backlog() {
        let (mut s, mut rng) = sched(1514);
        let mut ev = Vec::new();
        let lim = Buffer::Packets(4);
        // Flow 0: 3 x 600 = 1800 bytes; flow 1: 1 x 400.
        for id in 1..=3 {
            s.enqueue(pkt(id, 600), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        s.enqueue(pkt(11, 400), 1, lim, SimTime::ZERO, &mut rng, &mut ev);
        assert!(ev.is_empty());
        // The fifth packet (flow 1, 400 bytes) exceeds 4: flow 0 (1800 bytes
        // against 800) loses a batch from its head until 900 bytes are
        // gone: packet 1 (600), then packet 2 (1200 >= 900).
        s.enqueue(pkt(12, 400), 1, lim, SimTime::ZERO, &mut rng, &mut ev);
        assert_eq!(ev, vec![1, 2]);
        assert_eq!(
            s.qlen(),
            QueueLen {
                pkts: 3,
                bytes: 1400
            }
        );
        // A byte limit of 1400: a 100-byte packet of flow 2 evicts from
        // flow 1 (800 bytes against 600 and 100) until 400 are gone: 11.
        ev.clear();
        s.enqueue(
            pkt(31, 100),
            2,
            Buffer::Bytes(1400),
            SimTime::ZERO,
            &mut rng,
            &mut ev,
        );
        assert_eq!(ev, vec![11]);
        assert_eq!(
            s.qlen(),
            QueueLen {
                pkts: 3,
                bytes: 1100
            }
        );
        assert_eq!(drain(&mut s), vec![3, 12, 31]);
    }

    #[test]
    fn an_overflow_drops_at_most_a_batch_of_64() {
        let (mut s, mut rng) = sched(1514);
        let mut ev = Vec::new();
        let lim = Buffer::Packets(200);
        // Flow 0 holds 200 packets of 500 bytes; flow 1's packet exceeds
        // the limit: half of flow 0 is 100 packets, the batch stops at 64.
        for id in 0..200 {
            s.enqueue(pkt(id, 500), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        assert!(ev.is_empty());
        s.enqueue(pkt(1000, 500), 1, lim, SimTime::ZERO, &mut rng, &mut ev);
        assert_eq!(ev, (0..64).collect::<Vec<_>>());
        assert_eq!(s.qlen().pkts, 137);
    }

    #[test]
    fn per_flow_codel_drops_only_the_standing_queue() {
        let (mut s, mut rng) = sched(500);
        s.p.codel.target = ms(5);
        let mut ev = Vec::new();
        let lim = Buffer::Packets(100);
        // Flow 0: 20 packets of 500 bytes at t = 0.
        for id in 0..20 {
            s.enqueue(pkt(id, 500), 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        // t = 10 ms: sojourn 10 ms >= 5 ms with 9500 bytes behind:
        // flow 0's first_above_time = 110 ms; sent (deficit 500 -> 0).
        let (p, v) = s.deq(ms(10)).unwrap();
        assert_eq!((p.id, v), (0, Verdict::Pass));
        // Flow 1 arrives at 110 ms (a sparse flow).
        let mut late = pkt(100, 500);
        late.enq_time = ms(110);
        s.enqueue(late, 1, lim, SimTime::ZERO, &mut rng, &mut ev);
        // t = 120 ms: flow 0 has used its quantum (to the old list, +500);
        // flow 1 is new: sojourn 10 ms but nothing behind it (0 bytes <=
        // maxpacket): sent.
        let (p, v) = s.deq(ms(120)).unwrap();
        assert_eq!((p.id, v), (100, Verdict::Pass));
        // Flow 0: above target since 110 ms: drop packet 1; the
        // continuation sends packet 2 and enters the dropping state with
        // drop_next = 120 + 100 / sqrt(1) = 220 ms.
        let (p, v) = s.deq(ms(120)).unwrap();
        assert_eq!((p.id, v), (1, Verdict::Drop(Cause::Early)));
        let (p, v) = s.deq(ms(120)).unwrap();
        assert_eq!((p.id, v), (2, Verdict::Pass));
        let q0 = &s.queues[s.bucket(0)];
        assert!(q0.aqm.dropping());
        assert_eq!(q0.aqm.drop_next(), ms(220));
        assert!(!s.queues[s.bucket(1)].aqm.dropping());
        // The dropped packet took no credit: 500 - 500 (packet 2) = 0.
        assert_eq!(q0.deficit, 0);
        // 20 + 1 - 4 (packets 0, 100, 1, 2).
        assert_eq!(s.qlen().pkts, 17);
    }

    #[test]
    fn hash_is_seeded_and_spreads() {
        let (s, _) = sched(1514);
        let mut t = s.clone();
        t.perturb = Some(s.perturb.unwrap() ^ 1);
        // Same perturbation, same buckets; the buckets of 1000 flows cover
        // many of the 1024 queues.
        let a: Vec<usize> = (0..1000).map(|f| s.bucket(f)).collect();
        let b: Vec<usize> = (0..1000).map(|f| t.bucket(f)).collect();
        assert_ne!(a, b);
        let mut used = vec![false; 1024];
        for &i in &a {
            used[i] = true;
        }
        // Expected distinct: 1024 (1 - (1 - 1/1024)^1000) = 637.
        let n = used.iter().filter(|u| **u).count();
        assert!((580..=700).contains(&n), "{n}");
        // A hash label (`tcp.txrehash`) files a flow elsewhere: the 1000
        // flows' buckets under label 1 are another draw, agreeing with
        // label 0's about one time in 1024.
        let c: Vec<usize> = (0..1000u64).map(|f| s.bucket(f | 1 << 32)).collect();
        let same = a.iter().zip(&c).filter(|(x, y)| x == y).count();
        assert!(same <= 6, "{same}");
    }

    /// MAXPACKET's backlog: two flows, each with one 500-byte packet
    /// behind its head, all sojourns above target for over an interval.
    /// Reading the whole scheduler's bytes (Linux) the heads are
    /// signalled; reading each queue's own (at most `maxpacket` = 500
    /// left behind) they never are.
    #[test]
    fn maxpacket_reads_the_whole_backlog_or_the_flows() {
        for (backlog, signalled) in [(Backlog::All, true), (Backlog::Flow, false)] {
            let (mut s, mut rng) = sched(1514);
            s.p.codel.target = ms(5);
            s.p.maxpacket_backlog = backlog;
            let mut any = false;
            for round in 0..40u64 {
                let t = ms(10 * round);
                for flow in 0..2 {
                    while s.queues[s.bucket(flow)].q.len() < 2 {
                        let pkt = Queued {
                            id: 0,
                            size: 500,
                            enq_time: t.saturating_sub(ms(50)),
                            ecn: Ecn::NotEct,
                        };
                        let mut evicted = Vec::new();
                        s.enqueue(
                            pkt,
                            flow,
                            Buffer::Packets(100),
                            SimTime::ZERO,
                            &mut rng,
                            &mut evicted,
                        );
                    }
                }
                if let Some((_, v)) = s.deq(t) {
                    any |= matches!(v, Verdict::Drop(_));
                }
            }
            assert_eq!(any, signalled, "{backlog:?}");
        }
    }

    /// The CE threshold (1 ms, ECT(1) selector): an ECT(1) packet that
    /// waited 2 ms is marked (cause Forced), one that waited exactly 1 ms
    /// is not (strictly above); an ECT(0) packet that waited 2 ms passes
    /// (CoDel's target of 1 s never acts here).
    #[test]
    fn ce_threshold_marks_ect1_only() {
        let (mut s, mut rng) = sched(1514);
        s.p.ce_threshold = Some(ms(1));
        let mut ev = Vec::new();
        let lim = Buffer::Packets(100);
        for (id, ecn) in [(1, Ecn::Ect1), (2, Ecn::Ect1), (3, Ecn::Ect0)] {
            let p = Queued {
                ecn,
                ..pkt(id, 500)
            };
            s.enqueue(p, 0, lim, SimTime::ZERO, &mut rng, &mut ev);
        }
        assert_eq!(s.deq(ms(2)).unwrap().1, Verdict::Mark(Cause::Forced));
        assert_eq!(s.deq(ms(1)).unwrap().1, Verdict::Pass);
        assert_eq!(s.deq(ms(2)).unwrap().1, Verdict::Pass);
        assert_eq!(
            ce_threshold_mark(Verdict::Pass, Ecn::Ce, ms(5), ms(1)),
            Verdict::Pass
        );
        let p = FqCodelParams {
            ce_threshold: Some(SimTime::ZERO),
            ..FqCodelParams::default()
        };
        let e = p.validate("aqm").unwrap_err();
        assert_eq!(e.path, "aqm.ce_threshold");
    }

    #[test]
    fn validation_names_fields() {
        let mut p = FqCodelParams::default();
        assert!(p.validate("aqm").is_ok());
        p.flows = 0;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.flows");
        let p = FqCodelParams {
            quantum: 0,
            ..FqCodelParams::default()
        };
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.quantum");
        let mut p = FqCodelParams::default();
        p.codel.interval = SimTime::ZERO;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.interval");
    }
}
