//! DCTCP (RFC 8257): the window is cut in proportion to the extent of
//! congestion, not halved. The sender keeps `alpha`, a moving average of
//! the fraction `F` of its segments whose ACKs echoed CE, updated once per
//! window of data (section 3.3):
//!
//! ```text
//! F     = segments acknowledged by ACKs with ECE / segments acknowledged
//! alpha = (1 - g) alpha + g F,                     g = 1/16
//! cwnd  = cwnd (1 - alpha / 2)                     on ECE, once per window
//! ```
//!
//! Where RFC 8257 leaves a choice, aqmlab does what Linux's DCTCP does
//! (`net/ipv4/tcp_dctcp.c`, `tcp_dctcp.h`, and the CWR state of
//! `tcp_input.c`):
//!
//! - `alpha` starts at 1 (`dctcp_alpha_on_init` = 1024/1024): the first
//!   marks cut as hard as Reno. The observation window starts at the first
//!   ACK and each ends when the cumulative ACK reaches the highest segment
//!   sent when it began (`snd_una >= next_seq`); alpha is updated on that
//!   ACK before its ECE is answered, so a cut uses the newest alpha. F
//!   counts segments, as Linux's `delivered` / `delivered_ce` do (RFC 8257
//!   counts bytes: the same for full segments); a duplicate ACK delivers
//!   one segment, and the cumulative ACK that follows duplicates counts
//!   those segments once (Linux's Reno path, `tcp_add_reno_sack`).
//!   alpha is kept in floating point (RFC 8257's arithmetic) or, with
//!   `tcp.dctcp = "linux"` (the linux profile), in Linux's integers: below.
//! - The cut (`dctcp_ssthresh`): ssthresh = max(cwnd (1 - alpha / 2), 2)
//!   and the window goes down to it at once (Linux spreads the cut over a
//!   round trip by PRR, RFC 6937, which aqmlab does not model). At most one
//!   cut per window: the next ECE may cut only once the ACK covers a
//!   segment sent after the cut (Linux's CWR state ends when `snd_una`
//!   passes `high_seq`), and during that window the window does not grow.
//!   No cut during loss recovery. Two segments at least, so RFC 3168's
//!   hold at one segment never applies.
//! - Losses (`dctcp_react_to_loss`, called from `dctcp_state` on entering
//!   recovery and on a timeout, `CA_EVENT_LOSS`): ssthresh = max(cwnd / 2,
//!   2) with cwnd the window before recovery's inflation, also for a loss
//!   in a window an ECN cut already answered (entering recovery sets
//!   ssthresh again). A timeout during recovery (with
//!   `tcp.timeout_in_recovery = "keep"`, the default), or a further timeout
//!   before the first one's window is acknowledged, keeps ssthresh
//!   (`tcp_enter_loss`).
//! - Growth (section 3.4): Reno's (or byte counting's, `tcp.byte_counting`).
//!   Recovery is NewReno's.
//!
//! Linux's integers (`tcp.dctcp = "linux"`; `tcp_dctcp.c`): alpha counts
//! 1/1024ths; a window's update first takes away alpha >> 4 (all of alpha
//! once that is 0, so an alpha below 16/1024 falls to 0), then adds
//! (marked << 6) / acked, at most 1024; the cut is `w - ((w x alpha) >>
//! 11)` and a loss's `w >> 1`, both at least 2, on the window `w` in whole
//! segments (`snd_cwnd`). The cut rounds down what it takes: a window of
//! 5 at alpha 0.35 (358) loses (5 x 358) >> 11 = 0 segments, so a small
//! window is cut only once alpha reaches about 2 / w, where RFC 8257's
//! arithmetic takes 0.875 of a segment. With small windows Linux's DCTCP
//! therefore needs about twice the marks to hold a queue (20 flows through
//! CoDel at 10 Mbit/s, windows of 5: 35 % of packets marked, against 18 %
//! with exact arithmetic; docs/tcp.md).
//!
//! The receiver's side, RFC 8257 section 3.2's two-state machine that keeps
//! ECE exact with delayed ACKs, is in `receiver.rs`; every packet of a DCTCP
//! flow but the connection set-up is ECT(0) (`sender.rs`, `receiver.rs`).

