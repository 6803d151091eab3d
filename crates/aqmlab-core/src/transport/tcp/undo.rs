//! A spurious retransmission timeout undone (`tcp.undo`): RFC 3522's
//! detection by the echoed timestamp, with Linux's response
//! (`tcp_try_undo_loss`, `tcp_undo_cwnd_reduction` in `tcp_input.c`).
//!
//! A timeout is spurious when the segments it deemed lost were only late
//! (a delay spike, a route change, a deep queue filling at once): the ACK
//! that arrives after it is for the original transmission, not for the
//! retransmission. With RFC 7323 timestamps the sender tells the two
//! apart: the receiver echoes the send time of the segment that advanced
//! its cumulative ACK (section 4.3), so an echo older than the first
//! retransmission shows the original arrived.
//!
//! What aqmlab does, as Linux does:
//!
//! - **The state to restore** (`tcp_init_undo`, `prior_cwnd`,
//!   `prior_ssthresh`) is taken when a fast recovery begins, and when a
//!   timeout comes outside a recovery or a timeout's retransmissions: the
//!   window then and ssthresh, or w / 2 + w / 4 (w the window in whole
//!   segments) if that is more (`tcp_current_ssthresh`). A timeout within
//!   a recovery, or a second one, keeps what the first event took. An ECN
//!   reduction under way (Linux's CWR state) leaves nothing to restore
//!   (`tcp_enter_cwr` clears `undo_marker`).
//! - **The stamp** (`retrans_stamp`): the send time of the first
//!   retransmission since the flow last had none outstanding (tail loss
//!   probes' included), cleared by an ACK outside recovery that finds no
//!   retransmission outstanding and the oldest segment never sent again
//!   (`tcp_try_to_open`, `tcp_any_retrans_done`).
//! - **The test** (`tcp_packet_delayed`), on each ACK during a timeout's
//!   retransmissions that advances the cumulative ACK: its echo is older
//!   than the stamp.
//! - **The undo** (`tcp_undo_cwnd_reduction` with `unmark_loss`): every
//!   loss mark is cleared (the segments not yet sent again are not sent
//!   again; retransmissions in flight stay in the pipe), the window
//!   becomes the larger of the window now and the window before
//!   (`tcp_reno_undo_cwnd`, which CUBIC uses; DCTCP's and Prague's
//!   `undo_cwnd` give the same), ssthresh the larger of the two, the CWR
//!   flag a timeout queued is withdrawn when ssthresh is restored
//!   (`tcp_ecn_withdraw_cwr`), and the flow is open again (Linux's
//!   `TCP_CA_Open`), growing from this ACK on. BBR's `bbr_undo_cwnd`
//!   leaves the window, which BBR then restores from the window it saved
//!   as the flow leaves the timeout's state, and starts its full-pipe test
//!   and long-term (policer) sampling again (`cc/bbr.rs`).
//! - **RACK** (`tcp_clean_rtx_queue`, `tcp_skb_spurious_retrans`): a
//!   cumulatively acknowledged segment whose echo is older than its
//!   retransmission does not advance RACK's clock (the original was
//!   delivered, not the copy), so the undo is not followed by RACK
//!   marking the whole flight lost against the retransmission's time.
//!
//! F-RTO (RFC 5682, `tcp.frto`, `frto.rs`), Linux's detection without the
//! echo, undoes through the same response ([`TcpFlow::undo_loss`]); with
//! both, the echo decides first, as in Linux.
//!
//! D-SACK (`tcp.dsack`, `dsack.rs`) is the third detection: reports that
//! show every retransmission since a cut needless undo it (a timeout's
//! through [`TcpFlow::undo_loss`] as well).
//!
//! Not modelled: the undo of a fast recovery by the echo
//! (`tcp_packet_delayed` in `tcp_try_undo_recovery`, `tcp_try_undo_partial`),
//! which only reordering would call for.

use super::sack_recovery::Lr;
use super::scoreboard::EVER;
use super::{Cut, TcpFlow};
use crate::units::SimTime;

/// What an undo restores (Linux's `prior_cwnd`, `prior_ssthresh`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Prior {
    pub cwnd: f64,
    pub ssthresh: f64,
}

impl TcpFlow {
    /// The state an undo restores, as it is now, before a cut: the window
    /// without fast recovery's inflation and `tcp_current_ssthresh`
    /// (ssthresh, or w / 2 + w / 4 in whole segments if more).
    fn prior(&self) -> Prior {
        let cwnd = self.uninflated();
        let w = cwnd as u64;
        Prior {
            cwnd,
            ssthresh: self.ssthresh.max(((w >> 1) + (w >> 2)) as f64),
        }
    }

    /// A fast recovery begins (before its cut): what an undo would restore.
    pub(super) fn undo_at_recovery(&self, lr: &mut Lr, after_ecn: bool) {
        if self.cfg.tcp.undo() || self.cfg.tcp.dsack() {
            lr.undo = (!after_ecn).then(|| self.prior());
        }
        if self.cfg.tcp.dsack() {
            // Linux's `tcp_enter_recovery` always sets the marker
            // (`dsack.rs`).
            Self::dsack_mark(lr, self.snd_una, self.stats.ecn_reductions, false);
        }
    }

