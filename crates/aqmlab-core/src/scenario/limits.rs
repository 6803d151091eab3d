//! What a run will cost, checked before it starts.
//!
//! A scenario can be valid key by key and still ask for a run that cannot
//! finish: a queue sampled every nanosecond stores more rows than memory
//! holds (the run would abort on a failed allocation), an AQM ticking every
//! nanosecond or a Markov loss chain changing state every nanosecond makes
//! the engine step through billions of timer events and appear to hang.
//! [`Scenario::check_limits`] estimates these costs from the scenario alone
//! and refuses, naming the field and the figure, what cannot be done:
//!
//! - **Memory** ([`Scenario::estimate_memory`]): the rows a run keeps until
//!   it returns (queue samples x monitored links, AQM parameter rows,
//!   per-window deviations, one record per flow), each at the bytes it
//!   costs from the engine to the Python tables (measured: see the
//!   constants), must fit in `metrics.memory_limit` (default
//!   [`DEFAULT_MEMORY_LIMIT`]). Web response rows are not estimated: each
//!   needs several simulated packets, so they grow with the work of the
//!   run, not with a setting.
//! - **Timer events**: AQM ticks over the run (every link direction) and
//!   the packets of UDP sources (at their highest scheduled rate), at most
//!   [`MAX_TIMER_EVENTS`] (at about 50 ns per tick, a minute of computing).
//! - **Markov loss chains**: every holding time at least one packet's
//!   transmission time on its link. The chain is advanced lazily, when a
//!   packet starts transmission, through every holding period that ended
//!   since the last one; a state shorter than a packet time is seen by at
//!   most one packet, and the bound keeps the chain's steps at most one per
//!   packet time. (Jumping the chain exactly over many steps would need the
//!   joint law of state and elapsed time after k steps of unequal fixed
//!   holding times, which has no cheap closed form, and would change the
//!   path every existing seed draws.)

use super::decode::{SpecError, SpecResult};
use super::spec::Scenario;
use super::topo::{LossSpec, Topology};
use super::traffic::TrafficSpec;
use crate::aqm::{Aqm, AqmSpec, LinkInfo};
use crate::units::{BitRate, SimTime};

/// Default of `metrics.memory_limit`: 4 GB for the stored results of one run.
pub const DEFAULT_MEMORY_LIMIT: u64 = 4_000_000_000;
/// Bytes one queue-sample row costs until the run's tables are written
/// (engine columns, their Arrow copy in Python, the Parquet file): peak
/// memory grows by 174 B/row from 1.5e6 to 3e6 rows of the canonical
/// scenario (`aqmlab run`), rounded up.
pub const QUEUE_ROW_BYTES: u64 = 200;
/// Bytes one AQM parameter row costs (measured 45 B/row: 6e6 PI rows).
pub const PARAM_ROW_BYTES: u64 = 60;
/// Bytes one flow costs: its state, its access links on the dumbbell and
/// its row in the flow table (measured 3.7 KB per flow at 1.2e5 flows by
/// `bench --scale`).
pub const FLOW_BYTES: u64 = 4_000;
/// Bytes one deviation window keeps (one f64 per window and interval).
pub const WINDOW_BYTES: u64 = 8;
/// Bytes one row of the flow series costs (7 numeric columns through the
/// engine and Arrow: measured 98 B/row from 3e5 to 1.2e6 rows, 14 B a
/// numeric column; with 10 numeric and a short string, ~20 B, 190 B kept
/// the same margin; 11 numeric since DCTCP's alpha).
pub const FLOW_SERIES_ROW_BYTES: u64 = 210;
/// Bytes one traced drop or mark costs (5 columns, one a link name).
pub const TRACE_ROW_BYTES: u64 = 240;
/// Bytes one captured packet costs (`metrics.pcap`): its copy and time in
/// the engine (48), its record in the file as the engine writes it (56)
/// and Python's copy of the file (56).
pub const PCAP_PACKET_BYTES: u64 = 160;
/// Bytes one `[metrics] phases` interval costs whatever the flows: its
/// summary through the engine, JSON and Python, its row of the sweep's
/// table (measured 40 KB per phase: 2000 disjoint phases of
/// `scenarios/web.toml`; 52 KB with 10 000 phases once the summary counted
/// marks and drops per ECN codepoint), rounded up.
pub const PHASE_BYTES: u64 = 60_000;
/// Bytes one traffic group's queueing delays cost per measurement interval
/// and monitored link (`metrics.group_delays`): a histogram of
/// [`crate::metrics::DELAY_BINS`] counters (7.8 KB) and its figures in the
/// summary through the engine, JSON and Python, rounded up.
pub const GROUP_DELAY_BYTES: u64 = 10_000;
/// Bytes an open measurement interval keeps per flow: the flow's counters
/// as they stood when the interval began (measured 170 B per flow and
/// overlapping phase: 2000 phases over the same span of
/// `scenarios/web.toml`, 2 869 flows), rounded up.
pub const SNAPSHOT_FLOW_BYTES: u64 = 200;
/// Above this estimate a run is started with a warning (the CLI's).
pub const WARN_MEMORY: u64 = 1_000_000_000;
/// Most AQM timer ticks one run may schedule.
pub const MAX_TIMER_EVENTS: u64 = 1_000_000_000;

