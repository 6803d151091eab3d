//! AVQ, the Adaptive Virtual Queue: a virtual queue with the real buffer's
//! size, drained at a virtual capacity below the link's, signals when it
//! overflows; the virtual capacity adapts so that the arrival rate settles
//! at a desired fraction of the link capacity.
//!
//! References:
//! - `003_b277268f444f7691.txt` (Wu Chen's thesis) section 3.7: eq. 3.12,
//!   `dC~/dt = phi (tau C - x)` (x the arrival rate, tau <= 1 the desired
//!   utilisation, phi > 0 the smoothing parameter), and fig. 3.4, executed
//!   on every arrival at time t, s being the previous arrival's time and b
//!   the packet's size in bytes:
//!   1. `VQ <- max(VQ - C~ (t - s), 0)` (drain the virtual queue);
//!   2. if `VQ + b > B` mark or drop the packet, else `VQ <- VQ + b`;
//!   3. `C~ <- max(min(C~ + phi tau C (t - s), C) - phi b, 0)`;
//!   4. `s <- t`.
//! - Kunniyur and Srikant, "An Adaptive Virtual Queue (AVQ) Algorithm for
//!   Active Queue Management", IEEE/ACM ToN 12(2), 2004 (the thesis's
//!   reference \[37\]; SIGCOMM 2001 for the first version), where the
//!   smoothing parameter is called alpha and the desired utilisation gamma.
//!
//! Units: C and C~ in bytes per second, VQ, B and b in bytes, so alpha
//! (phi) is in 1/s and tau is dimensionless (eq. 3.12 is homogeneous: the
//! same alpha holds for rates in packets per second).
//!
//! Defaults: tau = 0.98 and alpha = 0.15 /s, the values Kunniyur and
//! Srikant use in their simulations (the thesis quotes no values; the AVQ
//! paper is not among the stored papers, so they are not checked against
//! its text).
//!
//! Readings chosen where fig. 3.4 leaves the model open:
//! - The virtual buffer B is the link's buffer: a byte limit as is, a
//!   packet limit of n packets as n x `mean_pkt_size` bytes.
//! - The virtual capacity starts at the link's capacity C, the virtual
//!   queue empty, s = 0.
//! - The clamps are applied in fig. 3.4's order (the min with C before the
//!   subtraction of alpha b), so right after an arrival C~ <= C - alpha b.
//! - A signalled packet's virtual copy is not added (fig. 3.4); the real
//!   packet is marked if ECN-capable and `ecn` is on, dropped otherwise.
//!   The signal is AVQ's congestion indication ahead of the real buffer's
//!   limit, so it carries [`Cause::Early`]. Every arrival, signalled or
//!   not, counts in the capacity update (it is part of the arrival rate x).
//! - A change of the link's rate or buffer ([`Aqm::set_link`]) takes effect
//!   at the next arrival (C~ is then clamped to the new C).
//! - Mid-run changes of `tau` and `alpha` ([`Aqm::set_param`]) apply from
//!   the next arrival; C~ and VQ carry over.

use super::{change, Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecResult, Table};
use crate::scenario::Buffer;
use crate::units::SimTime;
use serde::Serialize;

/// AVQ's parameters (fig. 3.4 of `003_b277268f444f7691.txt`); defaults
/// from Kunniyur and Srikant's simulations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AvqParams {
    /// Desired utilisation tau (gamma in the AVQ paper), in (0, 1]. Default 0.98.
    pub tau: f64,
    /// Smoothing parameter alpha (phi in the thesis), 1/s, > 0. Default 0.15.
    pub alpha: f64,
    /// Mark ECN-capable packets instead of dropping them. Default false.
    pub ecn: bool,
}

impl Default for AvqParams {
    fn default() -> Self {
        AvqParams {
            tau: 0.98,
            alpha: 0.15,
            ecn: false,
        }
    }
}

