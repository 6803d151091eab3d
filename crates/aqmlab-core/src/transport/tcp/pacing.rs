//! Pacing at the sender (`tcp.pacing`, and always with BBR), as Linux's
//! internal pacing does it (`tcp_update_skb_after_send`,
//! `tcp_pacing_check` in net/ipv4/tcp_output.c; the same departure times
//! as the fq qdisc's): a segment leaves no earlier than the release time
//! the previous one set,
//!
//! ```text
//! next = max(next, now) + payload / rate - min(payload / rate / 2, credit)
//! ```
//!
//! in integer nanoseconds, where `credit` is how far `next` lay in the past
//! when the segment left (a sender that was held back by its window gets
//! up to half a gap back, Linux's allowance for timer jitter), and the
//! first 10 data segments of a connection are not paced (as Linux and the
//! original fq).
//!
//! Bursts (`tcp.tso`, on in the `"linux"` profile): Linux hands the device
//! a TSO/GSO packet of several segments, paced as one by its length
//! (`tcp_update_skb_after_send`), so they leave back to back. Its size is
//! `tcp_tso_autosize`'s,
//!
//! ```text
//! segments = max(min(rate >> 10, 65 215) / MSS, min_tso_segs)
//! ```
//!
//! about 1 ms of the pacing rate in bytes per second (`sk_pacing_shift` =
//! 10; `tcp_tso_rtt_log` adds nothing at RTTs of 16 ms and more), at most
//! 64 KB less `MAX_TCP_HEADER` + 1 (`sk_gso_max_size`), and at least
//! `net.ipv4.tcp_min_tso_segs` = 2 (BBR's own minimum, `bbr_min_tso_segs`:
//! 1 below 1.2 Mbit/s, else 2). aqmlab lets the segments of a burst leave
//! at the release time of its first, each adding its gap to the next
//! release time; a burst the window cuts short is not waited for (Linux
//! may defer a short TSO packet, `tcp_tso_should_defer`). Prague keeps one
//! segment per release (its reference sets its own burst size,
//! `prague_tso_segs`, not modelled). Without `tso` segments are paced one
//! at a time; BBR keeps Linux's window budget for the bursts either way.
//!
//! The rate: BBR sets its own (`cc/bbr.rs`). Other algorithms get Linux's
//! default (`tcp_update_pacing_rate` in net/ipv4/tcp_input.c, after every
//! ACK and when the handshake completes):
//!
//! ```text
//! rate = ratio x MSS x max(cwnd, segments outstanding) / SRTT
//! ratio = 2 (tcp_pacing_ss_ratio = 200 %) while cwnd < ssthresh / 2,
//!         1.2 (tcp_pacing_ca_ratio = 120 %) otherwise
//! ```
//!
//! with cwnd and ssthresh in whole segments (ssthresh / 2 rounded down).
//! Before the first RTT sample there is no rate: segments are not paced
//! (Linux's initial `sk_pacing_rate` is unlimited). A fast retransmission,
//! NewReno's retransmission on a partial ACK and limited transmit send at
//! once, as before, and count toward the next release time; every other
//! data segment waits for it. A per-flow timer (the engine's
//! `Event::PaceTimer`) wakes the sender at the release time when the
//! window would allow a segment earlier.
//!
//! The state lives in a box ([`Paced`]) that only pacing flows allocate,
//! with the delivery-rate estimator (`rate.rs`) and BBR's state.

use super::cc::{Bbr, CaState};
use super::rate::RateEstimator;
use super::TcpFlow;
use super::{Cut, Seg};
use crate::packet::flags;
use crate::rng::Rng;
use crate::scenario::{TcpVariant, HEADER_BYTES};
use crate::units::SimTime;

/// Linux's `tcp_pacing_ss_ratio`, per cent.
pub const SS_RATIO: u64 = 200;
/// Linux's `tcp_pacing_ca_ratio`, per cent.
pub const CA_RATIO: u64 = 120;
/// Data segments of a connection sent before pacing starts.
pub const UNPACED_SEGMENTS: u64 = 10;