use super::{CongestionControl, State};
use crate::transport::tcp::{Cut, TcpFlow};
use crate::units::SimTime;

/// `g` (RFC 8257 section 3.3; Linux's `dctcp_shift_g` = 4): the weight of
/// the newest window in `alpha`.
pub const G: f64 = 1.0 / 16.0;

/// One connection's DCTCP sender state (RFC 8257 section 3.3's variables).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dctcp {
    /// `DCTCP.Alpha`, in [0, 1].
    alpha: f64,
    /// Segments acknowledged in the current observation window, and of
    /// those, by ACKs that carried ECE (`BytesAcked`, `BytesMarked`, in
    /// segments).
    acked: u64,
    marked: u64,
    /// Segments credited by duplicate ACKs since the last new ACK.
    dup_credit: u64,
    /// `DCTCP.WindowEnd`: the window ends when the cumulative ACK reaches
    /// this segment.
    window_end: u64,
    /// Linux's integer arithmetic (`tcp.dctcp = "linux"`): alpha a
    /// multiple of 1/1024, the cuts in whole segments (module head).
    pub linux: bool,
}

impl Default for Dctcp {
    fn default() -> Self {
        Dctcp {
            alpha: 1.0,
            acked: 0,
            marked: 0,
            dup_credit: 0,
            window_end: 0,
            linux: false,
        }
    }
}

impl Dctcp {
    /// `DCTCP.Alpha`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// An ACK reaches the sender: `newly` segments newly acknowledged, or a
    /// duplicate ACK (`dup`), with ECE or not; `snd_una` after it and
    /// `snd_max` (one past the highest segment sent). Returns whether it
    /// closed an observation window (alpha updated).
    pub fn on_ack(&mut self, newly: u64, dup: bool, ece: bool, snd_una: u64, snd_max: u64) -> bool {
        let delivered = delivered(&mut self.dup_credit, newly, dup);
        self.acked += delivered;
        if ece {
            self.marked += delivered;
        }
        if snd_una < self.window_end {
            return false;
        }
        // RFC 8257 section 3.3: the window ended.
        if self.linux {
            self.alpha = linux_alpha(self.alpha, self.marked, self.acked);
        } else {
            let f = if self.acked == 0 {
                0.0
            } else {
                self.marked as f64 / self.acked as f64
            };
            self.alpha = (1.0 - G) * self.alpha + G * f;
        }
        self.acked = 0;
        self.marked = 0;
        self.window_end = snd_max;
        true
    }

    /// ssthresh after an ECN-Echo that found the window `cwnd` (RFC 8257
    /// section 3.3; Linux's `dctcp_ssthresh`, at least two segments).
    pub fn ecn_ssthresh(&self, cwnd: f64) -> f64 {
        if self.linux {
            // `dctcp_ssthresh`, in whole segments and 1/1024ths of alpha
            // (both exact in an f64).
            let w = cwnd.floor() as u64;
            let a = (self.alpha * ALPHA_ONE as f64) as u64;
            return (w - ((w * a) >> 11)).max(2) as f64;
        }
        (cwnd * (1.0 - self.alpha / 2.0)).max(2.0)
    }
}

/// Linux's unit of alpha (`DCTCP_MAX_ALPHA`): alpha = 1.
const ALPHA_ONE: u64 = 1024;

/// One window's alpha update in Linux's integers (`dctcp_update_alpha`,
/// `dctcp_shift_g` = 4): `alpha` a multiple of 1/1024, `marked` of
/// `acked` segments acknowledged with ECE.
fn linux_alpha(alpha: f64, marked: u64, acked: u64) -> f64 {
    let mut a = (alpha * ALPHA_ONE as f64) as u64;
    // alpha -= min_not_zero(alpha, alpha >> g): all of it below 16.
    let decay = a >> 4;
    a -= if decay == 0 { a } else { decay };
    if marked > 0 {
        a = (a + (marked << 6) / acked.max(1)).min(ALPHA_ONE);
    }
    a as f64 / ALPHA_ONE as f64
}

