//! BLUE: a marking probability learned from buffer overflow and link idle
//! events instead of from the queue length.
//!
//! References:
//! - `003_b277268f444f7691.txt` (Wu Chen's thesis) section 3.6 and fig. 3.3:
//!   upon a packet loss (or `q > threshold`) event,
//!   `if now - last_update > freeze_time { p = min(1, p + delta_1); last_update = now }`;
//!   upon a link idle event,
//!   `if now - last_update > freeze_time { p = max(0, p - delta_2); last_update = now }`.
//!   Section 3.6.2 adds: delta_1 much greater than delta_2; freeze_time set
//!   from the connections' effective round-trip times; delta_1, delta_2 and
//!   freeze_time chosen so that p can travel from 0 to 1 "in an order of
//!   minutes".
//! - Feng, Kandlur, Saha, Shin, "BLUE: A New Class of Active Queue
//!   Management Algorithms" (U. Michigan CSE-TR-387-99, 1999; IEEE/ACM ToN
//!   10(4), 2002), the thesis's reference \[19\]: every arriving packet is
//!   marked (ECN) or dropped with probability p.
//!
//! The thesis quotes no numerical values for delta_1, delta_2 and
//! freeze_time. The defaults are one of the configurations the BLUE paper
//! simulates (freeze_time 100 ms, delta_1 0.0025, delta_2 0.00025; the
//! paper's other configurations use 10 ms and/or 0.02 / 0.002; the paper
//! is not among the stored papers, so these values are not checked against
//! its text). Of those, this is the one that fits the thesis's rules
//! above: delta_1 = 10 delta_2, a freeze_time of the order of the
//! round-trip time (100 ms in the canonical dumbbell), and p takes at least
//! 400 x 100 ms = 40 s to rise from 0 to 1 and 4000 x 100 ms = 400 s to
//! fall back.
//!
//! Readings chosen where fig. 3.3 leaves the model open:
//! - Loss event: the AQM sees the queue before the arrival (`q`) and the
//!   link's buffer; an arrival that finds the buffer full (`q.pkts + 1 >`
//!   the packet limit, or `q.bytes + size >` the byte limit) is a loss
//!   event. With `threshold` set, an arrival that finds more than
//!   `threshold` packets waiting is one too (overflow still counts). The
//!   overflowing packet itself is left to the link, which drops it
//!   (`drops_overflow`); BLUE draws no random number for it.
//! - Link idle event: when a packet leaves the queue empty, the link goes
//!   idle at the end of its transmission (`tx_end`), unless a packet
//!   arrives first. The next arrival that finds an empty queue strictly
//!   after `tx_end` reports the idle event, dated `tx_end` (when it
//!   happened) for the freeze_time test. One idle period is one event.
//! - `freeze_time` gates both kinds of update through one `last_update`
//!   (fig. 3.3), strictly: `now - last_update > freeze_time`. `last_update`
//!   starts at time 0, so nothing changes during the first freeze_time.
//!   The thesis suggests randomising freeze_time; it is fixed here.
//! - Signals carry [`Cause::Early`]; with `ecn` on, ECN-capable packets are
//!   marked, the others dropped.
//! - Mid-run changes ([`Aqm::set_param`]: `delta1`, `delta2`,
//!   `freeze_time`, `threshold`) apply from the next event; p and
//!   `last_update` carry over.

use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecResult, Table};
use crate::scenario::Buffer;
use crate::units::SimTime;
use serde::Serialize;

/// BLUE's parameters (fig. 3.3 of `003_b277268f444f7691.txt`); defaults
/// from the BLUE paper (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlueParams {
    /// delta_1: increment of p on a loss event, in [0, 1]. Default 0.0025.
    pub delta1: f64,
    /// delta_2: decrement of p on a link idle event, in [0, 1]. Default 0.00025.
    pub delta2: f64,
    /// Minimum time between two updates of p. Default 100 ms.
    pub freeze_time: SimTime,
    /// Queue length, packets, above which an arrival is a loss event as
    /// well as on buffer overflow. Default: none (overflow only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Mark ECN-capable packets instead of dropping them. Default false.
    pub ecn: bool,
}

