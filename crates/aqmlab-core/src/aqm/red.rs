//! Random Early Detection and its variants.
//!
//! References:
//! - Floyd and Jacobson, "Random Early Detection Gateways for Congestion
//!   Avoidance", 1993: the EWMA average, the idle-period correction
//!   avg <- (1 - w_q)^m avg with m the idle time in typical packet
//!   transmission times, and the count-based final probability.
//! - `003_b277268f444f7691.txt` (Wu Chen's thesis) section 2.2: eq. 2.3 (average),
//!   eq. 2.4 (gentle drop function), eq. 2.5 (byte-mode probability scaling),
//!   eq. 2.6 (p = p_i / (1 - count p_i)); byte-mode queue measurement.
//! - `000_0675317d310dd341.txt`: RED drops every packet above max_th (the
//!   RFC 3168 recommendation) whereas RED* marks ECN-capable packets there.
//! - ns-2's `queue/red.cc` (which made the thesis' figures) for the byte-mode
//!   count and the `wait` option, read for facts (see [`RedCounting`]).
//!
//! The count in byte mode (`byte_count`, [`ByteCount`]):
//! - `"ns2"` (default): count = floor(bytes arrived since the last signal /
//!   `mean_pkt_size`), p_a = p_i / (1 - count p_i), then p_a is scaled by
//!   size / `mean_pkt_size`. A 40-byte ACK adds 40 bytes to the count, not a
//!   whole packet. This is ns-2's and ns-3's RED.
//! - `"literal"`: eq. 2.5 then eq. 2.6 as the thesis writes them: p_i is
//!   scaled by size first, then p_a = p_b / (1 - count p_b) with count in
//!   packets (every ACK counts as a packet).
//!
//! `wait` (ns-2's `wait_`, off by default here, on in ns-2's defaults): a
//! signal needs count p_i >= 1 (none before), then p_a = p_i / (2 - count
//! p_i), 1 from count p_i >= 2: drops are spread over [1/p_i, 2/p_i]
//! arrivals instead of [1, 1/p_i].
//!
//! `empty_gate` (ns-2's enqueue rule, off by default): no signal at all
//! while the waiting queue, the arrival excluded, holds at most one packet
//! (packet mode) or one byte (byte mode: it is empty); the count restarts
//! as below min_th. With a slow average (small w_q) this spares the
//! arrivals to a queue that has drained while the average is still high.
//!
//! `gentle_base` (`"current"` by default): the gentle line above max_th
//! runs from the max_p in force at max_th to 1 at 2 max_th. `"initial"` is
//! ns-2's `red.cc`, which computes that line once, from the configured max_p
//! (`1 / linterm_`), so an adaptive scheme's later max_p moves only the
//! region below max_th (see [`GentleBase`]).
//!
//! Regions of the average queue `avg` (in packets; in byte mode the byte
//! count divided by `mean_pkt_size`):
//! - `avg < min_th`: pass.
//! - `min_th <= avg < max_th`: signal with the count-based probability;
//!   cause [`Cause::Early`]; ECN-capable packets are marked when `ecn` is on.
//! - `avg >= max_th`: cause [`Cause::Forced`]. Without gentle every packet is
//!   signalled; with gentle the probability rises linearly to 1 at 2 max_th
//!   (eq. 2.4). `above_max = "drop"` drops (RED), `"mark"` marks ECN-capable
//!   packets when `ecn` is on (RED*).

use super::{Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// How RED measures the queue and scales the probability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedMode {
    /// Queue in packets; every packet has the same probability.
    Packet,
    /// Queue in bytes / mean_pkt_size; probability scaled by size / mean_pkt_size (eq. 2.5).
    Byte,
}

/// How byte-mode RED counts the arrivals since the last signal (eq. 2.6's count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ByteCount {
    /// ns-2 / ns-3: count = floor(bytes since the last signal /
    /// mean_pkt_size); the count correction is applied before the size
    /// scaling.
    #[default]
    Ns2,
    /// Eq. 2.5 then eq. 2.6 as written: scale by size, then correct with
    /// count in packets.
    Literal,
}

/// Where the gentle line above max_th starts (key `gentle_base`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GentleBase {
    /// From the max_p in force at max_th to 1 at 2 max_th (eq. 2.4; the
    /// Adaptive RED paper: the line moves with the adapted max_p).
    #[default]
    Current,
    /// From the configured (initial) max_p at max_th to 1 at 2 max_th,
    /// whatever max_p the adaptive rule has reached since: ns-2's RED
    /// computes the gentle line's slope and intercept once, from
    /// `1 / linterm_`, when the queue is set up, and its `updateMaxP` changes
    /// only the max_p of the region below max_th.
    Initial,
}

/// The count-based correction of RED's probability: shared by every scheme
/// that uses RED's drop function (RED, ARED, Auto-Tuning RED, AP-RED,
/// ST-RED, Feng's ARED). Keys `byte_count` and `wait`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RedCounting {
    /// Byte mode's count (ignored in packet mode). Default `"ns2"`.
    pub byte_count: ByteCount,
    /// ns-2's `wait_`: no signal before count p_i >= 1, then p_i / (2 -
    /// count p_i). Default off.
    pub wait: bool,
    /// ns-2's `qlen > 1` rule: no signal while the waiting queue holds at
    /// most one packet (packet mode) or one byte (byte mode). Default off.
    pub empty_gate: bool,
    /// Where the gentle line starts at max_th: the max_p in force
    /// (default) or the configured one (ns-2's adaptive RED).
    pub gentle_base: GentleBase,
    /// How an arrival that ends an idle period updates the average:
    /// Floyd and Jacobson's rule (default) or ns-2's.
    pub idle_decay: IdleDecay,
}

