//! A one-way link: an egress queue with its AQM, a transmitter of fixed rate,
//! a propagation delay and an optional random loss model on the wire.
//!
//! The waiting packets live in the link's FIFO, except under the flow-queue
//! schedulers (FQ-CoDel, FQ-PIE, COBALT) and DualPI2, which schedule them
//! themselves: then [`Link::offer`] and [`Link::try_start`] hand them to the
//! scheduler instead ([`crate::aqm::FqCodel::enqueue`],
//! [`crate::aqm::FqCodel::dequeue`], [`crate::aqm::DualPi2::enqueue`],
//! [`crate::aqm::DualPi2::dequeue`]), behind one branch on the AQM kind.
//! The scheduler's per-packet path is compiled for each per-queue AQM:
//! FQ-CoDel's, tested first and inlined, has none of the others' hooks
//! (no arrival verdict, no idle poll, no tail-drop test); FQ-PIE's and
//! COBALT's run out of line.
//!
//! A link may plan its departures at admission ([`Link::plan`]): then a
//! packet's start of transmission is fixed when it is queued, the engine
//! schedules its arrival at the far end at once (no end-of-transmission
//! event), and the departures are carried out later, in time order, by
//! [`Link::settle`].

use crate::aqm::cobalt::CobaltState;
use crate::aqm::codel::CodelState;
use crate::aqm::dualpi2::Held;
use crate::aqm::fq_codel::{FlowAqm, FlowQueues, Queued};
use crate::aqm::pie::PieState;
use crate::aqm::{Aqm, AqmImpl, Cause, FqCobalt, FqCodel, FqPie, PacketInfo, QueueLen, Verdict};
use crate::metrics::{LinkStats, QueueMonitor};
use crate::packet::{flags, Arena, Ecn, Packet, PktId};
use crate::rng::{Rng, Stream};
use crate::scenario::{Buffer, LossSpec};
use crate::units::{BitRate, SimTime};
use std::collections::VecDeque;

/// `$e` with `$fq` bound to the AQM's flow-queue scheduler (FQ-CoDel,
/// FQ-PIE, COBALT), else `$other`: one arm per scheduler type, each compiled
/// for its own per-queue AQM. For the paths that are not per packet; those
/// test for FQ-CoDel (and DualPI2) first and take the other schedulers out
/// of line (`offer_flows_outlined`, `dequeue_outlined`, `other_flows_qlen`).
macro_rules! flow_queues {
    ($aqm:expr, $fq:ident => $e:expr, _ => $other:expr) => {
        match $aqm {
            AqmImpl::FqCodel($fq) => $e,
            AqmImpl::FqPie($fq) => $e,
            AqmImpl::FqCobalt($fq) => $e,
            _ => $other,
        }
    };
}

/// A flow-queue scheduler, found in the link's [`AqmImpl`]: the per-packet
/// paths are written once over the per-queue AQM and compiled for each
/// scheduler, so that FQ-CoDel's has none of the others' hooks.
trait InLink: Sized {
    /// The scheduler, from an `aqm` known to hold this kind.
    fn of(aqm: &mut AqmImpl) -> &mut Self;
}

macro_rules! in_link {
    ($t:ty, $v:ident) => {
        impl InLink for $t {
            #[inline(always)]
            fn of(aqm: &mut AqmImpl) -> &mut $t {
                match aqm {
                    AqmImpl::$v(fq) => fq,
                    _ => unreachable!(concat!("the link's AQM is not ", stringify!($v))),
                }
            }
        }
    };
}
in_link!(FqCodel, FqCodel);
in_link!(FqPie, FqPie);
in_link!(FqCobalt, FqCobalt);

/// The scheduler that holds a link's queue (`Fifo`: the link's own FIFO).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sched {
    Fifo,
    FqCodel,
    DualPi2,
    FqPie,
    FqCobalt,
}

/// Random loss on the wire.
#[derive(Clone, Debug)]
pub enum LossModel {
    Bernoulli {
        p: f64,
        rng: Rng,
    },
    /// `002_80945567bf68047d.txt` section 5.2 (see [`LossSpec::Markov`]).
    Markov(Box<MarkovLoss>),
}

/// The state of a Markov burst-loss link: which state it is in, until
/// when, and the streams of its state changes and its packet losses.
#[derive(Clone, Debug)]
pub struct MarkovLoss {
    /// Loss probability of each state.
    p: Vec<f64>,
    /// Holding time of each state.
    hold: Vec<SimTime>,
    /// Rows of the transition matrix as cumulative sums, each ending at 1.
    cumulative: Vec<Vec<f64>>,
    state: usize,
    /// When the current holding period ends.
    until: SimTime,
    /// Draws of the state changes only, so that the chain's path does not
    /// depend on the packets (the same seed gives the same bad periods
    /// whatever the traffic or the AQM).
    chain: Rng,
    /// Draws of the per-packet losses.
    rng: Rng,
}

impl MarkovLoss {
    /// The state at time `now`, advancing the chain over the holding
    /// periods that ended since the last call.
    #[inline]
    fn state_at(&mut self, now: SimTime) -> usize {
        while now >= self.until {
            let u = self.chain.uniform();
            let row = &self.cumulative[self.state];
            // The last state with a positive probability catches rounding.
            let last = row.iter().rposition(|&c| c > 0.0).unwrap_or(row.len() - 1);
            self.state = row.iter().position(|&c| u < c).unwrap_or(last).min(last);
            self.until += self.hold[self.state];
        }
        self.state
    }
}

impl LossModel {
    /// The model of `spec` drawing from `rng` (the link's `Stream::LinkLoss`).
    pub fn new(spec: &LossSpec, mut rng: Rng) -> LossModel {
        match spec {
            LossSpec::Bernoulli { p } => LossModel::Bernoulli { p: *p, rng },
            LossSpec::Markov {
                p,
                hold,
                transitions,
            } => {
                // The chain's stream is seeded from the link's loss stream.
                let chain = Rng::new(rng.next_u64(), Stream::LinkLoss(0));
                let cumulative = transitions
                    .iter()
                    .map(|row| {
                        let total: f64 = row.iter().sum();
                        let mut acc = 0.0;
                        row.iter()
                            .map(|q| {
                                acc += q / total;
                                acc
                            })
                            .collect()
                    })
                    .collect();
                LossModel::Markov(Box::new(MarkovLoss {
                    p: p.clone(),
                    hold: hold.clone(),
                    cumulative,
                    state: 0,
                    until: hold[0],
                    chain,
                    rng,
                }))
            }
        }
    }

