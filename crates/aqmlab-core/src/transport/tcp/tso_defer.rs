//! Linux's TSO deferral (`tcp.tso_defer`): a sender that does not pace
//! may hold back new data that the window cannot take as one whole TSO/GSO
//! packet, in the hope that the next ACK lets a bigger one go
//! (`tcp_tso_should_defer`, `net/ipv4/tcp_output.c`, as Linux 6.18 runs
//! it, with the ACK-timing rule of October 2025).
//!
//! `tcp_write_xmit` asks before each packet of new data whose buffer holds
//! more than one segment; the packet is held back (and the send ends) when
//! every test below passes, each of them otherwise sends it:
//! 1. the flow is not in recovery or after a timeout (`icsk_ca_state` below
//!    `TCP_CA_Recovery`);
//! 2. it last sent within 1 ms (`tcp_wstamp_ns`);
//! 3. the window, the smaller of the congestion window's room and the
//!    receiver's, takes fewer segments than a packet's goal
//!    (`tcp_tso_segs`, [`super::pacing::tso_autosize`]);
//! 4. that room is less than a third of min(cwnd, the receiver's window)
//!    (`sysctl_tcp_tso_win_divisor` = 3);
//! 5. the oldest segment not acknowledged has been sent (the
//!    retransmission queue's head) and its ACK, expected one SRTT after it
//!    was sent, is due within min(1 ms, SRTT / 2) or overdue.
//!
//! Nothing wakes a deferred send but the next ACK (or a timer of the
//! flow's): Linux arms no timer for it either. Modelled for SACK senders
//! (the head's send time is the scoreboard's); a flow that paces never
//! defers here (Linux's pacing keeps its own clock, `tcp.tso`).

use super::sack_recovery::Lr;
use super::TcpFlow;
use crate::units::SimTime;

/// What a deferred packet waits for room in (`tcp_tso_should_defer`'s
/// `is_cwnd_limited` and `is_rwnd_limited`): the congestion window when its
/// room is the smaller, else the receiver's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Held {
    Window,
    Receiver,
}

/// `tcp_tso_should_defer`'s bound on the time since the last send, and on
/// how soon the head's ACK must be due.
const RECENT: SimTime = SimTime::from_millis(1);
/// `net.ipv4.tcp_tso_win_divisor`'s default.
const WIN_DIVISOR: u64 = 3;

