//! Linux's delayed-ACK timer and quick-ACK mode at the receiver
//! (`tcp.delack_timer = "linux"`; `tcp_event_data_recv`,
//! `tcp_send_delayed_ack`, `tcp_incr_quickack`, `tcp_dec_quickack_mode`
//! in `tcp_input.c` and `tcp_output.c`).
//!
//! RFC 1122 and RFC 5681 let a receiver hold an ACK for one segment up to
//! 500 ms; aqmlab's fixed rule holds it `delack_timeout`. Linux adapts the
//! wait (the ACK timeout, `ato`) to how data arrives, and acknowledges
//! every segment while in quick-ACK mode:
//!
//! - **ato**, from `delack_timeout` (Linux's `TCP_ATO_MIN`, 40 ms) on the
//!   first data segment; on each later in-order segment, with m the time
//!   since the last one: m <= ato_min / 2 pulls ato toward ato_min
//!   (ato / 2 + ato_min / 2); ato_min / 2 < m < ato sets ato / 2 + m (at
//!   most the receiver's RTO), so that a steady gap m gives ato = 2 m; a
//!   longer m leaves it.
//! - **The timer**: armed for the first segment held, at ato, at most the
//!   receiver's smoothed RTT (at least ato_min) or 500 ms without one.
//!   When it fires with a segment held, the wait was too short: ato
//!   doubles, at most the receiver's RTO ("delayed ACK missed").
//! - **Quick-ACK mode**: every segment acknowledged at once for the next
//!   min(16, receive window / 2) ACKs (at least 2; the window is Linux's
//!   first, what an unscaled field holds, at the first data segment, so 16
//!   then): from the first data segment, after a gap longer than the
//!   receiver's RTO (the sender stalled), and after a segment wholly below
//!   `rcv_nxt` arrives (a retransmission the receiver had: its ACK may have
//!   been lost, `tcp_enter_quickack_mode`, which also resets ato). Leaving
//!   it resets ato to ato_min.
//! - **A growing window**: with the autotuned window (`rcvbuf.rs`) a
//!   segment that raises the window's ceiling is acknowledged at once
//!   (`tcp_grow_window` sets `icsk_ack.quick |= 1`), so in slow start,
//!   while the window grows, every segment is.
//!
//! The receiver's RTT is the flow's first RTT sample (the handshake's when
//! there is one), kept: a Linux receiver's `srtt_us` and RTO come from
//! its handshake and do not change while it only acknowledges. Until that
//! sample the wait is at most 500 ms and the RTO 1 s.

use super::TcpFlow;
use crate::packet::Ecn;
use crate::units::SimTime;

/// Linux's `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;
/// The largest window an unscaled field carries, bytes: Linux's first
/// receive window (`tcp_select_initial_window`, at most `U16_MAX`).
const FIRST_WINDOW_BYTES: u32 = 65_535;
/// The longest wait without an RTT (`HZ / 2` in `tcp_send_delayed_ack`).
const DELACK_MAX: SimTime = SimTime::from_millis(500);

/// The receiver's delayed-ACK state (Linux's `icsk_ack`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ato {
    /// The ACK timeout; zero before the first data segment.
    ato: SimTime,
    /// When the last in-order data segment arrived (`lrcvtime`).
    last: SimTime,
    /// ACKs still to send at once (`quick`).
    quick: u32,
    /// The receiver's RTT (see the module's head); zero until known.
    rtt: SimTime,
    /// An ECN-capable or CE data segment has arrived (`TCP_ECN_SEEN`).
    ecn_seen: bool,
}

impl Ato {
    /// The receiver's RTT (see the module's head), if known.
    pub fn rtt(&self) -> Option<SimTime> {
        (self.rtt != SimTime::ZERO).then_some(self.rtt)
    }

    /// The receiver's RTO from its one RTT sample, as RFC 6298's first
    /// (RTTVAR = RTT / 2) with Linux's 200 ms floor on the variance term;
    /// 1 s before it (`TCP_TIMEOUT_INIT`).
    fn rto(&self) -> SimTime {
        if self.rtt == SimTime::ZERO {
            return SimTime::from_secs(1);
        }
        SimTime(self.rtt.0 + (2 * self.rtt.0).max(SimTime::from_millis(200).0))
    }
}