    /// Whether a packet starting transmission at `now` is lost.
    #[inline]
    fn lose(&mut self, now: SimTime) -> bool {
        match self {
            LossModel::Bernoulli { p, rng } => rng.bernoulli(*p),
            LossModel::Markov(m) => {
                let s = m.state_at(now);
                m.rng.bernoulli(m.p[s])
            }
        }
    }
}

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued; the caller then calls [`Link::try_start`].
    Accepted,
    /// Queued on a planned link ([`Link::plan`]): it reaches the far end
    /// at this time.
    Planned(SimTime),
    /// Dropped at the queue; the caller frees it.
    Dropped,
    /// FQ-CoDel's overflow: the queue dropped packets it held (possibly
    /// the offered one) to make room; the caller frees each id that
    /// [`Link::pop_evicted`] returns, then starts transmission.
    Evicted,
}

/// A one-way link.
///
/// `repr(C)` keeps the fields in the order written, and the alignment puts
/// the first field at the start of a cache line: what every packet touches
/// fills the first three lines (a flow's access links are spread over
/// memory at 10^5 flows, so each line costs a cache miss): the times and
/// the limit, then the queue, the optional parts and the flags, then the
/// counters; the AQM and what only rare events or the summary read come
/// after them. A packet passed through a cut-through link that has none
/// waiting (the common case) reads the first and the third line only.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Link {
    // --- line 0 ---
    /// When the transmitter is free again.
    busy_until: SimTime,
    /// One-way propagation delay.
    pub delay: SimTime,
    /// The two most recent packet sizes and their serialisation times
    /// (data and ACK sizes alternate; this saves a 64-bit division per
    /// packet).
    tx_sizes: [u32; 2],
    tx_times: [SimTime; 2],
    /// Bytes waiting in the FIFO; on a cut-through link, bytes admitted
    /// and not yet started.
    qbytes: u64,
    pub limit: Buffer,
    // --- line 1 ---
    /// Waiting packets (the one in transmission excluded), by id; empty
    /// under FQ-CoDel, whose scheduler holds them. On a cut-through link
    /// (whose packets never wait here) the start of transmission and the
    /// size of each packet admitted and not yet started, in pairs (one
    /// deque for both keeps what every packet reads in three lines).
    fifo: VecDeque<u64>,
    /// Time-weighted queue statistics, on monitored links only.
    pub monitor: Option<Box<QueueMonitor>>,
    pub loss: Option<Box<LossModel>>,
    /// The link (of the opposite direction) whose AQM observes the packets
    /// entering this one ([`crate::aqm::Aqm::observe_reverse`]).
    pub observer: Option<u32>,
    /// A `TxDone` event is pending.
    pub txdone_pending: bool,
    /// Packets are passed through ahead of time (see [`Link::pass_through`]).
    pub cut_through: bool,
    /// The AQM is DropTail (whose hooks do nothing, so they are not
    /// called): read, as `sched`, without touching the AQM, which lives
    /// in its own allocation.
    droptail: bool,
    /// Which scheduler holds the queue (`Fifo`: the link's own FIFO): the
    /// per-packet paths branch on it without reading the AQM's variant.
    sched: Sched,
    /// Departures are planned at admission (see [`Link::plan`]).
    planned: bool,
    // --- line 2: the per-packet counters come first in `LinkStats` ---
    pub stats: LinkStats,
    pub rate: BitRate,
    /// Boxed: most links (a flow's access links) are DropTail, and an
    /// inline `AqmImpl` would make every link as large as the largest scheme.
    pub aqm: Box<AqmImpl>,
    pub aqm_rng: Rng,
    /// Packets FQ-CoDel dropped to make room, for the caller to free.
    evicted: Vec<PktId>,
    /// ∫ rate dt up to `rate_since` (bit·ns / 1e9 = bits), for utilisation
    /// across rate changes.
    capacity_bits_ns: u128,
    rate_since: SimTime,
    /// The rate before the latest change (in force until `rate_since`).
    prev_rate: BitRate,
    /// The earliest a packet reaches the far end ([`Link::set_delay`]).
    wire_floor: WireFloor,
    /// On a planned link: the packets admitted and not yet taken from the
    /// queue by [`Link::settle`], in order (those that start later than
    /// the last settle wait; `fifo` is unused).
    plan: VecDeque<Departure>,
}

/// The earliest a packet may reach a link's far end: raised by a delay
/// change that keeps the wire's order, zero while none did. The
/// simulator's links and the testbed router's wire keep it alike.
#[derive(Clone, Copy, Debug, Default)]
pub struct WireFloor(SimTime);

impl WireFloor {
    /// The delay changes on a link whose last transmission ends at
    /// `busy_until` under the delay `old`: with `reorder` the next packets
    /// may overtake those on the wire; without, none arrives before that
    /// last one.
    #[inline]
    pub fn delay_change(&mut self, busy_until: SimTime, old: SimTime, reorder: bool) {
        if !reorder {
            self.0 = self.0.max(busy_until + old);
        }
    }

    /// When a packet due at `due` reaches the far end.
    #[inline(always)]
    pub fn arrival(self, due: SimTime) -> SimTime {
        due.max(self.0)
    }
}

/// A planned departure: what [`Link::try_start`] would have read from the
/// packet when it left the queue.
#[derive(Clone, Copy, Debug)]
struct Departure {
    start: SimTime,
    tx_end: SimTime,
    info: PacketInfo,
}

/// Where a packet that started transmission goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxResult {
    /// It reaches the far end at this time.
    Arrives(SimTime),
    /// It was lost on the wire; the caller frees it.
    Lost,
    /// The AQM dropped it at dequeue; the caller frees it.
    Dropped,
}