    /// A retransmission timeout (before its cut): what an undo would
    /// restore, unless a recovery or an earlier timeout's retransmissions
    /// are under way (theirs stands).
    pub(super) fn undo_at_timeout(&mut self) {
        if !(self.cfg.tcp.undo() || self.cfg.tcp.frto() || self.cfg.tcp.dsack()) {
            return;
        }
        let ecn_cwr = self.ecn_cwr();
        let prior = self.prior();
        let in_recovery = self.in_recovery;
        let (una, ecn_cuts, dsack) = (
            self.snd_una,
            self.stats.ecn_reductions,
            self.cfg.tcp.dsack(),
        );
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        if in_recovery || lr.loss {
            return;
        }
        lr.undo = (!ecn_cwr).then_some(prior);
        if dsack {
            Self::dsack_mark(lr, una, ecn_cuts, ecn_cwr);
        }
    }

    /// A segment goes again at `now` (a flow with `undo`): the first since
    /// none was outstanding stamps the episode.
    #[inline]
    pub(super) fn undo_stamp(lr: &mut Lr, now: SimTime) {
        if lr.retrans_stamp.is_none() {
            lr.retrans_stamp = Some(now);
        }
    }

    /// An ACK that advanced the cumulative ACK, with echo `tsecr`, during a
    /// timeout's retransmissions: undo the timeout if the echo is older than
    /// the first retransmission. Returns whether it did.
    pub(super) fn undo_timeout(&mut self, lr: &mut Lr, tsecr: SimTime) -> bool {
        let echo = self.cfg.tcp.undo()
            && self.cfg.tcp.timestamps()
            && lr.retrans_stamp.is_some_and(|stamp| tsecr < stamp);
        // Or D-SACKs showed every retransmission since it needless
        // (`dsack.rs`).
        let dsack = self.dsack_all(lr);
        if lr.undo.is_none() || !(echo || dsack) {
            return false;
        }
        if dsack && !echo {
            self.stats.dsack_undos += 1;
        }
        self.undo_loss(lr);
        true
    }

    /// A timeout found spurious (by the echo, or by F-RTO: `frto.rs`),
    /// undone (Linux's `tcp_try_undo_loss`, `tcp_undo_cwnd_reduction`): the
    /// loss marks forgotten, the flow open again, and the window and
    /// ssthresh from before restored where there is a state to restore.
    pub(super) fn undo_loss(&mut self, lr: &mut Lr) {
        lr.sb.unmark_lost();
        lr.loss = false;
        lr.frto = false;
        self.restore(lr);
        self.stats.timeouts_undone += 1;
    }

    /// The window and ssthresh from before the cut restored where there is
    /// a state to restore (Linux's `tcp_undo_cwnd_reduction`), which ends
    /// what D-SACKs may undo.
    pub(super) fn restore(&mut self, lr: &mut Lr) {
        lr.undo_marker = None;
        if let Some(prior) = lr.undo.take() {
            self.cc_undo(prior);
            self.last_cut = Cut::None;
        }
    }

    /// Reno's undo (`tcp_reno_undo_cwnd`, with the core's ssthresh): the
    /// larger window and ssthresh of before and now, the CWR flag a timeout
    /// queued withdrawn when ssthresh is restored (`tcp_ecn_withdraw_cwr`).
    pub(super) fn reno_undo(&mut self, prior: Prior) {
        self.cwnd = self.cwnd.max(prior.cwnd);
        if prior.ssthresh > self.ssthresh {
            self.ssthresh = prior.ssthresh;
            self.cwr_pending = false;
        }
    }

    /// An ACK outside recovery and a timeout's retransmissions: the stamp
    /// is cleared once no retransmission is outstanding and the oldest
    /// segment was never sent again.
    #[inline]
    pub(super) fn undo_open(&self, lr: &mut Lr) {
        if lr.retrans_stamp.is_some()
            && lr.sb.retrans_out == 0
            && (lr.sb.outstanding() == 0 || lr.sb.slot(self.snd_una).bits & EVER == 0)
        {
            lr.retrans_stamp = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{recovery_spec, Net};

    /// The window after the spike: with `undo` the first late ACK (its echo
    /// from before the retransmission) restores the window and ssthresh
    /// and only the segment the timer sent goes again; without it the flow
    /// starts again from one segment and sends its whole flight again.
    /// Measured: a window of 42.2 before; at 4.5 s 43.5 with the undo, 23.0
    /// without (slow start from one segment); one timeout each; segments
    /// sent again after 3 s 1 and 43.
    #[test]
    fn a_spurious_timeout_is_undone_by_the_echo() {
        Net::spurious_timeout_undone(
            recovery_spec(true, true, false),
            recovery_spec(true, false, false),
            "the undo",
        );
    }
}
