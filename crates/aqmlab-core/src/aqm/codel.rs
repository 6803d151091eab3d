//! CoDel: Controlled Delay active queue management (RFC 8289).
//!
//! Reference: K. Nichols, V. Jacobson, A. McGregor, J. Iyengar, "Controlled
//! Delay Active Queue Management", RFC 8289 (2018). The seed papers
//! (`/work/shared/seeds/`) do not cover CoDel; the RFC is the specification.
//!
//! Model (RFC 8289 sections 3 and 5):
//! - Estimator (section 3.1): the sojourn time of each packet, measured at
//!   dequeue as `now - enq_time` (section 5.5, `dodequeue`).
//! - Setpoint (sections 3.2, 4.3): `target` (5 ms). The queue is "above
//!   target" while sojourn >= target and more than `maxpacket` bytes remain
//!   queued; once it has stayed above target for `interval` (100 ms,
//!   section 4.2; `first_above_time`), the queue may be signalled.
//! - Control loop (section 3.3): in the dropping state a packet is dropped
//!   at `drop_next`, and the next one scheduled at
//!   `drop_next + interval / sqrt(count)` (the control law, section 5.6),
//!   `count` being the drops since the state was entered. The state is
//!   left as soon as a packet's sojourn falls below target.
//! - Entering the dropping state (section 5.5): `count` restarts at 1,
//!   unless the state was left recently (`now - drop_next < 16 interval`)
//!   and more than one drop happened since the previous entry
//!   (`delta = count - lastcount > 1`): then `count = delta`, so the drop
//!   rate that controlled the queue last time is the starting point.
//!
//! How the RFC's `dequeue()` maps onto the link: the RFC drops a packet
//! and dequeues the next within one call (its drop loop). Here every
//! packet is one call of [`CodelState::on_packet`]; a `Drop` makes the
//! caller (the link, or FQ-CoDel's flow scheduler) dequeue the next packet
//! of the same queue at once, and the state machine remembers that this
//! next call continues the RFC's `dequeue()` (the field `pending`). A
//! packet is only signalled while more than `maxpacket` (>= 1) bytes stay
//! queued behind it, so the RFC's following `dodequeue` always finds a
//! packet.
//!
//! ECN (RFC 8289 section 5.5 leaves the action open; RFC 8290 section
//! 5.2.6 specifies it for FQ-CoDel): with `ecn` on, an ECN-capable packet
//! that would be dropped is CE-marked and sent instead; the state advances
//! as after a drop (`count` grows, the next signal is scheduled by the
//! control law), and the dequeue ends with the marked packet.
//!
//! The control law runs only when a packet is signalled (not per packet);
//! it computes `interval / sqrt(count)` with one hardware square root, or
//! with `control_law = "linux"` as Linux's `codel_impl.h` does: 1 /
//! sqrt(count) in 16 bits, moved by one Newton step per change of `count`
//! (see [`ControlLaw::Linux`]).
//!
//! CoDel never drops at enqueue: the link's buffer limit is its only
//! enqueue-side drop (RFC 8289 section 5.4). Every CoDel signal has cause
//! [`Cause::Early`].
//!
//! Under many flows with small windows the mean delay settles above
//! `target` although the state machine follows section 5.5 exactly: each
//! dropping state ends at the first packet below target, and the next
//! needs a full `interval` above target (section 4.2), during which the
//! flows' additive increase raises the delay by about interval / W
//! (W packets of window per flow). 50 NewReno flows: 18 ms at W = 6
//! (10 Mb/s, 500 B), 10 ms at W = 18, 6.1 ms at W = 35 (200 Mb/s,
//! 1500 B). `docs/aqm/codel.md` gives the figures.

use super::{Aqm, Cause, LinkInfo, PacketInfo, QueueLen, Verdict};
use crate::rng::Rng;
use crate::scenario::decode::{join, SpecError, SpecResult, Table};
use crate::units::SimTime;
use serde::Serialize;

/// Default `target`: 5 ms (RFC 8289 sections 4.3 and 5.3).
pub const TARGET: SimTime = SimTime::from_millis(5);
/// Default `interval`: 100 ms (RFC 8289 sections 4.2 and 5.3).
pub const INTERVAL: SimTime = SimTime::from_millis(100);

