//! Decoding helpers: typed reads from a [`Value`] table that remember the
//! field path, the keys that were asked for, and report unknown keys.

use super::value::Value;
use crate::units::{parse_bytes, BitRate, SimTime};
use std::fmt;

/// A scenario error: the field path (`traffic[1].rate`), and what is wrong
/// with its value and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct SpecError {
    pub path: String,
    pub msg: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.msg)
        } else {
            write!(f, "{}: {}", self.path, self.msg)
        }
    }
}

impl SpecError {
    pub fn new(path: impl Into<String>, msg: impl Into<String>) -> SpecError {
        SpecError {
            path: path.into(),
            msg: msg.into(),
        }
    }
}

pub type SpecResult<T> = Result<T, SpecError>;

/// Join a table path and a key.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A key as TOML writes it: bare if it can be (`max_p`), else quoted
/// (`"" `, `" window"`), so that an empty or odd key still shows in a path.
pub fn key_text(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// A table being decoded: every key must be asked for, or `finish` reports it.
pub struct Table {
    path: String,
    entries: Vec<(String, Option<Value>)>,
    allowed: Vec<&'static str>,
}

impl Table {
    pub fn new(v: Value, path: &str) -> SpecResult<Table> {
        match v {
            Value::Table(t) => Ok(Table {
                path: path.to_string(),
                entries: t.into_iter().map(|(k, v)| (k, Some(v))).collect(),
                allowed: Vec::new(),
            }),
            other => Err(SpecError::new(
                path,
                format!("expected a table, found {} {other}", other.type_name()),
            )),
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn field_path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// Whether `key` is present (does not consume it).
    pub fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, v)| k == key && v.is_some())
    }

    /// Take the raw value of `key`, marking the key as known.
    pub fn take(&mut self, key: &'static str) -> Option<Value> {
        if !self.allowed.contains(&key) {
            self.allowed.push(key);
        }
        self.entries
            .iter_mut()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.take())
    }

    /// Declare keys as known without reading them (e.g. the `kind` tag).
    pub fn allow(&mut self, key: &'static str) {
        let _ = self.take(key);
    }

    /// Report the first key that no reader asked for.
    pub fn finish(self) -> SpecResult<()> {
        for (k, v) in &self.entries {
            if v.is_some() && !self.allowed.contains(&k.as_str()) {
                let mut allowed = self.allowed.clone();
                allowed.sort_unstable();
                return Err(SpecError::new(
                    join(&self.path, &key_text(k)),
                    format!("unknown key; allowed keys here are: {}", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn required(&mut self, key: &'static str) -> SpecResult<Value> {
        let p = self.field_path(key);
        self.take(key)
            .ok_or_else(|| SpecError::new(p, "missing required key"))
    }

    pub fn req_time(&mut self, key: &'static str) -> SpecResult<SimTime> {
        let v = self.required(key)?;
        as_time(&v, &self.field_path(key))
    }
    pub fn time(&mut self, key: &'static str, default: SimTime) -> SpecResult<SimTime> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => as_time(&v, &self.field_path(key)),
        }
    }
    pub fn opt_time(&mut self, key: &'static str) -> SpecResult<Option<SimTime>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => as_time(&v, &self.field_path(key)).map(Some),
        }
    }
    pub fn req_rate(&mut self, key: &'static str) -> SpecResult<BitRate> {
        let v = self.required(key)?;
        as_rate(&v, &self.field_path(key))
    }
    pub fn rate(&mut self, key: &'static str, default: BitRate) -> SpecResult<BitRate> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => as_rate(&v, &self.field_path(key)),
        }
    }
    pub fn f64(&mut self, key: &'static str, default: f64) -> SpecResult<f64> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => as_f64(&v, &self.field_path(key)),
        }
    }
    pub fn opt_f64(&mut self, key: &'static str) -> SpecResult<Option<f64>> {
        match self.take(key) {
            None => Ok(None),
            Some(v) => as_f64(&v, &self.field_path(key)).map(Some),
        }
    }
    pub fn u64(&mut self, key: &'static str, default: u64) -> SpecResult<u64> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => as_u64(&v, &self.field_path(key)),
        }
    }
    pub fn u32(&mut self, key: &'static str, default: u32) -> SpecResult<u32> {
        let p = self.field_path(key);
        let v = self.u64(key, default as u64)?;
        u32::try_from(v)
            .map_err(|_| SpecError::new(p, format!("{v} is too large (at most {})", u32::MAX)))
    }
    /// A boolean that may be absent (a traffic group's override).
    pub fn opt_bool(&mut self, key: &'static str) -> SpecResult<Option<bool>> {
        if self.has(key) {
            self.bool(key, false).map(Some)
        } else {
            self.allow(key);
            Ok(None)
        }
    }

    pub fn bool(&mut self, key: &'static str, default: bool) -> SpecResult<bool> {
        match self.take(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(v) => Err(SpecError::new(
                self.field_path(key),
                format!("expected true or false, found {} {v}", v.type_name()),
            )),
        }
    }
    /// A string that must be `names[0]` or `names[1]`: whether it is the
    /// second (`default_second` when the key is absent). For a switch that
    /// names its two settings (`cubic = "rfc9438"` or `"linux"`).
    pub fn either(
        &mut self,
        key: &'static str,
        names: [&'static str; 2],
        default_second: bool,
    ) -> SpecResult<bool> {
        let d = names[usize::from(default_second)];
        Ok(self.choice(key, &names, Some(d))? == names[1])
    }

    /// A string that must be one of `choices`.
    pub fn choice(
        &mut self,
        key: &'static str,
        choices: &[&'static str],
        default: Option<&'static str>,
    ) -> SpecResult<&'static str> {
        let p = self.field_path(key);
        let v = match self.take(key) {
            None => match default {
                Some(d) => return Ok(d),
                None => {
                    return Err(SpecError::new(
                        p,
                        format!("missing required key; one of: {}", quote_list(choices)),
                    ))
                }
            },
            Some(v) => v,
        };
        match &v {
            Value::Str(s) => choices
                .iter()
                .find(|c| **c == s.as_str())
                .copied()
                .ok_or_else(|| {
                    SpecError::new(
                        p,
                        format!("unknown value {v}; allowed: {}", quote_list(choices)),
                    )
                }),
            _ => Err(SpecError::new(
                p,
                format!(
                    "expected one of {}, found {} {v}",
                    quote_list(choices),
                    v.type_name()
                ),
            )),
        }
    }
    /// A nested table, if present.
    pub fn opt_table(&mut self, key: &'static str) -> SpecResult<Option<Table>> {
        let p = self.field_path(key);
        match self.take(key) {
            None => Ok(None),
            Some(v) => Table::new(v, &p).map(Some),
        }
    }
    /// An array of tables (`[[traffic]]`), each with its indexed path.
    pub fn table_array(&mut self, key: &'static str) -> SpecResult<Vec<Table>> {
        let p = self.field_path(key);
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| Table::new(v, &format!("{p}[{i}]")))
                .collect(),
            Some(v) => Err(SpecError::new(
                p,
                format!(
                    "expected an array of tables ([[{key}]]), found {} {v}",
                    v.type_name()
                ),
            )),
        }
    }
}

