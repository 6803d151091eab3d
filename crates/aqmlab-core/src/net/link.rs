//! A one-way link: an egress queue with its AQM, a transmitter of fixed rate,
//! a propagation delay and an optional random loss model on the wire.
//!
//! The waiting packets live in the link's FIFO, except under FQ-CoDel,
//! which schedules them itself: then [`Link::offer`] and [`Link::try_start`]
//! hand them to the scheduler instead ([`crate::aqm::FqCodel::enqueue`],
//! [`crate::aqm::FqCodel::dequeue`]), behind one branch on the AQM kind.

use crate::aqm::fq_codel::Queued;
use crate::aqm::{Aqm, AqmImpl, Cause, PacketInfo, QueueLen, Verdict};
use crate::metrics::{LinkStats, QueueMonitor};
use crate::packet::{Arena, Ecn, PktId};
use crate::rng::Rng;
use crate::scenario::{Buffer, LossSpec};
use crate::units::{BitRate, SimTime};
use std::collections::VecDeque;

/// Random loss on the wire.
#[derive(Clone, Debug)]
pub enum LossModel {
    Bernoulli { p: f64, rng: Rng },
}

impl LossModel {
    pub fn new(spec: &LossSpec, rng: Rng) -> LossModel {
        match *spec {
            LossSpec::Bernoulli { p } => LossModel::Bernoulli { p, rng },
        }
    }
    #[inline]
    fn lose(&mut self) -> bool {
        match self {
            LossModel::Bernoulli { p, rng } => rng.bernoulli(*p),
        }
    }
}

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued or sent; `tx_end` is set when it started transmission at once.
    Accepted,
    /// Dropped at the queue; the caller frees it.
    Dropped,
    /// FQ-CoDel's overflow: the queue dropped packets it held (possibly
    /// the offered one) to make room; the caller frees each id that
    /// [`Link::pop_evicted`] returns, then starts transmission.
    Evicted,
}

