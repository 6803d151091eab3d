//! Linux's PSH (`tcp.psh`): which data segments a Linux sender that does
//! not pace marks PSH, and the receiver's ACK of such a segment at once.
//!
//! Sender (`tcp_write_xmit` and `__tcp_transmit_skb`,
//! `net/ipv4/tcp_output.c`): what the window lets go at once leaves as
//! TSO/GSO packets cut from `snd_nxt` on, each of at most
//! `tcp_tso_autosize` segments (about 1 ms at Linux's pacing rate, at
//! least `tcp_min_tso_segs` = 2: [`super::pacing::tso_autosize`]; before the
//! first RTT sample the rate is unlimited and a packet is 64 KB). Every
//! packet of two or more segments carries PSH ("to expedite GRO flush at
//! receiver"), which segmentation leaves on its last segment; a packet of
//! one segment carries none. So a window that opens by two sends one
//! packet with PSH on its second segment, one that opens by three the same
//! and a single segment without, unless `tcp_tso_should_defer` holds the
//! single back (`tcp.tso_defer`, [`super::tso_defer`]). Not modelled: a
//! retransmission's own packet (each is sent alone here, without PSH);
//! paced flows (their bursts, `tcp.tso`, carry none).
//!
//! Receiver (`tcp_measure_rcv_mss`, Linux 6.7 and later, and
//! `tcp_cleanup_rbuf`): a full-sized segment with PSH marks the pending
//! ACK as pushed, and when the reading program then empties the socket,
//! which the model's reader does at once, the ACK goes at once, whatever
//! else is pending. Applied to in-order segments (out-of-order ones are
//! acknowledged at once anyway).
//!
//! The bit travels in [`flags::PSH`], which a data segment alone carries
//! (it is `REQ` on a web client's request, which carries no data).

use super::pacing::{linux_rate, tso_autosize, TSO_MAX_BYTES};
use super::{Seg, TcpFlow};
use crate::packet::flags;

/// The new data segments one send lets go, cut into Linux's packets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pieces {
    /// Segments of a packet (0: packets not modelled).
    size: u64,
    /// New segments sent since the last packet ended.
    run: u64,
    /// The packets carry PSH (`tcp.psh`).
    psh: bool,
    /// Linux may hold a packet back (`tcp.tso_defer`).
    defer: bool,
}

impl Pieces {
    /// A new data segment went out as `out`'s last: a full packet ends
    /// with it.
    #[inline]
    pub(super) fn sent(&mut self, out: &mut [Seg]) {
        if self.size == 0 {
            return;
        }
        self.run += 1;
        if self.run == self.size {
            if self.psh {
                mark(out);
            }
            self.run = 0;
        }
    }

    /// The send is over: a last packet of two segments or more, cut short
    /// by the window, ends with `out`'s last segment.
    #[inline]
    pub(super) fn end(self, out: &mut [Seg]) {
        if self.run >= 2 && self.psh {
            mark(out);
        }
    }

    /// The next new segment opens a packet that Linux may defer
    /// (`tcp.tso_defer`, `tso_defer.rs`): `Some(its size goal)`
    /// (`tcp_tso_segs`).
    #[inline]
    pub(super) fn opening(&self) -> Option<u64> {
        (self.defer && self.run == 0).then_some(self.size)
    }
}

fn mark(out: &mut [Seg]) {
    if let Some(s) = out.last_mut() {
        debug_assert!(s.flags & flags::DATA != 0 && s.flags & flags::RETX == 0);
        s.flags |= flags::PSH;
    }
}

impl TcpFlow {
    /// The packets of a send (`tcp.psh`, `tcp.tso_defer`):
    /// `tcp_tso_autosize` segments at Linux's pacing rate now (none for a
    /// flow that paces).
    #[inline(always)]
    pub(super) fn pieces(&self) -> Pieces {
        // A flow that paces keeps its own bursts (`tcp.tso`).
        let cut = !self.cfg.tcp.pacing;
        let (psh, defer) = (cut && self.cfg.tcp.psh(), cut && self.cfg.tcp.tso_defer());
        let size = if !(psh || defer) {
            0
        } else {
            let mss = self.mss();
            match self.srtt() {
                None => (TSO_MAX_BYTES / u64::from(mss.max(1))).max(2),
                Some(srtt) => {
                    let rate = linux_rate(
                        mss,
                        self.cwnd as u64,
                        self.ssthresh as u64,
                        self.outstanding(),
                        srtt,
                    );
                    tso_autosize(rate, mss, 2)
                }
            }
        };
        Pieces {
            size,
            run: 0,
            psh,
            defer,
        }
    }

