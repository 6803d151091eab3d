//! `[[schedule]]`: changes at given times during a run.
//!
//! Every entry has a time `at` and an `action`:
//! - `link`: set the rate and/or propagation delay of a link (the thesis
//!   varies the bottleneck delay in section 5.5.1 and redraws the access
//!   delays from a new uniform range in section 6.4.1). Packets already
//!   on the wire keep the delay they were sent with; a packet being
//!   transmitted finishes at the old rate. After a shorter delay the next
//!   packets may overtake those on the wire (`reorder`, the default, as
//!   ns-2's link) or wait behind them (`reorder = false`).
//! - `flows`: start or stop flows of a bulk or UDP traffic group (section
//!   5.5.3: 30 -> 50 -> 100 -> ... FTP flows).
//! - `aqm`: change parameters of a link's AQM (the scheme keeps its state).
//! - `udp`: change a UDP group's rate or density (section 5.5.5 steps the
//!   density 0.1 -> 0.3 -> ... -> 0.9 and back).
//! - `web`: add sessions to a web or web-simple group, or remove some
//!   (a load step; section 5.5.4 adds one web-simple session every 100 s).
//!
//! Any entry may repeat: with `every` it is applied at `at`, `at + every`,
//! `at + 2 every`, ... while before `until` (default: the end of the run)
//! and before `duration`. Each repetition is an ordinary entry of the run
//! ([`Scenario::schedule_in_order`]); RFC 7928 section 8.2.6's second
//! experiment (the capacity changes every 100 ms) is two repeating `link`
//! entries.

use super::decode::{as_f64, as_time, join, SpecError, SpecResult, Table};
use super::spec::{Scenario, TimeDist};
use super::topo::{DuplexView, Topology};
use super::value::Value;
use crate::units::{BitRate, SimTime};
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// Which links a `link` or `aqm` action applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkSel {
    /// Every access link (both directions, every flow) of a dumbbell or a
    /// parking lot.
    Access,
    /// The access links of each flow's sender (`"access-source"`).
    AccessSource,
    /// The access links of each flow's receiver (`"access-sink"`).
    AccessSink,
    /// A named duplex link of the topology ([`super::Topology::link_names`]:
    /// the dumbbell's `"bottleneck"`, a parking lot's `"link0"`.., a custom
    /// link's name), both directions or one (`-fwd`, `-rev`).
    Link { name: String, dir: LinkDir },
}

/// The directions of a duplex link a selection covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkDir {
    Both,
    /// The forward direction only (dumbbell R1 -> R2; custom `from` -> `to`).
    Fwd,
    /// The reverse direction only.
    Rev,
}

impl LinkDir {
    pub fn fwd(self) -> bool {
        self != LinkDir::Rev
    }
    pub fn rev(self) -> bool {
        self != LinkDir::Fwd
    }
}

impl Serialize for LinkSel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            LinkSel::Access => s.serialize_str("access"),
            LinkSel::AccessSource => s.serialize_str("access-source"),
            LinkSel::AccessSink => s.serialize_str("access-sink"),
            LinkSel::Link { name, dir } => s.collect_str(&format_args!(
                "{name}{}",
                match dir {
                    LinkDir::Both => "",
                    LinkDir::Fwd => "-fwd",
                    LinkDir::Rev => "-rev",
                }
            )),
        }
    }
}

impl LinkSel {
    /// For an access selection, whether it covers each flow's (sender,
    /// receiver) side; `None` for a named link.
    pub fn access_sides(&self) -> Option<(bool, bool)> {
        match self {
            LinkSel::Access => Some((true, true)),
            LinkSel::AccessSource => Some((true, false)),
            LinkSel::AccessSink => Some((false, true)),
            LinkSel::Link { .. } => None,
        }
    }

    /// The dumbbell's bottleneck, both directions.
    pub fn bottleneck() -> LinkSel {
        LinkSel::Link {
            name: "bottleneck".to_string(),
            dir: LinkDir::Both,
        }
    }

