//! Scenario types, their defaults and their validation.

use super::decode::{as_bytes, as_time, as_u64, check_range, join, SpecError, SpecResult, Table};
use super::seeds::Seeds;
use super::topo::{Dumbbell, PathSpec, Topology};
use super::value::Value;
use crate::aqm::AqmSpec;
use crate::units::{BitRate, SimTime};
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

/// TCP congestion control variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// RFC 5681: fast recovery ends at the first new ACK.
    Reno,
    /// RFC 6582: fast recovery ends when all data outstanding at its start is acknowledged.
    NewReno,
}

/// `[tcp]`: the TCP of every flow.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct TcpSpec {
    pub variant: TcpVariant,
    /// Bytes on the wire of a full data packet (payload MSS = packet_size - 40).
    pub packet_size: u32,
    /// ECN-capable transport (RFC 3168).
    pub ecn: bool,
    /// ECN-capable SYN/ACK ("ECN+", `000_0675317d310dd341.txt`).
    pub ecn_plus: bool,
    /// Delayed ACKs: one ACK every second full segment, or after `delack_timeout`.
    pub delayed_ack: bool,
    pub delack_timeout: SimTime,
    /// RFC 6298 lower bound of the retransmission timeout.
    pub min_rto: SimTime,
    /// RFC 6298 upper bound of the retransmission timeout.
    pub max_rto: SimTime,
    /// Retransmission timeout before the first RTT sample (also the SYN timer's first value).
    pub initial_rto: SimTime,
    /// Initial congestion window, segments.
    pub initial_cwnd: u32,
    /// Receiver window, segments.
    pub rwnd: u32,
    /// RFC 3042 limited transmit: a new segment on each of the first two
    /// duplicate ACKs (on by default, as in ns-2 and Linux).
    pub limited_transmit: bool,
    /// RFC 6582 section 4.2's ACK heuristic: after a timeout, three
    /// duplicate ACKs below `recover` still start a fast retransmit when
    /// cwnd > 1 and the last advance of the cumulative ACK was at most four
    /// segments (ns-2's `bugfix_ack_`). Off: the "careful" rule alone.
    pub ack_heuristic: bool,
    /// ns-2's `ecn_backoff_`: an ECN-Echo that finds the window at one
    /// segment a second time in a row doubles the retransmission timer
    /// that governs the RFC 3168 section 6.1.2 hold.
    pub ecn_backoff: bool,
    /// Send retransmitted data ECT(0) as ns-2 does. Off (the default):
    /// retransmissions are not ECT, as RFC 3168 section 6.1.5 requires.
    pub ect_retransmits: bool,
    /// Halve the window on a loss found by duplicate ACKs (RFC 5681). Off:
    /// the modified TCP of `002_80945567bf68047d.txt` section 5 (wireless),
    /// which retransmits without halving and halves only on a mark or a
    /// timeout.
    pub dupack_halving: bool,
    /// Whether NewReno re-arms the retransmission timer on every partial
    /// ACK ("Slow-but-Steady", `"every"`) or on the first only
    /// ("Impatient", `"first"`, the default: RFC 6582 section 3.2 step 5,
    /// ns-2's `newreno_changes1_ = 1`).
    pub partial_ack_timer: PartialAckTimer,
    /// Granularity of the sender's RTT clock. `0s` (the default): the
    /// round trip is timed to the nanosecond and RFC 6298's estimator runs
    /// in floating point. A positive tick times it as a BSD stack (and
    /// ns-2, `tcpTick_`) does: in whole ticks of this clock, with the
    /// integer estimator of Jacobson (1988) (srtt in eighths, rttvar in
    /// quarters of a tick) and RTO = srtt + 4 rttvar in ticks.
    pub clock_tick: SimTime,
    /// What ssthresh halves on a loss: `"flight"` (the default) RFC 5681
    /// eq. (4)'s FlightSize; `"window"` the congestion window before fast
    /// recovery's inflation, in whole segments and bounded by FlightSize;
    /// `"ns2"` ns-2.35's cut exactly: ssthresh = floor(w / 2) with w the
    /// window before inflation (`cwnd_`, which ns-2's recovery does not
    /// inflate, bounded by the receiver's window), and fast recovery's
    /// window w / 2 unrounded (ns-2 sets `cwnd_` to it when it retransmits).
    pub loss_ssthresh: LossSsthresh,
    /// The window NewReno leaves a fast recovery with on a full ACK (RFC
    /// 6582 section 3.2 step 3): `"flight"` (the default) option (1),
    /// min(ssthresh, FlightSize + 1); `"ssthresh"` option (2), ssthresh,
    /// as ns-2 does (`exit_recovery_fix_ = 0`).
    pub recovery_exit: RecoveryExit,
    /// Which segment limited transmit sends on the first two duplicate
    /// ACKs: `"new"` (the default, RFC 3042) one never sent before, and
    /// none while a timeout's go-back-N resends; `"next"` the next segment
    /// in sequence, as ns-2's `singledup_` does (it sends `t_seqno_`): after
    /// a timeout that is a segment already sent, often one the receiver
    /// holds.
    pub limited_transmit_sends: LimitedTransmitSends,
    /// A lost SYN or SYN/ACK cuts the connection's window (the default):
    /// the data sender after a retransmitted SYN or SYN/ACK starts with one
    /// segment (RFC 5681 section 3.1), and the SYN's timeout sets ssthresh
    /// by eq. (4) with nothing in flight, two segments, as ns-2's
    /// `timeout()` does. Off: `initial_cwnd` and ssthresh as if nothing
    /// was lost.
    pub syn_loss_cut: bool,
}

/// The segment limited transmit sends (`tcp.limited_transmit_sends`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitedTransmitSends {
    /// RFC 3042: only new data.
    New,
    /// ns-2: the next segment in sequence, new or not.
    Next,
}

/// NewReno's window on leaving fast recovery (`tcp.recovery_exit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryExit {
    /// RFC 6582 section 3.2 step 3 option (1): min(ssthresh, FlightSize + 1 segment).
    Flight,
    /// Option (2): ssthresh (ns-2).
    Ssthresh,
}

