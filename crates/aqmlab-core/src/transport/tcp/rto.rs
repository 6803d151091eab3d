//! The retransmission timer (RFC 6298): RTT samples (one timed segment
//! per round trip, Karn's rule; on an exact clock in floating point, or in
//! whole ticks with Jacobson's integer estimator), SRTT, RTTVAR and the
//! RTO with its bounds, the timer's re-arming after an ACK, and what a
//! timeout does: exponential backoff, the window cut and go-back-N (with
//! SACK: the lost segments only, `sack_recovery.rs`, which also handles the
//! flow's timer when it stands for a probe or reordering timeout).

use super::{Cut, Seg, State, TcpFlow};
use crate::scenario::RttEstimator;
use crate::units::SimTime;

impl TcpFlow {
    /// RFC 6298 section 2: update SRTT, RTTVAR and RTO from a sample.
    /// One RTT sample: a segment sent at `sent` acknowledged at `now`.
    pub(super) fn rtt_sample(&mut self, now: SimTime, sent: SimTime) {
        if self.cfg.tcp.rtt_estimator == RttEstimator::Linux {
            // The handshake's sample (`tcp_synack_rtt_meas`).
            if let Some(mut lr) = self.lr.take() {
                self.linux_rtt_sample(&mut lr, now, sent);
                self.lr = Some(lr);
            }
            return;
        }
        let r = now - sent;
        self.stats.rtt_sum_s += r.0 as f64 * 1e-9;
        self.stats.rtt_samples += 1;
        self.rtt_seen(now, r);
        let rto = if let Some(tick) = std::num::NonZeroU64::new(self.cfg.tcp.clock_tick.0) {
            // A clock that ticks every `tick`: the sample is the number of
            // ticks that passed while the segment was out (at least one),
            // and Jacobson's estimator runs in scaled integers.
            let ticks = (((sent.0 % tick) + r.0) / tick).max(1) as i64;
            let tick = tick.get();
            if self.has_rtt {
                let err = ticks - (self.srtt8 >> 3);
                self.srtt8 = (self.srtt8 + err).max(1);
                self.rttvar4 = (self.rttvar4 + err.abs() - (self.rttvar4 >> 2)).max(1);
            } else {
                self.srtt8 = ticks << 3;
                self.rttvar4 = ticks << 1;
                self.has_rtt = true;
            }
            self.srtt_ns = self.srtt8 as f64 / 8.0 * tick as f64;
            self.rttvar_ns = self.rttvar4 as f64 / 4.0 * tick as f64;
            // srtt + 4 rttvar, in whole ticks.
            let rto_ticks = ((self.rttvar4 << 3) + self.srtt8) >> 3;
            SimTime::from_nanos((rto_ticks as u64).saturating_mul(tick))
        } else {
            let r = r.0 as f64;
            if self.has_rtt {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
                self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
            } else {
                self.srtt_ns = r;
                self.rttvar_ns = r / 2.0;
                self.has_rtt = true;
            }
            SimTime::from_nanos_f64(self.srtt_ns + 4.0 * self.rttvar_ns)
        };
        self.rto = rto.clamp(self.cfg.tcp.min_rto, self.cfg.tcp.max_rto);
    }

    /// One sample of Linux's estimator (`rtt_linux.rs`) for a segment sent
    /// at `sent` and acknowledged or SACKed at `now`: SRTT and the RTO,
    /// whose backoff it ends.
    pub(super) fn linux_rtt_sample(
        &mut self,
        lr: &mut super::sack_recovery::Lr,
        now: SimTime,
        sent: SimTime,
    ) {
        self.linux_rtt_of(lr, now, now - sent);
    }

    /// [`TcpFlow::linux_rtt_sample`] of a round trip `r`.
    pub(super) fn linux_rtt_of(
        &mut self,
        lr: &mut super::sack_recovery::Lr,
        now: SimTime,
        r: SimTime,
    ) {
        self.stats.rtt_sum_s += r.0 as f64 * 1e-9;
        self.stats.rtt_samples += 1;
        self.rtt_seen(now, r);
        if let Some(rb) = lr.rb.as_mut() {
            rb.rtt_sample(r);
        }
        let (srtt, rto) = lr
            .rtt
            .sample(r.0, self.snd_una, self.snd_nxt, self.cfg.tcp.min_rto.0);
        self.srtt_ns = srtt as f64;
        self.rttvar_ns = lr.rtt.rttvar() as f64 / 4.0;
        self.has_rtt = true;
        self.rto = SimTime::from_nanos(rto).min(self.cfg.tcp.max_rto);
    }

    /// A new ACK that covers the timed segment gives an RTT sample (one
    /// timing per round trip, Karn's rule: see the module's head).
    #[inline(always)]
    pub(super) fn time_ack(&mut self, now: SimTime, ack: u64, ece: bool, tsecr: SimTime) {
        if self.cfg.tcp.timestamps() {
            // RFC 7323 section 4.2: the echo times this ACK (`timestamps.rs`).
            return self.ts_timed_ack(now, ece, tsecr);
        }
        if self.rtt_seq.is_some_and(|s| ack > s) {
            self.rtt_seq = None;
            let backed_off = self.rto;
            self.rtt_sample(now, self.rtt_start);
            if ece && self.ecn_backoff_on && self.cfg.tcp.ecn_backoff() {
                // ns-2 keeps the backoff while ECN-Echo goes on at one
                // segment.
                self.rto = self.rto.max(backed_off);
            }
        }
    }

