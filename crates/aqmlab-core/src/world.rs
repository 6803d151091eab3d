//! The run: builds the network of a scenario, runs the event loop and
//! gathers the results.

use crate::aqm::{Aqm, LinkInfo, PacketInfo};
use crate::metrics::{
    jain, DelayTable, EventTrace, FlowSeries, LinkStats, ParamSeries, QueueFigures,
};
use crate::net::link::{Link, Offer, TxResult};
use crate::net::topology::{self, Routes, ROUTE_END};
use crate::packet::{flags, Arena, Ecn, Packet, PktId};
use crate::rng::{Rng, Stream};
use crate::scenario::web::{FirstPage, Http, Pages};
use crate::scenario::{Action, Direction, LinkSel, Purpose, Scenario, TrafficSpec};
use crate::sim::{Event, EventQueue};
use crate::traffic::web::{Assigned, Phase, Session};
use crate::transport::{FlowStats, Seg, TcpConfig, TcpFlow, UdpSource};
use crate::units::SimTime;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

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
}

/// A traffic group's flows and which of them run.
#[derive(Clone, Debug, Default)]
struct GroupState {
    /// Flow ids of the group, initial flows first.
    members: Vec<u32>,
    /// Members before this index have been started (or scheduled to start).
    next: usize,
}

/// The queue time series of the monitored link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueSeries {
    /// Name of the monitored link of the row.
    pub link: Vec<String>,
    pub time_s: Vec<f64>,
    pub queue_pkts: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    /// The AQM's average queue (NaN where the scheme has none).
    pub avg: Vec<f64>,
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
    /// Bytes that started transmission since the start of the run
    /// (cumulative; its differences give the link's throughput series).
    pub departed_bytes: Vec<u64>,
}

/// One row per flow, over the measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowTable {
    pub flow: Vec<u32>,
    pub group: Vec<u32>,
    /// The traffic kind of the flow's group.
    pub kind: Vec<&'static str>,
    pub direction: Vec<&'static str>,
    pub start_s: Vec<f64>,
    pub base_rtt_s: Vec<f64>,
    pub bytes_delivered: Vec<u64>,
    pub goodput_bps: Vec<f64>,
    pub data_sent: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub timeouts: Vec<u64>,
    pub fast_retransmits: Vec<u64>,
    pub marks_seen: Vec<u64>,
    pub ecn_reductions: Vec<u64>,
    pub drops: Vec<u64>,
    pub rtt_mean_s: Vec<f64>,
    pub cwnd_final: Vec<f64>,
}

/// Figures of the monitored link over the measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BottleneckSummary {
    pub utilization: f64,
    pub throughput_bps: f64,
    pub loss_rate: f64,
    /// Dropped data segments / data segments offered: the loss of data,
    /// without the pure ACKs among the arrivals.
    pub data_loss_rate: f64,
    pub arrivals: u64,
    pub departures: u64,
    pub drops_early: u64,
    pub drops_forced: u64,
    pub drops_overflow: u64,
    pub marks: u64,
    pub marks_early: u64,
    pub marks_forced: u64,
    pub lost_on_link: u64,
    /// Time-weighted queue in packets: mean, standard deviation, and the
    /// mean over `metrics.window` windows of each window's deviation.
    pub queue_mean_pkts: f64,
    pub queue_std_pkts: f64,
    pub queue_window_std_mean_pkts: f64,
    /// The same in bytes (the unit of a byte-mode scheme's queue).
    pub queue_mean_bytes: f64,
    pub queue_std_bytes: f64,
    pub queue_window_std_mean_bytes: f64,
    /// Mean size of the packets that arrived in the interval, bytes (NaN
    /// without arrivals).
    pub arrival_mean_size_bytes: f64,
    /// The byte figures in packets of that mean size (bytes /
    /// `arrival_mean_size_bytes`): a byte-mode queue in packets of the
    /// traffic's own mean size (NaN without arrivals).
    pub queue_mean_meanpkts: f64,
    pub queue_std_meanpkts: f64,
    pub queue_window_std_mean_meanpkts: f64,
    pub queue_windows: u64,
    pub queuing_delay_mean_s: f64,
    /// Quantiles and maximum of the queueing delays of the packets that
    /// left the queue in the interval (log-binned: within 3.2 %; the
    /// maximum exact), seconds.
    pub queuing_delay_p50_s: f64,
    pub queuing_delay_p90_s: f64,
    pub queuing_delay_p99_s: f64,
    pub queuing_delay_max_s: f64,
}

/// A monitored link's figures with its name.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkSummary {
    pub name: String,
    #[serde(flatten)]
    pub figures: BottleneckSummary,
}

/// One web session (`web-simple`): its current transfer and its draws.
#[derive(Clone, Debug)]
struct WebSession {
    mean_packets: f64,
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
    /// Begin a transfer at `now`: draw its size (exponential with mean
    /// `mean_packets`, rounded to whole segments, at least one).
    fn begin(&mut self, now: SimTime) -> u64 {
        let n = self.rng.exp(self.mean_packets).round().max(1.0) as u64;
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
enum WebApp {
    /// `web-simple`.
    Simple(WebSession),
    /// `web`: pages of objects ([`crate::traffic::web`]).
    Browse(Session),
}

/// Completed transfers (web sessions): one row each.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ResponseTable {
    /// The flow (with lanes, the lane) that fetched it.
    pub flow: Vec<u32>,
    /// The session: its first flow (the owner of its lanes; the flow
    /// itself without lanes).
    pub session: Vec<u32>,
    pub group: Vec<u32>,
    /// Page of the session (`web`: pages counted from 0, by the session
    /// whatever lane fetched it; `web-simple`: the transfer's number).
    /// With the same seed, (`session`, `page`, `object`) names the same
    /// object in every run of a scenario.
    pub page: Vec<u64>,
    /// Index of the object in its page (0 for `web-simple`).
    pub object: Vec<u32>,
    /// Payload bytes of the response.
    pub size_bytes: Vec<u64>,
    /// When the transfer began: its first SYN (a new connection), the
    /// request (a persistent connection), or its first data packet
    /// without a handshake.
    pub start_s: Vec<f64>,
    /// When the last byte reached the client.
    pub end_s: Vec<f64>,
    pub response_time_s: Vec<f64>,
}

/// Response times of the transfers completed in an interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WebSummary {
    pub completed: u64,
    pub response_time_mean_s: f64,
    pub response_time_p50_s: f64,
    pub response_time_p90_s: f64,
    pub response_time_p99_s: f64,
    /// Connection set-up of every TCP flow in the interval: SYNs dropped
    /// in the network, SYN/ACKs sent, dropped and arrived CE-marked, SYNs
    /// and requests sent again.
    pub syn_drops: u64,
    pub synacks_sent: u64,
    pub synack_drops: u64,
    pub synack_marks: u64,
    pub syn_retransmits: u64,
    pub request_retransmits: u64,
    /// Connection teardown: client FINs and server FIN/ACKs sent.
    pub fins_sent: u64,
    pub fin_acks_sent: u64,
    /// Open pages (`pages = "open"`) that waited for a free lane.
    pub pages_waited: u64,
}

impl WebSummary {
    /// Over the responses that ended in [from, to].
    fn of(r: &ResponseTable, from: f64, to: f64) -> Option<WebSummary> {
        let mut t: Vec<f64> = (0..r.end_s.len())
            .filter(|&i| r.end_s[i] >= from && r.end_s[i] <= to)
            .map(|i| r.response_time_s[i])
            .collect();
        if t.is_empty() {
            return None;
        }
        t.sort_by(f64::total_cmp);
        let q = |p: f64| t[((p * t.len() as f64).ceil() as usize).clamp(1, t.len()) - 1];
        Some(WebSummary {
            completed: t.len() as u64,
            response_time_mean_s: t.iter().sum::<f64>() / t.len() as f64,
            response_time_p50_s: q(0.5),
            response_time_p90_s: q(0.9),
            response_time_p99_s: q(0.99),
            ..WebSummary::default()
        })
    }
}

