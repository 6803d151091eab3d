//! AP-RED: Auto-Parameterization RED.
//!
//! Reference: `003_b277268f444f7691.txt` (Wu Chen's thesis), chapter 4.
//!
//! RED ([`Red`], eq. 2.3-2.6) whose four key parameters are re-derived from
//! an initial set (p_max0, min_th0, max_th0, w_q0), designed for an initial
//! scenario (N0 flows, capacity C0, round-trip time R0), and the ratios of
//! the current scenario to the initial one, k_r = R / R0, k_c = C / C0,
//! k_n = N / N0 (section 4.3.1):
//!
//! - max_th = k_r k_c max_th0 (eq. 4.3)
//! - min_th = k_r k_c min_th0 (eq. 4.4)
//! - p_max = (k_n / (k_r k_c))^2 p_max0, clamped to [0.01, 0.5] (eq. 4.5 and
//!   the constraint below eq. 4.6)
//! - w_q = k_n / (k_r k_c)^2 w_q0 if N <= R C / 2, else w_q0 / (k_r k_c)
//!   (eq. 4.6); capped at 1 (a weight; the thesis never reaches the cap)
//!
//! The equilibrium queue then moves in proportion to the thresholds
//! (section 4.3.2, eq. 4.7-4.8) and the stability condition eq. 4.9 keeps
//! holding (section 4.3.3). The RED average and count carry over a
//! re-parameterisation.
//!
//! Where N, C, R come from (`estimator`):
//! - `oracle`: the scenario's true values, as the thesis's experiments use
//!   them (section 4.5 takes k_r = d / d0 from the propagation delays):
//!   N and R (mean base RTT) of the long-lived flows crossing the link
//!   ([`LinkInfo::bulk_flows`], [`LinkInfo::bulk_rtt`]: TCP `bulk` groups,
//!   section 4.5's FTP flows; `oracle_flows = "all"` takes every flow,
//!   web sessions and UDP sources included, [`LinkInfo::flows`],
//!   [`LinkInfo::rtt`]) and [`LinkInfo::capacity_pps`], at construction
//!   and on every [`Aqm::set_link`]. An unknown value (0: no such flows)
//!   leaves the estimate where it was (n0 / r0 at first).
//! - `measured`: section 4.4's router-side measurement, re-estimated every
//!   `interval`. N is the number of distinct flows whose data (or SYN)
//!   entered the queue within the last `window` (section 4.4 after \[29\],
//!   which uses a 60 s flow timeout and allows a shorter one). C is the
//!   link's own rate. R is the mean, over those flows, of a per-flow
//!   smoothed RTT built from two kinds of samples:
//!   1. Handshake (section 4.4 after \[29\]\[45\]): the time from a flow's SYN
//!      entering this queue to the flow's first packet after the
//!      handshake entering it (the simulated TCP sends data right after
//!      the SYN/ACK; a pure third ACK would do the same). Flows whose SYN
//!      or SYN/ACK was sent twice, or whose first packet after it is a
//!      retransmission, give no sample (Karn).
//!   2. Data/ACK timing: one data segment per flow at a time (seq s) is
//!      timed when it enters the queue and matched with the first ACK
//!      of the flow with cumulative ACK > s entering the opposite
//!      direction of the bottleneck ([`Aqm::observe_reverse`]). That ACK
//!      is seen where it enters the reverse link, at the far router, so
//!      this sample D covers only the downstream part of the loop. The
//!      rest (far router -> near router -> sender -> near router) is taken
//!      from the flow's handshake when one was observed (the time from its
//!      SYN/ACK entering the reverse link to its first data entering this
//!      queue); otherwise it is taken equal to D (a path with the same
//!      delays both ways, as in the dumbbell). A retransmission at or
//!      below s, or an ACK that answers one, cancels the timing (Karn).
//!
//!   The waiting time in this queue (queue bytes ahead of the packet at
//!   its arrival over the link rate) is taken out of every sample, so R
//!   estimates the round-trip time without this router's own queueing
//!   delay, like the `oracle`'s base RTT and the thesis's d / d0: with the
//!   queueing delay in R the thresholds would feed back into R. Queueing
//!   in the reverse direction, which this router cannot see, stays in.
//!
//! The per-packet cost of the measurement is an index into a per-flow
//! `Vec` (grown when a new flow id appears) and a few comparisons.
//!
//! Mid-run changes ([`Aqm::set_param`]) take the initial set and scenario
//! (`max_p0`, `min_th0`, `max_th0`, `w_q0`, `n0`, `c0`, `r0`) and the
//! measurement's `interval` and `window`; RED's four parameters are derived
//! again at once from the current estimates (eq. 4.3-4.6), the RED average,
//! count and the measurements carrying over. RED's own `min_th`, `max_th`,
//! `max_p` and `w_q` are derived, so they cannot be set.

