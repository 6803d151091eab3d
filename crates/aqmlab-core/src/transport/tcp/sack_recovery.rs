//! Loss recovery with SACK (`tcp.sack`): RFC 6675 with Linux's
//! `tcp_fastretrans_alert` (`net/ipv4/tcp_input.c`) for what the RFC leaves
//! open; RACK-TLP (`tcp.rack`, [`super::rack`]) and PRR (`tcp.prr`,
//! [`super::prr`]) plug in here.
//!
//! Each ACK, in the order Linux takes it (`tcp_ack`):
//! 1. its SACK blocks mark the scoreboard ([`super::scoreboard`]; RFC 6675
//!    section 3), then its cumulative ACK removes what it covers; RACK
//!    (with `tcp.rack`) learns the most recently sent segment delivered;
//! 2. TLP's loss detection for an outstanding probe (RFC 8985 section
//!    7.4);
//! 3. a recovery ends when the cumulative ACK reaches `recover` (RFC 6675
//!    section 5: RecoveryPoint; aqmlab's `recover` is one past the highest
//!    segment sent at the event), with cwnd = the window recovery returns
//!    to (ssthresh after a halving; RFC 6937 and Linux's
//!    `tcp_end_cwnd_reduction`); so do a timeout's retransmissions;
//! 4. losses are marked: by RACK with `tcp.rack` (as Linux with
//!    `tcp_recovery = 1`, RACK replaces the duplicate threshold), else by
//!    RFC 6675's IsLost (three SACKed segments above);
//! 5. recovery begins (not during a timeout's retransmissions, RFC 6675
//!    section 5.1) when a segment is deemed lost, or without RACK on the
//!    third duplicate ACK (RFC 6675 section 5 steps 1 and 2: an ACK that
//!    SACKs data not SACKed before, section 2). The window cut is the
//!    congestion control's (`cc/`), once per window as NewReno's (none in a
//!    window an ECN reduction already answered); without PRR cwnd =
//!    ssthresh at once (section 5 step 4.2), with PRR it falls by RFC 6937;
//!    without RACK the oldest segment is marked lost (step 4.3);
//! 6. outside recovery, a new ACK without ECN-Echo opens the window
//!    (`cc/`); in recovery PRR sets it;
//! 7. what goes out, while pipe < cwnd (Linux's `tcp_cwnd_test` with
//!    `tcp_packets_in_flight`, in every state): first the lost segments not
//!    yet sent again, lowest first (NextSeg rule 1), then new data (rule 2;
//!    out of recovery this is limited transmit's generalisation, as in
//!    Linux); NextSeg's rules 3 and 4 are not used, as in Linux;
//! 8. the flow's one timer (Linux's `icsk_pending`, [`super::sack_timers`]):
//!    the reordering timer if RACK set one; else, for an ACK of new data,
//!    a probe if TLP may
//!    send one, or the retransmission timer (RFC 6298 (5.3)); so does an
//!    ACK that newly SACKs a segment (never sent again) sent before the
//!    oldest segment's last transmission (Linux's `tcp_clean_rtx_queue`:
//!    the oldest segment's copy may still be queued behind it); a
//!    retransmission of the oldest segment restarts the retransmission
//!    timer; new data schedules a probe.
//!
//! A retransmission timeout (Linux's `tcp_enter_loss`, [`super::sack_timers`])
//! keeps the SACK information and marks every other segment lost (with RACK, not those
//! sent within RACK.rtt, except the oldest), sets cwnd by the congestion
//! control (one segment; at least the pipe + 1 as Linux), and the lost
//! segments are sent again as the window allows, then new data; there is
//! no go-back-N. No new recovery begins until the cumulative ACK reaches
//! `recover` (RFC 6675 section 5.1).
//!
//! With `tcp.frto`, F-RTO (RFC 5682) runs the timeout's retransmissions
//! (`frto.rs`).
//!
//! With `tcp.dsack`, D-SACK (RFC 2883, `dsack.rs`) reports duplicates and
//! undoes cuts they show needless.
//!
//! Not modelled: the undo of a fast recovery by the echoed timestamp (a
//! timeout's is undone, `undo.rs`), SACK reneging (aqmlab's
//! receiver never discards what it reported), and a recovery begun from a
//! timeout's retransmissions when RACK finds one of them lost again
//! (Linux's `FLAG_LOST_RETRANS`): the segment is sent again within the
//! timeout's retransmissions.

use super::frto::FrtoAck;
use super::prr::Prr;
use super::rack::Rack;
use super::rcvbuf::{Arrival, RcvBuf};
use super::rtt_linux::LinuxRtt;
use super::sack::{SackBlocks, SackRx};
use super::scoreboard::{Scoreboard, DUP_THRESH, EVER, SACKED};
use super::{Cut, Seg, TcpFlow};
use crate::scenario::{RttEstimator, TcpSpec};
use crate::units::SimTime;

/// What the flow's one timer event stands for (Linux's `icsk_pending`):
/// the retransmission timer, TLP's probe timeout, or RACK's reordering
/// timer (RFC 8985 sections 6.3 and 7.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Timer {
    #[default]
    Rto,
    Probe,
    Reorder,
}

/// The loss-recovery state of a flow with `tcp.sack` or `tcp.prr`, boxed
/// so that flows without them carry one null pointer.
#[derive(Clone, Debug, Default)]
pub(super) struct Lr {
    /// The sender's scoreboard (SACK).
    pub sb: Scoreboard,
    /// The receiver's SACK blocks.
    pub rx: SackRx,
    /// RACK-TLP's state (`tcp.rack`).
    pub rack: Option<Rack>,
    /// PRR's state in the current recovery (`tcp.prr`).
    pub prr: Prr,
    /// Linux's CWR state with `tcp.ecn_reduction = "prr"` (`cwr.rs`).
    pub cwr: super::cwr::Cwr,
    /// A timeout's retransmissions are under way (Linux's `TCP_CA_Loss`),
    /// until the cumulative ACK reaches `recover`.
    pub loss: bool,
    pub timer: Timer,
    /// PRR without SACK: segments deemed delivered by duplicate ACKs and
    /// not yet cumulatively acknowledged (RFC 6937 section 3; Linux's
    /// `sacked_out` of a flow without SACK).
    pub reno_sacked: u64,
    /// PRR without SACK: the oldest segment is deemed lost (NewReno's
    /// partial ACK) and waits for PRR to let its retransmission go.
    pub head_pending: bool,
    /// Linux's RTT estimator (`tcp.rtt_estimator = "linux"`).
    pub rtt: LinuxRtt,
    /// The receiver's autotuned buffer (`tcp.moderate_rcvbuf`).
    pub rb: Option<RcvBuf>,
    /// The right edge of the receiver's window the sender last heard of:
    /// new data goes below it (`tcp.moderate_rcvbuf`; else unbounded).
    pub peer_edge: u64,
    /// What undoing a cut would restore (`tcp.undo`, `undo.rs`).
    pub undo: Option<super::undo::Prior>,
    /// The send time of the first retransmission since none was
    /// outstanding (Linux's `retrans_stamp`, `undo.rs`).
    pub retrans_stamp: Option<SimTime>,
    /// The receiver's delayed-ACK state (`tcp.delack_timer = "linux"`,
    /// `delack.rs`).
    pub ato: super::delack::Ato,
    /// The receiver's SACK compression (`tcp.sack_compression`,
    /// `sack_compress.rs`).
    pub comp: super::sack_compress::SackCompress,
    /// F-RTO runs for the timeout's retransmissions under way (`frto.rs`).
    pub frto: bool,
    /// F-RTO's step 2.b on this ACK: new data goes, not the lost segments.
    pub frto_new: bool,
    /// The cumulative ACK at the last retransmission timeout.
    pub rto_una: Option<u64>,
    /// Linux's `icsk_ca_state` was not `TCP_CA_Open` after the last ACK
    /// that ran the loss detection (`TcpFlow::dubious`).
    pub not_open: bool,
    /// The cumulative ACK at the last cut D-SACKs may undo (Linux's
    /// `undo_marker`, `dsack.rs`), and the ECN reductions counted then.
    pub undo_marker: Option<u64>,
    pub undo_ecn: u64,
    /// Retransmissions since the marker not yet reported needless (Linux's
    /// `undo_retrans`; -1: none sent).
    pub undo_retrans: i64,
    /// Segments reported duplicate, and segments sent again, over the
    /// connection (Linux's `dsack_dups`, `total_retrans`).
    pub dsack_dups: u64,
    pub retrans_total: u64,
    /// Whether the window limits the sender (`tcp.cwnd_validation`,
    /// `cwnd_use.rs`).
    pub cwnd_use: super::cwnd_use::CwndUse,
}

