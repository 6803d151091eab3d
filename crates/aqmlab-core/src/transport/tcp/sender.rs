//! The data sender: what goes out when the window allows (new data, and
//! the first unacknowledged segment again), how each data segment is
//! marked (retransmission, CWR, ECT), and the dispatch of an arriving ACK
//! to the handshake, the ECN answer, the new-ACK and duplicate-ACK rules.

use super::{SackBlocks, Seg, State, TcpFlow};
use crate::packet::{flags, Ecn};
use crate::units::SimTime;

impl TcpFlow {
    /// An ACK (or SYN/ACK) reaches the sender: the handshake's, or the
    /// cumulative ACK of data, new or duplicate (fast retransmit and
    /// recovery), after the answer to its ECN-Echo; then what the window
    /// allows goes out. A SACK flow's ACK without SACK blocks.
    pub fn on_ack(&mut self, now: SimTime, ack: u64, f: u8, ecn: Ecn, out: &mut Vec<Seg>) {
        self.on_ack_with(now, ack, f, ecn, SimTime::ZERO, &SackBlocks::NONE, out);
    }

    /// [`TcpFlow::on_ack`] with the ACK's echo of a send time (`tsecr`:
    /// RFC 7323's TSecr, read only with `tcp.timestamps`).
    #[inline]
    pub fn on_ack_echo(
        &mut self,
        now: SimTime,
        ack: u64,
        f: u8,
        ecn: Ecn,
        tsecr: SimTime,
        out: &mut Vec<Seg>,
    ) {
        self.on_ack_with(now, ack, f, ecn, tsecr, &SackBlocks::NONE, out);
    }

