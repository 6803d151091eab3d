//! Linux's classic HyStart (Ha and Rhee, "Taming the elephants", Computer
//! Networks 2011; `tcp_cubic.c`'s `hystart_update` with `hystart_detect =
//! 3`), which CUBIC runs in slow start with `tcp.hystart` and `tcp.cubic =
//! "linux"` in place of RFC 9406's HyStart++ (`hystart.rs`). Slow start
//! ends (ssthresh = cwnd, at once: no conservative phase) on the first of
//! two signs, tested on every ACK with an RTT sample while the window is
//! at least 16 segments (`hystart_low_window`):
//!
//! ```text
//! ACK train:  ACKs of the round no more than 2 ms apart (`hystart_ack_delta_us`)
//!             since the round began span more than
//!             (delay_min + ack_delay) / 2        (the whole of it when pacing)
//!             ack_delay = min(1 ms, 4 x 65 536 bytes / pacing rate)
//! delay:      after 8 samples of the round (`HYSTART_MIN_SAMPLES`), the
//!             round's least sample > delay_min + clamp(delay_min / 8, 4 ms, 16 ms)
//! ```
//!
//! `delay_min` is CUBIC's minimum RTT (`cubic.rs`). A round ends when the
//! cumulative ACK passes the segment sent next when it began (`end_seq`);
//! the next ACK starts the next one (`bictcp_hystart_reset`). Unlike
//! HyStart++ it runs in every slow start: a timeout re-arms it (Linux's
//! `cubictcp_state` on entering Loss). The pacing rate in `ack_delay` is
//! Linux's slow-start rate, 2 cwnd x MSS / SRTT (`tcp_update_pacing_rate`,
//! set for every socket), and 65 536 bytes the veth devices' GSO limit.

use crate::units::SimTime;

