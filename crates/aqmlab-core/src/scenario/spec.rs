//! The scenario as a whole: the [`Scenario`] and the small types its parts
//! share (queue limits, times drawn per flow), its decoding from a
//! document and the cross-checks between its parts. The parts have their
//! own files: `[tcp]` in [`super::tcp`], `[[traffic]]` in
//! [`super::traffic`], `[metrics]` in [`super::metrics`], `[topology]` in
//! [`super::topo`], `[[schedule]]` in [`super::schedule`].

use super::decode::{as_bytes, as_time, as_u64, SpecError, SpecResult, Table};
use super::metrics::MetricsSpec;
use super::seeds::Seeds;
use super::tcp::{TcpSpec, TcpVariant};
use super::topo::{Dumbbell, Topology};
use super::traffic::TrafficSpec;
use super::value::Value;
use crate::aqm::AqmSpec;
use crate::units::SimTime;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// Bytes of TCP/IP header in every data packet; ACK, SYN and FIN packets are this size.
pub const HEADER_BYTES: u32 = 40;
/// Largest number of flows one scenario may create.
pub const MAX_FLOWS: u64 = 1_000_000;

/// A complete run description.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// Simulated length of the run.
    pub duration: SimTime,
    /// Seed of every random stream of the run.
    pub seed: u64,
    /// `[seeds]`: per-purpose seeds that replace `seed` for one family of
    /// streams (RTT draws, start times, ...), the others kept.
    #[serde(skip_serializing_if = "Seeds::is_empty")]
    pub seeds: Seeds,
    pub topology: Topology,
    /// The queue discipline of the bottleneck's forward direction.
    pub aqm: AqmSpec,
    /// The queue discipline of the bottleneck's reverse direction (default: same as `aqm`).
    pub reverse_aqm: AqmSpec,
    pub tcp: TcpSpec,
    pub traffic: Vec<TrafficSpec>,
    /// Changes during the run, in the order written (executed in time order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<super::ScheduleEntry>,
    pub metrics: MetricsSpec,
}

/// A queue limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    Packets(u32),
    Bytes(u64),
}

impl Serialize for Buffer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Buffer::Packets(n) => s.serialize_u32(*n),
            Buffer::Bytes(b) => s.collect_str(&format_args!("{b}B")),
        }
    }
}

impl Buffer {
    /// Whether a packet of `size` bytes arriving at a queue of `pkts`
    /// packets and `bytes` bytes would overflow this limit.
    #[inline]
    pub fn overflows(self, pkts: u32, bytes: u64, size: u32) -> bool {
        match self {
            Buffer::Packets(n) => pkts >= n,
            Buffer::Bytes(b) => bytes + u64::from(size) > b,
        }
    }

    pub(crate) fn decode(v: &Value, path: &str) -> SpecResult<Buffer> {
        match v {
            Value::Str(_) => as_bytes(v, path).map(Buffer::Bytes),
            Value::Int(_) | Value::Float(_) => {
                let n = as_u64(v, path)?;
                u32::try_from(n)
                    .map(Buffer::Packets)
                    .map_err(|_| SpecError::new(path, format!("{n} packets is too large")))
            }
            _ => Err(SpecError::new(
                path,
                format!(
                    "expected a packet count (500) or a byte size (\"250KB\"), found {} {v}",
                    v.type_name()
                ),
            )),
        }
    }

    pub(crate) fn check(&self, path: &str, packet_size: u32) -> SpecResult<()> {
        match *self {
            Buffer::Packets(0) => Err(SpecError::new(
                path,
                "0 packets: a buffer must hold at least one packet",
            )),
            Buffer::Bytes(b) if b < packet_size as u64 => Err(SpecError::new(
                path,
                format!("{b} bytes is smaller than one packet (tcp.packet_size = {packet_size})"),
            )),
            _ => Ok(()),
        }
    }
}

/// A time that is either fixed or drawn uniformly per flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeDist {
    Fixed(SimTime),
    Uniform(SimTime, SimTime),
}

impl Serialize for TimeDist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TimeDist::Fixed(t) => t.serialize(s),
            TimeDist::Uniform(a, b) => {
                struct Pair(SimTime, SimTime);
                impl Serialize for Pair {
                    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                        let mut q = s.serialize_seq(Some(2))?;
                        q.serialize_element(&self.0)?;
                        q.serialize_element(&self.1)?;
                        q.end()
                    }
                }
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("uniform", &Pair(*a, *b))?;
                m.end()
            }
        }
    }
}

