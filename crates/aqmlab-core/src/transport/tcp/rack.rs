//! RACK-TLP loss detection (RFC 8985) as Linux runs it
//! (`net/ipv4/tcp_recovery.c`, `tcp_send_loss_probe` and
//! `tcp_schedule_loss_probe` in `tcp_output.c`, `tcp_process_tlp_ack` in
//! `tcp_input.c`), with `tcp.rack`.
//!
//! RACK (section 6): of the segments delivered (cumulatively or by SACK),
//! the most recently sent one gives `RACK.xmit_ts` and `RACK.end_seq`, and
//! `RACK.rtt` is `now` less the send time of the last one the ACK's
//! processing reaches (those SACKed, ascending, then those acknowledged), as
//! Linux's `tcp_rack_advance` sets it, where section 6.2 step 3 takes it with
//! `RACK.xmit_ts` (a retransmitted segment delivered sooner than `min_rtt`
//! after its last transmission is ambiguous and left out). A segment sent
//! before the most recent one (by time, then by sequence) and not delivered
//! is lost once
//!
//! ```text
//! now >= Segment.xmit_ts + RACK.rtt + reo_wnd          (section 6.2, step 5)
//! ```
//!
//! and a reordering timer fires at the latest such time of the segments
//! not yet lost (section 6.3). Linux looks only on the ACKs its
//! `tcp_ack_is_dubious` passes (`TcpFlow::dubious`), not on every ACK as
//! section 6.2 does. `reo_wnd` as Linux's `tcp_rack_reo_wnd`
//! (`reorder.rs`): without reordering seen, 0 in recovery and after a
//! timeout, and 0 once three segments are SACKed (the duplicate
//! threshold); else `min_rtt / 4`, times the steps D-SACKs add once
//! reordering was seen, at most SRTT. `min_rtt` is the least RTT of a segment delivered without
//! retransmission, restarted from the current sample when 300 s old (Linux's
//! `tcp_min_rtt_wlen`; the kernel keeps a three-sample windowed filter).
//!
//! The walk takes the segments in the order they were sent (Linux's
//! `tsorted_sent_queue`) from two sequences, each in that order: the first
//! transmissions are the scoreboard's slots never sent again (new data
//! leaves in sequence order, so the scoreboard is already ordered by time
//! for them, and a cursor marks how far the walk has passed), and the
//! retransmissions are kept in a list as they go, where an entry goes stale
//! when its segment is delivered or sent again. Stale entries at the front
//! of either are passed for good as the walk meets them. Each stops at its
//! first segment not sent before `RACK.xmit_ts`; with `reo_wnd` = 0 every
//! segment before that is lost at once, so a walk costs the entries it
//! passes, O(1) amortised per segment, and a segment sent once and
//! acknowledged in order costs RACK no entry at all.
//!
//! TLP (section 7): with nothing SACKed, lost or retransmitted (Linux's
//! Open state) and data outstanding, a probe timeout
//!
//! ```text
//! PTO = 2 SRTT + (one segment outstanding ? min_rto (the delayed-ACK allowance) : 2 ms)
//! ```
//!
//! (before any RTT sample, `initial_rto`), at most the time left to the
//! retransmission timeout. Its probe is a new segment if the receiver's
//! window and the application allow one, else the last segment sent again;
//! at most one probe is outstanding (`tlp_high`, the highest segment sent
//! then). Loss detection for the probe (section 7.4, as Linux's
//! `tcp_process_tlp_ack`): an ACK beyond `tlp_high` after a probe that was
//! a retransmission means the probe repaired a loss, and the window is cut
//! once, unless a D-SACK reports the probe's segment (`tcp.dsack`): then,
//! as for a pure duplicate ACK at `tlp_high`, the original and the probe
//! both arrived; an ACK for a probe of new data ends the episode.

use super::scoreboard::{Marked, Scoreboard, Slot, EVER, LOST, RETRANS, SACKED};
use crate::units::SimTime;
use std::collections::VecDeque;

/// How long a minimum RTT holds before a new sample replaces it (Linux's
/// `net.ipv4.tcp_min_rtt_wlen`, 300 s).
const MIN_RTT_WINDOW: SimTime = SimTime::from_secs(300);
/// Linux's `TCP_TIMEOUT_MIN_US`: added to the reordering timer and to the
/// PTO of more than one segment.
pub(super) const TIMEOUT_MIN: SimTime = SimTime::from_millis(2);

