//! Delivery-rate estimation: draft-cheng-iccrg-delivery-rate-estimation-02
//! (the same algorithm is section 4.5.2.3 of draft-ietf-ccwg-bbr), as
//! Linux's `net/ipv4/tcp_rate.c` runs it. Counts are in segments, times in
//! [`SimTime`].
//!
//! The connection keeps `delivered` (segments delivered so far),
//! `delivered_time` (when `delivered` last grew) and `first_sent_time` (the
//! send time of the most recently delivered segment). Each transmission
//! (section 3.2) snapshots them into the segment's send record, with
//! whether the connection was application-limited then; when nothing was
//! in flight, both times restart at the send time. Each ACK (section 3.3)
//! takes the record of the most recently sent segment it newly delivers
//! (the latest send time, of equal ones the highest segment: Linux's
//! `tcp_skb_sent_after` since 5.18; the draft's highest `delivered`
//! snapshot keeps the first of the segments sent between two ACKs) and
//! gives one rate sample:
//!
//! ```text
//! delivered  = C.delivered - P.delivered
//! send_elapsed = P.sent_time - P.first_sent_time
//! ack_elapsed  = now - P.delivered_time
//! interval   = max(send_elapsed, ack_elapsed)
//! rate       = delivered / interval
//! ```
//!
//! A sample whose interval is shorter than the connection's minimum RTT is
//! not used (the ACKs were compressed; Linux's test). Section 3.4: while the
//! application has nothing to send and the window is not full, the
//! connection marks itself application-limited until the data in flight
//! then is delivered; samples of segments sent meanwhile say so.
//!
//! The hooks, in the order an ACK calls them: [`RateEstimator::on_delivered`]
//! for each newly delivered segment (the cumulative ACK's, and a SACK
//! scoreboard's when there is one; a segment is counted once), then
//! [`RateEstimator::sample`]. [`RateEstimator::on_sent`] at every
//! transmission. Without SACK a duplicate ACK stands for one segment that
//! reached the receiver ([`RateEstimator::on_dupack`], Linux's
//! `tcp_add_reno_sack`), and the cumulative ACK that follows counts one
//! segment for the hole and the rest as those already counted
//! ([`RateEstimator::reno_cum_ack`], `tcp_remove_reno_sacks`).
//!
//! The send records sit in a ring indexed by segment number (a power of two
//! long, at least the segments in flight: it doubles when a send would
//! overwrite a segment still outstanding), so every hook is O(1).

use crate::units::SimTime;

/// A segment's snapshot of the connection when it was (last) sent (the
/// draft's per-packet `P` state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SendRecord {
    /// The segment this slot holds (`u64::MAX`: none).
    seq: u64,
    /// `C.delivered` when sent, segments.
    delivered: u64,
    /// `C.delivered_time` when sent.
    delivered_time: SimTime,
    /// `C.first_sent_time` when sent.
    first_sent_time: SimTime,
    /// When the segment was sent.
    sent_time: SimTime,
    /// The connection was application-limited when it was sent.
    app_limited: bool,
    /// A retransmission (its ACK gives no RTT sample, Karn).
    retrans: bool,
    /// Counted as delivered already (a SACK scoreboard delivered it before
    /// the cumulative ACK covered it).
    done: bool,
}

const EMPTY: SendRecord = SendRecord {
    seq: u64::MAX,
    delivered: 0,
    delivered_time: SimTime::ZERO,
    first_sent_time: SimTime::ZERO,
    sent_time: SimTime::ZERO,
    app_limited: false,
    retrans: false,
    done: false,
};

/// The first ring: room for 16 segments in flight.
const FIRST_RING: usize = 16;

/// One ACK's rate sample (the draft's `rs`, Linux's `struct rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Segments delivered over the interval, and the interval; `None` when
    /// the ACK gives no sample (nothing newly delivered with a send record,
    /// or an interval shorter than the minimum RTT).
    pub delivered: Option<u64>,
    pub interval: SimTime,
    /// `C.delivered` when the sampled segment was sent (the start of its
    /// round: BBR counts rounds with it).
    pub prior_delivered: u64,
    /// The sampled segment was sent while application-limited.
    pub app_limited: bool,
    /// Segments this ACK newly delivered (duplicate ACKs count one without
    /// SACK), and newly deemed lost.
    pub acked: u64,
    pub losses: u64,
    /// The RTT of the most recently sent segment this ACK delivered, if no
    /// segment it delivered was retransmitted (Karn); for a SACK sender
    /// Linux's `ca_rtt_us` ([`RateEstimator::ack_rtt`]).
    pub rtt: Option<SimTime>,
}