/// Linux's default pacing rate, payload bytes per second: `ratio` per cent
/// (2x in slow start, cwnd below half of ssthresh; 1.2x otherwise) of
/// `mss` x max(`cwnd`, `outstanding`) per `srtt` (`tcp_update_pacing_rate`).
pub fn linux_rate(mss: u32, cwnd: u64, ssthresh: u64, outstanding: u64, srtt: SimTime) -> u64 {
    let ratio = if cwnd < ssthresh / 2 {
        SS_RATIO
    } else {
        CA_RATIO
    };
    let w = cwnd.max(outstanding);
    let srtt = srtt.0.max(1);
    // In 64 bits where the product fits (every window below some 60 000
    // full segments), else in 128: the same whole-number quotient.
    let num = (u64::from(mss) * ratio)
        .checked_mul(1_000_000_000)
        .and_then(|x| x.checked_mul(w));
    if let (Some(n), Some(d)) = (num, srtt.checked_mul(100)) {
        return n / d;
    }
    (u128::from(mss) * u128::from(ratio) * u128::from(w) * 1_000_000_000 / (100 * u128::from(srtt)))
        as u64
}

/// The most bytes of a TSO/GSO packet: 64 KB less Linux's `MAX_TCP_HEADER`
/// (320 bytes on x86-64) and one (`sk_gso_max_size`).
pub const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;
/// BBR's minimum burst is two segments from this pacing rate, payload
/// bytes per second (`bbr_min_tso_rate`, 1.2 Mbit/s), one below it.
pub const BBR_MIN_TSO_RATE: u64 = 1_200_000 / 8;

/// Segments of one TSO/GSO packet at pacing rate `rate` (payload bytes per
/// second) and segment size `mss`, at least `min_segs`
/// (`tcp_tso_autosize`).
pub fn tso_autosize(rate: u64, mss: u32, min_segs: u64) -> u64 {
    ((rate >> 10).min(TSO_MAX_BYTES) / u64::from(mss.max(1))).max(min_segs)
}

/// BBR's minimum burst at pacing rate `rate` (`bbr_min_tso_segs`).
pub fn bbr_min_tso_segs(rate: u64) -> u64 {
    if rate < BBR_MIN_TSO_RATE {
        1
    } else {
        2
    }
}

/// How a paced flow's segments are grouped (`tcp.tso`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tso {
    /// One segment per release.
    #[default]
    Off,
    /// Linux's autosizing with `tcp_min_tso_segs` = 2.
    Linux,
    /// Linux's autosizing with BBR's minimum.
    Bbr,
}

/// The release clock of one connection (Linux's `sk_pacing_rate` and
/// `tcp_wstamp_ns`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pacer {
    /// Payload bytes per second; 0: not paced.
    pub rate: u64,
    /// The earliest time the next data segment may leave.
    pub next: SimTime,
    /// Data segments sent on this connection.
    sent: u64,
    /// The pacing timer: when the sender waits for `next` (set when the
    /// window would allow a segment earlier).
    pub deadline: Option<SimTime>,
    /// The earliest pending timer event the engine holds for it.
    pub event: Option<SimTime>,
    /// How segments are grouped into bursts.
    pub tso: Tso,
    /// Segments the current burst may still send at `burst_at`.
    burst_left: u64,
    /// When the current burst left.
    burst_at: SimTime,
}

impl Pacer {
    /// Whether a data segment may leave at `now`: at the release time, or
    /// within the burst that left at `now`.
    #[inline]
    pub fn may_send(&self, now: SimTime) -> bool {
        self.next <= now || self.in_burst(now)
    }

    /// The burst that left at `now` has room for another segment.
    #[inline]
    fn in_burst(&self, now: SimTime) -> bool {
        self.burst_left > 0 && self.burst_at == now
    }

    /// Segments of a burst at the current rate (1 without `tso`).
    fn burst(&self, mss: u32) -> u64 {
        match self.tso {
            Tso::Off => 1,
            Tso::Linux => tso_autosize(self.rate, mss, 2),
            Tso::Bbr => tso_autosize(self.rate, mss, bbr_min_tso_segs(self.rate)),
        }
    }

    /// A data segment of `payload` bytes (of segments of `mss` bytes)
    /// leaves at `now`: the next release time. At the release time it
    /// starts a burst; within a burst it takes the burst's next place; a
    /// segment sent at once before the release time (a forced
    /// retransmission) only counts its gap.
    pub fn on_send(&mut self, now: SimTime, payload: u32, mss: u32) {
        if self.next <= now {
            self.burst_left = self.burst(mss) - 1;
            self.burst_at = now;
        } else if self.in_burst(now) {
            self.burst_left -= 1;
        }
        let prior = self.next;
        self.next = self.next.max(now);
        self.sent += 1;
        if self.rate == 0 || self.sent < UNPACED_SEGMENTS {
            return;
        }
        let mut gap = (u128::from(payload) * 1_000_000_000 / u128::from(self.rate)) as u64;
        // The time `next` lay in the past: up to half a gap back.
        let credit = self.next.0 - prior.0;
        gap -= (gap / 2).min(credit);
        self.next = SimTime(self.next.0 + gap);
    }
}

