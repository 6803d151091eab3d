//! Statistical Tuning PI (ST-PI): a PI controller whose reference queue and
//! gain follow the detected variance of the queue.
//!
//! Reference: `003_b277268f444f7691.txt` (Wu Chen's thesis) chapter 6:
//! figure 6.1 (the algorithm), eqs. 6.11 and 6.12 (variance and detection
//! functions), eq. 6.6 (q_ref <- k q_ref, K_p <- K_p / k^2), section 6.3.2
//! (phi_2 = phi_1 / 4, gamma = 0.7, h_l = gamma / sqrt(3)) and section 6.4
//! (defaults a = 7.288e-5, b = 7.264e-5, q_ref = 150 packets, 170 Hz,
//! h_s = 0.45 / sqrt(3), phi_1 = 1/7 per second). The detector is ST-RED's
//! (chapter 5: eqs. 5.5-5.10, figure 5.3) run once per sampling interval
//! with the weights phi_1 T_s and phi_2 T_s instead of phi w_q per packet.
//!
//! Every sampling interval, with q the instantaneous queue:
//!
//! ```text
//! PI: p <- p + a (q - q_ref) - b (q_old - q_ref)              (eq. 3.7)
//! if 0 < q < 2 q_ref:                                         (l_range, eq. 5.6)
//!     sigma^2 <- (1 - phi_1 T_s) sigma^2 + phi_1 T_s (q - q_ref)^2     (eq. 6.11)
//!     if (1 - gamma) q_ref < q < (1 + gamma) q_ref:           (d_range, eq. 5.8)
//!         g^2 <- (1 - phi_2 T_s) g^2 + phi_2 T_s (q - q_ref)^2         (eq. 6.12)
//!         if (g > h_l q_ref and sigma > h_l q_ref) or (g < h_s q_ref and sigma < h_s q_ref):
//!             k <- sigma / (h_l q_ref) if g > h_l q_ref, else sigma / (h_s q_ref)
//!             q_ref <- k q_ref;  a <- a / k^2;  b <- b / k^2   (eq. 6.6)
//!             g^2 <- ((h_s q_ref)^2 + (h_l q_ref)^2) / 2
//! ```
//!
//! sigma^2 starts at 0 and g^2 at ((h_s q_ref)^2 + (h_l q_ref)^2) / 2.
//!
//! Choices where the thesis is silent:
//! - The controller is [`Pi`] itself (same keys, defaults from section 6.4);
//!   K_p <- K_p / k^2 scales both a and b by 1 / k^2 (the zero z and T_s
//!   unchanged), as the section 6.4 gains are ns-2's scaled by 4 = 1 / (1/2)^2.
//! - Order within a sample: the PI update runs first with the current
//!   q_ref, a and b; an adjustment applies from the next sample.
//! - `variance_centre`: the centre of the two functions and of the ranges.
//!   `"q_ref"` (default) is fig. 6.1 as written: a queue standing above
//!   2 q_ref is never sampled and ST-PI is then PI to the last digit.
//!   `"mean"` centres on the queue's running mean (eq. 5.3's mu) and
//!   `"adaptive"` on q_ref while that mean is inside l_range, on the mean
//!   once it has left it. See [`VarianceCentre`] and `docs/fidelity.md`,
//!   item 5, for why fig. 6.1 stays the default.
//! - Safeguards not in the figure: the new q_ref is kept within
//!   [`q_ref_min`, `q_ref_max`] (k is cut accordingly; default 1 packet and
//!   half the buffer, so that l_range fits in the buffer), and a detection
//!   whose k would be 0 (sigma = 0) moves q_ref to `q_ref_min`.
//! - Mid-run changes ([`Aqm::set_param`]): PI's `q_ref`, `a`, `b` and
//!   `sampling_freq` (handed to [`Pi`], applied to the values in force, so
//!   to the adjusted q_ref and gains), and `phi_1`, `phi_2`, `gamma`, `h_l`,
//!   `h_s`, `q_ref_min`, `q_ref_max`, each checked with the others in force.
//!   phi T_s is recomputed for a new T_s; g^2 is reset to its initial value
//!   when that value changes (a new q_ref, h_l or h_s), as after an
//!   adjustment; sigma^2, k, p and the count of adjustments carry over. A
//!   default `q_ref_max` (half the buffer, at least q_ref) follows a new
//!   q_ref.

