//! The SACK flow's one timer (Linux's `icsk_pending`): the retransmission
//! timer (RFC 6298), TLP's probe timeout (RFC 8985 section 7) and RACK's
//! reordering timer (RFC 8985 section 6.3), armed after each event by step
//! 8 of [`super::sack_recovery`]'s order, and what each does when it fires,
//! the retransmission timeout's marks and sends included.
//!
//! A paced flow's retransmission and probe timers are armed later by the
//! time its next segment waits for the release clock, as Linux's
//! `tcp_reset_xmit_timer` adds `tcp_pacing_delay` (`tcp_rearm_rto`,
//! `tcp_schedule_loss_probe`, `tcp_xmit_retransmit_queue`): a flow held by
//! its pacing rate, not by its window, is not timed out for it. RACK's
//! reordering timer and the timer a timeout re-arms are not (Linux arms
//! those without it).

use super::rack::{self, TIMEOUT_MIN};
use super::sack_recovery::{disorder, Lr, Sent, Timer};
use super::scoreboard::SACKED;
use super::{Cut, Seg, TcpFlow};
use crate::units::SimTime;

impl TcpFlow {
    /// Step 8: the flow's one timer after an event (see
    /// [`super::sack_recovery`]'s head):
    /// `acked`, the event acknowledged new data (or SACKed data sent
    /// before the oldest segment's last transmission); `sent`, what went out;
    /// `reo`, RACK's wait; `was_empty`, nothing was outstanding before.
    pub(super) fn arm_timers(
        &mut self,
        lr: &mut Lr,
        now: SimTime,
        acked: bool,
        sent: Sent,
        reo: Option<u64>,
        was_empty: bool,
    ) {
        if self.ecn_hold {
            // RFC 3168 section 6.1.2's hold keeps its retransmission timer.
            lr.timer = Timer::Rto;
            return;
        }
        if self.snd_max == self.snd_una {
            self.rto_deadline = None; // RFC 6298 (5.2)
            lr.timer = Timer::Rto;
            return;
        }
        if let Some(wait) = reo {
            // RFC 8985 section 6.3; Linux adds TCP_TIMEOUT_MIN and keeps it
            // within an RTO.
            let d = (SimTime::from_nanos(wait) + TIMEOUT_MIN).min(self.rto);
            self.rto_deadline = Some(now + d);
            lr.timer = Timer::Reorder;
            return;
        }
        if sent.new && !sent.head && self.may_probe(lr) {
            // New data went out and a probe may go: the steps below would
            // end by arming this probe over what they armed first (its
            // bound reads neither), so it is armed alone.
            self.arm_probe(lr, now, false);
            return;
        }
        if acked && !self.schedule_probe(lr, now, true) {
            self.rearm_rto(lr, now);
        }
        if sent.head && lr.timer != Timer::Reorder {
            // Linux's `tcp_xmit_retransmit_queue`.
            self.arm_rto_from_now(lr, now);
        }
        if sent.new {
            if was_empty || lr.timer == Timer::Probe {
                self.rearm_rto(lr, now);
            }
            self.schedule_probe(lr, now, false);
        }
        if self.rto_deadline.is_none() {
            // RFC 6298 (5.1); Linux's `tcp_event_new_data_sent`.
            self.arm_rto_from_now(lr, now);
        }
    }

    /// The retransmission timer, an RTO from now; a paced flow's later by
    /// its pacing delay ([`TcpFlow::pacing_delay`]).
    fn arm_rto_from_now(&mut self, lr: &mut Lr, now: SimTime) {
        self.rto_deadline = Some(now + self.rto + self.pacing_delay(now));
        lr.timer = Timer::Rto;
    }