/// A pacing flow's cold state: the release clock, the delivery-rate
/// estimator, BBR (with `variant = "bbr"`), and the work of the ACK being
/// processed.
#[derive(Clone, Debug)]
pub struct Paced {
    pub pacer: Pacer,
    pub rate: RateEstimator,
    pub bbr: Option<Bbr>,
    /// Retransmissions sent while the current ACK is processed (BBR sees
    /// the flight before them, as Linux's congestion control runs before
    /// its retransmissions).
    retx_now: u64,
}

impl Paced {
    fn new(variant: TcpVariant, tso: bool, rng: Option<Rng>, rate: RateEstimator) -> Paced {
        let rng = rng.unwrap_or_else(|| Rng::new(0, crate::rng::Stream::Tcp(0)));
        let tso = match variant {
            _ if !tso => Tso::Off,
            TcpVariant::Bbr => Tso::Bbr,
            TcpVariant::Prague => Tso::Off,
            _ => Tso::Linux,
        };
        Paced {
            pacer: Pacer {
                tso,
                ..Pacer::default()
            },
            rate,
            bbr: (variant == TcpVariant::Bbr).then(|| Bbr::new(rng)),
            retx_now: 0,
        }
    }
}

impl TcpFlow {
    /// The cold state of a new connection of a pacing flow: `old`'s box
    /// reused if any (its pending timer event and BBR's random stream
    /// carry over), else a new one. `tso`: bursts (`tcp.tso`).
    pub(super) fn paced_state(
        cfg_variant: TcpVariant,
        tso: bool,
        old: Option<Box<Paced>>,
    ) -> Box<Paced> {
        match old {
            Some(mut b) => {
                let event = b.pacer.event;
                let rng = b.bbr.take().map(Bbr::take_rng);
                let rate = RateEstimator::fresh_from(std::mem::take(&mut b.rate));
                *b = Paced::new(cfg_variant, tso, rng, rate);
                b.pacer.event = event;
                b
            }
            None => Box::new(Paced::new(cfg_variant, tso, None, RateEstimator::fresh())),
        }
    }

    /// Give BBR its random stream (the run's seed and the flow's id).
    pub fn seed_tcp(&mut self, seed: u64, flow: u32) {
        if let Some(b) = self.pace.as_deref_mut().and_then(|p| p.bbr.as_mut()) {
            *b = Bbr::new(Rng::new(seed, crate::rng::Stream::Tcp(flow)));
        }
    }

    /// The connection is established at `now` (at once, or when the
    /// handshake completes, whose RTT is the first sample): BBR starts; the
    /// default rate is set if an RTT is known.
    #[cold]
    pub(super) fn paced_init(&mut self, now: SimTime, handshake: bool) {
        let srtt = self.srtt();
        let (cwnd, mss) = (self.cwnd as u64, self.mss());
        let Some(p) = self.pace.as_deref_mut() else {
            return;
        };
        p.rate.min_rtt = srtt;
        if handshake {
            p.rate.handshake_done();
        }
        match p.bbr.as_mut() {
            Some(b) => {
                b.init(now, cwnd.max(1), srtt, mss);
                p.pacer.rate = b.pacing_rate;
            }
            None => {
                if let Some(s) = srtt {
                    p.pacer.rate = linux_rate(mss, cwnd, self.ssthresh as u64, 0, s);
                }
            }
        }
    }

    /// The smoothed RTT, if measured.
    pub(in crate::transport::tcp) fn srtt(&self) -> Option<SimTime> {
        self.has_rtt.then(|| SimTime::from_nanos_f64(self.srtt_ns))
    }

    /// Segments in the network: sent (since a timeout's go-back-N, resent)
    /// and not acknowledged, less those duplicate ACKs say have left
    /// (Linux's `tcp_packets_in_flight` without SACK).
    fn pipe(&self, sacked_out: u64) -> u64 {
        (self.snd_nxt.max(self.snd_una) - self.snd_una).saturating_sub(sacked_out)
    }

    /// Segments in flight (Linux's `tcp_packets_in_flight`): with SACK,
    /// RFC 6675's pipe over the scoreboard; without, those sent (since a
    /// timeout's go-back-N, resent) and not acknowledged, less the segments
    /// duplicate ACKs say have left (a pacing flow's count as
    /// Linux keeps `sacked_out` for Reno, else the duplicate ACKs).
    pub fn in_flight(&self) -> u64 {
        match (self.lr.as_deref(), self.pace.as_deref()) {
            (Some(lr), _) if self.cfg.tcp.sack => lr.sb.pipe(),
            (_, Some(p)) => self.pipe(p.rate.sacked_out),
            _ => self.pipe(u64::from(self.dupacks)),
        }
    }

