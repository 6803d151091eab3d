//! Step marking: signal every packet while the queue is above a threshold K.
//!
//! References: M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel,
//! B. Prabhakar, S. Sengupta, M. Sridharan, "Data Center TCP (DCTCP)",
//! Proc. ACM SIGCOMM 2010, section 3.1 (the marking scheme: a packet is
//! marked when the instantaneous queue it finds on arrival is above K) and
//! sections 3.3-3.4 (choosing K: K > C x RTT / 7, in packets); RFC 8257
//! (DCTCP) section 3.1 (the same rule at switches and routers); RFC 9332
//! (DualQ Coupled AQM) section 5.1 and appendix A, whose native L4S AQM is
//! a step on the sojourn time at dequeue (1 ms) rather than on the queue
//! length.
//!
//! The rule, with `q` the queue (packets or bytes) waiting when a packet
//! arrives, the packet itself and the one in transmission left out, and
//! `sojourn = now - enq_time` when a packet leaves the queue:
//!
//! ```text
//! threshold = K packets:   signal at enqueue if q.pkts  > K
//! threshold = K bytes:     signal at enqueue if q.bytes > K
//! threshold = T (a time):  signal at dequeue if sojourn > T
//! ```
//!
//! A signal is a CE mark when the packet is ECN-capable and the scheme's
//! `ecn` is on, otherwise a drop. There is no probability and no average:
//! every packet above the threshold is signalled, so each signal has cause
//! [`Cause::Forced`] (above the scheme's hard limit). The buffer limit is
//! the link's (`drops_overflow`).
//!
//! Defaults: K = 20 packets, the DCTCP paper's setting at 1 Gbit/s (section
//! 4); `ecn` off, as every scheme's marking (docs/scenario.md, "ECN: two
//! switches").

use super::{Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{as_bytes, as_u64, join, SpecError, SpecResult, Table};
use crate::scenario::value::Value;
use crate::units::{parse_bytes, SimTime};
use serde::{Serialize, Serializer};

/// Default threshold: 20 packets (DCTCP paper, section 4, at 1 Gbit/s).
pub const THRESHOLD_PKTS: u32 = 20;

/// Where the step sits, and in which measure of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// Packets waiting when a packet arrives (DCTCP paper section 3.1).
    Packets(u32),
    /// Bytes waiting when a packet arrives.
    Bytes(u64),
    /// Sojourn time of a packet when it leaves the queue (RFC 9332's step).
    Sojourn(SimTime),
}

impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threshold::Packets(n) => s.serialize_u32(*n),
            Threshold::Bytes(b) => s.collect_str(&format_args!("{b}B")),
            Threshold::Sojourn(t) => s.collect_str(t),
        }
    }
}

const THRESHOLD_FORMS: &str =
    "a whole number of packets (20), a size in bytes (\"30KB\") or a sojourn time (\"1ms\")";

impl Threshold {
    /// Read `aqm.threshold`: a number is packets, a string a size or a time.
    pub fn decode(v: &Value, path: &str) -> SpecResult<Threshold> {
        match v {
            Value::Int(_) | Value::Float(_) => {
                let n = as_u64(v, path)?;
                u32::try_from(n).map(Threshold::Packets).map_err(|_| {
                    SpecError::new(
                        path,
                        format!("{n} packets is too large (at most {})", u32::MAX),
                    )
                })
            }
            Value::Str(s) => {
                if let Ok(t) = SimTime::parse(s) {
                    return Ok(Threshold::Sojourn(t));
                }
                if parse_bytes(s).is_ok() {
                    return as_bytes(v, path).map(Threshold::Bytes);
                }
                Err(SpecError::new(
                    path,
                    format!("invalid value {v}; expected {THRESHOLD_FORMS}"),
                ))
            }
            _ => Err(SpecError::new(
                path,
                format!("expected {THRESHOLD_FORMS}, found {} {v}", v.type_name()),
            )),
        }
    }
}

/// The step's parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepParams {
    /// K: packets (a number), bytes (`"30KB"`) or a sojourn time (`"1ms"`).
    /// Default 20 packets. A time must be at most 1000 s.
    pub threshold: Threshold,
    /// Mark ECN-capable packets instead of dropping them. Default off.
    pub ecn: bool,
}

impl Default for StepParams {
    fn default() -> Self {
        StepParams {
            threshold: Threshold::Packets(THRESHOLD_PKTS),
            ecn: false,
        }
    }
}

/// Longest sojourn threshold: 1000 s.
const MAX_SOJOURN: SimTime = SimTime::from_secs(1000);

