//! Reno's window rules (RFC 5681), shared by Reno and NewReno: slow
//! start and congestion avoidance on new ACKs; on a loss ssthresh by eq.
//! (4) from the FlightSize (or, as switches, the window before recovery's
//! inflation, or ns-2.35's cut); one segment after a timeout; and RFC
//! 3168's answer to ECN-Echo: halve once per window, down to one segment,
//! then hold new data until the retransmission timer expires.
//!
//! Byte counting (`tcp.byte_counting`, RFC 3465, as Linux's
//! `tcp_slow_start` and `tcp_cong_avoid_ai` count), for an ACK that newly
//! acknowledges `acked` segments:
//!
//! ```text
//! slow start (cwnd < ssthresh):  cwnd = min(cwnd + acked, ssthresh)
//!                                the segments left over go on below
//! congestion avoidance:          cnt += acked;  w = floor(cwnd)
//!                                while cnt >= w: cnt -= w, cwnd += 1
//! ```
//!
//! so an ACK for two segments (a delayed ACK) grows the window as two ACKs
//! of one would: two segments per round trip in slow start (doubling) and
//! one per window in congestion avoidance, where counting ACKs gives 1.5
//! and 1/2. Where Linux and RFC 3465 differ, Linux: no limit L on the
//! segments one ACK may count (RFC 3465 section 2.2 suggests L = 2
//! segments in slow start); the congestion-avoidance counter is Linux's
//! integer `snd_cwnd_cnt` against the whole window (a counter reaching the
//! window at the start of an ACK first adds its segment, as
//! `tcp_cong_avoid_ai`), set to zero at every cut (`tcp_init_cwnd_reduction`,
//! `tcp_enter_loss`). Segments slow start uses to reach a fractional
//! ssthresh count whole (ceil) before the rest goes on. CUBIC's congestion
//! avoidance already counts the segments each ACK acknowledges (RFC 9438
//! section 4.4's per-ACK increment and `W_est`, section 4.3); byte counting
//! changes its slow start and hands it the left-over segments.

use super::CongestionControl;
use crate::scenario::{LossSsthresh, TcpVariant, TimeoutInRecovery};
use crate::transport::tcp::{Cut, Growth, TcpFlow};
use crate::units::SimTime;

/// Reno and NewReno (`tcp.variant = "reno"`, `"newreno"`): the trait's
/// default rules, RFC 5681 section 3.1's growth among them.
pub struct Reno;

impl CongestionControl for Reno {}

impl TcpFlow {
    /// The trait's default growth for algorithm `C`: +1 segment per new
    /// ACK in slow start, then `C`'s congestion avoidance (RFC 5681
    /// section 3.1 for Reno); a flow that counts segments:
    /// [`TcpFlow::counted_growth`].
    #[inline(always)]
    pub(in crate::transport::tcp) fn reno_growth<C: CongestionControl>(
        &mut self,
        now: SimTime,
        acked: u64,
    ) {
        if self.cfg.growth == Growth::Counted {
            self.counted_growth::<C>(now, acked);
        } else if self.cwnd < self.ssthresh {
            self.cwnd += 1.0; // slow start
        } else {
            C::avoidance(self, now, acked, false);
        }
    }

    /// Growth by the segments an ACK covers: HyStart++'s slow start
    /// (CUBIC's, `tcp.hystart`), then RFC 3465's byte counting if asked
    /// (module head), else Reno's slow start; congestion avoidance is
    /// `C`'s ([`CongestionControl::avoidance`]).
    #[inline(never)]
    pub(in crate::transport::tcp) fn counted_growth<C: CongestionControl>(
        &mut self,
        now: SimTime,
        acked: u64,
    ) {
        if self.ssthresh == f64::INFINITY
            && self.cfg.tcp.hystart()
            && self.hystart_slow_start(acked)
        {
            return;
        }
        if !self.cfg.tcp.byte_counting {
            // Counted growth without byte counting: HyStart++ (above) or
            // DCTCP; congestion avoidance per ACK.
            if self.cwnd < self.ssthresh {
                self.cwnd += 1.0;
            } else {
                C::avoidance(self, now, acked, false);
            }
            return;
        }
        let mut acked = acked;
        if self.cwnd < self.ssthresh {
            // RFC 3465 section 2.2 (Linux's tcp_slow_start): by the
            // segments acknowledged, up to ssthresh.
            let room = self.ssthresh - self.cwnd;
            if acked as f64 <= room {
                self.cwnd += acked as f64;
                return;
            }
            self.cwnd = self.ssthresh;
            acked -= room.ceil() as u64;
            if acked == 0 {
                return;
            }
        }
        C::avoidance(self, now, acked, true);
    }