use super::red::{AboveMax, Red, RedCounting, RedMode, RedParams};
use super::{change, Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::packet::flags;
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Lower bound of p_max after eq. 4.5 (section 4.3.1).
pub const MAX_P_LO: f64 = 0.01;
/// Upper bound of p_max after eq. 4.5 (section 4.3.1).
pub const MAX_P_HI: f64 = 0.5;
/// Gain of the per-flow RTT smoothing (RFC 6298's alpha, as TCP's SRTT).
const SRTT_GAIN: f64 = 0.125;

/// RED's options that AP-RED and ST-RED pass to [`Red`] unchanged; the keys
/// and meanings are RED's (`docs/scenario.md`, `kind = "red"`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RedOptions {
    /// Gentle drop function above max_th (eq. 2.4).
    pub gentle: bool,
    /// Queue measure and probability scaling (eq. 2.5).
    pub mode: RedMode,
    /// Typical packet size, bytes.
    pub mean_pkt_size: u32,
    /// Mark ECN-capable packets instead of dropping them in the early region.
    pub ecn: bool,
    /// What happens above max_th.
    pub above_max: AboveMax,
    /// ns-2's `mark_p_` (RED's `mark_p`): marks only below this probability.
    pub mark_p: f64,
    /// Byte mode's count and ns-2's `wait`.
    #[serde(flatten)]
    pub counting: RedCounting,
}

impl RedOptions {
    /// Defaults: gentle on, no ECN, drop above max_th, the given mode and size.
    pub fn with(mode: RedMode, mean_pkt_size: u32) -> RedOptions {
        RedOptions {
            gentle: true,
            mode,
            mean_pkt_size,
            ecn: false,
            above_max: AboveMax::Drop,
            mark_p: 1.0,
            counting: RedCounting::default(),
        }
    }

    /// The options of RED's parameters `p`.
    pub fn of(p: &RedParams) -> RedOptions {
        RedOptions {
            gentle: p.gentle,
            mode: p.mode,
            mean_pkt_size: p.mean_pkt_size,
            ecn: p.ecn,
            above_max: p.above_max,
            mark_p: p.mark_p,
            counting: p.counting,
        }
    }

    /// Read RED's option keys; `d` holds the defaults.
    pub fn decode(t: &mut Table, d: &RedOptions) -> SpecResult<RedOptions> {
        let mode_default = match d.mode {
            RedMode::Packet => "packet",
            RedMode::Byte => "byte",
        };
        Ok(RedOptions {
            gentle: t.bool("gentle", d.gentle)?,
            mode: match t.choice("mode", &["packet", "byte"], Some(mode_default))? {
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
        })
    }

    /// RED's parameters with these options.
    pub fn red_params(&self, min_th: f64, max_th: f64, max_p: f64, w_q: f64) -> RedParams {
        RedParams {
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: self.gentle,
            mode: self.mode,
            mean_pkt_size: self.mean_pkt_size,
            ecn: self.ecn,
            above_max: self.above_max,
            mark_p: self.mark_p,
            counting: self.counting,
        }
    }
}

/// Where AP-RED takes N, C and R from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    /// The scenario's true values ([`LinkInfo`]), as the thesis's experiments.
    Oracle,
    /// Measured at the router (section 4.4), every `interval`.
    Measured,
}

/// AP-RED's parameters. The initial set and the initial scenario are those
/// of the thesis's experiment 1 (`003_b277268f444f7691.txt` section 4.5.1:
/// N0 = 50 FTP flows, d0 = 120 ms, 10 Mbps = 2500 packets/s of 500 bytes;
/// p_max0 = 0.05, min_th0 = 50, max_th0 = 150, w_q0 = 1e-4, which satisfy
/// eq. 4.9).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApRedParams {
    /// p_max at the initial scenario, in [0.01, 0.5]. Default 0.05 (4.5.1).
    pub max_p0: f64,
    /// min_th at the initial scenario, packets. Default 50 (4.5.1).
    pub min_th0: f64,
    /// max_th at the initial scenario, packets. Default 150 (4.5.1).
    pub max_th0: f64,
    /// w_q at the initial scenario, in (0, 1]. Default 1e-4 (4.5.1).
    pub w_q0: f64,
    /// N0: flows of the initial scenario. Default 50 (4.5.1).
    pub n0: u32,
    /// C0: capacity of the initial scenario, packets of `mean_pkt_size` per
    /// second. Default 2500 (4.5.1: 10 Mbps, 500-byte packets).
    pub c0: f64,
    /// R0: round-trip time of the initial scenario. Default 120 ms (4.5.1).
    pub r0: SimTime,
    /// Source of N, C, R. Default `oracle` (what the thesis's experiments use).
    pub estimator: Estimator,
    /// `oracle`: the flows N counts. Default `bulk` (section 4.5's FTP flows).
    pub oracle_flows: OracleFlows,
    /// `measured`: re-estimation period. Default 1 s (our choice; section
    /// 4.4 leaves it to trial and error).
    pub interval: SimTime,
    /// `measured`: a flow counts in N while its data was seen within this
    /// window. Default 10 s (our choice; \[29\] in section 4.4 uses 60 s and
    /// allows shorter).
    pub window: SimTime,
    /// RED's other options (mode, gentle, ECN, mean packet size).
    #[serde(flatten)]
    pub red: RedOptions,
}

impl Default for ApRedParams {
    fn default() -> Self {
        ApRedParams {
            max_p0: 0.05,
            min_th0: 50.0,
            max_th0: 150.0,
            w_q0: 1e-4,
            n0: 50,
            c0: 2500.0,
            r0: SimTime::from_millis(120),
            estimator: Estimator::Oracle,
            oracle_flows: OracleFlows::Bulk,
            interval: SimTime::from_secs(1),
            window: SimTime::from_secs(10),
            // Section 4.5: "the average packet size is set to 500 bytes".
            red: RedOptions::with(RedMode::Packet, 500),
        }
    }
}

