//! `[[traffic]]`: the groups of flows and their kinds (bulk TCP, web
//! browsing, web-simple transfers, adaptive video, constant-rate and
//! ON/OFF UDP, latency probes), each kind's keys, defaults and validation
//! (the video's own in [`super::video`]).

use super::decode::{as_bytes, check_range, SpecError, SpecResult, Table};
use super::spec::{ser_bytes, TimeDist, HEADER_BYTES, MAX_FLOWS};
use super::tcp::{TcpOverrides, TcpSpec};
use super::topo::{PathSpec, Topology};
use super::value::Value;
use super::video::{Common, VideoSpec};
use super::web::{self, FirstPage, Http, PageEstimate, Pages, SizeDist, WebParams};
use crate::units::{BitRate, SimTime};
use serde::Serialize;

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
    /// Latency probes: one small packet every `interval`, echoed at once by
    /// the far end (as ping and irtt measure latency under load).
    Ping(UdpSpec),
    /// HTTP sessions: exponential transfers over new TCP connections
    /// separated by exponential think times.
    WebSimple(WebSimpleSpec),
    /// Web browsing: pages of heavy-tailed objects, HTTP/1.0, 1.1 or ns-2
    /// WebTraf's two connections per object, Pareto think times
    /// (`000_0675317d310dd341.txt`).
    Web(WebSpec),
    /// Adaptive video streaming: segments fetched over one persistent
    /// connection at bitrates chosen from the measured throughput
    /// ([`crate::scenario::video`]).
    Video(VideoSpec),
}

/// The sizes of a `web-simple` session's transfers (`sizes`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransferSizes {
    /// Exponential with mean `mean_packets`, rounded, at least 1.
    #[default]
    Exponential,
    /// Every transfer `mean_packets`, rounded, at least 1.
    Fixed,
}

impl TransferSizes {
    fn is_exponential(&self) -> bool {
        *self == TransferSizes::Exponential
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
    /// Base round-trip time of each session on the dumbbell (drawn per session):
    /// the two-way propagation delay its access links are set to give,
    /// 2 x (bottleneck_delay + 2 x access delay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<TimeDist>,
    /// Mean transfer size in data packets (default 12, of 1 KB in the thesis).
    pub mean_packets: f64,
    /// Exponential transfer sizes of mean `mean_packets` (the default), or
    /// every transfer `mean_packets` rounded.
    #[serde(skip_serializing_if = "TransferSizes::is_exponential")]
    pub sizes: TransferSizes,
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
    /// Base round-trip time of each flow on the dumbbell (drawn per flow):
    /// the two-way propagation delay its access links are set to give,
    /// 2 x (bottleneck_delay + 2 x access delay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<TimeDist>,
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
    /// One packet every this long (`kind = "ping"`).
    Interval(SimTime),
}

/// `kind = "cbr"`, `kind = "udp-onoff"` and `kind = "ping"`.
#[derive(Clone, Debug, Serialize)]
pub struct UdpSpec {
    pub flows: u32,
    pub direction: Direction,
    pub start: TimeDist,
    /// Base round-trip time of each flow on the dumbbell (drawn per flow):
    /// the two-way propagation delay its access links are set to give,
    /// 2 x (bottleneck_delay + 2 x access delay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<TimeDist>,
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
    /// The rate sent as video frames (cbr).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frames: Option<VideoFrames>,
    /// Where the flows run (parking-lot and custom topologies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
    /// Custom topology: extra one-way delay drawn per flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
}

/// A `cbr` group's `frames`: its rate sent as the frames of a video,
/// each frame's packets at once, `fps` frames a second in groups of
/// pictures of `gop` frames whose first (the I-frame) is `i_ratio` times
/// the size of the others (P-frames).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct VideoFrames {
    pub fps: f64,
    pub gop: u32,
    pub i_ratio: f64,
}

impl VideoFrames {
    fn decode(mut t: Table) -> SpecResult<VideoFrames> {
        let fps = t.f64("fps", 25.0)?;
        check_range(&t.field_path("fps"), fps, 0.0, true, 1000.0)?;
        let gop = t.u32("gop", 12)?;
        if !(1..=10_000).contains(&gop) {
            return Err(SpecError::new(
                t.field_path("gop"),
                format!("{gop} is outside the allowed range [1, 10000] frames"),
            ));
        }
        let i_ratio = t.f64("i_ratio", 5.0)?;
        if !(1.0..=1000.0).contains(&i_ratio) {
            return Err(SpecError::new(
                t.field_path("i_ratio"),
                format!("{i_ratio} is outside the allowed range [1, 1000] (an I-frame is at least a P-frame's size)"),
            ));
        }
        t.finish()?;
        Ok(VideoFrames { fps, gop, i_ratio })
    }
}