/// The base of ssthresh on a loss (`tcp.loss_ssthresh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LossSsthresh {
    /// min(FlightSize, floor(cwnd without recovery's inflation)) / 2 (RFC
    /// 5681 eq. (4) allows any value up to FlightSize / 2).
    Window,
    /// FlightSize / 2, RFC 5681 eq. (4) to the letter.
    Flight,
    /// ns-2.35 (`slowdown()` in `tcp.cc`): ssthresh = max(floor(w / 2), 2)
    /// with w = min(cwnd without recovery's inflation, rwnd); a fast
    /// retransmission sets the window recovery leaves with to w / 2.
    Ns2,
}

/// When NewReno re-arms the retransmission timer during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartialAckTimer {
    /// On the first partial ACK only ("Impatient").
    First,
    /// On every partial ACK ("Slow-but-Steady").
    Every,
}

impl Default for TcpSpec {
    fn default() -> Self {
        TcpSpec {
            variant: TcpVariant::NewReno,
            packet_size: 1000,
            ecn: false,
            ecn_plus: false,
            delayed_ack: false,
            delack_timeout: SimTime::from_millis(100),
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(3),
            initial_cwnd: 1,
            rwnd: 100_000,
            limited_transmit: true,
            ack_heuristic: false,
            ecn_backoff: true,
            ect_retransmits: false,
            dupack_halving: true,
            partial_ack_timer: PartialAckTimer::First,
            clock_tick: SimTime::ZERO,
            loss_ssthresh: LossSsthresh::Flight,
            recovery_exit: RecoveryExit::Flight,
            limited_transmit_sends: LimitedTransmitSends::New,
            syn_loss_cut: true,
        }
    }
}

impl TcpSpec {
    fn decode(v: Option<Value>, path: &str) -> SpecResult<TcpSpec> {
        let d = TcpSpec::default();
        let Some(v) = v else { return Ok(d) };
        let mut t = Table::new(v, path)?;
        let s = TcpSpec {
            variant: match t.choice("variant", &["newreno", "reno"], Some("newreno"))? {
                "reno" => TcpVariant::Reno,
                _ => TcpVariant::NewReno,
            },
            packet_size: t.u32("packet_size", d.packet_size)?,
            ecn: t.bool("ecn", d.ecn)?,
            ecn_plus: t.bool("ecn_plus", d.ecn_plus)?,
            delayed_ack: t.bool("delayed_ack", d.delayed_ack)?,
            delack_timeout: t.time("delack_timeout", d.delack_timeout)?,
            min_rto: t.time("min_rto", d.min_rto)?,
            max_rto: t.time("max_rto", d.max_rto)?,
            initial_rto: t.time("initial_rto", d.initial_rto)?,
            initial_cwnd: t.u32("initial_cwnd", d.initial_cwnd)?,
            rwnd: t.u32("rwnd", d.rwnd)?,
            limited_transmit: t.bool("limited_transmit", d.limited_transmit)?,
            ack_heuristic: t.bool("ack_heuristic", d.ack_heuristic)?,
            ecn_backoff: t.bool("ecn_backoff", d.ecn_backoff)?,
            ect_retransmits: t.bool("ect_retransmits", d.ect_retransmits)?,
            dupack_halving: t.bool("dupack_halving", d.dupack_halving)?,
            partial_ack_timer: match t.choice(
                "partial_ack_timer",
                &["first", "every"],
                Some("first"),
            )? {
                "every" => PartialAckTimer::Every,
                _ => PartialAckTimer::First,
            },
            clock_tick: t.time("clock_tick", d.clock_tick)?,
            loss_ssthresh: match t.choice(
                "loss_ssthresh",
                &["flight", "window", "ns2"],
                Some("flight"),
            )? {
                "window" => LossSsthresh::Window,
                "ns2" => LossSsthresh::Ns2,
                _ => LossSsthresh::Flight,
            },
            recovery_exit: match t.choice(
                "recovery_exit",
                &["flight", "ssthresh"],
                Some("flight"),
            )? {
                "ssthresh" => RecoveryExit::Ssthresh,
                _ => RecoveryExit::Flight,
            },
            limited_transmit_sends: match t.choice(
                "limited_transmit_sends",
                &["new", "next"],
                Some("new"),
            )? {
                "next" => LimitedTransmitSends::Next,
                _ => LimitedTransmitSends::New,
            },
            syn_loss_cut: t.bool("syn_loss_cut", d.syn_loss_cut)?,
        };
        t.finish()?;
        if !(HEADER_BYTES + 1..=65_535).contains(&s.packet_size) {
            return Err(SpecError::new(
                join(path, "packet_size"),
                format!(
                    "{} is outside the allowed range [41, 65535] bytes",
                    s.packet_size
                ),
            ));
        }
        for (k, v) in [
            ("delack_timeout", s.delack_timeout),
            ("min_rto", s.min_rto),
            ("initial_rto", s.initial_rto),
        ] {
            if v == SimTime::ZERO {
                return Err(SpecError::new(
                    join(path, k),
                    "0s is not allowed; give a positive time",
                ));
            }
        }
        if s.clock_tick > SimTime::from_secs(1) {
            return Err(SpecError::new(
                join(path, "clock_tick"),
                format!(
                    "{} is above the allowed 1s; give 0s (an exact clock) or a tick up to 1s",
                    s.clock_tick
                ),
            ));
        }
        if s.max_rto < s.min_rto {
            return Err(SpecError::new(
                join(path, "max_rto"),
                format!("{} is below min_rto ({})", s.max_rto, s.min_rto),
            ));
        }
        if s.initial_cwnd == 0 || s.initial_cwnd > 1000 {
            return Err(SpecError::new(
                join(path, "initial_cwnd"),
                format!(
                    "{} is outside the allowed range [1, 1000] segments",
                    s.initial_cwnd
                ),
            ));
        }
        if s.rwnd == 0 {
            return Err(SpecError::new(
                join(path, "rwnd"),
                "0 is not allowed; give at least 1 segment",
            ));
        }
        Ok(s)
    }

    /// Payload bytes of a full segment.
    pub fn mss(&self) -> u32 {
        self.packet_size - HEADER_BYTES
    }
}