/// Figures of the UDP flows over an interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UdpSummary {
    pub count: u64,
    /// Bits per second sent by the sources (packets on the wire).
    pub sent_bps: f64,
    /// Bits per second that reached the receivers.
    pub delivered_bps: f64,
    /// Share of the packets sent that were lost.
    pub loss_rate: f64,
}

/// The figures of one `[metrics] phases` interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseSummary {
    pub start_s: f64,
    pub end_s: f64,
    pub bottleneck: BottleneckSummary,
    pub links: Vec<LinkSummary>,
    pub flows: FlowsSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<WebSummary>,
}

/// Figures of the flows whose data crosses the monitored link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowsSummary {
    pub count: u64,
    pub goodput_bps_total: f64,
    pub jain_fairness: f64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Fast retransmissions (loss recoveries entered on three duplicate ACKs).
    pub fast_retransmits: u64,
    /// Window reductions in answer to ECN-Echo.
    pub ecn_reductions: u64,
    pub marks_seen: u64,
    /// Mean of the flows' RTT samples (their measured round-trip times,
    /// queueing included), seconds; NaN without samples.
    pub rtt_mean_s: f64,
}

/// Every scalar figure of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub duration_s: f64,
    pub seed: u64,
    pub measure_start_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    /// The first monitored link (the dumbbell's R1 -> R2).
    pub bottleneck: BottleneckSummary,
    /// Every monitored link.
    pub links: Vec<LinkSummary>,
    /// Forward flows active during the measurement interval.
    pub flows: FlowsSummary,
    /// UDP flows (cbr, udp-onoff), when the scenario has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpSummary>,
    /// Web transfers completed in the interval, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<WebSummary>,
    /// One entry per `[metrics] phases` interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSummary>,
    /// Scheduled changes that could not be applied as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Counters at the start of a measurement interval.
#[derive(Clone, Debug, Default)]
struct Snapshot {
    links: Vec<LinkStats>,
    /// Bits each monitored link could have sent by then.
    capacity_bits: Vec<f64>,
    /// Bits of the packet each monitored link was sending then, still to go.
    pending_bits: Vec<f64>,
    flows: Vec<FlowStats>,
    /// [`World::short_bytes`] then.
    short_bytes: Vec<u64>,
}

/// Everything a run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The resolved scenario (defaults filled in, seed as run).
    pub scenario: Scenario,
    pub summary: Summary,
    pub queue: QueueSeries,
    /// The monitored link's AQM parameters over time.
    pub params: ParamSeries,
    pub flows: FlowTable,
    /// Completed web transfers (empty without web traffic).
    pub responses: ResponseTable,
    /// Largest number of packets alive at once (arena slots used).
    pub peak_packets: usize,
    /// Queueing delay histogram of each monitored link (measurement interval).
    pub delay: DelayTable,
    /// Chosen flows' TCP state over time (`metrics.flow_series`; else empty).
    pub flow_series: FlowSeries,
    /// Drops and marks on the monitored links (`metrics.trace`; else empty).
    pub events: EventTrace,
}

/// The optional series (issue 15): state between samples.
#[derive(Default)]
struct Extras {
    flow_series: FlowSeries,
    /// Segments each traced flow had delivered, and data packets that had
    /// reached its receiver, at the previous sample.
    last_delivered: Vec<(u64, u64)>,
    last_sample: SimTime,
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
    /// Per flow, payload bytes by which the delivered segments fall short
    /// of full ones (each `web` response's last segment carries
    /// `last_payload` <= mss bytes): delivered bytes = segments x mss - this.
    short_bytes: Vec<u64>,
    /// Completed web transfers.
    responses: ResponseTable,
    meta: Vec<FlowMeta>,
    groups: Vec<GroupState>,
    out: Vec<Seg>,
    series: QueueSeries,
    /// Measurement intervals: 0 is [metrics.start, duration], then the phases.
    intervals: Vec<(SimTime, SimTime)>,
    snaps: Vec<Snapshot>,
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
    /// and ends, schedule entries, samples of `metrics.flow_series`): no
    /// endpoint runs ahead past the earliest.
    barriers: BinaryHeap<Reverse<SimTime>>,
    /// Samples read flow state (`metrics.flow_series` is set).
    flow_samples: bool,
    /// The end of the current `run*` call: no endpoint runs ahead past it.
    horizon: SimTime,
}

/// What [`World::warm`] has learnt of a packet so far.
#[derive(Clone, Copy, Debug)]
struct WarmPkt {
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