impl RateSample {
    /// The rate in segments per second (None without a sample).
    pub fn segments_per_s(&self) -> Option<f64> {
        match self.delivered {
            Some(d) if self.interval > SimTime::ZERO => {
                Some(d as f64 / self.interval.as_secs_f64())
            }
            _ => None,
        }
    }
}

/// What the ACK being processed has delivered so far.
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    /// The send record of the most recently sent segment delivered (Linux's
    /// `rs->prior_*`).
    prior: Option<SendRecord>,
    acked: u64,
    losses: u64,
    /// Send time of the highest segment delivered, and whether any
    /// delivered segment was a retransmission.
    newest_sent: Option<SimTime>,
    any_retrans: bool,
    /// The ACK's RTT as the SACK sender found it ([`RateEstimator::ack_rtt`]),
    /// in place of the one from `newest_sent`.
    ack_rtt: Option<Option<SimTime>>,
}

/// One connection's delivery-rate estimator (the draft's `C` state, Linux's
/// `tp->delivered`, `delivered_mstamp`, `first_tx_mstamp`, `app_limited`,
/// `lost` and the SACK-less duplicate-ACK count).
#[derive(Clone, Debug)]
pub struct RateEstimator {
    /// Segments delivered so far (`C.delivered`).
    pub delivered: u64,
    /// When `delivered` last grew (`C.delivered_time`).
    pub delivered_time: SimTime,
    /// Send time of the most recently delivered segment (`C.first_sent_time`).
    first_sent_time: SimTime,
    /// 0: not application-limited; else the `delivered` count past which
    /// the application-limited period ends (`C.app_limited`).
    app_limited: u64,
    /// Segments deemed lost so far (Linux's `tp->lost`).
    pub lost: u64,
    /// Without SACK: segments duplicate ACKs say have left the network,
    /// for the sender's window (Linux's `sacked_out` for Reno: forgotten
    /// at a timeout and when the cumulative ACK advances outside a fast
    /// recovery).
    pub sacked_out: u64,
    /// Without SACK: duplicate ACKs counted as delivered and not yet
    /// covered by the cumulative ACK (kept across a timeout, unlike Linux:
    /// see [`RateEstimator::reno_cum_ack`]).
    dup_delivered: u64,
    /// The smallest RTT seen (Linux windows it over 5 minutes).
    pub min_rtt: Option<SimTime>,
    ring: Vec<SendRecord>,
    acc: Acc,
    /// For the flow series: the last sample not application-limited, or an
    /// application-limited one with a higher rate (Linux's
    /// `rate_delivered` / `rate_interval_us`, what `ss -i` shows as
    /// `delivery_rate`).
    pub shown: Option<(u64, SimTime)>,
}

impl Default for RateEstimator {
    fn default() -> Self {
        RateEstimator {
            delivered: 0,
            delivered_time: SimTime::ZERO,
            first_sent_time: SimTime::ZERO,
            app_limited: 0,
            lost: 0,
            sacked_out: 0,
            dup_delivered: 0,
            min_rtt: None,
            ring: Vec::new(),
            acc: Acc::default(),
            shown: None,
        }
    }
}

/// `app_limited` of a new connection: its first flight is
/// application-limited until the first ACK (Linux's `tp->app_limited =
/// ~0U`: "a bubble in the pipe until at least the first ACK").
const UNTIL_FIRST_ACK: u64 = u64::MAX;

impl RateEstimator {
    /// A new connection's estimator: application-limited until its first
    /// ACK (a handshake's ACK ends that, [`RateEstimator::handshake_done`]).
    pub fn fresh() -> RateEstimator {
        RateEstimator {
            app_limited: UNTIL_FIRST_ACK,
            ..RateEstimator::default()
        }
    }

    /// A new connection's estimator that keeps `old`'s storage.
    pub fn fresh_from(old: RateEstimator) -> RateEstimator {
        let mut ring = old.ring;
        ring.fill(EMPTY);
        RateEstimator {
            ring,
            ..RateEstimator::fresh()
        }
    }

