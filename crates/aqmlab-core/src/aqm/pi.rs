//! The PI controller of Hollot, Misra, Towsley and Gong.
//!
//! Reference: `003_b277268f444f7691.txt` (Wu Chen's thesis) section 3.4:
//! the transfer function C(s) = K_PI (s / z + 1) / s (eq. 3.6), its
//! z-domain form (a z - b) / (z - 1) and the difference equation run at a
//! fixed sampling frequency (eq. 3.7):
//!
//! ```text
//! p(t+1) = p(t) + a (q(t+1) - q_ref) - b (q(t) - q_ref)
//! ```
//!
//! with p clamped to [0, 1] and applied to every arriving packet. Section 5.5
//! runs it with ns-2's a = 1.822e-5 and b = 1.816e-5 at 170 Hz; section 6.2
//! gives the design rule (eq. 6.3) K_p = 2 lambda sqrt(lambda^2 + 1) N / (R^2 C^2),
//! z = 2N / (R^2 C), with C(s) = K_p (s + z) / s (eq. 6.1).
//!
//! Choices where the thesis is silent:
//! - Discretisation of a designed controller: Tustin (s = (2/T) (z - 1)/(z + 1)),
//!   which gives a = K_p (1 + z T / 2), b = K_p (1 - z T / 2). With N = 60,
//!   C = 3750 pkt/s, R = 0.246 s (the design example of Hollot et al., the
//!   thesis's reference \[32\], as recalled: it is not in the seed papers),
//!   lambda = 0.128 and 160 Hz this reproduces ns-2's a = 1.822e-5 and
//!   b = 1.816e-5 within 0.05 % (unit test `tustin_reproduces_ns2_gains`),
//!   which is why 0.128 is the default lambda.
//! - R in the design is the round-trip time at the operating point: the
//!   flows' mean base RTT plus the queueing delay q_ref / C (the thesis's
//!   fluid model, section 4.2, takes R as the full round-trip time).
//! - Byte mode measures the queue in bytes divided by `mean_pkt_size` (so
//!   q_ref, a and b keep their per-packet units); the probability is not
//!   scaled by packet size unless `scale_by_size` (ns-2's `bytes_`) asks:
//!   then a packet of `size` bytes sees p x size / `mean_pkt_size`, capped
//!   at 1, so a 40-byte ACK beside 500-byte data sees p / 12.5.
//! - The first sample compares against q(0) = 0; p starts at 0.
//! - A designed controller keeps its gains when the link or its load
//!   changes later (a PI router is configured once; adapting is ST-PI's job).
//! - Mid-run changes ([`Aqm::set_param`]: `q_ref`, `a`, `b`,
//!   `sampling_freq`) leave the controller as a new configuration with those
//!   values would be, p and the previous sample carrying over: a designed
//!   controller is designed again (q_ref enters R; T_s enters Tustin's rule)
//!   from the link's facts at the time of the change; a given `a` or `b`
//!   replaces a design by direct gains (the other coefficient keeps its
//!   current value); direct gains are per sample and are kept when only
//!   `sampling_freq` changes. A new period applies after the tick already due.

use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::scenario::Value;
use crate::units::{BitRate, SimTime};
use serde::Serialize;

/// ns-2's default proportional coefficient a (per packet), the value the
/// thesis uses in section 5.5.
pub const NS2_A: f64 = 1.822e-5;
/// ns-2's default coefficient b (per packet), section 5.5.
pub const NS2_B: f64 = 1.816e-5;
/// Sampling frequency of sections 5.5 and 6.4, Hz.
pub const DEFAULT_SAMPLING_FREQ: f64 = 170.0;
/// ns-2's default reference queue (`Queue/PI set qref_ 50`), packets: the
/// thesis varies q_ref (40 to 120 in section 5.5) and fixes none.
pub const DEFAULT_Q_REF: f64 = 50.0;
/// Default lambda of the eq. 6.3 design (see the module doc).
pub const DEFAULT_LAMBDA: f64 = 0.128;

/// How a queue-based scheme measures the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    /// Waiting packets.
    Packet,
    /// Waiting bytes / `mean_pkt_size`.
    Byte,
}