/// RACK-TLP's state of one flow.
#[derive(Clone, Debug, Default)]
pub(super) struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment
    /// delivered (`seq` its number; `None` before the first).
    last: Option<(SimTime, u64)>,
    /// RACK.rtt, ns.
    rtt: u64,
    /// RACK moved since the last walk (Linux's `rack.advanced`).
    pub advanced: bool,
    /// The minimum RTT and when it was taken.
    min_rtt: Option<(u64, SimTime)>,
    /// Retransmissions in the order sent: (segment, when).
    resent: VecDeque<(u64, SimTime)>,
    /// First transmissions: the walk has passed every segment below this
    /// that was never sent again.
    first: u64,
    /// TLP: one past the highest segment sent when the outstanding probe
    /// went, and whether it was a retransmission.
    pub tlp_high: Option<u64>,
    pub tlp_retrans: bool,
    /// Reordering seen and the window's steps (`reorder.rs`).
    pub reorder: super::reorder::Reorder,
}

/// RACK_sent_after (RFC 8985 section 6.2): `(t1, s1)` was sent after
/// `(t2, s2)`, by time, then by sequence for the same instant.
fn sent_after(t1: SimTime, s1: u64, t2: SimTime, s2: u64) -> bool {
    t1 > t2 || (t1 == t2 && s1 > s2)
}

impl Rack {
    /// Segment `seq` is sent again at `now` (a first transmission needs
    /// no entry: the scoreboard holds its time).
    #[inline]
    pub fn on_resend(&mut self, seq: u64, now: SimTime) {
        self.resent.push_back((seq, now));
    }

    /// RACK.rtt, ns (0 before a segment was delivered).
    pub fn rtt_ns(&self) -> u64 {
        self.rtt
    }

    /// The minimum RTT, ns, if any sample was taken.
    pub fn min_rtt(&self) -> Option<u64> {
        self.min_rtt.map(|(r, _)| r)
    }

    /// RFC 8985 section 6.2, steps 2 and 3, for segment `seq` (its slot
    /// before this ACK) delivered at `now`.
    pub fn delivered(&mut self, seq: u64, slot: Slot, now: SimTime) {
        let rtt = (now - slot.xmit).0;
        let ever = slot.bits & EVER != 0;
        if ever && self.min_rtt().is_some_and(|m| rtt < m) {
            // Delivered sooner than any round trip after it was sent again:
            // the original, not the retransmission, was delivered.
            return;
        }
        if !ever {
            self.min_rtt = match self.min_rtt {
                Some((m, at)) if m <= rtt && now - at < MIN_RTT_WINDOW => Some((m, at)),
                _ => Some((rtt, now)),
            };
        }
        // Linux's `tcp_rack_advance`: RACK.rtt is the last segment's taken,
        // in the order the ACK's segments are processed (those SACKed,
        // ascending, then those acknowledged), RACK.xmit_ts the most
        // recently sent one's.
        self.advanced = true;
        self.rtt = rtt;
        if self
            .last
            .is_none_or(|(t, s)| sent_after(slot.xmit, seq, t, s))
        {
            self.last = Some((slot.xmit, seq));
        }
    }

    /// Linux's `tcp_rack_reo_wnd` (`reorder.rs`); `srtt_ns` 0 before any
    /// sample.
    pub fn reo_wnd(&self, recovering: bool, sacked_out: u64, srtt_ns: f64) -> u64 {
        let srtt = srtt_ns.max(0.0) as u64;
        self.reorder
            .reo_wnd(recovering, sacked_out, self.min_rtt(), srtt)
    }

    /// The send time of the most recently sent segment delivered
    /// (RACK.xmit_ts), if any was.
    pub fn newest_sent(&self) -> Option<SimTime> {
        self.last.map(|(t, _)| t)
    }