/// A time distribution as a scenario file writes it (`40ms`,
/// `{ uniform = [20ms, 200ms] }`), for error messages.
pub(super) fn dist_text(d: TimeDist) -> String {
    match d {
        TimeDist::Fixed(t) => format!("{t}"),
        TimeDist::Uniform(a, b) => format!("{{ uniform = [{a}, {b}] }}"),
    }
}

impl TimeDist {
    pub fn decode(v: Value, path: &str) -> SpecResult<TimeDist> {
        match v {
            Value::Str(_) => as_time(&v, path).map(TimeDist::Fixed),
            Value::Table(_) => {
                let mut t = Table::new(v, path)?;
                let p = t.field_path("uniform");
                let r = match t.take("uniform") {
                    Some(Value::Array(a)) if a.len() == 2 => {
                        let lo = as_time(&a[0], &format!("{p}[0]"))?;
                        let hi = as_time(&a[1], &format!("{p}[1]"))?;
                        if lo > hi {
                            return Err(SpecError::new(p, format!("lower bound {lo} is above upper bound {hi}")));
                        }
                        TimeDist::Uniform(lo, hi)
                    }
                    Some(other) => {
                        return Err(SpecError::new(
                            p,
                            format!("expected two times [\"1ms\", \"20ms\"], found {other}"),
                        ))
                    }
                    None => return Err(SpecError::new(p, "missing; write { uniform = [\"1ms\", \"20ms\"] }")),
                };
                t.finish()?;
                Ok(r)
            }
            other => Err(SpecError::new(
                path,
                format!(
                    "expected a time (\"15ms\") or {{ uniform = [\"1ms\", \"20ms\"] }}, found {} {other}",
                    other.type_name()
                ),
            )),
        }
    }

    /// Draw one value.
    pub fn sample(&self, rng: &mut crate::rng::Rng) -> SimTime {
        match *self {
            TimeDist::Fixed(t) => t,
            TimeDist::Uniform(a, b) => SimTime(rng.uniform_u64(a.0, b.0)),
        }
    }

    pub fn max(&self) -> SimTime {
        match *self {
            TimeDist::Fixed(t) => t,
            TimeDist::Uniform(_, b) => b,
        }
    }
}

/// A byte count as written in scenario files (`"1500B"`).
pub(super) fn ser_bytes<S: Serializer>(b: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{b}B"))
}