/// `tcp_incr_quickack`: min(16, receive window / 2) ACKs to come at
/// once, at least 2; the window `rwnd`, or at the first segment
/// Linux's first window, what an unscaled field holds (45 segments of
/// 1448 bytes: 16 quick ACKs).
fn quickacks(tcp: &crate::scenario::TcpSpec, first: bool) -> u32 {
    let wnd = if first {
        (FIRST_WINDOW_BYTES / tcp.mss().max(1)).min(tcp.rwnd)
    } else {
        tcp.rwnd
    };
    (wnd / 2).clamp(2, MAX_QUICKACKS)
}

impl TcpFlow {
    fn ato_min(&self) -> SimTime {
        self.cfg.tcp.delack_timeout
    }

    /// An in-order data segment arrived at `now` (`tcp_event_data_recv`).
    pub(super) fn ato_in_order(&mut self, now: SimTime) {
        let min = self.ato_min();
        let (has_rtt, srtt_ns) = (self.has_rtt, self.srtt_ns);
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        let tcp = &self.cfg.tcp;
        let a = &mut lr.ato;
        if a.rtt == SimTime::ZERO && has_rtt {
            a.rtt = SimTime::from_nanos(srtt_ns as u64);
        }
        if a.ato == SimTime::ZERO {
            a.quick = a.quick.max(quickacks(tcp, true));
            a.ato = min;
        } else {
            let m = now - a.last;
            let rto = a.rto();
            if m.0 <= min.0 / 2 {
                a.ato = SimTime(a.ato.0 / 2 + min.0 / 2);
            } else if m < a.ato {
                a.ato = SimTime(a.ato.0 / 2 + m.0).min(rto);
            } else if m > rto {
                a.quick = a.quick.max(quickacks(tcp, false));
            }
        }
        a.last = now;
    }

    /// A segment wholly below `rcv_nxt` arrived: quick-ACK mode
    /// (`tcp_enter_quickack_mode`).
    pub(super) fn ato_duplicate(&mut self) {
        self.ato_quickack(MAX_QUICKACKS);
    }

    /// Quick-ACK mode for at most `most` ACKs, ato back to its least
    /// (`tcp_enter_quickack_mode`).
    fn ato_quickack(&mut self, most: u32) {
        let (min, quick) = (self.ato_min(), quickacks(&self.cfg.tcp, false).min(most));
        if let Some(lr) = self.lr.as_deref_mut() {
            lr.ato.quick = lr.ato.quick.max(quick);
            lr.ato.ato = min;
        }
    }

    /// The ECN codepoint `ecn` of an arriving data segment of a classic-ECN
    /// flow (`__tcp_ecn_check_ce`), after its ato update: the first CE mark
    /// since the sender's last CWR (`starts_echo`: "better not delay acks,
    /// sender can have a very low cwnd"), and a segment without ECT after
    /// ECT was seen ("probably a retransmit") each bring quick-ACK mode for
    /// two ACKs.
    pub(super) fn ato_ecn(&mut self, ecn: Ecn, starts_echo: bool) {
        let Some(lr) = self.lr.as_deref_mut() else {
            return;
        };
        let quick = starts_echo || (ecn == Ecn::NotEct && lr.ato.ecn_seen);
        lr.ato.ecn_seen |= ecn != Ecn::NotEct;
        if quick {
            self.ato_quickack(2);
        }
    }

    /// A segment raised the receive window's ceiling: one quick ACK more
    /// (`tcp_grow_window`'s `icsk_ack.quick |= 1`).
    pub(super) fn ato_window_grew(&mut self) {
        if let Some(lr) = self.lr.as_deref_mut() {
            lr.ato.quick |= 1;
        }
    }

    /// Whether the receiver acknowledges at once (quick-ACK mode).
    pub(super) fn ato_quick(&self) -> bool {
        self.lr.as_deref().is_some_and(|lr| lr.ato.quick > 0)
    }

    /// An ACK went out (`tcp_dec_quickack_mode`).
    pub(super) fn ato_ack_sent(&mut self) {
        let min = self.ato_min();
        if let Some(lr) = self.lr.as_deref_mut() {
            if lr.ato.quick > 0 {
                lr.ato.quick -= 1;
                if lr.ato.quick == 0 {
                    lr.ato.ato = min;
                }
            }
        }
    }