    /// The handshake's last ACK was processed (Linux runs its ACK path on
    /// it, which ends the initial application-limited period).
    pub fn handshake_done(&mut self) {
        if self.app_limited == UNTIL_FIRST_ACK {
            self.app_limited = 0;
        }
    }

    /// Segment `seq` is sent (or sent again) at `now`; `una` is the oldest
    /// unacknowledged segment and `nothing_in_flight` says whether no
    /// segment was outstanding before this one (draft section 3.2;
    /// Linux's `tcp_rate_skb_sent`).
    pub fn on_sent(
        &mut self,
        seq: u64,
        una: u64,
        nothing_in_flight: bool,
        retrans: bool,
        now: SimTime,
    ) {
        if nothing_in_flight {
            // Section 3.2: the sampling interval starts at this send.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        if self.ring.is_empty() || seq.saturating_sub(una) >= self.ring.len() as u64 {
            self.grow(seq.saturating_sub(una) + 1, una);
        }
        let mask = self.ring.len() - 1;
        self.ring[seq as usize & mask] = SendRecord {
            seq,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited != 0,
            retrans,
            done: false,
        };
    }

    /// Room for `need` segments from `una` on, keeping the records of the
    /// segments still outstanding (amortised O(1) per send).
    #[cold]
    fn grow(&mut self, need: u64, una: u64) {
        let mut len = self.ring.len().max(FIRST_RING);
        while (len as u64) < need {
            len *= 2;
        }
        if len == self.ring.len() {
            return;
        }
        let mut ring = vec![EMPTY; len];
        for r in self
            .ring
            .iter()
            .filter(|r| r.seq != u64::MAX && r.seq >= una)
        {
            ring[r.seq as usize & (len - 1)] = *r;
        }
        self.ring = ring;
    }

    /// Segment `seq` is newly delivered (cumulatively acknowledged or
    /// SACKed) by the ACK being processed at `now` (section 3.3; Linux's
    /// `tcp_rate_skb_delivered` and its `delivered` count). A segment
    /// already counted, or without a send record, counts nothing.
    pub fn on_delivered(&mut self, seq: u64, _now: SimTime) {
        if self.ring.is_empty() {
            return;
        }
        let mask = self.ring.len() - 1;
        let r = &mut self.ring[seq as usize & mask];
        if r.seq != seq || r.done {
            return;
        }
        r.done = true;
        let r = *r;
        self.delivered += 1;
        self.acc.acked += 1;
        // The most recently sent segment gives the sample: the latest send
        // time, of equal ones the highest segment (Linux's
        // `tcp_skb_sent_after`); the first one met is taken whatever it is,
        // and replaced by any later one while its snapshot is 0 (Linux's
        // "no sample yet").
        let later =
            |p: &SendRecord| p.delivered == 0 || (r.sent_time, r.seq) > (p.sent_time, p.seq);
        if self.acc.prior.as_ref().is_none_or(later) {
            self.acc.prior = Some(r);
            self.first_sent_time = r.sent_time;
        }
        self.acc.any_retrans |= r.retrans;
        if self.acc.newest_sent.is_none_or(|t| r.sent_time >= t) {
            self.acc.newest_sent = Some(r.sent_time);
        }
    }

    /// Without SACK: a duplicate ACK with `outstanding` segments
    /// unacknowledged stands for one more segment at the receiver, at most
    /// `outstanding - 1` (one is the hole; Linux's `tcp_add_reno_sack` and
    /// `tcp_limit_reno_sacked`).
    pub fn on_dupack(&mut self, outstanding: u64) {
        let most = outstanding.saturating_sub(1);
        if self.sacked_out < most {
            self.sacked_out += 1;
        }
        if self.dup_delivered < most {
            self.dup_delivered += 1;
            self.delivered += 1;
            self.acc.acked += 1;
        }
    }

