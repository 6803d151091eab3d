//! Packets and the arena they live in. The per-packet path never allocates:
//! freed slots are reused, and packets are passed by index.

use crate::units::SimTime;

/// Index of a packet in the [`Arena`].
pub type PktId = u32;

/// IP ECN codepoint (RFC 3168 section 5), with the field's two bits as
/// the discriminant: Not-ECT 00, ECT(1) 01, ECT(0) 10, CE 11.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    /// ECT(1): the L4S identifier of a scalable sender (RFC 9331 section 4.1).
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    /// ECN-capable transport: ECT(0), ECT(1) or already CE. A classic
    /// scheme treats ECT(1) as it treats ECT(0) (RFC 9331 section 5.1).
    #[inline]
    pub fn capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }

    /// The L4S identifier: ECT(1) or CE (RFC 9331 section 5.1), the
    /// packets a DualQ classifier sends to its L queue.
    #[inline]
    pub fn l4s(self) -> bool {
        self as u8 & 1 == 1
    }

    /// The codepoint's index in per-codepoint counters: its two bits.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The codepoint's name in counters: `not_ect`, `ect1`, `ect0`, `ce`.
    pub fn name(self) -> &'static str {
        match self {
            Ecn::NotEct => "not_ect",
            Ecn::Ect1 => "ect1",
            Ecn::Ect0 => "ect0",
            Ecn::Ce => "ce",
        }
    }
}

/// TCP flag bits and simulator annotations.
pub mod flags {
    pub const SYN: u8 = 1;
    pub const ACK: u8 = 2;
    pub const FIN: u8 = 4;
    /// ECN-Echo (RFC 3168).
    pub const ECE: u8 = 8;
    /// Congestion Window Reduced (RFC 3168).
    pub const CWR: u8 = 16;
    /// Data: this segment is a retransmission. ACK: the segment that
    /// triggered it was one (so Karn's rule can skip the RTT sample).
    pub const RETX: u8 = 32;
    /// A data segment (as opposed to a pure ACK or a control segment).
    pub const DATA: u8 = 64;
    /// A client's request (web): an ACK carrying the request's bytes.
    pub const REQ: u8 = 128;
    /// On a data segment (with [`DATA`]), PSH: the last segment of a Linux
    /// sender's TSO/GSO packet (`tcp.psh`). The bit is [`REQ`]'s, which a
    /// segment without data alone carries.
    pub const PSH: u8 = REQ;
}

/// What a packet of `size` bytes is, by its flags, as the event trace names
/// it: `syn`, `syn-ack`, `fin` (a FIN or FIN/ACK), `request` (a web client's
/// request), `data` (a data segment, a retransmission or a UDP datagram) or
/// `ack` (a pure ACK; a server's ACK of a request is `REQ`-flagged too, and
/// told from the request by its size, a bare header).
pub fn kind_name(f: u8, size: u32) -> &'static str {
    if f & flags::SYN != 0 {
        if f & flags::ACK != 0 {
            "syn-ack"
        } else {
            "syn"
        }
    } else if f & flags::FIN != 0 {
        "fin"
    } else if f & flags::DATA != 0 {
        "data"
    } else if f & flags::REQ != 0 && size > crate::scenario::HEADER_BYTES {
        "request"
    } else {
        "ack"
    }
}

/// One packet on the wire.
#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    /// Size on the wire, bytes.
    pub size: u32,
    /// Flow identifier.
    pub flow: u32,
    /// Data: segment number. ACK: cumulative acknowledgement (next expected segment).
    pub seq: u64,
    /// Data: time sent. ACK: echo of the triggering data segment's send time.
    pub ts: SimTime,
    /// When it entered its current queue.
    pub enq_time: SimTime,
    /// Where the link it is on or queued at lies in the flat array of
    /// every route's links (`Routes::link_at`): the next link is at
    /// `pos + 1` (an end mark after the route's last link).
    pub pos: u32,
    /// Bit 0, [`Packet::dir`]: 0 on its flow's data route (sender to
    /// receiver), 1 on the route back: the route's index is `2 * flow +
    /// dir` ([`Packet::route`]). Bits 1-7, [`Packet::label`]: its flow's
    /// hash label ([`Packet::pack_dir`]).
    pub dir_label: u8,
    /// Connection number of the flow (wrapping): a packet of an earlier
    /// connection of the same flow (web transfers) is recognised as stale.
    pub conn: u8,
    pub flags: u8,
    pub ecn: Ecn,
}