impl Lr {
    pub fn new(tcp: &TcpSpec) -> Lr {
        // `moderate_rcvbuf` is refused without `sack` (`scenario/tcp.rs`).
        let rb = tcp
            .moderate_rcvbuf()
            .then(|| RcvBuf::new(tcp.mss(), tcp.timestamps()));
        Lr {
            rack: tcp.rack.then(Rack::default),
            // The SYN/ACK's window: the sender's first right edge.
            peer_edge: rb.as_ref().map_or(u64::MAX, RcvBuf::edge),
            rb,
            cwnd_use: super::cwnd_use::CwndUse::new(tcp.cwnd_validation_2020()),
            ..Lr::default()
        }
    }
}

/// What one round of sending did.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Sent {
    /// New data went out.
    pub new: bool,
    /// The oldest unacknowledged segment was sent again.
    pub head: bool,
}

impl TcpFlow {
    /// The SACK blocks of the last ACK this flow's receiver built (none
    /// for flows without SACK).
    pub fn sack_blocks(&self) -> SackBlocks {
        self.lr.as_deref().map_or(SackBlocks::NONE, |l| {
            let mut b = l.rx.last();
            if let Some(rb) = &l.rb {
                b.wnd = u32::try_from(rb.edge() - self.rcv_nxt).unwrap_or(u32::MAX);
            }
            b
        })
    }

    /// The receiver took segment `seq` (received before if `dup`) and the
    /// cumulative ACK is now `rcv_nxt`: the blocks of the ACK it triggers
    /// (SACK flows with segments held out of order, or that just held
    /// some, or that took a duplicate), with a D-SACK for a duplicate
    /// (`tcp.dsack`).
    pub(super) fn sack_rx(&mut self, seq: u64, dup: bool) {
        let rcv_nxt = self.rcv_nxt;
        let dsack = dup && self.cfg.tcp.dsack();
        if let Some(lr) = self.lr.as_deref_mut() {
            if dsack {
                lr.rx.on_duplicate(seq, rcv_nxt);
            } else {
                lr.rx.on_segment(seq, rcv_nxt);
            }
        }
    }

    /// A data segment reaches a receiver with `tcp.dsack`: the D-SACK of
    /// the last ACK, if any, went with it.
    #[inline]
    pub(super) fn dsack_sent(&mut self) {
        if let Some(lr) = self.lr.as_deref_mut() {
            lr.rx.dup_sent();
        }
    }

    /// A data segment arrived at a receiver that autotunes its buffer
    /// (`rcvbuf.rs`): the window its next ACK offers; whether the segment
    /// raised the window's ceiling.
    #[inline]
    pub(super) fn rcv_window(&mut self, now: SimTime, sent: SimTime, arrival: Arrival) -> bool {
        let rcv_nxt = self.rcv_nxt;
        let (has_rtt, srtt_ns) = (self.has_rtt, self.srtt_ns);
        let srtt = || {
            if has_rtt {
                SimTime::from_nanos(srtt_ns as u64)
            } else {
                SimTime::ZERO
            }
        };
        let Some(lr) = self.lr.as_deref_mut() else {
            return false;
        };
        let held = lr.rx.held(rcv_nxt);
        lr.rb.as_mut().is_some_and(|rb| {
            rb.on_data(now, rcv_nxt, held, arrival, srtt, now.saturating_sub(sent))
        })
    }

    /// Recount the scoreboard (tests and `World::check_accounting`).
    pub fn check_recovery(&self) -> Result<(), String> {
        let Some(lr) = self.lr.as_deref() else {
            return Ok(());
        };
        if !self.cfg.tcp.sack {
            return Ok(());
        }
        if lr.sb.end() != self.snd_max || lr.sb.una() != self.snd_una {
            return Err(format!(
                "scoreboard [{}, {}) != [snd_una {}, snd_max {})",
                lr.sb.una(),
                lr.sb.end(),
                self.snd_una,
                self.snd_max
            ));
        }
        lr.sb.check()
    }