impl QueueMode {
    /// Read the `mode` key.
    pub fn decode(t: &mut Table) -> SpecResult<QueueMode> {
        Ok(
            match t.choice("mode", &["packet", "byte"], Some("packet"))? {
                "byte" => QueueMode::Byte,
                _ => QueueMode::Packet,
            },
        )
    }

    /// The queue in packets (mean-size packets in byte mode).
    #[inline]
    pub fn measure(self, q: QueueLen, mean_pkt_size: u32) -> f64 {
        match self {
            QueueMode::Packet => q.pkts as f64,
            QueueMode::Byte => q.bytes as f64 / mean_pkt_size as f64,
        }
    }
}

/// Reject a mean packet size of zero.
pub fn check_pkt_size(path: &str, size: u32) -> SpecResult<()> {
    if size == 0 {
        return Err(SpecError::new(
            join(path, "mean_pkt_size"),
            "0 is not allowed; give a size in bytes >= 1",
        ));
    }
    Ok(())
}

/// Where the design of eq. 6.3 takes N, R and C from: each key given here,
/// or else the link's facts ([`LinkInfo`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PiDesign {
    /// Number of TCP flows N (default: the flows crossing the link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    /// Round-trip time R (default: the flows' mean base RTT + q_ref / C).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<SimTime>,
    /// Link capacity C (default: the link's rate), converted to packets of
    /// `mean_pkt_size` per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<BitRate>,
    /// Crossover frequency factor, omega_g = lambda / R (eq. 6.4), in (0, 0.85).
    pub lambda: f64,
}

impl Default for PiDesign {
    fn default() -> Self {
        PiDesign {
            flows: None,
            rtt: None,
            capacity: None,
            lambda: DEFAULT_LAMBDA,
        }
    }
}

/// The coefficients a and b of eq. 3.7: given, or designed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PiGains {
    /// a and b given directly, per packet.
    Direct { a: f64, b: f64 },
    /// Designed from N, R, C and lambda by eq. 6.3 and Tustin's rule.
    Design { design: PiDesign },
}

/// The PI controller's parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PiParams {
    /// The coefficients of eq. 3.7. Default: ns-2's a = 1.822e-5,
    /// b = 1.816e-5 (thesis section 5.5).
    #[serde(flatten)]
    pub gains: PiGains,
    /// Reference queue, packets (mean-size packets in byte mode).
    /// Default 50 (ns-2's `qref_`).
    pub q_ref: f64,
    /// Sampling frequency 1 / T_s, Hz. Default 170 (sections 5.5, 6.4).
    pub sampling_freq: f64,
    /// Queue measure.
    pub mode: QueueMode,
    /// Typical packet size, bytes (byte-mode normalisation; the unit of C in
    /// the design). Default: the scenario's packet size.
    pub mean_pkt_size: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// ns-2's `bytes_`: each packet's probability is p x size /
    /// `mean_pkt_size`, capped at 1 (independent of `mode`).
    pub scale_by_size: bool,
}

impl Default for PiParams {
    fn default() -> Self {
        PiParams {
            gains: PiGains::Direct { a: NS2_A, b: NS2_B },
            q_ref: DEFAULT_Q_REF,
            sampling_freq: DEFAULT_SAMPLING_FREQ,
            mode: QueueMode::Packet,
            mean_pkt_size: 1000,
            ecn: false,
            scale_by_size: false,
        }
    }
}