impl Default for BlueParams {
    fn default() -> Self {
        BlueParams {
            delta1: 0.0025,
            delta2: 0.00025,
            freeze_time: SimTime::from_millis(100),
            threshold: None,
            ecn: false,
        }
    }
}

impl BlueParams {
    /// Read the keys of an `[aqm]` table with `kind = "blue"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<BlueParams> {
        let d = BlueParams::default();
        let p = BlueParams {
            delta1: t.f64("delta1", d.delta1)?,
            delta2: t.f64("delta2", d.delta2)?,
            freeze_time: t.time("freeze_time", d.freeze_time)?,
            threshold: t.opt_f64("threshold")?,
            ecn: t.bool("ecn", d.ecn)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        check_range(&join(path, "delta1"), self.delta1, 0.0, false, 1.0)?;
        check_range(&join(path, "delta2"), self.delta2, 0.0, false, 1.0)?;
        // freeze_time may be 0 (every event updates p); a SimTime is never negative.
        if let Some(th) = self.threshold {
            check_range(&join(path, "threshold"), th, 0.0, false, 1e9)?;
        }
        Ok(())
    }
}

/// The running scheme: parameters, the link's buffer, and BLUE's state.
#[derive(Clone, Debug)]
pub struct Blue {
    p: BlueParams,
    /// The link's buffer limit (an arrival that does not fit is a loss event).
    buffer: Buffer,
    /// Marking/dropping probability p, in [0, 1].
    prob: f64,
    /// Time of the last update of `prob` (fig. 3.3's `last_update`).
    last_update: SimTime,
    /// When the link goes idle, if the last departure left the queue empty
    /// (the end of that packet's transmission).
    idle_since: Option<SimTime>,
    /// `prob` changed since the last [`Aqm::take_changed`].
    changed: bool,
}

impl Blue {
    pub fn new(p: BlueParams, link: LinkInfo) -> Blue {
        Blue {
            p,
            buffer: link.buffer,
            prob: 0.0,
            last_update: SimTime::ZERO,
            idle_since: None,
            changed: false,
        }
    }

    /// The current probability p.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// Whether an update at `t` passes the freeze_time gate of fig. 3.3.
    fn unfrozen(&self, t: SimTime) -> bool {
        t.saturating_sub(self.last_update) > self.p.freeze_time
    }

    /// Fig. 3.3, upon a packet loss (or q > threshold) event at `t`.
    fn on_loss_event(&mut self, t: SimTime) {
        if self.unfrozen(t) {
            let new = (self.prob + self.p.delta1).min(1.0);
            self.changed |= new != self.prob;
            self.prob = new;
            self.last_update = t;
        }
    }

    /// Fig. 3.3, upon a link idle event at `t`.
    fn on_idle_event(&mut self, t: SimTime) {
        if self.unfrozen(t) {
            let new = (self.prob - self.p.delta2).max(0.0);
            self.changed |= new != self.prob;
            self.prob = new;
            self.last_update = t;
        }
    }

    /// Whether a packet of `size` bytes arriving to `q` overflows the buffer.
    fn overflows(&self, q: QueueLen, size: u32) -> bool {
        self.buffer.overflows(q.pkts, q.bytes, size)
    }
}