impl ApRedParams {
    /// Read the keys of an `[aqm]` table with `kind = "ap-red"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<ApRedParams> {
        let d = ApRedParams {
            red: RedOptions::with(RedMode::Packet, default_pkt_size),
            ..ApRedParams::default()
        };
        let p = ApRedParams {
            max_p0: t.f64("max_p0", d.max_p0)?,
            min_th0: t.f64("min_th0", d.min_th0)?,
            max_th0: t.f64("max_th0", d.max_th0)?,
            w_q0: t.f64("w_q0", d.w_q0)?,
            n0: t.u32("n0", d.n0)?,
            c0: t.f64("c0", d.c0)?,
            r0: t.time("r0", d.r0)?,
            estimator: match t.choice("estimator", &["oracle", "measured"], Some("oracle"))? {
                "measured" => Estimator::Measured,
                _ => Estimator::Oracle,
            },
            oracle_flows: match t.choice("oracle_flows", &["bulk", "all"], Some("bulk"))? {
                "all" => OracleFlows::All,
                _ => OracleFlows::Bulk,
            },
            interval: t.time("interval", d.interval)?,
            window: t.time("window", d.window)?,
            red: RedOptions::decode(t, &d.red)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        check_range(&f("max_p0"), self.max_p0, MAX_P_LO, false, MAX_P_HI).map_err(|e| {
            SpecError::new(e.path, format!("{} (the clamp range of eq. 4.5)", e.msg))
        })?;
        check_range(&f("min_th0"), self.min_th0, 0.0, false, 1e9)?;
        check_range(&f("max_th0"), self.max_th0, 0.0, true, 1e9)?;
        if self.min_th0 >= self.max_th0 {
            return Err(SpecError::new(
                f("min_th0"),
                format!(
                    "{} must be less than max_th0 ({})",
                    self.min_th0, self.max_th0
                ),
            ));
        }
        check_range(&f("w_q0"), self.w_q0, 0.0, true, 1.0)?;
        if self.n0 == 0 {
            return Err(SpecError::new(
                f("n0"),
                "0 is not allowed; give the initial number of flows (>= 1)",
            ));
        }
        check_range(&f("c0"), self.c0, 0.0, true, 1e12)?;
        for (k, v) in [
            ("r0", self.r0),
            ("interval", self.interval),
            ("window", self.window),
        ] {
            if v == SimTime::ZERO {
                return Err(SpecError::new(f(k), "0s is not allowed; give a time > 0"));
            }
        }
        self.red_params(self.min_th0, self.max_th0, self.max_p0, self.w_q0)
            .validate(path)
    }

    fn red_params(&self, min_th: f64, max_th: f64, max_p: f64, w_q: f64) -> RedParams {
        self.red.red_params(min_th, max_th, max_p, w_q)
    }
}

/// RED's four key parameters derived by eq. 4.3-4.6.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Derived {
    pub max_p: f64,
    pub min_th: f64,
    pub max_th: f64,
    pub w_q: f64,
}

/// Eq. 4.3-4.6 with the p_max clamp: RED's parameters for `n` flows,
/// capacity `c_pps` (packets/s) and round-trip time `rtt_s` (seconds).
pub fn derive(p: &ApRedParams, n: f64, c_pps: f64, rtt_s: f64) -> Derived {
    let k_r = rtt_s / p.r0.as_secs_f64();
    let k_c = c_pps / p.c0;
    let k_n = n / p.n0 as f64;
    let k = k_r * k_c;
    let max_p = ((k_n / k) * (k_n / k) * p.max_p0).clamp(MAX_P_LO, MAX_P_HI); // eq. 4.5
    let w_q = if n <= rtt_s * c_pps / 2.0 {
        k_n / (k * k) * p.w_q0 // eq. 4.6, N <= RC/2
    } else {
        p.w_q0 / k // eq. 4.6, N > RC/2
    };
    Derived {
        max_p,
        min_th: k * p.min_th0, // eq. 4.4
        max_th: k * p.max_th0, // eq. 4.3
        w_q: w_q.min(1.0),
    }
}

/// What the measured estimator keeps per flow.
#[derive(Clone, Copy, Debug, Default)]
struct FlowObs {
    /// Last time the flow's data (or SYN) entered the queue.
    last_seen: Option<SimTime>,
    /// A data segment is being timed.
    timing: bool,
    timed_seq: u64,
    timed_at: SimTime,
    /// Its waiting time in this queue, seconds.
    timed_wait_s: f64,
    /// The SYN entered the queue then (first SYN only).
    syn_at: Option<SimTime>,
    syn_wait_s: f64,
    /// Its SYN/ACK entered the reverse link then.
    synack_at: Option<SimTime>,
    /// The SYN or SYN/ACK was seen more than once: no handshake sample.
    syn_ambiguous: bool,
    /// The handshake sample was taken (or given up).
    handshake_done: bool,
    /// Far router -> near router -> sender -> near router, from the
    /// handshake, seconds.
    upstream_s: Option<f64>,
    /// Smoothed RTT, seconds (None: no sample yet).
    srtt_s: Option<f64>,
}

impl FlowObs {
    fn sample(&mut self, r: f64) {
        self.srtt_s = Some(match self.srtt_s {
            None => r,
            Some(s) => s + SRTT_GAIN * (r - s),
        });
    }
}

/// Section 4.4's router-side measurement of N and R.
#[derive(Clone, Debug, Default)]
struct Meter {
    flows: Vec<FlowObs>,
    /// RTT samples taken (handshake, data/ACK), for the record.
    handshake_samples: u64,
    data_samples: u64,
}