use super::pi::{Pi, PiGains, PiParams};
use super::{change, Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// sqrt(3): the ratio of a uniform variable's amplitude to its standard
/// deviation (section 5.4.2).
const SQRT_3: f64 = 1.732_050_807_568_877_2;

/// ST-PI's parameters. Defaults from section 6.4 unless noted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StPiParams {
    /// The PI controller's keys (a, b or design, q_ref, sampling_freq, mode,
    /// mean_pkt_size, ecn). Defaults: a = 7.288e-5, b = 7.264e-5,
    /// q_ref = 150 packets, 170 Hz.
    #[serde(flatten)]
    pub pi: PiParams,
    /// Forgetting factor of the variance function, 1/s (the inverse of the
    /// system time constant, section 6.3.2). Default 1/7.
    pub phi_1: f64,
    /// Forgetting factor of the detection function, 1/s, at most phi_1.
    /// Default phi_1 / 4 (section 6.3.2).
    pub phi_2: f64,
    /// Half-width of the detection range d_range as a fraction of q_ref,
    /// in (0, 1]. Default 0.7 (section 5.4.2).
    pub gamma: f64,
    /// Upper threshold coefficient. Default gamma / sqrt(3) (section 5.4.2).
    pub h_l: f64,
    /// Lower threshold coefficient, in (0, h_l). Default 0.45 / sqrt(3).
    pub h_s: f64,
    /// Smallest q_ref an adjustment may set, packets (a safeguard, not in
    /// the thesis). Default 1.
    pub q_ref_min: f64,
    /// Largest q_ref an adjustment may set, packets (a safeguard). Default:
    /// half the link's buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q_ref_max: Option<f64>,
    /// What the variance and detection functions are centred on, and the
    /// ranges l_range and d_range measured from (key `variance_centre`).
    /// Default [`VarianceCentre::QRef`] (fig. 6.1 as written).
    pub variance_centre: VarianceCentre,
}

/// The centre mu of eq. 6.11-6.12 and of the ranges (eq. 5.6, 5.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum VarianceCentre {
    /// q_ref while the queue's running mean m (an EWMA of the samples with
    /// the variance function's weight phi_1 T_s, starting at q_ref) is
    /// inside l_range (0, 2 q_ref), as fig. 6.1 writes it; m itself once m
    /// has left l_range, i.e. once the queue has stood above 2 q_ref for
    /// about the variance function's time constant 1 / phi_1: no longer a
    /// transient (section 5.3, item 2) but the level PI cannot bring the
    /// queue down from. m is eq. 5.3's mu, "the mean value of y_k".
    #[serde(rename = "adaptive")]
    Adaptive,
    /// q_ref always, as fig. 6.1 writes it: samples outside 0 < q < 2 q_ref
    /// are ignored, so a queue that stays above 2 q_ref leaves ST-PI equal
    /// to PI.
    #[serde(rename = "q_ref")]
    QRef,
    /// Always the running mean m (the ranges too): the detector measures
    /// the oscillation around whatever level the queue stands at.
    #[serde(rename = "mean")]
    Mean,
}

impl Default for StPiParams {
    fn default() -> Self {
        let phi_1 = 1.0 / 7.0;
        let gamma = 0.7;
        StPiParams {
            pi: PiParams {
                gains: PiGains::Direct {
                    a: 7.288e-5,
                    b: 7.264e-5,
                },
                q_ref: 150.0,
                ..PiParams::default()
            },
            phi_1,
            phi_2: 0.25 * phi_1,
            gamma,
            h_l: gamma / SQRT_3,
            h_s: 0.45 / SQRT_3,
            q_ref_min: 1.0,
            q_ref_max: None,
            variance_centre: VarianceCentre::QRef,
        }
    }
}