/// ssthresh after a loss that found the window `cwnd` (Linux's
/// `dctcp_react_to_loss`).
pub fn loss_ssthresh(cwnd: f64) -> f64 {
    (cwnd / 2.0).max(2.0)
}

/// DCTCP (`tcp.variant = "dctcp"`, RFC 8257): alpha and its cut on every
/// ACK, Reno's growth outside the window a cut answered, the halving on a
/// loss or a timeout.
impl CongestionControl for Dctcp {
    #[inline(always)]
    fn on_ack(f: &mut TcpFlow, _now: SimTime, ack: u64, ece: bool) {
        f.dctcp_ack(ack, ece);
    }

    /// No growth while the window the last ECN cut answered is being
    /// acknowledged (Linux's CWR state); then Reno's, by the segments
    /// acknowledged ([`TcpFlow::counted_growth`]).
    #[inline(always)]
    fn on_new_ack(f: &mut TcpFlow, now: SimTime, acked: u64) {
        if f.dctcp_in_cwr() {
            return;
        }
        f.counted_growth::<Self>(now, acked);
    }

    /// Linux's `dctcp_react_to_loss`.
    #[inline]
    fn event_ssthresh(f: &mut TcpFlow, _reno: f64) -> f64 {
        f.dctcp_loss_ssthresh()
    }

    #[inline]
    fn timeout_ssthresh(f: &mut TcpFlow, _reno: f64) -> f64 {
        f.dctcp_timeout_ssthresh()
    }
}

impl TcpFlow {
    /// A DCTCP flow's work on an arriving ACK, before the new-ACK and
    /// duplicate-ACK rules (`ece`: echoed, and the flow is ECN-capable):
    /// the observation window's counts and alpha, then the answer to ECE.
    /// (Marked cold to keep it out of the path of the other variants'
    /// ACKs; it is called on every ACK of a DCTCP flow.)
    #[cold]
    #[inline(never)]
    pub(in crate::transport::tcp) fn dctcp_ack(&mut self, ack: u64, ece: bool) {
        if ack < self.snd_una {
            return; // an old ACK: nothing acknowledged, nothing echoed
        }
        let dup = ack == self.snd_una && self.snd_max > self.snd_una;
        let (newly, snd_max) = (ack - self.snd_una, self.snd_max);
        let Some(State::Dctcp(d)) = self.cc.as_deref_mut() else {
            return;
        };
        d.on_ack(newly, dup, ece, ack, snd_max);
        if self.cfg.tcp.ecn_prr() {
            // Linux's CWR state (`cwr.rs`): the window by PRR.
            if self.cwr_echo(ack, ece) {
                let cwnd = self.cwnd;
                if let Some(State::Dctcp(d)) = self.cc.as_deref() {
                    self.ssthresh = d.ecn_ssthresh(cwnd);
                }
                self.cwr_enter();
            }
            return;
        }
        // One cut per window: the ACK must cover a segment sent after the
        // last reduction or loss (Linux leaves CWR when snd_una passes
        // high_seq, and enters it again on this ACK's ECE).
        if ece && !self.in_recovery && ack > self.ecn_recover {
            self.ssthresh = d.ecn_ssthresh(self.cwnd);
            self.cwnd = self.cwnd.min(self.ssthresh);
            self.ecn_recover = self.snd_max;
            self.recover = self.snd_max;
            self.last_cut = Cut::Ecn;
            self.cwr_pending = true; // RFC 3168 section 6.1.2
            self.cwnd_cnt = 0;
            self.stats.ecn_reductions += 1;
        }
    }

    /// Whether the window an ECN cut answered is still being acknowledged
    /// (Linux's CWR state): no growth until the ACK covers a segment sent
    /// after the cut.
    #[inline]
    pub(in crate::transport::tcp) fn dctcp_in_cwr(&self) -> bool {
        self.last_cut == Cut::Ecn && self.snd_una <= self.ecn_recover
    }