    /// The timer sent the held ACK: the wait was too short for the next
    /// segment, so ato doubles, at most the receiver's RTO
    /// (`tcp_delack_timer_handler`: "delayed ACK missed").
    pub(super) fn ato_missed(&mut self) {
        if let Some(lr) = self.lr.as_deref_mut() {
            let rto = lr.ato.rto();
            lr.ato.ato = SimTime(lr.ato.ato.0.saturating_mul(2)).min(rto);
        }
    }

    /// How long the first segment held waits (`tcp_send_delayed_ack`).
    pub(super) fn ato_timeout(&self) -> SimTime {
        let min = self.ato_min();
        let Some(lr) = self.lr.as_deref() else {
            return min;
        };
        let ato = lr.ato.ato.max(min);
        if ato <= min {
            return ato;
        }
        let most = if lr.ato.rtt == SimTime::ZERO {
            DELACK_MAX
        } else {
            lr.ato.rtt.max(min).min(DELACK_MAX)
        };
        ato.min(most)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Seg, TcpConfig, TcpFlow};
    use crate::packet::{flags, Ecn};
    use crate::scenario::TcpSpec;
    use crate::units::SimTime;

    /// A receiver of the linux profile's delayed ACKs (40 ms) with Linux's
    /// timer; `rwnd` segments of window.
    fn rx(rwnd: u32) -> TcpFlow {
        let mut t = TcpSpec {
            sack: true,
            delayed_ack: true,
            delack_timeout: SimTime::from_millis(40),
            rwnd,
            ..TcpSpec::default()
        };
        t.set_delack_linux(true);
        TcpFlow::new(TcpConfig::from_spec(&t, false, false))
    }

    fn us(t: SimTime) -> u64 {
        t.0 / 1_000
    }

    /// Segment `seq` arrives at `ms`; returns how many ACKs went out.
    fn seg(r: &mut TcpFlow, ms: f64, seq: u64) -> usize {
        seg_ecn(r, ms, seq, flags::DATA, Ecn::NotEct).len()
    }

    /// Segment `seq` with flags `f` and codepoint `ecn` arrives at `ms`;
    /// returns the ACKs that went out.
    fn seg_ecn(r: &mut TcpFlow, ms: f64, seq: u64, f: u8, ecn: Ecn) -> Vec<Seg> {
        let mut out: Vec<Seg> = Vec::new();
        let now = SimTime::from_secs_f64(ms / 1e3);
        r.on_data(now, seq, f, ecn, now, &mut out);
        out
    }