    /// RFC 8985 section 6.2 step 5 (RACK_detect_loss): marks lost every
    /// segment sent before RACK.xmit_ts whose time is up; returns how many
    /// it marked and, if some are still waiting, the longest time left, ns
    /// (section 6.3: the reordering timer).
    pub fn detect(
        &mut self,
        sb: &mut Scoreboard,
        now: SimTime,
        reo_wnd: u64,
    ) -> (u64, Option<u64>) {
        self.advanced = false;
        let Some((rt, rs)) = self.last else {
            return (0, None);
        };
        let limit = self.rtt + reo_wnd;
        let (mut lost, mut wait) = (0, None::<u64>);
        // First transmissions: a slot with any bit set was SACKed, deemed
        // lost (and not sent again), or sent again (its copies are in
        // `resent`); the others wait in the order they were sent.
        let mut front = true;
        let mut seq = self.first.max(sb.una());
        let end = sb.end();
        while seq < end {
            let s = sb.slot(seq);
            if s.bits == 0 {
                if !sent_after(rt, rs, s.xmit, seq) {
                    break;
                }
                let age = (now - s.xmit).0;
                if age < limit {
                    // Sent later than those before it: the longest wait so far.
                    wait = Some(limit - age);
                    front = false;
                } else if sb.mark_lost(seq) != Marked::No {
                    lost += 1;
                }
            }
            seq += 1;
            if front {
                self.first = seq;
            }
        }
        // Retransmissions: stale once delivered, sent again since, or lost
        // and not yet sent again.
        let stale = |sb: &Scoreboard, seq: u64, at: SimTime| {
            if seq < sb.una() || seq >= sb.end() {
                return true;
            }
            let s = sb.slot(seq);
            s.xmit != at || s.bits & SACKED != 0 || s.bits & (LOST | RETRANS) == LOST
        };
        let mut i = 0;
        while let Some(&(seq, at)) = self.resent.get(i) {
            if stale(sb, seq, at) {
                if i == 0 {
                    self.resent.pop_front();
                } else {
                    i += 1;
                }
                continue;
            }
            if !sent_after(rt, rs, at, seq) {
                break;
            }
            let age = (now - at).0;
            if age >= limit {
                if sb.mark_lost(seq) != Marked::No {
                    lost += 1;
                }
                if i == 0 {
                    self.resent.pop_front();
                } else {
                    i += 1;
                }
            } else {
                wait = Some(wait.map_or(limit - age, |w| w.max(limit - age)));
                i += 1;
            }
        }
        (lost, wait)
    }

    /// Entries kept (for tests): retransmissions listed, and the first
    /// transmission the walk will look at next.
    #[cfg(test)]
    pub fn queued(&self) -> (usize, u64) {
        (self.resent.len(), self.first)
    }
}