/// What a run will store, by part (see [`Scenario::estimate_memory`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MemoryEstimate {
    /// Rows of the queue table (samples x monitored links).
    pub queue_rows: f64,
    /// Rows of the AQM parameter table.
    pub param_rows: f64,
    /// Deviation windows kept (all monitored links and intervals).
    pub windows: f64,
    /// Flows created over the run.
    pub flows: f64,
    /// Rows of the flow series (`metrics.flow_series`).
    pub flow_series_rows: f64,
    /// Most rows of the event trace (`metrics.trace_limit` x monitored links).
    pub trace_rows: f64,
    /// Most packets captured (`metrics.pcap`).
    pub pcap_packets: f64,
    /// `[metrics] phases` intervals.
    pub phases: f64,
    /// Flow records kept by the measurement intervals open at one time, at
    /// their most (the intervals open at once x the flows).
    pub snapshot_flows: f64,
    /// Per-group delay histograms (`metrics.group_delays`): traffic groups
    /// x measurement intervals x monitored links (0 without the switch).
    pub group_delays: f64,
}

impl MemoryEstimate {
    pub fn queue_bytes(&self) -> f64 {
        self.queue_rows * QUEUE_ROW_BYTES as f64 + self.param_rows * PARAM_ROW_BYTES as f64
    }
    pub fn window_bytes(&self) -> f64 {
        self.windows * WINDOW_BYTES as f64
    }
    pub fn flow_bytes(&self) -> f64 {
        self.flows * FLOW_BYTES as f64
    }
    /// Bytes of the optional series (flow series, event trace, capture).
    pub fn series_bytes(&self) -> f64 {
        self.flow_series_rows * FLOW_SERIES_ROW_BYTES as f64
            + self.trace_rows * TRACE_ROW_BYTES as f64
            + self.pcap_packets * PCAP_PACKET_BYTES as f64
    }
    /// Bytes of the phases: their summaries and the flow records of the
    /// intervals open at once.
    pub fn phase_bytes(&self) -> f64 {
        self.phases * PHASE_BYTES as f64 + self.snapshot_flows * SNAPSHOT_FLOW_BYTES as f64
    }
    /// Bytes of the per-group delay histograms.
    pub fn group_delay_bytes(&self) -> f64 {
        self.group_delays * GROUP_DELAY_BYTES as f64
    }
    /// Bytes in all.
    pub fn bytes(&self) -> f64 {
        self.queue_bytes()
            + self.window_bytes()
            + self.flow_bytes()
            + self.series_bytes()
            + self.phase_bytes()
            + self.group_delay_bytes()
    }
}

/// "1.6 TB", "805 MB", "12 KB".
pub fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut x = b;
    let mut u = 0;
    while x >= 1000.0 && u < UNITS.len() - 1 {
        x /= 1000.0;
        u += 1;
    }
    if u == 0 || x >= 100.0 {
        format!("{x:.0} {}", UNITS[u])
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// A count in scientific notation: 2.0e11.
fn sci(x: f64) -> String {
    if x < 1e6 {
        format!("{x:.0}")
    } else {
        format!("{x:.1e}")
    }
}

/// One AQM of the run with the path of the table that set it.
struct PlacedAqm<'a> {
    path: String,
    spec: &'a AqmSpec,
    info: LinkInfo,
}

/// One loss model of the run with its path and its link's rate.
struct PlacedLoss<'a> {
    path: String,
    spec: &'a LossSpec,
    rate: BitRate,
}

impl Scenario {
    /// Refuse what the run could not do (memory, timer events, Markov
    /// chains faster than packets); see the module documentation.
    pub fn check_limits(&self) -> SpecResult<()> {
        self.check_markov()?;
        self.check_ticks()?;
        self.check_memory()
    }

