//! `[topology]`: the dumbbell, the parking lot and custom topologies, the
//! random loss models of links, and the `path` of a traffic group.
//!
//! - The dumbbell: N host pairs around one bottleneck (R1 -> R2).
//! - The parking lot of `002_80945567bf68047d.txt` section 4.2 (figure 3):
//!   K bottleneck links in a row, R0 -> R1 -> ... -> RK; long flows cross
//!   every link, short flows one link each.
//! - Custom: named nodes, duplex links between them, and flows given by
//!   their paths.
//!
//! Loss models (`loss = { kind = ... }`) can be put on any link: Bernoulli,
//! or the Markov burst model of `002_80945567bf68047d.txt` section 5.2.

use super::decode::{as_f64, as_time, check_range, quote_list, SpecError, SpecResult, Table};
use super::spec::{Buffer, Scenario, TimeDist};
use super::traffic::TrafficSpec;
use super::value::Value;
use crate::aqm::AqmSpec;
use crate::units::{BitRate, SimTime};
use serde::{Serialize, Serializer};
use std::collections::HashMap;

/// Most states a Markov loss model may have.
pub const MAX_LOSS_STATES: usize = 64;
/// Most bottleneck links of a parking lot.
pub const MAX_PARKING_LINKS: u64 = 1000;
/// Most nodes of a custom topology.
pub const MAX_NODES: usize = 10_000;
/// Longest round-trip propagation delay of a custom path (that of the
/// longest run).
pub const MAX_PATH_RTT: SimTime = SimTime::from_secs(100_000_000);
/// Tolerance of "each row of the transition matrix sums to 1".
const ROW_SUM_TOL: f64 = 1e-6;

/// A random loss model on a link (applied after the queue, to each packet
/// as it starts transmission).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LossSpec {
    /// Each packet is lost independently with probability `p`
    /// (`002_80945567bf68047d.txt` section 5.1).
    Bernoulli { p: f64 },
    /// The burst error model of `002_80945567bf68047d.txt` section 5.2: the
    /// link is in one of n states; it stays in state i for `hold[i]` (a
    /// fixed duration), then moves to state j with probability
    /// `transitions[i][j]` (j = i allowed: another holding period in the
    /// same state). A packet starting transmission in state i is lost with
    /// probability `p[i]`. The link starts in state 0 at time 0.
    Markov {
        /// Loss probability in each state.
        p: Vec<f64>,
        /// How long the link stays in each state once entered.
        hold: Vec<SimTime>,
        /// Row-stochastic transition matrix, `transitions[from][to]`.
        transitions: Vec<Vec<f64>>,
    },
}

impl LossSpec {
    pub fn decode(v: Value, path: &str) -> SpecResult<LossSpec> {
        let mut t = Table::new(v, path)?;
        let spec = match t.choice("kind", &["bernoulli", "markov"], None)? {
            "bernoulli" => {
                let p = t.f64("p", 0.0)?;
                check_range(&t.field_path("p"), p, 0.0, false, 1.0)?;
                LossSpec::Bernoulli { p }
            }
            _ => decode_markov(&mut t)?,
        };
        t.finish()?;
        Ok(spec)
    }

    /// Long-run fraction of packets lost when packets are sent evenly in
    /// time: Bernoulli `p`; Markov: sum_i p_i pi_i h_i / sum_i pi_i h_i,
    /// pi the stationary distribution of the transition matrix.
    pub fn stationary_loss(&self) -> f64 {
        match self {
            LossSpec::Bernoulli { p } => *p,
            LossSpec::Markov {
                p,
                hold,
                transitions,
            } => {
                let pi = stationary(transitions);
                let w: Vec<f64> = pi
                    .iter()
                    .zip(hold)
                    .map(|(x, h)| x * h.as_secs_f64())
                    .collect();
                let total: f64 = w.iter().sum();
                w.iter().zip(p).map(|(w, p)| w * p).sum::<f64>() / total
            }
        }
    }
}

/// Stationary distribution of a row-stochastic matrix (averaged power
/// iteration, which also converges for periodic chains).
fn stationary(m: &[Vec<f64>]) -> Vec<f64> {
    let n = m.len();
    let mut x = vec![1.0 / n as f64; n];
    for _ in 0..10_000 {
        let mut y = vec![0.0; n];
        for (i, row) in m.iter().enumerate() {
            for (j, q) in row.iter().enumerate() {
                y[j] += x[i] * q;
            }
        }
        let diff: f64 = x.iter().zip(&y).map(|(a, b)| (a - b).abs()).sum();
        x = x.iter().zip(&y).map(|(a, b)| 0.5 * (a + b)).collect();
        if diff < 1e-15 {
            break;
        }
    }
    let s: f64 = x.iter().sum();
    x.iter().map(|v| v / s).collect()
}