    /// BBR's view of the loss-recovery state.
    pub(super) fn ca_state(&self) -> CaState {
        if self.in_recovery {
            CaState::Recovery
        } else if self.last_cut == Cut::Timeout && self.snd_una < self.recover {
            CaState::Loss
        } else if self.ecn_cwr() {
            CaState::Cwr
        } else {
            CaState::Open
        }
    }

    /// The end of an ACK of a pacing flow (the segments below `una0` were
    /// acknowledged before it, `nxt0` was the next to send; `dup`: a
    /// duplicate ACK): the rate sample, BBR or the default pacing rate,
    /// then what the window and the release clock allow.
    #[inline(never)]
    pub(super) fn paced_ack(
        &mut self,
        now: SimTime,
        una0: u64,
        nxt0: u64,
        dup: bool,
        out: &mut Vec<Seg>,
    ) {
        let Some(mut p) = self.pace.take() else {
            return;
        };
        let prior_in_flight = (nxt0.max(una0) - una0).saturating_sub(p.rate.sacked_out);
        if self.snd_una > una0 {
            for seq in una0..self.snd_una {
                p.rate.on_delivered(seq, now);
            }
            let state = self.ca_state();
            p.rate.reno_cum_ack(
                self.snd_una - una0,
                state == CaState::Recovery,
                state < CaState::Recovery,
            );
        } else if dup {
            p.rate.on_dupack(self.outstanding());
        }
        let in_flight = self.pipe(p.rate.sacked_out).saturating_sub(p.retx_now);
        let held = p.rate.sacked_out;
        self.paced_model(&mut p, now, prior_in_flight, in_flight, held);
        p.retx_now = 0;
        self.pace = Some(p);
        self.send_paced(now, out);
    }

    /// The rate sample of the ACK being processed, then BBR's model (its
    /// window and pacing rate) or Linux's default pacing rate.
    /// `prior_in_flight` and `in_flight`: segments in the network before the
    /// ACK and after it (before anything it lets out); `held`: segments
    /// duplicate ACKs took out of the network without SACK, whose places
    /// the window frees (it counts from `snd_una`).
    fn paced_model(
        &mut self,
        p: &mut Paced,
        now: SimTime,
        prior_in_flight: u64,
        in_flight: u64,
        held: u64,
    ) {
        let rs = p.rate.sample(now);
        let flight = super::cc::Flight {
            prior_in_flight,
            in_flight,
            held,
        };
        self.pace_model(p, now, &rs, flight);
    }

    /// Linux's default pacing rate ([`linux_rate`]), once an RTT is known:
    /// [`super::cc::CongestionControl::pace`]'s default.
    #[inline]
    pub(super) fn linux_pace(&mut self, p: &mut Paced) {
        if let Some(s) = self.srtt() {
            p.pacer.rate = linux_rate(
                self.mss(),
                self.cwnd as u64,
                self.ssthresh as u64,
                self.outstanding(),
                s,
            );
        }
    }

    /// The ACK of a SACK flow that paces, after its scoreboard, loss
    /// marks and recovery (`sack_recovery.rs`, which has fed each newly
    /// delivered segment to the rate estimator): `newly_lost` segments
    /// count as lost, then the model. The pipe stands for what is in
    /// the network (RFC 6675's, Linux's `tcp_packets_in_flight`), so the
    /// window holds no place for SACKed segments.
    #[inline(never)]
    pub(super) fn paced_sack_ack(
        &mut self,
        now: SimTime,
        prior_pipe: u64,
        pipe: u64,
        newly_lost: u64,
    ) {
        let Some(mut p) = self.pace.take() else {
            return;
        };
        p.rate.on_lost(newly_lost);
        self.paced_model(&mut p, now, prior_pipe, pipe, 0);
        p.retx_now = 0;
        self.pace = Some(p);
    }

    /// `n` segments are newly deemed lost outside an ACK (a SACK flow's
    /// timeout or RACK's reordering timer): in no ACK's rate sample.
    #[cold]
    pub(super) fn paced_lost(&mut self, n: u64) {
        if let Some(p) = self.pace.as_deref_mut() {
            p.rate.on_lost_between_acks(n);
        }
    }

