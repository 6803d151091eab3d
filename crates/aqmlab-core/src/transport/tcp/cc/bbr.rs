//! BBR version 1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016), as Linux's
//! `net/ipv4/tcp_bbr.c` runs it. The sender keeps a model of the path and
//! sets its pacing rate and window from it, not from losses:
//!
//! ```text
//! BtlBw   = max over the last 10 rounds of the delivery rate samples
//! RTprop  = min over the last 10 s of the RTT samples
//! pacing_rate = pacing_gain x BtlBw x (1 - 1 %)          (bytes/s: x MSS)
//! cwnd        = cwnd_gain x BtlBw x RTprop + 3 x tso_segs (+ 2 in phase 0)
//! ```
//!
//! (the delivery-rate samples are `rate.rs`'s; a round ends when a segment
//! sent after the round's start is delivered). The state machine:
//!
//! - Startup: pacing and cwnd gain 2/ln 2 = 2.885, the smallest gain that
//!   doubles the delivery rate every round. The pipe is full when three
//!   rounds in a row (not application-limited) raise BtlBw by less than
//!   25 %; then ssthresh = the BDP's inflight and
//! - Drain: pacing gain 1/2.885 (the queue Startup built drains in about
//!   one round), cwnd gain 2.885, until the data in the network at the next
//!   departure is at most one BDP's inflight; then
//! - ProbeBW: cwnd gain 2 (the 2 BDP inflight cap), pacing gain cycling
//!   through 1.25, 0.75, 1, 1, 1, 1, 1, 1, one phase per RTprop (1.25 until
//!   inflight reaches 1.25 BDP or a loss, 0.75 until it falls to 1 BDP),
//!   starting at a random phase other than 0.75.
//! - ProbeRTT: when RTprop has not been refreshed for 10 s, cwnd 4 for at
//!   least 200 ms and one round, then back to ProbeBW (Startup if the pipe
//!   was never full), RTprop's timestamp renewed.
//!
//! Loss: the first round of a fast recovery conserves packets (cwnd =
//! inflight + newly delivered), then the window grows back by at most the
//! segments delivered; leaving recovery (or a timeout's loss recovery)
//! restores the window from before it. A retransmission timeout leaves one
//! segment. Long-term bandwidth (a policer): two sampling intervals of 4 to
//! 16 rounds with a loss rate of at least 50/256 and delivery rates within
//! 1/8 (or 4 kbit/s) of each other make BBR pace at their mean, gain 1, for
//! 48 rounds. ACK aggregation: the segments acknowledged beyond BtlBw x the
//! time of an epoch, maximum over 5 to 10 rounds, raise the window (at most
//! BtlBw x 100 ms). BBR v1 does not answer ECN-Echo.
//!
//! Linux's choices kept, where the paper is silent: the gains and
//! thresholds above (Linux rounds 2/ln 2 to 739/256 and its inverse to
//! 88/256 in fixed point; the exact values are used here); the pacing
//! margin of 1 % (`bbr_pacing_margin_percent`); the quantisation budget of
//! 3 x `bbr_tso_segs_goal` (the segments of ~1 ms at the pacing rate, at
//! least 2 above 1.2 Mbit/s, at most 127 and 64 KB) with cwnd rounded up to
//! an even number, though segments are paced one at a time here; the first
//! window before any RTT sample is 10 segments (`TCP_INIT_CWND`); the
//! pacing rate before an RTT sample assumes 1 ms; the bandwidth filter is
//! Linux's windowed maximum over 10 rounds (`minmax_running_max`,
//! lib/win_minmax.c: Kathleen Nichols' best, second and third choices, the
//! best held while at most 10 rounds old). Where this model departs: rates
//! and times are f64 and nanoseconds, not Linux's fixed point and
//! microseconds or jiffies; delayed ACKs are not told apart when RTprop
//! expires.
//!
//! Units: windows in segments, BtlBw in segments per second, the pacing
//! rate in payload bytes per second, times as [`SimTime`].