    /// Linux's `tcp_rearm_rto`: the retransmission timer, from now, or from
    /// the oldest segment's last transmission when it replaces a probe or
    /// reordering timer; a paced flow's later by its pacing delay
    /// ([`TcpFlow::pacing_delay`]).
    fn rearm_rto(&mut self, lr: &mut Lr, now: SimTime) {
        if self.snd_max == self.snd_una {
            self.rto_deadline = None;
        } else if lr.timer == Timer::Rto {
            self.arm_rto_from_now(lr, now);
        } else {
            let from_head = lr.sb.slot(self.snd_una).xmit + self.rto;
            self.rto_deadline = Some(from_head.max(now + SimTime(1)) + self.pacing_delay(now));
        }
        lr.timer = Timer::Rto;
    }

    /// TLP's probe timeout (RFC 8985 section 7.2; Linux's
    /// `tcp_schedule_loss_probe`) when a probe may go: RACK-TLP on, data
    /// outstanding, nothing SACKed, lost or sent again (Linux's Open
    /// state), not in recovery. `advancing`: an ACK of new data re-arms
    /// (the bound is a whole RTO); else the bound is the time left to the
    /// retransmission timeout of the oldest segment. Returns whether it
    /// armed one.
    fn schedule_probe(&mut self, lr: &mut Lr, now: SimTime, advancing: bool) -> bool {
        let may = self.may_probe(lr);
        if may {
            self.arm_probe(lr, now, advancing);
        }
        may
    }

    /// Whether TLP may send a probe now ([`TcpFlow::schedule_probe`]).
    fn may_probe(&self, lr: &Lr) -> bool {
        lr.rack.is_some()
            && !self.in_recovery
            && !lr.loss
            && self.snd_max > self.snd_una
            && !disorder(lr)
    }

    /// The probe's timer, where [`TcpFlow::may_probe`].
    fn arm_probe(&mut self, lr: &mut Lr, now: SimTime, advancing: bool) {
        let outstanding = self.snd_max - self.snd_una;
        let srtt = self.has_rtt.then_some(self.srtt_ns);
        let mut d = rack::pto(
            srtt,
            outstanding,
            self.cfg.tcp.min_rto,
            self.cfg.tcp.initial_rto,
        );
        let bound = if advancing {
            Some(self.rto)
        } else {
            let due = lr.sb.slot(self.snd_una).xmit + self.rto;
            (due > now).then(|| due - now)
        };
        if let Some(b) = bound {
            d = d.min(b);
        }
        self.rto_deadline = Some(now + d + self.pacing_delay(now));
        lr.timer = Timer::Probe;
    }

    /// RFC 8985 section 7.4 (Linux's `tcp_process_tlp_ack`) for an ACK at
    /// or beyond the outstanding probe's `tlp_high`.
    pub(super) fn tlp_ack(
        &mut self,
        lr: &mut Lr,
        ack: u64,
        advanced: bool,
        new_sacked: bool,
        dsack_tlp: bool,
    ) {
        let Some(r) = lr.rack.as_mut() else {
            return;
        };
        let Some(high) = r.tlp_high else {
            return;
        };
        if ack < high {
            return;
        }
        if !r.tlp_retrans {
            r.tlp_high = None; // a probe of new data was delivered
        } else if dsack_tlp {
            // A D-SACK for the probe: its original arrived too, no loss.
            r.tlp_high = None;
        } else if ack > high {
            // The probe repaired a loss: cut the window once (Linux:
            // `tcp_init_cwnd_reduction`, then cwnd = ssthresh).
            r.tlp_high = None;
            let after_ecn = self.last_cut == Cut::Ecn && self.snd_una < self.recover;
            self.loss_cut(after_ecn);
            self.cwnd = self.exit_cwnd;
            self.ecn_recover = self.snd_max;
            self.last_cut = Cut::Loss;
        } else if !advanced && !new_sacked {
            // A pure duplicate ACK: the original and the probe both arrived.
            r.tlp_high = None;
        }
    }