/// CoDel's parameters (RFC 8289 section 5.3); FQ-CoDel uses the same ones
/// for every flow queue (RFC 8290 section 5.2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CodelParams {
    /// Acceptable standing queue delay, > 0. Default 5 ms (RFC 8289 section 4.3).
    pub target: SimTime,
    /// Window over which the minimum sojourn must exceed target before
    /// dropping starts, and the control law's base period, > 0. Default
    /// 100 ms (RFC 8289 section 4.2).
    pub interval: SimTime,
    /// MAXPACKET, bytes, >= 1: while at most this many bytes remain queued
    /// the queue counts as below target (RFC 8289 section 5.5, "SHOULD use
    /// interface MTU"). Default: the scenario's `tcp.packet_size` (our MTU).
    pub maxpacket: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// How `interval / sqrt(count)` is computed (`control_law`): exactly
    /// (RFC 8289 section 5.6, the default), or as Linux's `codel_impl.h`
    /// does. Listed in the resolved scenario only when `"linux"`.
    #[serde(skip_serializing_if = "ControlLaw::is_rfc")]
    pub control_law: ControlLaw,
}

/// `control_law`: how CoDel computes the spacing `interval / sqrt(count)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum ControlLaw {
    /// RFC 8289 section 5.6: the square root of `count`, exactly.
    #[default]
    #[serde(rename = "rfc8289")]
    Rfc8289,
    /// Linux (`codel_Newton_step`, `codel_control_law`): 1 / sqrt(count)
    /// kept in 16 bits and moved by one Newton step
    /// y <- y (3 - count y^2) / 2 each time `count` changes, from 1 when
    /// the state is entered afresh and from the last cycle's value when
    /// `count` restarts at the last cycle's drops. The step lags the root
    /// while `count` is small or has jumped: at count 2 the spacing is
    /// interval / 2 (exactly: / 1.414), at count 3 interval x 0.5625
    /// (0.577); on a restart at count = delta from a cycle that ended at
    /// C, interval x (3 - delta / C) / (2 sqrt C).
    #[serde(rename = "linux")]
    Linux,
}

impl ControlLaw {
    pub const NAMES: &'static [&'static str] = &["rfc8289", "linux"];

    fn is_rfc(&self) -> bool {
        *self == ControlLaw::Rfc8289
    }
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: TARGET,
            interval: INTERVAL,
            maxpacket: 1000,
            ecn: false,
            control_law: ControlLaw::Rfc8289,
        }
    }
}

impl CodelParams {
    /// Read the CoDel keys of an `[aqm]` table.
    pub fn decode(t: &mut Table, default_pkt_size: u32) -> SpecResult<CodelParams> {
        let p = CodelParams {
            target: t.time("target", TARGET)?,
            interval: t.time("interval", INTERVAL)?,
            maxpacket: t.u32("maxpacket", default_pkt_size)?,
            ecn: t.bool("ecn", false)?,
            control_law: match t.choice("control_law", ControlLaw::NAMES, Some("rfc8289"))? {
                "linux" => ControlLaw::Linux,
                _ => ControlLaw::Rfc8289,
            },
        };
        p.validate(t.path())?;
        Ok(p)
    }

    /// Check every parameter; `path` prefixes the field names in errors.
    pub fn validate(&self, path: &str) -> SpecResult<()> {
        for (k, v) in [("target", self.target), ("interval", self.interval)] {
            if v == SimTime::ZERO {
                return Err(SpecError::new(
                    join(path, k),
                    "0s is not allowed; give a time > 0 such as \"5ms\"",
                ));
            }
        }
        // 16 x interval must not overflow the nanosecond clock (the count
        // restart rule of section 5.5 computes it).
        if self.interval.0 > SimTime::from_secs(1_000_000).0 {
            return Err(SpecError::new(
                join(path, "interval"),
                format!("{} is too long; at most 1000000s", self.interval),
            ));
        }
        if self.maxpacket == 0 {
            return Err(SpecError::new(
                join(path, "maxpacket"),
                "0 is not allowed; give a size in bytes >= 1",
            ));
        }
        Ok(())
    }
}

/// The control law (RFC 8289 sections 3.3 and 5.6): `t + interval / sqrt(count)`.
#[inline]
pub fn control_law(t: SimTime, interval: SimTime, count: u32) -> SimTime {
    let c = count.max(1) as f64;
    t + SimTime::from_nanos_f64(interval.0 as f64 / c.sqrt())
}