// Five packets in four cache lines of the arena; a field more would cost a sixth of them.
const _: () = assert!(std::mem::size_of::<Packet>() == 40);

impl Packet {
    /// Index of its route (see `World::routes`): even for data, odd back.
    #[inline]
    pub fn route(&self) -> usize {
        2 * self.flow as usize + self.dir() as usize
    }

    /// 0 on its flow's data route, 1 on the route back.
    #[inline]
    pub fn dir(&self) -> u8 {
        self.dir_label & 1
    }

    /// Which of its flow's hashes a flow-hashing queue files it by: the
    /// sender's count of retransmission timeouts modulo 128 with
    /// `tcp.txrehash` (a new hash at each, as Linux's `sk_txhash`), else 0.
    #[inline]
    pub fn label(&self) -> u8 {
        self.dir_label >> 1
    }

    /// The key a flow-hashing queue hashes: the flow, and its label above
    /// the flow's 32 bits (label 0: the flow id alone).
    #[inline]
    pub fn hash_key(&self) -> u64 {
        u64::from(self.flow) | u64::from(self.label()) << 32
    }

    /// [`Packet::dir_label`] of direction `dir` (0 or 1) and hash label
    /// `label` (its low 7 bits).
    #[inline]
    pub fn pack_dir(dir: u8, label: u8) -> u8 {
        dir | (label << 1)
    }

    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Packet storage. Freed slots are reused: at once (the most recently
/// freed first) in a small world, whose packets stay in the caches; in a
/// large one, in the order of the slots, as a cursor goes round the arena
/// (kept at least twice as large as the packets alive), so that packets
/// made at about the same time lie next to each other and the events of
/// one instant read a few adjacent cache lines rather than one line each.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    live: Vec<bool>,
    free: Vec<PktId>,
    in_use: usize,
    peak: usize,
    /// Slots are taken in order (see above); `next` is where the search
    /// for a free one starts.
    in_order: bool,
    next: usize,
}

impl Arena {
    pub fn with_capacity(n: usize) -> Arena {
        Arena {
            slots: Vec::with_capacity(n),
            live: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            ..Arena::default()
        }
    }

    /// An arena that takes its slots in order (for large worlds; see [`Arena`]).
    pub fn in_order(n: usize) -> Arena {
        Arena {
            in_order: true,
            ..Arena::with_capacity(n)
        }
    }