/// The average's update at an arrival to an idle link (key `idle_decay`),
/// the link idle since `q_time` and m = (now - q_time) / s for s the
/// transmission time of a mean-size packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IdleDecay {
    /// Floyd and Jacobson (1993), fig. 2: avg <- (1 - w_q)^m avg, m a
    /// linear function of the idle time (here not rounded); the arrival
    /// itself is not sampled.
    #[default]
    Floyd,
    /// ns-2's `red.cc`: m rounded down to whole packets, then the
    /// estimator runs m + 1 times with a queue of 0 (the idle packets and
    /// the arrival's own sample): avg <- (1 - w_q)^(floor(m) + 1) avg. An
    /// arrival just as the link goes idle (m = 0) is thus still one sample
    /// of an empty queue, where Floyd's rule leaves the average as it was.
    /// Where many short idle periods alternate with packets (ACK-clocked
    /// flows on a link that is not full), the average sits lower.
    Ns2,
    /// ns-2's rule as its clock rounds in some set-ups: an idle period of
    /// exactly k mean-size packet times counts k - 1 whole packets.
    ///
    /// ns-2 takes m = int(ptc * (now - idletime)) from clock readings in
    /// floating-point seconds, so for a period of exactly k packet times
    /// the product lands a rounding error above or below k, and `int`
    /// keeps k or k - 1. Such periods are common: ns-2's 540-byte data
    /// packets and 40-byte ACKs with `mean_pktsize_` 500 leave exactly one
    /// mean packet time between ACKs that arrive one data packet apart.
    /// Which way the rounding goes depends on the set-up, and within one
    /// it held for every such period traced: ns-2.35 at 50 Mbit/s and
    /// 100 ms (100 s, one second) truncated all 3286 (this rule), at
    /// 10 Mbit/s and 900 ms (300 s and 600 s) it kept 1348 of 1349
    /// (`Ns2`); docs/fidelity.md, item 20.
    #[serde(rename = "ns2-truncated")]
    Ns2Truncated,
}

impl RedCounting {
    /// Read `byte_count` and `wait`; `d` holds the defaults.
    pub fn decode(t: &mut Table, d: RedCounting) -> SpecResult<RedCounting> {
        let bc_default = match d.byte_count {
            ByteCount::Ns2 => "ns2",
            ByteCount::Literal => "literal",
        };
        Ok(RedCounting {
            byte_count: match t.choice("byte_count", &["ns2", "literal"], Some(bc_default))? {
                "literal" => ByteCount::Literal,
                _ => ByteCount::Ns2,
            },
            wait: t.bool("wait", d.wait)?,
            empty_gate: t.bool("empty_gate", d.empty_gate)?,
            gentle_base: match t.choice(
                "gentle_base",
                &["current", "initial"],
                Some(match d.gentle_base {
                    GentleBase::Current => "current",
                    GentleBase::Initial => "initial",
                }),
            )? {
                "initial" => GentleBase::Initial,
                _ => GentleBase::Current,
            },
            idle_decay: match t.choice(
                "idle_decay",
                &["floyd", "ns2", "ns2-truncated"],
                Some(match d.idle_decay {
                    IdleDecay::Floyd => "floyd",
                    IdleDecay::Ns2 => "ns2",
                    IdleDecay::Ns2Truncated => "ns2-truncated",
                }),
            )? {
                "ns2" => IdleDecay::Ns2,
                "ns2-truncated" => IdleDecay::Ns2Truncated,
                _ => IdleDecay::Floyd,
            },
        })
    }
}

/// What RED does to a signalled packet when the average is above max_th.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AboveMax {
    /// Drop, ECN-capable or not (RED; RFC 3168 section 7).
    Drop,
    /// Mark ECN-capable packets, drop the others (RED*).
    Mark,
}

/// RED's parameters. Defaults are those Floyd recommends ("RED: Discussions
/// of setting parameters", 1997) and ns-2 ships: min_th 5, max_th 15 packets,
/// max_p 0.1, w_q 0.002, gentle on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RedParams {
    /// Minimum threshold, packets (mean-size packets in byte mode).
    pub min_th: f64,
    /// Maximum threshold, packets (mean-size packets in byte mode).
    pub max_th: f64,
    /// Probability at max_th, in [0, 1].
    pub max_p: f64,
    /// EWMA weight of eq. 2.3, in (0, 1].
    pub w_q: f64,
    /// Gentle drop function of eq. 2.4 above max_th.
    pub gentle: bool,
    /// Queue measure and probability scaling.
    pub mode: RedMode,
    /// Typical packet size, bytes: normalises the byte-mode queue, scales the
    /// byte-mode probability and sets the idle-correction packet time.
    pub mean_pkt_size: u32,
    /// Mark ECN-capable packets instead of dropping them in the early region.
    pub ecn: bool,
    /// What happens above max_th.
    pub above_max: AboveMax,
    /// ns-2's `use_mark_p_` / `mark_p_`: an ECN-capable packet is marked only
    /// while the initial probability p_i is below `mark_p`, and dropped at
    /// higher probabilities. 1 (the default) marks at any probability; ns-2
    /// runs with 0.1 by default.
    pub mark_p: f64,
    /// The count of eq. 2.6 in byte mode, and ns-2's `wait`.
    #[serde(flatten)]
    pub counting: RedCounting,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            mode: RedMode::Packet,
            mean_pkt_size: 1000,
            ecn: false,
            above_max: AboveMax::Drop,
            mark_p: 1.0,
            counting: RedCounting::default(),
        }
    }
}