/// `hystart_low_window`: no test below this window, segments.
pub const LOW_WINDOW: f64 = 16.0;
/// `hystart_ack_delta_us`: the largest gap within an ACK train.
pub const ACK_DELTA: SimTime = SimTime::from_millis(2);
/// `HYSTART_MIN_SAMPLES`: samples of a round before its minimum counts.
pub const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`: the bounds of the delay
/// threshold.
pub const DELAY_MIN: SimTime = SimTime::from_millis(4);
pub const DELAY_MAX: SimTime = SimTime::from_millis(16);
/// `hystart_ack_delay`'s cap, and the GSO size it divides by the rate
/// (bytes, a veth device's `gso_max_size`), four times.
const ACK_DELAY_CAP: SimTime = SimTime::from_millis(1);
const GSO_MAX_BYTES: f64 = 65_536.0;

/// One connection's classic HyStart state (`struct bictcp`'s HyStart
/// fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxHyStart {
    /// When the round began, and the last ACK of its train.
    round_start: SimTime,
    last_ack: SimTime,
    /// The round ends once the cumulative ACK is beyond this segment.
    end_seq: u64,
    /// The round's least RTT sample, and how many it has had.
    curr_rtt: SimTime,
    samples: u32,
}

impl Default for LinuxHyStart {
    fn default() -> Self {
        LinuxHyStart {
            round_start: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            end_seq: 0,
            curr_rtt: SimTime::MAX,
            samples: 0,
        }
    }
}

/// What an ACK in slow start brings to the test.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub now: SimTime,
    pub rtt: SimTime,
    /// The cumulative ACK and the next segment to send (segments).
    pub una: u64,
    pub nxt: u64,
    pub cwnd: f64,
    /// CUBIC's minimum RTT, this sample counted.
    pub delay_min: SimTime,
    /// Linux's slow-start pacing rate, bytes per second.
    pub rate_bps: f64,
    /// Whether the flow paces (Linux: `sk_pacing_status` not NONE).
    pub paced: bool,
}

impl LinuxHyStart {
    /// A new round from `now`, ending when `nxt` is acknowledged
    /// (`bictcp_hystart_reset`; also what a timeout does).
    pub fn reset(&mut self, now: SimTime, nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = nxt;
        self.curr_rtt = SimTime::MAX;
        self.samples = 0;
    }

    /// An ACK's sample in slow start: true when slow start should end.
    pub fn on_ack(&mut self, s: Sample) -> bool {
        if s.una > self.end_seq {
            self.reset(s.now, s.nxt);
        }
        if s.cwnd < LOW_WINDOW {
            return false;
        }
        if s.now.saturating_sub(self.last_ack) <= ACK_DELTA {
            self.last_ack = s.now;
            let mut threshold = s.delay_min + ack_delay(s.rate_bps);
            if !s.paced {
                threshold = SimTime(threshold.0 / 2);
            }
            if s.now.saturating_sub(self.round_start) > threshold {
                return true;
            }
        }
        self.curr_rtt = self.curr_rtt.min(s.rtt);
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
            return false;
        }
        let slack = SimTime(s.delay_min.0 / 8).clamp(DELAY_MIN, DELAY_MAX);
        self.curr_rtt > s.delay_min + slack
    }
}

/// `hystart_ack_delay`: min(1 ms, 4 x 65 536 bytes / rate).
fn ack_delay(rate_bps: f64) -> SimTime {
    if rate_bps <= 0.0 {
        return SimTime::ZERO;
    }
    SimTime::from_secs_f64(4.0 * GSO_MAX_BYTES / rate_bps).min(ACK_DELAY_CAP)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn us(x: u64) -> SimTime {
        SimTime::from_micros(x)
    }

    fn sample(now: SimTime, una: u64, nxt: u64, cwnd: f64) -> Sample {
        Sample {
            now,
            rtt: ms(100),
            una,
            nxt,
            cwnd,
            delay_min: ms(100),
            rate_bps: 1e6,
            paced: false,
        }
    }

    #[test]
    fn the_ack_delay_is_a_millisecond_but_at_high_rates() {
        // 4 x 65 536 / 1 MB/s = 262 ms, capped at 1 ms; at 1 GB/s 262 us.
        assert_eq!(ack_delay(1e6), ms(1));
        assert_eq!(ack_delay(1e9), SimTime::from_nanos(262_144));
    }

    #[test]
    fn an_ack_train_longer_than_half_the_minimum_rtt_ends_slow_start() {
        // delay_min 100 ms, unpaced: threshold (100 + 1) / 2 = 50.5 ms.
        // ACKs 1 ms apart from the round's start at 10 s: the one at
        // 50 ms is within, the one at 51 ms beyond.
        let mut h = LinuxHyStart::default();
        assert!(!h.on_ack(sample(ms(10_000), 1, 40, 20.0)));
        for i in 1..=50 {
            assert!(!h.on_ack(sample(ms(10_000 + i), 2, 40, 20.0)), "{i}");
        }
        assert!(h.on_ack(sample(ms(10_051), 2, 40, 20.0)));
        // Paced, the threshold is the whole 101 ms.
        let mut h = LinuxHyStart::default();
        let paced = |t| Sample {
            paced: true,
            ..sample(t, 2, 40, 20.0)
        };
        for i in 0..=101 {
            assert!(!h.on_ack(paced(ms(10_000 + i))), "{i}");
        }
        assert!(h.on_ack(paced(ms(10_102))));
    }

    #[test]
    fn a_gap_breaks_the_train_for_the_rest_of_the_round() {
        // A gap of 2.5 ms after 10 ms: later ACKs no longer extend it,
        // and the span never passes 50.5 ms in this round.
        let mut h = LinuxHyStart::default();
        h.on_ack(sample(ms(0), 1, 40, 20.0));
        for i in 1..=10 {
            h.on_ack(sample(ms(i), 2, 40, 20.0));
        }
        for i in 0..60 {
            let t = us(12_500) + ms(i);
            assert!(!h.on_ack(sample(t, 2, 40, 20.0)), "{i}");
        }
        // The round ends (the cumulative ACK passes segment 40): a new
        // train from here.
        assert!(!h.on_ack(sample(ms(200), 41, 80, 40.0)));
        assert_eq!(h.round_start, ms(200));
    }

    #[test]
    fn a_rise_of_the_rounds_minimum_ends_slow_start() {
        // delay_min 100 ms: the slack is clamp(12.5 ms, 4, 16) = 12.5 ms.
        // ACKs 3 ms apart (no train): 8 samples of 112.5 ms do not end
        // it, the 9th does not either (not above); 113 ms does.
        let mut h = LinuxHyStart::default();
        let at = |i: u64, rtt| Sample {
            rtt,
            ..sample(ms(3 * i), if i == 0 { 1 } else { 2 }, 40, 20.0)
        };
        for i in 0..9 {
            assert!(!h.on_ack(at(i, us(112_500))), "{i}");
        }
        let mut h2 = LinuxHyStart::default();
        for i in 0..8 {
            assert!(!h2.on_ack(at(i, us(113_000))), "{i}");
        }
        assert!(h2.on_ack(at(8, us(113_000))));
        // The round's minimum counts: one sample at 105 ms keeps it below.
        let mut h3 = LinuxHyStart::default();
        h3.on_ack(at(0, ms(105)));
        for i in 1..20 {
            assert!(!h3.on_ack(at(i, ms(130))), "{i}");
        }
    }

    #[test]
    fn below_sixteen_segments_nothing_is_tested() {
        let mut h = LinuxHyStart::default();
        for i in 0..200 {
            assert!(!h.on_ack(sample(ms(i), 2, 40, 15.0)), "{i}");
        }
    }
}