    /// Whether an in-order data segment with flags `f` asks for its ACK at
    /// once (`tcp.psh`; Linux's pushed ACK).
    #[inline]
    pub(super) fn pushed(&self, f: u8) -> bool {
        f & flags::PSH != 0 && self.cfg.tcp.psh()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{sender, spec};
    use super::super::TcpFlow;
    use super::*;
    use crate::packet::Ecn;
    use crate::scenario::TcpSpec;
    use crate::units::SimTime;

    fn psh_spec() -> TcpSpec {
        let mut t = spec();
        t.set_psh(true);
        t
    }

    fn pushed(out: &[Seg]) -> Vec<u64> {
        out.iter()
            .filter(|s| s.flags & flags::PSH != 0)
            .map(|s| s.seq)
            .collect()
    }

    /// A window of 5 at 100 ms and 960-byte segments: Linux's rate 1.2 x
    /// 5 x 960 / 0.1 s = 57 600 B/s, 56 bytes a millisecond, so packets of
    /// two (`tcp_min_tso_segs`): PSH on segments 1 and 3, none on the
    /// single segment 4 that ends the send.
    #[test]
    fn pairs_carry_psh_on_their_second_segment() {
        let (_, out) = sender(5.0, psh_spec());
        assert_eq!(pushed(&out), vec![1, 3]);
        assert!(out.iter().all(|s| s.flags & flags::DATA != 0));
        // Without the switch no segment carries it.
        let (_, out) = sender(5.0, spec());
        assert!(pushed(&out).is_empty());
    }

    /// A window of 256: 1.2 x 256 x 960 / 0.1 s = 2 949 120 B/s, 2 880
    /// bytes a millisecond, packets of three segments: PSH on 2, 5, ...,
    /// 254; segment 255 leaves alone.
    #[test]
    fn the_packets_grow_with_the_rate() {
        let (_, out) = sender(256.0, psh_spec());
        let want: Vec<u64> = (0..85).map(|k| 3 * k + 2).collect();
        assert_eq!(pushed(&out), want);
    }

    /// An ACK for two segments lets two go, one packet; one that also
    /// grows the window by one lets three go: a packet and a single.
    #[test]
    fn each_send_cuts_its_own_packets() {
        let (mut tx, _) = sender(4.0, psh_spec());
        let mut out = Vec::new();
        tx.on_ack(SimTime::from_millis(100), 2, 0, Ecn::NotEct, &mut out);
        let new: Vec<u64> = out.iter().map(|s| s.seq).collect();
        assert_eq!(new, vec![4, 5]);
        assert_eq!(pushed(&out), vec![5]);
        out.clear();
        tx.cwnd += 1.0;
        tx.on_ack(SimTime::from_millis(101), 4, 0, Ecn::NotEct, &mut out);
        let new: Vec<u64> = out.iter().map(|s| s.seq).collect();
        assert_eq!(new, vec![6, 7, 8]);
        assert_eq!(pushed(&out), vec![7]);
    }

    fn receiver(psh: bool) -> TcpFlow {
        let mut t = TcpSpec {
            delayed_ack: true,
            delack_timeout: SimTime::from_millis(40),
            ..TcpSpec::default()
        };
        t.set_delack_linux(true);
        t.set_psh(psh);
        let mut rx = TcpFlow::new(super::super::TcpConfig::from_spec(&t, false, false));
        // Past the quick ACKs of the connection's start.
        let mut acks = Vec::new();
        for seq in 0..40 {
            rx.on_data(
                SimTime::from_millis(seq),
                seq,
                flags::DATA,
                Ecn::NotEct,
                SimTime::ZERO,
                &mut acks,
            );
        }
        rx
    }

    /// The receiver holds a lone segment, but acknowledges a pushed one at
    /// once, and a segment pushed second as the delayed ACK rule would.
    #[test]
    fn a_pushed_segment_is_acknowledged_at_once() {
        for psh in [false, true] {
            let mut rx = receiver(psh);
            let mut acks = Vec::new();
            let t = SimTime::from_millis(100);
            rx.on_data(t, 40, flags::DATA, Ecn::NotEct, t, &mut acks);
            assert!(acks.is_empty(), "a lone segment is held");
            rx.on_data(t, 41, flags::DATA, Ecn::NotEct, t, &mut acks);
            assert_eq!(acks.len(), 1, "two segments: at once");
            acks.clear();
            rx.on_data(t, 42, flags::DATA | flags::PSH, Ecn::NotEct, t, &mut acks);
            assert_eq!(acks.len(), usize::from(psh), "psh = {psh}");
            if psh {
                assert_eq!(acks[0].seq, 43);
            }
        }
    }
}
