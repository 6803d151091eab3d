//! Web sessions in the run: `web-simple` transfers (one file over a new
//! connection, then a think time) and `web` browsing (pages of objects,
//! closed or open pages on one or several lanes, HTTP/1.0, 1.1 or ns-2's
//! WebTraf connections), each response recorded when its last byte is in;
//! and the connections' teardown (the client's FIN, the server's FIN/ACK).
//! What a session draws is in [`crate::traffic::web`].

use super::World;
use crate::packet::{flags, Ecn, Packet};
use crate::rng::Rng;
use crate::scenario::web::{FirstPage, Http, Pages};
use crate::scenario::TransferSizes;
use crate::sim::Event;
use crate::traffic::web::{Assigned, Phase, Session};
use crate::units::SimTime;

/// One web session (`web-simple`): its current transfer and its draws.
#[derive(Clone, Debug)]
pub(super) struct WebSession {
    mean_packets: f64,
    sizes: TransferSizes,
    think_s: f64,
    rng: Rng,
    /// The current transfer: its size in segments and start time.
    segments: u64,
    started: SimTime,
    /// A transfer is in progress.
    active: bool,
    /// Its last byte reached the client.
    responded: bool,
    /// Transfers begun (for tests of the size distribution).
    transfers: u64,
}

impl WebSession {
    /// A session with transfers of `mean_packets` segments on average (of
    /// exactly that many, rounded, with fixed `sizes`) and think times of
    /// `think_s` seconds on average, drawn from `rng`.
    pub(super) fn new(
        mean_packets: f64,
        sizes: TransferSizes,
        think_s: f64,
        rng: Rng,
    ) -> WebSession {
        WebSession {
            mean_packets,
            sizes,
            think_s,
            rng,
            segments: 0,
            started: SimTime::ZERO,
            active: false,
            responded: false,
            transfers: 0,
        }
    }

    /// Begin a transfer at `now`: draw its size (exponential with mean
    /// `mean_packets`, rounded to whole segments, at least one; with fixed
    /// `sizes` that mean, rounded, and no draw).
    pub(super) fn begin(&mut self, now: SimTime) -> u64 {
        let size = match self.sizes {
            TransferSizes::Fixed => self.mean_packets,
            TransferSizes::Exponential => self.rng.exp(self.mean_packets),
        };
        let n = size.round().max(1.0) as u64;
        self.segments = n;
        self.started = now;
        self.active = true;
        self.responded = false;
        self.transfers += 1;
        n
    }
}

/// The application of a web flow. Each lives in a box of its own
/// (`World::web`), so the size of the larger variant is paid once per web
/// flow, not per flow; boxing `Session` as well would add a second
/// indirection to every web event for 230 bytes per `web-simple` session.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub(super) enum WebApp {
    /// `web-simple`.
    Simple(WebSession),
    /// `web`: pages of objects ([`crate::traffic::web`]).
    Browse(Session),
    /// `video`: an adaptive video player ([`crate::traffic::video`]).
    Video(crate::traffic::video::Player),
}

impl World {
    /// A web session's transfer may have delivered its last byte or had it
    /// acknowledged.
    pub(super) fn web_progress(&mut self, f: usize) {
        let now = self.now;
        let fl = &self.flows[f];
        let (delivered, finished, mss) = (fl.delivered(), fl.finished(), fl.mss());
        let Some(app) = self.web[f].as_deref_mut() else {
            return;
        };
        let w = match app {
            WebApp::Simple(w) => w,
            WebApp::Browse(_) => {
                self.browse_progress(f);
                return;
            }
            WebApp::Video(_) => {
                self.video_progress(f);
                return;
            }
        };
        if !w.active {
            return;
        }
        if !w.responded && delivered >= w.segments {
            w.responded = true;
            let r = &mut self.responses;
            r.flow.push(f as u32);
            r.group.push(self.meta[f].group);
            r.session.push(f as u32);
            r.page.push(w.transfers - 1);
            r.object.push(0);
            r.size_bytes.push(w.segments * mss as u64);
            r.start_s.push(w.started.as_secs_f64());
            r.end_s.push(now.as_secs_f64());
            r.response_time_s.push((now - w.started).as_secs_f64());
            // The client has the whole file: it closes the connection.
            let conn = self.tag[f].conn;
            self.send_teardown(f, true, conn);
            return self.web_progress(f);
        }
        if finished {
            w.active = false;
            // The think time starts when the last byte is acknowledged.
            let next = now + SimTime::from_secs_f64(w.rng.exp(w.think_s));
            if self.meta[f].stopped.is_none() && next < self.sc.duration {
                self.events.schedule(next, Event::FlowStart(f as u32));
            }
        }
    }

