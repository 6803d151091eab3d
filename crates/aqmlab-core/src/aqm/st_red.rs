//! ST-RED: Statistical Tuning RED.
//!
//! Reference: `003_b277268f444f7691.txt` (Wu Chen's thesis), chapter 5,
//! implemented as figure 5.3 ("Detailed ST-RED algorithm") states it.
//!
//! RED ([`Red`], eq. 2.3-2.6) whose thresholds, w_q and adaptation interval
//! follow the variance of the queue q, and whose p_max follows
//! ARED's AIMD rule. With q_ref = (min_th + max_th) / 2:
//!
//! Initialisation: sigma^2 = 0, g^2 = ((h_s q_ref)^2 + (h_l q_ref)^2) / 2
//! (section 5.3.1, g_0^2).
//!
//! On every packet arrival (q is RED's average after this arrival's update
//! by default, or, with `variance_queue = "instantaneous"`, the queue the
//! packet finds; packets, or bytes / `mean_pkt_size` in byte mode):
//! - if 0 < q < 2 q_ref (l_range, eq. 5.6):
//!   sigma^2 <- (1 - phi_1 w_q) sigma^2 + phi_1 w_q (q - q_ref)^2 (eq. 5.5);
//!   - if (1 - gamma) q_ref < q < (1 + gamma) q_ref (d_range, eq. 5.8):
//!     g^2 <- (1 - phi_2 w_q) g^2 + phi_2 w_q (q - q_ref)^2 (eq. 5.7);
//!     - if (g > h_l q_ref and sigma > h_l q_ref) (eq. 5.9) or
//!       (g < h_s q_ref and sigma < h_s q_ref) (eq. 5.10):
//!       k <- sigma / (h_l q_ref) if g > h_l q_ref (eq. 5.12), else
//!       k <- sigma / (h_s q_ref) (eq. 5.14);
//!       max_th <- k max_th, min_th <- k min_th (eq. 5.1), w_q <- w_q / k
//!       (eq. 5.2), interval <- k interval (section 5.4.1), q_ref follows
//!       the thresholds, and g^2 is reset to its initial value for the new
//!       q_ref. sigma^2 carries over.
//!
//! Every `interval` (AIMD, fig. 5.3): if the RED average is above
//! min_th + 0.6 (max_th - min_th), p_max <- p_max + min(0.01, p_max / 4);
//! if below min_th + 0.4 (max_th - min_th), p_max <- 0.9 p_max. Unlike
//! ARED, p_max is not kept within [0.01, 0.5] (section 5.3, before fig. 5.3).
//!
//! Readings where the figure leaves room:
//! - The comparisons g > h q_ref and sigma > h q_ref are made on the squares
//!   (all terms are >= 0), so the per-packet path has no square root, power
//!   or exponential; the one square root is taken when k is computed.
//! - The packet is judged by RED with the parameters in force when it
//!   arrives; the statistics (and an adjustment) follow its verdict.
//! - Guards the figure does not need in its experiments: no adjustment while
//!   sigma^2 = 0 (k would be 0); w_q stays at most 1, and phi w_q at most 1
//!   in eq. 5.5 and 5.7; p_max stays at most 1 (a probability); the interval
//!   stays at least 1 ms.
//! - p_max's initial value is not given in chapter 5; we start from RED's
//!   usual 0.1 (Floyd's recommendation, also RED's default here).
//!
//! Which q: fig. 5.3 writes the instantaneous queue, but with section 5.5's
//! h_s = 0.03 / sqrt(3) the small-variance rule then never fires (sigma /
//! q_ref is 34-46 % at the design point, h_s 1.7 %), and reverse-path noise
//! at a steady 100 ms triggers large-variance steps, which sections
//! 5.5.3-5.5.4 rule out. On RED's average sigma / q_ref is a few per cent,
//! no step comes at a steady round-trip time, and large variances come only
//! at 700-900 ms, as on ns-2.35's own RED average. The default
//! (`variance_queue = "average"`) samples the average; `"instantaneous"` is
//! the literal reading. Neither brings raised thresholds back with section
//! 5.5's h_s: the average's swing stays above h_s q_ref at any thresholds,
//! and ns-2.35 with fig. 5.3 driving its RED does not bring them back
//! either. See `docs/aqm/st-red.md` and `docs/fidelity.md`, item 4.