impl Link {
    pub fn new(rate: BitRate, delay: SimTime, limit: Buffer, aqm: AqmImpl, aqm_rng: Rng) -> Link {
        Link {
            rate,
            delay,
            limit,
            droptail: matches!(aqm, AqmImpl::DropTail(_)),
            sched: match aqm {
                AqmImpl::FqCodel(_) => Sched::FqCodel,
                AqmImpl::DualPi2(_) => Sched::DualPi2,
                AqmImpl::FqPie(_) => Sched::FqPie,
                AqmImpl::FqCobalt(_) => Sched::FqCobalt,
                _ => Sched::Fifo,
            },
            planned: false,
            plan: VecDeque::new(),
            aqm: Box::new(aqm),
            aqm_rng,
            loss: None,
            fifo: VecDeque::new(),
            evicted: Vec::new(),
            qbytes: 0,
            busy_until: SimTime::ZERO,
            txdone_pending: false,
            stats: LinkStats::default(),
            monitor: None,
            observer: None,
            cut_through: false,
            tx_sizes: [0; 2],
            tx_times: [SimTime::ZERO; 2],
            capacity_bits_ns: 0,
            rate_since: SimTime::ZERO,
            prev_rate: rate,
            wire_floor: WireFloor::default(),
        }
    }

    /// Bits the link could have sent from time 0 to `now` (∫ rate dt).
    pub fn capacity_bits(&self, now: SimTime) -> f64 {
        if now < self.rate_since {
            // Before a rate change takes effect (the end of the packet in
            // transmission when it was made): still at the previous rate.
            let ahead = self.prev_rate.bps() as u128 * (self.rate_since - now).0 as u128;
            return (self.capacity_bits_ns - ahead) as f64 * 1e-9;
        }
        let total = self.capacity_bits_ns
            + self.rate.bps() as u128 * now.saturating_sub(self.rate_since).0 as u128;
        total as f64 * 1e-9
    }

    /// Bits of the packet in transmission at `now` still to be sent.
    pub fn pending_tx_bits(&self, now: SimTime) -> f64 {
        // A packet in transmission when the rate changed goes on at the old one.
        let rate = if now < self.rate_since {
            self.prev_rate
        } else {
            self.rate
        };
        self.busy_until.saturating_sub(now).0 as f64 * rate.bps() as f64 / 1e9
    }

    /// Serialisation time of a packet of `size` bytes.
    #[inline]
    fn tx_time(&mut self, size: u32) -> SimTime {
        if self.tx_sizes[0] == size {
            return self.tx_times[0];
        }
        if self.tx_sizes[1] != size {
            self.tx_sizes[1] = size;
            self.tx_times[1] = self.rate.tx_time(size);
        }
        self.tx_sizes.swap(0, 1);
        self.tx_times.swap(0, 1);
        self.tx_times[0]
    }

    /// Change the transmission rate at `now` (applies from the next packet).
    pub fn set_rate(&mut self, now: SimTime, rate: BitRate) {
        // The packet in transmission finishes at the old rate: the capacity
        // changes when it ends, so utilisation never counts its tail
        // against the new rate.
        let at = now.max(self.busy_until).max(self.rate_since);
        self.capacity_bits_ns +=
            self.rate.bps() as u128 * at.saturating_sub(self.rate_since).0 as u128;
        self.rate_since = at;
        self.prev_rate = self.rate;
        self.rate = rate;
        self.tx_sizes = [0; 2];
        self.tx_times = [SimTime::ZERO; 2];
    }

    /// Change the propagation delay (applies from the next packet to start
    /// transmission; those on the wire keep theirs). With `reorder` a
    /// shorter delay lets the next packets overtake those still on the
    /// wire (ns-2's link; a route change); without, they arrive no earlier
    /// than the last one sent before the change (a wire that keeps its
    /// order, as the testbed router's). Only on a link neither passed
    /// through nor planned, whose arrivals [`Link::try_start`] computes
    /// (the engine plans none in a run that changes links).
    pub fn set_delay(&mut self, delay: SimTime, reorder: bool) {
        debug_assert!(!self.cut_through && !self.planned);
        self.wire_floor
            .delay_change(self.busy_until, self.delay, reorder);
        self.delay = delay;
    }

    /// Whether this link may be passed through ahead of time: a DropTail
    /// queue without random loss or monitor, fed by exactly one upstream
    /// link (so packets reach it in the order they left that link).
    pub fn can_cut_through(&self) -> bool {
        self.droptail && self.loss.is_none() && self.monitor.is_none() && self.observer.is_none()
    }

    /// Plan departures at admission, if this link allows it: a FIFO whose
    /// AQM decides at enqueue only ([`AqmImpl::decides_at_enqueue`]),
    /// without random loss. Then a packet's start of transmission depends
    /// only on the packets ahead of it and is known when it is admitted;
    /// what the link would do when it leaves the queue (the AQM's
    /// `on_dequeue`, the departure counters, the queue monitor) is done
    /// later by [`Link::settle`], with the same times and queue lengths.
    /// The engine must settle the link before reading its queue, counters
    /// or AQM, and must not change its rate or delay while packets are
    /// planned. Returns whether the link is now planned.
    pub fn plan(&mut self) -> bool {
        self.planned = !self.fq() && self.loss.is_none() && self.aqm.decides_at_enqueue();
        self.planned
    }

    /// Whether departures are planned at admission ([`Link::plan`]).
    #[inline]
    pub fn planned(&self) -> bool {
        self.planned
    }

    /// On a planned link, carry out the departures that start before
    /// `until`, in order, as [`Link::try_start`] would have when each left
    /// the queue. Nothing to do on other links.
    ///
    /// An event at time t settles to t: a departure at the same nanosecond
    /// comes after it, as the end-of-transmission event it replaces
    /// usually did (scheduled one transmission time ahead, against an
    /// arrival's propagation delay or a timer's period). The end of a run
    /// settles to t + 1 ns, as every event at t was processed.
    #[inline]
    pub fn settle(&mut self, until: SimTime) {
        while let Some(d) = self.plan.front() {
            if d.start >= until {
                break;
            }
            let d = *d;
            self.plan.pop_front();
            self.qbytes -= d.info.size as u64;
            if let Some(m) = self.monitor.as_mut() {
                m.set(d.start, self.plan.len() as u32, self.qbytes);
            }
            if !self.droptail {
                let q = QueueLen {
                    pkts: self.plan.len() as u32,
                    bytes: self.qbytes,
                };
                let v = self.aqm.on_dequeue(d.start, &d.info, q, d.tx_end);
                debug_assert_eq!(v, Verdict::Pass, "a planned link's AQM acted at dequeue");
                self.note_changes(d.start);
            }
            self.busy_until = d.tx_end;
            self.stats.departures += 1;
            self.stats.departure_bytes += d.info.size as u64;
            let sojourn = d.start - d.info.enq_time;
            self.stats.sojourn_ns += sojourn.0 as u128;
            if let Some(m) = self.monitor.as_mut() {
                m.sojourn(sojourn, d.info.flow);
            }
        }
    }