    /// The flow's timer fired as a probe or reordering timer (SACK flows):
    /// returns false for the retransmission timer, which
    /// [`TcpFlow::on_rto`] handles.
    pub(super) fn lr_timer(&mut self, now: SimTime, out: &mut Vec<Seg>) -> bool {
        let kind = self.lr.as_deref().map_or(Timer::Rto, |l| l.timer);
        if kind == Timer::Rto {
            return false;
        }
        let mut lr = self.lr.take().expect("checked above");
        match kind {
            Timer::Probe => self.tlp_fire(&mut lr, now, out),
            Timer::Reorder => self.reo_fire(&mut lr, now, out),
            Timer::Rto => {}
        }
        self.lr = Some(lr);
        true
    }

    /// TLP's probe (RFC 8985 section 7.3; Linux's `tcp_send_loss_probe`):
    /// a new segment if the receiver's window and the application allow,
    /// else the last segment again; at most one probe outstanding. The
    /// retransmission timer restarts from now.
    fn tlp_fire(&mut self, lr: &mut Lr, now: SimTime, out: &mut Vec<Seg>) {
        if self.snd_max == self.snd_una {
            lr.timer = Timer::Rto;
            return;
        }
        if lr.rack.as_ref().is_some_and(|r| r.tlp_high.is_some()) {
            self.rearm_rto(lr, now);
            return;
        }
        let can_new = self.may_send_new(lr);
        let retrans = if can_new {
            self.lr_new(lr, now, out);
            if self.cfg.tcp.cwnd_validation() {
                let limited = self.pipe_at_cwnd(lr.sb.pipe());
                self.record_cwnd_use(lr, true, limited);
            }
            false
        } else {
            let last = self.snd_max - 1;
            if lr.sb.slot(last).bits & SACKED != 0 {
                self.rearm_rto(lr, now);
                return;
            }
            self.resend_copy(lr, last, now, out);
            true
        };
        if let Some(r) = lr.rack.as_mut() {
            r.tlp_high = Some(self.snd_max);
            r.tlp_retrans = retrans;
        }
        self.stats.tlp_probes += 1;
        self.arm_rto_from_now(lr, now);
    }

    /// RACK's reordering timer (RFC 8985 section 6.3; Linux's
    /// `tcp_rack_reo_timeout`): the segments whose time is up are lost; if
    /// any, recovery begins (if not under way) and they are sent again as
    /// the window allows. Then the retransmission timer, from the oldest
    /// segment's last transmission.
    fn reo_fire(&mut self, lr: &mut Lr, now: SimTime, out: &mut Vec<Seg>) {
        let prior_pipe = lr.sb.pipe();
        let recovering = self.in_recovery || lr.loss;
        let mut lost = 0;
        if let Some(r) = lr.rack.as_mut() {
            let reo = r.reo_wnd(recovering, lr.sb.sacked_out, self.srtt_ns);
            lost = r.detect(&mut lr.sb, now, reo).0;
            self.stats.rack_detections += lost;
        }
        if self.cfg.tcp.pacing {
            self.paced_lost(lost);
        }
        if lr.sb.pipe() != prior_pipe {
            if !self.in_recovery {
                self.sack_enter_recovery(lr);
                self.force_first(lr, now, out);
                // An algorithm that owns its window keeps the one its loss
                // rule set: Linux's timer leaves `tcp_cwnd_reduction` to
                // congestion controls without their own `cong_control`.
                if self.cfg.tcp.prr && !self.cc_owns_window() {
                    let target = self.prr_target();
                    if let Some(c) = lr.prr.on_ack(target, lr.sb.pipe(), 1, false, lost > 0) {
                        self.cwnd = c as f64;
                    }
                }
            }
            let w = self.window();
            while lr.sb.pipe() < w && self.pace_allows(now, lr.sb.pipe() == 0) {
                let Some(seq) = lr.sb.next_lost() else {
                    break;
                };
                self.lr_resend(lr, seq, now, out);
            }
        }
        self.rearm_rto(lr, now);
    }