impl RedParams {
    /// Read the RED keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<RedParams> {
        let d = RedParams {
            mean_pkt_size: default_pkt_size,
            ..RedParams::default()
        };
        let p = RedParams {
            min_th: t.f64("min_th", d.min_th)?,
            max_th: t.f64("max_th", d.max_th)?,
            max_p: t.f64("max_p", d.max_p)?,
            w_q: t.f64("w_q", d.w_q)?,
            gentle: t.bool("gentle", d.gentle)?,
            mode: match t.choice("mode", &["packet", "byte"], Some("packet"))? {
                "byte" => RedMode::Byte,
                _ => RedMode::Packet,
            },
            mean_pkt_size: t.u32("mean_pkt_size", d.mean_pkt_size)?,
            ecn: t.bool("ecn", d.ecn)?,
            above_max: match t.choice("above_max", &["drop", "mark"], Some("drop"))? {
                "mark" => AboveMax::Mark,
                _ => AboveMax::Drop,
            },
            mark_p: t.f64("mark_p", d.mark_p)?,
            counting: RedCounting::decode(t, d.counting)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| crate::scenario::decode::join(path, k);
        check_range(&f("min_th"), self.min_th, 0.0, false, 1e9)?;
        check_range(&f("mark_p"), self.mark_p, 0.0, true, 1.0)?;
        check_range(&f("max_th"), self.max_th, 0.0, true, 1e9)?;
        if self.min_th >= self.max_th {
            return Err(SpecError::new(
                f("min_th"),
                format!("{} must be less than max_th ({})", self.min_th, self.max_th),
            ));
        }
        check_range(&f("max_p"), self.max_p, 0.0, false, 1.0)?;
        check_range(&f("w_q"), self.w_q, 0.0, true, 1.0)?;
        if self.mean_pkt_size == 0 {
            return Err(SpecError::new(
                f("mean_pkt_size"),
                "0 is not allowed; give a size in bytes >= 1",
            ));
        }
        Ok(())
    }
}

/// RED's counters are kept by the link (by verdict and cause); RED keeps its state.
#[derive(Clone, Debug)]
pub struct Red {
    p: RedParams,
    /// Average queue, packets (normalised in byte mode).
    avg: f64,
    /// Packets since the last signal (-1: none since the average fell below min_th).
    count: i64,
    /// Bytes of the packets `count` counts (byte mode, `byte_count = "ns2"`).
    count_bytes: u64,
    /// Start of the current idle period, if the link is idle.
    idle_since: Option<SimTime>,
    /// Transmission time of a typical packet, seconds (the idle correction's unit).
    pkt_time_s: f64,
    /// The configured max_p: where the gentle line starts with
    /// `gentle_base = "initial"`.
    max_p0: f64,
}

/// Initial probability p_i of eq. 2.4 (and the non-gentle step), in packet mode.
pub fn initial_prob(p: &RedParams, avg: f64) -> f64 {
    initial_prob_gentle_from(p, avg, p.max_p)
}

/// [`initial_prob`] with the gentle line starting at `gentle_at_max` at
/// max_th (`gentle_base`); below max_th the probability rises to the max_p
/// in force.
pub fn initial_prob_gentle_from(p: &RedParams, avg: f64, gentle_at_max: f64) -> f64 {
    if avg < p.min_th {
        0.0
    } else if avg < p.max_th {
        (avg - p.min_th) / (p.max_th - p.min_th) * p.max_p
    } else if p.gentle && avg < 2.0 * p.max_th {
        (avg - p.max_th) / p.max_th * (1.0 - gentle_at_max) + gentle_at_max
    } else {
        1.0
    }
}

/// Final probability of eq. 2.6: p_i / (1 - count p_i), 1 when the denominator vanishes.
pub fn final_prob(p_i: f64, count: i64) -> f64 {
    count_correction(p_i, count as f64, false)
}

/// The count correction for a count of `count` (packets, or mean-size
/// packets): eq. 2.6's p_i / (1 - count p_i) (1 from count p_i >= 1), or
/// with `wait` 0 below count p_i = 1, p_i / (2 - count p_i) up to 2, then 1.
pub fn count_correction(p_i: f64, count: f64, wait: bool) -> f64 {
    let cp = count * p_i;
    let p = if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_i / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_i / (1.0 - cp)
    } else {
        1.0
    };
    p.min(1.0)
}

/// The probability of signalling a packet of `size` bytes for initial
/// probability `p_i` (eq. 2.4), `count` packets and `count_bytes` bytes
/// since the last signal (this packet included), by the scheme's mode and
/// counting ([`RedCounting`]).
pub fn signal_prob(p: &RedParams, p_i: f64, size: u32, count: i64, count_bytes: u64) -> f64 {
    let wait = p.counting.wait;
    match (p.mode, p.counting.byte_count) {
        (RedMode::Packet, _) => count_correction(p_i, count as f64, wait),
        (RedMode::Byte, ByteCount::Literal) => {
            // eq. 2.5, then eq. 2.6 with count in packets
            let p_b = (p_i * size as f64 / p.mean_pkt_size as f64).min(1.0);
            count_correction(p_b, count as f64, wait)
        }
        (RedMode::Byte, ByteCount::Ns2) => {
            // The count in whole mean-size packets (ns-2 divides integers).
            let c = (count_bytes / p.mean_pkt_size as u64) as f64;
            let p_a = count_correction(p_i, c, wait);
            if p_a < 1.0 {
                (p_a * size as f64 / p.mean_pkt_size as f64).min(1.0)
            } else {
                p_a
            }
        }
    }
}

impl Red {
    pub fn new(p: RedParams, link: LinkInfo) -> Red {
        let pkt_time_s = p.mean_pkt_size as f64 * 8.0 / link.rate.bps() as f64;
        Red {
            max_p0: p.max_p,
            p,
            avg: 0.0,
            count: -1,
            count_bytes: 0,
            idle_since: Some(SimTime::ZERO),
            pkt_time_s,
        }
    }

    pub fn params(&self) -> &RedParams {
        &self.p
    }

    /// The initial probability p_i (eq. 2.4) for the average `avg` under
    /// the parameters in force, the gentle line starting where
    /// `gentle_base` says.
    pub fn p_i(&self, avg: f64) -> f64 {
        let gentle_at_max = match self.p.counting.gentle_base {
            GentleBase::Current => self.p.max_p,
            GentleBase::Initial => self.max_p0,
        };
        initial_prob_gentle_from(&self.p, avg, gentle_at_max)
    }

    /// For the adaptive variants: change max_p, the thresholds or w_q
    /// between packets. The average and count carry over.
    pub fn params_mut(&mut self) -> &mut RedParams {
        &mut self.p
    }

