//! Whether the congestion window limits the sender (`tcp.cwnd_validation`,
//! Linux's `tcp_cwnd_validate` and `tcp_is_cwnd_limited`,
//! `net/ipv4/tcp_output.c` and `include/net/tcp.h`, Linux 6.x).
//!
//! Linux grows a window only while the window is what holds the sender
//! back: Reno's and CUBIC's growth (`tcp_reno_cong_avoid`,
//! `cubictcp_cong_avoid`), DCTCP's (Reno's) and TCP Prague's
//! (`prague_update_cwnd`) return at once when `tcp_is_cwnd_limited` is
//! false. A sender held back by the receiver's window, by pacing or by an
//! application with nothing more to send keeps its window where it is; in
//! slow start the window may still grow to twice the most segments that
//! were outstanding. BBR sets its window from its own model and does not
//! ask.
//!
//! What the sender records, after each round of sending new data
//! (`tcp_write_xmit`) in which it sent something or found the window full:
//! - the round was window-limited when the segments in flight
//!   (`tcp_packets_in_flight`, the SACK scoreboard's pipe) reach the
//!   window, or when it held a TSO/GSO packet back for want of room in the
//!   window rather than in the receiver's (`tcp_tso_should_defer`);
//! - a window-limited round is kept until the cumulative ACK passes what
//!   was sent by then (`cwnd_usage_seq`), and the most segments
//!   outstanding (`packets_out`) are kept beside it; a round that is not
//!   window-limited replaces the record once that window is acknowledged,
//!   or at once if the record was not window-limited and more segments are
//!   outstanding now.
//!
//! With `tcp.cwnd_validation = "linux-2020"` the record is the one Linux
//! kept from "tcp: make cwnd-limited checks measurement-based, and gentler"
//! until its fixes of December 2020 ("tcp: fix cwnd-limited bug for TSO
//! deferral where we send nothing") and September 2022 ("tcp: fix
//! tcp_cwnd_validate() to not forget is_cwnd_limited"), which the L4S
//! team's kernel of August 2020 runs: only a round that sent new data
//! takes the record, and it replaces it, window-limited or not, only once
//! the recorded window is acknowledged or when more segments are
//! outstanding than recorded; in slow start only the
//! twice-the-most-outstanding test counts.
//!
//! The model's choices: the record is taken at the end of each of the
//! SACK sender's rounds of sending (an ACK's, a timer's, the
//! application's) and by a tail loss probe that sends new data, as Linux
//! takes it in `tcp_write_xmit`; retransmissions alone do not take it
//! (Linux sends them in `tcp_xmit_retransmit_queue`, which does not).
//! Linux's reduction of a window left unused for an RTO
//! (`tcp_cwnd_application_limited`, RFC 2861's decay) is not modelled: it
//! needs `snd_cwnd_stamp` an RTO old, and every ACK that acknowledges data
//! outside a window reduction renews it (`tcp_cong_avoid`), as do the
//! restart after idle and a timeout (docs/tcp.md, "The window's use").

use super::sack_recovery::Lr;
use super::TcpFlow;
use crate::scenario::TcpVariant;

/// The sender's record of its window's use (Linux's `is_cwnd_limited`,
/// `max_packets_out` and `cwnd_usage_seq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CwndUse {
    /// The window limited a round of sending in the window recorded.
    limited: bool,
    /// The most segments outstanding in that window.
    max_out: u64,
    /// The record holds until the cumulative ACK reaches this segment.
    until: u64,
    /// Linux's record before its fixes of 2020 and 2022
    /// (`cwnd_validation = "linux-2020"`).
    before_fixes: bool,
}

impl CwndUse {
    /// The record of a flow that has sent nothing; `before_fixes`: Linux's
    /// rules before its fixes of 2020 and 2022.
    pub fn new(before_fixes: bool) -> CwndUse {
        CwndUse {
            before_fixes,
            ..CwndUse::default()
        }
    }

    /// A round of sending ended (`tcp_cwnd_validate`'s record): `limited`
    /// whether the window held it back, with `out` segments outstanding,
    /// the cumulative ACK at `una` and the next new segment `nxt`.
    pub fn record(&mut self, limited: bool, out: u64, una: u64, nxt: u64) {
        let replace = if self.before_fixes {
            una >= self.until || out > self.max_out
        } else {
            una >= self.until || limited || (!self.limited && out > self.max_out)
        };
        if replace {
            self.limited = limited;
            self.max_out = out;
            self.until = nxt;
        }
    }

    /// Whether a window of `cwnd` segments may grow (`tcp_is_cwnd_limited`):
    /// it limited the sender in the window recorded, or in slow start it
    /// is below twice the most segments outstanding then (Linux's whole
    /// `snd_cwnd` is below an even count exactly when the window is); in
    /// slow start before the fixes, only the latter.
    pub fn allows_growth(&self, cwnd: f64, slow_start: bool) -> bool {
        if slow_start && (self.before_fixes || !self.limited) {
            cwnd < 2.0 * self.max_out as f64
        } else {
            self.limited
        }
    }
}

