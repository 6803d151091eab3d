//! Measurement: link counters, the time-weighted queue monitor, the queue
//! time series, and summary statistics.

pub mod pcap;

use crate::units::SimTime;
use serde::Serialize;

/// Counters of one link's queue, split by reason (STYLE.md: Linux's
/// early/forced/overflow split). Cumulative from the start of the run.
///
/// `repr(C)`: the counters every packet moves come first, in one cache
/// line ([`crate::net::link::Link`] starts them at a line's start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[repr(C)]
pub struct LinkStats {
    /// Sum of queueing delays of departed packets, ns.
    pub sojourn_ns: u128,
    /// Packets offered to the queue.
    pub arrivals: u64,
    pub arrival_bytes: u64,
    /// Data segments (TCP data, UDP datagrams) offered to the queue, and
    /// those of them dropped (AQM or buffer): the loss of data as the flows
    /// see it, without the pure ACKs and handshakes among the arrivals.
    pub data_arrivals: u64,
    /// Packets that started transmission.
    pub departures: u64,
    pub departure_bytes: u64,
    pub data_drops: u64,
    /// Dropped by the AQM in its early (probabilistic) region.
    pub drops_early: u64,
    /// Dropped by the AQM above its hard limit (RED: avg >= max_th).
    pub drops_forced: u64,
    /// Dropped because the buffer was full.
    pub drops_overflow: u64,
    /// CE-marked in the early region.
    pub marks_early: u64,
    /// CE-marked above the hard limit (RED*).
    pub marks_forced: u64,
    /// Lost on the wire by the link's loss model (after the queue).
    pub lost: u64,
    /// Marks (early and forced) and drops (early, forced and overflow) by
    /// the codepoint the packet carried when it was signalled, indexed by
    /// [`crate::packet::Ecn::index`]: not-ECT, ECT(1), ECT(0), CE (a mark
    /// of a packet already CE counts under CE). Counted where the packet is
    /// at hand: on every link but a cut-through one (never monitored).
    pub marks_by_ecn: [u64; 4],
    pub drops_by_ecn: [u64; 4],
}

impl LinkStats {
    pub fn drops(&self) -> u64 {
        self.drops_early + self.drops_forced + self.drops_overflow
    }
    pub fn marks(&self) -> u64 {
        self.marks_early + self.marks_forced
    }
    /// Field-wise difference `self - earlier`.
    pub fn since(&self, e: &LinkStats) -> LinkStats {
        LinkStats {
            arrivals: self.arrivals - e.arrivals,
            arrival_bytes: self.arrival_bytes - e.arrival_bytes,
            departures: self.departures - e.departures,
            departure_bytes: self.departure_bytes - e.departure_bytes,
            drops_early: self.drops_early - e.drops_early,
            drops_forced: self.drops_forced - e.drops_forced,
            drops_overflow: self.drops_overflow - e.drops_overflow,
            marks_early: self.marks_early - e.marks_early,
            marks_forced: self.marks_forced - e.marks_forced,
            lost: self.lost - e.lost,
            sojourn_ns: self.sojourn_ns - e.sojourn_ns,
            data_arrivals: self.data_arrivals - e.data_arrivals,
            data_drops: self.data_drops - e.data_drops,
            marks_by_ecn: std::array::from_fn(|i| self.marks_by_ecn[i] - e.marks_by_ecn[i]),
            drops_by_ecn: std::array::from_fn(|i| self.drops_by_ecn[i] - e.drops_by_ecn[i]),
        }
    }
    /// `self + (later - earlier)` field by field: a periodic phase's
    /// counters at its start moved on by what a gap between two of its
    /// windows counted, so that the differences at its end count its
    /// windows only. Every field is named, so a new one is not forgotten.
    pub fn plus_since(&self, later: &LinkStats, earlier: &LinkStats) -> LinkStats {
        let LinkStats {
            sojourn_ns,
            arrivals,
            arrival_bytes,
            data_arrivals,
            departures,
            departure_bytes,
            data_drops,
            drops_early,
            drops_forced,
            drops_overflow,
            marks_early,
            marks_forced,
            lost,
            marks_by_ecn,
            drops_by_ecn,
        } = later.since(earlier);
        LinkStats {
            sojourn_ns: self.sojourn_ns + sojourn_ns,
            arrivals: self.arrivals + arrivals,
            arrival_bytes: self.arrival_bytes + arrival_bytes,
            data_arrivals: self.data_arrivals + data_arrivals,
            departures: self.departures + departures,
            departure_bytes: self.departure_bytes + departure_bytes,
            data_drops: self.data_drops + data_drops,
            drops_early: self.drops_early + drops_early,
            drops_forced: self.drops_forced + drops_forced,
            drops_overflow: self.drops_overflow + drops_overflow,
            marks_early: self.marks_early + marks_early,
            marks_forced: self.marks_forced + marks_forced,
            lost: self.lost + lost,
            marks_by_ecn: std::array::from_fn(|i| self.marks_by_ecn[i] + marks_by_ecn[i]),
            drops_by_ecn: std::array::from_fn(|i| self.drops_by_ecn[i] + drops_by_ecn[i]),
        }
    }
}

