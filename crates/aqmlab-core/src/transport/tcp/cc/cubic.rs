//! CUBIC (RFC 9438): after a congestion event the window follows a cubic
//! function of the time since the event,
//!
//! ```text
//! W_cubic(t) = C (t - K)^3 + W_max,     K = cbrt((W_max - cwnd_epoch) / C)
//! ```
//!
//! concave up to the window at the last event (`W_max`, reached after `K`
//! seconds) and convex beyond it, independent of the round-trip time; a
//! congestion event multiplies the window by `beta` (0.7, not Reno's 0.5).
//! Where Reno would be faster (short round trips, small windows) CUBIC
//! follows an estimate of Reno's window instead (the Reno-friendly region,
//! `W_est`). Parameters, in segments and seconds:
//!
//! - `C = 0.4` segments/s^3 (section 5.1), `beta = 0.7` (section 4.6);
//! - fast convergence (section 4.7): a flow whose window at an event is
//!   below the previous `W_max` gives up bandwidth, `W_max = cwnd (1 +
//!   beta) / 2`;
//! - the Reno-friendly region (section 4.3): `W_est` grows by `alpha =
//!   3 (1 - beta) / (1 + beta)` segments per window of ACKed segments,
//!   and by 1 once it has reached the window of the last event.
//!
//! Slow start is Reno's (RFC 5681), or with `tcp.hystart` HyStart++'s (RFC
//! 9406, `hystart.rs`), Linux's classic HyStart (`hystart_linux.rs`) with
//! `tcp.cubic = "linux"`. Units: the
//! window in segments (f64), times as [`SimTime`], the RTT in seconds.
//!
//! With `tcp.cubic = "linux"` the window grows as Linux's `tcp_cubic`
//! (`bictcp_update`, `cubictcp_acked`, `bictcp_reset`; the same in 6.12
//! and in a 2025 mainline tree) grows it where that departs from the RFC:
//!
//! - each ACK adds `acked / cnt` with Linux's integers: `w` the window's
//!   whole segments (`snd_cwnd`), the target `W_max -+ floor(C' |t +
//!   delay_min - K|^3)` in whole segments (C' = 410 / 1024, Linux's
//!   `cube_rtt_scale`; K from the same C'), so the concave region's target
//!   rounds *up* to the last event's window and a small window sets out to
//!   regain it in a round trip; `cnt = floor(w / (target - w))`, or `100 w`
//!   when the target is not above the window. The target is one *minimum*
//!   RTT ahead (`delay_min`, the least RTT sample, none taken within 1 s of
//!   a stage's start; 0 until the first);
//! - until the first congestion event, and again after a timeout (Linux's
//!   `last_max_cwnd = 0`), `cnt` is at most 20: the window grows by at
//!   least 5 % per round trip, also from the plateau a HyStart exit leaves;
//! - Reno's estimate `tcp_cwnd` (whole segments, from `w` at the stage's
//!   start) gains one segment per `(15 w) >> 3` segments acknowledged
//!   (`beta_scale` = 15 in integers: alpha about 8 / 15) throughout, RFC
//!   8312's rule (no switch to 1 at `cwnd_prior`), and where it is above the
//!   window `cnt` is at most `floor(w / (tcp_cwnd - w))`: the window
//!   approaches it over a round trip rather than taking it at once;
//! - at most one segment per two acknowledged (`cnt >= 2`), as the RFC's
//!   1.5 cwnd;
//! - a timeout forgets the last event's window, the minimum RTT and the
//!   stage (`bictcp_reset` on entering the Loss state): no fast convergence
//!   at the next event.
//!
//! The window counts whole segments, as `snd_cwnd` does, with Linux's
//! count of segments acknowledged toward the next (`snd_cwnd_cnt`,
//! `tcp_cong_avoid_ai`: one more segment per `cnt`; credits gathered while
//! `cnt` was large are spent at once when it falls, as when Reno's
//! estimate steps ahead of the window; cleared at a cut and a timeout).
//! `cnt` is kept between ACKs as Linux keeps it: worked out again only
//! when the window has changed or 1/32 s has passed since it last was, the
//! cubic function at most once a millisecond (both on Linux's microsecond
//! clock, `tcp_mstamp`, since 6.11); while it is held the ACKs count toward
//! Reno's estimate, which is looked at again with `cnt`.

use super::{hystart, hystart_linux, CongestionControl, State};
use crate::transport::tcp::TcpFlow;
use crate::units::SimTime;

/// `C` (RFC 9438 section 5.1), segments per second cubed.
pub const C: f64 = 0.4;
/// `beta_cubic` (RFC 9438 section 4.6): the window after an event, as a
/// share of the window before it.
pub const BETA: f64 = 0.7;
/// Linux's `beta` over its scale (`BICTCP_BETA_SCALE`): 717 / 1024 =
/// 0.7002, the cut's factor in whole segments (`on_congestion`).
const LINUX_BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// Linux's Reno-friendly step (`beta_scale` = 8 (1024 + 717) / 3 / (1024
/// - 717) = 15 in integers): one segment per `(w x 15) >> 3` acknowledged.
const LINUX_BETA_SCALE: u64 = 15;
/// Linux's `C` in its fixed point: `cube_rtt_scale` = `bic_scale` (41) x 10
/// = 410 per 2^10 segments/s^3.
const LINUX_C: f64 = 410.0 / 1024.0;
/// Linux's largest `cnt` before the first event (`bictcp_update`: "increase
/// cwnd 5% per RTT").
const LINUX_FIRST_CNT: u64 = 20;
/// Linux discards RTT samples this soon after a stage began
/// (`cubictcp_acked`: within `HZ` of `epoch_start`).
const LINUX_SAMPLE_HOLD: SimTime = SimTime::from_secs(1);
/// Linux keeps `cnt` while the window stands still for up to 1/32 s
/// (`bictcp_update`: `USEC_PER_SEC / 32` on `tcp_mstamp`, since 6.11; HZ / 32
/// jiffies before), microseconds.
const LINUX_HOLD_US: u64 = 1_000_000 / 32;
/// ... and works the cubic function out at most once a millisecond within
/// a stage (`USEC_PER_MSEC`; once a jiffy before 6.11), microseconds.
const LINUX_CURVE_US: u64 = 1_000;