    /// Without SACK: a cumulative ACK newly covered `newly` segments, which
    /// [`RateEstimator::on_delivered`] counted one by one. One of them was
    /// the hole; the others stand for duplicate ACKs already counted, so
    /// they are taken back (Linux's `tcp_remove_reno_sacks`: `delivered +=
    /// max(newly - sacked_out, 1)`). `recovery`: a fast recovery goes on;
    /// otherwise the window's count of duplicates starts afresh (Linux's
    /// `tcp_reset_reno_sack`). `open`: no loss recovery of any kind is under
    /// way (neither fast recovery nor the one after a timeout): the
    /// delivered count's duplicates start afresh too.
    ///
    /// Where this departs from Linux: Linux forgets the duplicates at a
    /// timeout, so when the timeout's retransmission fills the hole, the
    /// segments the receiver held beyond it count as delivered a second
    /// time, in one ACK (hundreds of segments in one round trip after a
    /// loss in a large window: a bandwidth sample many times the link's,
    /// which BBR's max filter keeps for 10 rounds). Here the delivered
    /// count keeps them until the timeout's recovery ends.
    pub fn reno_cum_ack(&mut self, newly: u64, recovery: bool, open: bool) {
        if newly > 0 {
            let eaten = self.dup_delivered.min(newly - 1);
            self.delivered -= eaten;
            self.acc.acked -= eaten.min(self.acc.acked);
            self.dup_delivered -= eaten;
            self.sacked_out -= self.sacked_out.min(newly - 1);
        }
        if !recovery {
            self.sacked_out = 0;
        }
        if open {
            self.dup_delivered = 0;
        }
    }

    /// A retransmission timeout: the window forgets the duplicate ACKs
    /// (every segment outstanding is deemed lost and resent; Linux's
    /// `tcp_enter_loss`).
    pub fn on_timeout(&mut self) {
        self.sacked_out = 0;
    }

    /// `n` segments are deemed lost by the ACK being processed: they are
    /// its sample's losses too.
    pub fn on_lost(&mut self, n: u64) {
        self.lost += n;
        self.acc.losses += n;
    }

    /// `n` segments are deemed lost between ACKs (a retransmission timeout,
    /// RACK's reordering timer): the connection's count only. Linux's
    /// `tcp_ack` takes as an ACK's losses what `tp->lost` gained while it
    /// ran (`lost = tp->lost - lost`), so no rate sample carries these, and
    /// BBR's window (`bbr_set_cwnd_to_recover_or_restore`) gives nothing
    /// back for them; its long-term sampling, which reads `tp->lost`, does
    /// count them.
    pub fn on_lost_between_acks(&mut self, n: u64) {
        self.lost += n;
    }

    /// Section 3.4: the application has no data to send and the window is
    /// not full, with `in_flight` segments in the network: samples are
    /// application-limited until those are delivered (Linux's
    /// `tcp_rate_check_app_limited`).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// Whether the connection is application-limited now.
    pub fn app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// The RTT of the ACK being processed as a SACK sender takes it
    /// (Linux's `ca_rtt_us`: the newest segment newly SACKed, else the
    /// newest newly acknowledged if none of those was retransmitted, else
    /// the echoed timestamp), `None` without one: it replaces, for this
    /// ACK, the sample [`RateEstimator::sample`] takes from the segments
    /// delivered.
    pub fn ack_rtt(&mut self, rtt: Option<SimTime>) {
        self.acc.ack_rtt = Some(rtt);
    }

    /// The end of an ACK at `now`: its rate sample (section 3.3; Linux's
    /// `tcp_rate_gen`). The RTT of the most recently sent segment it
    /// delivered (if none was a retransmission) updates the minimum RTT
    /// first, as Linux's `tcp_ack` does before `tcp_rate_gen`.
    pub fn sample(&mut self, now: SimTime) -> RateSample {
        let acc = std::mem::take(&mut self.acc);
        // The application-limited bubble has been delivered.
        if self.app_limited == UNTIL_FIRST_ACK
            || (self.app_limited != 0 && self.delivered > self.app_limited)
        {
            self.app_limited = 0;
        }
        if acc.acked > 0 {
            self.delivered_time = now;
        }
        let rtt = match (acc.ack_rtt, acc.newest_sent) {
            (Some(r), _) => r,
            (None, Some(t)) if !acc.any_retrans => Some(now.saturating_sub(t)),
            _ => None,
        };
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let mut rs = RateSample {
            delivered: None,
            interval: SimTime::ZERO,
            prior_delivered: 0,
            app_limited: false,
            acked: acc.acked,
            losses: acc.losses,
            rtt,
        };
        let Some(p) = acc.prior else {
            return rs;
        };
        let send_elapsed = p.sent_time.saturating_sub(p.first_sent_time);
        rs.prior_delivered = p.delivered;
        rs.app_limited = p.app_limited;
        // Sending and acknowledging are two phases of the pipeline: the
        // longer is the interval (ACK compression can make the ACK phase
        // the shorter).
        let ack_elapsed = now.saturating_sub(p.delivered_time);
        rs.interval = send_elapsed.max(ack_elapsed);
        // An interval below the minimum RTT would overestimate the rate
        // (Linux's test; before any RTT sample no interval passes).
        if self.min_rtt.is_none_or(|m| rs.interval < m) {
            return rs;
        }
        let delivered = self.delivered - p.delivered;
        rs.delivered = Some(delivered);
        // Keep, for the series, the last sample that is not
        // application-limited, or an application-limited one that is
        // faster than the one kept.
        let faster = |(d, i): (u64, SimTime)| {
            delivered as u128 * i.0 as u128 >= d as u128 * rs.interval.0 as u128
        };
        if !p.app_limited || self.shown.is_none_or(faster) {
            self.shown = Some((delivered, rs.interval));
        }
        rs
    }