    /// [`TcpFlow::on_ack_echo`] for an ACK that carries SACK blocks (flows
    /// with `tcp.sack`). Out of line: NewReno's ACKs keep their own copy.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub fn on_ack_sack(
        &mut self,
        now: SimTime,
        ack: u64,
        f: u8,
        ecn: Ecn,
        tsecr: SimTime,
        blocks: &SackBlocks,
        out: &mut Vec<Seg>,
    ) {
        self.on_ack_with(now, ack, f, ecn, tsecr, blocks, out);
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn on_ack_with(
        &mut self,
        now: SimTime,
        ack: u64,
        f: u8,
        ecn: Ecn,
        tsecr: SimTime,
        blocks: &SackBlocks,
        out: &mut Vec<Seg>,
    ) {
        if self.cfg.passive && f & (flags::SYN | flags::REQ) != 0 {
            self.server_control(now, ack, f, ecn, out);
            return;
        }
        match self.state {
            State::Idle | State::SynRcvd => return,
            State::SynSent => {
                if f & flags::SYN != 0 {
                    self.on_synack(now, ecn, tsecr, out);
                }
                return;
            }
            State::Established => {
                if f & flags::SYN != 0 {
                    return; // a duplicate SYN/ACK
                }
            }
        }
        let ece = f & flags::ECE != 0 && self.cfg.tcp.ecn;
        if self.cfg.tcp.pacing {
            return self.on_paced_ack(now, ack, ece, tsecr, blocks, out);
        }
        self.echo_rules(now, ack, ece);
        if self.cfg.tcp.sack {
            self.sack_ack(now, ack, ece, tsecr, blocks, out);
            return;
        }
        if ack > self.snd_una {
            self.on_new_ack(now, ack, ece, tsecr, out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.on_dupack(now, ack, out);
        }
        if self.in_recovery && self.cfg.tcp.prr {
            self.reno_prr_send(now, out);
        } else {
            self.send_window(now, out);
        }
    }

    /// [`TcpFlow::on_ack`]'s data ACK for a pacing flow: the same rules,
    /// then the rate sample, BBR's model or the pacing rate, and what the
    /// window and the release clock allow (`pacing.rs`).
    #[inline(never)]
    fn on_paced_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        ece: bool,
        tsecr: SimTime,
        blocks: &SackBlocks,
        out: &mut Vec<Seg>,
    ) {
        let (una0, nxt0) = (self.snd_una, self.snd_nxt);
        self.echo_rules(now, ack, ece);
        if self.cfg.tcp.sack {
            // SACK's recovery, which feeds the estimator and the model
            // (`TcpFlow::paced_sack_ack`) and sends through the clock.
            self.sack_ack(now, ack, ece, tsecr, blocks, out);
            return;
        }
        let mut dup = false;
        if ack > self.snd_una {
            self.on_new_ack(now, ack, ece, tsecr, out);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            dup = true;
            self.on_dupack(now, ack, out);
        }
        self.paced_ack(now, una0, nxt0, dup, out);
    }

    /// A cumulative ACK for new data: the RTT timing, `snd_una` moves on,
    /// then fast recovery's rules (`recovery_ack`) or the
    /// window's growth, and the retransmission timer.
    #[inline(always)]
    fn on_new_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        ece: bool,
        tsecr: SimTime,
        out: &mut Vec<Seg>,
    ) {
        let newly = ack - self.snd_una;
        self.time_ack(now, ack, ece, tsecr);
        self.prev_una = self.snd_una;
        self.lt_sent = 0;
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        if self.in_recovery {
            if self.recovery_ack(now, ack, newly, out) {
                return; // a partial ACK: recovery has seen to the timer
            }
        } else {
            self.dupacks = 0;
            // RFC 3168 section 6.1.2: an ACK carrying ECN-Echo does not
            // open the window (ns-2 and Linux refuse too).
            if !ece {
                self.grow_window(now, newly);
            }
        }
        self.rearm_after_ack(now);
    }

    /// The application stops: no new data after what was sent; what is
    /// outstanding is still delivered (retransmitted as needed).
    pub fn stop(&mut self) {
        self.app_limit = self.snd_max;
    }

    pub(super) fn window(&self) -> u64 {
        // `as` rounds toward zero and saturates (NaN and negatives to 0), which
        // for cwnd >= 0 is the floor, without a call into libm per packet.
        (self.cwnd as u64).clamp(1, self.cfg.tcp.rwnd as u64)
    }

    pub(super) fn data_seg(&mut self, seq: u64, now: SimTime) -> Seg {
        let mut f = flags::DATA;
        let retx = seq < self.snd_max;
        if retx {
            f |= flags::RETX;
            self.stats.retransmits += 1;
            if self.rtt_seq == Some(seq) {
                self.rtt_seq = None; // Karn: its ACK would be ambiguous
            }
        } else if self.rtt_seq.is_none() && !self.in_recovery {
            // Segments sent during recovery are acknowledged only once the
            // holes are filled: their delay is not the path's.
            self.rtt_seq = Some(seq);
            self.rtt_start = now;
        }
        if self.cwr_pending && (!retx || self.cfg.tcp.cwr_on_retransmit()) {
            f |= flags::CWR;
            self.cwr_pending = false;
        }
        self.stats.data_sent += 1;
        if self.cfg.passive {
            self.last_sent = now;
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto); // RFC 6298 (5.1)
        }
        Seg {
            seq,
            ts: now,
            size: if self.short.is_empty() {
                u32::from(self.cfg.tcp.packet_size)
            } else {
                self.seg_size(seq)
            },
            flags: f,
            // RFC 3168 section 6.1.5: a retransmission is not ECT (ns-2
            // sends it ECT: `tcp.ect_retransmits`; Linux's DCTCP too).
            ecn: if !self.cfg.tcp.ecn {
                Ecn::NotEct
            } else if !retx {
                // ECT(0), or ECT(1) as `tcp.ecn_codepoint` asks (RFC 9331 section 4.1).
                self.cfg.tcp.ecn_codepoint.ecn()
            } else {
                self.retransmission_ecn()
            },
            from_sender: true,
        }
    }

    /// The ECN field of a retransmission of an ECN-capable flow.
    #[cold]
    #[inline(never)]
    fn retransmission_ecn(&self) -> Ecn {
        if self.cfg.tcp.ect_retransmits || self.cfg.tcp.variant.scalable() {
            self.cfg.tcp.ecn_codepoint.ecn()
        } else {
            Ecn::NotEct
        }
    }

    /// Send what the window allows (a pacing flow: what the release clock
    /// allows too; SACK flows: what the pipe allows, lost segments first;
    /// PRR's recovery without SACK: what PRR allows).
    pub(super) fn send_available(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.cfg.tcp.pacing {
            return self.send_paced(now, out);
        }
        if self.ecn_hold {
            return;
        }
        if self.cfg.tcp.sack {
            self.sack_send(now, out);
            return;
        }
        if self.in_recovery && self.cfg.tcp.prr {
            self.reno_prr_send(now, out);
            return;
        }
        self.send_window(now, out);
    }

    /// Send what the window allows, at once (NewReno's ACKs, ECN's hold
    /// aside).
    #[inline]
    fn send_window(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        if self.ecn_hold {
            return;
        }
        let limit = (self.snd_una + self.window()).min(self.app_limit);
        let mut pieces = self.pieces();
        while self.snd_nxt < limit {
            let new = self.snd_nxt >= self.snd_max;
            let s = self.data_seg(self.snd_nxt, now);
            out.push(s);
            if new {
                pieces.sent(out);
            }
            self.snd_nxt += 1;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
            }
        }
        pieces.end(out);
    }

    pub(super) fn retransmit_una(&mut self, now: SimTime, out: &mut Vec<Seg>) {
        let s = self.data_seg(self.snd_una, now);
        if self.cfg.tcp.pacing {
            self.paced_sent_at_once((s.seq, s.size, s.flags), true, now);
        }
        out.push(s);
    }

    /// Wire bytes of data segment `seq`.
    pub(super) fn seg_size(&self, seq: u64) -> u32 {
        self.short
            .iter()
            .find(|&&(s, _)| s == seq)
            .map_or(u32::from(self.cfg.tcp.packet_size), |&(_, w)| w)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{sender, spec};
    use super::*;
    use crate::scenario::TcpSpec;

    /// RFC 3168 section 6.1.5: retransmitted data is not ECT (ns-2 sends
    /// it ECT: `tcp.ect_retransmits = true`).
    #[test]
    fn retransmissions_are_not_ect_unless_asked() {
        for (ect, want) in [(false, Ecn::NotEct), (true, Ecn::Ect0)] {
            let tcp = TcpSpec {
                ect_retransmits: ect,
                ..spec()
            };
            let (mut tx, first) = sender(4.0, tcp);
            assert!(first.iter().all(|s| s.ecn == Ecn::Ect0));
            let mut out = Vec::new();
            tx.on_rto(SimTime::from_millis(300), &mut out);
            assert_eq!(out[0].seq, 0);
            assert_eq!(out[0].ecn, want);
        }
    }
}
