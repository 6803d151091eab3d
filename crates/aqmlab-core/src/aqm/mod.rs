//! Queue disciplines: one trait, one file per scheme, an enum over them.
//!
//! An AQM knows nothing of the event queue, links or TCP. It sees the time,
//! the packet's size, flow and ECN capability, the queue's length in packets
//! and bytes, and a random stream; it answers enqueue, mark or drop. It may
//! also decide at dequeue time and may ask for a periodic tick. The link that
//! owns it stores the packets and enforces the buffer limit (an overflow drop
//! is the link's, not the AQM's).

pub mod ap_red;
pub mod ared;
pub mod ared_feng;
pub mod autotune_red;
pub mod avq;
pub mod blue;
pub mod cobalt;
pub mod codel;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
pub mod fq_pie;
pub mod pi;
pub mod pi2;
pub mod pie;
pub mod red;
pub mod rem;
pub mod st_pi;
pub mod st_red;
pub mod step;

use crate::packet::Ecn;
use crate::rng::Rng;
use crate::scenario::decode::{SpecResult, Table};
use crate::scenario::Buffer;
use crate::units::{BitRate, SimTime};
use serde::Serialize;

pub use ap_red::{ApRed, ApRedParams};
pub use ared::{Ared, AredParams};
pub use ared_feng::{AredFeng, AredFengParams};
pub use autotune_red::{AutotuneRed, AutotuneRedParams};
pub use avq::{Avq, AvqParams};
pub use blue::{Blue, BlueParams};
pub use cobalt::{CobaltParams, FqCobalt, FqCobaltParams};
pub use codel::{Codel, CodelParams};
pub use droptail::DropTail;
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use fq_pie::{FqPie, FqPieParams};
pub use pi::{Pi, PiParams};
pub use pi2::{Pi2, Pi2Params};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};
pub use rem::{Rem, RemParams};
pub use st_pi::{StPi, StPiParams};
pub use st_red::{StRed, StRedParams};
pub use step::{Step, StepParams, Threshold};

/// What the AQM sees of a packet.
#[derive(Clone, Copy, Debug, Default)]
pub struct PacketInfo {
    /// Size on the wire, bytes.
    pub size: u32,
    /// ECN-capable transport (ECT(0), ECT(1) or CE already set): what a
    /// classic scheme reads (RFC 9331 section 5.1: ECT(1) is ECN-capable).
    pub ect: bool,
    /// The codepoint itself, for schemes that tell ECT(1) from ECT(0)
    /// (DualPI2's classifier, PI2's scalable marking).
    pub ecn: Ecn,
    /// Flow identifier (for flow-aware schemes).
    pub flow: u32,
    /// TCP flags ([`crate::packet::flags`]: SYN, ACK, DATA, ...), as a router
    /// could read them from the header.
    pub flags: u8,
    /// Sequence number of a data segment, or the cumulative ACK of an ACK
    /// (in segments).
    pub seq: u64,
    /// When the packet entered this queue (at enqueue: now).
    pub enq_time: SimTime,
}

/// Length of the waiting queue (the packet in transmission excluded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueLen {
    pub pkts: u32,
    pub bytes: u64,
}

/// Why a packet was signalled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The probabilistic early region (RED between min_th and max_th; PI, REM, ...).
    Early,
    /// Above the scheme's hard limit (RED: average at or above max_th).
    Forced,
}

/// An AQM's answer for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let the packet through unchanged.
    Pass,
    /// Set CE on the (ECN-capable) packet and let it through.
    Mark(Cause),
    /// Drop the packet.
    Drop(Cause),
}

/// Facts about the link an AQM is attached to and the load the scenario
/// puts on it, for schemes that configure themselves from them (adaptive
/// RED's automatic mode, Auto-Tuning RED, PI's design from N, R, C, and
/// AP-RED's `oracle` estimator).
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    pub rate: BitRate,
    /// One-way propagation delay of the link.
    pub delay: SimTime,
    /// The link's buffer limit.
    pub buffer: Buffer,
    /// Typical packet size on this link, bytes (the scenario's data packet size).
    pub mean_pkt_size: u32,
    /// Active flows whose data crosses the link (0 if unknown).
    pub flows: u32,
    /// Mean base round-trip time of those flows (zero if unknown).
    pub rtt: SimTime,
    /// Of `flows`, the long-lived ones (TCP `bulk` groups: FTP), and their
    /// mean base RTT (zero if none): AP-RED's `oracle` N and R.
    pub bulk_flows: u32,
    pub bulk_rtt: SimTime,
}