/// A one-way link.
#[derive(Debug)]
pub struct Link {
    pub rate: BitRate,
    /// One-way propagation delay.
    pub delay: SimTime,
    pub limit: Buffer,
    pub aqm: AqmImpl,
    pub aqm_rng: Rng,
    pub loss: Option<LossModel>,
    /// Waiting packets (the one in transmission excluded); empty under
    /// FQ-CoDel, whose scheduler holds them.
    queue: VecDeque<PktId>,
    /// Packets FQ-CoDel dropped to make room, for the caller to free.
    evicted: Vec<PktId>,
    qbytes: u64,
    /// When the transmitter is free again.
    busy_until: SimTime,
    /// A `TxDone` event is pending.
    pub txdone_pending: bool,
    pub stats: LinkStats,
    /// Time-weighted queue statistics, on monitored links only.
    pub monitor: Option<Box<QueueMonitor>>,
    /// The link (of the opposite direction) whose AQM observes the packets
    /// entering this one ([`crate::aqm::Aqm::observe_reverse`]).
    pub observer: Option<u32>,
    /// Packets are passed through ahead of time (see [`Link::pass_through`]).
    pub cut_through: bool,
    /// Cut-through links: (start of transmission, size) of packets that
    /// wait at the virtual time of the latest admission.
    pending: VecDeque<(SimTime, u32)>,
    pending_bytes: u64,
    /// Serialisation times of the two most recent packet sizes (data and
    /// ACK sizes alternate; this saves a 64-bit division per packet).
    tx_cache: [(u32, SimTime); 2],
    /// ∫ rate dt up to `rate_since` (bit·ns / 1e9 = bits), for utilisation
    /// across rate changes.
    capacity_bits_ns: u128,
    rate_since: SimTime,
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
            aqm,
            aqm_rng,
            loss: None,
            queue: VecDeque::new(),
            evicted: Vec::new(),
            qbytes: 0,
            busy_until: SimTime::ZERO,
            txdone_pending: false,
            stats: LinkStats::default(),
            monitor: None,
            observer: None,
            cut_through: false,
            pending: VecDeque::new(),
            pending_bytes: 0,
            tx_cache: [(0, SimTime::ZERO); 2],
            capacity_bits_ns: 0,
            rate_since: SimTime::ZERO,
        }
    }

    /// Bits the link could have sent from time 0 to `now` (∫ rate dt).
    pub fn capacity_bits(&self, now: SimTime) -> f64 {
        let total = self.capacity_bits_ns
            + self.rate.bps() as u128 * now.saturating_sub(self.rate_since).0 as u128;
        total as f64 * 1e-9
    }

    /// Serialisation time of a packet of `size` bytes.
    #[inline]
    fn tx_time(&mut self, size: u32) -> SimTime {
        if self.tx_cache[0].0 == size {
            return self.tx_cache[0].1;
        }
        if self.tx_cache[1].0 != size {
            self.tx_cache[1] = (size, self.rate.tx_time(size));
        }
        self.tx_cache.swap(0, 1);
        self.tx_cache[0].1
    }

    /// Change the transmission rate at `now` (applies from the next packet).
    pub fn set_rate(&mut self, now: SimTime, rate: BitRate) {
        self.capacity_bits_ns +=
            self.rate.bps() as u128 * now.saturating_sub(self.rate_since).0 as u128;
        self.rate_since = now;
        self.rate = rate;
        self.tx_cache = [(0, SimTime::ZERO); 2];
    }

    /// Whether this link may be passed through ahead of time: a DropTail
    /// queue without random loss or monitor, fed by exactly one upstream
    /// link (so packets reach it in the order they left that link).
    pub fn can_cut_through(&self) -> bool {
        matches!(self.aqm, AqmImpl::DropTail(_)) && self.loss.is_none() && self.monitor.is_none()
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
    pub fn pass_through(&mut self, t: SimTime, size: u32) -> Option<SimTime> {
        while let Some(&(start, sz)) = self.pending.front() {
            if start > t {
                break;
            }
            self.pending.pop_front();
            self.pending_bytes -= sz as u64;
        }
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += size as u64;
        let fits = match self.limit {
            Buffer::Packets(n) => (self.pending.len() as u32) < n,
            Buffer::Bytes(b) => self.pending_bytes + size as u64 <= b,
        };
        if !fits {
            self.stats.drops_overflow += 1;
            return None;
        }
        let start = t.max(self.busy_until);
        if start > t {
            self.pending.push_back((start, size));
            self.pending_bytes += size as u64;
        }
        self.busy_until = start + self.tx_time(size);
        self.stats.departures += 1;
        self.stats.departure_bytes += size as u64;
        self.stats.sojourn_ns += (start.0 - t.0) as u128;
        Some(self.busy_until + self.delay)
    }

    /// Packets and bytes waiting (in the FIFO, or held by FQ-CoDel).
    #[inline]
    pub fn qlen(&self) -> QueueLen {
        if let AqmImpl::FqCodel(fq) = &self.aqm {
            return fq.qlen();
        }
        self.fifo_len()
    }

    #[inline]
    fn fifo_len(&self) -> QueueLen {
        QueueLen {
            pkts: self.queue.len() as u32,
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

    #[inline]
    fn fits(&self, size: u32) -> bool {
        match self.limit {
            Buffer::Packets(n) => (self.queue.len() as u32) < n,
            Buffer::Bytes(b) => self.qbytes + size as u64 <= b,
        }
    }

    /// Offer a packet to the queue: the AQM decides, then the buffer limit.
    /// An accepted packet is queued; the caller then calls [`Link::try_start`].
    #[inline]
    pub fn offer(&mut self, now: SimTime, id: PktId, arena: &mut Arena) -> Offer {
        if let AqmImpl::FqCodel(_) = self.aqm {
            return self.offer_fq(now, id, arena);
        }
        let p = arena.get_mut(id);
        let info = PacketInfo {
            size: p.size,
            ect: p.ecn.capable(),
            flow: p.flow,
            flags: p.flags,
            seq: p.seq,
            enq_time: now,
        };
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += p.size as u64;
        let verdict = self
            .aqm
            .on_enqueue(now, &info, self.fifo_len(), &mut self.aqm_rng);
        self.note_changes(now);
        let mark = match verdict {
            Verdict::Pass => None,
            Verdict::Mark(c) => Some(c),
            Verdict::Drop(c) => {
                match c {
                    Cause::Early => self.stats.drops_early += 1,
                    Cause::Forced => self.stats.drops_forced += 1,
                }
                return Offer::Dropped;
            }
        };
        if !self.fits(info.size) {
            self.stats.drops_overflow += 1;
            return Offer::Dropped;
        }
        if let Some(c) = mark {
            debug_assert!(info.ect, "an AQM marked a packet that is not ECN-capable");
            p.ecn = Ecn::Ce;
            match c {
                Cause::Early => self.stats.marks_early += 1,
                Cause::Forced => self.stats.marks_forced += 1,
            }
        }
        p.enq_time = now;
        self.queue.push_back(id);
        self.qbytes += info.size as u64;
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, self.queue.len() as u32, self.qbytes);
        }
        Offer::Accepted
    }

    /// [`Link::offer`] under FQ-CoDel: the scheduler takes the packet and
    /// enforces the buffer limit by dropping from its largest flow queue
    /// (overflow drops, RFC 8290 section 4.1).
    fn offer_fq(&mut self, now: SimTime, id: PktId, arena: &mut Arena) -> Offer {
        let AqmImpl::FqCodel(fq) = &mut self.aqm else {
            unreachable!("offer_fq is called for FQ-CoDel only")
        };
        let p = arena.get_mut(id);
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += p.size as u64;
        p.enq_time = now;
        let pkt = Queued {
            id,
            size: p.size,
            enq_time: now,
            ect: p.ecn.capable(),
        };
        fq.enqueue(
            pkt,
            p.flow,
            self.limit,
            &mut self.aqm_rng,
            &mut self.evicted,
        );
        let q = fq.qlen();
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, q.pkts, q.bytes);
        }
        if self.evicted.is_empty() {
            Offer::Accepted
        } else {
            self.stats.drops_overflow += self.evicted.len() as u64;
            Offer::Evicted
        }
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
        if let AqmImpl::FqCodel(fq) = &mut self.aqm {
            let (pkt, verdict) = fq.dequeue(now)?;
            let q = fq.qlen();
            if let Some(m) = self.monitor.as_mut() {
                m.set(now, q.pkts, q.bytes);
            }
            let tx_end = now + self.tx_time(pkt.size);
            return self.start(now, pkt.id, pkt.size, tx_end, verdict, arena);
        }
        let id = self.queue.pop_front()?;
        let p = arena.get(id);
        let size = p.size;
        self.qbytes -= size as u64;
        if let Some(m) = self.monitor.as_mut() {
            m.set(now, self.queue.len() as u32, self.qbytes);
        }
        let info = PacketInfo {
            size,
            ect: p.ecn.capable(),
            flow: p.flow,
            flags: p.flags,
            seq: p.seq,
            enq_time: p.enq_time,
        };
        let tx_end = now + self.tx_time(size);
        let verdict = self.aqm.on_dequeue(now, &info, self.fifo_len(), tx_end);
        self.note_changes(now);
        self.start(now, id, size, tx_end, verdict, arena)
    }

    /// Carry out the dequeue verdict on packet `id` taken from the queue at
    /// `now`: drop it, or (marked or not) start its transmission, ending at
    /// `tx_end`.
    #[inline]
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
                arena.get_mut(id).ecn = Ecn::Ce;
                match c {
                    Cause::Early => self.stats.marks_early += 1,
                    Cause::Forced => self.stats.marks_forced += 1,
                }
            }
            Verdict::Drop(c) => {
                match c {
                    Cause::Early => self.stats.drops_early += 1,
                    Cause::Forced => self.stats.drops_forced += 1,
                }
                return Some((id, TxResult::Dropped));
            }
        }
        self.busy_until = tx_end;
        self.stats.departures += 1;
        self.stats.departure_bytes += size as u64;
        self.stats.sojourn_ns += (now.0 - arena.get(id).enq_time.0) as u128;
        if let Some(l) = self.loss.as_mut() {
            if l.lose() {
                self.stats.lost += 1;
                return Some((id, TxResult::Lost));
            }
        }
        Some((id, TxResult::Arrives(tx_end + self.delay)))
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

    /// Whether packets are waiting.
    #[inline]
    pub fn has_waiting(&self) -> bool {
        if let AqmImpl::FqCodel(fq) = &self.aqm {
            return !fq.is_empty();
        }
        !self.queue.is_empty()
    }

    /// Packets waiting in the queue (FQ-CoDel's: flow queue by flow queue).
    pub fn waiting(&self) -> impl Iterator<Item = &PktId> {
        let fq = match &self.aqm {
            AqmImpl::FqCodel(fq) => Some(fq.iter().map(|q| &q.id)),
            _ => None,
        };
        self.queue.iter().chain(fq.into_iter().flatten())
    }
}
