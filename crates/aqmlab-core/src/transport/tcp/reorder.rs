//! Reordering seen, and RACK's reordering window that D-SACKs widen, as
//! Linux keeps them with RACK (`tcp_check_sack_reordering`,
//! `tcp_sacktag_one` and `tcp_clean_rtx_queue` in `tcp_input.c`;
//! `tcp_rack_reo_wnd` and `tcp_rack_update_reo_wnd` in `tcp_recovery.c`;
//! RFC 8985 section 6.2 steps 4 and 5), with `tcp.rack`.
//!
//! - **Seen** (`reord_seen`): a segment never sent again is delivered
//!   below the highest segment SACKed before it (a SACK of it, or a
//!   cumulative ACK of it unSACKed, below the highest SACK of before the
//!   ACK), or a D-SACK reports a copy of a segment whose original was
//!   SACKed: a later segment overtook it. The SACK's case counts unless a
//!   timeout's retransmissions are under way with no cut D-SACKs could undo
//!   (Linux's `icsk_ca_state != TCP_CA_Loss || undo_marker`).
//! - **The window** (`tcp_rack_reo_wnd`): before reordering is seen, 0 in
//!   a recovery or a timeout's retransmissions and once three segments are
//!   SACKed, else `min_rtt / 4`; once seen, `steps x min_rtt / 4` always,
//!   at most SRTT.
//! - **The steps** (`tcp_rack_update_reo_wnd`, on every ACK that delivers a
//!   segment): an accepted D-SACK once reordering is seen (not a tail loss
//!   probe's) raises `steps` by one, at most once a round trip (a report
//!   that comes before a segment sent after the last raise was delivered
//!   is let go), and keeps the wider window for 16 recoveries (`persist`);
//!   each recovery or timeout's episode that ends without an undo takes one
//!   away (`tcp_try_undo_recovery`), an undo by D-SACKs in a recovery or
//!   later adds one back (`tcp_try_undo_dsack`), and with none left `steps`
//!   is 1 again.
//!
//! - **The degree** (`tp->reordering`): 3 segments
//!   (`net.ipv4.tcp_reordering`) until reordering is seen, then raised to
//!   how far below the end of the highest segment SACKed a segment was
//!   delivered, in segments, when that is more (at most 300,
//!   `net.ipv4.tcp_max_reordering`); a timeout outside a recovery, a
//!   timeout's retransmissions or an ECN reduction, with three segments or
//!   more SACKed, takes it back to at most 3 (`tcp_enter_loss`: the degree
//!   was overestimated). Above 3, an ACK that SACKs new data may grow the
//!   window as one that advances the cumulative ACK does
//!   (`tcp_may_raise_cwnd`: `FLAG_FORWARD_PROGRESS` rather than
//!   `FLAG_DATA_ACKED`); before reordering is seen the degree is RACK's
//!   count of SACKed segments that closes the window.
//!
//! Not modelled: the degree as RFC 6675's duplicate threshold without RACK
//! (it stays three there), and the degree a connection takes from the
//! route's cached metrics (`tcp_init_metrics`; every connection here is
//! the first on its path). Linux's "a round trip since the raise" compares
//! delivery counts (`rs->prior_delivered` against `rack.last_delivered`);
//! here, the send time of the most recently sent segment delivered against
//! the raise's.

use super::rack::Rack;
use crate::units::SimTime;

/// `tcp_check_sack_reordering` for a flow (none without RACK): `low`
/// delivered out of order against `fack` ([`Reorder::check`]), counted in
/// `count` (the flow's `reorderings`).
pub(super) fn check(rack: &mut Option<Rack>, low: u64, fack: u64, count: &mut u32) {
    if let Some(r) = rack {
        if r.reorder.check(low, fack) {
            *count += 1;
        }
    }
}

/// Linux's `TCP_RACK_RECOVERY_THRESH`: recoveries a widened window holds.
const RECOVERY_THRESH: u8 = 16;

/// Linux's `net.ipv4.tcp_reordering`: the degree of reordering assumed
/// until more is seen, segments.
const DEGREE: u32 = super::scoreboard::DUP_THRESH as u32;

/// Linux's `net.ipv4.tcp_max_reordering`: the most the degree is raised to.
const MAX_DEGREE: u32 = 300;