impl PiParams {
    /// Read the keys of an `[aqm]` table with `kind = "pi"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<PiParams> {
        let d = PiParams {
            mean_pkt_size: default_pkt_size,
            ..PiParams::default()
        };
        PiParams::decode_with(t, &d)
    }

    /// Read the PI keys with the defaults `d` (ST-PI has its own), and validate.
    pub fn decode_with(t: &mut Table, d: &PiParams) -> SpecResult<PiParams> {
        let (da, db) = match d.gains {
            PiGains::Direct { a, b } => (a, b),
            PiGains::Design { .. } => (NS2_A, NS2_B),
        };
        let a = t.opt_f64("a")?;
        let b = t.opt_f64("b")?;
        let design_path = t.field_path("design");
        let design = match t.take("design") {
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(PiDesign::default()),
            Some(v @ Value::Table(_)) => {
                let mut dt = Table::new(v, &design_path)?;
                let dd = PiDesign::default();
                let design = PiDesign {
                    flows: match dt.has("flows") {
                        true => Some(dt.u32("flows", 0)?),
                        false => None,
                    },
                    rtt: dt.opt_time("rtt")?,
                    capacity: match dt.has("capacity") {
                        true => Some(dt.req_rate("capacity")?),
                        false => None,
                    },
                    lambda: dt.f64("lambda", dd.lambda)?,
                };
                dt.finish()?;
                Some(design)
            }
            Some(v) => {
                return Err(SpecError::new(
                    design_path,
                    format!(
                        "expected true, false or a table {{ flows = N, rtt = \"..\", capacity = \"..\", lambda = x }}, found {} {v}",
                        v.type_name()
                    ),
                ))
            }
        };
        let gains = match design {
            Some(design) => {
                if a.is_some() || b.is_some() {
                    let given = match (a, b) {
                        (Some(a), Some(b)) => format!("a = {a} and b = {b}"),
                        (Some(a), None) => format!("a = {a}"),
                        (None, b) => format!("b = {}", b.unwrap_or_default()),
                    };
                    return Err(SpecError::new(
                        design_path,
                        format!("{given} given too; give either a and b, or design, not both"),
                    ));
                }
                PiGains::Design { design }
            }
            None => PiGains::Direct {
                a: a.unwrap_or(da),
                b: b.unwrap_or(db),
            },
        };
        let p = PiParams {
            gains,
            q_ref: t.f64("q_ref", d.q_ref)?,
            sampling_freq: t.f64("sampling_freq", d.sampling_freq)?,
            mode: QueueMode::decode(t)?,
            mean_pkt_size: t.u32("mean_pkt_size", d.mean_pkt_size)?,
            ecn: t.bool("ecn", d.ecn)?,
            scale_by_size: t.bool("scale_by_size", d.scale_by_size)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        match &self.gains {
            PiGains::Direct { a, b } => {
                check_range(&f("a"), *a, 0.0, false, 1.0)?;
                check_range(&f("b"), *b, 0.0, false, 1.0)?;
            }
            PiGains::Design { design } => {
                let g = |k: &str| join(&f("design"), k);
                if design.flows == Some(0) {
                    return Err(SpecError::new(g("flows"), "0 is not allowed; give N >= 1"));
                }
                if design.rtt == Some(SimTime::ZERO) {
                    return Err(SpecError::new(g("rtt"), "0s is not allowed; give R > 0"));
                }
                if !(design.lambda > 0.0 && design.lambda < 0.85) {
                    return Err(SpecError::new(
                        g("lambda"),
                        format!(
                            "{} is outside the allowed range (0, 0.85) (positive phase margin, thesis section 3.4.2)",
                            design.lambda
                        ),
                    ));
                }
            }
        }
        check_range(&f("q_ref"), self.q_ref, 0.0, false, 1e9)?;
        check_range(&f("sampling_freq"), self.sampling_freq, 0.0, true, 1e6)?;
        check_pkt_size(path, self.mean_pkt_size)
    }

    /// The sampling interval T_s, to the nearest nanosecond.
    pub fn interval(&self) -> SimTime {
        SimTime::from_secs_f64(1.0 / self.sampling_freq).max(SimTime(1))
    }
}

/// Eq. 6.3: K_p and z for N flows, round-trip time R (s) and capacity C
/// (packets/s).
pub fn design_kp_z(n: f64, r: f64, c: f64, lambda: f64) -> (f64, f64) {
    let kp = 2.0 * lambda * (lambda * lambda + 1.0).sqrt() * n / (r * r * c * c);
    let z = 2.0 * n / (r * r * c);
    (kp, z)
}

/// Tustin's rule for C(s) = K_p (s + z) / s at sampling period `ts` (s):
/// the a and b of eq. 3.7.
pub fn tustin(kp: f64, z: f64, ts: f64) -> (f64, f64) {
    (kp * (1.0 + z * ts / 2.0), kp * (1.0 - z * ts / 2.0))
}