    /// A retransmission timeout of a SACK flow, before the window cut:
    /// every segment not SACKed is deemed lost (see the module's head).
    /// Returns how many were newly marked.
    pub(super) fn sack_timeout_marks(&mut self, now: SimTime) -> u64 {
        // Linux's open or disorder state (`tcp_enter_loss`'s test for the
        // degree of reordering): no recovery, ECN reduction or timeout's
        // retransmissions under way.
        let no_reduction = !self.in_recovery && !self.ecn_cwr();
        let Some(lr) = self.lr.as_deref_mut() else {
            return 0;
        };
        let disorder = no_reduction && !lr.loss;
        lr.loss = true;
        let rack_rtt = lr.rack.as_ref().map(|r| r.rtt_ns());
        if let Some(r) = lr.rack.as_mut() {
            r.tlp_high = None;
            if disorder {
                r.reorder.on_timeout(lr.sb.sacked_out);
            }
        }
        lr.sb.mark_all_lost(|_, slot| {
            // Linux with RACK: not those sent within RACK.rtt.
            rack_rtt.is_some_and(|rtt| now.0 < slot.xmit.0.saturating_add(rtt))
        })
    }

    /// A retransmission timeout of a SACK flow, after the marks
    /// ([`TcpFlow::sack_timeout_marks`]), the window cut and the
    /// bookkeeping every timeout does ([`TcpFlow::on_rto`]): the lost
    /// segments go again as the window allows.
    pub(super) fn sack_timeout(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        let mut lr = self.lr.take().expect("a SACK flow has its recovery state");
        self.cwnd = self.cwnd.max((lr.sb.pipe() + 1) as f64);
        self.lr_send(&mut lr, now, out);
        self.rto_deadline = Some(now + self.rto);
        lr.timer = Timer::Rto;
        self.lr = Some(lr);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{spec, started};
    use crate::scenario::TcpSpec;
    use crate::units::SimTime;

    fn ms(x: f64) -> SimTime {
        SimTime::from_secs_f64(x / 1e3)
    }

    /// The probe timer of a paced flow waits for its release clock. NewReno
    /// with SACK and RACK-TLP, cwnd 20, an SRTT of 100 ms (RTO 300 ms):
    /// the probe timeout is 2 x SRTT + 2 ms = 202 ms (within the RTO).
    /// Unpaced, the 20 segments leave at 0 and the probe is due at 202 ms.
    /// Paced at 2 x 960 x 20 / 0.1 s = 384 000 B/s (a segment every 2.5
    /// ms), the first 10 leave at 0 and the next may leave at 2.5 ms: the
    /// probe is due at 202 + 2.5 = 204.5 ms. Each of segments 10 to 19,
    /// sent by the pacing timer at 2.5 to 25 ms, re-arms it (Linux's
    /// `tcp_schedule_loss_probe` after `tcp_write_xmit`) with the next
    /// release 2.5 ms on: the last at 25 + 202 + 2.5 = 229.5 ms.
    #[test]
    fn a_paced_flows_probe_waits_for_its_release_clock() {
        let run = |pacing: bool| {
            let tcp = TcpSpec {
                pacing,
                sack: true,
                rack: true,
                initial_cwnd: 20,
                ecn: false,
                ..spec()
            };
            let (mut tx, mut out) = started(tcp, None);
            let mut deadlines = vec![(out.len(), tx.rto_deadline)];
            while let Some(d) = tx.pace_deadline() {
                out.clear();
                tx.on_pace_timer(d, &mut out);
                deadlines.push((out.len(), tx.rto_deadline));
            }
            deadlines
        };
        assert_eq!(run(false), [(20, Some(ms(202.0)))]);
        let paced = run(true);
        assert_eq!(paced.len(), 11);
        assert_eq!(paced[0], (10, Some(ms(204.5))));
        for (k, &(n, d)) in paced.iter().enumerate().skip(1) {
            assert_eq!(
                (n, d),
                (1, Some(ms(2.5 * k as f64 + 204.5))),
                "segment {}",
                k + 9
            );
        }
    }
}