/// A request's payload (`request_size`, a passive group's key: `web`,
/// `video`): bytes, default 300, one segment at most.
pub(super) fn decode_request_size(t: &mut Table) -> SpecResult<u64> {
    let n = match t.take("request_size") {
        Some(v) => as_bytes(&v, &t.field_path("request_size"))?,
        None => web::REQUEST_SIZE,
    };
    if n == 0 || n > u64::from(65_535 - HEADER_BYTES) {
        return Err(SpecError::new(
            t.field_path("request_size"),
            format!("{n} bytes is outside the allowed range [1, 65495] bytes (one segment)"),
        ));
    }
    Ok(n)
}

/// `base_rtt`: on the dumbbell, a time or `{ uniform = [lo, hi] }` whose
/// lower bound is at least the bottleneck's round trip (2 x
/// `bottleneck_delay`), since the access delays take the rest of it.
fn decode_base_rtt(t: &mut Table, topology: &Topology) -> SpecResult<Option<TimeDist>> {
    let path = t.field_path("base_rtt");
    let Some(v) = t.take("base_rtt") else {
        return Ok(None);
    };
    let Topology::Dumbbell(d) = topology else {
        return Err(SpecError::new(
            path,
            "sets a group's access delays on the dumbbell; on a parking lot the RTTs come from topology.long_rtt and short_rtt, on a custom topology from the path's delays and the group's extra_delay",
        ));
    };
    let rtt = TimeDist::decode(v, &path)?;
    let lo = match rtt {
        TimeDist::Fixed(r) | TimeDist::Uniform(r, _) => r,
    };
    let floor = SimTime(d.bottleneck_delay.0.saturating_mul(2));
    if lo < floor {
        return Err(SpecError::new(
            path,
            format!(
                "{lo} is below the bottleneck's round trip 2 x topology.bottleneck_delay = {floor}; give at least {floor} (the access delays take what the bottleneck leaves of the RTT)"
            ),
        ));
    }
    Ok(Some(rtt))
}

pub const TRAFFIC_KINDS: &[&str] = &[
    "bulk",
    "cbr",
    "udp-onoff",
    "ping",
    "web-simple",
    "web",
    "video",
];

/// A latency probe's bytes on the wire by default (a 64-byte ICMP echo).
pub const PING_BYTES: u32 = 64;
/// A ping group's default spacing of probes (flent's and irtt's 200 ms).
pub const PING_INTERVAL: SimTime = SimTime::from_millis(200);