/// The `[tcp]` keys a TCP traffic group (bulk, web-simple, web) may set
/// for its own flows, overriding `[tcp]` (`ecn` is the group's own key).
/// These are the ones that differ between the hosts and applications of
/// the seeds' set-ups: the segment size (the thesis' web-simple "1 KB
/// packets" beside 500-byte FTP), the congestion control, delayed ACKs and
/// the initial window. The timers (`min_rto`, ...) stay run-wide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TcpOverrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<TcpVariant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
}

/// The keys of [`TcpOverrides`].
pub const GROUP_TCP_KEYS: &[&str] = &["variant", "packet_size", "delayed_ack", "initial_cwnd"];

impl TcpOverrides {
    fn decode(t: &mut Table) -> SpecResult<TcpOverrides> {
        let variant = if t.has("variant") {
            Some(match t.choice("variant", &["newreno", "reno"], None)? {
                "reno" => TcpVariant::Reno,
                _ => TcpVariant::NewReno,
            })
        } else {
            t.allow("variant");
            None
        };
        let packet_size = match t.take("packet_size") {
            Some(v) => {
                let p = t.field_path("packet_size");
                let n = as_u64(&v, &p)?;
                if !(HEADER_BYTES as u64 + 1..=65_535).contains(&n) {
                    return Err(SpecError::new(
                        p,
                        format!("{n} is outside the allowed range [41, 65535] bytes"),
                    ));
                }
                Some(n as u32)
            }
            None => None,
        };
        let delayed_ack = if t.has("delayed_ack") {
            Some(t.bool("delayed_ack", false)?)
        } else {
            t.allow("delayed_ack");
            None
        };
        let initial_cwnd = match t.take("initial_cwnd") {
            Some(v) => {
                let p = t.field_path("initial_cwnd");
                let n = as_u64(&v, &p)?;
                if !(1..=1000).contains(&n) {
                    return Err(SpecError::new(
                        p,
                        format!("{n} is outside the allowed range [1, 1000] segments"),
                    ));
                }
                Some(n as u32)
            }
            None => None,
        };
        Ok(TcpOverrides {
            variant,
            packet_size,
            delayed_ack,
            initial_cwnd,
        })
    }

    /// `tcp` with these overrides applied.
    pub fn apply(&self, tcp: &TcpSpec) -> TcpSpec {
        let mut s = *tcp;
        if let Some(v) = self.variant {
            s.variant = v;
        }
        if let Some(v) = self.packet_size {
            s.packet_size = v;
        }
        if let Some(v) = self.delayed_ack {
            s.delayed_ack = v;
        }
        if let Some(v) = self.initial_cwnd {
            s.initial_cwnd = v;
        }
        s
    }
}

/// Which way a traffic group's data crosses the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From the left hosts through R1 -> R2 (the monitored direction).
    Forward,
    /// From the right hosts through R2 -> R1.
    Reverse,
}

/// `[[traffic]]`: one group of flows.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TrafficSpec {
    /// Persistent FTP-like flows with unlimited data.
    Bulk(BulkSpec),
    /// Constant-bit-rate UDP.
    Cbr(UdpSpec),
    /// Unresponsive ON/OFF UDP (exponential ON and OFF times).
    UdpOnoff(UdpSpec),
    /// HTTP sessions: exponential transfers over new TCP connections
    /// separated by exponential think times.
    WebSimple(WebSimpleSpec),
    /// Web browsing: pages of heavy-tailed objects, HTTP/1.0, 1.1 or ns-2
    /// WebTraf's two connections per object, Pareto think times
    /// (`000_0675317d310dd341.txt`).
    Web(WebSpec),
}

/// `kind = "web"`: the web-browsing model of `000_0675317d310dd341.txt`
/// and `001_e060da456e213f64.txt` ([`crate::transport::web`]).
#[derive(Clone, Debug, Serialize)]
pub struct WebSpec {
    /// Sessions as written (absent when derived from `offered_load`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<u32>,
    /// Offered load in the data direction (wire bytes), from which the
    /// number of sessions is derived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offered_load: Option<BitRate>,
    pub direction: Direction,
    /// When each session begins (it then thinks for an equilibrium
    /// residual think time before its first page).
    pub start: TimeDist,
    pub http: crate::transport::web::Http,
    /// Base round-trip time of each session (sets its access delays);
    /// dumbbell only (other topologies set RTTs by path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<TimeDist>,
    /// Mean think time between pages.
    pub think: SimTime,
    /// Pareto shape of the think time.
    pub think_shape: f64,
    /// Mean objects per page.
    pub objects: f64,
    /// Median of the lognormal body of the object sizes, bytes.
    #[serde(serialize_with = "ser_bytes")]
    pub size_median: u64,
    /// Sigma of the body (of ln bytes).
    pub size_sigma: f64,
    /// Share of objects in the Pareto tail.
    pub size_tail: f64,
    /// Largest object, bytes.
    #[serde(serialize_with = "ser_bytes")]
    pub size_max: u64,
    /// Payload bytes of a request.
    #[serde(serialize_with = "ser_bytes")]
    pub request_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// `[tcp]` keys set for this group.
    #[serde(flatten)]
    pub tcp: TcpOverrides,
    /// Where the sessions run on a parking-lot or custom topology.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
    /// Custom topology: extra one-way delay drawn per session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
    /// Whether a page waits for the one before it (`closed`) or comes at
    /// its time regardless (`open`).
    pub pages: crate::transport::web::Pages,
    /// Open pages: flows (parallel page fetches) per session.
    #[serde(skip_serializing_if = "is_one")]
    pub lanes: u32,
    /// Open pages: a page's objects asked for at once, each on its own lane.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parallel_objects: bool,
    /// Mean gap between the launches of a page's objects.
    #[serde(skip_serializing_if = "is_zero_time")]
    pub object_gap: SimTime,
    /// When a session's first page comes.
    #[serde(skip_serializing_if = "is_residual")]
    pub first_page: crate::transport::web::FirstPage,
    /// Objects of whole segments.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub whole_segments: bool,
    /// Each connection closes with a FIN exchange.
    #[serde(skip_serializing_if = "is_true")]
    pub teardown: bool,
    /// The resolved model.
    #[serde(skip)]
    pub params: crate::transport::web::WebParams,
    /// The group's flows: the number of sessions (as written, or derived
    /// from the load) times `lanes`.
    #[serde(skip)]
    pub n: u32,
}

