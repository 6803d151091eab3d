//! Web-browsing sessions (`[[traffic]] kind = "web"`): the application
//! that drives a flow's TCP through pages of objects. The workload they
//! draw (parameters, distributions, defaults) is described in
//! [`crate::scenario::web`]; the engine runs the sessions (`world/web.rs`).
//!
//! A session alternates between thinking and downloading a page. A page is
//! several objects, fetched one after another; each object is a request
//! from the client and a response from the server: over a new TCP
//! connection opened with SYN / SYN-ACK (HTTP/1.0), or over the page's one
//! persistent connection (HTTP/1.1, no pipelining: the next request leaves
//! when the previous response has fully arrived), or over two connections,
//! one the client opens for the request and one the server opens for the
//! response (ns-2's WebTraf, [`crate::scenario::web::Http::WebTraf`]).
//!
//! Every draw comes from the session's own stream; with lanes, a page's
//! draws come from a stream the session's clock seeds when the page is
//! due ([`Session::assign`]).
//!
//! **Common random numbers.** A seed fixes a session's workload whatever
//! the network does: the sequence of draws from a session's stream does not
//! depend on when responses complete. A session without lanes draws its
//! pages in order from one stream. With lanes, the owner's stream is the
//! page clock (think times, objects per parallel page, `object_gap`s) and
//! gives each page (or object) a seed when it is due; the lane that takes
//! it draws the page's contents from that seed's stream. Which lane takes a
//! page depends on which lanes are busy, and so on the network; what the
//! page holds does not. So two runs with the same seed and different
//! schemes ask for the same objects at the same times (open pages), and
//! a comparison of schemes is paired.

use std::collections::VecDeque;

use crate::rng::{Rng, Stream};
use crate::scenario::web::WebParams;
use crate::units::SimTime;

/// A response split into segments of `mss` payload bytes: the number of
/// segments and the payload of the last one.
pub fn segments(bytes: u64, mss: u32) -> (u64, u32) {
    let bytes = bytes.max(1);
    let n = bytes.div_ceil(mss as u64);
    (n, (bytes - (n - 1) * mss as u64) as u32)
}

/// Where a session is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not begun (its start time has not come).
    Idle,
    /// Between pages.
    Thinking,
    /// Fetching object `object` of the page.
    Fetching,
    /// A lane held for an object of a page whose launch is due later
    /// (`object_gap`); its `FlowStart` begins the object.
    Due,
}

/// One object to fetch: its size and how it is cut into segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Object {
    pub bytes: u64,
    pub segments: u64,
    /// Payload of the last segment, bytes.
    pub last_payload: u32,
}

/// With lanes: a page (or, with `parallel_objects`, one object of a page)
/// as the owner's clock gives it to a lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Assigned {
    /// The seed of the stream its contents are drawn from.
    pub seed: u64,
    /// The session's page number (pages counted from 0 by the owner).
    pub page: u64,
    /// The index in its page of its first object.
    pub object: u32,
}

/// One browsing session (the client and its server).
#[derive(Clone, Debug)]
pub struct Session {
    pub p: WebParams,
    pub rng: Rng,
    pub phase: Phase,
    /// Pages begun (the current page's number is `page - 1`).
    pub page: u64,
    /// Objects of the current page.
    pub objects: u32,
    /// Index of the object being fetched in its page.
    pub object: u32,
    /// The object being fetched.
    pub current: Object,
    /// Segments the client must have received on the current connection
    /// when the current response is complete.
    pub end: u64,
    /// `webtraf`: the current object's request connection is still open
    /// (the response connection is not).
    pub requesting: bool,
    /// When the current request began (first SYN, or the request on a
    /// persistent connection).
    pub started: SimTime,
    /// With lanes ([`WebParams::laned`]): the flow of the session's first
    /// lane, which keeps the session's page clock; the lanes are flows
    /// `owner` to `owner + lanes - 1`. The flow itself otherwise.
    pub owner: usize,
    /// With lanes, on the owner: the page clock has started.
    pub began: bool,
    /// With lanes, on the owner: pages (objects with `parallel_objects`)
    /// due while every lane was busy, each begun on the next lane to free.
    pub pending: VecDeque<Assigned>,
    /// With lanes, on the owner: pages the clock has made due.
    pub pages_due: u64,
    /// With lanes: the page (or object) this lane fetches.
    pub assigned: Assigned,
    /// With lanes: the stream of that page's contents, seeded by the
    /// owner's clock ([`Session::assign`]).
    pub page_rng: Option<Rng>,
    /// Closed pages with `parallel_objects`, on the owner: objects of the
    /// current page not yet arrived; the think time starts at zero.
    pub outstanding: u32,
    /// With `Phase::Due`: when the object held for this lane (`assigned`)
    /// is launched.
    pub due_at: SimTime,
}