/// One connection's CUBIC state (RFC 9438 section 4.1's variables).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cubic {
    /// `W_max`: the window just before the last reduction (less with fast
    /// convergence), segments.
    w_max: f64,
    /// `cwnd_prior`: the window when ssthresh was last set, segments.
    cwnd_prior: f64,
    /// `K`, seconds.
    k: f64,
    /// `t_epoch`: when the current congestion avoidance stage began (None:
    /// not begun since the last event or since start).
    epoch: Option<SimTime>,
    /// `W_est`: Reno's window as it would be, segments.
    w_est: f64,
    /// After a timeout: the first congestion avoidance stage starts with
    /// `K = 0` and `W_max` = the window then (section 4.8).
    after_timeout: bool,
    /// HyStart++ in the initial slow start (`tcp.hystart`, RFC 9406;
    /// `hystart.rs`).
    pub hystart: Option<super::hystart::HyStart>,
    /// Linux's classic HyStart in slow start (`tcp.hystart` with Linux's
    /// rules; `hystart_linux.rs`).
    pub hystart_linux: Option<super::hystart_linux::LinuxHyStart>,
    /// Linux's rules (`tcp.cubic = "linux"`, the module's doc).
    pub linux: bool,
    /// Linux: no congestion event since the start or the last timeout
    /// (`last_max_cwnd == 0`).
    no_event: bool,
    /// Linux's `delay_min`: the least RTT sample (None: none since the
    /// start or the last timeout).
    delay_min: Option<SimTime>,
    /// Linux's Reno estimate: segments acknowledged toward its next step
    /// (`ack_cnt`) and the estimate in whole segments (`tcp_cwnd`).
    ack_cnt: u64,
    tcp_cwnd: u64,
    /// Linux's `snd_cwnd_cnt`: segments acknowledged toward the window's
    /// next segment (cleared at a cut and a timeout).
    cwnd_cnt: u64,
    /// Linux's `cnt` as last worked out (segments acknowledged per segment
    /// of growth), the window then (`last_cwnd`) and when, microseconds
    /// (`last_time`; None: not since the start or the last timeout).
    cnt: u64,
    last_cwnd: u64,
    last_time_us: Option<u64>,
}

impl Default for Cubic {
    fn default() -> Self {
        Cubic {
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch: None,
            w_est: 0.0,
            after_timeout: false,
            hystart: None,
            hystart_linux: None,
            linux: false,
            no_event: true,
            delay_min: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            cwnd_cnt: 0,
            cnt: 0,
            last_cwnd: 0,
            last_time_us: None,
        }
    }
}