impl StepParams {
    /// Read the step's keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<StepParams> {
        let p = StepParams {
            threshold: match t.take("threshold") {
                Some(v) => Threshold::decode(&v, &t.field_path("threshold"))?,
                None => Threshold::Packets(THRESHOLD_PKTS),
            },
            ecn: t.bool("ecn", false)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        if let Threshold::Sojourn(t) = self.threshold {
            if t > MAX_SOJOURN {
                return Err(SpecError::new(
                    join(path, "threshold"),
                    format!("{t} is above the allowed 1000s; give {THRESHOLD_FORMS}"),
                ));
            }
        }
        Ok(())
    }
}

/// The step on a link's FIFO.
#[derive(Clone, Debug)]
pub struct Step {
    p: StepParams,
}

impl Step {
    pub fn new(p: StepParams, _link: LinkInfo) -> Step {
        Step { p }
    }

    pub fn params(&self) -> &StepParams {
        &self.p
    }

    /// Whether every decision is taken at enqueue (a threshold on the
    /// queue's length), not at dequeue (a threshold on the sojourn time).
    pub fn decides_at_enqueue(&self) -> bool {
        !matches!(self.p.threshold, Threshold::Sojourn(_))
    }

    /// The sojourn-time test, out of line: the dispatch over every scheme's
    /// dequeue hook stays small enough to inline into the link's.
    #[inline(never)]
    fn sojourn_above(&self, now: SimTime, pkt: &PacketInfo, t: SimTime) -> Verdict {
        if now.saturating_sub(pkt.enq_time) > t {
            self.signal(pkt.ect)
        } else {
            Verdict::Pass
        }
    }

    #[inline]
    fn signal(&self, ect: bool) -> Verdict {
        if self.p.ecn && ect {
            Verdict::Mark(Cause::Forced)
        } else {
            Verdict::Drop(Cause::Forced)
        }
    }
}