/// The a and b a PI with parameters `p` uses on `link`.
pub fn gains_for(p: &PiParams, link: &LinkInfo) -> (f64, f64) {
    match &p.gains {
        PiGains::Direct { a, b } => (*a, *b),
        PiGains::Design { design } => {
            let size = p.mean_pkt_size;
            let c = design.capacity.unwrap_or(link.rate).packets_per_sec(size);
            // A link that no flow crosses (a reverse direction without
            // reverse traffic) is designed for one flow.
            let n = design.flows.unwrap_or(link.flows).max(1) as f64;
            let r = match design.rtt {
                Some(r) => r.as_secs_f64(),
                None => {
                    let r = link.rtt.as_secs_f64() + p.q_ref / c;
                    // No known RTT and q_ref = 0: one packet time.
                    if r > 0.0 {
                        r
                    } else {
                        1.0 / c
                    }
                }
            };
            let (kp, z) = design_kp_z(n, r, c, design.lambda);
            tustin(kp, z, p.interval().as_secs_f64())
        }
    }
}

/// The difference equation of eq. 3.7 and its state; ST-PI drives the same
/// controller and rescales it.
#[derive(Clone, Debug)]
pub struct PiController {
    /// Coefficient of the current error, per packet.
    pub a: f64,
    /// Coefficient of the previous error, per packet.
    pub b: f64,
    /// Reference queue, packets.
    pub q_ref: f64,
    /// Signal probability, in [0, 1].
    pub p: f64,
    /// The queue at the previous sample, packets.
    pub q_old: f64,
}

impl PiController {
    pub fn new(a: f64, b: f64, q_ref: f64) -> PiController {
        PiController {
            a,
            b,
            q_ref,
            p: 0.0,
            q_old: 0.0,
        }
    }

    /// One sample of eq. 3.7 with the queue `q` (packets); p is clamped to [0, 1].
    pub fn update(&mut self, q: f64) {
        let p = self.p + self.a * (q - self.q_ref) - self.b * (self.q_old - self.q_ref);
        self.p = p.clamp(0.0, 1.0);
        self.q_old = q;
    }

    /// Thesis eq. 6.6: q_ref <- k q_ref and K_p <- K_p / k^2 (a and b both
    /// scale by 1 / k^2, the zero and the sampling period unchanged).
    pub fn rescale(&mut self, k: f64) {
        self.q_ref *= k;
        let s = 1.0 / (k * k);
        self.a *= s;
        self.b *= s;
    }
}

/// The keys [`Pi`]'s [`Aqm::set_param`] accepts.
pub const SET_KEYS: &[&str] = &["q_ref", "a", "b", "sampling_freq"];

/// The running PI scheme.
#[derive(Clone, Debug)]
pub struct Pi {
    /// Boxed: the per-packet path reads only `ctl.p` (and `ecn` when it
    /// signals), and every link's `AqmImpl` stays small.
    p: Box<PiParams>,
    ctl: PiController,
    interval: SimTime,
    /// The link's latest facts (for a design redone by a mid-run change).
    link: LinkInfo,
    /// q_ref, a or b were set since the last `take_changed`.
    changed: bool,
}

impl Pi {
    pub fn new(p: PiParams, link: LinkInfo) -> Pi {
        let (a, b) = gains_for(&p, &link);
        let ctl = PiController::new(a, b, p.q_ref);
        let interval = p.interval();
        Pi {
            p: Box::new(p),
            ctl,
            interval,
            link,
            changed: false,
        }
    }

    /// The parameters as configured (ST-PI's adjustments are in
    /// [`Pi::controller`], and in [`Pi::current_params`]).
    pub fn params(&self) -> &PiParams {
        &self.p
    }

    /// The parameters in force: the configured ones with the controller's
    /// q_ref, and its a and b when they were given directly (ST-PI rescales
    /// them; a design keeps its definition).
    pub fn current_params(&self) -> PiParams {
        let mut p = (*self.p).clone();
        p.q_ref = self.ctl.q_ref;
        if let PiGains::Direct { .. } = p.gains {
            p.gains = PiGains::Direct {
                a: self.ctl.a,
                b: self.ctl.b,
            };
        }
        p
    }

    pub fn controller(&self) -> &PiController {
        &self.ctl
    }