impl LinkInfo {
    /// A link with no known load: for unit tests and simple uses.
    pub fn new(rate: BitRate, mean_pkt_size: u32) -> LinkInfo {
        LinkInfo {
            rate,
            delay: SimTime::ZERO,
            buffer: Buffer::Packets(1000),
            mean_pkt_size,
            flows: 0,
            rtt: SimTime::ZERO,
            bulk_flows: 0,
            bulk_rtt: SimTime::ZERO,
        }
    }

    /// Capacity in packets of `mean_pkt_size` per second.
    pub fn capacity_pps(&self) -> f64 {
        self.rate.packets_per_sec(self.mean_pkt_size)
    }

    /// Buffer size in packets of `mean_pkt_size`.
    pub fn buffer_pkts(&self) -> f64 {
        match self.buffer {
            Buffer::Packets(n) => n as f64,
            Buffer::Bytes(b) => b as f64 / self.mean_pkt_size as f64,
        }
    }
}

/// The hooks every scheme implements; defaults are no-ops.
pub trait Aqm {
    /// A packet arrives; `q` is the queue before it is added.
    fn on_enqueue(&mut self, now: SimTime, pkt: &PacketInfo, q: QueueLen, rng: &mut Rng)
        -> Verdict;

    /// A packet leaves the queue to be transmitted; `q` is the queue after it
    /// left, `tx_end` the time its transmission ends. Dequeue-time schemes may
    /// answer `Drop` or `Mark`.
    fn on_dequeue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        _q: QueueLen,
        _tx_end: SimTime,
    ) -> Verdict {
        Verdict::Pass
    }

    /// Period of the scheme's timer, if it has one.
    fn tick_interval(&self) -> Option<SimTime> {
        None
    }

    /// Called every `tick_interval`.
    fn on_tick(&mut self, _now: SimTime, _q: QueueLen) {}

    /// The scheme's congestion measure for the queue time series (RED's average).
    fn average(&self) -> Option<f64> {
        None
    }

    /// Report the scheme's adapted parameters and state (max_p, thresholds,
    /// w_q, q_ref, price, probability, virtual capacity, ...) as
    /// `(name, value)` pairs; they go to `params.parquet`, sampled at the
    /// queue sampling interval and whenever [`Aqm::take_changed`] says so.
    fn params(&self, _out: &mut dyn FnMut(&'static str, f64)) {}

    /// Whether a discrete adaptation (a step of max_p, new thresholds, ...)
    /// happened since the last call; the link then records [`Aqm::params`].
    /// Continuous state (an average, a probability updated on every packet)
    /// is only sampled.
    fn take_changed(&mut self) -> bool {
        false
    }

    /// Whether the scheme wants to see the packets of the opposite
    /// direction (ACKs of the flows it queues), through [`Aqm::observe_reverse`].
    fn wants_reverse(&self) -> bool {
        false
    }

    /// A packet enters the paired link of the opposite direction.
    fn observe_reverse(&mut self, _now: SimTime, _pkt: &PacketInfo) {}

    /// Change parameter `key` to `value` mid-run (a scheduled `aqm`
    /// action), keeping the scheme's state. The error says what is allowed.
    fn set_param(&mut self, key: &str, _value: f64) -> Result<(), String> {
        Err(format!(
            "this scheme has no parameter `{key}` that can change during a run"
        ))
    }

    /// The link or its load changed (a scheduled change of rate, delay or
    /// number of flows); `link` holds the new facts.
    fn set_link(&mut self, _now: SimTime, _link: &LinkInfo) {}
}

/// The scenario's `[aqm]` table.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AqmSpec {
    #[default]
    Droptail,
    Red(RedParams),
    AredFeng(AredFengParams),
    Ared(AredParams),
    AutotuneRed(AutotuneRedParams),
    Pi(PiParams),
    Rem(RemParams),
    Blue(BlueParams),
    Avq(AvqParams),
    ApRed(ApRedParams),
    StRed(StRedParams),
    StPi(StPiParams),
    Pie(PieParams),
    Codel(CodelParams),
    FqCodel(FqCodelParams),
    Step(StepParams),
    Pi2(Pi2Params),
    #[serde(rename = "dualpi2")]
    DualPi2(DualPi2Params),
    FqPie(FqPieParams),
    Cobalt(CobaltParams),
    FqCobalt(FqCobaltParams),
}