    /// The AQMs of every link direction, with the paths that set them.
    fn placed_aqms(&self) -> Vec<PlacedAqm<'_>> {
        let info = |rate: BitRate, delay: SimTime, buffer| LinkInfo {
            delay,
            buffer,
            ..LinkInfo::new(rate, u32::from(self.tcp.packet_size))
        };
        let mut out = Vec::new();
        match &self.topology {
            Topology::Dumbbell(d) => {
                let i = info(d.bottleneck_rate, d.bottleneck_delay, d.buffer);
                out.push(PlacedAqm {
                    path: "aqm".into(),
                    spec: &self.aqm,
                    info: i,
                });
                out.push(PlacedAqm {
                    path: "reverse_aqm".into(),
                    spec: &self.reverse_aqm,
                    info: i,
                });
            }
            Topology::ParkingLot(p) => {
                for d in self.duplex_links() {
                    let o = p.overrides.iter().position(|o| o.link == d.name);
                    let ov = o.map(|i| &p.overrides[i]);
                    let fwd = match ov.and_then(|x| x.aqm.as_ref()) {
                        Some(_) => format!("topology.overrides[{}].aqm", o.unwrap_or(0)),
                        None => "aqm".into(),
                    };
                    let rev = match (
                        ov.and_then(|x| x.reverse_aqm.as_ref()),
                        ov.and_then(|x| x.aqm.as_ref()),
                    ) {
                        (Some(_), _) => {
                            format!("topology.overrides[{}].reverse_aqm", o.unwrap_or(0))
                        }
                        (None, Some(_)) => fwd.clone(),
                        (None, None) => "reverse_aqm".into(),
                    };
                    let i = info(d.rate, d.delay, d.buffer);
                    out.push(PlacedAqm {
                        path: fwd,
                        spec: d.aqm,
                        info: i,
                    });
                    out.push(PlacedAqm {
                        path: rev,
                        spec: d.reverse_aqm,
                        info: i,
                    });
                }
            }
            Topology::Custom(c) => {
                for (j, (l, d)) in c.links.iter().zip(self.duplex_links()).enumerate() {
                    let fwd = if l.aqm.is_some() {
                        format!("topology.links[{j}].aqm")
                    } else {
                        "aqm".into()
                    };
                    let rev = if l.reverse_aqm.is_some() {
                        format!("topology.links[{j}].reverse_aqm")
                    } else if l.aqm.is_some() {
                        fwd.clone()
                    } else {
                        "reverse_aqm".into()
                    };
                    let i = info(d.rate, d.delay, d.buffer);
                    out.push(PlacedAqm {
                        path: fwd,
                        spec: d.aqm,
                        info: i,
                    });
                    out.push(PlacedAqm {
                        path: rev,
                        spec: d.reverse_aqm,
                        info: i,
                    });
                }
            }
        }
        out
    }

    /// The loss models of every link, with their paths and link rates.
    fn placed_losses(&self) -> Vec<PlacedLoss<'_>> {
        let mut v: Vec<PlacedLoss<'_>> = Vec::new();
        fn add<'a>(
            v: &mut Vec<PlacedLoss<'a>>,
            path: String,
            spec: Option<&'a LossSpec>,
            rate: BitRate,
        ) {
            if let Some(spec) = spec {
                v.push(PlacedLoss { path, spec, rate });
            }
        }
        match &self.topology {
            Topology::Dumbbell(d) => {
                add(
                    &mut v,
                    "topology.loss".into(),
                    d.loss.as_ref(),
                    d.bottleneck_rate,
                );
                add(
                    &mut v,
                    "topology.reverse_loss".into(),
                    d.reverse_loss.as_ref(),
                    d.bottleneck_rate,
                );
                add(
                    &mut v,
                    "topology.access_loss".into(),
                    d.access_loss.as_ref(),
                    d.access_rate,
                );
            }
            Topology::ParkingLot(p) => {
                for d in self.duplex_links() {
                    let o = p.overrides.iter().position(|o| o.link == d.name);
                    let ov = o.map(|i| &p.overrides[i]);
                    let fwd = match ov.and_then(|x| x.loss.as_ref()) {
                        Some(l) => (
                            format!("topology.overrides[{}].loss", o.unwrap_or(0)),
                            Some(l),
                        ),
                        None => ("topology.loss".to_string(), p.loss.as_ref()),
                    };
                    let rev = match ov.and_then(|x| x.reverse_loss.as_ref()) {
                        Some(l) => (
                            format!("topology.overrides[{}].reverse_loss", o.unwrap_or(0)),
                            Some(l),
                        ),
                        None => ("topology.reverse_loss".to_string(), p.reverse_loss.as_ref()),
                    };
                    add(&mut v, fwd.0, fwd.1, d.rate);
                    add(&mut v, rev.0, rev.1, d.rate);
                }
                add(
                    &mut v,
                    "topology.access_loss".into(),
                    p.access_loss.as_ref(),
                    p.access_rate,
                );
            }
            Topology::Custom(c) => {
                for (j, l) in c.links.iter().enumerate() {
                    add(
                        &mut v,
                        format!("topology.links[{j}].loss"),
                        l.loss.as_ref(),
                        l.rate,
                    );
                    add(
                        &mut v,
                        format!("topology.links[{j}].reverse_loss"),
                        l.reverse_loss.as_ref(),
                        l.rate,
                    );
                }
            }
        }
        v
    }

    /// The smallest data packet of the run, bytes (TCP segments and UDP packets).
    fn smallest_data_packet(&self) -> u32 {
        self.traffic
            .iter()
            .filter_map(|g| match g {
                TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => {
                    Some(u.packet_size)
                }
                _ => None,
            })
            .fold(u32::from(self.tcp.packet_size), u32::min)
    }

    fn check_markov(&self) -> SpecResult<()> {
        let size = self.smallest_data_packet();
        for l in self.placed_losses() {
            let LossSpec::Markov { hold, .. } = l.spec else {
                continue;
            };
            let packet_time = l.rate.tx_time(size);
            for (i, h) in hold.iter().enumerate() {
                if *h < packet_time {
                    return Err(SpecError::new(
                        format!("{}.hold[{i}]", l.path),
                        format!(
                            "{h} is shorter than one packet time on this link ({packet_time}: \
                             {size} bytes at {}); packets see the chain's state only when they \
                             start transmission, so each state must last at least one packet \
                             time (>= {packet_time})",
                            l.rate
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Packets per second a UDP group sends at its highest rate (initial
    /// or scheduled), all its flows together (scheduled starts included).
    fn udp_packets_per_sec(&self, g: usize) -> f64 {
        let (TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u)) =
            &self.traffic[g]
        else {
            return 0.0;
        };
        let flows = self.group_capacity(g).max(1) as f64;
        let bps = |r: &super::traffic::UdpRate| match *r {
            super::traffic::UdpRate::Rate(r) => r.bps() as f64,
            super::traffic::UdpRate::Density(d) => {
                d * self.path_rate(g).bps() as f64 / u.flows as f64
            }
            super::traffic::UdpRate::Interval(i) => {
                u.packet_size as f64 * 8.0 / i.as_secs_f64().max(1e-9)
            }
        };
        let mut best = bps(&u.rate);
        for e in &self.schedule {
            if let super::Action::Udp { group, rate } = &e.action {
                if *group as usize == g {
                    best = best.max(bps(rate));
                }
            }
        }
        // One packet per transmission time at the rate (at least 1 ns apart).
        let per_flow = BitRate((best.round() as u64).max(1)).tx_time(u.packet_size);
        flows * 1e9 / per_flow.0.max(1) as f64
    }

    /// AQM ticks and UDP sends over the run, at most [`MAX_TIMER_EVENTS`].
    fn check_ticks(&self) -> SpecResult<()> {
        let secs = self.duration.as_secs_f64();
        let mut total = 0.0f64;
        let mut worst: Option<(f64, String, String)> = None;
        let mut note = |n: f64, path: String, what: String| {
            total += n;
            if worst.as_ref().is_none_or(|w| n > w.0) {
                worst = Some((n, path, what));
            }
        };
        for a in self.placed_aqms() {
            let Some(dt) = a.spec.build(a.info).tick_interval() else {
                continue;
            };
            let n = (self.duration.0 / dt.0.max(1)) as f64;
            note(
                n,
                a.path,
                format!("the scheme updates every {dt} (its update interval or sampling rate)"),
            );
        }
        for g in 0..self.traffic.len() {
            let pps = self.udp_packets_per_sec(g);
            if pps > 0.0 {
                let key = match &self.traffic[g] {
                    TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u)
                        if matches!(u.rate, super::traffic::UdpRate::Density(_)) =>
                    {
                        "density"
                    }
                    TrafficSpec::Ping(_) => "interval",
                    _ => "rate",
                };
                note(
                    pps * secs,
                    format!("traffic[{g}].{key}"),
                    format!("the group sends {} packets per second", sci(pps)),
                );
            }
        }
        // ON/OFF sources: two state changes per period and flow.
        for (g, t) in self.traffic.iter().enumerate() {
            if let TrafficSpec::UdpOnoff(u) = t {
                if let (Some(on), Some(off)) = (u.on, u.off) {
                    let period = on.0.saturating_add(off.0).max(1);
                    let flows = self.group_capacity(g).max(1) as f64;
                    note(
                        2.0 * flows * (self.duration.0 / period) as f64,
                        format!("traffic[{g}].on"),
                        format!(
                            "{} sources switch on and off every {}",
                            flows,
                            SimTime(period)
                        ),
                    );
                }
            }
        }
        // A TCP flow whose packets are all lost times out at most once per
        // max_rto (the backed-off timer); at 1 ns that is a timer per ns.
        let tcp_flows: u32 = (0..self.traffic.len())
            .filter(|&g| {
                !matches!(
                    self.traffic[g],
                    TrafficSpec::Cbr(_) | TrafficSpec::UdpOnoff(_) | TrafficSpec::Ping(_)
                )
            })
            .map(|g| self.group_capacity(g))
            .sum();
        if tcp_flows > 0 {
            let rto = self.tcp.max_rto.0.max(1);
            note(
                tcp_flows as f64 * (self.duration.0 / rto) as f64,
                "tcp.max_rto".to_string(),
                format!(
                    "{tcp_flows} TCP flows may each time out every {}",
                    SimTime(rto)
                ),
            );
        }
        match worst {
            Some((n, path, what)) if total > MAX_TIMER_EVENTS as f64 => Err(SpecError::new(
                path,
                format!(
                    "{what}: {} timer events in the {} run ({} from all AQM timers and UDP sources); at \
                     most {} fit a run (about a minute of computing)",
                    sci(n),
                    self.duration,
                    sci(total),
                    sci(MAX_TIMER_EVENTS as f64),
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Monitored link directions and the AQM of the first (whose
    /// parameters the run records).
    fn monitored(&self) -> (u64, Option<&AqmSpec>) {
        match &self.topology {
            Topology::Dumbbell(_) => (1, Some(&self.aqm)),
            Topology::ParkingLot(p) => (p.links as u64, self.duplex_links().first().map(|d| d.aqm)),
            Topology::Custom(c) => {
                let n = c
                    .links
                    .iter()
                    .map(|l| l.monitor as u64 + l.reverse_monitor as u64)
                    .sum::<u64>();
                let first = c
                    .links
                    .iter()
                    .position(|l| l.monitor || l.reverse_monitor)
                    .map(|j| {
                        let l = &c.links[j];
                        let fwd = l.aqm.as_ref().unwrap_or(&self.aqm);
                        if l.monitor {
                            fwd
                        } else {
                            l.reverse_aqm
                                .as_ref()
                                .or(l.aqm.as_ref())
                                .unwrap_or(&self.reverse_aqm)
                        }
                    });
                (n.max(1), first)
            }
        }
    }

    /// What the run will store (see the module documentation).
    pub fn estimate_memory(&self) -> MemoryEstimate {
        let (links, first) = self.monitored();
        let samples = (self.duration.0 / self.metrics.sample_interval.0.max(1)) as f64 + 1.0;
        let params = first.map_or(0, |spec| {
            let d = self.duplex_links();
            let info = d.first().map_or_else(
                || LinkInfo::new(BitRate(1_000_000), u32::from(self.tcp.packet_size)),
                |d| LinkInfo {
                    delay: d.delay,
                    buffer: d.buffer,
                    ..LinkInfo::new(d.rate, u32::from(self.tcp.packet_size))
                },
            );
            let mut n = 0u64;
            spec.build(info).params(&mut |_, _| n += 1);
            n
        });
        let w = self.metrics.window.0.max(1);
        // A periodic phase's deviation windows run over its measured time,
        // at most its span.
        let per_link: u64 = std::iter::once((self.metrics.start, self.duration))
            .chain(self.metrics.phases.iter().map(|p| (p.from, p.to)))
            .map(|(a, b)| b.0.saturating_sub(a.0) / w + 1)
            .fold(0u64, u64::saturating_add);
        MemoryEstimate {
            queue_rows: samples * links as f64,
            param_rows: samples * params as f64,
            windows: per_link as f64 * links as f64,
            flows: self.total_flows() as f64,
            phases: self.metrics.phases.len() as f64,
            snapshot_flows: self.open_intervals_at_most() as f64 * self.total_flows() as f64,
            flow_series_rows: samples * self.metrics.flow_series.len() as f64,
            trace_rows: if self.metrics.trace {
                // Both directions of a dumbbell's bottleneck are monitored.
                let l = links + u64::from(self.dumbbell().is_some());
                self.metrics.trace_limit as f64 * l as f64
            } else {
                0.0
            },
            pcap_packets: self.metrics.pcap as f64,
            group_delays: if self.metrics.group_delays {
                let l = links + u64::from(self.dumbbell().is_some());
                self.traffic.len() as f64 * (self.metrics.phases.len() + 1) as f64 * l as f64
            } else {
                0.0
            },
        }
    }

    /// The most measurement intervals (the main one and the phases) open
    /// at one instant: each keeps the flows' counters from its start to its
    /// end (a periodic phase two sets: [`super::metrics::Phase::snapshots`]).
    fn open_intervals_at_most(&self) -> usize {
        let mut edges: Vec<(SimTime, i8)> = std::iter::once((self.metrics.start, self.duration, 1))
            .chain(
                self.metrics
                    .phases
                    .iter()
                    .map(|p| (p.from, p.to, p.snapshots() as i8)),
            )
            .flat_map(|(a, b, n)| [(a, n), (b, -n)])
            .collect();
        // An interval that ends where another begins is closed first.
        edges.sort_unstable();
        let (mut open, mut most) = (0i64, 0i64);
        for (_, d) in edges {
            open += i64::from(d);
            most = most.max(open);
        }
        most.max(0) as usize
    }

    fn check_memory(&self) -> SpecResult<()> {
        let limit = self.metrics.memory_limit as f64;
        self.check_memory_within(
            limit,
            &format!("metrics.memory_limit is {}", human_bytes(limit)),
        )
    }

    /// Refuse a run whose results would not fit in the `available` bytes
    /// the machine has for it (free memory, or what `ulimit -v` leaves),
    /// when that is less than `metrics.memory_limit`: the front end's check
    /// before a run, so that such a run stops with the figure
    /// and the key to change instead of aborting on a failed allocation.
    pub fn check_machine_memory(&self, available: u64) -> SpecResult<()> {
        if available >= self.metrics.memory_limit {
            return Ok(());
        }
        let limit = available as f64;
        self.check_memory_within(
            limit,
            &format!(
                "this machine has {} free for it (free memory, ulimit -v)",
                human_bytes(limit)
            ),
        )
    }

    fn check_memory_within(&self, limit: f64, source: &str) -> SpecResult<()> {
        let e = self.estimate_memory();
        if e.bytes() <= limit {
            return Ok(());
        }
        let tail = format!("about {} in all; {source}", human_bytes(e.bytes()));
        let g = e.group_delay_bytes();
        if g >= e.bytes() / 2.0 {
            return Err(SpecError::new(
                "metrics.group_delays",
                format!(
                    "the queueing delays of {} traffic groups kept apart over {} measurement \
                     intervals would take {}, {tail}; turn it off, or use fewer phases",
                    self.traffic.len(),
                    self.metrics.phases.len() + 1,
                    human_bytes(g)
                ),
            ));
        }
        let p = e.phase_bytes();
        if p >= e.bytes() / 2.0 {
            return Err(SpecError::new(
                "metrics.phases",
                format!(
                    "{} phases ({} measurement intervals open at once, each keeping the \
                     counters of {} flows) would keep {}, {tail}; use fewer phases, or fewer \
                     that overlap",
                    self.metrics.phases.len(),
                    self.open_intervals_at_most(),
                    sci(e.flows),
                    human_bytes(p)
                ),
            ));
        }
        let (q, w, f) = (e.queue_bytes(), e.window_bytes(), e.flow_bytes());
        let s = e.series_bytes();
        if s >= q && s >= w && s >= f {
            let fs = e.flow_series_rows * FLOW_SERIES_ROW_BYTES as f64;
            let pc = e.pcap_packets * PCAP_PACKET_BYTES as f64;
            return Err(if pc * 2.0 >= s {
                SpecError::new(
                    "metrics.pcap",
                    format!(
                        "{} captured packets would take {}, {tail}; capture at most {} \
                         (or raise metrics.memory_limit)",
                        self.metrics.pcap,
                        human_bytes(pc),
                        ((limit - (e.bytes() - pc)) / PCAP_PACKET_BYTES as f64).max(0.0) as u64
                    ),
                )
            } else if fs * 2.0 >= s {
                SpecError::new(
                    "metrics.flow_series",
                    format!(
                        "{} flows sampled every {} would store {} rows, {tail}; \
                         trace fewer flows or raise metrics.sample_interval",
                        self.metrics.flow_series.len(),
                        self.metrics.sample_interval,
                        sci(e.flow_series_rows)
                    ),
                )
            } else {
                SpecError::new(
                    "metrics.trace_limit",
                    format!(
                        "{} events per monitored link could take {}, {tail}; \
                         lower metrics.trace_limit",
                        self.metrics.trace_limit,
                        human_bytes(s - fs - pc)
                    ),
                )
            });
        }
        if q >= w && q >= f {
            let rest = limit - w - f;
            let si = self.metrics.sample_interval;
            let need = if rest > 0.0 {
                format!(
                    "; a sample interval of at least {} fits",
                    SimTime((si.0 as f64 * q / rest).ceil() as u64)
                )
            } else {
                String::new()
            };
            let per_row =
                QUEUE_ROW_BYTES as f64 + PARAM_ROW_BYTES as f64 * e.param_rows / e.queue_rows;
            return Err(SpecError::new(
                "metrics.sample_interval",
                format!(
                    "{si} would store {} queue samples ({} monitored link(s) over {}) and {} \
                     AQM parameter rows, {}; at most {} queue samples fit in memory{need}",
                    sci(e.queue_rows),
                    sci(e.queue_rows / ((self.duration.0 / si.0.max(1)) as f64 + 1.0)),
                    self.duration,
                    sci(e.param_rows),
                    tail,
                    sci(((limit - w - f) / per_row).max(0.0).floor()),
                ),
            ));
        }
        if w >= f {
            let win = self.metrics.window;
            let rest = limit - q - f;
            let need = if rest > 0.0 {
                format!(
                    "; a window of at least {} fits",
                    SimTime((win.0 as f64 * w / rest).ceil() as u64)
                )
            } else {
                String::new()
            };
            return Err(SpecError::new(
                "metrics.window",
                format!(
                    "{win} would keep {} deviation windows, {tail}{need}",
                    sci(e.windows)
                ),
            ));
        }
        Err(SpecError::new(
            "traffic",
            format!(
                "{} flows (scheduled ones included) need about {} of memory ({} B each), {tail}; \
                 run fewer flows or on a machine with more memory",
                sci(e.flows),
                human_bytes(f),
                FLOW_BYTES
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Value;

    const BASE: &str = r#"
duration = "20s"
[topology]
bottleneck_rate = "10Mbps"
[aqm]
kind = "red"
[[traffic]]
kind = "bulk"
flows = 10
"#;

    fn check(extra: &str) -> SpecResult<Scenario> {
        let v: Value = toml::from_str(&format!("{BASE}{extra}")).expect("TOML");
        Scenario::from_value(v)
    }

    fn path_of(extra: &str) -> String {
        check(extra).expect_err("should be refused").path
    }

    #[test]
    fn estimate_by_hand() {
        // 20 s at 10 ms: 2001 samples of one link, RED reports no parameters;
        // windows of 10 s over [0, 20 s]: 20/10 + 1 = 3; 10 flows.
        let e = check("").unwrap().estimate_memory();
        assert_eq!(e.queue_rows, 2001.0);
        assert_eq!(e.param_rows, 0.0);
        assert_eq!(e.windows, 3.0);
        assert_eq!(e.flows, 10.0);
        let (q, w, f) = (QUEUE_ROW_BYTES, WINDOW_BYTES, FLOW_BYTES);
        // The measurement interval keeps the 10 flows' counters.
        assert_eq!(e.snapshot_flows, 10.0);
        assert_eq!(
            e.bytes(),
            2001.0 * q as f64
                + 3.0 * w as f64
                + 10.0 * f as f64
                + 10.0 * SNAPSHOT_FLOW_BYTES as f64
        );
    }

    #[test]
    fn overlapping_phases_are_counted_and_refused_past_memory() {
        let phases = |n: usize, span: &dyn Fn(usize) -> (f64, f64)| {
            let list: Vec<String> = (0..n)
                .map(|i| {
                    let (a, b) = span(i);
                    format!("[{a}, {b}]")
                })
                .collect();
            format!("[metrics]\nphases = [{}]\n", list.join(", "))
        };
        // Three phases over [0, 20 s], two of them open together with the
        // main interval at 10-15 s: three intervals open at once.
        let sc = check("[metrics]\nphases = [[0, 10], [10, 20], [5, 15]]\n").unwrap();
        assert_eq!(sc.open_intervals_at_most(), 3);
        let e = sc.estimate_memory();
        assert_eq!((e.phases, e.snapshot_flows), (3.0, 30.0));
        // 10 000 phases over the same span keep 10 001 snapshots of each
        // flow: with 100 000 flows, 200 GB; refused, naming the phases.
        let many = phases(10_000, &|_| (0.0, 20.0));
        let e = check(&format!(
            "{many}[[traffic]]\nkind = \"bulk\"\nflows = 100000\n"
        ));
        let e = e.unwrap_err();
        assert_eq!(e.path, "metrics.phases", "{}", e.msg);
        assert!(
            e.msg
                .contains("10000 phases (10001 measurement intervals open"),
            "{}",
            e.msg
        );
        // The same count one after the other: 10 000 x 50 KB, 500 MB, fits.
        let disjoint = phases(10_000, &|i| (i as f64 * 0.002, (i + 1) as f64 * 0.002));
        let sc = check(&disjoint).unwrap();
        assert_eq!(sc.open_intervals_at_most(), 2);
    }

    #[test]
    fn sample_interval_past_memory_is_refused_with_the_figure() {
        let e = check("[metrics]\nsample_interval = \"1ns\"\n").unwrap_err();
        assert_eq!(e.path, "metrics.sample_interval");
        assert!(e.msg.contains("2.0e10 queue samples"), "{}", e.msg);
        // The interval it names fits; one nanosecond less does not.
        let need = e
            .msg
            .rsplit("at least ")
            .next()
            .unwrap()
            .trim_end_matches(" fits");
        assert!(check(&format!("[metrics]\nsample_interval = \"{need}\"\n")).is_ok());
        // A larger memory_limit admits 1 us (2e7 samples, 4 GB).
        assert_eq!(
            path_of("[metrics]\nsample_interval = \"1us\"\n"),
            "metrics.sample_interval"
        );
        assert!(check("[metrics]\nsample_interval = \"1us\"\nmemory_limit = \"8GB\"\n").is_ok());
    }

    #[test]
    fn window_past_memory_is_refused() {
        assert_eq!(path_of("[metrics]\nwindow = \"1ns\"\n"), "metrics.window");
    }

    #[test]
    fn markov_hold_below_a_packet_time_is_refused() {
        // 1000-byte packets at 10 Mbps: 800 us.
        let loss = |h: &str| {
            format!(
                "[topology.loss]\nkind = \"markov\"\np = [0, 0.5]\nhold = [\"1s\", \"{h}\"]\n\
                 transitions = [[0, 1], [1, 0]]\n"
            )
        };
        let text = BASE.replace("[aqm]", &format!("{}[aqm]", loss("799us")));
        let v: Value = toml::from_str(&text).unwrap();
        let e = Scenario::from_value(v).unwrap_err();
        assert_eq!(e.path, "topology.loss.hold[1]");
        assert!(e.msg.contains("800us"), "{}", e.msg);
        let text = BASE.replace("[aqm]", &format!("{}[aqm]", loss("800us")));
        assert!(Scenario::from_value(toml::from_str(&text).unwrap()).is_ok());
    }

    #[test]
    fn timer_events_past_the_budget_are_refused() {
        // PI sampling at 1 MHz in both directions: 2 x 2e7 ticks in 20 s: fine;
        // over 1000 s, 2e9: refused, naming [aqm].
        let pi = |d: &str| {
            BASE.replace("kind = \"red\"", "kind = \"pi\"\nsampling_freq = 1000000")
                .replace("duration = \"20s\"", &format!("duration = \"{d}\""))
        };
        let ok = |t: &str| Scenario::from_value(toml::from_str(t).unwrap());
        assert!(ok(&(pi("20s") + "[metrics]\nsample_interval = \"1s\"\n")).is_ok());
        let e = ok(&(pi("1000s") + "[metrics]\nsample_interval = \"1s\"\n")).unwrap_err();
        assert_eq!(e.path, "aqm");
        // A UDP source at 1000000 Gbps: one packet per ns, 2e10 in 20 s.
        let udp = "[[traffic]]\nkind = \"cbr\"\nrate = \"1000000Gbps\"\n";
        assert_eq!(path_of(udp), "traffic[1].rate");
    }

    #[test]
    fn group_delays_are_estimated_and_refused_past_memory() {
        // One group, the main interval and two phases, both directions of
        // the dumbbell's bottleneck: 1 x 3 x 2 histograms.
        let on = "[metrics]\ngroup_delays = true\nphases = [[1, 2], [2, 3]]\n";
        let e = check(on).unwrap().estimate_memory();
        assert_eq!(e.group_delays, 6.0);
        let off = check("[metrics]\nphases = [[1, 2], [2, 3]]\n").unwrap();
        assert_eq!(off.estimate_memory().group_delays, 0.0);
        assert_eq!(
            e.bytes() - off.estimate_memory().bytes(),
            6.0 * GROUP_DELAY_BYTES as f64
        );
        // 100 groups over 11 intervals in 10 MB: 22 MB of histograms.
        let groups = "[[traffic]]\nkind = \"bulk\"\nflows = 1\n".repeat(99);
        let phases: Vec<String> = (1..=10).map(|i| format!("[{i}, {}]", i + 1)).collect();
        let many = format!(
            "{groups}[metrics]\ngroup_delays = true\nmemory_limit = \"10MB\"\nphases = [{}]\n",
            phases.join(", ")
        );
        assert_eq!(path_of(&many), "metrics.group_delays");
    }

    #[test]
    fn optional_series_are_estimated_and_refused_past_memory() {
        // 2001 samples x 3 flows; the trace: 1e6 events x 2 links (dumbbell).
        let e = check("[metrics]\nflow_series = [0, 1, 2]\ntrace = true\n")
            .unwrap()
            .estimate_memory();
        assert_eq!(e.flow_series_rows, 3.0 * 2001.0);
        assert_eq!(e.trace_rows, 2e6);
        // One traced flow's row costs more than one queue sample's.
        assert_eq!(
            path_of(
                "[metrics]\nflow_series = [0]\nsample_interval = \"1us\"\nmemory_limit = \"1GB\"\n"
            ),
            "metrics.flow_series"
        );
        assert_eq!(
            path_of("[metrics]\ntrace = true\ntrace_limit = 10000000000\n"),
            "metrics.trace_limit"
        );
        assert_eq!(
            // 10 flows x 4e6 samples: 4.8 GB of series, 0.8 GB of queue samples.
            path_of("[metrics]\nflow_series = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\nsample_interval = \"5us\"\n"),
            "metrics.flow_series"
        );
        assert_eq!(
            path_of("[metrics]\nflow_series = [10]\n"),
            "metrics.flow_series[0]"
        );
        assert_eq!(
            path_of("[metrics]\nflow_series = [1, 1]\n"),
            "metrics.flow_series[1]"
        );
    }

    #[test]
    fn tiny_rto_bounds_and_on_off_periods_are_refused() {
        // 10 flows x 20 s / 1 ns = 2e11 timeouts.
        assert_eq!(
            path_of("[tcp]\nmin_rto = \"1ns\"\nmax_rto = \"1ns\"\n"),
            "tcp.max_rto"
        );
        assert!(check("[tcp]\nmin_rto = \"1ns\"\n").is_ok());
        let onoff = "[[traffic]]\nkind = \"udp-onoff\"\nflows = 10\nrate = \"10kbps\"\n";
        assert_eq!(
            path_of(&format!("{onoff}on = \"1ns\"\noff = \"1ns\"\n")),
            "traffic[1].on"
        );
        assert!(check(&format!("{onoff}on = \"1s\"\noff = \"1s\"\n")).is_ok());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(805e6), "805 MB");
        assert_eq!(human_bytes(1.6e12), "1.6 TB");
        assert_eq!(human_bytes(12.0), "12 B");
    }
}