impl StPiParams {
    /// Read the keys of an `[aqm]` table with `kind = "st-pi"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<StPiParams> {
        let d = StPiParams::default();
        let pi_defaults = PiParams {
            mean_pkt_size: default_pkt_size,
            ..d.pi.clone()
        };
        let pi = PiParams::decode_with(t, &pi_defaults)?;
        let phi_1 = t.f64("phi_1", d.phi_1)?;
        let gamma = t.f64("gamma", d.gamma)?;
        let p = StPiParams {
            pi,
            phi_1,
            phi_2: t.f64("phi_2", 0.25 * phi_1)?,
            gamma,
            h_l: t.f64("h_l", gamma / SQRT_3)?,
            h_s: t.f64("h_s", d.h_s)?,
            q_ref_min: t.f64("q_ref_min", d.q_ref_min)?,
            q_ref_max: t.opt_f64("q_ref_max")?,
            variance_centre: match t.choice(
                "variance_centre",
                &["q_ref", "adaptive", "mean"],
                Some("q_ref"),
            )? {
                "mean" => VarianceCentre::Mean,
                "adaptive" => VarianceCentre::Adaptive,
                _ => VarianceCentre::QRef,
            },
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        self.pi.validate(path)?;
        if self.pi.q_ref <= 0.0 {
            return Err(SpecError::new(
                f("q_ref"),
                "0 is not allowed for st-pi: its thresholds are fractions of q_ref; give q_ref > 0",
            ));
        }
        let ts = self.pi.interval().as_secs_f64();
        let fmax = 1.0 / ts;
        check_range(&f("phi_1"), self.phi_1, 0.0, true, fmax)?;
        check_range(&f("phi_2"), self.phi_2, 0.0, true, fmax)?;
        if self.phi_2 > self.phi_1 {
            return Err(SpecError::new(
                f("phi_2"),
                format!(
                    "{} must not exceed phi_1 ({}): the variance must move faster than the detection function (section 5.4.1)",
                    self.phi_2, self.phi_1
                ),
            ));
        }
        check_range(&f("gamma"), self.gamma, 0.0, true, 1.0)?;
        check_range(&f("h_l"), self.h_l, 0.0, true, 1e3)?;
        check_range(&f("h_s"), self.h_s, 0.0, true, 1e3)?;
        if self.h_s >= self.h_l {
            return Err(SpecError::new(
                f("h_s"),
                format!("{} must be less than h_l ({})", self.h_s, self.h_l),
            ));
        }
        check_range(&f("q_ref_min"), self.q_ref_min, 0.0, true, self.pi.q_ref)
            .map_err(|e| SpecError::new(e.path, format!("{} (at most q_ref)", e.msg)))?;
        if let Some(m) = self.q_ref_max {
            check_range(&f("q_ref_max"), m, self.pi.q_ref, false, 1e9)
                .map_err(|e| SpecError::new(e.path, format!("{} (at least q_ref)", e.msg)))?;
        }
        Ok(())
    }
}

/// The variance and detection functions of figure 6.1 (ST-RED's detector,
/// figure 5.3, sampled every T_s).
#[derive(Clone, Debug)]
pub struct VarianceDetector {
    /// Variance function sigma^2, packets^2.
    pub sigma2: f64,
    /// Detection function g^2, packets^2.
    pub g2: f64,
    /// phi_1 T_s.
    w1: f64,
    /// phi_2 T_s.
    w2: f64,
    phi_1: f64,
    phi_2: f64,
    gamma: f64,
    h_l: f64,
    h_s: f64,
    centre: VarianceCentre,
    /// Running mean of the samples (eq. 5.3's mu), packets.
    pub mean: f64,
}

impl VarianceDetector {
    pub fn new(p: &StPiParams, ts: f64, q_ref: f64) -> VarianceDetector {
        let mut d = VarianceDetector {
            sigma2: 0.0,
            g2: 0.0,
            w1: 0.0,
            w2: 0.0,
            phi_1: 0.0,
            phi_2: 0.0,
            gamma: 0.0,
            h_l: 0.0,
            h_s: 0.0,
            centre: p.variance_centre,
            mean: q_ref,
        };
        d.configure(p, ts);
        d.reset(q_ref);
        d
    }

    /// Take the constants of `p` at the sampling period `ts` (seconds);
    /// sigma^2 and g^2 are kept.
    fn configure(&mut self, p: &StPiParams, ts: f64) {
        self.w1 = p.phi_1 * ts;
        self.w2 = p.phi_2 * ts;
        self.phi_1 = p.phi_1;
        self.phi_2 = p.phi_2;
        self.gamma = p.gamma;
        self.h_l = p.h_l;
        self.h_s = p.h_s;
        self.centre = p.variance_centre;
    }

    /// g_0^2 = ((h_s q_ref)^2 + (h_l q_ref)^2) / 2 (section 5.3.1).
    fn g2_initial(&self, q_ref: f64) -> f64 {
        let (s, l) = (self.h_s * q_ref, self.h_l * q_ref);
        (s * s + l * l) / 2.0
    }

    /// g^2 <- ((h_s q_ref)^2 + (h_l q_ref)^2) / 2 (section 5.3.1).
    pub fn reset(&mut self, q_ref: f64) {
        self.g2 = self.g2_initial(q_ref);
    }

    /// One sample of the queue `q` against `q_ref`; returns the adjustment
    /// factor k when a significant change of variance is detected.
    pub fn observe(&mut self, q: f64, q_ref: f64) -> Option<f64> {
        let mu = match self.centre {
            VarianceCentre::QRef => q_ref,
            VarianceCentre::Mean => {
                self.mean = (1.0 - self.w1) * self.mean + self.w1 * q;
                self.mean
            }
            VarianceCentre::Adaptive => {
                self.mean = (1.0 - self.w1) * self.mean + self.w1 * q;
                if self.mean > 0.0 && self.mean < 2.0 * q_ref {
                    q_ref
                } else {
                    self.mean
                }
            }
        };
        // l_range (eq. 5.6)
        if !(q > 0.0 && q < 2.0 * mu) {
            return None;
        }
        let e2 = (q - mu) * (q - mu);
        self.sigma2 = (1.0 - self.w1) * self.sigma2 + self.w1 * e2; // eq. 6.11
                                                                    // d_range (eq. 5.8)
        if !(q > (1.0 - self.gamma) * mu && q < (1.0 + self.gamma) * mu) {
            return None;
        }
        self.g2 = (1.0 - self.w2) * self.g2 + self.w2 * e2; // eq. 6.12
        let (g, sigma) = (self.g2.sqrt(), self.sigma2.sqrt());
        let (upper, lower) = (self.h_l * q_ref, self.h_s * q_ref);
        if g > upper && sigma > upper {
            Some(sigma / upper) // eq. 5.12
        } else if g < lower && sigma < lower {
            Some(sigma / lower) // eq. 5.14
        } else {
            None
        }
    }

