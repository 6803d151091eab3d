//! LEDBAT: Low Extra Delay Background Transport (RFC 6817), the
//! less-than-best-effort sender of RFC 7928 section 5.4. It keeps the
//! queueing delay it measures near a target and yields to standard TCP:
//!
//! ```text
//! queuing_delay = FILTER(current_delays) - MIN(base_delays)    RFC 6817 2.4.2
//! off_target    = (TARGET - queuing_delay) / TARGET
//! cwnd         += GAIN x off_target x segments_newly_acked / cwnd
//! cwnd          = min(cwnd, flightsize + ALLOWED_INCREASE)
//! cwnd          = max(cwnd, MIN_CWND)
//! ```
//!
//! What aqmlab models, and how it reads the RFC:
//!
//! - **Delay samples**: every RTT sample of the flow (the echo of a
//!   timestamp with `tcp.timestamps`, else the timed segment), a round
//!   trip, where the RFC measures one way (the sender's timestamp against
//!   the receiver's clock). The base delay and the filtered current delay
//!   are both round trips, so their difference is the queueing on the
//!   path both ways: the forward queue's where the ACKs' path does not
//!   queue, as in RFC 7928's dumbbell.
//! - **Base delay** (section 2.4.2's `update_base_delay`): the minima of
//!   the last `BASE_HISTORY` = 10 minutes, one per minute of the clock
//!   (section 2.5: BASE_HISTORY SHOULD be 10).
//! - **FILTER** (section 2.4.2; 2.5 asks at least 4 samples a round trip,
//!   none older than a round trip): the least of the last 4 samples that
//!   are not older than the SRTT (the newest always counts).
//! - **Growth** on every new ACK outside recovery (the formula above, in
//!   segments: bytes_newly_acked x MSS / cwnd), also downwards when the
//!   queue is above the target; flightsize is the segments outstanding
//!   before the ACK; ALLOWED_INCREASE = 1 and MIN_CWND = 2 (section 2.5).
//!   Before the first sample the queue counts as empty. No slow start: the
//!   RFC's sender has none, its window starts at INIT_CWND (2 SHOULD be
//!   set with `tcp.initial_cwnd`; aqmlab leaves the scenario's).
//! - **Loss and ECN** (section 2.4.2 `on data loss`: at most once per RTT
//!   cwnd = min(cwnd, max(cwnd / 2, MIN_CWND))): Reno's cut with that
//!   ssthresh, once per window (fast recovery, RFC 3168's ECN-Echo);
//!   recovery is NewReno's or SACK's. A retransmission timeout: one
//!   segment (section 2.4.2, "cwnd = 1 * MSS").
//! - **TARGET and GAIN**: `tcp.ledbat = "rfc6817"` (the default): TARGET
//!   = 100 ms, the RFC's largest (section 2.5: MUST be 100 ms or less),
//!   GAIN = 1 (MUST be 1 or less); `"rfc7928"`: TARGET = 5 ms and GAIN =
//!   10, the values RFC 7928 section 5.4 recommends for its scenario.

use super::{CongestionControl, State};
use crate::transport::tcp::TcpFlow;
use crate::units::SimTime;

/// Minutes of base-delay history (RFC 6817 section 2.5).
pub const BASE_HISTORY: usize = 10;
/// Delay samples FILTER keeps (section 2.5: at least 4 a round trip).
pub const CURRENT_FILTER: usize = 4;
/// The least window and the growth beyond the flight, segments.
pub const MIN_CWND: f64 = 2.0;
pub const ALLOWED_INCREASE: f64 = 1.0;
/// One minute, the base delay's period.
const MINUTE: u64 = 60_000_000_000;

/// One LEDBAT sender's delay state.
#[derive(Clone, Debug, PartialEq)]
pub struct Ledbat {
    /// TARGET, ns, and GAIN.
    pub target_ns: u64,
    pub gain: f64,
    /// The minima of the last minutes (oldest first), and the minute of
    /// the newest.
    base: [u64; BASE_HISTORY],
    base_len: usize,
    minute: u64,
    /// The last delay samples (when taken, ns), a ring.
    current: [(SimTime, u64); CURRENT_FILTER],
    current_len: usize,
    next: usize,
}