/// Time integrals of the queue length over an interval (exact integers).
#[derive(Clone, Copy, Debug, Default)]
struct Integrals {
    /// ∫ q dt, packet·ns.
    q: u128,
    /// ∫ q² dt, packet²·ns.
    q2: u128,
    /// ∫ bytes dt, byte·ns.
    b: u128,
    /// ∫ bytes² dt, byte²·ns.
    b2: u128,
    /// Length of the interval, ns.
    t: u64,
}

impl Integrals {
    #[inline(always)]
    fn add(&mut self, pkts: u32, bytes: u64, dt: u64) {
        // Products of 64-bit factors (p² < 2^64), each one multiplication.
        let p = u64::from(pkts);
        let wide = |x: u64| x as u128 * dt as u128;
        self.q += wide(p);
        self.q2 += wide(p * p);
        self.b += wide(bytes);
        let bb = bytes as u128 * bytes as u128;
        let b2 = match u64::try_from(bb) {
            Ok(bb) => wide(bb),
            Err(_) => bb.saturating_mul(dt as u128),
        };
        self.b2 = self.b2.saturating_add(b2);
        self.t += dt;
    }
    /// Add the integrals of a later stretch of time (the sums are exact,
    /// and both saturate at the same bound, so splitting changes nothing).
    fn absorb(&mut self, o: &Integrals) {
        self.q += o.q;
        self.q2 += o.q2;
        self.b += o.b;
        self.b2 = self.b2.saturating_add(o.b2);
        self.t += o.t;
    }
    fn mean(&self) -> f64 {
        if self.t == 0 {
            0.0
        } else {
            self.q as f64 / self.t as f64
        }
    }
    fn mean_bytes(&self) -> f64 {
        if self.t == 0 {
            0.0
        } else {
            self.b as f64 / self.t as f64
        }
    }
    fn std(&self) -> f64 {
        if self.t == 0 {
            return 0.0;
        }
        let m = self.mean();
        (self.q2 as f64 / self.t as f64 - m * m).max(0.0).sqrt()
    }
    fn std_bytes(&self) -> f64 {
        if self.t == 0 {
            return 0.0;
        }
        let m = self.mean_bytes();
        (self.b2 as f64 / self.t as f64 - m * m).max(0.0).sqrt()
    }
}

/// Time-weighted statistics of one queue over measurement intervals (the
/// main one and any phases, which may overlap): updated at every change of
/// the queue length. Deviation windows are cut exactly at their boundaries.
#[derive(Clone, Debug, Default)]
pub struct QueueMonitor {
    /// The AQM's adapted parameters over time.
    pub params: ParamSeries,
    /// Drops and marks, when `metrics.trace` is on.
    pub trace: Option<LinkTrace>,
    /// The first packets to leave the queue, when `metrics.pcap` captures
    /// this link.
    pub capture: Option<Box<pcap::Capture>>,
    last: SimTime,
    pkts: u32,
    bytes: u64,
    accs: Vec<IntervalAcc>,
    /// Indices into `accs` of the intervals in progress.
    active: Vec<usize>,
    /// `metrics.group_delays`: each flow's traffic group (by flow number),
    /// whose packets' sojourn times are also kept per group.
    group_of: Option<Box<[u32]>>,
}

/// The drops and marks of one link: (time, flow, what, packet kind), at
/// most `limit`.
#[derive(Clone, Debug, Default)]
pub struct LinkTrace {
    pub events: Vec<(SimTime, u32, &'static str, &'static str)>,
    pub limit: u64,
    /// Events past the limit (counted, not kept).
    pub missed: u64,
}

/// The event trace of a run: one row per drop or mark on a monitored link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EventTrace {
    pub time_s: Vec<f64>,
    pub link: Vec<String>,
    pub flow: Vec<u32>,
    /// `drop-early`, `drop-forced`, `drop-overflow`, `mark-early`,
    /// `mark-forced` or `lost` (on the wire, by the link's loss model).
    pub event: Vec<&'static str>,
    /// The packet: `data`, `ack`, `syn`, `syn-ack`, `request` or `fin`
    /// ([`crate::packet::kind_name`]).
    pub packet: Vec<&'static str>,
}