    /// RFC 3465 section 2.1 (Linux's tcp_cong_avoid_ai): one segment per
    /// window of segments acknowledged.
    #[inline]
    pub(in crate::transport::tcp) fn counted_avoidance(&mut self, acked: u64) {
        let w = (self.cwnd as u32).max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1.0;
        }
        self.cwnd_cnt = self
            .cwnd_cnt
            .saturating_add(u32::try_from(acked).unwrap_or(u32::MAX));
        if self.cwnd_cnt >= w {
            let more = self.cwnd_cnt / w;
            self.cwnd_cnt -= more * w;
            self.cwnd += f64::from(more);
        }
    }

    /// RFC 3168 section 6.1.2's answer to an ACK's ECN-Echo (`ece`:
    /// echoed, and the flow is ECN-capable): halve at most once per window
    /// of data, like a loss (ssthresh by `C`'s rule) but down to one
    /// segment. An ECE that finds a one-segment window (cwnd in [1, 2))
    /// resets the retransmission timer, and new data waits for it to
    /// expire; with `ecn_backoff` (ns-2's `ecn_backoff_`) a second such ECE
    /// in a row doubles the timer first. With `ecn_hold` off the floor is
    /// two segments and there is no hold, as in Linux.
    ///
    /// With `tcp.ecn_reduction = "prr"` Linux's CWR state instead
    /// (`cwr.rs`): ssthresh at once, the window by PRR over the round.
    #[inline]
    pub(in crate::transport::tcp) fn rfc3168_echo<C: CongestionControl>(
        &mut self,
        now: SimTime,
        ack: u64,
        ece: bool,
    ) {
        if self.cfg.tcp.ecn_prr() {
            if self.cwr_echo(ack, ece) {
                let half = (self.outstanding() as f64 / 2.0).max(2.0);
                self.ssthresh = C::event_ssthresh(self, half);
                self.cwr_enter();
            }
            return;
        }
        if ece && !self.in_recovery && self.snd_una >= self.ecn_recover {
            // Without `ecn_hold` (Linux: `tcp_init_cwnd_reduction` with
            // Reno's ssthresh, max(cwnd / 2, 2)) the window stops at two
            // segments and nothing waits for the timer.
            let floor = if self.cfg.tcp.ecn_hold { 1.0 } else { 2.0 };
            if self.cwnd < 2.0 && self.cfg.tcp.ecn_hold {
                if self.cfg.tcp.ecn_backoff() && self.ecn_backoff_on {
                    self.rto = (self.rto + self.rto).min(self.cfg.tcp.max_rto);
                }
                self.ecn_backoff_on = true;
                self.ecn_hold = true;
                self.rto_deadline = Some(now + self.rto);
            } else {
                self.ecn_backoff_on = false;
            }
            let half = (self.outstanding() as f64 / 2.0).max(floor);
            self.ssthresh = C::event_ssthresh(self, half);
            self.cwnd = self.ssthresh;
            self.ecn_recover = self.snd_max;
            self.recover = self.snd_max;
            self.last_cut = Cut::Ecn;
            self.cwr_pending = true;
            self.cwnd_cnt = 0;
            self.stats.ecn_reductions += 1;
        } else if !ece {
            self.ecn_backoff_on = false;
        }
    }

    /// The cut at a fast retransmission: ssthresh by RFC 5681 eq. (4)
    /// ([`TcpFlow::halve`], then `C`'s rule) and the window fast recovery
    /// returns to (`exit_cwnd`), or no cut at all without `dupack_halving`
    /// (the wireless TCP) or for a loss in a window an ECN reduction
    /// already answered (`after_ecn`; DCTCP cuts again, as Linux enters
    /// recovery with a new ssthresh after CWR).
    #[inline]
    pub(in crate::transport::tcp) fn reno_loss_cut<C: CongestionControl>(
        &mut self,
        after_ecn: bool,
    ) {
        let halve =
            self.cfg.tcp.dupack_halving() && (!after_ecn || self.cfg.tcp.variant.scalable());
        self.cwnd_cnt = 0;
        if halve {
            // ns-2 sets `cwnd_` to half its window, unrounded,
            // when it retransmits; recovery leaves with that.
            let half = self.ns2_window() / 2.0;
            let reno = self.halve();
            self.ssthresh = C::event_ssthresh(self, reno);
            self.exit_cwnd = match self.cfg.tcp.loss_ssthresh {
                LossSsthresh::Ns2 if self.cfg.tcp.variant != TcpVariant::Cubic => half.max(1.0),
                _ => self.ssthresh,
            };
            // RFC 3168 section 6.1.2: CWR after any reduction.
            self.cwr_pending = self.cfg.tcp.ecn;
        } else {
            self.exit_cwnd = self.cwnd;
        }
    }

    /// The cut at a retransmission timeout: ssthresh by eq. (4) and `C`'s
    /// rule (unless an ECN reduction in this window already halved it, RFC
    /// 3168 section 6.1.2) and a window of one segment (RFC 5681 section
    /// 3.1).
    #[inline]
    pub(in crate::transport::tcp) fn reno_timeout_cut<C: CongestionControl>(&mut self) {
        // A timeout during fast recovery keeps the cut the recovery made,
        // as Linux's `tcp_enter_loss` does (`timeout_in_recovery =
        // "keep"`); ns-2 cuts again.
        let kept = self.in_recovery
            && self.cfg.tcp.timeout_in_recovery == TimeoutInRecovery::Keep
            && C::KEEPS_RECOVERY_CUT;
        let ecn_cut = self.last_cut == Cut::Ecn && self.snd_una < self.recover;
        if !kept && !ecn_cut {
            // After an ECN reduction in this window ssthresh was
            // already halved for it (RFC 3168 section 6.1.2).
            let reno = self.halve();
            self.ssthresh = C::timeout_ssthresh(self, reno);
        }
        self.cwnd = 1.0;
        self.cwnd_cnt = 0;
    }

    pub(in crate::transport::tcp) fn halve(&mut self) -> f64 {
        // RFC 5681 eq. (4); segments sent by limited transmit are not part
        // of FlightSize here (RFC 5681 section 3.2 step 2, RFC 3042).
        let flight = self.outstanding().saturating_sub(self.lt_sent) as f64;
        match self.cfg.tcp.loss_ssthresh {
            LossSsthresh::Flight => (flight / 2.0).max(2.0),
            // The window before recovery's inflation: a timeout that ends a
            // fast recovery would otherwise count the segments the inflated
            // window let out as part of the flight, and set ssthresh above
            // the value the recovery had already halved to.
            LossSsthresh::Window => (flight.min(self.uninflated().floor()) / 2.0).max(2.0),
            // ns-2's `ssthresh_` is an integer: (int) (windowd() / 2), at least 2.
            LossSsthresh::Ns2 => (self.ns2_window() / 2.0).floor().max(2.0),
        }
    }

    /// The window without fast recovery's inflation.
    pub(in crate::transport::tcp) fn uninflated(&self) -> f64 {
        if self.in_recovery {
            self.exit_cwnd
        } else {
            self.cwnd
        }
    }

    /// ns-2's `windowd()`: its `cwnd_` (never inflated) bounded by the
    /// receiver's window.
    pub(in crate::transport::tcp) fn ns2_window(&self) -> f64 {
        self.uninflated().min(f64::from(self.cfg.tcp.rwnd))
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::{ack, cfg, deliver, sender, spec};
    use super::super::super::{Seg, TcpConfig};
    use super::*;
    use crate::packet::{flags, Ecn};
    use crate::scenario::{RecoveryExit, TcpSpec, TcpVariant, TimeoutInRecovery};

    #[test]
    fn slow_start_doubles_per_round() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut rx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert_eq!(out.len(), 1);
        for round in 1..5 {
            let acks = deliver(&mut rx, &out, &[]);
            out.clear();
            for a in &acks {
                tx.on_ack(SimTime(round * 100), a.seq, a.flags, a.ecn, &mut out);
            }
            assert_eq!(tx.cwnd, (1u64 << round) as f64);
            assert_eq!(out.len(), 1 << round);
        }
    }

    #[test]
    fn ecn_echo_until_cwr_and_one_reduction_per_window() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        tx.cwnd = 8.0;
        tx.ssthresh = 8.0;
        let mut rx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        assert!(out.iter().all(|s| s.ecn == Ecn::Ect0));
        // Two packets of the window carry CE.
        for s in out.iter_mut().filter(|s| s.seq == 1 || s.seq == 3) {
            s.ecn = Ecn::Ce;
        }
        let acks = deliver(&mut rx, &out, &[]);
        assert!(acks[0].flags & flags::ECE == 0);
        assert!(acks[1..].iter().all(|a| a.flags & flags::ECE != 0));
        assert!(acks.iter().all(|a| a.ecn == Ecn::NotEct));
        out.clear();
        for a in &acks {
            tx.on_ack(SimTime(1), a.seq, a.flags, a.ecn, &mut out);
        }
        assert_eq!(tx.stats.ecn_reductions, 1);
        assert_eq!(rx.stats.marks_seen, 2);
        // The first new segment carries CWR, after which the receiver stops echoing.
        let cwr: Vec<&Seg> = out.iter().filter(|s| s.flags & flags::CWR != 0).collect();
        assert_eq!(cwr.len(), 1);
        let acks = deliver(&mut rx, &out, &[]);
        let first_cwr = out.iter().position(|s| s.flags & flags::CWR != 0).unwrap();
        assert!(acks[first_cwr..].iter().all(|a| a.flags & flags::ECE == 0));
    }

    /// RFC 3168 section 6.1.2: an ECE halves the window down to one segment
    /// (not two as after a loss); an ECE at one segment resets the timer and
    /// new data waits for it to expire, without a timeout being counted.
    #[test]
    fn ecn_window_reaches_one_segment_then_waits_for_the_timer() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::NewReno));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out); // one segment (initial window 1)
        assert_eq!(out.len(), 1);
        out.clear();
        // Its ACK echoes congestion: flight 1 -> cwnd max(1/2, 1) = 1, and
        // cwnd was already 1, so the sender holds.
        tx.on_ack(
            SimTime(100),
            1,
            flags::ACK | flags::ECE,
            Ecn::NotEct,
            &mut out,
        );
        assert_eq!(tx.cwnd, 1.0);
        assert!(out.is_empty(), "no new data during the hold");
        let deadline = tx.rto_deadline.expect("timer reset for the hold");
        tx.on_rto(deadline, &mut out);
        assert_eq!(out.len(), 1, "one new segment when the timer expires");
        assert_eq!(out[0].seq, 1);
        assert_eq!(tx.stats.timeouts, 0);
        assert_eq!(tx.stats.ecn_reductions, 1);
    }

    /// RFC 3168 section 6.1.2: an ACK carrying ECE does not open the
    /// window, whether or not it is the one that triggered the reduction.
    #[test]
    fn ece_acks_do_not_open_the_window() {
        let (mut tx, _) = sender(8.0, spec());
        ack(&mut tx, 100, 1, true); // the reduction: 8 -> 7 outstanding / 2
        let after_cut = tx.cwnd;
        for a in 2..6 {
            ack(&mut tx, 100 + a, a, true);
        }
        assert_eq!(tx.cwnd, after_cut);
        ack(&mut tx, 110, 6, false);
        assert!(tx.cwnd > after_cut);
    }

    /// The hold of RFC 3168 section 6.1.2 starts at a one-segment window,
    /// cwnd in [1, 2), not only at cwnd <= 1.
    #[test]
    fn ecn_hold_starts_below_two_segments() {
        let (mut tx, _) = sender(1.5, spec());
        let out = ack(&mut tx, 100, 1, true);
        assert!(out.is_empty(), "no new data during the hold");
        assert_eq!(tx.cwnd, 1.0);
        assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(100 + 300)));
    }

    /// `ecn_hold = false` (Linux): an ECE at a window of 1.5 leaves
    /// ssthresh and the window at two segments, and the next segment goes
    /// at once (no hold); 3 in flight halve to 2 too.
    #[test]
    fn without_the_hold_the_window_stops_at_two_segments() {
        let tcp = TcpSpec {
            ecn_hold: false,
            ..spec()
        };
        let (mut tx, _) = sender(1.5, tcp);
        let out = ack(&mut tx, 100, 1, true);
        assert_eq!((tx.cwnd, tx.ssthresh), (2.0, 2.0));
        assert_eq!(out.len(), 2, "segments 1 and 2 go: no hold");
        assert!(!tx.ecn_hold);
    }

    /// ns-2's `ecn_backoff_` (`tcp.ecn_backoff`, on by default): a second
    /// ECE in a row at one segment doubles the timer of the hold; off, the
    /// hold lasts one RTO each time (250 ms after the new RTT sample).
    #[test]
    fn ecn_backoff_doubles_the_hold() {
        for (backoff, second_hold) in [(true, 600), (false, 250)] {
            let mut tcp = spec();
            tcp.set_ecn_backoff(backoff);
            let (mut tx, _) = sender(1.0, tcp);
            ack(&mut tx, 100, 1, true);
            assert_eq!(tx.rto_deadline, Some(SimTime::from_millis(400)));
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(400), &mut out);
            assert_eq!(out.len(), 1, "one new segment after the hold");
            assert_eq!(tx.stats.timeouts, 0);
            // Its ACK echoes ECE again: hold again.
            let out = ack(&mut tx, 500, 2, true);
            assert!(out.is_empty());
            assert_eq!(
                tx.rto_deadline,
                Some(SimTime::from_millis(500 + second_hold)),
                "ecn_backoff = {backoff}"
            );
        }
    }

    /// RFC 3168 section 6.1.2: CWR on the first new segment after any
    /// window reduction, a fast retransmission or a timeout too.
    #[test]
    fn cwr_follows_every_window_reduction() {
        let (mut tx, _) = sender(10.0, spec());
        for t in 0..3 {
            ack(&mut tx, 100 + t, 0, false);
        }
        // Dupacks inflate the window until new data may go; the first new
        // segment carries CWR, the retransmission does not.
        let mut sent = Vec::new();
        for t in 0..8 {
            sent.extend(ack(&mut tx, 110 + t, 0, false));
        }
        let first_new = sent.iter().find(|s| s.flags & flags::RETX == 0).unwrap();
        assert!(first_new.flags & flags::CWR != 0);
        // A timeout, then the go-back-N retransmission and the first new
        // segment after it.
        let (mut tx, _) = sender(4.0, spec());
        let mut out = Vec::new();
        tx.on_rto(SimTime::from_millis(300), &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].flags & flags::CWR == 0, "a retransmission");
        let mut out = Vec::new();
        tx.on_ack(
            SimTime::from_millis(400),
            4,
            flags::ACK,
            Ecn::NotEct,
            &mut out,
        );
        assert!(out[0].flags & flags::CWR != 0, "{:?}", out);
    }

    /// `cwr_on_retransmit` (ns-2's `SetCWRonRetransmit_`): CWR goes on the
    /// first data segment after the reduction, the fast retransmission or
    /// the timeout's, and not again on the first new segment.
    #[test]
    fn cwr_on_the_retransmission_as_ns2_sets_it() {
        let mut t = spec();
        t.set_cwr_on_retransmit(true);
        let (mut tx, _) = sender(10.0, t);
        let mut sent = Vec::new();
        for t in 0..11 {
            sent.extend(ack(&mut tx, 100 + t, 0, false));
        }
        assert_eq!(tx.stats.fast_retransmits, 1);
        let retx = sent.iter().find(|s| s.flags & flags::RETX != 0).unwrap();
        assert_eq!(retx.seq, 0);
        assert!(retx.flags & flags::CWR != 0, "{sent:?}");
        let new: Vec<_> = sent.iter().filter(|s| s.flags & flags::RETX == 0).collect();
        assert!(!new.is_empty());
        assert!(new.iter().all(|s| s.flags & flags::CWR == 0), "{new:?}");
        // A timeout: the go-back-N retransmission carries it.
        let (mut tx, _) = sender(4.0, t);
        let mut out = Vec::new();
        tx.on_rto(SimTime::from_millis(300), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].flags & (flags::RETX | flags::CWR),
            flags::RETX | flags::CWR
        );
    }

    /// RFC 3168 section 6.1.2: one reduction per window for marks and
    /// losses together. After an ECN halving, a loss in the same window is
    /// retransmitted on three duplicate ACKs without halving again.
    #[test]
    fn loss_in_an_ecn_reduced_window_does_not_halve_again() {
        let (mut tx, _) = sender(16.0, spec());
        // Segment 0 is lost; segment 1 was CE-marked: the first duplicate
        // ACK echoes ECE and halves the window (flight 16 -> 8).
        ack(&mut tx, 100, 0, true);
        assert_eq!((tx.cwnd, tx.ssthresh), (8.0, 8.0));
        ack(&mut tx, 101, 0, true);
        let out = ack(&mut tx, 102, 0, true);
        assert_eq!(out[0].seq, 0);
        assert_eq!(out[0].flags & flags::RETX, flags::RETX);
        assert_eq!(tx.stats.fast_retransmits, 1);
        assert_eq!(tx.ssthresh, 8.0, "no second halving");
        assert_eq!(tx.stats.ecn_reductions, 1);
    }

    /// `tcp.loss_ssthresh` with `timeout_in_recovery = "cut"`: a timeout
    /// that ends a fast recovery halves the flight (which the inflated
    /// window let grow) with `"flight"`, and the window the recovery
    /// started from with `"window"` (ns-2's `cwnd_`). With `"keep"` (the
    /// default, Linux) ssthresh stays at the recovery's 10.
    #[test]
    fn loss_ssthresh_flight_or_window_after_a_timeout_in_recovery() {
        let mut got = Vec::new();
        for (how, when) in [
            (LossSsthresh::Flight, TimeoutInRecovery::Cut),
            (LossSsthresh::Window, TimeoutInRecovery::Cut),
            (LossSsthresh::Flight, TimeoutInRecovery::Keep),
            (LossSsthresh::Window, TimeoutInRecovery::Keep),
        ] {
            let tcp = TcpSpec {
                loss_ssthresh: how,
                timeout_in_recovery: when,
                limited_transmit: false,
                ..TcpSpec::default()
            };
            let (mut tx, _) = sender(20.0, tcp);
            // Segment 0 lost: three duplicate ACKs, then 17 more inflate
            // the window and let new segments out.
            for _ in 0..20 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            assert_eq!(tx.ssthresh, 10.0);
            assert!(tx.outstanding() > 20, "the inflation sent new data");
            let flight = tx.outstanding() as f64;
            let mut out = Vec::new();
            let deadline = tx.rto_deadline.unwrap();
            tx.on_rto(deadline, &mut out);
            assert_eq!(tx.stats.timeouts, 1);
            got.push((tx.ssthresh, flight));
        }
        let ((ss_flight, flight), (ss_window, _)) = (got[0], got[1]);
        assert_eq!(ss_flight, flight / 2.0);
        assert!(ss_flight > 10.0);
        assert_eq!(ss_window, 5.0, "half the window of 10 the recovery left");
        assert_eq!((got[2].0, got[3].0), (10.0, 10.0), "kept");
    }

    /// `tcp.loss_ssthresh = "ns2"`: ns-2.35's cut of a window of 21.5
    /// segments (its `cwnd_` trace shows 20.649 -> 10.325, ssthresh 10):
    /// ssthresh floor(21.5 / 2) = 10, recovery left at 10.75 unrounded,
    /// where `"window"` halves the whole segments (10.5 for both); a timeout
    /// in the recovery halves 10.75 again, to 5.
    #[test]
    fn loss_ssthresh_ns2_cuts_as_ns2() {
        let run = |how: LossSsthresh, timeout: bool| {
            let tcp = TcpSpec {
                loss_ssthresh: how,
                timeout_in_recovery: TimeoutInRecovery::Cut,
                recovery_exit: RecoveryExit::Ssthresh,
                limited_transmit: false,
                ..TcpSpec::default()
            };
            let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, false));
            tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
            tx.cwnd = 21.5;
            tx.ssthresh = 21.5;
            tx.start(SimTime(0), &mut Vec::new());
            for _ in 0..3 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            let ssthresh = tx.ssthresh;
            if timeout {
                let deadline = tx.rto_deadline.unwrap();
                tx.on_rto(deadline, &mut Vec::new());
                return (ssthresh, tx.ssthresh);
            }
            // The retransmission fills the only hole: all 21 acknowledged.
            ack(&mut tx, 200, 21, false);
            assert!(!tx.in_recovery);
            (ssthresh, tx.cwnd)
        };
        assert_eq!(run(LossSsthresh::Ns2, false), (10.0, 10.75));
        assert_eq!(run(LossSsthresh::Window, false), (10.5, 10.5));
        assert_eq!(run(LossSsthresh::Ns2, true), (10.0, 5.0));
        assert_eq!(run(LossSsthresh::Window, true), (10.5, 5.0));
    }

    /// `002_80945567bf68047d.txt` section 5: with `dupack_halving = false`
    /// a loss found by duplicate ACKs is retransmitted without halving;
    /// a mark and a timeout still halve.
    #[test]
    fn wireless_tcp_keeps_its_window_on_duplicate_acks() {
        let mut tcp = TcpSpec {
            limited_transmit: false,
            ..spec()
        };
        tcp.set_dupack_halving(false);
        let (mut tx, _) = sender(10.0, tcp);
        for t in 0..3 {
            ack(&mut tx, 100 + t, 0, false);
        }
        assert_eq!(tx.stats.fast_retransmits, 1);
        assert_eq!(tx.ssthresh, 10.0);
        // The retransmission is acknowledged with everything: back to 10.
        let mut out = Vec::new();
        tx.on_ack(
            SimTime::from_millis(200),
            10,
            flags::ACK,
            Ecn::NotEct,
            &mut out,
        );
        assert!(!tx.in_recovery);
        assert_eq!(tx.ssthresh, 10.0, "slow start back to the old window");
        // A mark halves.
        let (mut tx, _) = sender(10.0, tcp);
        ack(&mut tx, 100, 1, true);
        assert_eq!(tx.cwnd, 5.0);
        // A timeout halves ssthresh and restarts from one segment.
        let (mut tx, _) = sender(10.0, tcp);
        tx.on_rto(SimTime::from_millis(300), &mut Vec::new());
        assert_eq!((tx.cwnd, tx.ssthresh), (1.0, 5.0));
    }

    /// RFC 3465 (`tcp.byte_counting`) as Linux counts, in congestion
    /// avoidance at cwnd 10 with ACKs of two segments each (delayed ACKs):
    /// the counter reaches 10 at the fifth ACK (cwnd 11, counter 0), then
    /// 12 at the eleventh, one window of 11 and one over (cwnd 12, counter
    /// 1): one segment per window of segments. Counting ACKs, the same 11
    /// ACKs give 10 + 1/10 + 1/10.1 + ... = 11.0499, half the growth.
    #[test]
    fn byte_counting_in_congestion_avoidance() {
        let tcp = TcpSpec {
            byte_counting: true,
            limited_transmit: false,
            ..TcpSpec::default()
        };
        let (mut tx, _) = sender(10.0, tcp);
        for k in 1..=11 {
            ack(&mut tx, 100 + k, 2 * k, false);
            if k == 5 {
                assert_eq!((tx.cwnd, tx.cwnd_cnt), (11.0, 0));
            }
        }
        assert_eq!((tx.cwnd, tx.cwnd_cnt), (12.0, 1));
        let (mut tx, _) = sender(10.0, TcpSpec::default());
        for k in 1..=11 {
            ack(&mut tx, 100 + k, 2 * k, false);
        }
        assert!((tx.cwnd - 11.0499).abs() < 1e-4, "{}", tx.cwnd);
    }

    /// Slow start with byte counting (Linux's tcp_slow_start): cwnd 2,
    /// ssthresh 5, ACKs of two segments: 2 -> 4, then min(4 + 2, 5) = 5
    /// and the segment left over goes to congestion avoidance (counter 1);
    /// counting ACKs: 2 -> 3 -> 4. A cut clears the counter.
    #[test]
    fn byte_counting_in_slow_start() {
        let tcp = TcpSpec {
            byte_counting: true,
            limited_transmit: false,
            ..spec()
        };
        for (counted, want) in [(true, [4.0, 5.0]), (false, [3.0, 4.0])] {
            let (mut tx, _) = sender(
                2.0,
                TcpSpec {
                    byte_counting: counted,
                    ..tcp
                },
            );
            tx.ssthresh = 5.0;
            ack(&mut tx, 100, 2, false);
            assert_eq!(tx.cwnd, want[0], "byte_counting = {counted}");
            ack(&mut tx, 101, 4, false);
            assert_eq!(tx.cwnd, want[1], "byte_counting = {counted}");
            if counted {
                assert_eq!(tx.cwnd_cnt, 1);
                ack(&mut tx, 102, 5, true); // an ECN cut
                assert_eq!(tx.cwnd_cnt, 0);
            }
        }
    }

    /// HyStart++ chooses the counted growth for its slow start; without
    /// byte counting CUBIC's congestion avoidance must stay CUBIC's: 30
    /// ACKs of two segments from cwnd = ssthresh = 10 give the same window
    /// with HyStart++ on as off (CUBIC's, not Reno's 10 + 1/10 + ...).
    #[test]
    fn hystart_without_byte_counting_keeps_cubics_avoidance() {
        let run = |hystart: bool| {
            let mut tcp = TcpSpec {
                variant: TcpVariant::Cubic,
                byte_counting: false,
                limited_transmit: false,
                rtt_estimator: crate::scenario::RttEstimator::Linux,
                ..TcpSpec::default()
            };
            tcp.set_hystart(hystart);
            let (mut tx, _) = sender(10.0, tcp);
            for k in 1..=30 {
                ack(&mut tx, 100 + 10 * k, 2 * k, false);
            }
            tx.cwnd
        };
        let (on, off) = (run(true), run(false));
        assert_eq!(on, off);
        let mut reno = 10.0_f64;
        for _ in 0..30 {
            reno += 1.0 / reno;
        }
        assert!(
            (off - reno).abs() > 1e-3,
            "CUBIC {off} against Reno's {reno}"
        );
    }

    /// The growth rule is chosen once per flow: Reno's per-ACK rules
    /// unless byte counting or DCTCP asks for the counted ones.
    #[test]
    fn growth_follows_variant_and_byte_counting() {
        use crate::transport::tcp::Growth;
        let g = |variant, byte_counting| {
            let tcp = TcpSpec {
                variant,
                byte_counting,
                ecn: true,
                ..TcpSpec::default()
            };
            TcpConfig::from_spec(&tcp, false, true).growth
        };
        assert_eq!(g(TcpVariant::NewReno, false), Growth::Reno);
        assert_eq!(g(TcpVariant::Reno, false), Growth::Reno);
        assert_eq!(g(TcpVariant::Cubic, false), Growth::Cubic);
        assert_eq!(g(TcpVariant::Dctcp, false), Growth::Counted);
        assert_eq!(g(TcpVariant::NewReno, true), Growth::Counted);
        assert_eq!(g(TcpVariant::Cubic, true), Growth::Counted);
    }
}