impl Ledbat {
    /// A sender with `target` and `gain`.
    pub fn new(target: SimTime, gain: f64) -> Ledbat {
        Ledbat {
            target_ns: target.0,
            gain,
            base: [u64::MAX; BASE_HISTORY],
            base_len: 0,
            minute: 0,
            current: [(SimTime::ZERO, 0); CURRENT_FILTER],
            current_len: 0,
            next: 0,
        }
    }

    /// RFC 6817's values: TARGET 100 ms, GAIN 1.
    pub fn rfc6817() -> Ledbat {
        Ledbat::new(SimTime::from_millis(100), 1.0)
    }

    /// RFC 7928 section 5.4's values: TARGET 5 ms, GAIN 10.
    pub fn rfc7928() -> Ledbat {
        Ledbat::new(SimTime::from_millis(5), 10.0)
    }

    /// A delay sample `delay_ns` taken at `now` (section 2.4.2's
    /// `update_base_delay` and `update_current_delay`).
    pub fn on_delay(&mut self, now: SimTime, delay_ns: u64) {
        let minute = now.0 / MINUTE;
        if self.base_len == 0 || minute != self.minute {
            // A new minute: its minimum starts with this sample, the
            // oldest leaves once BASE_HISTORY are kept.
            if self.base_len == BASE_HISTORY {
                self.base.copy_within(1.., 0);
                self.base_len -= 1;
            }
            self.base[self.base_len] = delay_ns;
            self.base_len += 1;
            self.minute = minute;
        } else {
            let last = &mut self.base[self.base_len - 1];
            *last = (*last).min(delay_ns);
        }
        self.current[self.next] = (now, delay_ns);
        self.next = (self.next + 1) % CURRENT_FILTER;
        self.current_len = (self.current_len + 1).min(CURRENT_FILTER);
    }

    /// The queueing delay at `now`, ns: FILTER (the least of the samples
    /// kept that are at most `srtt` old, the newest always) minus the base
    /// delay; `None` before the first sample.
    pub fn queuing_delay(&self, now: SimTime, srtt: SimTime) -> Option<u64> {
        if self.current_len == 0 {
            return None;
        }
        let newest = (self.next + CURRENT_FILTER - 1) % CURRENT_FILTER;
        let mut filtered = self.current[newest].1;
        for &(at, d) in &self.current[..self.current_len] {
            if now.saturating_sub(at) <= srtt {
                filtered = filtered.min(d);
            }
        }
        let base = self.base[..self.base_len].iter().copied().min()?;
        Some(filtered.saturating_sub(base))
    }

    /// The window after an ACK of `acked` segments with `flight` segments
    /// outstanding before it, at queueing delay `queue_ns` (section
    /// 2.4.2's `on acknowledgment`).
    pub fn grow(&self, cwnd: f64, acked: u64, flight: u64, queue_ns: Option<u64>) -> f64 {
        let off_target = match queue_ns {
            Some(q) => (self.target_ns as f64 - q as f64) / self.target_ns as f64,
            None => 1.0,
        };
        let w = cwnd + self.gain * off_target * acked as f64 / cwnd;
        w.min(flight as f64 + ALLOWED_INCREASE).max(MIN_CWND)
    }
}

/// LEDBAT (`tcp.variant = "ledbat"`): its delay-based growth; Reno's
/// answers to loss and ECN with its own floor.
impl CongestionControl for Ledbat {
    /// Every RTT sample is a delay sample (module head).
    #[inline]
    fn on_rtt(f: &mut TcpFlow, now: SimTime, rtt: SimTime) {
        f.ledbat_rtt(now, rtt);
    }

