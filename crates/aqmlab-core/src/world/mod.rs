//! The run: builds the network of a scenario, runs the event loop and
//! gathers the results.
//!
//! A packet's path, file by file. A flow's TCP hands the engine segments,
//! which `endpoint.rs` turns into packets on the first link of the flow's
//! route; `path.rs` offers each to a link, whose AQM admits, marks or drops
//! it, starts its transmission and fixes when it reaches the link's far end
//! (passing it at once through the cut-through links that follow);
//! `ahead.rs` turns that instant into an arrival event, or lets the
//! endpoint take the packet ahead of the clock; on arrival the packet goes
//! on to its route's next link, or reaches the other end of its flow
//! (`endpoint.rs`), whose answer starts the next packets. The applications
//! start flows and give them data: `apps.rs` (flow starts, UDP sources),
//! `web.rs` (web sessions) and `video.rs` (adaptive video sessions).
//!
//! Around the path: `build.rs` builds the network and the flows,
//! `warm.rs` loads the caches for large worlds, `schedule.rs` applies the
//! scenario's mid-run changes, `sample.rs` takes the time series,
//! `summary.rs` the figures of the measurement interval and the phases,
//! `windows.rs` opens and closes them (a periodic phase at each of its
//! windows), and `results.rs` gathers everything at the end.

mod ahead;
mod apps;
mod build;
mod endpoint;
mod path;
mod ping;
mod results;
mod sample;
mod schedule;
mod summary;
mod video;
mod warm;
mod web;
mod windows;

pub use ping::{PingSummary, PingTable};
pub use results::{ResponseTable, RunResult};
pub use sample::QueueSeries;
pub use summary::{
    BottleneckSummary, FlowTable, FlowsSummary, LinkSummary, PhaseSummary, Summary, UdpSummary,
    WebSummary,
};
pub use video::VideoSummary;

use crate::aqm::Aqm;
use crate::net::link::Link;
use crate::net::topology::Routes;
use crate::packet::{Arena, PktId};
use crate::scenario::{Direction, Occurrence, Phase, Scenario};
use crate::sim::{Event, EventQueue};
use crate::transport::{SackBlocks, Seg, TcpFlow, UdpSource};
use crate::units::SimTime;
use sample::Extras;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;
use summary::Snapshot;
use warm::WarmPkt;
use web::WebApp;

/// A progress callback: `(simulated time, events processed so far)` ->
/// whether to go on. While a world is built it is called with `(0, 0)`.
pub type Progress<'a> = dyn FnMut(SimTime, u64) -> bool + 'a;

/// How often (in events) the progress callback is called: every 10-20 ms
/// of wall time at the engine's speed (an event carries about twice the
/// work since endpoints take packets ahead of the clock).
const PROGRESS_EVERY: u64 = 1 << 17;
/// Worlds with at least this many flows warm the caches for each bucket of
/// events ([`World::warm`]); smaller ones fit in the caches.
const WARM_FLOWS: usize = 2_000;
/// How often (in flows) the progress callback is called while a world is built.
pub const BUILD_PROGRESS_EVERY: u32 = 1 << 14;

/// Why a run did not complete.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RunError {
    /// The progress callback asked to stop.
    #[error("run interrupted at simulated time {0}")]
    Interrupted(SimTime),
}

/// Facts of a flow.
#[derive(Clone, Debug)]
pub struct FlowMeta {
    pub group: u32,
    pub direction: Direction,
    /// When the flow starts (or started); `SimTime::MAX` for a flow the
    /// schedule has not started.
    pub start: SimTime,
    /// Base round-trip propagation delay (updated by scheduled delay changes).
    pub base_rtt: SimTime,
    /// The flow is started or due to start, and not stopped.
    pub live: bool,
    /// When the schedule stopped it.
    pub stopped: Option<SimTime>,
}

impl FlowMeta {
    /// Whether the flow sent during [from, to).
    fn active_in(&self, from: SimTime, to: SimTime) -> bool {
        self.start < to && self.stopped.is_none_or(|s| s > from)
    }
}

/// What the per-packet path needs of a flow besides its TCP state.
#[derive(Clone, Copy, Debug, Default)]
struct FlowTag {
    /// Connection number (see [`Packet::conn`]).
    conn: u8,
    /// A UDP source (`World::udp` holds it).
    udp: bool,
    /// A web session (`World::web` holds it).
    web: bool,
    /// Its ACKs carry SACK blocks (`tcp.sack`; `World::sack` holds them).
    sack: bool,
    /// A latency probe source (`kind = "ping"`; also `udp`).
    ping: bool,
    /// Its data packets' hash label follows its timeouts (`tcp.txrehash`).
    rehash: bool,
}