    #[inline(always)]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.in_use += 1;
        self.peak = self.peak.max(self.in_use);
        if self.in_order {
            return self.alloc_in_order(p);
        }
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            self.live[id as usize] = true;
            id
        } else {
            self.slots.push(p);
            self.live.push(true);
            (self.slots.len() - 1) as PktId
        }
    }

    /// Out of line: the free list's path stays small enough to inline.
    #[inline(never)]
    fn alloc_in_order(&mut self, p: Packet) -> PktId {
        if 2 * self.in_use > self.slots.len() {
            // At most half full, so that the search below is short: the
            // cursor goes on in the new half.
            let n = (2 * self.slots.len()).max(1024);
            self.next = self.slots.len();
            // Advised before the new slots are written (see `crate::mem`).
            self.slots.reserve_exact(n - self.slots.len());
            crate::mem::advise_huge(&self.slots);
            self.slots.resize(n, Packet::default());
            self.live.resize(n, false);
        }
        loop {
            let i = self.next;
            self.next = if i + 1 == self.slots.len() { 0 } else { i + 1 };
            if !self.live[i] {
                self.slots[i] = p;
                self.live[i] = true;
                return i as PktId;
            }
        }
    }

    #[inline]
    pub fn free(&mut self, id: PktId) {
        debug_assert!(self.live[id as usize], "double free of packet {id}");
        self.live[id as usize] = false;
        self.in_use -= 1;
        if !self.in_order {
            self.free.push(id);
        }
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Prefetch packet `id` (both cache lines it may straddle).
    #[inline]
    pub fn prefetch(&self, id: PktId) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::mem::prefetch_all(p);
        }
    }

    /// Packets currently alive.
    pub fn in_use(&self) -> usize {
        self.in_use
    }

    /// Every live packet.
    pub fn iter_live(&self) -> impl Iterator<Item = &Packet> {
        self.slots
            .iter()
            .zip(&self.live)
            .filter(|(_, l)| **l)
            .map(|(p, _)| p)
    }

    /// The largest number of packets alive at once.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};

    /// The codepoints' bits, ECN capability and the L4S identifier (RFC
    /// 3168 section 5, RFC 9331 section 5.1).
    #[test]
    fn codepoints() {
        let all = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce];
        let idx: Vec<usize> = all.iter().map(|e| e.index()).collect();
        assert_eq!(idx, vec![0, 1, 2, 3]);
        let capable: Vec<bool> = all.iter().map(|e| e.capable()).collect();
        assert_eq!(capable, vec![false, true, true, true]);
        let l4s: Vec<bool> = all.iter().map(|e| e.l4s()).collect();
        assert_eq!(l4s, vec![false, true, false, true]);
        assert_eq!(Ecn::Ect1.name(), "ect1");
        // The codepoint fits the packet's padding: still 40 bytes.
        assert_eq!(std::mem::size_of::<Packet>(), 40);
    }

    /// The event trace's names of packets, by their flags.
    #[test]
    fn kind_names() {
        use flags::*;
        assert_eq!(kind_name(SYN, 40), "syn");
        assert_eq!(kind_name(SYN | ACK | ECE, 40), "syn-ack");
        assert_eq!(kind_name(FIN | ACK, 40), "fin");
        assert_eq!(kind_name(ACK | REQ, 340), "request");
        assert_eq!(kind_name(ACK | REQ, 40), "ack");
        assert_eq!(kind_name(DATA | RETX | CWR, 1500), "data");
        assert_eq!(kind_name(ACK | ECE | RETX, 40), "ack");
    }

    /// The direction byte carries the hash label above the direction: the
    /// route and the direction read as without it, and the hash key is the
    /// flow alone at label 0.
    #[test]
    fn the_hash_label_rides_above_the_direction() {
        let p = Packet {
            flow: 7,
            dir_label: Packet::pack_dir(1, 5),
            ..Packet::default()
        };
        assert_eq!((p.dir(), p.label(), p.route()), (1, 5, 15));
        assert_eq!(p.hash_key(), 7 | 5 << 32);
        let q = Packet {
            flow: 7,
            dir_label: Packet::pack_dir(0, 127),
            ..Packet::default()
        };
        assert_eq!((q.dir(), q.label(), q.route()), (0, 127, 14));
        let r = Packet {
            flow: 7,
            ..Packet::default()
        };
        assert_eq!(r.hash_key(), 7);
    }

    /// Both ways of reusing slots hand out distinct live slots, keep the
    /// packets intact, and report the same peak of packets alive at once;
    /// in order, slots are taken in increasing order between wraps.
    #[test]
    fn in_order_arena_matches_the_free_list() {
        let mut rng = Rng::new(3, Stream::Topology);
        let (mut a, mut b) = (Arena::with_capacity(0), Arena::in_order(0));
        let (mut live_a, mut live_b) = (Vec::new(), Vec::new());
        let mut last = None;
        let mut wraps = 0;
        for i in 0..50_000u64 {
            if live_a.is_empty() || rng.uniform() < 0.55 - (i / 10_000) as f64 * 0.03 {
                let p = Packet {
                    seq: i,
                    ..Packet::default()
                };
                live_a.push(a.alloc(p));
                let id = b.alloc(p);
                if last.is_some_and(|l| id <= l) {
                    wraps += 1;
                }
                last = Some(id);
                live_b.push(id);
            } else {
                let k = rng.uniform_u64(0, live_a.len() as u64 - 1) as usize;
                let (x, y) = (live_a.swap_remove(k), live_b.swap_remove(k));
                assert_eq!(a.get(x).seq, b.get(y).seq);
                a.free(x);
                b.free(y);
            }
            assert_eq!(a.in_use(), b.in_use());
        }
        let mut ids = live_b.clone();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), live_b.len(), "a slot handed out twice");
        assert_eq!(a.peak(), b.peak());
        assert!(b.peak() > 1000, "peak {}", b.peak());
        assert!(wraps > 5 && wraps < 1000, "{wraps} wraps");
    }
}
