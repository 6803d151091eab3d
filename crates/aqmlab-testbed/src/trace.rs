//! The router's record of every drop and mark on the bottleneck
//! (`metrics.trace`), in the columns of the simulator's `events.parquet`
//! ([`aqmlab_core::metrics::EventTrace`]): time, flow, what happened and to
//! which kind of packet, so that a kernel run's drops can be laid beside
//! the simulator's packet by packet.

use aqmlab_core::aqm::{Cause, PacketInfo};
use aqmlab_core::packet::kind_name;
use aqmlab_core::units::SimTime;
use serde::Serialize;

/// What a packet met at the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Drop(Cause),
    Overflow,
    Mark(Cause),
}

impl Fate {
    /// The simulator's name of the event.
    fn name(self) -> &'static str {
        match self {
            Fate::Drop(Cause::Early) => "drop-early",
            Fate::Drop(Cause::Forced) => "drop-forced",
            Fate::Overflow => "drop-overflow",
            Fate::Mark(Cause::Early) => "mark-early",
            Fate::Mark(Cause::Forced) => "mark-forced",
        }
    }
}

/// The events of one direction, up to `limit` rows; the rest counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Trace {
    /// Seconds from the run's start.
    pub time_s: Vec<f64>,
    /// The scenario's flow number (a hash of the addresses and ports for
    /// packets of no numbered flow, as the router keys them).
    pub flow: Vec<u32>,
    pub event: Vec<&'static str>,
    /// `data`, `ack`, `syn`, `syn-ack`, `request` or `fin`.
    pub packet: Vec<&'static str>,
    /// Events beyond the limit, not recorded.
    pub over_limit: u64,
    #[serde(skip)]
    limit: usize,
}

impl Trace {
    pub fn new(limit: u64) -> Trace {
        Trace {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            ..Trace::default()
        }
    }

    /// Record what `info`'s packet met at `t`.
    pub fn note(&mut self, t: SimTime, info: &PacketInfo, fate: Fate) {
        if self.time_s.len() >= self.limit {
            self.over_limit += 1;
            return;
        }
        self.time_s.push(t.as_secs_f64());
        self.flow.push(info.flow);
        self.event.push(fate.name());
        self.packet.push(kind_name(info.flags, info.size));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_core::packet::flags;

    fn info(flow: u32, fl: u8, size: u32) -> PacketInfo {
        PacketInfo {
            size,
            ect: false,
            ecn: Default::default(),
            flow,
            flags: fl,
            seq: 0,
            enq_time: SimTime::ZERO,
        }
    }

    #[test]
    fn records_up_to_its_limit_and_counts_the_rest() {
        let mut t = Trace::new(2);
        t.note(
            SimTime::from_millis(1500),
            &info(3, flags::SYN, 60),
            Fate::Overflow,
        );
        t.note(
            SimTime::from_millis(2000),
            &info(4, flags::DATA | flags::ACK, 1500),
            Fate::Mark(Cause::Early),
        );
        t.note(
            SimTime::from_millis(2500),
            &info(5, flags::ACK, 52),
            Fate::Drop(Cause::Forced),
        );
        assert_eq!(t.time_s, [1.5, 2.0]);
        assert_eq!(t.flow, [3, 4]);
        assert_eq!(t.event, ["drop-overflow", "mark-early"]);
        assert_eq!(t.packet, ["syn", "data"]);
        assert_eq!(t.over_limit, 1);
    }
}
