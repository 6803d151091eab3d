//! TCP Prague: the scalable congestion control of L4S (RFC 9330 section
//! 4.3, RFC 9331 section 4.3 and appendix A's "Prague requirements"), as
//! the L4S team's reference runs it (`net/ipv4/tcp_prague.c` of
//! github.com/L4STeam/linux, module version 0.6) and as
//! draft-briscoe-iccrg-prague-congestion-control describes it. The flow
//! sends ECT(1) (RFC 9331 section 4.1) and, like DCTCP, answers the extent
//! of congestion rather than its presence:
//!
//! ```text
//! F     = CE-marked segments delivered / segments delivered, per round
//! alpha = (1 - g) alpha + g F                           g = 1/16, alpha_0 = 1
//! cwnd  = cwnd - alpha cwnd / 2                         on ECE, at most once a round
//! cwnd += n_nonCE x ai / cwnd                           every ACK, also after a cut
//! ai    = (srtt / rtt_target)^2 if srtt < rtt_target    rtt_target = 25 ms
//!         1                     otherwise, and for the first 500 rounds
//! rate  = r x packet_size x cwnd / srtt                 r = 2 if cwnd < ssthresh / 2, else 1
//! ```
//!
//! What aqmlab models, and how it reads the reference:
//!
//! - **ECN feedback**: an exact count of CE marks per ACK. The receiver is
//!   RFC 8257 section 3.2's two-state machine (`receiver.rs`, shared with
//!   DCTCP): it acknowledges at once when the CE state of the arriving
//!   segments changes, so every segment an ACK covers carries the CE state
//!   its ECE says, and the sender's `delivered_ce` is exact with delayed
//!   ACKs. This stands for AccECN's counters (the reference's
//!   `TCP_CONG_NEEDS_ACCECN`), which deliver the same count when no ACK is
//!   lost. ACKs and retransmissions are ECT too (as DCTCP's).
//! - **alpha** (the reference's `prague_update_alpha`, the draft section
//!   2.3.2): starts at 1 and is not updated before the first CE mark
//!   (`saw_ce`: "no proof of an AQM on the path"); it is updated when the
//!   cumulative ACK reaches the highest segment sent when the round began,
//!   over the segments delivered and CE-marked since the last update. Kept
//!   in floating point (the reference: in 2^-20, upscaled by 1/g).
//! - **The cut** (`prague_enter_cwr`, draft section 2.4.3): on an ECE that
//!   finds no reduction under way (Linux's CWR state: the cumulative ACK
//!   must pass the highest segment sent at the last cut), cwnd -= alpha
//!   cwnd / 2 with the alpha before this ACK's update, at least 2
//!   segments, and ssthresh = cwnd (the reference sets ssthresh as its
//!   integer window steps down, which ends slow start). Once the flow is
//!   RTT-independent, also at most once per `rtt_target`: an ECE sooner
//!   still starts the reduction, which spends its round without a cut
//!   (the reference's `prague_enter_cwr` returns after the TCP core has
//!   entered CWR). `tcp.prague_cwr = "udp-prague"` takes the rule of the
//!   L4S team's UDP Prague (`prague_cc.cpp` of github.com/L4STeam/udp_prague,
//!   whose reduction state ends once a round trip and a virtual one,
//!   max(SRTT, 25 ms), have passed since the cut): such an ECE starts
//!   nothing, and the first ECE after the 25 ms cuts.
//! - **Growth** (`prague_update_cwnd`, draft section 2.4.1): on every ACK,
//!   also while the reduced window is acknowledged (the reference's AI
//!   runs in CWR), by the segments it delivered that were not CE-marked:
//!   slow start adds them (up to ssthresh, the rest to the additive
//!   increase), the additive increase adds n ai / cwnd to the fractional
//!   window. aqmlab's `cwnd` is the reference's `frac_cwnd` (a real
//!   number); the reference steps its integer `snd_cwnd` one segment per
//!   ACK toward ceil(frac_cwnd), aqmlab sends floor(cwnd) at once. The
//!   reference's slow start moves `snd_cwnd` and leaves `frac_cwnd`
//!   behind (its own version's quirk); aqmlab grows the one window.
//! - **RTT independence** (the reference's default `prague_rtt_scaling =
//!   RTT_CONTROL_RATE`, `prague_rtt_target` = 25 ms,
//!   `prague_rtt_transition` = 500 rounds; draft section 2.3.4): after 500
//!   rounds outside slow start, a flow whose SRTT is below 25 ms grows by
//!   (srtt / 25 ms)^2 segments per round, i.e. one segment per 25 ms of
//!   rate growth per 25 ms as a 25 ms flow does, and updates alpha and
//!   cuts at most once per 25 ms. `ai` is recomputed at every round's
//!   start from the SRTT then (the reference: also whenever the window
//!   changes). `tcp.prague_rtt_scaling = "none"` is the reference's
//!   `RTT_CONTROL_NONE`: one segment a round trip and a cut a round trip at
//!   any RTT, as the L4S team's Prague ran before RTT independence (2020).
//!   The other modes (`SCALABLE`, `ADDITIVE`) are not modelled.
//! - **Pacing** (`prague_update_pacing_rate`): the flow always paces
//!   (`pacing.rs`'s release clock) at packet_size x cwnd / SRTT bytes per
//!   second of payload, twice that while cwnd < ssthresh / 2: 100 % in
//!   congestion avoidance (Linux's default for others: 120 %), 200 % in
//!   slow start. The reference's GSO burst limit (250 us, at least 2
//!   segments: `prague_tso_segs`) has no counterpart: Prague's segments
//!   leave one per release, also with `tcp.tso`.
//! - **Loss** (`prague_enter_loss` on entering recovery and on
//!   `CA_EVENT_LOSS`; draft section 2.4.4): Reno's halving, cwnd / 2 at
//!   least 2 segments, and no growth until the recovery ends. No PRR acts
//!   on the window (the reference's `cong_control` sets it on every ACK,
//!   so Linux's `tcp_cwnd_reduction` never runs for it, also not when
//!   RACK's reordering timer starts the recovery): the reference steps its
//!   `snd_cwnd` down one segment per ACK toward the halved `frac_cwnd`,
//!   from the ACK that starts the recovery on (not at the timer), and so
//!   does aqmlab's window (with SACK; the first lost segment goes at once,
//!   the window one below the flight before it); after a
//!   timeout one segment and slow start back to half (the reference steps
//!   its window up from one segment toward half the fractional window).
//!   Recovery is NewReno's (SACK's with `tcp.sack`), as DCTCP's
//!   (`reno.rs`, `recovery.rs`).
//! - **Classic ECN bottleneck detection** (`tcp.prague_classic_ecn_detection`,
//!   the reference's `prague_classic_ecn_detection` with
//!   `prague_ecn_fallback = 1`; off by default as there): a second SRTT
//!   and mean deviation from every RTT sample with the gains 2^-s and
//!   2^-(s+1), s = min(floor(log2 ssthresh) x 3/2 + 1, 18) set at every
//!   cut, and the minimum RTT; once per round, after the first CE mark,
//!
//!   ```text
//!   score += 1/2 log2(mdev / 750 us) + 1/2 log2(max(srtt - min_rtt, 2 ms) / 2 ms)
//!   score in [0, 17]
//!   alpha_cut = max(alpha, 0.625 (min(score, 9) - 8))   when score > 8
//!   ```
//!
//!   so a deep, varying queue (a classic ECN AQM) drives the score up and
//!   the cuts toward 0.31 of the window, a shallow steady one (L4S) down.
//!   The reference keeps the logarithms in fixed point with a carried
//!   remainder; aqmlab takes log2 exactly. Its commented-out
//!   self-limited term is left out as there. The draft (section 2.3.6)
//!   describes the same idea.