    #[inline]
    fn on_new_ack(f: &mut TcpFlow, now: SimTime, acked: u64) {
        let (cwnd, flight) = (f.cwnd, f.outstanding() + acked);
        let srtt = SimTime::from_nanos(f.srtt_ns.max(0.0) as u64);
        if let Some(State::Ledbat(l)) = f.cc.as_deref() {
            let q = l.queuing_delay(now, srtt);
            f.cwnd = l.grow(cwnd, acked, flight, q);
        }
    }

    /// cwnd = min(cwnd, max(cwnd / 2, MIN_CWND)) (section 2.4.2).
    #[inline]
    fn event_ssthresh(f: &mut TcpFlow, _reno: f64) -> f64 {
        let w = f.uninflated();
        w.min((w / 2.0).max(MIN_CWND))
    }
}

impl TcpFlow {
    /// An RTT sample `r` at `now` for a LEDBAT flow's delay state.
    #[cold]
    pub(in crate::transport::tcp) fn ledbat_rtt(&mut self, now: SimTime, r: SimTime) {
        if let Some(State::Ledbat(l)) = self.cc.as_deref_mut() {
            l.on_delay(now, r.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// The base is the least sample of the last ten minutes, one minimum a
    /// minute; FILTER the least of the last four samples within an SRTT.
    #[test]
    fn base_and_current_delays_by_hand() {
        let mut l = Ledbat::rfc6817();
        assert_eq!(l.queuing_delay(ms(0), ms(100)), None);
        // Minute 0: 100 ms, then 120, 130, 150, 170 ms (within 20 ms).
        for (t, d) in [(0, 100), (5, 120), (10, 130), (15, 150), (20, 170)] {
            l.on_delay(ms(t), d * 1_000_000);
        }
        // The last four (120..170 ms) within an SRTT of 100 ms: 120 - 100.
        assert_eq!(l.queuing_delay(ms(20), ms(100)), Some(20_000_000));
        // With an SRTT of 8 ms only the newest (170) and the 150 at 15 ms.
        assert_eq!(l.queuing_delay(ms(20), ms(8)), Some(50_000_000));
        // Eleven minutes later, one sample a minute at 110 ms: the 100 ms
        // minute has left the ten kept, the base is 110 ms.
        for k in 1..=11u64 {
            l.on_delay(SimTime::from_secs(60 * k), 110_000_000);
        }
        let now = SimTime::from_secs(660);
        assert_eq!(l.queuing_delay(now, ms(100)), Some(0));
        assert_eq!(l.base_len, BASE_HISTORY);
    }

    /// The growth for TARGET 100 ms, GAIN 1, cwnd 10, two segments
    /// acknowledged: no queue, +2/10; a queue of 50 ms, +1/10; at the
    /// target, none; at 300 ms, -4/10. The flight caps it (flight 9: at
    /// most 10), and the floor is 2.
    #[test]
    fn growth_by_hand() {
        let l = Ledbat::rfc6817();
        let g = |q: Option<u64>| l.grow(10.0, 2, 20, q);
        assert!((g(Some(0)) - 10.2).abs() < 1e-12);
        assert!((g(None) - 10.2).abs() < 1e-12);
        assert!((g(Some(50_000_000)) - 10.1).abs() < 1e-12);
        assert!((g(Some(100_000_000)) - 10.0).abs() < 1e-12);
        assert!((g(Some(300_000_000)) - 9.6).abs() < 1e-12);
        assert_eq!(l.grow(10.0, 2, 9, Some(0)), 10.0);
        assert_eq!(l.grow(2.0, 1, 20, Some(1_000_000_000)), MIN_CWND);
        // RFC 7928's values: TARGET 5 ms, GAIN 10: a 10 ms queue takes
        // 10 x (-1) x 2 / 10 = -2 segments.
        let r = Ledbat::rfc7928();
        assert!((r.grow(10.0, 2, 20, Some(10_000_000)) - 8.0).abs() < 1e-12);
    }
}