impl AvqParams {
    /// Read the keys of an `[aqm]` table with `kind = "avq"`.
    pub fn decode(t: &mut Table, _default_pkt_size: u32) -> SpecResult<AvqParams> {
        let d = AvqParams::default();
        let p = AvqParams {
            tau: t.f64("tau", d.tau)?,
            alpha: t.f64("alpha", d.alpha)?,
            ecn: t.bool("ecn", d.ecn)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        check_range(&join(path, "tau"), self.tau, 0.0, true, 1.0)?;
        check_range(&join(path, "alpha"), self.alpha, 0.0, true, 1e6)?;
        Ok(())
    }
}

/// The running scheme: parameters, the link's facts, and the virtual queue.
#[derive(Clone, Debug)]
pub struct Avq {
    p: AvqParams,
    /// Link capacity C, bytes/s.
    cap: f64,
    /// Virtual buffer B, bytes.
    vbuf: f64,
    /// alpha tau C, bytes/s per second (the capacity update's growth rate).
    growth: f64,
    /// Virtual capacity C~, bytes/s.
    vcap: f64,
    /// Virtual queue VQ, bytes (as of the last arrival).
    vq: f64,
    /// Time of the last arrival, s.
    last: SimTime,
}

/// Link capacity in bytes/s and virtual buffer in bytes.
fn link_facts(link: &LinkInfo) -> (f64, f64) {
    let cap = link.rate.bps() as f64 / 8.0;
    let vbuf = match link.buffer {
        Buffer::Bytes(b) => b as f64,
        Buffer::Packets(n) => n as f64 * link.mean_pkt_size as f64,
    };
    (cap, vbuf)
}

impl Avq {
    pub fn new(p: AvqParams, link: LinkInfo) -> Avq {
        let (cap, vbuf) = link_facts(&link);
        Avq {
            growth: p.alpha * p.tau * cap,
            p,
            cap,
            vbuf,
            vcap: cap,
            vq: 0.0,
            last: SimTime::ZERO,
        }
    }

    /// Virtual capacity C~, bytes/s.
    pub fn virtual_capacity(&self) -> f64 {
        self.vcap
    }

    /// Virtual queue VQ, bytes, as of the last arrival.
    pub fn virtual_queue(&self) -> f64 {
        self.vq
    }
}

impl Aqm for Avq {
    #[inline]
    fn on_enqueue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        _q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        let dt = now.saturating_sub(self.last).as_secs_f64();
        let b = pkt.size as f64;
        // Fig. 3.4, step 1: drain at C~ since the last arrival.
        self.vq = (self.vq - self.vcap * dt).max(0.0);
        // Step 2: the virtual copy overflows, or joins the virtual queue.
        let verdict = if self.vq + b > self.vbuf {
            if self.p.ecn && pkt.ect {
                Verdict::Mark(Cause::Early)
            } else {
                Verdict::Drop(Cause::Early)
            }
        } else {
            self.vq += b;
            Verdict::Pass
        };
        // Step 3: C~ <- max(min(C~ + alpha tau C (t - s), C) - alpha b, 0).
        self.vcap = ((self.vcap + self.growth * dt).min(self.cap) - self.p.alpha * b).max(0.0);
        // Step 4.
        self.last = now;
        verdict
    }

