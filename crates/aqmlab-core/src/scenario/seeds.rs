//! `[seeds]`: one seed per purpose of the random streams.
//!
//! Every random stream of a run is derived from a seed and a stream
//! identifier ([`crate::rng`]). By default every stream uses the run's
//! `seed`. `[seeds]` replaces that seed for one family of streams, so that
//! one kind of draw can be varied while every other draw stays as it was
//! (the thesis `003_b277268f444f7691.txt` repeats its runs "seven times"
//! with new RTTs and nothing else changed: `[seeds] rtt = 1 .. 7`).
//!
//! A purpose's seed left out is the run's `seed`, so a scenario without
//! `[seeds]` (or with every purpose set to `seed`) gives the results it
//! always gave, bit for bit.

use super::decode::{as_u64, SpecResult, Table};
use super::value::Value;
use serde::Serialize;

/// A family of random streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Per-flow propagation delays: dumbbell access delays, parking-lot
    /// RTTs, custom `extra_delay`, web sessions' `rtt`, and delays a
    /// scheduled `link` action redraws.
    Rtt,
    /// Start times: each group's `start`, and the `spread` of scheduled
    /// `flows` and `web` actions.
    Start,
    /// The AQMs' own draws (RED's drop decisions, ...).
    Aqm,
    /// Random loss models of links.
    Loss,
    /// Applications: web and web-simple sizes and think times, UDP ON/OFF
    /// periods.
    App,
}

/// The keys of `[seeds]`, in the order of [`Purpose`].
pub const SEED_KEYS: &[&str] = &["rtt", "start", "aqm", "loss", "app"];

/// `[seeds]`: a seed per purpose; `None` is the run's `seed`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Seeds {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<u64>,
}

impl Seeds {
    pub(crate) fn decode(v: Option<Value>, path: &str) -> SpecResult<Seeds> {
        let Some(v) = v else {
            return Ok(Seeds::default());
        };
        let mut t = Table::new(v, path)?;
        let mut one = |key: &'static str| -> SpecResult<Option<u64>> {
            let p = t.field_path(key);
            t.take(key).map(|v| as_u64(&v, &p)).transpose()
        };
        let s = Seeds {
            rtt: one("rtt")?,
            start: one("start")?,
            aqm: one("aqm")?,
            loss: one("loss")?,
            app: one("app")?,
        };
        t.finish()?;
        Ok(s)
    }

    /// No purpose has its own seed.
    pub fn is_empty(&self) -> bool {
        *self == Seeds::default()
    }

    /// The seed of `purpose`'s streams in a run with seed `run_seed`.
    pub fn get(&self, purpose: Purpose, run_seed: u64) -> u64 {
        match purpose {
            Purpose::Rtt => self.rtt,
            Purpose::Start => self.start,
            Purpose::Aqm => self.aqm,
            Purpose::Loss => self.loss,
            Purpose::App => self.app,
        }
        .unwrap_or(run_seed)
    }
}

impl super::Scenario {
    /// The seed of `purpose`'s random streams (`[seeds]`, else `seed`).
    pub fn seed_for(&self, purpose: Purpose) -> u64 {
        self.seeds.get(purpose, self.seed)
    }
}
