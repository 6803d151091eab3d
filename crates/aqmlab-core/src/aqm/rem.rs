//! Random Exponential Marking (REM) of Athuraliya, Li, Low and Yin.
//!
//! Reference: `002_80945567bf68047d.txt`. Every `update_interval` (one
//! "period" t) the link updates a price, either from the queue and the
//! measured input rate (eq. 2):
//!
//! ```text
//! price(t+1) = [price(t) + gamma (alpha (b(t) - b*) + y(t) - c)]+
//! ```
//!
//! or from the queue alone (eq. 4, section 2.4), the rate mismatch
//! y(t) - c being replaced by the change of backlog b(t+1) - b(t):
//!
//! ```text
//! price(t+1) = [price(t) + gamma (b(t+1) - (1 - alpha) b(t) - alpha b*)]+
//! ```
//!
//! and each arriving packet is signalled with probability
//! m = 1 - phi^(-price) (eq. 3). Defaults are section 4's: phi = 1.001,
//! alpha = 0.1, gamma = 0.001, b* = 20 packets. The thesis restates the same
//! rules (`003_b277268f444f7691.txt` eqs. 3.8-3.10).
//!
//! Choices where the paper is silent:
//! - The period: `update_interval` = 2 ms, ns-2's REM default
//!   (`Queue/REM set pupdtime_ 0.002`); the paper gives no value.
//! - Units: backlog and rate mismatch are both in packets per period, so that
//!   eq. 4 is eq. 2 with y(t) - c = b(t+1) - b(t) exactly. In eq. 2, b(t) is
//!   the queue at the start of the period and y(t) - c is (bytes that arrived
//!   at the queue during the period - bytes the link can send in it) /
//!   `mean_pkt_size`. The input counts the packets REM lets into the queue
//!   (passed or marked), not those it drops: a dropped packet is no input
//!   to the link, and so y(t) - c is the rate at which the backlog grows, as
//!   section 2.4 assumes (counting REM's own drops too would hold the queue
//!   below b* by (drop rate) / alpha). A packet the full buffer then drops is
//!   still counted (the scheme cannot see it). Counting bytes keeps small
//!   ACKs from weighing as full packets.
//! - Byte mode measures the backlog in bytes / `mean_pkt_size`; the marking
//!   probability is not scaled by packet size.
//! - The probability is recomputed once per period, not per packet.
//! - Mid-run changes ([`Aqm::set_param`]: `phi`, `alpha`, `gamma`,
//!   `b_star`, `update_interval`) keep the price and the previous backlog.
//!   A new phi recomputes the probability of the current price at once (and
//!   is recorded in params.parquet); a new period applies after the update
//!   already due, whose rate mismatch (eq. 2) is then measured against the
//!   new period's capacity.

use super::pi::{check_pkt_size, QueueMode};
use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Which price update REM runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RemForm {
    /// Eq. 4: current and previous queue only.
    Queue,
    /// Eq. 2: queue mismatch and measured rate mismatch.
    Rate,
}

/// REM's parameters; defaults from section 4 of `002_80945567bf68047d.txt`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RemParams {
    /// Base of the exponential marking of eq. 3, > 1. Default 1.001.
    pub phi: f64,
    /// Weight of the backlog mismatch, in (0, 1) (Theorem 1). Default 0.1.
    pub alpha: f64,
    /// Step size of the price update, > 0. Default 0.001.
    pub gamma: f64,
    /// Target backlog b*, packets (mean-size packets in byte mode). Default 20.
    pub b_star: f64,
    /// Length of one period of the price update. Default 2 ms (ns-2).
    pub update_interval: SimTime,
    /// Price update: eq. 4 (`"queue"`, default) or eq. 2 (`"rate"`).
    pub form: RemForm,
    /// Backlog measure.
    pub mode: QueueMode,
    /// Typical packet size, bytes: the unit of backlog in byte mode and of
    /// the rate mismatch. Default: the scenario's packet size.
    pub mean_pkt_size: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl Default for RemParams {
    fn default() -> Self {
        RemParams {
            phi: 1.001,
            alpha: 0.1,
            gamma: 0.001,
            b_star: 20.0,
            update_interval: SimTime::from_millis(2),
            form: RemForm::Queue,
            mode: QueueMode::Packet,
            mean_pkt_size: 1000,
            ecn: false,
        }
    }
}