fn decode_markov(t: &mut Table) -> SpecResult<LossSpec> {
    let pp = t.field_path("p");
    let p_val = t.take("p").ok_or_else(|| {
        SpecError::new(
            &pp,
            "missing: the loss probability of each state, e.g. p = [0, 0.2, 0.1]",
        )
    })?;
    let p = number_list(&p_val, &pp, "loss probabilities, e.g. [0, 0.2, 0.1]")?;
    let n = p.len();
    if n == 0 || n > MAX_LOSS_STATES {
        return Err(SpecError::new(
            &pp,
            format!("{n} states; a Markov loss model has 1 to {MAX_LOSS_STATES} states"),
        ));
    }
    for (i, x) in p.iter().enumerate() {
        check_range(&format!("{pp}[{i}]"), *x, 0.0, false, 1.0)?;
    }
    let hp = t.field_path("hold");
    let hold = match t.take("hold") {
        Some(Value::Array(items)) => {
            if items.len() != n {
                return Err(SpecError::new(
                    &hp,
                    format!("{} holding times for {n} states (p has {n} entries); give one per state", items.len()),
                ));
            }
            let mut out = Vec::with_capacity(n);
            for (i, it) in items.iter().enumerate() {
                let ip = format!("{hp}[{i}]");
                let h = as_time(it, &ip)?;
                if h == SimTime::ZERO {
                    return Err(SpecError::new(ip, "0s is not allowed: a state must last a positive time"));
                }
                out.push(h);
            }
            out
        }
        Some(v) => {
            return Err(SpecError::new(
                hp,
                format!("expected a list of times, one per state, e.g. [\"50ms\", \"25ms\", \"3.75ms\"]; found {v}"),
            ))
        }
        None => {
            return Err(SpecError::new(
                hp,
                "missing: how long the link stays in each state, e.g. hold = [\"50ms\", \"25ms\", \"3.75ms\"]",
            ))
        }
    };
    let tp = t.field_path("transitions");
    let rows = match t.take("transitions") {
        Some(Value::Array(rows)) => rows,
        Some(v) => {
            return Err(SpecError::new(
                tp,
                format!(
                "expected a {n} x {n} matrix (a list of {n} rows of {n} probabilities); found {v}"
            ),
            ))
        }
        None => {
            return Err(SpecError::new(
                tp,
                format!("missing: the {n} x {n} transition matrix, transitions[from][to]"),
            ))
        }
    };
    if rows.len() != n {
        return Err(SpecError::new(
            &tp,
            format!(
                "{} rows for {n} states; the matrix must be {n} x {n}",
                rows.len()
            ),
        ));
    }
    let mut transitions = Vec::with_capacity(n);
    for (i, r) in rows.iter().enumerate() {
        let rp = format!("{tp}[{i}]");
        let row = number_list(r, &rp, "a row of probabilities")?;
        if row.len() != n {
            return Err(SpecError::new(
                &rp,
                format!(
                    "{} entries; each row has one probability per state ({n})",
                    row.len()
                ),
            ));
        }
        for (j, q) in row.iter().enumerate() {
            check_range(&format!("{rp}[{j}]"), *q, 0.0, false, 1.0)?;
        }
        let sum: f64 = row.iter().sum();
        if (sum - 1.0).abs() > ROW_SUM_TOL {
            return Err(SpecError::new(
                rp,
                format!("the row sums to {sum}; the probabilities of leaving a state must sum to 1 (within {ROW_SUM_TOL})"),
            ));
        }
        transitions.push(row);
    }
    Ok(LossSpec::Markov {
        p,
        hold,
        transitions,
    })
}

fn number_list(v: &Value, path: &str, what: &str) -> SpecResult<Vec<f64>> {
    match v {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| as_f64(x, &format!("{path}[{i}]")))
            .collect(),
        _ => Err(SpecError::new(
            path,
            format!(
                "expected a list of numbers ({what}), found {} {v}",
                v.type_name()
            ),
        )),
    }
}

fn opt_loss(t: &mut Table, key: &'static str) -> SpecResult<Option<LossSpec>> {
    match t.take(key) {
        Some(v) => LossSpec::decode(v, &t.field_path(key)).map(Some),
        None => Ok(None),
    }
}

fn opt_aqm(t: &mut Table, key: &'static str, packet_size: u32) -> SpecResult<Option<AqmSpec>> {
    match t.opt_table(key)? {
        Some(a) => AqmSpec::decode(a, packet_size).map(Some),
        None => Ok(None),
    }
}

fn buffer(t: &mut Table, key: &'static str, default: u32, packet_size: u32) -> SpecResult<Buffer> {
    let b = match t.take(key) {
        Some(v) => Buffer::decode(&v, &t.field_path(key))?,
        None => Buffer::Packets(default),
    };
    b.check(&t.field_path(key), packet_size)?;
    Ok(b)
}

fn req_string(t: &mut Table, key: &'static str, what: &str) -> SpecResult<String> {
    let p = t.field_path(key);
    match t.take(key) {
        Some(Value::Str(s)) => Ok(s),
        Some(v) => Err(SpecError::new(
            p,
            format!("expected {what} (a string), found {} {v}", v.type_name()),
        )),
        None => Err(SpecError::new(p, format!("missing required key: {what}"))),
    }
}

/// `[topology]`.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Topology {
    Dumbbell(Dumbbell),
    ParkingLot(ParkingLot),
    Custom(Custom),
}