/// A traffic group's flows and which of them run.
#[derive(Clone, Debug, Default)]
struct GroupState {
    /// Flow ids of the group, initial flows first.
    members: Vec<u32>,
    /// Members before this index have been started (or scheduled to start).
    next: usize,
}

/// Engine switches that change speed, not results (up to the order of
/// events at the same nanosecond).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Pass packets through dedicated DropTail links ahead of time
    /// ([`crate::net::link::Link::pass_through`]).
    pub cut_through: bool,
    /// Plan departures at admission on the links that allow it
    /// ([`crate::net::link::Link::plan`]): no end-of-transmission events.
    pub plan_departures: bool,
    /// The event queue's bucket width, log2 ns (one of
    /// [`crate::sim::SHIFTS`]); `None`: [`crate::sim::bucket_shift_for`] the
    /// monitored links' rate. Changes nothing but speed, not even the order
    /// of simultaneous events.
    pub bucket_shift: Option<u32>,
    /// Let a TCP endpoint take a packet when the link before it fixes the
    /// packet's arrival, ahead of the simulated clock, instead of at an
    /// arrival event (`World::deliver`): the endpoint's inputs come from
    /// one link in order, and what it sends leaves on a link only it
    /// feeds, so it may run ahead up to the next instant that reads flow
    /// state. About half the events of a dumbbell's round trip fewer.
    pub ahead: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cut_through: true,
            plan_departures: true,
            bucket_shift: None,
            ahead: true,
        }
    }
}

/// [`World`]'s `ahead` for a route whose endpoint takes no packet ahead.
const NOT_AHEAD: u32 = u32::MAX;

/// A network in motion.
pub struct World {
    sc: Scenario,
    now: SimTime,
    events: EventQueue,
    arena: Arena,
    links: Vec<Link>,
    routes: Routes,
    /// Monitored links and their names; the first is the summary's bottleneck.
    monitored: Vec<(usize, String)>,
    /// The first `series_links` of `monitored` have rows in the queue time
    /// series; the rest (the dumbbell's `bottleneck-rev`) only summaries.
    series_links: usize,
    /// Dumbbell and parking lot: each flow's access links.
    access: Vec<[u32; 4]>,
    /// `links[l].cut_through`, densely (the common "no" needs no link).
    cut_through: Vec<bool>,
    /// The links whose departures are planned at admission, to be settled
    /// ([`Link::settle`]) before their state is read.
    planned: Vec<u32>,
    /// The topology's named duplex links: (name, forward, reverse) indices.
    duplex: Vec<(String, u32, u32)>,
    flows: Vec<TcpFlow>,
    /// The UDP source of each UDP flow (`None` for TCP flows).
    udp: Vec<Option<Box<UdpSource>>>,
    /// The application of each web flow.
    web: Vec<Option<Box<WebApp>>>,
    /// Connection number and application kind of each flow, densely (read
    /// on every packet's arrival).
    tag: Vec<FlowTag>,
    /// The SACK blocks of the ACKs in flight of SACK flows, indexed by
    /// packet id beside the arena (a packet stays 40 bytes): written when
    /// the ACK is sent, read when it arrives. Empty without SACK flows.
    sack: Vec<SackBlocks>,
    /// Per flow, payload bytes by which the delivered segments fall short
    /// of full ones (each `web` response's last segment carries
    /// `last_payload` <= mss bytes): delivered bytes = segments x mss - this.
    short_bytes: Vec<u64>,
    /// The probes of `ping` groups.
    pings: PingTable,
    /// Completed web transfers.
    responses: ResponseTable,
    /// Video sessions' segments and stalls (boxed: read only by video
    /// sessions, it keeps the fields after it where they were).
    videos: Box<video::VideoTable>,
    meta: Vec<FlowMeta>,
    groups: Vec<GroupState>,
    out: Vec<Seg>,
    series: QueueSeries,
    /// Measurement intervals: 0 is [metrics.start, duration], then the phases.
    intervals: Vec<Phase>,
    /// Per interval: the counters at its start (for a periodic phase moved
    /// on past each gap between its windows), and at the end of its last
    /// window so far (periodic phases only).
    snaps: Vec<Snapshot>,
    gaps: Vec<Snapshot>,
    /// Per interval: the window in progress or next (periodic phases).
    window_k: Vec<u64>,
    phase_results: Vec<PhaseSummary>,
    warnings: Vec<String>,
    extra: Extras,
    /// Warm the caches for each new bucket of events ([`World::warm`]):
    /// on in worlds too large for the caches.
    warm: bool,
    /// The packets [`World::warm`] works on (kept to reuse its storage).
    warm_ids: Vec<PktId>,
    warm_pkts: Vec<WarmPkt>,
    warm_links: Vec<u32>,
    /// Per route: the position of its last link ([`Routes::link_at`]) if
    /// its endpoint may take packets ahead of time ([`World::deliver`]),
    /// else [`NOT_AHEAD`]; empty when no route may (then nothing below is
    /// used).
    ahead: Vec<u32>,
    /// Per route: arrival events at its endpoint still pending (while one
    /// is, the endpoint takes no packet ahead of it).
    ahead_pending: Vec<u32>,
    /// Per route: packets that reached the endpoint's last link after a
    /// pending arrival event of the route, in order; the endpoint takes them
    /// once that event has been processed.
    ahead_held: Vec<std::collections::VecDeque<(PktId, SimTime)>>,
    /// An endpoint is taking a packet ahead of time (no nesting).
    in_ahead: bool,
    /// Times of the pending events that read flow state (interval starts
    /// and ends, schedule entries): no endpoint runs ahead past the
    /// earliest. (The flow series' samples are taken as the flows reach
    /// them: `sample.rs`.)
    barriers: BinaryHeap<Reverse<SimTime>>,
    /// Some flows are traced (`metrics.flow_series` is set): each takes its
    /// samples before an event of its own ([`World::flow_event`]).
    flow_samples: bool,
    /// The end of the current `run*` call: no endpoint runs ahead past it.
    horizon: SimTime,
    /// The schedule's applications in time order, repetitions included
    /// (`Event::Schedule(j)` is the `j`th).
    schedule: Vec<Occurrence>,
}