impl Cubic {
    /// `W_cubic(t)`, `t` seconds into the stage (RFC 9438 eq. 1).
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// A new ACK of `acked` segments in congestion avoidance, at `now`
    /// with the smoothed RTT `rtt_s`: the new window (sections 4.2-4.5).
    pub fn congestion_avoidance(&mut self, cwnd: f64, acked: u64, now: SimTime, rtt_s: f64) -> f64 {
        if self.linux {
            return self.linux_avoidance(cwnd, acked, now);
        }
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // The stage begins (section 4.2): t_epoch, cwnd_epoch.
                self.begin_stage(now, cwnd, C);
                self.w_est = cwnd;
                now
            }
        };
        let acked = acked as f64;
        let t = now.saturating_sub(epoch).as_secs_f64();
        // Section 4.3: Reno's window, grown by alpha per window of ACKs.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * acked / cwnd;
        let w = self.w_cubic(t);
        if w < self.w_est {
            return self.w_est.max(cwnd); // the Reno-friendly region
        }
        // Sections 4.4 and 4.5: towards W_cubic one RTT ahead, at most
        // half the window more per RTT.
        let target = self.w_cubic(t + rtt_s).clamp(cwnd, 1.5 * cwnd);
        cwnd + (target - cwnd) / cwnd * acked
    }

    /// A congestion avoidance stage begins at `now` with the window `w`
    /// (section 4.2; `bictcp_update`'s `epoch_start`): after a timeout, or
    /// above the last event's window (no event yet), the plateau is here
    /// (section 4.8); else `K` takes the curve from `w` to `W_max` with
    /// the constant `c`.
    fn begin_stage(&mut self, now: SimTime, w: f64, c: f64) {
        self.epoch = Some(now);
        if self.after_timeout || self.w_max <= w {
            self.w_max = w;
            self.k = 0.0;
        } else {
            self.k = ((self.w_max - w) / c).cbrt();
        }
        self.after_timeout = false;
    }

    /// Linux's growth (`bictcp_update` and `tcp_cong_avoid_ai`): `acked /
    /// cnt` with `cnt` the cubic function's in whole segments, at most 20
    /// before the first event, at most Reno's estimate's, at least 2. `cnt`
    /// is kept between ACKs and worked out again only when the window has
    /// changed since it last was or [`LINUX_HOLD_US`] has passed; the cubic
    /// function at most once per [`LINUX_CURVE_US`] within a stage (Reno's
    /// estimate may still lower the kept `cnt` then).
    fn linux_avoidance(&mut self, cwnd: f64, acked: u64, now: SimTime) -> f64 {
        let w = cwnd.max(1.0) as u64;
        self.ack_cnt += acked;
        // Linux's clock here: `tcp_mstamp`, whole microseconds.
        let now_us = now.as_nanos() / 1_000;
        let since = self.last_time_us.map(|t| now_us.saturating_sub(t));
        let held = self.last_cwnd == w && since.is_some_and(|d| d <= LINUX_HOLD_US);
        if !held {
            let curve_due = self.epoch.is_none() || since.is_none_or(|d| d >= LINUX_CURVE_US);
            if curve_due {
                self.last_cwnd = w;
                self.last_time_us = Some(now_us);
                self.cnt = self.linux_curve_cnt(w, acked, now);
            }
            self.linux_reno_cap(w);
        }
        self.linux_grow(w, acked)
    }

    /// `bictcp_update`'s cubic function: `cnt` toward the target one
    /// minimum RTT ahead, in whole segments (the stage begins here when it
    /// has not).
    fn linux_curve_cnt(&mut self, w: u64, acked: u64, now: SimTime) -> u64 {
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // The stage begins, in whole segments with Linux's C;
                // Reno's estimate from here.
                self.begin_stage(now, w as f64, LINUX_C);
                self.ack_cnt = acked;
                self.tcp_cwnd = w;
                now
            }
        };
        let ahead = self.delay_min.map_or(0.0, SimTime::as_secs_f64);
        let t = now.saturating_sub(epoch).as_secs_f64() + ahead;
        // Whole segments, as `bictcp_update`'s integer delta. The value is
        // >= 0; below 2^52 a cast truncates as floor() does, without a call
        // to libm's floor on every ACK (above, every f64 is whole).
        let x = LINUX_C * (t - self.k).abs().powi(3);
        let delta = if x < 4.5e15 {
            x as i64 as f64
        } else {
            x.floor()
        };
        let target = if t < self.k {
            (self.w_max - delta).max(0.0)
        } else {
            self.w_max + delta
        };
        let wf = w as f64;
        let cnt = if target > wf {
            (wf / (target - wf)) as u64
        } else {
            100 * w
        };
        if self.no_event {
            cnt.min(LINUX_FIRST_CNT)
        } else {
            cnt
        }
    }

    /// `bictcp_update`'s Reno-friendly part: Reno's estimate steps one
    /// segment per `(w x 15) >> 3` acknowledged, and where it is above the
    /// window the kept `cnt` is at most `w / (tcp_cwnd - w)`; at least 2.
    fn linux_reno_cap(&mut self, w: u64) {
        let step = (w * LINUX_BETA_SCALE) >> 3;
        while self.ack_cnt > step {
            self.ack_cnt -= step;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > w {
            self.cnt = self.cnt.min(w / (self.tcp_cwnd - w));
        }
        self.cnt = self.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai`: segments acknowledged toward the next one, one
    /// more segment per `cnt`, credits gathered under a larger `cnt` spent
    /// first.
    fn linux_grow(&mut self, w: u64, acked: u64) -> f64 {
        // At least 2: `linux_reno_cap` ran when `cnt` was last worked out,
        // and a held `cnt` is one of those.
        let cnt = self.cnt;
        debug_assert!(cnt >= 2, "cnt {cnt}");
        let mut grown = w;
        if self.cwnd_cnt >= cnt {
            self.cwnd_cnt = 0;
            grown += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= cnt {
            let more = self.cwnd_cnt / cnt;
            self.cwnd_cnt -= more * cnt;
            grown += more;
        }
        grown as f64
    }

    /// An RTT sample at `now` (Linux's rules: `cubictcp_acked` keeps the
    /// least as `delay_min`, none within 1 s of a stage's start, when
    /// HyStart does not see it either): whether it counted.
    pub fn on_rtt(&mut self, now: SimTime, rtt: SimTime) -> bool {
        if self
            .epoch
            .is_some_and(|e| now.saturating_sub(e) < LINUX_SAMPLE_HOLD)
        {
            return false;
        }
        self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
        true
    }

    /// Linux's `delay_min` (None: no sample since the start or the last
    /// timeout).
    pub fn delay_min(&self) -> Option<SimTime> {
        self.delay_min
    }

    /// A congestion event (a loss detected by duplicate ACKs, or an
    /// ECN-Echo) that found the window `cwnd`: the new ssthresh (section
    /// 4.6, with fast convergence, section 4.7). The window after it is
    /// ssthresh; the next congestion avoidance stage starts afresh.
    ///
    /// The window counts whole segments here, as Linux's `snd_cwnd` does
    /// (`cubictcp_recalc_ssthresh`: ssthresh `max(cwnd x 717 / 1024, 2)`,
    /// `W_max` `cwnd x (1024 + 717) / 2048` with fast convergence, integer
    /// arithmetic; ns-3's `TcpCubic` counts whole segments too): the share
    /// of a segment grown since the window last reached a whole number is
    /// not carried through the cut (5.7 segments cut to 3, not 3.99).
    pub fn on_congestion(&mut self, cwnd: f64) -> f64 {
        let w = cwnd.max(0.0) as u64;
        self.w_max = if (w as f64) < self.w_max {
            (w * (BETA_SCALE + LINUX_BETA) / (2 * BETA_SCALE)) as f64
        } else {
            w as f64
        };
        self.cwnd_prior = w as f64;
        self.epoch = None;
        self.no_event = false;
        self.cwnd_cnt = 0;
        ((w * LINUX_BETA / BETA_SCALE) as f64).max(2.0)
    }

    /// A retransmission timeout that found the window `cwnd`: ssthresh as
    /// for an event, then slow start from one segment; the next stage
    /// starts with `K = 0` (section 4.8).
    pub fn on_timeout(&mut self, cwnd: f64) -> f64 {
        let ssthresh = self.on_congestion(cwnd);
        self.restart_after_timeout();
        ssthresh
    }

    /// A timeout whose window was already cut (in fast recovery): only the
    /// next stage's start changes (`K = 0`, section 4.8).
    pub fn restart_after_timeout(&mut self) {
        self.epoch = None;
        self.after_timeout = true;
    }

    /// Linux's rules, at every timeout after its cut (`cubictcp_state` on
    /// entering Loss: `bictcp_reset`, `bictcp_hystart_reset`): the last
    /// event's window, the minimum RTT, the stage and the first-event
    /// state are forgotten, and classic HyStart starts a round at `now`
    /// that ends when `sent` (the next new segment) is acknowledged.
    pub fn on_loss_state(&mut self, now: SimTime, sent: u64) {
        self.epoch = None;
        self.cwnd_cnt = 0;
        self.cnt = 0;
        self.last_cwnd = 0;
        self.last_time_us = None;
        self.w_max = 0.0;
        self.no_event = true;
        self.delay_min = None;
        if let Some(h) = self.hystart_linux.as_mut() {
            h.reset(now, sent);
        }
    }

    /// The flow sends again at `now` after `idle` with nothing in flight
    /// (application limited): the stage's start moves on by the idle
    /// time, no later than `now`, so that the curve resumes where it
    /// stood (RFC 9438 section 5.8: t leaves out the time the flow was
    /// application limited; Linux's `cubictcp_cwnd_event` on
    /// `CA_EVENT_TX_START`).
    pub fn after_idle(&mut self, now: SimTime, idle: SimTime) {
        if let Some(e) = self.epoch {
            self.epoch = Some((e + idle).min(now));
        }
    }
}

/// CUBIC (`tcp.variant = "cubic"`): Reno's slow start and RFC 9438's
/// congestion avoidance; its cuts from the window before the event.
impl CongestionControl for Cubic {
    /// RFC 9438 section 4.8: after a timeout in fast recovery CUBIC keeps
    /// the loss's cut but starts its curve afresh
    /// ([`CongestionControl::timeout_ssthresh`] below).
    const KEEPS_RECOVERY_CUT: bool = false;

    /// After Reno's slow start (with byte counting or HyStart:
    /// [`TcpFlow::counted_growth`]), RFC 9438's window for the `acked`
    /// segments this ACK covers, counted or not.
    #[inline(always)]
    fn avoidance(f: &mut TcpFlow, now: SimTime, acked: u64, _counted: bool) {
        f.cubic_avoidance(now, acked);
    }

    /// RFC 9438 section 4.6: from the window before the event.
    #[inline]
    fn event_ssthresh(f: &mut TcpFlow, reno: f64) -> f64 {
        let w = f.uninflated();
        match f.cc.as_deref_mut() {
            Some(State::Cubic(c)) => c.on_congestion(w),
            _ => reno,
        }
    }

    /// RFC 9438 section 4.8: beta, and K = 0 in the next stage. A timeout
    /// in fast recovery keeps the cut the loss made (as Linux's
    /// tcp_enter_loss does in Recovery).
    #[inline]
    fn timeout_ssthresh(f: &mut TcpFlow, reno: f64) -> f64 {
        let (w, again) = (f.uninflated(), !f.in_recovery);
        let kept = f.ssthresh;
        match f.cc.as_deref_mut() {
            Some(State::Cubic(c)) if again => c.on_timeout(w),
            Some(State::Cubic(c)) => {
                c.restart_after_timeout();
                kept
            }
            _ => reno,
        }
    }
}

impl TcpFlow {
    /// HyStart++'s growth in CUBIC's initial slow start (RFC 9406 section
    /// 4.2: min(N, L), a quarter in CSS); false when it is over.
    #[cold]
    pub(in crate::transport::tcp) fn hystart_slow_start(&mut self, acked: u64) -> bool {
        let paced = self.cfg.tcp.pacing;
        match self.cc.as_deref() {
            Some(State::Cubic(Cubic {
                hystart: Some(h), ..
            })) if h.phase != hystart::Phase::Done => {
                self.cwnd += h.growth(acked, paced);
                true
            }
            _ => false,
        }
    }

    /// An ACK's RTT sample `rtt` for HyStart++ (RFC 9406 section 4.2):
    /// the round's minimum, the delay test, CSS's rounds; at their end
    /// slow start ends (ssthresh = cwnd).
    #[cold]
    pub(in crate::transport::tcp) fn hystart_rtt(&mut self, rtt: SimTime) {
        if self.ssthresh != f64::INFINITY {
            return;
        }
        let (una, nxt) = (self.snd_una, self.snd_nxt);
        if let Some(State::Cubic(Cubic {
            hystart: Some(h), ..
        })) = self.cc.as_deref_mut()
        {
            if h.on_rtt(rtt.0, una, nxt) == hystart::Verdict::EndSlowStart {
                self.ssthresh = self.cwnd;
            }
        }
    }

    /// An ACK's RTT sample with CUBIC's Linux rules: its minimum RTT, and
    /// in slow start Linux's classic HyStart, which may end it (ssthresh =
    /// cwnd).
    #[cold]
    pub(in crate::transport::tcp) fn cubic_rtt(&mut self, now: SimTime, rtt: SimTime) {
        let (cwnd, slow_start) = (self.cwnd, self.cwnd < self.ssthresh);
        let (una, nxt, srtt) = (self.snd_una, self.snd_nxt, self.srtt_s());
        let (mss, paced) = (f64::from(self.cfg.tcp.mss()), self.cfg.tcp.pacing);
        let Some(State::Cubic(c)) = self.cc.as_deref_mut() else {
            return;
        };
        if !c.on_rtt(now, rtt) || !slow_start {
            return;
        }
        let delay_min = c.delay_min().unwrap_or(rtt);
        let Some(h) = c.hystart_linux.as_mut() else {
            return;
        };
        // Linux's slow-start pacing rate, set for every socket
        // (`tcp_update_pacing_rate`), bytes per second.
        let rate_bps = if srtt > 0.0 {
            2.0 * cwnd * mss / srtt
        } else {
            0.0
        };
        let sample = hystart_linux::Sample {
            now,
            rtt,
            una,
            nxt,
            cwnd,
            delay_min,
            rate_bps,
            paced,
        };
        if h.on_ack(sample) {
            self.ssthresh = cwnd;
        }
    }

    /// A timeout under CUBIC's Linux rules, after its cut: the state is
    /// reset as on Linux's entering Loss (`cubictcp_state`).
    #[cold]
    pub(in crate::transport::tcp) fn cubic_timeout(&mut self, now: SimTime) {
        let sent = self.snd_max;
        if let Some(State::Cubic(c)) = self.cc.as_deref_mut() {
            c.on_loss_state(now, sent);
        }
    }

    /// A CUBIC flow sends again at `now` with nothing in flight
    /// ([`Cubic::after_idle`]); other variants are left as they are.
    #[cold]
    pub(in crate::transport::tcp) fn cubic_after_idle(&mut self, now: SimTime, idle: SimTime) {
        if let Some(State::Cubic(c)) = self.cc.as_deref_mut() {
            c.after_idle(now, idle);
        }
    }

    #[cold]
    pub(in crate::transport::tcp) fn cubic_avoidance(&mut self, now: SimTime, acked: u64) {
        let rtt = self.srtt_s();
        if let Some(State::Cubic(c)) = self.cc.as_deref_mut() {
            self.cwnd = c.congestion_avoidance(self.cwnd, acked, now, rtt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Linux's CUBIC reads `ca_rtt_us` (`cubictcp_acked`): the RTT of the
    /// newest segment an ACK delivers, where the RTO's estimator takes the
    /// oldest. The linux profile's sender sends its first 10 segments at
    /// 0; the ACK of 9 at 100 ms lets new segments go at 100 ms; the ACK of 11
    /// at 180 ms delivers segment 9 (sent at 0) and 10 (sent at 100 ms):
    /// CUBIC's minimum RTT is 80 ms, the estimator's sample 180 ms.
    #[test]
    fn cubic_takes_the_rtt_of_the_newest_segment_delivered() {
        use crate::packet::{flags, Ecn};
        use crate::scenario::TcpProfile;
        use crate::transport::tcp::sack::SackBlocks;
        use crate::transport::tcp::TcpConfig;

        let mut spec = TcpProfile::Linux.defaults();
        spec.set_timestamps(false);
        spec.set_tso_defer(false);
        spec.set_psh(false);
        let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec, false, false));
        let mut out = Vec::new();
        tx.start(ms(0), &mut out);
        assert_eq!(out.len(), 10);
        let wide = SackBlocks {
            wnd: 1000,
            ..SackBlocks::NONE
        };
        let delay_min = |tx: &TcpFlow| match tx.cc.as_deref() {
            Some(State::Cubic(c)) => c.delay_min(),
            _ => None,
        };
        out.clear();
        tx.on_ack_sack(ms(100), 9, flags::ACK, Ecn::NotEct, ms(0), &wide, &mut out);
        assert_eq!(delay_min(&tx), Some(ms(100)));
        assert!(out.len() >= 2 && out[0].seq == 10 && out[0].ts == ms(100));
        out.clear();
        tx.on_ack_sack(ms(180), 11, flags::ACK, Ecn::NotEct, ms(0), &wide, &mut out);
        assert_eq!(delay_min(&tx), Some(ms(80)));
        // The estimator's second sample, 180 ms: SRTT 100 + (180 - 100) / 8.
        assert_eq!(tx.srtt_ns, 110e6);
    }

    /// RFC 9438 section 5.8 / Linux's `CA_EVENT_TX_START`: a stage begun
    /// at 1 s, the flow idle 2 s until 5 s: the stage now begins at 3 s
    /// (the curve stands where it stood at 3 s, not 5 s); an idle time
    /// longer than the stage moves it to now at most; no stage, nothing
    /// to move.
    #[test]
    fn idle_time_moves_the_stage_on() {
        let mut c = Cubic {
            epoch: Some(ms(1000)),
            ..Cubic::default()
        };
        c.after_idle(ms(5000), ms(2000));
        assert_eq!(c.epoch, Some(ms(3000)));
        c.after_idle(ms(6000), ms(9000));
        assert_eq!(c.epoch, Some(ms(6000)));
        let mut c = Cubic::default();
        c.after_idle(ms(5000), ms(2000));
        assert_eq!(c.epoch, None);
    }

    #[test]
    fn an_event_cuts_by_beta_and_sets_w_max() {
        let mut c = Cubic::default();
        // First event at 100 segments: ssthresh 70, W_max 100.
        assert!((c.on_congestion(100.0) - 70.0).abs() < 1e-12);
        assert_eq!(c.w_max, 100.0);
        // K = cbrt((100 - 70) / 0.4) = cbrt(75) = 4.2172 s.
        c.congestion_avoidance(70.0, 1, ms(0), 0.1);
        assert!((c.k - 75f64.cbrt()).abs() < 1e-12);
        // Fast convergence: the next event at 80 < 100 gives W_max 80 x 0.85 = 68.
        let s = c.on_congestion(80.0);
        assert!((s - 56.0).abs() < 1e-12);
        assert!((c.w_max - 68.0).abs() < 1e-12);
        // A small window still keeps ssthresh at two segments.
        assert_eq!(Cubic::default().on_congestion(2.0), 2.0);
    }

    #[test]
    fn the_cut_counts_whole_segments_as_linux() {
        // 5.7 segments: the window counts 5, 5 x 717 / 1024 = 3.50 -> 3,
        // W_max 5 (3.99 and 5.7 with fractional segments).
        let mut c = Cubic::default();
        assert_eq!(c.on_congestion(5.7), 3.0);
        assert_eq!((c.w_max, c.cwnd_prior), (5.0, 5.0));
        // 70 x 717 / 1024 = 49.01 -> 49 (70 x 0.7 in floating point is
        // 48.999...); fast convergence at 60.9 < 70: 60 x 1741 / 2048 =
        // 51.00 -> 51, ssthresh 60 x 717 / 1024 = 42.01 -> 42.
        assert_eq!(c.on_congestion(70.0), 49.0);
        assert_eq!(c.on_congestion(60.9), 42.0);
        assert_eq!(c.w_max, 51.0);
    }

    #[test]
    fn the_window_follows_the_cubic_function() {
        // After an event at W_max = 200 with a 100 ms RTT, ACKs one segment at a
        // time: the window stays within one segment of W_cubic(t) (the
        // Reno-friendly estimate grows by 0.53 segment per RTT, far slower).
        let mut c = Cubic::default();
        let mut cwnd = c.on_congestion(200.0);
        let (rtt, mut now) = (0.1, SimTime::ZERO);
        c.congestion_avoidance(cwnd, 0, now, rtt);
        let mut worst: f64 = 0.0;
        while now < SimTime::from_secs(10) {
            // One window of ACKs per RTT, spread evenly.
            let gap = SimTime::from_secs_f64(rtt / cwnd.floor());
            now += gap;
            cwnd = c.congestion_avoidance(cwnd, 1, now, rtt);
            worst = worst.max((cwnd - c.w_cubic(now.as_secs_f64())).abs());
        }
        assert!(worst < 1.0, "{worst}");
        // Past K = cbrt(60 / 0.4) = 5.31 s the window is above W_max.
        assert!(cwnd > 200.0);
    }

    #[test]
    fn short_round_trips_follow_renos_estimate() {
        // With a 1 ms RTT W_est grows by 0.53 segment per window of ACKs,
        // faster in time than the cubic curve: the window is W_est.
        let mut c = Cubic::default();
        let mut cwnd = c.on_congestion(100.0);
        let mut now = SimTime::ZERO;
        c.congestion_avoidance(cwnd, 0, now, 0.001);
        for _ in 0..10_000 {
            now += SimTime::from_micros(10);
            cwnd = c.congestion_avoidance(cwnd, 1, now, 0.001);
        }
        // 10 000 ACKs (0.1 s) over windows of 70-120 segments: ~100 windows x
        // 0.53 = ~50 segments of growth, while W_cubic(0.1 s) = 0.4 (0.1 -
        // cbrt(75))^3 + 100 = 72.1.
        assert!((c.w_cubic(0.1) - 72.1).abs() < 0.05);
        assert!(cwnd > 120.0, "{cwnd}");
    }

    /// A CUBIC flow (the TCP sender, not the state alone): the third
    /// duplicate ACK finds 20 segments in flight and leaves ssthresh 14
    /// (20 x 0.7, where NewReno leaves 10); the recovery's end returns
    /// to 14; ECN-Echo cuts by the same beta; a timeout too, to one
    /// segment.
    #[test]
    fn a_cubic_flow_cuts_by_beta_on_loss_ecn_and_timeout() {
        use crate::scenario::{RecoveryExit, TcpSpec, TcpVariant};
        use crate::transport::tcp::testing::{ack, sender};
        let spec = |variant| TcpSpec {
            variant,
            ecn: true,
            limited_transmit: false,
            // Recovery returns to ssthresh (not FlightSize + 1).
            recovery_exit: RecoveryExit::Ssthresh,
            ..TcpSpec::default()
        };
        for (variant, want) in [(TcpVariant::Cubic, 14.0), (TcpVariant::NewReno, 10.0)] {
            let (mut tx, _) = sender(20.0, spec(variant));
            for _ in 0..3 {
                ack(&mut tx, 100, 0, false);
            }
            assert!(tx.in_recovery);
            assert!(
                (tx.ssthresh - want).abs() < 1e-9,
                "{variant:?}: {}",
                tx.ssthresh
            );
            ack(&mut tx, 200, 20, false);
            assert!(!tx.in_recovery);
            assert!((tx.cwnd - want).abs() < 1e-9, "{variant:?}: {}", tx.cwnd);
        }
        let (mut tx, _) = sender(20.0, spec(TcpVariant::Cubic));
        ack(&mut tx, 100, 1, true);
        assert!((tx.ssthresh - 14.0).abs() < 1e-9, "{}", tx.ssthresh);
        assert_eq!(tx.cwnd, tx.ssthresh);
        let (mut tx, _) = sender(20.0, spec(TcpVariant::Cubic));
        let mut out = Vec::new();
        tx.on_rto(SimTime::from_millis(300), &mut out);
        assert!((tx.ssthresh - 14.0).abs() < 1e-9, "{}", tx.ssthresh);
        assert_eq!(tx.cwnd, 1.0);
    }

    fn linux() -> Cubic {
        Cubic {
            linux: true,
            ..Cubic::default()
        }
    }

    #[test]
    fn linux_grows_five_percent_a_round_before_the_first_event() {
        // A stage from 100 segments with no event yet (a HyStart exit):
        // the plateau is here, the target (100) is not above the window, so
        // cnt = 100 x 100, capped at 20: one segment more per 20
        // acknowledged, 5 in a window of 100 ACKs of one segment. The RFC's
        // rules add only Reno's estimate's growth, 1 segment per window
        // (alpha is 1 before any event).
        let (mut c, mut r) = (linux(), Cubic::default());
        let (mut w, mut v) = (100.0, 100.0);
        for i in 0..100 {
            w = c.congestion_avoidance(w, 1, ms(i), 0.1);
            v = r.congestion_avoidance(v, 1, ms(i), 0.1);
        }
        assert_eq!(w, 105.0);
        assert!(v > 100.9 && v < 101.0, "{v}");
        // After an event the cap is gone: from the plateau at 100, cnt =
        // 100 x 100 and Reno's estimate has not stepped (100 < 187).
        let mut c = linux();
        c.on_congestion(100.0);
        let mut w = 100.0;
        for i in 0..100 {
            w = c.congestion_avoidance(w, 1, ms(i), 0.1);
        }
        assert_eq!(w, 100.0);
    }

    #[test]
    fn linux_keeps_renos_alpha_at_eight_fifteenths() {
        // An event at 100 (cwnd_prior 100), the stage from 100 (K = 0), the
        // window held at 100 while 11 ACKs of 187 segments arrive (2057 in
        // all). Linux's estimate gains one segment per (100 x 15) >> 3 = 187
        // acknowledged beyond the first 187: 110. RFC 9438's has reached
        // cwnd_prior, grows with alpha = 1: 100 + 2057 / 100 = 120.57.
        // The ACKs come 40 ms apart: Linux looks at its estimate again only
        // when the window has changed or 1/32 s has passed.
        let mut c = linux();
        c.on_congestion(100.0);
        c.congestion_avoidance(100.0, 0, ms(0), 0.1);
        for i in 1..=11 {
            c.congestion_avoidance(100.0, 187, ms(40 * i), 0.1);
        }
        assert_eq!((c.tcp_cwnd, c.ack_cnt), (110, 187));
        let mut r = Cubic::default();
        r.on_congestion(100.0);
        r.congestion_avoidance(100.0, 0, ms(0), 0.1);
        for _ in 0..11 {
            r.congestion_avoidance(100.0, 187, ms(0), 0.1);
        }
        assert!((r.w_est - 120.57).abs() < 1e-9, "{}", r.w_est);
    }

    #[test]
    fn linux_spends_the_credits_of_a_flat_spell_when_renos_estimate_steps() {
        // The stage from 100 after an event: 150 segments acknowledged
        // under cnt = 100 x 100 leave the window at 100 with 150 counted
        // toward the next segment. 40 more take Reno's estimate to 101 (190
        // > 187), cnt falls to 100 / 1: the 150 already counted give one
        // segment at once (`tcp_cong_avoid_ai`), and the 40 start the next.
        // The ACKs come 40 ms apart (beyond Linux's hold of 1/32 s).
        let mut c = linux();
        c.on_congestion(100.0);
        c.congestion_avoidance(100.0, 0, ms(0), 0.1);
        assert_eq!(c.congestion_avoidance(100.0, 150, ms(40), 0.1), 100.0);
        assert_eq!(c.cwnd_cnt, 150);
        assert_eq!(c.congestion_avoidance(100.0, 40, ms(80), 0.1), 101.0);
        assert_eq!((c.tcp_cwnd, c.cwnd_cnt), (101, 40));
        // A cut clears the count, as Linux's `tcp_init_cwnd_reduction`.
        c.on_congestion(101.0);
        assert_eq!(c.cwnd_cnt, 0);
    }

    #[test]
    fn linux_holds_cnt_while_the_window_stands_still_for_a_32nd_of_a_second() {
        // The stage from 100 after an event (cnt = 100 x 100: the plateau is
        // here). 190 segments acknowledged 10 ms later leave the window at
        // 100: it has not changed and 10 ms is within 1/32 s, so Linux keeps
        // cnt and does not look at Reno's estimate, though 190 > 187 would
        // step it. One more segment at 40 ms: the estimate steps to 101 (191
        // > 187), cnt = 100 / 1, and the 190 counted give one segment.
        let mut c = linux();
        c.on_congestion(100.0);
        c.congestion_avoidance(100.0, 0, ms(0), 0.1);
        assert_eq!(c.congestion_avoidance(100.0, 190, ms(10), 0.1), 100.0);
        assert_eq!((c.tcp_cwnd, c.cnt, c.cwnd_cnt), (100, 10_000, 190));
        assert_eq!(c.congestion_avoidance(100.0, 1, ms(40), 0.1), 101.0);
        assert_eq!((c.tcp_cwnd, c.cnt), (101, 100));
        // Within a millisecond of the last look with the window changed:
        // Reno's estimate is looked at (it may lower cnt), the cubic
        // function is not. The stage from 100 at 0 with K = 0 and a minimum
        // RTT of 1 s: at 40 ms the target is 100 + floor(C' 1.04^3) = 100,
        // cnt = 10 000; 0.5 ms later the window is 150 (as after growth
        // elsewhere) and the curve would give 100 + 0 -> 100 x 150, but the
        // kept cnt stands, lowered by nothing (the estimate, 100, is below).
        let mut c = linux();
        c.on_congestion(100.0);
        c.on_rtt(ms(0), SimTime::from_secs(1));
        c.congestion_avoidance(100.0, 0, ms(0), 0.1);
        c.congestion_avoidance(100.0, 1, ms(40), 0.1);
        assert_eq!(c.cnt, 10_000);
        c.congestion_avoidance(150.0, 1, SimTime::from_micros(40_500), 0.1);
        assert_eq!((c.cnt, c.last_cwnd), (10_000, 100));
        // A millisecond on, the curve is worked out for 150: 100 x 150.
        c.congestion_avoidance(150.0, 1, SimTime::from_micros(41_000), 0.1);
        assert_eq!((c.cnt, c.last_cwnd), (15_000, 150));
        // A timeout forgets the kept cnt (`bictcp_reset`).
        c.on_loss_state(ms(5_000), 0);
        assert_eq!((c.cnt, c.last_cwnd, c.last_time_us), (0, 0, None));
    }

    #[test]
    fn linux_looks_ahead_one_minimum_rtt_in_whole_segments() {
        // An event at 100: ssthresh 70, W_max 100; the stage from 90 at
        // 10 s: K = cbrt(10 / (410 / 1024)) = 2.9230 s. A 50 ms sample
        // before the stage counts; a 20 ms one 0.5 s into it does not
        // (Linux holds samples for 1 s after a stage begins); 30 ms at
        // 1.5 s does.
        let mut c = linux();
        c.on_congestion(100.0);
        c.on_rtt(ms(9_000), ms(50));
        c.congestion_avoidance(90.0, 0, ms(10_000), 1.0);
        assert!((c.k - 2.9230).abs() < 1e-4, "{}", c.k);
        c.on_rtt(ms(10_500), ms(20));
        assert_eq!(c.delay_min, Some(ms(50)));
        // At 0.5 s with a smoothed RTT of 1 s: t = 0.5 + 0.05 (not + 1);
        // C' (K - t)^3 = 0.40039 x 2.3730^3 = 5.35, whole: 5; the target
        // 95 (the continuous curve's 94.65 rounded up); cnt = 90 / 5 = 18:
        // 17 segments acknowledged leave the window, the 18th adds one.
        assert_eq!(c.congestion_avoidance(90.0, 17, ms(10_500), 1.0), 90.0);
        assert_eq!(c.congestion_avoidance(90.0, 1, ms(10_500), 1.0), 91.0);
        c.on_rtt(ms(11_500), ms(30));
        assert_eq!(c.delay_min, Some(ms(30)));
        // Near K the curve is within a segment of W_max: the target is
        // 100 itself (1.9 s: C' 0.993^3 = 0.39, whole: 0), cnt = 90 / 10 = 9.
        assert_eq!(c.congestion_avoidance(90.0, 8, ms(11_900), 1.0), 90.0);
        assert_eq!(c.congestion_avoidance(90.0, 1, ms(11_900), 1.0), 91.0);
    }

    #[test]
    fn linux_forgets_the_last_event_at_a_timeout() {
        // A timeout at 80 after an event at 100: ssthresh 80 x 717 / 1024
        // = 56 as before, but the window of the event, the minimum RTT, the
        // count toward the next segment and the first-event state are reset
        // (`bictcp_reset`): the stage from 56 grows 5 % a round again (cnt
        // 20).
        let mut c = linux();
        c.on_congestion(100.0);
        c.on_rtt(ms(0), ms(100));
        assert_eq!(c.on_timeout(80.0), 56.0);
        c.on_loss_state(ms(4_000), 500);
        assert_eq!((c.w_max, c.delay_min, c.no_event), (0.0, None, true));
        assert_eq!(c.congestion_avoidance(56.0, 19, ms(5_000), 0.1), 56.0);
        assert_eq!(c.congestion_avoidance(56.0, 1, ms(5_000), 0.1), 57.0);
        // The RFC's rules: W_max = 68 (fast convergence, 80 x 1741 / 2048)
        // until the stage begins at 56 with K = 0.
        let mut r = Cubic::default();
        r.on_congestion(100.0);
        r.on_timeout(80.0);
        assert_eq!(r.w_max, 68.0);
    }

    #[test]
    fn after_a_timeout_the_plateau_is_where_the_stage_begins() {
        let mut c = Cubic::default();
        let ssthresh = c.on_timeout(100.0);
        assert!((ssthresh - 70.0).abs() < 1e-12);
        // Slow start to 70, then the stage: K = 0, W_max = 70.
        c.congestion_avoidance(70.0, 1, ms(5_000), 0.1);
        assert_eq!((c.k, c.w_max), (0.0, 70.0));
    }
}