/// RFC 8985 section 7.2 (Linux's `tcp_schedule_loss_probe`): the probe
/// timeout for `outstanding` segments with smoothed RTT `srtt_ns` (none
/// before a sample: `initial`), and `min_rto` as the delayed-ACK allowance.
pub(super) fn pto(
    srtt_ns: Option<f64>,
    outstanding: u64,
    min_rto: SimTime,
    initial: SimTime,
) -> SimTime {
    match srtt_ns {
        Some(s) => {
            let extra = if outstanding == 1 {
                min_rto
            } else {
                TIMEOUT_MIN
            };
            // Whole nanoseconds (`as` truncates; no call into libm per ACK).
            SimTime::from_nanos((2.0 * s) as u64) + extra
        }
        None => initial,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Segments 0..n sent at the given times (RACK reads them from the
    /// scoreboard).
    fn sent(times: &[u64]) -> (Scoreboard, Rack) {
        let mut sb = Scoreboard::default();
        for (s, &ms) in times.iter().enumerate() {
            sb.sent_new(s as u64, t(ms));
        }
        (sb, Rack::default())
    }

    fn sack(sb: &mut Scoreboard, r: &mut Rack, s: u64, now: SimTime) {
        let mut got = Vec::new();
        sb.sack(s, s + 1, |q, slot| got.push((q, slot)));
        for (q, slot) in got {
            r.delivered(q, slot, now);
        }
    }

    /// RACK by hand: segments 0-3 sent at 0, 1, 2, 3 ms; 1 and 3 are SACKed
    /// at 100 ms, 0 and 2 are missing. RACK.xmit_ts = 3 ms (segment 3),
    /// RACK.rtt = 97 ms, min_rtt 97 ms. With reo_wnd = min_rtt / 4 = 24.25
    /// ms, a segment is lost at xmit + 97 + 24.25 ms: none yet at 100 ms,
    /// and the timer waits for segment 2's time (2 + 121.25 - 100 = 23.25
    /// ms). At 122 ms segment 0 (due at 121.25) is lost, 2 (123.25) not yet;
    /// with reo_wnd = 0 (three SACKed) both are lost at once.
    #[test]
    fn marks_by_time_sent() {
        let (mut sb, mut r) = sent(&[0, 1, 2, 3]);
        sack(&mut sb, &mut r, 1, t(100));
        sack(&mut sb, &mut r, 3, t(100));
        assert_eq!(r.last, Some((t(3), 3)));
        assert_eq!(r.rtt, 97_000_000);
        assert_eq!(r.min_rtt(), Some(97_000_000));
        let reo = r.reo_wnd(false, sb.sacked_out, 100e6);
        assert_eq!(reo, 24_250_000);
        assert_eq!(r.detect(&mut sb, t(100), reo), (0, Some(23_250_000)));
        assert_eq!(r.detect(&mut sb, t(122), reo), (1, Some(1_250_000)));
        assert_eq!(sb.slot(0).bits & LOST, LOST);
        assert_eq!(sb.slot(2).bits & LOST, 0);
        assert_eq!(r.detect(&mut sb, t(122), 0), (1, None));
        assert_eq!(sb.lost_out, 2);
        sb.check().unwrap();
    }

    /// The walk drops what it passes: 100 segments sent at once, 0..49
    /// acknowledged and 99 SACKed: one walk drops the 50 delivered entries,
    /// marks 50..98 lost (sent before 99 at the same instant, RACK orders by
    /// sequence), and drops them and 99's: nothing is left to walk again.
    #[test]
    fn the_walk_drops_what_it_passes() {
        let times = vec![0; 100];
        let (mut sb, mut r) = sent(&times);
        let mut got = Vec::new();
        sb.ack(50, |q, slot| got.push((q, slot)));
        for (q, slot) in got {
            r.delivered(q, slot, t(50));
        }
        sack(&mut sb, &mut r, 99, t(50));
        // Same instant: RACK_sent_after orders by sequence; 50..98 lost.
        assert_eq!(r.detect(&mut sb, t(50), 0), (49, None));
        assert_eq!(r.queued(), (0, 100));
        sb.check().unwrap();
    }

    /// First transmissions and retransmissions are walked together by
    /// the time they were sent: segments 0 and 1 sent at 0 ms, 0 sent
    /// again at 10 ms, 2 sent at 20 ms and 3 at 40 ms; 2 SACKed at 120 ms
    /// (RACK.xmit_ts = 20 ms, RACK.rtt = 100 ms). With reo_wnd = 0 the
    /// copy of 0 (sent at 10) and segment 1 (at 0) are lost, 3 (sent after
    /// 2) is not looked at; had 0 gone again at 30 ms, after 2, it would
    /// not be lost.
    #[test]
    fn first_transmissions_and_retransmissions_in_one_order() {
        for (resent_at, lost) in [(10, 2), (30, 1)] {
            let (mut sb, mut r) = sent(&[0, 0]);
            sb.mark_lost(0);
            sb.sent_again(0, t(resent_at));
            r.on_resend(0, t(resent_at));
            sb.sent_new(2, t(20));
            sb.sent_new(3, t(40));
            sack(&mut sb, &mut r, 2, t(120));
            assert_eq!(r.detect(&mut sb, t(120), 0), (lost, None), "{resent_at}");
            assert_eq!(sb.slot(1).bits & LOST, LOST);
            assert_eq!(sb.slot(3).bits, 0);
            // The walk has passed 1 and 2 for good; it looks at 3 next.
            assert_eq!(r.queued().1, 3);
            sb.check().unwrap();
        }
    }

    /// A retransmission delivered sooner than min_rtt after it was sent is
    /// ambiguous and does not move RACK (RFC 8985 section 6.2 step 3).
    #[test]
    fn an_ambiguous_retransmission_is_ignored() {
        let (mut sb, mut r) = sent(&[0, 0]);
        sack(&mut sb, &mut r, 1, t(100)); // min_rtt 100 ms
        sb.mark_lost(0);
        sb.sent_again(0, t(150));
        r.on_resend(0, t(150));
        let mut got = Vec::new();
        sb.ack(1, |q, slot| got.push((q, slot)));
        r.advanced = false;
        r.delivered(got[0].0, got[0].1, t(160)); // 10 ms after the resend
        assert!(!r.advanced);
        assert_eq!(r.last, Some((t(0), 1)));
    }

    /// PTO (RFC 8985 section 7.2, Linux): 2 SRTT + 2 ms, or + min_rto with
    /// one segment outstanding; initial_rto before an RTT sample.
    #[test]
    fn probe_timeout() {
        let (min_rto, init) = (t(200), t(1000));
        assert_eq!(pto(Some(50e6), 10, min_rto, init), t(102));
        assert_eq!(pto(Some(50e6), 1, min_rto, init), t(300));
        assert_eq!(pto(None, 3, min_rto, init), t(1000));
    }
}