impl TrafficSpec {
    pub(super) fn decode(
        mut t: Table,
        tcp: &TcpSpec,
        topology: &Topology,
    ) -> SpecResult<TrafficSpec> {
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
        let count_key = if kind == "web-simple" || kind == "video" {
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
        let base_rtt = decode_base_rtt(&mut t, topology)?;
        let spec = match kind {
            "video" => {
                let c = Common {
                    sessions: flows,
                    direction,
                    start,
                    base_rtt,
                    path,
                    extra_delay,
                };
                TrafficSpec::Video(VideoSpec::decode(&mut t, c, tcp)?)
            }
            "bulk" => {
                let b = BulkSpec {
                    flows,
                    direction,
                    start,
                    base_rtt,
                    handshake: t.bool("handshake", false)?,
                    ecn: t.opt_bool("ecn")?,
                    tcp: TcpOverrides::decode(&mut t, tcp)?,
                    path,
                    extra_delay,
                };
                b.tcp.check_ecn(&t, tcp, b.ecn)?;
                TrafficSpec::Bulk(b)
            }
            "web-simple" => {
                let w = WebSimpleSpec {
                    sessions: flows,
                    direction,
                    start,
                    base_rtt,
                    mean_packets: t.f64("mean_packets", 12.0)?,
                    sizes: match t.choice(
                        "sizes",
                        &["exponential", "fixed"],
                        Some("exponential"),
                    )? {
                        "fixed" => TransferSizes::Fixed,
                        _ => TransferSizes::Exponential,
                    },
                    think: t.time("think", SimTime::from_millis(500))?,
                    handshake: t.bool("handshake", true)?,
                    ecn: t.opt_bool("ecn")?,
                    tcp: TcpOverrides::decode(&mut t, tcp)?,
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
                w.tcp.check_ecn(&t, tcp, w.ecn)?;
                TrafficSpec::WebSimple(w)
            }
            "ping" => {
                let interval = t.time("interval", PING_INTERVAL)?;
                if interval == SimTime::ZERO {
                    return Err(SpecError::new(
                        t.field_path("interval"),
                        "0s is not allowed; give the time between probes, e.g. \"200ms\"",
                    ));
                }
                let size = t.u32("packet_size", PING_BYTES)?;
                if !(HEADER_BYTES..=65_535).contains(&size) {
                    return Err(SpecError::new(
                        t.field_path("packet_size"),
                        format!("{size} is outside the allowed range [40, 65535] bytes"),
                    ));
                }
                TrafficSpec::Ping(UdpSpec {
                    flows,
                    direction,
                    start,
                    base_rtt,
                    rate: UdpRate::Interval(interval),
                    packet_size: size,
                    on: None,
                    off: None,
                    frames: None,
                    path,
                    extra_delay,
                })
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
                let size = t.u32("packet_size", u32::from(packet_size))?;
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
                let frames = if onoff {
                    None
                } else {
                    t.opt_table("frames")?
                        .map(VideoFrames::decode)
                        .transpose()?
                };
                let u = UdpSpec {
                    flows,
                    direction,
                    start,
                    base_rtt,
                    rate,
                    packet_size: size,
                    on,
                    off,
                    frames,
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
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => u.flows,
            TrafficSpec::WebSimple(w) => w.sessions,
            TrafficSpec::Web(w) => w.n,
            TrafficSpec::Video(v) => v.sessions,
        }
    }

    pub fn direction(&self) -> Direction {
        match self {
            TrafficSpec::Bulk(b) => b.direction,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => u.direction,
            TrafficSpec::WebSimple(w) => w.direction,
            TrafficSpec::Web(w) => w.direction,
            TrafficSpec::Video(v) => v.direction,
        }
    }

    pub fn start(&self) -> TimeDist {
        match self {
            TrafficSpec::Bulk(b) => b.start,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => u.start,
            TrafficSpec::WebSimple(w) => w.start,
            TrafficSpec::Web(w) => w.start,
            TrafficSpec::Video(v) => v.start,
        }
    }

    /// The kind as written in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            TrafficSpec::Bulk(_) => "bulk",
            TrafficSpec::Cbr(_) => "cbr",
            TrafficSpec::UdpOnoff(_) => "udp-onoff",
            TrafficSpec::Ping(_) => "ping",
            TrafficSpec::WebSimple(_) => "web-simple",
            TrafficSpec::Web(_) => "web",
            TrafficSpec::Video(_) => "video",
        }
    }

    /// Whether the group's flows run TCP.
    pub fn is_tcp(&self) -> bool {
        matches!(
            self,
            TrafficSpec::Bulk(_)
                | TrafficSpec::WebSimple(_)
                | TrafficSpec::Web(_)
                | TrafficSpec::Video(_)
        )
    }

    /// The group's `base_rtt` (dumbbell; a web group's is its `rtt`, set
    /// apart from the other groups' after the topology is built).
    pub fn base_rtt(&self) -> Option<TimeDist> {
        match self {
            TrafficSpec::Bulk(b) => b.base_rtt,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => u.base_rtt,
            TrafficSpec::WebSimple(w) => w.base_rtt,
            TrafficSpec::Web(_) => None,
            TrafficSpec::Video(v) => v.base_rtt,
        }
    }

    /// The group's `extra_delay` (custom topologies).
    pub fn extra_delay(&self) -> Option<TimeDist> {
        match self {
            TrafficSpec::Bulk(b) => b.extra_delay,
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => u.extra_delay,
            TrafficSpec::WebSimple(w) => w.extra_delay,
            TrafficSpec::Web(w) => w.extra_delay,
            TrafficSpec::Video(v) => v.extra_delay,
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
            TrafficSpec::Video(v) => v.tcp.apply(tcp),
            TrafficSpec::Cbr(_) | TrafficSpec::UdpOnoff(_) | TrafficSpec::Ping(_) => *tcp,
        }
    }
}

/// `kind = "web"`: the web-browsing model of `000_0675317d310dd341.txt`
/// and `001_e060da456e213f64.txt` ([`super::web`]).
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
    pub http: Http,
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
    pub pages: Pages,
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
    pub first_page: FirstPage,
    /// Objects of whole segments.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub whole_segments: bool,
    /// Each connection closes with a FIN exchange.
    #[serde(skip_serializing_if = "is_true")]
    pub teardown: bool,
    /// The resolved model.
    #[serde(skip)]
    pub params: WebParams,
    /// The group's flows: the number of sessions (as written, or derived
    /// from the load) times `lanes`.
    #[serde(skip)]
    pub n: u32,
}

fn is_residual(f: &FirstPage) -> bool {
    *f == FirstPage::Residual
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Serde's test for a switch left at its default of `true` (omitted from
/// the resolved scenario).
pub(super) fn is_true(b: &bool) -> bool {
    *b
}

fn is_zero_time(t: &SimTime) -> bool {
    *t == SimTime::ZERO
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
        if t.has("base_rtt") {
            return Err(SpecError::new(
                t.field_path("base_rtt"),
                "a web group gives its sessions' base RTT with `rtt` (e.g. rtt = { uniform = [\"20ms\", \"200ms\"] })",
            ));
        }
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
        let request_size = decode_request_size(t)?;
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
        let sizes = SizeDist::new(size_median as f64, size_sigma, size_tail, size_max as f64)
            .map_err(|(key, msg)| SpecError::new(t.field_path(key), msg))?;
        let ecn = t.opt_bool("ecn")?;
        let group_tcp = TcpOverrides::decode(t, tcp)?;
        group_tcp.check_ecn(t, tcp, ecn)?;
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