    /// An ACK reaches a SACK flow's sender (after the handshake's and the
    /// ECN-Echo's rules, [`TcpFlow::on_ack`]).
    pub(super) fn sack_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        ece: bool,
        tsecr: SimTime,
        blocks: &SackBlocks,
        out: &mut Vec<Seg>,
    ) {
        let mut lr = self.lr.take().expect("a SACK flow has its recovery state");
        self.sack_ack_in(&mut lr, now, ack, ece, tsecr, blocks, out);
        self.lr = Some(lr);
    }

    #[allow(clippy::too_many_arguments)]
    fn sack_ack_in(
        &mut self,
        lr: &mut Lr,
        now: SimTime,
        ack: u64,
        ece: bool,
        tsecr: SimTime,
        blocks: &SackBlocks,
        out: &mut Vec<Seg>,
    ) {
        if ack < self.snd_una || ack > self.snd_max {
            // An ACK older than one already taken: nothing to learn.
            let sent = self.lr_send(lr, now, out);
            self.arm_timers(lr, now, false, sent, None, false);
            return;
        }
        let was_empty = self.snd_max == self.snd_una;
        let edge_before = lr.peer_edge;
        if lr.rb.is_some() {
            // The receiver's window (`rcvbuf.rs`): its right edge never
            // moves back.
            lr.peer_edge = lr.peer_edge.max(ack + u64::from(blocks.wnd));
        }
        let prior_pipe = lr.sb.pipe();
        // The blocks in the order sent; 0. a D-SACK first (`dsack.rs`),
        // which the scoreboard skips.
        let mut ranges = [(0u64, 0u64); super::sack::MAX_BLOCKS];
        let n = blocks.n as usize;
        for (k, b) in blocks.ranges(ack).enumerate() {
            ranges[k] = b;
        }
        let dsack = if blocks.dup != super::sack::DUP_NONE && self.cfg.tcp.dsack() {
            self.dsack_ack(lr, &ranges[..n], ack)
        } else {
            super::dsack::Dsack::default()
        };
        // Reordering (`reorder.rs`): the lowest segment this ACK shows
        // delivered out of order, against the highest SACK before it.
        let prior_fack = lr.sb.fack();
        let mut reord = dsack.reord.unwrap_or(u64::MAX);
        let sacks_tell = !lr.loss || lr.undo_marker.is_some();
        // A pacing flow's rate estimator sees each segment delivered.
        let mut pace = self.pace.take();
        // 1. The SACK blocks (ascending, as Linux sorts them; three at
        //    most), then the cumulative ACK; RACK sees each segment
        //    delivered.
        let ranges = &mut ranges[usize::from(dsack.first)..n];
        ranges.sort_unstable_by_key(|r| r.0);
        // F-RTO: a segment sent before the timeout and never sent again is
        // delivered (Linux's `FLAG_ORIG_SACK_ACKED`).
        let orig_below = if lr.loss && lr.frto { self.recover } else { 0 };
        let mut original = false;
        let Lr { sb, rack, .. } = lr;
        let mut newly_sacked = 0;
        // Linux's RTT samples: the oldest segment newly SACKed, and the
        // oldest newly acknowledged, that were never sent again; for the
        // rate sample the newest of each (`first_sackt`, `last_sackt`,
        // `first_ackt`, `last_ackt` in `tcp_clean_rtx_queue`).
        let (mut first_sacked, mut first_acked, mut retx_acked) = (None, None, false);
        let (mut last_sacked, mut last_acked) = (None::<SimTime>, None::<SimTime>);
        for &(s, e) in ranges.iter() {
            newly_sacked += sb.sack(s, e, |q, slot| {
                if let Some(r) = rack.as_mut() {
                    r.delivered(q, slot, now);
                }
                if slot.bits & EVER == 0 {
                    if q < prior_fack {
                        reord = reord.min(q);
                    }
                    first_sacked =
                        Some(first_sacked.map_or(slot.xmit, |t: SimTime| t.min(slot.xmit)));
                    last_sacked = Some(last_sacked.map_or(slot.xmit, |t| t.max(slot.xmit)));
                    original |= q < orig_below;
                }
                if let Some(p) = pace.as_deref_mut() {
                    p.rate.on_delivered(q, now);
                }
            });
        }
        // (Every segment in `reord` lies below `prior_fack`, or it is none.)
        if reord < prior_fack && sacks_tell {
            super::reorder::check(rack, reord, sb.fack(), &mut self.stats.reorderings);
        }
        let advanced = ack > self.snd_una;
        let mut newly_acked = 0;
        // The lowest segment newly acknowledged, never SACKed nor sent
        // again (`u64::MAX`: none).
        let mut low_acked = u64::MAX;
        if advanced {
            if self.cfg.tcp.rtt_estimator == RttEstimator::Timed {
                self.time_ack(now, ack, ece, tsecr);
            }
            self.prev_una = self.snd_una;
            self.lt_sent = 0;
            let echo_tells = self.cfg.tcp.undo() && self.cfg.tcp.timestamps();
            newly_acked = sb.ack(ack, |q, slot| {
                if let Some(r) = rack.as_mut() {
                    // An echo older than the copy: the original came (`undo.rs`).
                    if !(echo_tells && slot.bits & EVER != 0 && tsecr < slot.xmit) {
                        r.delivered(q, slot, now);
                    }
                }
                if slot.bits & EVER != 0 {
                    retx_acked = true;
                } else {
                    if first_acked.is_none() {
                        // Ascending: the first is the lowest (a hole filled
                        // by an original, when below the highest SACK).
                        first_acked = Some(slot.xmit);
                        low_acked = q;
                    }
                    last_acked = Some(last_acked.map_or(slot.xmit, |t| t.max(slot.xmit)));
                    original |= q < orig_below;
                }
                if let Some(p) = pace.as_deref_mut() {
                    p.rate.on_delivered(q, now);
                }
            });
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.dupacks = 0;
            if low_acked < prior_fack {
                super::reorder::check(rack, low_acked, sb.fack(), &mut self.stats.reorderings);
            }
        } else if newly_sacked > 0 && self.snd_max > self.snd_una {
            // RFC 6675 section 2: a duplicate ACK SACKs data not SACKed before.
            self.dupacks += 1;
        }
        // The echo's RTT, for an ACK that advances the left edge (RFC 7323
        // section 4.2): where neither the cumulative ACK (Karn) nor a SACK
        // gives a sample, Linux's `tcp_ack_update_rtt` takes it for both
        // the estimator and the rate sample.
        let timestamps = self.cfg.tcp.timestamps();
        let echo = || (advanced && timestamps).then(|| super::timestamps::linux_ts_rtt(now, tsecr));
        // Linux's `ca_rtt_us`, the RTT the rate sample and the congestion
        // control read (`rs->rtt_us`, `ack_sample.rtt_us`): the newest
        // segment newly SACKed, else the newest newly acknowledged unless
        // the cumulative ACK covers a retransmission, else the echo's.
        let ca_rtt = || {
            last_sacked
                .or(last_acked.filter(|_| !retx_acked))
                .map(|t| now - t)
                .or_else(echo)
        };
        if let Some(p) = pace.as_deref_mut() {
            p.rate.ack_rtt(ca_rtt());
        }
        self.pace = pace;
        if self.cfg.tcp.rtt_estimator == RttEstimator::Linux {
            // The cumulative ACK's sample unless it covers a retransmitted
            // segment (Karn), else the SACK's, else the echo's.
            let sent = first_acked.filter(|_| !retx_acked).or(first_sacked);
            let rtt = sent.map(|t| now - t).or_else(echo);
            if let Some(r) = rtt {
                self.linux_rtt_of(lr, now, r);
                if self.cfg.tcp.cubic_linux() {
                    // CUBIC's minimum RTT and HyStart read `ca_rtt_us`
                    // (`cubictcp_acked`), some whenever the estimator's is.
                    self.cubic_rtt(now, ca_rtt().unwrap_or(r));
                } else if self.cfg.tcp.hystart() {
                    self.hystart_rtt(r);
                }
            }
        }
        // An ACK that SACKs, and gives no new cumulative ACK, restarts the
        // timer when a segment it newly SACKs (never sent again) left
        // before the oldest segment's last transmission: that copy may
        // still be queued behind it (Linux's `tcp_clean_rtx_queue` sets
        // `FLAG_SET_XMIT_TIMER`). SACKs of later data do not, so a lost
        // retransmission still times out.
        let sack_rearm = !advanced
            && self.snd_max > self.snd_una
            && first_sacked.is_some_and(|t| t < lr.sb.slot(self.snd_una).xmit);
        // A segment a D-SACK reports was delivered too (Linux's
        // `sack_delivered`).
        let delivered = newly_acked + newly_sacked + dsack.segs;
        if newly_acked + newly_sacked > 0 {
            if let Some(r) = lr.rack.as_mut() {
                if let Some(t) = r.newest_sent() {
                    r.reorder.update(now, t);
                }
            }
        }
        // 2. TLP's loss detection.
        if lr.rack.as_ref().is_some_and(|r| r.tlp_high.is_some()) {
            self.tlp_ack(lr, ack, advanced, newly_sacked > 0, dsack.tlp);
        }
        // Neither the cumulative ACK nor the window's edge moved: a
        // duplicate (Linux's `FLAG_NOT_DUP` unset). A D-SACK alerts
        // (`FLAG_DSACKING_ACK`).
        let not_dup = advanced || lr.peer_edge != edge_before;
        let dubious = self.dubious(lr, not_dup, newly_sacked, ece) || dsack.segs > 0;
        // 3. A spurious timeout undone (`undo.rs`); the end of a timeout's
        //    retransmissions, of a recovery.
        if lr.loss && advanced && lr.undo.is_some() {
            self.undo_timeout(lr, tsecr);
        }
        if lr.loss && lr.frto {
            let a = FrtoAck {
                advanced,
                original,
                sacked: newly_sacked > 0,
                duplicate: !not_dup && self.snd_max > self.snd_una,
            };
            self.frto_ack(lr, a);
        }
        if lr.loss && self.snd_una >= self.recover {
            lr.loss = false;
            lr.frto = false;
            Self::episode_kept(lr);
        }
        if self.in_recovery && self.snd_una >= self.recover {
            if self.dsack_all(lr) {
                // Every retransmission reported needless: the cut undone
                // rather than completed (`tcp_try_undo_recovery`).
                self.dsack_undo(lr);
            } else {
                self.in_recovery = false;
                self.cwnd = self.exit_cwnd;
                Self::episode_kept(lr);
            }
        }
        if dubious && !lr.loss && !self.ecn_cwr() && self.dsack_all(lr) {
            // In a recovery, which ends, or later (`tcp_try_undo_dsack`).
            self.dsack_undo(lr);
            if let Some(r) = lr.rack.as_mut() {
                r.reorder.dsack_undone();
            }
        }
        if !self.in_recovery && !lr.loss && lr.retrans_stamp.is_some() {
            self.undo_open(lr);
        }
        // 4. Losses, for an ACK that may tell of them.
        let retrans_before = lr.sb.retrans_out;
        let (mut newly_lost, reo) = if dubious {
            self.detect_losses(lr, now)
        } else {
            (0, None)
        };
        if lr.loss && lr.rack.is_some() && lr.sb.retrans_out < retrans_before {
            // A timeout's retransmission found lost again ends its episode
            // in a recovery (Linux's `FLAG_LOST_RETRANS`, with which
            // `tcp_fastretrans_alert` leaves the loss state for
            // `tcp_enter_recovery`): a cut from the window now, PRR, and
            // the lost segments sent again within it.
            lr.loss = false;
            lr.frto = false;
        }
        // 5. A new recovery.
        let mut force = false;
        if !self.in_recovery
            && !lr.loss
            && (lr.sb.lost_out > 0 || (lr.rack.is_none() && self.dupacks >= DUP_THRESH as u32))
        {
            newly_lost += self.sack_enter_recovery(lr);
            force = true;
        }
        if dubious {
            lr.not_open = self.not_open(lr);
        }
        // 6. The window.
        if self.in_recovery {
            // An algorithm that owns its window sets it itself (Prague
            // here, BBR below from the rate sample).
            if self.cc_owns_window() {
                self.recovery_step();
            } else if self.cfg.tcp.prr {
                let target = self.prr_target();
                if let Some(c) =
                    lr.prr
                        .on_ack(target, lr.sb.pipe(), delivered, advanced, newly_lost > 0)
                {
                    self.cwnd = c as f64;
                }
            }
        } else if self.cwr_window(lr, delivered, advanced, newly_lost > 0) {
            // Linux's CWR state (`cwr.rs`): PRR's window, no growth.
        } else if (advanced
            || (newly_sacked > 0 && lr.rack.as_ref().is_some_and(|r| r.reorder.sacks_grow())))
            && (!ece || lr.loss)
            && self.window_may_grow(lr)
        {
            // By the segments this ACK delivered, cumulatively or by SACK
            // (Linux's `acked_sacked` in `tcp_cong_control`): a cumulative
            // ACK over segments SACKed before does not count them again.
            // An ECN-Echo holds the window (RFC 3168 section 6.1.2), but
            // not in a timeout's retransmissions: the receiver echoes until
            // a new segment carries CWR, and only retransmissions go, so
            // Linux's slow start there ignores it (`tcp_cong_control`
            // raises the window outside CWR and Recovery; so does ns-3).
            // An ACK that only SACKs new data grows it once the degree of
            // reordering is above 3 (`tcp_may_raise_cwnd`, `reorder.rs`).
            self.grow_window(now, delivered);
        }
        if self.cfg.tcp.pacing {
            // The rate sample, then BBR's window and pacing rate or the
            // default pacing rate, before anything is sent (Linux's
            // congestion control runs before its retransmissions).
            self.paced_sack_ack(now, prior_pipe, lr.sb.pipe(), newly_lost);
        }
        // 7. and 8.
        let first = if force {
            self.force_first(lr, now, out)
        } else {
            Sent::default()
        };
        let mut sent = self.lr_send(lr, now, out);
        if lr.frto_new {
            // F-RTO's step 2.b: if no new data could go, F-RTO ends and the
            // lost segments go (Linux's `tcp_xmit_recovery`).
            lr.frto_new = false;
            if self.snd_max <= self.recover {
                lr.frto = false;
                let more = self.lr_send(lr, now, out);
                sent.new |= more.new;
                sent.head |= more.head;
            }
        }
        sent.head |= first.head;
        self.arm_timers(lr, now, advanced || sack_rearm, sent, reo, was_empty);
        debug_assert!(lr.sb.una() == self.snd_una && lr.sb.end() == self.snd_max);
        debug_assert!(lr.sb.sacked_out + lr.sb.lost_out <= lr.sb.outstanding());
        #[cfg(debug_assertions)]
        if self.stats.data_arrived % 64 == 0 || ack % 61 == 0 {
            // A recount now and then (every ACK would cost O(window)).
            if let Err(e) = lr.sb.check() {
                panic!("scoreboard at ACK {ack}: {e}");
            }
        }
    }

    /// RFC 6675 section 5 step (4.3): on entering recovery the first lost
    /// segment goes at once, whatever the pipe (with PRR its first ACK lets
    /// it go anyway, as Linux forces it).
    pub(super) fn force_first(&mut self, lr: &mut Lr, now: SimTime, out: &mut Vec<Seg>) -> Sent {
        let mut sent = Sent::default();
        if self.ecn_hold || self.cfg.tcp.prr || lr.sb.pipe() < self.window() {
            return sent;
        }
        if let Some(seq) = lr.sb.next_lost() {
            self.lr_resend(lr, seq, now, out);
            sent.head = seq == self.snd_una;
        }
        sent
    }

    /// The window PRR brings the flight to: the one recovery returns to
    /// (ssthresh after a halving), in whole segments.
    pub(super) fn prr_target(&self) -> u64 {
        self.prr_goal(self.exit_cwnd)
    }

    /// A window `w` as PRR's goal: whole segments, at least 1, at most
    /// the receiver's window.
    pub(super) fn prr_goal(&self, w: f64) -> u64 {
        (w.max(1.0) as u64).min(u64::from(self.cfg.tcp.rwnd))
    }

    /// Whether an ACK runs the loss detection: Linux's `tcp_ack_is_dubious`,
    /// which calls `tcp_fastretrans_alert` (the detection, the recovery's
    /// states) for an ACK that is a duplicate (`not_dup`: it neither
    /// advances the cumulative ACK nor moves the window's edge), SACKs new
    /// data or echoes CE (`FLAG_CA_ALERT`), or comes outside the open state.
    /// Other ACKs detect nothing, also where RFC 8985 section 6.2 would:
    /// after an undone timeout the retransmission's later send time makes
    /// RACK.xmit_ts newer than segments still on their way, and a
    /// reordering timer armed then is replaced by the next ACK's probe or
    /// retransmission timer, as Linux's `FLAG_SET_XMIT_TIMER` replaces it.
    fn dubious(&self, lr: &Lr, not_dup: bool, newly_sacked: u64, ece: bool) -> bool {
        !not_dup
            || newly_sacked > 0
            || ece
            || lr.not_open
            || lr.loss
            || self.in_recovery
            || self.ecn_cwr()
    }

    /// An ECN reduction is under way (Linux's `TCP_CA_CWR`): until the
    /// cumulative ACK passes what was sent when it began.
    pub(super) fn ecn_cwr(&self) -> bool {
        self.last_cut == Cut::Ecn && self.snd_una < self.ecn_recover
    }

    /// Linux's state after an ACK's loss detection (`tcp_try_keep_open`):
    /// other than open in a recovery, a timeout's retransmissions, an ECN
    /// reduction, or [`disorder`].
    fn not_open(&self, lr: &Lr) -> bool {
        self.in_recovery || lr.loss || self.ecn_cwr() || disorder(lr)
    }

    /// A recovery or a timeout's episode ended without an undo
    /// (`tcp_try_undo_recovery`): a widened reordering window holds one
    /// fewer (`reorder.rs`).
    fn episode_kept(lr: &mut Lr) {
        if let Some(r) = lr.rack.as_mut() {
            r.reorder.episode_kept();
        }
    }

    /// Step 4: RACK (when it moved) or IsLost marks the losses; returns how
    /// many, and RACK's wait for the segments not yet due.
    fn detect_losses(&mut self, lr: &mut Lr, now: SimTime) -> (u64, Option<u64>) {
        let recovering = self.in_recovery || lr.loss;
        match lr.rack.as_mut() {
            Some(r) => {
                if !r.advanced {
                    return (0, None);
                }
                let reo = r.reo_wnd(recovering, lr.sb.sacked_out, self.srtt_ns);
                let (n, wait) = r.detect(&mut lr.sb, now, reo);
                self.stats.rack_detections += n;
                (n, wait)
            }
            None => (lr.sb.mark_is_lost(), None),
        }
    }

    /// Step 5: enter recovery (RFC 6675 section 5 step 4; Linux's
    /// `tcp_enter_recovery`). Returns how many segments it marked lost.
    pub(super) fn sack_enter_recovery(&mut self, lr: &mut Lr) -> u64 {
        // One reduction per window for marks and losses (RFC 3168 section
        // 6.1.2), as NewReno's fast retransmission.
        let after_ecn = self.last_cut == Cut::Ecn && self.snd_una < self.recover;
        self.undo_at_recovery(lr, after_ecn);
        let prior = self.window();
        let continued = self.cwr_into_recovery(lr);
        if !continued {
            self.loss_cut(after_ecn);
        }
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.last_cut = Cut::Loss;
        self.in_recovery = true;
        self.ecn_hold = false;
        self.rtt_seq = None;
        self.stats.fast_retransmits += 1;
        self.stats.sack_recoveries += 1;
        if !continued {
            lr.prr = Prr::start(prior);
        }
        if !self.cfg.tcp.prr {
            // RFC 6675 section 5 step (4.2): cwnd = ssthresh.
            self.cwnd = self.exit_cwnd;
        }
        if let Some(r) = lr.rack.as_mut() {
            // Linux's `tcp_init_cwnd_reduction`: the TLP episode ends.
            r.tlp_high = None;
            0
        } else if lr.sb.outstanding() > 0 && lr.sb.slot(self.snd_una).bits & SACKED == 0 {
            // Step (4.3): the first segment not acknowledged goes first.
            u64::from(lr.sb.mark_lost(self.snd_una) == super::scoreboard::Marked::Lost)
        } else {
            0
        }
    }

    /// Step 7: the lost segments not yet sent again, lowest first, then new
    /// data, while pipe < cwnd.
    pub(super) fn lr_send(&mut self, lr: &mut Lr, now: SimTime, out: &mut Vec<Seg>) -> Sent {
        let mut sent = Sent::default();
        if self.ecn_hold {
            return sent;
        }
        let w = self.window();
        let mut pieces = self.pieces();
        // A packet held back for want of room in the window rather than in
        // the receiver's (`cwnd_use.rs`).
        let mut held_by_window = false;
        // Whether the round ended with the pipe at the window.
        let full = loop {
            if lr.sb.pipe() >= w {
                break true;
            }
            if !self.pace_allows(now, lr.sb.pipe() == 0) {
                break false;
            }
            // F-RTO's step 2.b sends new data only.
            let lost = if lr.frto_new { None } else { lr.sb.next_lost() };
            if let Some(seq) = lost {
                sent.head |= seq == self.snd_una;
                self.lr_resend(lr, seq, now, out);
                continue;
            }
            if self.may_send_new(lr) {
                if let Some(goal) = pieces.opening() {
                    if let Some(held) = self.tso_defers(lr, now, w, goal) {
                        held_by_window = held == super::tso_defer::Held::Window;
                        break false;
                    }
                }
                if !self.in_recovery && !lr.loss && self.snd_nxt >= self.snd_una + w {
                    // Beyond the window on SACKed segments: limited
                    // transmit's generalisation, left out of the FlightSize
                    // that sets ssthresh (RFC 3042).
                    self.lt_sent += 1;
                }
                self.lr_new(lr, now, out);
                pieces.sent(out);
                sent.new = true;
                continue;
            }
            break false;
        };
        pieces.end(out);
        if self.cfg.tcp.cwnd_validation() {
            // The window limited the round if the pipe reached it (where
            // the receiver's `rwnd` bounds the window below cwnd, if the
            // pipe reached cwnd too), or it held a packet back.
            let limited = held_by_window
                || (full && (w < u64::from(self.cfg.tcp.rwnd) || self.pipe_at_cwnd(lr.sb.pipe())));
            self.record_cwnd_use(lr, sent.new, limited);
        }
        sent
    }

    /// New data may go: the application has some, and the window the
    /// receiver allows has room for it.
    #[inline]
    pub(super) fn may_send_new(&self, lr: &Lr) -> bool {
        self.snd_nxt < self.app_limit && self.snd_nxt < self.receiver_edge(lr)
    }

    /// The right edge of the window the receiver allows: `rwnd` past the
    /// cumulative ACK, and its autotuned edge (Linux's `tcp_wnd_end`).
    #[inline]
    pub(super) fn receiver_edge(&self, lr: &Lr) -> u64 {
        (self.snd_una + u64::from(self.cfg.tcp.rwnd)).min(lr.peer_edge)
    }

    /// Send new segment `snd_nxt`.
    pub(super) fn lr_new(&mut self, lr: &mut Lr, now: SimTime, out: &mut Vec<Seg>) {
        let seq = self.snd_nxt;
        let s = self.data_seg(seq, now);
        if self.cfg.tcp.pacing {
            self.paced_sent_at_once((s.seq, s.size, s.flags), false, now);
        }
        out.push(s);
        lr.sb.sent_new(seq, now);
        self.snd_nxt += 1;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if self.in_cwnd_reduction(lr) {
            lr.prr.out += 1;
        }
    }

    /// Send segment `seq` again.
    pub(super) fn lr_resend(&mut self, lr: &mut Lr, seq: u64, now: SimTime, out: &mut Vec<Seg>) {
        self.resend_copy(lr, seq, now, out);
        if self.cfg.tcp.dsack() {
            Self::dsack_resent(lr);
        }
    }

    /// Send segment `seq` again, not counted among the retransmissions
    /// D-SACKs may show needless (a tail loss probe's, `dsack.rs`; the
    /// others through [`TcpFlow::lr_resend`]).
    pub(super) fn resend_copy(&mut self, lr: &mut Lr, seq: u64, now: SimTime, out: &mut Vec<Seg>) {
        let s = self.data_seg(seq, now);
        if self.cfg.tcp.pacing {
            self.paced_sent_at_once((s.seq, s.size, s.flags), false, now);
        }
        out.push(s);
        lr.sb.sent_again(seq, now);
        if self.cfg.tcp.undo() {
            Self::undo_stamp(lr, now);
        }
        if self.cfg.tcp.dsack() {
            lr.retrans_total += 1;
        }
        if let Some(r) = lr.rack.as_mut() {
            r.on_resend(seq, now);
        }
        if self.in_cwnd_reduction(lr) {
            lr.prr.out += 1;
        }
    }

    /// A flow that stops before its data is acknowledged, or whose next
    /// segments are to be sent: the SACK flows' sending (from
    /// [`TcpFlow::send_available`]).
    pub(super) fn sack_send(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        let mut lr = self.lr.take().expect("a SACK flow has its recovery state");
        let was_empty = self.snd_max == self.snd_una;
        let sent = self.lr_send(&mut lr, now, out);
        if sent.new || sent.head {
            self.arm_timers(&mut lr, now, false, sent, None, was_empty);
        }
        self.lr = Some(lr);
    }
}

