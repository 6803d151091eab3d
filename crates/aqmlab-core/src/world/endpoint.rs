//! A flow's two ends: a packet that reaches the receiver (data) or the
//! sender (ACKs) is handed to the flow's TCP, whose answer becomes
//! packets on the flow's routes; the TCP timers' events (retransmission,
//! delayed ACK, a pacing flow's release time) and their re-arming.

use super::sample::End;
use super::World;
use crate::packet::{flags, Packet, PktId};
use crate::sim::Event;
use crate::transport::{SackBlocks, Seg};

impl World {
    /// Packet `id` (`p`) has reached its flow's endpoint: the receiver (data,
    /// even routes) or the sender (ACKs, odd routes) takes it now.
    #[inline]
    pub(super) fn at_endpoint(&mut self, id: PktId, p: Packet) {
        self.arena.free(id);
        let f = p.flow as usize;
        // Ahead of the clock, only this end has reached `now`.
        let end = match (self.in_ahead, p.dir()) {
            (false, _) => End::Both,
            (true, 0) => End::Receiver,
            (true, _) => End::Sender,
        };
        self.flow_event(f, end, self.now);
        let tag = self.tag[f];
        if tag.udp {
            if tag.ping {
                self.ping_arrives(f, p);
                return;
            }
            let s = &mut self.flows[f].stats;
            s.data_arrived += 1;
            s.segments_delivered += 1;
            return;
        }
        if p.has(flags::FIN) && !p.has(flags::DATA) {
            // Connection teardown: the server answers the client's FIN
            // with its FIN/ACK on the FIN's own connection; that ends the
            // exchange. Before the straggler test: with HTTP/1.0 the
            // client's FIN is usually still on its way when the page's
            // next object opens a new connection.
            if p.dir() == 1 {
                self.send_teardown(f, false, p.conn);
            }
            return;
        }
        if p.conn != tag.conn {
            // A straggler of an earlier connection of this flow.
            if p.has(flags::DATA) {
                self.flows[f].stats.data_arrived += 1;
            }
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        if p.dir() == 0 {
            self.flows[f].on_data(self.now, p.seq, p.flags, p.ecn, p.ts, &mut out);
        } else if tag.sack {
            // The slot may be taken again by what this ACK sends: its
            // blocks are read first.
            let b = self.sack.get(id as usize).copied().unwrap_or_default();
            self.flows[f].on_ack_sack(self.now, p.seq, p.flags, p.ecn, p.ts, &b, &mut out);
        } else {
            self.flows[f].on_ack_echo(self.now, p.seq, p.flags, p.ecn, p.ts, &mut out);
        }
        self.emit_tagged(f, &mut out, tag.sack);
        self.out = out;
        if tag.web {
            self.web_progress(f);
        }
    }

    /// Turn a flow's segments into packets, send them, and re-arm its timers.
    #[inline]
    pub(super) fn emit(&mut self, f: usize, out: &mut Vec<Seg>) {
        self.emit_tagged(f, out, self.tag[f].sack);
    }

    /// [`World::emit`] with the flow's `FlowTag::sack` at hand.
    #[inline(always)]
    fn emit_tagged(&mut self, f: usize, out: &mut Vec<Seg>, sack: bool) {
        if sack {
            if !out.is_empty() {
                self.emit_sack(f, out);
            }
        } else {
            for s in out.drain(..) {
                self.emit_seg(f, &s, false);
            }
        }
        self.arm_timers(f);
    }

    /// Re-arm flow `f`'s timer events after it took an event: one event
    /// at the earliest deadline of each timer (a later one is left to the
    /// event due first, which re-arms in turn).
    #[inline(always)]
    fn arm_timers(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        if let Some(d) = fl.rto_deadline {
            if fl.rto_event.is_none_or(|e| e > d) {
                fl.rto_event = Some(d);
                self.events.schedule(d, Event::RtoTimer(f as u32));
            }
        }
        // A web client's SYN or request timer shares the timer event.
        if let Some(d) = fl.client_deadline {
            if fl.rto_event.is_none_or(|e| e > d) {
                fl.rto_event = Some(d);
                self.events.schedule(d, Event::RtoTimer(f as u32));
            }
        }
        if let Some(d) = fl.delack_deadline {
            if fl.delack_event.is_none_or(|e| e > d) {
                fl.delack_event = Some(d);
                self.events.schedule(d, Event::DelAckTimer(f as u32));
            }
        }
        if fl.cfg.tcp.pacing {
            self.arm_pacer(f);
        }
    }

    /// A pacing flow's sender waits for its release time: one timer event
    /// at the earliest (as the retransmission timer's).
    #[inline(never)]
    fn arm_pacer(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        if let Some(d) = fl.pace_deadline() {
            if fl.pace_event().is_none_or(|e| e > d) {
                fl.set_pace_event(Some(d));
                self.events.schedule(d, Event::PaceTimer(f as u32));
            }
        }
    }

    pub(super) fn pace_timer(&mut self, f: usize) {
        let now = self.now;
        self.flow_event(f, End::Both, now);
        let fl = &mut self.flows[f];
        if fl.pace_event() == Some(now) {
            fl.set_pace_event(None);
        }
        let mut out = std::mem::take(&mut self.out);
        if fl.pace_deadline().is_some_and(|d| d <= now) {
            fl.on_pace_timer(now, &mut out);
        }
        self.emit(f, &mut out);
        self.out = out;
    }

    /// [`World::emit`]'s segments of a SACK flow (a loop of its own, whose
    /// blocks go beside the arena: [`World::put_sack`]).
    #[inline]
    fn emit_sack(&mut self, f: usize, out: &mut Vec<Seg>) {
        for s in out.iter() {
            self.emit_seg(f, s, true);
        }
        out.clear();
    }

    /// Segment `s` of flow `f` as a packet on its route's first link
    /// (`sack`: a SACK flow, whose ACKs' blocks go beside the arena first).
    #[inline(always)]
    fn emit_seg(&mut self, f: usize, s: &Seg, sack: bool) {
        let dir = u8::from(!s.from_sender);
        let pos = self.routes.first(2 * f + dir as usize);
        // `tcp.txrehash`: the data packets' hash label follows the sender's
        // timeouts (the receiver's ACKs keep theirs: Linux rehashes them on
        // a duplicate segment, not modelled).
        let label = if self.tag[f].rehash && dir == 0 {
            (self.flows[f].stats.timeouts & 0x7f) as u8
        } else {
            0
        };
        let id = self.arena.alloc(Packet {
            size: s.size,
            flow: f as u32,
            seq: s.seq,
            ts: s.ts,
            enq_time: self.now,
            pos,
            dir_label: Packet::pack_dir(dir, label),
            conn: self.tag[f].conn,
            flags: s.flags,
            ecn: s.ecn,
        });
        if sack && dir == 1 {
            self.put_sack(f, id, s);
        }
        self.send_on(self.routes.link_at(pos) as usize, id);
    }

    /// The SACK blocks of packet `id`, a SACK flow's segment on the ACK
    /// route: those of its receiver's last ACK for an ACK, none for a SYN
    /// or a request.
    #[inline]
    fn put_sack(&mut self, f: usize, id: PktId, s: &Seg) {
        let i = id as usize;
        if self.sack.len() <= i {
            self.sack
                .resize((i + 1).max(2 * self.sack.len()), SackBlocks::NONE);
        }
        self.sack[i] = if s.flags & (flags::SYN | flags::REQ) == 0 {
            self.flows[f].sack_blocks()
        } else {
            SackBlocks::NONE
        };
    }

    pub(super) fn rto_timer(&mut self, f: usize) {
        let now = self.now;
        self.flow_event(f, End::Both, now);
        let fl = &mut self.flows[f];
        if fl.rto_event == Some(now) {
            fl.rto_event = None;
        }
        let mut out = std::mem::take(&mut self.out);
        if fl.rto_deadline.is_some_and(|d| d <= now) {
            fl.on_rto(now, &mut out);
        }
        if fl.client_deadline.is_some_and(|d| d <= now) {
            fl.on_client_timer(now, &mut out);
        }
        self.emit(f, &mut out);
        self.out = out;
    }

    /// The delayed-ACK timer's event. Most find no ACK due (the ACK went
    /// with the next segment, or the deadline moved): they only re-arm the
    /// flow's timers, what [`World::emit`] does with nothing to send, on a
    /// short path of their own.
    #[inline(never)]
    pub(super) fn delack_timer(&mut self, f: usize) {
        let now = self.now;
        self.flow_event(f, End::Both, now);
        let fl = &mut self.flows[f];
        if fl.delack_event == Some(now) {
            fl.delack_event = None;
        }
        if fl.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_due(f);
        } else {
            self.arm_timers(f);
        }
    }

    /// The delayed ACK is due: the receiver sends it.
    #[inline(never)]
    fn delack_due(&mut self, f: usize) {
        let mut out = std::mem::take(&mut self.out);
        self.flows[f].on_delack(self.now, &mut out);
        self.emit(f, &mut out);
        self.out = out;
    }
}