use super::ap_red::RedOptions;
use super::ared::AdaptClock;
use super::red::{Red, RedMode, RedParams};
use super::{Aqm, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// AIMD increase cap of fig. 5.3: alpha = min(ALPHA_MAX, p_max / 4).
pub const ALPHA_MAX: f64 = 0.01;
/// AIMD decrease factor of fig. 5.3.
pub const BETA: f64 = 0.9;
/// Target band of the average, as fractions of max_th - min_th above min_th (fig. 5.3).
pub const TARGET_LO: f64 = 0.4;
pub const TARGET_HI: f64 = 0.6;
/// Smallest interval after an adjustment.
const MIN_INTERVAL: SimTime = SimTime::from_millis(1);

/// ST-RED's parameters: initial values of the adapted ones and the fixed
/// ones of fig. 5.3. Defaults from `003_b277268f444f7691.txt` section 5.5
/// (min_th 20, max_th 60, w_q 5e-5, h_s = 0.03 / sqrt(3), interval 0.5 s,
/// byte mode) and fig. 5.3 (phi_1 = 1, phi_2 = 0.25 phi_1, gamma = 0.7,
/// h_l = gamma / sqrt(3)).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StRedParams {
    /// Initial minimum threshold, packets. Default 20 (5.5).
    pub min_th: f64,
    /// Initial maximum threshold, packets. Default 60 (5.5).
    pub max_th: f64,
    /// Initial p_max, in (0, 1]. Default 0.1 (not given in chapter 5; RED's usual value).
    pub max_p: f64,
    /// Initial w_q, in (0, 1]. Default 5e-5 (5.5).
    pub w_q: f64,
    /// Initial AIMD interval. Default 0.5 s (5.5).
    pub interval: SimTime,
    /// When the AIMD rule runs: every `interval` (fig. 5.3, the default) or
    /// ns-2's way, on an arrival once `interval` has passed since max_p last
    /// changed ([`AdaptClock`]).
    pub adapt: AdaptClock,
    /// Forgetting factor of the variance function (eq. 5.5), relative to
    /// w_q. Default 1 (fig. 5.3, section 5.4.1).
    pub phi_1: f64,
    /// Forgetting factor of the detection function (eq. 5.7), relative to
    /// w_q, at most phi_1. Default 0.25 (fig. 5.3: 0.25 phi_1).
    pub phi_2: f64,
    /// Detection range coefficient (eq. 5.8), in (0, 1]. Default 0.7 (fig. 5.3, 5.4.2).
    pub gamma: f64,
    /// Upper threshold coefficient (eq. 5.9). Default gamma / sqrt(3) (fig. 5.3, 5.4.2).
    pub h_l: f64,
    /// Lower threshold coefficient (eq. 5.10), in (0, h_l). Default
    /// 0.03 / sqrt(3) (section 5.5, for the default initial parameters;
    /// with the instantaneous reading a return of the thresholds needs
    /// about 0.15-0.26, see the module doc).
    pub h_s: f64,
    /// Which queue the variance and detection functions (eq. 5.5, 5.7)
    /// sample at every arrival. Default [`VarianceQueue::Average`].
    pub variance_queue: VarianceQueue,
    /// RED's other options. Default byte mode (section 5.5: "In all
    /// simulations the byte mode is used").
    #[serde(flatten)]
    pub red: RedOptions,
}

/// The queue q of eq. 5.5-5.8 (key `variance_queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VarianceQueue {
    /// RED's average q-tilde after this arrival's update (packets, or
    /// mean-size packets in byte mode): the reading that reproduces
    /// section 5.5's figures with its h_s = 0.03 / sqrt(3).
    Average,
    /// The instantaneous queue the arrival finds, as fig. 5.3 writes it.
    Instantaneous,
}

impl Default for StRedParams {
    fn default() -> Self {
        let sqrt3 = 3f64.sqrt();
        StRedParams {
            min_th: 20.0,
            max_th: 60.0,
            max_p: 0.1,
            w_q: 5e-5,
            interval: SimTime::from_millis(500),
            adapt: AdaptClock::Interval,
            phi_1: 1.0,
            phi_2: 0.25,
            gamma: 0.7,
            h_l: 0.7 / sqrt3,
            h_s: 0.03 / sqrt3,
            variance_queue: VarianceQueue::Average,
            // Section 5.5: 500-byte packets.
            red: RedOptions::with(RedMode::Byte, 500),
        }
    }
}