use super::{CongestionControl, Dctcp, Flight, State};
use crate::transport::tcp::pacing::Paced;
use crate::transport::tcp::rate::RateSample;
use crate::transport::tcp::{Cut, TcpFlow};
use crate::units::SimTime;

/// `g` (the reference's `PRAGUE_SHIFT_G` = 4).
pub const G: f64 = 1.0 / 16.0;
/// The reference's `prague_rtt_target`: 25 ms.
pub const RTT_TARGET: SimTime = SimTime::from_millis(25);
/// The reference's `prague_rtt_transition`: rounds outside slow start
/// before the flow becomes RTT-independent.
pub const RTT_TRANSITION: u32 = 500;
/// The reference's `MIN_CWND`, segments.
pub const MIN_CWND: f64 = 2.0;
/// Classic-ECN score: pure L4S up to `L_STICKY`, the transition to
/// `CLASSIC_ECN`, at most `C_STICKY` (the reference's constants in units
/// of alpha: 8, 9, 17).
const L_STICKY: f64 = 8.0;
const CLASSIC_ECN: f64 = 9.0;
const C_STICKY: f64 = 17.0;
/// The reference queue variation V0 (~750 us) and depth D0 (~2 ms), and
/// the weights V = D = 1/2 of their log2 ratios.
const V0_US: f64 = 750.0;
const D0_US: f64 = 2000.0;
const V_WEIGHT: f64 = 0.5;
const D_WEIGHT: f64 = 0.5;
/// The fallback's alpha floor per unit of score above `L_STICKY` (the
/// reference's c/2 + c/8).
const FALLBACK: f64 = 0.625;
/// The largest gain shift of the detector's estimator (`PRAGUE_MAX_SRTT_BITS`).
const MAX_SHIFT: u32 = 18;