    /// A `web` session's event (`FlowStart`): it begins (and thinks), or
    /// its think time is over and a page begins.
    pub(super) fn browse_event(&mut self, f: usize) {
        let Some(WebApp::Browse(s)) = self.web[f].as_deref_mut() else {
            return;
        };
        if s.p.laned() {
            if s.phase == Phase::Idle {
                // Started: a free lane (between pages).
                s.phase = Phase::Thinking;
            }
            if s.owner != f {
                if s.phase == Phase::Due && self.now >= s.due_at {
                    // An object of a page, launched `object_gap` after
                    // the one before it, on the lane held for it.
                    let a = s.assigned;
                    self.browse_open_begin(f, a);
                }
                return;
            }
            // The first event starts the clock (an equilibrium residual
            // to the first page, or the first page itself with
            // `first_page = "start"`); each later one is a page that is
            // due. Open pages: the clock runs from page start to page
            // start. Closed pages (objects in parallel): the next think
            // time starts when the page's last object has arrived.
            let due = s.began || s.p.first_page == FirstPage::Start;
            s.began = true;
            if !due {
                let t = s.p.residual_think(&mut s.rng);
                self.browse_wake(f, t);
                return;
            }
            if s.p.pages == Pages::Open {
                let t = s.p.think(&mut s.rng);
                self.browse_wake(f, t);
            }
            self.browse_open_page(f);
            return;
        }
        match s.phase {
            Phase::Idle if s.p.first_page == FirstPage::Start => {
                s.begin_page();
                self.browse_fetch(f);
            }
            Phase::Idle => {
                s.phase = Phase::Thinking;
                let t = s.p.residual_think(&mut s.rng);
                self.browse_wake(f, t);
            }
            Phase::Thinking => {
                s.begin_page();
                self.browse_fetch(f);
            }
            // A lane's states: only sessions with lanes get here with
            // `Due`.
            Phase::Fetching | Phase::Due => {}
        }
    }

    /// A page of the session whose clock flow `owner` keeps is due (open
    /// pages, or a page's objects in parallel). It begins on the session's
    /// first free lane, or waits for one. With `parallel_objects` each of
    /// the page's objects is such a page of one object, all asked for at
    /// once; with closed pages the owner counts them until they are in.
    /// Each page (or object) gets its seed from the owner's clock here, so
    /// that its contents do not depend on the lane that takes it.
    pub(super) fn browse_open_page(&mut self, owner: usize) {
        let (lanes, n, gap) = match self.web[owner].as_deref_mut() {
            Some(WebApp::Browse(s)) if s.p.parallel_objects => {
                let n = s.p.page_objects(&mut s.rng);
                if s.p.pages == Pages::Closed {
                    s.outstanding = n;
                }
                (s.p.lanes as usize, n, s.p.object_gap_s)
            }
            Some(WebApp::Browse(s)) => (s.p.lanes as usize, 1, 0.0),
            _ => return,
        };
        let mut at = 0.0;
        for k in 0..n {
            let Some(WebApp::Browse(s)) = self.web[owner].as_deref_mut() else {
                return;
            };
            if k > 0 && gap > 0.0 {
                at += s.rng.exp(gap);
            }
            let a = Assigned {
                seed: s.rng.next_u64(),
                page: s.pages_due,
                object: k,
            };
            if k + 1 == n {
                s.pages_due += 1;
            }
            // An object launched later holds a lane other than the owner's
            // (whose `FlowStart` events keep the page clock).
            // A lane is free between pages; the lanes start with their
            // owner, and one whose own start event has not yet been taken
            // (same instant) is free too.
            let first = if at > 0.0 { owner + 1 } else { owner };
            let free = (first..owner + lanes).find(|&l| {
                matches!(self.web[l].as_deref(), Some(WebApp::Browse(s)) if matches!(s.phase, Phase::Thinking | Phase::Idle))
            });
            match free {
                Some(l) if at > 0.0 => {
                    let t = self.now + SimTime::from_secs_f64(at);
                    if let Some(WebApp::Browse(s)) = self.web[l].as_deref_mut() {
                        s.phase = Phase::Due;
                        s.due_at = t;
                        s.assigned = a;
                    }
                    if t < self.sc.duration {
                        self.events.schedule(t, Event::FlowStart(l as u32));
                    }
                }
                Some(l) => self.browse_open_begin(l, a),
                None => {
                    if let Some(WebApp::Browse(s)) = self.web[owner].as_deref_mut() {
                        s.pending.push_back(a);
                    }
                    self.flows[owner].stats.pages_waited += 1;
                }
            }
        }
    }