use super::{CongestionControl, Flight, Reno};
use crate::rng::Rng;
use crate::transport::tcp::pacing::Paced;
use crate::transport::tcp::pacing::{bbr_min_tso_segs, tso_autosize};
use crate::transport::tcp::rate::{RateEstimator, RateSample};
use crate::transport::tcp::undo::Prior;
use crate::transport::tcp::{Cut, TcpFlow};
use crate::units::SimTime;

/// Startup's gain, 2 / ln 2 (`bbr_high_gain`).
pub const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// Drain's pacing gain, its inverse (`bbr_drain_gain`).
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// ProbeBW's cwnd gain (`bbr_cwnd_gain`).
pub const CWND_GAIN: f64 = 2.0;
/// ProbeBW's pacing gains, one phase each (`bbr_pacing_gain`).
pub const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Phases of the gain cycle.
pub const CYCLE_LEN: usize = 8;
/// The start phase is drawn among this many (`bbr_cycle_rand`): all but
/// the draining 0.75.
const CYCLE_RAND: u64 = 7;
/// Rounds of the bandwidth filter's window (`bbr_bw_rtts`: CYCLE_LEN + 2).
pub const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// RTprop's window (`bbr_min_rtt_win_sec`).
pub const MIN_RTT_WIN: SimTime = SimTime::from_secs(10);
/// Least time in ProbeRTT (`bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_TIME: SimTime = SimTime::from_millis(200);
/// The smallest window, segments (`bbr_cwnd_min_target`; also ProbeRTT's).
pub const CWND_MIN: u64 = 4;
/// Startup's growth test: BtlBw grew by 25 % (`bbr_full_bw_thresh`) ...
const FULL_BW_THRESH: f64 = 1.25;
/// ... or the pipe is full after this many rounds without (`bbr_full_bw_cnt`).
const FULL_BW_CNT: u32 = 3;
/// The pacing margin (`bbr_pacing_margin_percent`): 1 % below the model.
const PACING_MARGIN: f64 = 0.99;
/// The window before any RTT sample (`TCP_INIT_CWND`).
const INIT_CWND: u64 = 10;
/// The nominal RTT of the first pacing rate before any RTT sample.
const NOMINAL_RTT: SimTime = SimTime::from_millis(1);
/// Long-term sampling: rounds an interval lasts at least (`bbr_lt_intvl_min_rtts`) ...
const LT_INTVL_MIN_RTTS: u32 = 4;
/// ... a loss rate of at least this many 256ths (`bbr_lt_loss_thresh`) ...
const LT_LOSS_THRESH: u64 = 50;
/// ... two intervals whose rates differ by at most 1/8 ...
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// ... or by 4 kbit/s (`bbr_lt_bw_diff`, bytes/s) ...
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
/// ... then the long-term rate for this many rounds (`bbr_lt_bw_max_rtts`).
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation: the window of its maximum, rounds (`bbr_extra_acked_win_rtts`) ...
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// ... an epoch restarts past this many segments ...
const ACK_EPOCH_RESET: u64 = 1 << 20;
/// ... and the window it adds is at most BtlBw x this (`bbr_extra_acked_max_us`).
const EXTRA_ACKED_MAX: SimTime = SimTime::from_millis(100);

/// BBR's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    /// The name in the flow series.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// The sender's loss-recovery state, as BBR sees it (Linux's
/// `icsk_ca_state`, in its order; Disorder is `Open` here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// An ECN-Echo's reduction (Linux's CWR), until the cumulative ACK
    /// passes what was sent at the echo; BBR's window skips the reduction.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout, until the data outstanding then is
    /// acknowledged.
    Loss,
}

/// What an ACK tells BBR besides its rate sample (the sender's state after
/// the ACK's accounting, before what it sends next).
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub now: SimTime,
    /// Segments delivered so far, and when that count last grew.
    pub delivered: u64,
    pub delivered_time: SimTime,
    /// Segments deemed lost so far.
    pub lost: u64,
    /// Segments in the network before the ACK, and now.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    pub state: CaState,
    /// The earliest time the next segment may leave (the pacer's).
    pub next_send: SimTime,
    /// Payload bytes of a full segment.
    pub mss: u32,
    /// The smoothed RTT, if any sample.
    pub srtt: Option<SimTime>,
}

