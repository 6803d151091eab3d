//! Linux's SACK compression at the receiver (`tcp.sack_compression`;
//! `__tcp_ack_snd_check` in tcp_input.c, `tcp_compressed_ack_kick` in
//! tcp_timer.c, `tcp_event_ack_sent` in tcp_output.c; the sysctls
//! `net.ipv4.tcp_comp_sack_delay_ns` = 1 ms and `tcp_comp_sack_nr` = 44,
//! Linux 4.20 and later).
//!
//! A receiver that holds data out of order owes an ACK for every segment
//! that arrives (RFC 5681 section 4.2 asks for an immediate duplicate
//! ACK); a Linux receiver with SACK sends the first three ACKs for one
//! cumulative ACK at once (`TCP_FASTRETRANS_THRESH`: the sender's dupthresh
//! needs them) and then holds each later one, sending a single ACK for all
//! of them min(1 ms, RTT / 20) after the first one held, or at once when
//! the 45th would be held. Any ACK sent in the meantime (a segment that
//! moves the cumulative ACK, a quick ACK, a CE mark) takes the held ones
//! with it. So a receiver that meets two segments of one flow within a
//! millisecond (a pair of a TSO packet, a paced burst) acknowledges them
//! once.
//!
//! The rule comes after the others (`__tcp_ack_snd_check`'s order): an
//! ACK that goes at once for another reason (more than one segment newly
//! in order, quick-ACK mode, a hole filled, CWR, a change of the CE state)
//! is not held and leaves the count as it is. A segment that moves the
//! cumulative ACK and still leaves data out of order passes the rule and
//! goes at once as the first of the three. The RTT is Linux's: the
//! receiver's own estimate (`rcv_rtt_est`, which the model keeps with the
//! autotuned window, `rcvbuf.rs`), or the handshake's if that is smaller
//! and known; before the receiver's first estimate the wait is nothing
//! (Linux's arithmetic gives 0). Without the autotuned window the model
//! has no estimate of the receiver's own and takes the handshake's.
//! aqmlab sends the held ACK at the end of the wait; Linux's timer may
//! fire up to `tcp_comp_sack_slack_ns` = 100 us later (not modelled).
//!
//! aqmlab sends at once a segment that arrived twice above the cumulative
//! ACK with D-SACK on (its ACK carries the D-SACK block, which a later
//! segment's blocks would replace before a held ACK left).

use super::TcpFlow;
use crate::units::SimTime;

/// The longest hold (`tcp_comp_sack_delay_ns`).
const DELAY_MAX: SimTime = SimTime::from_millis(1);
/// ACKs held in a row at most (`tcp_comp_sack_nr`).
const HELD_MAX: u32 = 44;
/// ACKs sent at once for one cumulative ACK (`TCP_FASTRETRANS_THRESH`).
const AT_ONCE: u8 = 3;

/// The receiver's compression state (Linux's `compressed_ack`,
/// `compressed_ack_rcv_nxt`, `dup_ack_counter` and the
/// `compressed_ack_timer`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SackCompress {
    /// The cumulative ACK the ACKs sent at once were counted for.
    rcv_nxt: u64,
    /// ACKs sent at once for it.
    at_once: u8,
    /// ACKs held since the last one sent.
    held: u32,
    /// When the held ACKs' one ACK goes (None: none held).
    due: Option<SimTime>,
}

impl SackCompress {
    /// The hold for an RTT of `rtt` (zero: not known): min(1 ms, RTT / 20).
    fn delay(rtt: SimTime) -> SimTime {
        SimTime(rtt.0 / 20).min(DELAY_MAX)
    }
}

impl TcpFlow {
    /// A segment arrived whose ACK would go at once only because data
    /// is held out of order: whether the ACK is held (at `now`; the
    /// delayed-ACK deadline then covers its time).
    pub(super) fn sack_compress(&mut self, now: SimTime) -> bool {
        let rcv_nxt = self.rcv_nxt;
        let Some(lr) = self.lr.as_deref_mut() else {
            return false;
        };
        let c = &mut lr.comp;
        if c.held >= HELD_MAX {
            return false;
        }
        if c.rcv_nxt != rcv_nxt {
            c.rcv_nxt = rcv_nxt;
            c.at_once = 0;
        }
        if c.at_once < AT_ONCE {
            c.at_once += 1;
            return false;
        }
        c.held += 1;
        let due = match c.due {
            Some(d) => d,
            None => {
                let d = now + SackCompress::delay(hold_rtt(lr));
                lr.comp.due = Some(d);
                d
            }
        };
        self.delack_deadline = Some(self.delack_deadline.map_or(due, |d| d.min(due)));
        true
    }

