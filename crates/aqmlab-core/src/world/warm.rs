//! Warming the caches in worlds too large for them: before the events of
//! a bucket are processed, the packets, routes, links and flows they will
//! touch are prefetched, so that their misses overlap.

use super::World;
use crate::net::topology::ROUTE_END;
use crate::sim::Event;

/// What [`World::warm`] has learnt of a packet so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct WarmPkt {
    route: u32,
    flow: u32,
    /// Where its current link lies ([`Routes::link_at`]).
    pos: u32,
    /// The next link and the one after it (`u32::MAX`: none; `next` is
    /// none at the last hop).
    next: u32,
    after: u32,
    /// It reaches its endpoint in this event, which sends back on `back`.
    ends: bool,
    back: u32,
}

impl World {
    /// Load what the events of the bucket just taken up will touch: their
    /// packets, the routes, links and flows these lead to, and (on
    /// monitored links that do not plan their departures, CoDel's and
    /// FQ-CoDel's) the packets at the head of the queue, which depart
    /// within the bucket, with the links they go on to.
    ///
    /// At 10^4 flows and more the per-flow state does not fit in the caches,
    /// and each event would wait for several misses in turn (packet, then
    /// route, then link or flow). Here the loads of all the bucket's events
    /// are independent of each other, so the processor overlaps their
    /// misses; the events then find their data in the caches. Only speed
    /// changes: nothing is written.
    #[inline(never)]
    pub(super) fn warm(&mut self) {
        use crate::mem::prefetch;
        let mut ids = std::mem::take(&mut self.warm_ids);
        ids.clear();
        let mut txl = std::mem::take(&mut self.warm_links);
        txl.clear();
        let arena = &self.arena;
        let routes = &self.routes;
        // Each pass asks for lines that do not depend on each other
        // (prefetches, which the processor overlaps without waiting for
        // them), then the next pass reads what it needs of them; what a
        // pass learns is kept for the next (in the L1 cache).
        // 0: the packets that arrive; the links that end a transmission
        // (those that do not plan their departures); the flows whose
        // timers expire.
        for e in self.events.upcoming() {
            match e {
                Event::Arrive(id) => {
                    arena.prefetch(id);
                    ids.push(id);
                }
                Event::TxDone(l) => {
                    self.links[l as usize].prefetch();
                    txl.push(l);
                }
                Event::RtoTimer(f) | Event::DelAckTimer(f) => {
                    let fl = &self.flows[f as usize];
                    prefetch(&fl.rto_event);
                    prefetch(&fl.delack_event);
                }
                // A pacing flow's sender sends.
                Event::PaceTimer(f) => self.flows[f as usize].prefetch_sender(),
                _ => {}
            }
        }
        // The packet at the head of each such link's queue, which starts next.
        for &l in &txl {
            if let Some(id) = self.links[l as usize].head() {
                arena.prefetch(id);
                ids.push(id);
            }
        }
        for &(l, _) in &self.monitored {
            let link = &self.links[l];
            for id in link
                .waiting()
                .take(link.departures_per_bucket(self.events.bucket_ns()))
            {
                arena.prefetch(id);
                ids.push(id);
            }
        }
        // 1: the packets; the link ids of the rest of each one's route.
        let mut pk = std::mem::take(&mut self.warm_pkts);
        pk.clear();
        pk.extend(ids.iter().map(|&id| {
            let p = arena.get(id);
            routes.prefetch_at(p.pos + 1);
            WarmPkt {
                route: p.route() as u32,
                flow: p.flow,
                pos: p.pos,
                next: u32::MAX,
                after: u32::MAX,
                ends: false,
                back: u32::MAX,
            }
        }));
        // 2: the next link, and the one after it (which the packet may go
        // on to at once); where the packet reaches its endpoint (at the
        // last hop, or after the next link if the endpoint takes packets
        // ahead of time) the flow (its sender for an ACK, its receiver for
        // data) and the start of the route of what it sends back.
        for w in &mut pk {
            let next = routes.link_at(w.pos + 1);
            if next != ROUTE_END {
                w.next = next;
                w.after = routes.link_at(w.pos + 2);
                w.ends = !self.ahead.is_empty() && self.ahead[w.route as usize] == w.pos + 2;
            } else {
                w.ends = true;
            }
            if w.ends {
                let f = w.flow as usize;
                prefetch(&self.tag[f]);
                let fl = &self.flows[f];
                if w.route % 2 == 0 {
                    fl.prefetch_receiver();
                } else {
                    fl.prefetch_sender();
                }
                routes.prefetch_start(w.route as usize ^ 1);
            }
        }
        // 3: the next link, and the link after it if the packet is passed
        // on to it now: when nothing waits at the next, or when the next
        // plans its departures (a bottleneck); at the last hop the route
        // back's links.
        for w in &pk {
            if w.next != u32::MAX {
                let next = &self.links[w.next as usize];
                next.prefetch();
                if w.after != ROUTE_END && (next.planned() || next.nothing_waits()) {
                    self.links[w.after as usize].prefetch_cut_through();
                }
            }
            if w.ends {
                routes.prefetch_links(w.route as usize ^ 1);
            }
        }
        // 4: the first link of the route back (a host's first hop).
        for w in &mut pk {
            if w.ends {
                w.back = routes.link_at(routes.first(w.route as usize ^ 1));
                self.links[w.back as usize].prefetch();
            }
        }
        // 5: where that link's queue will take the packet sent back.
        for w in &pk {
            if w.ends {
                self.links[w.back as usize].prefetch_queue();
            }
        }
        self.warm_pkts = pk;
        self.warm_ids = ids;
        self.warm_links = txl;
    }
}