/// Every `aqm.kind` the scenario format accepts.
/// The `[aqm]` keys whose values are times, in every kind that has them
/// (each is decoded with `Table::time` in its scheme's file). A mid-run
/// `set` takes a time string only for these.
pub const TIME_KEYS: &[&str] = &[
    "ce_threshold",
    "freeze_time",
    "interval",
    "max_burst",
    "r0",
    "t_update",
    "target",
    "target_delay",
    "update_interval",
    "window",
];

pub const AQM_KINDS: &[&str] = &[
    "droptail",
    "red",
    "ared-feng",
    "ared",
    "autotune-red",
    "pi",
    "rem",
    "blue",
    "avq",
    "ap-red",
    "st-red",
    "st-pi",
    "pie",
    "codel",
    "fq-codel",
    "step",
    "pi2",
    "dualpi2",
    "fq-pie",
    "cobalt",
    "fq-cobalt",
];

impl AqmSpec {
    /// Decode an `[aqm]` table; `default_pkt_size` fills byte-mode defaults.
    pub fn decode(mut t: Table, default_pkt_size: u32) -> SpecResult<AqmSpec> {
        let kind = t.choice("kind", AQM_KINDS, None)?;
        let spec = match kind {
            "droptail" => AqmSpec::Droptail,
            "red" => AqmSpec::Red(RedParams::decode(&mut t, default_pkt_size)?),
            "ared-feng" => AqmSpec::AredFeng(AredFengParams::decode(&mut t, default_pkt_size)?),
            "ared" => AqmSpec::Ared(AredParams::decode(&mut t, default_pkt_size)?),
            "autotune-red" => {
                AqmSpec::AutotuneRed(AutotuneRedParams::decode(&mut t, default_pkt_size)?)
            }
            "pi" => AqmSpec::Pi(PiParams::decode(&mut t, default_pkt_size)?),
            "rem" => AqmSpec::Rem(RemParams::decode(&mut t, default_pkt_size)?),
            "blue" => AqmSpec::Blue(BlueParams::decode(&mut t, default_pkt_size)?),
            "avq" => AqmSpec::Avq(AvqParams::decode(&mut t, default_pkt_size)?),
            "ap-red" => AqmSpec::ApRed(ApRedParams::decode(&mut t, default_pkt_size)?),
            "st-red" => AqmSpec::StRed(StRedParams::decode(&mut t, default_pkt_size)?),
            "st-pi" => AqmSpec::StPi(StPiParams::decode(&mut t, default_pkt_size)?),
            "pie" => AqmSpec::Pie(PieParams::decode(&mut t, default_pkt_size)?),
            "codel" => AqmSpec::Codel(CodelParams::decode(&mut t, default_pkt_size)?),
            "fq-codel" => AqmSpec::FqCodel(FqCodelParams::decode(&mut t, default_pkt_size)?),
            "step" => AqmSpec::Step(StepParams::decode(&mut t, default_pkt_size)?),
            "pi2" => AqmSpec::Pi2(Pi2Params::decode(&mut t, default_pkt_size)?),
            "dualpi2" => AqmSpec::DualPi2(DualPi2Params::decode(&mut t, default_pkt_size)?),
            "fq-pie" => AqmSpec::FqPie(FqPieParams::decode(&mut t, default_pkt_size)?),
            "cobalt" => AqmSpec::Cobalt(CobaltParams::decode(&mut t)?),
            "fq-cobalt" => AqmSpec::FqCobalt(FqCobaltParams::decode(&mut t)?),
            _ => unreachable!("choice() returns one of AQM_KINDS"),
        };
        t.finish()?;
        Ok(spec)
    }