    /// An ACK went: it carries what was held (`tcp_event_ack_sent`).
    #[inline]
    pub(super) fn sack_compress_sent(&mut self) {
        if let Some(lr) = self.lr.as_deref_mut() {
            lr.comp.held = 0;
            lr.comp.due = None;
        }
    }

    /// Whether the held ACKs are due at `now` (`tcp_compressed_ack_kick`;
    /// `due` is set exactly while some are held).
    pub(super) fn sack_compress_due(&self, now: SimTime) -> bool {
        self.lr
            .as_deref()
            .is_some_and(|lr| lr.comp.due.is_some_and(|d| d <= now))
    }
}

/// The RTT the hold is a twentieth of: Linux's `rcv_rtt_est` (zero before
/// its first measure), or `srtt_us` if smaller (the receiver's from its
/// handshake, `delack.rs`); without the autotuned window, which keeps the
/// model's estimate, the handshake's.
fn hold_rtt(lr: &super::sack_recovery::Lr) -> SimTime {
    let hs = lr.ato.rtt();
    match (lr.rb.as_ref().map(|rb| rb.rcv_rtt()), hs) {
        (Some(own), Some(h)) if h < own => h,
        (Some(own), _) => own,
        (None, h) => h.unwrap_or(SimTime::ZERO),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Seg, TcpConfig, TcpFlow};
    use super::SackCompress;
    use crate::packet::{flags, Ecn};
    use crate::scenario::TcpProfile;
    use crate::units::SimTime;

    fn us(x: u64) -> SimTime {
        SimTime::from_micros(x)
    }

    /// A linux-profile receiver (RTT 100 ms from its handshake, no
    /// timestamps, so no receiver estimate of its own until the window's
    /// measure ends) that has taken segments 0-19 in order.
    fn receiver(compress: bool) -> TcpFlow {
        let mut spec = TcpProfile::Linux.defaults();
        spec.set_timestamps(false);
        spec.set_moderate_rcvbuf(false);
        spec.set_sack_compression(compress);
        let mut rx = TcpFlow::new(TcpConfig::from_spec(&spec, false, false));
        rx.has_rtt = true;
        rx.srtt_ns = 100e6;
        let mut out = Vec::new();
        for s in 0..20 {
            arrives(&mut rx, us(100 * s), s, &mut out);
        }
        rx
    }

    /// Data segment `seq` arrives at `at`, sent once.
    fn arrives(rx: &mut TcpFlow, at: SimTime, seq: u64, out: &mut Vec<Seg>) {
        rx.on_data(at, seq, flags::DATA, Ecn::NotEct, SimTime::ZERO, out);
    }

    /// Data segment `seq` arrives at `at`, sent again.
    fn resent(rx: &mut TcpFlow, at: SimTime, seq: u64, out: &mut Vec<Seg>) {
        rx.on_data(
            at,
            seq,
            flags::DATA | flags::RETX,
            Ecn::NotEct,
            SimTime::ZERO,
            out,
        );
    }

    fn acks(out: &[Seg]) -> Vec<u64> {
        out.iter().map(|s| s.seq).collect()
    }

    /// RTT / 20, at most 1 ms: 5 ms gives 250 us, 100 ms gives 1 ms, an RTT
    /// not known nothing.
    #[test]
    fn the_hold_is_a_twentieth_of_the_rtt_at_most_1_ms() {
        assert_eq!(SackCompress::delay(SimTime::from_millis(5)), us(250));
        assert_eq!(SackCompress::delay(SimTime::from_millis(100)), us(1000));
        assert_eq!(SackCompress::delay(SimTime::ZERO), SimTime::ZERO);
    }

    /// Segment 20 lost, 21-30 arrive 100 us apart from 10 ms: 21, 22 and
    /// 23 are acknowledged at once (three duplicate ACKs for 20), 24-30
    /// are held, and one ACK goes 1 ms after 24 arrived (RTT 100 ms).
    /// Without the switch every segment is acknowledged at once.
    #[test]
    fn three_duplicates_at_once_then_one_ack_a_millisecond() {
        for compress in [true, false] {
            let mut rx = receiver(compress);
            let mut out = Vec::new();
            for s in 21..=30 {
                arrives(&mut rx, us(10_000 + 100 * (s - 21)), s, &mut out);
            }
            if !compress {
                assert_eq!(acks(&out), vec![20; 10]);
                continue;
            }
            assert_eq!(acks(&out), vec![20; 3]);
            // 24 arrived at 10.3 ms: the ACK is due at 11.3 ms.
            assert_eq!(rx.delack_deadline, Some(us(11_300)));
            assert!(!rx.sack_compress_due(us(11_299)));
            assert!(rx.sack_compress_due(us(11_300)));
            out.clear();
            rx.on_delack(us(11_300), &mut out);
            assert_eq!(acks(&out), vec![20]);
            assert_eq!(rx.delack_deadline, None);
            // The next out-of-order segment, for the same cumulative ACK,
            // is held again (its three went at once already).
            out.clear();
            arrives(&mut rx, us(12_000), 31, &mut out);
            assert!(out.is_empty());
            assert_eq!(rx.delack_deadline, Some(us(13_000)));
        }
    }

    /// The retransmission of 20 fills the hole: its ACK goes at once and
    /// takes the held ones with it (no timer left); a later loss counts
    /// its three again for the new cumulative ACK.
    #[test]
    fn an_ack_sent_takes_the_held_ones() {
        let mut rx = receiver(true);
        let mut out = Vec::new();
        for s in 21..=26 {
            arrives(&mut rx, us(10_000 + 100 * (s - 21)), s, &mut out);
        }
        assert_eq!(out.len(), 3);
        out.clear();
        resent(&mut rx, us(10_800), 20, &mut out);
        assert_eq!(acks(&out), vec![27]);
        assert_eq!(rx.delack_deadline, None);
        assert!(!rx.sack_compress_due(us(20_000)));
        out.clear();
        for s in 28..=32 {
            arrives(&mut rx, us(20_000 + 100 * (s - 28)), s, &mut out);
        }
        assert_eq!(acks(&out), vec![27; 3]);
    }

    /// A segment that moves the cumulative ACK by one and leaves a hole
    /// above goes at once as the first of the three for its new cumulative
    /// ACK: two more go at once, then the rest are held. One that moves it
    /// by two goes at once for that ("more than one full frame") and leaves
    /// the count: three more go at once.
    #[test]
    fn a_partial_fill_counts_as_the_first_of_three() {
        for (lost, fill, acked, more) in [([20, 21], 20, 21, 2), ([20, 22], 20, 22, 3)] {
            let mut rx = receiver(true);
            let mut out = Vec::new();
            let held: Vec<u64> = (21..26).filter(|s| !lost.contains(s)).collect();
            for &s in &held {
                arrives(&mut rx, us(10_000 + 100 * s), s, &mut out);
            }
            assert_eq!(acks(&out), vec![20; 3]);
            out.clear();
            resent(&mut rx, us(13_000), fill, &mut out);
            assert_eq!(acks(&out), vec![acked]);
            out.clear();
            for s in 26..=31 {
                arrives(&mut rx, us(13_100 + 100 * (s - 26)), s, &mut out);
            }
            assert_eq!(acks(&out), vec![acked; more], "{lost:?}");
        }
    }

    /// The 45th ACK held in a row goes at once (`tcp_comp_sack_nr`).
    #[test]
    fn at_most_44_held_in_a_row() {
        let mut rx = receiver(true);
        let mut out = Vec::new();
        for s in 21..=68 {
            arrives(&mut rx, us(10_000 + (s - 21)), s, &mut out);
        }
        // 21-23 at once, 24-67 held (44), 68 at once.
        assert_eq!(acks(&out), vec![20; 4]);
        assert_eq!(rx.delack_deadline, None);
    }
}