fn is_residual(f: &crate::transport::web::FirstPage) -> bool {
    *f == crate::transport::web::FirstPage::Residual
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_zero_time(t: &SimTime) -> bool {
    *t == SimTime::ZERO
}

fn ser_bytes<S: Serializer>(b: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{b}B"))
}

impl WebSpec {
    fn decode(
        t: &mut Table,
        direction: Direction,
        start: TimeDist,
        tcp: &TcpSpec,
        topology: &Topology,
        extra_delay: Option<TimeDist>,
    ) -> SpecResult<WebSpec> {
        use crate::transport::web::{
            self as web, FirstPage, Http, PageEstimate, Pages, SizeDist, WebParams,
        };
        let sessions = match t.take("sessions") {
            Some(v) => {
                let p = t.field_path("sessions");
                let n = super::decode::as_u64(&v, &p)?;
                if n == 0 || n > MAX_FLOWS {
                    return Err(SpecError::new(
                        p,
                        format!("{n} is outside the allowed range [1, {MAX_FLOWS}] sessions"),
                    ));
                }
                Some(n as u32)
            }
            None => None,
        };
        let offered_load = match t.take("offered_load") {
            Some(v) => Some(super::decode::as_rate(&v, &t.field_path("offered_load"))?),
            None => None,
        };
        match (sessions, offered_load) {
            (Some(_), Some(_)) => {
                return Err(SpecError::new(
                    t.field_path("offered_load"),
                    "give either `sessions` (a count) or `offered_load` (a rate), not both",
                ))
            }
            (None, None) => {
                return Err(SpecError::new(
                    t.field_path("sessions"),
                    "missing: give `sessions` (a count, e.g. 1000) or `offered_load` (a rate, e.g. \"90Mbps\")",
                ))
            }
            _ => {}
        }
        // A bare number (`http = 1.1`, or `--set traffic[0].http=1.1`) is
        // read as the version it spells.
        let http = match t.take("http") {
            Some(Value::Float(1.0)) => Http::V10,
            Some(Value::Float(1.1)) => Http::V11,
            Some(v) => {
                let mut probe = Table::new(Value::Table(vec![("http".into(), v)]), t.path())?;
                match probe.choice("http", &["1.0", "1.1", "webtraf"], None)? {
                    "1.1" => Http::V11,
                    "webtraf" => Http::WebTraf,
                    _ => Http::V10,
                }
            }
            None => Http::V10,
        };
        let pages = match t.choice("pages", &["closed", "open"], Some("closed"))? {
            "open" => Pages::Open,
            _ => Pages::Closed,
        };
        let parallel_objects = t.bool("parallel_objects", false)?;
        let laned = pages == Pages::Open || parallel_objects;
        let object_gap = t.time("object_gap", SimTime::ZERO)?;
        if object_gap > SimTime::ZERO && !parallel_objects {
            return Err(SpecError::new(
                t.field_path("object_gap"),
                format!("{object_gap} applies to parallel_objects = true only (the gap between the launches of a page's objects); objects fetched one after another follow each other"),
            ));
        }
        let lanes = match (t.take("lanes"), laned) {
            (None, true) => web::LANES,
            (None, false) => 1,
            (Some(v), true) => {
                let p = t.field_path("lanes");
                let n = super::decode::as_u64(&v, &p)?;
                if !(1..=web::MAX_LANES as u64).contains(&n) {
                    return Err(SpecError::new(
                        p,
                        format!(
                            "{n} is outside the allowed range [1, {}] lanes (parallel fetches per session)",
                            web::MAX_LANES
                        ),
                    ));
                }
                n as u32
            }
            (Some(_), false) => {
                return Err(SpecError::new(
                    t.field_path("lanes"),
                    "applies to open pages (pages = \"open\") or parallel_objects = true only; a session with closed pages and its objects one after another fetches on one connection at a time",
                ))
            }
        };
        let first_page = match t.choice("first_page", &["residual", "start"], Some("residual"))? {
            "start" => FirstPage::Start,
            _ => FirstPage::Residual,
        };
        let whole_segments = t.bool("whole_segments", false)?;
        let teardown = t.bool("teardown", true)?;
        let path = PathSpec::decode_opt(t)?;
        let rtt = match (t.take("rtt"), topology) {
            (Some(v), Topology::Dumbbell(_)) => Some(TimeDist::decode(v, &t.field_path("rtt"))?),
            (None, Topology::Dumbbell(_)) => Some(TimeDist::Uniform(
                SimTime::from_millis(10),
                SimTime::from_millis(150),
            )),
            (Some(_), _) => {
                return Err(SpecError::new(
                    t.field_path("rtt"),
                    "sets the sessions' access delays on the dumbbell; on a parking lot the RTTs come from topology.long_rtt and short_rtt, on a custom topology from the path's delays",
                ))
            }
            (None, _) => None,
        };
        let think = t.time("think", web::THINK)?;
        if think == SimTime::ZERO {
            return Err(SpecError::new(
                t.field_path("think"),
                "0s is not allowed; give a positive mean think time",
            ));
        }
        let think_shape = t.f64("think_shape", web::THINK_SHAPE)?;
        if !(think_shape > 1.0 && think_shape <= 100.0) {
            return Err(SpecError::new(
                t.field_path("think_shape"),
                format!("{think_shape} is outside the allowed range (1, 100] (a Pareto needs a shape above 1 for a finite mean)"),
            ));
        }
        let objects = t.f64("objects", web::OBJECTS)?;
        check_range(&t.field_path("objects"), objects, 1.0, false, 1e6)?;
        let bytes = |t: &mut Table, key: &'static str, default: u64| -> SpecResult<u64> {
            match t.take(key) {
                Some(v) => as_bytes(&v, &t.field_path(key)),
                None => Ok(default),
            }
        };
        let size_median = bytes(t, "size_median", web::SIZE_MEDIAN)?;
        let size_sigma = t.f64("size_sigma", web::SIZE_SIGMA)?;
        let size_tail = t.f64("size_tail", web::SIZE_TAIL)?;
        let size_max = bytes(t, "size_max", web::SIZE_MAX)?;
        let request_size = bytes(t, "request_size", web::REQUEST_SIZE)?;
        if size_median == 0 {
            return Err(SpecError::new(
                t.field_path("size_median"),
                "0 bytes is not allowed; give a positive size",
            ));
        }
        check_range(&t.field_path("size_sigma"), size_sigma, 0.0, true, 10.0)?;
        if !(0.0..0.5).contains(&size_tail) {
            return Err(SpecError::new(
                t.field_path("size_tail"),
                format!("{size_tail} is outside the allowed range [0, 0.5)"),
            ));
        }
        if size_max <= size_median || size_max > 1_000_000_000_000 {
            return Err(SpecError::new(
                t.field_path("size_max"),
                format!("{size_max} bytes is outside the allowed range (size_median = {size_median} bytes, 1e12 bytes]"),
            ));
        }
        if request_size == 0 || request_size > (65_535 - HEADER_BYTES) as u64 {
            return Err(SpecError::new(
                t.field_path("request_size"),
                format!("{request_size} bytes is outside the allowed range [1, 65495] bytes (one segment)"),
            ));
        }
        let sizes = SizeDist::new(size_median as f64, size_sigma, size_tail, size_max as f64)
            .map_err(|(key, msg)| SpecError::new(t.field_path(key), msg))?;
        let ecn = if t.has("ecn") {
            Some(t.bool("ecn", false)?)
        } else {
            t.allow("ecn");
            None
        };
        let group_tcp = TcpOverrides::decode(t)?;
        let params = WebParams {
            sizes,
            objects,
            think_s: think.as_secs_f64(),
            think_shape,
            request_bytes: request_size as u32,
            http,
            pages,
            lanes,
            parallel_objects,
            object_gap_s: object_gap.as_secs_f64(),
            first_page,
            whole_segments,
            teardown,
        };
        let n = match (sessions, offered_load) {
            (Some(n), _) => n,
            (None, Some(load)) => {
                let rtt_mean = web_rtt_mean(topology, rtt.as_ref(), path.as_ref())
                    + 2.0 * extra_delay.map_or(0.0, |d| dist_mean(&d));
                let n = PageEstimate::new(&params, &group_tcp.apply(tcp), rtt_mean)
                    .sessions_for(&params, load.bps() as f64);
                if n as u64 * lanes as u64 > MAX_FLOWS {
                    return Err(SpecError::new(
                        t.field_path("offered_load"),
                        format!("{load} needs {n} sessions of {lanes} lane(s); at most {MAX_FLOWS} flows are allowed"),
                    ));
                }
                n
            }
            (None, None) => unreachable!("checked above"),
        };
        if n as u64 * lanes as u64 > MAX_FLOWS {
            return Err(SpecError::new(
                t.field_path("lanes"),
                format!(
                    "{n} sessions of {lanes} lanes are {} flows; at most {MAX_FLOWS} are allowed",
                    n as u64 * lanes as u64
                ),
            ));
        }
        let n = n * lanes;
        Ok(WebSpec {
            sessions,
            offered_load,
            direction,
            start,
            http,
            rtt,
            think,
            think_shape,
            objects,
            size_median,
            size_sigma,
            size_tail,
            size_max,
            request_size,
            ecn,
            tcp: group_tcp,
            path,
            extra_delay,
            pages,
            lanes,
            parallel_objects,
            object_gap,
            first_page,
            whole_segments,
            teardown,
            params,
            n,
        })
    }
}