/// N senders -> R1 -> bottleneck -> R2 -> N receivers; one host pair per flow,
/// each with its own access links in both directions.
#[derive(Clone, Debug, Serialize)]
pub struct Dumbbell {
    pub bottleneck_rate: BitRate,
    /// One-way propagation delay of the bottleneck.
    pub bottleneck_delay: SimTime,
    /// The bottleneck's queue limit (both directions).
    pub buffer: Buffer,
    pub access_rate: BitRate,
    /// One-way propagation delay of each access link (drawn per flow, the
    /// same on the sender's and the receiver's side unless one side has its
    /// own below); `None` when both sides have their own, or when a
    /// traffic group sets its own `base_rtt` (the groups without one then
    /// take the default, 1 ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_delay: Option<TimeDist>,
    /// One-way delay of the access links of each flow's sender (its data
    /// source), drawn per flow (default `access_delay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_access_delay: Option<TimeDist>,
    /// One-way delay of the access links of each flow's receiver (default
    /// `access_delay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sink_access_delay: Option<TimeDist>,
    /// Queue limit of the access links.
    pub access_buffer: Buffer,
    /// Random loss on the bottleneck, forward direction (R1 -> R2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    /// Random loss on the bottleneck, reverse direction (R2 -> R1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossSpec>,
    /// Random loss on every access link (each with its own stream).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_loss: Option<LossSpec>,
}

/// The parking lot of `002_80945567bf68047d.txt` section 4.2: routers
/// R0..RK joined by K bottleneck links ("link0" is R0 -> R1). Every flow
/// has its own host pair and four access links, like the dumbbell's.
#[derive(Clone, Debug, Serialize)]
pub struct ParkingLot {
    /// Number of bottleneck links K.
    pub links: u32,
    /// Rate of every bottleneck link (both directions).
    pub bottleneck_rate: BitRate,
    /// One-way propagation delay of every bottleneck link.
    pub bottleneck_delay: SimTime,
    /// Queue limit of every bottleneck link (both directions).
    pub buffer: Buffer,
    pub access_rate: BitRate,
    pub access_buffer: Buffer,
    /// Base round-trip time of each long flow (drawn per flow); its access
    /// links take what the bottleneck links leave of it.
    pub long_rtt: TimeDist,
    /// Base round-trip time of each short flow (drawn per flow).
    pub short_rtt: TimeDist,
    /// Random loss on every bottleneck link, forward direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    /// Random loss on every bottleneck link, reverse direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossSpec>,
    /// Random loss on every access link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_loss: Option<LossSpec>,
    /// Per-link exceptions to the values above and to `[aqm]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<LinkOverride>,
}

/// `[[topology.overrides]]`: one parking-lot link that differs from the rest.
#[derive(Clone, Debug, Serialize)]
pub struct LinkOverride {
    /// The link's name, `"link0"` .. `"link{K-1}"`.
    pub link: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<BitRate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay: Option<SimTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Buffer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm: Option<AqmSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_aqm: Option<AqmSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossSpec>,
}

/// A custom topology: named nodes and duplex links.
#[derive(Clone, Debug, Serialize)]
pub struct Custom {
    pub nodes: Vec<String>,
    pub links: Vec<CustomLink>,
}

/// `[[topology.links]]`: a duplex link; "forward" is `from` -> `to`.
#[derive(Clone, Debug, Serialize)]
pub struct CustomLink {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate: BitRate,
    /// One-way propagation delay (both directions).
    pub delay: SimTime,
    /// Queue limit (both directions).
    pub buffer: Buffer,
    /// Forward AQM (default `[aqm]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aqm: Option<AqmSpec>,
    /// Reverse AQM (default: this link's `aqm`, else `[reverse_aqm]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_aqm: Option<AqmSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse_loss: Option<LossSpec>,
    /// Measure the forward direction's queue (summary, queue.parquet).
    pub monitor: bool,
    /// Measure the reverse direction's queue (named `{name}-rev`).
    pub reverse_monitor: bool,
}

/// One duplex link as the run builds it: a dumbbell's bottleneck, a
/// parking lot's link k, or a custom link, with defaults and overrides
/// resolved.
#[derive(Clone, Debug)]
pub struct DuplexView<'a> {
    pub name: String,
    pub rate: BitRate,
    pub delay: SimTime,
    pub buffer: Buffer,
    pub aqm: &'a AqmSpec,
    pub reverse_aqm: &'a AqmSpec,
    pub loss: Option<&'a LossSpec>,
    pub reverse_loss: Option<&'a LossSpec>,
}

impl Topology {
    pub fn decode(v: Value, path: &str, packet_size: u32) -> SpecResult<Topology> {
        let mut t = Table::new(v, path)?;
        let topo = match t.choice(
            "kind",
            &["dumbbell", "parking-lot", "custom"],
            Some("dumbbell"),
        )? {
            "parking-lot" => Topology::ParkingLot(ParkingLot::decode(&mut t, packet_size)?),
            "custom" => Topology::Custom(Custom::decode(&mut t, packet_size)?),
            _ => Topology::Dumbbell(Dumbbell::decode(&mut t, packet_size)?),
        };
        t.finish()?;
        Ok(topo)
    }