/// One Newton step of Linux's 1 / sqrt(count) in Q0.16 toward `count`:
/// y (3 - count y^2) / 2, in 32-bit fixed point as `codel_Newton_step`
/// computes it (truncating at each product).
#[inline]
fn newton_step(y16: u16, count: u32) -> u16 {
    let y = u64::from(y16) << 16; // Q0.32
    let y2 = (y * y) >> 32;
    let three_minus = (3u64 << 32).wrapping_sub(u64::from(count).wrapping_mul(y2)) >> 2;
    let next = (three_minus.wrapping_mul(y)) >> 31; // x 4 / 2, back to Q0.32
    (next >> 16) as u16
}

/// Linux's control law: `t + interval x y` with y in Q0.16
/// (`codel_control_law`: `reciprocal_scale(interval, y << 16)`).
#[inline]
fn control_law_q16(t: SimTime, interval: SimTime, y16: u16) -> SimTime {
    t + SimTime(((u128::from(interval.0) * (u128::from(y16) << 16)) >> 32) as u64)
}

/// What the next call of [`CodelState::on_packet`] continues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Pending {
    /// A new dequeue.
    #[default]
    None,
    /// The previous packet was dropped to enter the dropping state; this
    /// packet is the RFC's second `dodequeue` of that `dequeue()`.
    Entering,
    /// The previous packet was dropped in the drop loop; this packet is
    /// the loop's next `dodequeue`.
    Looping,
}

/// CoDel's per-queue state (RFC 8289 section 5.2), driven one dequeued
/// packet at a time. Plain CoDel has one; FQ-CoDel one per flow queue.
#[derive(Clone, Debug, Default)]
pub struct CodelState {
    /// When the sojourn time went (and stayed) above target, plus
    /// interval; `SimTime::ZERO` when below (the RFC's 0).
    first_above_time: SimTime,
    /// Time of the next drop in the dropping state.
    drop_next: SimTime,
    /// Drops (and marks) since the dropping state was entered.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    /// In the dropping state.
    dropping: bool,
    pending: Pending,
    /// 1 / sqrt(count) in Q0.16 under Linux's control law (0 until the
    /// state is first entered, as Linux's `codel_vars_init` leaves it).
    rec_inv_sqrt: u16,
}

impl CodelState {
    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn dropping(&self) -> bool {
        self.dropping
    }

    pub fn drop_next(&self) -> SimTime {
        self.drop_next
    }

    /// `dodequeue`'s test (RFC 8289 section 5.5): whether the sojourn time
    /// has been above target for at least interval. `backlog` is the bytes
    /// still queued after this packet left.
    #[inline]
    fn ok_to_drop(
        &mut self,
        p: &CodelParams,
        now: SimTime,
        sojourn: SimTime,
        backlog: u64,
    ) -> bool {
        if sojourn < p.target || backlog <= p.maxpacket as u64 {
            // Went (or stayed) below: stay below for at least interval.
            self.first_above_time = SimTime::ZERO;
            false
        } else if self.first_above_time == SimTime::ZERO {
            // Just went above; signalling is allowed if still above at this time.
            self.first_above_time = now + p.interval;
            false
        } else {
            now >= self.first_above_time
        }
    }

    /// `dodequeue` on an empty queue at `now` (RFC 8289 section 5.5): the
    /// queue cannot be above target, and a dropping state ends. If the
    /// drop that enters the dropping state took the queue's last packet
    /// (FQ-CoDel, whose MAXPACKET test may read the whole scheduler's
    /// backlog), the state is entered all the same, as the RFC's
    /// `dequeue()` and Linux's `codel_dequeue` do: `count`, `lastcount`
    /// and `drop_next` start their cycle, and the flag is cleared at the
    /// queue's next dequeue opportunity.
    #[inline]
    pub fn on_empty(&mut self, p: &CodelParams, now: SimTime) {
        self.first_above_time = SimTime::ZERO;
        if std::mem::take(&mut self.pending) == Pending::Entering {
            self.enter(p, now);
        } else {
            self.dropping = false;
        }
    }