impl Aqm for Blue {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        if let Some(since) = self.idle_since.take() {
            if q.pkts == 0 && now > since {
                self.on_idle_event(since);
            }
        }
        let full = self.overflows(q, pkt.size);
        let above = self.p.threshold.is_some_and(|th| q.pkts as f64 > th);
        if full || above {
            self.on_loss_event(now);
        }
        if full {
            // The link drops it (an overflow drop).
            return Verdict::Pass;
        }
        if !rng.bernoulli(self.prob) {
            Verdict::Pass
        } else if self.p.ecn && pkt.ect {
            Verdict::Mark(Cause::Early)
        } else {
            Verdict::Drop(Cause::Early)
        }
    }

    fn on_dequeue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        q: QueueLen,
        tx_end: SimTime,
    ) -> Verdict {
        // With nothing waiting the link goes idle at tx_end, unless a packet
        // arrives first (that arrival then finds the transmitter busy).
        self.idle_since = (q.pkts == 0).then_some(tx_end);
        Verdict::Pass
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p", self.prob);
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn set_link(&mut self, _now: SimTime, link: &LinkInfo) {
        self.buffer = link.buffer;
    }

    /// `delta1`, `delta2`, `freeze_time` (seconds) and `threshold`
    /// (packets; setting it turns the threshold event on) may change during
    /// a run; p and `last_update` carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["delta1", "delta2", "freeze_time", "threshold"];
        let mut p = self.p.clone();
        match key {
            "delta1" => p.delta1 = value,
            "delta2" => p.delta2 = value,
            "freeze_time" => p.freeze_time = change::secs(value)?,
            "threshold" => p.threshold = Some(value),
            _ => return Err(change::unknown_key("BLUE", key, KEYS)),
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

    fn link(buffer: u32) -> LinkInfo {
        LinkInfo {
            buffer: Buffer::Packets(buffer),
            ..LinkInfo::new(BitRate(10_000_000), 500)
        }
    }
    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 500,
        }
    }
    fn pkt(ect: bool) -> PacketInfo {
        PacketInfo {
            size: 500,
            ect,
            ..PacketInfo::default()
        }
    }
    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }
    fn params() -> BlueParams {
        BlueParams {
            delta1: 0.02,
            delta2: 0.002,
            freeze_time: ms(10),
            ..BlueParams::default()
        }
    }

    #[test]
    fn set_param_applies_from_the_next_event() {
        let mut b = Blue::new(params(), link(10));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        // 11 ms > freeze_time 10 ms: p = 0.02, last_update = 11 ms.
        b.on_enqueue(ms(11), &pkt(false), q(10), &mut rng);
        b.set_param("delta1", 0.05).unwrap();
        b.set_param("freeze_time", 0.030).unwrap(); // "30ms" arrives as 0.03 s
        b.set_param("threshold", 5.0).unwrap();
        assert_eq!(b.p.freeze_time, ms(30));
        assert_eq!(b.p.threshold, Some(5.0));
        assert!((b.prob - 0.02).abs() < 1e-15, "p carries over");
        // 35 ms - 11 ms = 24 ms is not > 30 ms: frozen (it would not have been at 10 ms).
        b.on_enqueue(ms(35), &pkt(false), q(6), &mut rng);
        assert!((b.prob - 0.02).abs() < 1e-15);
        // 42 ms - 11 ms > 30 ms, 6 packets > threshold 5: p = 0.02 + 0.05 = 0.07.
        b.on_enqueue(ms(42), &pkt(false), q(6), &mut rng);
        assert!((b.prob - 0.07).abs() < 1e-15, "{}", b.prob);
        b.set_param("delta2", 0.01).unwrap();
        assert_eq!(b.p.delta2, 0.01);
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut b = Blue::new(params(), link(10));
        let e = b.set_param("delta1", 1.5).unwrap_err();
        assert!(e.contains("1.5") && e.contains("[0, 1]"), "{e}");
        let e = b.set_param("threshold", -2.0).unwrap_err();
        assert!(e.contains("-2") && e.contains("[0, 1000000000]"), "{e}");
        let e = b.set_param("freeze_time", -0.1).unwrap_err();
        assert!(e.contains("-0.1") && e.contains("seconds"), "{e}");
        assert_eq!(b.p, params());
        let e = b.set_param("ecn", 1.0).unwrap_err();
        assert!(
            e.contains("`ecn`") && e.contains("delta1, delta2, freeze_time, threshold"),
            "{e}"
        );
    }

    #[test]
    fn overflow_steps_up_by_delta1_gated_by_freeze_time() {
        let mut b = Blue::new(params(), link(10));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        // Arrival finding 10 of 10 packets: a loss event. 5 ms - 0 = 5 ms is
        // not > freeze_time = 10 ms: frozen, p stays 0.
        assert_eq!(
            b.on_enqueue(ms(5), &pkt(false), q(10), &mut rng),
            Verdict::Pass
        );
        assert_eq!(b.prob, 0.0);
        assert!(!b.take_changed());
        // 11 ms - 0 > 10 ms: p = 0 + 0.02 = 0.02, last_update = 11 ms.
        b.on_enqueue(ms(11), &pkt(false), q(10), &mut rng);
        assert!((b.prob - 0.02).abs() < 1e-15);
        assert_eq!(b.last_update, ms(11));
        assert!(b.take_changed());
        assert!(!b.take_changed(), "reported once");
        // 21 ms - 11 ms = 10 ms is not > 10 ms: frozen.
        b.on_enqueue(ms(21), &pkt(false), q(10), &mut rng);
        assert!((b.prob - 0.02).abs() < 1e-15);
        // 22 ms - 11 ms > 10 ms: p = 0.04.
        b.on_enqueue(ms(22), &pkt(false), q(10), &mut rng);
        assert!((b.prob - 0.04).abs() < 1e-15);
        // An arrival finding 9 of 10 fits: no event, even unfrozen.
        b.on_enqueue(ms(40), &pkt(false), q(9), &mut rng);
        assert!((b.prob - 0.04).abs() < 1e-15);
    }

    #[test]
    fn probability_is_capped_at_one_and_floored_at_zero() {
        let mut b = Blue::new(params(), link(10));
        b.prob = 0.99;
        b.on_loss_event(ms(100));
        assert_eq!(b.prob, 1.0); // min(1, 0.99 + 0.02)
        b.prob = 0.001;
        b.on_idle_event(ms(200));
        assert_eq!(b.prob, 0.0); // max(0, 0.001 - 0.002)
    }

    #[test]
    fn byte_buffer_overflow_uses_the_packet_size() {
        let mut l = link(10);
        l.buffer = Buffer::Bytes(5000);
        let mut b = Blue::new(params(), l);
        // 4500 + 500 = 5000 fits; 4600 + 500 = 5100 does not.
        let q4500 = QueueLen {
            pkts: 9,
            bytes: 4500,
        };
        let q4600 = QueueLen {
            pkts: 9,
            bytes: 4600,
        };
        assert!(!b.overflows(q4500, 500));
        assert!(b.overflows(q4600, 500));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        b.on_enqueue(ms(20), &pkt(false), q4600, &mut rng);
        assert!((b.prob - 0.02).abs() < 1e-15);
    }

    #[test]
    fn threshold_is_a_loss_event() {
        let mut p = params();
        p.threshold = Some(5.0);
        let mut b = Blue::new(p, link(100));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        // 5 waiting is not > 5.
        b.on_enqueue(ms(20), &pkt(false), q(5), &mut rng);
        assert_eq!(b.prob, 0.0);
        // 6 > 5: p = 0.02.
        b.on_enqueue(ms(20), &pkt(false), q(6), &mut rng);
        assert!((b.prob - 0.02).abs() < 1e-15);
    }

    #[test]
    fn idle_period_steps_down_by_delta2() {
        let mut b = Blue::new(params(), link(10));
        let mut rng = Rng::new(1, Stream::Aqm(0));
        b.prob = 0.1;
        b.last_update = ms(100);
        // A departure at 105 ms leaves the queue empty; its transmission
        // ends at 105.4 ms (500 B at 10 Mb/s).
        let end = SimTime::from_micros(105_400);
        b.on_dequeue(ms(105), &pkt(false), q(0), end);
        // An arrival at 105.2 ms finds an empty queue but a busy link: no event.
        b.on_enqueue(SimTime::from_micros(105_200), &pkt(false), q(0), &mut rng);
        assert_eq!(b.prob, 0.1);
        // It is sent at 105.4 ms and leaves the queue empty until 105.8 ms.
        let end = SimTime::from_micros(105_800);
        b.on_dequeue(SimTime::from_micros(105_400), &pkt(false), q(0), end);
        // Arrival at 130 ms: idle event dated 105.8 ms; 105.8 - 100 = 5.8 ms
        // is not > 10 ms: frozen.
        b.on_enqueue(ms(130), &pkt(false), q(0), &mut rng);
        assert_eq!(b.prob, 0.1);
        // That packet is sent at once and the link is idle from 130.4 ms;
        // an arrival at 140 ms: 130.4 - 100 = 30.4 ms > 10 ms, so
        // p = 0.1 - 0.002 = 0.098, last_update = 130.4 ms (the idle time).
        let end = SimTime::from_micros(130_400);
        b.on_dequeue(ms(130), &pkt(false), q(0), end);
        b.on_enqueue(ms(140), &pkt(false), q(0), &mut rng);
        assert!((b.prob - 0.098).abs() < 1e-15);
        assert_eq!(b.last_update, end);
        assert!(b.take_changed());
        // One idle period is one event: the next arrival to an empty queue
        // without a departure in between changes nothing.
        b.on_enqueue(ms(200), &pkt(false), q(0), &mut rng);
        assert!((b.prob - 0.098).abs() < 1e-15);
        // A departure that leaves packets waiting is no idle period.
        b.on_dequeue(ms(200), &pkt(false), q(3), ms(201));
        b.on_enqueue(ms(300), &pkt(false), q(0), &mut rng);
        assert!((b.prob - 0.098).abs() < 1e-15);
    }

    #[test]
    fn signals_with_probability_p_and_ecn_switch() {
        let mut b = Blue::new(params(), link(1000));
        let mut rng = Rng::new(7, Stream::Aqm(0));
        b.prob = 0.1;
        let n = 100_000;
        let mut hits = 0;
        for _ in 0..n {
            match b.on_enqueue(ms(1), &pkt(true), q(3), &mut rng) {
                Verdict::Pass => {}
                v => {
                    // ecn off: an ECN-capable packet is dropped.
                    assert_eq!(v, Verdict::Drop(Cause::Early));
                    hits += 1;
                }
            }
        }
        // Binomial(1e5, 0.1): sd ~ 95, so +-600 is > 6 sd.
        assert!((hits as i64 - 10_000).abs() < 600, "{hits}");
        b.p.ecn = true;
        b.prob = 1.0;
        assert_eq!(
            b.on_enqueue(ms(1), &pkt(true), q(3), &mut rng),
            Verdict::Mark(Cause::Early)
        );
        assert_eq!(
            b.on_enqueue(ms(1), &pkt(false), q(3), &mut rng),
            Verdict::Drop(Cause::Early)
        );
        // An overflowing arrival is left to the link even at p = 1.
        assert_eq!(
            b.on_enqueue(ms(1), &pkt(true), q(1000), &mut rng),
            Verdict::Pass
        );
    }

    #[test]
    fn validation_names_fields() {
        let d = BlueParams::default();
        let bad = |p: BlueParams| p.validate("aqm").unwrap_err().path;
        let p = BlueParams {
            delta1: 1.5,
            ..d.clone()
        };
        assert_eq!(bad(p), "aqm.delta1");
        let p = BlueParams {
            delta2: -0.1,
            ..d.clone()
        };
        assert_eq!(bad(p), "aqm.delta2");
        let p = BlueParams {
            threshold: Some(-1.0),
            ..d
        };
        assert_eq!(bad(p), "aqm.threshold");
        assert!(BlueParams::default().validate("aqm").is_ok());
    }
}