    /// ssthresh after a loss or a timeout (Linux's `dctcp_react_to_loss`
    /// from the window before recovery's inflation): half, at least 2; in
    /// whole segments with Linux's integers. Prague halves alike.
    pub(in crate::transport::tcp) fn dctcp_loss_ssthresh(&self) -> f64 {
        let w = self.uninflated();
        match self.cc.as_deref() {
            Some(State::Dctcp(d)) if d.linux => ((w.floor() as u64) >> 1).max(2) as f64,
            _ => loss_ssthresh(w),
        }
    }

    /// ssthresh at a timeout (DCTCP's and Prague's CA_EVENT_LOSS halves
    /// the window): Linux's tcp_enter_loss sets it only outside recovery
    /// (`timeout_in_recovery`) and outside the window of an earlier
    /// timeout.
    pub(in crate::transport::tcp) fn dctcp_timeout_ssthresh(&self) -> f64 {
        let again = self.last_cut == Cut::Timeout && self.snd_una < self.recover;
        if again {
            self.ssthresh
        } else {
            self.dctcp_loss_ssthresh()
        }
    }

    /// DCTCP's alpha, or Prague's (None for other variants).
    pub fn dctcp_alpha(&self) -> Option<f64> {
        match self.cc.as_deref() {
            Some(State::Dctcp(d)) => Some(d.alpha()),
            Some(State::Prague(p)) => Some(p.alpha()),
            _ => None,
        }
    }
}

