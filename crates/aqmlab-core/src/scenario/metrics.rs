//! `[metrics]`: what a run records beside its summary (the queue series'
//! period, the measurement interval and phases, flow series, the event
//! trace) and the memory its results may take.

use super::decode::{as_bytes, as_time, as_u64, join, SpecError, SpecResult, Table};
use super::spec::ser_bytes;
use super::value::Value;
use crate::units::SimTime;
use serde::ser::{SerializeMap, SerializeTuple};
use serde::{Serialize, Serializer};

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
    /// 6-1..6-5 of `003_b277268f444f7691.txt` report per time range); a
    /// periodic one is measured over its windows only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
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
    /// Keep the queueing delays of each traffic group's packets apart on
    /// every monitored link (`bottleneck.groups` in the summaries).
    #[serde(skip_serializing_if = "is_false")]
    pub group_delays: bool,
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
            group_delays: t.bool("group_delays", false)?,
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

/// One `[metrics] phases` entry: the interval [from, to], or with
/// `windows` a periodic phase, measured over its windows within [from, to]
/// only (RFC 7928 section 8.2.6's capacity states: every 200 ms, the first
/// 100 ms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phase {
    pub from: SimTime,
    pub to: SimTime,
    pub windows: Option<Windows>,
}

/// The windows of a periodic phase: `length` every `every`, the first
/// beginning at `from + offset`, the last cut at `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    /// Time from one window's start to the next's (> 0).
    pub every: SimTime,
    /// Length of a window (0 < length < every).
    pub length: SimTime,
    /// Start of the first window after `from` (0 <= offset < every).
    pub offset: SimTime,
}

impl Phase {
    /// The plain phase [from, to].
    pub fn span(from: SimTime, to: SimTime) -> Phase {
        Phase {
            from,
            to,
            windows: None,
        }
    }

    /// Window `k` (from 0) as [start, end); a plain phase has one, [from, to).
    pub fn window(&self, k: u64) -> Option<(SimTime, SimTime)> {
        let Some(w) = self.windows else {
            return (k == 0).then_some((self.from, self.to));
        };
        let start = self.from.0 + w.offset.0 + k.checked_mul(w.every.0)?;
        (start < self.to.0).then(|| (SimTime(start), SimTime((start + w.length.0).min(self.to.0))))
    }

    /// How many windows the phase has (1 for a plain phase).
    pub fn window_count(&self) -> u64 {
        match self.windows {
            None => 1,
            Some(w) => {
                let first = self.from.0 + w.offset.0;
                self.to.0.saturating_sub(first).div_ceil(w.every.0.max(1))
            }
        }
    }

    /// The time the phase measures: its windows' lengths together (a
    /// plain phase's whole span).
    pub fn measured(&self) -> SimTime {
        let n = self.window_count();
        match (self.windows, n.checked_sub(1).and_then(|k| self.window(k))) {
            (Some(w), Some((a, b))) => SimTime((n - 1) * w.length.0 + (b.0 - a.0)),
            _ => self.to - self.from,
        }
    }

    /// Whether `t` lies in the phase: in [from, to] for a plain phase, in
    /// one of its windows [start, end) for a periodic one.
    pub fn contains(&self, t: SimTime) -> bool {
        match self.windows {
            None => self.from <= t && t <= self.to,
            Some(w) => {
                let first = self.from.0 + w.offset.0;
                t.0 >= first && t < self.to && (t.0 - first) % w.every.0 < w.length.0
            }
        }
    }

    /// Counter snapshots the phase keeps per flow while it is open: one (at
    /// its start), a periodic phase two (also at its last window's end).
    pub fn snapshots(&self) -> usize {
        if self.windows.is_some() {
            2
        } else {
            1
        }
    }
}

/// A plain phase as `[from, to]` (as it is written), a periodic one as
/// `{from, to, every, length, offset}`.
impl Serialize for Phase {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.windows {
            None => {
                let mut t = s.serialize_tuple(2)?;
                t.serialize_element(&self.from)?;
                t.serialize_element(&self.to)?;
                t.end()
            }
            Some(w) => {
                let mut m = s.serialize_map(Some(5))?;
                m.serialize_entry("from", &self.from)?;
                m.serialize_entry("to", &self.to)?;
                m.serialize_entry("every", &w.every)?;
                m.serialize_entry("length", &w.length)?;
                if w.offset != SimTime::ZERO {
                    m.serialize_entry("offset", &w.offset)?;
                }
                m.end()
            }
        }
    }
}

/// Most windows the periodic phases of a run may have together: each
/// window's start and end are events that take the flows' counters.
pub const MAX_PHASE_WINDOWS: u64 = 100_000;

/// A time of a phase: a string, or a number of seconds.
fn phase_time(x: &Value, p: &str) -> SpecResult<SimTime> {
    match x {
        Value::Int(_) | Value::Float(_) => {
            let s = super::decode::as_f64(x, p)?;
            if !(0.0..=1e8).contains(&s) {
                return Err(SpecError::new(
                    p,
                    format!("{s} s is outside [0, 1e8] seconds"),
                ));
            }
            Ok(SimTime::from_nanos_f64(s * 1e9))
        }
        _ => as_time(x, p),
    }
}