    /// Build the network of `sc`, calling `progress(0, 0)` every
    /// [`BUILD_PROGRESS_EVERY`] flows (so that a set-up of 10^6 flows can be
    /// interrupted); `false` stops the build.
    pub fn build(
        sc: &Scenario,
        opts: Options,
        progress: &mut Progress<'_>,
    ) -> Result<World, RunError> {
        let seed = sc.seed;
        let app_seed = sc.seed_for(Purpose::App);
        let total = sc.total_flows() as usize;
        let mut meta: Vec<FlowMeta> = Vec::with_capacity(total);
        let mut flows = crate::mem::huge_vec(total);
        let mut udp = Vec::with_capacity(total);
        let mut web = Vec::with_capacity(total);
        let mut web_rtt: Vec<(usize, SimTime)> = Vec::new();
        let mut groups = Vec::with_capacity(sc.traffic.len());
        for (g, group) in sc.traffic.iter().enumerate() {
            let mut rng = Rng::new(sc.seed_for(Purpose::Start), Stream::Traffic(g as u32));
            let mut gs = GroupState::default();
            // `[tcp]` with the group's own keys (packet_size, variant, ...).
            let tcp = group.tcp(&sc.tcp);
            let tcp_cfg = match group {
                TrafficSpec::Bulk(b) => {
                    TcpConfig::from_spec(&tcp, b.handshake, b.ecn.unwrap_or(sc.tcp.ecn))
                }
                TrafficSpec::WebSimple(w) => {
                    TcpConfig::from_spec(&tcp, w.handshake, w.ecn.unwrap_or(sc.tcp.ecn))
                }
                TrafficSpec::Web(w) => {
                    TcpConfig::passive(&tcp, w.ecn.unwrap_or(sc.tcp.ecn), w.request_size as u32)
                }
                TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => {
                    // Only the statistics are used; mss = payload of a packet.
                    let spec = crate::scenario::TcpSpec {
                        packet_size: u.packet_size.max(crate::scenario::HEADER_BYTES),
                        ..sc.tcp
                    };
                    TcpConfig::from_spec(&spec, false, false)
                }
            };
            let n0 = group.flows();
            for i in 0..sc.group_capacity(g) {
                let initial = i < n0;
                let f = meta.len() as u32;
                if f % BUILD_PROGRESS_EVERY == BUILD_PROGRESS_EVERY - 1
                    && !progress(SimTime::ZERO, 0)
                {
                    return Err(RunError::Interrupted(SimTime::ZERO));
                }
                gs.members.push(f);
                // Open web pages: the lanes of a session are consecutive
                // flows that start with the session's first (its owner).
                let lanes = match group {
                    TrafficSpec::Web(w) => w.lanes.max(1),
                    _ => 1,
                };
                let owner = f - i % lanes;
                meta.push(FlowMeta {
                    group: g as u32,
                    direction: group.direction(),
                    start: if !initial {
                        SimTime::MAX
                    } else if owner == f {
                        group.start().sample(&mut rng)
                    } else {
                        meta[owner as usize].start
                    },
                    base_rtt: SimTime::ZERO,
                    live: initial,
                    stopped: None,
                });
                flows.push(TcpFlow::new(tcp_cfg));
                web.push(match group {
                    TrafficSpec::WebSimple(w) => Some(Box::new(WebApp::Simple(WebSession {
                        mean_packets: w.mean_packets,
                        think_s: w.think.as_secs_f64(),
                        rng: Rng::new(app_seed, Stream::App(f)),
                        segments: 0,
                        started: SimTime::ZERO,
                        active: false,
                        responded: false,
                        transfers: 0,
                    }))),
                    TrafficSpec::Web(w) => {
                        // On the dumbbell the session's first draw is its
                        // base RTT: from the RTT seed's copy of the stream,
                        // the application's copy skipping it (the same
                        // stream when both seeds are the run's).
                        // The lanes of an open session share its owner's
                        // RTT (one client). A session with lanes draws its
                        // RTT and keeps its page clock on a stream of the
                        // session, so that neither depends on `lanes`.
                        let stream = if w.params.laned() {
                            Stream::Session(g as u32, i / lanes)
                        } else {
                            Stream::App(f)
                        };
                        let mut rng = Rng::new(app_seed, stream);
                        if let Some(rtt) = w.rtt {
                            let rtt_stream = if w.params.laned() {
                                stream
                            } else {
                                Stream::App(owner)
                            };
                            let mut r = Rng::new(sc.seed_for(Purpose::Rtt), rtt_stream);
                            web_rtt.push((f as usize, rtt.sample(&mut r)));
                            let _ = rtt.sample(&mut rng);
                        }
                        Some(Box::new(WebApp::Browse(Session::new(
                            w.params,
                            rng,
                            owner as usize,
                        ))))
                    }
                    _ => None,
                });
                udp.push(match group {
                    TrafficSpec::Bulk(_) | TrafficSpec::WebSimple(_) | TrafficSpec::Web(_) => None,
                    TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => {
                        Some(Box::new(UdpSource::new(
                            u.packet_size,
                            udp_rate(sc, g, u),
                            u.on.zip(u.off),
                            Rng::new(app_seed, Stream::App(f)),
                        )))
                    }
                });
            }
            gs.next = n0 as usize;
            groups.push(gs);
        }
        let groups_of: Vec<u32> = meta.iter().map(|m| m.group).collect();
        let live: Vec<bool> = meta.iter().map(|m| m.live).collect();
        let mut built = topology::build(sc, seed, &groups_of, &live);
        // Scheduled link changes make ahead-of-time passing inexact.
        let link_changes = sc
            .schedule
            .iter()
            .any(|e| matches!(e.action, Action::Link { .. }));
        for (m, r) in meta.iter_mut().zip(&built.base_rtt) {
            m.base_rtt = *r;
        }
        // Web sessions on the dumbbell: access delays that give each its
        // drawn base RTT, 2 x (bottleneck delay + 2 x access delay).
        let bd = sc.dumbbell().map_or(SimTime::ZERO, |d| d.bottleneck_delay);
        for &(f, rtt) in &web_rtt {
            let a = SimTime(rtt.0.saturating_sub(2 * bd.0) / 4);
            for l in built.access[f] {
                built.links[l as usize].delay = a;
            }
            meta[f].base_rtt = SimTime(2 * (bd.0 + 2 * a.0));
        }
        let mut monitored: Vec<(usize, String)> = built
            .monitored
            .iter()
            .map(|(l, name)| (*l as usize, name.clone()))
            .collect();
        let series_links = monitored.len();
        if sc.dumbbell().is_some() {
            // The reverse direction of the dumbbell's bottleneck (R2 -> R1,
            // the reverse flows' data and the forward flows' ACKs): in the
            // summaries as `links` entry "bottleneck-rev", not in the series.
            monitored.push((
                topology::BOTTLENECK_REV as usize,
                "bottleneck-rev".to_string(),
            ));
        }
        for (l, _) in &monitored {
            let mut m = Box::<crate::metrics::QueueMonitor>::default();
            if sc.metrics.trace {
                m.trace = Some(crate::metrics::LinkTrace {
                    limit: sc.metrics.trace_limit,
                    ..Default::default()
                });
            }
            built.links[*l].monitor = Some(m);
        }
        // After the monitors: a monitored link is never passed through.
        if opts.cut_through && !link_changes {
            topology::mark_cut_through(&mut built.links, &built.routes);
        }
        // A planned packet's start and arrival are fixed at admission.
        let mut planned = Vec::new();
        if opts.plan_departures && !link_changes {
            for (l, link) in built.links.iter_mut().enumerate() {
                if !link.cut_through && link.plan() {
                    planned.push(l as u32);
                }
            }
        }
        let mut intervals = vec![(sc.metrics.start, sc.duration)];
        intervals.extend(sc.metrics.phases.iter().copied());
        let n = flows.len();
        // The event queue's buckets suit the monitored links' rate (the
        // bottlenecks'; of all links if none is monitored).
        let fastest =
            |ls: &mut dyn Iterator<Item = usize>| ls.map(|l| built.links[l].rate.bps()).max();
        let bps = fastest(&mut built.monitored.iter().map(|&(l, _)| l as usize))
            .or_else(|| fastest(&mut (0..built.links.len())))
            .unwrap_or(0);
        let shift = opts
            .bucket_shift
            .filter(|s| crate::sim::SHIFTS.contains(s))
            .unwrap_or_else(|| crate::sim::bucket_shift_for(bps));
        let mut w = World {
            sc: sc.clone(),
            now: SimTime::ZERO,
            events: EventQueue::with_layout(
                4 * n + 64,
                shift,
                crate::sim::slot_bits_for(bps, shift),
            ),
            arena: if n >= WARM_FLOWS {
                Arena::in_order(1024)
            } else {
                Arena::with_capacity(1024)
            },
            cut_through: built.links.iter().map(|l| l.cut_through).collect(),
            planned,
            links: built.links,
            routes: Routes::new(&built.routes),
            monitored,
            series_links,
            access: built.access,
            duplex: built.duplex,
            tag: (0..flows.len())
                .map(|f| FlowTag {
                    conn: 0,
                    udp: udp[f].is_some(),
                    web: web[f].is_some(),
                })
                .collect(),
            short_bytes: vec![0; flows.len()],
            flows,
            udp,
            web,
            responses: ResponseTable::default(),
            meta,
            groups,
            out: Vec::with_capacity(64),
            series: QueueSeries::default(),
            snaps: vec![Snapshot::default(); intervals.len()],
            phase_results: vec![PhaseSummary::default(); intervals.len()],
            intervals,
            warnings: Vec::new(),
            extra: Extras::default(),
            warm: false,
            warm_ids: Vec::new(),
            warm_pkts: Vec::new(),
            warm_links: Vec::new(),
            ahead: Vec::new(),
            ahead_pending: Vec::new(),
            ahead_held: Vec::new(),
            in_ahead: false,
            barriers: BinaryHeap::new(),
            flow_samples: !sc.metrics.flow_series.is_empty(),
            horizon: sc.duration,
        };
        w.warm = w.flows.len() >= WARM_FLOWS;
        if opts.ahead && !link_changes {
            w.ahead = w.ahead_routes();
            if w.ahead.iter().any(|&a| a != NOT_AHEAD) {
                w.ahead_pending = vec![0; w.ahead.len()];
                w.ahead_held = (0..w.ahead.len()).map(|_| Default::default()).collect();
            } else {
                w.ahead = Vec::new();
            }
        }
        for (i, (a, b)) in w.intervals.clone().into_iter().enumerate() {
            w.schedule_barrier(a, Event::IntervalStart(i as u32));
            if i > 0 {
                w.schedule_barrier(b, Event::IntervalEnd(i as u32));
            }
        }
        if w.flow_samples {
            w.schedule_barrier(SimTime::ZERO, Event::Sample);
        } else {
            w.events.schedule(SimTime::ZERO, Event::Sample);
        }
        for f in 0..n {
            if w.meta[f].live {
                w.events
                    .schedule(w.meta[f].start, Event::FlowStart(f as u32));
            }
        }
        for (i, l) in w.links.iter().enumerate() {
            if let Some(t) = l.aqm.tick_interval() {
                w.events.schedule(t, Event::AqmTick(i as u32));
            }
        }
        for (i, e) in sc.schedule_in_order() {
            w.schedule_barrier(e.at, Event::Schedule(i as u32));
        }
        if !web_rtt.is_empty() {
            // The bottleneck AQMs were built with the topology's access
            // delays; tell them the sessions' round-trip times.
            w.notify_links(&w.select_all());
        }
        Ok(w)
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
    fn warm(&mut self) {
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
            Event::FlowStart(f) => {
                if self.meta[f as usize].stopped.is_some() {
                    return; // stopped by the schedule before it started
                }
                if let Some(u) = self.udp[f as usize].as_mut() {
                    if let Some(t) = u.start(self.now) {
                        self.events.schedule(t, Event::UdpSend(f));
                    }
                    return;
                }
                if let Some(app) = self.web[f as usize].as_deref_mut() {
                    let w = match app {
                        WebApp::Simple(w) => w,
                        WebApp::Browse(_) => {
                            self.browse_event(f as usize);
                            return;
                        }
                    };
                    let n = w.begin(self.now);
                    let fl = &mut self.flows[f as usize];
                    if fl.started() {
                        fl.new_connection(n);
                        self.tag[f as usize].conn = self.tag[f as usize].conn.wrapping_add(1);
                    } else {
                        fl.new_connection(n);
                    }
                }
                let mut out = std::mem::take(&mut self.out);
                self.flows[f as usize].start(self.now, &mut out);
                self.emit(f as usize, &mut out);
                self.out = out;
            }
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
            Event::Sample => {
                if self.flow_samples {
                    self.pass_barrier();
                }
                self.sample()
            }
            Event::IntervalStart(i) => {
                self.pass_barrier();
                self.interval_start(i as usize)
            }
            Event::IntervalEnd(i) => {
                self.pass_barrier();
                let i = i as usize;
                self.settle_all(self.now);
                self.phase_results[i] = self.interval_summary(i, self.now).0;
            }
            Event::Schedule(i) => {
                self.pass_barrier();
                self.apply_schedule(i as usize)
            }
        }
    }

