//! `[metrics]`: what a run records beside its summary (the queue series'
//! period, the measurement interval and phases, flow series, the event
//! trace) and the memory its results may take.

use super::decode::{as_bytes, as_time, as_u64, join, SpecError, SpecResult, Table};
use super::spec::ser_bytes;
use super::value::Value;
use crate::units::SimTime;
use serde::Serialize;

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
    /// Packets captured into `packets.pcap`: the first this many to leave
    /// the queue of the first monitored link and of its reverse direction
    /// where that is measured too (0: no capture).
    #[serde(skip_serializing_if = "is_zero")]
    pub pcap: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    pub(super) fn decode(
        v: Option<Value>,
        path: &str,
        duration: SimTime,
    ) -> SpecResult<MetricsSpec> {
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
            pcap: t.u64("pcap", 0)?,
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