    /// The rate the flow series shows, segments per second.
    pub fn shown_rate(&self) -> Option<f64> {
        self.shown
            .filter(|&(_, i)| i > SimTime::ZERO)
            .map(|(d, i)| d as f64 / i.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// An estimator that has seen a minimum RTT of `m` ms.
    fn with_min_rtt(m: u64) -> RateEstimator {
        RateEstimator {
            min_rtt: Some(ms(m)),
            ..RateEstimator::default()
        }
    }

    /// Segments 0 to n - 1 leave at 0, 1, ... ms, nothing in flight before
    /// the first.
    fn sent_each_ms(r: &mut RateEstimator, n: u64) {
        for s in 0..n {
            r.on_sent(s, 0, s == 0, false, ms(s));
        }
    }

    /// A hand-made ACK sequence. Segments 0-3 leave at 0, 1, 2 and 3 ms
    /// with nothing in flight before the first; each ACK covers one
    /// segment, 100 ms after it left.
    ///
    /// ACK for 0 at 100 ms: the record of segment 0 has delivered = 0,
    /// delivered_time = 0 (reset at the first send), first_sent_time = 0:
    /// send elapsed 0, ACK elapsed 100 ms, one segment in 100 ms.
    /// ACK for 1 at 101 ms: record of 1 (sent at 1 ms: delivered 0,
    /// delivered_time 0, first_sent_time 0): delivered 2 - 0 = 2 over
    /// max(1 ms, 101 ms) = 101 ms.
    /// Segment 4 leaves at 101 ms, after the first ACK: its record has
    /// delivered = 2, delivered_time = 101 ms (the second ACK),
    /// first_sent_time = 1 ms (the send time of the segment that ACK
    /// delivered): its ACK at 201 ms has delivered 5 - 2 = 3 over
    /// max(101 - 1, 201 - 101) = 100 ms: 30 segments per second.
    #[test]
    fn a_rate_sample_per_ack_from_the_most_recently_sent_segment() {
        let mut r = RateEstimator::default();
        sent_each_ms(&mut r, 4);
        r.on_delivered(0, ms(100));
        let a = r.sample(ms(100));
        assert_eq!(a.rtt, Some(ms(100)));
        assert_eq!((a.delivered, a.interval), (Some(1), ms(100)));
        assert_eq!(a.prior_delivered, 0);
        r.on_delivered(1, ms(101));
        let b = r.sample(ms(101));
        assert_eq!((b.delivered, b.interval), (Some(2), ms(101)));
        r.on_sent(4, 2, false, false, ms(101));
        r.on_delivered(2, ms(102));
        r.sample(ms(102));
        r.on_delivered(3, ms(103));
        r.sample(ms(103));
        r.on_delivered(4, ms(201));
        let c = r.sample(ms(201));
        assert_eq!(c.prior_delivered, 2);
        assert_eq!((c.delivered, c.interval), (Some(3), ms(100)));
        assert_eq!(c.segments_per_s(), Some(30.0));
        assert_eq!(r.shown_rate(), Some(30.0));
    }

    /// Losses found by an ACK are its sample's; losses found between ACKs
    /// (a timer's) are the connection's only. Segments 0-4 leave at 0-4 ms;
    /// the ACK of 0 at 100 ms marks 1 lost: its sample has 1 loss. RACK's
    /// timer at 110 ms marks 2 and 3: `lost` is 3, and the ACK of 4 at
    /// 120 ms, which marks nothing, has none; `lost` stays 3.
    #[test]
    fn a_timers_losses_are_in_no_acks_sample() {
        let mut r = RateEstimator::default();
        sent_each_ms(&mut r, 5);
        r.on_delivered(0, ms(100));
        r.on_lost(1);
        let a = r.sample(ms(100));
        assert_eq!((a.losses, r.lost), (1, 1));
        r.on_lost_between_acks(2);
        assert_eq!(r.lost, 3);
        r.on_delivered(4, ms(120));
        let b = r.sample(ms(120));
        assert_eq!((b.acked, b.losses, r.lost), (1, 0, 3));
    }

    /// A SACK sender's RTT for the ACK (Linux's `ca_rtt_us`) replaces the
    /// segments' own: segment 0 is a retransmission sent at 0 ms and ACKed
    /// at 30 ms, which alone gives no RTT (Karn); with the echoed
    /// timestamp's 30 ms handed over, the sample has it and the minimum
    /// RTT takes it. The next ACK (segment 1, sent once at 1 ms, ACKed at
    /// 60 ms) with `None` handed over has no RTT and the minimum stays.
    #[test]
    fn the_sack_senders_rtt_replaces_the_segments_own() {
        let mut r = RateEstimator::default();
        r.on_sent(0, 0, true, true, ms(0));
        r.on_sent(1, 0, false, false, ms(1));
        r.on_delivered(0, ms(30));
        assert_eq!(r.clone().sample(ms(30)).rtt, None);
        r.ack_rtt(Some(ms(30)));
        assert_eq!(r.sample(ms(30)).rtt, Some(ms(30)));
        assert_eq!(r.min_rtt, Some(ms(30)));
        r.on_delivered(1, ms(60));
        r.ack_rtt(None);
        assert_eq!(r.sample(ms(60)).rtt, None);
        assert_eq!(r.min_rtt, Some(ms(30)));
    }

    /// ACK compression: segments 0-9 leave 10 ms apart (90 ms of
    /// sending); the first ACK comes at 100 ms, one ACK for the other nine
    /// at 105 ms. Their snapshots all say 0 delivered, so the last, segment
    /// 9 (sent at 90 ms, first_sent_time 0), gives the sample: send elapsed
    /// 90 ms, ACK elapsed 105 ms from delivered_time 0: 10 segments in
    /// 105 ms. Its RTT, 15 ms, is the new minimum.
    /// Then segments 10 and 11 leave at 105 and 106 ms with nothing in
    /// flight before the first (first_sent_time and delivered_time restart
    /// at 105 ms); both are ACKed at 107 ms: segment 11's record is kept
    /// (sent last), interval max(106 - 105, 107 - 105) = 2 ms, RTT
    /// of the newest 1 ms, which is the new minimum: 2 segments in 2 ms.
    /// A retransmission ACKed 10 ms after it left gives no RTT (Karn), and
    /// its 10 ms interval is below a 50 ms minimum RTT: no sample.
    #[test]
    fn the_longer_phase_is_the_interval_and_short_ones_are_refused() {
        let mut r = RateEstimator::default();
        for s in 0..10 {
            r.on_sent(s, 0, s == 0, false, ms(10 * s));
        }
        r.on_delivered(0, ms(100));
        r.sample(ms(100));
        for s in 1..10 {
            r.on_delivered(s, ms(105));
        }
        let a = r.sample(ms(105));
        assert_eq!(a.rtt, Some(ms(15)));
        assert_eq!((a.delivered, a.interval), (Some(10), ms(105)));
        r.on_sent(10, 10, true, false, ms(105));
        r.on_sent(11, 10, false, false, ms(106));
        r.on_delivered(10, ms(107));
        r.on_delivered(11, ms(107));
        let b = r.sample(ms(107));
        assert_eq!(b.rtt, Some(ms(1)));
        assert_eq!((b.delivered, b.interval), (Some(2), ms(2)));
        let mut r = with_min_rtt(50);
        r.on_sent(0, 0, true, true, ms(60));
        r.on_delivered(0, ms(70));
        let c = r.sample(ms(70));
        assert_eq!((c.rtt, c.delivered), (None, None));
        assert_eq!(c.acked, 1);
    }

    /// Of the segments sent between two ACKs (one `delivered` snapshot) the
    /// one sent last gives the sample, as in Linux since 5.18. Segments 0
    /// and 1 leave at 0 ms; the ACK of 0 at 10 ms makes delivered 1,
    /// delivered_time 10 ms, first_sent_time 0. Segments 2 and 3 leave at
    /// 10 and 40 ms with that snapshot, and one ACK at 45 ms delivers 1-3:
    /// segment 3's record gives send elapsed 40 - 0 = 40 ms against the ACK
    /// phase's 45 - 10 = 35 ms: 3 segments in 40 ms (segment 2's, the
    /// first of the two, gave max(10, 35) = 35 ms). The next send phase
    /// starts at segment 3's send: segment 4, sent at 50 ms (something
    /// still in flight) and ACKed at 60 ms, gives 1 segment in max(50 -
    /// 40, 60 - 45) = 15 ms (the first of the two gave max(50 - 10, 15)).
    #[test]
    fn the_segment_sent_last_gives_the_sample() {
        let mut r = with_min_rtt(1);
        r.on_sent(0, 0, true, false, ms(0));
        r.on_sent(1, 0, false, false, ms(0));
        r.on_delivered(0, ms(10));
        r.sample(ms(10));
        r.on_sent(2, 1, false, false, ms(10));
        r.on_sent(3, 1, false, false, ms(40));
        for s in 1..4 {
            r.on_delivered(s, ms(45));
        }
        let a = r.sample(ms(45));
        assert_eq!((a.delivered, a.interval), (Some(3), ms(40)));
        r.on_sent(4, 4, false, false, ms(50));
        r.on_delivered(4, ms(60));
        let b = r.sample(ms(60));
        assert_eq!((b.delivered, b.interval), (Some(1), ms(15)));
    }

    /// Section 3.4: marked application-limited with 2 segments in flight
    /// after 5 delivered, segments sent until the 8th delivery carry the
    /// mark; the mark clears when delivered passes 7.
    #[test]
    fn application_limited_until_the_bubble_is_delivered() {
        let mut r = with_min_rtt(1);
        r.on_sent(0, 0, true, false, ms(0));
        r.on_delivered(0, ms(10));
        r.sample(ms(10));
        r.delivered = 5;
        r.mark_app_limited(2);
        assert!(r.app_limited());
        r.on_sent(1, 1, true, false, ms(10));
        r.on_delivered(1, ms(20));
        let a = r.sample(ms(20));
        assert!(a.app_limited);
        assert!(r.app_limited(), "6 delivered, the mark is 7");
        r.delivered = 7;
        r.on_sent(2, 2, true, false, ms(20));
        r.on_delivered(2, ms(30));
        r.sample(ms(30));
        assert!(!r.app_limited(), "8 > 7");
    }

    /// Without SACK (Linux's Reno emulation): four duplicate ACKs with 10
    /// outstanding count 4 delivered; the cumulative ACK for 6 segments
    /// (the hole and 5 beyond it) counts max(6 - 4, 1) = 2 more.
    #[test]
    fn duplicate_acks_count_as_deliveries_without_sack() {
        let mut r = RateEstimator::default();
        sent_each_ms(&mut r, 10);
        for _ in 0..4 {
            r.on_dupack(10);
            assert_eq!(r.sample(ms(100)).acked, 1);
        }
        assert_eq!(r.delivered, 4);
        for s in 0..6 {
            r.on_delivered(s, ms(150));
        }
        r.reno_cum_ack(6, true, false);
        let a = r.sample(ms(150));
        assert_eq!(r.delivered, 6);
        assert_eq!(a.acked, 2);
        assert_eq!((r.sacked_out, r.dup_delivered), (0, 0));
        // Never more than outstanding - 1.
        let mut r = RateEstimator::default();
        for _ in 0..5 {
            r.on_dupack(3);
        }
        assert_eq!(r.sacked_out, 2);
    }

    /// A segment SACKed (delivered) before the cumulative ACK covers it
    /// is counted once; the ring grows past 16 segments in flight and
    /// keeps the records.
    #[test]
    fn each_segment_counts_once_and_the_ring_grows() {
        let mut r = RateEstimator::default();
        sent_each_ms(&mut r, 40);
        assert_eq!(r.ring.len(), 64);
        r.on_delivered(5, ms(100));
        r.sample(ms(100));
        for s in 0..10 {
            r.on_delivered(s, ms(110));
        }
        r.sample(ms(110));
        assert_eq!(r.delivered, 10);
        // A retransmitted segment's ACK gives no RTT.
        r.on_sent(10, 10, false, true, ms(120));
        r.on_delivered(10, ms(130));
        assert_eq!(r.sample(ms(130)).rtt, None);
    }
}