    /// How long a paced flow's next data segment must wait for its release
    /// clock (Linux's `tcp_pacing_delay`, which `tcp_reset_xmit_timer` adds
    /// to the retransmission and probe timers it arms: a timer due before
    /// the flow may send would fire on a flow that is only being paced).
    /// Zero for a flow that does not pace. Exact, where Linux counts it in
    /// whole jiffies.
    #[inline]
    pub(super) fn pacing_delay(&self, now: SimTime) -> SimTime {
        match self.pace.as_deref() {
            Some(p) if self.cfg.tcp.pacing => p.pacer.next.saturating_sub(now),
            _ => SimTime::ZERO,
        }
    }

    /// Whether a data segment may leave at `now`: always for a flow that
    /// does not pace; for one that does, when the release clock allows,
    /// else the pacing timer waits for it. `idle`: nothing is in flight
    /// (BBR restarts from idle, Linux's `CA_EVENT_TX_START`).
    #[inline]
    pub(super) fn pace_allows(&mut self, now: SimTime, idle: bool) -> bool {
        !self.cfg.tcp.pacing || self.pace_gate(now, idle)
    }

    #[cold]
    fn pace_gate(&mut self, now: SimTime, idle: bool) -> bool {
        let mss = self.mss();
        let Some(p) = self.pace.as_deref_mut() else {
            return true;
        };
        if !p.pacer.may_send(now) {
            p.pacer.deadline = Some(p.pacer.next);
            return false;
        }
        if idle {
            if let Some(b) = p.bbr.as_mut() {
                b.on_tx_start(now, p.rate.app_limited(), mss);
                p.pacer.rate = b.pacing_rate;
            }
        }
        true
    }

    /// Send what the window, the application and the release clock allow;
    /// wait for the pacing timer if the clock holds a segment back.
    pub(super) fn send_paced(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.tcp.sack {
            // The scoreboard's sending, each segment through the release
            // clock ([`TcpFlow::pace_allows`]).
            if let Some(p) = self.pace.as_deref_mut() {
                p.pacer.deadline = None;
            }
            if !self.ecn_hold {
                self.sack_send(now, out);
            }
            return;
        }
        let Some(mut p) = self.pace.take() else {
            return;
        };
        p.pacer.deadline = None;
        if !self.ecn_hold {
            let limit = (self.snd_una + self.window()).min(self.app_limit);
            let mss = self.mss();
            while self.snd_nxt < limit {
                if !p.pacer.may_send(now) {
                    p.pacer.deadline = Some(p.pacer.next);
                    break;
                }
                let idle = self.pipe(p.rate.sacked_out) == 0;
                if idle {
                    if let Some(b) = p.bbr.as_mut() {
                        // Linux's CA_EVENT_TX_START.
                        let app_limited = p.rate.app_limited();
                        b.on_tx_start(now, app_limited, mss);
                        p.pacer.rate = b.pacing_rate;
                    }
                }
                let seq = self.snd_nxt;
                let s = self.data_seg(seq, now);
                let retx = s.flags & flags::RETX != 0;
                p.rate
                    .on_sent(seq, self.snd_una, self.snd_max == self.snd_una, retx, now);
                p.pacer.on_send(now, s.size - HEADER_BYTES, mss);
                out.push(s);
                self.snd_nxt += 1;
                if self.snd_nxt > self.snd_max {
                    self.snd_max = self.snd_nxt;
                }
            }
        }
        self.pace = Some(p);
    }

    /// A segment sent outside [`TcpFlow::send_paced`] (a fast or partial-ACK
    /// retransmission, limited transmit): it leaves at once and counts
    /// toward the next release time; a retransmission of a lost segment
    /// counts the loss.
    ///
    /// The segment's fields come by value (`seq`, `size`, `seg_flags`): a
    /// reference would keep the segment in memory on the senders' common
    /// path, where it is built in registers and pushed at once.
    #[cold]
    pub(super) fn paced_sent_at_once(
        &mut self,
        (seq, size, seg_flags): (u64, u32, u8),
        lost: bool,
        now: SimTime,
    ) {
        let (una, none_out) = (self.snd_una, self.snd_max == self.snd_una);
        let mss = self.mss();
        let Some(p) = self.pace.as_deref_mut() else {
            return;
        };
        let retx = seg_flags & flags::RETX != 0;
        p.rate.on_sent(seq, una, none_out, retx, now);
        p.pacer.on_send(now, size - HEADER_BYTES, mss);
        if lost {
            p.rate.on_lost(1);
            p.retx_now += 1;
        }
    }

    /// A retransmission timeout: every segment outstanding and not known to
    /// have arrived is deemed lost, and the window forgets the duplicate
    /// ACKs (Linux's `tcp_enter_loss`).
    #[cold]
    pub(super) fn paced_timeout(&mut self) {
        let outstanding = self.outstanding();
        if let Some(p) = self.pace.as_deref_mut() {
            p.rate
                .on_lost_between_acks(outstanding.saturating_sub(p.rate.sacked_out));
            p.rate.on_timeout();
        }
    }