/// Segments an ACK delivered, as alpha counts them (module head): one per
/// duplicate ACK, and for an ACK that advances the window the segments it
/// covers less those the duplicates already counted, at least one;
/// `dup_credit` carries the duplicates' count between ACKs. Prague counts
/// alike.
pub(super) fn delivered(dup_credit: &mut u64, newly: u64, dup: bool) -> u64 {
    if dup {
        *dup_credit += 1;
        1
    } else if newly > 0 {
        let n = newly.saturating_sub(*dup_credit).max(1);
        *dup_credit = 0;
        n
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{flags, Ecn};
    use crate::scenario::{TcpSpec, TcpVariant};
    use crate::transport::tcp::testing::{ack, deliver, sender};
    use crate::transport::tcp::{Seg, TcpConfig};
    use crate::units::SimTime;

    fn dctcp_spec() -> TcpSpec {
        TcpSpec {
            variant: TcpVariant::Dctcp,
            ecn: true,
            limited_transmit: false,
            ..TcpSpec::default()
        }
    }

    /// RFC 8257 section 3.3 with g = 1/16, alpha starting at 1: a window
    /// of 8 segments of which 2 were acknowledged with ECE (F = 1/4) gives
    /// alpha = 15/16 x 1 + 1/16 x 1/4 = 0.953125; a window without marks
    /// then 15/16 x 0.953125 = 0.8935546875.
    #[test]
    fn alpha_after_a_window_with_a_quarter_marked() {
        let mut d = Dctcp::default();
        // The first ACK closes the initial, empty window (window_end 0):
        // one segment, unmarked; F = 0, alpha = 15/16. The window now ends
        // at segment 9 (snd_max).
        assert!(d.on_ack(1, false, false, 1, 9));
        assert_eq!(d.alpha, 0.9375);
        d.alpha = 1.0;
        // Segments 1..9: eight ACKs, two with ECE.
        for (i, ece) in [false, true, false, false, true, false, false, false]
            .into_iter()
            .enumerate()
        {
            let una = 2 + i as u64;
            let closed = d.on_ack(1, false, ece, una, 17);
            assert_eq!(closed, una == 9, "at {una}");
        }
        assert_eq!(d.alpha, 0.953125);
        assert_eq!((d.acked, d.marked, d.window_end), (0, 0, 17));
        for una in 10..=17 {
            d.on_ack(1, false, false, una, 25);
        }
        assert_eq!(d.alpha, 0.953125 * 15.0 / 16.0);
    }

    /// A delayed ACK for two segments counts both; duplicate ACKs count one
    /// segment each and the cumulative ACK after them the rest (at least
    /// one): a window of 6 segments, 2 by duplicates with ECE, then one ACK
    /// for 4 new segments (4 - 2 = 2 counted), then a delayed ACK of 2 with
    /// ECE: F = (2 + 2) / 6.
    #[test]
    fn duplicate_and_delayed_acks_count_segments_once() {
        let mut d = Dctcp {
            alpha: 0.0,
            window_end: 6,
            ..Dctcp::default()
        };
        d.on_ack(0, true, true, 0, 6);
        d.on_ack(0, true, true, 0, 6);
        d.on_ack(4, false, false, 4, 6);
        assert_eq!((d.acked, d.marked), (4, 2));
        assert!(d.on_ack(2, false, true, 6, 10));
        assert!((d.alpha - G * 4.0 / 6.0).abs() < 1e-15);
    }

    /// Linux's `dctcp_ssthresh`: cwnd (1 - alpha / 2), at least 2; with
    /// alpha = 0.5 a window of 20 is cut to 15, with alpha = 1 (the first
    /// marks) to 10 as Reno, a window of 3 with alpha 1 to 2.
    #[test]
    fn the_cut() {
        let d = Dctcp {
            alpha: 0.5,
            ..Dctcp::default()
        };
        assert_eq!(d.ecn_ssthresh(20.0), 15.0);
        assert_eq!(Dctcp::default().ecn_ssthresh(20.0), 10.0);
        assert_eq!(Dctcp::default().ecn_ssthresh(3.0), 2.0);
        assert_eq!(loss_ssthresh(21.0), 10.5);
        assert_eq!(loss_ssthresh(3.0), 2.0);
    }

    /// A DCTCP sender with a window of 20 in flight: the first ACK (ECE)
    /// closes the initial window (alpha 1 -> 15/16 x 1 + 1/16 x 1 = 1) and
    /// cuts to 20 x (1 - 1/2) = 10. Further ECE ACKs of that window neither
    /// cut nor grow; the first ACK beyond it (covering the segment sent
    /// after the cut) may cut again, by the alpha then.
    #[test]
    fn one_cut_per_window_and_no_growth_in_it() {
        let (mut tx, _) = sender(20.0, dctcp_spec());
        assert_eq!(tx.dctcp_alpha(), Some(1.0));
        ack(&mut tx, 100, 1, true);
        assert_eq!(tx.dctcp_alpha(), Some(1.0));
        assert_eq!((tx.ssthresh, tx.cwnd), (10.0, 10.0));
        assert_eq!(tx.stats.ecn_reductions, 1);
        // The window now ends at 20; ACKs 2..20, with and without ECE:
        // nothing moves but the counts.
        for a in 2..=20 {
            let sent = ack(&mut tx, 100 + a, a, a % 2 == 0);
            assert_eq!(tx.cwnd, 10.0, "at {a}");
            assert!(sent.iter().all(|s| s.ecn == Ecn::Ect0));
        }
        assert_eq!(tx.stats.ecn_reductions, 1);
        // ACK 20 closed the window of 19 segments (2..20), 10 with ECE:
        // alpha = 15/16 + 1/16 x 10/19.
        let alpha = 15.0 / 16.0 + 10.0 / 19.0 / 16.0;
        assert!((tx.dctcp_alpha().unwrap() - alpha).abs() < 1e-12);
        // Segment 20 was the first sent after the cut (CWR); its ACK
        // leaves the reduced window: an ECE on it cuts again.
        ack(&mut tx, 200, 21, true);
        assert_eq!(tx.stats.ecn_reductions, 2);
        assert!((tx.ssthresh - 10.0 * (1.0 - alpha / 2.0)).abs() < 1e-12);
    }

    /// Without ECE the window grows as Reno's once the reduced window is
    /// acknowledged.
    #[test]
    fn growth_resumes_after_the_reduced_window() {
        let (mut tx, _) = sender(20.0, dctcp_spec());
        ack(&mut tx, 100, 1, true); // cut to 10; segments sent up to 20
        for a in 2..=20 {
            ack(&mut tx, 100 + a, a, false);
        }
        assert_eq!(tx.cwnd, 10.0);
        ack(&mut tx, 200, 21, false);
        assert_eq!(tx.cwnd, 10.1, "congestion avoidance: + 1/10");
    }

    /// Linux's `dctcp_react_to_loss`: a fast retransmission sets ssthresh
    /// to half the window (20 -> 10), even right after an ECN cut in the
    /// same window (10 -> 5); a timeout too, but not during recovery.
    #[test]
    fn losses_halve_the_window() {
        let (mut tx, _) = sender(20.0, dctcp_spec());
        for _ in 0..3 {
            ack(&mut tx, 100, 0, false);
        }
        assert!(tx.in_recovery);
        assert_eq!(tx.ssthresh, 10.0);
        // A timeout during the recovery keeps ssthresh.
        let deadline = tx.rto_deadline.unwrap();
        tx.on_rto(deadline, &mut Vec::new());
        assert_eq!((tx.ssthresh, tx.cwnd), (10.0, 1.0));
        // After an ECN cut (20 -> 10) a loss in the same window halves again.
        let (mut tx, _) = sender(20.0, dctcp_spec());
        ack(&mut tx, 100, 1, true);
        assert_eq!(tx.cwnd, 10.0);
        for _ in 0..3 {
            ack(&mut tx, 101, 1, false);
        }
        assert!(tx.in_recovery);
        assert_eq!(tx.ssthresh, 5.0);
        // A timeout outside recovery: half the window, one segment.
        let (mut tx, _) = sender(20.0, dctcp_spec());
        tx.on_rto(SimTime::from_millis(300), &mut Vec::new());
        assert_eq!((tx.ssthresh, tx.cwnd), (10.0, 1.0));
        // A second timeout before the first one's window is acknowledged
        // keeps it (Linux's tcp_enter_loss in the Loss state).
        let deadline = tx.rto_deadline.unwrap();
        tx.on_rto(deadline, &mut Vec::new());
        assert_eq!((tx.ssthresh, tx.cwnd), (10.0, 1.0));
    }

    /// Linux's integers (`tcp.dctcp = "linux"`, `dctcp_update_alpha`,
    /// `dctcp_ssthresh`, `dctcp_react_to_loss`), by hand in 1/1024ths.
    #[test]
    fn linux_integers() {
        let q = |a: f64| a / 1024.0;
        // 1024 - (1024 >> 4) + (2 << 6) / 8 = 960 + 16 = 976, as the exact
        // rule gives (0.953125); then no marks: 976 - 61 = 915.
        assert_eq!(linux_alpha(1.0, 2, 8), q(976.0));
        assert_eq!(linux_alpha(q(976.0), 0, 8), q(915.0));
        // Below 16 all of alpha goes (15 >> 4 = 0): 15 -> 0, where the
        // exact rule keeps 14.06.
        assert_eq!(linux_alpha(q(15.0), 0, 8), 0.0);
        // One of three marked: 64 / 3 = 21 (exact: 21.33).
        assert_eq!(linux_alpha(0.0, 1, 3), q(21.0));
        // A window all marked from 1: 960 + 64 = 1024, at most 1024.
        assert_eq!(linux_alpha(1.0, 8, 8), 1.0);
        let d = |a: f64, linux: bool| Dctcp {
            alpha: q(a),
            linux,
            ..Dctcp::default()
        };
        // A window of 5 at alpha 358: (5 x 358) >> 11 = 0, no cut; the
        // exact rule takes 5 x 358 / 2048 = 0.874 of a segment.
        assert_eq!(d(358.0, true).ecn_ssthresh(5.0), 5.0);
        assert_eq!(d(358.0, false).ecn_ssthresh(5.0), 5.0 - 1790.0 / 2048.0);
        // At 410 (about 2 / 5): 2050 >> 11 = 1.
        assert_eq!(d(410.0, true).ecn_ssthresh(5.0), 4.0);
        assert_eq!(d(512.0, true).ecn_ssthresh(20.0), 15.0);
        assert_eq!(d(1024.0, true).ecn_ssthresh(3.0), 2.0);
        // A loss halves the window in whole segments: 5 -> 5 >> 1 = 2
        // (exact: 2.5).
        for (linux, want) in [(true, 2.0), (false, 2.5)] {
            let mut spec = dctcp_spec();
            spec.set_dctcp_linux(linux);
            let (mut tx, _) = sender(5.0, spec);
            for _ in 0..3 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            assert_eq!(tx.ssthresh, want, "linux {linux}");
        }
    }

    /// Every data segment ECT(0), retransmissions too, and the receiver's
    /// pure ACKs (a DCTCP socket in Linux sends every packet ECT).
    #[test]
    fn every_data_packet_and_ack_is_ect() {
        let (mut tx, first) = sender(4.0, dctcp_spec());
        assert!(first.iter().all(|s| s.ecn == Ecn::Ect0));
        let mut out = Vec::new();
        tx.on_rto(SimTime::from_millis(300), &mut out);
        assert_eq!((out[0].seq, out[0].ecn), (0, Ecn::Ect0));
        assert!(out[0].flags & flags::RETX != 0);
        let mut rx = TcpFlow::new(TcpConfig::from_spec(&dctcp_spec(), false, true));
        let acks = deliver(&mut rx, &first, &[]);
        assert!(acks.iter().all(|a| a.ecn == Ecn::Ect0));
    }

    /// RFC 8257 section 3.2, figure 1, with delayed ACKs (one ACK per two
    /// segments): the receiver's ACKs for the CE pattern N N C C C N N N
    /// (N: not CE, C: CE) of segments 0..7. The change to CE at segment 2
    /// finds no ACK pending (segment 1 was acknowledged with 0 and 1) and
    /// is acknowledged at once with ECE; segment 3 waits, segment 4 is the
    /// second and is acknowledged with ECE; the change back at segment 5
    /// finds nothing pending and is acknowledged at once without ECE;
    /// segment 6 waits and 7 is acknowledged. With the change at an odd
    /// position (N C N N): the delayed ACK for segment 0 goes out first
    /// with the old state (no ECE), then segment 1 with ECE; then segment
    /// 2's change back sends segment 2's ACK at once without ECE.
    #[test]
    fn receiver_ack_sequence_for_ce_patterns_with_delayed_acks() {
        let spec = TcpSpec {
            delayed_ack: true,
            ..dctcp_spec()
        };
        let run = |pattern: &str| -> Vec<(u64, bool)> {
            let mut rx = TcpFlow::new(TcpConfig::from_spec(&spec, false, true));
            let mut acks = Vec::new();
            for (i, c) in pattern.chars().enumerate() {
                let ecn = if c == 'C' { Ecn::Ce } else { Ecn::Ect0 };
                rx.on_data(
                    SimTime(i as u64),
                    i as u64,
                    flags::DATA,
                    ecn,
                    SimTime(0),
                    &mut acks,
                );
            }
            acks.iter()
                .map(|a: &Seg| (a.seq, a.flags & flags::ECE != 0))
                .collect()
        };
        assert_eq!(
            run("NNCCCNNN"),
            vec![(2, false), (3, true), (5, true), (6, false), (8, false)]
        );
        assert_eq!(run("NCNN"), vec![(1, false), (2, true), (3, false)]);
        // Without delayed ACKs every CE segment's ACK carries ECE, and no
        // other: ECE follows the CE state, neither latched until CWR nor
        // cleared by it (RFC 3168's receiver, NewReno here, echoes on).
        let ece = |variant| {
            let tcp = TcpSpec {
                variant,
                ..dctcp_spec()
            };
            let mut rx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, true));
            let mut acks = Vec::new();
            for (i, ecn) in [Ecn::Ce, Ecn::Ce, Ecn::Ect0, Ecn::Ect0]
                .into_iter()
                .enumerate()
            {
                let f = if i == 1 {
                    flags::DATA | flags::CWR
                } else {
                    flags::DATA
                };
                rx.on_data(SimTime(0), i as u64, f, ecn, SimTime(0), &mut acks);
            }
            acks.iter()
                .map(|a| a.flags & flags::ECE != 0)
                .collect::<Vec<bool>>()
        };
        assert_eq!(ece(TcpVariant::Dctcp), vec![true, true, false, false]);
        assert_eq!(ece(TcpVariant::NewReno), vec![true, true, true, true]);
    }
}