    /// A packet reaches the far end of its current link.
    #[inline]
    fn arrive(&mut self, id: PktId) {
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

    /// The last pending arrival event of route `r` has been processed: its
    /// endpoint takes the packets held behind it ([`World::deliver`]), in
    /// order, as long as they come before the next instant that reads flow
    /// state (the rest wait for events).
    #[cold]
    fn release_held(&mut self, r: usize) {
        while let Some((id, t)) = self.ahead_held[r].pop_front() {
            if self.ahead_pending[r] == 0 && !self.in_ahead && t < self.ahead_until() {
                self.arrive_ahead(id, t);
            } else {
                self.ahead_pending[r] += 1;
                self.events.schedule(t, Event::Arrive(id));
            }
        }
    }

    /// Packet `id` (`p`) has reached its flow's endpoint: the receiver (data,
    /// even routes) or the sender (ACKs, odd routes) takes it now.
    #[inline]
    fn at_endpoint(&mut self, id: PktId, p: Packet) {
        self.arena.free(id);
        let f = p.flow as usize;
        let tag = self.tag[f];
        if tag.udp {
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
            if p.dir == 1 {
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
        if p.dir == 0 {
            self.flows[f].on_data(self.now, p.seq, p.flags, p.ecn, p.ts, &mut out);
        } else {
            self.flows[f].on_ack(self.now, p.seq, p.flags, p.ecn, &mut out);
        }
        self.emit(f, &mut out);
        self.out = out;
        if tag.web {
            self.web_progress(f);
        }
    }

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
    /// and ends, schedule entries, samples of `metrics.flow_series`, the
    /// end of a `run*` call) bound how far ahead it may go. A packet due
    /// past such an instant (or sent to an endpoint while another runs
    /// ahead) gets an arrival event; while one is pending, the route's
    /// later packets are held and taken when it has been processed
    /// ([`World::release_held`]), so the endpoint takes its packets in
    /// order.
    #[inline]
    fn deliver(&mut self, id: PktId, t: SimTime) {
        if !self.ahead.is_empty() {
            let p = self.arena.get(id);
            let r = p.route();
            if self.ahead[r] == p.pos {
                if !self.in_ahead && t < self.ahead_until() {
                    if self.ahead_pending[r] == 0 {
                        self.arrive_ahead(id, t);
                    } else {
                        self.ahead_held[r].push_back((id, t));
                    }
                    return;
                }
                self.ahead_pending[r] += 1;
            }
        }
        self.events.schedule(t, Event::Arrive(id));
    }

    /// The earliest instant that reads flow state (see [`World::deliver`]).
    #[inline]
    fn ahead_until(&self) -> SimTime {
        match self.barriers.peek() {
            Some(&Reverse(b)) => b.min(self.horizon),
            None => self.horizon,
        }
    }

    /// Schedule `ev`, an event that reads flow state, at `at`.
    fn schedule_barrier(&mut self, at: SimTime, ev: Event) {
        self.barriers.push(Reverse(at));
        self.events.schedule(at, ev);
    }

    /// An event scheduled by [`World::schedule_barrier`] is being processed.
    fn pass_barrier(&mut self) {
        let b = self.barriers.pop();
        debug_assert_eq!(b, Some(Reverse(self.now)), "barriers out of step");
    }

    /// The endpoint of packet `id`'s route takes it at `t`, ahead of the
    /// clock ([`World::deliver`]): first the endpoint's own timers due
    /// before `t` (the receiver's delayed ACK, the sender's retransmission
    /// timer), each at its time, as their events would have come first,
    /// and one due at `t` itself in the order the two events would have
    /// had; then the packet, as [`World::arrive`] would at `t`. The timers'
    /// pending events stay in the queue and find nothing due.
    #[inline(never)]
    fn arrive_ahead(&mut self, id: PktId, t: SimTime) {
        let p = *self.arena.get(id);
        let f = p.flow as usize;
        let now = self.now;
        self.in_ahead = true;
        loop {
            let fl = &self.flows[f];
            let (due, event) = if p.dir == 0 {
                (fl.delack_deadline, fl.delack_event)
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
            let mut out = std::mem::take(&mut self.out);
            if p.dir == 0 {
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

    /// Which routes' endpoints may take packets ahead of time
    /// ([`World::deliver`]): those of TCP flows without a web application
    /// whose route back starts on a cut-through link that no other route
    /// uses (the endpoint's own way out).
    fn ahead_routes(&self) -> Vec<u32> {
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

    /// A web session's transfer may have delivered its last byte or had it
    /// acknowledged.
    fn web_progress(&mut self, f: usize) {
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
    fn browse_event(&mut self, f: usize) {
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
    fn browse_open_page(&mut self, owner: usize) {
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
    fn browse_open_begin(&mut self, l: usize, a: Assigned) {
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
    fn browse_wake(&mut self, f: usize, secs: f64) {
        let left = (self.sc.duration - self.now).as_secs_f64();
        if secs < left {
            let t = self.now + SimTime::from_secs_f64(secs);
            self.events.schedule(t, Event::FlowStart(f as u32));
        }
    }

    /// Session `f` asks for its current page's next object: over a new
    /// connection (HTTP/1.0, or a page's first object), or on the page's
    /// persistent connection.
    fn browse_fetch(&mut self, f: usize) {
        let now = self.now;
        let mss = self.flows[f].mss();
        let Some(WebApp::Browse(s)) = self.web[f].as_deref_mut() else {
            return;
        };
        let reuse = s.p.http == Http::V11 && s.object > 0;
        let o = s.draw_object(mss);
        s.started = now;
        let mut out = std::mem::take(&mut self.out);
        let fl = &mut self.flows[f];
        if s.p.http == Http::WebTraf {
            s.end = o.segments;
            s.requesting = true;
            fl.new_request_connection();
            self.tag[f].conn = self.tag[f].conn.wrapping_add(1);
            fl.client_connect(now, o.segments, o.last_payload, &mut out);
        } else if reuse {
            s.end += o.segments;
            fl.client_request(now, o.segments, o.last_payload, &mut out);
        } else {
            s.end = o.segments;
            fl.new_passive_connection();
            self.tag[f].conn = self.tag[f].conn.wrapping_add(1);
            fl.client_connect(now, o.segments, o.last_payload, &mut out);
        }
        self.emit(f, &mut out);
        self.out = out;
    }

    /// A packet of session `f` arrived: record the response if its last
    /// byte is in, then fetch the next object or start thinking.
    fn browse_progress(&mut self, f: usize) {
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
    fn send_teardown(&mut self, f: usize, from_client: bool, conn: u8) {
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
            dir,
            conn,
            flags: flags::FIN | flags::ACK,
            ecn: Ecn::NotEct,
        });
        self.send_on(self.routes.link_at(pos) as usize, id);
    }

    /// A UDP source's timer: maybe send a packet, then re-arm.
    fn udp_send(&mut self, f: usize) {
        let Some(u) = self.udp[f].as_mut() else {
            return;
        };
        let (send, next) = u.on_timer(self.now);
        let (size, seq) = (u.size, u.seq);
        if let Some(t) = next {
            self.events.schedule(t, Event::UdpSend(f as u32));
        }
        if send {
            self.flows[f].stats.data_sent += 1;
            let pos = self.routes.first(2 * f);
            let id = self.arena.alloc(Packet {
                size,
                flow: f as u32,
                seq,
                ts: self.now,
                enq_time: self.now,
                pos,
                dir: 0,
                conn: 0,
                flags: flags::DATA,
                ecn: Ecn::NotEct,
            });
            self.send_on(self.routes.link_at(pos) as usize, id);
        }
    }

    /// Turn a flow's segments into packets, send them, and re-arm its timers.
    #[inline]
    fn emit(&mut self, f: usize, out: &mut Vec<Seg>) {
        for s in out.drain(..) {
            let dir = u8::from(!s.from_sender);
            let pos = self.routes.first(2 * f + dir as usize);
            let id = self.arena.alloc(Packet {
                size: s.size,
                flow: f as u32,
                seq: s.seq,
                ts: s.ts,
                enq_time: self.now,
                pos,
                dir,
                conn: self.tag[f].conn,
                flags: s.flags,
                ecn: s.ecn,
            });
            self.send_on(self.routes.link_at(pos) as usize, id);
        }
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
    }

    fn rto_timer(&mut self, f: usize) {
        let now = self.now;
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

    fn delack_timer(&mut self, f: usize) {
        let now = self.now;
        let fl = &mut self.flows[f];
        if fl.delack_event == Some(now) {
            fl.delack_event = None;
        }
        let mut out = std::mem::take(&mut self.out);
        if fl.delack_deadline.is_some_and(|d| d <= now) {
            fl.on_delack(now, &mut out);
        }
        self.emit(f, &mut out);
        self.out = out;
    }

    /// Offer packet `id` to `link` now (the next link of its route).
    #[inline]
    fn send_on(&mut self, link: usize, id: PktId) {
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
    fn kick(&mut self, l: usize) {
        // A link that waits for its TxDone is busy: the common case at a
        // loaded link, which needs no call.
        if !self.links[l].txdone_pending {
            self.kick_free(l);
        }
    }

    /// [`World::kick`] on a link not waiting for a TxDone.
    #[inline(never)]
    fn kick_free(&mut self, l: usize) {
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
    fn pass_cut_through(&mut self, id: PktId, mut t: SimTime) -> Option<SimTime> {
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
    fn drop_packet(&mut self, id: PktId) {
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

    fn sample(&mut self) {
        self.settle_all(self.now);
        self.links[self.monitored[0].0].sample_params(self.now);
        for (l, name) in &self.monitored[..self.series_links] {
            let link = &self.links[*l];
            let q = link.qlen();
            let s = &mut self.series;
            s.link.push(name.clone());
            s.time_s.push(self.now.as_secs_f64());
            s.queue_pkts.push(q.pkts);
            s.queue_bytes.push(q.bytes);
            s.avg.push(link.aqm.average().unwrap_or(f64::NAN));
            s.drops.push(link.stats.drops());
            s.marks.push(link.stats.marks());
            s.departed_bytes.push(link.stats.departure_bytes);
        }
        if !self.sc.metrics.flow_series.is_empty() {
            self.sample_flows();
        }
        let next = self.now + self.sc.metrics.sample_interval;
        if next <= self.sc.duration {
            if self.flow_samples {
                self.schedule_barrier(next, Event::Sample);
            } else {
                self.events.schedule(next, Event::Sample);
            }
        }
    }

    /// Sample the TCP state of the flows of `metrics.flow_series`.
    #[cold]
    fn sample_flows(&mut self) {
        let x = &mut self.extra;
        let ids = &self.sc.metrics.flow_series;
        if x.last_delivered.len() != ids.len() {
            x.last_delivered = vec![(0, 0); ids.len()];
        }
        let dt = (self.now - x.last_sample).as_secs_f64();
        let t = self.now.as_secs_f64();
        for (k, &f) in ids.iter().enumerate() {
            let fl = &self.flows[f as usize];
            let now = (fl.stats.segments_delivered, fl.stats.data_arrived);
            let fs = &mut x.flow_series;
            fs.time_s.push(t);
            fs.flow.push(f);
            fs.cwnd.push(fl.cwnd);
            fs.ssthresh.push(fl.ssthresh);
            fs.srtt_s.push(fl.srtt_s());
            fs.rto_s.push(fl.rto.as_secs_f64());
            // As goodput: in-order segments, at most those that arrived.
            let (d0, a0) = x.last_delivered[k];
            let segs = (now.0 - d0).min(now.1 - a0);
            let bits = segs as f64 * fl.mss() as f64 * 8.0;
            fs.delivery_rate_bps
                .push(if dt > 0.0 { bits / dt } else { 0.0 });
            x.last_delivered[k] = now;
        }
        x.last_sample = self.now;
    }

    /// Check the accounting identities: at every link, arrivals = departures
    /// + drops + waiting; for every flow, data sent = arrived + dropped + in flight.
    pub fn check_accounting(&self) -> Result<(), String> {
        for (i, l) in self.links.iter().enumerate() {
            let s = &l.stats;
            let waiting = l.qlen().pkts as u64;
            if s.arrivals != s.departures + s.drops() + waiting {
                return Err(format!(
                    "link {i}: arrivals {} != departures {} + drops {} + waiting {waiting}",
                    s.arrivals,
                    s.departures,
                    s.drops()
                ));
            }
        }
        let mut in_flight = vec![0u64; self.flows.len()];
        for p in self.arena.iter_live() {
            if p.has(flags::DATA) {
                in_flight[p.flow as usize] += 1;
            }
        }
        for (f, fl) in self.flows.iter().enumerate() {
            let s = &fl.stats;
            if s.data_sent != s.data_arrived + s.data_dropped + in_flight[f] {
                return Err(format!(
                    "flow {f}: sent {} != arrived {} + dropped {} + in flight {}",
                    s.data_sent, s.data_arrived, s.data_dropped, in_flight[f]
                ));
            }
        }
        Ok(())
    }

    /// Measurement interval `i` begins: start its queue integrals and take
    /// the counters it will be measured against.
    fn interval_start(&mut self, i: usize) {
        self.settle_all(self.now);
        let now = self.now;
        let window = self.sc.metrics.window;
        let mut links = Vec::with_capacity(self.monitored.len());
        let mut capacity_bits = Vec::with_capacity(self.monitored.len());
        let mut pending_bits = Vec::with_capacity(self.monitored.len());
        for (l, _) in &self.monitored {
            let link = &mut self.links[*l];
            if let Some(m) = link.monitor.as_mut() {
                m.begin(i, now, window);
            }
            links.push(link.stats);
            capacity_bits.push(link.capacity_bits(now));
            pending_bits.push(link.pending_tx_bits(now));
        }
        self.snaps[i] = Snapshot {
            links,
            capacity_bits,
            pending_bits,
            flows: self.flows.iter().map(|f| f.stats).collect(),
            short_bytes: self.short_bytes.clone(),
        };
    }

    /// The figures of interval `i` from its start to `end`, and (for the
    /// main interval) the per-flow table.
    fn interval_summary(&mut self, i: usize, end: SimTime) -> (PhaseSummary, FlowTable) {
        let start = self.intervals[i].0;
        let interval = (end - start).as_secs_f64();
        let snap = std::mem::take(&mut self.snaps[i]);
        let mut links = Vec::with_capacity(self.monitored.len());
        for (k, (l, name)) in self.monitored.iter().enumerate() {
            let link = &mut self.links[*l];
            let q = link
                .monitor
                .as_mut()
                .map(|m| m.end(i, end))
                .unwrap_or_default();
            let base = snap.links.get(k).copied().unwrap_or_default();
            let capacity =
                link.capacity_bits(end) - snap.capacity_bits.get(k).copied().unwrap_or(0.0);
            // Bits on the wire within the interval: a packet counts from the
            // start of its transmission, so take off what the one in
            // transmission at the end still has to send, and add what the
            // one at the start still had.
            let sent_bits = link.stats.since(&base).departure_bytes as f64 * 8.0
                + snap.pending_bits.get(k).copied().unwrap_or(0.0)
                - link.pending_tx_bits(end);
            links.push(LinkSummary {
                name: name.clone(),
                figures: link_figures(&link.stats.since(&base), &q, capacity, interval, sent_bits),
            });
        }
        let mut table = FlowTable::default();
        let mut fwd_goodput = Vec::new();
        let mut fs = FlowsSummary::default();
        let zero = FlowStats::default();
        let (mut rtt_sum, mut rtt_n) = (0.0, 0u64);
        let mut udp = UdpSummary::default();
        let (mut udp_sent, mut udp_arrived) = (0u64, 0u64);
        let mut setup = WebSummary::default();
        for (f, (fl, m)) in self.flows.iter().zip(&self.meta).enumerate() {
            let s = &fl.stats;
            let b = snap.flows.get(f).unwrap_or(&zero);
            // Delivered payload: whole segments less the short last ones.
            let short = self.short_bytes[f] - snap.short_bytes.get(f).copied().unwrap_or(0);
            // In-order payload, but no more segments than reached the
            // receiver in the interval: data buffered out of order before
            // it and released by a retransmission counts no more than the
            // wire carried.
            let segs =
                (s.segments_delivered - b.segments_delivered).min(s.data_arrived - b.data_arrived);
            let bytes = (segs * fl.mss() as u64).saturating_sub(short);
            let goodput = bytes as f64 * 8.0 / interval;
            let tcp = self.udp[f].is_none();
            setup.syn_drops += s.syn_drops - b.syn_drops;
            setup.synacks_sent += s.synacks_sent - b.synacks_sent;
            setup.synack_drops += s.synack_drops - b.synack_drops;
            setup.synack_marks += s.synack_marks - b.synack_marks;
            setup.syn_retransmits += s.syn_retransmits - b.syn_retransmits;
            setup.request_retransmits += s.request_retransmits - b.request_retransmits;
            setup.fins_sent += s.fins_sent - b.fins_sent;
            setup.fin_acks_sent += s.fin_acks_sent - b.fin_acks_sent;
            setup.pages_waited += s.pages_waited - b.pages_waited;
            if let Some(u) = &self.udp[f] {
                if m.active_in(start, end) {
                    udp.count += 1;
                    let sent = s.data_sent - b.data_sent;
                    let arrived = s.data_arrived - b.data_arrived;
                    udp_sent += sent;
                    udp_arrived += arrived;
                    udp.sent_bps += (sent * u.size as u64) as f64 * 8.0 / interval;
                    udp.delivered_bps += (arrived * u.size as u64) as f64 * 8.0 / interval;
                }
            }
            if tcp && m.direction == Direction::Forward && m.active_in(start, end) {
                fwd_goodput.push(goodput);
                fs.count += 1;
                fs.goodput_bps_total += goodput;
                fs.retransmits += s.retransmits - b.retransmits;
                fs.timeouts += s.timeouts - b.timeouts;
                fs.fast_retransmits += s.fast_retransmits - b.fast_retransmits;
                fs.ecn_reductions += s.ecn_reductions - b.ecn_reductions;
                fs.marks_seen += s.marks_seen - b.marks_seen;
                rtt_sum += s.rtt_sum_s - b.rtt_sum_s;
                rtt_n += s.rtt_samples - b.rtt_samples;
            }
            if i != 0 {
                continue;
            }
            table.flow.push(f as u32);
            table.group.push(m.group);
            table.kind.push(self.sc.traffic[m.group as usize].kind());
            table.direction.push(match m.direction {
                Direction::Forward => "forward",
                Direction::Reverse => "reverse",
            });
            table.start_s.push(if m.start == SimTime::MAX {
                f64::NAN
            } else {
                m.start.as_secs_f64()
            });
            table.base_rtt_s.push(m.base_rtt.as_secs_f64());
            table.bytes_delivered.push(bytes);
            table.goodput_bps.push(goodput);
            table.data_sent.push(s.data_sent - b.data_sent);
            table.retransmits.push(s.retransmits - b.retransmits);
            table.timeouts.push(s.timeouts - b.timeouts);
            table
                .fast_retransmits
                .push(s.fast_retransmits - b.fast_retransmits);
            table.marks_seen.push(s.marks_seen - b.marks_seen);
            table
                .ecn_reductions
                .push(s.ecn_reductions - b.ecn_reductions);
            table.drops.push(s.data_dropped - b.data_dropped);
            let n = s.rtt_samples - b.rtt_samples;
            table.rtt_mean_s.push(if n == 0 {
                f64::NAN
            } else {
                (s.rtt_sum_s - b.rtt_sum_s) / n as f64
            });
            table.cwnd_final.push(fl.cwnd);
        }
        fs.jain_fairness = jain(&fwd_goodput);
        fs.rtt_mean_s = if rtt_n == 0 {
            f64::NAN
        } else {
            rtt_sum / rtt_n as f64
        };
        // Packets still in flight at the end count as neither.
        udp.loss_rate = if udp_sent == 0 {
            0.0
        } else {
            1.0 - (udp_arrived as f64 / udp_sent as f64).min(1.0)
        };
        let phase = PhaseSummary {
            start_s: secs(start),
            end_s: secs(end),
            bottleneck: links.first().map(|l| l.figures.clone()).unwrap_or_default(),
            links,
            flows: fs,
            udp: (udp.count > 0).then_some(udp),
            web: WebSummary::of(&self.responses, start.as_secs_f64(), end.as_secs_f64()).map(|w| {
                WebSummary {
                    syn_drops: setup.syn_drops,
                    synacks_sent: setup.synacks_sent,
                    synack_drops: setup.synack_drops,
                    synack_marks: setup.synack_marks,
                    syn_retransmits: setup.syn_retransmits,
                    request_retransmits: setup.request_retransmits,
                    fins_sent: setup.fins_sent,
                    fin_acks_sent: setup.fin_acks_sent,
                    pages_waited: setup.pages_waited,
                    ..w
                }
            }),
        };
        (phase, table)
    }

    /// The facts an AQM on link `l` configures itself from: the link's
    /// rate, delay and buffer, and the live flows whose data crosses it.
    pub fn link_info(&self, l: usize) -> LinkInfo {
        let link = &self.links[l];
        let (mut n, mut rtt_sum) = (0u64, 0u64);
        let (mut nb, mut rtt_sum_b) = (0u64, 0u64);
        for (f, m) in self.meta.iter().enumerate() {
            if m.live && self.routes[2 * f].contains(&(l as u32)) {
                n += 1;
                rtt_sum += m.base_rtt.0;
                if matches!(self.sc.traffic[m.group as usize], TrafficSpec::Bulk(_)) {
                    nb += 1;
                    rtt_sum_b += m.base_rtt.0;
                }
            }
        }
        LinkInfo {
            rate: link.rate,
            delay: link.delay,
            buffer: link.limit,
            mean_pkt_size: self.sc.tcp.packet_size,
            flows: n as u32,
            rtt: SimTime(rtt_sum.checked_div(n).unwrap_or(0)),
            bulk_flows: nb as u32,
            bulk_rtt: SimTime(rtt_sum_b.checked_div(nb).unwrap_or(0)),
        }
    }

    /// Tell the AQMs of the bottleneck links that their facts changed.
    fn notify_links(&mut self, links: &[usize]) {
        for &l in links {
            let info = self.link_info(l);
            let now = self.now;
            let link = &mut self.links[l];
            link.aqm.set_link(now, &info);
            link.note_changes(now);
        }
    }

    /// The links a schedule selection names (nothing for `access`, which
    /// is handled on its own).
    fn select(&self, sel: &LinkSel) -> Vec<usize> {
        let LinkSel::Link { name, dir } = sel else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(2);
        for (n, fwd, rev) in &self.duplex {
            if n == name {
                if dir.fwd() {
                    out.push(*fwd as usize);
                }
                if dir.rev() {
                    out.push(*rev as usize);
                }
            }
        }
        out
    }

    /// Both directions of every named duplex link (those whose AQMs are
    /// told of changed link facts and loads).
    fn select_all(&self) -> Vec<usize> {
        self.duplex
            .iter()
            .flat_map(|(_, f, r)| [*f as usize, *r as usize])
            .collect()
    }

    /// Apply `[[schedule]]` entry `i`.
    fn apply_schedule(&mut self, i: usize) {
        // Departures before now happen under the old settings.
        self.settle_all(self.now);
        let entry = self.sc.schedule[i].clone();
        let now = self.now;
        match entry.action {
            Action::Link { link, rate, delay } => {
                let mut rng = Rng::new(self.sc.seed_for(Purpose::Rtt), Stream::Schedule(i as u32));
                if let Some((src, snk)) = link.access_sides() {
                    for f in 0..self.access.len() {
                        let d = delay.map(|d| d.sample(&mut rng));
                        // Links 0 and 1 are the left host's, 2 and 3 the
                        // right host's; a reverse flow's sender is on the right.
                        let fwd = self.meta[f].direction == Direction::Forward;
                        let (left, right) = if fwd { (src, snk) } else { (snk, src) };
                        let acc = self.access[f];
                        let chosen = [left, left, right, right];
                        for (k, l) in acc.into_iter().enumerate() {
                            if !chosen[k] {
                                continue;
                            }
                            let link = &mut self.links[l as usize];
                            if let Some(r) = rate {
                                link.set_rate(now, r);
                            }
                            if let Some(d) = d {
                                link.delay = d;
                            }
                        }
                    }
                } else {
                    for l in self.select(&link) {
                        let link = &mut self.links[l];
                        if let Some(r) = rate {
                            link.set_rate(now, r);
                        }
                        if let Some(d) = delay {
                            link.delay = d.sample(&mut rng);
                        }
                    }
                }
                // New base round-trip times: the delays along both routes.
                for f in 0..self.meta.len() {
                    let rtt = self.routes[2 * f]
                        .iter()
                        .chain(&self.routes[2 * f + 1])
                        .fold(0u64, |a, &l| {
                            a.saturating_add(self.links[l as usize].delay.0)
                        });
                    self.meta[f].base_rtt = SimTime(rtt);
                }
                self.notify_links(&self.select_all());
                // A link that was idle gets no TxDone; a busy one finishes its
                // current packet at the old rate and continues at the new one.
            }
            Action::Flows {
                group,
                start,
                stop,
                spread,
            } => {
                let g = group as usize;
                let mut rng =
                    Rng::new(self.sc.seed_for(Purpose::Start), Stream::Schedule(i as u32));
                // Stop the most recently started live flows first.
                let mut to_stop = stop;
                let members = self.groups[g].members.clone();
                let next = self.groups[g].next;
                let mut live: Vec<u32> = members[..next]
                    .iter()
                    .copied()
                    .filter(|&f| self.meta[f as usize].live)
                    .collect();
                live.sort_by_key(|&f| (self.meta[f as usize].start, f));
                while to_stop > 0 {
                    let Some(f) = live.pop() else { break };
                    let m = &mut self.meta[f as usize];
                    m.live = false;
                    m.stopped = Some(now);
                    self.flows[f as usize].stop();
                    if let Some(u) = self.udp[f as usize].as_mut() {
                        u.stop();
                    }
                    to_stop -= 1;
                }
                for _ in 0..start {
                    let gs = &mut self.groups[g];
                    let Some(&f) = gs.members.get(gs.next) else {
                        break;
                    };
                    gs.next += 1;
                    let t = now + SimTime((rng.uniform() * spread.0 as f64) as u64);
                    let m = &mut self.meta[f as usize];
                    m.live = true;
                    m.start = t;
                    self.events.schedule(t, Event::FlowStart(f));
                }
                self.notify_links(&self.select_all());
            }
            Action::Aqm { link, set } => {
                for l in self.select(&link) {
                    let keys = set.iter().map(|(k, v)| (k.as_str(), *v));
                    for (k, v, e) in crate::aqm::apply_set(&mut self.links[l].aqm, keys) {
                        self.warnings
                            .push(format!("schedule[{i}] at {now}: aqm.{k} = {v}: {e}"));
                    }
                    // One record of the values now in force (a scheme flags
                    // its own change too; drop that flag, not record twice).
                    self.links[l].aqm.take_changed();
                    self.links[l].sample_params(now);
                }
            }
            Action::Web {
                group,
                add_sessions,
                remove_sessions,
                spread,
            } => {
                let g = group as usize;
                // Removed sessions finish the page or transfer under way
                // and begin no other (the next `FlowStart` of a stopped
                // session does nothing); the most recently started go first.
                let next = self.groups[g].next;
                let mut live: Vec<u32> = self.groups[g].members[..next]
                    .iter()
                    .copied()
                    .filter(|&f| self.meta[f as usize].live)
                    .collect();
                live.sort_by_key(|&f| (self.meta[f as usize].start, f));
                for _ in 0..remove_sessions {
                    let Some(f) = live.pop() else { break };
                    let m = &mut self.meta[f as usize];
                    m.live = false;
                    m.stopped = Some(now);
                }
                let mut rng = (spread > SimTime::ZERO).then(|| {
                    Rng::new(self.sc.seed_for(Purpose::Start), Stream::Schedule(i as u32))
                });
                for _ in 0..add_sessions {
                    let gs = &mut self.groups[g];
                    let Some(&f) = gs.members.get(gs.next) else {
                        break;
                    };
                    gs.next += 1;
                    let t = match rng.as_mut() {
                        Some(r) => now + SimTime((r.uniform() * spread.0 as f64) as u64),
                        None => now,
                    };
                    let m = &mut self.meta[f as usize];
                    m.live = true;
                    m.start = t;
                    self.events.schedule(t, Event::FlowStart(f));
                }
                self.notify_links(&self.select_all());
            }
            Action::Udp { group, rate } => {
                let g = group as usize;
                let (TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u)) = &self.sc.traffic[g] else {
                    return; // rejected by validation
                };
                let spec = crate::scenario::UdpSpec { rate, ..u.clone() };
                let r = udp_rate(&self.sc, g, &spec);
                for &f in &self.groups[g].members {
                    if let Some(src) = self.udp[f as usize].as_mut() {
                        src.set_rate(r);
                    }
                }
            }
        }
    }

    /// Gather the results at the current time (normally the end of the run).
    pub fn finish(mut self) -> RunResult {
        self.settle_all(self.now + SimTime(1));
        let accounting = self.check_accounting();
        debug_assert!(accounting.is_ok(), "{accounting:?}");
        let end = self.now;
        let (main, table) = self.interval_summary(0, end);
        let params = self.links[self.monitored[0].0]
            .monitor
            .as_mut()
            .map(|m| std::mem::take(&mut m.params))
            .unwrap_or_default();
        let mut phases = std::mem::take(&mut self.phase_results);
        phases.remove(0);
        let (delay, events) = self.delay_and_trace();
        let summary = Summary {
            duration_s: secs(self.sc.duration),
            seed: self.sc.seed,
            measure_start_s: secs(self.sc.metrics.start),
            wall_time_s: 0.0,
            events: self.events.processed(),
            bottleneck: main.bottleneck,
            links: main.links,
            flows: main.flows,
            udp: main.udp,
            web: main.web,
            phases,
            warnings: std::mem::take(&mut self.warnings),
        };
        RunResult {
            peak_packets: self.arena.peak(),
            scenario: self.sc,
            summary,
            queue: self.series,
            params,
            flows: table,
            responses: self.responses,
            delay,
            flow_series: self.extra.flow_series,
            events,
        }
    }

    /// The monitored links' delay histograms of the measurement interval,
    /// and their drop/mark traces merged in time order (a warning notes
    /// events past `metrics.trace_limit`).
    fn delay_and_trace(&mut self) -> (DelayTable, EventTrace) {
        let mut delay = DelayTable::default();
        let mut merged: Vec<(SimTime, usize, u32, &'static str, &'static str)> = Vec::new();
        for (k, (l, name)) in self.monitored.iter().enumerate() {
            let Some(m) = self.links[*l].monitor.as_mut() else {
                continue;
            };
            for (lo, hi, c) in m.delays(0).bins() {
                delay.link.push(name.clone());
                delay.lower_s.push(lo as f64 / 1e9);
                delay.upper_s.push(hi as f64 / 1e9);
                delay.count.push(c);
            }
            if let Some(t) = m.trace.take() {
                if t.missed > 0 {
                    self.warnings.push(format!(
                        "metrics.trace: {name}: {} drops and marks past trace_limit = {} \
                         were counted, not traced",
                        t.missed, t.limit
                    ));
                }
                merged.extend(t.events.into_iter().map(|(at, f, w, p)| (at, k, f, w, p)));
            }
        }
        merged.sort_by_key(|e| (e.0, e.1));
        let mut events = EventTrace::default();
        for (at, k, f, w, p) in merged {
            events.time_s.push(at.as_secs_f64());
            events.link.push(self.monitored[k].1.clone());
            events.flow.push(f);
            events.event.push(w);
            events.packet.push(p);
        }
        (delay, events)
    }
}

/// The per-flow rate of UDP group `g` (while ON): its `rate`, or density x
/// C / flows with C the rate of the bottleneck its data crosses.
fn udp_rate(sc: &Scenario, g: usize, u: &crate::scenario::UdpSpec) -> crate::units::BitRate {
    match u.rate {
        crate::scenario::UdpRate::Rate(r) => r,
        crate::scenario::UdpRate::Density(d) => {
            let c = sc.path_rate(g).bps() as f64;
            crate::units::BitRate(((d * c / u.flows as f64).round() as u64).max(1))
        }
    }
}

/// A link's figures over an interval of `interval` seconds from its
/// counter differences `d`, queue figures `q` and the bits it could have
/// sent in the interval (∫ rate dt, exact across scheduled rate changes).
fn link_figures(
    d: &LinkStats,
    q: &QueueFigures,
    capacity_bits: f64,
    interval: f64,
    sent_bits: f64,
) -> BottleneckSummary {
    let mean_size = if d.arrivals == 0 {
        f64::NAN
    } else {
        d.arrival_bytes as f64 / d.arrivals as f64
    };
    BottleneckSummary {
        utilization: sent_bits / capacity_bits,
        throughput_bps: sent_bits / interval,
        loss_rate: if d.arrivals == 0 {
            0.0
        } else {
            d.drops() as f64 / d.arrivals as f64
        },
        data_loss_rate: if d.data_arrivals == 0 {
            0.0
        } else {
            d.data_drops as f64 / d.data_arrivals as f64
        },
        arrivals: d.arrivals,
        departures: d.departures,
        drops_early: d.drops_early,
        drops_forced: d.drops_forced,
        drops_overflow: d.drops_overflow,
        marks: d.marks(),
        marks_early: d.marks_early,
        marks_forced: d.marks_forced,
        lost_on_link: d.lost,
        queue_mean_pkts: q.mean_pkts,
        queue_std_pkts: q.std_pkts,
        queue_window_std_mean_pkts: q.window_std_mean_pkts,
        queue_mean_bytes: q.mean_bytes,
        queue_std_bytes: q.std_bytes,
        queue_window_std_mean_bytes: q.window_std_mean_bytes,
        arrival_mean_size_bytes: mean_size,
        queue_mean_meanpkts: q.mean_bytes / mean_size,
        queue_std_meanpkts: q.std_bytes / mean_size,
        queue_window_std_mean_meanpkts: q.window_std_mean_bytes / mean_size,
        queue_windows: q.windows,
        queuing_delay_mean_s: if d.departures == 0 {
            0.0
        } else {
            d.sojourn_ns as f64 * 1e-9 / d.departures as f64
        },
        queuing_delay_p50_s: q.delay_p50_s,
        queuing_delay_p90_s: q.delay_p90_s,
        queuing_delay_p99_s: q.delay_p99_s,
        queuing_delay_max_s: q.delay_max_s,
    }
}

/// A time in seconds as the nearest f64 (`60s` is 60.0, where `ns * 1e-9`
/// gives 60.00000000000001): for the figures a user reads.
fn secs(t: SimTime) -> f64 {
    t.0 as f64 / 1e9
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

    /// `web-simple` draws: transfer sizes exponential with mean 12 packets
    /// (rounded, at least 1) and think times exponential with mean 500 ms,
    /// each within 5 % over 10 000 draws.
    #[test]
    fn web_simple_size_and_think_draws() {
        let mut w = WebSession {
            mean_packets: 12.0,
            think_s: 0.5,
            rng: Rng::new(11, Stream::App(0)),
            segments: 0,
            started: SimTime::ZERO,
            active: false,
            responded: false,
            transfers: 0,
        };
        let n = 10_000;
        let sizes: u64 = (0..n).map(|_| w.begin(SimTime::ZERO)).sum();
        let mean = sizes as f64 / n as f64;
        assert!((mean - 12.0).abs() < 0.6, "mean size {mean}");
        let think: f64 = (0..n).map(|_| w.rng.exp(w.think_s)).sum::<f64>() / n as f64;
        assert!((think - 0.5).abs() < 0.025, "mean think {think}");
        assert_eq!(w.transfers, n);
    }

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

    /// Issue 15: flows that start at one instant are set up in time linear
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

    /// Issue 15: building a world of many flows can be stopped: the
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