    /// Names of the duplex links a `[[schedule]]` entry may select (each
    /// also with `-fwd` or `-rev` for one direction).
    pub fn link_names(&self) -> Vec<String> {
        match self {
            Topology::Dumbbell(_) => vec!["bottleneck".to_string()],
            Topology::ParkingLot(p) => (0..p.links).map(|k| format!("link{k}")).collect(),
            Topology::Custom(c) => c.links.iter().map(|l| l.name.clone()).collect(),
        }
    }

    /// Whether every flow has its own access links (`link = "access"`).
    pub fn has_access(&self) -> bool {
        !matches!(self, Topology::Custom(_))
    }
}

impl Dumbbell {
    fn decode(t: &mut Table, packet_size: u32) -> SpecResult<Dumbbell> {
        let buffer = buffer(t, "buffer", 100, packet_size)?;
        let access_buffer = buffer_access(t, packet_size)?;
        let given = t.has("access_delay");
        let access_delay = match t.take("access_delay") {
            Some(v) => TimeDist::decode(v, &t.field_path("access_delay"))?,
            None => TimeDist::Fixed(SimTime::from_millis(1)),
        };
        let mut side = |key: &'static str| -> SpecResult<Option<TimeDist>> {
            let p = t.field_path(key);
            t.take(key).map(|v| TimeDist::decode(v, &p)).transpose()
        };
        let source_access_delay = side("source_access_delay")?;
        let sink_access_delay = side("sink_access_delay")?;
        let both = source_access_delay.is_some() && sink_access_delay.is_some();
        if given && both {
            return Err(SpecError::new(
                t.field_path("access_delay"),
                "is unused when both source_access_delay and sink_access_delay are given; remove it (or one of them)",
            ));
        }
        let access_delay = (!both).then_some(access_delay);
        Ok(Dumbbell {
            bottleneck_rate: t.req_rate("bottleneck_rate")?,
            bottleneck_delay: t.time("bottleneck_delay", SimTime::from_millis(20))?,
            buffer,
            access_rate: t.rate("access_rate", BitRate(100_000_000))?,
            access_delay,
            source_access_delay,
            sink_access_delay,
            access_buffer,
            loss: opt_loss(t, "loss")?,
            reverse_loss: opt_loss(t, "reverse_loss")?,
            access_loss: opt_loss(t, "access_loss")?,
        })
    }
}

impl Dumbbell {
    /// Draw a flow's one-way access delays, (sender side, receiver side):
    /// one draw of `access_delay` for both sides when neither side has its
    /// own, else one draw per side, sender first.
    pub fn draw_access(&self, rng: &mut crate::rng::Rng) -> (SimTime, SimTime) {
        let both = self
            .access_delay
            .unwrap_or(TimeDist::Fixed(SimTime::from_millis(1)));
        if self.source_access_delay.is_none() && self.sink_access_delay.is_none() {
            let a = both.sample(rng);
            return (a, a);
        }
        let src = self.source_access_delay.unwrap_or(both).sample(rng);
        let snk = self.sink_access_delay.unwrap_or(both).sample(rng);
        (src, snk)
    }
}

fn buffer_access(t: &mut Table, packet_size: u32) -> SpecResult<Buffer> {
    buffer(t, "access_buffer", 10_000, packet_size)
}

