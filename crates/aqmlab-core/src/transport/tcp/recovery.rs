//! Loss recovery: fast retransmit on the third duplicate ACK (RFC 5681
//! section 3.2) with NewReno's rule for when it may start (`recover`,
//! RFC 6582 section 3.2 step 2, and the ACK heuristic of section 4.2),
//! fast recovery with window inflation, NewReno's partial ACKs and its
//! exit (RFC 6582 section 3.2 steps 3 and 5), Reno's exit at the first
//! new ACK, and limited transmit (RFC 3042). The window cut itself is the
//! congestion control's (`cc/`). With `tcp.prr` the window in recovery is
//! PRR's (RFC 6937, `prr.rs`) instead of inflation and deflation, with
//! DeliveredData estimated from the duplicate ACKs (RFC 6937 section 3)
//! and the pipe as the segments outstanding less those duplicate ACKs and
//! the hole not yet sent again (as Linux counts a flow without SACK).

use super::{Cut, Seg, TcpFlow};
use crate::scenario::{LimitedTransmitSends, PartialAckTimer, RecoveryExit, TcpVariant};
use crate::units::SimTime;

impl TcpFlow {
    /// A duplicate ACK: inflate the window in fast recovery; on the third,
    /// a fast retransmission if NewReno's rules allow one; on the first and
    /// second, limited transmit.
    #[inline]
    pub(super) fn on_dupack(&mut self, now: SimTime, ack: u64, out: &mut Vec<Seg>) {
        self.dupacks += 1;
        if self.in_recovery {
            if self.cfg.tcp.prr {
                self.reno_prr_ack(0, false);
            } else {
                self.cwnd += 1.0; // inflate
            }
        } else if self.dupacks == 3 {
            // A loss in the window an ECN reduction already answered
            // is repaired without halving again (RFC 3168 section
            // 6.1.2: one reduction per window for marks and losses).
            let after_ecn = self.last_cut == Cut::Ecn && ack < self.recover;
            let may_enter = match self.cfg.tcp.variant {
                TcpVariant::Reno => true,
                // RFC 6582 section 3.2 step 2: the ACK must cover more
                // than the highest segment sent at the last loss or
                // timeout (`recover` - 1), so `ack > recover`; an ACK
                // for just that segment, as the duplicates go-back-N's
                // resent segments draw after a timeout, is not enough
                // (ns-2: `highest_ack_ > recover_`). After an ECN
                // reduction, an ACK for all the data outstanding then
                // (`ack >= recover`) starts a new window (RFC 3168
                // section 6.1.2). Before any event (`recover` = 0, RFC
                // 6582's initial send sequence) a loss of the first
                // segment is retransmitted too, as ns-2's `bugfix_ss_`
                // does. Section 4.2's ACK heuristic as a switch.
                TcpVariant::NewReno
                | TcpVariant::Cubic
                | TcpVariant::Dctcp
                | TcpVariant::Prague
                | TcpVariant::Bbr
                | TcpVariant::Ledbat => {
                    ack > self.recover
                        || (self.last_cut == Cut::Ecn && ack == self.recover)
                        || self.recover == 0
                        || after_ecn
                        || (self.cfg.tcp.ack_heuristic()
                            && self.cwnd > 1.0
                            && ack - self.prev_una <= 4)
                }
            };
            if may_enter {
                self.fast_retransmit(now, after_ecn, out);
            }
        } else if self.dupacks < 3 {
            self.limited_transmit(now, out);
        }
    }

    /// RFC 5681 section 3.2: the third duplicate ACK retransmits the
    /// first unacknowledged segment and enters fast recovery with the
    /// window cut ([`TcpFlow::loss_cut`]) and inflated by the three
    /// segments that left the network.
    #[inline]
    fn fast_retransmit(&mut self, now: SimTime, after_ecn: bool, out: &mut Vec<Seg>) {
        let prior = self.window();
        self.loss_cut(after_ecn);
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.last_cut = Cut::Loss;
        self.in_recovery = true;
        self.ecn_hold = false;
        self.partial_seen = false;
        self.rtt_seq = None;
        self.stats.fast_retransmits += 1;
        if self.cfg.tcp.prr {
            // RFC 6937: PRR sets the window from this ACK on (at least the
            // retransmission goes).
            self.reno_prr_start(prior);
            self.reno_prr_send(now, out);
        } else {
            self.retransmit_una(now, out);
            self.cwnd = self.exit_cwnd + 3.0;
        }
        // The timer restarts with the fast retransmission (as
        // 4.4BSD, ns-2 and Linux do): its ACK needs a round
        // trip, and a timer armed for an earlier segment would
        // fire before it could come back.
        self.rto_deadline = Some(now + self.rto);
    }