/// What one flow has seen of reordering, and the window's steps.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reorder {
    /// Reordering was seen (Linux's `reord_seen` is not 0; the count is
    /// the flow's `reorderings`).
    seen: bool,
    /// The window's multiple of `min_rtt / 4` (Linux's `reo_wnd_steps`).
    steps: u8,
    /// Recoveries left before `steps` returns to 1 (`reo_wnd_persist`).
    persist: u8,
    /// An accepted D-SACK waits to raise `steps` (`rack.dsack_seen`).
    dsack_seen: bool,
    /// When `steps` was last raised.
    raised_at: Option<SimTime>,
    /// The degree of reordering, segments (`tp->reordering`).
    degree: u32,
}

impl Default for Reorder {
    fn default() -> Reorder {
        Reorder {
            seen: false,
            steps: 1,
            persist: 0,
            dsack_seen: false,
            raised_at: None,
            degree: DEGREE,
        }
    }
}

impl Reorder {
    /// `tcp_check_sack_reordering`: `low`, the lowest segment delivered out
    /// of order by this ACK (never sent again), against `fack`, one past
    /// the highest segment SACKed now (the cumulative ACK if none is).
    /// Returns whether it counts as reordering. The degree becomes the
    /// distance from `low` to `fack` where that is more (Linux's metric:
    /// `tcp_highest_sack_seq`, the end of the highest segment SACKed, less
    /// `low`'s start, in whole segments).
    #[inline]
    pub fn check(&mut self, low: u64, fack: u64) -> bool {
        if low >= fack {
            return false;
        }
        let metric = fack - low;
        if metric > u64::from(self.degree) {
            self.degree = metric.min(u64::from(MAX_DEGREE)) as u32;
        }
        self.seen = true;
        true
    }

    /// Whether an ACK that SACKs new data may grow the window
    /// (`tcp_may_raise_cwnd`): the degree is above Linux's default.
    #[inline]
    pub fn sacks_grow(&self) -> bool {
        self.degree > DEGREE
    }

    /// A retransmission timeout outside a recovery, a timeout's
    /// retransmissions or an ECN reduction, with `sacked_out` segments
    /// SACKed (`tcp_enter_loss`): with three or more the degree was
    /// overestimated and falls back to at most 3.
    pub fn on_timeout(&mut self, sacked_out: u64) {
        if sacked_out >= u64::from(DEGREE) {
            self.degree = self.degree.min(DEGREE);
        }
    }

    /// An accepted D-SACK (`tcp_dsack_seen`): once reordering was seen, it
    /// may widen the window (not the tail loss probe's).
    pub fn on_dsack(&mut self, tlp: bool) {
        if self.seen && !tlp {
            self.dsack_seen = true;
        }
    }

    /// `tcp_rack_update_reo_wnd`, on an ACK that delivered a segment, the
    /// most recently sent of those delivered so far having left at
    /// `newest_sent`.
    #[inline]
    pub fn update(&mut self, now: SimTime, newest_sent: SimTime) {
        if self.dsack_seen {
            self.dsack_seen = false;
            if self.raised_at.is_none_or(|t| newest_sent >= t) {
                self.steps = self.steps.saturating_add(1);
                self.raised_at = Some(now);
                self.persist = RECOVERY_THRESH;
                return;
            }
            // Less than a round trip since the last raise: let go.
        }
        if self.persist == 0 {
            self.steps = 1;
        }
    }

    /// A recovery or a timeout's episode ended without an undo.
    pub fn episode_kept(&mut self) {
        self.persist = self.persist.saturating_sub(1);
    }

    /// D-SACKs undid a cut in a recovery or later (`tcp_try_undo_dsack`).
    pub fn dsack_undone(&mut self) {
        self.persist = (self.persist + 1).min(RECOVERY_THRESH);
    }

