//! COBALT: CoDel and BLUE run together (CAKE's AQM), on one queue or
//! under FQ-CoDel's flow scheduler (FQ-COBALT).
//!
//! References: T. Hoeiland-Joergensen, D. Taht, J. Morton, "Piece of CAKE:
//! A Comprehensive Queue Management Solution for Home Gateways", IEEE
//! LANMAN 2018, section III-C (COBALT); Linux's `net/sched/sch_cake.c`
//! (`cobalt_should_drop`, `cobalt_queue_full`, `cobalt_queue_empty`,
//! `cobalt_invsqrt`), and ns-3's `CobaltQueueDisc` and `FqCobaltQueueDisc`
//! (J. Shah, S. Patil, M. P. Tahiliani et al.). CoDel itself: RFC 8289;
//! BLUE: Feng et al. (see `blue.rs`). The seed papers do not cover it.
//!
//! CoDel's part (the paper, section III-C; `cobalt_should_drop`), for the
//! packet at the head leaving at `now` after a sojourn `s`:
//! - `over = s > target` (no MAXPACKET test). Above target, the dropping
//!   state is entered with `drop_next = control(now)` and `count` at least
//!   1; at or below it the state is left at once.
//! - `control(t) = t + interval x rec_inv_sqrt`, `rec_inv_sqrt` being
//!   1/sqrt(count) in Q0.32 fixed point, taken from a cache for `count` <
//!   16 (each entry four Newton steps `y <- y (3 - count y^2) / 2` from the
//!   previous one, entry 0 = 1.0) and by one Newton step from the previous
//!   value above.
//! - A signal is due when `count > 0` and `now >= drop_next`. Due while
//!   dropping: the packet is CE-marked if ECN-capable and `ecn` is on,
//!   dropped otherwise; `count += 1` and `drop_next = control(drop_next)`.
//!   Due while not dropping (CAKE's difference from RFC 8289): `count` is
//!   decreased and `drop_next` advanced by the control law until no
//!   signal is due, so the signalling rate decays when the queue is below
//!   target instead of restarting from 1 (no 16-interval rule).
//! - `drop_next` doubles as an activity timer: with `count = 0` it is set
//!   to `now + interval`; else, when no signal is due yet and the packet
//!   was not dropped, to `now`.
//!
//! BLUE's part (`cobalt_queue_full` / `cobalt_queue_empty`): `p_drop`
//! rises by `increment` (1/256) when the queue overflows and falls by
//! `decrement` (1/4096) when the queue is found empty at dequeue, each at
//! most once per `target` (the hold is `target`, 5 ms, in both Linux and
//! ns-3: `now - blue_timer > target`). Every departing packet is dropped
//! with probability `p_drop` besides CoDel's signal (BLUE never marks:
//! "Lack of ECN is deliberate"). An overflow also puts CoDel's part in
//! the dropping state with `drop_next = now`, `count` at least 1; an empty
//! queue leaves it and decays `count` once if a signal was due.
//!
//! Signals: CoDel's with cause [`Cause::Early`], BLUE's drops (when CoDel
//! did not select the packet) with [`Cause::Forced`].
//!
//! Single queue (`kind = "cobalt"`, ns-3's `CobaltQueueDisc`): the
//! scheduler of `fq_codel.rs` with one queue; an arrival that finds the
//! buffer full is dropped (an overflow drop) and raises `p_drop`. Under
//! the flow scheduler (`kind = "fq-cobalt"`, ns-3's `FqCobaltQueueDisc`;
//! CAKE's own scheduler without its tins, hosts or shaper): 1024 queues,
//! quantum 1514 bytes, each queue with its own COBALT state; on overflow
//! the head of the queue with the largest backlog is dropped (RFC 8290
//! section 4.1, CAKE's `cake_drop`) and that queue's BLUE is raised; a
//! queue found empty at dequeue lowers its BLUE.
//!
//! Not modelled: CAKE's extra over-target conditions on the shaper's MTU
//! time (`sojourn > 4 mtu_time` and `> 2 mtu_time x bulk flows`), its
//! target and interval derived from the shaper rate and RTT estimate,
//! ns-3's `BlueThreshold` (400 ms: a sojourn above it also raises
//! `p_drop`) and `CeThreshold`/`UseL4s`, and Linux's 32-bit fixed-point
//! `p_drop` (here a float stepped by the same fractions).