impl Meter {
    #[inline]
    fn flow(&mut self, id: u32) -> &mut FlowObs {
        let i = id as usize;
        if i >= self.flows.len() {
            self.flows.resize(i + 1, FlowObs::default());
        }
        &mut self.flows[i]
    }

    /// A packet entered the forward queue (after the AQM let it through);
    /// `wait_s` is its waiting time in the queue.
    #[inline]
    fn forward(&mut self, now: SimTime, pkt: &PacketInfo, wait_s: f64, stale: SimTime) {
        let syn = pkt.flags & flags::SYN != 0;
        let data = pkt.flags & flags::DATA != 0;
        if !syn && !data {
            return; // ACKs of reverse flows
        }
        let f = self.flow(pkt.flow);
        f.last_seen = Some(now);
        if syn {
            if f.syn_at.is_some() {
                f.syn_ambiguous = true; // a retransmitted SYN
            } else {
                f.syn_at = Some(now);
                f.syn_wait_s = wait_s;
            }
            return;
        }
        let mut hs = false;
        if !f.handshake_done {
            if let (Some(syn_at), Some(synack_at)) = (f.syn_at, f.synack_at) {
                f.handshake_done = true;
                // A retransmission: the first packet was lost (Karn).
                if !f.syn_ambiguous && pkt.flags & flags::RETX == 0 {
                    // Section 4.4: SYN to the first packet after the handshake.
                    let r = (now - syn_at).as_secs_f64() - f.syn_wait_s;
                    f.upstream_s = Some((now - synack_at).as_secs_f64());
                    f.sample(r);
                    hs = true;
                }
            }
        }
        if pkt.flags & flags::RETX != 0 {
            if f.timing && pkt.seq <= f.timed_seq {
                f.timing = false; // Karn: its ACK would be ambiguous
            }
        } else if !f.timing || now.saturating_sub(f.timed_at) > stale {
            f.timing = true;
            f.timed_seq = pkt.seq;
            f.timed_at = now;
            f.timed_wait_s = wait_s;
        }
        if hs {
            self.handshake_samples += 1;
        }
    }

    /// A packet entered the reverse direction of the bottleneck.
    #[inline]
    fn reverse(&mut self, now: SimTime, pkt: &PacketInfo) {
        if pkt.flags & flags::ACK == 0 || pkt.flags & flags::DATA != 0 {
            return;
        }
        let Some(f) = self.flows.get_mut(pkt.flow as usize) else {
            return; // not a flow whose data crosses this queue
        };
        if pkt.flags & flags::SYN != 0 {
            if f.synack_at.is_some() {
                f.syn_ambiguous = true;
            } else if f.syn_at.is_some() {
                f.synack_at = Some(now);
            }
            return;
        }
        if !f.timing || pkt.seq <= f.timed_seq {
            return;
        }
        f.timing = false;
        if pkt.flags & flags::RETX != 0 {
            return; // Karn
        }
        let down = (now - f.timed_at).as_secs_f64() - f.timed_wait_s;
        let up = f.upstream_s.unwrap_or(down);
        f.sample(down + up);
        self.data_samples += 1;
    }

    /// (N, mean RTT over the counted flows with a sample) for the flows seen
    /// since `since`.
    fn estimate(&self, since: SimTime) -> (u32, Option<f64>) {
        let (mut n, mut m, mut sum) = (0u32, 0u32, 0.0);
        for f in &self.flows {
            if f.last_seen.is_some_and(|t| t >= since) {
                n += 1;
                if let Some(r) = f.srtt_s {
                    m += 1;
                    sum += r;
                }
            }
        }
        (n, (m > 0).then(|| sum / m as f64))
    }
}

/// Which flows the `oracle` counts in N (and averages R over).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OracleFlows {
    /// Long-lived flows only (TCP `bulk` groups): section 4.5 counts FTP flows.
    Bulk,
    /// Every flow whose data crosses the link (web sessions, UDP included).
    All,
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct ApRed {
    p: ApRedParams,
    red: Red,
    /// Current estimates of N, C (packets/s) and R (seconds).
    n_est: f64,
    c_est: f64,
    r_est: f64,
    /// Transmission time of a byte, seconds (the waiting time of an arrival).
    byte_time_s: f64,
    meter: Meter,
    changed: bool,
}

impl ApRed {
    pub fn new(p: ApRedParams, link: LinkInfo) -> ApRed {
        let red = Red::new(p.red_params(p.min_th0, p.max_th0, p.max_p0, p.w_q0), link);
        let mut a = ApRed {
            n_est: p.n0 as f64,
            c_est: p.c0,
            r_est: p.r0.as_secs_f64(),
            byte_time_s: 8.0 / link.rate.bps() as f64,
            red,
            meter: Meter::default(),
            changed: true,
            p,
        };
        a.observe_link(&link);
        a
    }

    /// The RED inside.
    pub fn red(&self) -> &Red {
        &self.red
    }

    /// Current estimates (N, C in packets/s, R in seconds).
    pub fn estimates(&self) -> (f64, f64, f64) {
        (self.n_est, self.c_est, self.r_est)
    }

