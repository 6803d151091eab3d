//! Queue disciplines: one trait, one file per scheme, an enum over them.
//!
//! An AQM knows nothing of the event queue, links or TCP. It sees the time,
//! the packet's size, flow and ECN capability, the queue's length in packets
//! and bytes, and a random stream; it answers enqueue, mark or drop. It may
//! also decide at dequeue time and may ask for a periodic tick. The link that
//! owns it stores the packets and enforces the buffer limit (an overflow drop
//! is the link's, not the AQM's).

pub mod droptail;
pub mod red;

use crate::rng::Rng;
use crate::scenario::decode::{SpecResult, Table};
use crate::units::{BitRate, SimTime};
use serde::Serialize;

pub use droptail::DropTail;
pub use red::{Red, RedParams};

/// What the AQM sees of a packet.
#[derive(Clone, Copy, Debug)]
pub struct PacketInfo {
    /// Size on the wire, bytes.
    pub size: u32,
    /// ECN-capable transport (ECT(0), ECT(1) or CE already set).
    pub ect: bool,
    /// Flow identifier (for flow-aware schemes).
    pub flow: u32,
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

/// Facts about the link an AQM is attached to, for schemes that need them.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    pub rate: BitRate,
    /// Typical packet size on this link, bytes (the scenario's data packet size).
    pub mean_pkt_size: u32,
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
}

/// The scenario's `[aqm]` table.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AqmSpec {
    #[default]
    Droptail,
    Red(RedParams),
}

/// Every `aqm.kind` the scenario format accepts.
pub const AQM_KINDS: &[&str] = &["droptail", "red"];

impl AqmSpec {
    /// Decode an `[aqm]` table; `default_pkt_size` fills byte-mode defaults.
    pub fn decode(mut t: Table, default_pkt_size: u32) -> SpecResult<AqmSpec> {
        let kind = t.choice("kind", AQM_KINDS, None)?;
        let spec = match kind {
            "droptail" => AqmSpec::Droptail,
            "red" => AqmSpec::Red(RedParams::decode(&mut t, default_pkt_size)?),
            _ => unreachable!("choice() returns one of AQM_KINDS"),
        };
        t.finish()?;
        Ok(spec)
    }

    pub fn kind(&self) -> &'static str {
        match self {
            AqmSpec::Droptail => "droptail",
            AqmSpec::Red(_) => "red",
        }
    }

    /// Build the running scheme for a link.
    pub fn build(&self, link: LinkInfo) -> AqmImpl {
        match self {
            AqmSpec::Droptail => AqmImpl::DropTail(DropTail),
            AqmSpec::Red(p) => AqmImpl::Red(Red::new(p.clone(), link)),
        }
    }
}

/// Static dispatch over the schemes.
#[derive(Clone, Debug)]
pub enum AqmImpl {
    DropTail(DropTail),
    Red(Red),
}

macro_rules! dispatch {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            AqmImpl::DropTail($a) => $e,
            AqmImpl::Red($a) => $e,
        }
    };
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
    #[inline]
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
}