/// The classic-ECN detector's state (the reference's `srtt_pace_us`,
/// `mdev_pace_us`, `g_srtt_shift`, `tcp_min_rtt`, `classic_ecn`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detector {
    /// Slowly smoothed RTT and its mean deviation, microseconds (0: no
    /// sample yet).
    srtt_us: f64,
    mdev_us: f64,
    /// The gain of `srtt_us` is 2^-shift, of `mdev_us` 2^-(shift + 1).
    shift: u32,
    /// The smallest RTT sample, microseconds.
    min_rtt_us: f64,
    /// The classic-ECN score, in [0, `C_STICKY`].
    score: f64,
}

impl Default for Detector {
    fn default() -> Self {
        Detector {
            srtt_us: 0.0,
            mdev_us: 1.0,
            shift: MAX_SHIFT,
            min_rtt_us: f64::INFINITY,
            score: 0.0,
        }
    }
}

impl Detector {
    /// One RTT sample, microseconds (`prague_rtt_estimator`).
    pub fn on_rtt(&mut self, r_us: f64) {
        self.min_rtt_us = self.min_rtt_us.min(r_us);
        if self.srtt_us == 0.0 {
            self.srtt_us = r_us;
            self.mdev_us = 1.0;
            return;
        }
        let err = r_us - self.srtt_us;
        self.srtt_us += err / f64::from(1u32 << self.shift);
        self.mdev_us += (err.abs() - self.mdev_us) / f64::from(1u32 << (self.shift + 1));
    }

    /// The gains follow the window (`prague_update_rtt_scaling`, at every
    /// cut with the ssthresh it finds): s = floor(log2 ssthresh), then
    /// s + s / 2 + 1, at most 18.
    pub fn set_shift(&mut self, ssthresh: f64) {
        let lg = if ssthresh.is_finite() && ssthresh >= 1.0 {
            (ssthresh as u64).ilog2()
        } else {
            u64::BITS
        };
        self.shift = (lg + lg / 2 + 1).min(MAX_SHIFT);
    }

    /// The round's update of the score (`prague_classic_ecn_detection`).
    pub fn per_round(&mut self) {
        if self.srtt_us == 0.0 || !self.min_rtt_us.is_finite() {
            return;
        }
        let mut s = self.score + V_WEIGHT * (self.mdev_us.max(1.0).log2() - V0_US.log2());
        // Queue build-up only moves the score toward classic.
        let depth = self.srtt_us - self.min_rtt_us;
        if depth > D0_US {
            s += D_WEIGHT * (depth.log2() - D0_US.log2());
        }
        self.score = s.clamp(0.0, C_STICKY);
    }

    /// The alpha a cut uses with the fallback on
    /// (`prague_classic_ecn_fallback`).
    pub fn cut_alpha(&self, alpha: f64) -> f64 {
        if self.score <= L_STICKY {
            return alpha;
        }
        alpha.max(FALLBACK * (self.score.min(CLASSIC_ECN) - L_STICKY))
    }

    /// The score.
    pub fn score(&self) -> f64 {
        self.score
    }
}

/// One connection's Prague sender state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prague {
    /// alpha, in [0, 1].
    alpha: f64,
    /// A CE mark has been echoed (an AQM is on the path).
    saw_ce: bool,
    /// The round ends when the cumulative ACK reaches this segment.
    next_seq: u64,
    /// Segments delivered since alpha's last update, and of those
    /// CE-marked.
    acked: u64,
    marked: u64,
    /// Segments credited by duplicate ACKs since the last new ACK.
    dup_credit: u64,
    /// Rounds since slow start ended.
    round: u32,
    /// RTT independence on (`tcp.prague_rtt_scaling = "rate"`).
    pub rtt_scaling: bool,
    /// When alpha was last updated, and the last cut.
    alpha_stamp: SimTime,
    cwr_stamp: Option<SimTime>,
    /// The additive increase per window of non-CE segments delivered.
    ai: f64,
    /// The classic-ECN detector (read only with the switch on).
    pub det: Detector,
}

impl Default for Prague {
    fn default() -> Self {
        Prague {
            alpha: 1.0,
            saw_ce: false,
            next_seq: 0,
            acked: 0,
            marked: 0,
            dup_credit: 0,
            round: 0,
            rtt_scaling: true,
            alpha_stamp: SimTime::ZERO,
            cwr_stamp: None,
            ai: 1.0,
            det: Detector::default(),
        }
    }
}