impl Aqm for Step {
    /// DCTCP paper section 3.1: the queue the packet finds on arrival.
    #[inline]
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        let above = match self.p.threshold {
            Threshold::Packets(k) => q.pkts > k,
            Threshold::Bytes(k) => q.bytes > k,
            Threshold::Sojourn(_) => false,
        };
        if above {
            self.signal(pkt.ect)
        } else {
            Verdict::Pass
        }
    }

    /// RFC 9332 section 5.1: the sojourn time, measured as the packet
    /// leaves the queue.
    #[inline]
    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        _q: QueueLen,
        _tx_end: SimTime,
    ) -> Verdict {
        match self.p.threshold {
            Threshold::Sojourn(t) => self.sojourn_above(now, pkt, t),
            _ => Verdict::Pass,
        }
    }

    /// `threshold` may change during a run, in the unit it was given in:
    /// packets, bytes, or seconds for a sojourn time (its kind stays). It
    /// applies from the next packet.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        use super::change;
        if key != "threshold" {
            return Err(change::unknown_key("step", key, &["threshold"]));
        }
        let mut p = self.p.clone();
        p.threshold = match p.threshold {
            Threshold::Packets(_) => Threshold::Packets(change::count(value)?),
            Threshold::Bytes(_) => Threshold::Bytes(u64::from(change::count(value)?)),
            Threshold::Sojourn(_) => Threshold::Sojourn(change::secs(value)?),
        };
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.p = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::units::BitRate;

    fn step(threshold: Threshold, ecn: bool) -> Step {
        Step::new(
            StepParams { threshold, ecn },
            LinkInfo::new(BitRate(1_000_000_000), 1500),
        )
    }

    fn pkt(ect: bool) -> PacketInfo {
        PacketInfo {
            size: 1500,
            ect,
            ..PacketInfo::default()
        }
    }

    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 1500,
        }
    }

    /// K = 20 packets: a packet that finds 20 waiting passes, one that finds
    /// 21 is marked (ECN-capable) or dropped (not, or `ecn` off).
    #[test]
    fn packets_above_k_are_marked_or_dropped() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let now = SimTime::ZERO;
        let mut s = step(Threshold::Packets(20), true);
        assert_eq!(
            s.on_enqueue(now, &pkt(true), q(20), &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            s.on_enqueue(now, &pkt(true), q(21), &mut rng),
            Verdict::Mark(Cause::Forced)
        );
        assert_eq!(
            s.on_enqueue(now, &pkt(false), q(21), &mut rng),
            Verdict::Drop(Cause::Forced)
        );
        let mut off = step(Threshold::Packets(20), false);
        assert_eq!(
            off.on_enqueue(now, &pkt(true), q(500), &mut rng),
            Verdict::Drop(Cause::Forced)
        );
        // The length threshold never acts at dequeue.
        assert!(s.decides_at_enqueue());
        let late = PacketInfo {
            enq_time: SimTime::ZERO,
            ..pkt(true)
        };
        assert_eq!(
            s.on_dequeue(SimTime::from_secs(1), &late, q(100), SimTime::from_secs(1)),
            Verdict::Pass
        );
    }

    /// "30KB": 30 000 bytes; 20 packets of 1500 bytes are 30 000 bytes
    /// (passes), 20 packets and 1 byte more are above.
    #[test]
    fn bytes_threshold() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let mut s = step(Threshold::Bytes(30_000), true);
        let at = QueueLen {
            pkts: 20,
            bytes: 30_000,
        };
        let above = QueueLen {
            pkts: 20,
            bytes: 30_001,
        };
        assert_eq!(
            s.on_enqueue(SimTime::ZERO, &pkt(true), at, &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            s.on_enqueue(SimTime::ZERO, &pkt(true), above, &mut rng),
            Verdict::Mark(Cause::Forced)
        );
    }

    /// "1ms": a packet that waited 1 ms passes, 1 ms + 1 ns is signalled,
    /// at dequeue; nothing happens at enqueue whatever the queue.
    #[test]
    fn sojourn_threshold_acts_at_dequeue() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let mut s = step(Threshold::Sojourn(SimTime::from_millis(1)), true);
        assert!(!s.decides_at_enqueue());
        assert_eq!(
            s.on_enqueue(SimTime::ZERO, &pkt(true), q(10_000), &mut rng),
            Verdict::Pass
        );
        let p = PacketInfo {
            enq_time: SimTime::from_millis(5),
            ..pkt(true)
        };
        let at = SimTime::from_millis(6);
        assert_eq!(s.on_dequeue(at, &p, q(0), at), Verdict::Pass);
        let after = at + SimTime(1);
        assert_eq!(
            s.on_dequeue(after, &p, q(0), after),
            Verdict::Mark(Cause::Forced)
        );
        let not_ect = PacketInfo { ect: false, ..p };
        assert_eq!(
            s.on_dequeue(after, &not_ect, q(0), after),
            Verdict::Drop(Cause::Forced)
        );
    }

    #[test]
    fn threshold_forms_and_errors() {
        let d = |v: Value| Threshold::decode(&v, "aqm.threshold");
        assert_eq!(d(Value::Int(20)), Ok(Threshold::Packets(20)));
        assert_eq!(d(Value::Int(0)), Ok(Threshold::Packets(0)));
        assert_eq!(d(Value::Str("30KB".into())), Ok(Threshold::Bytes(30_000)));
        assert_eq!(
            d(Value::Str("1ms".into())),
            Ok(Threshold::Sojourn(SimTime::from_millis(1)))
        );
        for bad in [
            Value::Int(-1),
            Value::Float(2.5),
            Value::Str("20 packets".into()),
            Value::Bool(true),
        ] {
            let e = d(bad).unwrap_err();
            assert_eq!(e.path, "aqm.threshold");
        }
        let e = d(Value::Str("fast".into())).unwrap_err();
        assert!(
            e.msg.contains("\"30KB\"") && e.msg.contains("\"1ms\""),
            "{e}"
        );
        let p = StepParams {
            threshold: Threshold::Sojourn(SimTime::from_secs(2000)),
            ecn: true,
        };
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.threshold");
    }

    #[test]
    fn set_param_keeps_the_unit() {
        let mut s = step(Threshold::Packets(20), true);
        s.set_param("threshold", 65.0).unwrap();
        assert_eq!(s.p.threshold, Threshold::Packets(65));
        assert!(s.set_param("threshold", 2.5).is_err());
        let e = s.set_param("max_p", 0.1).unwrap_err();
        assert!(e.contains("threshold"), "{e}");
        let mut s = step(Threshold::Sojourn(SimTime::from_millis(1)), true);
        s.set_param("threshold", 0.002).unwrap();
        assert_eq!(s.p.threshold, Threshold::Sojourn(SimTime::from_millis(2)));
        let mut s = step(Threshold::Bytes(30_000), true);
        s.set_param("threshold", 60_000.0).unwrap();
        assert_eq!(s.p.threshold, Threshold::Bytes(60_000));
    }
}