/// Samples of chosen flows' TCP state (`metrics.flow_series`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSeries {
    pub time_s: Vec<f64>,
    pub flow: Vec<u32>,
    /// Congestion window and slow-start threshold, segments.
    pub cwnd: Vec<f64>,
    pub ssthresh: Vec<f64>,
    /// Smoothed RTT estimate and retransmission timeout, seconds.
    pub srtt_s: Vec<f64>,
    pub rto_s: Vec<f64>,
    /// Payload delivered in order since the previous sample, bit/s.
    pub delivery_rate_bps: Vec<f64>,
    /// Payload of the data segments sent since the previous sample (first
    /// transmissions and retransmissions, as Linux's `tcpi_data_segs_out`
    /// counts them), bit/s.
    pub send_rate_bps: Vec<f64>,
    /// Segments in flight: sent and neither acknowledged, SACKed nor
    /// deemed lost, plus those sent again (Linux's `tcp_packets_in_flight`;
    /// without SACK, the duplicate ACKs count as segments that left).
    pub in_flight: Vec<f64>,
    /// DCTCP's alpha (RFC 8257 section 3.3), in [0, 1]; NaN for the
    /// other variants.
    pub alpha: Vec<f64>,
    /// Pacing flows (`tcp.pacing`, BBR): the pacing rate, payload bit/s
    /// (NaN: not pacing, or no rate yet).
    pub pacing_rate_bps: Vec<f64>,
    /// Pacing flows: the delivery rate of the last rate sample that was
    /// not application-limited (or of a faster one that was), payload bit/s
    /// (Linux's `tcpi_delivery_rate`; NaN: none yet, or not pacing).
    pub rate_sample_bps: Vec<f64>,
    /// BBR: its state (`startup`, `drain`, `probe_bw`, `probe_rtt`; empty
    /// for other algorithms) and its bandwidth estimate, payload bit/s
    /// (NaN for other algorithms).
    pub bbr_state: Vec<&'static str>,
    pub bbr_bw_bps: Vec<f64>,
    /// The sender's loss-recovery state, as Linux's `tcpi_ca_state` names
    /// it: `open`, `recovery` (fast recovery) or `loss` (after a
    /// retransmission timeout, until what was outstanding then is
    /// acknowledged); the testbed's kernel also reports `disorder` and
    /// `cwr`, which the simulator counts as `open`.
    pub ca_state: Vec<&'static str>,
}

impl FlowSeries {
    /// The numeric columns but `flow`.
    pub(crate) fn f64_columns(&mut self) -> [&mut Vec<f64>; 12] {
        [
            &mut self.time_s,
            &mut self.cwnd,
            &mut self.ssthresh,
            &mut self.srtt_s,
            &mut self.rto_s,
            &mut self.delivery_rate_bps,
            &mut self.send_rate_bps,
            &mut self.in_flight,
            &mut self.alpha,
            &mut self.pacing_rate_bps,
            &mut self.rate_sample_bps,
            &mut self.bbr_bw_bps,
        ]
    }
}

/// The queueing delay histogram of the measurement interval, per monitored
/// link: one row per non-empty bin.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DelayTable {
    pub link: Vec<String>,
    pub lower_s: Vec<f64>,
    pub upper_s: Vec<f64>,
    pub count: Vec<u64>,
}

/// The same per traffic group (`metrics.group_delays`; else empty): one
/// row per non-empty bin of each group's histogram on each monitored link.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GroupDelayTable {
    pub link: Vec<String>,
    pub group: Vec<u32>,
    pub lower_s: Vec<f64>,
    pub upper_s: Vec<f64>,
    pub count: Vec<u64>,
}

/// Sub-bins per power of two of [`DelayHist`]: bin widths are 1/16 to 1/32
/// of their values, so a quantile read at a bin's middle is within 3.2 % of
/// the exact sojourn time.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Bins of [`DelayHist`]: exact below `SUB` ns, then `SUB` per octave up to 2^64 ns.
pub const DELAY_BINS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// A log-binned histogram of the queueing delays (sojourn times) of the
/// packets that left a queue: bounded in size ([`DELAY_BINS`] counters,
/// allocated on the first sample), O(1) per packet, with the exact maximum.
#[derive(Clone, Debug, Default)]
pub struct DelayHist {
    counts: Vec<u64>,
    n: u64,
    max: u64,
}