impl RemParams {
    /// Read the keys of an `[aqm]` table with `kind = "rem"`.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<RemParams> {
        let d = RemParams {
            mean_pkt_size: default_pkt_size,
            ..RemParams::default()
        };
        let p = RemParams {
            phi: t.f64("phi", d.phi)?,
            alpha: t.f64("alpha", d.alpha)?,
            gamma: t.f64("gamma", d.gamma)?,
            b_star: t.f64("b_star", d.b_star)?,
            update_interval: t.time("update_interval", d.update_interval)?,
            form: match t.choice("form", &["queue", "rate"], Some("queue"))? {
                "rate" => RemForm::Rate,
                _ => RemForm::Queue,
            },
            mode: QueueMode::decode(t)?,
            mean_pkt_size: t.u32("mean_pkt_size", d.mean_pkt_size)?,
            ecn: t.bool("ecn", d.ecn)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        let f = |k: &str| join(path, k);
        if !(self.phi > 1.0 && self.phi <= 1e6) {
            return Err(SpecError::new(
                f("phi"),
                format!(
                    "{} is outside the allowed range (1, 1e6] (eq. 3 needs phi > 1)",
                    self.phi
                ),
            ));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(SpecError::new(
                f("alpha"),
                format!(
                    "{} is outside the allowed range (0, 1) (Theorem 1)",
                    self.alpha
                ),
            ));
        }
        check_range(&f("gamma"), self.gamma, 0.0, true, 1e6)?;
        check_range(&f("b_star"), self.b_star, 0.0, false, 1e9)?;
        if self.form == RemForm::Queue && self.b_star <= 0.0 {
            return Err(SpecError::new(
                f("b_star"),
                "0 is not allowed with form = \"queue\": eq. 4 needs a nonzero target (section 2.4); use form = \"rate\"",
            ));
        }
        if self.update_interval == SimTime::ZERO {
            return Err(SpecError::new(
                f("update_interval"),
                "0s is not allowed; give a period > 0",
            ));
        }
        check_pkt_size(path, self.mean_pkt_size)
    }
}

/// The running REM scheme.
#[derive(Clone, Debug)]
pub struct Rem {
    p: RemParams,
    /// The link price.
    price: f64,
    /// Signal probability 1 - phi^(-price) (eq. 3).
    prob: f64,
    /// Backlog at the previous update, packets: b(t).
    b_old: f64,
    /// Bytes of the packets REM let in since the previous update.
    arrived_bytes: u64,
    /// Bytes the link can send in one period.
    period_bytes: f64,
    /// The link's rate, bytes/s.
    link_bytes_per_s: f64,
    /// ln(phi).
    ln_phi: f64,
    /// The probability jumped (a new phi) since the last `take_changed`.
    changed: bool,
}

impl Rem {
    pub fn new(p: RemParams, link: LinkInfo) -> Rem {
        let link_bytes_per_s = link.rate.bps() as f64 / 8.0;
        let ln_phi = p.phi.ln();
        Rem {
            period_bytes: link_bytes_per_s * p.update_interval.as_secs_f64(),
            p,
            price: 0.0,
            prob: 0.0,
            b_old: 0.0,
            arrived_bytes: 0,
            link_bytes_per_s,
            ln_phi,
            changed: false,
        }
    }

    /// Eq. 3: 1 - phi^(-price).
    fn marking_prob(&self) -> f64 {
        -(-self.price * self.ln_phi).exp_m1()
    }

    pub fn params(&self) -> &RemParams {
        &self.p
    }

    pub fn price(&self) -> f64 {
        self.price
    }

    /// The current signal probability (eq. 3).
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// One period's price update with the backlog `b_new` = b(t+1), packets.
    fn update(&mut self, b_new: f64) {
        let p = &self.p;
        let step = match p.form {
            // eq. 4
            RemForm::Queue => b_new - (1.0 - p.alpha) * self.b_old - p.alpha * p.b_star,
            // eq. 2: y(t) - c in packets per period
            RemForm::Rate => {
                let mismatch =
                    (self.arrived_bytes as f64 - self.period_bytes) / p.mean_pkt_size as f64;
                p.alpha * (self.b_old - p.b_star) + mismatch
            }
        };
        self.price = (self.price + p.gamma * step).max(0.0);
        self.prob = self.marking_prob();
        self.b_old = b_new;
        self.arrived_bytes = 0;
    }
}