    /// PRR without SACK (RFC 6937 section 3; Linux's flows without SACK):
    /// recovery begins with the window `prior` before the cut; the three
    /// duplicate ACKs stand for three segments that left the network, the
    /// oldest segment is lost and not yet sent again, and this ACK
    /// delivered one.
    fn reno_prr_start(&mut self, prior: u64) {
        let outstanding = self.outstanding();
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        lr.prr = super::prr::Prr::start(prior);
        lr.reno_sacked = u64::from(self.dupacks).min(outstanding.saturating_sub(1));
        lr.head_pending = true;
        self.reno_prr_cwnd(1, false, false);
    }

    /// PRR without SACK, an ACK in recovery: `acked` segments newly
    /// acknowledged cumulatively (0: a duplicate ACK). DeliveredData is
    /// estimated from the duplicate ACKs (RFC 6937 section 3, as Linux's
    /// `tcp_add_reno_sack` and `tcp_remove_reno_sacks`): a duplicate ACK
    /// delivered one segment (at most all but the hole); a cumulative ACK
    /// the segments it covers beyond those already counted, at least one.
    /// A partial ACK (`partial`) leaves its next hole lost, to be sent again
    /// when PRR allows (RFC 6582 section 3.2 step 5 under PRR).
    pub(super) fn reno_prr_ack(&mut self, acked: u64, partial: bool) {
        let outstanding = self.outstanding();
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        let delivered = if acked == 0 {
            let before = lr.reno_sacked;
            lr.reno_sacked = (before + 1).min(outstanding.saturating_sub(1));
            lr.reno_sacked.saturating_sub(before)
        } else {
            let d = acked.saturating_sub(lr.reno_sacked).max(1);
            lr.reno_sacked = lr.reno_sacked.saturating_sub(acked - 1);
            d
        };
        if partial {
            lr.head_pending = true;
        }
        self.reno_prr_cwnd(delivered, acked > 0, partial);
    }

    /// PRR's window for an ACK that delivered `delivered` segments, with the
    /// pipe estimated as the segments outstanding less those the duplicate
    /// ACKs counted and the hole not yet sent again.
    fn reno_prr_cwnd(&mut self, delivered: u64, una_advanced: bool, newly_lost: bool) {
        let target = self.prr_target();
        let pipe = self.reno_pipe();
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        if let Some(c) = lr
            .prr
            .on_ack(target, pipe, delivered, una_advanced, newly_lost)
        {
            self.cwnd = c as f64;
        }
    }

    /// PRR without SACK: the segments in the network, estimated.
    fn reno_pipe(&self) -> u64 {
        let (sacked, hole) = self
            .lr
            .as_deref()
            .map_or((0, 0), |l| (l.reno_sacked, u64::from(l.head_pending)));
        self.outstanding().saturating_sub(sacked + hole)
    }

    /// PRR without SACK, what goes out in recovery: the hole first, then new
    /// data, while the estimated pipe is below cwnd.
    pub(super) fn reno_prr_send(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        let w = self.window();
        if self.lr.as_deref().is_some_and(|l| l.head_pending) && self.reno_pipe() < w {
            self.retransmit_una(now, out);
            if let Some(lr) = self.lr.as_deref_mut() {
                lr.head_pending = false;
                lr.prr.out += 1;
            }
        }
        let limit = (self.snd_una + u64::from(self.cfg.tcp.rwnd)).min(self.app_limit);
        while self.snd_nxt < limit && self.reno_pipe() < w {
            let s = self.data_seg(self.snd_nxt, now);
            out.push(s);
            self.snd_nxt += 1;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
            if let Some(lr) = self.lr.as_deref_mut() {
                lr.prr.out += 1;
            }
        }
    }