    /// Standard deviation sigma, packets.
    pub fn sigma(&self) -> f64 {
        self.sigma2.sqrt()
    }

    /// sqrt(g^2), packets.
    pub fn g(&self) -> f64 {
        self.g2.sqrt()
    }
}

/// The running ST-PI scheme.
#[derive(Clone, Debug)]
pub struct StPi {
    pi: Pi,
    det: VarianceDetector,
    /// The last adjustment factor applied (1 before any).
    k: f64,
    q_ref_min: f64,
    q_ref_max: f64,
    /// `q_ref_max` was given (else it is the default, from the buffer).
    q_ref_max_given: bool,
    /// The link's buffer, packets (the default `q_ref_max` is half of it).
    buffer_pkts: f64,
    /// Adjustments so far.
    adjustments: u32,
    changed: bool,
}

impl StPi {
    pub fn new(p: StPiParams, link: LinkInfo) -> StPi {
        let q_ref_max = p
            .q_ref_max
            .unwrap_or_else(|| (link.buffer_pkts() / 2.0).max(p.pi.q_ref));
        let q_ref_min = p.q_ref_min;
        let pi = Pi::new(p.pi.clone(), link);
        let det = VarianceDetector::new(&p, pi.ts(), p.pi.q_ref);
        StPi {
            pi,
            det,
            k: 1.0,
            q_ref_min,
            q_ref_max,
            q_ref_max_given: p.q_ref_max.is_some(),
            buffer_pkts: link.buffer_pkts(),
            adjustments: 0,
            changed: false,
        }
    }

    /// The parameters in force (PI's adjusted q_ref and gains).
    pub fn current_params(&self) -> StPiParams {
        let d = &self.det;
        StPiParams {
            pi: self.pi.current_params(),
            phi_1: d.phi_1,
            phi_2: d.phi_2,
            gamma: d.gamma,
            h_l: d.h_l,
            h_s: d.h_s,
            q_ref_min: self.q_ref_min,
            q_ref_max: self.q_ref_max_given.then_some(self.q_ref_max),
            variance_centre: d.centre,
        }
    }

    /// The PI controller inside.
    pub fn pi(&self) -> &Pi {
        &self.pi
    }

    pub fn detector(&self) -> &VarianceDetector {
        &self.det
    }

    /// Adjustments of q_ref so far.
    pub fn adjustments(&self) -> u32 {
        self.adjustments
    }

    /// Figure 6.1's detection and adjustment for the sampled queue `q` (packets).
    fn detect(&mut self, q: f64) {
        let q_ref = self.pi.controller().q_ref;
        let Some(k) = self.det.observe(q, q_ref) else {
            return;
        };
        let new_ref = (k * q_ref).clamp(self.q_ref_min, self.q_ref_max);
        if new_ref != q_ref {
            let k = new_ref / q_ref;
            let c = self.pi.controller_mut();
            c.rescale(k); // eq. 6.6
            c.q_ref = new_ref; // exactly, not q_ref * (new_ref / q_ref)
            self.k = k;
            self.adjustments += 1;
            self.changed = true;
        }
        self.det.reset(self.pi.controller().q_ref);
    }
}