    /// Enter the dropping state at `now` (RFC 8289 section 5.5, the
    /// `else if (r.ok_to_drop)` branch) with the count restart rule.
    fn enter(&mut self, p: &CodelParams, now: SimTime) {
        self.dropping = true;
        let delta = self.count.saturating_sub(self.lastcount);
        self.count = 1;
        // now - drop_next < 16 interval, in signed arithmetic: drop_next
        // may lie in the future if the state was left before it.
        let since = now.0 as i128 - self.drop_next.0 as i128;
        let restart = delta > 1 && since < 16 * p.interval.0 as i128;
        if restart {
            self.count = delta;
        }
        if p.control_law == ControlLaw::Linux {
            self.rec_inv_sqrt = if restart {
                newton_step(self.rec_inv_sqrt, self.count)
            } else {
                u16::MAX
            };
        }
        self.drop_next = self.law(p, now);
        self.lastcount = self.count;
    }

    /// The control law from `t` at the current `count`.
    #[inline]
    fn law(&self, p: &CodelParams, t: SimTime) -> SimTime {
        match p.control_law {
            ControlLaw::Rfc8289 => control_law(t, p.interval, self.count),
            ControlLaw::Linux => control_law_q16(t, p.interval, self.rec_inv_sqrt),
        }
    }

    /// `count` grows by one (a signal in the dropping state).
    #[inline]
    fn bump(&mut self, p: &CodelParams) {
        self.count = self.count.saturating_add(1);
        if p.control_law == ControlLaw::Linux {
            self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
        }
    }

    /// The drop loop's test `while (now >= drop_next && dropping)` for the
    /// packet at hand (RFC 8289 section 5.5).
    #[inline]
    fn loop_step(&mut self, p: &CodelParams, now: SimTime, mark: bool) -> Verdict {
        if now < self.drop_next {
            return Verdict::Pass;
        }
        self.bump(p);
        if mark {
            // The marked packet is sent; schedule the next signal as the
            // loop does after a drop whose successor is still above target.
            self.drop_next = self.law(p, self.drop_next);
            return Verdict::Mark(Cause::Early);
        }
        self.pending = Pending::Looping;
        Verdict::Drop(Cause::Early)
    }

    /// One packet leaves the queue at `now` after waiting `sojourn`;
    /// `backlog` bytes remain in the queue behind it; `ect`: the packet is
    /// ECN-capable. Returns the RFC's decision for it. After a `Drop` (which
    /// leaves more than `maxpacket` bytes queued), the caller must present
    /// the next packet of the same queue at the same `now`.
    #[inline]
    pub fn on_packet(
        &mut self,
        p: &CodelParams,
        now: SimTime,
        sojourn: SimTime,
        backlog: u64,
        ect: bool,
    ) -> Verdict {
        let ok = self.ok_to_drop(p, now, sojourn, backlog);
        let mark = p.ecn && ect;
        match std::mem::take(&mut self.pending) {
            Pending::Entering => {
                // Section 5.5: the packet after the entering drop is sent
                // whatever its own sojourn; the state starts now.
                self.enter(p, now);
                Verdict::Pass
            }
            Pending::Looping => {
                if !ok {
                    self.dropping = false;
                    return Verdict::Pass;
                }
                self.drop_next = self.law(p, self.drop_next);
                self.loop_step(p, now, mark)
            }
            Pending::None if self.dropping => {
                if !ok {
                    // Sojourn below target: leave the dropping state.
                    self.dropping = false;
                    return Verdict::Pass;
                }
                self.loop_step(p, now, mark)
            }
            Pending::None if ok => {
                if mark {
                    self.enter(p, now);
                    return Verdict::Mark(Cause::Early);
                }
                self.pending = Pending::Entering;
                Verdict::Drop(Cause::Early)
            }
            Pending::None => Verdict::Pass,
        }
    }
}

/// CoDel on a link's FIFO.
#[derive(Clone, Debug)]
pub struct Codel {
    p: CodelParams,
    st: CodelState,
}

impl Codel {
    pub fn new(p: CodelParams, _link: LinkInfo) -> Codel {
        Codel {
            p,
            st: CodelState::default(),
        }
    }

    pub fn params(&self) -> &CodelParams {
        &self.p
    }

    pub fn state(&self) -> &CodelState {
        &self.st
    }
}

impl Aqm for Codel {
    fn on_enqueue(
        &mut self,
        _now: SimTime,
        _pkt: &PacketInfo,
        _q: QueueLen,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Pass
    }