impl ParkingLot {
    fn decode(t: &mut Table, packet_size: u32) -> SpecResult<ParkingLot> {
        let lp = t.field_path("links");
        let k = t.u64("links", 4)?;
        if !(1..=MAX_PARKING_LINKS).contains(&k) {
            return Err(SpecError::new(
                lp,
                format!("{k} is outside the allowed range [1, {MAX_PARKING_LINKS}] links"),
            ));
        }
        let k = k as u32;
        let buffer = buffer(t, "buffer", 100, packet_size)?;
        let access_buffer = buffer_access(t, packet_size)?;
        let rtt = |t: &mut Table, key: &'static str, ms: u64| -> SpecResult<TimeDist> {
            match t.take(key) {
                Some(v) => TimeDist::decode(v, &t.field_path(key)),
                None => Ok(TimeDist::Fixed(SimTime::from_millis(ms))),
            }
        };
        let long_rtt = rtt(t, "long_rtt", 100)?;
        let short_rtt = rtt(t, "short_rtt", 40)?;
        let mut p = ParkingLot {
            links: k,
            bottleneck_rate: t.req_rate("bottleneck_rate")?,
            bottleneck_delay: t.time("bottleneck_delay", SimTime::from_millis(5))?,
            buffer,
            access_rate: t.rate("access_rate", BitRate(100_000_000))?,
            access_buffer,
            long_rtt,
            short_rtt,
            loss: opt_loss(t, "loss")?,
            reverse_loss: opt_loss(t, "reverse_loss")?,
            access_loss: opt_loss(t, "access_loss")?,
            overrides: Vec::new(),
        };
        let names: Vec<String> = (0..k).map(|i| format!("link{i}")).collect();
        for mut o in t.table_array("overrides")? {
            let lp = o.field_path("link");
            let what = format!("the link's name, \"link0\" .. \"link{}\"", k - 1);
            let link = req_string(&mut o, "link", &what)?;
            if !names.contains(&link) {
                return Err(SpecError::new(
                    lp,
                    format!(
                        "unknown link \"{link}\"; the parking lot's links are \"link0\" .. \"link{}\"",
                        k - 1
                    ),
                ));
            }
            if p.overrides.iter().any(|x| x.link == link) {
                return Err(SpecError::new(
                    lp,
                    format!("\"{link}\" is overridden twice; put all its keys in one entry"),
                ));
            }
            let buffer = match o.take("buffer") {
                Some(v) => {
                    let b = Buffer::decode(&v, &o.field_path("buffer"))?;
                    b.check(&o.field_path("buffer"), packet_size)?;
                    Some(b)
                }
                None => None,
            };
            let rate = match o.take("rate") {
                Some(v) => Some(super::decode::as_rate(&v, &o.field_path("rate"))?),
                None => None,
            };
            let ov = LinkOverride {
                link,
                rate,
                delay: o.opt_time("delay")?,
                buffer,
                aqm: opt_aqm(&mut o, "aqm", packet_size)?,
                reverse_aqm: opt_aqm(&mut o, "reverse_aqm", packet_size)?,
                loss: opt_loss(&mut o, "loss")?,
                reverse_loss: opt_loss(&mut o, "reverse_loss")?,
            };
            o.finish()?;
            p.overrides.push(ov);
        }
        // The access links take what the bottleneck links leave of each
        // round-trip time, so no RTT may be below twice the path's delay.
        let delays: Vec<SimTime> = (0..k).map(|i| p.delay_of(i)).collect();
        let total: u128 = delays.iter().map(|d| d.0 as u128).sum();
        let lo = rtt_min(&p.long_rtt);
        if (lo.0 as u128) < 2 * total {
            return Err(SpecError::new(
                t.field_path("long_rtt"),
                format!(
                    "{lo} is below the round trip over the {k} bottleneck links (2 x {}); give at least that",
                    ns_text(total)
                ),
            ));
        }
        let lo = rtt_min(&p.short_rtt);
        if let Some((i, d)) = delays.iter().enumerate().find(|(_, d)| lo.0 < 2 * d.0) {
            return Err(SpecError::new(
                t.field_path("short_rtt"),
                format!(
                    "{lo} is below the round trip over link{i} (2 x {d}); give at least {}",
                    SimTime(2 * d.0)
                ),
            ));
        }
        Ok(p)
    }

    fn over(&self, k: u32) -> Option<&LinkOverride> {
        let name = format!("link{k}");
        self.overrides.iter().find(|o| o.link == name)
    }

    /// One-way propagation delay of link `k` (overrides applied).
    pub fn delay_of(&self, k: u32) -> SimTime {
        self.over(k)
            .and_then(|o| o.delay)
            .unwrap_or(self.bottleneck_delay)
    }
}

fn rtt_min(d: &TimeDist) -> SimTime {
    match *d {
        TimeDist::Fixed(t) => t,
        TimeDist::Uniform(a, _) => a,
    }
}

/// Whether a link name can be used as written in `[[schedule]]` (`-fwd`
/// and `-rev` select one direction, so no name may end in them).
fn check_link_name(name: &str, path: &str) -> SpecResult<()> {
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '"') {
        return Err(SpecError::new(
            path,
            format!(
                "\"{name}\" is not a usable name: give a non-empty name without spaces or quotes"
            ),
        ));
    }
    if name.ends_with("-fwd") || name.ends_with("-rev") {
        return Err(SpecError::new(
            path,
            format!("\"{name}\" ends in -fwd or -rev, which select one direction of a link; choose another name"),
        ));
    }
    Ok(())
}