/// The mean base RTT of a web group's sessions, seconds (for the number
/// of sessions an offered load needs): the group's `rtt` on the dumbbell,
/// the mean of `long_rtt` or `short_rtt` on a parking lot, twice the
/// path's delay on a custom topology. A path the topology does not have
/// is reported later (`check_paths`); it counts as 0 here.
fn web_rtt_mean(topology: &Topology, rtt: Option<&TimeDist>, path: Option<&PathSpec>) -> f64 {
    let mean = dist_mean;
    match (topology, path) {
        (Topology::Dumbbell(_), _) => rtt.map_or(0.0, mean),
        (Topology::ParkingLot(p), Some(PathSpec::Short | PathSpec::ShortOn(_))) => {
            mean(&p.short_rtt)
        }
        (Topology::ParkingLot(p), _) => mean(&p.long_rtt),
        (Topology::Custom(c), Some(PathSpec::Nodes(nodes))) => c
            .resolve(nodes, "path")
            .map(|steps| {
                2.0 * steps
                    .iter()
                    .map(|&(j, _)| c.links[j].delay.as_secs_f64())
                    .sum::<f64>()
            })
            .unwrap_or(0.0),
        (Topology::Custom(_), _) => 0.0,
    }
}

/// The mean of a time distribution, seconds.
fn dist_mean(d: &TimeDist) -> f64 {
    match *d {
        TimeDist::Fixed(r) => r.as_secs_f64(),
        TimeDist::Uniform(a, b) => 0.5 * (a.as_secs_f64() + b.as_secs_f64()),
    }
}

/// `kind = "web-simple"`: the HTTP sessions of `003_b277268f444f7691.txt`
/// sections 4.5 and 5.5.4. Each session repeatedly transfers a file of
/// exponentially distributed size over a new TCP connection, then thinks
/// for an exponentially distributed time that starts when the last byte is
/// acknowledged.
#[derive(Clone, Debug, Serialize)]
pub struct WebSimpleSpec {
    pub sessions: u32,
    pub direction: Direction,
    /// Start of each session's first transfer.
    pub start: TimeDist,
    /// Mean transfer size in data packets (default 12, of 1 KB in the thesis).
    pub mean_packets: f64,
    /// Mean think time (default 500 ms).
    pub think: SimTime,
    /// Open each connection with SYN / SYN-ACK (default true).
    pub handshake: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// `[tcp]` keys set for this group (`packet_size`: the size of the
    /// transfers' packets).
    #[serde(flatten)]
    pub tcp: TcpOverrides,
    /// Where the sessions run (parking-lot and custom topologies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
    /// Custom topology: extra one-way delay drawn per session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BulkSpec {
    pub flows: u32,
    pub direction: Direction,
    /// Start time of each flow.
    pub start: TimeDist,
    /// Open with SYN / SYN-ACK before sending data.
    pub handshake: bool,
    /// Override of `tcp.ecn` for this group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// `[tcp]` keys set for this group.
    #[serde(flatten)]
    pub tcp: TcpOverrides,
    /// Where the flows run (parking-lot and custom topologies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
    /// Custom topology: extra one-way delay drawn per flow, added on the
    /// path's first hop in both directions (a spread of RTTs inside a
    /// group whose flows share their host links).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
}

