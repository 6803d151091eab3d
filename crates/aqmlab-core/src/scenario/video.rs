//! `[[traffic]] kind = "video"`: adaptive video streaming over HTTP (as
//! DASH and HLS players fetch it), its keys, defaults and validation. The
//! player itself is [`crate::traffic::video`].
//!
//! Defaults, each a common choice of the field (aqmlab's, where RFC 7928
//! section 9.1 names "one adaptive video streaming flow" and no more):
//! - the bitrate ladder of the DASH-IF "Envivio" test video that the ABR
//!   studies of Yin et al. (SIGCOMM 2015) and Mao et al. (Pensieve,
//!   SIGCOMM 2017) stream: 0.3, 0.75, 1.2, 1.85, 2.85 and 4.3 Mbit/s;
//! - segments of 2 s, a common DASH segment length;
//! - a buffer of 12 s, dash.js's `stableBufferTime`: the player asks for
//!   the next segment only while it fits below that;
//! - playback starts (and resumes after a stall) once `startup`, one
//!   segment by default, is buffered;
//! - the throughput rule: the highest bitrate at most `safety` = 0.9
//!   (dash.js's bandwidth safety factor) times the harmonic mean of the
//!   last `window` = 5 segments' download rates (the estimate of Yin et
//!   al.); the first segment at the lowest bitrate.

use super::decode::{as_rate, check_range, SpecError, SpecResult, Table};
use super::spec::{ser_bytes, TimeDist};
use super::tcp::{TcpOverrides, TcpSpec};
use super::topo::PathSpec;
use super::traffic::Direction;
use super::value::Value;
use crate::units::{BitRate, SimTime};
use serde::Serialize;

/// The default ladder, bits per second (DASH-IF's "Envivio" test video).
pub const LADDER_BPS: [u64; 6] = [300_000, 750_000, 1_200_000, 1_850_000, 2_850_000, 4_300_000];
/// A segment's play time by default.
pub const SEGMENT: SimTime = SimTime::from_secs(2);
/// The buffer the player fills up to by default (dash.js's 12 s).
pub const BUFFER: SimTime = SimTime::from_secs(12);
/// The share of the estimated rate a bitrate may take (dash.js's 0.9).
pub const SAFETY: f64 = 0.9;
/// Segments whose download rates make the estimate.
pub const WINDOW: u32 = 5;
/// Most bitrates a ladder may hold.
pub const MAX_LADDER: usize = 64;

/// `kind = "video"`: sessions of an adaptive video player, each fetching
/// segments over one persistent TCP connection (HTTP/1.1), the server
/// sending, the client asking.
#[derive(Clone, Debug, Serialize)]
pub struct VideoSpec {
    pub sessions: u32,
    pub direction: Direction,
    /// When each session asks for its first segment.
    pub start: TimeDist,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_rtt: Option<TimeDist>,
    /// The encoded bitrates, ascending.
    pub bitrates: Vec<BitRate>,
    /// Play time of a segment.
    pub segment: SimTime,
    /// Play time buffered at most: the next segment is asked for when it
    /// fits.
    pub buffer: SimTime,
    /// Play time buffered before playback starts or resumes.
    pub startup: SimTime,
    /// The share of the estimated rate a bitrate may take.
    pub safety: f64,
    /// Segments whose download rates make the estimate.
    pub window: u32,
    /// Bytes of a request's payload.
    #[serde(serialize_with = "ser_bytes")]
    pub request_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    #[serde(flatten)]
    pub tcp: TcpOverrides,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
}

/// What every kind has, decoded before the kind's own keys.
pub(super) struct Common {
    pub sessions: u32,
    pub direction: Direction,
    pub start: TimeDist,
    pub base_rtt: Option<TimeDist>,
    pub path: Option<PathSpec>,
    pub extra_delay: Option<TimeDist>,
}

impl VideoSpec {
    pub(super) fn decode(t: &mut Table, c: Common, tcp: &TcpSpec) -> SpecResult<VideoSpec> {
        let bitrates = match t.take("bitrates") {
            None => LADDER_BPS.iter().map(|&b| BitRate(b)).collect(),
            Some(v) => decode_ladder(&v, &t.field_path("bitrates"))?,
        };
        let segment = t.time("segment", SEGMENT)?;
        if segment < SimTime::from_millis(10) || segment > SimTime::from_secs(600) {
            return Err(SpecError::new(
                t.field_path("segment"),
                format!("{segment} is outside the allowed range [10ms, 600s]"),
            ));
        }
        let buffer = t.time("buffer", BUFFER)?;
        if buffer < SimTime(segment.0 * 2) || buffer > SimTime::from_secs(3600) {
            return Err(SpecError::new(
                t.field_path("buffer"),
                format!(
                    "{buffer} is outside the allowed range [2 x segment = {}, 3600s]",
                    SimTime(segment.0 * 2)
                ),
            ));
        }
        let startup = t.time("startup", segment)?;
        if startup == SimTime::ZERO || startup.0 > buffer.0 - segment.0 {
            return Err(SpecError::new(
                t.field_path("startup"),
                format!(
                    "{startup} is outside the allowed range (0s, buffer - segment = {}]",
                    SimTime(buffer.0 - segment.0)
                ),
            ));
        }
        let safety = t.f64("safety", SAFETY)?;
        check_range(&t.field_path("safety"), safety, 0.0, true, 1.0)?;
        let window = t.u32("window", WINDOW)?;
        if !(1..=100).contains(&window) {
            return Err(SpecError::new(
                t.field_path("window"),
                format!("{window} is outside the allowed range [1, 100] segments"),
            ));
        }
        let request_size = super::traffic::decode_request_size(t)?;
        let ecn = t.opt_bool("ecn")?;
        let group_tcp = TcpOverrides::decode(t, tcp)?;
        group_tcp.check_ecn(t, tcp, ecn)?;
        Ok(VideoSpec {
            sessions: c.sessions,
            direction: c.direction,
            start: c.start,
            base_rtt: c.base_rtt,
            bitrates,
            segment,
            buffer,
            startup,
            safety,
            window,
            request_size,
            ecn,
            tcp: group_tcp,
            path: c.path,
            extra_delay: c.extra_delay,
        })
    }
}

/// `bitrates = ["0.3Mbps", "1Mbps", ...]`: 1 to 64 rates, strictly
/// ascending, each at least 1 kbit/s.
fn decode_ladder(v: &Value, path: &str) -> SpecResult<Vec<BitRate>> {
    let Value::Array(items) = v else {
        return Err(SpecError::new(
            path,
            format!(
                "expected a list of rates such as [\"1Mbps\", \"2.5Mbps\"], found {} {v}",
                v.type_name()
            ),
        ));
    };
    if items.is_empty() || items.len() > MAX_LADDER {
        return Err(SpecError::new(
            path,
            format!(
                "{} bitrates; give 1 to {MAX_LADDER}, ascending",
                items.len()
            ),
        ));
    }
    let mut out: Vec<BitRate> = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let r = as_rate(it, &p)?;
        if r.bps() < 1000 {
            return Err(SpecError::new(p, format!("{r} is below the allowed 1kbps")));
        }
        if let Some(prev) = out.last() {
            if r.bps() <= prev.bps() {
                return Err(SpecError::new(
                    p,
                    format!("{r} is not above the bitrate before it ({prev}); give the ladder in ascending order"),
                ));
            }
        }
        out.push(r);
    }
    Ok(out)
}