    /// Cut-through: admit a packet that will reach this link's queue at
    /// time `t` (not earlier than any packet admitted before) and return
    /// when it reaches the far end, or `None` if the buffer overflows then.
    ///
    /// A DropTail queue's fate for a packet depends only on the packets
    /// ahead of it; with a single upstream they have all been admitted
    /// already, so the packet's start of transmission is known now and the
    /// engine schedules one event (its arrival at the far end) instead of
    /// three (arrival here, end of transmission, arrival there). Arrival
    /// and departure counters advance at admission.
    #[inline]
    pub fn pass_through(&mut self, t: SimTime, size: u32, data: bool) -> Option<SimTime> {
        // `fifo` holds (start, size) pairs here. Every packet has at least
        // a header's bytes, so `qbytes` is 0 exactly when `fifo` is empty:
        // then `fifo`'s cache line is not read.
        debug_assert_eq!(self.qbytes == 0, self.fifo.is_empty());
        let mut waiting = 0;
        if self.qbytes > 0 {
            while let Some(&start) = self.fifo.front() {
                if start > t.0 {
                    break;
                }
                self.fifo.pop_front();
                self.qbytes -= self.fifo.pop_front().unwrap_or(0);
            }
            waiting = (self.fifo.len() / 2) as u32;
        }
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += size as u64;
        self.stats.data_arrivals += u64::from(data);
        if self.limit.overflows(waiting, self.qbytes, size) {
            self.stats.drops_overflow += 1;
            self.stats.data_drops += u64::from(data);
            return None;
        }
        let start = t.max(self.busy_until);
        if start > t {
            self.fifo.push_back(start.0);
            self.fifo.push_back(u64::from(size));
            self.qbytes += size as u64;
        }
        self.busy_until = start + self.tx_time(size);
        self.stats.departures += 1;
        self.stats.departure_bytes += size as u64;
        self.stats.sojourn_ns += (start.0 - t.0) as u128;
        Some(self.busy_until + self.delay)
    }

    /// Packets and bytes waiting (in the FIFO, or held by FQ-CoDel).
    /// A scheduler, not the link's FIFO, holds the queue.
    #[inline(always)]
    fn fq(&self) -> bool {
        self.sched != Sched::Fifo
    }

    #[inline]
    pub fn qlen(&self) -> QueueLen {
        if self.fq() {
            if self.sched == Sched::FqCodel {
                if let AqmImpl::FqCodel(fq) = &*self.aqm {
                    return fq.qlen();
                }
            }
            if let AqmImpl::DualPi2(d) = &*self.aqm {
                return d.qlen();
            }
            return self.other_flows_qlen();
        }
        if self.cut_through {
            // Admitted packets count as departed (see `pass_through`).
            return QueueLen { pkts: 0, bytes: 0 };
        }
        self.fifo_len()
    }

    /// The FIFO's packets and bytes (not on a cut-through link, whose
    /// `fifo` holds pairs); on a planned link, those not yet taken by
    /// [`Link::settle`] (those waiting, once settled to now).
    #[inline]
    fn fifo_len(&self) -> QueueLen {
        let pkts = if self.planned {
            self.plan.len()
        } else {
            self.fifo.len()
        };
        QueueLen {
            pkts: pkts as u32,
            bytes: self.qbytes,
        }
    }