/// Linux's `TCP_CA_Disorder`: segments are SACKed, deemed lost or sent
/// again, or the oldest was sent again (`tcp_left_out`,
/// `tcp_any_retrans_done`).
pub(super) fn disorder(lr: &Lr) -> bool {
    let sb = &lr.sb;
    sb.sacked_out + sb.lost_out + sb.retrans_out > 0
        || (sb.outstanding() > 0 && sb.slot(sb.una()).bits & EVER != 0)
}

#[cfg(test)]
mod tests {
    use super::super::testing::Net;
    use crate::scenario::TcpSpec;
    use crate::units::SimTime;

    fn spec(sack: bool, rack: bool, prr: bool) -> TcpSpec {
        TcpSpec {
            sack,
            rack,
            prr,
            initial_cwnd: 20,
            ..TcpSpec::default()
        }
    }

    fn ms(t: SimTime) -> f64 {
        t.as_secs_f64() * 1e3
    }

    /// How long the first recovery lasted, ms.
    fn first_recovery_ms(n: &Net) -> f64 {
        let on = n.recovery.iter().find(|r| r.1).expect("a recovery").0;
        let off = n
            .recovery
            .iter()
            .find(|r| !r.1 && r.0 > on)
            .expect("its end")
            .0;
        ms(off) - ms(on)
    }