impl World {
    /// Build the network of `sc`, run with `sc.seed`.
    pub fn new(sc: &Scenario) -> World {
        World::with_options(sc, Options::default())
    }

    /// Build the network of `sc` with engine options (for tests and benchmarks).
    pub fn with_options(sc: &Scenario, opts: Options) -> World {
        match World::build(sc, opts, &mut |_, _| true) {
            Ok(w) => w,
            Err(RunError::Interrupted(_)) => unreachable!("the callback never stops the build"),
        }
    }

    /// Process every event up to and including time `t` (at most the end of the run).
    pub fn run_until(&mut self, t: SimTime) {
        let t = t.min(self.sc.duration);
        self.horizon = t;
        while let Some((at, ev)) = self.next_event(t) {
            self.now = at;
            self.dispatch(ev);
        }
        self.now = self.now.max(t);
        self.settle_all(self.now + SimTime(1));
    }

    /// Settle every planned link ([`Link::settle`]): to now within an
    /// event; to now + 1 ns after every event at now.
    fn settle_all(&mut self, until: SimTime) {
        for &l in &self.planned {
            self.links[l as usize].settle(until);
        }
    }

    /// Process at most `n` events (none after the end of the run); returns
    /// how many were processed. For benchmarks that measure a fixed
    /// amount of work.
    pub fn run_events(&mut self, n: u64) -> u64 {
        let end = self.sc.duration;
        self.horizon = end;
        let stop = self.events.processed() + n;
        let first = self.events.processed();
        while self.events.processed() < stop {
            let Some((at, ev)) = self.next_event(end) else {
                break;
            };
            self.now = at;
            self.dispatch(ev);
        }
        self.settle_all(self.now + SimTime(1));
        self.events.processed() - first
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// The current simulated time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// A flow's TCP state.
    pub fn flow(&self, f: usize) -> &TcpFlow {
        &self.flows[f]
    }

    /// A link's state (link 0 is the forward bottleneck of a dumbbell), as
    /// of now after [`World::run_until`] or [`World::run_events`].
    pub fn link(&self, l: usize) -> &Link {
        &self.links[l]
    }

    /// Run to the end; `progress(now, events)` is called now and then (with
    /// the events processed so far) and may return `false` to stop the run.
    pub fn run(mut self, progress: &mut Progress<'_>) -> Result<RunResult, RunError> {
        let wall = Instant::now();
        let end = self.sc.duration;
        self.horizon = end;
        let mut next_progress = PROGRESS_EVERY;
        while let Some((t, ev)) = self.next_event(end) {
            self.now = t;
            self.dispatch(ev);
            if self.events.processed() >= next_progress {
                next_progress += PROGRESS_EVERY;
                if !progress(t, self.events.processed()) {
                    return Err(RunError::Interrupted(t));
                }
            }
        }
        self.now = end;
        let mut r = self.finish();
        r.summary.wall_time_s = wall.elapsed().as_secs_f64();
        Ok(r)
    }

    /// The next event due at or before `until`.
    #[inline(always)]
    fn next_event(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let e = self.events.pop_until(until);
        if self.warm && self.events.take_fresh() {
            self.warm();
        }
        e
    }

    /// The per-packet events inline; the rest in [`World::dispatch_rare`],
    /// which keeps the hot loop small.
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Arrive(id) => self.arrive(id),
            Event::TxDone(l) => {
                self.links[l as usize].txdone_pending = false;
                self.kick(l as usize);
            }
            Event::RtoTimer(f) => self.rto_timer(f as usize),
            _ => self.dispatch_rare(ev),
        }
    }

    #[inline(never)]
    fn dispatch_rare(&mut self, ev: Event) {
        match ev {
            Event::Arrive(_) | Event::TxDone(_) | Event::RtoTimer(_) => self.dispatch(ev),
            Event::DelAckTimer(f) => self.delack_timer(f as usize),
            Event::PaceTimer(f) => self.pace_timer(f as usize),
            Event::FlowStart(f) => self.start_flow(f),
            Event::UdpSend(f) => self.udp_send(f as usize),
            Event::AqmTick(l) => {
                let link = &mut self.links[l as usize];
                link.settle(self.now);
                let q = link.qlen();
                link.aqm.on_tick(self.now, q);
                link.note_changes(self.now);
                if let Some(dt) = link.aqm.tick_interval() {
                    self.events.schedule(self.now + dt, Event::AqmTick(l));
                }
            }
            Event::Sample => self.sample(),
            Event::IntervalStart(i) => {
                self.pass_barrier();
                self.window_start(i as usize)
            }
            Event::IntervalEnd(i) => {
                self.pass_barrier();
                self.window_end(i as usize)
            }
            Event::Schedule(j) => {
                self.pass_barrier();
                self.apply_schedule(self.schedule[j as usize])
            }
        }
    }
}

