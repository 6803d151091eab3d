//! Building a world: the flows of every traffic group with their TCP and
//! applications, the topology and its links (access delays of web
//! sessions, queue monitors, cut-through and planned links), the event
//! queue, and the first events (flow starts, samples, interval bounds,
//! AQM ticks, schedule entries).

use super::apps::udp_rate;
use super::ping::PingTable;
use super::results::ResponseTable;
use super::sample::Extras;
use super::sample::QueueSeries;
use super::summary::{PhaseSummary, Snapshot};
use super::web::{WebApp, WebSession};
use super::{
    FlowMeta, FlowTag, GroupState, Options, Progress, RunError, World, BUILD_PROGRESS_EVERY,
    NOT_AHEAD, WARM_FLOWS,
};
use crate::aqm::Aqm;
use crate::net::topology::{self, Routes};
use crate::packet::Arena;
use crate::rng::{Rng, Stream};
use crate::scenario::{Action, Phase, Purpose, Scenario, TrafficSpec};
use crate::sim::{Event, EventQueue};
use crate::traffic::web::Session;
use crate::transport::{TcpConfig, TcpFlow, UdpSource};
use crate::units::SimTime;
use std::collections::BinaryHeap;

impl World {
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
        let starts = sc.initial_starts();
        for (g, group) in sc.traffic.iter().enumerate() {
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
                TrafficSpec::Video(v) => {
                    TcpConfig::passive(&tcp, v.ecn.unwrap_or(sc.tcp.ecn), v.request_size as u32)
                }
                TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => {
                    // Only the statistics are used; mss = payload of a packet.
                    let spec = crate::scenario::TcpSpec {
                        packet_size: u.packet_size.clamp(crate::scenario::HEADER_BYTES, 65_535)
                            as u16,
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
                    start: if initial {
                        starts[g][i as usize]
                    } else {
                        SimTime::MAX
                    },
                    base_rtt: SimTime::ZERO,
                    live: initial,
                    stopped: None,
                });
                let mut flow = TcpFlow::new(tcp_cfg);
                // BBR's random stream: the run's seed and the flow's id.
                flow.seed_tcp(seed, f);
                flows.push(flow);
                web.push(match group {
                    TrafficSpec::WebSimple(w) => Some(Box::new(WebApp::Simple(WebSession::new(
                        w.mean_packets,
                        w.sizes,
                        w.think.as_secs_f64(),
                        Rng::new(app_seed, Stream::App(f)),
                    )))),
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
                    TrafficSpec::Video(v) => Some(super::video::player(v)),
                    _ => None,
                });
                udp.push(match group {
                    TrafficSpec::Bulk(_)
                    | TrafficSpec::WebSimple(_)
                    | TrafficSpec::Web(_)
                    | TrafficSpec::Video(_) => None,
                    TrafficSpec::Ping(u) => Some(Box::new(UdpSource::every(
                        u.packet_size,
                        match u.rate {
                            crate::scenario::UdpRate::Interval(i) => i,
                            _ => unreachable!("a ping group's rate is its interval"),
                        },
                        Rng::new(app_seed, Stream::App(f)),
                    ))),
                    TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => {
                        let rng = Rng::new(app_seed, Stream::App(f));
                        let rate = udp_rate(sc, g, u);
                        Some(Box::new(match u.frames {
                            Some(v) => UdpSource::frames(u.packet_size, rate, v, rng),
                            None => UdpSource::new(u.packet_size, rate, u.on.zip(u.off), rng),
                        }))
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
            if sc.metrics.group_delays {
                m.keep_groups(meta.iter().map(|fm| fm.group).collect());
            }
            built.links[*l].monitor = Some(m);
        }
        if sc.metrics.pcap > 0 {
            // The capture: the first monitored link and its reverse
            // direction where that is measured too (the dumbbell's
            // bottleneck both ways).
            let first = monitored[0].0;
            for l in [first, first ^ 1] {
                if let Some(m) = built.links[l].monitor.as_mut() {
                    m.capture = Some(Box::new(crate::metrics::pcap::Capture::new(
                        sc.metrics.pcap,
                    )));
                }
            }
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
        let mut intervals = vec![Phase::span(sc.metrics.start, sc.duration)];
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
                    sack: udp[f].is_none() && flows[f].cfg.tcp.sack,
                    ping: matches!(sc.traffic[meta[f].group as usize], TrafficSpec::Ping(_)),
                    rehash: udp[f].is_none() && flows[f].cfg.tcp.txrehash(),
                })
                .collect(),
            sack: Vec::new(),
            short_bytes: vec![0; flows.len()],
            flows,
            udp,
            web,
            responses: ResponseTable::default(),
            videos: Default::default(),
            pings: PingTable::default(),
            meta,
            groups,
            out: Vec::with_capacity(64),
            series: QueueSeries::default(),
            snaps: vec![Snapshot::default(); intervals.len()],
            gaps: vec![Snapshot::default(); intervals.len()],
            window_k: vec![0; intervals.len()],
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
            schedule: sc.schedule_in_order(),
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
        // Every window of a periodic phase begins and ends with an event of
        // its own; the main interval ends with the run.
        for (i, ph) in w.intervals.clone().into_iter().enumerate() {
            let mut k = 0;
            while let Some((a, b)) = ph.window(k) {
                w.schedule_barrier(a, Event::IntervalStart(i as u32));
                if i > 0 {
                    w.schedule_barrier(b, Event::IntervalEnd(i as u32));
                }
                k += 1;
            }
        }
        if w.flow_samples {
            w.trace_flows();
        }
        w.events.schedule(SimTime::ZERO, Event::Sample);
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
        for j in 0..w.schedule.len() {
            w.schedule_barrier(w.schedule[j].at, Event::Schedule(j as u32));
        }
        if !web_rtt.is_empty() {
            // The bottleneck AQMs were built with the topology's access
            // delays; tell them the sessions' round-trip times.
            w.notify_links(&w.select_all());
        }
        Ok(w)
    }
}
