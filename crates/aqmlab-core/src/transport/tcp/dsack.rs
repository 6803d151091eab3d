//! D-SACK at the sender (`tcp.dsack`; RFC 2883, RFC 3708's use of it):
//! what a report of a segment received twice tells, as Linux reads it
//! (`tcp_check_dsack`, `tcp_dsack_seen`, `tcp_sacktag_one`,
//! `tcp_try_undo_dsack` and `tcp_try_undo_recovery` in `tcp_input.c`).
//! The receiver's side is in `sack.rs`.
//!
//! - **Which block is one** (`tcp_check_dsack`): the ACK's first block
//!   when it lies below the cumulative ACK, or inside its second block.
//!   It is not a SACK of new data: the scoreboard does not see it.
//! - **Dubious reports** (`tcp_dsack_seen`): a flow that is told of more
//!   duplicates than it ever sent again ignores the report.
//! - **What it counts**: each accepted report is a segment delivered
//!   (Linux's `sack_delivered`: PRR and the window's growth count it), and
//!   it ends a tail loss probe's episode without a cut when it reports the
//!   probe's segment (`FLAG_DSACK_TLP`, `tcp_process_tlp_ack`).
//! - **The undo** (`undo_marker`, `undo_retrans`): when a recovery or a
//!   retransmission timeout cuts the window, the flow notes the cumulative
//!   ACK then (the marker) and the retransmissions already outstanding
//!   (or none); every retransmission after it adds one, every report of a
//!   segment beyond the marker that was sent again takes one away. When
//!   none is left, every retransmission since the cut was needless and
//!   the cut is undone (`tcp_undo_cwnd_reduction` without forgetting the
//!   loss marks): the window becomes the larger of the window now and the
//!   window before, ssthresh the larger of the two, as the echo's undo does
//!   (`undo.rs`). Where: on an ACK that advances during a timeout's
//!   retransmissions (`tcp_try_undo_loss`), at a recovery's end in place of
//!   the window's last step to ssthresh (`tcp_try_undo_recovery`), and on
//!   an ACK that tells of losses or reports a
//!   duplicate in a recovery (which it ends) or in the open state, late
//!   reports undoing an ended recovery's cut (`tcp_try_undo_dsack`). An ECN
//!   reduction clears the marker (`tcp_enter_cwr`): congestion was shown.
//!   Tail loss probes' retransmissions do not count
//!   (`tcp_send_loss_probe` calls `__tcp_retransmit_skb`).
//!
//! With RACK an accepted report, once reordering was seen, widens RACK's
//! reordering window, and a report of a copy whose original was SACKed
//! shows reordering (`reorder.rs`).
//!
//! Not modelled: the undo of a fast recovery by the echoed timestamp
//! (`tcp_packet_delayed` in `tcp_try_undo_recovery` and
//! `tcp_try_undo_partial`).

use super::sack_recovery::Lr;
use super::scoreboard::{EVER, SACKED};
use super::TcpFlow;

/// What the D-SACK of one ACK told ([`TcpFlow::dsack_ack`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Dsack {
    /// The first block is a D-SACK (accepted or not): the scoreboard skips it.
    pub first: bool,
    /// Segments it reports delivered again (0 if dubious or none).
    pub segs: u64,
    /// It reports the outstanding tail loss probe's segment.
    pub tlp: bool,
    /// The lowest segment it reports (accepted, above the cumulative ACK)
    /// that was sent again after its original was SACKed: reordering
    /// (`tcp_sacktag_one`, `reorder.rs`).
    pub reord: Option<u64>,
}