impl Aqm for Rem {
    #[inline]
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        pkt: &PacketInfo,
        _q: QueueLen,
        rng: &mut Rng,
    ) -> Verdict {
        let v = if !rng.bernoulli(self.prob) {
            Verdict::Pass
        } else if self.p.ecn && pkt.ect {
            Verdict::Mark(Cause::Early)
        } else {
            return Verdict::Drop(Cause::Early);
        };
        self.arrived_bytes += pkt.size as u64;
        v
    }

    fn tick_interval(&self) -> Option<SimTime> {
        Some(self.p.update_interval)
    }

    fn on_tick(&mut self, _now: SimTime, q: QueueLen) {
        let b = self.p.mode.measure(q, self.p.mean_pkt_size);
        self.update(b);
    }

    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("price", self.price);
        out("p", self.prob);
    }

    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn set_link(&mut self, _now: SimTime, link: &LinkInfo) {
        self.link_bytes_per_s = link.rate.bps() as f64 / 8.0;
        self.period_bytes = self.link_bytes_per_s * self.p.update_interval.as_secs_f64();
    }

    /// `phi`, `alpha`, `gamma`, `b_star` and `update_interval` (seconds)
    /// may change during a run; the price and b(t) carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["phi", "alpha", "gamma", "b_star", "update_interval"];
        let mut p = self.p.clone();
        match key {
            "phi" => p.phi = value,
            "alpha" => p.alpha = value,
            "gamma" => p.gamma = value,
            "b_star" => p.b_star = value,
            "update_interval" => p.update_interval = change::secs(value)?,
            _ => return Err(change::unknown_key("REM", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.period_bytes = self.link_bytes_per_s * p.update_interval.as_secs_f64();
        if p.phi != self.p.phi {
            self.ln_phi = p.phi.ln();
            self.prob = self.marking_prob();
            self.changed = true;
        }
        self.p = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::scenario::Value;
    use crate::units::BitRate;

    fn link() -> LinkInfo {
        // 8 Mb/s: 1000 bytes per ms, 2000 bytes per 2 ms period.
        LinkInfo::new(BitRate(8_000_000), 1000)
    }

    fn decode(text: &str) -> SpecResult<RemParams> {
        let v: Value = toml::from_str(text).unwrap();
        let mut t = Table::new(v, "aqm")?;
        let p = RemParams::decode(&mut t, 1000)?;
        t.finish()?;
        Ok(p)
    }

    fn q(pkts: u32) -> QueueLen {
        QueueLen {
            pkts,
            bytes: pkts as u64 * 1000,
        }
    }

    #[test]
    fn defaults_section_4() {
        let p = decode("").unwrap();
        assert_eq!(p, RemParams::default());
        assert_eq!(
            (p.phi, p.alpha, p.gamma, p.b_star),
            (1.001, 0.1, 0.001, 20.0)
        );
        assert_eq!(p.update_interval, SimTime::from_millis(2));
    }

    #[test]
    fn queue_form_eq_4_and_marking_eq_3() {
        let p = RemParams {
            gamma: 0.5,
            phi: 2.0,
            ..RemParams::default()
        };
        let mut r = Rem::new(p, link());
        r.on_tick(SimTime::ZERO, q(40));
        // 0 + 0.5 (40 - 0.9 * 0 - 0.1 * 20) = 0.5 * 38 = 19
        assert!((r.price - 19.0).abs() < 1e-12);
        // 1 - 2^-19
        assert!((r.prob - (1.0 - 2f64.powi(-19))).abs() < 1e-15);
        r.on_tick(SimTime::ZERO, q(10));
        // 19 + 0.5 (10 - 0.9 * 40 - 2) = 19 + 0.5 * (-28) = 5; m = 1 - 2^-5 = 0.96875
        assert!((r.price - 5.0).abs() < 1e-12);
        assert!((r.prob - 0.96875).abs() < 1e-15);
        r.on_tick(SimTime::ZERO, q(0));
        // 5 + 0.5 (0 - 9 - 2) = -0.5, projected to 0; m = 0
        assert_eq!(r.price, 0.0);
        assert_eq!(r.prob, 0.0);
    }

    #[test]
    fn rate_form_eq_2() {
        let p = RemParams {
            form: RemForm::Rate,
            ..RemParams::default()
        };
        let mut r = Rem::new(p, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 1000,
            ..PacketInfo::default()
        };
        r.b_old = 50.0;
        for _ in 0..7 {
            r.on_enqueue(SimTime::ZERO, &pkt, q(0), &mut rng);
        }
        r.on_tick(SimTime::ZERO, q(55));
        // y - c = (7000 - 2000) / 1000 = 5 packets per period;
        // 0.001 (0.1 (50 - 20) + 5) = 0.001 * 8 = 0.008
        assert!((r.price - 0.008).abs() < 1e-15);
        // m = 1 - 1.001^-0.008 = 7.996e-6
        assert!((r.prob - (1.0 - 1.001f64.powf(-0.008))).abs() < 1e-15);
        assert_eq!(r.b_old, 55.0);
        assert_eq!(r.arrived_bytes, 0);
        // Packets REM drops are no input; marked ones are.
        r.prob = 1.0;
        r.on_enqueue(SimTime::ZERO, &pkt, q(0), &mut rng);
        assert_eq!(r.arrived_bytes, 0);
        r.p.ecn = true;
        let ect = PacketInfo { ect: true, ..pkt };
        r.on_enqueue(SimTime::ZERO, &ect, q(0), &mut rng);
        assert_eq!(r.arrived_bytes, 1000);
    }

    #[test]
    fn forms_agree_when_the_queue_absorbs_the_mismatch() {
        // Section 2.4: with a busy link and no drops, y(t) - c = b(t+1) - b(t),
        // so eqs. 2 and 4 give the same price. 2000 bytes leave per period;
        // the arrivals per period make the queue go 30 -> 33 -> 31 -> 36.
        let mut queue = Rem::new(RemParams::default(), link());
        let rate = RemParams {
            form: RemForm::Rate,
            ..RemParams::default()
        };
        let mut rate = Rem::new(rate, link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let pkt = PacketInfo {
            size: 1000,
            ..PacketInfo::default()
        };
        queue.b_old = 30.0;
        rate.b_old = 30.0;
        let mut b = 30;
        for next in [33u32, 31, 36] {
            // arrivals = next - b + 2 departures
            for _ in 0..(next + 2 - b) {
                rate.on_enqueue(SimTime::ZERO, &pkt, q(b), &mut rng);
            }
            queue.on_tick(SimTime::ZERO, q(next));
            rate.on_tick(SimTime::ZERO, q(next));
            b = next;
            assert!((queue.price - rate.price).abs() < 1e-15);
        }
        // 0.001 * sum of (b(t+1) - 0.9 b(t) - 2) = 0.001 (4 - 0.7 + 6.1) = 0.0094
        assert!((queue.price - 0.0094).abs() < 1e-12, "{}", queue.price);
    }

    #[test]
    fn verdicts_and_ecn_switch() {
        let mut rng = Rng::new(1, Stream::Aqm(0));
        let ect = PacketInfo {
            size: 1000,
            ect: true,
            ..PacketInfo::default()
        };
        let plain = PacketInfo {
            size: 1000,
            ..PacketInfo::default()
        };
        let mut r = Rem::new(decode("ecn = true").unwrap(), link());
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &ect, q(0), &mut rng),
            Verdict::Pass
        );
        r.prob = 1.0;
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &ect, q(0), &mut rng),
            Verdict::Mark(Cause::Early)
        );
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &plain, q(0), &mut rng),
            Verdict::Drop(Cause::Early)
        );
        let mut r = Rem::new(decode("").unwrap(), link());
        r.prob = 1.0;
        assert_eq!(
            r.on_enqueue(SimTime::ZERO, &ect, q(0), &mut rng),
            Verdict::Drop(Cause::Early)
        );
    }

    #[test]
    fn byte_mode_and_set_link() {
        let mut r = Rem::new(decode("mode = \"byte\"\ngamma = 1").unwrap(), link());
        // 45000 bytes / 1000 = 45 packets: 1 * (45 - 0 - 2) = 43
        r.on_tick(
            SimTime::ZERO,
            QueueLen {
                pkts: 3,
                bytes: 45_000,
            },
        );
        assert!((r.price - 43.0).abs() < 1e-12);
        // 16 Mb/s: 4000 bytes per 2 ms.
        r.set_link(SimTime::ZERO, &LinkInfo::new(BitRate(16_000_000), 1000));
        assert!((r.period_bytes - 4000.0).abs() < 1e-9);
    }

    #[test]
    fn set_param_keeps_the_price_and_recomputes_derived_state() {
        let p = RemParams {
            gamma: 0.5,
            phi: 2.0,
            ..RemParams::default()
        };
        let mut r = Rem::new(p, link());
        r.on_tick(SimTime::ZERO, q(40)); // price 19, as in queue_form_eq_4_and_marking_eq_3
                                         // phi 2 -> 1.1: the probability of price 19 is 1 - 1.1^-19 = 0.835 at once.
        r.set_param("phi", 1.1).unwrap();
        assert_eq!(r.price, 19.0);
        assert!(
            (r.prob - (1.0 - 1.1f64.powi(-19))).abs() < 1e-15,
            "{}",
            r.prob
        );
        assert!(r.take_changed() && !r.take_changed());
        // b* 20 -> 30, alpha 0.1 -> 0.2, gamma 0.5 -> 0.1:
        // 19 + 0.1 (40 - 0.8 * 40 - 0.2 * 30) = 19 + 0.1 * 2 = 19.2.
        r.set_param("b_star", 30.0).unwrap();
        r.set_param("alpha", 0.2).unwrap();
        r.set_param("gamma", 0.1).unwrap();
        assert!(!r.take_changed(), "only phi moves the reported p at once");
        r.on_tick(SimTime::ZERO, q(40));
        assert!((r.price - 19.2).abs() < 1e-12, "{}", r.price);
        // A period of 5 ms ("5ms" arrives as 0.005 s): 8 Mb/s = 5000 bytes per period.
        r.set_param("update_interval", 0.005).unwrap();
        assert_eq!(r.tick_interval(), Some(SimTime::from_millis(5)));
        assert!((r.period_bytes - 5000.0).abs() < 1e-9);
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut r = Rem::new(RemParams::default(), link());
        let before = r.p.clone();
        let e = r.set_param("phi", 1.0).unwrap_err();
        assert!(e.contains('1') && e.contains("(1, 1e6]"), "{e}");
        let e = r.set_param("alpha", 1.5).unwrap_err();
        assert!(e.contains("1.5") && e.contains("(0, 1)"), "{e}");
        let e = r.set_param("b_star", 0.0).unwrap_err();
        assert!(e.contains("form = \"rate\""), "{e}");
        let e = r.set_param("update_interval", 0.0).unwrap_err();
        assert!(e.contains("0s is not allowed"), "{e}");
        let e = r.set_param("update_interval", -1.0).unwrap_err();
        assert!(e.contains("-1") && e.contains("seconds"), "{e}");
        assert_eq!(r.p, before);
        assert!((r.ln_phi - 1.001f64.ln()).abs() < 1e-18);
        let e = r.set_param("form", 1.0).unwrap_err();
        assert!(
            e.contains("`form`") && e.contains("phi, alpha, gamma, b_star, update_interval"),
            "{e}"
        );
    }

    #[test]
    fn validation_names_fields() {
        let path = |text: &str| decode(text).unwrap_err().path;
        assert_eq!(path("phi = 1"), "aqm.phi");
        assert_eq!(path("alpha = 1"), "aqm.alpha");
        assert_eq!(path("alpha = 0"), "aqm.alpha");
        assert_eq!(path("gamma = 0"), "aqm.gamma");
        assert_eq!(path("b_star = -1"), "aqm.b_star");
        assert_eq!(path("b_star = 0"), "aqm.b_star");
        assert_eq!(path("update_interval = \"0s\""), "aqm.update_interval");
        assert_eq!(path("update_interval = 2"), "aqm.update_interval");
        assert_eq!(path("form = \"price\""), "aqm.form");
        assert_eq!(path("mean_pkt_size = 0"), "aqm.mean_pkt_size");
        // b* = 0 is allowed with the rate form (eq. 2).
        assert!(decode("b_star = 0\nform = \"rate\"").is_ok());
        let e = decode("phi = 0.5").unwrap_err();
        assert!(e.msg.contains("0.5") && e.msg.contains("(1, 1e6]"), "{e}");
    }
}