    /// Open pages: lane `l` begins page (one object with
    /// `parallel_objects`) `a` of the owner's clock.
    pub(super) fn browse_open_begin(&mut self, l: usize, a: Assigned) {
        if let Some(WebApp::Browse(s)) = self.web[l].as_deref_mut() {
            s.assign(a);
            if s.p.parallel_objects {
                s.begin_object();
            } else {
                s.begin_page();
            }
        }
        self.browse_fetch(l);
    }

    /// Schedule session `f`'s next page `secs` from now (if before the end).
    pub(super) fn browse_wake(&mut self, f: usize, secs: f64) {
        let left = (self.sc.duration - self.now).as_secs_f64();
        if secs < left {
            let t = self.now + SimTime::from_secs_f64(secs);
            self.events.schedule(t, Event::FlowStart(f as u32));
        }
    }

    /// Session `f` asks for its current page's next object: over a new
    /// connection (HTTP/1.0, or a page's first object), or on the page's
    /// persistent connection.
    pub(super) fn browse_fetch(&mut self, f: usize) {
        let now = self.now;
        let mss = self.flows[f].mss();
        let Some(WebApp::Browse(s)) = self.web[f].as_deref_mut() else {
            return;
        };
        let reuse = s.p.http == Http::V11 && s.object > 0;
        let o = s.draw_object(mss);
        s.started = now;
        if s.p.http == Http::WebTraf {
            s.end = o.segments;
            s.requesting = true;
            let mut out = std::mem::take(&mut self.out);
            let fl = &mut self.flows[f];
            fl.new_request_connection();
            self.tag[f].conn = self.tag[f].conn.wrapping_add(1);
            fl.client_connect(now, o.segments, o.last_payload, &mut out);
            self.emit(f, &mut out);
            self.out = out;
        } else {
            s.end = if reuse {
                s.end + o.segments
            } else {
                o.segments
            };
            self.client_ask(f, reuse, o.segments, o.last_payload);
        }
    }