impl TcpFlow {
    /// The ACK for `ack` with `ranges` (its blocks in the order sent),
    /// before the scoreboard sees them: whether the first is a
    /// D-SACK, and what it counts.
    pub(super) fn dsack_ack(&mut self, lr: &mut Lr, ranges: &[(u64, u64)], ack: u64) -> Dsack {
        let Some(&(s0, e0)) = ranges.first() else {
            return Dsack::default();
        };
        let below = s0 < ack;
        let inside = ranges.get(1).is_some_and(|&(s1, e1)| s1 <= s0 && e0 <= e1);
        if !(below || inside) {
            return Dsack::default();
        }
        let mut d = Dsack {
            first: true,
            ..Dsack::default()
        };
        let segs = e0.saturating_sub(s0);
        if segs == 0 {
            return d;
        }
        let tlp = segs == 1 && lr.rack.as_ref().is_some_and(|r| r.tlp_high == Some(e0));
        // Linux flags the probe's report before it weighs the report.
        d.tlp = tlp;
        lr.dsack_dups += segs;
        if lr.dsack_dups > lr.retrans_total {
            return d; // more duplicates than segments ever sent again
        }
        self.stats.dsacks += 1;
        d.segs = segs;
        if let Some(r) = lr.rack.as_mut() {
            r.reorder.on_dsack(tlp);
            d.reord = (s0.max(self.snd_una)..e0.min(self.snd_max))
                .find(|&q| lr.sb.slot(q).bits & (SACKED | EVER) == SACKED | EVER);
        }
        // `undo_retrans`: a report of a segment beyond the marker, sent
        // again (one still on the scoreboard), or one already cumulatively
        // acknowledged before this ACK (Linux's count for forgotten data).
        if let Some(marker) = lr.undo_marker {
            if lr.undo_retrans > 0 && e0 > marker {
                let counts = if e0 <= self.snd_una {
                    true
                } else {
                    (s0..e0.min(self.snd_max))
                        .filter(|&q| q >= self.snd_una)
                        .all(|q| lr.sb.slot(q).bits & EVER != 0)
                };
                if counts {
                    lr.undo_retrans = (lr.undo_retrans - segs as i64).max(0);
                }
            }
        }
        d
    }

    /// A recovery or a timeout's cut: the marker and the retransmissions
    /// outstanding (Linux's `tcp_init_undo`). `ecn`: an ECN reduction is
    /// under way, which leaves no marker (as `tcp_enter_cwr` cleared it).
    pub(super) fn dsack_mark(lr: &mut Lr, snd_una: u64, ecn_reductions: u64, ecn: bool) {
        lr.undo_marker = (!ecn).then_some(snd_una);
        lr.undo_ecn = ecn_reductions;
        lr.undo_retrans = if lr.sb.retrans_out > 0 {
            lr.sb.retrans_out as i64
        } else {
            -1
        };
    }

    /// A segment is sent again (not as a tail loss probe).
    #[inline]
    pub(super) fn dsack_resent(lr: &mut Lr) {
        lr.undo_retrans = lr.undo_retrans.max(0) + 1;
    }

    /// Every retransmission since the marker was reported needless
    /// (Linux's `!undo_retrans` in `tcp_may_undo`, `tcp_try_undo_dsack`).
    #[inline]
    pub(super) fn dsack_all(&self, lr: &Lr) -> bool {
        self.cfg.tcp.dsack()
            && lr.undo_marker.is_some()
            && lr.undo_retrans == 0
            && lr.undo_ecn == self.stats.ecn_reductions
    }

