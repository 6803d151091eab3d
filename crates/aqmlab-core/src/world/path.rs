//! A packet's way from link to link: offered to the next link of its
//! route (admitted, marked or dropped by the link's AQM), its transmission
//! started when the transmitter is free, passed at once through the
//! cut-through links that follow, dropped, or arriving at the far end of
//! a link, from where it goes on or reaches its flow's endpoint.

use super::{World, NOT_AHEAD};
use crate::aqm::{Aqm, PacketInfo};
use crate::net::link::{Offer, TxResult};
use crate::net::topology::ROUTE_END;
use crate::packet::{flags, PktId};
use crate::sim::Event;
use crate::units::SimTime;

impl World {
    /// A packet reaches the far end of its current link.
    #[inline]
    pub(super) fn arrive(&mut self, id: PktId) {
        let p = *self.arena.get(id);
        let next = self.routes.link_at(p.pos + 1);
        if next != ROUTE_END {
            self.arena.get_mut(id).pos = p.pos + 1;
            self.send_on(next as usize, id);
            return;
        }
        let r = p.route();
        if !self.ahead.is_empty() && self.ahead[r] != NOT_AHEAD {
            self.ahead_pending[r] -= 1;
            self.at_endpoint(id, p);
            if self.ahead_pending[r] == 0 && !self.ahead_held[r].is_empty() {
                self.release_held(r);
            }
            return;
        }
        self.at_endpoint(id, p);
    }

    /// Offer packet `id` to `link` now (the next link of its route).
    #[inline]
    pub(super) fn send_on(&mut self, link: usize, id: PktId) {
        if self.cut_through[link] {
            // A host's first hop (other cut-through links are passed in
            // `pass_cut_through`), passed through now.
            let p = self.arena.get(id);
            let (size, data) = (p.size, p.has(flags::DATA));
            let arrives = self.links[link]
                .pass_through(self.now, size, data)
                .and_then(|t| self.pass_cut_through(id, t));
            match arrives {
                Some(t) => self.deliver(id, t),
                None => self.drop_packet(id),
            }
            return;
        }
        if let Some(o) = self.links[link].observer {
            self.links[o as usize].settle(self.now);
            let p = self.arena.get(id);
            let info = PacketInfo {
                size: p.size,
                ect: p.ecn.capable(),
                ecn: p.ecn,
                flow: p.flow,
                flags: p.flags,
                seq: p.seq,
                enq_time: self.now,
            };
            self.links[o as usize].aqm.observe_reverse(self.now, &info);
        }
        match self.links[link].offer(self.now, id, &mut self.arena) {
            Offer::Dropped => self.drop_packet(id),
            Offer::Accepted => self.kick(link),
            Offer::Planned(t) => match self.pass_cut_through(id, t) {
                Some(t) => self.deliver(id, t),
                None => self.drop_packet(id),
            },
            Offer::Evicted => {
                while let Some(v) = self.links[link].pop_evicted() {
                    self.drop_packet(v);
                }
                self.kick(link);
            }
        }
    }

    /// Start transmissions on a link whose transmitter may be free.
    #[inline(always)]
    pub(super) fn kick(&mut self, l: usize) {
        // A link that waits for its TxDone is busy: the common case at a
        // loaded link, which needs no call.
        if !self.links[l].txdone_pending {
            self.kick_free(l);
        }
    }

    /// [`World::kick`] on a link not waiting for a TxDone.
    #[inline(never)]
    pub(super) fn kick_free(&mut self, l: usize) {
        loop {
            match self.links[l].try_start(self.now, &mut self.arena) {
                Some((id, TxResult::Arrives(t))) => {
                    match self.pass_cut_through(id, t) {
                        Some(t) => self.deliver(id, t),
                        None => self.drop_packet(id),
                    }
                    break;
                }
                Some((id, TxResult::Lost)) => {
                    self.drop_packet(id);
                    break;
                }
                Some((id, TxResult::Dropped)) => self.drop_packet(id),
                None => break,
            }
        }
        let link = &mut self.links[l];
        if link.has_waiting() {
            link.txdone_pending = true;
            let at = link.busy_until();
            self.events.schedule(at, Event::TxDone(l as u32));
        }
    }

    /// A packet reaches the end of its current link at `t`: pass it through
    /// the cut-through links that follow. Returns when it reaches a node
    /// that needs an event, or `None` if a cut-through link dropped it.
    #[inline]
    pub(super) fn pass_cut_through(&mut self, id: PktId, mut t: SimTime) -> Option<SimTime> {
        loop {
            let p = self.arena.get(id);
            let n = self.routes.link_at(p.pos + 1);
            // A dense copy of the flags: the common "no" needs no link.
            if n == ROUTE_END || !self.cut_through[n as usize] {
                return Some(t);
            }
            let (size, data) = (p.size, p.has(flags::DATA));
            t = self.links[n as usize].pass_through(t, size, data)?;
            self.arena.get_mut(id).pos += 1;
        }
    }

    #[inline]
    pub(super) fn drop_packet(&mut self, id: PktId) {
        let p = self.arena.get(id);
        if p.has(flags::DATA) {
            self.flows[p.flow as usize].stats.data_dropped += 1;
        } else if p.has(flags::SYN) {
            let s = &mut self.flows[p.flow as usize].stats;
            if p.has(flags::ACK) {
                s.synack_drops += 1;
            } else {
                s.syn_drops += 1;
            }
        }
        self.arena.free(id);
    }
}