impl Scenario {
    /// Decode and validate a parsed scenario document.
    pub fn from_value(v: Value) -> SpecResult<Scenario> {
        let mut t = Table::new(v, "")?;
        let duration = t.req_time("duration")?;
        if duration == SimTime::ZERO {
            return Err(SpecError::new(
                "duration",
                "0s is not allowed; give a positive time",
            ));
        }
        if duration > SimTime::from_secs(100_000_000) {
            return Err(SpecError::new(
                "duration",
                format!("{duration} is longer than the allowed 1e8 s"),
            ));
        }
        let seed = t.u64("seed", 1)?;
        let seeds = Seeds::decode(t.take("seeds"), "seeds")?;
        let tcp_table = t.take("tcp");
        // `pacing = false` written in [tcp]: a traffic group's BBR refuses it.
        let pacing_off_given = tcp_table
            .as_ref()
            .and_then(|v| v.get("pacing"))
            .is_some_and(|v| matches!(v, Value::Bool(false)));
        // `hystart = true` written in [tcp]: some flow must run CUBIC.
        let hystart_given = tcp_table
            .as_ref()
            .and_then(|v| v.get("hystart"))
            .is_some_and(|v| matches!(v, Value::Bool(true)));
        let mut tcp = TcpSpec::decode(tcp_table, "tcp")?;
        let topo_value = t.take("topology");
        // The first access-delay key the dumbbell's table gives, if any
        // (a group's `base_rtt` sets its flows' access delays instead).
        let access_key = match &topo_value {
            Some(Value::Table(kv)) => ["access_delay", "source_access_delay", "sink_access_delay"]
                .into_iter()
                .find(|k| kv.iter().any(|(key, _)| key == k)),
            _ => None,
        };
        let mut topology = match topo_value {
            Some(v) => Topology::decode(v, "topology", u32::from(tcp.packet_size))?,
            None => {
                return Err(SpecError::new(
                    "topology",
                    "missing required table [topology]",
                ))
            }
        };
        let aqm = match t.opt_table("aqm")? {
            Some(a) => AqmSpec::decode(a, u32::from(tcp.packet_size))?,
            None => AqmSpec::Droptail,
        };
        let reverse_aqm = match t.opt_table("reverse_aqm")? {
            Some(a) => AqmSpec::decode(a, u32::from(tcp.packet_size))?,
            None => aqm.clone(),
        };
        let traffic: Vec<TrafficSpec> = t
            .table_array("traffic")?
            .into_iter()
            .map(|g| TrafficSpec::decode(g, &tcp, &topology))
            .collect::<SpecResult<_>>()?;
        if pacing_off_given {
            if let Some(i) = traffic
                .iter()
                .position(|g| g.tcp(&tcp).variant.always_paces())
            {
                return Err(SpecError::new(
                    format!("traffic[{i}].variant"),
                    format!(
                        "\"{}\" is not allowed with tcp.pacing = false: it always paces; \
                         remove tcp.pacing = false or choose another variant",
                        traffic[i].tcp(&tcp).variant.name()
                    ),
                ));
            }
        }
        if traffic.is_empty() {
            return Err(SpecError::new(
                "traffic",
                "no traffic: add at least one [[traffic]] group",
            ));
        }
        let cubic_flows = traffic
            .iter()
            .any(|g| g.tcp(&tcp).variant == TcpVariant::Cubic);
        if tcp.hystart() && !cubic_flows && !hystart_given {
            // The linux profile's default, which no CUBIC flow uses (left
            // out of the resolved scenario, as it is when off).
            tcp.set_hystart(false);
        }
        if hystart_given && !cubic_flows {
            return Err(SpecError::new(
                "tcp.hystart",
                format!(
                    "true is not allowed with variant = \"{}\" and no traffic group choosing \
                     \"cubic\": HyStart++ is modelled in CUBIC's slow start; set tcp.variant = \
                     \"cubic\" (or a group's variant) or leave hystart out",
                    tcp.variant.name()
                ),
            ));
        }
        if let Some(g) = traffic.iter().position(|g| g.base_rtt().is_some()) {
            if let Some(key) = access_key {
                return Err(SpecError::new(
                    format!("traffic[{g}].base_rtt"),
                    format!(
                        "{} sets the access delays of the group's flows, and topology.{key} sets them too; give one of the two (base_rtt on every group that needs its own, the others take the default access delay of 1 ms)",
                        dist_text(traffic[g].base_rtt().unwrap_or(TimeDist::Fixed(SimTime::ZERO)))
                    ),
                ));
            }
            // The groups without `base_rtt` take the default access delay,
            // which the resolved scenario leaves out (so that it reads back).
            if let Topology::Dumbbell(d) = &mut topology {
                d.access_delay = None;
            }
        }
        let total: u64 = traffic.iter().map(|g| g.flows() as u64).sum();
        if total > MAX_FLOWS {
            return Err(SpecError::new(
                "traffic",
                format!("{total} flows in all; at most {MAX_FLOWS} are allowed"),
            ));
        }
        let metrics = MetricsSpec::decode(t.take("metrics"), "metrics", duration)?;
        let schedule: Vec<super::ScheduleEntry> = t
            .table_array("schedule")?
            .into_iter()
            .map(|e| super::ScheduleEntry::decode(e, duration, &topology))
            .collect::<SpecResult<_>>()?;
        t.finish()?;
        let sc = Scenario {
            duration,
            seed,
            seeds,
            topology,
            aqm,
            reverse_aqm,
            tcp,
            traffic,
            schedule,
            metrics,
        };
        sc.check_paths()?;
        sc.check_schedule_size()?;
        sc.check_schedule()?;
        sc.check_web()?;
        if let Some((i, &f)) = sc
            .metrics
            .flow_series
            .iter()
            .enumerate()
            .find(|(_, &f)| f >= sc.total_flows())
        {
            return Err(SpecError::new(
                format!("metrics.flow_series[{i}]"),
                format!(
                    "flow {f} does not exist: the scenario has {} flows, numbered from 0",
                    sc.total_flows()
                ),
            ));
        }
        sc.check_limits()?;
        Ok(sc)
    }