    /// Linux's `tcp_may_raise_cwnd` with the degree of reordering
    /// (`reorder.rs`). A NewReno flow with SACK and RACK in congestion
    /// avoidance, 20 segments (0-19) sent at 0 with a window of 20. At
    /// 100 ms an ACK SACKs 10 and 11 (0 cumulatively: 0-9 overtaken); with
    /// two SACKed RACK waits a quarter of the minimum RTT before deeming
    /// 0-9 lost, and the window stays 20, the ACK advancing nothing. At
    /// 101 ms 0-9 arrive (ACK 12): reordering seen, 0 lies 12 segments
    /// below the end of the highest SACKed (11), so the degree is 12, and the window
    /// grows for the ACK (byte counting off: 1 / 20). Then an ACK SACKing
    /// 13-15 alone (12 held back) grows it again by 1 / cwnd, where before
    /// any reordering is seen ACKs that only SACK leave it as it was.
    #[test]
    fn sacks_grow_the_window_once_the_degree_of_reordering_is_above_three() {
        use super::super::sack::{SackBlocks, DUP_NONE};
        use super::super::testing::{recovery_spec, sender};
        use crate::packet::{flags, Ecn};

        let blocks = |ack: u64, s: u64, e: u64| SackBlocks {
            n: 1,
            dup: DUP_NONE,
            b: [((s - ack) as u32, (e - ack) as u32), (0, 0), (0, 0)],
            wnd: 0,
        };
        let at = |t: u64| SimTime::from_millis(t);
        let on_ack = |tx: &mut super::TcpFlow, t: u64, ack: u64, b: &SackBlocks| {
            let mut out = Vec::new();
            tx.on_ack_sack(at(t), ack, flags::ACK, Ecn::NotEct, at(0), b, &mut out);
        };
        let tcp = TcpSpec {
            rwnd: 1000,
            ..recovery_spec(false, false, false)
        };
        let (mut tx, _) = sender(20.0, tcp);
        on_ack(&mut tx, 100, 0, &blocks(0, 10, 12));
        assert_eq!(tx.cwnd, 20.0);
        on_ack(&mut tx, 101, 12, &SackBlocks::NONE);
        assert_eq!(tx.stats.reorderings, 1);
        assert!(!tx.in_recovery);
        let before = tx.cwnd;
        assert!((before - 20.05).abs() < 1e-9, "{before}");
        on_ack(&mut tx, 110, 12, &blocks(12, 13, 16));
        assert!(
            (tx.cwnd - (before + 1.0 / before)).abs() < 1e-9,
            "{} {before}",
            tx.cwnd
        );

        // SACK-only ACKs before any reordering is seen (10, then 11: two
        // SACKed, nothing deemed lost yet) leave the window as it was.
        let (mut fresh, _) = sender(20.0, tcp);
        on_ack(&mut fresh, 100, 0, &blocks(0, 10, 11));
        on_ack(&mut fresh, 101, 0, &blocks(0, 10, 12));
        assert_eq!((fresh.cwnd, fresh.stats.reorderings), (20.0, 0));
        assert!(!fresh.in_recovery);
    }