impl Prague {
    /// alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The additive increase per round, segments.
    pub fn ai(&self) -> f64 {
        self.ai
    }

    /// Counts an ACK: `newly` segments newly acknowledged or a duplicate
    /// ACK (one segment), all CE-marked if `ece` (the exact echo, module
    /// head). Returns the segments it delivered.
    pub fn count(&mut self, newly: u64, dup: bool, ece: bool) -> u64 {
        let delivered = super::dctcp::delivered(&mut self.dup_credit, newly, dup);
        self.acked += delivered;
        if ece {
            self.marked += delivered;
            self.saw_ce = true;
        }
        delivered
    }

    /// Whether the flow is RTT-independent: with RTT scaling, outside slow
    /// start, 500 rounds after it (`prague_is_rtt_indep`).
    pub fn rtt_indep(&self, slow_start: bool) -> bool {
        self.rtt_scaling && !slow_start && self.round >= RTT_TRANSITION
    }

    /// Whether alpha is due (`prague_should_update_ewma`): the round is
    /// over and, once RTT-independent, `RTT_TARGET` has passed since the
    /// last update.
    pub fn alpha_due(&self, snd_una: u64, now: SimTime, slow_start: bool) -> bool {
        snd_una >= self.next_seq
            && (!self.rtt_indep(slow_start) || now - self.alpha_stamp >= RTT_TARGET)
    }

    /// alpha's update (once the first CE mark was seen) and the next
    /// round (`prague_update_alpha`, `prague_new_round`): `snd_max` ends
    /// it; `srtt` sets its additive increase; `detect`: the classic-ECN
    /// detector runs.
    pub fn end_round(
        &mut self,
        now: SimTime,
        snd_max: u64,
        slow_start: bool,
        srtt: SimTime,
        detect: bool,
    ) {
        if self.saw_ce {
            if detect {
                self.det.per_round();
            }
            let f = if self.marked == 0 {
                0.0
            } else {
                self.marked as f64 / self.acked.max(1) as f64
            };
            self.alpha = ((1.0 - G) * self.alpha + G * f).min(1.0);
            self.alpha_stamp = now;
        }
        self.next_seq = snd_max;
        self.acked = 0;
        self.marked = 0;
        if !slow_start {
            self.round = self.round.saturating_add(1);
        }
        self.ai = if self.rtt_scaling {
            ai_increase(self.round, srtt)
        } else {
            1.0
        };
    }

    /// Whether an ECE that starts a reduction may cut: always before the
    /// flow is RTT-independent, then once per `RTT_TARGET`
    /// (`prague_enter_cwr`).
    pub fn may_cut(&self, now: SimTime, slow_start: bool) -> bool {
        !self.rtt_indep(slow_start) || self.cwr_stamp.is_none_or(|t| now - t >= RTT_TARGET)
    }

    /// The window after a cut of `cwnd` at `now`: cwnd - alpha cwnd / 2,
    /// alpha raised by the classic-ECN fallback if `fallback`; at least
    /// `MIN_CWND`.
    pub fn cut(&mut self, now: SimTime, cwnd: f64, fallback: bool) -> f64 {
        self.cwr_stamp = Some(now);
        let alpha = if fallback {
            self.det.cut_alpha(self.alpha)
        } else {
            self.alpha
        };
        (cwnd - alpha * cwnd / 2.0).max(MIN_CWND)
    }
}

/// The additive increase per round (`prague_ai_ack_increase` with
/// `RTT_CONTROL_RATE`): 1 segment for the first `RTT_TRANSITION` rounds,
/// without an RTT, or at an SRTT of `RTT_TARGET` or more; (srtt /
/// RTT_TARGET)^2 below it.
pub fn ai_increase(round: u32, srtt: SimTime) -> f64 {
    if round < RTT_TRANSITION || srtt == SimTime::ZERO || srtt >= RTT_TARGET {
        return 1.0;
    }
    let x = srtt.0 as f64 / RTT_TARGET.0 as f64;
    x * x
}

/// The window after an ACK that delivered `n` segments not CE-marked:
/// slow start by them up to `ssthresh`, the rest (and all of them in
/// congestion avoidance) by n ai / cwnd (`prague_update_cwnd`).
pub fn grow(cwnd: f64, ssthresh: f64, n: u64, ai: f64) -> f64 {
    let mut n = n as f64;
    let mut w = cwnd;
    if w < ssthresh {
        let room = ssthresh - w;
        if n <= room {
            return w + n;
        }
        w = ssthresh;
        n -= room;
    }
    w + n * ai / w
}