    /// The dumbbell, if the topology is one.
    pub fn dumbbell(&self) -> Option<&Dumbbell> {
        match &self.topology {
            Topology::Dumbbell(d) => Some(d),
            _ => None,
        }
    }

    /// Flows created for the run: every group's initial flows plus those
    /// the schedule starts later.
    pub fn total_flows(&self) -> u32 {
        (0..self.traffic.len())
            .map(|g| self.group_capacity(g))
            .sum()
    }

    /// When each group's initial flows start (the same draws as the run's,
    /// for the testbed, which runs the same scenario): per group, one time
    /// per initial flow, drawn from the group's start stream in flow
    /// order; the lanes of an open web session start with its first.
    pub fn initial_starts(&self) -> Vec<Vec<SimTime>> {
        use crate::rng::{Rng, Stream};
        self.traffic
            .iter()
            .enumerate()
            .map(|(g, group)| {
                let mut rng = Rng::new(
                    self.seed_for(super::Purpose::Start),
                    Stream::Traffic(g as u32),
                );
                let lanes = match group {
                    TrafficSpec::Web(w) => w.lanes.max(1),
                    _ => 1,
                };
                let mut starts: Vec<SimTime> = Vec::with_capacity(group.flows() as usize);
                for i in 0..group.flows() {
                    let t = if i % lanes == 0 {
                        group.start().sample(&mut rng)
                    } else {
                        starts[(i - i % lanes) as usize]
                    };
                    starts.push(t);
                }
                starts
            })
            .collect()
    }

    /// Flows of group `g` over the whole run (initial + scheduled starts).
    pub fn group_capacity(&self, g: usize) -> u32 {
        let extra: u32 = self
            .schedule
            .iter()
            .map(|e| {
                let n = match e.action {
                    super::Action::Flows { group, start, .. } if group as usize == g => start,
                    super::Action::Web {
                        group,
                        add_sessions,
                        ..
                    } if group as usize == g => add_sessions,
                    _ => 0,
                };
                let reps = e.repetitions(self.duration).min(u64::from(u32::MAX)) as u32;
                n.saturating_mul(reps)
            })
            .fold(0u32, u32::saturating_add);
        self.traffic[g].flows().saturating_add(extra)
    }