/// The sending rate of a UDP group.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UdpRate {
    /// Every flow sends at this rate (while ON).
    Rate(BitRate),
    /// The group shares `density` x the bottleneck capacity: each flow
    /// sends at density x C / flows while ON (`003_b277268f444f7691.txt`
    /// section 5.5.5).
    Density(f64),
}

/// `kind = "cbr"` and `kind = "udp-onoff"`.
#[derive(Clone, Debug, Serialize)]
pub struct UdpSpec {
    pub flows: u32,
    pub direction: Direction,
    pub start: TimeDist,
    #[serde(flatten)]
    pub rate: UdpRate,
    /// Bytes on the wire of every packet.
    pub packet_size: u32,
    /// Mean ON time (udp-onoff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<SimTime>,
    /// Mean OFF time (udp-onoff).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub off: Option<SimTime>,
    /// Where the flows run (parking-lot and custom topologies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
    /// Custom topology: extra one-way delay drawn per flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
}

pub const TRAFFIC_KINDS: &[&str] = &["bulk", "cbr", "udp-onoff", "web-simple", "web"];

impl TrafficSpec {
    fn decode(mut t: Table, tcp: &TcpSpec, topology: &Topology) -> SpecResult<TrafficSpec> {
        let packet_size = tcp.packet_size;
        let kind = t.choice("kind", TRAFFIC_KINDS, None)?;
        let start = match t.take("start") {
            Some(v) => TimeDist::decode(v, &t.field_path("start"))?,
            None => TimeDist::Fixed(SimTime::ZERO),
        };
        let extra_delay = match t.take("extra_delay") {
            Some(v) => Some(TimeDist::decode(v, &t.field_path("extra_delay"))?),
            None => None,
        };
        if kind == "web" {
            let direction = match t.choice("direction", &["forward", "reverse"], Some("forward"))? {
                "reverse" => Direction::Reverse,
                _ => Direction::Forward,
            };
            let w = WebSpec::decode(&mut t, direction, start, tcp, topology, extra_delay)?;
            t.finish()?;
            return Ok(TrafficSpec::Web(w));
        }
        let count_key = if kind == "web-simple" {
            "sessions"
        } else {
            "flows"
        };
        let flows = t.u32(count_key, 1)?;
        if flows == 0 {
            return Err(SpecError::new(
                t.field_path(count_key),
                format!(
                    "0 {count_key}: a group needs at least 1 {}",
                    count_key.trim_end_matches('s')
                ),
            ));
        }
        let direction = match t.choice("direction", &["forward", "reverse"], Some("forward"))? {
            "reverse" => Direction::Reverse,
            _ => Direction::Forward,
        };
        let path = PathSpec::decode_opt(&mut t)?;
        let spec = match kind {
            "bulk" => TrafficSpec::Bulk(BulkSpec {
                flows,
                direction,
                start,
                handshake: t.bool("handshake", false)?,
                ecn: if t.has("ecn") {
                    Some(t.bool("ecn", false)?)
                } else {
                    t.allow("ecn");
                    None
                },
                tcp: TcpOverrides::decode(&mut t)?,
                path,
                extra_delay,
            }),
            "web-simple" => {
                let w = WebSimpleSpec {
                    sessions: flows,
                    direction,
                    start,
                    mean_packets: t.f64("mean_packets", 12.0)?,
                    think: t.time("think", SimTime::from_millis(500))?,
                    handshake: t.bool("handshake", true)?,
                    ecn: if t.has("ecn") {
                        Some(t.bool("ecn", false)?)
                    } else {
                        t.allow("ecn");
                        None
                    },
                    tcp: TcpOverrides::decode(&mut t)?,
                    path,
                    extra_delay,
                };
                check_range(
                    &t.field_path("mean_packets"),
                    w.mean_packets,
                    0.0,
                    true,
                    1e9,
                )?;
                TrafficSpec::WebSimple(w)
            }
            _ => {
                let rate = match (t.take("rate"), t.opt_f64("density")?) {
                    (Some(v), None) => {
                        let r = super::decode::as_rate(&v, &t.field_path("rate"))?;
                        UdpRate::Rate(r)
                    }
                    (None, Some(d)) => {
                        check_range(&t.field_path("density"), d, 0.0, false, 10.0)?;
                        UdpRate::Density(d)
                    }
                    (Some(_), Some(_)) => {
                        return Err(SpecError::new(
                            t.field_path("density"),
                            "give either `rate` (per flow) or `density` (share of the bottleneck), not both",
                        ))
                    }
                    (None, None) => {
                        return Err(SpecError::new(
                            t.field_path("rate"),
                            "missing: give `rate` (per flow, e.g. \"1Mbps\") or `density` (share of the bottleneck, e.g. 0.5)",
                        ))
                    }
                };
                let size = t.u32("packet_size", packet_size)?;
                if !(HEADER_BYTES..=65_535).contains(&size) {
                    return Err(SpecError::new(
                        t.field_path("packet_size"),
                        format!("{size} is outside the allowed range [40, 65535] bytes"),
                    ));
                }
                let onoff = kind == "udp-onoff";
                let (on, off) = if onoff {
                    let on = t.time("on", SimTime::from_secs(1))?;
                    let off = t.time("off", SimTime::from_secs(1))?;
                    for (k, v) in [("on", on), ("off", off)] {
                        if v == SimTime::ZERO {
                            return Err(SpecError::new(
                                t.field_path(k),
                                "0s is not allowed; give a positive mean time",
                            ));
                        }
                    }
                    (Some(on), Some(off))
                } else {
                    (None, None)
                };
                let u = UdpSpec {
                    flows,
                    direction,
                    start,
                    rate,
                    packet_size: size,
                    on,
                    off,
                    path,
                    extra_delay,
                };
                if onoff {
                    TrafficSpec::UdpOnoff(u)
                } else {
                    TrafficSpec::Cbr(u)
                }
            }
        };
        t.finish()?;
        Ok(spec)
    }