impl Custom {
    fn decode(t: &mut Table, packet_size: u32) -> SpecResult<Custom> {
        let np = t.field_path("nodes");
        let nodes = match t.take("nodes") {
            Some(Value::Array(items)) => {
                let mut out: Vec<String> = Vec::with_capacity(items.len());
                for (i, it) in items.into_iter().enumerate() {
                    let ip = format!("{np}[{i}]");
                    let Value::Str(s) = it else {
                        return Err(SpecError::new(
                            ip,
                            format!("expected a node name (a string), found {} {it}", it.type_name()),
                        ));
                    };
                    check_link_name(&s, &ip)?;
                    if out.contains(&s) {
                        return Err(SpecError::new(ip, format!("node \"{s}\" is listed twice")));
                    }
                    out.push(s);
                }
                out
            }
            Some(v) => {
                return Err(SpecError::new(
                    np,
                    format!("expected a list of node names, e.g. [\"s1\", \"r1\", \"r2\", \"d1\"]; found {} {v}", v.type_name()),
                ))
            }
            None => {
                return Err(SpecError::new(
                    np,
                    "missing: the list of node names, e.g. nodes = [\"s1\", \"r1\", \"r2\", \"d1\"]",
                ))
            }
        };
        if nodes.len() < 2 || nodes.len() > MAX_NODES {
            return Err(SpecError::new(
                np,
                format!(
                    "{} nodes; a custom topology has 2 to {MAX_NODES} nodes",
                    nodes.len()
                ),
            ));
        }
        let lp = t.field_path("links");
        let tables = t.table_array("links")?;
        if tables.is_empty() {
            return Err(SpecError::new(
                lp,
                "no links: add at least one [[topology.links]] table",
            ));
        }
        let mut links: Vec<CustomLink> = Vec::with_capacity(tables.len());
        for (i, mut l) in tables.into_iter().enumerate() {
            let name_p = l.field_path("name");
            let name = match l.take("name") {
                None => format!("link{i}"),
                Some(Value::Str(s)) => s,
                Some(v) => {
                    return Err(SpecError::new(
                        name_p,
                        format!(
                            "expected a link name (a string), found {} {v}",
                            v.type_name()
                        ),
                    ))
                }
            };
            check_link_name(&name, &name_p)?;
            if let Some(j) = links.iter().position(|x| x.name == name) {
                return Err(SpecError::new(
                    name_p,
                    format!("\"{name}\" is also the name of topology.links[{j}]; link names must differ"),
                ));
            }
            let mut end = |key: &'static str| -> SpecResult<String> {
                let p = l.field_path(key);
                let s = req_string(&mut l, key, "a node name")?;
                if !nodes.contains(&s) {
                    return Err(SpecError::new(
                        p,
                        format!(
                            "unknown node \"{s}\"; the nodes are: {}",
                            quote_list_owned(&nodes)
                        ),
                    ));
                }
                Ok(s)
            };
            let from = end("from")?;
            let to = end("to")?;
            if from == to {
                return Err(SpecError::new(
                    l.field_path("to"),
                    format!("\"{to}\" is also `from`; a link joins two different nodes"),
                ));
            }
            if let Some(j) = links
                .iter()
                .position(|x| (x.from == from && x.to == to) || (x.from == to && x.to == from))
            {
                return Err(SpecError::new(
                    l.path(),
                    format!(
                        "\"{from}\" and \"{to}\" are already joined by topology.links[{j}] (\"{}\"); each link is duplex and declared once",
                        links[j].name
                    ),
                ));
            }
            let cl = CustomLink {
                name,
                from,
                to,
                rate: l.req_rate("rate")?,
                delay: l.req_time("delay")?,
                buffer: buffer(&mut l, "buffer", 100, packet_size)?,
                aqm: opt_aqm(&mut l, "aqm", packet_size)?,
                reverse_aqm: opt_aqm(&mut l, "reverse_aqm", packet_size)?,
                loss: opt_loss(&mut l, "loss")?,
                reverse_loss: opt_loss(&mut l, "reverse_loss")?,
                monitor: l.bool("monitor", false)?,
                reverse_monitor: l.bool("reverse_monitor", false)?,
            };
            l.finish()?;
            links.push(cl);
        }
        if !links.iter().any(|l| l.monitor || l.reverse_monitor) {
            links[0].monitor = true;
        }
        Ok(Custom { nodes, links })
    }

    /// The links a path of node names takes, as (index in `links`,
    /// reverse direction) per step. Errors name `path` and its elements.
    pub fn resolve(&self, nodes: &[String], path: &str) -> SpecResult<Vec<(usize, bool)>> {
        if nodes.len() < 2 {
            return Err(SpecError::new(
                path,
                format!(
                    "{} node(s); a path needs at least 2 nodes (its sender's and its receiver's)",
                    nodes.len()
                ),
            ));
        }
        let index: HashMap<&str, usize> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let mut seen = vec![false; self.nodes.len()];
        let mut ids = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let Some(&id) = index.get(n.as_str()) else {
                return Err(SpecError::new(
                    format!("{path}[{i}]"),
                    format!(
                        "unknown node \"{n}\"; the nodes are: {}",
                        quote_list_owned(&self.nodes)
                    ),
                ));
            };
            if seen[id] {
                return Err(SpecError::new(
                    format!("{path}[{i}]"),
                    format!("node \"{n}\" appears twice; a path visits each node once"),
                ));
            }
            seen[id] = true;
            ids.push(id);
        }
        let mut pair: HashMap<(usize, usize), (usize, bool)> = HashMap::new();
        for (j, l) in self.links.iter().enumerate() {
            let (a, b) = (index[l.from.as_str()], index[l.to.as_str()]);
            pair.insert((a, b), (j, false));
            pair.insert((b, a), (j, true));
        }
        let mut steps = Vec::with_capacity(ids.len() - 1);
        for (i, w) in ids.windows(2).enumerate() {
            match pair.get(&(w[0], w[1])) {
                Some(&s) => steps.push(s),
                None => {
                    return Err(SpecError::new(
                        format!("{path}[{}]", i + 1),
                        format!(
                            "no link joins \"{}\" and \"{}\"; declare one in [[topology.links]]",
                            nodes[i],
                            nodes[i + 1]
                        ),
                    ))
                }
            }
        }
        Ok(steps)
    }
}