use super::fq_codel::{check_flows_quantum, flows_fixed, FlowAqm, FlowQueues, Queued, FLOWS};
use super::{change, Aqm, Cause, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{check_range, join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// CAKE's quantum, bytes (its 1514 at the rates the defaults are for).
pub const COBALT_QUANTUM: u32 = 1514;

/// Default `target`: 5 ms (ns-3's `Target`; CAKE's at high rates).
pub const TARGET: SimTime = SimTime::from_millis(5);
/// Default `interval`: 100 ms (ns-3's `Interval`; CAKE's `rtt` default).
pub const INTERVAL: SimTime = SimTime::from_millis(100);
/// Default BLUE increment: 1/256 (Linux `p_inc = 1 << 24` of 2^32).
pub const INCREMENT: f64 = 1.0 / 256.0;
/// Default BLUE decrement: 1/4096 (Linux `p_dec = 1 << 20` of 2^32).
pub const DECREMENT: f64 = 1.0 / 4096.0;

/// Entries of the inverse square root cache (Linux `REC_INV_SQRT_CACHE`).
const CACHE: usize = 16;

/// One Newton step of `y = 1/sqrt(count)` in Q0.32:
/// `y' = y (3 - count y^2) / 2`, computed as the kernel does (the factor
/// 3 - count y^2 in Q2.32, shifted right by 2 so the product fits).
const fn newton_step(y: u32, count: u32) -> u32 {
    let y2 = ((y as u64 * y as u64) >> 32) as u32;
    let mut v = (3u64 << 32).wrapping_sub(count as u64 * y2 as u64);
    v >>= 2;
    (v.wrapping_mul(y as u64) >> (32 - 2 + 1)) as u32
}

/// The cache of 1/sqrt(count) for count < 16: entry 0 (and 1) is ~1.0;
/// each next entry is four Newton steps from the previous.
const fn inv_sqrt_cache() -> [u32; CACHE] {
    let mut c = [0u32; CACHE];
    let mut y = u32::MAX;
    c[0] = y;
    let mut count = 1;
    while count < CACHE {
        let mut i = 0;
        while i < 4 {
            y = newton_step(y, count as u32);
            i += 1;
        }
        c[count] = y;
        count += 1;
    }
    c
}

/// [`inv_sqrt_cache`], computed at compile time.
const INV_SQRT: [u32; CACHE] = inv_sqrt_cache();

/// The control law `t + interval x y` (`y` in Q0.32).
#[inline]
fn control(t: i64, interval: SimTime, y: u32) -> i64 {
    t + ((interval.0 as u128 * y as u128) >> 32) as i64
}

/// COBALT's parameters (ns-3's `CobaltQueueDisc` attributes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CobaltParams {
    /// CoDel's target, > 0. Default 5 ms; also BLUE's hold.
    pub target: SimTime,
    /// CoDel's interval, > 0. Default 100 ms.
    pub interval: SimTime,
    /// CE-mark ECN-capable packets in CoDel's part. Default off (ns-3's
    /// `UseEcn`; CAKE always marks).
    pub ecn: bool,
    /// BLUE's increment of `p_drop` on overflow, in [0, 1]. Default 1/256.
    pub increment: f64,
    /// BLUE's decrement of `p_drop` on an empty queue, in [0, 1]. Default 1/4096.
    pub decrement: f64,
}

impl Default for CobaltParams {
    fn default() -> Self {
        CobaltParams {
            target: TARGET,
            interval: INTERVAL,
            ecn: false,
            increment: INCREMENT,
            decrement: DECREMENT,
        }
    }
}

impl CobaltParams {
    /// Read the COBALT keys of an `[aqm]` table.
    pub fn decode(t: &mut Table) -> SpecResult<CobaltParams> {
        let d = CobaltParams::default();
        let p = CobaltParams {
            target: t.time("target", d.target)?,
            interval: t.time("interval", d.interval)?,
            ecn: t.bool("ecn", d.ecn)?,
            increment: t.f64("increment", d.increment)?,
            decrement: t.f64("decrement", d.decrement)?,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        for (k, v) in [("target", self.target), ("interval", self.interval)] {
            if v == SimTime::ZERO || v > SimTime::from_secs(1_000_000) {
                return Err(SpecError::new(
                    join(path, k),
                    format!("{v} is outside the allowed range (0s, 1000000s]; give a time such as \"5ms\""),
                ));
            }
        }
        check_range(&join(path, "increment"), self.increment, 0.0, false, 1.0)?;
        check_range(&join(path, "decrement"), self.decrement, 0.0, false, 1.0)?;
        Ok(())
    }
}

/// The scheduler's parameters with COBALT in every queue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FqCobaltParams {
    /// Number of queues, in [1, 65536]: 1 for `cobalt`, default 1024 for
    /// `fq-cobalt`.
    pub flows: u32,
    /// DRR quantum, bytes, in [1, 1e6]. Default 1514.
    pub quantum: u32,
    #[serde(flatten)]
    pub cobalt: CobaltParams,
}

impl FqCobaltParams {
    /// The single-queue scheme (`kind = "cobalt"`): one queue, tail drop.
    pub fn single(cobalt: CobaltParams) -> FqCobaltParams {
        FqCobaltParams {
            flows: 1,
            quantum: COBALT_QUANTUM,
            cobalt,
        }
    }

    /// Read the FQ-COBALT keys of an `[aqm]` table.
    pub fn decode(t: &mut Table) -> SpecResult<FqCobaltParams> {
        let flows = t.u32("flows", FLOWS)?;
        let quantum = t.u32("quantum", COBALT_QUANTUM)?;
        let cobalt = CobaltParams::decode(t)?;
        let p = FqCobaltParams {
            flows,
            quantum,
            cobalt,
        };
        p.validate(t.path())?;
        Ok(p)
    }

    pub fn validate(&self, path: &str) -> SpecResult<()> {
        check_flows_quantum(path, self.flows, self.quantum)?;
        self.cobalt.validate(path)
    }
}

super::fq_codel::flow_params!(FqCobaltParams);

/// One queue's COBALT state (Linux `struct cobalt_vars`).
#[derive(Clone, Debug)]
pub struct CobaltState {
    /// Signals in the current episode (decays while below target).
    count: u32,
    /// 1/sqrt(count) in Q0.32.
    rec_inv_sqrt: u32,
    /// Next signal time, ns (signed: compared by difference).
    drop_next: i64,
    /// CoDel's dropping state.
    dropping: bool,
    /// BLUE's drop probability.
    p_drop: f64,
    /// Last change of `p_drop`, ns.
    blue_timer: i64,
}

impl CobaltState {
    pub fn new() -> CobaltState {
        CobaltState {
            count: 0,
            rec_inv_sqrt: u32::MAX,
            drop_next: 0,
            dropping: false,
            p_drop: 0.0,
            blue_timer: 0,
        }
    }

    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn p_drop(&self) -> f64 {
        self.p_drop
    }
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    pub fn drop_next(&self) -> SimTime {
        SimTime(self.drop_next.max(0) as u64)
    }

    /// `cobalt_invsqrt`: from the cache below 16, else one Newton step.
    #[inline]
    fn invsqrt(&mut self) {
        self.rec_inv_sqrt = match INV_SQRT.get(self.count as usize) {
            Some(&y) => y,
            None => newton_step(self.rec_inv_sqrt, self.count),
        };
    }

    /// `cobalt_queue_full`: the buffer overflowed at `now`.
    pub fn queue_full(&mut self, p: &CobaltParams, now: SimTime) {
        let now = now.0 as i64;
        if now - self.blue_timer > p.target.0 as i64 {
            self.p_drop = (self.p_drop + p.increment).min(1.0);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
    }

    /// `cobalt_queue_empty`: the queue was found empty at `now`.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: SimTime) {
        let now = now.0 as i64;
        if self.p_drop > 0.0 && now - self.blue_timer > p.target.0 as i64 {
            self.p_drop = (self.p_drop - p.decrement).max(0.0);
            self.blue_timer = now;
        }
        self.dropping = false;
        if self.count > 0 && now - self.drop_next >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
        }
    }

    /// `cobalt_should_drop` for a packet leaving at `now` after `sojourn`
    /// (`ect`: ECN-capable): pass, mark (CoDel's part) or drop.
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: SimTime,
        sojourn: SimTime,
        ect: bool,
        rng: &mut Rng,
    ) -> Verdict {
        let now = now.0 as i64;
        let mut schedule = now - self.drop_next;
        let over_target = sojourn > p.target;
        let mut next_due = self.count > 0 && schedule >= 0;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control(now, p.interval, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        let mut v = Verdict::Pass;
        if next_due && self.dropping {
            v = if p.ecn && ect {
                Verdict::Mark(Cause::Early)
            } else {
                Verdict::Drop(Cause::Early)
            };
            self.count = self.count.saturating_add(1);
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
            schedule = now - self.drop_next;
        } else {
            while next_due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
                schedule = now - self.drop_next;
                next_due = self.count > 0 && schedule >= 0;
            }
        }
        // BLUE: drops only.
        if self.p_drop > 0.0 && rng.bernoulli(self.p_drop) && !matches!(v, Verdict::Drop(_)) {
            v = Verdict::Drop(Cause::Forced);
        }
        let dropped = matches!(v, Verdict::Drop(_));
        if self.count == 0 {
            self.drop_next = now + p.interval.0 as i64;
        } else if schedule > 0 && !dropped {
            self.drop_next = now;
        }
        v
    }
}