    /// A new ACK during fast recovery. Reno leaves recovery at the first;
    /// NewReno at the one that covers `recover` (RFC 6582 section 3.2 step
    /// 3), and answers a partial ACK by retransmitting the next hole.
    /// Returns whether recovery goes on (a partial ACK: the timer is as
    /// recovery left it).
    #[inline]
    pub(super) fn recovery_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        newly: u64,
        out: &mut Vec<Seg>,
    ) -> bool {
        match self.cfg.tcp.variant {
            TcpVariant::Reno => {
                self.cwnd = self.exit_cwnd;
                self.in_recovery = false;
                self.dupacks = 0;
                false
            }
            TcpVariant::NewReno
            | TcpVariant::Cubic
            | TcpVariant::Dctcp
            | TcpVariant::Prague
            | TcpVariant::Bbr
            | TcpVariant::Ledbat => {
                if ack >= self.recover {
                    // RFC 6582 3.2 step 3, option (1) or (2); with PRR,
                    // ssthresh (RFC 6937 section 3).
                    let flight = self.outstanding() as f64;
                    self.cwnd = match self.cfg.tcp.recovery_exit {
                        _ if self.cfg.tcp.prr => self.exit_cwnd,
                        RecoveryExit::Flight => self.exit_cwnd.min(flight.max(1.0) + 1.0),
                        RecoveryExit::Ssthresh => self.exit_cwnd,
                    };
                    self.in_recovery = false;
                    self.dupacks = 0;
                    false
                } else {
                    // Partial ACK: retransmit the next hole, deflate
                    // (RFC 6582 section 3.2 step 5). By default only
                    // the first partial ACK re-arms the timer (the
                    // "Impatient" variant of RFC 3782 section 4, as
                    // RFC 6582 step 5 and ns-2 have it), so a window
                    // with many losses ends in a timeout instead of
                    // one hole repaired per round trip for minutes;
                    // `partial_ack_timer = "every"` re-arms it on
                    // each ("Slow-but-Steady").
                    if self.cfg.tcp.prr {
                        // PRR lets the hole go when the pipe allows.
                        self.reno_prr_ack(newly, true);
                    } else {
                        self.retransmit_una(now, out);
                        self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                    }
                    if !self.partial_seen
                        || self.cfg.tcp.partial_ack_timer == PartialAckTimer::Every
                    {
                        self.partial_seen = true;
                        self.rto_deadline = Some(now + self.rto);
                    }
                    true
                }
            }
        }
    }

    /// RFC 3042 limited transmit: on the first and second duplicate ACK,
    /// one new segment if the receiver's window and the data allow and the
    /// flight stays within cwnd + 2 segments.
    pub(super) fn limited_transmit(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.tcp.variant == TcpVariant::Bbr {
            // BBR's window counts the segments duplicate ACKs took out of
            // the network (as Linux's in-flight count does), which lets
            // new data out already.
            return;
        }
        // RFC 3042 sends new data only; ns-2 (`"next"`) the next segment in
        // sequence, which after a timeout's go-back-N was sent before.
        let old_too = self.cfg.tcp.limited_transmit_sends == LimitedTransmitSends::Next;
        if !self.cfg.tcp.limited_transmit
            || self.ecn_hold
            || (self.snd_nxt != self.snd_max && !old_too)
        {
            return;
        }
        let cap = (self.snd_una + self.window() + u64::from(self.dupacks))
            .min(self.snd_una + u64::from(self.cfg.tcp.rwnd))
            .min(self.app_limit);
        if self.snd_nxt < cap {
            let s = self.data_seg(self.snd_nxt, now);
            if self.cfg.tcp.pacing {
                self.paced_sent_at_once((s.seq, s.size, s.flags), false, now);
            }
            out.push(s);
            self.snd_nxt += 1;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            self.lt_sent += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ack, cfg, deliver, sender, spec};
    use super::*;
    use crate::packet::flags;
    use crate::scenario::TcpSpec;

    #[test]
    fn newreno_recovers_two_losses_without_timeout() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        tx.cwnd = 10.0;
        tx.ssthresh = 10.0;
        let mut rx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert_eq!(out.len(), 10);
        // Segments 2 and 5 are lost.
        let acks = deliver(&mut rx, &out, &[2, 5]);
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(1), a.seq, a.flags, a.ecn, &mut out);
        }
        assert!(tx.in_recovery);
        assert_eq!(tx.ssthresh, 5.0);
        assert_eq!(tx.stats.fast_retransmits, 1);
        assert!(out.iter().any(|s| s.seq == 2 && s.flags & flags::RETX != 0));
        // The retransmission of 2 yields a partial ACK (for 5), which retransmits 5.
        let acks = deliver(&mut rx, &out, &[]);
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(2), a.seq, a.flags, a.ecn, &mut out);
        }
        assert!(out.iter().any(|s| s.seq == 5 && s.flags & flags::RETX != 0));
        let acks = deliver(&mut rx, &out, &[]);
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(3), a.seq, a.flags, a.ecn, &mut out);
        }
        assert!(!tx.in_recovery);
        assert_eq!(tx.stats.timeouts, 0);
        // Out of recovery at ssthresh = 5, grown since by at most one ACK round.
        assert!(tx.cwnd < 7.0, "{}", tx.cwnd);
    }

    /// `tcp.recovery_exit`: a full ACK ends NewReno's recovery with
    /// min(ssthresh, max(FlightSize, 1) + 1) = 2 here (RFC 6582 option 1) or ssthresh
    /// (option 2, ns-2).
    #[test]
    fn recovery_exit_flight_or_ssthresh() {
        for (how, want) in [(RecoveryExit::Flight, 2.0), (RecoveryExit::Ssthresh, 5.0)] {
            let tcp = TcpSpec {
                recovery_exit: how,
                limited_transmit: false,
                ..TcpSpec::default()
            };
            let (mut tx, _) = sender(10.0, tcp);
            for _ in 0..3 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            // The retransmission fills the only hole: everything is acknowledged.
            ack(&mut tx, 200, 10, false);
            assert!(!tx.in_recovery);
            assert_eq!(tx.cwnd, want, "{how:?}");
        }
    }

    /// docs/fidelity.md item 1: the fast retransmission restarts the retransmission
    /// timer (4.4BSD, ns-2, Linux), so the timer armed for segment 0 at
    /// time 0 cannot fire before the retransmission's ACK can return.
    #[test]
    fn fast_retransmit_restarts_the_timer() {
        let (mut tx, _) = sender(10.0, spec());
        assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(300)));
        // Segment 0 is lost; three duplicate ACKs (for 0) at 250 ms.
        for _ in 0..2 {
            ack(&mut tx, 250, 0, false);
        }
        let out = ack(&mut tx, 250, 0, false);
        assert!(out.iter().any(|s| s.seq == 0 && s.flags & flags::RETX != 0));
        assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(550)));
    }

    /// RFC 3042: the first and second duplicate ACK each send one new
    /// segment, cwnd unchanged; those segments are left out of the
    /// FlightSize that sets ssthresh (RFC 5681 section 3.2 step 2). Off
    /// with `limited_transmit = false`.
    #[test]
    fn limited_transmit_sends_one_new_segment_per_early_dupack() {
        let (mut tx, _) = sender(10.0, spec());
        let o1 = ack(&mut tx, 100, 0, false);
        assert_eq!(o1.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![10]);
        let o2 = ack(&mut tx, 101, 0, false);
        assert_eq!(o2.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![11]);
        assert_eq!(tx.cwnd, 10.0);
        let o3 = ack(&mut tx, 102, 0, false);
        assert_eq!(o3[0].seq, 0, "fast retransmission");
        assert_eq!(tx.ssthresh, 5.0, "FlightSize 10, not 12");
        let off = TcpSpec {
            limited_transmit: false,
            ..spec()
        };
        let (mut tx, _) = sender(10.0, off);
        assert!(ack(&mut tx, 100, 0, false).is_empty());
        assert!(ack(&mut tx, 101, 0, false).is_empty());
    }

    /// `limited_transmit_sends`: after a timeout's go-back-N, the early
    /// duplicate ACKs of segments still in flight send nothing under RFC
    /// 3042 (no new data may go while old data is resent); ns-2 (`"next"`)
    /// sends the next segment in sequence, one the receiver may hold
    /// already (seen in ns-2.35's traces: the cause of its retransmissions
    /// exceeding its drops by about one per timeout).
    #[test]
    fn limited_transmit_after_a_timeout_new_or_next() {
        for (how, expect) in [
            (LimitedTransmitSends::New, vec![vec![], vec![]]),
            (LimitedTransmitSends::Next, vec![vec![1], vec![2]]),
        ] {
            let tcp = TcpSpec {
                limited_transmit_sends: how,
                ..spec()
            };
            let (mut tx, _) = sender(4.0, tcp); // 0..3 in flight
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(300), &mut out);
            assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![0]);
            // Segment 0 was lost; 1..3 arrive and are answered with ACK 0.
            let got: Vec<Vec<u64>> = (0..2)
                .map(|t| {
                    ack(&mut tx, 310 + t, 0, false)
                        .iter()
                        .map(|s| s.seq)
                        .collect()
                })
                .collect();
            assert_eq!(got, expect, "{how:?}");
            assert_eq!(tx.snd_max, 4, "{how:?}: nothing new was sent");
            if how == LimitedTransmitSends::Next {
                assert_eq!(tx.stats.retransmits, 3, "0 by the timer, 1 and 2 again");
            }
        }
    }

    /// RFC 3782 section 4's variants: "first" (Impatient, the default)
    /// re-arms the timer on the first partial ACK only; "every"
    /// (Slow-but-Steady) on each.
    #[test]
    fn partial_ack_timer_first_or_every() {
        for (mode, rearmed) in [
            (PartialAckTimer::First, false),
            (PartialAckTimer::Every, true),
        ] {
            let tcp = TcpSpec {
                partial_ack_timer: mode,
                limited_transmit: false,
                ..spec()
            };
            // Segments 0, 3 and 6 lost.
            let (mut tx, _) = sender(10.0, tcp);
            for t in 0..3 {
                ack(&mut tx, 100 + t, 0, false);
            }
            ack(&mut tx, 200, 3, false); // first partial ACK
            assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(500)));
            ack(&mut tx, 300, 6, false); // second partial ACK
            let want = if rearmed { 600 } else { 500 };
            assert_eq!(
                tx.rto_deadline,
                Some(SimTime::from_millis(want)),
                "{mode:?}"
            );
        }
    }

    /// RFC 6582 section 3.2 step 2 after a timeout: duplicate ACKs whose
    /// cumulative ACK only reaches the highest segment sent before the
    /// timeout (`recover` - 1), as the segments go-back-N resends without
    /// need draw them, start no fast retransmission; duplicate ACKs for a
    /// segment sent after the timeout beyond it do.
    #[test]
    fn no_fast_retransmit_until_the_ack_covers_more_than_recover() {
        let tcp = TcpSpec {
            limited_transmit: false,
            ..spec()
        };
        for (hole, fr) in [(8, 0), (9, 1)] {
            let (mut tx, _) = sender(8.0, tcp);
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(300), &mut out); // recover = 8
            assert_eq!(tx.recover, 8);
            // Everything before the timeout arrives: cumulative ACK 8, and
            // slow start sends new segments from 8 on.
            ack(&mut tx, 400, 8, false);
            ack(&mut tx, 401, hole, false);
            // Three duplicates of that ACK.
            for t in 0..3 {
                ack(&mut tx, 500 + t, hole, false);
            }
            assert_eq!(tx.stats.fast_retransmits, fr, "duplicate ACKs for {hole}");
        }
    }

    /// RFC 6582 section 4.1's ACK heuristic (`ack_heuristic`): after a
    /// timeout, three duplicate ACKs below `recover` start a fast
    /// retransmission when the cumulative ACK last advanced by at most four
    /// segments; without it they do not ("careful" rule).
    #[test]
    fn ack_heuristic_after_a_timeout() {
        for (heur, fr) in [(false, 0), (true, 1)] {
            let mut tcp = TcpSpec {
                limited_transmit: false,
                ..spec()
            };
            tcp.set_ack_heuristic(heur);
            let (mut tx, _) = sender(8.0, tcp);
            tx.on_rto(SimTime::from_millis(300), &mut Vec::new()); // recover = 8
            ack(&mut tx, 400, 1, false); // the retransmission of 0 arrives
            ack(&mut tx, 500, 2, false);
            ack(&mut tx, 501, 3, false); // cwnd grows to 3.x
            for t in 0..3 {
                ack(&mut tx, 600 + t, 3, false); // segment 3 lost again
            }
            assert_eq!(tx.stats.fast_retransmits, fr, "ack_heuristic = {heur}");
        }
    }
}