    pub fn kind(&self) -> &'static str {
        match self {
            AqmSpec::Droptail => "droptail",
            AqmSpec::Red(_) => "red",
            AqmSpec::AredFeng(_) => "ared-feng",
            AqmSpec::Ared(_) => "ared",
            AqmSpec::AutotuneRed(_) => "autotune-red",
            AqmSpec::Pi(_) => "pi",
            AqmSpec::Rem(_) => "rem",
            AqmSpec::Blue(_) => "blue",
            AqmSpec::Avq(_) => "avq",
            AqmSpec::ApRed(_) => "ap-red",
            AqmSpec::StRed(_) => "st-red",
            AqmSpec::StPi(_) => "st-pi",
            AqmSpec::Pie(_) => "pie",
            AqmSpec::Codel(_) => "codel",
            AqmSpec::FqCodel(_) => "fq-codel",
            AqmSpec::Step(_) => "step",
            AqmSpec::Pi2(_) => "pi2",
            AqmSpec::DualPi2(_) => "dualpi2",
            AqmSpec::FqPie(_) => "fq-pie",
            AqmSpec::Cobalt(_) => "cobalt",
            AqmSpec::FqCobalt(_) => "fq-cobalt",
        }
    }

    /// Build the running scheme for a link.
    pub fn build(&self, link: LinkInfo) -> AqmImpl {
        match self {
            AqmSpec::Droptail => AqmImpl::DropTail(DropTail),
            AqmSpec::Red(p) => AqmImpl::Red(Red::new(p.clone(), link)),
            AqmSpec::AredFeng(p) => AqmImpl::AredFeng(AredFeng::new(p.clone(), link)),
            AqmSpec::Ared(p) => AqmImpl::Ared(Ared::new(p.clone(), link)),
            AqmSpec::AutotuneRed(p) => {
                AqmImpl::AutotuneRed(Box::new(AutotuneRed::new(p.clone(), link)))
            }
            AqmSpec::Pi(p) => AqmImpl::Pi(Pi::new(p.clone(), link)),
            AqmSpec::Rem(p) => AqmImpl::Rem(Rem::new(p.clone(), link)),
            AqmSpec::Blue(p) => AqmImpl::Blue(Blue::new(p.clone(), link)),
            AqmSpec::Avq(p) => AqmImpl::Avq(Avq::new(p.clone(), link)),
            AqmSpec::ApRed(p) => AqmImpl::ApRed(Box::new(ApRed::new(p.clone(), link))),
            AqmSpec::StRed(p) => AqmImpl::StRed(Box::new(StRed::new(p.clone(), link))),
            AqmSpec::StPi(p) => AqmImpl::StPi(Box::new(StPi::new(p.clone(), link))),
            AqmSpec::Pie(p) => AqmImpl::Pie(Pie::new(p.clone(), link)),
            AqmSpec::Codel(p) => AqmImpl::Codel(Codel::new(p.clone(), link)),
            AqmSpec::FqCodel(p) => AqmImpl::FqCodel(Box::new(FqCodel::new(p.clone(), link))),
            AqmSpec::Step(p) => AqmImpl::Step(Step::new(p.clone(), link)),
            AqmSpec::Pi2(p) => AqmImpl::Pi2(Pi2::new(p.clone(), link)),
            AqmSpec::DualPi2(p) => AqmImpl::DualPi2(Box::new(DualPi2::new(p.clone(), link))),
            AqmSpec::FqPie(p) => AqmImpl::FqPie(Box::new(FqPie::new(p.clone(), link))),
            AqmSpec::Cobalt(p) => AqmImpl::FqCobalt(Box::new(FqCobalt::new(
                FqCobaltParams::single(p.clone()),
                link,
            ))),
            AqmSpec::FqCobalt(p) => AqmImpl::FqCobalt(Box::new(FqCobalt::new(p.clone(), link))),
        }
    }
}

/// A boxed scheme is a scheme (large ones are boxed inside [`AqmImpl`]).
impl<T: Aqm> Aqm for Box<T> {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        (**self).on_enqueue(now, pkt, q, rng)
    }
    #[inline]
    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        tx_end: SimTime,
    ) -> Verdict {
        (**self).on_dequeue(now, pkt, q, tx_end)
    }
    fn tick_interval(&self) -> Option<SimTime> {
        (**self).tick_interval()
    }
    fn on_tick(&mut self, now: SimTime, q: QueueLen) {
        (**self).on_tick(now, q)
    }
    fn average(&self) -> Option<f64> {
        (**self).average()
    }
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        (**self).params(out)
    }
    #[inline]
    fn take_changed(&mut self) -> bool {
        (**self).take_changed()
    }
    fn wants_reverse(&self) -> bool {
        (**self).wants_reverse()
    }
    fn observe_reverse(&mut self, now: SimTime, pkt: &PacketInfo) {
        (**self).observe_reverse(now, pkt)
    }
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        (**self).set_param(key, value)
    }
    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        (**self).set_link(now, link)
    }
}