pub fn quote_list(choices: &[&str]) -> String {
    choices
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn as_time(v: &Value, path: &str) -> SpecResult<SimTime> {
    match v {
        Value::Str(s) => {
            SimTime::parse(s).map_err(|m| SpecError::new(path, format!("invalid value {v}: {m}")))
        }
        _ => Err(SpecError::new(
            path,
            format!(
                "expected a time string such as \"15ms\" (units ns, us, ms, s), found {} {v}",
                v.type_name()
            ),
        )),
    }
}

pub fn as_rate(v: &Value, path: &str) -> SpecResult<BitRate> {
    match v {
        Value::Str(s) => BitRate::parse(s).map_err(|m| SpecError::new(path, format!("invalid value {v}: {m}"))),
        _ => Err(SpecError::new(
            path,
            format!(
                "expected a rate string such as \"10Mbps\" (units bps, Kbps, Mbps, Gbps), found {} {v}",
                v.type_name()
            ),
        )),
    }
}

pub fn as_bytes(v: &Value, path: &str) -> SpecResult<u64> {
    match v {
        Value::Str(s) => {
            parse_bytes(s).map_err(|m| SpecError::new(path, format!("invalid value {v}: {m}")))
        }
        _ => Err(SpecError::new(
            path,
            format!(
                "expected a size string such as \"250KB\", found {} {v}",
                v.type_name()
            ),
        )),
    }
}

pub fn as_f64(v: &Value, path: &str) -> SpecResult<f64> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::Float(x) if x.is_finite() => Ok(*x),
        Value::Float(x) => Err(SpecError::new(path, format!("{x} is not a finite number"))),
        _ => Err(SpecError::new(
            path,
            format!("expected a number, found {} {v}", v.type_name()),
        )),
    }
}

pub fn as_u64(v: &Value, path: &str) -> SpecResult<u64> {
    match v {
        Value::Int(i) if *i >= 0 => Ok(*i as u64),
        Value::Int(i) => Err(SpecError::new(
            path,
            format!("{i} is negative; expected a whole number >= 0"),
        )),
        Value::Float(x) if x.fract() == 0.0 && *x >= 0.0 && *x < 9e15 => Ok(*x as u64),
        Value::Float(x) if x.fract() == 0.0 && *x >= 9e15 => Err(SpecError::new(
            path,
            format!("{x} is too large; expected a whole number in [0, 9e15]"),
        )),
        _ => Err(SpecError::new(
            path,
            format!("expected a whole number >= 0, found {} {v}", v.type_name()),
        )),
    }
}

/// Check `lo <= x <= hi` (bounds as given; `open_lo` excludes `lo`).
pub fn check_range(path: &str, x: f64, lo: f64, open_lo: bool, hi: f64) -> SpecResult<()> {
    let ok_lo = if open_lo { x > lo } else { x >= lo };
    if ok_lo && x <= hi {
        Ok(())
    } else {
        let lb = if open_lo { "(" } else { "[" };
        Err(SpecError::new(
            path,
            format!(
                "{} is outside the allowed range {lb}{lo}, {hi}]",
                Value::Float(x)
            ),
        ))
    }
}