impl StRedParams {
    /// Read the keys of an `[aqm]` table with `kind = "st-red"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<StRedParams> {
        let d = StRedParams {
            red: RedOptions::with(RedMode::Byte, default_pkt_size),
            ..StRedParams::default()
        };
        let gamma = t.f64("gamma", d.gamma)?;
        let p = StRedParams {
            min_th: t.f64("min_th", d.min_th)?,
            max_th: t.f64("max_th", d.max_th)?,
            max_p: t.f64("max_p", d.max_p)?,
            w_q: t.f64("w_q", d.w_q)?,
            interval: t.time("interval", d.interval)?,
            adapt: AdaptClock::decode(t)?,
            phi_1: t.f64("phi_1", d.phi_1)?,
            phi_2: t.f64("phi_2", d.phi_2)?,
            gamma,
            h_l: t.f64("h_l", gamma / 3f64.sqrt())?,
            h_s: t.f64("h_s", d.h_s)?,
            variance_queue: match t.choice(
                "variance_queue",
                &["average", "instantaneous"],
                Some("average"),
            )? {
                "instantaneous" => VarianceQueue::Instantaneous,
                _ => VarianceQueue::Average,
            },
            red: RedOptions::decode(t, &d.red)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        self.red_params().validate(path)?;
        if self.max_p <= 0.0 {
            return Err(SpecError::new(
                f("max_p"),
                "0 is not allowed here: the AIMD step min(0.01, max_p / 4) of fig. 5.3 would \
                 keep it at 0; give a value in (0, 1]",
            ));
        }
        if self.min_th + self.max_th <= 0.0 {
            return Err(SpecError::new(
                f("max_th"),
                "q_ref = (min_th + max_th) / 2 must be > 0",
            ));
        }
        if self.interval == SimTime::ZERO {
            return Err(SpecError::new(
                f("interval"),
                "0s is not allowed; give a time > 0",
            ));
        }
        check_range(&f("phi_1"), self.phi_1, 0.0, true, 1.0 / self.w_q).map_err(|e| {
            SpecError::new(e.path, format!("{} (phi_1 w_q must be in (0, 1])", e.msg))
        })?;
        check_range(&f("phi_2"), self.phi_2, 0.0, true, self.phi_1).map_err(|e| {
            SpecError::new(
                e.path,
                format!(
                    "{} (phi_2 must be > 0 and at most phi_1, section 5.4.1)",
                    e.msg
                ),
            )
        })?;
        check_range(&f("gamma"), self.gamma, 0.0, true, 1.0)?;
        check_range(&f("h_l"), self.h_l, 0.0, true, 1e9)?;
        if !(self.h_s > 0.0 && self.h_s < self.h_l) {
            return Err(SpecError::new(
                f("h_s"),
                format!("{} must be > 0 and less than h_l ({})", self.h_s, self.h_l),
            ));
        }
        Ok(())
    }

    fn red_params(&self) -> RedParams {
        self.red
            .red_params(self.min_th, self.max_th, self.max_p, self.w_q)
    }
}

/// The running scheme.
#[derive(Clone, Debug)]
pub struct StRed {
    p: StRedParams,
    red: Red,
    /// Variance function sigma^2 (eq. 5.5), packets^2.
    sigma2: f64,
    /// Detection function g^2 (eq. 5.7), packets^2.
    g2: f64,
    /// Last adjustment factor (1 before any).
    k: f64,
    /// Current AIMD interval.
    interval: SimTime,
    /// When the AIMD rule last changed p_max (`adapt = "arrival"`).
    last_set: SimTime,
    /// Adjustments made (up, down).
    ups: u32,
    downs: u32,
    // Derived from the current thresholds (see `derive`).
    q_ref: f64,
    /// l_range upper bound 2 q_ref (eq. 5.6).
    l_hi: f64,
    /// d_range bounds (eq. 5.8).
    d_lo: f64,
    d_hi: f64,
    /// (h_l q_ref)^2 and (h_s q_ref)^2.
    upper2: f64,
    lower2: f64,
    /// phi_1 w_q and phi_2 w_q.
    a1: f64,
    a2: f64,
    /// 1 / mean_pkt_size in byte mode, None in packet mode.
    per_byte: Option<f64>,
    changed: bool,
}

impl StRed {
    pub fn new(p: StRedParams, link: LinkInfo) -> StRed {
        let red = Red::new(p.red_params(), link);
        let per_byte = match p.red.mode {
            RedMode::Byte => Some(1.0 / p.red.mean_pkt_size as f64),
            RedMode::Packet => None,
        };
        let mut s = StRed {
            red,
            sigma2: 0.0,
            g2: 0.0,
            k: 1.0,
            interval: p.interval,
            last_set: SimTime::ZERO,
            ups: 0,
            downs: 0,
            q_ref: 0.0,
            l_hi: 0.0,
            d_lo: 0.0,
            d_hi: 0.0,
            upper2: 0.0,
            lower2: 0.0,
            a1: 0.0,
            a2: 0.0,
            per_byte,
            changed: true,
            p,
        };
        s.derive();
        s.g2 = s.g2_initial();
        s
    }

    /// Fig. 5.3's "Every interval": ARED's AIMD rule on p_max for the
    /// current average; returns whether p_max changed.
    fn aimd(&mut self) -> bool {
        let avg = self.red.avg();
        let r = self.red.params_mut();
        let span = r.max_th - r.min_th;
        let before = r.max_p;
        if avg > r.min_th + TARGET_HI * span {
            r.max_p = (r.max_p + ALPHA_MAX.min(r.max_p / 4.0)).min(1.0);
        } else if avg < r.min_th + TARGET_LO * span {
            r.max_p *= BETA;
        }
        let stepped = r.max_p != before;
        self.changed |= stepped;
        stepped
    }

