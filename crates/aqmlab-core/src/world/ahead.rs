//! When a packet's arrival at the end of a link is fixed: an arrival
//! event, or (where the endpoint's inputs and outputs are its own) the
//! endpoint takes the packet ahead of the clock, up to the next instant
//! that reads flow state (a barrier); the routes whose endpoints may.

use super::sample::End;
use super::{World, NOT_AHEAD};
use crate::packet::PktId;
use crate::sim::Event;
use crate::units::SimTime;
use std::cmp::Reverse;

impl World {
    /// Packet `id` reaches the end of its current link at `t` (fixed now,
    /// by the link before, in the order of that link's departures): an
    /// arrival event, or, at an endpoint that may run ahead, the endpoint
    /// takes it now as at `t` ([`World::arrive_ahead`]).
    ///
    /// An endpoint may run ahead ([`World::ahead_routes`]) when its inputs
    /// and outputs are its own: the packets of its route reach it in the
    /// order their times are fixed (one last link, FIFO; a link's delay
    /// never changes while endpoints run ahead), and what it sends enters a
    /// cut-through link that nothing else feeds. What it does at `t` then
    /// depends on nothing that happens between now and `t`, except its own
    /// timers, which [`World::arrive_ahead`] fires first. Nothing reads
    /// flow state in between either: the instants that do (interval starts
    /// and ends, schedule entries, the end of a `run*` call) bound how far
    /// ahead it may go; a traced flow takes its samples due before what it
    /// takes ([`World::flow_event`]). A packet due
    /// past such an instant (or sent to an endpoint while another runs
    /// ahead) gets an arrival event; while one is pending, the route's
    /// later packets are held (once one is held, every later one, even one
    /// due past the next such instant) and taken when the pending events
    /// have been processed ([`World::release_held`]), so the endpoint takes
    /// its packets in order, also when the queue before it holds a packet
    /// longer than the time between two such instants.
    #[inline]
    pub(super) fn deliver(&mut self, id: PktId, t: SimTime) {
        if !self.ahead.is_empty() {
            let p = self.arena.get(id);
            let r = p.route();
            if self.ahead[r] == p.pos {
                if !self.in_ahead && t < self.ahead_until() {
                    // (Packets are held only while an event is pending.)
                    if self.ahead_pending[r] == 0 {
                        self.arrive_ahead(id, t);
                    } else {
                        self.ahead_held[r].push_back((id, t));
                    }
                    return;
                }
                if self.ahead_pending[r] > 0 && !self.ahead_held[r].is_empty() {
                    // Behind packets already held: in order, even one due
                    // past the next barrier (an event of its own would be
                    // taken before them when the queue's delay to the
                    // endpoint exceeds the time between barriers).
                    self.ahead_held[r].push_back((id, t));
                    return;
                }
                self.ahead_pending[r] += 1;
            }
        }
        self.events.schedule(t, Event::Arrive(id));
    }

    /// The last pending arrival event of route `r` has been processed: its
    /// endpoint takes the packets held behind it ([`World::deliver`]), in
    /// order, as long as they come before the next instant that reads flow
    /// state (the rest wait for events).
    #[cold]
    pub(super) fn release_held(&mut self, r: usize) {
        while let Some((id, t)) = self.ahead_held[r].pop_front() {
            if self.ahead_pending[r] == 0 && !self.in_ahead && t < self.ahead_until() {
                self.arrive_ahead(id, t);
            } else {
                self.ahead_pending[r] += 1;
                self.events.schedule(t, Event::Arrive(id));
            }
        }
    }

    /// The earliest instant that reads flow state (see [`World::deliver`]).
    #[inline]
    pub(super) fn ahead_until(&self) -> SimTime {
        match self.barriers.peek() {
            Some(&Reverse(b)) => b.min(self.horizon),
            None => self.horizon,
        }
    }

    /// Schedule `ev`, an event that reads flow state, at `at`.
    pub(super) fn schedule_barrier(&mut self, at: SimTime, ev: Event) {
        self.barriers.push(Reverse(at));
        self.events.schedule(at, ev);
    }

    /// An event scheduled by [`World::schedule_barrier`] is being processed.
    pub(super) fn pass_barrier(&mut self) {
        let b = self.barriers.pop();
        debug_assert_eq!(b, Some(Reverse(self.now)), "barriers out of step");
    }