    /// The first 16 segments are acknowledged at once (Linux's first
    /// window, 65 segments of 1000 bytes: 16 quick ACKs at most), whatever
    /// their gaps. Then a steady gap of 30 ms (between 20 ms and ato)
    /// moves ato to ato / 2 + 30: 50, 55, 57.5 ms; a lone segment waits
    /// that long, and when the timer fires ato doubles (115 ms); a gap
    /// longer than ato (210 ms) leaves it; with no RTT known the wait is at
    /// most 500 ms.
    #[test]
    fn the_wait_follows_the_gaps_and_doubles_when_missed() {
        let mut r = rx(100);
        for i in 0..16u64 {
            assert_eq!(seg(&mut r, 100.0 * i as f64, i), 1, "quick ACK {i}");
        }
        assert_eq!(seg(&mut r, 1530.0, 16), 0);
        assert_eq!(r.delack_deadline.map(us), Some(1_580_000)); // ato 50
        assert_eq!(seg(&mut r, 1560.0, 17), 1); // the second segment: ato 55
        assert_eq!(seg(&mut r, 1590.0, 18), 0);
        assert_eq!(r.delack_deadline.map(us), Some(1_647_500)); // ato 57.5
        let mut out = Vec::new();
        r.on_delack(SimTime::from_micros(1_647_500), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(seg(&mut r, 1800.0, 19), 0);
        assert_eq!(r.delack_deadline.map(us), Some(1_915_000)); // ato 115
    }

    /// With the autotuned window (`rcvbuf.rs`) a segment that raises the
    /// window's ceiling is acknowledged at once, as Linux's
    /// `tcp_grow_window` asks (`icsk_ack.quick |= 1`): a receiver whose
    /// window grows acknowledges every segment, one whose window has
    /// reached the clamp every second. 1460-byte segments: the ceiling
    /// starts at the first window, 64 240 bytes, and the first six
    /// segments raise it to the clamp, 81 484 (the buffer's window less
    /// the one segment Linux reserves); each of those arrives in quick-ACK
    /// mode (16 quick ACKs from the first segment) and adds one quick ACK
    /// to it (16 | 1), so 22 segments are acknowledged one by one, as in a
    /// capture of the kernel's receiver, then every second.
    #[test]
    fn a_growing_window_is_acknowledged_segment_by_segment() {
        let mut r = rx(100_000);
        r.cfg.tcp.set_moderate_rcvbuf(true);
        r.lr.as_deref_mut().unwrap().rb = Some(super::super::rcvbuf::RcvBuf::new(1460, true));
        let acks: Vec<usize> = (0..30u64).map(|i| seg(&mut r, 0.1 * i as f64, i)).collect();
        assert_eq!(acks[..22], [1; 22]);
        assert_eq!(acks[22..], [0, 1, 0, 1, 0, 1, 0, 1]);
        // Without the autotuned window: the 16 quick ACKs, then every second.
        let mut r = rx(100_000);
        let acks: Vec<usize> = (0..20u64).map(|i| seg(&mut r, 0.1 * i as f64, i)).collect();
        assert_eq!(acks[..16], [1; 16]);
        assert_eq!(acks[16..], [0, 1, 0, 1]);
    }

    /// A segment the receiver already has (its ACK may have been lost)
    /// and a gap longer than the receiver's RTO (1 s before an RTT is
    /// known) each bring quick-ACK mode: min(16, rwnd / 2) ACKs at once,
    /// here 3 with a window of 6 segments (the duplicate's own ACK the
    /// first); then a segment is held again.
    #[test]
    fn a_duplicate_and_a_stall_bring_quick_acks() {
        let mut r = rx(6);
        for i in 0..3 {
            assert_eq!(seg(&mut r, 10.0 * i as f64, i), 1, "quick ACK {i}");
        }
        assert_eq!(seg(&mut r, 30.0, 3), 0);
        // A duplicate: quick mode, its own ACK the first of three.
        assert_eq!(seg(&mut r, 35.0, 1), 1);
        assert_eq!(seg(&mut r, 40.0, 4), 1);
        assert_eq!(seg(&mut r, 50.0, 5), 1);
        assert_eq!(seg(&mut r, 60.0, 6), 0);
        assert_eq!(seg(&mut r, 70.0, 7), 1);
        // 1.13 s after the last segment: three at once again.
        for (i, ms) in [(8, 1_200.0), (9, 1_210.0), (10, 1_220.0)] {
            assert_eq!(seg(&mut r, ms, i), 1, "quick ACK after the stall, {i}");
        }
        assert_eq!(seg(&mut r, 1_230.0, 11), 0);
    }

    /// A classic-ECN flow (`__tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`),
    /// past the first quick ACKs, each segment listed with the ACKs it
    /// draws (`E`: with ECE, `A`: without, `-`: held). Every second segment
    /// is acknowledged as ever; besides, the first CE mark brings two ACKs
    /// at once (its own and the next), a second mark before CWR none, the
    /// CWR segment its own ACK at once (the echo over), and a segment
    /// without ECT after ECT (a retransmission) two at once. Without ECN
    /// every second segment only, none with ECE.
    #[test]
    fn ecn_marks_cwr_and_retransmissions_bring_quick_acks() {
        let (d, c, e, ce, not) = (
            flags::DATA,
            flags::DATA | flags::CWR,
            Ecn::Ect0,
            Ecn::Ce,
            Ecn::NotEct,
        );
        let segs = [
            (d, e),
            (d, e),
            (d, ce),
            (d, e),
            (d, ce),
            (d, e),
            (c, e),
            (d, e),
            (d, e),
            (d, not),
            (d, e),
            (d, e),
        ];
        for (ecn_on, want) in [(true, "-AEE-EA-AAA-"), (false, "-A-A-A-A-A-A")] {
            let mut r = rx(6);
            r.cfg.tcp.ecn = ecn_on;
            for i in 0..3 {
                assert_eq!(seg(&mut r, 10.0 * i as f64, i), 1);
            }
            let got: String = segs
                .iter()
                .enumerate()
                .map(|(i, &(f, ecn))| {
                    let acks = seg_ecn(&mut r, 30.0 + i as f64, 3 + i as u64, f, ecn);
                    match acks.as_slice() {
                        [] => '-',
                        [a] if a.flags & flags::ECE != 0 => 'E',
                        [_] => 'A',
                        _ => '2',
                    }
                })
                .collect();
            assert_eq!(got, want, "ecn {ecn_on}");
        }
    }
}