    /// Report the parameters the adaptive variants change (max_p, the
    /// thresholds and w_q) to `params.parquet`.
    pub fn report(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("max_p", self.p.max_p);
        out("min_th", self.p.min_th);
        out("max_th", self.p.max_th);
        out("w_q", self.p.w_q);
    }

    /// The current average queue (packets; mean-size packets in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The start of the idle period the next arrival will end, if any.
    pub fn idle_since(&self) -> Option<SimTime> {
        self.idle_since
    }

    /// Eq. 2.3 with Floyd and Jacobson's idle correction: called on every arrival.
    pub fn update_average(&mut self, now: SimTime, q: QueueLen) {
        let qn = match self.p.mode {
            RedMode::Packet => q.pkts as f64,
            RedMode::Byte => q.bytes as f64 / self.p.mean_pkt_size as f64,
        };
        match self.idle_since.take() {
            Some(since) if q.pkts == 0 && now >= since => {
                let m = now.saturating_sub(since).as_secs_f64() / self.pkt_time_s;
                match self.p.counting.idle_decay {
                    IdleDecay::Floyd => {
                        if m > 0.0 {
                            self.avg *= (1.0 - self.p.w_q).powf(m);
                        }
                    }
                    IdleDecay::Ns2 => self.avg *= (1.0 - self.p.w_q).powf(m.floor() + 1.0),
                    IdleDecay::Ns2Truncated => {
                        // Whole packet times strictly within the period.
                        let whole = (m * (1.0 - 1e-12) - 1e-9).floor().max(0.0);
                        self.avg *= (1.0 - self.p.w_q).powf(whole + 1.0)
                    }
                }
            }
            _ => {
                self.avg = (1.0 - self.p.w_q) * self.avg + self.p.w_q * qn;
            }
        }
    }

    /// `empty_gate`: the waiting queue is too short to signal (ns-2's
    /// qlen <= 1, in packets or in bytes by the mode).
    fn gated(&self, q: QueueLen) -> bool {
        match self.p.mode {
            RedMode::Packet => q.pkts <= 1,
            RedMode::Byte => q.bytes <= 1,
        }
    }

    /// The arrival's verdict once the average is up to date: `idle` is the
    /// idle mark the arrival found (taken before [`Red::update_average`]).
    /// Adaptive variants that change max_p between the average's update and
    /// the decision (ns-2's `updateMaxP` runs inside its estimator) call the
    /// two halves themselves.
    #[inline]
    pub fn arrival_verdict(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
        idle: Option<SimTime>,
    ) -> Verdict {
        let v = if self.p.counting.empty_gate && self.gated(q) {
            // ns-2: nothing is signalled into an (almost) empty queue, and
            // the count starts again.
            self.count = -1;
            self.count_bytes = 0;
            Verdict::Pass
        } else {
            self.decide(pkt, rng)
        };
        if let (Verdict::Drop(_), Some(since)) = (v, idle) {
            // Dropped on arrival to an empty system: the queue stays empty,
            // so the idle period goes on (Floyd and Jacobson's q_time is the
            // start of the idle period, not the last arrival). Without this,
            // later arrivals would decay the average only by the EWMA and
            // a small w_q could lock a high average in for minutes.
            if q.pkts == 0 {
                self.idle_since = Some(since.max(now));
            }
        }
        v
    }

    /// The signal decision for the current average (after `update_average`).
    fn decide(&mut self, pkt: &PacketInfo, rng: &mut Rng) -> Verdict {
        let p = &self.p;
        if self.avg < p.min_th {
            self.count = -1;
            self.count_bytes = 0;
            return Verdict::Pass;
        }
        let cause = if self.avg < p.max_th {
            Cause::Early
        } else {
            Cause::Forced
        };
        let p_i = self.p_i(self.avg);
        let signal = if p_i >= 1.0 {
            true
        } else {
            // The first packet above min_th starts the count at 0 (Floyd
            // and Jacobson's count = -1 start); later ones add themselves.
            if self.count >= 0 {
                self.count_bytes += pkt.size as u64;
            }
            self.count += 1;
            rng.bernoulli(signal_prob(p, p_i, pkt.size, self.count, self.count_bytes))
        };
        if !signal {
            return Verdict::Pass;
        }
        self.count = 0;
        self.count_bytes = 0;
        let may_mark = p.ecn
            && pkt.ect
            && (cause == Cause::Early || p.above_max == AboveMax::Mark)
            && (p.mark_p >= 1.0 || p_i < p.mark_p);
        if may_mark {
            Verdict::Mark(cause)
        } else {
            Verdict::Drop(cause)
        }
    }
}

/// For RED variants that wrap a [`Red`] in a field `red` and only adapt its
/// parameters: the per-packet hooks and the average are RED's own.
macro_rules! delegate_to_red {
    () => {
        #[inline]
        fn on_enqueue(
            &mut self,
            now: SimTime,
            pkt: &PacketInfo,
            q: QueueLen,
            rng: &mut Rng,
        ) -> Verdict {
            self.red.on_enqueue(now, pkt, q, rng)
        }

        $crate::aqm::red::delegate_to_red!(but_enqueue);
    };
    // Everything but `on_enqueue`, for a variant that acts on arrivals too.
    (but_enqueue) => {
        #[inline]
        fn on_dequeue(
            &mut self,
            now: SimTime,
            pkt: &PacketInfo,
            q: QueueLen,
            tx_end: SimTime,
        ) -> Verdict {
            self.red.on_dequeue(now, pkt, q, tx_end)
        }

        fn average(&self) -> Option<f64> {
            Some(self.red.avg())
        }

        /// RED's own parameters may be changed mid-run; the scheme adapts
        /// on from the new values.
        fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
            self.red.set_param(key, value)
        }
    };
}
pub(crate) use delegate_to_red;