    /// Whether the transmitter is idle at `now` with nothing waiting.
    #[inline]
    pub fn idle(&self, now: SimTime) -> bool {
        !self.has_waiting() && self.busy_until <= now
    }

    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }

    /// Count an AQM's drop or mark by its cause, and trace it when asked.
    #[inline]
    fn count_signal(&mut self, now: SimTime, info: &PacketInfo, mark: bool, cause: Cause) {
        let (n, what) = match (mark, cause) {
            (false, Cause::Early) => (&mut self.stats.drops_early, "drop-early"),
            (false, Cause::Forced) => (&mut self.stats.drops_forced, "drop-forced"),
            (true, Cause::Early) => (&mut self.stats.marks_early, "mark-early"),
            (true, Cause::Forced) => (&mut self.stats.marks_forced, "mark-forced"),
        };
        *n += 1;
        let by = if mark {
            &mut self.stats.marks_by_ecn
        } else {
            &mut self.stats.drops_by_ecn
        };
        by[info.ecn.index()] += 1;
        if let Some(m) = self.monitor.as_mut() {
            m.event(now, info.flow, info.flags, info.size, what);
        }
    }

    #[inline]
    fn fits(&self, size: u32) -> bool {
        !self
            .limit
            .overflows(self.fifo_len().pkts, self.qbytes, size)
    }

    /// Offer a packet to the queue: the AQM decides, then the buffer limit.
    /// An accepted packet is queued; the caller then calls [`Link::try_start`].
    #[inline]
    pub fn offer(&mut self, now: SimTime, id: PktId, arena: &mut Arena) -> Offer {
        if self.fq() {
            return self.offer_fq(now, id, arena);
        }
        if self.planned {
            self.settle(now);
        }
        let p = arena.get_mut(id);
        let info = PacketInfo {
            size: p.size,
            ect: p.ecn.capable(),
            ecn: p.ecn,
            flow: p.flow,
            flags: p.flags,
            seq: p.seq,
            enq_time: now,
        };
        let data = p.flags & flags::DATA != 0;
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += p.size as u64;
        self.stats.data_arrivals += u64::from(data);
        let verdict = if self.droptail {
            Verdict::Pass
        } else {
            let v = self
                .aqm
                .on_enqueue(now, &info, self.fifo_len(), &mut self.aqm_rng);
            self.note_changes(now);
            v
        };
        let mark = match verdict {
            Verdict::Pass => None,
            Verdict::Mark(c) => Some(c),
            Verdict::Drop(c) => {
                self.count_signal(now, &info, false, c);
                self.stats.data_drops += u64::from(data);
                return Offer::Dropped;
            }
        };
        if !self.fits(info.size) {
            self.stats.drops_overflow += 1;
            self.stats.drops_by_ecn[info.ecn.index()] += 1;
            self.stats.data_drops += u64::from(data);
            if let Some(m) = self.monitor.as_mut() {
                m.event(now, info.flow, info.flags, info.size, "drop-overflow");
            }
            return Offer::Dropped;
        }
        if let Some(c) = mark {
            debug_assert!(info.ect, "an AQM marked a packet that is not ECN-capable");
            p.ecn = Ecn::Ce;
            self.count_signal(now, &info, true, c);
        }
        p.enq_time = now;
        if self.planned {
            return self.admit_planned(now, info, p);
        }
        self.fifo.push_back(u64::from(id));
        self.qbytes += info.size as u64;
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, self.fifo.len() as u32, self.qbytes);
        }
        Offer::Accepted
    }

    /// [`Link::offer`]'s admission on a planned link: the packet starts
    /// when the last one admitted ends (or now), and at once if that is now.
    #[inline]
    fn admit_planned(&mut self, now: SimTime, info: PacketInfo, p: &Packet) -> Offer {
        let after = self.plan.back().map_or(self.busy_until, |d| d.tx_end);
        let start = after.max(now);
        let tx_end = start + self.tx_time(info.size);
        self.plan.push_back(Departure {
            start,
            tx_end,
            info,
        });
        self.qbytes += info.size as u64;
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, self.plan.len() as u32, self.qbytes);
            // Its header as it leaves (a planned link marks at admission
            // only), at the start its departure is planned for.
            if let Some(c) = m.capture.as_mut() {
                c.record(start, p);
            }
        }
        if start == now {
            // Idle: it starts at once (none before it starts at now).
            self.settle(now + SimTime(1));
        }
        Offer::Planned(tx_end + self.delay)
    }

    /// [`Link::offer`] under a flow-queue scheduler or DualPI2.
    fn offer_fq(&mut self, now: SimTime, id: PktId, arena: &mut Arena) -> Offer {
        match self.sched {
            Sched::FqCodel => self.offer_flows::<CodelState>(now, id, arena),
            Sched::DualPi2 => self.offer_dual(now, id, arena),
            Sched::FqPie => self.offer_flows_outlined::<PieState>(now, id, arena),
            Sched::FqCobalt => self.offer_flows_outlined::<CobaltState>(now, id, arena),
            Sched::Fifo => {
                unreachable!("offer_fq is called for the flow schedulers and DualPI2 only")
            }
        }
    }

    /// [`Link::offer_flows`] out of line: FQ-PIE's and COBALT's (only
    /// FQ-CoDel's is inlined in the per-packet path).
    #[inline(never)]
    fn offer_flows_outlined<A: FlowAqm>(
        &mut self,
        now: SimTime,
        id: PktId,
        arena: &mut Arena,
    ) -> Offer
    where
        FlowQueues<A>: InLink,
    {
        self.offer_flows::<A>(now, id, arena)
    }

    /// [`Link::offer`] under the flow-queue scheduler with per-queue AQM
    /// `A`: the scheduler takes the packet, its AQM may drop or mark it at
    /// arrival (FQ-PIE only: [`FlowAqm::HAS_ARRIVAL_HOOK`]), and it
    /// enforces the buffer limit (overflow drops: the arrival under a
    /// tail-drop AQM, else the largest flow queue's head, RFC 8290
    /// section 4.1).
    #[inline(always)]
    fn offer_flows<A: FlowAqm>(&mut self, now: SimTime, id: PktId, arena: &mut Arena) -> Offer
    where
        FlowQueues<A>: InLink,
    {
        let p = arena.get_mut(id);
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += p.size as u64;
        self.stats.data_arrivals += u64::from(p.flags & flags::DATA != 0);
        p.enq_time = now;
        let pkt = Queued {
            id,
            size: p.size,
            enq_time: now,
            ecn: p.ecn,
        };
        let fq = FlowQueues::<A>::of(&mut self.aqm);
        let verdict = fq.enqueue(
            pkt,
            p.hash_key(),
            self.limit,
            self.busy_until,
            &mut self.aqm_rng,
            &mut self.evicted,
        );
        let q = fq.qlen();
        if A::HAS_ARRIVAL_HOOK && verdict != Verdict::Pass {
            // An enqueue-time AQM (FQ-PIE) dropped or marked the arrival.
            let info = PacketInfo {
                size: p.size,
                ect: p.ecn.capable(),
                ecn: p.ecn,
                flow: p.flow,
                flags: p.flags,
                seq: p.seq,
                enq_time: now,
            };
            match verdict {
                Verdict::Drop(c) => {
                    self.count_signal(now, &info, false, c);
                    self.stats.data_drops += u64::from(p.flags & flags::DATA != 0);
                    return Offer::Dropped;
                }
                Verdict::Mark(c) => {
                    p.ecn = Ecn::Ce;
                    self.count_signal(now, &info, true, c);
                }
                Verdict::Pass => {}
            }
        }
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, q.pkts, q.bytes);
        }
        if self.evicted.is_empty() {
            Offer::Accepted
        } else {
            self.count_evicted(now, arena)
        }
    }

    /// The overflow drops a flow-queue scheduler made (`evicted`): counted
    /// and traced.
    #[cold]
    #[inline(never)]
    fn count_evicted(&mut self, now: SimTime, arena: &Arena) -> Offer {
        self.stats.drops_overflow += self.evicted.len() as u64;
        for &v in &self.evicted {
            self.stats.drops_by_ecn[arena.get(v).ecn.index()] += 1;
        }
        self.stats.data_drops += self
            .evicted
            .iter()
            .filter(|&&v| arena.get(v).flags & flags::DATA != 0)
            .count() as u64;
        if let Some(m) = self.monitor.as_mut() {
            if m.trace.is_some() {
                for &v in &self.evicted {
                    let p = arena.get(v);
                    m.event(now, p.flow, p.flags, p.size, "drop-overflow");
                }
            }
        }
        Offer::Evicted
    }

    /// [`Link::offer`] under DualPI2: the packet joins the L or C queue, or
    /// is dropped when the buffer (both queues) is full.
    fn offer_dual(&mut self, now: SimTime, id: PktId, arena: &mut Arena) -> Offer {
        let AqmImpl::DualPi2(d) = &mut *self.aqm else {
            unreachable!("offer_dual is called for DualPI2 only")
        };
        let p = arena.get_mut(id);
        let data = p.flags & flags::DATA != 0;
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += p.size as u64;
        self.stats.data_arrivals += u64::from(data);
        p.enq_time = now;
        let held = Held::new(id, p.size, now, p.ecn);
        if !d.enqueue(held, self.limit) {
            self.stats.drops_overflow += 1;
            self.stats.drops_by_ecn[p.ecn.index()] += 1;
            self.stats.data_drops += u64::from(data);
            if let Some(m) = self.monitor.as_mut() {
                m.event(now, p.flow, p.flags, p.size, "drop-overflow");
            }
            return Offer::Dropped;
        }
        let q = d.qlen();
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, q.pkts, q.bytes);
        }
        Offer::Accepted
    }

    /// After [`Offer::Evicted`]: the next packet dropped to make room.
    #[inline]
    pub fn pop_evicted(&mut self) -> Option<PktId> {
        self.evicted.pop()
    }

    /// If the transmitter is free, take the next packet (the head of the
    /// FIFO, or FQ-CoDel's choice) and start sending it. Returns the packet
    /// and its fate, or `None` when the transmitter is busy or the queue
    /// empty.
    #[inline]
    pub fn try_start(&mut self, now: SimTime, arena: &mut Arena) -> Option<(PktId, TxResult)> {
        if self.busy_until > now {
            return None;
        }
        if self.fq() {
            if self.sched == Sched::FqCodel {
                let fq = FqCodel::of(&mut self.aqm);
                let (pkt, verdict) = fq.dequeue(now, &mut self.aqm_rng)?;
                let q = fq.qlen();
                if let Some(m) = self.monitor.as_mut() {
                    m.set(now, q.pkts, q.bytes);
                }
                let tx_end = now + self.tx_time(pkt.size);
                return self.start(now, pkt.id, pkt.size, tx_end, verdict, arena);
            }
            let rng = &mut self.aqm_rng;
            let (pkt, verdict, q) = match &mut *self.aqm {
                AqmImpl::FqPie(fq) => {
                    let (pkt, verdict) = fq.dequeue_outlined(now, rng)?;
                    (pkt, verdict, fq.qlen())
                }
                AqmImpl::FqCobalt(fq) => {
                    let (pkt, verdict) = fq.dequeue_outlined(now, rng)?;
                    (pkt, verdict, fq.qlen())
                }
                AqmImpl::DualPi2(d) => {
                    let (pkt, class, verdict) = d.dequeue(now, rng)?;
                    let q = d.qlen();
                    if let Some(m) = self.monitor.as_mut() {
                        m.set(now, q.pkts, q.bytes);
                        if !matches!(verdict, Verdict::Drop(_)) {
                            m.class_sojourn(class as usize, now - pkt.enq_time);
                        }
                    }
                    let tx_end = now + self.tx_time(pkt.size);
                    return self.start(now, pkt.id, pkt.size, tx_end, verdict, arena);
                }
                _ => unreachable!(
                    "a link with a scheduler holds FQ-CoDel, FQ-PIE, COBALT or DualPI2"
                ),
            };
            if let Some(m) = self.monitor.as_mut() {
                m.set(now, q.pkts, q.bytes);
            }
            let tx_end = now + self.tx_time(pkt.size);
            return self.start(now, pkt.id, pkt.size, tx_end, verdict, arena);
        }
        let id = self.fifo.pop_front()? as PktId;
        let p = arena.get(id);
        let size = p.size;
        self.qbytes -= size as u64;
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, self.fifo.len() as u32, self.qbytes);
        }
        let info = PacketInfo {
            size,
            ect: p.ecn.capable(),
            ecn: p.ecn,
            flow: p.flow,
            flags: p.flags,
            seq: p.seq,
            enq_time: p.enq_time,
        };
        let tx_end = now + self.tx_time(size);
        let verdict = if self.droptail {
            Verdict::Pass
        } else {
            let v = self.aqm.on_dequeue(now, &info, self.fifo_len(), tx_end);
            self.note_changes(now);
            v
        };
        self.start(now, id, size, tx_end, verdict, arena)
    }

    /// Carry out the dequeue verdict on packet `id` taken from the queue at
    /// `now`: drop it, or (marked or not) start its transmission, ending at
    /// `tx_end`.
    #[inline(always)]
    fn start(
        &mut self,
        now: SimTime,
        id: PktId,
        size: u32,
        tx_end: SimTime,
        verdict: Verdict,
        arena: &mut Arena,
    ) -> Option<(PktId, TxResult)> {
        match verdict {
            Verdict::Pass => {}
            Verdict::Mark(c) => {
                let p = arena.get_mut(id);
                self.stats.marks_by_ecn[p.ecn.index()] += 1;
                p.ecn = Ecn::Ce;
                let what = match c {
                    Cause::Early => {
                        self.stats.marks_early += 1;
                        "mark-early"
                    }
                    Cause::Forced => {
                        self.stats.marks_forced += 1;
                        "mark-forced"
                    }
                };
                if let Some(m) = self.monitor.as_mut() {
                    let p = arena.get(id);
                    m.event(now, p.flow, p.flags, p.size, what);
                }
            }
            Verdict::Drop(c) => {
                let p = arena.get(id);
                self.stats.drops_by_ecn[p.ecn.index()] += 1;
                self.stats.data_drops += u64::from(p.flags & flags::DATA != 0);
                let what = match c {
                    Cause::Early => {
                        self.stats.drops_early += 1;
                        "drop-early"
                    }
                    Cause::Forced => {
                        self.stats.drops_forced += 1;
                        "drop-forced"
                    }
                };
                if let Some(m) = self.monitor.as_mut() {
                    let p = arena.get(id);
                    m.event(now, p.flow, p.flags, p.size, what);
                }
                return Some((id, TxResult::Dropped));
            }
        }
        self.busy_until = tx_end;
        self.stats.departures += 1;
        self.stats.departure_bytes += size as u64;
        let p = arena.get(id);
        let sojourn = now - p.enq_time;
        self.stats.sojourn_ns += sojourn.0 as u128;
        if let Some(m) = self.monitor.as_mut() {
            m.sojourn(sojourn, p.flow);
            if let Some(c) = m.capture.as_mut() {
                c.record(now, p);
            }
        }
        if let Some(l) = self.loss.as_mut() {
            if l.lose(now) {
                self.stats.lost += 1;
                if let Some(m) = self.monitor.as_mut() {
                    let p = arena.get(id);
                    m.event(now, p.flow, p.flags, p.size, "lost");
                }
                return Some((id, TxResult::Lost));
            }
        }
        Some((
            id,
            TxResult::Arrives(self.wire_floor.arrival(tx_end + self.delay)),
        ))
    }

    /// On a monitored link, record the AQM's parameters (a periodic sample).
    pub fn sample_params(&mut self, now: SimTime) {
        if let Some(m) = self.monitor.as_mut() {
            m.params.record(now, &self.aqm);
        }
    }

    /// On a monitored link, record the AQM's parameters if it changed them.
    #[inline]
    pub fn note_changes(&mut self, now: SimTime) {
        if let Some(m) = self.monitor.as_mut() {
            if self.aqm.take_changed() {
                m.params.record(now, &self.aqm);
            }
        }
    }

    /// Prefetch the three cache lines the per-packet path uses (to bring
    /// them into the cache ahead of the packets; see `World::warm`).
    #[inline]
    pub fn prefetch(&self) {
        crate::mem::prefetch(&self.busy_until);
        crate::mem::prefetch(&self.fifo);
        crate::mem::prefetch(&self.stats);
    }

    /// Prefetch the slot of the FIFO's storage that the next packet
    /// queued takes (reads the queue's line).
    #[inline]
    pub fn prefetch_queue(&self) {
        let (a, b) = self.fifo.as_slices();
        let slot = if b.is_empty() {
            a.as_ptr_range().end
        } else {
            b.as_ptr_range().end
        };
        crate::mem::prefetch_ptr(slot.cast::<u8>());
    }

    /// [`Link::prefetch`] for a cut-through link: the two lines a packet
    /// passed through reads when none waits (see [`Link::pass_through`]).
    #[inline]
    pub fn prefetch_cut_through(&self) {
        crate::mem::prefetch(&self.busy_until);
        crate::mem::prefetch(&self.stats);
    }

    /// About how many packets this link sends within one bucket of the
    /// event queue, `bucket_ns` wide (at least one): those of its queue
    /// worth warming.
    pub fn departures_per_bucket(&self, bucket_ns: u64) -> usize {
        let bits = self.rate.bps() as u128 * bucket_ns as u128 / 1_000_000_000;
        // Counted in 500-byte packets, at most 256.
        (bits / 4000).clamp(1, 256) as usize
    }

    /// Packets and bytes held by FQ-PIE's or COBALT's scheduler.
    #[inline]
    fn other_flows_qlen(&self) -> QueueLen {
        match &*self.aqm {
            AqmImpl::FqPie(fq) => fq.qlen(),
            AqmImpl::FqCobalt(fq) => fq.qlen(),
            _ => unreachable!("other_flows_qlen is called for FQ-PIE and COBALT only"),
        }
    }

    /// Whether packets are waiting (not asked of a cut-through link,
    /// whose packets never wait).
    #[inline]
    pub fn has_waiting(&self) -> bool {
        if self.fq() {
            if self.sched == Sched::FqCodel {
                if let AqmImpl::FqCodel(fq) = &*self.aqm {
                    return !fq.is_empty();
                }
            }
            if let AqmImpl::DualPi2(d) = &*self.aqm {
                return !d.is_empty();
            }
            return self.other_flows_qlen().pkts > 0;
        }
        debug_assert!(!self.cut_through && !self.planned);
        !self.fifo.is_empty()
    }

    /// The packet at the head of the FIFO (none under FQ-CoDel or on a
    /// cut-through link): the next to start, read without the AQM.
    #[inline]
    pub fn head(&self) -> Option<PktId> {
        if self.fq() || self.cut_through || self.planned {
            return None;
        }
        self.fifo.front().map(|&id| id as PktId)
    }

    /// No bytes wait in the FIFO (or, on a cut-through link, are admitted
    /// and not yet started); read from the first cache line only (always
    /// true under FQ-CoDel, whose scheduler holds the packets).
    #[inline]
    pub fn nothing_waits(&self) -> bool {
        self.qbytes == 0
    }

    /// Packets waiting in the queue (FQ-CoDel's: flow queue by flow queue;
    /// DualPI2's: the L queue, then the C queue).
    pub fn waiting(&self) -> impl Iterator<Item = PktId> + '_ {
        let fq: Option<Box<dyn Iterator<Item = PktId>>> = flow_queues!(&*self.aqm,
            fq => Some(Box::new(fq.iter().map(|q| q.id))), _ => None);
        let dual = match &*self.aqm {
            AqmImpl::DualPi2(d) => Some(d.iter().map(|h| h.id)),
            _ => None,
        };
        // Cut-through and planned links hold no packet ids.
        let fifo = if self.cut_through || self.planned {
            0
        } else {
            self.fifo.len()
        };
        self.fifo
            .iter()
            .take(fifo)
            .map(|&id| id as PktId)
            .chain(fq.into_iter().flatten())
            .chain(dual.into_iter().flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every packet touches lies in the link's first four cache lines,
    /// the per-packet counters in the fourth (see [`Link`]).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn hot_fields_fill_the_first_four_cache_lines() {
        use std::mem::{align_of, offset_of};
        assert_eq!(align_of::<Link>(), 64);
        assert_eq!(offset_of!(Link, fifo), 64);
        assert!(offset_of!(Link, sched) < 128);
        assert_eq!(offset_of!(Link, stats), 128);
        assert!(offset_of!(LinkStats, data_drops) < 64);
    }

    /// A planned DropTail link with room for one waiting packet: the
    /// start and arrival times are fixed at admission; a departure at the
    /// same nanosecond as an arrival comes after it (the packet about to
    /// start still waits), and one a nanosecond earlier before it.
    #[test]
    fn planned_departures_keep_times_and_ties() {
        use crate::aqm::DropTail;
        use crate::packet::Packet;
        let tx = SimTime::from_micros(400); // 500 bytes at 10 Mbit/s
        let delay = SimTime::from_millis(20);
        let mut link = Link::new(
            BitRate(10_000_000),
            delay,
            Buffer::Packets(1),
            AqmImpl::DropTail(DropTail),
            Rng::new(1, Stream::Aqm(0)),
        );
        assert!(link.plan());
        let mut arena = Arena::with_capacity(8);
        let mut offer = |link: &mut Link, at: SimTime| {
            let id = arena.alloc(Packet {
                size: 500,
                ..Packet::default()
            });
            link.offer(at, id, &mut arena)
        };
        let t0 = SimTime::ZERO;
        // The first starts at once; the second waits for it.
        assert_eq!(offer(&mut link, t0), Offer::Planned(t0 + tx + delay));
        assert_eq!(offer(&mut link, t0), Offer::Planned(t0 + tx + tx + delay));
        // At the second's start it still waits: the buffer is full.
        assert_eq!(offer(&mut link, t0 + tx), Offer::Dropped);
        assert_eq!(link.stats.drops_overflow, 1);
        // A nanosecond later it has left the queue.
        let t = t0 + tx + SimTime(1);
        assert_eq!(
            offer(&mut link, t),
            Offer::Planned(t0 + tx + tx + tx + delay)
        );
        assert_eq!((link.stats.departures, link.qlen().pkts), (2, 1));
        // Settled after the last start, the link is as if it had sent them.
        link.settle(t0 + tx + tx + SimTime(1));
        assert_eq!((link.stats.departures, link.qlen().pkts), (3, 0));
        assert_eq!(link.busy_until(), t0 + tx + tx + tx);
        assert_eq!(link.stats.sojourn_ns, (tx.0 + (tx.0 - 1)) as u128);
    }

    /// A delay stepping from 1000 to 40 ms after a packet left at 0 (500
    /// bytes at 10 Mbit/s take 400 us to send; it arrives at 1000.4 ms).
    /// With `reorder` the packet sent at 1 ms arrives 959 ms before it, on
    /// the new delay; without, with it, as does every packet sent before
    /// 960 ms. One sent after that arrives on the new delay either way.
    #[test]
    fn a_shorter_delay_reorders_only_when_asked() {
        use crate::aqm::DropTail;
        use crate::packet::Packet;
        let tx = SimTime::from_micros(400);
        let ms = SimTime::from_millis;
        for reorder in [true, false] {
            let mut link = Link::new(
                BitRate(10_000_000),
                ms(1000),
                Buffer::Packets(10),
                AqmImpl::DropTail(DropTail),
                Rng::new(1, Stream::Aqm(0)),
            );
            let mut arena = Arena::with_capacity(8);
            let mut send = |link: &mut Link, at: SimTime| {
                let id = arena.alloc(Packet {
                    size: 500,
                    ..Packet::default()
                });
                assert_eq!(link.offer(at, id, &mut arena), Offer::Accepted);
                match link.try_start(at, &mut arena) {
                    Some((_, TxResult::Arrives(t))) => t,
                    other => panic!("{other:?}"),
                }
            };
            let first = send(&mut link, SimTime::ZERO);
            assert_eq!(first, tx + ms(1000));
            link.set_delay(ms(40), reorder);
            let next = send(&mut link, ms(1));
            let late = send(&mut link, ms(961));
            if reorder {
                assert_eq!(next, ms(1) + tx + ms(40));
                assert_eq!(first - next, SimTime::from_micros(959_000));
            } else {
                assert_eq!(next, first);
            }
            assert_eq!(late, ms(961) + tx + ms(40), "reorder {reorder}");
        }
    }

    fn markov(p: &[f64], hold_ms: &[f64], transitions: &[&[f64]]) -> LossModel {
        let spec = LossSpec::Markov {
            p: p.to_vec(),
            hold: hold_ms
                .iter()
                .map(|ms| SimTime::from_secs_f64(ms * 1e-3))
                .collect(),
            transitions: transitions.iter().map(|r| r.to_vec()).collect(),
        };
        LossModel::new(&spec, Rng::new(1, Stream::LinkLoss(0)))
    }

    /// A two-state chain that always switches, with loss 0 and 1: packets
    /// are lost exactly during state 1's holding periods, which start at
    /// 10 ms, 25 ms, 40 ms, ... and last 5 ms.
    #[test]
    fn markov_states_last_their_holding_times() {
        let mut m = markov(&[0.0, 1.0], &[10.0, 5.0], &[&[0.0, 1.0], &[1.0, 0.0]]);
        for (us, lost) in [
            (0, false),
            (9_999, false),
            (10_000, true),
            (14_999, true),
            (15_000, false),
            (24_999, false),
            (25_000, true),
            (40_000, true),
            (45_001, false),
        ] {
            assert_eq!(m.lose(SimTime::from_micros(us)), lost, "at {us} us");
        }
        // After a long silence the chain is where its course puts it:
        // state 1 during [10 + 15 k, 15 + 15 k) ms (k = 667: 10015 ms).
        assert!(m.lose(SimTime::from_micros(10_015_000)));
        assert!(!m.lose(SimTime::from_micros(10_020_000)));
    }

    /// `002_80945567bf68047d.txt` section 5.2's chain, one packet every
    /// 100 us for 1000 s: the fraction lost is the stationary loss,
    /// sum_i p_i pi_i h_i / sum_i pi_i h_i = 2.232 % (pi = (79, 19, 13) / 111).
    #[test]
    fn markov_long_run_loss_is_stationary() {
        let mut m = markov(
            &[0.0, 0.2, 0.1],
            &[50.0, 25.0, 3.75],
            &[&[0.7, 0.2, 0.1], &[0.7, 0.1, 0.2], &[0.8, 0.1, 0.1]],
        );
        let n = 10_000_000u64;
        let lost = (0..n)
            .filter(|i| m.lose(SimTime::from_micros(100 * i)))
            .count();
        let rate = lost as f64 / n as f64;
        let pi: [f64; 3] = [79.0 / 111.0, 19.0 / 111.0, 13.0 / 111.0];
        let w = [pi[0] * 50.0, pi[1] * 25.0, pi[2] * 3.75];
        let want = (0.2 * w[1] + 0.1 * w[2]) / (w[0] + w[1] + w[2]);
        assert!((want - 0.02232).abs() < 1e-5, "{want}");
        assert!((rate - want).abs() < 0.03 * want, "{rate} vs {want}");
    }
}