impl TcpFlow {
    /// Whether Linux defers the packet of new data that would open at
    /// `now` with a size goal of `goal` segments, the window at `w`, and for
    /// want of room in which window (asked only with `tcp.tso_defer`:
    /// [`super::push::Pieces::opening`]).
    pub(super) fn tso_defers(&self, lr: &Lr, now: SimTime, w: u64, goal: u64) -> Option<Held> {
        if self.in_recovery || lr.loss {
            return None;
        }
        // A buffer of one segment takes Nagle's test instead.
        if self.app_limit.saturating_sub(self.snd_nxt) < 2 {
            return None;
        }
        let (Some(srtt), true) = (self.srtt(), lr.sb.outstanding() > 0) else {
            return None;
        };
        // New data leaves in sequence, so the highest segment sent went
        // last (a TLP's probe of it included).
        let last = lr.sb.slot(lr.sb.end() - 1).xmit;
        if now > last + RECENT {
            return None;
        }
        let peer = self.receiver_edge(lr);
        let cwnd_room = w.saturating_sub(lr.sb.pipe());
        let peer_room = peer.saturating_sub(self.snd_nxt);
        let room = cwnd_room.min(peer_room);
        if room >= goal {
            return None;
        }
        if WIN_DIVISOR * room >= w.min(peer.saturating_sub(self.snd_una)) {
            return None;
        }
        let due = lr.sb.slot(self.snd_una).xmit + srtt;
        let threshold = SimTime(srtt.0 / 2).min(RECENT);
        (due <= now + threshold).then_some(if cwnd_room < peer_room {
            Held::Window
        } else {
            Held::Receiver
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::recovery_spec;
    use super::super::{Seg, TcpConfig, TcpFlow};
    use crate::packet::{flags, Ecn};
    use crate::scenario::TcpSpec;
    use crate::units::SimTime;

    fn spec(defer: bool) -> TcpSpec {
        let mut t = recovery_spec(false, false, false);
        t.set_tso_defer(defer);
        t
    }

    /// A SACK sender with cwnd = ssthresh = `w` and an SRTT of 100 ms, its
    /// first `w` segments sent at 0 ms. With 20: packets of two
    /// (`tcp_min_tso_segs`; 1.2 x 20 x 1040 B / 0.1 s is 250 bytes a
    /// millisecond).
    fn sender_of(defer: bool, w: f64) -> TcpFlow {
        let mut tx = TcpFlow::new(TcpConfig::from_spec(&spec(defer), false, false));
        tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
        tx.cwnd = w;
        tx.ssthresh = w;
        let mut out = Vec::new();
        tx.start(SimTime::ZERO, &mut out);
        assert_eq!(out.len(), w as usize);
        tx
    }

    fn sender(defer: bool) -> TcpFlow {
        sender_of(defer, 20.0)
    }

    fn ack_at(tx: &mut TcpFlow, us: u64, a: u64) -> Vec<u64> {
        let mut out: Vec<Seg> = Vec::new();
        tx.on_ack(SimTime(us * 1000), a, flags::ACK, Ecn::NotEct, &mut out);
        out.iter().map(|s| s.seq).collect()
    }

    /// The ACK of segments 0-1 at 100 ms, the window grown by one: room for
    /// three. The pair 20-21 goes; segment 22 alone would open a packet
    /// below the goal of two, the flow sent 21 just now, and segment 2's
    /// ACK is due at 0 + 100 ms, now: deferred. Without the switch it goes.
    #[test]
    fn a_single_after_a_pair_waits_for_the_next_ack() {
        for (defer, want) in [(false, vec![20, 21, 22]), (true, vec![20, 21])] {
            let mut tx = sender(defer);
            tx.cwnd = 21.0;
            assert_eq!(ack_at(&mut tx, 100_000, 2), want, "tso_defer = {defer}");
        }
    }

    /// The same ACK 2 ms after the segments' ACKs were due (the head's ACK
    /// overdue): deferred too. The next ACK, of two segments, leaves room
    /// for three with the one held back: a pair goes, the single waits
    /// again.
    #[test]
    fn an_overdue_ack_defers_too() {
        let mut tx = sender(true);
        tx.cwnd = 21.0;
        assert_eq!(ack_at(&mut tx, 102_000, 2), vec![20, 21]);
        assert_eq!(ack_at(&mut tx, 102_500, 4), vec![22, 23]);
    }

    /// The head's ACK due later than min(1 ms, SRTT / 2): segments 0-3 go
    /// at 0 ms and their ACK at 5 ms sends 4-11; at 5.5 ms the ACK of 4-5
    /// leaves room for three, and the head (6) was sent at 5 ms, its ACK
    /// due some 88 ms later (SRTT after the 5 ms sample): the single goes.
    #[test]
    fn a_far_ack_lets_the_single_go() {
        let mut tx = sender_of(true, 4.0);
        tx.cwnd = 8.0;
        tx.ssthresh = 8.0;
        assert_eq!(ack_at(&mut tx, 5_000, 4), (4..12).collect::<Vec<_>>());
        tx.cwnd = 9.0;
        assert_eq!(ack_at(&mut tx, 5_500, 6), vec![12, 13, 14]);
    }

    /// Last sent more than 1 ms ago: a single goes whatever the head.
    #[test]
    fn an_idle_sender_does_not_defer() {
        let mut tx = sender(true);
        assert_eq!(ack_at(&mut tx, 100_000, 1), vec![20]);
    }
}