    #[inline]
    fn on_dequeue(
        &mut self,
        now: SimTime,
        pkt: &PacketInfo,
        q: QueueLen,
        _tx_end: SimTime,
    ) -> Verdict {
        let sojourn = now.saturating_sub(pkt.enq_time);
        self.st.on_packet(&self.p, now, sojourn, q.bytes, pkt.ect)
    }

    /// `count` and `dropping` (0 or 1), sampled only: the state changes at
    /// packet time scale, too often to record each change.
    fn params(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("count", self.st.count as f64);
        out("dropping", if self.st.dropping { 1.0 } else { 0.0 });
    }

    /// `target`, `interval` (seconds) and `maxpacket` (bytes) may change
    /// during a run; they apply from the next dequeued packet. The state
    /// (count, dropping, the times already computed with the old interval)
    /// carries over.
    fn set_param(&mut self, key: &str, value: f64) -> Result<(), String> {
        use super::change;
        const KEYS: &[&str] = &["target", "interval", "maxpacket"];
        let mut p = self.p.clone();
        match key {
            "target" => p.target = change::secs(value)?,
            "interval" => p.interval = change::secs(value)?,
            "maxpacket" => p.maxpacket = change::count(value)?,
            _ => return Err(change::unknown_key("CoDel", key, KEYS)),
        }
        p.validate("").map_err(|e| change::invalid(key, e))?;
        self.p = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::BitRate;

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    fn params() -> CodelParams {
        CodelParams {
            maxpacket: 500,
            ..CodelParams::default()
        }
    }

    #[test]
    fn control_law_times() {
        // interval 100 ms: 100 / sqrt(1) = 100 ms, 100 / sqrt(4) = 50 ms,
        // 100 / sqrt(2) = 70.710678 ms, 100 / sqrt(100) = 10 ms.
        assert_eq!(control_law(ms(1000), INTERVAL, 1), ms(1100));
        assert_eq!(control_law(ms(1000), INTERVAL, 4), ms(1050));
        assert_eq!(control_law(ms(0), INTERVAL, 2), SimTime(70_710_678));
        assert_eq!(control_law(ms(0), INTERVAL, 100), ms(10));
    }

    /// A standing queue of 10 ms sojourn, 2000 bytes behind each packet.
    fn step(s: &mut CodelState, p: &CodelParams, t_ms: u64, soj_ms: u64) -> Verdict {
        s.on_packet(p, ms(t_ms), ms(soj_ms), 2000, false)
    }

    #[test]
    fn enters_after_interval_above_target_then_follows_control_law() {
        let p = params();
        let mut s = CodelState::default();
        // t = 0: sojourn 10 ms >= 5 ms: first_above_time = 0 + 100 ms.
        assert_eq!(step(&mut s, &p, 0, 10), Verdict::Pass);
        assert_eq!(s.first_above_time, ms(100));
        // t = 99 ms: still before first_above_time.
        assert_eq!(step(&mut s, &p, 99, 10), Verdict::Pass);
        // t = 100 ms: ok_to_drop: drop, the next packet completes the entry.
        assert_eq!(step(&mut s, &p, 100, 10), Verdict::Drop(Cause::Early));
        assert!(!s.dropping);
        assert_eq!(step(&mut s, &p, 100, 10), Verdict::Pass);
        // Entered: count 1, drop_next = 100 + 100 / sqrt(1) = 200 ms.
        assert!(s.dropping);
        assert_eq!((s.count, s.drop_next), (1, ms(200)));
        assert_eq!(step(&mut s, &p, 150, 10), Verdict::Pass);
        // t = 200 ms: drop, count 2; the next packet (still above target)
        // schedules drop_next = 200 + 100 / sqrt(2) = 270.710678 ms.
        assert_eq!(step(&mut s, &p, 200, 10), Verdict::Drop(Cause::Early));
        assert_eq!(s.count, 2);
        assert_eq!(step(&mut s, &p, 200, 10), Verdict::Pass);
        assert_eq!(s.drop_next, SimTime(270_710_678));
        // t = 271 ms: drop, count 3; next at 270.710678 + 57.735027 = 328.445705 ms.
        assert_eq!(step(&mut s, &p, 271, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 271, 10), Verdict::Pass);
        assert_eq!(s.count, 3);
        assert_eq!(s.drop_next, SimTime(270_710_678 + 57_735_027));
        // A sojourn below target leaves the dropping state.
        assert_eq!(step(&mut s, &p, 300, 4), Verdict::Pass);
        assert!(!s.dropping);
        assert_eq!(s.first_above_time, SimTime::ZERO);
    }

    #[test]
    fn drop_loop_drops_several_when_late() {
        let p = params();
        let mut s = CodelState {
            dropping: true,
            count: 4,
            lastcount: 1,
            drop_next: ms(100),
            first_above_time: ms(10),
            ..CodelState::default()
        };
        // At t = 200 ms the schedule is far behind: drop (count 5); the next
        // packet reschedules 100 + 100 / sqrt(5) = 144.72136 ms, still <= 200:
        // drop again (count 6), next 144.72136 + 40.824829 = 185.546189 ms:
        // drop (count 7), next 185.546189 + 37.796447 = 223.342636 ms > 200: send.
        assert_eq!(step(&mut s, &p, 200, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 200, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 200, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 200, 10), Verdict::Pass);
        assert_eq!(s.count, 7);
        assert_eq!(s.drop_next, SimTime(223_342_636));
    }

    #[test]
    fn count_restart_rule() {
        let p = params();
        // Left the state at count 6 after entering with lastcount 2
        // (delta = 4); re-entering within 16 intervals of drop_next
        // restarts at count = delta = 4: drop_next = t + 100 / 2 = t + 50 ms.
        let mut s = CodelState {
            count: 6,
            lastcount: 2,
            drop_next: ms(1000),
            first_above_time: ms(1500),
            ..CodelState::default()
        };
        assert_eq!(step(&mut s, &p, 1500, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 1500, 10), Verdict::Pass);
        assert_eq!((s.count, s.lastcount, s.drop_next), (4, 4, ms(1550)));
        // Re-entering 16 intervals (1.6 s) or more after drop_next: count 1.
        let mut s = CodelState {
            count: 6,
            lastcount: 2,
            drop_next: ms(1000),
            first_above_time: ms(2600),
            ..CodelState::default()
        };
        assert_eq!(step(&mut s, &p, 2600, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 2600, 10), Verdict::Pass);
        assert_eq!((s.count, s.drop_next), (1, ms(2700)));
        // delta = 1 (one drop last time): count 1 even if recent.
        let mut s = CodelState {
            count: 3,
            lastcount: 2,
            drop_next: ms(1000),
            first_above_time: ms(1100),
            ..CodelState::default()
        };
        assert_eq!(step(&mut s, &p, 1100, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 1100, 10), Verdict::Pass);
        assert_eq!(s.count, 1);
    }

    /// After one packet below target the dropping state ends, and the
    /// next signal needs a full interval above target again (RFC 8289
    /// section 5.5: `first_above_time` restarts); count then restarts at
    /// the previous cycle's drops. This pause is what lets the queue of
    /// many small-window flows rise well above target (docs/aqm/codel.md).
    #[test]
    fn leaving_needs_a_new_interval_above_target() {
        let p = params();
        let mut s = CodelState {
            dropping: true,
            count: 9,
            lastcount: 4,
            drop_next: ms(1040),
            first_above_time: ms(500),
            ..CodelState::default()
        };
        // t = 1000 ms, sojourn 3 ms < 5 ms: leave; drop_next stays 1040 ms.
        assert_eq!(step(&mut s, &p, 1000, 3), Verdict::Pass);
        assert!(!s.dropping);
        assert_eq!((s.first_above_time, s.drop_next), (SimTime::ZERO, ms(1040)));
        // Above target again from 1001 ms: first_above_time = 1001 + 100 ms.
        assert_eq!(step(&mut s, &p, 1001, 30), Verdict::Pass);
        assert_eq!(s.first_above_time, ms(1101));
        // No signal before 1101 ms, however high the sojourn (here past
        // drop_next = 1040 ms, which only matters in the dropping state).
        assert_eq!(step(&mut s, &p, 1050, 60), Verdict::Pass);
        assert_eq!(step(&mut s, &p, 1100, 60), Verdict::Pass);
        assert!(!s.dropping);
        // 1101 ms: enter. delta = 9 - 4 = 5 > 1 and now - drop_next =
        // 61 ms < 1.6 s: count = 5, drop_next = 1101 + 100 / sqrt(5)
        // = 1101 + 44.72136 = 1145.72136 ms.
        assert_eq!(step(&mut s, &p, 1101, 60), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 1101, 60), Verdict::Pass);
        assert_eq!((s.count, s.lastcount), (5, 5));
        assert_eq!(s.drop_next, SimTime(1_145_721_360));
        // drop_next may lie in the future when the state is re-entered
        // (left before its next drop): now - drop_next < 0 < 16 intervals,
        // so the restart rule applies too. Left at count 7 from lastcount
        // 3 with drop_next = 2000 ms; re-entering at 1500 ms: count = 4,
        // drop_next = 1500 + 100 / sqrt(4) = 1550 ms.
        let mut s = CodelState {
            count: 7,
            lastcount: 3,
            drop_next: ms(2000),
            first_above_time: ms(1500),
            ..CodelState::default()
        };
        assert_eq!(step(&mut s, &p, 1500, 10), Verdict::Drop(Cause::Early));
        assert_eq!(step(&mut s, &p, 1500, 10), Verdict::Pass);
        assert_eq!((s.count, s.drop_next), (4, ms(1550)));
    }