impl Session {
    pub fn new(p: WebParams, rng: Rng, owner: usize) -> Session {
        Session {
            p,
            rng,
            phase: Phase::Idle,
            page: 0,
            objects: 0,
            object: 0,
            current: Object {
                bytes: 0,
                segments: 0,
                last_payload: 0,
            },
            end: 0,
            requesting: false,
            started: SimTime::ZERO,
            owner,
            began: false,
            pending: VecDeque::new(),
            pages_due: 0,
            assigned: Assigned::default(),
            page_rng: None,
            outstanding: 0,
            due_at: SimTime::ZERO,
        }
    }

    /// Draw the next object's size (from the page's stream with lanes).
    pub fn draw_object(&mut self, mss: u32) -> Object {
        let rng = self.page_rng.as_mut().unwrap_or(&mut self.rng);
        let mut bytes = self.p.sizes.sample(rng);
        let (segments, mut last_payload) = segments(bytes, mss);
        if self.p.whole_segments {
            bytes = segments * u64::from(mss);
            last_payload = mss;
        }
        self.current = Object {
            bytes,
            segments,
            last_payload,
        };
        self.current
    }

    /// With lanes: this lane takes page (or object) `a` of the owner's
    /// clock; its contents are drawn from the stream of `a.seed`.
    pub fn assign(&mut self, a: Assigned) {
        self.assigned = a;
        self.page_rng = Some(Rng::new(a.seed, Stream::App(0)));
    }

    /// The page number and object index of the response just completed:
    /// the session's (the owner's count with lanes), so that the same seed
    /// names the same object in every run.
    pub fn response_key(&self) -> (u64, u32) {
        if self.page_rng.is_some() {
            (self.assigned.page, self.assigned.object + self.object)
        } else {
            (self.page - 1, self.object)
        }
    }

    /// Begin a one-object page: an object of a page whose objects are
    /// fetched in parallel (`parallel_objects`).
    pub fn begin_object(&mut self) {
        self.page += 1;
        self.objects = 1;
        self.object = 0;
        self.phase = Phase::Fetching;
    }

    /// Begin a page: draw its number of objects (from the page's stream
    /// with lanes).
    pub fn begin_page(&mut self) {
        self.page += 1;
        let rng = self.page_rng.as_mut().unwrap_or(&mut self.rng);
        self.objects = self.p.page_objects(rng);
        self.object = 0;
        self.phase = Phase::Fetching;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::web::{FirstPage, Http, PageEstimate, Pages, SizeDist};
    use crate::scenario::TcpSpec;

    /// `whole_segments`: the object's size rounds up to full segments (as
    /// WebTraf's objects in ns-2), and the page estimate counts those bytes.
    #[test]
    fn whole_segments_round_objects_up() {
        let mut p = WebParams {
            sizes: SizeDist::default_sizes(),
            objects: 3.0,
            think_s: 5.0,
            think_shape: 1.5,
            request_bytes: 300,
            http: Http::V10,
            pages: Pages::Open,
            lanes: 4,
            parallel_objects: false,
            object_gap_s: 0.0,
            first_page: FirstPage::Residual,
            whole_segments: false,
            teardown: true,
        };
        let rng = || Rng::new(3, crate::rng::Stream::App(0));
        let (mut a, mut b) = (Session::new(p, rng(), 0), {
            p.whole_segments = true;
            Session::new(p, rng(), 0)
        });
        for _ in 0..1000 {
            let (x, y) = (a.draw_object(1460), b.draw_object(1460));
            assert_eq!(x.segments, y.segments);
            assert_eq!(y.bytes, y.segments * 1460);
            assert_eq!(y.last_payload, 1460);
            assert!(x.bytes <= y.bytes && y.bytes < x.bytes.max(1) + 1460);
        }
        let tcp = TcpSpec {
            packet_size: 1500,
            ..TcpSpec::default()
        };
        let whole = PageEstimate::new(&p, &tcp, 0.08);
        p.whole_segments = false;
        let part = PageEstimate::new(&p, &tcp, 0.08);
        // About half a segment more per object: 12 % more bytes for these sizes.
        let more = whole.object_bytes / part.object_bytes;
        assert!(more > 1.08 && more < 1.16, "{more}");
        assert!((whole.object_bytes - 1460.0 * whole.object_segments).abs() < 1e-6);
    }

    #[test]
    fn segments_of_a_response() {
        assert_eq!(segments(1, 1460), (1, 1));
        assert_eq!(segments(1460, 1460), (1, 1460));
        assert_eq!(segments(1461, 1460), (2, 1));
        assert_eq!(segments(0, 1460), (1, 1));
    }
}