    /// The application hands over more data (a persistent connection's
    /// next response): if the sender had nothing left to send and room in
    /// its window, the samples until what is in flight is delivered are
    /// application-limited (draft section 3.4; Linux checks at every write).
    #[cold]
    pub(super) fn paced_app_write(&mut self) {
        let (cwnd, limited) = (self.window(), self.snd_nxt >= self.app_limit);
        let pipe = self.in_flight();
        let Some(mut p) = self.pace.take() else {
            return;
        };
        if limited && pipe < cwnd {
            p.rate.mark_app_limited(pipe);
        }
        self.pace = Some(p);
    }

    /// The pacing timer expired (the engine checked the deadline).
    pub fn on_pace_timer(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if let Some(p) = self.pace.as_deref_mut() {
            p.pacer.deadline = None;
        }
        if self.state == super::State::Established {
            self.send_paced(now, out);
        }
    }

    /// When the pacing timer is due (None: not waiting, or not pacing).
    pub fn pace_deadline(&self) -> Option<SimTime> {
        self.pace.as_deref().and_then(|p| p.pacer.deadline)
    }

    /// The engine's pending pacing-timer event: the earliest time it holds
    /// a `PaceTimer` event of this flow for.
    pub fn pace_event(&self) -> Option<SimTime> {
        self.pace.as_deref().and_then(|p| p.pacer.event)
    }

    pub fn set_pace_event(&mut self, e: Option<SimTime>) {
        if let Some(p) = self.pace.as_deref_mut() {
            p.pacer.event = e;
        }
    }

    /// The pacing rate, payload bit/s (None: not pacing, or no rate yet).
    pub fn pacing_rate_bps(&self) -> Option<f64> {
        self.pace
            .as_deref()
            .filter(|p| p.pacer.rate > 0)
            .map(|p| p.pacer.rate as f64 * 8.0)
    }

    /// The delivery rate of the last rate sample not application-limited
    /// (or a faster one that is), payload bit/s (Linux's `tcpi_delivery_rate`).
    pub fn rate_sample_bps(&self) -> Option<f64> {
        let mss = f64::from(self.mss());
        self.pace
            .as_deref()
            .and_then(|p| p.rate.shown_rate())
            .map(|r| r * mss * 8.0)
    }