/// Static dispatch over the schemes. Schemes with large state are boxed so
/// that every link (and its hot fields) stays small.
#[derive(Clone, Debug)]
pub enum AqmImpl {
    DropTail(DropTail),
    Red(Red),
    AredFeng(AredFeng),
    Ared(Ared),
    AutotuneRed(Box<AutotuneRed>),
    Pi(Pi),
    Rem(Rem),
    Blue(Blue),
    Avq(Avq),
    ApRed(Box<ApRed>),
    StRed(Box<StRed>),
    StPi(Box<StPi>),
    Pie(Pie),
    Codel(Codel),
    FqCodel(Box<FqCodel>),
    Step(Step),
    Pi2(Pi2),
    DualPi2(Box<DualPi2>),
    FqPie(Box<FqPie>),
    /// COBALT on one queue (`cobalt`) or on flow queues (`fq-cobalt`).
    FqCobalt(Box<FqCobalt>),
}

macro_rules! dispatch {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            AqmImpl::DropTail($a) => $e,
            AqmImpl::Red($a) => $e,
            AqmImpl::AredFeng($a) => $e,
            AqmImpl::Ared($a) => $e,
            AqmImpl::AutotuneRed($a) => $e,
            AqmImpl::Pi($a) => $e,
            AqmImpl::Rem($a) => $e,
            AqmImpl::Blue($a) => $e,
            AqmImpl::Avq($a) => $e,
            AqmImpl::ApRed($a) => $e,
            AqmImpl::StRed($a) => $e,
            AqmImpl::StPi($a) => $e,
            AqmImpl::Pie($a) => $e,
            AqmImpl::Codel($a) => $e,
            AqmImpl::FqCodel($a) => $e,
            AqmImpl::Step($a) => $e,
            AqmImpl::Pi2($a) => $e,
            AqmImpl::DualPi2($a) => $e,
            AqmImpl::FqPie($a) => $e,
            AqmImpl::FqCobalt($a) => $e,
        }
    };
}

impl AqmImpl {
    /// Whether the scheme decides at enqueue only: its
    /// [`Aqm::on_dequeue`] always answers `Pass` (it may update state,
    /// from its arguments only). Such a link's departures can be planned
    /// at admission ([`crate::net::link::Link::plan`]). Every scheme is
    /// named here, so that a new one must be decided on.
    pub fn decides_at_enqueue(&self) -> bool {
        match self {
            AqmImpl::DropTail(_)
            | AqmImpl::Red(_)
            | AqmImpl::AredFeng(_)
            | AqmImpl::Ared(_)
            | AqmImpl::AutotuneRed(_)
            | AqmImpl::Pi(_)
            | AqmImpl::Rem(_)
            | AqmImpl::Blue(_)
            | AqmImpl::Avq(_)
            | AqmImpl::ApRed(_)
            | AqmImpl::StRed(_)
            | AqmImpl::StPi(_)
            | AqmImpl::Pie(_)
            | AqmImpl::Pi2(_) => true,
            // Drop or mark at the head of the queue.
            AqmImpl::Codel(_)
            | AqmImpl::FqCodel(_)
            | AqmImpl::DualPi2(_)
            | AqmImpl::FqPie(_)
            | AqmImpl::FqCobalt(_) => false,
            // A threshold on the queue's length acts at enqueue, one on
            // the sojourn time at dequeue.
            AqmImpl::Step(s) => s.decides_at_enqueue(),
        }
    }
}

impl Aqm for AqmImpl {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        dispatch!(self, a => a.on_enqueue(now, pkt, q, rng))
    }
    // Always inlined: the dispatch is a jump table the link's dequeue
    // path would otherwise call out to for every packet.
    #[inline(always)]
    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        tx_end: SimTime,
    ) -> Verdict {
        dispatch!(self, a => a.on_dequeue(now, pkt, q, tx_end))
    }
    fn tick_interval(&self) -> Option<SimTime> {
        dispatch!(self, a => a.tick_interval())
    }
    fn on_tick(&mut self, now: SimTime, q: QueueLen) {
        dispatch!(self, a => a.on_tick(now, q))
    }
    fn average(&self) -> Option<f64> {
        dispatch!(self, a => a.average())
    }
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        dispatch!(self, a => Aqm::params(a, out))
    }
    #[inline]
    fn take_changed(&mut self) -> bool {
        dispatch!(self, a => a.take_changed())
    }
    fn wants_reverse(&self) -> bool {
        dispatch!(self, a => a.wants_reverse())
    }
    fn observe_reverse(&mut self, now: SimTime, pkt: &PacketInfo) {
        dispatch!(self, a => a.observe_reverse(now, pkt))
    }
    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        dispatch!(self, a => a.set_link(now, link))
    }
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        dispatch!(self, a => a.set_param(key, value))
    }
}