    /// A flow in congestion avoidance with a window of 20 segments over a
    /// path of 105 ms (50 ms each way, a bottleneck of 5 ms per segment,
    /// so the window just fills it), segments 5, 8 and 11 lost.
    fn three_losses(sack: bool, prr: bool) -> Net {
        let mut n = Net::new(
            spec(sack, false, prr),
            u64::MAX,
            50,
            5000,
            &[(5, 1), (8, 1), (11, 1)],
        );
        n.tx.ssthresh = 20.0;
        n.run(800);
        n
    }

    /// The window grows by the segments an ACK newly delivers (Linux's
    /// `acked_sacked`), not by how far the cumulative ACK moved: one loss
    /// (segment 5) in a window of 20 with byte counting, no PRR. The ACK
    /// that ends the recovery covers the retransmission and the 19
    /// segments SACKed while it was out; it delivers one, so the window
    /// stays at ssthresh = 10 (counter 1), where counting the cumulative
    /// advance would have added two segments.
    #[test]
    fn the_ack_that_ends_a_recovery_counts_only_what_it_delivers() {
        let tcp = TcpSpec {
            byte_counting: true,
            ..spec(true, false, false)
        };
        let mut n = Net::new(tcp, u64::MAX, 50, 5000, &[(5, 1)]);
        n.tx.ssthresh = 20.0;
        n.run(400);
        let off = n
            .recovery
            .iter()
            .filter(|r| !r.1)
            .nth(1)
            .expect("the recovery's end")
            .0;
        let at_exit = n
            .cwnd
            .iter()
            .rev()
            .find(|c| c.0 == off)
            .expect("a window")
            .1;
        assert_eq!(n.tx.ssthresh, 10.0);
        assert_eq!(at_exit, 10.0);
    }

    /// RFC 6675 against NewReno, three losses in one window. Segment k's ACK
    /// returns at 5 (k + 1) + 100 ms. SACK: 6, 7 and 9 are SACKed by 150 ms,
    /// so 5 is lost (three SACKed above it) and goes at once (section 5 step
    /// 4.3); 8 is lost at 165 ms (9, 10, 12 SACKed), 11 at 175 ms; both go
    /// when the pipe falls below cwnd = ssthresh = 10 (FlightSize 20 / 2),
    /// within half a round trip; the recovery ends when their ACKs return,
    /// 1.5 round trips after it began. NewReno repairs one hole per round
    /// trip (partial ACKs at 255 and 360 ms): three round trips.
    #[test]
    fn three_losses_in_one_window_sack_against_newreno() {
        let s = three_losses(true, false);
        let resent: Vec<(f64, u64)> = s.resent().iter().map(|&(t, q)| (ms(t), q)).collect();
        assert_eq!(
            resent.iter().map(|r| r.1).collect::<Vec<_>>(),
            vec![5, 8, 11]
        );
        assert!((resent[0].0 - 150.0).abs() < 1e-6, "{resent:?}");
        assert!(resent[2].0 < 150.0 + 52.5, "{resent:?}");
        assert_eq!(s.tx.stats.timeouts, 0);
        assert_eq!(
            (s.tx.stats.sack_recoveries, s.tx.stats.fast_retransmits),
            (1, 1)
        );
        assert_eq!(s.tx.ssthresh, 10.0);
        let d = first_recovery_ms(&s);
        assert!((150.0..=160.0).contains(&d), "SACK recovery {d} ms");

        let nr = three_losses(false, false);
        let resent: Vec<(f64, u64)> = nr.resent().iter().map(|&(t, q)| (ms(t), q)).collect();
        assert_eq!(
            resent,
            vec![
                (150.00000000000003, 5),
                (255.0, 8),
                (360.00000000000006, 11)
            ]
        );
        assert_eq!(nr.tx.stats.timeouts, 0);
        assert_eq!(nr.tx.stats.sack_recoveries, 0);
        let d = first_recovery_ms(&nr);
        assert!(
            (d - 315.0).abs() < 1e-6,
            "NewReno recovery {d} ms: three round trips"
        );
    }

    /// With PRR (RFC 6937) the holes go as soon as they are found (PRR lets
    /// one segment go for every two delivered, from the first): 8 at 165 ms
    /// and 11 at 175 ms; the recovery ends with cwnd = ssthresh, before the
    /// window grows again on the same ACK.
    #[test]
    fn prr_sends_the_holes_as_they_are_found() {
        let p = three_losses(true, true);
        let resent: Vec<(f64, u64)> = p.resent().iter().map(|&(t, q)| (ms(t), q)).collect();
        assert_eq!(
            resent.iter().map(|r| r.1).collect::<Vec<_>>(),
            vec![5, 8, 11]
        );
        assert!((resent[1].0 - 165.0).abs() < 1e-6 && (resent[2].0 - 175.0).abs() < 1e-6);
        let end = p
            .recovery
            .iter()
            .find(|r| !r.1 && r.0 > SimTime::ZERO)
            .unwrap()
            .0;
        // After the last event at that instant (a segment reaches the
        // receiver at the same time).
        let at_end = p.cwnd.iter().rev().find(|c| c.0 == end).unwrap().1;
        // cwnd = ssthresh = 10, then one ACK's growth in congestion avoidance.
        assert!((at_end - 10.1).abs() < 1e-9, "{at_end}");
        // In recovery the window never exceeds the one before the loss.
        let on = p.recovery.iter().find(|r| r.1).unwrap().0;
        assert!(p
            .cwnd
            .iter()
            .filter(|c| c.0 >= on && c.0 < end)
            .all(|c| c.1 <= 21.0));
    }