    /// Cross-checks of the schedule against the rest of the scenario.
    fn check_schedule(&self) -> SpecResult<()> {
        let mut active: Vec<i64> = self.traffic.iter().map(|g| g.flows() as i64).collect();
        // One AQM per (link, direction) that `aqm` entries change, carried
        // from entry to entry, so that each change is checked against the
        // values the earlier ones set (adaptive schemes may still move
        // them during the run: the run then reports a refused change).
        let mut probes: Vec<(String, bool, crate::aqm::AqmImpl)> = Vec::new();
        for o in self.schedule_in_order() {
            let i = o.entry as usize;
            let e = &self.schedule[i];
            let path = format!("schedule[{i}]");
            match &e.action {
                super::Action::Flows {
                    group, start, stop, ..
                } => {
                    let g = *group as usize;
                    if g >= self.traffic.len() {
                        return Err(SpecError::new(
                            format!("{path}.group"),
                            format!(
                                "{group} is not a traffic group; groups are numbered 0..{} in the order of [[traffic]]",
                                self.traffic.len() - 1
                            ),
                        ));
                    }
                    if let TrafficSpec::Video(_) = self.traffic[g] {
                        return Err(SpecError::new(
                            format!("{path}.group"),
                            format!("group {group} is a video group: its sessions run from their start to the end of the run; the schedule starts and stops bulk and UDP flows"),
                        ));
                    }
                    if matches!(
                        self.traffic[g],
                        TrafficSpec::Web(_) | TrafficSpec::WebSimple(_)
                    ) {
                        return Err(SpecError::new(
                            format!("{path}.action"),
                            format!(
                                "group {group} is a {} group: its sessions are added and removed by action = \"web\" (add_sessions, remove_sessions)",
                                self.traffic[g].kind()
                            ),
                        ));
                    }
                    active[g] += *start as i64 - *stop as i64;
                    if active[g] < 0 {
                        return Err(SpecError::new(
                            format!("{path}.stop"),
                            format!(
                                "{stop} is more than the {} flows of group {group} active at {}",
                                active[g] + *stop as i64,
                                o.at
                            ),
                        ));
                    }
                }
                super::Action::Aqm { link, set } => {
                    for (d, fwd, rev) in self.select_duplex(link) {
                        for (on, is_fwd, spec) in [(fwd, true, d.aqm), (rev, false, d.reverse_aqm)]
                        {
                            if !on {
                                continue;
                            }
                            let at = probes
                                .iter()
                                .position(|(n, f, _)| *n == d.name && *f == is_fwd);
                            let at = at.unwrap_or_else(|| {
                                let info = crate::aqm::LinkInfo {
                                    buffer: d.buffer,
                                    delay: d.delay,
                                    ..crate::aqm::LinkInfo::new(
                                        d.rate,
                                        u32::from(self.tcp.packet_size),
                                    )
                                };
                                probes.push((d.name.clone(), is_fwd, spec.build(info)));
                                probes.len() - 1
                            });
                            let keys = set.iter().map(|(k, v)| (k.as_str(), *v));
                            let refused = crate::aqm::apply_set(&mut probes[at].2, keys);
                            if let Some((k, _, msg)) = refused.into_iter().next() {
                                return Err(SpecError::new(format!("{path}.set.{k}"), msg));
                            }
                        }
                    }
                }
                super::Action::Udp { group, .. } => {
                    let g = *group as usize;
                    if !matches!(
                        self.traffic.get(g),
                        Some(TrafficSpec::Cbr(_) | TrafficSpec::UdpOnoff(_))
                    ) {
                        return Err(SpecError::new(
                            format!("{path}.group"),
                            format!("{group} is not a UDP (cbr or udp-onoff) traffic group"),
                        ));
                    }
                }
                super::Action::Web {
                    group,
                    add_sessions,
                    remove_sessions,
                    ..
                } => {
                    let g = *group as usize;
                    if !matches!(
                        self.traffic.get(g),
                        Some(TrafficSpec::Web(_) | TrafficSpec::WebSimple(_))
                    ) {
                        return Err(SpecError::new(
                            format!("{path}.group"),
                            format!("{group} is not a web or web-simple traffic group"),
                        ));
                    }
                    if let Some(TrafficSpec::Web(w)) = self.traffic.get(g) {
                        if w.params.laned() {
                            return Err(SpecError::new(
                                format!("{path}.group"),
                                format!("group {group} has open pages or parallel objects (pages = \"open\" or parallel_objects = true): its sessions run on several lanes from start to end; the schedule adds and removes sessions of closed pages fetched one object at a time only"),
                            ));
                        }
                    }
                    active[g] -= *remove_sessions as i64;
                    if active[g] < 0 {
                        return Err(SpecError::new(
                            format!("{path}.remove_sessions"),
                            format!(
                                "{remove_sessions} is more than the {} sessions of group {group} active at {}",
                                active[g] + *remove_sessions as i64,
                                o.at
                            ),
                        ));
                    }
                    active[g] += *add_sessions as i64;
                }
                super::Action::Link { .. } => {}
            }
        }
        Ok(())
    }

    /// Cross-checks of web groups against the topology: a session's base
    /// RTT is 2 x (bottleneck_delay + 2 x access delay), so its lower bound
    /// must be at least twice the bottleneck delay.
    fn check_web(&self) -> SpecResult<()> {
        let bd = self
            .dumbbell()
            .map_or(SimTime::ZERO, |d| d.bottleneck_delay);
        for (g, t) in self.traffic.iter().enumerate() {
            let TrafficSpec::Web(w) = t else { continue };
            let lo = match w.rtt {
                Some(TimeDist::Fixed(r)) => r,
                Some(TimeDist::Uniform(a, _)) => a,
                None => continue,
            };
            if lo.0 < 2 * bd.0 {
                return Err(SpecError::new(
                    format!("traffic[{g}].rtt"),
                    format!(
                        "{lo} is below the bottleneck's round trip 2 x topology.bottleneck_delay = {}; lower the bottleneck delay or raise the RTT",
                        SimTime(2 * bd.0)
                    ),
                ));
            }
        }
        let total: u64 = (0..self.traffic.len())
            .map(|g| self.group_capacity(g) as u64)
            .sum();
        if total > MAX_FLOWS {
            return Err(SpecError::new(
                "traffic",
                format!("{total} flows and sessions in all (scheduled ones included); at most {MAX_FLOWS} are allowed"),
            ));
        }
        Ok(())
    }
}