    pub fn flows(&self) -> u32 {
        match self {
            TrafficSpec::Bulk(b) => b.flows,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => u.flows,
            TrafficSpec::WebSimple(w) => w.sessions,
            TrafficSpec::Web(w) => w.n,
        }
    }

    pub fn direction(&self) -> Direction {
        match self {
            TrafficSpec::Bulk(b) => b.direction,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => u.direction,
            TrafficSpec::WebSimple(w) => w.direction,
            TrafficSpec::Web(w) => w.direction,
        }
    }

    pub fn start(&self) -> TimeDist {
        match self {
            TrafficSpec::Bulk(b) => b.start,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => u.start,
            TrafficSpec::WebSimple(w) => w.start,
            TrafficSpec::Web(w) => w.start,
        }
    }

    /// The kind as written in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            TrafficSpec::Bulk(_) => "bulk",
            TrafficSpec::Cbr(_) => "cbr",
            TrafficSpec::UdpOnoff(_) => "udp-onoff",
            TrafficSpec::WebSimple(_) => "web-simple",
            TrafficSpec::Web(_) => "web",
        }
    }

    /// Whether the group's flows run TCP.
    pub fn is_tcp(&self) -> bool {
        matches!(
            self,
            TrafficSpec::Bulk(_) | TrafficSpec::WebSimple(_) | TrafficSpec::Web(_)
        )
    }

    /// The group's `extra_delay` (custom topologies).
    pub fn extra_delay(&self) -> Option<TimeDist> {
        match self {
            TrafficSpec::Bulk(b) => b.extra_delay,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) => u.extra_delay,
            TrafficSpec::WebSimple(w) => w.extra_delay,
            TrafficSpec::Web(w) => w.extra_delay,
        }
    }

    /// The TCP of the group's flows: `[tcp]` with the group's own keys
    /// (`packet_size`, `variant`, ...; `ecn` is read separately). For a UDP
    /// group, `[tcp]` as written.
    pub fn tcp(&self, tcp: &TcpSpec) -> TcpSpec {
        match self {
            TrafficSpec::Bulk(b) => b.tcp.apply(tcp),
            TrafficSpec::WebSimple(w) => w.tcp.apply(tcp),
            TrafficSpec::Web(w) => w.tcp.apply(tcp),
            TrafficSpec::Cbr(_) | TrafficSpec::UdpOnoff(_) => *tcp,
        }
    }
}

/// `[metrics]`.
#[derive(Clone, Debug, Serialize)]
pub struct MetricsSpec {
    /// Period of the queue time series.
    pub sample_interval: SimTime,
    /// Start of the measurement interval [start, duration] of the summary figures.
    pub start: SimTime,
    /// Window of the per-window queue deviation.
    pub window: SimTime,
    /// Extra measurement intervals, each summarised on its own (tables
    /// 6-1..6-5 of `003_b277268f444f7691.txt` report per time range).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<(SimTime, SimTime)>,
    /// Most memory the run's stored results may take, bytes (checked
    /// before the run by [`super::limits`]).
    #[serde(
        serialize_with = "ser_bytes",
        skip_serializing_if = "is_default_memory_limit"
    )]
    pub memory_limit: u64,
    /// Flows (their `flow` numbers in the flow table) whose TCP state is
    /// sampled every `sample_interval` into the flow series (off when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flow_series: Vec<u32>,
    /// Record an event trace of the drops and marks on the monitored links.
    #[serde(skip_serializing_if = "is_false")]
    pub trace: bool,
    /// Most events the trace keeps; the rest are counted, not kept.
    #[serde(skip_serializing_if = "is_default_trace_limit")]
    pub trace_limit: u64,
}

/// Default of `metrics.trace_limit`.
pub const DEFAULT_TRACE_LIMIT: u64 = 1_000_000;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default_trace_limit(n: &u64) -> bool {
    *n == DEFAULT_TRACE_LIMIT
}

fn is_default_memory_limit(b: &u64) -> bool {
    *b == super::limits::DEFAULT_MEMORY_LIMIT
}

impl MetricsSpec {
    fn decode(v: Option<Value>, path: &str, duration: SimTime) -> SpecResult<MetricsSpec> {
        let mut t = match v {
            Some(v) => Table::new(v, path)?,
            None => Table::new(Value::Table(Vec::new()), path)?,
        };
        let m = MetricsSpec {
            sample_interval: t.time("sample_interval", SimTime::from_millis(10))?,
            start: t.time("start", SimTime::ZERO)?,
            window: t.time("window", SimTime::from_secs(10))?,
            phases: match t.take("phases") {
                Some(v) => decode_phases(&v, &join(path, "phases"), duration)?,
                None => Vec::new(),
            },
            memory_limit: match t.take("memory_limit") {
                Some(v @ Value::Str(_)) => as_bytes(&v, &join(path, "memory_limit"))?,
                Some(v) => as_u64(&v, &join(path, "memory_limit"))?,
                None => super::limits::DEFAULT_MEMORY_LIMIT,
            },
            flow_series: match t.take("flow_series") {
                Some(v) => decode_flow_list(&v, &join(path, "flow_series"))?,
                None => Vec::new(),
            },
            trace: t.bool("trace", false)?,
            trace_limit: t.u64("trace_limit", DEFAULT_TRACE_LIMIT)?,
        };
        t.finish()?;
        if m.sample_interval == SimTime::ZERO {
            return Err(SpecError::new(
                join(path, "sample_interval"),
                "0s is not allowed; give a positive time",
            ));
        }
        if m.sample_interval > duration {
            return Err(SpecError::new(
                join(path, "sample_interval"),
                format!(
                    "{} is longer than the run (duration = {duration})",
                    m.sample_interval
                ),
            ));
        }
        if m.start >= duration {
            return Err(SpecError::new(
                join(path, "start"),
                format!(
                    "{} is not before the end of the run (duration = {duration})",
                    m.start
                ),
            ));
        }
        if m.window == SimTime::ZERO {
            return Err(SpecError::new(
                join(path, "window"),
                "0s is not allowed; give a positive time",
            ));
        }
        if m.memory_limit == 0 {
            return Err(SpecError::new(
                join(path, "memory_limit"),
                "0 bytes is not allowed; give a size such as \"4GB\"",
            ));
        }
        Ok(m)
    }
}