    /// PRR without SACK: NewReno's recovery (one hole per partial ACK) with
    /// PRR's window instead of inflation; it ends with cwnd = ssthresh.
    #[test]
    fn prr_without_sack_ends_at_ssthresh() {
        let p = three_losses(false, true);
        assert_eq!(
            p.resent().iter().map(|r| r.1).collect::<Vec<_>>(),
            vec![5, 8, 11]
        );
        let on = p.recovery.iter().find(|r| r.1).unwrap().0;
        let end = p.recovery.iter().find(|r| !r.1 && r.0 > on).unwrap().0;
        let at_end = p.cwnd.iter().rev().find(|c| c.0 == end).unwrap().1;
        assert_eq!(at_end, 10.0);
        // PRR's window stays at most the window before the loss; NewReno's
        // inflation takes it beyond (ssthresh + the duplicate ACKs).
        assert!(p
            .cwnd
            .iter()
            .filter(|c| c.0 >= on && c.0 < end)
            .all(|c| c.1 <= 21.0));
        let nr = three_losses(false, false);
        assert!(nr.cwnd.iter().any(|c| c.1 > 21.0));
    }

    /// A retransmission lost again: RFC 6675 alone marks a segment lost
    /// once, so only the retransmission timer repairs it; RACK sees that a
    /// segment sent after the retransmission was delivered and sends it
    /// again (RFC 8985 section 3.3).
    #[test]
    fn rack_finds_a_lost_retransmission() {
        let drops = [(5, 1), (5, 2)];
        for (rack, timeouts) in [(false, 1), (true, 0)] {
            let mut n = Net::new(spec(true, rack, false), u64::MAX, 50, 5000, &drops);
            n.tx.ssthresh = 20.0;
            n.run(1500);
            assert_eq!(n.tx.stats.timeouts, timeouts, "rack {rack}");
            let fives = n.resent().iter().filter(|r| r.1 == 5).count();
            assert_eq!(fives, 2, "rack {rack}");
            if rack {
                assert!(n.tx.stats.rack_detections >= 2);
            }
        }
    }

    /// A tail loss (RFC 8985 section 7): ten segments, the last two lost.
    /// The ACK of segment 7 returns at 100.8 ms and arms the probe timeout
    /// 2 SRTT + 2 ms = 2 x 100.1 + 2 ms later (two segments outstanding):
    /// at 303.0 ms segment 9 goes again (no new data); its SACK shows 8
    /// lost (sent earlier, RACK) and recovery sends it. No timeout. Without
    /// RACK-TLP the retransmission timer fires at 100.8 + 300.3 ms.
    #[test]
    fn tail_loss_probe_instead_of_a_timeout() {
        let mk = |rack| {
            let tcp = TcpSpec {
                initial_cwnd: 10,
                ..spec(true, rack, false)
            };
            let mut n = Net::new(tcp, 10, 50, 100, &[(8, 1), (9, 1)]);
            n.run(5000);
            n
        };
        let r = mk(true);
        let resent: Vec<(f64, u64)> = r.resent().iter().map(|&(t, q)| (ms(t), q)).collect();
        assert_eq!(resent.len(), 2, "{resent:?}");
        assert_eq!(resent[0].1, 9);
        assert!((resent[0].0 - 303.0).abs() < 1e-6, "{resent:?}");
        assert_eq!(resent[1].1, 8);
        assert_eq!(
            (
                r.tx.stats.tlp_probes,
                r.tx.stats.rack_detections,
                r.tx.stats.timeouts
            ),
            (1, 1, 0)
        );
        assert_eq!(r.rx.delivered(), 10);
        let s = mk(false);
        assert_eq!((s.tx.stats.tlp_probes, s.tx.stats.timeouts), (0, 1));
        assert!(
            (ms(s.resent()[0].0) - 401.1).abs() < 1e-6,
            "{:?}",
            s.resent()
        );
        assert_eq!(s.rx.delivered(), 10);
    }

    /// RACK's reordering timer (RFC 8985 section 6.3): ten segments,
    /// segment 7 lost. Only 8 and 9 are SACKed (101.0 ms), fewer than three,
    /// so RACK waits reo_wnd = min_rtt / 4 = 100.1 / 4 ms past RACK.rtt; the
    /// timer (+ 2 ms, as Linux) fires at 101.0 + 25.025 + 2 = 128.025 ms and
    /// 7 goes then. RFC 6675 alone never sees three duplicate ACKs: the
    /// retransmission timer repairs it.
    #[test]
    fn reordering_timer_finds_a_loss_with_few_sacks() {
        let mk = |rack| {
            let tcp = TcpSpec {
                initial_cwnd: 10,
                ..spec(true, rack, false)
            };
            let mut n = Net::new(tcp, 10, 50, 100, &[(7, 1)]);
            n.run(5000);
            n
        };
        let r = mk(true);
        let resent: Vec<(f64, u64)> = r.resent().iter().map(|&(t, q)| (ms(t), q)).collect();
        assert_eq!(resent.len(), 1);
        assert_eq!(resent[0].1, 7);
        assert!((resent[0].0 - 128.025).abs() < 1e-6, "{resent:?}");
        assert_eq!(
            (
                r.tx.stats.rack_detections,
                r.tx.stats.tlp_probes,
                r.tx.stats.timeouts
            ),
            (1, 0, 0)
        );
        let s = mk(false);
        assert_eq!(s.tx.stats.timeouts, 1);
    }

    /// When RACK's reordering timer starts a recovery, BBR's window is the
    /// one its last ACK set, not PRR's (Linux's `tcp_rack_reo_timeout`
    /// calls `tcp_cwnd_reduction` only for controls without their own
    /// `cong_control`). Twelve segments, the first ten at time 0 (50 ms
    /// one way, a bottleneck gap of 100 us, as in the test above), 6, 7 and
    /// 8 lost: 9's SACK comes at 101.0 ms and the timer marks all three at
    /// 128.025 ms, as above. 6 goes at once, and 7 and 8 follow at BBR's
    /// pacing rate within 6 ms, where PRR's window (the pipe plus one) held
    /// them for the next ACK, 6's, at 200.2 ms.
    #[test]
    fn bbr_keeps_its_window_when_the_reordering_timer_starts_a_recovery() {
        let tcp = TcpSpec {
            variant: crate::scenario::TcpVariant::Bbr,
            pacing: true,
            initial_cwnd: 10,
            ..spec(true, true, true)
        };
        let mut n = Net::new(tcp, 12, 50, 100, &[(6, 1), (7, 1), (8, 1)]);
        n.run(5000);
        let resent: Vec<(f64, u64)> = n.resent().iter().map(|&(t, q)| (ms(t), q)).collect();
        assert_eq!(resent.iter().map(|r| r.1).collect::<Vec<_>>(), [6, 7, 8]);
        assert!((resent[0].0 - 128.025).abs() < 1e-6, "{resent:?}");
        assert!(resent[2].0 < 135.0, "{resent:?}");
        assert_eq!((n.tx.stats.rack_detections, n.tx.stats.timeouts), (3, 0));
    }