impl DelayHist {
    /// The bin of a delay of `ns` nanoseconds.
    #[inline]
    pub fn bin(ns: u64) -> usize {
        if ns < SUB {
            return ns as usize;
        }
        let e = 63 - ns.leading_zeros();
        let sub = (ns >> (e - SUB_BITS)) & (SUB - 1);
        (SUB + (e - SUB_BITS) as u64 * SUB + sub) as usize
    }

    /// The delays of bin `b`: [lower, upper) in ns (upper saturates at u64::MAX).
    pub fn bounds(b: usize) -> (u64, u64) {
        let b = b as u64;
        if b < SUB {
            return (b, b + 1);
        }
        let e = (b - SUB) / SUB + SUB_BITS as u64;
        let sub = (b - SUB) % SUB;
        let shift = e - SUB_BITS as u64;
        let lo = (SUB + sub) << shift;
        (lo, lo.saturating_add(1 << shift))
    }

    #[inline]
    pub fn add(&mut self, ns: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; DELAY_BINS];
        }
        self.counts[Self::bin(ns)] += 1;
        self.n += 1;
        self.max = self.max.max(ns);
    }

    /// Packets counted.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The largest delay, ns.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q` quantile (0 < q <= 1) in ns: the middle of the bin holding
    /// the ceil(q n)-th smallest delay (exact below 16 ns), at most the
    /// maximum (the largest rank is the exact maximum); 0 without samples.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        if rank == self.n {
            return self.max as f64; // the largest delay is known exactly
        }
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = Self::bounds(b);
                let mid = if hi - lo == 1 {
                    lo as f64
                } else {
                    (lo as f64 + hi as f64) / 2.0
                };
                return mid.min(self.max as f64);
            }
        }
        self.max as f64
    }

    /// The non-empty bins: (lower ns, upper ns, count), by delay.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(b, &c)| {
                let (lo, hi) = Self::bounds(b);
                (lo, hi, c)
            })
    }
}

#[derive(Clone, Debug, Default)]
struct IntervalAcc {
    /// The interval's integrals up to the start of the current window
    /// (which is added to them when it ends: one sum per change of the
    /// queue, not two).
    total: Integrals,
    /// Sojourn times of the packets that left the queue in the interval.
    delay: DelayHist,
    /// The same per queue of a dual-queue scheme (L, C), and the sums of
    /// their sojourn times, ns (DualPI2 only; empty otherwise).
    class_delay: [DelayHist; 2],
    class_sum_ns: [u128; 2],
    /// The same per traffic group (`metrics.group_delays`; empty otherwise).
    group_delay: Vec<DelayHist>,
    group_sum_ns: Vec<u128>,
    window: Integrals,
    window_len: u64,
    window_end: u64,
    window_stds: Vec<f64>,
    /// The same in bytes.
    window_stds_bytes: Vec<f64>,
    /// When a periodic phase's interval paused (between its windows), ns.
    paused_at: u64,
}

impl IntervalAcc {
    /// Add the constant queue (pkts, bytes) over [from, to).
    #[inline(always)]
    fn add(&mut self, from: u64, to: u64, pkts: u32, bytes: u64) {
        if to < self.window_end {
            self.window.add(pkts, bytes, to - from);
        } else {
            self.add_across(from, to, pkts, bytes);
        }
    }

    /// [`IntervalAcc::add`] over the end of one window or more.
    #[inline(never)]
    fn add_across(&mut self, mut from: u64, to: u64, pkts: u32, bytes: u64) {
        while to >= self.window_end {
            self.window.add(pkts, bytes, self.window_end - from);
            if self.window.t > 0 {
                self.window_stds.push(self.window.std());
                self.window_stds_bytes.push(self.window.std_bytes());
            }
            self.total.absorb(&self.window);
            self.window = Integrals::default();
            from = self.window_end;
            self.window_end += self.window_len;
        }
        self.window.add(pkts, bytes, to - from);
    }
}

impl QueueMonitor {
    /// Record the queue length from `now` on.
    #[inline]
    pub fn set(&mut self, now: SimTime, pkts: u32, bytes: u64) {
        self.advance(now);
        self.pkts = pkts;
        self.bytes = bytes;
    }

    #[inline(always)]
    fn advance(&mut self, now: SimTime) {
        if now.0 > self.last.0 {
            for &i in &self.active {
                self.accs[i].add(self.last.0, now.0, self.pkts, self.bytes);
            }
        }
        self.last = now;
    }

    /// A drop or mark at `now` of a packet of `flow` with `flags` and
    /// `size` bytes (traced if the trace is on).
    #[cold]
    pub fn event(&mut self, now: SimTime, flow: u32, flags: u8, size: u32, what: &'static str) {
        if let Some(t) = self.trace.as_mut() {
            if (t.events.len() as u64) < t.limit {
                let kind = crate::packet::kind_name(flags, size);
                t.events.push((now, flow, what, kind));
            } else {
                t.missed += 1;
            }
        }
    }