/// Linux's windowed maximum (`minmax_running_max`, lib/win_minmax.c,
/// Kathleen Nichols' algorithm) over rounds: the best, second and third
/// choices, each a (round, sample); the best is the estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MaxFilter {
    s: [(u64, f64); 3],
}

impl MaxFilter {
    /// A sample `v` in round `round` (rounds never go back).
    pub fn update(&mut self, round: u64, v: f64) {
        let win = BW_RTTS;
        let now = (round, v);
        // A new best, or nothing left in the window: forget the rest.
        if v >= self.s[0].1 || round - self.s[2].0 > win {
            self.s = [now; 3];
            return;
        }
        if v >= self.s[1].1 {
            self.s[1] = now;
            self.s[2] = now;
        } else if v >= self.s[2].1 {
            self.s[2] = now;
        }
        let dt = round - self.s[0].0;
        if dt > win {
            // The best has passed the window: the second and third move up
            // (twice, if the second has passed it too).
            self.s = [self.s[1], self.s[2], now];
            if round - self.s[0].0 > win {
                self.s = [self.s[1], self.s[2], now];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window without a second choice: one from
            // the second quarter.
            self.s[1] = now;
            self.s[2] = now;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window without a third: one from the second half.
            self.s[2] = now;
        }
    }

    pub fn get(&self) -> f64 {
        self.s[0].1
    }
}

/// One connection's BBR (Linux's `struct bbr`, with `tp->snd_cwnd`,
/// `snd_ssthresh` and `sk_pacing_rate`).
#[derive(Clone, Debug)]
pub struct Bbr {
    /// The window, segments (the sender adds the segments duplicate ACKs
    /// say have left the network).
    pub cwnd: u64,
    /// ssthresh, segments (None: infinite; set when Drain begins).
    pub ssthresh: Option<u64>,
    /// Payload bytes per second.
    pub pacing_rate: u64,
    pub mode: Mode,
    bw: MaxFilter,
    min_rtt: Option<SimTime>,
    min_rtt_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// Rounds so far, and the delivered count that ends the current one.
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    cycle_stamp: SimTime,
    cycle_idx: usize,
    prev_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    full_bw_reached: bool,
    full_bw: f64,
    full_bw_cnt: u32,
    has_seen_rtt: bool,
    /// The window before a recovery or ProbeRTT cut it.
    prior_cwnd: u64,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: f64,
    lt_last_delivered: u64,
    lt_last_stamp: SimTime,
    lt_last_lost: u64,
    ack_epoch_stamp: SimTime,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// The random start phase of the gain cycle.
    rng: Rng,
}

impl Bbr {
    /// A BBR with its random stream; [`Bbr::init`] starts it.
    pub fn new(rng: Rng) -> Bbr {
        Bbr {
            cwnd: INIT_CWND,
            ssthresh: None,
            pacing_rate: 0,
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_stamp: SimTime::ZERO,
            cycle_idx: 0,
            prev_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0.0,
            lt_last_delivered: 0,
            lt_last_stamp: SimTime::ZERO,
            lt_last_lost: 0,
            ack_epoch_stamp: SimTime::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            rng,
        }
    }

    /// The connection is established at `now` with a window of `cwnd`
    /// segments, the smoothed and minimum RTT if measured (the handshake's;
    /// Linux's `bbr_init`). The random stream carries on.
    pub fn init(&mut self, now: SimTime, cwnd: u64, srtt: Option<SimTime>, mss: u32) {
        let rng = self.rng.clone();
        *self = Bbr::new(rng);
        self.cwnd = cwnd;
        self.min_rtt = srtt;
        self.min_rtt_stamp = now;
        self.ack_epoch_stamp = now;
        self.init_pacing_rate(srtt, mss);
    }

    /// The random stream (carried over to the next connection of a flow).
    pub fn take_rng(self) -> Rng {
        self.rng
    }

    /// The bandwidth estimate, segments per second (the long-term rate
    /// while a policer is assumed; `bbr_bw`).
    pub fn bw(&self) -> f64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }

    /// Bytes per second of `bw` segments per second with `gain` and the
    /// pacing margin (`bbr_rate_bytes_per_sec`).
    fn bytes_per_s(bw: f64, gain: f64, mss: u32) -> f64 {
        bw * mss as f64 * gain * PACING_MARGIN
    }

    /// The first pacing rate: Startup's gain over the window per smoothed
    /// RTT, or per 1 ms before any sample (`bbr_init_pacing_rate_from_rtt`).
    fn init_pacing_rate(&mut self, srtt: Option<SimTime>, mss: u32) {
        let rtt = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                r.max(SimTime::from_micros(1))
            }
            None => NOMINAL_RTT,
        };
        let bw = self.cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = Self::bytes_per_s(bw, HIGH_GAIN, mss) as u64;
    }

    /// Segments of one TSO burst at the pacing rate: ~1 ms of data (the
    /// rate / 2^10), at least 1 below 1.2 Mbit/s and 2 above, at most 127
    /// and 64 KB (`bbr_tso_segs_goal`).
    pub fn tso_segs_goal(&self, mss: u32) -> u64 {
        let min = bbr_min_tso_segs(self.pacing_rate);
        tso_autosize(self.pacing_rate, mss, min).min(127)
    }

    /// ceil(bw x RTprop x gain), or 10 before any RTT sample (`bbr_bdp`).
    pub fn bdp(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(r) => (bw * r.as_secs_f64() * gain).ceil() as u64,
        }
    }

    /// The window budget for segments queued in the end hosts: 3 TSO
    /// bursts, rounded up to an even number, and 2 more in ProbeBW's
    /// probing phase (`bbr_quantization_budget`).
    fn quantization_budget(&self, cwnd: u64, mss: u32) -> u64 {
        let mut w = cwnd + 3 * self.tso_segs_goal(mss);
        w = (w + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            w += 2;
        }
        w
    }

    /// The inflight target at `gain` (`bbr_inflight`).
    pub fn inflight(&self, bw: f64, gain: f64, mss: u32) -> u64 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// The segments still in the network when the next one leaves
    /// (`bbr_packets_in_net_at_edt`): those in flight now, with the next
    /// burst when probing, less what BtlBw delivers until then.
    fn in_net_at_next_send(&self, a: &AckInfo, in_flight: u64) -> u64 {
        let wait = a.next_send.max(a.now) - a.now;
        let delivered = (self.bw() * wait.as_secs_f64()) as u64;
        let mut at = in_flight;
        if self.pacing_gain > 1.0 {
            at += self.tso_segs_goal(a.mss);
        }
        at.saturating_sub(delivered)
    }

    /// Save the window before a recovery or ProbeRTT cuts it (`bbr_save_cwnd`).
    pub fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.prev_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// The sender starts sending with nothing in flight
    /// (`CA_EVENT_TX_START`); `app_limited`: it had stopped for want of
    /// data. BBR then paces at BtlBw in ProbeBW rather than probe.
    pub fn on_tx_start(&mut self, now: SimTime, app_limited: bool, mss: u32) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_stamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            Mode::ProbeBw => self.set_pacing_rate(self.bw(), 1.0, None, mss),
            Mode::ProbeRtt => self.check_probe_rtt_done(now),
            _ => {}
        }
    }

    /// A retransmission timeout (Linux's `tcp_enter_loss` with BBR's
    /// `ssthresh` and `set_state` hooks): the window before it is saved if
    /// no recovery was under way, the window is one segment, Startup's
    /// growth test restarts, and the long-term sampler sees a loss.
    /// `delivered`, `delivered_time` and `lost` as after the timeout's
    /// losses are counted.
    pub fn on_timeout(
        &mut self,
        was_open: bool,
        delivered: u64,
        delivered_time: SimTime,
        lost: u64,
        mss: u32,
    ) {
        if was_open {
            self.save_cwnd();
        }
        self.cwnd = 1;
        self.prev_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true; // a timeout ends a round
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, delivered, delivered_time, lost, mss);
    }

    /// A cut found spurious and undone (`bbr_undo_cwnd`): the window stays
    /// as it is, and Startup's full-pipe test and the long-term sampler
    /// start again (a flow using the long-term rate leaves it).
    /// `delivered`, `delivered_time` and `lost` as now.
    pub fn on_undo(&mut self, delivered: u64, delivered_time: SimTime, lost: u64) {
        self.full_bw = 0.0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(delivered, delivered_time, lost);
    }

    /// One ACK (Linux's `bbr_main`): update the model, then the pacing rate
    /// and the window. Returns whether the connection is to be marked
    /// application-limited (ProbeRTT's samples are not the path's).
    pub fn on_ack(&mut self, rs: &RateSample, a: &AckInfo) -> bool {
        self.update_bw(rs, a);
        self.update_ack_aggregation(rs, a);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, a) {
            self.advance_cycle_phase(a.delivered_time);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(a);
        let app_limited = self.update_min_rtt(rs, a);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, a.srtt, a.mss);
        self.set_cwnd(rs, a, bw);
        app_limited
    }

    /// The delivery-rate sample into BtlBw's filter, and the round count
    /// (`bbr_update_bw`).
    fn update_bw(&mut self, rs: &RateSample, a: &AckInfo) {
        self.round_start = false;
        let Some(rate) = rs.segments_per_s() else {
            return;
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = a.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, a.delivered, a.delivered_time, a.lost, a.mss);
        // An application-limited sample says how fast the application
        // sent; it counts only when it beats the estimate.
        if !rs.app_limited || rate >= self.bw.get() {
            self.bw.update(self.rtt_cnt, rate);
        }
    }

    /// ACK aggregation (`bbr_update_ack_aggregation`): the segments
    /// acknowledged in an epoch beyond what BtlBw would deliver in it.
    fn update_ack_aggregation(&mut self, rs: &RateSample, a: &AckInfo) {
        if rs.acked == 0 || rs.delivered.is_none() || rs.interval == SimTime::ZERO {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(31);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = a.delivered_time.saturating_sub(self.ack_epoch_stamp);
        let mut expected = (self.bw() * epoch.as_secs_f64()) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked >= ACK_EPOCH_RESET {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = a.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked).min(ACK_EPOCH_RESET - 1);
        let extra = (self.ack_epoch_acked - expected).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// The window ACK aggregation adds (`bbr_ack_aggregation_cwnd`).
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let cap = (self.bw() * EXTRA_ACKED_MAX.as_secs_f64()) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(cap)
    }

    /// Whether ProbeBW's phase ends (`bbr_is_next_cycle_phase`): after
    /// RTprop at gain 1; at 1.25 once inflight reached 1.25 BDP (or a
    /// loss) and RTprop passed; at 0.75 when inflight fell to 1 BDP or
    /// RTprop passed.
    fn is_next_cycle_phase(&self, rs: &RateSample, a: &AckInfo) -> bool {
        let full_length = self
            .min_rtt
            .is_some_and(|r| a.delivered_time.saturating_sub(self.cycle_stamp) > r);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let inflight = self.in_net_at_next_send(a, a.prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > 1.0 {
            return full_length
                && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, a.mss));
        }
        full_length || inflight <= self.inflight(bw, 1.0, a.mss)
    }

    fn advance_cycle_phase(&mut self, delivered_time: SimTime) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = delivered_time;
    }

    /// ProbeBW begins at a random phase other than 0.75: one of the seven
    /// phases before phase 0 is drawn, then the cycle advances past it
    /// (`bbr_reset_probe_bw_mode`).
    fn reset_probe_bw_mode(&mut self, delivered_time: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.uniform_u64(0, CYCLE_RAND - 1) as usize;
        self.advance_cycle_phase(delivered_time);
    }

    fn reset_mode(&mut self, delivered_time: SimTime) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(delivered_time);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Startup's end (`bbr_check_full_bw_reached`): three rounds, not
    /// application-limited, without 25 % growth of BtlBw.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let max = self.bw.get();
        if max >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = max;
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// Startup -> Drain -> ProbeBW (`bbr_check_drain`).
    fn check_drain(&mut self, a: &AckInfo) {
        let bw = self.bw.get();
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = Some(self.inflight(bw, 1.0, a.mss));
        }
        if self.mode == Mode::Drain
            && self.in_net_at_next_send(a, a.in_flight) <= self.inflight(bw, 1.0, a.mss)
        {
            self.reset_probe_bw_mode(a.delivered_time);
        }
    }

    /// ProbeRTT's end once its time and a round have passed
    /// (`bbr_check_probe_rtt_done`).
    fn check_probe_rtt_done(&mut self, now: SimTime) {
        if self.probe_rtt_done.is_none_or(|d| now <= d) {
            return;
        }
        self.min_rtt_stamp = now; // RTprop holds for another 10 s
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        // Linux passes the connection's delivered_mstamp as the new
        // cycle's start; `now` is the ACK's time, the same instant.
        self.reset_mode(now);
    }

    /// RTprop's filter and ProbeRTT (`bbr_update_min_rtt`). Returns whether
    /// the connection is to be marked application-limited.
    fn update_min_rtt(&mut self, rs: &RateSample, a: &AckInfo) -> bool {
        let expired = a.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(r) = rs.rtt {
            // Only a strictly shorter sample refreshes RTprop (Linux since
            // 5.10): a path of constant delay, whose empty-queue RTT recurs
            // exactly, still enters ProbeRTT every 10 s.
            if self.min_rtt.is_none_or(|m| r < m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = a.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        let mut app_limited = false;
        if self.mode == Mode::ProbeRtt {
            app_limited = true;
            if self.probe_rtt_done.is_none() && a.in_flight <= CWND_MIN {
                self.probe_rtt_done = Some(a.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = a.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(a.now);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
        app_limited
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt_use_bw => (1.0, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// The pacing rate at `gain` (`bbr_set_pacing_rate`): in Startup it
    /// only rises; the first RTT sample resets it from the window.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Option<SimTime>, mss: u32) {
        let rate = Self::bytes_per_s(bw, gain, mss) as u64;
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt, mss);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Packet conservation in the first round of a recovery, and the
    /// window restored when it ends (`bbr_set_cwnd_to_recover_or_restore`).
    /// Returns the window and whether conservation holds it.
    fn recover_or_restore(&mut self, rs: &RateSample, a: &AckInfo) -> (u64, bool) {
        let mut cwnd = self.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        let acked = rs.acked;
        if a.state == CaState::Recovery && self.prev_state != CaState::Recovery {
            // The first round of a recovery: one segment out per segment
            // delivered (the round starts now).
            self.packet_conservation = true;
            self.next_rtt_delivered = a.delivered;
            cwnd = a.in_flight + acked;
        } else if self.prev_state >= CaState::Recovery && a.state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = a.state;
        if self.packet_conservation {
            return (cwnd.max(a.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// The window (`bbr_set_cwnd`): toward cwnd_gain x BDP + the budgets,
    /// by at most the segments delivered; at least 4; 4 in ProbeRTT.
    fn set_cwnd(&mut self, rs: &RateSample, a: &AckInfo, bw: f64) {
        let acked = rs.acked;
        let mut cwnd = self.cwnd;
        if acked > 0 {
            let (w, conserving) = self.recover_or_restore(rs, a);
            cwnd = w;
            if !conserving {
                let target = self.quantization_budget(
                    self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd(),
                    a.mss,
                );
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || a.delivered < INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN);
            }
        }
        self.cwnd = cwnd;
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN);
        }
    }

    /// A long-term interval starts (`bbr_reset_lt_bw_sampling_interval`).
    fn reset_lt_interval(&mut self, delivered: u64, delivered_time: SimTime, lost: u64) {
        self.lt_last_stamp = delivered_time;
        self.lt_last_delivered = delivered;
        self.lt_last_lost = lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, delivered: u64, delivered_time: SimTime, lost: u64) {
        self.lt_bw = 0.0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_interval(delivered, delivered_time, lost);
    }

    /// Policer detection (`bbr_lt_bw_sampling`): sampling starts at a
    /// loss; an interval of 4-16 rounds that ends at a loss with a loss
    /// rate of at least 50/256 gives a rate; two such rates that agree
    /// make BBR use their mean for 48 rounds.
    fn lt_bw_sampling(
        &mut self,
        rs: &RateSample,
        delivered: u64,
        delivered_time: SimTime,
        lost: u64,
        mss: u32,
    ) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(delivered, delivered_time, lost);
                    self.reset_probe_bw_mode(delivered_time);
                }
            }
            return;
        }
        // Wait for a loss: the policer's tokens are spent by then.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(delivered, delivered_time, lost);
            self.lt_is_sampling = true;
        }
        if rs.app_limited {
            self.reset_lt_bw_sampling(delivered, delivered_time, lost);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(delivered, delivered_time, lost);
            return;
        }
        // The interval ends at a loss, once the tokens are exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost_n = lost - self.lt_last_lost;
        let delivered_n = delivered - self.lt_last_delivered;
        if delivered_n == 0 || lost_n * 256 < LT_LOSS_THRESH * delivered_n {
            return;
        }
        let t = delivered_time.saturating_sub(self.lt_last_stamp);
        if t < SimTime::from_millis(1) {
            return;
        }
        let bw = delivered_n as f64 / t.as_secs_f64();
        self.lt_interval_done(bw, delivered, delivered_time, lost, mss);
    }

    /// A long-term interval's rate `bw` (`bbr_lt_bw_interval_done`).
    fn lt_interval_done(
        &mut self,
        bw: f64,
        delivered: u64,
        delivered_time: SimTime,
        lost: u64,
        mss: u32,
    ) {
        if self.lt_bw > 0.0 {
            let diff = (bw - self.lt_bw).abs();
            if diff <= LT_BW_RATIO * self.lt_bw || Self::bytes_per_s(diff, 1.0, mss) <= LT_BW_DIFF {
                // Two consistent lossy intervals: a policer.
                self.lt_bw = (bw + self.lt_bw) / 2.0;
                self.lt_use_bw = true;
                self.pacing_gain = 1.0;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_interval(delivered, delivered_time, lost);
    }
}

/// BBR v1 (`tcp.variant = "bbr"`): its model sets the window and the pacing
/// rate after every ACK's rate sample; congestion events save the window.
impl CongestionControl for Bbr {
    /// BBR's window is its own on every ACK ([`Self::pace`]) and in a
    /// recovery the reordering timer starts.
    #[inline(always)]
    fn owns_window(_f: &TcpFlow) -> bool {
        true
    }

    /// An ECN-Echo in the open state, once per window: [`TcpFlow::bbr_ecn_echo`].
    #[inline(always)]
    fn on_ack(f: &mut TcpFlow, _now: SimTime, _ack: u64, ece: bool) {
        if ece && f.ca_state() == CaState::Open && f.snd_una >= f.ecn_recover {
            f.bbr_ecn_echo();
        } else if !ece {
            f.ecn_backoff_on = false;
        }
    }

    /// Reno's (the model then sets the window, [`CongestionControl::pace`]).
    #[inline(always)]
    fn on_new_ack(f: &mut TcpFlow, now: SimTime, acked: u64) {
        <Reno as CongestionControl>::on_new_ack(f, now, acked);
    }

    #[inline]
    fn on_loss(f: &mut TcpFlow, after_ecn: bool) {
        f.bbr_loss_event(after_ecn);
    }

    #[inline]
    fn on_timeout(f: &mut TcpFlow) {
        f.bbr_timeout();
    }

    /// Its window stays ([`TcpFlow::bbr_undo`]).
    #[inline]
    fn on_undo(f: &mut TcpFlow, _prior: Prior) {
        f.bbr_undo();
    }

    /// The model on the ACK's rate sample: its window (plus the segments
    /// duplicate ACKs took out of the network) and pacing rate.
    #[inline]
    fn pace(f: &mut TcpFlow, p: &mut Paced, now: SimTime, rs: &RateSample, flight: Flight) {
        let Some(b) = p.bbr.as_mut() else {
            return f.linux_pace(p);
        };
        let a = AckInfo {
            now,
            delivered: p.rate.delivered,
            delivered_time: p.rate.delivered_time,
            lost: p.rate.lost,
            prior_in_flight: flight.prior_in_flight,
            in_flight: flight.in_flight,
            state: f.ca_state(),
            next_send: p.pacer.next,
            mss: f.mss(),
            srtt: f.srtt(),
        };
        if b.on_ack(rs, &a) {
            p.rate.mark_app_limited(flight.in_flight);
        }
        p.pacer.rate = b.pacing_rate;
        f.cwnd = (b.cwnd + flight.held) as f64;
        f.ssthresh = b.ssthresh.map_or(f64::INFINITY, |s| s as f64);
    }
}

/// BBR's answers to the sender's congestion events (the window and the
/// pacing rate per ACK are set in `pacing.rs`'s ACK path). NewReno's
/// recovery (SACK's with `tcp.sack`) decides what is retransmitted; BBR
/// decides the window.
impl TcpFlow {
    fn bbr_parts(&mut self) -> Option<(&mut Bbr, &mut RateEstimator)> {
        let p = self.pace.as_deref_mut()?;
        let b = p.bbr.as_mut()?;
        Some((b, &mut p.rate))
    }

    /// A fast retransmission: BBR keeps ssthresh and saves the window for
    /// the recovery's end (Linux's `bbr_ssthresh`); the window during the
    /// recovery is set per ACK (packet conservation). `in_cwr`: the loss
    /// falls in the CWR state an ECN-Echo began ([`TcpFlow::bbr_ecn_echo`]),
    /// which the recovery continues: Linux's `tcp_enter_recovery` then
    /// starts no reduction (`tcp_init_cwnd_reduction`), so the window saved
    /// at the echo stands and no second CWR is queued.
    #[cold]
    pub(in crate::transport::tcp) fn bbr_loss_event(&mut self, in_cwr: bool) {
        self.exit_cwnd = self.cwnd;
        if in_cwr {
            return;
        }
        self.cwr_pending = self.cfg.tcp.ecn; // RFC 3168 section 6.1.2
        if let Some((b, _)) = self.bbr_parts() {
            b.save_cwnd();
        }
    }

    /// A retransmission timeout: every segment outstanding is deemed lost,
    /// the window is one segment, ssthresh stays (Linux's `tcp_enter_loss`
    /// with BBR's hooks).
    #[cold]
    pub(in crate::transport::tcp) fn bbr_timeout(&mut self) {
        // Linux's `tcp_enter_loss` saves the window (`bbr_ssthresh`) from
        // the open and disorder states, not in a CWR state still under way.
        let was_open = self.ca_state() == CaState::Open;
        let mss = self.mss();
        if let Some((b, rate)) = self.bbr_parts() {
            // The rate estimator has counted the timeout's losses
            // (`paced_timeout`).
            b.on_timeout(
                was_open,
                rate.delivered,
                rate.delivered_time,
                rate.lost,
                mss,
            );
        }
        self.cwnd = 1.0;
    }

    /// A reduction undone (Linux's `tcp_undo_cwnd_reduction` calls
    /// `bbr_undo_cwnd`): BBR keeps its window and starts its full-pipe test
    /// and long-term sampling again.
    #[cold]
    pub(in crate::transport::tcp) fn bbr_undo(&mut self) {
        if let Some((b, rate)) = self.bbr_parts() {
            b.on_undo(rate.delivered, rate.delivered_time, rate.lost);
        }
    }

    /// An ECN-Echo in the open state: BBR v1 does not reduce its window,
    /// but the flow enters Linux's CWR state as every flow does
    /// (`tcp_enter_cwr`: the window is saved by `bbr_ssthresh`, the CWR
    /// flag goes out on the next new segment, RFC 3168 section 6.1.2),
    /// whose reduction BBR's own window control skips. The state lasts
    /// until the cumulative ACK passes what was sent at the echo: its ACKs
    /// are looked at for losses as any not in the open state are, the
    /// series names it `cwr`, and a loss found in it continues it
    /// ([`TcpFlow::bbr_loss_event`]).
    #[cold]
    pub(in crate::transport::tcp) fn bbr_ecn_echo(&mut self) {
        self.ecn_recover = self.snd_max;
        self.recover = self.snd_max;
        self.last_cut = Cut::Ecn;
        self.cwr_pending = true;
        if let Some((b, _)) = self.bbr_parts() {
            b.save_cwnd();
        }
    }
}

#[cfg(test)]
mod tests;
