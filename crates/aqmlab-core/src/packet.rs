//! Packets and the arena they live in. The per-packet path never allocates:
//! freed slots are reused, and packets are passed by index.

use crate::units::SimTime;

/// Index of a packet in the [`Arena`].
pub type PktId = u32;

/// IP ECN codepoint (RFC 3168 section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ce,
}

impl Ecn {
    /// ECN-capable transport: ECT or already CE.
    #[inline]
    pub fn capable(self) -> bool {
        !matches!(self, Ecn::NotEct)
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
    /// Route index (see `World::routes`).
    pub route: u32,
    /// Index of the link it is on or queued at, within its route.
    pub hop: u8,
    /// Connection number of the flow (wrapping): a packet of an earlier
    /// connection of the same flow (web transfers) is recognised as stale.
    pub conn: u8,
    pub flags: u8,
    pub ecn: Ecn,
}

impl Packet {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Packet storage with a free list.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    live: Vec<bool>,
    free: Vec<PktId>,
    in_use: usize,
}

impl Arena {
    pub fn with_capacity(n: usize) -> Arena {
        Arena {
            slots: Vec::with_capacity(n),
            live: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
            in_use: 0,
        }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.in_use += 1;
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

    #[inline]
    pub fn free(&mut self, id: PktId) {
        debug_assert!(self.live[id as usize], "double free of packet {id}");
        self.live[id as usize] = false;
        self.in_use -= 1;
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
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

    /// Slots ever allocated (the arena's high-water mark).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}