/// The pacing rate, payload bytes per second (`prague_update_pacing_rate`):
/// `packet_size` x cwnd per SRTT, doubled while cwnd < ssthresh / 2.
pub fn pacing_rate(packet_size: u32, cwnd: f64, ssthresh: f64, srtt: SimTime) -> u64 {
    let ratio = if cwnd < ssthresh / 2.0 { 2.0 } else { 1.0 };
    (ratio * f64::from(packet_size) * cwnd * 1e9 / srtt.0.max(1) as f64) as u64
}

/// TCP Prague (`tcp.variant = "prague"`): the module head's rules.
impl CongestionControl for Prague {
    #[inline(always)]
    fn on_ack(f: &mut TcpFlow, now: SimTime, ack: u64, ece: bool) {
        f.prague_ack(now, ack, ece);
    }

    #[inline(always)]
    fn on_new_ack(f: &mut TcpFlow, _now: SimTime, acked: u64) {
        f.prague_grow(acked);
    }

    /// The classic-ECN detector's sample, with the switch on.
    #[inline]
    fn on_rtt(f: &mut TcpFlow, _now: SimTime, rtt: SimTime) {
        if f.cfg.tcp.prague_classic_ecn_detection() {
            f.prague_rtt(rtt);
        }
    }

    /// Prague halves on a loss as DCTCP does (the reference's
    /// `prague_enter_loss`).
    #[inline]
    fn event_ssthresh(f: &mut TcpFlow, reno: f64) -> f64 {
        <Dctcp as CongestionControl>::event_ssthresh(f, reno)
    }

    #[inline]
    fn timeout_ssthresh(f: &mut TcpFlow, reno: f64) -> f64 {
        <Dctcp as CongestionControl>::timeout_ssthresh(f, reno)
    }

    /// No PRR: the reference's `prague_cong_control` sets the window on
    /// every ACK, also in a recovery (the module head, "Loss").
    #[inline(always)]
    fn owns_window(_f: &TcpFlow) -> bool {
        true
    }

    /// One segment down toward the halved window (the reference's
    /// step-wise decrement of `snd_cwnd` toward `frac_cwnd`).
    #[inline]
    fn on_recovery_ack(f: &mut TcpFlow) {
        f.cwnd = (f.cwnd - 1.0).max(f.exit_cwnd);
    }

    /// The window stays; the pacing rate is [`pacing_rate`]'s.
    #[inline]
    fn pace(f: &mut TcpFlow, p: &mut Paced, _now: SimTime, _rs: &RateSample, _flight: Flight) {
        if let Some(s) = f.srtt() {
            p.pacer.rate = pacing_rate(u32::from(f.cfg.tcp.packet_size), f.cwnd, f.ssthresh, s);
        }
    }
}

impl TcpFlow {
    /// A Prague flow's work on an arriving ACK, before the new-ACK and
    /// duplicate-ACK rules (`ece`: echoed, the flow ECN-capable): the
    /// round's counts, the cut, then alpha at the round's end. (Cold: the
    /// other variants' ACKs never come here.)
    #[cold]
    #[inline(never)]
    pub(in crate::transport::tcp) fn prague_ack(&mut self, now: SimTime, ack: u64, ece: bool) {
        if ack < self.snd_una {
            return;
        }
        let dup = ack == self.snd_una && self.snd_max > self.snd_una;
        let (newly, snd_max) = (ack - self.snd_una, self.snd_max);
        let slow_start = self.cwnd < self.ssthresh;
        let srtt = SimTime::from_nanos(self.srtt_ns as u64);
        let fallback = self.cfg.tcp.prague_classic_ecn_detection();
        // UDP Prague's reduction state (`tcp.prague_cwr = "udp-prague"`): an
        // ECE that may not cut yet starts no reduction.
        let udp_cwr = self.cfg.tcp.prague_cwr_udp();
        let Some(State::Prague(p)) = self.cc.as_deref_mut() else {
            return;
        };
        p.count(newly, dup, ece);
        // A reduction starts when the ACK covers a segment sent after the
        // last one (Linux's CWR state), not during loss recovery; under
        // UDP Prague's rule only once the flow may cut again.
        let may_cut = p.may_cut(now, slow_start);
        if ece && !self.in_recovery && ack > self.ecn_recover && (may_cut || !udp_cwr) {
            p.det.set_shift(self.ssthresh);
            self.ecn_recover = snd_max;
            self.recover = snd_max;
            self.last_cut = Cut::Ecn;
            self.cwr_pending = true;
            if may_cut {
                self.cwnd = p.cut(now, self.cwnd, fallback);
                self.ssthresh = self.cwnd;
                self.stats.ecn_reductions += 1;
            }
        }
        if p.alpha_due(ack, now, slow_start) {
            p.end_round(now, snd_max, slow_start, srtt, fallback);
        }
    }