    /// Undo the cut the marker notes, the loss marks kept (Linux's
    /// `tcp_undo_cwnd_reduction(sk, false)`); a recovery under way ends.
    pub(super) fn dsack_undo(&mut self, lr: &mut Lr) {
        self.restore(lr);
        self.in_recovery = false;
        self.stats.dsack_undos += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{recovery_spec, Net};

    fn dsack_spec(timestamps: bool) -> crate::scenario::TcpSpec {
        let mut t = recovery_spec(timestamps, false, false);
        t.set_dsack(true);
        t
    }

    /// The delay spike of `undo.rs` without timestamps or F-RTO: the
    /// timer fires though nothing was lost, and the flight goes again; each
    /// copy arrives after its original and the receiver reports it. Once
    /// every retransmission since the timeout is reported, the cut is
    /// undone: the window is back to at least what it was before the spike.
    /// Without D-SACK nothing undoes it.
    #[test]
    fn a_spurious_timeout_is_undone_by_dsacks() {
        let (on, before) = Net::delay_spike(dsack_spec(false));
        let (off, _) = Net::delay_spike(recovery_spec(false, false, false));
        let s = on.tx.stats;
        eprintln!(
            "before {before:.1}; timeouts {}, resent after 3 s {}, dsacks {}, undos {}; \
             cwnd at 4.5 s {:.1} (without {:.1}), at 6 s {:.1} (without {:.1})",
            s.timeouts,
            on.resent_from(3000),
            s.dsacks,
            s.dsack_undos,
            on.cwnd_at(4500),
            off.cwnd_at(4500),
            on.tx.cwnd,
            off.tx.cwnd,
        );
        assert_eq!(s.timeouts, 1);
        assert_eq!(off.tx.stats.dsacks, 0);
        assert_eq!(s.dsacks as usize, on.resent_from(3000));
        assert_eq!(s.dsack_undos, 1);
        assert_eq!(off.tx.stats.dsack_undos, 0);
        assert!(on.tx.cwnd >= before, "{} against {before}", on.tx.cwnd);
        assert!(off.tx.cwnd < before, "{} against {before}", off.tx.cwnd);
    }

    /// Reordering: the path's delay drops from 50 to 2 ms each way at 2 s,
    /// so the segments sent after overtake the last ones sent before; RACK
    /// deems some of those lost and a recovery sends them again, but the
    /// originals arrive, and the copies are reported duplicate. With
    /// D-SACK the recovery's cut is undone once every copy is reported;
    /// without, it stands. Measured: one recovery each, 5 segments sent
    /// again, 5 D-SACKs and one undo; the window at 3 s 51.5 against 43.0.
    #[test]
    fn reordering_recovery_is_undone_by_dsacks() {
        const OWD_AFTER: u64 = 2;
        let run = |dsack: bool| {
            let mut t = recovery_spec(true, true, true);
            t.set_dsack(dsack);
            let mut n = Net::new(t, u64::MAX, 50, 1200, &[(40, 1)]);
            n.run(2000);
            let before = n.tx.cwnd;
            let recoveries = n.tx.stats.sack_recoveries;
            n.set_owd_ms(OWD_AFTER);
            n.run(3000);
            (n, before, recoveries)
        };
        let (on, before, rec_on) = run(true);
        let (off, _, rec_off) = run(false);
        let (s, o) = (on.tx.stats, off.tx.stats);
        eprintln!(
            "before {before:.1}; recoveries after the step {} / {}, resent {} / {}, dsacks {} / {}, \
             undos {} / {}; cwnd at 3 s {:.1} / {:.1}",
            s.sack_recoveries - rec_on,
            o.sack_recoveries - rec_off,
            on.resent_from(2000),
            off.resent_from(2000),
            s.dsacks,
            o.dsacks,
            s.dsack_undos,
            o.dsack_undos,
            on.tx.cwnd,
            off.tx.cwnd
        );
        assert!(s.sack_recoveries > rec_on && o.sack_recoveries > rec_off);
        assert!(s.dsacks >= 1 && o.dsacks == 0);
        assert!(s.dsack_undos >= 1 && o.dsack_undos == 0);
        assert!(
            on.tx.cwnd > off.tx.cwnd,
            "{} against {}",
            on.tx.cwnd,
            off.tx.cwnd
        );
    }

    /// A tail loss probe that sent the last segment again, then an ACK
    /// beyond the probe's `tlp_high`: with a D-SACK of the probe's segment
    /// on it, the episode ends with the window as it was (the original
    /// arrived too); without, the probe repaired a loss and the window is
    /// cut once. The report is one segment below the cumulative ACK
    /// (Linux's `FLAG_DSACK_TLP`: its end is `tlp_high`), accepted once a
    /// segment was sent again, flagged for the probe either way.
    #[test]
    fn a_dsack_of_the_probe_ends_its_episode_without_a_cut() {
        let mut n = Net::new(dsack_spec(false), u64::MAX, 50, 1200, &[]);
        n.run(1000);
        let tx = &mut n.tx;
        let mut lr = tx.lr.take().expect("a SACK flow");
        let high = tx.snd_max;
        let probe = |lr: &mut super::Lr| {
            let r = lr.rack.as_mut().expect("RACK");
            r.tlp_high = Some(high);
            r.tlp_retrans = true;
        };
        probe(&mut lr);
        let dubious = tx.dsack_ack(&mut lr, &[(high - 1, high)], high + 1);
        assert!(
            dubious.first && dubious.tlp && dubious.segs == 0,
            "{dubious:?}"
        );
        lr.retrans_total = 1;
        lr.dsack_dups = 0;
        let d = tx.dsack_ack(&mut lr, &[(high - 1, high)], high + 1);
        assert_eq!((d.first, d.segs, d.tlp), (true, 1, true));
        let (cwnd, ssthresh) = (tx.cwnd, tx.ssthresh);
        tx.tlp_ack(&mut lr, high + 1, true, false, d.tlp);
        assert!(lr.rack.as_ref().expect("RACK").tlp_high.is_none());
        assert_eq!((tx.cwnd, tx.ssthresh), (cwnd, ssthresh));
        probe(&mut lr);
        tx.tlp_ack(&mut lr, high + 1, true, false, false);
        assert!(lr.rack.as_ref().expect("RACK").tlp_high.is_none());
        assert!(tx.cwnd < cwnd, "{} against {cwnd}", tx.cwnd);
        // A first block above the cumulative ACK and outside the second
        // is a SACK, not a report.
        let d = tx.dsack_ack(
            &mut lr,
            &[(high + 3, high + 4), (high + 6, high + 8)],
            high + 1,
        );
        assert!(!d.first);
    }
}