impl TcpFlow {
    /// A round of sending ended (with `tcp.cwnd_validation`): `sent_new`
    /// whether new data went, `limited` whether the window held the round
    /// back: the segments in flight reached it, or a packet waited for
    /// room in it (`tcp_write_xmit`'s `is_cwnd_limited`; recorded by
    /// `tcp_cwnd_validate` when the round sent something or the window is
    /// full; before the fix of December 2020, only when it sent something).
    #[inline]
    pub(super) fn record_cwnd_use(&mut self, lr: &mut Lr, sent_new: bool, limited: bool) {
        if sent_new || (limited && !lr.cwnd_use.before_fixes) {
            let out = self.snd_max - self.snd_una;
            lr.cwnd_use.record(limited, out, self.snd_una, self.snd_max);
        }
    }

    /// Whether an ACK may grow the window: always without
    /// `tcp.cwnd_validation` and for BBR, else while the window limits
    /// the sender (`tcp_is_cwnd_limited`).
    #[inline]
    pub(super) fn window_may_grow(&self, lr: &Lr) -> bool {
        !self.cfg.tcp.cwnd_validation()
            || self.cfg.tcp.variant == TcpVariant::Bbr
            || lr
                .cwnd_use
                .allows_growth(self.cwnd, self.cwnd < self.ssthresh)
    }

    /// Whether `pipe` segments in flight reach Linux's `snd_cwnd` (the
    /// window in whole segments, at least one; not bounded by the
    /// receiver's window, as [`TcpFlow::window`] is): `pipe >= max(1,
    /// floor(cwnd))`, without a float-to-integer conversion.
    #[inline]
    pub(super) fn pipe_at_cwnd(&self, pipe: u64) -> bool {
        reaches(pipe, self.cwnd)
    }
}

/// `pipe >= max(1, floor(cwnd))` for a window `cwnd >= 0`: floor(cwnd) <=
/// pipe exactly when cwnd < pipe + 1.
fn reaches(pipe: u64, cwnd: f64) -> bool {
    pipe >= 1 && (pipe + 1) as f64 > cwnd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window-limited round with 10 segments out (0-9 sent, ACK at 0):
    /// growth allowed, and still after a later round held back by the
    /// receiver, until the ACK passes segment 10; then the receiver-held
    /// round (14 out) replaces it: in congestion avoidance no growth, in
    /// slow start up to 27 (twice 14 less one).
    #[test]
    fn the_window_grows_while_it_limited_the_last_window_sent() {
        let mut u = CwndUse::default();
        assert!(!u.allows_growth(10.0, false) && !u.allows_growth(1.0, true));
        u.record(true, 10, 0, 10);
        assert!(u.allows_growth(10.0, false));
        u.record(false, 12, 4, 16);
        assert!(
            u.allows_growth(10.0, false),
            "kept until the ACK reaches 10"
        );
        u.record(false, 14, 10, 24);
        assert_eq!((u.limited, u.max_out, u.until), (false, 14, 24));
        assert!(!u.allows_growth(20.0, false));
        assert!(u.allows_growth(27.9, true) && !u.allows_growth(28.0, true));
    }

    /// The test of the pipe against the window without a conversion is
    /// the whole window's, on windows either side of each integer.
    #[test]
    fn the_pipe_reaches_the_whole_window_as_linux_counts_it() {
        for pipe in 0..40u64 {
            for k in 0..4000 {
                let cwnd = f64::from(k) / 100.0;
                let whole = (cwnd as u64).max(1);
                assert_eq!(reaches(pipe, cwnd), pipe >= whole, "{pipe} {cwnd}");
            }
            let c = pipe as f64;
            for cwnd in [
                c,
                c.next_up(),
                c.next_down().max(0.0),
                c + 1.0,
                (c + 1.0).next_down(),
            ] {
                assert_eq!(
                    reaches(pipe, cwnd),
                    pipe >= (cwnd as u64).max(1),
                    "{pipe} {cwnd}"
                );
            }
        }
    }

    /// Linux's record before its fixes: a window-limited round within the
    /// recorded window replaces nothing, and one with more segments out
    /// replaces the record even if it was window-limited; in slow start
    /// only twice the most outstanding counts.
    #[test]
    fn the_record_before_fixes_forgets_a_limited_round() {
        let mut u = CwndUse::new(true);
        u.record(false, 10, 0, 10);
        u.record(true, 10, 2, 12);
        assert_eq!((u.limited, u.max_out, u.until), (false, 10, 10));
        assert!(!u.allows_growth(30.0, false) && u.allows_growth(19.0, true));
        u.record(true, 12, 10, 22);
        assert!(u.allows_growth(30.0, false) && !u.allows_growth(30.0, true));
        u.record(false, 13, 11, 24);
        assert_eq!((u.limited, u.max_out, u.until), (false, 13, 24));
        let mut now = CwndUse::new(false);
        now.record(true, 12, 10, 22);
        now.record(false, 13, 11, 24);
        assert_eq!((now.limited, now.max_out, now.until), (true, 12, 22));
    }

    /// A round that is not window-limited raises the most segments
    /// outstanding before its window is acknowledged only while the record
    /// is not window-limited.
    #[test]
    fn more_segments_out_update_a_record_that_is_not_limited() {
        let mut u = CwndUse::default();
        u.record(false, 8, 0, 8);
        u.record(false, 9, 1, 10);
        assert_eq!((u.limited, u.max_out, u.until), (false, 9, 10));
        u.record(false, 7, 2, 10);
        assert_eq!(u.max_out, 9, "fewer out: the record stays");
        u.record(true, 9, 3, 12);
        u.record(false, 11, 4, 15);
        assert_eq!((u.limited, u.max_out, u.until), (true, 9, 12));
    }
}