    /// The loss-recovery state's name in the flow series, as Linux's
    /// `tcpi_ca_state` names it: `recovery`, `loss`, `cwr` (an ECN
    /// reduction under way), `disorder` (outside those, a SACK flow's last
    /// ACK that could tell found segments SACKed, lost or sent again, or a
    /// flow without SACK has duplicate ACKs: Linux's `tcp_try_keep_open`
    /// and `tcp_add_reno_sack`), else `open`.
    pub fn ca_state_name(&self) -> &'static str {
        match self.ca_state() {
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
            CaState::Cwr => "cwr",
            CaState::Open => {
                let disorder = match self.lr.as_deref() {
                    Some(lr) if self.cfg.tcp.sack => lr.not_open,
                    _ => self.dupacks > 0,
                };
                if disorder {
                    "disorder"
                } else {
                    "open"
                }
            }
        }
    }

    /// BBR's state and bandwidth estimate (payload bit/s), with BBR.
    pub fn bbr_status(&self) -> Option<(&'static str, f64)> {
        let mss = f64::from(self.mss());
        self.pace
            .as_deref()
            .and_then(|p| p.bbr.as_ref())
            .map(|b| (b.mode.name(), b.bw() * mss * 8.0))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{spec, started};
    use super::*;
    use crate::packet::Ecn;
    use crate::scenario::TcpSpec;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Linux's default rate with 1000-byte packets (MSS 960), cwnd 10,
    /// SRTT 100 ms: in slow start 2 x 960 x 10 / 0.1 s = 192 000 B/s, one
    /// segment every 960 / 192 000 = 5 ms; in congestion avoidance (cwnd
    /// 10 >= ssthresh 12 / 2; also at ssthresh 21, whose half rounds down
    /// to 10) 1.2 x: 115 200 B/s, 8.333 ms. The flight
    /// counts when it exceeds cwnd (14 outstanding: 268 800 B/s).
    #[test]
    fn linux_default_rates() {
        assert_eq!(linux_rate(960, 10, u64::MAX, 0, ms(100)), 192_000);
        assert_eq!(linux_rate(960, 10, 12, 0, ms(100)), 115_200);
        assert_eq!(linux_rate(960, 10, 21, 0, ms(100)), 115_200);
        assert_eq!(linux_rate(960, 10, 22, 0, ms(100)), 192_000);
        assert_eq!(linux_rate(960, 10, u64::MAX, 14, ms(100)), 268_800);
        // Windows whose product fits 64 bits and those that pass them
        // (above some 106 000 segments of 1448 bytes): the exact quotient.
        for w in [1, 1_000, 106_000, 107_000, 1 << 20, 1 << 40] {
            let exact = 1448u128 * 120 * u128::from(w) * 1_000_000_000 / (100 * 7_000_123);
            let srtt = SimTime::from_nanos(7_000_123);
            assert_eq!(u128::from(linux_rate(1448, w, 0, 0, srtt)), exact, "{w}");
        }
    }

    /// Release times at 192 000 B/s with 960-byte payloads: the first 10
    /// segments are not paced; the 10th sets the next release 5 ms on; a
    /// segment sent 3 ms late (the window held it) gets min(2.5, 3) ms of
    /// credit, so the one after it may leave 2.5 ms later.
    #[test]
    fn release_times() {
        let mut p = Pacer {
            rate: 192_000,
            ..Pacer::default()
        };
        for _ in 0..9 {
            assert!(p.may_send(ms(0)));
            p.on_send(ms(0), 960, 960);
        }
        assert_eq!(p.next, ms(0));
        p.on_send(ms(0), 960, 960);
        assert_eq!(p.next, ms(5));
        assert!(!p.may_send(ms(4)));
        assert!(p.may_send(ms(5)));
        p.on_send(ms(5), 960, 960);
        assert_eq!(p.next, ms(10));
        p.on_send(ms(13), 960, 960);
        assert_eq!(p.next, SimTime::from_micros(15_500));
        // A short segment (a response's last, 400 bytes): 2.083 ms.
        p.on_send(SimTime::from_micros(15_500), 400, 960);
        assert_eq!(p.next, SimTime::from_nanos(15_500_000 + 2_083_333));
    }

    /// Linux's TSO autosizing with 1460-byte segments: at 1.25 MB/s (10
    /// Mbit/s) 1.25e6 >> 10 = 1220 bytes, less than a segment, so the
    /// minimum, 2; at 12.5 MB/s 12 207 bytes, 8 segments; at 1 GB/s the 64
    /// KB cap, 65 215 / 1460 = 44. BBR's minimum is 1 below 150 000 B/s
    /// (1.2 Mbit/s) and 2 from it.
    #[test]
    fn tso_burst_sizes() {
        assert_eq!(tso_autosize(1_250_000, 1460, 2), 2);
        assert_eq!(tso_autosize(12_500_000, 1460, 2), 8);
        assert_eq!(tso_autosize(1_000_000_000, 1460, 2), 44);
        assert_eq!(bbr_min_tso_segs(149_999), 1);
        assert_eq!(bbr_min_tso_segs(150_000), 2);
        assert_eq!(tso_autosize(100_000, 1460, bbr_min_tso_segs(100_000)), 1);
    }

    /// Bursts at 1.25 MB/s, 1250-byte segments (a gap of 1 ms each), past
    /// the first 10 unpaced segments: two segments leave at 10 ms, the
    /// third must wait for 12 ms (two gaps); without `tso` the second
    /// waits for 11 ms. A segment forced out at 11 ms (before the release
    /// time) adds its gap (13 ms) and opens no burst.
    #[test]
    fn tso_bursts_leave_together() {
        let mut p = Pacer {
            rate: 1_250_000,
            tso: Tso::Linux,
            ..Pacer::default()
        };
        for _ in 0..10 {
            p.on_send(ms(0), 1250, 1250);
        }
        assert_eq!(p.next, ms(1));
        p.next = ms(10);
        assert!(!p.may_send(ms(9)));
        assert!(p.may_send(ms(10)));
        p.on_send(ms(10), 1250, 1250);
        assert_eq!(p.next, ms(11));
        assert!(p.may_send(ms(10)), "the burst's second segment");
        p.on_send(ms(10), 1250, 1250);
        assert_eq!(p.next, ms(12));
        assert!(!p.may_send(ms(10)), "a burst of two");
        assert!(!p.may_send(ms(11)));
        p.on_send(ms(11), 1250, 1250);
        assert_eq!(p.next, ms(13));
        assert!(!p.may_send(ms(11)));
        let mut q = Pacer {
            rate: 1_250_000,
            ..Pacer::default()
        };
        for _ in 0..10 {
            q.on_send(ms(0), 1250, 1250);
        }
        q.next = ms(10);
        q.on_send(ms(10), 1250, 1250);
        assert!(!q.may_send(ms(10)));
        assert!(q.may_send(ms(11)));
    }

    /// A NewReno sender with pacing, cwnd 20 and an SRTT of 100 ms before
    /// it starts (as after a handshake): the rate is 2 x 960 x 20 / 0.1 s
    /// = 384 000 B/s, a segment every 2.5 ms. The first 10 segments leave at
    /// once; the 11th to the 20th wait for the pacing timer, at 2.5, 5.0,
    /// ..., 25 ms: half the window spread over a quarter of the RTT (slow
    /// start's 2x), and the timer stops when the window is full. The ACK
    /// of segment 0 at 100 ms: cwnd 21, 19 outstanding, 2 x 960 x 21 / 0.1
    /// = 403 200 B/s, a gap of 2.380952 ms; segment 20 leaves at once, 72.5
    /// ms after the release time (the credit takes half a gap off), so
    /// segment 21 leaves at 100 + 1.190476 ms, and the next release is a
    /// full gap later, 103.571428 ms.
    #[test]
    fn a_paced_newreno_sender_spreads_its_window() {
        let tcp = TcpSpec {
            pacing: true,
            initial_cwnd: 20,
            ecn: false,
            ..spec()
        };
        let (mut tx, mut out) = started(tcp, None);
        assert_eq!(tx.pacing_rate_bps(), Some(384_000.0 * 8.0));
        assert_eq!(out.len(), 10);
        let mut times = Vec::new();
        while let Some(d) = tx.pace_deadline() {
            out.clear();
            tx.on_pace_timer(d, &mut out);
            assert_eq!(out.len(), 1);
            times.push((out[0].seq, d));
        }
        let want: Vec<(u64, SimTime)> = (10..20)
            .map(|s| (s, SimTime::from_micros(2500 * (s - 9))))
            .collect();
        assert_eq!(times, want);
        out.clear();
        tx.on_ack(ms(100), 1, flags::ACK, Ecn::NotEct, &mut out);
        assert_eq!(tx.pacing_rate_bps(), Some(403_200.0 * 8.0));
        assert_eq!(out.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![20]);
        let d = tx.pace_deadline().expect("segment 21 waits");
        assert_eq!(d, SimTime::from_nanos(100_000_000 + 1_190_476));
        out.clear();
        tx.on_pace_timer(d, &mut out);
        assert_eq!(out[0].seq, 21);
        assert_eq!(tx.pace_deadline(), None, "the window is full");
        let next = tx.pace.as_deref().unwrap().pacer.next;
        assert_eq!(
            next,
            SimTime::from_nanos(100_000_000 + 1_190_476 + 2_380_952)
        );
    }

    /// The states a flow passes through, in order (each once per stretch),
    /// stepping `n` a millisecond at a time to `until_ms`.
    fn ca_states(n: &mut super::super::testing::Net, until_ms: u64) -> Vec<&'static str> {
        let mut seen: Vec<&'static str> = Vec::new();
        for ms in 1..=until_ms {
            n.run(ms);
            let s = n.tx.ca_state_name();
            if seen.last() != Some(&s) {
                seen.push(s);
            }
        }
        seen
    }

    /// Linux's names: a SACK flow that loses segment 40 is in `disorder`
    /// from the first SACK of the segments after it, in `recovery` from the
    /// third, `open` again once the hole is filled; without SACK the
    /// duplicate ACKs before the third are `disorder` as well. An ECN mark
    /// starts a reduction (`cwr`) that ends when the cumulative ACK passes
    /// what was sent when it began.
    #[test]
    fn the_series_names_disorder_and_cwr_as_linux() {
        use super::super::testing::{recovery_spec, Net};
        let one = |tcp: TcpSpec| {
            let mut n = Net::new(tcp, 200, 50, 1200, &[(40, 1)]);
            ca_states(&mut n, 1000)
        };
        let open = ["open", "disorder", "recovery", "open"];
        assert_eq!(one(recovery_spec(false, false, false)), open);
        assert_eq!(one(TcpSpec::default()), open);
        // PRR without SACK keeps SACK's state box but counts duplicate ACKs.
        let prr = TcpSpec {
            prr: true,
            ..TcpSpec::default()
        };
        assert_eq!(one(prr), open);
        let mut n = Net::new(spec(), 200, 50, 1200, &[]);
        n.set_marks(&[(40, 1)]);
        assert_eq!(ca_states(&mut n, 1000), ["open", "cwr", "open"]);
    }
}