    /// Read `key` of an entry: a link name of `topo`, with `-fwd` or `-rev`
    /// for one direction, or `"access"` where allowed. With no value, the
    /// topology's only duplex link if `default_single`.
    fn decode(
        t: &mut Table,
        key: &'static str,
        topo: &Topology,
        access: bool,
        default_single: bool,
    ) -> SpecResult<LinkSel> {
        let p = t.field_path(key);
        let names = topo.link_names();
        let mut allowed: Vec<String> = Vec::with_capacity(3 * names.len() + 1);
        for n in &names {
            allowed.push(n.clone());
            allowed.push(format!("{n}-fwd"));
            allowed.push(format!("{n}-rev"));
        }
        let access = access && topo.has_access();
        if access {
            allowed.push("access".to_string());
            allowed.push("access-source".to_string());
            allowed.push("access-sink".to_string());
        }
        let listed = || {
            allowed
                .iter()
                .map(|a| format!("\"{a}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let v = match t.take(key) {
            Some(v) => v,
            None if default_single && names.len() == 1 => {
                return Ok(LinkSel::Link {
                    name: names[0].clone(),
                    dir: LinkDir::Both,
                })
            }
            None => {
                return Err(SpecError::new(
                    p,
                    format!("missing required key; one of: {}", listed()),
                ))
            }
        };
        let Value::Str(s) = &v else {
            return Err(SpecError::new(
                p,
                format!("expected one of {}, found {} {v}", listed(), v.type_name()),
            ));
        };
        if access {
            match s.as_str() {
                "access" => return Ok(LinkSel::Access),
                "access-source" => return Ok(LinkSel::AccessSource),
                "access-sink" => return Ok(LinkSel::AccessSink),
                _ => {}
            }
        }
        let (base, dir) = if let Some(b) = s.strip_suffix("-fwd") {
            (b, LinkDir::Fwd)
        } else if let Some(b) = s.strip_suffix("-rev") {
            (b, LinkDir::Rev)
        } else {
            (s.as_str(), LinkDir::Both)
        };
        if names.iter().any(|n| n == base) {
            Ok(LinkSel::Link {
                name: base.to_string(),
                dir,
            })
        } else {
            Err(SpecError::new(
                p,
                format!("unknown value {v}; allowed: {}", listed()),
            ))
        }
    }
}

/// What happens at a scheduled time.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    Link {
        link: LinkSel,
        #[serde(skip_serializing_if = "Option::is_none")]
        rate: Option<BitRate>,
        /// A fixed delay, or (for access links) a distribution drawn per flow.
        #[serde(skip_serializing_if = "Option::is_none")]
        delay: Option<TimeDist>,
        /// Whether a packet sent after the change may reach the far end
        /// before one sent before it (a shorter delay: ns-2's link, a route
        /// change); `false` keeps the wire's order, as the testbed router's
        /// wire does: no packet arrives before the one sent ahead of it.
        #[serde(skip_serializing_if = "super::traffic::is_true")]
        reorder: bool,
    },
    Flows {
        /// Index of the `[[traffic]]` group.
        group: u32,
        /// Flows to start (at `at` + uniform in [0, `spread`]).
        start: u32,
        /// Active flows to stop (the most recently started first).
        stop: u32,
        spread: SimTime,
    },
    Aqm {
        link: LinkSel,
        set: BTreeMap<String, f64>,
    },
    /// Change a UDP group's rate (`rate` per flow or `density`).
    Udp {
        group: u32,
        #[serde(flatten)]
        rate: super::traffic::UdpRate,
    },
    /// Add sessions to a `web` or `web-simple` group, each beginning at
    /// `at` + uniform in [0, `spread`] as the group's initial sessions
    /// begin at their start, and/or remove the most recently started ones
    /// (each ends when its current page or transfer is done).
    Web {
        group: u32,
        add_sessions: u32,
        #[serde(skip_serializing_if = "is_zero")]
        remove_sessions: u32,
        #[serde(skip_serializing_if = "is_zero_time")]
        spread: SimTime,
    },
}

/// Most schedule entries a run may have, every repetition counted: an
/// entry applied every nanosecond would otherwise fill the memory.
pub const MAX_SCHEDULE_ENTRIES: u64 = 1_000_000;

/// One `[[schedule]]` entry.
#[derive(Clone, Debug, Serialize)]
pub struct ScheduleEntry {
    pub at: SimTime,
    /// Repeat the entry this often (> 0) from `at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub every: Option<SimTime>,
    /// Repetitions stop before this time (default: the end of the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<SimTime>,
    #[serde(flatten)]
    pub action: Action,
}

/// One application of a `[[schedule]]` entry: entry `entry`'s repetition
/// `rep` (0 for `at` itself), due at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub entry: u32,
    pub rep: u32,
    pub at: SimTime,
}