fn quote_list_owned(v: &[String]) -> String {
    let refs: Vec<&str> = v.iter().map(String::as_str).collect();
    quote_list(&refs)
}

/// `path` of a `[[traffic]]` group: where its flows run (parking-lot and
/// custom topologies; the dumbbell uses `direction` alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSpec {
    /// Parking lot: across every bottleneck link.
    Long,
    /// Parking lot: across one link each, the group's flow i on link i mod K.
    Short,
    /// Parking lot: across link k only.
    ShortOn(u32),
    /// Custom: the data's path as node names (ACKs take the reverse).
    Nodes(Vec<String>),
}

impl Serialize for PathSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PathSpec::Long => s.serialize_str("long"),
            PathSpec::Short => s.serialize_str("short"),
            PathSpec::ShortOn(k) => s.collect_str(&format_args!("short:{k}")),
            PathSpec::Nodes(n) => n.serialize(s),
        }
    }
}

const PATH_FORMS: &str = "\"long\", \"short\" or \"short:K\" (parking lot), or a list of node names [\"s1\", \"r1\", \"r2\", \"d1\"] (custom)";

impl PathSpec {
    /// Read `path` from a traffic table, if present.
    pub fn decode_opt(t: &mut Table) -> SpecResult<Option<PathSpec>> {
        let p = t.field_path("path");
        let Some(v) = t.take("path") else {
            return Ok(None);
        };
        let spec = match &v {
            Value::Str(s) if s == "long" => PathSpec::Long,
            Value::Str(s) if s == "short" => PathSpec::Short,
            Value::Str(s) => match s.strip_prefix("short:").map(str::parse::<u32>) {
                Some(Ok(k)) => PathSpec::ShortOn(k),
                _ => {
                    return Err(SpecError::new(
                        p,
                        format!("unknown value {v}; allowed: {PATH_FORMS}"),
                    ))
                }
            },
            Value::Array(items) => {
                let mut nodes = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    match it {
                        Value::Str(s) => nodes.push(s.clone()),
                        _ => {
                            return Err(SpecError::new(
                                format!("{p}[{i}]"),
                                format!(
                                    "expected a node name (a string), found {} {it}",
                                    it.type_name()
                                ),
                            ))
                        }
                    }
                }
                PathSpec::Nodes(nodes)
            }
            _ => {
                return Err(SpecError::new(
                    p,
                    format!("expected {PATH_FORMS}; found {} {v}", v.type_name()),
                ))
            }
        };
        Ok(Some(spec))
    }
}