    /// The client of passive flow `f` asks for a response of `segments`
    /// segments, the last carrying `last_payload` bytes: on its open
    /// persistent connection (`reuse`), or over a new connection it opens
    /// with a SYN.
    pub(super) fn client_ask(&mut self, f: usize, reuse: bool, segments: u64, last_payload: u32) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let fl = &mut self.flows[f];
        if reuse {
            fl.client_request(now, segments, last_payload, &mut out);
        } else {
            fl.new_passive_connection();
            self.tag[f].conn = self.tag[f].conn.wrapping_add(1);
            fl.client_connect(now, segments, last_payload, &mut out);
        }
        self.emit(f, &mut out);
        self.out = out;
    }

    /// A packet of session `f` arrived: record the response if its last
    /// byte is in, then fetch the next object or start thinking.
    pub(super) fn browse_progress(&mut self, f: usize) {
        let now = self.now;
        let delivered = self.flows[f].delivered();
        let mss = self.flows[f].mss();
        let Some(WebApp::Browse(s)) = self.web[f].as_deref_mut() else {
            return;
        };
        if s.phase != Phase::Fetching {
            return;
        }
        if s.requesting {
            // `webtraf`: once the request is acknowledged, the server opens
            // the response connection.
            if self.flows[f].request_acked() {
                s.requesting = false;
                let o = s.current;
                self.tag[f].conn = self.tag[f].conn.wrapping_add(1);
                let mut out = std::mem::take(&mut self.out);
                self.flows[f].server_open(now, o.segments, o.last_payload, &mut out);
                self.emit(f, &mut out);
                self.out = out;
            }
            return;
        }
        if delivered < s.end {
            return;
        }
        // The response's last segment, now delivered, was short.
        self.short_bytes[f] += mss.saturating_sub(s.current.last_payload) as u64;
        let r = &mut self.responses;
        let (page, object) = s.response_key();
        r.flow.push(f as u32);
        r.session.push(s.owner as u32);
        r.group.push(self.meta[f].group);
        r.page.push(page);
        r.object.push(object);
        r.size_bytes.push(s.current.bytes);
        r.start_s.push(s.started.as_secs_f64());
        r.end_s.push(now.as_secs_f64());
        r.response_time_s.push((now - s.started).as_secs_f64());
        s.object += 1;
        // HTTP/1.0 closes every object's connection, HTTP/1.1 the page's
        // (unless `teardown = false`: ns-2's one-way TCP sends no FIN).
        if s.p.teardown && (s.p.http != Http::V11 || s.object >= s.objects) {
            let conn = self.tag[f].conn;
            self.send_teardown(f, true, conn);
        }
        let Some(WebApp::Browse(s)) = self.web[f].as_deref_mut() else {
            return;
        };
        if s.object < s.objects {
            self.browse_fetch(f);
        } else if s.p.laned() {
            // The lane is free: it takes a page (or object) of the session
            // that waited.
            s.phase = Phase::Thinking;
            let owner = s.owner;
            if let Some(WebApp::Browse(o)) = self.web[owner].as_deref_mut() {
                if o.p.pages == Pages::Closed {
                    // Closed pages, objects in parallel: the page's last
                    // object starts the think time.
                    o.outstanding = o.outstanding.saturating_sub(1);
                    if o.outstanding == 0 {
                        let t = o.p.think(&mut o.rng);
                        self.browse_wake(owner, t);
                    }
                }
            }
            let waiting = match self.web[owner].as_deref_mut() {
                Some(WebApp::Browse(o)) => o.pending.pop_front(),
                _ => None,
            };
            if let Some(a) = waiting {
                self.browse_open_begin(f, a);
            }
        } else {
            s.phase = Phase::Thinking;
            let t = s.p.think(&mut s.rng);
            self.browse_wake(f, t);
        }
    }

    /// A 40-byte FIN/ACK of connection `conn` of flow `f`, from the
    /// client (on the ACK route) or from the server (on the data route).
    pub(super) fn send_teardown(&mut self, f: usize, from_client: bool, conn: u8) {
        let st = &mut self.flows[f].stats;
        if from_client {
            st.fins_sent += 1;
        } else {
            st.fin_acks_sent += 1;
        }
        let dir = u8::from(from_client);
        let pos = self.routes.first(2 * f + dir as usize);
        let id = self.arena.alloc(Packet {
            size: crate::scenario::HEADER_BYTES,
            flow: f as u32,
            seq: 0,
            ts: self.now,
            enq_time: self.now,
            pos,
            dir_label: dir,
            conn,
            flags: flags::FIN | flags::ACK,
            ecn: Ecn::NotEct,
        });
        self.send_on(self.routes.link_at(pos) as usize, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    /// `web-simple` draws: transfer sizes exponential with mean 12 packets
    /// (rounded, at least 1) and think times exponential with mean 500 ms,
    /// each within 5 % over 10 000 draws.
    #[test]
    fn web_simple_size_and_think_draws() {
        let mut w = WebSession::new(
            12.0,
            TransferSizes::Exponential,
            0.5,
            Rng::new(11, Stream::App(0)),
        );
        let n = 10_000;
        let sizes: u64 = (0..n).map(|_| w.begin(SimTime::ZERO)).sum();
        let mean = sizes as f64 / n as f64;
        assert!((mean - 12.0).abs() < 0.6, "mean size {mean}");
        let think: f64 = (0..n).map(|_| w.rng.exp(w.think_s)).sum::<f64>() / n as f64;
        assert!((think - 0.5).abs() < 0.025, "mean think {think}");
        assert_eq!(w.transfers, n);
    }

    /// `sizes = "fixed"`: every transfer of the mean, rounded; the think
    /// times are drawn from the stream as with exponential sizes, so a
    /// session's first think is the stream's first draw.
    #[test]
    fn web_simple_fixed_sizes() {
        let mut w = WebSession::new(
            49.6,
            TransferSizes::Fixed,
            0.5,
            Rng::new(11, Stream::App(0)),
        );
        assert!((0..100).all(|_| w.begin(SimTime::ZERO) == 50));
        let first_think = w.rng.exp(w.think_s);
        assert_eq!(first_think, Rng::new(11, Stream::App(0)).exp(0.5));
    }
}