impl ScheduleEntry {
    /// Decode one entry; cross-checks against the rest of the scenario are
    /// done by [`crate::scenario::Scenario::from_value`].
    pub fn decode(mut t: Table, duration: SimTime, topo: &Topology) -> SpecResult<ScheduleEntry> {
        let at = t.req_time("at")?;
        if at >= duration {
            return Err(SpecError::new(
                t.field_path("at"),
                format!("{at} is not before the end of the run (duration = {duration})"),
            ));
        }
        let every = t.opt_time("every")?;
        let until = t.opt_time("until")?;
        if every == Some(SimTime::ZERO) {
            return Err(SpecError::new(
                t.field_path("every"),
                "0s is not allowed: the time between repetitions must be > 0",
            ));
        }
        if let Some(u) = until {
            if every.is_none() {
                return Err(SpecError::new(
                    t.field_path("until"),
                    format!("{u} ends the repetitions of `every`, which this entry does not have; give `every` (a time > 0) or leave `until` out"),
                ));
            }
            if u <= at {
                return Err(SpecError::new(
                    t.field_path("until"),
                    format!(
                        "{u} is not after `at` ({at}); repetitions run from `at` to before `until`"
                    ),
                ));
            }
        }
        let action = match t.choice("action", &["link", "flows", "aqm", "udp", "web"], None)? {
            "web" => {
                let group = t.u32("group", 0)?;
                let add_sessions = t.u32("add_sessions", 0)?;
                let remove_sessions = t.u32("remove_sessions", 0)?;
                let spread = t.time("spread", SimTime::ZERO)?;
                if add_sessions == 0 && remove_sessions == 0 {
                    return Err(SpecError::new(
                        t.field_path("add_sessions"),
                        "missing or 0: a web action adds `add_sessions` (>= 1) sessions, removes `remove_sessions` (>= 1), or both",
                    ));
                }
                if add_sessions == 0 && spread > SimTime::ZERO {
                    return Err(SpecError::new(
                        t.field_path("spread"),
                        "spreads the start of added sessions; this action adds none (add_sessions = 0)",
                    ));
                }
                Action::Web {
                    group,
                    add_sessions,
                    remove_sessions,
                    spread,
                }
            }
            "udp" => {
                let group = t.u32("group", 0)?;
                let rate = match (t.take("rate"), t.opt_f64("density")?) {
                    (Some(v), None) => super::traffic::UdpRate::Rate(super::decode::as_rate(
                        &v,
                        &t.field_path("rate"),
                    )?),
                    (None, Some(d)) => {
                        super::decode::check_range(&t.field_path("density"), d, 0.0, false, 10.0)?;
                        super::traffic::UdpRate::Density(d)
                    }
                    _ => {
                        return Err(SpecError::new(
                            t.field_path("density"),
                            "give exactly one of `density` (share of the bottleneck) or `rate` (per flow)",
                        ))
                    }
                };
                Action::Udp { group, rate }
            }
            "link" => {
                let link = LinkSel::decode(&mut t, "link", topo, true, false)?;
                let rate = match t.take("rate") {
                    Some(v) => Some(super::decode::as_rate(&v, &t.field_path("rate"))?),
                    None => None,
                };
                let delay = match t.take("delay") {
                    Some(v) => Some(TimeDist::decode(v, &t.field_path("delay"))?),
                    None => None,
                };
                if rate.is_none() && delay.is_none() {
                    return Err(SpecError::new(
                        t.path(),
                        "a link action needs `rate`, `delay` or both",
                    ));
                }
                if link.access_sides().is_none() && matches!(delay, Some(TimeDist::Uniform(..))) {
                    return Err(SpecError::new(
                        t.field_path("delay"),
                        "a delay drawn per flow applies to `link = \"access\"`, `\"access-source\"` or `\"access-sink\"` only; give a fixed time",
                    ));
                }
                let reorder = match t.opt_bool("reorder")? {
                    Some(_) if delay.is_none() => return Err(SpecError::new(
                        t.field_path("reorder"),
                        "`reorder` says how a delay change orders the wire; give `delay` with it",
                    )),
                    r => r.unwrap_or(true),
                };
                Action::Link {
                    link,
                    rate,
                    delay,
                    reorder,
                }
            }
            "flows" => {
                let group = t.u32("group", 0)?;
                let start = t.u32("start", 0)?;
                let stop = t.u32("stop", 0)?;
                let spread = t.time("spread", SimTime::from_secs(1))?;
                if start == 0 && stop == 0 {
                    return Err(SpecError::new(
                        t.path(),
                        "a flows action needs `start` or `stop` (a number of flows >= 1)",
                    ));
                }
                Action::Flows {
                    group,
                    start,
                    stop,
                    spread,
                }
            }
            _ => {
                let link = LinkSel::decode(&mut t, "link", topo, false, true)?;
                let path = t.field_path("set");
                let set = match t.take("set") {
                    Some(Value::Table(kv)) if !kv.is_empty() => kv
                        .into_iter()
                        .map(|(k, v)| {
                            // A time string ("10ms") is taken in seconds,
                            // the unit of the schemes' time-valued keys;
                            // other keys take numbers only.
                            let x = match v {
                                Value::Str(_) if crate::aqm::TIME_KEYS.contains(&k.as_str()) => {
                                    as_time(&v, &join(&path, &k))?.as_secs_f64()
                                }
                                Value::Str(_) => {
                                    return Err(SpecError::new(
                                        join(&path, &k),
                                        format!(
                                            "expected a number, found the string {v}; only \
                                             the time-valued keys ({}) take a time string",
                                            crate::aqm::TIME_KEYS.join(", ")
                                        ),
                                    ))
                                }
                                _ => as_f64(&v, &join(&path, &k))?,
                            };
                            Ok((k, x))
                        })
                        .collect::<SpecResult<BTreeMap<String, f64>>>()?,
                    Some(v) => {
                        return Err(SpecError::new(
                            path,
                            format!("expected a table of parameter = number, found {v}"),
                        ))
                    }
                    None => {
                        return Err(SpecError::new(
                            path,
                            "missing: the parameters to set, e.g. set = { max_p = 0.05 }",
                        ))
                    }
                };
                Action::Aqm { link, set }
            }
        };
        t.finish()?;
        Ok(ScheduleEntry {
            at,
            every,
            until,
            action,
        })
    }