    /// Take the link's facts: C always (the router knows its link); N and R
    /// too with the oracle. Then re-parameterise.
    fn observe_link(&mut self, link: &LinkInfo) {
        self.byte_time_s = 8.0 / link.rate.bps() as f64;
        self.c_est = link.capacity_pps();
        if self.p.estimator == Estimator::Oracle {
            let (n, rtt) = match self.p.oracle_flows {
                OracleFlows::Bulk => (link.bulk_flows, link.bulk_rtt),
                OracleFlows::All => (link.flows, link.rtt),
            };
            if n > 0 {
                self.n_est = n as f64;
            }
            if rtt > SimTime::ZERO {
                self.r_est = rtt.as_secs_f64();
            }
        }
        self.apply();
    }

    /// Eq. 4.3-4.6 for the current estimates.
    fn apply(&mut self) {
        let d = derive(&self.p, self.n_est, self.c_est, self.r_est);
        let r = self.red.params_mut();
        r.max_p = d.max_p;
        r.min_th = d.min_th;
        r.max_th = d.max_th;
        r.w_q = d.w_q;
        self.changed = true;
    }
}

impl Aqm for ApRed {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        let v = self.red.on_enqueue(now, pkt, q, rng);
        if self.p.estimator == Estimator::Measured && !matches!(v, Verdict::Drop(_)) {
            let wait_s = q.bytes as f64 * self.byte_time_s;
            self.meter.forward(now, pkt, wait_s, self.p.window);
        }
        v
    }

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

    fn tick_interval(&self) -> Option<SimTime> {
        (self.p.estimator == Estimator::Measured).then_some(self.p.interval)
    }

    fn on_tick(&mut self, now: SimTime, _q: QueueLen) {
        let (n, r) = self.meter.estimate(now.saturating_sub(self.p.window));
        if n > 0 {
            self.n_est = n as f64;
        }
        if let Some(r) = r {
            self.r_est = r;
        }
        self.apply();
    }

    fn average(&self) -> Option<f64> {
        self.red.average()
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.red.report(out);
        out("n_est", self.n_est);
        out("rtt_est_s", self.r_est);
        out("c_est_pps", self.c_est);
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn wants_reverse(&self) -> bool {
        self.p.estimator == Estimator::Measured
    }

    #[inline]
    fn observe_reverse(&mut self, now: SimTime, pkt: &PacketInfo) {
        self.meter.reverse(now, pkt);
    }

    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        self.red.set_link(now, link);
        self.observe_link(link);
    }

    /// The initial set and scenario and the measurement's `interval` and
    /// `window` (times in seconds) may change during a run; RED's
    /// parameters are derived again at once (see the module documentation).
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &[
            "max_p0", "min_th0", "max_th0", "w_q0", "n0", "c0", "r0", "interval", "window",
        ];
        let mut p = self.p.clone();
        match key {
            "max_p0" => p.max_p0 = value,
            "min_th0" => p.min_th0 = value,
            "max_th0" => p.max_th0 = value,
            "w_q0" => p.w_q0 = value,
            "n0" => p.n0 = change::count(value)?,
            "c0" => p.c0 = value,
            "r0" => p.r0 = change::secs(value)?,
            "interval" => p.interval = change::secs(value)?,
            "window" => p.window = change::secs(value)?,
            "min_th" | "max_th" | "max_p" | "w_q" => {
                return Err(format!(
                    "{}; AP-RED derives `{key}` by eq. 4.3-4.6: change `{key}0` instead",
                    change::unknown_key("AP-RED", key, KEYS)
                ))
            }
            _ => return Err(change::unknown_key("AP-RED", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.p = p;
        self.apply();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::BitRate;

    fn rel(x: f64, y: f64) -> f64 {
        (x - y).abs() / y.abs()
    }

    /// Section 4.5.2 (experiment 2): N = 30, C = 1250 packets/s, R = 100 ms
    /// from the initial set of section 4.5.1.
    #[test]
    fn experiment_2_eq_4_3_to_4_6() {
        let p = ApRedParams::default();
        let d = derive(&p, 30.0, 1250.0, 0.100);
        // k_r = 100 / 120 = 0.8333, k_c = 1250 / 2500 = 0.5, k = 0.41667, k_n = 0.6.
        // max_th = 0.41667 * 150 = 62.5; min_th = 0.41667 * 50 = 20.833.
        assert!((d.max_th - 62.5).abs() < 1e-9, "{d:?}");
        assert!((d.min_th - 125.0 / 6.0).abs() < 1e-9);
        // p_max = (0.6 / 0.41667)^2 * 0.05 = 1.44^2 * 0.05 = 0.10368.
        assert!((d.max_p - 0.10368).abs() < 1e-12);
        // RC/2 = 0.1 * 1250 / 2 = 62.5 >= 30: w_q = 0.6 / 0.41667^2 * 1e-4 = 3.456e-4.
        assert!((d.w_q - 3.456e-4).abs() < 1e-15);
        // The thesis prints these rounded: 0.1, 20, 60, 3.5e-4; all within 5 %.
        assert!(rel(d.max_p, 0.1) <= 0.05);
        assert!(rel(d.min_th, 20.0) <= 0.05);
        assert!(rel(d.max_th, 60.0) <= 0.05);
        assert!(rel(d.w_q, 3.5e-4) <= 0.05);
    }

    /// Section 4.5.3 (experiment 3): N = 100, C = 3000 packets/s, R = 250 ms.
    #[test]
    fn experiment_3_eq_4_3_to_4_6() {
        let p = ApRedParams::default();
        let d = derive(&p, 100.0, 3000.0, 0.250);
        // k_r = 250 / 120 = 2.0833, k_c = 3000 / 2500 = 1.2, k = 2.5, k_n = 2.
        // max_th = 2.5 * 150 = 375, min_th = 2.5 * 50 = 125.
        assert!((d.max_th - 375.0).abs() < 1e-9);
        assert!((d.min_th - 125.0).abs() < 1e-9);
        // p_max = (2 / 2.5)^2 * 0.05 = 0.64 * 0.05 = 0.032 (thesis: 0.032).
        assert!((d.max_p - 0.032).abs() < 1e-12);
        // RC/2 = 0.25 * 3000 / 2 = 375 >= 100: w_q = 2 / 6.25 * 1e-4 = 3.2e-5 (thesis: 3.2e-5).
        assert!((d.w_q - 3.2e-5).abs() < 1e-15);
    }

    /// The initial scenario gives back the initial set; N > RC/2 takes the
    /// other branch of eq. 4.6; p_max is clamped to [0.01, 0.5].
    #[test]
    fn identity_other_branch_and_clamp() {
        let p = ApRedParams::default();
        let d = derive(&p, 50.0, 2500.0, 0.120);
        assert!((d.max_p - 0.05).abs() < 1e-15 && (d.w_q - 1e-4).abs() < 1e-18);
        assert!((d.min_th - 50.0).abs() < 1e-9 && (d.max_th - 150.0).abs() < 1e-9);
        // N = 200 > RC/2 = 0.12 * 2500 / 2 = 150: w_q = w_q0 / k = 1e-4 (k = 1);
        // p_max = 4^2 * 0.05 = 0.8 -> clamped to 0.5.
        let d = derive(&p, 200.0, 2500.0, 0.120);
        assert!((d.w_q - 1e-4).abs() < 1e-18);
        assert_eq!(d.max_p, 0.5);
        // N = 5: p_max = 0.1^2 * 0.05 = 5e-4 -> clamped to 0.01.
        let d = derive(&p, 5.0, 2500.0, 0.120);
        assert_eq!(d.max_p, 0.01);
        // w_q = 0.1 * 1e-4 = 1e-5 (N <= RC/2).
        assert!((d.w_q - 1e-5).abs() < 1e-18);
    }

    /// Section 4.5 counts FTP flows: with 50 web sessions next to 50 bulk
    /// flows (mean RTTs 80 and 120 ms), N = 50 and R = 120 ms give back the
    /// initial set (0.05, 50, 150); `oracle_flows = "all"` takes N = 100
    /// and R = 100 ms: k_r = 5/6, k_n = 2, p_max = (2 / (5/6))^2 x 0.05 =
    /// 0.288 (the figure).
    #[test]
    fn oracle_counts_long_lived_flows_by_default() {
        let mut link = LinkInfo::new(BitRate(10_000_000), 500);
        (link.flows, link.rtt) = (100, SimTime::from_millis(100));
        (link.bulk_flows, link.bulk_rtt) = (50, SimTime::from_millis(120));
        let a = ApRed::new(ApRedParams::default(), link);
        let (n, c, r) = a.estimates();
        assert!(n == 50.0 && c == 2500.0 && (r - 0.12).abs() < 1e-15);
        let r = a.red().params();
        assert!((r.max_p - 0.05).abs() < 1e-15 && (r.max_th - 150.0).abs() < 1e-9);
        let all = ApRedParams {
            oracle_flows: OracleFlows::All,
            ..ApRedParams::default()
        };
        let a = ApRed::new(all, link);
        assert_eq!(a.estimates(), (100.0, 2500.0, 0.1));
        assert!((a.red().params().max_p - 0.288).abs() < 1e-12);
        // No long-lived flow: N and R stay at n0 and r0.
        (link.bulk_flows, link.bulk_rtt) = (0, SimTime::ZERO);
        let a = ApRed::new(ApRedParams::default(), link);
        let (n, c, r) = a.estimates();
        assert!(n == 50.0 && c == 2500.0 && (r - 0.12).abs() < 1e-15);
    }

    #[test]
    fn oracle_takes_the_link_facts_and_set_link() {
        let mut link = LinkInfo::new(BitRate(5_000_000), 500);
        (link.flows, link.bulk_flows) = (30, 30);
        (link.rtt, link.bulk_rtt) = (SimTime::from_millis(100), SimTime::from_millis(100));
        let mut a = ApRed::new(ApRedParams::default(), link);
        // 5 Mb/s of 500-byte packets = 1250 packets/s: experiment 2.
        assert_eq!(a.estimates(), (30.0, 1250.0, 0.1));
        assert!((a.red().params().max_th - 62.5).abs() < 1e-9);
        assert!(a.take_changed());
        assert!(!a.take_changed());
        // Experiment 3: 12 Mb/s = 3000 packets/s, 100 flows, 250 ms.
        link.rate = BitRate(12_000_000);
        (link.flows, link.bulk_flows) = (100, 100);
        (link.rtt, link.bulk_rtt) = (SimTime::from_millis(250), SimTime::from_millis(250));
        a.set_link(SimTime::from_secs(5), &link);
        assert!(a.take_changed());
        let r = a.red().params();
        assert!((r.max_th - 375.0).abs() < 1e-9 && (r.max_p - 0.032).abs() < 1e-12);
        assert_eq!(a.tick_interval(), None);
        assert!(!a.wants_reverse());
    }

    #[test]
    fn set_param_derives_red_again() {
        // Experiment 2's facts: N = 30, C = 1250 packets/s, R = 100 ms.
        let mut link = LinkInfo::new(BitRate(5_000_000), 500);
        (link.flows, link.bulk_flows) = (30, 30);
        (link.rtt, link.bulk_rtt) = (SimTime::from_millis(100), SimTime::from_millis(100));
        let mut a = ApRed::new(ApRedParams::default(), link);
        a.take_changed();
        a.set_param("max_th0", 300.0).unwrap();
        // k = 0.41667: max_th = 0.41667 x 300 = 125.
        assert!((a.red().params().max_th - 125.0).abs() < 1e-9);
        assert!(a.take_changed() && !a.take_changed());
        a.set_param("min_th0", 100.0).unwrap();
        a.set_param("n0", 30.0).unwrap();
        a.set_param("r0", 0.1).unwrap(); // "100ms" arrives as 0.1 s
                                         // k_n = 1, k_r = 1, k_c = 0.5, k = 0.5: max_th = 150, min_th = 50,
                                         // p_max = (1 / 0.5)^2 x 0.05 = 0.2, w_q = 1 / 0.25 x 1e-4 = 4e-4 (N <= RC/2 = 62.5).
        let r = a.red().params();
        assert!((r.max_th - 150.0).abs() < 1e-9 && (r.min_th - 50.0).abs() < 1e-9);
        assert!(
            (r.max_p - 0.2).abs() < 1e-12 && (r.w_q - 4e-4).abs() < 1e-15,
            "{r:?}"
        );
        assert_eq!(a.estimates(), (30.0, 1250.0, 0.1), "estimates carry over");
        a.set_param("interval", 2.0).unwrap();
        a.set_param("window", 20.0).unwrap();
        assert_eq!(
            (a.p.interval, a.p.window),
            (SimTime::from_secs(2), SimTime::from_secs(20))
        );
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut a = ApRed::new(
            ApRedParams::default(),
            LinkInfo::new(BitRate(10_000_000), 500),
        );
        let red = a.red().params().clone();
        let e = a.set_param("max_p0", 0.6).unwrap_err();
        assert!(e.contains("0.6") && e.contains("[0.01, 0.5]"), "{e}");
        let e = a.set_param("min_th0", 200.0).unwrap_err();
        assert!(e.contains("200 must be less than max_th0 (150)"), "{e}");
        let e = a.set_param("n0", 2.5).unwrap_err();
        assert!(e.contains("2.5") && e.contains("whole number"), "{e}");
        let e = a.set_param("n0", 0.0).unwrap_err();
        assert!(e.contains("0 is not allowed"), "{e}");
        let e = a.set_param("r0", 0.0).unwrap_err();
        assert!(e.contains("0s is not allowed"), "{e}");
        assert_eq!(a.p, ApRedParams::default());
        assert_eq!(a.red().params(), &red);
        let e = a.set_param("max_th", 100.0).unwrap_err();
        assert!(
            e.contains("`max_th`")
                && e.contains("max_p0, min_th0, max_th0, w_q0, n0, c0, r0, interval, window")
                && e.contains("`max_th0` instead"),
            "{e}"
        );
    }

    fn pkt(flow: u32, flags: u8, seq: u64) -> PacketInfo {
        PacketInfo {
            size: 500,
            flow,
            flags,
            seq,
            ..PacketInfo::default()
        }
    }

    #[test]
    fn measured_data_ack_timing() {
        let mut m = Meter::default();
        let stale = SimTime::from_secs(10);
        let ms = SimTime::from_millis;
        // Segment 7 enters at 1000 ms after waiting 4 ms in the queue; segment 8
        // follows (not timed: one segment per flow at a time).
        m.forward(ms(1000), &pkt(3, flags::DATA, 7), 0.004, stale);
        m.forward(ms(1001), &pkt(3, flags::DATA, 8), 0.004, stale);
        // A duplicate ACK (cum 7) does not cover it; ACK 8 does, at 1054 ms.
        m.reverse(ms(1030), &pkt(3, flags::ACK, 7));
        assert_eq!(m.flows[3].srtt_s, None);
        m.reverse(ms(1054), &pkt(3, flags::ACK, 8));
        // D = 54 - 4 = 50 ms downstream; no handshake: upstream taken as D: R = 100 ms.
        assert!((m.flows[3].srtt_s.unwrap() - 0.100).abs() < 1e-12);
        // Next timed segment 20; a retransmission of 15 cancels it (Karn).
        m.forward(ms(1100), &pkt(3, flags::DATA, 20), 0.0, stale);
        m.forward(ms(1101), &pkt(3, flags::DATA | flags::RETX, 15), 0.0, stale);
        m.reverse(ms(1160), &pkt(3, flags::ACK, 30));
        assert_eq!(m.data_samples, 1);
        // Second sample 60 + 60 = 120 ms: srtt = 0.1 + (0.12 - 0.1) / 8 = 0.1025.
        m.forward(ms(1200), &pkt(3, flags::DATA, 31), 0.0, stale);
        m.reverse(ms(1260), &pkt(3, flags::ACK, 32));
        assert!((m.flows[3].srtt_s.unwrap() - 0.1025).abs() < 1e-12);
        // Reverse flows' ACKs entering the forward queue are neither data nor counted.
        m.forward(ms(1300), &pkt(9, flags::ACK, 5), 0.0, stale);
        let (n, r) = m.estimate(ms(0));
        assert_eq!(n, 1);
        assert!((r.unwrap() - 0.1025).abs() < 1e-12);
        // The window forgets flows not seen since.
        assert_eq!(m.estimate(ms(1201)).0, 0);
    }

    #[test]
    fn measured_handshake() {
        let mut m = Meter::default();
        let stale = SimTime::from_secs(10);
        let ms = SimTime::from_millis;
        // SYN enters at 0 (waits 2 ms); SYN/ACK enters the reverse link at 45 ms;
        // the first data enters at 103 ms.
        m.forward(ms(0), &pkt(1, flags::SYN, 0), 0.002, stale);
        m.reverse(ms(45), &pkt(1, flags::SYN | flags::ACK, 0));
        m.forward(ms(103), &pkt(1, flags::DATA, 0), 0.0, stale);
        // R = 103 - 2 = 101 ms; upstream = 103 - 45 = 58 ms.
        assert!((m.flows[1].srtt_s.unwrap() - 0.101).abs() < 1e-12);
        assert_eq!(m.flows[1].upstream_s, Some(0.058));
        assert_eq!(m.handshake_samples, 1);
        // Data 0 is timed; its ACK enters at 150 ms: D = 47 ms, R = 47 + 58 = 105 ms.
        m.reverse(ms(150), &pkt(1, flags::ACK, 1));
        // srtt = 0.101 + (0.105 - 0.101) / 8 = 0.1015.
        assert!((m.flows[1].srtt_s.unwrap() - 0.1015).abs() < 1e-12);
        // A retransmitted SYN gives no handshake sample.
        m.forward(ms(0), &pkt(2, flags::SYN, 0), 0.0, stale);
        m.forward(ms(3000), &pkt(2, flags::SYN, 0), 0.0, stale);
        m.reverse(ms(3045), &pkt(2, flags::SYN | flags::ACK, 0));
        m.forward(ms(3100), &pkt(2, flags::DATA, 0), 0.0, stale);
        assert_eq!(m.flows[2].srtt_s, None);
        // So does a flow whose first data after the SYN/ACK is a retransmission.
        m.forward(ms(0), &pkt(4, flags::SYN, 0), 0.0, stale);
        m.reverse(ms(45), &pkt(4, flags::SYN | flags::ACK, 0));
        m.forward(ms(400), &pkt(4, flags::DATA | flags::RETX, 0), 0.0, stale);
        assert_eq!(m.flows[4].srtt_s, None);
        assert!(m.flows[4].handshake_done && m.flows[4].upstream_s.is_none());
        assert_eq!(m.handshake_samples, 1);
    }

    #[test]
    fn measured_ticks_reparameterise() {
        let p = ApRedParams {
            estimator: Estimator::Measured,
            ..ApRedParams::default()
        };
        // 5 Mb/s: C = 1250 packets/s.
        let mut a = ApRed::new(p, LinkInfo::new(BitRate(5_000_000), 500));
        assert!(a.wants_reverse());
        assert_eq!(a.tick_interval(), Some(SimTime::from_secs(1)));
        // Before any estimate: N0 and R0, with the link's C.
        let (n, c, r) = a.estimates();
        assert!(n == 50.0 && c == 1250.0 && (r - 0.12).abs() < 1e-12);
        let mut rng = Rng::new(1, crate::rng::Stream::Aqm(0));
        let q = QueueLen::default();
        let ms = SimTime::from_millis;
        for f in 0..30u32 {
            let t = ms(100 + f as u64);
            a.on_enqueue(t, &pkt(f, flags::DATA, 0), q, &mut rng);
            a.observe_reverse(t + ms(50), &pkt(f, flags::ACK, 1));
        }
        a.take_changed();
        a.on_tick(SimTime::from_secs(1), q);
        assert!(a.take_changed());
        // N = 30, R = 50 + 50 ms (empty queue): experiment 2's parameters.
        let (n, c, r) = a.estimates();
        assert!(n == 30.0 && c == 1250.0 && (r - 0.1).abs() < 1e-12, "{r}");
        assert!((a.red().params().w_q - 3.456e-4).abs() < 1e-12);
    }

    #[test]
    fn validation_names_fields() {
        let ok = ApRedParams::default();
        assert!(ok.validate("aqm").is_ok());
        let bad = |f: &dyn Fn(&mut ApRedParams)| {
            let mut p = ApRedParams::default();
            f(&mut p);
            p.validate("aqm").unwrap_err().path
        };
        assert_eq!(bad(&|p| p.max_p0 = 0.6), "aqm.max_p0");
        assert_eq!(bad(&|p| p.max_p0 = 0.001), "aqm.max_p0");
        assert_eq!(bad(&|p| p.min_th0 = 150.0), "aqm.min_th0");
        assert_eq!(bad(&|p| p.w_q0 = 0.0), "aqm.w_q0");
        assert_eq!(bad(&|p| p.n0 = 0), "aqm.n0");
        assert_eq!(bad(&|p| p.c0 = 0.0), "aqm.c0");
        assert_eq!(bad(&|p| p.r0 = SimTime::ZERO), "aqm.r0");
        assert_eq!(bad(&|p| p.interval = SimTime::ZERO), "aqm.interval");
        assert_eq!(bad(&|p| p.window = SimTime::ZERO), "aqm.window");
        assert_eq!(bad(&|p| p.red.mean_pkt_size = 0), "aqm.mean_pkt_size");
    }
}
