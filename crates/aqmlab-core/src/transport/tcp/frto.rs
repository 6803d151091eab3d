//! F-RTO (`tcp.frto`): RFC 5682's detection of a spurious retransmission
//! timeout, in its SACK-enhanced version (section 3), as Linux runs it
//! with `net.ipv4.tcp_frto = 2` (`tcp_enter_loss`, `tcp_process_loss`,
//! `tcp_try_undo_loss` and `tcp_xmit_recovery` in `tcp_input.c`).
//!
//! A timeout marks the flight lost and sends the oldest segment again
//! (section 3.1, step 1). Then, while the timeout's retransmissions are
//! under way (Linux's Loss state):
//!
//! - **Step 2.b**: the first ACK that advances the cumulative ACK, short of
//!   the highest segment sent at the timeout (`recover`, Linux's
//!   `high_seq`), lets new data go rather than the other segments deemed
//!   lost (Linux's `REXMIT_NEW`), if the application and the receiver's
//!   window allow any; if none can go, F-RTO ends and the lost segments go
//!   as without it.
//! - **Step 3.b**: an ACK that delivers, cumulatively or by SACK, a segment
//!   sent before the timeout and never sent again (Linux's
//!   `FLAG_ORIG_SACK_ACKED`) shows the timeout spurious: it is undone as
//!   the echo's undo undoes it (`undo.rs`: the loss marks forgotten, the
//!   window and ssthresh from before restored, the flow open again).
//! - **Step 3.a**: once new data has gone, an ACK that SACKs new data, or
//!   a duplicate ACK, shows the loss real: F-RTO ends, and the segments
//!   deemed lost go as the window allows.
//!
//! F-RTO starts with a timeout outside a recovery and a timeout's
//! retransmissions, or with a timeout that repeats one with no advance of
//! the cumulative ACK between them (section 3.2; Linux's `new_recovery ||
//! icsk_retransmits`); not with a timeout within a fast recovery.
//!
//! What aqmlab leaves out: the basic version without SACK (section 2; a
//! flow with `frto` has SACK), and the restore after an ECN reduction under
//! way when the timeout came (Linux's `prior_ssthresh` then; here, as for
//! the echo's undo, nothing is restored but the loss marks).

use super::sack_recovery::Lr;
use super::TcpFlow;

/// What one ACK told F-RTO ([`TcpFlow::frto_ack`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct FrtoAck {
    /// The cumulative ACK advanced.
    pub advanced: bool,
    /// It delivered a segment sent before the timeout and never sent again.
    pub original: bool,
    /// It SACKed segments not SACKed before.
    pub sacked: bool,
    /// A duplicate ACK: no advance, no new window.
    pub duplicate: bool,
}

impl TcpFlow {
    /// A retransmission timeout (before its marks and cut): whether F-RTO
    /// runs for it (section 3.1 step 1, section 3.2).
    pub(super) fn frto_at_timeout(&mut self) {
        let on = self.cfg.tcp.frto();
        let (una, in_recovery) = (self.snd_una, self.in_recovery);
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        let repeated = lr.loss && lr.rto_una == Some(una);
        lr.frto = on && ((!in_recovery && !lr.loss) || repeated);
        lr.rto_una = Some(una);
    }

    /// An ACK during a timeout's retransmissions with F-RTO running, after
    /// the echo's undo (`undo.rs`) and before the flow leaves them.
    pub(super) fn frto_ack(&mut self, lr: &mut Lr, a: FrtoAck) {
        if a.original {
            // Step 3.b: the timeout was spurious.
            self.undo_loss(lr);
            return;
        }
        if self.snd_max > self.recover {
            // Step 3.a: new data went at step 2.b; SACKs or a duplicate
            // ACK now show the loss real.
            if a.sacked || a.duplicate {
                lr.frto = false;
            }
        } else if a.advanced && self.snd_una < self.recover {
            // Step 2.b: new data first, if any may go.
            if self.may_send_new(lr) {
                lr.frto_new = true;
            } else {
                lr.frto = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{recovery_spec, Net};
    use crate::scenario::TcpSpec;
    use crate::units::SimTime;

    fn spec(frto: bool, timestamps: bool) -> TcpSpec {
        recovery_spec(timestamps, timestamps, frto)
    }

    /// Without timestamps the echo cannot tell a spurious timeout; F-RTO
    /// can: the ACK for the oldest segment's retransmission (the original's,
    /// in fact) lets two new segments go, and the next ACK delivers segments
    /// from before the timeout never sent again, so the timeout is undone:
    /// the window is restored and only the one segment the timer sent goes
    /// again. Without F-RTO the flow starts again from one segment and sends
    /// its flight again. Measured: a window of 42.2 before; at 4.5 s 43.5
    /// with F-RTO, 23.0 without; one timeout each; segments sent again
    /// after 3 s 1 and 43.
    #[test]
    fn a_spurious_timeout_is_undone_without_timestamps() {
        let (on, _) = Net::spurious_timeout_undone(spec(true, false), spec(false, false), "F-RTO");
        assert_eq!(on.tx.stats.timeouts, 1);
    }

    /// A real loss: every segment sent from 2.0 to 2.6 s is lost (an
    /// outage longer than the probe's and the first timeout's waits), so
    /// the flow times out with its whole flight lost. After the timeout the
    /// oldest segment goes again; its ACK lets new data go first with
    /// F-RTO (step 2.b), whose SACKs then show the loss real (step 3.a), and
    /// the rest goes again; nothing is undone. Without F-RTO the segments
    /// after the oldest go again at that ACK. Measured: two timeouts each
    /// (the first one's retransmission falls in the outage too); 733
    /// segments delivered by 5 s with F-RTO, 760 without (the round trip
    /// the new data spends before the repair).
    #[test]
    fn a_real_loss_sends_new_data_first() {
        let run = |frto: bool| {
            let mut n = Net::new(spec(frto, true), u64::MAX, 50, 1200, &[(40, 1)]);
            n.set_outage_ms(2000, 2600);
            n.run(5000);
            n
        };
        let (on, off) = (run(true), run(false));
        // After the outage: the timeout's retransmission, then what the
        // next ACK let go (a retransmission or not).
        let after = |n: &Net| {
            let t = SimTime::from_millis(2600);
            let i = n.sent.iter().position(|s| s.0 >= t && s.2).unwrap();
            n.sent[i..i + 3].iter().map(|s| s.2).collect::<Vec<_>>()
        };
        eprintln!(
            "timeouts {} / {}; after the outage, sent again: with F-RTO {:?}, without {:?}; \
             segments delivered by 5 s {} / {}",
            on.tx.stats.timeouts,
            off.tx.stats.timeouts,
            after(&on),
            after(&off),
            on.rx.rcv_nxt,
            off.rx.rcv_nxt
        );
        for n in [&on, &off] {
            assert!(n.tx.stats.timeouts >= 1);
            assert_eq!(n.tx.stats.timeouts_undone, 0);
        }
        assert_eq!(after(&on), [true, false, false]);
        assert_eq!(after(&off), [true, true, true]);
        // F-RTO's new data holds the repair back by about a round trip.
        assert!(
            on.rx.rcv_nxt < off.rx.rcv_nxt,
            "{} / {}",
            on.rx.rcv_nxt,
            off.rx.rcv_nxt
        );
        assert!(
            on.rx.rcv_nxt * 10 > off.rx.rcv_nxt * 9,
            "{} / {}",
            on.rx.rcv_nxt,
            off.rx.rcv_nxt
        );
    }
}