    /// A Prague flow's growth on a new ACK outside recovery without ECE
    /// (every segment it covers unmarked).
    pub(in crate::transport::tcp) fn prague_grow(&mut self, acked: u64) {
        if let Some(State::Prague(p)) = self.cc.as_deref() {
            self.cwnd = grow(self.cwnd, self.ssthresh, acked, p.ai);
        }
    }

    /// An RTT sample of `r` for the classic-ECN detector.
    #[cold]
    pub(in crate::transport::tcp) fn prague_rtt(&mut self, r: SimTime) {
        if let Some(State::Prague(p)) = self.cc.as_deref_mut() {
            p.det.on_rtt(r.0 as f64 / 1e3);
        }
    }

    /// Prague's state (None for other variants).
    pub fn prague(&self) -> Option<&Prague> {
        match self.cc.as_deref() {
            Some(State::Prague(p)) => Some(p),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::scenario::{TcpSpec, TcpVariant};
    use crate::transport::tcp::testing::{ack, sender};

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn prague_spec() -> TcpSpec {
        TcpSpec {
            variant: TcpVariant::Prague,
            ecn: true,
            ecn_codepoint: crate::scenario::EcnCodepoint::Ect1,
            limited_transmit: false,
            ..TcpSpec::default()
        }
    }

    /// g = 1/16, alpha starting at 1: no update before the first CE mark;
    /// then a round of 8 segments with 2 CE-marked (F = 1/4) gives
    /// 15/16 + 1/16 x 1/4 = 0.953125, an unmarked round 15/16 of that.
    #[test]
    fn alpha_waits_for_a_mark_then_averages_by_rounds() {
        let mut p = Prague::default();
        for _ in 0..8 {
            p.count(1, false, false);
        }
        p.end_round(ms(10), 8, false, ms(10), false);
        assert_eq!((p.alpha, p.next_seq, p.round), (1.0, 8, 1));
        for i in 0..8 {
            p.count(1, false, i == 3 || i == 6);
        }
        assert!(p.alpha_due(8, ms(20), false));
        p.end_round(ms(20), 16, false, ms(10), false);
        assert_eq!(p.alpha, 0.953125);
        for _ in 0..8 {
            p.count(1, false, false);
        }
        p.end_round(ms(30), 24, false, ms(10), false);
        assert_eq!(p.alpha, 0.953125 * 15.0 / 16.0);
        // A delayed ACK of two CE segments counts both; a duplicate ACK
        // one, and the cumulative ACK after it the rest.
        p.count(2, false, true);
        p.count(0, true, false);
        p.count(3, false, false);
        assert_eq!((p.acked, p.marked), (5, 2));
    }

    /// The cut: cwnd - alpha cwnd / 2, at least 2 segments. alpha = 0.5:
    /// 20 -> 15; alpha = 1 (the start): 20 -> 10, 3 -> 2. With the
    /// fallback a score of 8.5 floors alpha at 0.625 x 0.5 = 0.3125 (20 ->
    /// 16.875), a score of 12 at 0.625 (20 -> 13.75), one of 7 not at all.
    #[test]
    fn the_cut_and_the_classic_fallback() {
        let mut p = Prague {
            alpha: 0.5,
            ..Prague::default()
        };
        assert_eq!(p.cut(ms(1), 20.0, false), 15.0);
        assert_eq!(p.cwr_stamp, Some(ms(1)));
        assert_eq!(Prague::default().cut(ms(1), 20.0, false), 10.0);
        assert_eq!(Prague::default().cut(ms(1), 3.0, false), 2.0);
        p.alpha = 0.1;
        p.det.score = 8.5;
        assert_eq!(p.cut(ms(1), 20.0, true), 16.875);
        assert_eq!(p.cut(ms(1), 20.0, false), 19.0);
        p.det.score = 12.0;
        assert_eq!(p.cut(ms(1), 20.0, true), 13.75);
        p.det.score = 7.0;
        assert_eq!(p.cut(ms(1), 20.0, true), 19.0);
    }

    /// Slow start by the segments (10 + 2 = 12; from 19 with ssthresh 20
    /// and 3 segments: 20, then 2 x 1 / 20 = 20.1); the additive increase
    /// by n ai / cwnd: 20 + 1/20 = 20.05, and with ai = 0.16 two segments
    /// add 0.32 / 20 = 0.016.
    #[test]
    fn fractional_additive_increase() {
        assert_eq!(grow(10.0, 20.0, 2, 1.0), 12.0);
        assert!((grow(19.0, 20.0, 3, 1.0) - 20.1).abs() < 1e-12);
        assert_eq!(grow(20.0, 20.0, 1, 1.0), 20.05);
        assert!((grow(20.0, 10.0, 2, 0.16) - 20.016).abs() < 1e-12);
        assert_eq!(grow(20.0, 10.0, 0, 1.0), 20.0);
    }

    /// RTT_CONTROL_RATE with a 25 ms target: (srtt / 25 ms)^2 after 500
    /// rounds: 10 ms -> 0.16, 5 ms -> 0.04; 25 ms and more, no RTT, or
    /// before the transition: 1. So a 10 ms flow's rate grows by 0.16 /
    /// 10 ms per 10 ms = 1600 segments/s^2, as a 25 ms flow's 1 / 25 ms
    /// per 25 ms.
    #[test]
    fn rtt_scaling_of_the_increase() {
        assert_eq!(ai_increase(499, ms(10)), 1.0);
        assert!((ai_increase(500, ms(10)) - 0.16).abs() < 1e-15);
        assert!((ai_increase(500, ms(5)) - 0.04).abs() < 1e-15);
        assert_eq!(ai_increase(500, ms(25)), 1.0);
        assert_eq!(ai_increase(500, ms(100)), 1.0);
        assert_eq!(ai_increase(500, SimTime::ZERO), 1.0);
        let rate_growth = |rtt_s: f64, ai: f64| ai / rtt_s / rtt_s;
        assert!((rate_growth(0.010, 0.16) - rate_growth(0.025, 1.0)).abs() < 1e-9);
        // Once RTT-independent, alpha and the cut at most once per 25 ms.
        let p = Prague {
            round: 500,
            alpha_stamp: ms(100),
            cwr_stamp: Some(ms(100)),
            ..Prague::default()
        };
        assert!(!p.alpha_due(0, ms(124), false));
        assert!(p.alpha_due(0, ms(125), false));
        assert!(p.alpha_due(0, ms(101), true), "not in slow start");
        assert!(!p.may_cut(ms(124), false));
        assert!(p.may_cut(ms(125), false));
        assert!(Prague::default().may_cut(ms(0), false));
        // The round counts only outside slow start; its end sets ai.
        let mut p = Prague {
            round: 499,
            ..Prague::default()
        };
        p.end_round(ms(1), 10, true, ms(10), false);
        assert_eq!((p.round, p.ai), (499, 1.0));
        p.end_round(ms(2), 20, false, ms(10), false);
        assert_eq!(p.round, 500);
        assert!((p.ai - 0.16).abs() < 1e-15);
    }

    /// `prague_rtt_scaling = "none"` (RTT_CONTROL_NONE): after 500 rounds
    /// at 10 ms the increase stays one segment a round, alpha is due at
    /// every round's end and every reduction may cut, however soon.
    #[test]
    fn without_rtt_scaling_a_short_flow_stays_rtt_dependent() {
        let mut p = Prague {
            round: 599,
            rtt_scaling: false,
            alpha_stamp: ms(100),
            cwr_stamp: Some(ms(100)),
            ..Prague::default()
        };
        assert!(!p.rtt_indep(false));
        assert!(p.alpha_due(0, ms(101), false));
        assert!(p.may_cut(ms(101), false));
        p.end_round(ms(110), 20, false, ms(10), false);
        assert_eq!((p.round, p.ai), (600, 1.0));
    }

    /// The detector: gains from ssthresh (100 -> 6 + 3 + 1 = 10; 1000 ->
    /// 9 + 4 + 1 = 14; none yet -> 18); a sample 1024 us above a 10 ms
    /// SRTT moves it by 1 us and the deviation from 1 by 1023 / 2048. A
    /// 20 ms queue over a 10 ms path with 3 ms of deviation adds 1/2
    /// log2(3000 / 750) + 1/2 log2(20 / 2) = 1 + 1.660964 per round.
    #[test]
    fn classic_ecn_detector_by_hand() {
        let mut d = Detector::default();
        assert_eq!(d.shift, 18);
        d.set_shift(100.0);
        assert_eq!(d.shift, 10);
        d.set_shift(1000.0);
        assert_eq!(d.shift, 14);
        d.set_shift(f64::INFINITY);
        assert_eq!(d.shift, 18);
        d.set_shift(100.0);
        d.on_rtt(10_000.0);
        d.on_rtt(11_024.0);
        assert_eq!(d.srtt_us, 10_001.0);
        assert_eq!(d.mdev_us, 1.0 + 1023.0 / 2048.0);
        // Shallow and steady: the score stays at 0.
        d.per_round();
        assert_eq!(d.score, 0.0);
        let mut d = Detector {
            srtt_us: 30_000.0,
            mdev_us: 3000.0,
            min_rtt_us: 10_000.0,
            ..Detector::default()
        };
        d.per_round();
        let step = 1.0 + 0.5 * 10f64.log2();
        assert!((d.score - step).abs() < 1e-12);
        for _ in 0..10 {
            d.per_round();
        }
        assert_eq!(d.score, C_STICKY);
        assert!((d.cut_alpha(0.05) - 0.625).abs() < 1e-15);
    }

    /// 1500-byte packets, cwnd 10, SRTT 100 ms: 2 x 1500 x 10 / 0.1 s =
    /// 300 000 B/s in slow start (cwnd < ssthresh / 2), 150 000 B/s after.
    #[test]
    fn pacing_ratios() {
        assert_eq!(pacing_rate(1500, 10.0, f64::INFINITY, ms(100)), 300_000);
        assert_eq!(pacing_rate(1500, 10.0, 20.0, ms(100)), 150_000);
        assert_eq!(pacing_rate(1500, 10.5, 20.0, ms(100)), 157_500);
    }

    /// A Prague sender with 20 segments in flight: the first ECE cuts by
    /// alpha = 1 to 10 and sets ssthresh; later ECEs of that window do not
    /// cut, unmarked ACKs still grow the window (+1/10 each); the first
    /// ACK beyond it may cut again. Every data segment is ECT(1).
    #[test]
    fn one_cut_per_round_and_growth_meanwhile() {
        let (mut tx, first) = sender(20.0, prague_spec());
        assert!(first.iter().all(|s| s.ecn == Ecn::Ect1));
        ack(&mut tx, 100, 1, true);
        assert_eq!((tx.cwnd, tx.ssthresh), (10.0, 10.0));
        assert_eq!(tx.stats.ecn_reductions, 1);
        ack(&mut tx, 101, 2, true);
        assert_eq!(tx.cwnd, 10.0);
        ack(&mut tx, 102, 3, false);
        assert!((tx.cwnd - 10.1).abs() < 1e-12);
        assert_eq!(tx.stats.ecn_reductions, 1);
        for a in 4..=21 {
            ack(&mut tx, 100 + a, a, false);
        }
        let w = tx.cwnd;
        ack(&mut tx, 200, 22, true);
        assert_eq!(tx.stats.ecn_reductions, 2);
        let alpha = tx.prague().unwrap().alpha();
        assert!((tx.cwnd - (w - alpha * w / 2.0)).abs() < 1e-12);
    }

    /// An RTT-independent flow cuts at 100 ms; its round ends within
    /// 25 ms of the cut, and an ECE at 115 ms may not cut. Linux's module
    /// (`prague_cwr = "linux"`): that ECE starts a reduction all the same,
    /// so the ECE at 130 ms, within it, does not cut either. UDP Prague's
    /// rule: the ECE at 115 ms starts nothing, and the one at 130 ms, past
    /// a round trip and 25 ms, cuts.
    #[test]
    fn an_ece_within_25_ms_of_a_cut_under_each_reduction_rule() {
        for udp in [false, true] {
            let mut t = prague_spec();
            t.set_prague_cwr_udp(udp);
            let (mut tx, _) = sender(20.0, t);
            if let Some(State::Prague(p)) = tx.cc.as_deref_mut() {
                p.round = RTT_TRANSITION;
            }
            ack(&mut tx, 100, 1, true);
            assert_eq!(tx.stats.ecn_reductions, 1);
            assert_eq!(tx.ecn_recover, 20);
            for a in 2..=21 {
                ack(&mut tx, 100 + a / 2, a, false);
            }
            let before = tx.ecn_recover;
            ack(&mut tx, 115, 22, true);
            assert_eq!(tx.stats.ecn_reductions, 1, "udp {udp}");
            assert_eq!(tx.ecn_recover > before, !udp, "udp {udp}");
            let w = tx.cwnd;
            ack(&mut tx, 130, 23, true);
            if udp {
                assert_eq!(tx.stats.ecn_reductions, 2);
                assert!(tx.cwnd < w);
            } else {
                assert_eq!((tx.stats.ecn_reductions, tx.cwnd), (1, w));
            }
        }
    }

    /// A loss halves the window as Reno's (the reference's
    /// `prague_enter_loss`): 20 -> ssthresh 10.
    #[test]
    fn a_loss_halves() {
        let (mut tx, _) = sender(20.0, prague_spec());
        for _ in 0..3 {
            ack(&mut tx, 100, 0, false);
        }
        assert!(tx.in_recovery);
        assert_eq!(tx.ssthresh, 10.0);
    }
}