    /// The RED inside.
    pub fn red(&self) -> &Red {
        &self.red
    }

    /// (sigma^2, g^2, k).
    pub fn detector(&self) -> (f64, f64, f64) {
        (self.sigma2, self.g2, self.k)
    }

    /// Recompute what depends on the thresholds and w_q.
    fn derive(&mut self) {
        let r = self.red.params();
        let q_ref = 0.5 * (r.min_th + r.max_th);
        self.q_ref = q_ref;
        self.l_hi = 2.0 * q_ref;
        self.d_lo = (1.0 - self.p.gamma) * q_ref;
        self.d_hi = (1.0 + self.p.gamma) * q_ref;
        self.upper2 = (self.p.h_l * q_ref) * (self.p.h_l * q_ref);
        self.lower2 = (self.p.h_s * q_ref) * (self.p.h_s * q_ref);
        self.a1 = (self.p.phi_1 * r.w_q).min(1.0);
        self.a2 = (self.p.phi_2 * r.w_q).min(1.0);
    }

    /// g_0^2 = ((h_s q_ref)^2 + (h_l q_ref)^2) / 2 (section 5.3.1).
    fn g2_initial(&self) -> f64 {
        0.5 * (self.lower2 + self.upper2)
    }

    /// Fig. 5.3's per-arrival block for the queue `q` the packet found.
    #[inline]
    fn observe(&mut self, q: f64) {
        if !(q > 0.0 && q < self.l_hi) {
            return; // eq. 5.6
        }
        let e = q - self.q_ref;
        let e2 = e * e;
        self.sigma2 += self.a1 * (e2 - self.sigma2); // eq. 5.5
        if !(q > self.d_lo && q < self.d_hi) {
            return; // eq. 5.8
        }
        self.g2 += self.a2 * (e2 - self.g2); // eq. 5.7
        let large = self.g2 > self.upper2 && self.sigma2 > self.upper2; // eq. 5.9
        let small = self.g2 < self.lower2 && self.sigma2 < self.lower2; // eq. 5.10
        if (large || small) && self.sigma2 > 0.0 {
            self.adjust(large);
        }
    }

    /// Fig. 5.3's "Adjust parameters".
    #[cold]
    fn adjust(&mut self, large: bool) {
        let sigma = self.sigma2.sqrt();
        let h = if large { self.p.h_l } else { self.p.h_s };
        let k = sigma / (h * self.q_ref); // eq. 5.12 / 5.14
        let r = self.red.params_mut();
        r.max_th *= k; // eq. 5.1
        r.min_th *= k;
        r.w_q = (r.w_q / k).min(1.0); // eq. 5.2
        let iv = (self.interval.as_secs_f64() * k).max(MIN_INTERVAL.as_secs_f64());
        self.interval = SimTime::from_secs_f64(iv); // section 5.4.1
        self.k = k;
        if large {
            self.ups += 1;
        } else {
            self.downs += 1;
        }
        self.derive();
        self.g2 = self.g2_initial();
        self.changed = true;
    }
}