    /// `tcp_rack_reo_wnd`, ns: `recovering` (a recovery or a timeout's
    /// retransmissions), `sacked_out` segments SACKed, the minimum RTT and
    /// SRTT, ns.
    pub fn reo_wnd(
        &self,
        recovering: bool,
        sacked_out: u64,
        min_rtt: Option<u64>,
        srtt: u64,
    ) -> u64 {
        if !self.seen && (recovering || sacked_out >= u64::from(self.degree)) {
            return 0;
        }
        min_rtt.map_or(srtt, |m| (m / 4 * u64::from(self.steps)).min(srtt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// min_rtt 100 ms, SRTT 300 ms. Before reordering is seen the window
    /// is 25 ms in the open state with fewer than three SACKed, else 0;
    /// once seen, 25 ms whatever the state. D-SACKs raise the steps once a
    /// round trip: 50, then (a report before a segment sent after the
    /// raise is delivered) still 50, then 75; at most SRTT (300 ms from 12
    /// steps on). After 16 recoveries without an undo the window is 25 ms
    /// again; an undo by D-SACK adds a recovery back.
    /// An accepted D-SACK (`probe`: a tail loss probe's) on an ACK at
    /// `now_ms` whose newest segment delivered left at `sent_ms`.
    fn report(r: &mut Reorder, probe: bool, now_ms: u64, sent_ms: u64) {
        r.on_dsack(probe);
        r.update(ms(now_ms), ms(sent_ms));
    }

    #[test]
    fn the_window_widens_by_dsacks_once_reordering_is_seen() {
        let (m, srtt) = (Some(100_000_000), 300_000_000);
        let mut r = Reorder::default();
        assert_eq!(r.reo_wnd(false, 2, m, srtt), 25_000_000);
        assert_eq!(r.reo_wnd(true, 0, m, srtt), 0);
        assert_eq!(r.reo_wnd(false, 3, m, srtt), 0);
        // A D-SACK before reordering is seen does not count.
        report(&mut r, false, 1000, 900);
        assert_eq!(r.reo_wnd(false, 2, m, srtt), 25_000_000);
        // Segment 7 delivered out of order below the highest SACK (10).
        assert!(!r.check(10, 10));
        assert!(r.check(7, 10));
        assert_eq!(r.reo_wnd(true, 5, m, srtt), 25_000_000);
        // A probe's report does not widen; another does.
        report(&mut r, true, 1100, 1000);
        assert_eq!(r.reo_wnd(true, 5, m, srtt), 25_000_000);
        report(&mut r, false, 1200, 1100);
        assert_eq!(r.reo_wnd(true, 5, m, srtt), 50_000_000);
        // Within the round trip after the raise at 1200 ms: let go.
        report(&mut r, false, 1300, 1150);
        assert_eq!(r.reo_wnd(true, 5, m, srtt), 50_000_000);
        report(&mut r, false, 1600, 1250);
        assert_eq!(r.reo_wnd(true, 5, m, srtt), 75_000_000);
        for k in 0..12u64 {
            report(&mut r, false, 2000 + 1000 * k, 1900 + 1000 * k);
        }
        assert_eq!(r.reo_wnd(true, 5, m, srtt), srtt);
        // 16 recoveries kept, one undo: the 17th kept one resets.
        for _ in 0..15 {
            r.episode_kept();
        }
        r.dsack_undone();
        r.episode_kept();
        r.update(ms(30_000), ms(29_000));
        assert_eq!(r.reo_wnd(true, 5, m, srtt), srtt);
        r.episode_kept();
        r.update(ms(31_000), ms(30_000));
        assert_eq!(r.reo_wnd(true, 5, m, srtt), 25_000_000);
        // Before any RTT sample: SRTT.
        assert_eq!(r.reo_wnd(false, 0, None, srtt), srtt);
    }

    /// The degree (`tp->reordering`) by hand: 3 until reordering is seen,
    /// and the window does not grow on SACKs. Segment 8 delivered with 10
    /// the highest SACKed (`fack` 11): 3 segments, not above 3. Segment 2
    /// against the same: 9, and SACKs grow the window; segment 6 then (5)
    /// leaves it at 9. A timeout with 2 segments SACKed keeps it; with 3
    /// it falls back to 3. A distance of 1001 raises it to 300 at most.
    #[test]
    fn the_degree_follows_the_farthest_reordering() {
        let mut r = Reorder::default();
        assert_eq!(r.degree, 3);
        assert!(!r.sacks_grow());
        assert!(r.check(8, 11));
        assert_eq!(r.degree, 3);
        assert!(!r.sacks_grow());
        assert!(r.check(2, 11));
        assert_eq!(r.degree, 9);
        assert!(r.sacks_grow());
        assert!(r.check(6, 11));
        assert_eq!(r.degree, 9);
        // Not below the highest SACK: no reordering, no change.
        assert!(!r.check(11, 11));
        assert_eq!(r.degree, 9);
        r.on_timeout(2);
        assert_eq!(r.degree, 9);
        r.on_timeout(3);
        assert_eq!(r.degree, 3);
        assert!(!r.sacks_grow());
        assert!(r.check(1, 1002));
        assert_eq!(r.degree, 300);
        // Before reordering is seen, the degree is the count of SACKed
        // segments that closes RACK's window outside a recovery.
        let fresh = Reorder::default();
        let m = Some(100_000_000);
        assert_eq!(fresh.reo_wnd(false, 2, m, 300_000_000), 25_000_000);
        assert_eq!(fresh.reo_wnd(false, 3, m, 300_000_000), 0);
    }
}