    /// A packet of flow `flow` leaves the queue after waiting `sojourn`
    /// (counted in every interval in progress, and in its flow's group's
    /// figures when they are kept).
    #[inline]
    pub fn sojourn(&mut self, sojourn: SimTime, flow: u32) {
        for &i in &self.active {
            self.accs[i].delay.add(sojourn.0);
        }
        if self.group_of.is_some() {
            self.group_sojourn(sojourn, flow);
        }
    }

    /// [`QueueMonitor::sojourn`]'s part for the packet's traffic group.
    #[inline(never)]
    fn group_sojourn(&mut self, sojourn: SimTime, flow: u32) {
        let Some(g) = self.group_of.as_ref().and_then(|m| m.get(flow as usize)) else {
            return;
        };
        let g = *g as usize;
        for &i in &self.active {
            let a = &mut self.accs[i];
            if a.group_delay.len() <= g {
                a.group_delay.resize(g + 1, DelayHist::default());
                a.group_sum_ns.resize(g + 1, 0);
            }
            a.group_delay[g].add(sojourn.0);
            a.group_sum_ns[g] += sojourn.0 as u128;
        }
    }

    /// Keep the sojourn times of each traffic group's packets apart
    /// (`metrics.group_delays`): `group_of[f]` is flow `f`'s group.
    pub fn keep_groups(&mut self, group_of: Box<[u32]>) {
        self.group_of = Some(group_of);
    }

    /// A packet of queue `class` (0: L, 1: C) of a dual-queue scheme leaves
    /// after waiting `sojourn` (besides [`QueueMonitor::sojourn`]).
    #[inline]
    pub fn class_sojourn(&mut self, class: usize, sojourn: SimTime) {
        for &i in &self.active {
            let a = &mut self.accs[i];
            a.class_delay[class].add(sojourn.0);
            a.class_sum_ns[class] += sojourn.0 as u128;
        }
    }

    /// The delay histogram of interval `i` (empty if it never began).
    pub fn delays(&self, i: usize) -> DelayHist {
        self.accs
            .get(i)
            .map(|a| a.delay.clone())
            .unwrap_or_default()
    }

    /// The delay histogram of each traffic group over interval `i`
    /// (`metrics.group_delays`): (group, its histogram) for the groups with
    /// a packet that left the queue, by group.
    pub fn group_delays(&self, i: usize) -> Vec<(u32, &DelayHist)> {
        self.accs.get(i).map_or_else(Vec::new, |a| {
            (0u32..)
                .zip(&a.group_delay)
                .filter(|(_, h)| h.count() > 0)
                .collect()
        })
    }

    /// Begin integrating interval `i` at `now`, with deviation windows of `window`.
    pub fn begin(&mut self, i: usize, now: SimTime, window: SimTime) {
        self.advance(now);
        if self.accs.len() <= i {
            self.accs.resize(i + 1, IntervalAcc::default());
        }
        self.accs[i] = IntervalAcc {
            window_len: window.0.max(1),
            window_end: now.0 + window.0.max(1),
            ..IntervalAcc::default()
        };
        self.active.push(i);
    }

    /// Pause interval `i` at `now` (a periodic phase's window ends): the
    /// queue and the departures count no more until it resumes.
    pub fn pause(&mut self, i: usize, now: SimTime) {
        self.advance(now);
        self.active.retain(|&a| a != i);
        if let Some(acc) = self.accs.get_mut(i) {
            acc.paused_at = now.0;
        }
    }

    /// Resume interval `i` at `now` (its next window begins). Its deviation
    /// windows run over the time it measures: the one in progress when it
    /// paused goes on from here.
    pub fn resume(&mut self, i: usize, now: SimTime) {
        self.advance(now);
        let Some(acc) = self.accs.get_mut(i) else {
            return;
        };
        acc.window_end += now.0 - acc.paused_at;
        if !self.active.contains(&i) {
            self.active.push(i);
        }
    }

