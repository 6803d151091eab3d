//! One direction of the emulated bottleneck: a FIFO under one of the core's
//! AQMs (or the queues of a scheme that schedules among its own: the flow
//! queues of FQ-CoDel, FQ-PIE, COBALT and FQ-COBALT, DualPI2's L and C
//! queues), a transmitter at the link rate and a propagation delay line.
//!
//! Time is the router's clock in nanoseconds since the run's start
//! ([`SimTime`]). The link keeps its own schedule: a packet starts its
//! transmission at `max(arrival, end of the previous transmission)`, so a
//! late wake-up of the router delays the write of packets but never lowers
//! the rate (their release times are computed, not observed). The AQM is
//! called at those computed instants, in time order with its ticks.

use crate::ip;
use crate::trace::{Fate, Trace};
use aqmlab_core::aqm::dualpi2::Held;
use aqmlab_core::aqm::fq_codel::Queued;
use aqmlab_core::aqm::{Aqm, AqmImpl, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use aqmlab_core::net::WireFloor;
use aqmlab_core::packet::PktId;
use aqmlab_core::rng::Rng;
use aqmlab_core::scenario::Buffer;
use aqmlab_core::units::{BitRate, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// `$e` with `$fq` bound to the scheme's flow-queue scheduler (FQ-CoDel,
/// FQ-PIE, COBALT and FQ-COBALT: one arm per per-queue AQM), else `$other`.
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

/// A packet held by the router.
#[derive(Debug)]
pub struct Slot {
    pub buf: Vec<u8>,
    pub info: PacketInfo,
}

impl Slot {
    /// A packet read at `now`, described for the AQM by its parsed header.
    pub fn new(buf: Vec<u8>, h: &ip::Header, now: SimTime) -> Slot {
        Slot {
            buf,
            info: PacketInfo {
                size: h.len,
                ect: h.ect(),
                ecn: h.codepoint(),
                flow: h.flow,
                flags: h.flags,
                seq: h.seq,
                enq_time: now,
            },
        }
    }

    /// [`Slot::new`] after parsing the header.
    pub fn read(buf: Vec<u8>, now: SimTime) -> Result<Slot, ip::NotIpv4> {
        let h = ip::parse(&buf)?;
        Ok(Slot::new(buf, &h, now))
    }
}

/// Counters of one direction, by cause (the names of `summary.json`).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Stats {
    pub arrivals: u64,
    pub arrival_bytes: u64,
    pub departures: u64,
    pub departure_bytes: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_overflow: u64,
    pub marks_early: u64,
    pub marks_forced: u64,
    /// Of the AQM's drops (early and forced), those of ECN-capable packets
    /// (with an ECN-enabled scheme, the forced ones only).
    pub drops_ect: u64,
    /// Sum over departed packets of their wait in the queue, ns.
    pub sojourn_ns: u64,
}

impl Stats {
    pub fn drops(&self) -> u64 {
        self.drops_early + self.drops_forced + self.drops_overflow
    }
    pub fn marks(&self) -> u64 {
        self.marks_early + self.marks_forced
    }
}

/// The queue time series of a monitored direction (columns of `queue.parquet`)
/// and the AQM's parameters (`params.parquet`).
#[derive(Debug, Default, Serialize)]
pub struct Series {
    pub time_s: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub avg: Vec<f64>,
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
    pub param_time_s: Vec<f64>,
    pub param_name: Vec<&'static str>,
    pub param_value: Vec<f64>,
}

/// One direction of the bottleneck.
pub struct Dir {
    pub name: &'static str,
    pub aqm: AqmImpl,
    rng: Rng,
    pub rate: BitRate,
    pub delay: SimTime,
    limit: Buffer,
    queue: VecDeque<Slot>,
    qbytes: u64,
    /// End of the transmission in progress (or of the last one).
    busy_until: SimTime,
    /// Packets on the wire, in release order: (time they reach the far end, packet).
    wire: VecDeque<(SimTime, Slot)>,
    /// The earliest a packet reaches the far end ([`Dir::set_link`]).
    wire_floor: WireFloor,
    next_tick: Option<SimTime>,
    /// Sampling: interval and next instant (monitored direction only).
    sample: Option<(SimTime, SimTime)>,
    pub series: Series,
    pub stats: Stats,
    /// Counters when the measurement interval began.
    pub stats_at_start: Option<Stats>,
    measure_start: SimTime,
    /// Buffers to reuse.
    pub free: Vec<Vec<u8>>,
    /// Under a scheme that holds the packets itself (FQ-CoDel, DualPI2): the
    /// packets by the id the scheme knows them by, and the ids to reuse.
    by_id: Vec<Option<Slot>>,
    free_ids: Vec<PktId>,
    /// When the scheme's queues last became non-empty (a transmission
    /// cannot start before it).
    ready: SimTime,
    /// FQ-CoDel's overflow drops of one arrival.
    evicted: Vec<PktId>,
    /// Every drop and mark, when the scenario asks (`metrics.trace`).
    pub trace: Option<Trace>,
}

impl Dir {
    pub fn new(
        name: &'static str,
        aqm: AqmImpl,
        rng: Rng,
        link: &LinkInfo,
        sample: Option<SimTime>,
        measure_start: SimTime,
    ) -> Dir {
        let next_tick = aqm.tick_interval();
        Dir {
            name,
            aqm,
            rng,
            rate: link.rate,
            delay: link.delay,
            limit: link.buffer,
            queue: VecDeque::new(),
            qbytes: 0,
            busy_until: SimTime::ZERO,
            wire: VecDeque::new(),
            wire_floor: WireFloor::default(),
            next_tick,
            sample: sample.map(|i| (i, i)),
            series: Series::default(),
            stats: Stats::default(),
            stats_at_start: None,
            measure_start,
            free: Vec::new(),
            by_id: Vec::new(),
            free_ids: Vec::new(),
            ready: SimTime::ZERO,
            evicted: Vec::new(),
            trace: None,
        }
    }

    /// Whether the scheme holds the packets and chooses the next one.
    fn schedules(&self) -> bool {
        flow_queues!(&self.aqm, _fq => true, _ => matches!(self.aqm, AqmImpl::DualPi2(_)))
    }

    pub fn qlen(&self) -> QueueLen {
        flow_queues!(&self.aqm, fq => fq.qlen(), _ => match &self.aqm {
            AqmImpl::DualPi2(d) => d.qlen(),
            _ => QueueLen {
                pkts: self.queue.len() as u32,
                bytes: self.qbytes,
            },
        })
    }

    /// The instant the next transmission can start, if a packet waits.
    fn next_tx(&self) -> Option<SimTime> {
        if self.schedules() {
            return (self.qlen().pkts > 0).then(|| self.busy_until.max(self.ready));
        }
        self.queue
            .front()
            .map(|h| self.busy_until.max(h.info.enq_time))
    }

    fn fits(&self, size: u32) -> bool {
        match self.limit {
            Buffer::Packets(n) => (self.queue.len() as u32) < n,
            Buffer::Bytes(b) => self.qbytes + size as u64 <= b,
        }
    }

    /// The earliest instant at which something is due: a transmission
    /// start, a packet's release, a tick, a sample, the measurement start.
    pub fn next_event(&self) -> SimTime {
        let mut t = self.next_tx().unwrap_or(SimTime::MAX);
        if let Some((r, _)) = self.wire.front() {
            t = t.min(*r);
        }
        if let Some(k) = self.next_tick {
            t = t.min(k);
        }
        if let Some((_, s)) = self.sample {
            t = t.min(s);
        }
        if self.stats_at_start.is_none() {
            t = t.min(self.measure_start);
        }
        t
    }

    /// Carry out, in time order, everything due at or before `now`:
    /// transmission starts (the AQM's dequeue hook), ticks, samples.
    pub fn advance(&mut self, now: SimTime) {
        loop {
            let tx = self.next_tx().unwrap_or(SimTime::MAX);
            let tick = self.next_tick.unwrap_or(SimTime::MAX);
            let smp = self.sample.map(|(_, s)| s).unwrap_or(SimTime::MAX);
            let ms = if self.stats_at_start.is_none() {
                self.measure_start
            } else {
                SimTime::MAX
            };
            let t = tx.min(tick).min(smp).min(ms);
            if t > now {
                return;
            }
            if ms == t {
                self.stats_at_start = Some(self.stats);
            } else if smp == t {
                self.record_sample(t);
            } else if tick == t {
                let q = self.qlen();
                self.aqm.on_tick(t, q);
                let iv = self.aqm.tick_interval().unwrap_or(SimTime::MAX);
                self.next_tick = Some(SimTime(t.0.saturating_add(iv.0)));
                self.note_changes(t);
            } else {
                self.start_tx(t);
            }
        }
    }

    fn record_sample(&mut self, t: SimTime) {
        let Some((iv, _)) = self.sample else { return };
        let q = self.qlen();
        let s = &mut self.series;
        s.time_s.push(t.as_secs_f64());
        s.queue_pkts.push(q.pkts);
        s.queue_bytes.push(q.bytes);
        s.avg.push(self.aqm.average().unwrap_or(f64::NAN));
        s.drops.push(self.stats.drops());
        s.marks.push(self.stats.marks());
        self.push_params(t);
        self.sample = Some((iv, t + iv));
    }

    fn push_params(&mut self, t: SimTime) {
        let s = &mut self.series;
        let ts = t.as_secs_f64();
        self.aqm.params(&mut |name, value| {
            s.param_time_s.push(ts);
            s.param_name.push(name);
            s.param_value.push(value);
        });
    }

    fn note_changes(&mut self, t: SimTime) {
        if self.aqm.take_changed() && self.sample.is_some() {
            self.push_params(t);
        }
    }

    /// Take the head of the queue at `t` and start its transmission (or
    /// drop it, if the AQM decides so at dequeue).
    fn start_tx(&mut self, t: SimTime) {
        if self.schedules() {
            return self.start_scheduled(t);
        }
        let Some(mut slot) = self.queue.pop_front() else {
            return;
        };
        let size = slot.info.size;
        self.qbytes -= size as u64;
        let tx_end = t + self.rate.tx_time(size);
        let q = self.qlen();
        let verdict = self.aqm.on_dequeue(t, &slot.info, q, tx_end);
        self.note_changes(t);
        match verdict {
            Verdict::Pass => {}
            Verdict::Mark(c) => {
                if ip::set_ce(&mut slot.buf) {
                    self.count_mark(t, c, &slot.info);
                }
            }
            Verdict::Drop(c) => {
                self.count_drop(t, c, &slot.info);
                self.free.push(slot.buf);
                return;
            }
        }
        self.send(t, slot, tx_end);
    }

    /// `slot` starts its transmission at `t`, which ends at `tx_end`.
    fn send(&mut self, t: SimTime, slot: Slot, tx_end: SimTime) {
        self.busy_until = tx_end;
        self.stats.departures += 1;
        self.stats.departure_bytes += slot.info.size as u64;
        self.stats.sojourn_ns += t.0 - slot.info.enq_time.0;
        let r = self.wire_floor.arrival(tx_end + self.delay);
        // After a shorter delay a packet may overtake those still on the
        // wire (a delay change with `reorder`): it goes in at its time,
        // after any due at the same instant.
        let at = self.wire.len() - self.wire.iter().rev().take_while(|(w, _)| *w > r).count();
        self.wire.insert(at, (r, slot));
    }

    /// [`Dir::start_tx`] under a scheme that schedules: it chooses the
    /// packet and gives its verdict; the packets it drops on the way are
    /// counted and freed, and it is asked again.
    fn start_scheduled(&mut self, t: SimTime) {
        loop {
            let rng = &mut self.rng;
            let next = flow_queues!(&mut self.aqm,
                fq => fq.dequeue(t, rng).map(|(p, v)| (p.id, v)),
                _ => match &mut self.aqm {
                    AqmImpl::DualPi2(d) => d.dequeue(t, rng).map(|(p, _, v)| (p.id, v)),
                    _ => unreachable!("start_scheduled is called for the schemes that schedule"),
                }
            );
            let Some((id, verdict)) = next else { return };
            let mut slot = self.take_held(id);
            match verdict {
                Verdict::Pass => {}
                Verdict::Mark(c) => {
                    if ip::set_ce(&mut slot.buf) {
                        self.count_mark(t, c, &slot.info);
                    }
                }
                Verdict::Drop(c) => {
                    self.count_drop(t, c, &slot.info);
                    self.free.push(slot.buf);
                    continue;
                }
            }
            let tx_end = t + self.rate.tx_time(slot.info.size);
            self.send(t, slot, tx_end);
            return;
        }
    }

    /// Keep `slot` for the scheme; the id it knows it by.
    fn hold(&mut self, slot: Slot) -> PktId {
        match self.free_ids.pop() {
            Some(id) => {
                self.by_id[id as usize] = Some(slot);
                id
            }
            None => {
                self.by_id.push(Some(slot));
                (self.by_id.len() - 1) as PktId
            }
        }
    }

    fn take_held(&mut self, id: PktId) -> Slot {
        let slot = self.by_id[id as usize]
            .take()
            .expect("the scheme returns only packets it holds");
        self.free_ids.push(id);
        slot
    }

    /// [`Dir::arrive`] under a scheme that schedules: it takes the packet,
    /// or drops one (FQ-CoDel: from its longest flow queue; DualPI2: the
    /// arrival) when the buffer is full.
    fn arrive_scheduled(&mut self, now: SimTime, slot: Slot) -> bool {
        let was_empty = self.qlen().pkts == 0;
        let (size, ecn, flow) = (slot.info.size, slot.info.ecn, slot.info.flow);
        let id = self.hold(slot);
        let pkt = Queued {
            id,
            size,
            enq_time: now,
            ecn,
        };
        let (limit, busy_until) = (self.limit, self.busy_until);
        let (rng, evicted) = (&mut self.rng, &mut self.evicted);
        // The router hashes the connection's 5-tuple (its flow id), which a
        // sender's new `sk_txhash` leaves as it was: hash label 0.
        let key = u64::from(flow);
        let verdict = flow_queues!(&mut self.aqm,
            fq => Some(fq.enqueue(pkt, key, limit, busy_until, rng, evicted)),
            _ => None
        );
        let kept = match verdict {
            Some(v) => {
                // The queue's AQM answers the arrival first (FQ-PIE drops or
                // marks it there), then the buffer limit evicts.
                let mut kept = true;
                match v {
                    Verdict::Pass => {}
                    Verdict::Mark(c) => {
                        let slot = self.by_id[id as usize].as_mut().expect("held");
                        if ip::set_ce(&mut slot.buf) {
                            let info = slot.info;
                            self.count_mark(now, c, &info);
                        }
                    }
                    Verdict::Drop(c) => {
                        let slot = self.take_held(id);
                        self.count_drop(now, c, &slot.info);
                        self.free.push(slot.buf);
                        kept = false;
                    }
                }
                while let Some(v) = self.evicted.pop() {
                    kept &= v != id;
                    let slot = self.take_held(v);
                    self.count_overflow(now, &slot.info);
                    self.free.push(slot.buf);
                }
                kept
            }
            None => match &mut self.aqm {
                AqmImpl::DualPi2(d) => {
                    let pkt = Held::new(id, size, now, ecn);
                    let kept = d.enqueue(pkt, self.limit);
                    if !kept {
                        let slot = self.take_held(id);
                        self.count_overflow(now, &slot.info);
                        self.free.push(slot.buf);
                    }
                    kept
                }
                _ => unreachable!("arrive_scheduled is called for the schemes that schedule"),
            },
        };
        if was_empty && self.qlen().pkts > 0 {
            self.ready = now;
        }
        self.advance(now);
        kept
    }

    fn count_drop(&mut self, t: SimTime, c: Cause, info: &PacketInfo) {
        match c {
            Cause::Early => self.stats.drops_early += 1,
            Cause::Forced => self.stats.drops_forced += 1,
        }
        if info.ect {
            self.stats.drops_ect += 1;
        }
        if let Some(tr) = self.trace.as_mut() {
            tr.note(t, info, Fate::Drop(c));
        }
    }

    fn count_overflow(&mut self, t: SimTime, info: &PacketInfo) {
        self.stats.drops_overflow += 1;
        if let Some(tr) = self.trace.as_mut() {
            tr.note(t, info, Fate::Overflow);
        }
    }

    fn count_mark(&mut self, t: SimTime, c: Cause, info: &PacketInfo) {
        match c {
            Cause::Early => self.stats.marks_early += 1,
            Cause::Forced => self.stats.marks_forced += 1,
        }
        if let Some(tr) = self.trace.as_mut() {
            tr.note(t, info, Fate::Mark(c));
        }
    }

    /// A packet arrives at `now` (after [`Dir::advance`] to `now`): the AQM
    /// decides, then the buffer limit. Returns whether it was queued.
    pub fn arrive(&mut self, now: SimTime, mut slot: Slot) -> bool {
        slot.info.enq_time = now;
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += slot.info.size as u64;
        if self.schedules() {
            return self.arrive_scheduled(now, slot);
        }
        let verdict = self
            .aqm
            .on_enqueue(now, &slot.info, self.qlen(), &mut self.rng);
        self.note_changes(now);
        let mark = match verdict {
            Verdict::Pass => None,
            Verdict::Mark(c) => Some(c),
            Verdict::Drop(c) => {
                self.count_drop(now, c, &slot.info);
                self.free.push(slot.buf);
                return false;
            }
        };
        if !self.fits(slot.info.size) {
            self.count_overflow(now, &slot.info);
            self.free.push(slot.buf);
            return false;
        }
        if let Some(c) = mark {
            if ip::set_ce(&mut slot.buf) {
                self.count_mark(now, c, &slot.info);
            }
        }
        self.qbytes += slot.info.size as u64;
        self.queue.push_back(slot);
        // An idle transmitter starts at once.
        self.advance(now);
        true
    }

    /// The next packet that has reached the far end by `now`, with the
    /// instant it was due.
    pub fn due(&mut self, now: SimTime) -> Option<(SimTime, Slot)> {
        match self.wire.front() {
            Some((r, _)) if *r <= now => self.wire.pop_front(),
            _ => None,
        }
    }

    /// A scheduled change of the link's rate or delay; without `reorder`
    /// the packets sent after it arrive no earlier than the last one sent
    /// before it, as the simulator's link does ([`aqmlab_core::net::Link::set_delay`]).
    pub fn set_link(
        &mut self,
        now: SimTime,
        rate: Option<BitRate>,
        delay: Option<SimTime>,
        reorder: bool,
        info: &LinkInfo,
    ) {
        if let Some(r) = rate {
            self.rate = r;
        }
        if let Some(d) = delay {
            self.wire_floor
                .delay_change(self.busy_until, self.delay, reorder);
            self.delay = d;
        }
        self.aqm.set_link(now, info);
    }

    /// Packets waiting plus on the wire (for the end-of-run identity).
    pub fn held(&self) -> u64 {
        self.qlen().pkts as u64 + self.wire.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_core::aqm::AqmSpec;
    use aqmlab_core::rng::Stream;

    fn dir(rate: u64, delay_ms: u64, buffer: u32, aqm: AqmSpec) -> Dir {
        let mut li = LinkInfo::new(BitRate(rate), 1500);
        li.delay = SimTime::from_millis(delay_ms);
        li.buffer = Buffer::Packets(buffer);
        Dir::new(
            "fwd",
            aqm.build(li),
            Rng::new(1, Stream::Aqm(0)),
            &li,
            Some(SimTime::from_millis(10)),
            SimTime::ZERO,
        )
    }

    fn slot(len: usize, ecn: u8) -> Slot {
        Slot::read(ip::build_tcp(len, ecn, 1000, 1, 0x10), SimTime::ZERO).unwrap()
    }

    #[test]
    fn serialises_at_the_rate_and_delays() {
        // 12 Mb/s: a 1500-byte packet takes 1 ms; delay 5 ms.
        let mut d = dir(12_000_000, 5, 100, AqmSpec::Droptail);
        for _ in 0..3 {
            assert!(d.arrive(SimTime::ZERO, slot(1500, 0)));
        }
        // The first is on the wire, two wait.
        assert_eq!(d.qlen().pkts, 2);
        let mut got = Vec::new();
        let mut now = SimTime::ZERO;
        while got.len() < 3 {
            now = d.next_event().max(now);
            d.advance(now);
            while let Some((t, _)) = d.due(now) {
                got.push(t);
            }
        }
        assert_eq!(
            got,
            vec![
                SimTime::from_millis(6),
                SimTime::from_millis(7),
                SimTime::from_millis(8)
            ]
        );
        assert_eq!(d.stats.departures, 3);
        // Late observation does not change the schedule.
        let mut d = dir(12_000_000, 5, 100, AqmSpec::Droptail);
        for _ in 0..3 {
            d.arrive(SimTime::ZERO, slot(1500, 0));
        }
        let late = SimTime::from_millis(50);
        d.advance(late);
        let ts: Vec<SimTime> = std::iter::from_fn(|| d.due(late).map(|x| x.0)).collect();
        assert_eq!(ts.len(), 3);
        assert_eq!(ts[2], SimTime::from_millis(8));
    }

    /// The delay falls from 100 to 5 ms 1 ms after a packet left (12 Mb/s:
    /// 1 ms to send 1500 bytes; it arrives at 101 ms). With `reorder` the
    /// next packet, 1200 bytes sent at 2 ms, arrives at 7.8 ms, first;
    /// without, with the first, at 101 ms, behind it: as the simulator's
    /// link.
    #[test]
    fn a_shorter_delay_reorders_only_when_asked() {
        let ms = SimTime::from_millis;
        for reorder in [true, false] {
            let mut d = dir(12_000_000, 100, 100, AqmSpec::Droptail);
            let info = LinkInfo::new(BitRate(12_000_000), 1500);
            assert!(d.arrive(SimTime::ZERO, slot(1500, 0)));
            d.advance(ms(1));
            d.set_link(ms(1), None, Some(ms(5)), reorder, &info);
            assert!(d.arrive(ms(2), slot(1200, 0)));
            let mut got = Vec::new();
            let mut now = ms(2);
            while got.len() < 2 {
                now = d.next_event().max(now);
                d.advance(now);
                while let Some((t, s)) = d.due(now) {
                    got.push((t, s.info.size));
                }
            }
            let want = if reorder {
                vec![(SimTime::from_micros(7800), 1200), (ms(101), 1500)]
            } else {
                vec![(ms(101), 1500), (ms(101), 1200)]
            };
            assert_eq!(got, want, "reorder {reorder}");
        }
    }

    #[test]
    fn overflow_drops_at_the_buffer_limit() {
        let mut d = dir(1_000_000, 0, 2, AqmSpec::Droptail);
        let admitted = (0..5)
            .filter(|_| d.arrive(SimTime::ZERO, slot(1500, 0)))
            .count();
        // One in transmission and two waiting.
        assert_eq!(admitted, 3);
        assert_eq!(d.stats.drops_overflow, 2);
        assert_eq!(
            d.stats.arrivals,
            d.stats.departures + d.stats.drops() + d.qlen().pkts as u64
        );
    }

    #[test]
    fn the_trace_names_each_drop_its_flow_and_its_packet() {
        // Keyed as the router keys them: flow i from port 10 000 + i.
        let ports = Some(ip::FlowPorts {
            base: 10_000,
            count: 20,
        });
        let keyed = |len: usize, sport: u16, tcp_flags: u8, now: SimTime| {
            let buf = ip::build_tcp(len, 0, sport, 1, tcp_flags);
            let h = ip::FlowPorts::key(ports, ip::parse(&buf).unwrap());
            Slot::new(buf, &h, now)
        };
        let mut d = dir(1_000_000, 0, 2, AqmSpec::Droptail);
        d.trace = Some(Trace::new(10));
        for k in 0..5u16 {
            let now = SimTime::from_millis(u64::from(k));
            d.advance(now);
            d.arrive(now, keyed(1500, 10_000 + k, 0x10, now));
        }
        let now = SimTime::from_millis(5);
        d.advance(now);
        d.arrive(now, keyed(60, 10_007, 0x02, now));
        let t = d.trace.as_ref().unwrap();
        // 1500 bytes take 12 ms at 1 Mbit/s: the first in transmission, two waiting, the rest
        // overflow.
        assert_eq!(t.time_s, [0.003, 0.004, 0.005]);
        assert_eq!(t.flow, [3, 4, 7]);
        assert_eq!(t.event, ["drop-overflow"; 3]);
        assert_eq!(t.packet, ["data", "data", "syn"]);
        assert_eq!(d.stats.drops_overflow, 3);
    }

    #[test]
    fn an_aqm_marks_ect_and_drops_not_ect() {
        // RED with instant averaging and max_p = 1 in its early region
        // (the queue stays below max_th): ECN-capable packets are marked
        // (CE set, the checksum still valid), others dropped.
        let doc = aqmlab_core::scenario::Value::Table(vec![
            (
                "kind".into(),
                aqmlab_core::scenario::Value::Str("red".into()),
            ),
            ("min_th".into(), aqmlab_core::scenario::Value::Int(1)),
            ("max_th".into(), aqmlab_core::scenario::Value::Int(12)),
            ("max_p".into(), aqmlab_core::scenario::Value::Float(1.0)),
            ("w_q".into(), aqmlab_core::scenario::Value::Float(1.0)),
            ("ecn".into(), aqmlab_core::scenario::Value::Bool(true)),
        ]);
        let t = aqmlab_core::scenario::decode::Table::new(doc, "aqm").unwrap();
        let spec = AqmSpec::decode(t, 1500).unwrap();
        let mut d = dir(1_000_000, 0, 100, spec);
        for _ in 0..10 {
            d.arrive(SimTime::ZERO, slot(1500, 0b10));
        }
        assert!(d.stats.marks() > 0, "{:?}", d.stats);
        assert_eq!(d.stats.drops(), 0);
        let mut marked = 0;
        let now = SimTime::from_secs(1);
        d.advance(now);
        while let Some((_, s)) = d.due(now) {
            if s.buf[1] & 0b11 == ip::CE {
                marked += 1;
                assert_eq!(
                    u16::from_be_bytes([s.buf[10], s.buf[11]]),
                    ip::header_checksum(&s.buf)
                );
            }
        }
        assert_eq!(marked as u64, d.stats.marks());
        let mut d2 = dir(
            1_000_000,
            0,
            100,
            AqmSpec::decode(
                aqmlab_core::scenario::decode::Table::new(
                    aqmlab_core::scenario::Value::Table(vec![
                        (
                            "kind".into(),
                            aqmlab_core::scenario::Value::Str("red".into()),
                        ),
                        ("min_th".into(), aqmlab_core::scenario::Value::Int(1)),
                        ("max_th".into(), aqmlab_core::scenario::Value::Int(2)),
                        ("w_q".into(), aqmlab_core::scenario::Value::Float(1.0)),
                        ("ecn".into(), aqmlab_core::scenario::Value::Bool(true)),
                    ]),
                    "aqm",
                )
                .unwrap(),
                1500,
            )
            .unwrap(),
        );
        for _ in 0..10 {
            d2.arrive(SimTime::ZERO, slot(1500, 0));
        }
        assert!(d2.stats.drops() > 0);
        assert_eq!(d2.stats.marks(), 0);
    }

    /// A scheme by its kind alone (its defaults).
    fn by_kind(kind: &str) -> AqmSpec {
        use aqmlab_core::scenario::{decode::Table, Value};
        let doc = Value::Table(vec![("kind".into(), Value::Str(kind.into()))]);
        AqmSpec::decode(Table::new(doc, "aqm").unwrap(), 1500).unwrap()
    }

    fn from_port(len: usize, ecn: u8, sport: u16) -> Slot {
        Slot::read(ip::build_tcp(len, ecn, sport, 1, 0x10), SimTime::ZERO).unwrap()
    }

    /// The source port of a packet on the wire (IPv4 header of 20 bytes).
    fn sport(s: &Slot) -> u16 {
        u16::from_be_bytes([s.buf[20], s.buf[21]])
    }

    /// Every packet that reaches the far end, in order: (time, source port).
    fn drain(d: &mut Dir) -> Vec<(SimTime, u16)> {
        let mut got = Vec::new();
        let mut now = SimTime::ZERO;
        while d.held() > 0 {
            now = d.next_event().max(now);
            d.advance(now);
            while let Some((t, s)) = d.due(now) {
                got.push((t, sport(&s)));
            }
        }
        got
    }

    #[test]
    fn fq_codel_serves_a_new_flow_before_a_backlogged_one() {
        // 12 Mb/s (1 ms a packet), no delay: ten packets of port 1000, then
        // one of port 2000, all at 0. Through a FIFO the last leaves at
        // 11 ms. FQ-CoDel puts its flow on the new list (RFC 8290 section
        // 4.2), behind port 1000's, which keeps the head while its deficit is
        // positive: FQ-CoDel's and FQ-PIE's quantum (1500 bytes) covers one
        // packet, so port 2000's leaves second, at 2 ms; FQ-COBALT's (1514)
        // one packet and 14 bytes, so port 1000 sends two and port 2000's
        // leaves third, at 3 ms. COBALT is one queue, a FIFO.
        for (kind, want) in [
            ("droptail", 11),
            ("fq-codel", 2),
            ("fq-pie", 2),
            ("fq-cobalt", 3),
            ("cobalt", 11),
        ] {
            let mut d = dir(12_000_000, 0, 100, by_kind(kind));
            for _ in 0..10 {
                assert!(d.arrive(SimTime::ZERO, from_port(1500, 0, 1000)));
            }
            assert!(d.arrive(SimTime::ZERO, from_port(1500, 0, 2000)));
            let got = drain(&mut d);
            assert_eq!(got.len(), 11, "{kind}");
            let t = got.iter().find(|(_, p)| *p == 2000).unwrap().0;
            assert_eq!(t, SimTime::from_millis(want), "{kind}");
            // Back to back at the link rate, whatever the order.
            assert_eq!(got.last().unwrap().0, SimTime::from_millis(11), "{kind}");
            assert_eq!(d.stats.departures, 11);
        }
    }

    #[test]
    fn fq_codel_overflow_drops_from_the_longest_flow_queue() {
        // A buffer of 4: port 1000 sends 8, then port 2000 one. The first
        // leaves at once; the sixth finds 5 queued and FQ-CoDel drops a
        // batch from the head of port 1000's queue until half its 7500
        // bytes are gone (3 packets); the seventh and eighth are queued
        // (4); port 2000's arrival drops half of port 1000's 6000 bytes
        // (2 packets), never its own single packet.
        let mut d = dir(1_000_000, 0, 4, by_kind("fq-codel"));
        for _ in 0..8 {
            d.arrive(SimTime::ZERO, from_port(1500, 0, 1000));
        }
        assert!(d.arrive(SimTime::ZERO, from_port(1500, 0, 2000)));
        assert_eq!(d.qlen().pkts, 3);
        assert_eq!(d.stats.drops_overflow, 5);
        let got = drain(&mut d);
        assert_eq!(got.len(), 4);
        assert_eq!(got.iter().filter(|(_, p)| *p == 2000).count(), 1);
        assert_eq!(d.stats.arrivals, d.stats.departures + d.stats.drops());
        // Every id was given back: the next arrivals reuse them.
        assert_eq!(d.free_ids.len(), d.by_id.len());
    }

    #[test]
    fn dualpi2_sends_ect1_through_the_l_queue() {
        // Ten classic packets (ECT(0)) of port 1000, then one ECT(1) of
        // port 2000: the L queue is served before the C queue (RFC 9332
        // section 4.2.2's weighted scheduler, C's weight 10 %), so it leaves
        // second, at 2 ms, where a FIFO would send it last.
        let mut d = dir(12_000_000, 0, 100, by_kind("dualpi2"));
        for _ in 0..10 {
            assert!(d.arrive(SimTime::ZERO, from_port(1500, 0b10, 1000)));
        }
        assert!(d.arrive(SimTime::ZERO, from_port(1500, 0b01, 2000)));
        let got = drain(&mut d);
        assert_eq!(got.len(), 11);
        assert_eq!(got[1], (SimTime::from_millis(2), 2000));
        assert_eq!(d.stats.departures, 11);
    }
}