impl Aqm for StRed {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        let v = match self.p.adapt {
            AdaptClock::Interval => self.red.on_enqueue(now, pkt, q, rng),
            AdaptClock::Arrival => {
                let idle = self.red.idle_since();
                self.red.update_average(now, q);
                if now > self.last_set + self.interval && self.aimd() {
                    self.last_set = now;
                }
                self.red.arrival_verdict(now, pkt, q, rng, idle)
            }
        };
        let qn = match (self.p.variance_queue, self.per_byte) {
            (VarianceQueue::Average, _) => self.red.avg(),
            (VarianceQueue::Instantaneous, None) => q.pkts as f64,
            (VarianceQueue::Instantaneous, Some(inv)) => q.bytes as f64 * inv,
        };
        self.observe(qn);
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
        match self.p.adapt {
            AdaptClock::Interval => Some(self.interval),
            AdaptClock::Arrival => None,
        }
    }

    /// Fig. 5.3's "Every interval": ARED's AIMD rule on p_max.
    fn on_tick(&mut self, _now: SimTime, _q: QueueLen) {
        self.aimd();
    }

    fn average(&self) -> Option<f64> {
        self.red.average()
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.red.report(out);
        out("interval_s", self.interval.as_secs_f64());
        out("q_ref", self.q_ref);
        out("sigma2", self.sigma2);
        out("g2", self.g2);
        out("k", self.k);
        out("adjust_up", self.ups as f64);
        out("adjust_down", self.downs as f64);
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn set_link(&mut self, now: SimTime, link: &LinkInfo) {
        self.red.set_link(now, link);
    }

    /// Mid-run changes: RED's `min_th`, `max_th`, `max_p`, `w_q` (the
    /// values in force, handed to [`Red`]), the AIMD `interval` (seconds;
    /// after the tick already due) and fig. 5.3's `phi_1`, `phi_2`, `gamma`,
    /// `h_l`, `h_s`. Each is checked with the others in force. What depends
    /// on them (q_ref, the ranges, the thresholds of eq. 5.9-5.10, phi w_q)
    /// is recomputed; sigma^2, k and the counts carry over, and g^2 is reset
    /// to its initial value when that value changes (new thresholds, h_l or
    /// h_s), as after an adjustment. The adapted values are recorded.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        use super::change;
        const KEYS: &[&str] = &[
            "min_th", "max_th", "max_p", "w_q", "interval", "phi_1", "phi_2", "gamma", "h_l", "h_s",
        ];
        let r = self.red.params();
        let mut p = StRedParams {
            min_th: r.min_th,
            max_th: r.max_th,
            max_p: r.max_p,
            w_q: r.w_q,
            interval: self.interval,
            ..self.p.clone()
        };
        match key {
            "min_th" => p.min_th = value,
            "max_th" => p.max_th = value,
            "max_p" => p.max_p = value,
            "w_q" => p.w_q = value,
            "interval" => p.interval = change::secs(value)?,
            "phi_1" => p.phi_1 = value,
            "phi_2" => p.phi_2 = value,
            "gamma" => p.gamma = value,
            "h_l" => p.h_l = value,
            "h_s" => p.h_s = value,
            _ => return Err(change::unknown_key("ST-RED", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        if matches!(key, "min_th" | "max_th" | "max_p" | "w_q") {
            self.red.set_param(key, value)?;
        }
        let g0 = self.g2_initial();
        self.interval = p.interval;
        // The initial values stay as configured; the fixed ones change.
        self.p = StRedParams {
            min_th: self.p.min_th,
            max_th: self.p.max_th,
            max_p: self.p.max_p,
            w_q: self.p.w_q,
            interval: self.p.interval,
            ..p
        };
        self.derive();
        if self.g2_initial() != g0 {
            self.g2 = self.g2_initial();
        }
        self.changed = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::BitRate;

    fn st(p: StRedParams) -> StRed {
        StRed::new(p, LinkInfo::new(BitRate(10_000_000), 500))
    }
    fn packet_mode() -> StRedParams {
        StRedParams {
            red: RedOptions::with(RedMode::Packet, 500),
            ..StRedParams::default()
        }
    }

    #[test]
    fn defaults_and_initial_detector() {
        let s = st(StRedParams::default());
        // q_ref = (20 + 60) / 2 = 40; h_l = 0.7 / sqrt(3) = 0.404145; h_s = 0.017321.
        assert!((s.q_ref - 40.0).abs() < 1e-12);
        assert!((s.p.h_l - 0.404_145_188).abs() < 1e-9);
        // (h_l q_ref)^2 = 0.49 / 3 * 1600 = 261.333; (h_s q_ref)^2 = 0.0009 / 3 * 1600 = 0.48.
        assert!((s.upper2 - 261.333_333_333).abs() < 1e-6);
        assert!((s.lower2 - 0.48).abs() < 1e-12);
        // g_0^2 = (0.48 + 261.333) / 2 = 130.9067; sigma^2 = 0.
        assert!((s.g2 - 130.906_666_667).abs() < 1e-6);
        assert_eq!(s.sigma2, 0.0);
        // l_range (0, 80), d_range (12, 68).
        assert_eq!(s.l_hi, 80.0);
        assert!((s.d_lo - 12.0).abs() < 1e-12 && (s.d_hi - 68.0).abs() < 1e-12);
        assert_eq!(s.tick_interval(), Some(SimTime::from_millis(500)));
    }

    #[test]
    fn variance_and_detection_eq_5_5_and_5_7() {
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        let g0 = s.g2;
        // q = 50: in both ranges; (50 - 40)^2 = 100.
        s.observe(50.0);
        // sigma^2 = 0.99 * 0 + 0.01 * 100 = 1.
        assert!((s.sigma2 - 1.0).abs() < 1e-12);
        // g^2 = (1 - 0.0025) g0 + 0.0025 * 100.
        assert!((s.g2 - (0.9975 * g0 + 0.25)).abs() < 1e-9);
        // q = 75: in l_range (< 80), outside d_range (>= 68): only sigma moves.
        let g = s.g2;
        s.observe(75.0);
        // sigma^2 = 0.99 * 1 + 0.01 * 35^2 = 0.99 + 12.25 = 13.24.
        assert!((s.sigma2 - 13.24).abs() < 1e-9);
        assert_eq!(s.g2, g);
        // q = 0 and q = 80 are outside l_range: nothing moves.
        s.observe(0.0);
        s.observe(80.0);
        assert!((s.sigma2 - 13.24).abs() < 1e-9);
    }

    #[test]
    fn large_variance_raises_thresholds_eq_5_12() {
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        // Force the state just below detection: sigma = 20 (> h_l q_ref = 16.166),
        // g^2 just under the upper threshold; one sample at q = 67 (e^2 = 729)
        // pushes g^2 over it.
        s.sigma2 = 400.0;
        s.g2 = s.upper2 - 0.1;
        s.observe(67.0);
        // sigma^2 = 0.99 * 400 + 0.01 * 729 = 403.29; sigma = 20.0821.
        // k = 20.0821 / (0.404145 * 40) = 20.0821 / 16.16581 = 1.24227.
        let sigma = 403.29f64.sqrt();
        let k = sigma / (0.7 / 3f64.sqrt() * 40.0);
        assert!(
            (s.k - k).abs() < 1e-12 && (k - 1.242_27).abs() < 1e-4,
            "{}",
            s.k
        );
        let r = s.red().params();
        // min_th = 20 k = 24.845, max_th = 60 k = 74.536, w_q = 0.01 / k = 0.0080498.
        assert!((r.min_th - 20.0 * k).abs() < 1e-9 && (r.max_th - 60.0 * k).abs() < 1e-9);
        assert!((r.w_q - 0.01 / k).abs() < 1e-15);
        // interval = 0.5 s * k = 0.621135 s.
        assert_eq!(s.interval, SimTime::from_secs_f64(0.5 * k));
        // q_ref = 40 k; the upper threshold h_l q_ref equals sigma now; g^2 reset.
        assert!((s.q_ref - 40.0 * k).abs() < 1e-9);
        assert!((s.upper2 - 403.29).abs() < 1e-9);
        assert!((s.g2 - 0.5 * (s.lower2 + s.upper2)).abs() < 1e-9);
        assert_eq!(s.ups, 1);
        assert!(s.take_changed() && !s.take_changed());
    }

    #[test]
    fn small_variance_lowers_thresholds_eq_5_14() {
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        // h_s q_ref = 0.017321 * 40 = 0.69282; (.)^2 = 0.48.
        s.sigma2 = 0.25;
        s.g2 = 0.4801;
        // q = 40: e = 0: sigma^2 = 0.99 * 0.25 = 0.2475; g^2 = 0.9975 * 0.4801 = 0.47890.
        s.observe(40.0);
        // k = sqrt(0.2475) / 0.69282 = 0.497494 / 0.69282 = 0.718071.
        let k = 0.2475f64.sqrt() / (0.03 / 3f64.sqrt() * 40.0);
        assert!(
            (s.k - k).abs() < 1e-12 && (k - 0.718_07).abs() < 1e-4,
            "{}",
            s.k
        );
        let r = s.red().params();
        assert!((r.max_th - 60.0 * k).abs() < 1e-9);
        // w_q = 0.01 / 0.718071 = 0.013926.
        assert!((r.w_q - 0.01 / k).abs() < 1e-15);
        assert_eq!(s.downs, 1);
    }

    #[test]
    fn up_then_down_round_trip_eq_5_12_and_5_14() {
        // Fig. 5.3's "Adjust parameters" twice, by hand (packet mode,
        // w_q = 0.01, q_ref = 40): a large variance with k = 2, then a small
        // one with k = 0.5 brings every adapted parameter back.
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        // sigma^2 = 4 (h_l q_ref)^2 = 4 * 261.333 = 1045.333: k = sigma / (h_l q_ref) = 2.
        s.sigma2 = 4.0 * s.upper2;
        s.adjust(true);
        assert!((s.k - 2.0).abs() < 1e-12);
        let r = s.red().params();
        // min_th 40, max_th 120, q_ref 80, w_q 0.01 / 2 = 0.005, interval 1 s.
        assert!((r.min_th - 40.0).abs() < 1e-9 && (r.max_th - 120.0).abs() < 1e-9);
        assert!((s.q_ref - 80.0).abs() < 1e-9 && (r.w_q - 0.005).abs() < 1e-15);
        assert_eq!(s.interval, SimTime::from_secs(1));
        // The filters run with the current w_q (sections 5.4.1, fig. 5.3):
        // phi_1 w_q = 0.005, phi_2 w_q = 0.25 * 0.005 = 0.00125.
        assert!((s.a1 - 0.005).abs() < 1e-15 && (s.a2 - 0.00125).abs() < 1e-15);
        // sigma^2 carries over (fig. 5.3 resets only g^2); g^2 = g_0^2 for
        // q_ref 80: ((0.017321 * 80)^2 + (0.404145 * 80)^2) / 2
        // = (1.92 + 1045.333) / 2 = 523.627.
        assert!((s.sigma2 - 1_045.333_333).abs() < 1e-3);
        assert!((s.g2 - 523.626_667).abs() < 1e-3);
        // The ranges follow: l_range (0, 160), d_range (24, 136).
        assert!((s.l_hi - 160.0).abs() < 1e-9);
        assert!((s.d_lo - 24.0).abs() < 1e-9 && (s.d_hi - 136.0).abs() < 1e-9);
        // Small variance: sigma = h_s q_ref / 2 = 1.38564 / 2 = 0.69282,
        // sigma^2 = 0.48: k = sigma / (h_s q_ref) = 0.5 (eq. 5.14).
        s.sigma2 = 0.25 * s.lower2;
        s.adjust(false);
        assert!((s.k - 0.5).abs() < 1e-12);
        let r = s.red().params();
        // Back to min_th 20, max_th 60, w_q 0.005 / 0.5 = 0.01, interval 0.5 s.
        assert!((r.min_th - 20.0).abs() < 1e-9 && (r.max_th - 60.0).abs() < 1e-9);
        assert!((r.w_q - 0.01).abs() < 1e-15);
        assert_eq!(s.interval, SimTime::from_millis(500));
        assert_eq!((s.ups, s.downs), (1, 1));
    }

    #[test]
    fn variance_is_taken_around_q_ref() {
        // Eq. 5.5 squares q - q_ref, not q minus the queue's own mean: a
        // queue standing still at q_ref + 4 (packet mode, w_q = 0.01,
        // q_ref = 40) has no variance of its own, yet after 100 arrivals
        // sigma^2 = 16 (1 - 0.99^100) = 16 (1 - 0.366032) = 10.14348,
        // sigma = 3.185 = 8 % of q_ref, 4.6 times h_s q_ref = 0.69282: an
        // offset inside the AIMD band (q_ref +- 0.1 q_ref, fig. 5.3) alone
        // blocks the small-variance rule (eq. 5.10) with section 5.5's h_s.
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        let g0 = s.g2;
        for _ in 0..100 {
            s.observe(44.0);
        }
        assert!((s.sigma2 - 10.143_48).abs() < 1e-4, "{}", s.sigma2);
        // g^2 = g0 0.9975^100 + 16 (1 - 0.9975^100), 0.9975^100 = 0.778557:
        // 130.9067 * 0.778557 + 16 * 0.221443 = 101.9183 + 3.5431 = 105.4614.
        assert!((s.g2 - (g0 * 0.778_557 + 16.0 * 0.221_443)).abs() < 1e-3);
        assert!((s.g2 - 105.461_4).abs() < 1e-3, "{}", s.g2);
        assert_eq!((s.ups, s.downs), (0, 0));
    }

    #[test]
    fn no_adjustment_without_both_conditions() {
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        // g above the upper threshold but sigma below it: no adjustment (eq. 5.12 needs k > 1).
        s.sigma2 = 100.0;
        s.g2 = s.upper2 + 50.0;
        s.observe(50.0);
        assert_eq!((s.ups, s.downs), (0, 0));
        // sigma^2 = 0 never adjusts (k would be 0).
        s.sigma2 = 0.0;
        s.g2 = 0.0;
        s.observe(40.0);
        assert_eq!((s.ups, s.downs), (0, 0));
    }

    /// `adapt = "arrival"`: no clock; the AIMD rule runs at an arrival once
    /// more than the (current) interval has passed since p_max last changed.
    #[test]
    fn aimd_on_arrival_as_ns2() {
        let mut s = st(StRedParams {
            adapt: AdaptClock::Arrival,
            w_q: 1.0,
            ..packet_mode()
        });
        assert_eq!(s.tick_interval(), None);
        let mut rng = Rng::new(1, crate::rng::Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        let mut arrive = |s: &mut StRed, ms: u64, pkts: u32| {
            let q = QueueLen {
                pkts,
                bytes: 500 * pkts as u64,
            };
            s.on_enqueue(SimTime::from_millis(ms), &pkt, q, &mut rng);
            s.red().params().max_p
        };
        assert!((arrive(&mut s, 500, 50) - 0.1).abs() < 1e-15);
        assert!((arrive(&mut s, 501, 50) - 0.11).abs() < 1e-15);
        assert!((arrive(&mut s, 900, 10) - 0.11).abs() < 1e-15);
        assert!((arrive(&mut s, 1002, 10) - 0.099).abs() < 1e-15);
    }

    #[test]
    fn aimd_every_interval() {
        let mut s = st(packet_mode());
        let q = QueueLen::default();
        // avg 0 < target low 20 + 0.4 * 40 = 36: p_max = 0.9 * 0.1 = 0.09.
        s.on_tick(SimTime::ZERO, q);
        assert!((s.red().params().max_p - 0.09).abs() < 1e-15);
        assert!(s.take_changed());
        // Drive the average above 20 + 0.6 * 40 = 44 (w_q = 1 for the test).
        s.red.params_mut().w_q = 1.0;
        let mut rng = Rng::new(1, crate::rng::Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        s.red.on_enqueue(
            SimTime::from_secs(1),
            &pkt,
            QueueLen {
                pkts: 50,
                bytes: 25_000,
            },
            &mut rng,
        );
        // alpha = min(0.01, 0.09 / 4 = 0.0225) = 0.01: p_max = 0.1.
        s.on_tick(SimTime::from_secs(1), q);
        assert!((s.red().params().max_p - 0.1).abs() < 1e-15);
        // Small p_max: alpha = p_max / 4: 0.02 -> 0.025.
        s.red.params_mut().max_p = 0.02;
        s.on_tick(SimTime::from_secs(2), q);
        assert!((s.red().params().max_p - 0.025).abs() < 1e-15);
        // Inside the target band: no change.
        s.red.on_enqueue(
            SimTime::from_secs(3),
            &pkt,
            QueueLen {
                pkts: 40,
                bytes: 20_000,
            },
            &mut rng,
        );
        s.take_changed();
        s.on_tick(SimTime::from_secs(3), q);
        assert!(!s.take_changed());
    }

    #[test]
    fn byte_mode_queue() {
        let mut s = st(StRedParams {
            w_q: 0.01,
            variance_queue: VarianceQueue::Instantaneous,
            ..StRedParams::default()
        });
        let mut rng = Rng::new(1, crate::rng::Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        // 10 packets of 500 bytes and 10 ACKs of 40 bytes = 5400 bytes = 10.8 packets,
        // outside d_range (12, 68) but inside l_range: sigma^2 = 0.01 * (10.8 - 40)^2 = 8.5264.
        s.on_enqueue(
            SimTime::ZERO,
            &pkt,
            QueueLen {
                pkts: 20,
                bytes: 5400,
            },
            &mut rng,
        );
        assert!((s.sigma2 - 8.5264).abs() < 1e-9);
    }

    #[test]
    fn average_reading_samples_reds_average() {
        // Default reading: q in eq. 5.5-5.8 is RED's average after this
        // arrival's update. Packet mode, w_q 0.01, average 0 before.
        let mut s = st(StRedParams {
            w_q: 0.01,
            ..packet_mode()
        });
        assert_eq!(s.p.variance_queue, VarianceQueue::Average);
        let mut rng = Rng::new(1, crate::rng::Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 500,
            ..PacketInfo::default()
        };
        let q = |pkts: u32| QueueLen {
            pkts,
            bytes: 500 * pkts as u64,
        };
        // Arrival finding 50 packets: avg = 0.01 * 50 = 0.5 (in l_range (0, 80),
        // outside d_range (12, 68)); sigma^2 = 0.01 * (0.5 - 40)^2 = 15.6025.
        s.on_enqueue(SimTime::ZERO, &pkt, q(50), &mut rng);
        assert!((s.red().avg() - 0.5).abs() < 1e-12);
        assert!((s.sigma2 - 15.6025).abs() < 1e-9, "{}", s.sigma2);
        // The literal reading samples the 50 packets: 0.01 * 10^2 = 1.
        let mut l = st(StRedParams {
            w_q: 0.01,
            variance_queue: VarianceQueue::Instantaneous,
            ..packet_mode()
        });
        l.on_enqueue(SimTime::ZERO, &pkt, q(50), &mut rng);
        assert!((l.sigma2 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn validation_names_fields() {
        assert!(StRedParams::default().validate("aqm").is_ok());
        let bad = |f: &dyn Fn(&mut StRedParams)| {
            let mut p = StRedParams::default();
            f(&mut p);
            p.validate("aqm").unwrap_err().path
        };
        assert_eq!(bad(&|p| p.min_th = 70.0), "aqm.min_th");
        assert_eq!(bad(&|p| p.w_q = 0.0), "aqm.w_q");
        assert_eq!(bad(&|p| p.max_p = 1.5), "aqm.max_p");
        assert_eq!(bad(&|p| p.max_p = 0.0), "aqm.max_p");
        assert_eq!(bad(&|p| p.interval = SimTime::ZERO), "aqm.interval");
        assert_eq!(bad(&|p| p.phi_1 = 0.0), "aqm.phi_1");
        assert_eq!(bad(&|p| p.phi_2 = 2.0), "aqm.phi_2");
        assert_eq!(bad(&|p| p.gamma = 1.5), "aqm.gamma");
        assert_eq!(bad(&|p| p.h_l = -1.0), "aqm.h_l");
        assert_eq!(bad(&|p| p.h_s = 0.5), "aqm.h_s");
        assert_eq!(bad(&|p| p.h_s = 0.0), "aqm.h_s");
    }
}