    /// Prague owns its window in a recovery, with `tcp.prr` on as in the
    /// linux profile: 20 segments leave at 0 ms, 1 ms apart through the
    /// bottleneck, 0 lost. The SACKs of 1 and 2 (102, 103 ms) let limited
    /// transmit send 20 and 21; 3's (104 ms) starts the recovery: the
    /// window steps from 20 to 19 and 0 goes again at once (the pipe 22 -
    /// 3 SACKed - 1 lost = 18). Each later SACK takes one segment out of
    /// the pipe and the window one down, so nothing goes until the window
    /// reaches half, 10, at 113 ms; then one new segment a SACK, 22 at 114
    /// ms to 28 at 120 ms. (PRR sent one per two SACKs: 22 at 106 ms, 28
    /// at 118 ms.)
    #[test]
    fn prague_steps_its_window_down_in_a_recovery_without_prr() {
        let tcp = TcpSpec {
            variant: crate::scenario::TcpVariant::Prague,
            ecn: true,
            ecn_codepoint: crate::scenario::EcnCodepoint::Ect1,
            pacing: true,
            ..spec(true, false, true)
        };
        let mut n = Net::new(tcp, 40, 50, 1000, &[(0, 1)]);
        n.run(5000);
        assert_eq!(n.recovery[1], (SimTime::from_millis(104), true));
        assert_eq!(n.resent(), [(SimTime::from_millis(104), 0)]);
        let steps: Vec<f64> = (104..=114).map(|t| n.cwnd_at(t)).collect();
        assert_eq!(
            steps,
            [19.0, 18.0, 17.0, 16.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0, 10.0]
        );
        let new: Vec<(f64, u64)> = (n.sent.iter())
            .filter(|s| !s.2 && s.1 >= 22 && s.1 <= 28)
            .map(|s| (ms(s.0), s.1))
            .collect();
        let expect: Vec<(f64, u64)> = (22..=28).map(|q| ((q + 92) as f64, q)).collect();
        assert_eq!(new.len(), 7);
        for (a, b) in new.iter().zip(&expect) {
            assert!((a.0 - b.0).abs() < 1e-6 && a.1 == b.1, "{new:?}");
        }
        assert_eq!(n.tx.stats.timeouts, 0);
    }

    /// The oldest segment's retransmission waits behind the window sent
    /// before it: 100 segments leave at time 0 and take 5 ms each through
    /// the bottleneck, 0 is lost. Segment k's SACK returns at 5 (k + 1) +
    /// 100 ms; the third (120 ms) starts recovery and 0 goes again, behind
    /// 1..99: it leaves the bottleneck at 505 ms and its ACK returns at
    /// 605 ms, beyond the RTO (300 ms) from 120 ms. Each SACK of a segment
    /// sent before that retransmission restarts the timer (Linux's
    /// `tcp_clean_rtx_queue`), the last at 600 ms: no timeout. If the
    /// retransmission is lost too, the timer fires an RTO after that last
    /// SACK (900 ms), not at 420 ms.
    #[test]
    fn sacks_of_older_segments_restart_the_timer() {
        let mk = |drops: &[(u64, u32)]| {
            let tcp = TcpSpec {
                initial_cwnd: 100,
                ..spec(true, false, false)
            };
            let mut n = Net::new(tcp, 100, 50, 5000, drops);
            // SRTT 100 ms, RTTVAR 50 ms: RTO 300 ms.
            n.tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
            n.run(5000);
            n
        };
        let once = mk(&[(0, 1)]);
        let at = SimTime::from_millis;
        assert_eq!(once.resent(), vec![(at(120), 0)]);
        assert_eq!(once.tx.stats.timeouts, 0);
        assert_eq!(once.rx.delivered(), 100);

        let twice = mk(&[(0, 1), (0, 2)]);
        assert_eq!(twice.resent(), vec![(at(120), 0), (at(900), 0)]);
        assert_eq!(twice.tx.stats.timeouts, 1);
        assert_eq!(twice.rx.delivered(), 100);
    }

    /// A timeout keeps the SACK information (as Linux): with 0 and 1 lost
    /// twice, recovery's retransmissions are lost too and the timer fires;
    /// then only 0 and 1 go again (the SACKed 2..19 do not: no go-back-N).
    #[test]
    fn a_timeout_resends_only_what_is_not_sacked() {
        let drops = [(0, 1), (0, 2), (1, 1), (1, 2)];
        let mut n = Net::new(spec(true, false, false), 20, 50, 5000, &drops);
        n.run(5000);
        assert_eq!(n.tx.stats.timeouts, 1);
        let resent: Vec<u64> = n.resent().iter().map(|r| r.1).collect();
        assert_eq!(resent, vec![0, 1, 0, 1]);
        assert_eq!(n.rx.delivered(), 20);
    }

    /// A timeout's retransmission lost again (Linux's `FLAG_LOST_RETRANS`):
    /// every segment sent from 2.0 to 2.6 s is lost (the first timeout's
    /// copy of the oldest, 430, too), so the timer fires twice; its second
    /// copy is delivered and the loss state sends 431 and 432 again, then
    /// 433 and 434 on their ACKs. 432's copy is lost too: the SACK of 433,
    /// sent after it, shows RACK that copy lost, and the flow leaves the
    /// loss state for a recovery (a cut from the window then, PRR) in which
    /// 432 goes a third time. Every segment is delivered.
    #[test]
    fn a_lost_retransmission_ends_the_timeouts_episode_in_a_recovery() {
        let mut n = Net::new(
            super::super::testing::recovery_spec(true, true, false),
            515,
            50,
            1200,
            &[(40, 1), (432, 2)],
        );
        n.set_outage_ms(2000, 2600);
        n.run(30_000);
        let after = SimTime::from_millis(2600);
        let recovery_at = n
            .recovery
            .iter()
            .find(|r| r.1 && r.0 > after)
            .map(|r| ms(r.0));
        let copies = |seq: u64| n.resent().iter().filter(|r| r.1 == seq).count();
        eprintln!(
            "timeouts {}, recoveries {}; after the outage a recovery at {recovery_at:?} ms; \
             432 sent again {} times; delivered {}",
            n.tx.stats.timeouts,
            n.tx.stats.sack_recoveries,
            copies(432),
            n.rx.rcv_nxt
        );
        assert_eq!(n.tx.stats.timeouts, 2);
        let at = recovery_at.expect("a recovery after the outage");
        assert!((3400.0..3600.0).contains(&at), "{at}");
        assert_eq!(n.tx.stats.sack_recoveries, 2);
        assert_eq!(copies(432), 2);
        assert_eq!(n.rx.rcv_nxt, 515);
    }

    /// A timeout while the receiver still echoes ECN-Echo (RFC 3168: until
    /// a new segment carries CWR): segment 30 arrives CE-marked, and every
    /// segment sent from 150 to 700 ms is lost, the one with CWR among
    /// them. The timeout's retransmissions carry no CWR, so every ACK of
    /// the loss state echoes ECE; the window still grows by slow start
    /// there, as Linux's (`tcp_cong_control` raises it outside CWR and
    /// Recovery) and ns-3's: 18 segments within a second of the second
    /// timeout, everything sent by 2.64 s. Held at one segment by the
    /// echo, the flow sent one retransmission a round trip and finished at
    /// 5.06 s.
    #[test]
    fn the_loss_state_grows_the_window_under_ecn_echo() {
        let tcp = TcpSpec {
            ecn: true,
            ..spec(true, false, false)
        };
        let mut n = Net::new(tcp, 300, 50, 1200, &[]);
        n.set_marks(&[(30, 1)]);
        n.set_outage_ms(150, 700);
        n.run(20_000);
        let lost = n.lost.len();
        let rto = n
            .cwnd
            .iter()
            .find(|c| c.0 > SimTime::from_millis(700) && c.1 <= 1.0)
            .map(|c| ms(c.0));
        let peak = n
            .cwnd
            .iter()
            .filter(|c| rto.is_some_and(|t| ms(c.0) > t && ms(c.0) < t + 1000.0))
            .map(|c| c.1)
            .fold(0.0, f64::max);
        let done = n.sent.last().map(|s| ms(s.0)).unwrap_or(0.0);
        eprintln!(
            "lost {lost}, timeouts {}, timeout at {rto:?} ms, window within 1 s after {peak}, \
             last segment sent at {done:.0} ms, delivered {}",
            n.tx.stats.timeouts, n.rx.rcv_nxt
        );
        assert!(lost > 20, "{lost}");
        assert_eq!(n.tx.stats.timeouts, 2);
        assert!(rto.is_some());
        assert!(peak >= 8.0, "{peak}");
        assert_eq!(n.rx.rcv_nxt, 300);
        assert!(done < 3000.0, "{done}");
    }
}