impl Default for CobaltState {
    fn default() -> Self {
        CobaltState::new()
    }
}

impl FlowAqm for CobaltState {
    type Params = FqCobaltParams;
    /// BLUE lowers `p_drop` when the link finds the queue empty.
    const IDLE_POLL: bool = true;

    /// One queue (ns-3's `CobaltQueueDisc`): the arrival is dropped;
    /// flow queues (`FqCobaltQueueDisc`, CAKE): the largest queue's head.
    #[inline]
    fn tail_drop(p: &FqCobaltParams) -> bool {
        p.flows == 1
    }

    fn new(_p: &FqCobaltParams) -> CobaltState {
        CobaltState::new()
    }

    #[inline]
    fn on_departure(
        &mut self,
        p: &FqCobaltParams,
        now: SimTime,
        pkt: &Queued,
        _flow_q: QueueLen,
        _total_bytes: u64,
        rng: &mut Rng,
    ) -> Verdict {
        let sojourn = now.saturating_sub(pkt.enq_time);
        self.should_drop(&p.cobalt, now, sojourn, pkt.ecn.capable(), rng)
    }

    #[inline]
    fn on_empty(&mut self, p: &FqCobaltParams, now: SimTime) {
        self.queue_empty(&p.cobalt, now);
    }

    #[inline]
    fn on_overflow(&mut self, p: &FqCobaltParams, now: SimTime) {
        self.queue_full(&p.cobalt, now);
    }
}