/// Apply a scheduled `set` (parameter = value) to a scheme through
/// [`Aqm::set_param`]; each key is validated against the values in force
/// when it is applied. Keys the scheme refuses are tried again after the
/// others, until a pass applies none, so keys that only make sense together
/// (RED's `min_th` and `max_th` moved past each other, ST-PI's `q_ref` above
/// the old `q_ref_max`) need no particular order. Returns the keys left
/// refused, each with its value and the scheme's error (empty: all applied).
pub fn apply_set<'a, A: Aqm + ?Sized>(
    aqm: &mut A,
    set: impl IntoIterator<Item = (&'a str, f64)>,
) -> Vec<(&'a str, f64, String)> {
    let mut todo: Vec<(&'a str, f64)> = set.into_iter().collect();
    loop {
        let mut refused = Vec::new();
        for &(k, v) in &todo {
            if let Err(e) = aqm.set_param(k, v) {
                refused.push((k, v, e));
            }
        }
        if refused.is_empty() || refused.len() == todo.len() {
            return refused;
        }
        todo = refused.into_iter().map(|(k, v, _)| (k, v)).collect();
    }
}

/// Helpers for the schemes' [`Aqm::set_param`]: errors in one style (RED's)
/// and the conversion of a scheduled number to a time or a count.
pub(crate) mod change {
    use crate::scenario::decode::SpecError;
    use crate::units::SimTime;

    /// Longest time a scheduled change may set, seconds.
    const MAX_SECS: f64 = 1e6;

    /// The error for a key `scheme` cannot change during a run.
    pub fn unknown_key(scheme: &str, key: &str, allowed: &[&str]) -> String {
        format!(
            "{scheme} cannot change `{key}` during a run; allowed: {}",
            allowed.join(", ")
        )
    }

    /// The validation error of the parameters with `key` changed. The
    /// caller names `key` (`schedule[i].set.<key>`); when the check of
    /// another parameter failed (an order of thresholds, a bound set by
    /// another key), the message names that parameter.
    pub fn invalid(key: &str, e: SpecError) -> String {
        if e.path.is_empty() || e.path == key {
            e.msg
        } else {
            format!("{}: {}", e.path, e.msg)
        }
    }

    /// A time given as seconds (a time string such as `"10ms"` in the
    /// scenario's `set` arrives here as seconds), in [0, 1e6] s.
    pub fn secs(value: f64) -> Result<SimTime, String> {
        if (0.0..=MAX_SECS).contains(&value) {
            Ok(SimTime::from_secs_f64(value))
        } else {
            Err(format!(
                "{value} is outside the allowed range [0, {MAX_SECS}] seconds (a time: give seconds or a string such as \"10ms\")"
            ))
        }
    }

    /// A whole number in [0, 2^32 - 1].
    pub fn count(value: f64) -> Result<u32, String> {
        if value.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&value) {
            Ok(value as u32)
        } else {
            Err(format!(
                "{value} is not allowed; expected a whole number in [0, {}]",
                u32::MAX
            ))
        }
    }
}

#[cfg(test)]
mod time_keys_tests {
    /// `TIME_KEYS` lists exactly the keys the schemes decode as times
    /// (`t.time("key", ...)` in their files), so a new time-valued key cannot
    /// be forgotten by the schedule's `set`.
    #[test]
    fn time_keys_match_the_decoders() {
        let sources = [
            include_str!("ap_red.rs"),
            include_str!("ared.rs"),
            include_str!("ared_feng.rs"),
            include_str!("autotune_red.rs"),
            include_str!("avq.rs"),
            include_str!("blue.rs"),
            include_str!("cobalt.rs"),
            include_str!("codel.rs"),
            include_str!("droptail.rs"),
            include_str!("dualpi2.rs"),
            include_str!("fq_codel.rs"),
            include_str!("fq_pie.rs"),
            include_str!("pi.rs"),
            include_str!("pi2.rs"),
            include_str!("pie.rs"),
            include_str!("red.rs"),
            include_str!("rem.rs"),
            include_str!("st_pi.rs"),
            include_str!("st_red.rs"),
            include_str!("step.rs"),
        ];
        let mut found: Vec<&str> = Vec::new();
        for src in sources {
            for (i, _) in src.match_indices("t.time(\"") {
                let rest = &src[i + 8..];
                let key = &rest[..rest.find('"').unwrap()];
                if !found.contains(&key) {
                    found.push(key);
                }
            }
        }
        found.sort_unstable();
        assert_eq!(found, super::TIME_KEYS);
    }
}