    /// Figures of interval `i` ending at `end`; a partial last window
    /// counts if it is at least half a window long, or if it is the only one.
    pub fn end(&mut self, i: usize, end: SimTime) -> QueueFigures {
        self.advance(end);
        self.active.retain(|&a| a != i);
        let Some(acc) = self.accs.get_mut(i) else {
            return QueueFigures::default();
        };
        if acc.window.t > 0 && (acc.window.t * 2 >= acc.window_len || acc.window_stds.is_empty()) {
            acc.window_stds.push(acc.window.std());
            acc.window_stds_bytes.push(acc.window.std_bytes());
        }
        acc.total.absorb(&acc.window);
        acc.window = Integrals::default();
        let n = acc.window_stds.len();
        let mean_of = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        QueueFigures {
            mean_pkts: acc.total.mean(),
            std_pkts: acc.total.std(),
            mean_bytes: acc.total.mean_bytes(),
            std_bytes: acc.total.std_bytes(),
            window_std_mean_pkts: mean_of(&acc.window_stds),
            window_std_mean_bytes: mean_of(&acc.window_stds_bytes),
            windows: n as u64,
            delay_p50_s: acc.delay.quantile(0.5) * 1e-9,
            delay_p90_s: acc.delay.quantile(0.9) * 1e-9,
            delay_p99_s: acc.delay.quantile(0.99) * 1e-9,
            delay_max_s: acc.delay.max() as f64 * 1e-9,
            class_delay: std::array::from_fn(|c| {
                let h = &acc.class_delay[c];
                ClassDelay {
                    mean_s: if h.count() == 0 {
                        0.0
                    } else {
                        acc.class_sum_ns[c] as f64 * 1e-9 / h.count() as f64
                    },
                    p99_s: h.quantile(0.99) * 1e-9,
                    packets: h.count(),
                }
            }),
            groups: acc
                .group_delay
                .iter()
                .zip(&acc.group_sum_ns)
                .enumerate()
                .filter(|(_, (h, _))| h.count() > 0)
                .map(|(g, (h, &sum))| {
                    let figures = GroupDelay {
                        packets: h.count(),
                        delay_mean_s: sum as f64 * 1e-9 / h.count() as f64,
                        delay_p50_s: h.quantile(0.5) * 1e-9,
                        delay_p90_s: h.quantile(0.9) * 1e-9,
                        delay_p99_s: h.quantile(0.99) * 1e-9,
                        delay_max_s: h.max() as f64 * 1e-9,
                    };
                    (g as u32, figures)
                })
                .collect(),
        }
    }
}

/// Time-weighted queue figures over the measurement interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueFigures {
    pub mean_pkts: f64,
    pub std_pkts: f64,
    pub mean_bytes: f64,
    pub std_bytes: f64,
    /// Mean over windows of each window's standard deviation.
    pub window_std_mean_pkts: f64,
    /// The same in bytes.
    pub window_std_mean_bytes: f64,
    pub windows: u64,
    /// Queueing delay quantiles of the departed packets, seconds.
    pub delay_p50_s: f64,
    pub delay_p90_s: f64,
    pub delay_p99_s: f64,
    pub delay_max_s: f64,
    /// Per queue of a dual-queue scheme (L, C): zero elsewhere.
    pub class_delay: [ClassDelay; 2],
    /// Per traffic group (`metrics.group_delays`): (group, its figures)
    /// for each group with a packet that left the queue, by group.
    pub groups: Vec<(u32, GroupDelay)>,
}

/// Queueing delays of one traffic group's packets at a queue over an
/// interval (`metrics.group_delays`).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct GroupDelay {
    /// Packets of the group that left the queue.
    pub packets: u64,
    /// Their mean sojourn (exact), its quantiles (log-binned, within
    /// 3.2 %) and maximum (exact), seconds.
    pub delay_mean_s: f64,
    pub delay_p50_s: f64,
    pub delay_p90_s: f64,
    pub delay_p99_s: f64,
    pub delay_max_s: f64,
}

/// Queueing delays of one queue of a dual-queue scheme over an interval.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ClassDelay {
    /// Mean and 99th percentile sojourn (0 without packets), seconds.
    pub mean_s: f64,
    pub p99_s: f64,
    /// Packets that left the queue.
    pub packets: u64,
}