    /// The endpoint of packet `id`'s route takes it at `t`, ahead of the
    /// clock ([`World::deliver`]): first the endpoint's own timers due
    /// before `t` (the receiver's delayed ACK, the sender's retransmission
    /// and pacing timers), each at its time, as their events would have
    /// come first, and one due at `t` itself in the order the two events
    /// would have had (a retransmission and a pacing timer due at one
    /// instant: the pacing timer first only if strictly earlier); then the
    /// packet, as [`World::arrive`] would at `t`. The timers'
    /// pending events stay in the queue and find nothing due.
    #[inline(never)]
    pub(super) fn arrive_ahead(&mut self, id: PktId, t: SimTime) {
        let p = *self.arena.get(id);
        let f = p.flow as usize;
        let now = self.now;
        self.in_ahead = true;
        loop {
            let fl = &self.flows[f];
            let (due, event) = if p.dir() == 0 {
                (fl.delack_deadline, fl.delack_event)
            } else if fl.cfg.tcp.pacing {
                // A pacing sender: its release time is its own timer too.
                self.sender_timers_ahead(f, t);
                break;
            } else {
                (fl.rto_deadline, fl.rto_event)
            };
            // A timer due at `t` itself comes first if its event is
            // already queued for `t` (scheduled before the packet's
            // arrival was); one that an earlier, stale event will queue
            // comes after, as their events' order would have it.
            let Some(d) = due.filter(|&d| d < t || (d == t && event == Some(t))) else {
                break;
            };
            self.now = d;
            let end = if p.dir() == 0 {
                End::Receiver
            } else {
                End::Sender
            };
            self.flow_event(f, end, d);
            let mut out = std::mem::take(&mut self.out);
            if p.dir() == 0 {
                self.flows[f].on_delack(d, &mut out);
            } else {
                self.flows[f].on_rto(d, &mut out);
            }
            self.emit(f, &mut out);
            self.out = out;
        }
        self.now = t;
        self.at_endpoint(id, p);
        self.now = now;
        self.in_ahead = false;
    }

    /// [`World::arrive_ahead`]'s timers for a pacing sender: the
    /// retransmission timer and the pacing timer due before `t` (or at `t`
    /// with their events queued), in time order, the pacing timer first
    /// only if strictly earlier.
    #[cold]
    fn sender_timers_ahead(&mut self, f: usize, t: SimTime) {
        let first = |due: Option<SimTime>, event: Option<SimTime>| {
            due.filter(|&d| d < t || (d == t && event == Some(t)))
        };
        loop {
            let fl = &self.flows[f];
            let rto = first(fl.rto_deadline, fl.rto_event);
            let pace = first(fl.pace_deadline(), fl.pace_event());
            let (d, pacing) = match (rto, pace) {
                (Some(r), Some(q)) if q < r => (q, true),
                (None, Some(q)) => (q, true),
                (Some(r), _) => (r, false),
                (None, None) => break,
            };
            self.now = d;
            self.flow_event(f, End::Sender, d);
            let mut out = std::mem::take(&mut self.out);
            if pacing {
                self.flows[f].on_pace_timer(d, &mut out);
            } else {
                self.flows[f].on_rto(d, &mut out);
            }
            self.emit(f, &mut out);
            self.out = out;
        }
    }

    /// Which routes' endpoints may take packets ahead of time
    /// ([`World::deliver`]): those of TCP flows without a web application
    /// whose route back starts on a cut-through link that no other route
    /// uses (the endpoint's own way out).
    pub(super) fn ahead_routes(&self) -> Vec<u32> {
        let n = self.routes.len();
        let mut uses = vec![0u32; self.links.len()];
        for r in 0..n {
            for &l in &self.routes[r] {
                uses[l as usize] += 1;
            }
        }
        (0..n)
            .map(|r| {
                let tag = self.tag[r / 2];
                let back = &self.routes[r ^ 1];
                let last = self.routes[r].len().wrapping_sub(1);
                let own_way_out = back
                    .first()
                    .is_some_and(|&l| self.cut_through[l as usize] && uses[l as usize] == 1);
                if !tag.udp && !tag.web && own_way_out && last != usize::MAX {
                    self.routes.first(r) + last as u32
                } else {
                    NOT_AHEAD
                }
            })
            .collect()
    }
}