    /// For ST-PI: rescale q_ref, a and b between samples.
    pub fn controller_mut(&mut self) -> &mut PiController {
        &mut self.ctl
    }

    /// The queue as the controller sees it, packets.
    #[inline]
    pub fn measure(&self, q: QueueLen) -> f64 {
        self.p.mode.measure(q, self.p.mean_pkt_size)
    }

    /// The sampling period T_s actually used, seconds.
    pub fn ts(&self) -> f64 {
        self.interval.as_secs_f64()
    }
}

impl Aqm for Pi {
    #[inline]
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketInfo,
        _q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        let p = if self.p.scale_by_size {
            (self.ctl.p * f64::from(pkt.size) / f64::from(self.p.mean_pkt_size)).min(1.0)
        } else {
            self.ctl.p
        };
        if !rng.bernoulli(p) {
            Verdict::Pass
        } else if self.p.ecn && pkt.ect {
            Verdict::Mark(Cause::Early)
        } else {
            Verdict::Drop(Cause::Early)
        }
    }

    fn tick_interval(&self) -> Option<SimTime> {
        Some(self.interval)
    }

    fn on_tick(&mut self, _now: SimTime, q: QueueLen) {
        let x = self.measure(q);
        self.ctl.update(x);
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p", self.ctl.p);
        out("a", self.ctl.a);
        out("b", self.ctl.b);
        out("q_ref", self.ctl.q_ref);
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Kept for a design redone by [`Aqm::set_param`]; the gains in force
    /// stay (see the module documentation).
    fn set_link(&mut self, _now: SimTime, link: &LinkInfo) {
        self.link = *link;
    }

    /// `q_ref`, `a`, `b` and `sampling_freq` may change during a run (see
    /// the module documentation); p and the previous sample carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        let mut p = self.current_params();
        match key {
            "q_ref" => p.q_ref = value,
            "sampling_freq" => p.sampling_freq = value,
            "a" | "b" => {
                let (mut a, mut b) = (self.ctl.a, self.ctl.b);
                if key == "a" {
                    a = value;
                } else {
                    b = value;
                }
                p.gains = PiGains::Direct { a, b };
            }
            _ => return Err(change::unknown_key("PI", key, SET_KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        let (a, b) = gains_for(&p, &self.link);
        self.ctl.a = a;
        self.ctl.b = b;
        self.ctl.q_ref = p.q_ref;
        self.interval = p.interval();
        *self.p = p;
        self.changed = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    fn link() -> LinkInfo {
        LinkInfo::new(BitRate(10_000_000), 500)
    }

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * y.abs()
    }

    /// Decode an `[aqm]` table given as TOML (without `kind`).
    pub(crate) fn decode(text: &str) -> SpecResult<PiParams> {
        let v: Value = toml::from_str(text).unwrap();
        let mut t = Table::new(v, "aqm")?;
        let p = PiParams::decode(&mut t, 500)?;
        t.finish()?;
        Ok(p)
    }

    #[test]
    fn difference_equation_3_7() {
        let mut c = PiController::new(0.001, 0.0009, 10.0);
        c.update(20.0);
        // 0 + 0.001 (20 - 10) - 0.0009 (0 - 10) = 0.01 + 0.009 = 0.019
        assert!((c.p - 0.019).abs() < 1e-15);
        c.update(15.0);
        // 0.019 + 0.001 * 5 - 0.0009 * 10 = 0.015
        assert!((c.p - 0.015).abs() < 1e-15);
        c.update(0.0);
        // 0.015 - 0.001 * 10 - 0.0009 * 5 = 0.0005
        assert!((c.p - 0.0005).abs() < 1e-15);
        c.update(0.0);
        // 0.0005 - 0.01 + 0.009 = -0.0005, clamped to 0
        assert_eq!(c.p, 0.0);
        c.p = 0.9999;
        c.update(1000.0);
        // 0.9999 + 0.001 * 990 + 0.0009 * 10 > 1, clamped to 1
        assert_eq!(c.p, 1.0);
    }

    #[test]
    fn tustin_reproduces_ns2_gains() {
        // N = 60, R = 0.246 s, C = 3750 pkt/s, lambda = 0.128:
        // K_p = 2 * 0.128 * sqrt(1.016384) * 60 / (0.246^2 * 3750^2) = 1.81965e-5,
        // z = 120 / (0.060516 * 3750) = 0.528786 rad/s;
        // a = K_p (1 + z / 320) = 1.82265e-5, b = K_p (1 - z / 320) = 1.81664e-5.
        let (kp, z) = design_kp_z(60.0, 0.246, 3750.0, 0.128);
        assert!(close(kp, 1.81965e-5, 1e-5), "{kp}");
        assert!(close(z, 0.528786, 1e-5), "{z}");
        let (a, b) = tustin(kp, z, 1.0 / 160.0);
        assert!(close(a, NS2_A, 5e-4), "{a}");
        assert!(close(b, NS2_B, 5e-4), "{b}");
    }

    #[test]
    fn design_from_link_info() {
        // 10 Mb/s and 500 B: C = 2500 pkt/s; N = 100; R = 0.1 s + 50 / 2500 s = 0.12 s.
        // K_p = 2 * 0.128 * sqrt(1.016384) * 100 / (0.0144 * 6.25e6) = 2.86765e-4,
        // z = 200 / (0.0144 * 2500) = 5.55556; T = 5882353 ns (170 Hz);
        // a = K_p (1 + z T / 2) = 2.91451e-4, b = K_p (1 - z T / 2) = 2.82079e-4.
        let mut info = link();
        info.flows = 100;
        info.rtt = SimTime::from_millis(100);
        let p = decode("design = true").unwrap();
        let pi = Pi::new(p, info);
        assert!(close(pi.ctl.a, 2.91451e-4, 1e-5), "{}", pi.ctl.a);
        assert!(close(pi.ctl.b, 2.82079e-4, 1e-5), "{}", pi.ctl.b);
        // The same design with N, R and C given explicitly.
        let p = decode(
            "design = { flows = 100, rtt = \"120ms\", capacity = \"10Mbps\", lambda = 0.128 }",
        )
        .unwrap();
        let pi2 = Pi::new(p, LinkInfo::new(BitRate(1_000_000), 500));
        assert!(close(pi2.ctl.a, pi.ctl.a, 1e-12));
        assert!(close(pi2.ctl.b, pi.ctl.b, 1e-12));
    }

    #[test]
    fn rescale_eq_6_6() {
        // Section 6.4's gains are ns-2's times 4, i.e. eq. 6.6 with k = 1/2;
        // k = 2 takes them back: 7.288e-5 / 4 = 1.822e-5, 7.264e-5 / 4 = 1.816e-5.
        let mut c = PiController::new(7.288e-5, 7.264e-5, 150.0);
        c.rescale(2.0);
        assert!(close(c.a, NS2_A, 1e-12));
        assert!(close(c.b, NS2_B, 1e-12));
        assert!(close(c.q_ref, 300.0, 1e-15));
    }

    #[test]
    fn defaults_and_sampling() {
        let p = decode("").unwrap();
        assert_eq!(
            p.gains,
            PiGains::Direct {
                a: 1.822e-5,
                b: 1.816e-5
            }
        );
        assert_eq!(p.q_ref, 50.0);
        assert_eq!(p.mean_pkt_size, 500);
        // 1 / 170 Hz = 5.882353 ms, to the nearest ns.
        let pi = Pi::new(p, link());
        assert_eq!(pi.tick_interval(), Some(SimTime(5_882_353)));
    }

    #[test]
    fn ticks_update_and_byte_mode_measures_bytes() {
        let p = decode("a = 0.001\nb = 0.0009\nq_ref = 10\nmode = \"byte\"").unwrap();
        let mut pi = Pi::new(p, link());
        // 10000 bytes / 500 = 20 packets: p = 0.001 * 10 + 0.0009 * 10 = 0.019
        pi.on_tick(
            SimTime::ZERO,
            QueueLen {
                pkts: 3,
                bytes: 10_000,
            },
        );
        assert!((pi.ctl.p - 0.019).abs() < 1e-15);
    }

    #[test]
    fn verdicts_and_ecn_switch() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ect = PacketInfo {
            size: 500,
            ect: true,
            ..PacketInfo::default()
        };
        let plain = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        let q = QueueLen::default();
        let mut pi = Pi::new(decode("ecn = true").unwrap(), link());
        assert_eq!(
            pi.on_enqueue(SimTime::ZERO, &ect, q, &mut rng),
            Verdict::Pass
        );
        pi.ctl.p = 1.0;
        assert_eq!(
            pi.on_enqueue(SimTime::ZERO, &ect, q, &mut rng),
            Verdict::Mark(Cause::Early)
        );
        assert_eq!(
            pi.on_enqueue(SimTime::ZERO, &plain, q, &mut rng),
            Verdict::Drop(Cause::Early)
        );
        let mut pi = Pi::new(decode("").unwrap(), link());
        pi.ctl.p = 1.0;
        assert_eq!(
            pi.on_enqueue(SimTime::ZERO, &ect, q, &mut rng),
            Verdict::Drop(Cause::Early)
        );
        // p = 0.25: a quarter of the arrivals are signalled.
        pi.ctl.p = 0.25;
        let n = 100_000;
        let hits = (0..n)
            .filter(|_| pi.on_enqueue(SimTime::ZERO, &plain, q, &mut rng) != Verdict::Pass)
            .count();
        assert!((hits as f64 / n as f64 - 0.25).abs() < 0.005, "{hits}");
    }

    /// `scale_by_size` (ns-2's `bytes_`): p x size / mean_pkt_size, so at
    /// p = 0.5 a 40-byte ACK is dropped with 0.04 (mean size 500) and a
    /// 1000-byte packet always.
    #[test]
    fn scale_by_size_scales_each_packets_probability() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let q = QueueLen::default();
        let mut pi = Pi::new(
            decode("scale_by_size = true\nmean_pkt_size = 500").unwrap(),
            link(),
        );
        pi.ctl.p = 0.5;
        let rate = |pi: &mut Pi, size: u32, rng: &mut Rng| {
            let pkt = PacketInfo {
                size,
                ..PacketInfo::default()
            };
            let n = 100_000;
            (0..n)
                .filter(|_| pi.on_enqueue(SimTime::ZERO, &pkt, q, rng) != Verdict::Pass)
                .count() as f64
                / n as f64
        };
        assert!((rate(&mut pi, 40, &mut rng) - 0.04).abs() < 0.003);
        assert!((rate(&mut pi, 500, &mut rng) - 0.5).abs() < 0.006);
        assert_eq!(rate(&mut pi, 1000, &mut rng), 1.0);
    }

    #[test]
    fn set_param_direct_gains() {
        let mut pi = Pi::new(decode("a = 0.001\nb = 0.0009\nq_ref = 10").unwrap(), link());
        pi.on_tick(
            SimTime::ZERO,
            QueueLen {
                pkts: 20,
                bytes: 10_000,
            },
        );
        // p = 0.001 * 10 + 0.0009 * 10 = 0.019, q_old = 20 (as in difference_equation_3_7).
        pi.set_param("q_ref", 15.0).unwrap();
        assert!(pi.take_changed() && !pi.take_changed());
        pi.set_param("a", 0.002).unwrap();
        pi.set_param("sampling_freq", 100.0).unwrap();
        // Direct gains are per sample: b is kept, a is the new one, T_s = 10 ms.
        assert_eq!((pi.ctl.a, pi.ctl.b, pi.ctl.q_ref), (0.002, 0.0009, 15.0));
        assert_eq!(pi.tick_interval(), Some(SimTime::from_millis(10)));
        // p and q_old carried over: 0.019 + 0.002 (25 - 15) - 0.0009 (20 - 15) = 0.0345.
        pi.on_tick(
            SimTime::ZERO,
            QueueLen {
                pkts: 25,
                bytes: 12_500,
            },
        );
        assert!((pi.ctl.p - 0.0345).abs() < 1e-15, "{}", pi.ctl.p);
        assert_eq!(pi.p.q_ref, 15.0);
    }

    #[test]
    fn set_param_redesigns_a_designed_controller() {
        // As design_from_link_info: N = 100, R = 0.1 s + q_ref / C.
        let mut info = link();
        info.flows = 100;
        info.rtt = SimTime::from_millis(100);
        let mut pi = Pi::new(decode("design = true").unwrap(), info);
        // q_ref 50 -> 200: R = 0.1 + 200 / 2500 = 0.18 s;
        // K_p = 2 * 0.128 * sqrt(1.016384) * 100 / (0.0324 * 6.25e6) = 1.27451e-4,
        // z = 200 / (0.0324 * 2500) = 2.46914; T = 5882353 ns;
        // a = K_p (1 + z T / 2) = 1.28376e-4, b = K_p (1 - z T / 2) = 1.26525e-4.
        pi.set_param("q_ref", 200.0).unwrap();
        assert!(close(pi.ctl.a, 1.28376e-4, 1e-5), "{}", pi.ctl.a);
        assert!(close(pi.ctl.b, 1.26525e-4, 1e-5), "{}", pi.ctl.b);
        // The same as a PI configured with q_ref = 200 from the start.
        let fresh = Pi::new(decode("design = true\nq_ref = 200").unwrap(), info);
        assert_eq!((pi.ctl.a, pi.ctl.b), (fresh.ctl.a, fresh.ctl.b));
        // A new sampling frequency redoes Tustin's rule: the same as a fresh 100 Hz design.
        pi.set_param("sampling_freq", 100.0).unwrap();
        let fresh = Pi::new(
            decode("design = true\nq_ref = 200\nsampling_freq = 100").unwrap(),
            info,
        );
        assert_eq!((pi.ctl.a, pi.ctl.b), (fresh.ctl.a, fresh.ctl.b));
        // Giving b turns the design into direct gains, a kept.
        let a = pi.ctl.a;
        pi.set_param("b", 1e-4).unwrap();
        assert_eq!(pi.p.gains, PiGains::Direct { a, b: 1e-4 });
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut pi = Pi::new(decode("").unwrap(), link());
        let before = ((*pi.p).clone(), pi.ctl.a, pi.ctl.b, pi.ctl.q_ref);
        let e = pi.set_param("q_ref", -1.0).unwrap_err();
        assert!(e.contains("-1") && e.contains("[0, 1000000000]"), "{e}");
        let e = pi.set_param("a", 2.0).unwrap_err();
        assert!(e.contains('2') && e.contains("[0, 1]"), "{e}");
        let e = pi.set_param("sampling_freq", 0.0).unwrap_err();
        assert!(e.contains("(0, 1000000]"), "{e}");
        assert_eq!(((*pi.p).clone(), pi.ctl.a, pi.ctl.b, pi.ctl.q_ref), before);
        assert!(!pi.take_changed());
        let e = pi.set_param("lambda", 0.1).unwrap_err();
        assert!(
            e.contains("`lambda`") && e.contains("q_ref, a, b, sampling_freq"),
            "{e}"
        );
    }

    #[test]
    fn validation_names_fields() {
        let path = |text: &str| decode(text).unwrap_err().path;
        assert_eq!(path("a = -1e-5"), "aqm.a");
        assert_eq!(path("b = 2"), "aqm.b");
        assert_eq!(path("q_ref = -1"), "aqm.q_ref");
        assert_eq!(path("sampling_freq = 0"), "aqm.sampling_freq");
        assert_eq!(path("mean_pkt_size = 0"), "aqm.mean_pkt_size");
        assert_eq!(path("mode = \"bits\""), "aqm.mode");
        assert_eq!(path("a = 1e-5\ndesign = true"), "aqm.design");
        assert_eq!(path("design = 3"), "aqm.design");
        assert_eq!(path("design = { lambda = 0.9 }"), "aqm.design.lambda");
        assert_eq!(path("design = { flows = 0 }"), "aqm.design.flows");
        assert_eq!(path("design = { rtt = \"0s\" }"), "aqm.design.rtt");
        assert_eq!(path("design = { rate = \"1Mbps\" }"), "aqm.design.rate");
        let e = decode("design = { lambda = 0.9 }").unwrap_err();
        assert!(e.msg.contains("0.9") && e.msg.contains("(0, 0.85)"), "{e}");
        // design = false is the default: a and b given (or ns-2's).
        assert_eq!(decode("design = false").unwrap(), decode("").unwrap());
    }
}