    /// RFC 6298 (5.2), (5.3) after a new ACK: stop the timer when
    /// everything is acknowledged, else restart it; an ECN hold keeps its
    /// timer.
    #[inline]
    pub(super) fn rearm_after_ack(&mut self, now: SimTime) {
        self.rto_deadline = if self.snd_una >= self.snd_max && !self.ecn_hold {
            None
        } else if self.ecn_hold && self.snd_una >= self.snd_max {
            self.rto_deadline
        } else {
            Some(now + self.rto)
        };
    }

    /// The retransmission timer expired (the engine checked the deadline).
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        self.rto_deadline = None;
        if self.ecn_hold {
            self.ecn_hold = false;
            if self.snd_una >= self.snd_max {
                // The hold of RFC 3168 section 6.1.2 ends: one new segment.
                self.send_available(now, out);
                return;
            }
        }
        if self.cfg.tcp.sack && self.state == State::Established && self.lr_timer(now, out) {
            return; // a probe or reordering timeout (RACK-TLP)
        }
        // RFC 6298 (5.5), but for the SYN's first `syn_linear_timeouts`
        // (Linux's `tcp_retransmit_timer`).
        if self.state != State::SynSent || self.syn_retx >= self.cfg.tcp.syn_linear_count() {
            self.rto = (self.rto + self.rto).min(self.cfg.tcp.max_rto);
        }
        match self.state {
            State::Idle => {}
            State::SynRcvd => {
                // The server's own SYN/ACK timer (`syn_loss_cut = "linux"`,
                // `send_synack`): the SYN/ACK again, counted as one sent
                // on a repeated SYN is.
                self.synack_retx = self.synack_retx.saturating_add(1);
                self.send_synack(now, out);
            }
            State::SynSent => {
                self.syn_retx = self.syn_retx.saturating_add(1);
                self.stats.syn_retransmits += 1;
                self.send_syn(now, out);
            }
            State::Established => {
                if self.snd_una >= self.snd_max {
                    return;
                }
                self.stats.timeouts += 1;
                self.rtt_seq = None; // everything outstanding is sent again
                self.lt_sent = 0;
                if self.cfg.tcp.sack {
                    self.frto_at_timeout();
                    self.undo_at_timeout();
                    let lost = self.sack_timeout_marks(now);
                    if self.cfg.tcp.pacing {
                        self.paced_lost(lost);
                    }
                } else if self.cfg.tcp.pacing {
                    self.paced_timeout();
                }
                self.timeout_cut();
                if self.cfg.tcp.cubic_linux() {
                    self.cubic_timeout(now);
                }
                self.last_cut = Cut::Timeout;
                if let Some(lr) = self.lr.as_deref_mut() {
                    lr.cwr = super::cwr::Cwr::Off; // Linux's loss state
                }
                self.cwr_pending = self.cfg.tcp.ecn;
                self.recover = self.snd_max;
                self.ecn_recover = self.snd_max;
                self.in_recovery = false;
                self.dupacks = 0;
                if self.cfg.tcp.sack {
                    // The SACK information is kept: no go-back-N.
                    self.sack_timeout(now, out);
                    return;
                }
                self.snd_nxt = self.snd_una; // go back N
                self.send_available(now, out);
                self.rto_deadline = Some(now + self.rto);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::cfg;
    use super::super::TcpConfig;
    use super::*;
    use crate::scenario::{TcpSpec, TcpVariant};

    #[test]
    fn rto_per_rfc6298_and_backoff() {
        let mut tx = TcpFlow::new(cfg(TcpVariant::Reno));
        assert_eq!(tx.rto, SimTime::from_secs(3));
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        // RTO = 100 + 4 * 50 = 300 ms.
        assert_eq!(tx.rto, SimTime::from_millis(300));
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        // RTTVAR = 0.75 * 50 = 37.5; RTO = 100 + 150 = 250 ms.
        assert_eq!(tx.rto, SimTime::from_millis(250));
        let mut out = Vec::new();
        tx.start(SimTime(0), &mut out);
        tx.on_rto(SimTime::from_millis(250), &mut out);
        assert_eq!(tx.rto, SimTime::from_millis(500));
        assert_eq!(tx.stats.timeouts, 1);
        assert_eq!(tx.cwnd, 1.0);
    }

    /// `tcp.clock_tick`: the RTT counts whole ticks of the sender's clock
    /// (the tick boundaries crossed while the segment was out) and
    /// Jacobson's estimator runs in eighths / quarters of a tick.
    #[test]
    fn clock_tick_times_in_whole_ticks() {
        let tcp = TcpSpec {
            clock_tick: SimTime::from_millis(10),
            ..TcpSpec::default()
        };
        let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, false));
        // 100 ms from a tick boundary: 10 ticks; srtt 10, rttvar 5 ticks,
        // RTO 10 + 4 x 5 = 30 ticks.
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        assert_eq!(tx.rto, SimTime::from_millis(300));
        // 99 ms sent 5 ms after a tick: 10 boundaries crossed, no error;
        // rttvar4 = 20 - 20 / 4 = 15, RTO = (15 x 8 + 80) / 8 = 25 ticks.
        tx.rtt_sample(SimTime::from_millis(104), SimTime::from_millis(5));
        assert_eq!(tx.rto, SimTime::from_millis(250));
        // 9 ms sent just before a boundary crosses one tick: never zero.
        tx.rtt_sample(SimTime::from_millis(118), SimTime::from_millis(109));
        assert!(tx.srtt_ns > 0.0);
        // The same samples on the exact clock give RFC 6298's values.
        let mut exact = TcpFlow::new(TcpConfig::from_spec(&TcpSpec::default(), false, false));
        exact.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        exact.rtt_sample(SimTime::from_millis(104), SimTime::from_millis(5));
        // RTTVAR = 0.75 x 50 + 0.25 x 1 = 37.75, SRTT = 99.875: 250.875 ms.
        assert_eq!(exact.rto, SimTime::from_nanos(250_875_000));
    }
}
