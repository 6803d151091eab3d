//! One direction of the emulated bottleneck: a FIFO under one of the core's
//! AQMs, a transmitter at the link rate and a propagation delay line.
//!
//! Time is the router's clock in nanoseconds since the run's start
//! ([`SimTime`]). The link keeps its own schedule: a packet starts its
//! transmission at `max(arrival, end of the previous transmission)`, so a
//! late wake-up of the router delays the write of packets but never lowers
//! the rate (their release times are computed, not observed). The AQM is
//! called at those computed instants, in time order with its ticks.

use crate::ip;
use aqmlab_core::aqm::{Aqm, AqmImpl, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use aqmlab_core::rng::Rng;
use aqmlab_core::scenario::Buffer;
use aqmlab_core::units::{BitRate, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

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
            next_tick,
            sample: sample.map(|i| (i, i)),
            series: Series::default(),
            stats: Stats::default(),
            stats_at_start: None,
            measure_start,
            free: Vec::new(),
        }
    }

    pub fn qlen(&self) -> QueueLen {
        QueueLen {
            pkts: self.queue.len() as u32,
            bytes: self.qbytes,
        }
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
        let mut t = SimTime::MAX;
        if let Some(h) = self.queue.front() {
            t = t.min(self.busy_until.max(h.info.enq_time));
        }
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
            let tx = self
                .queue
                .front()
                .map(|h| self.busy_until.max(h.info.enq_time))
                .unwrap_or(SimTime::MAX);
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
        let s = &mut self.series;
        s.time_s.push(t.as_secs_f64());
        s.queue_pkts.push(self.queue.len() as u32);
        s.queue_bytes.push(self.qbytes);
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
                    self.count_mark(c);
                }
            }
            Verdict::Drop(c) => {
                self.count_drop(c, slot.info.ect);
                self.free.push(slot.buf);
                return;
            }
        }
        self.busy_until = tx_end;
        self.stats.departures += 1;
        self.stats.departure_bytes += size as u64;
        self.stats.sojourn_ns += t.0 - slot.info.enq_time.0;
        self.wire.push_back((tx_end + self.delay, slot));
    }

    fn count_drop(&mut self, c: Cause, ect: bool) {
        match c {
            Cause::Early => self.stats.drops_early += 1,
            Cause::Forced => self.stats.drops_forced += 1,
        }
        if ect {
            self.stats.drops_ect += 1;
        }
    }

    fn count_mark(&mut self, c: Cause) {
        match c {
            Cause::Early => self.stats.marks_early += 1,
            Cause::Forced => self.stats.marks_forced += 1,
        }
    }

    /// A packet arrives at `now` (after [`Dir::advance`] to `now`): the AQM
    /// decides, then the buffer limit. Returns whether it was queued.
    pub fn arrive(&mut self, now: SimTime, mut slot: Slot) -> bool {
        slot.info.enq_time = now;
        self.stats.arrivals += 1;
        self.stats.arrival_bytes += slot.info.size as u64;
        let verdict = self
            .aqm
            .on_enqueue(now, &slot.info, self.qlen(), &mut self.rng);
        self.note_changes(now);
        let mark = match verdict {
            Verdict::Pass => None,
            Verdict::Mark(c) => Some(c),
            Verdict::Drop(c) => {
                self.count_drop(c, slot.info.ect);
                self.free.push(slot.buf);
                return false;
            }
        };
        if !self.fits(slot.info.size) {
            self.stats.drops_overflow += 1;
            self.free.push(slot.buf);
            return false;
        }
        if let Some(c) = mark {
            if ip::set_ce(&mut slot.buf) {
                self.count_mark(c);
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

    /// A scheduled change of the link's rate or delay.
    pub fn set_link(
        &mut self,
        now: SimTime,
        rate: Option<BitRate>,
        delay: Option<SimTime>,
        info: &LinkInfo,
    ) {
        if let Some(r) = rate {
            self.rate = r;
        }
        if let Some(d) = delay {
            self.delay = d;
        }
        self.aqm.set_link(now, info);
    }

    /// Packets waiting plus on the wire (for the end-of-run identity).
    pub fn held(&self) -> u64 {
        (self.queue.len() + self.wire.len()) as u64
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
}