    #[test]
    fn small_backlog_and_empty_queue() {
        let p = params();
        let mut s = CodelState {
            first_above_time: ms(1),
            dropping: true,
            ..CodelState::default()
        };
        // At most maxpacket (500) bytes left: below target whatever the
        // sojourn; the dropping state ends.
        assert_eq!(s.on_packet(&p, ms(10), ms(50), 500, false), Verdict::Pass);
        assert_eq!(s.first_above_time, SimTime::ZERO);
        assert!(!s.dropping);
        // 501 bytes left: above target; first_above_time = 20 + 100 ms.
        assert_eq!(s.on_packet(&p, ms(20), ms(50), 501, false), Verdict::Pass);
        assert_eq!(s.first_above_time, ms(120));
        // An empty queue at a dequeue opportunity (FQ-CoDel's flow
        // scheduler) resets first_above_time and the dropping state.
        s.dropping = true;
        s.on_empty(&p, ms(30));
        assert_eq!(s.first_above_time, SimTime::ZERO);
        assert!(!s.dropping);
    }

    /// Linux's control law: one Newton step per change of `count`, in 16
    /// bits. From 1 (0xffff) the steps give 0.50002, 0.5625, 0.48779 at
    /// counts 2, 3, 4 (the roots: 0.7071, 0.5774, 0.5); a restart at
    /// count 5 from a cycle that ended at 20 (1 / sqrt(20) = 0.2234) gives
    /// 0.3072 where the root is 0.4472.
    #[test]
    fn linux_control_law_lags_the_root() {
        let mut y = u16::MAX;
        let mut seen = Vec::new();
        for c in 2..=4 {
            y = newton_step(y, c);
            seen.push(y);
        }
        assert_eq!(seen, [32769, 36864, 31968]);
        assert_eq!(control_law_q16(ms(0), INTERVAL, 32769), SimTime(50_001_525));
        let mut y = u16::MAX;
        for c in 2..=20 {
            y = newton_step(y, c);
        }
        assert_eq!(y, 14640); // 0.22339
        assert_eq!(newton_step(y, 5), 20133); // 0.30721
                                              // In the state machine: entered afresh at 100 ms, the second drop
                                              // comes 50 ms after the first rather than 70.7 ms.
        let p = CodelParams {
            control_law: ControlLaw::Linux,
            ..params()
        };
        let mut s = CodelState {
            first_above_time: ms(50),
            ..CodelState::default()
        };
        assert_eq!(
            s.on_packet(&p, ms(100), ms(10), 3000, false),
            Verdict::Drop(Cause::Early)
        );
        assert_eq!(s.on_packet(&p, ms(100), ms(10), 1500, false), Verdict::Pass);
        assert_eq!((s.count, s.rec_inv_sqrt), (1, u16::MAX));
        assert_eq!(s.drop_next, control_law_q16(ms(100), INTERVAL, u16::MAX));
        let first = s.drop_next;
        assert_eq!(
            s.on_packet(&p, first, ms(10), 3000, false),
            Verdict::Drop(Cause::Early)
        );
        assert_eq!(s.on_packet(&p, first, ms(10), 1500, false), Verdict::Pass);
        assert_eq!((s.count, s.rec_inv_sqrt), (2, 32769));
        assert_eq!(s.drop_next, control_law_q16(first, INTERVAL, 32769));
    }