impl Aqm for StPi {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        self.pi.on_enqueue(now, pkt, q, rng)
    }

    fn tick_interval(&self) -> Option<SimTime> {
        self.pi.tick_interval()
    }

    fn on_tick(&mut self, now: SimTime, q: QueueLen) {
        self.pi.on_tick(now, q);
        let x = self.pi.measure(q);
        self.detect(x);
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        Aqm::params(&self.pi, out);
        out("k", self.k);
        out("sigma", self.det.sigma());
        out("g", self.det.g());
    }

    fn take_changed(&mut self) -> bool {
        let pi = self.pi.take_changed();
        std::mem::take(&mut self.changed) || pi
    }

    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        self.pi.set_link(now, link);
        self.buffer_pkts = link.buffer_pkts();
    }

    /// See the module documentation: PI's keys go to [`Pi`], the detector's
    /// and the bounds are ST-PI's; each is checked with the others in force.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &[
            "q_ref",
            "a",
            "b",
            "sampling_freq",
            "phi_1",
            "phi_2",
            "gamma",
            "h_l",
            "h_s",
            "q_ref_min",
            "q_ref_max",
        ];
        let mut p = self.current_params();
        let mut pi = None;
        match key {
            "q_ref" | "a" | "b" | "sampling_freq" => {
                let mut new = self.pi.clone();
                new.set_param(key, value)?;
                p.pi = new.current_params();
                pi = Some(new);
            }
            "phi_1" => p.phi_1 = value,
            "phi_2" => p.phi_2 = value,
            "gamma" => p.gamma = value,
            "h_l" => p.h_l = value,
            "h_s" => p.h_s = value,
            "q_ref_min" => p.q_ref_min = value,
            "q_ref_max" => p.q_ref_max = Some(value),
            _ => return Err(change::unknown_key("ST-PI", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        let g0 = self.det.g2_initial(self.pi.controller().q_ref);
        if let Some(pi) = pi {
            self.pi = pi;
        }
        let q_ref = self.pi.controller().q_ref;
        self.det.configure(&p, self.pi.ts());
        if self.det.g2_initial(q_ref) != g0 {
            self.det.reset(q_ref);
        }
        self.q_ref_min = p.q_ref_min;
        match p.q_ref_max {
            Some(m) => {
                self.q_ref_max = m;
                self.q_ref_max_given = true;
            }
            None if key == "q_ref" => self.q_ref_max = (self.buffer_pkts / 2.0).max(q_ref),
            None => {}
        }
        self.changed = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Value;
    use crate::units::BitRate;

    fn decode(text: &str) -> SpecResult<StPiParams> {
        let v: Value = toml::from_str(text).unwrap();
        let mut t = Table::new(v, "aqm")?;
        let p = StPiParams::decode(&mut t, 500)?;
        t.finish()?;
        Ok(p)
    }

    /// T_s = 10 ms (100 Hz), phi_1 T_s = 0.5, phi_2 T_s = 0.25, q_ref = 100.
    fn fast() -> StPiParams {
        decode("sampling_freq = 100\nphi_1 = 50\nphi_2 = 25\nq_ref = 100\na = 1e-4\nb = 0.9e-4")
            .unwrap()
    }

    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 500,
        }
    }

    #[test]
    fn defaults_section_6_4() {
        let p = decode("").unwrap();
        assert_eq!(
            p.pi.gains,
            PiGains::Direct {
                a: 7.288e-5,
                b: 7.264e-5
            }
        );
        assert_eq!(p.pi.q_ref, 150.0);
        assert_eq!(p.pi.sampling_freq, 170.0);
        assert_eq!(p.phi_1, 1.0 / 7.0);
        assert_eq!(p.phi_2, 1.0 / 28.0);
        assert!((p.h_l - 0.7 / 3f64.sqrt()).abs() < 1e-15);
        assert!((p.h_s - 0.45 / 3f64.sqrt()).abs() < 1e-15);
        assert_eq!(
            p,
            StPiParams {
                pi: PiParams {
                    mean_pkt_size: 500,
                    ..StPiParams::default().pi
                },
                ..StPiParams::default()
            }
        );
        // h_l and phi_2 follow gamma and phi_1 unless given.
        let p = decode("gamma = 0.6\nphi_1 = 0.2").unwrap();
        assert!((p.h_l - 0.6 / 3f64.sqrt()).abs() < 1e-15);
        assert!((p.phi_2 - 0.05).abs() < 1e-15);
    }

    #[test]
    fn detector_large_variance_fig_6_1() {
        let d0 = fast();
        let mut d = VarianceDetector::new(&d0, 0.01, 100.0);
        // Thresholds: h_l q_ref = 70 / sqrt(3) = 40.4145, h_s q_ref = 45 / sqrt(3) = 25.9808;
        // g^2(0) = (675 + 1633.33) / 2 = 1154.17.
        assert!((d.g2 - 1_154.166_666_7).abs() < 1e-6);
        // Outside l_range (0 < q < 200): nothing moves.
        assert_eq!(d.observe(0.0, 100.0), None);
        assert_eq!(d.observe(250.0, 100.0), None);
        assert_eq!(d.sigma2, 0.0);
        // q = 150: sigma^2 = 0.5 * 2500 = 1250; in d_range (30, 170):
        // g^2 = 0.75 * 1154.17 + 0.25 * 2500 = 1490.625, g = 38.61 between the thresholds.
        assert_eq!(d.observe(150.0, 100.0), None);
        assert!((d.sigma2 - 1250.0).abs() < 1e-9);
        assert!((d.g2 - 1490.625).abs() < 1e-6);
        // q = 180: outside d_range, inside l_range: only sigma^2 moves,
        // 0.5 * 1250 + 0.5 * 6400 = 3825.
        assert_eq!(d.observe(180.0, 100.0), None);
        assert!((d.sigma2 - 3825.0).abs() < 1e-9);
        assert!((d.g2 - 1490.625).abs() < 1e-6);
        // q = 160: sigma^2 = 0.5 * 3825 + 0.5 * 3600 = 3712.5 (sigma 60.930),
        // g^2 = 0.75 * 1490.625 + 0.25 * 3600 = 2017.97 (g 44.92 > 40.41):
        // k = 60.930 / 40.4145 = 1.50763 (eq. 5.12).
        let k = d.observe(160.0, 100.0).unwrap();
        assert!((k - 1.507_63).abs() < 1e-5, "{k}");
    }

    #[test]
    fn detector_small_variance_fig_6_1() {
        let mut d = VarianceDetector::new(&fast(), 0.01, 100.0);
        // q = 110 (e^2 = 100) three times:
        // sigma^2 = 50, 75, 87.5; g^2 = 890.63, 692.97, 544.73 (g = 23.34 < 25.98).
        assert_eq!(d.observe(110.0, 100.0), None);
        assert_eq!(d.observe(110.0, 100.0), None);
        let k = d.observe(110.0, 100.0).unwrap();
        // k = sqrt(87.5) / 25.9808 = 9.35414 / 25.9808 = 0.360041 (eq. 5.14)
        assert!((k - 0.360_041).abs() < 1e-6, "{k}");
    }

    #[test]
    fn variance_centre_above_2_q_ref() {
        // fast(): phi_1 T_s = 0.5, phi_2 T_s = 0.25, q_ref 100; a queue
        // standing at 250 > 2 q_ref. g_0^2 = (0.45^2 + 0.7^2) / 3 / 2 * 100^2 = 1154.17.
        let with = |c: &str| {
            let p = decode(&format!(
                "sampling_freq = 100\nphi_1 = 50\nphi_2 = 25\nq_ref = 100\nvariance_centre = \"{c}\""
            ))
            .unwrap();
            VarianceDetector::new(&p, 0.01, 100.0)
        };
        let g0 = (0.45f64.powi(2) + 0.7f64.powi(2)) / 3.0 / 2.0 * 1e4;
        // Fig. 6.1 as written (the default): outside l_range, nothing moves, ever.
        let mut d = with("q_ref");
        for _ in 0..100 {
            assert_eq!(d.observe(250.0, 100.0), None);
        }
        assert_eq!(d.sigma2, 0.0);
        assert!((d.g2 - g0).abs() < 1e-9);
        // Adaptive: the running mean is 175 after one sample (< 200: centre
        // q_ref, 250 outside l_range), 212.5 after two (outside l_range:
        // centre 212.5, e^2 = 37.5^2 = 1406.25, sigma^2 = 703.125,
        // g^2 = 0.75 g0 + 0.25 * 1406.25 = 1217.19; g = 34.9 between
        // h_s q_ref = 25.98 and h_l q_ref = 40.41: no detection).
        let mut d = with("adaptive");
        assert_eq!(d.observe(250.0, 100.0), None);
        assert_eq!((d.sigma2, d.mean), (0.0, 175.0));
        assert_eq!(d.observe(250.0, 100.0), None);
        assert_eq!((d.sigma2, d.mean), (703.125, 212.5));
        assert!((d.g2 - (0.75 * g0 + 351.5625)).abs() < 1e-9);
        // Mean: centre 175 from the first sample: e^2 = 5625, sigma^2 =
        // 2812.5, g^2 = 0.75 g0 + 1406.25 = 2271.9; both above (h_l q_ref)^2
        // = 1633.3: k = sqrt(2812.5) / 40.4145 = 1.31222 (eq. 5.12).
        let mut d = with("mean");
        let k = d.observe(250.0, 100.0).unwrap();
        assert!((k - 1.312_22).abs() < 1e-5, "{k}");
        assert!(decode("variance_centre = \"median\"").is_err());
    }

    /// docs/fidelity.md item 5: a queue that stands above 2 q_ref (380 +- 14
    /// packets, the level 300 ECN flows hold at 15 Mbps in section 6.4.3's
    /// setting here, where PI's p is pinned at 1) for 200 s of 170 Hz
    /// samples, section 6.4's parameters.
    #[test]
    fn overload_blind_as_written_acting_with_the_options() {
        let link = LinkInfo::new(BitRate(15_000_000), 1000);
        let series = |n: u32| {
            let x = 380.0 + 14.0 * (2.0 * std::f64::consts::PI * n as f64 / 340.0).sin();
            q(x.round() as u32)
        };
        let run = |c: &str| {
            let p = decode(&format!("variance_centre = \"{c}\"")).unwrap();
            let mut s = StPi::new(p, link);
            for n in 0..34_000 {
                s.on_tick(SimTime::ZERO, series(n));
            }
            s
        };
        let mut pi = Pi::new(StPiParams::default().pi, link);
        for n in 0..34_000 {
            pi.on_tick(SimTime::ZERO, series(n));
        }
        // Fig. 6.1 as written: no sample is inside l_range (0, 300), q_ref
        // stays 150 and p is PI's to the last digit.
        let lit = run("q_ref");
        assert_eq!(lit.adjustments(), 0);
        assert_eq!(lit.pi().controller().q_ref, 150.0);
        assert_eq!(lit.pi().controller().p, pi.controller().p);
        // Centred on the running mean (about 380): sigma is the oscillation's,
        // 14 / sqrt(2) = 9.9 packets < h_s q_ref = 39: small-variance
        // adjustments bring q_ref down to where sigma ~ h_s q_ref
        // (9.9 / 0.2598 = 38).
        for c in ["mean", "adaptive"] {
            let s = run(c);
            let q_ref = s.pi().controller().q_ref;
            eprintln!("{c}: {} adjustments, q_ref {q_ref}", s.adjustments());
            assert!(s.adjustments() >= 1, "{c}");
            assert!((30.0..50.0).contains(&q_ref), "{c}: q_ref {q_ref}");
        }
    }

    #[test]
    fn adjustment_rescales_pi_eq_6_6() {
        let mut s = StPi::new(fast(), LinkInfo::new(BitRate(10_000_000), 500));
        assert_eq!(s.tick_interval(), Some(SimTime::from_millis(10)));
        for x in [150, 180] {
            s.on_tick(SimTime::ZERO, q(x));
            assert!(!s.take_changed());
        }
        s.on_tick(SimTime::ZERO, q(160));
        // k = 1.50763 as in `detector_large_variance_fig_6_1`:
        // q_ref = 150.763, a = 1e-4 / 1.50763^2 = 4.39955e-5, b = 0.9 a = 3.95960e-5.
        let c = s.pi().controller().clone();
        assert!((c.q_ref - 150.763).abs() < 1e-3, "{}", c.q_ref);
        assert!((c.a - 4.399_55e-5).abs() < 1e-9, "{}", c.a);
        assert!((c.b - 3.959_60e-5).abs() < 1e-9, "{}", c.b);
        assert!(s.take_changed());
        assert!(!s.take_changed());
        // g^2 restarts from the new thresholds: (0.2598^2 + 0.4041^2) / 2 * 150.763^2.
        let g2 = (0.45f64.powi(2) + 0.7f64.powi(2)) / 3.0 / 2.0 * c.q_ref * c.q_ref;
        assert!((s.detector().g2 - g2).abs() < 1e-6);
        let mut seen = Vec::new();
        Aqm::params(&s, &mut |n, v| seen.push((n, v)));
        let names: Vec<&str> = seen.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["p", "a", "b", "q_ref", "k", "sigma", "g"]);
    }

    #[test]
    fn q_ref_stays_within_its_bounds() {
        let mut p = fast();
        p.q_ref_max = Some(110.0);
        let mut s = StPi::new(p, LinkInfo::new(BitRate(10_000_000), 500));
        for x in [150, 180, 160] {
            s.on_tick(SimTime::ZERO, q(x));
        }
        // k = 1.50763 is cut to 110 / 100: a = 1e-4 / 1.21 = 8.26446e-5.
        let c = s.pi().controller();
        assert_eq!(c.q_ref, 110.0);
        assert!((c.a - 8.264_46e-5).abs() < 1e-9);
        // Default q_ref_max: half of a 1000-packet buffer.
        let s = StPi::new(fast(), LinkInfo::new(BitRate(10_000_000), 500));
        assert_eq!(s.q_ref_max, 500.0);
    }

    #[test]
    fn set_param_changes_the_values_in_force() {
        let mut s = StPi::new(fast(), LinkInfo::new(BitRate(10_000_000), 500));
        for x in [150, 180, 160] {
            s.on_tick(SimTime::ZERO, q(x));
        }
        s.take_changed();
        // After the adjustment (adjustment_rescales_pi_eq_6_6): q_ref = 150.763,
        // a = 4.39955e-5, b = 3.95960e-5. A new q_ref keeps the adjusted gains.
        let c = s.pi().controller().clone();
        s.set_param("q_ref", 120.0).unwrap();
        let d = s.pi().controller();
        assert_eq!((d.q_ref, d.a, d.b, d.p), (120.0, c.a, c.b, c.p));
        assert!(s.take_changed() && !s.take_changed());
        // g^2 restarts for q_ref 120: (0.45^2 + 0.7^2) / 3 / 2 x 120^2 = 1662.0.
        assert!(
            (s.detector().g2 - 1662.0).abs() < 1e-9,
            "{}",
            s.detector().g2
        );
        // sigma^2 carries over (3712.5 after the three samples).
        assert!((s.detector().sigma2 - 3712.5).abs() < 1e-9);
        // A new gamma keeps g^2; a new sampling frequency recomputes phi T_s:
        // 80 Hz, T_s = 12.5 ms: phi_1 T_s = 50 x 0.0125 = 0.625, phi_2 T_s = 0.3125.
        s.set_param("gamma", 0.5).unwrap();
        assert!((s.detector().g2 - 1662.0).abs() < 1e-9);
        s.set_param("sampling_freq", 80.0).unwrap();
        assert!((s.det.w1 - 0.625).abs() < 1e-12 && (s.det.w2 - 0.3125).abs() < 1e-12);
        assert_eq!(s.tick_interval(), Some(SimTime::from_micros(12_500)));
        // 10 x 0.0125 = 0.125.
        s.set_param("phi_2", 10.0).unwrap();
        assert!((s.det.w2 - 0.125).abs() < 1e-12);
        s.set_param("q_ref_max", 300.0).unwrap();
        s.set_param("q_ref_min", 10.0).unwrap();
        assert_eq!((s.q_ref_min, s.q_ref_max), (10.0, 300.0));
        // PI's keys reach the controller.
        s.set_param("a", 2e-4).unwrap();
        assert_eq!(s.pi().controller().a, 2e-4);
    }

    #[test]
    fn set_param_default_q_ref_max_follows_q_ref() {
        // Buffer 1000: default q_ref_max = 500.
        let mut s = StPi::new(fast(), LinkInfo::new(BitRate(10_000_000), 500));
        s.set_param("q_ref", 600.0).unwrap();
        assert_eq!(s.q_ref_max, 600.0);
        // Given, it bounds q_ref.
        let mut p = fast();
        p.q_ref_max = Some(200.0);
        let mut s = StPi::new(p, LinkInfo::new(BitRate(10_000_000), 500));
        let e = s.set_param("q_ref", 300.0).unwrap_err();
        assert!(
            e.starts_with("q_ref_max: 200 is outside") && e.contains("at least q_ref"),
            "{e}"
        );
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut s = StPi::new(fast(), LinkInfo::new(BitRate(10_000_000), 500));
        let before = s.current_params();
        let e = s.set_param("q_ref", 0.0).unwrap_err();
        assert!(e.contains("0 is not allowed for st-pi"), "{e}");
        let e = s.set_param("h_s", 0.5).unwrap_err();
        assert!(e.contains("0.5 must be less than h_l"), "{e}");
        // phi_2 must not exceed phi_1 (50).
        let e = s.set_param("phi_2", 60.0).unwrap_err();
        assert!(e.contains("60 must not exceed phi_1 (50)"), "{e}");
        // At 10 Hz phi_1 = 50 is above 1 / T_s = 10.
        let e = s.set_param("sampling_freq", 10.0).unwrap_err();
        assert!(
            e.starts_with("phi_1: 50 is outside the allowed range (0, 10]"),
            "{e}"
        );
        let e = s.set_param("a", -1.0).unwrap_err();
        assert!(e.contains("-1") && e.contains("[0, 1]"), "{e}");
        assert_eq!(s.current_params(), before);
        assert_eq!((s.det.w1, s.det.w2), (0.5, 0.25));
        assert!(!s.take_changed());
        let e = s.set_param("lambda", 0.1).unwrap_err();
        assert!(
            e.contains("`lambda`")
                && e.contains("q_ref, a, b, sampling_freq, phi_1, phi_2, gamma, h_l, h_s, q_ref_min, q_ref_max"),
            "{e}"
        );
    }

    #[test]
    fn validation_names_fields() {
        let path = |text: &str| decode(text).unwrap_err().path;
        assert_eq!(path("h_s = 0.5"), "aqm.h_s");
        assert_eq!(path("phi_2 = 1"), "aqm.phi_2");
        assert_eq!(path("phi_1 = 0"), "aqm.phi_1");
        assert_eq!(path("phi_1 = 1000"), "aqm.phi_1");
        assert_eq!(path("gamma = 1.5"), "aqm.gamma");
        assert_eq!(path("q_ref = 0"), "aqm.q_ref");
        assert_eq!(path("a = -1"), "aqm.a");
        assert_eq!(path("q_ref_max = 100"), "aqm.q_ref_max");
        assert_eq!(path("q_ref_min = 200"), "aqm.q_ref_min");
        assert_eq!(path("design = { lambda = 1 }"), "aqm.design.lambda");
        let e = decode("h_s = 0.5").unwrap_err();
        assert!(e.msg.contains("0.5") && e.msg.contains("h_l"), "{e}");
    }
}