    /// `virtual_capacity` in bit/s, `virtual_queue` in bytes (both as of
    /// the last arrival).
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("virtual_capacity", self.vcap * 8.0);
        out("virtual_queue", self.vq);
    }

    fn set_link(&mut self, _now: SimTime, link: &LinkInfo) {
        let (cap, vbuf) = link_facts(link);
        self.cap = cap;
        self.vbuf = vbuf;
        self.growth = self.p.alpha * self.p.tau * cap;
    }

    /// `tau` and `alpha` may change during a run; C~ and VQ carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["tau", "alpha"];
        let mut p = self.p.clone();
        match key {
            "tau" => p.tau = value,
            "alpha" => p.alpha = value,
            _ => return Err(change::unknown_key("AVQ", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.growth = p.alpha * p.tau * self.cap;
        self.p = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::units::BitRate;

    /// 10 Mb/s = 1.25e6 B/s; buffer 10 packets of 500 B = 5000 B.
    fn link() -> LinkInfo {
        LinkInfo {
            buffer: Buffer::Packets(10),
            ..LinkInfo::new(BitRate(10_000_000), 500)
        }
    }
    fn pkt(size: u32, ect: bool) -> PacketInfo {
        PacketInfo {
            size,
            ect,
            ..PacketInfo::default()
        }
    }
    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn facts_from_the_link() {
        let a = Avq::new(AvqParams::default(), link());
        assert_eq!(a.cap, 1.25e6);
        assert_eq!(a.vbuf, 5000.0); // 10 x 500 B
        assert!(close(a.growth, 0.15 * 0.98 * 1.25e6)); // 183 750 B/s^2
        let mut l = link();
        l.buffer = Buffer::Bytes(64_000);
        assert_eq!(Avq::new(AvqParams::default(), l).vbuf, 64_000.0);
    }

    #[test]
    fn set_param_recomputes_the_growth_rate() {
        let mut a = Avq::new(AvqParams::default(), link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        a.on_enqueue(
            SimTime::ZERO,
            &pkt(500, false),
            QueueLen::default(),
            &mut rng,
        );
        let (vcap, vq) = (a.vcap, a.vq); // 1 249 925 B/s, 500 B
        a.set_param("tau", 0.9).unwrap();
        a.set_param("alpha", 0.3).unwrap();
        // alpha tau C = 0.3 x 0.9 x 1.25e6 = 337 500 B/s^2.
        assert!(close(a.growth, 337_500.0), "{}", a.growth);
        assert_eq!((a.vcap, a.vq), (vcap, vq), "state carries over");
        // Next arrival 1 ms later: C~ = min(1 249 925 + 337.5, 1.25e6) - 0.3 x 500
        // = 1 250 000 - 150 = 1 249 850 B/s.
        a.on_enqueue(ms(1), &pkt(500, false), QueueLen::default(), &mut rng);
        assert!(close(a.vcap, 1_249_850.0), "{}", a.vcap);
    }

    #[test]
    fn set_param_rejects_bad_values_and_keys() {
        let mut a = Avq::new(AvqParams::default(), link());
        let e = a.set_param("tau", 1.2).unwrap_err();
        assert!(e.contains("1.2") && e.contains("(0, 1]"), "{e}");
        let e = a.set_param("alpha", 0.0).unwrap_err();
        assert!(e.contains('0') && e.contains("(0, 1000000]"), "{e}");
        assert_eq!(a.p, AvqParams::default());
        assert!(close(a.growth, 0.15 * 0.98 * 1.25e6));
        let e = a.set_param("gamma", 0.9).unwrap_err();
        assert!(e.contains("`gamma`") && e.contains("tau, alpha"), "{e}");
    }

    #[test]
    fn capacity_update_fig_3_4() {
        let mut a = Avq::new(AvqParams::default(), link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        // First arrival at 0: dt = 0; C~ = max(min(1.25e6 + 0, 1.25e6) - 0.15 x 500, 0)
        // = 1 250 000 - 75 = 1 249 925 B/s.
        a.on_enqueue(
            SimTime::ZERO,
            &pkt(500, false),
            QueueLen::default(),
            &mut rng,
        );
        assert!(close(a.vcap, 1_249_925.0), "{}", a.vcap);
        // Second at 1 ms: 1 249 925 + 183 750 x 0.001 = 1 250 108.75 is capped
        // at C = 1 250 000, then - 75: 1 249 925 again.
        a.on_enqueue(ms(1), &pkt(500, false), QueueLen::default(), &mut rng);
        assert!(close(a.vcap, 1_249_925.0), "{}", a.vcap);
        // From C~ = 1e6 with a 40-byte ACK 2 ms later:
        // 1e6 + 183 750 x 0.002 - 0.15 x 40 = 1e6 + 367.5 - 6 = 1 000 361.5.
        a.vcap = 1e6;
        a.on_enqueue(ms(3), &pkt(40, false), QueueLen::default(), &mut rng);
        assert!(close(a.vcap, 1_000_361.5), "{}", a.vcap);
        // Clamped at 0 from below: C~ = 10, same instant: max(10 - 75, 0) = 0.
        a.vcap = 10.0;
        a.on_enqueue(ms(3), &pkt(500, false), QueueLen::default(), &mut rng);
        assert_eq!(a.vcap, 0.0);
    }

    #[test]
    fn virtual_queue_drains_at_virtual_capacity() {
        let mut a = Avq::new(AvqParams::default(), link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        a.vq = 3000.0;
        a.vcap = 1e6;
        a.last = ms(10);
        // 1 ms later the virtual queue has drained 1e6 x 0.001 = 1000 B:
        // 3000 - 1000 + 500 = 2500 B.
        let v = a.on_enqueue(ms(11), &pkt(500, false), QueueLen::default(), &mut rng);
        assert_eq!(v, Verdict::Pass);
        assert!(close(a.vq, 2500.0), "{}", a.vq);
        // 10 ms later it would drain 1e4 B (C~ ~ 1e6): empty, then + 500.
        a.on_enqueue(ms(21), &pkt(500, false), QueueLen::default(), &mut rng);
        assert!(close(a.vq, 500.0), "{}", a.vq);
    }

    #[test]
    fn virtual_overflow_signals_and_skips_the_copy() {
        let mut a = Avq::new(AvqParams::default(), link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        a.vcap = 0.0;
        // Ten 500-byte packets fill B = 5000 exactly (5000 is not > 5000).
        for _ in 0..10 {
            let v = a.on_enqueue(ms(1), &pkt(500, true), QueueLen::default(), &mut rng);
            assert_eq!(v, Verdict::Pass);
        }
        assert_eq!(a.vq, 5000.0);
        // The 11th: 5000 + 500 > 5000: dropped (ecn off), VQ unchanged.
        let v = a.on_enqueue(ms(1), &pkt(500, true), QueueLen::default(), &mut rng);
        assert_eq!(v, Verdict::Drop(Cause::Early));
        assert_eq!(a.vq, 5000.0);
        a.p.ecn = true;
        let v = a.on_enqueue(ms(1), &pkt(500, true), QueueLen::default(), &mut rng);
        assert_eq!(v, Verdict::Mark(Cause::Early));
        let v = a.on_enqueue(ms(1), &pkt(500, false), QueueLen::default(), &mut rng);
        assert_eq!(v, Verdict::Drop(Cause::Early));
        assert_eq!(a.vq, 5000.0);
    }

    #[test]
    fn steady_rate_settles_capacity_at_the_balance() {
        // Arrivals of 500 B every 400 us (x = 1.25e6 B/s = C) push C~ down by
        // alpha (tau C - x) = 0.15 x (-0.02 x 1.25e6) = -3750 B/s per second:
        // after 1 s (2500 arrivals), C~ = 1 249 925 - 2499 x 3750 x 0.0004
        // = 1 249 925 - 3748.5 = 1 246 176.5 B/s.
        let mut a = Avq::new(AvqParams::default(), link());
        let mut rng = Rng::new(1, Stream::Aqm(0));
        for i in 0..2500u64 {
            a.on_enqueue(
                SimTime::from_micros(400 * i),
                &pkt(500, false),
                QueueLen::default(),
                &mut rng,
            );
        }
        assert!((a.vcap - 1_246_176.5).abs() < 1e-3, "{}", a.vcap);
        let mut names = Vec::new();
        a.params(&mut |n, v| names.push((n, v)));
        assert_eq!(names[0].0, "virtual_capacity");
        assert!((names[0].1 - 1_246_176.5 * 8.0).abs() < 1e-2);
        assert_eq!(names[1].0, "virtual_queue");
    }

    #[test]
    fn set_link_changes_capacity_and_buffer() {
        let mut a = Avq::new(AvqParams::default(), link());
        let mut l = link();
        l.rate = BitRate(5_000_000);
        l.buffer = Buffer::Packets(20);
        a.set_link(ms(1), &l);
        assert_eq!(a.cap, 625_000.0);
        assert_eq!(a.vbuf, 10_000.0);
        // C~ (still 1.25e6) is clamped at the next arrival:
        // min(1.25e6 + ..., 625 000) - 75 = 624 925.
        let mut rng = Rng::new(1, Stream::Aqm(0));
        a.on_enqueue(ms(2), &pkt(500, false), QueueLen::default(), &mut rng);
        assert!(close(a.vcap, 624_925.0), "{}", a.vcap);
    }

    #[test]
    fn validation_names_fields() {
        let bad = |tau: f64, alpha: f64| {
            let p = AvqParams {
                tau,
                alpha,
                ecn: false,
            };
            p.validate("aqm").unwrap_err().path
        };
        assert_eq!(bad(1.2, 0.15), "aqm.tau");
        assert_eq!(bad(0.0, 0.15), "aqm.tau");
        assert_eq!(bad(0.98, 0.0), "aqm.alpha");
        assert_eq!(bad(0.98, -1.0), "aqm.alpha");
        assert!(AvqParams::default().validate("aqm").is_ok());
    }
}