    #[test]
    fn entering_drop_of_the_last_packet_still_enters() {
        // FQ-CoDel's MAXPACKET test may read the scheduler's backlog, so
        // the drop that enters the dropping state can take a flow queue's
        // last packet. The state is entered all the same (RFC 8289's
        // dequeue(), Linux's codel_dequeue): the last cycle's 4 - 2 drops,
        // 0.5 s after its drop_next, give count 2 and drop_next 2000 +
        // 100 / sqrt(2) ms.
        let p = params();
        let mut s = CodelState {
            first_above_time: ms(1000),
            count: 4,
            lastcount: 2,
            drop_next: ms(1500),
            ..CodelState::default()
        };
        assert_eq!(
            s.on_packet(&p, ms(2000), ms(50), 3000, false),
            Verdict::Drop(Cause::Early)
        );
        s.on_empty(&p, ms(2000));
        let next = control_law(ms(2000), p.interval, 2);
        assert_eq!((s.count, s.lastcount, s.drop_next), (2, 2, next));
        assert!(s.dropping);
        assert_eq!(s.first_above_time, SimTime::ZERO);
        // The queue's next packet, above target, starts a new interval and
        // ends the state without a drop.
        assert_eq!(
            s.on_packet(&p, ms(2050), ms(50), 3000, false),
            Verdict::Pass
        );
        assert!(!s.dropping);
        assert_eq!(s.first_above_time, ms(2150));
        // Entered again: this cycle dropped nothing more (count - lastcount
        // = 0), so count restarts at 1. Had the state not been entered at
        // 2000 ms, the older cycle's 4 - 2 would have set it to 2.
        assert_eq!(
            s.on_packet(&p, ms(2200), ms(50), 3000, false),
            Verdict::Drop(Cause::Early)
        );
        assert_eq!(
            s.on_packet(&p, ms(2200), ms(50), 1500, false),
            Verdict::Pass
        );
        assert_eq!((s.count, s.drop_next), (1, ms(2300)));
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let p = CodelParams {
            ecn: true,
            ..params()
        };
        let mut s = CodelState {
            first_above_time: ms(50),
            ..CodelState::default()
        };
        // Entering: the ECT packet is marked and sent; count 1, next at +100 ms.
        let v = s.on_packet(&p, ms(100), ms(10), 2000, true);
        assert_eq!(v, Verdict::Mark(Cause::Early));
        assert!(s.dropping);
        assert_eq!(s.drop_next, ms(200));
        // In the loop: mark, count 2, next at 200 + 70.710678 ms.
        let v = s.on_packet(&p, ms(200), ms(10), 2000, true);
        assert_eq!(v, Verdict::Mark(Cause::Early));
        assert_eq!((s.count, s.drop_next), (2, SimTime(270_710_678)));
        // A packet that is not ECN-capable is dropped.
        let v = s.on_packet(&p, ms(280), ms(10), 2000, false);
        assert_eq!(v, Verdict::Drop(Cause::Early));
    }

    #[test]
    fn link_hook_uses_enq_time() {
        let mut c = Codel::new(params(), LinkInfo::new(BitRate(10_000_000), 500));
        let pkt = PacketInfo {
            size: 500,
            enq_time: ms(10),
            ..PacketInfo::default()
        };
        let q = QueueLen {
            pkts: 4,
            bytes: 2000,
        };
        // Sojourn 20 - 10 = 10 ms >= target: first_above_time = 120 ms.
        assert_eq!(c.on_dequeue(ms(20), &pkt, q, ms(21)), Verdict::Pass);
        assert_eq!(c.st.first_above_time, ms(120));
        let mut names = Vec::new();
        Aqm::params(&c, &mut |n, v| names.push((n, v)));
        assert_eq!(names, vec![("count", 0.0), ("dropping", 0.0)]);
    }

    #[test]
    fn validation_names_fields() {
        let mut p = params();
        p.interval = SimTime::ZERO;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.interval");
        let mut p = params();
        p.target = SimTime::ZERO;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.target");
        let mut p = params();
        p.maxpacket = 0;
        assert_eq!(p.validate("aqm").unwrap_err().path, "aqm.maxpacket");
    }
}