/// `phases = [[100, 200], [300, "400s"]]`: pairs of times (numbers are
/// seconds), or periodic phases `{from, to, every, length, offset}`.
fn decode_phases(v: &Value, path: &str, duration: SimTime) -> SpecResult<Vec<Phase>> {
    let Value::Array(items) = v else {
        return Err(SpecError::new(
            path,
            format!(
                "expected a list of [start, end] pairs, e.g. [[100, 200], [300, 400]]; found {v}"
            ),
        ));
    };
    let time = phase_time;
    let mut out = Vec::with_capacity(items.len());
    let mut windows = 0u64;
    for (i, it) in items.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if let Value::Table(_) = it {
            let ph = decode_periodic(it.clone(), &p, duration)?;
            windows += ph.window_count();
            if windows > MAX_PHASE_WINDOWS {
                let w = ph.windows.map_or(SimTime::ZERO, |w| w.every);
                return Err(SpecError::new(
                    join(&p, "every"),
                    format!(
                        "{w} makes {} windows in [{}, {}] ({windows} with the phases before it); \
                         at most {MAX_PHASE_WINDOWS} windows are allowed in all: give a longer \
                         every or a shorter span",
                        ph.window_count(),
                        ph.from,
                        ph.to
                    ),
                ));
            }
            out.push(ph);
            continue;
        }
        let Value::Array(pair) = it else {
            return Err(SpecError::new(
                p,
                format!(
                    "expected [start, end] or a periodic phase {{from, to, every, length, \
                     offset}}, found {it}"
                ),
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
        out.push(Phase::span(a, b));
    }
    Ok(out)
}

/// `{from = "10s", to = "90s", every = "200ms", length = "100ms", offset =
/// "100ms"}`: the windows [from + offset + k every, + length), cut at `to`.
fn decode_periodic(v: Value, p: &str, duration: SimTime) -> SpecResult<Phase> {
    let mut t = Table::new(v, p)?;
    let mut req = |key: &'static str, what: &str| -> SpecResult<SimTime> {
        let kp = join(p, key);
        match t.take(key) {
            Some(x) => phase_time(&x, &kp),
            None => Err(SpecError::new(
                kp,
                format!(
                    "missing required key: {what}; a periodic phase is {{from, to, every, \
                     length}} with an optional offset"
                ),
            )),
        }
    };
    let from = req("from", "the start of the phase")?;
    let to = req("to", "the end of the phase")?;
    let every = req("every", "the time from one window's start to the next's")?;
    let length = req("length", "the length of each window")?;
    let offset = match t.take("offset") {
        Some(x) => phase_time(&x, &join(p, "offset"))?,
        None => SimTime::ZERO,
    };
    t.finish()?;
    if to <= from {
        return Err(SpecError::new(
            join(p, "to"),
            format!("{to} is not after from ({from})"),
        ));
    }
    if to > duration {
        return Err(SpecError::new(
            join(p, "to"),
            format!("{to} is after the end of the run (duration = {duration})"),
        ));
    }
    if every == SimTime::ZERO {
        return Err(SpecError::new(
            join(p, "every"),
            "0s is not allowed; give a positive time (from one window's start to the next's)",
        ));
    }
    if length == SimTime::ZERO || length >= every {
        return Err(SpecError::new(
            join(p, "length"),
            format!(
                "{length} is not allowed; 0 < length < every ({every}) (a window as long as \
                 the period is the plain phase [from, to])"
            ),
        ));
    }
    if offset >= every {
        return Err(SpecError::new(
            join(p, "offset"),
            format!("{offset} is not allowed; 0 <= offset < every ({every})"),
        ));
    }
    if from + offset >= to {
        return Err(SpecError::new(
            join(p, "offset"),
            format!(
                "{offset} puts the first window at {}, not before to ({to}): the phase has no \
                 window",
                from + offset
            ),
        ));
    }
    Ok(Phase {
        from,
        to,
        windows: Some(Windows {
            every,
            length,
            offset,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Value};

    fn phases(list: &str) -> SpecResult<Vec<Phase>> {
        let text = format!(
            "duration = \"20s\"\n[topology]\nbottleneck_rate = \"10Mbps\"\n[[traffic]]\n\
             kind = \"bulk\"\nflows = 1\n[metrics]\nphases = {list}\n"
        );
        let v: Value = toml::from_str(&text).expect("TOML");
        Scenario::from_value(v).map(|s| s.metrics.phases)
    }

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }

    #[test]
    fn periodic_windows_by_hand() {
        // Every 200 ms from 10 s, 100 ms long, 100 ms in: [10.1, 10.2),
        // [10.3, 10.4), the next would begin at 10.5 = to.
        let p = phases(r#"[{ from = "10s", to = "10.5s", every = "200ms", length = "100ms", offset = "100ms" }]"#)
            .unwrap()[0];
        assert_eq!(p.window(0), Some((ms(10_100), ms(10_200))));
        assert_eq!(p.window(1), Some((ms(10_300), ms(10_400))));
        assert_eq!(p.window(2), None);
        assert_eq!(p.window_count(), 2);
        assert_eq!(p.measured(), ms(200));
        assert!(p.contains(ms(10_100)) && p.contains(ms(10_399)));
        assert!(!p.contains(ms(10_200)) && !p.contains(ms(10_050)) && !p.contains(ms(10_400)));
        // The last window is cut at `to`: [10.3, 10.35).
        let cut = Phase {
            to: ms(10_350),
            ..p
        };
        assert_eq!(cut.window(1), Some((ms(10_300), ms(10_350))));
        assert_eq!(cut.measured(), ms(150));
        // A plain phase is one window, all of its span.
        let plain = Phase::span(ms(5000), ms(7000));
        assert_eq!(plain.window(0), Some((ms(5000), ms(7000))));
        assert_eq!((plain.window(1), plain.window_count()), (None, 1));
        assert_eq!(plain.measured(), ms(2000));
        assert!(plain.contains(ms(7000)));
    }

    #[test]
    fn plain_and_periodic_phases_are_written_as_they_are_read() {
        let list = r#"[[1, "2s"], { from = 10, to = "20s", every = "200ms", length = "100ms" }, { from = "10s", to = "20s", every = "200ms", length = "100ms", offset = "100ms" }]"#;
        let ps = phases(list).unwrap();
        let json = serde_json::to_string(&ps).unwrap();
        assert_eq!(
            json,
            r#"[["1s","2s"],{"from":"10s","to":"20s","every":"200ms","length":"100ms"},{"from":"10s","to":"20s","every":"200ms","length":"100ms","offset":"100ms"}]"#
        );
        let v: Value = serde_json::from_str(&json).unwrap();
        let again = decode_phases(&v, "metrics.phases", SimTime::from_secs(20)).unwrap();
        assert_eq!(again, ps);
    }

    #[test]
    fn bad_periodic_phases_name_the_field_and_the_rule() {
        let err = |list: &str| phases(list).expect_err("should be refused");
        let e = err(r#"[[1, 2], { from = "1s", to = "9s", every = "0s", length = "1ms" }]"#);
        assert_eq!(e.path, "metrics.phases[1].every");
        assert!(e.msg.contains("0s is not allowed"), "{}", e.msg);
        let e = err(r#"[{ from = "1s", to = "9s", every = "1s", length = "2s" }]"#);
        assert_eq!(e.path, "metrics.phases[0].length");
        assert!(e.msg.contains("0 < length < every (1s)"), "{}", e.msg);
        let e = err(r#"[{ from = "1s", to = "9s", every = "1s", length = "0s" }]"#);
        assert_eq!(e.path, "metrics.phases[0].length");
        let e = err(r#"[{ from = "1s", to = "9s", every = "1s", length = "1ms", offset = "1s" }]"#);
        assert_eq!(e.path, "metrics.phases[0].offset");
        assert!(e.msg.contains("0 <= offset < every (1s)"), "{}", e.msg);
        let e = err(
            r#"[{ from = "8.5s", to = "9s", every = "1s", length = "1ms", offset = "600ms" }]"#,
        );
        assert_eq!(e.path, "metrics.phases[0].offset");
        assert!(e.msg.contains("has no window"), "{}", e.msg);
        let e = err(r#"[{ from = "1s", to = "30s", every = "1s", length = "1ms" }]"#);
        assert_eq!(e.path, "metrics.phases[0].to");
        assert!(e.msg.contains("after the end of the run"), "{}", e.msg);
        let e = err(r#"[{ from = "1s", every = "1s", length = "1ms" }]"#);
        assert_eq!(e.path, "metrics.phases[0].to");
        assert!(e.msg.contains("missing required key"), "{}", e.msg);
        let e = err(r#"[{ from = "1s", to = "9s", every = "1s", length = "1ms", lenght = 1 }]"#);
        assert_eq!(e.path, "metrics.phases[0].lenght");
        let e = err(r#"[{ from = "1s", to = "9s", every = "-1s", length = "1ms" }]"#);
        assert_eq!(e.path, "metrics.phases[0].every");
        let e = err("[3]");
        assert_eq!(e.path, "metrics.phases[0]");
        assert!(e.msg.contains("a periodic phase"), "{}", e.msg);
        // 60 000 windows, then 80 000 more: past the 100 000 of a run.
        let e = err(
            r#"[{ from = "0s", to = "6s", every = "100us", length = "50us" }, { from = "0s", to = "8s", every = "100us", length = "50us" }]"#,
        );
        assert_eq!(e.path, "metrics.phases[1].every");
        assert!(
            e.msg.contains("80000 windows") && e.msg.contains("140000 with"),
            "{}",
            e.msg
        );
    }
}