/// COBALT on one queue or under the flow scheduler.
pub type FqCobalt = FlowQueues<CobaltState>;

impl Aqm for FqCobalt {
    /// Unused: the link hands the packets to [`FqCobalt::enqueue`] and
    /// takes them from [`FqCobalt::dequeue`].
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        _q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Pass
    }

    /// `p_drop` (the largest over the queues), `count` (the largest) and,
    /// under the flow scheduler, `active_flows`; sampled only.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let (mut p, mut c) = (0.0f64, 0u32);
        for st in self.states() {
            p = p.max(st.p_drop);
            c = c.max(st.count);
        }
        out("p_drop", p);
        out("count", c as f64);
        if self.params().flows > 1 {
            out("active_flows", self.active_flows() as f64);
        }
    }

    /// `target`, `interval` (seconds), `increment`, `decrement` and (with
    /// flow queues) `quantum` may change during a run; the states carry over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        const KEYS: &[&str] = &["target", "interval", "increment", "decrement", "quantum"];
        let mut p = self.params().clone();
        match key {
            "target" => p.cobalt.target = change::secs(value)?,
            "interval" => p.cobalt.interval = change::secs(value)?,
            "increment" => p.cobalt.increment = value,
            "decrement" => p.cobalt.decrement = value,
            "quantum" => p.quantum = change::count(value)?,
            "flows" => return Err(flows_fixed("COBALT", key, KEYS)),
            _ => return Err(change::unknown_key("COBALT", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.set_params(p);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::LinkInfo;
    use crate::packet::{Ecn, PktId};
    use crate::rng::Stream;
    use crate::scenario::Buffer;
    use crate::units::BitRate;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }
    fn rng() -> Rng {
        Rng::new(1, Stream::Aqm(0))
    }

    /// The cache holds 1/sqrt(n) in Q0.32 to better than 0.1 %: 1.0,
    /// 1.0, 0.70711, 0.57735, 0.5, ... 0.25820 (n = 15); above 15 one
    /// Newton step from the previous value.
    #[test]
    fn inverse_sqrt_cache() {
        let one = 4_294_967_296.0;
        assert_eq!(INV_SQRT[0], u32::MAX);
        for (n, &y) in INV_SQRT.iter().enumerate().skip(1) {
            let want = 1.0 / (n as f64).sqrt();
            let got = y as f64 / one;
            assert!((got - want).abs() / want < 1e-3, "n {n}: {got} vs {want}");
        }
        // n = 16 from n = 15's value: close to 0.25.
        let y = newton_step(INV_SQRT[15], 16) as f64 / one;
        assert!((y - 0.25).abs() < 1e-3, "{y}");
        // control(0, 100 ms, 1/sqrt(4)) = 50 ms (to a nanosecond).
        let t = control(0, ms(100), INV_SQRT[4]);
        assert!((t - 50_000_000).abs() <= 1, "{t}");
    }

    /// CoDel's part, by hand (target 5 ms, interval 100 ms):
    /// - t = 0, sojourn 10 ms: enters dropping, count 1, drop_next =
    ///   0 + 100 ms x (2^32 - 1) / 2^32 = 99 999 999 ns; passes.
    /// - t = 100 ms: due (1 ns late): dropped; count 2; drop_next +=
    ///   100 ms x y, y = the cache's entry 2: four Newton steps from 1.0,
    ///   1 -> 0.5 -> 0.625 -> 0.693359 -> 0.706708 (not quite 1/sqrt(2) =
    ///   0.707107, as in Linux): drop_next = 170.6708 ms.
    /// - t = 120 ms, sojourn 1 ms: leaves dropping; passes.
    /// - t = 200 ms, sojourn 1 ms: due while not dropping: count decays to
    ///   1, drop_next += 100 ms x 1.0 = 270.6708 ms; passes.
    /// - t = 300 ms, sojourn 10 ms, ECN on: re-entering with a signal due
    ///   marks at once.
    #[test]
    fn codel_part_by_hand() {
        let p = CobaltParams::default();
        let (mut s, mut r) = (CobaltState::new(), rng());
        assert_eq!(
            s.should_drop(&p, ms(0), ms(10), false, &mut r),
            Verdict::Pass
        );
        assert!(s.dropping());
        assert_eq!((s.count(), s.drop_next()), (1, SimTime(99_999_999)));
        let v = s.should_drop(&p, ms(100), ms(10), false, &mut r);
        assert_eq!(v, Verdict::Drop(Cause::Early));
        assert_eq!(s.count(), 2);
        let dn = s.drop_next().as_secs_f64() * 1e3;
        assert!((dn - 170.670_845).abs() < 0.000_01, "{dn}");
        assert_eq!(
            s.should_drop(&p, ms(120), ms(1), false, &mut r),
            Verdict::Pass
        );
        assert!(!s.dropping());
        assert_eq!(
            s.should_drop(&p, ms(200), ms(1), false, &mut r),
            Verdict::Pass
        );
        assert_eq!(s.count(), 1);
        let dn = s.drop_next().as_secs_f64() * 1e3;
        assert!((dn - 270.670_844).abs() < 0.000_01, "{dn}");
        // Above target again at 300 ms with ECN: a signal is already due
        // (count 1, 300 > 270.67 ms), so re-entering signals at once: the
        // ECN-capable packet is marked, count 2, drop_next = 300 + 100 (the
        // entry) + 70.6708 = 470.6708 ms; at 400 ms nothing is due.
        let pe = CobaltParams {
            ecn: true,
            ..CobaltParams::default()
        };
        let v = s.should_drop(&pe, ms(300), ms(10), true, &mut r);
        assert_eq!((v, s.count()), (Verdict::Mark(Cause::Early), 2));
        let dn = s.drop_next().as_secs_f64() * 1e3;
        assert!((dn - 470.670_844).abs() < 0.000_01, "{dn}");
        let v = s.should_drop(&pe, ms(400), ms(10), true, &mut r);
        assert_eq!((v, s.count()), (Verdict::Pass, 2));
    }

    /// BLUE's part: +1/256 on overflow, -1/4096 on an empty queue, at
    /// most once per target (5 ms, strictly after); p_drop = 1 drops every
    /// packet (cause Forced), even one CoDel would pass.
    #[test]
    fn blue_part_by_hand() {
        let p = CobaltParams::default();
        let mut s = CobaltState::new();
        s.queue_full(&p, ms(10));
        assert_eq!(s.p_drop(), 1.0 / 256.0);
        assert!(s.dropping() && s.count() == 1 && s.drop_next() == ms(10));
        s.queue_full(&p, ms(15)); // 5 ms: not > target
        assert_eq!(s.p_drop(), 1.0 / 256.0);
        s.queue_full(&p, ms(16));
        assert_eq!(s.p_drop(), 2.0 / 256.0);
        s.queue_empty(&p, ms(30));
        assert_eq!(s.p_drop(), 2.0 / 256.0 - 1.0 / 4096.0);
        assert!(!s.dropping());
        let all = CobaltParams {
            increment: 1.0,
            ..CobaltParams::default()
        };
        let mut s = CobaltState::new();
        s.queue_full(&all, ms(10));
        let mut r = rng();
        for i in 0..10 {
            let v = s.should_drop(&all, ms(11 + i), SimTime::ZERO, true, &mut r);
            assert_eq!(v, Verdict::Drop(Cause::Forced));
        }
    }

    fn pkt(id: PktId, at: SimTime) -> Queued {
        Queued {
            id,
            size: 1000,
            enq_time: at,
            ecn: Ecn::NotEct,
        }
    }

    /// One queue (ns-3's COBALT): the arrival that finds the buffer full
    /// is refused and raises p_drop; the queue found empty lowers it.
    #[test]
    fn single_queue_overflow_and_empty() {
        let p = FqCobaltParams::single(CobaltParams::default());
        let mut s = FqCobalt::new(p, LinkInfo::new(BitRate(10_000_000), 1000));
        let (mut r, mut ev) = (rng(), Vec::new());
        let lim = Buffer::Packets(2);
        for id in 1..=3 {
            s.enqueue(
                pkt(id, ms(10)),
                u64::from(id),
                lim,
                SimTime::ZERO,
                &mut r,
                &mut ev,
            );
        }
        assert_eq!(ev, vec![3]);
        assert_eq!(s.states().next().unwrap().p_drop(), 1.0 / 256.0);
        // FIFO order, whatever the flow ids.
        assert_eq!(s.dequeue(ms(11), &mut r).unwrap().0.id, 1);
        // Dropping since the overflow (drop_next = 10 ms, count 1): the
        // second packet is due at once (sojourn 2 ms is not above target,
        // so the state ends first: passes).
        assert_eq!(s.dequeue(ms(12), &mut r).unwrap().0.id, 2);
        assert!(s.dequeue(ms(30), &mut r).is_none());
        let st = s.states().next().unwrap();
        assert_eq!(st.p_drop(), 1.0 / 256.0 - 1.0 / 4096.0);
    }

    #[test]
    fn validation_and_set_param() {
        let mut p = CobaltParams::default();
        assert!(p.validate("aqm").is_ok());
        p.increment = 1.5;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.increment");
        let p = CobaltParams {
            target: SimTime::ZERO,
            ..CobaltParams::default()
        };
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.target");
        let mut s = FqCobalt::new(
            FqCobaltParams::single(CobaltParams::default()),
            LinkInfo::new(BitRate(10_000_000), 1000),
        );
        s.set_param("interval", 0.2).unwrap();
        assert_eq!(s.params().cobalt.interval, ms(200));
        let e = s.set_param("decrement", 2.0).unwrap_err();
        assert!(e.contains("[0, 1]"), "{e}");
        let e = s.set_param("ecn", 1.0).unwrap_err();
        assert!(e.contains("COBALT"), "{e}");
    }
}