/// Run a scenario to the end.
pub fn run(sc: &Scenario, progress: &mut Progress<'_>) -> Result<RunResult, RunError> {
    World::build(sc, Options::default(), progress)?.run(progress)
}

/// Run a scenario and also return the accounting check (for tests).
pub fn run_checked(sc: &Scenario) -> (RunResult, Result<(), String>) {
    let mut w = World::new(sc);
    w.run_until(sc.duration);
    let check = w.check_accounting();
    (w.finish(), check)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dumbbell with `n` forward bulk flows that all start at 0 s.
    fn same_instant(n: i64) -> Scenario {
        use crate::scenario::Value;
        let s = |x: &str| Value::Str(x.into());
        Scenario::from_value(Value::Table(vec![
            ("duration".into(), s("1s")),
            (
                "topology".into(),
                Value::Table(vec![("bottleneck_rate".into(), s("10Gbps"))]),
            ),
            (
                "traffic".into(),
                Value::Array(vec![Value::Table(vec![
                    ("kind".into(), s("bulk")),
                    ("flows".into(), Value::Int(n)),
                    ("start".into(), s("0s")),
                ])]),
            ),
        ]))
        .expect("valid scenario")
    }

    /// Flows that start at one instant are set up in time linear
    /// in their number. Counted, not timed: the event queue's comparisons
    /// while every flow starts and sends its first packets stay within a
    /// few dozen per event (a scan of the instant's events, as before,
    /// made 50 000 starts cost 1.25e9).
    #[test]
    fn flows_starting_at_one_instant_cost_linear_work() {
        let n = 50_000;
        let mut w = World::new(&same_instant(n));
        let before = crate::sim::COMPARISONS.with(|c| c.get());
        w.run_until(SimTime::from_micros(100));
        let cmps = crate::sim::COMPARISONS.with(|c| c.get()) - before;
        let events = w.events_processed();
        assert!(events >= n as u64, "every flow started: {events} events");
        assert!(
            cmps <= 40 * events,
            "{cmps} comparisons for {events} events ({} per event)",
            cmps / events
        );
    }

    /// Building a world of many flows can be stopped: the
    /// progress callback is asked every `BUILD_PROGRESS_EVERY` flows, and
    /// `false` ends the build with `Interrupted`.
    #[test]
    fn building_many_flows_is_interruptible() {
        let n = 5 * BUILD_PROGRESS_EVERY as i64;
        let sc = same_instant(n);
        let mut calls = 0;
        let r = World::build(&sc, Options::default(), &mut |t, events| {
            assert_eq!((t, events), (SimTime::ZERO, 0));
            calls += 1;
            true
        });
        assert!(r.is_ok());
        assert_eq!(calls, 5, "one call per {BUILD_PROGRESS_EVERY} flows");
        let mut calls = 0;
        let r = World::build(&sc, Options::default(), &mut |_, _| {
            calls += 1;
            calls < 2
        });
        assert_eq!(r.err(), Some(RunError::Interrupted(SimTime::ZERO)));
        assert_eq!(calls, 2, "the build stops at the first `false`");
        // The whole run stops the same way.
        let r = run(&sc, &mut |_, _| false);
        assert!(matches!(r, Err(RunError::Interrupted(_))));
    }
}