impl Scenario {
    /// The duplex links of the topology that carry AQMs and can be named in
    /// `[[schedule]]`, in order (the dumbbell's bottleneck, the parking
    /// lot's link0..link{K-1}, every custom link).
    pub fn duplex_links(&self) -> Vec<DuplexView<'_>> {
        match &self.topology {
            Topology::Dumbbell(d) => vec![DuplexView {
                name: "bottleneck".to_string(),
                rate: d.bottleneck_rate,
                delay: d.bottleneck_delay,
                buffer: d.buffer,
                aqm: &self.aqm,
                reverse_aqm: &self.reverse_aqm,
                loss: d.loss.as_ref(),
                reverse_loss: d.reverse_loss.as_ref(),
            }],
            Topology::ParkingLot(p) => (0..p.links)
                .map(|k| {
                    let o = p.over(k);
                    let aqm = o.and_then(|o| o.aqm.as_ref());
                    DuplexView {
                        name: format!("link{k}"),
                        rate: o.and_then(|o| o.rate).unwrap_or(p.bottleneck_rate),
                        delay: p.delay_of(k),
                        buffer: o.and_then(|o| o.buffer).unwrap_or(p.buffer),
                        aqm: aqm.unwrap_or(&self.aqm),
                        reverse_aqm: o
                            .and_then(|o| o.reverse_aqm.as_ref())
                            .or(aqm)
                            .unwrap_or(&self.reverse_aqm),
                        loss: o.and_then(|o| o.loss.as_ref()).or(p.loss.as_ref()),
                        reverse_loss: o
                            .and_then(|o| o.reverse_loss.as_ref())
                            .or(p.reverse_loss.as_ref()),
                    }
                })
                .collect(),
            Topology::Custom(c) => c
                .links
                .iter()
                .map(|l| DuplexView {
                    name: l.name.clone(),
                    rate: l.rate,
                    delay: l.delay,
                    buffer: l.buffer,
                    aqm: l.aqm.as_ref().unwrap_or(&self.aqm),
                    reverse_aqm: l
                        .reverse_aqm
                        .as_ref()
                        .or(l.aqm.as_ref())
                        .unwrap_or(&self.reverse_aqm),
                    loss: l.loss.as_ref(),
                    reverse_loss: l.reverse_loss.as_ref(),
                })
                .collect(),
        }
    }

    /// The smallest rate of the duplex links group `g`'s data crosses: the
    /// dumbbell's bottleneck rate; on a parking lot, that of link k for
    /// `"short:k"`, else the smallest of all links; on a custom topology,
    /// the smallest along the path. (The C of a UDP group's `density`.)
    pub fn path_rate(&self, g: usize) -> BitRate {
        let links = self.duplex_links();
        let rates: Vec<BitRate> = match (&self.topology, self.traffic[g].path()) {
            (Topology::ParkingLot(_), Some(PathSpec::ShortOn(k))) => {
                links.get(*k as usize).map(|l| l.rate).into_iter().collect()
            }
            (Topology::Custom(c), Some(PathSpec::Nodes(nodes))) => c
                .resolve(nodes, "path")
                .map(|steps| steps.iter().map(|&(j, _)| links[j].rate).collect())
                .unwrap_or_default(),
            _ => links.iter().map(|l| l.rate).collect(),
        };
        rates
            .into_iter()
            .min()
            .unwrap_or_else(|| links.first().map_or(BitRate(1), |l| l.rate))
    }

    /// Check every traffic group's `path` against the topology.
    pub(crate) fn check_paths(&self) -> SpecResult<()> {
        for (g, group) in self.traffic.iter().enumerate() {
            let path = format!("traffic[{g}].path");
            let spec = group.path();
            let extra = group.extra_delay().map_or(SimTime::ZERO, |d| d.max());
            if group.extra_delay().is_some() && !matches!(self.topology, Topology::Custom(_)) {
                return Err(SpecError::new(
                    format!("traffic[{g}].extra_delay"),
                    "spreads the delays of a custom topology's group; on the dumbbell set the group's base_rtt (e.g. { uniform = [\"20ms\", \"200ms\"] }) or draw topology.access_delay per flow, on a parking lot long_rtt and short_rtt",
                ));
            }
            match (&self.topology, spec) {
                (Topology::Dumbbell(_), None) => {}
                (Topology::Dumbbell(_), Some(_)) => {
                    return Err(SpecError::new(
                        path,
                        "the dumbbell places flows by `direction`; `path` is for parking-lot and custom topologies",
                    ))
                }
                (Topology::ParkingLot(_), Some(PathSpec::Long | PathSpec::Short)) => {}
                (Topology::ParkingLot(p), Some(PathSpec::ShortOn(k))) => {
                    if *k >= p.links {
                        return Err(SpecError::new(
                            path,
                            format!(
                                "\"short:{k}\": there is no link{k}; the parking lot's links are numbered 0 to {}",
                                p.links - 1
                            ),
                        ));
                    }
                }
                (Topology::ParkingLot(p), _) => {
                    return Err(SpecError::new(
                        path,
                        format!(
                            "{}; on a parking lot write path = \"long\" (across every link), \"short\" (one link each, in turn) or \"short:K\" (link K, from 0 to {})",
                            if spec.is_some() { "a list of nodes is for custom topologies" } else { "missing" },
                            p.links - 1
                        ),
                    ))
                }
                (Topology::Custom(c), Some(PathSpec::Nodes(nodes))) => {
                    let steps = c.resolve(nodes, &path)?;
                    let one_way: u128 = steps.iter().map(|&(j, _)| c.links[j].delay.0 as u128).sum::<u128>()
                        + extra.0 as u128;
                    if 2 * one_way > MAX_PATH_RTT.0 as u128 {
                        return Err(SpecError::new(
                            path,
                            format!(
                                "the path's round-trip propagation delay (2 x {}) is longer than the allowed {MAX_PATH_RTT}",
                                ns_text(one_way)
                            ),
                        ));
                    }
                }
                (Topology::Custom(_), _) => {
                    return Err(SpecError::new(
                        path,
                        format!(
                            "{}; on a custom topology write the data's path as node names, e.g. path = [\"s1\", \"r1\", \"r2\", \"d1\"]",
                            if spec.is_some() { "\"long\" and \"short\" are for parking lots" } else { "missing" }
                        ),
                    ))
                }
            }
        }
        Ok(())
    }
}

impl TrafficSpec {
    /// The group's `path`, if given.
    pub fn path(&self) -> Option<&PathSpec> {
        match self {
            TrafficSpec::Bulk(b) => b.path.as_ref(),
            TrafficSpec::Cbr(u) | TrafficSpec::UdpOnoff(u) | TrafficSpec::Ping(u) => {
                u.path.as_ref()
            }
            TrafficSpec::WebSimple(w) => w.path.as_ref(),
            TrafficSpec::Web(w) => w.path.as_ref(),
            TrafficSpec::Video(v) => v.path.as_ref(),
        }
    }
}

/// A sum of times (ns, possibly beyond what a `SimTime` holds) as the user
/// would write it: `15ms`, or in seconds when it exceeds 2^64 ns, never the
/// clamped `18446744073709551615ns`.
fn ns_text(ns: u128) -> String {
    match u64::try_from(ns) {
        Ok(v) => SimTime(v).to_string(),
        Err(_) => format!("{:.4e}s", ns as f64 / 1e9),
    }
}

#[cfg(test)]
mod ns_text_tests {
    #[test]
    fn sums_past_u64_are_shown_in_seconds_not_clamped() {
        assert_eq!(super::ns_text(15_000_000), "15ms");
        let big = 2 * u64::MAX as u128;
        assert_eq!(super::ns_text(big), "3.6893e10s");
    }
}