/// Jain's fairness index (sum x)^2 / (n sum x^2); 1 for an empty or all-zero set.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_weighted_mean_and_std() {
        let mut m = QueueMonitor::default();
        m.begin(0, SimTime(0), SimTime(1000));
        m.set(SimTime(0), 10, 5000);
        m.set(SimTime(100), 20, 10000);
        let f = m.end(0, SimTime(200));
        assert!((f.mean_pkts - 15.0).abs() < 1e-12);
        assert!((f.std_pkts - 5.0).abs() < 1e-12);
        assert!((f.mean_bytes - 7500.0).abs() < 1e-9);
        // Bytes: 5000 then 10000 for equal times: std 2500.
        assert!((f.std_bytes - 2500.0).abs() < 1e-9);
    }

    #[test]
    fn byte_deviations_follow_the_bytes_not_the_packets() {
        // 10 packets throughout, first of 40 bytes (400 B), then of 1000
        // bytes (10000 B): the packet figures see no change at all.
        let mut m = QueueMonitor::default();
        m.begin(0, SimTime(0), SimTime(100));
        m.set(SimTime(0), 10, 400);
        m.set(SimTime(50), 10, 10_000);
        m.set(SimTime(100), 10, 10_000);
        let f = m.end(0, SimTime(200));
        assert_eq!(f.std_pkts, 0.0);
        assert_eq!(f.window_std_mean_pkts, 0.0);
        // Mean (400 x 50 + 10000 x 150) / 200 = 7600; E[b^2] = (160000 x 50
        // + 1e8 x 150) / 200 = 75_040_000; var = 75_040_000 - 57_760_000
        // = 17_280_000; std = 4156.92.
        assert!((f.mean_bytes - 7600.0).abs() < 1e-9);
        assert!((f.std_bytes - 17_280_000f64.sqrt()).abs() < 1e-6);
        // Windows: [0, 100) half 400, half 10000: std 4800; [100, 200) 0.
        assert_eq!(f.windows, 2);
        assert!((f.window_std_mean_bytes - 2400.0).abs() < 1e-9);
    }

    #[test]
    fn window_deviation_is_mean_of_window_stds() {
        let mut m = QueueMonitor::default();
        m.begin(0, SimTime(0), SimTime(100));
        // Window 1: constant 10 (std 0). Window 2: 0 then 20 (std 10).
        m.set(SimTime(0), 10, 0);
        m.set(SimTime(100), 0, 0);
        m.set(SimTime(150), 20, 0);
        let f = m.end(0, SimTime(200));
        assert_eq!(f.windows, 2);
        assert!((f.window_std_mean_pkts - 5.0).abs() < 1e-12);
    }

    #[test]
    fn overlapping_intervals_and_exact_window_cuts() {
        let mut m = QueueMonitor::default();
        m.begin(0, SimTime(0), SimTime(100));
        m.set(SimTime(0), 10, 0);
        // A phase from 50 to 150 with windows of 100: one window of mean 15.
        m.begin(1, SimTime(50), SimTime(100));
        // The change at 120 crosses the main interval's boundary at 100.
        m.set(SimTime(120), 20, 0);
        let p = m.end(1, SimTime(150));
        // Phase: 10 for 70 ns, 20 for 30 ns -> mean 13; one window.
        assert!((p.mean_pkts - 13.0).abs() < 1e-12);
        assert_eq!(p.windows, 1);
        let f = m.end(0, SimTime(200));
        // Main: window [0,100) constant 10 (std 0); [100,200): 10 for 20, 20 for 80
        // -> mean 18, E[q^2] = (2000 + 32000) / 100 = 340, var 16, std 4.
        assert_eq!(f.windows, 2);
        assert!((f.window_std_mean_pkts - 2.0).abs() < 1e-9);
    }

    /// Flows 0 and 3 in group 0, flows 1 and 2 in group 2 (group 1 has no
    /// packets): group 0 waits 1, 2 and 6 us (mean 3 us, max 6 us), group
    /// 2 waits 10 and 30 us (mean 20 us); the link's figures hold all five.
    /// A phase that begins after the first departure misses it.
    #[test]
    fn group_delays_by_hand() {
        let mut m = QueueMonitor::default();
        m.keep_groups(vec![0, 2, 2, 0].into_boxed_slice());
        m.begin(0, SimTime(0), SimTime(1000));
        m.sojourn(SimTime(1000), 0);
        m.begin(1, SimTime(10), SimTime(1000));
        m.sojourn(SimTime(10_000), 1);
        m.sojourn(SimTime(2000), 3);
        m.sojourn(SimTime(30_000), 2);
        m.sojourn(SimTime(6000), 0);
        let f = m.end(0, SimTime(100));
        let groups: Vec<u32> = f.groups.iter().map(|(g, _)| *g).collect();
        assert_eq!(groups, [0, 2]);
        let (g0, g2) = (f.groups[0].1, f.groups[1].1);
        assert_eq!((g0.packets, g2.packets), (3, 2));
        assert!((g0.delay_mean_s - 3e-6).abs() < 1e-18);
        assert!((g2.delay_mean_s - 20e-6).abs() < 1e-18);
        assert!((g0.delay_max_s - 6e-6).abs() < 1e-18);
        assert!((g2.delay_max_s - 30e-6).abs() < 1e-18);
        // The quantiles are the histogram's (within 3.2 %).
        assert!((g2.delay_p99_s / 30e-6 - 1.0).abs() < 0.032);
        assert!((g0.delay_p50_s / 2e-6 - 1.0).abs() < 0.032);
        assert_eq!(m.delays(0).count(), 5);
        let p = m.end(1, SimTime(100));
        assert_eq!((p.groups[0].1.packets, p.groups[1].1.packets), (2, 2));
        assert!((p.groups[0].1.delay_mean_s - 4e-6).abs() < 1e-18);
        // Without `keep_groups`, none.
        let mut plain = QueueMonitor::default();
        plain.begin(0, SimTime(0), SimTime(1000));
        plain.sojourn(SimTime(1000), 7);
        assert!(plain.end(0, SimTime(100)).groups.is_empty());
    }

    #[test]
    fn a_paused_interval_counts_neither_the_queue_nor_the_departures_of_its_gap() {
        let mut m = QueueMonitor::default();
        m.begin(0, SimTime(0), SimTime(1000));
        m.begin(1, SimTime(0), SimTime(100));
        m.set(SimTime(0), 10, 0);
        m.sojourn(SimTime(1000), 0);
        m.pause(1, SimTime(50));
        // The gap: 1000 packets for 100 ns and a departure of 9 us.
        m.set(SimTime(50), 1000, 0);
        m.sojourn(SimTime(9000), 0);
        m.resume(1, SimTime(150));
        m.set(SimTime(150), 20, 0);
        m.sojourn(SimTime(2000), 0);
        let f = m.end(1, SimTime(200));
        // 10 for 50 ns, then 20 for 50 ns: mean 15, std 5; the deviation
        // window of 100 ns runs over the measured time, so it is one window.
        assert!((f.mean_pkts - 15.0).abs() < 1e-12, "{}", f.mean_pkts);
        assert!((f.std_pkts - 5.0).abs() < 1e-12);
        assert_eq!(f.windows, 1);
        assert!((f.window_std_mean_pkts - 5.0).abs() < 1e-12);
        assert_eq!(m.delays(1).max(), 2000);
        assert_eq!(m.delays(1).count(), 2);
        // The interval that did not pause saw all of it.
        let all = m.end(0, SimTime(200));
        assert_eq!(m.delays(0).max(), 9000);
        assert!(
            (all.mean_pkts - (10.0 * 50.0 + 1000.0 * 100.0 + 20.0 * 50.0) / 200.0).abs() < 1e-9
        );
    }

    #[test]
    fn delay_bins_cover_every_value_once_and_bound_the_error() {
        // Consecutive bins tile [0, 2^64): each upper bound is the next lower.
        let mut prev = 0;
        for b in 0..DELAY_BINS {
            let (lo, hi) = DelayHist::bounds(b);
            assert_eq!(lo, prev, "bin {b}");
            assert!(hi > lo);
            prev = hi;
        }
        assert_eq!(prev, u64::MAX);
        for v in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            1000,
            5_000_000,
            1 << 40,
            u64::MAX,
        ] {
            let (lo, hi) = DelayHist::bounds(DelayHist::bin(v));
            assert!(lo <= v && (v < hi || hi == u64::MAX), "{v} in [{lo}, {hi})");
            // The middle is within 1/32 of any value of the bin.
            let mid = (lo as f64 + hi as f64) / 2.0;
            assert!((mid - v as f64).abs() <= v as f64 / 32.0 + 0.5, "{v}");
        }
    }

    #[test]
    fn delay_quantiles_match_the_exact_ones_within_the_bin_error() {
        let mut h = DelayHist::default();
        // 1..=1000 microseconds.
        for k in 1..=1000u64 {
            h.add(k * 1000);
        }
        for (q, exact) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0)] {
            let got = h.quantile(q);
            assert!(
                (got - exact).abs() / exact < 0.032,
                "q {q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.quantile(1.0), 1_000_000.0);
        assert_eq!(h.count(), 1000);
        assert_eq!(h.bins().map(|(_, _, c)| c).sum::<u64>(), 1000);
        assert_eq!(DelayHist::default().quantile(0.5), 0.0);
    }

    #[test]
    fn jain_index() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-15);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-15);
    }
}

/// The evolution of an AQM's adapted parameters: one row per (time, name).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ParamSeries {
    pub time_s: Vec<f64>,
    pub name: Vec<&'static str>,
    pub value: Vec<f64>,
}

impl ParamSeries {
    /// Append every parameter `aqm` reports, at time `now`.
    pub fn record(&mut self, now: crate::units::SimTime, aqm: &impl crate::aqm::Aqm) {
        let t = now.as_secs_f64();
        aqm.params(&mut |name, value| {
            self.time_s.push(t);
            self.name.push(name);
            self.value.push(value);
        });
    }
}