impl Aqm for Red {
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        let idle = self.idle_since;
        self.update_average(now, q);
        self.arrival_verdict(now, pkt, q, rng, idle)
    }

    fn on_dequeue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        q: QueueLen,
        tx_end: SimTime,
    ) -> Verdict {
        if q.pkts == 0 {
            // The link goes idle when this packet's transmission ends, unless
            // another arrives first (then the arrival sees a non-empty system
            // and `update_average` discards this mark as soon as it runs).
            self.idle_since = Some(tx_end);
        }
        Verdict::Pass
    }

    fn average(&self) -> Option<f64> {
        Some(self.avg)
    }

    /// `min_th`, `max_th`, `max_p` and `w_q` may change during a run; the
    /// average and count carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        let mut p = self.p.clone();
        match key {
            "min_th" => p.min_th = value,
            "max_th" => p.max_th = value,
            "max_p" => p.max_p = value,
            "w_q" => p.w_q = value,
            _ => {
                return Err(format!(
                    "RED cannot change `{key}` during a run; allowed: min_th, max_th, max_p, w_q"
                ))
            }
        }
        p.validate("").map_err(|e| e.msg)?;
        self.p = p;
        Ok(())
    }

    fn set_link(&mut self, _now: SimTime, link: &LinkInfo) {
        self.pkt_time_s = self.p.mean_pkt_size as f64 * 8.0 / link.rate.bps() as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::units::BitRate;

    fn link() -> LinkInfo {
        LinkInfo::new(BitRate(10_000_000), 500)
    }
    fn params() -> RedParams {
        RedParams {
            min_th: 20.0,
            max_th: 60.0,
            max_p: 0.1,
            w_q: 0.002,
            mean_pkt_size: 500,
            ..RedParams::default()
        }
    }
    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 500,
        }
    }

    #[test]
    fn average_update_eq_2_3() {
        let mut r = Red::new(params(), link());
        r.idle_since = None;
        r.update_average(SimTime::ZERO, q(10));
        assert!((r.avg - 0.02).abs() < 1e-15);
        r.update_average(SimTime::ZERO, q(10));
        // 0.998 * 0.02 + 0.002 * 10 = 0.03996
        assert!((r.avg - 0.03996).abs() < 1e-15);
    }

    #[test]
    fn idle_correction() {
        let mut r = Red::new(params(), link());
        r.avg = 10.0;
        // Typical packet time: 500 B at 10 Mb/s = 400 us; idle 40 ms = 100 packet times.
        r.idle_since = Some(SimTime::from_millis(1));
        r.update_average(SimTime::from_millis(41), q(0));
        // 10 * 0.998^100 = 8.18566...
        assert!((r.avg - 8.185_668_046).abs() < 1e-6, "{}", r.avg);
        // The next arrival to a non-idle queue uses eq. 2.3 again.
        r.update_average(SimTime::from_millis(42), q(3));
        assert!((r.avg - (0.998 * 8.185_668_046 + 0.006)).abs() < 1e-6);
    }

    /// ns-2's idle rule: m rounded down, then m + 1 samples of an empty
    /// queue; an arrival as the link goes idle is one such sample, where
    /// Floyd's rule leaves the average alone.
    #[test]
    fn idle_decay_ns2_rounds_down_and_samples_the_arrival() {
        let mut p = params();
        p.counting.idle_decay = IdleDecay::Ns2;
        let mut r = Red::new(p, link());
        let mut floyd = Red::new(params(), link());
        for (idle_us, steps_ns2, steps_floyd) in [
            (0, 1.0, 0.0),
            (399, 1.0, 0.9975),
            (400, 2.0, 1.0),
            (41_000, 103.0, 102.5),
        ] {
            for (red, steps) in [(&mut r, steps_ns2), (&mut floyd, steps_floyd)] {
                red.avg = 10.0;
                red.idle_since = Some(SimTime::from_millis(1));
                red.update_average(SimTime::from_micros(1000 + idle_us), q(0));
                let want = 10.0 * 0.998f64.powf(steps);
                assert!(
                    (red.avg - want).abs() < 1e-12,
                    "idle {idle_us} us: {} against {want}",
                    red.avg
                );
            }
        }
        // An arrival while the last packet is still on the wire is an
        // ordinary sample under both rules.
        r.avg = 10.0;
        r.idle_since = Some(SimTime::from_millis(2));
        r.update_average(SimTime::from_millis(1), q(0));
        assert!((r.avg - 9.98).abs() < 1e-12);
    }

    /// `ns2-truncated`: a period of exactly k packet times counts k - 1
    /// (400 us is one 500-byte packet time at 10 Mbit/s); other periods as
    /// `ns2`.
    #[test]
    fn idle_decay_ns2_truncated_counts_exact_periods_one_short() {
        let mut p = params();
        p.counting.idle_decay = IdleDecay::Ns2Truncated;
        let mut r = Red::new(p, link());
        for (idle_us, steps) in [
            (0, 1.0),
            (399, 1.0),
            (400, 1.0),
            (401, 2.0),
            (800, 2.0),
            (40_800, 102.0),
            (40_801, 103.0),
            (41_000, 103.0),
        ] {
            r.avg = 10.0;
            r.idle_since = Some(SimTime::from_millis(1));
            r.update_average(SimTime::from_nanos(1_000_000 + idle_us * 1000), q(0));
            let want = 10.0 * 0.998f64.powf(steps);
            assert!(
                (r.avg - want).abs() < 1e-12,
                "idle {idle_us} us: {} against {want}",
                r.avg
            );
        }
    }

    #[test]
    fn idle_decay_key() {
        use crate::scenario::value::Value;
        let decode = |text: &str| {
            let v: Value = toml::from_str(text).unwrap();
            let mut t = Table::new(v, "aqm").unwrap();
            RedParams::decode(&mut t, 500).map(|p| p.counting.idle_decay)
        };
        assert_eq!(decode("").unwrap(), IdleDecay::Floyd);
        assert_eq!(decode("idle_decay = \"ns2\"").unwrap(), IdleDecay::Ns2);
        assert_eq!(
            decode("idle_decay = \"ns2-truncated\"").unwrap(),
            IdleDecay::Ns2Truncated
        );
        let e = decode("idle_decay = \"exact\"").unwrap_err().to_string();
        assert!(e.contains("aqm.idle_decay") && e.contains("floyd"), "{e}");
    }

    #[test]
    fn dropped_arrival_keeps_the_link_idle() {
        let mut p = params();
        p.gentle = false;
        let mut r = Red::new(p, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        r.avg = 100.0;
        r.idle_since = Some(SimTime::from_millis(10));
        // An arrival during the last transmission (idle from 10 ms) is
        // dropped (avg >= max_th): the idle mark stays.
        assert!(matches!(
            r.on_enqueue(SimTime::from_millis(9), &pkt, q(0), &mut rng),
            Verdict::Drop(_)
        ));
        assert_eq!(r.idle_since, Some(SimTime::from_millis(10)));
        // That arrival moved the average by eq. 2.3 (q = 0): 99.8. 40 ms =
        // 100 packet times after the idle start: 99.8 * 0.998^100 = 81.69
        // (still dropped); the idle period goes on from now.
        r.on_enqueue(SimTime::from_millis(50), &pkt, q(0), &mut rng);
        assert!((r.avg - 99.8 * 0.818_566_804_6).abs() < 1e-6, "{}", r.avg);
        assert_eq!(r.idle_since, Some(SimTime::from_millis(50)));
        // Another 400 ms: 81.69 * 0.998^1000 = 11.01 < max_th: the decay
        // lets packets in again.
        r.on_enqueue(SimTime::from_millis(450), &pkt, q(0), &mut rng);
        assert!(r.avg < 60.0);
    }

    #[test]
    fn dequeue_to_empty_starts_idle_at_tx_end() {
        let mut r = Red::new(params(), link());
        r.idle_since = None;
        r.avg = 5.0;
        let pkt = PacketInfo {
            size: 500,
            ect: false,
            flow: 0,
            ..PacketInfo::default()
        };
        r.on_dequeue(
            SimTime::from_millis(10),
            &pkt,
            q(0),
            SimTime::from_micros(10_400),
        );
        // Arrival 400 us after the end of transmission: m = 1.
        r.update_average(SimTime::from_micros(10_800), q(0));
        assert!((r.avg - 5.0 * 0.998).abs() < 1e-12);
    }

    #[test]
    fn idle_period_survives_a_dropped_arrival() {
        let mut p = params();
        p.gentle = false;
        let mut r = Red::new(p, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        r.avg = 100.0;
        r.idle_since = Some(SimTime::ZERO);
        // Idle 40 ms = 100 packet times of 400 us: avg = 100 * 0.998^100
        // = 81.8567 >= max_th (60), not gentle: forced drop.
        let v = r.on_enqueue(SimTime::from_millis(40), &pkt, q(0), &mut rng);
        assert_eq!(v, Verdict::Drop(Cause::Forced));
        assert!((r.avg - 81.856_680_46).abs() < 1e-6, "{}", r.avg);
        // The next arrival, 40 ms later, still sees an idle link: decayed
        // over those 100 packet times (100 * 0.998^200 = 67.0052), not by
        // one EWMA step (81.69).
        r.update_average(SimTime::from_millis(80), q(0));
        assert!((r.avg - 67.005_161_37).abs() < 1e-6, "{}", r.avg);
    }

    #[test]
    fn drop_function_eq_2_4() {
        let mut p = params();
        assert_eq!(initial_prob(&p, 10.0), 0.0);
        assert!((initial_prob(&p, 40.0) - 0.05).abs() < 1e-15);
        // gentle region: (90 - 60) / 60 * 0.9 + 0.1 = 0.55
        assert!((initial_prob(&p, 90.0) - 0.55).abs() < 1e-15);
        assert_eq!(initial_prob(&p, 120.0), 1.0);
        p.gentle = false;
        assert_eq!(initial_prob(&p, 60.0), 1.0);
    }

    /// ns-2's adaptive RED fixes the gentle line when the queue is set up
    /// (from `1 / linterm_`); `gentle_base = "initial"` reproduces that, the
    /// default moves the line with the adapted max_p.
    #[test]
    fn gentle_line_from_the_configured_or_the_current_max_p() {
        let mut p = params(); // min_th 20, max_th 60, max_p 0.1
        p.counting.gentle_base = GentleBase::Initial;
        let mut ns2 = Red::new(p.clone(), link());
        p.counting.gentle_base = GentleBase::Current;
        let mut cur = Red::new(p, link());
        for r in [&mut ns2, &mut cur] {
            r.params_mut().max_p = 0.01; // as an adaptive rule would
                                         // Below max_th both use the max_p in force: 20 / 40 * 0.01.
            assert!((r.p_i(40.0) - 0.005).abs() < 1e-15);
            assert_eq!(r.p_i(120.0), 1.0);
        }
        // Above max_th: (90 - 60) / 60 * (1 - 0.1) + 0.1 = 0.55 from the
        // configured 0.1; (90 - 60) / 60 * 0.99 + 0.01 = 0.505 from 0.01.
        assert!((ns2.p_i(90.0) - 0.55).abs() < 1e-15);
        assert!((cur.p_i(90.0) - 0.505).abs() < 1e-15);
        // At max_th ns-2's probability jumps from 0.01 to 0.1.
        assert!((ns2.p_i(59.999_999) - 0.01).abs() < 1e-6);
        assert!((ns2.p_i(60.0) - 0.1).abs() < 1e-15);
        assert!((cur.p_i(60.0) - 0.01).abs() < 1e-15);
    }

    #[test]
    fn gentle_base_key() {
        use crate::scenario::value::Value;
        let decode = |text: &str| {
            let v: Value = toml::from_str(text).unwrap();
            let mut t = Table::new(v, "aqm").unwrap();
            RedParams::decode(&mut t, 500).map(|p| p.counting.gentle_base)
        };
        assert_eq!(decode("").unwrap(), GentleBase::Current);
        assert_eq!(
            decode("gentle_base = \"current\"").unwrap(),
            GentleBase::Current
        );
        assert_eq!(
            decode("gentle_base = \"initial\"").unwrap(),
            GentleBase::Initial
        );
        let e = decode("gentle_base = \"max_p\"").unwrap_err().to_string();
        assert!(
            e.contains("aqm.gentle_base") && e.contains("initial"),
            "{e}"
        );
    }

    #[test]
    fn count_based_probability_eq_2_6() {
        assert!((final_prob(0.05, 0) - 0.05).abs() < 1e-15);
        assert!((final_prob(0.05, 10) - 0.1).abs() < 1e-15);
        assert!((final_prob(0.05, 19) - 1.0).abs() < 1e-12);
        assert_eq!(final_prob(0.05, 25), 1.0);
    }

    #[test]
    fn byte_mode_scales_queue_and_probability() {
        let mut p = params();
        p.mode = RedMode::Byte;
        p.w_q = 1.0;
        let mut r = Red::new(p, link());
        r.idle_since = None;
        // 20000 bytes queued = 40 mean-size packets.
        r.update_average(
            SimTime::ZERO,
            QueueLen {
                pkts: 10,
                bytes: 20_000,
            },
        );
        assert_eq!(r.avg, 40.0);
        // p_i = 0.05; a 1000-byte packet gets 0.1 (eq. 2.5); count 0 keeps it.
        // Over many independent draws at count 0 the frequency is 0.1.
        let mut rng = Rng::new(3, Stream::Aqm(0));
        let big = PacketInfo {
            size: 1000,
            ect: false,
            flow: 0,
            ..PacketInfo::default()
        };
        let small = PacketInfo {
            size: 250,
            ect: false,
            flow: 0,
            ..PacketInfo::default()
        };
        let n = 200_000;
        let (mut hb, mut hs) = (0, 0);
        for _ in 0..n {
            r.count = -1;
            if r.decide(&big, &mut rng) != Verdict::Pass {
                hb += 1;
            }
            r.count = -1;
            if r.decide(&small, &mut rng) != Verdict::Pass {
                hs += 1;
            }
        }
        assert!((hb as f64 / n as f64 - 0.1).abs() < 0.003, "{hb}");
        assert!((hs as f64 / n as f64 - 0.025).abs() < 0.002, "{hs}");
    }

    /// Byte mode's count, by hand: p_i = 0.05 (avg 40 of ARED(20, 60),
    /// max_p 0.1), mean_pkt_size 500; since the last drop 10 ACKs of 40
    /// bytes and one 500-byte data packet arrived (this one included).
    #[test]
    fn byte_count_ns2_vs_literal_by_hand() {
        let mut p = params();
        p.mode = RedMode::Byte;
        // ns-2: 10 x 40 + 500 = 900 bytes = 1 whole mean-size packet:
        // 0.05 / (1 - 0.05) = 0.0526316, times 500 / 500.
        let ns2 = signal_prob(&p, 0.05, 500, 11, 900);
        assert!((ns2 - 0.05 / 0.95).abs() < 1e-15, "{ns2}");
        // An ACK at 440 bytes (count 0): 0.05 x 40 / 500 = 0.004.
        assert!((signal_prob(&p, 0.05, 40, 10, 440) - 0.004).abs() < 1e-15);
        // Literal eq. 2.5-2.6: count = 11 packets: 0.05 / (1 - 0.55) = 0.1111.
        p.counting.byte_count = ByteCount::Literal;
        let lit = signal_prob(&p, 0.05, 500, 11, 900);
        assert!((lit - 0.05 / 0.45).abs() < 1e-15, "{lit}");
        // The ACK: p_b = 0.004, count 10: 0.004 / 0.96 = 0.0041667.
        assert!((signal_prob(&p, 0.05, 40, 10, 440) - 0.004 / 0.96).abs() < 1e-15);
        // Packet mode ignores the bytes: 0.05 / (1 - 0.55).
        p.mode = RedMode::Packet;
        assert!((signal_prob(&p, 0.05, 40, 11, 900) - 0.05 / 0.45).abs() < 1e-15);
        // ns-2 floors the byte count: 999 bytes is 1 mean-size packet, 1000 is 2.
        p.mode = RedMode::Byte;
        p.counting.byte_count = ByteCount::Ns2;
        assert!((signal_prob(&p, 0.05, 500, 3, 999) - 0.05 / 0.95).abs() < 1e-15);
        assert!((signal_prob(&p, 0.05, 500, 3, 1000) - 0.05 / 0.9).abs() < 1e-15);
        // A 1000-byte packet at count 19 mean-size packets: 0.05 / 0.05 = 1, not scaled.
        assert_eq!(signal_prob(&p, 0.05, 1000, 5, 9500), 1.0);
    }

    /// The arrivals RED counts: the first packet above min_th starts at
    /// count 0 (no bytes); each later one adds itself; a signal resets both.
    #[test]
    fn byte_count_accumulates_and_resets() {
        let mut p = params();
        p.mode = RedMode::Byte;
        let mut r = Red::new(p, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ack = PacketInfo {
            size: 40,
            ..PacketInfo::default()
        };
        let data = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        // avg = min_th: p_i = 0, counted but never signalled.
        r.avg = 20.0;
        assert_eq!(r.decide(&data, &mut rng), Verdict::Pass);
        assert_eq!((r.count, r.count_bytes), (0, 0));
        for _ in 0..10 {
            r.decide(&ack, &mut rng);
        }
        r.decide(&data, &mut rng);
        assert_eq!((r.count, r.count_bytes), (11, 900));
        // Far above: p_i = 1 (not gentle region end), a forced signal resets.
        r.avg = 200.0;
        assert!(matches!(r.decide(&data, &mut rng), Verdict::Drop(_)));
        assert_eq!((r.count, r.count_bytes), (0, 0));
        // Below min_th: back to the -1 start.
        r.avg = 10.0;
        r.decide(&data, &mut rng);
        assert_eq!((r.count, r.count_bytes), (-1, 0));
    }

    /// ns-2's `wait`: nothing before count p_i = 1, then p_i / (2 - count
    /// p_i), certain from count p_i = 2.
    #[test]
    fn wait_spreads_drops_over_1_to_2_over_p() {
        assert_eq!(count_correction(0.05, 10.0, true), 0.0);
        assert_eq!(count_correction(0.05, 19.0, true), 0.0);
        assert!((count_correction(0.05, 20.0, true) - 0.05).abs() < 1e-15);
        assert!((count_correction(0.05, 30.0, true) - 0.1).abs() < 1e-15);
        assert_eq!(count_correction(0.05, 40.0, true), 1.0);
        // Without wait: eq. 2.6.
        assert!((count_correction(0.05, 10.0, false) - 0.1).abs() < 1e-15);
        assert_eq!(count_correction(0.05, 20.0, false), 1.0);
        // Over many cycles with wait the mean gap between signals lies in
        // [1 / p_i, 2 / p_i] = [20, 40]; without wait in [1, 20].
        let mut rng = Rng::new(5, Stream::Aqm(0));
        for (wait, lo, hi) in [(true, 20.0, 40.0), (false, 1.0, 20.0)] {
            let (mut count, mut gaps, mut n) = (0i64, 0i64, 0);
            for _ in 0..200_000 {
                count += 1;
                if rng.bernoulli(count_correction(0.05, count as f64, wait)) {
                    gaps += count;
                    n += 1;
                    count = 0;
                }
            }
            let mean = gaps as f64 / n as f64;
            assert!(mean > lo && mean < hi, "wait {wait}: mean gap {mean}");
        }
    }

    /// `empty_gate`: an arrival to an empty byte-mode queue (or to at most
    /// one waiting packet in packet mode) is never signalled, even far
    /// above max_th, and the count restarts; without the gate it is.
    #[test]
    fn empty_gate_spares_an_empty_queue() {
        let mut p = params();
        p.gentle = false;
        p.mode = RedMode::Byte;
        p.counting.empty_gate = true;
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let mut r = Red::new(p.clone(), link());
        r.idle_since = None;
        r.avg = 100.0;
        r.count = 7;
        let empty = QueueLen { pkts: 0, bytes: 0 };
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &pkt, empty, &mut rng),
            Verdict::Pass
        );
        assert_eq!((r.count, r.count_bytes), (-1, 0));
        // One waiting packet: signalled in byte mode (forced, avg >= max_th) ...
        let one = q(1);
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &pkt, one, &mut rng),
            Verdict::Drop(Cause::Forced)
        );
        // ... but not in packet mode (ns-2's qlen > 1 in packets).
        p.mode = RedMode::Packet;
        let mut r = Red::new(p.clone(), link());
        r.idle_since = None;
        r.avg = 100.0;
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &pkt, one, &mut rng),
            Verdict::Pass
        );
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &pkt, q(2), &mut rng),
            Verdict::Drop(Cause::Forced)
        );
        // Without the gate the empty queue's arrival is dropped.
        p.counting.empty_gate = false;
        let mut r = Red::new(p, link());
        r.idle_since = None;
        r.avg = 100.0;
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &pkt, empty, &mut rng),
            Verdict::Drop(Cause::Forced)
        );
    }

    #[test]
    fn ecn_marks_and_above_max_switch() {
        let mut p = params();
        p.ecn = true;
        p.gentle = false;
        let mut r = Red::new(p.clone(), link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ect = PacketInfo {
            size: 500,
            ect: true,
            flow: 0,
            ..PacketInfo::default()
        };
        let not_ect = PacketInfo {
            size: 500,
            ect: false,
            flow: 0,
            ..PacketInfo::default()
        };
        r.avg = 70.0;
        assert_eq!(r.decide(&ect, &mut rng), Verdict::Drop(Cause::Forced));
        r.p.above_max = AboveMax::Mark;
        assert_eq!(r.decide(&ect, &mut rng), Verdict::Mark(Cause::Forced));
        assert_eq!(r.decide(&not_ect, &mut rng), Verdict::Drop(Cause::Forced));
        // Early region: count makes the 20th packet certain at p_i = 0.05.
        r.avg = 40.0;
        r.count = 18;
        assert_eq!(r.decide(&ect, &mut rng), Verdict::Mark(Cause::Early));
        assert_eq!(r.count, 0);
    }

    /// ns-2's `use_mark_p_` (`mark_p = 0.1`): an ECN-capable packet is
    /// marked while p_i < 0.1 and dropped above. max_p 0.5 (as ARED adapts
    /// it): avg 24 gives p_i = (24 - 20) / 40 x 0.5 = 0.05, a mark; avg 40
    /// gives 0.25, a drop. The count makes each packet certain to be
    /// signalled (count p_i reaches 1).
    #[test]
    fn mark_p_drops_ect_packets_at_high_probability() {
        let mut p = params();
        p.ecn = true;
        p.max_p = 0.5;
        p.mark_p = 0.1;
        let mut r = Red::new(p, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ect = PacketInfo {
            size: 500,
            ect: true,
            flow: 0,
            ..PacketInfo::default()
        };
        r.avg = 24.0;
        r.count = 18;
        assert_eq!(r.decide(&ect, &mut rng), Verdict::Mark(Cause::Early));
        r.avg = 40.0;
        r.count = 3;
        assert_eq!(r.decide(&ect, &mut rng), Verdict::Drop(Cause::Early));
        // The default (1) marks at any probability.
        r.p.mark_p = 1.0;
        r.count = 3;
        assert_eq!(r.decide(&ect, &mut rng), Verdict::Mark(Cause::Early));
        let mut bad = params();
        bad.mark_p = 0.0;
        assert_eq!(bad.validate("aqm").unwrap_err().path, "aqm.mark_p");
    }

    #[test]
    fn validation_names_fields() {
        let mut p = params();
        p.min_th = 70.0;
        let e = p.validate("aqm").unwrap_err();
        assert_eq!(e.path, "aqm.min_th");
        let mut p = params();
        p.w_q = 0.0;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.w_q");
        let mut p = params();
        p.max_p = 1.5;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.max_p");
    }
}