    /// How many times the entry is applied in a run of `duration`: once
    /// without `every`; with it, at `at + k every` for every k >= 0 before
    /// `until` and before `duration`.
    pub fn repetitions(&self, duration: SimTime) -> u64 {
        match self.every {
            None => 1,
            Some(every) => {
                let end = self.until.map_or(duration, |u| u.min(duration));
                // `at` is before `duration` and before `until` (decode).
                (end.0 - self.at.0).div_ceil(every.0.max(1))
            }
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_time(t: &SimTime) -> bool {
    *t == SimTime::ZERO
}

impl Scenario {
    /// Every application of the schedule's entries in time order, each
    /// repetition an occurrence of its own; at equal times in file order.
    pub fn schedule_in_order(&self) -> Vec<Occurrence> {
        let n: u64 = self
            .schedule
            .iter()
            .map(|e| e.repetitions(self.duration))
            .sum();
        let mut v: Vec<Occurrence> = Vec::with_capacity(n.min(MAX_SCHEDULE_ENTRIES) as usize);
        for (i, e) in self.schedule.iter().enumerate() {
            let every = e.every.map_or(0, |t| t.0);
            for k in 0..e.repetitions(self.duration) {
                v.push(Occurrence {
                    entry: i as u32,
                    rep: k as u32,
                    at: SimTime(e.at.0 + k * every),
                });
            }
        }
        v.sort_by_key(|o| (o.at, o.entry));
        v
    }

    /// The repetitions of every entry together, at most
    /// [`MAX_SCHEDULE_ENTRIES`]; the error names the entry that passes it.
    pub(super) fn check_schedule_size(&self) -> SpecResult<()> {
        let mut total = 0u64;
        for (i, e) in self.schedule.iter().enumerate() {
            let n = e.repetitions(self.duration);
            total += n;
            if total > MAX_SCHEDULE_ENTRIES {
                let (Some(every), true) = (e.every, n > 1) else {
                    return Err(SpecError::new(
                        "schedule",
                        format!("{total} entries or more, repetitions included; at most {MAX_SCHEDULE_ENTRIES} are allowed"),
                    ));
                };
                let end = e.until.map_or(self.duration, |u| u.min(self.duration));
                let with_earlier = if total > n {
                    format!(", {total} schedule entries in all with the earlier ones")
                } else {
                    String::new()
                };
                return Err(SpecError::new(
                    format!("schedule[{i}].every"),
                    format!(
                        "{every} repeats the entry {n} times from {} to {end}{with_earlier}; at most {MAX_SCHEDULE_ENTRIES} are allowed, repetitions included: give a longer `every` or an earlier `until`",
                        e.at
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The duplex links `sel` names, each with whether its forward and its
    /// reverse direction are selected (empty for `access`).
    pub fn select_duplex(&self, sel: &LinkSel) -> Vec<(DuplexView<'_>, bool, bool)> {
        match sel {
            LinkSel::Access | LinkSel::AccessSource | LinkSel::AccessSink => Vec::new(),
            LinkSel::Link { name, dir } => self
                .duplex_links()
                .into_iter()
                .filter(|d| &d.name == name)
                .map(|d| (d, dir.fwd(), dir.rev()))
                .collect(),
        }
    }
}