/// `flow_series = [0, 5, 17]`: distinct flow numbers, at most [`MAX_FLOW_SERIES`].
fn decode_flow_list(v: &Value, path: &str) -> SpecResult<Vec<u32>> {
    let Value::Array(items) = v else {
        return Err(SpecError::new(
            path,
            format!("expected a list of flow numbers, e.g. [0, 1, 2]; found {v}"),
        ));
    };
    if items.len() > MAX_FLOW_SERIES {
        return Err(SpecError::new(
            path,
            format!(
                "{} flows listed; at most {MAX_FLOW_SERIES} flows can be traced",
                items.len()
            ),
        ));
    }
    let mut out: Vec<u32> = Vec::with_capacity(items.len());
    for (i, x) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let f = super::decode::as_u64(x, &p)?;
        let f = u32::try_from(f)
            .map_err(|_| SpecError::new(&p, format!("{f} is not a flow number")))?;
        if out.contains(&f) {
            return Err(SpecError::new(&p, format!("flow {f} is listed twice")));
        }
        out.push(f);
    }
    Ok(out)
}

/// Most flows `metrics.flow_series` may list.
pub const MAX_FLOW_SERIES: usize = 10_000;

/// `phases = [[100, 200], [300, "400s"]]`: pairs of times (numbers are seconds).
fn decode_phases(v: &Value, path: &str, duration: SimTime) -> SpecResult<Vec<(SimTime, SimTime)>> {
    let Value::Array(items) = v else {
        return Err(SpecError::new(
            path,
            format!(
                "expected a list of [start, end] pairs, e.g. [[100, 200], [300, 400]]; found {v}"
            ),
        ));
    };
    let time = |x: &Value, p: &str| -> SpecResult<SimTime> {
        match x {
            Value::Int(_) | Value::Float(_) => {
                let s = super::decode::as_f64(x, p)?;
                if !(0.0..=1e8).contains(&s) {
                    return Err(SpecError::new(
                        p,
                        format!("{s} s is outside [0, 1e8] seconds"),
                    ));
                }
                Ok(SimTime((s * 1e9).round() as u64))
            }
            _ => as_time(x, p),
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let Value::Array(pair) = it else {
            return Err(SpecError::new(
                p,
                format!("expected [start, end], found {it}"),
            ));
        };
        if pair.len() != 2 {
            return Err(SpecError::new(
                p,
                format!("expected [start, end], found {it}"),
            ));
        }
        let a = time(&pair[0], &format!("{p}[0]"))?;
        let b = time(&pair[1], &format!("{p}[1]"))?;
        if a >= b {
            return Err(SpecError::new(
                p,
                format!("start {a} is not before end {b}"),
            ));
        }
        if b > duration {
            return Err(SpecError::new(
                format!("{p}[1]"),
                format!("{b} is after the end of the run (duration = {duration})"),
            ));
        }
        out.push((a, b));
    }
    Ok(out)
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
        let tcp = TcpSpec::decode(t.take("tcp"), "tcp")?;
        let topology = match t.take("topology") {
            Some(v) => Topology::decode(v, "topology", tcp.packet_size)?,
            None => {
                return Err(SpecError::new(
                    "topology",
                    "missing required table [topology]",
                ))
            }
        };
        let aqm = match t.opt_table("aqm")? {
            Some(a) => AqmSpec::decode(a, tcp.packet_size)?,
            None => AqmSpec::Droptail,
        };
        let reverse_aqm = match t.opt_table("reverse_aqm")? {
            Some(a) => AqmSpec::decode(a, tcp.packet_size)?,
            None => aqm.clone(),
        };
        let traffic: Vec<TrafficSpec> = t
            .table_array("traffic")?
            .into_iter()
            .map(|g| TrafficSpec::decode(g, &tcp, &topology))
            .collect::<SpecResult<_>>()?;
        if traffic.is_empty() {
            return Err(SpecError::new(
                "traffic",
                "no traffic: add at least one [[traffic]] group",
            ));
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

    /// Flows of group `g` over the whole run (initial + scheduled starts).
    pub fn group_capacity(&self, g: usize) -> u32 {
        let extra: u32 = self
            .schedule
            .iter()
            .map(|e| match e.action {
                super::Action::Flows { group, start, .. } if group as usize == g => start,
                super::Action::Web {
                    group,
                    add_sessions,
                    ..
                } if group as usize == g => add_sessions,
                _ => 0,
            })
            .fold(0u32, u32::saturating_add);
        self.traffic[g].flows().saturating_add(extra)
    }

    /// The schedule's entries in time order (stable for equal times).
    pub fn schedule_in_order(&self) -> Vec<(usize, &super::ScheduleEntry)> {
        let mut v: Vec<(usize, &super::ScheduleEntry)> = self.schedule.iter().enumerate().collect();
        v.sort_by_key(|(i, e)| (e.at, *i));
        v
    }

    /// Cross-checks of the schedule against the rest of the scenario.
    fn check_schedule(&self) -> SpecResult<()> {
        let mut active: Vec<i64> = self.traffic.iter().map(|g| g.flows() as i64).collect();
        // One AQM per (link, direction) that `aqm` entries change, carried
        // from entry to entry, so that each change is checked against the
        // values the earlier ones set (adaptive schemes may still move
        // them during the run: the run then reports a refused change).
        let mut probes: Vec<(String, bool, crate::aqm::AqmImpl)> = Vec::new();
        for (i, e) in self.schedule_in_order() {
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
                                e.at
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
                                    ..crate::aqm::LinkInfo::new(d.rate, self.tcp.packet_size)
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
                                e.at
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
