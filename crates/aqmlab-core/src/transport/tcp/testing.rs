//! Helpers of the TCP unit tests: configurations, a sender with a window
//! in flight, ACKs and deliveries by hand.

use super::{Seg, TcpConfig, TcpFlow};
use crate::packet::{flags, Ecn};
use crate::scenario::{TcpSpec, TcpVariant};
use crate::units::SimTime;

/// A sender of `variant` with an initial window of one segment, ECN on.
pub(super) fn cfg(variant: TcpVariant) -> TcpConfig {
    TcpConfig::from_spec(
        &TcpSpec {
            variant,
            initial_cwnd: 1,
            ..TcpSpec::default()
        },
        false,
        true,
    )
}

/// Deliver every data segment in `out` to `rx` and return the ACKs.
pub(super) fn deliver(rx: &mut TcpFlow, out: &[Seg], skip: &[u64]) -> Vec<Seg> {
    let mut acks = Vec::new();
    for s in out
        .iter()
        .filter(|s| s.from_sender && !skip.contains(&s.seq))
    {
        rx.on_data(SimTime(0), s.seq, s.flags, s.ecn, s.ts, &mut acks);
    }
    acks
}

/// A web flow's TCP: 1000-byte segments, ECN and ECN+.
pub(super) fn ecn_plus_spec(initial_cwnd: u16) -> TcpSpec {
    TcpSpec {
        packet_size: 1040,
        initial_cwnd,
        ecn: true,
        ecn_plus: true,
        ..TcpSpec::default()
    }
}

/// One millisecond, ns.
const MS: u64 = 1_000_000;

/// A sender of `tcp` (ECN as `tcp.ecn` says) with an RTT estimate of
/// 100 ms (RTO 300 ms), as after a handshake, and `cwnd = ssthresh = w`
/// when `w` is given, started at time 0: the flow and what it sent.
pub(super) fn started(tcp: TcpSpec, w: Option<f64>) -> (TcpFlow, Vec<Seg>) {
    let mut tx = TcpFlow::new(TcpConfig::from_spec(&tcp, false, tcp.ecn));
    tx.rtt_sample(SimTime::from_millis(100), SimTime::ZERO);
    if let Some(w) = w {
        tx.cwnd = w;
        tx.ssthresh = w;
    }
    let mut out = Vec::new();
    tx.start(SimTime(0), &mut out);
    (tx, out)
}

/// A NewReno sender with `cwnd = ssthresh = w`, an RTT estimate of
/// 100 ms (RTO 300 ms) and `w` segments (0..w) sent at time 0.
pub(super) fn sender(w: f64, tcp: TcpSpec) -> (TcpFlow, Vec<Seg>) {
    let (tx, out) = started(tcp, Some(w));
    assert_eq!(out.len(), w as usize);
    (tx, out)
}

/// `[tcp]`'s defaults with ECN.
pub(super) fn spec() -> TcpSpec {
    TcpSpec {
        ecn: true,
        ..TcpSpec::default()
    }
}

/// SACK with RACK-TLP and PRR and Linux's RTT estimator, timestamps and
/// the echo's undo as `timestamps` says, F-RTO as `frto` says.
pub(super) fn recovery_spec(timestamps: bool, undo: bool, frto: bool) -> TcpSpec {
    let mut t = TcpSpec {
        sack: true,
        rack: true,
        prr: true,
        rtt_estimator: crate::scenario::RttEstimator::Linux,
        ..TcpSpec::default()
    };
    t.set_timestamps(timestamps);
    t.set_undo(undo);
    t.set_frto(frto);
    t
}

/// An ACK for `a` (with ECN-Echo if `ece`) reaching `tx` at `t_ms`
/// milliseconds; returns what `tx` sends.
pub(super) fn ack(tx: &mut TcpFlow, t_ms: u64, a: u64, ece: bool) -> Vec<Seg> {
    let mut out = Vec::new();
    let f = if ece {
        flags::ACK | flags::ECE
    } else {
        flags::ACK
    };
    tx.on_ack(SimTime(t_ms * MS), a, f, Ecn::NotEct, &mut out);
    out
}

/// A two-host path for the recovery tests: data segments leave the
/// sender through a bottleneck that sends one every `gap` (FIFO), then take
/// `owd` to the receiver; ACKs take `owd` back. The data segments in
/// `drops` ((segment, transmission: 1 for the first)) are lost at the
/// bottleneck.
pub(super) struct Net {
    pub tx: TcpFlow,
    pub rx: TcpFlow,
    owd: SimTime,
    gap: SimTime,
    drops: Vec<(u64, u32)>,
    sends: std::collections::HashMap<u64, u32>,
    link_free: SimTime,
    /// Pending arrivals: (time, order, index into `items`).
    q: std::collections::BinaryHeap<std::cmp::Reverse<(SimTime, u64, usize)>>,
    /// (segment, its SACK blocks, to the receiver).
    items: Vec<(Seg, super::SackBlocks, bool)>,
    order: u64,
    pub now: SimTime,
    /// Every data segment sent: (time, segment, a retransmission).
    pub sent: Vec<(SimTime, u64, bool)>,
    /// The data segments lost: (time, segment).
    pub lost: Vec<(SimTime, u64)>,
    /// When the sender entered and left fast recovery: (time, in recovery).
    pub recovery: Vec<(SimTime, bool)>,
    /// The sender's window after each event: (time, cwnd).
    pub cwnd: Vec<(SimTime, f64)>,
    /// Every data segment sent in this interval is lost: an outage.
    outage: Option<(SimTime, SimTime)>,
    /// Data segments ((segment, transmission)) the bottleneck marks CE.
    marks: Vec<(u64, u32)>,
}

impl Net {
    /// Both ends of a flow of `tcp` with `segments` segments to send
    /// (`u64::MAX`: unlimited), `owd_ms` one way, a bottleneck gap of
    /// `gap_us`.
    pub fn new(tcp: TcpSpec, segments: u64, owd_ms: u64, gap_us: u64, drops: &[(u64, u32)]) -> Net {
        let cfg = TcpConfig::from_spec(&tcp, false, tcp.ecn);
        let mut tx = TcpFlow::new(cfg);
        if segments != u64::MAX {
            tx.new_connection(segments);
        }
        Net {
            tx,
            rx: TcpFlow::new(cfg),
            owd: SimTime::from_millis(owd_ms),
            gap: SimTime::from_micros(gap_us),
            drops: drops.to_vec(),
            sends: Default::default(),
            link_free: SimTime::ZERO,
            q: Default::default(),
            items: Vec::new(),
            order: 0,
            now: SimTime::ZERO,
            sent: Vec::new(),
            lost: Vec::new(),
            recovery: Vec::new(),
            cwnd: Vec::new(),
            outage: None,
            marks: Vec::new(),
        }
    }

    fn push(&mut self, at: SimTime, s: Seg, b: super::SackBlocks, to_rx: bool) {
        self.items.push((s, b, to_rx));
        self.order += 1;
        self.q
            .push(std::cmp::Reverse((at, self.order, self.items.len() - 1)));
    }

    fn sender_sent(&mut self, out: Vec<Seg>) {
        for mut s in out {
            let n = self.sends.entry(s.seq).or_insert(0);
            *n += 1;
            let nth = *n;
            self.sent
                .push((self.now, s.seq, s.flags & flags::RETX != 0));
            let depart = self.now.max(self.link_free) + self.gap;
            self.link_free = depart;
            let out_now = self
                .outage
                .is_some_and(|(a, b)| self.now >= a && self.now < b);
            if out_now || self.drops.contains(&(s.seq, nth)) {
                self.lost.push((self.now, s.seq));
                continue;
            }
            if self.marks.contains(&(s.seq, nth)) {
                s.ecn = Ecn::Ce;
            }
            self.push(depart + self.owd, s, super::SackBlocks::NONE, true);
        }
    }

    fn note(&mut self) {
        if self.recovery.last().map(|r| r.1) != Some(self.tx.in_recovery) {
            self.recovery.push((self.now, self.tx.in_recovery));
        }
        self.cwnd.push((self.now, self.tx.cwnd));
    }

    /// Open the flow and run until nothing is left to do, or `until_ms`.
    pub fn run(&mut self, until_ms: u64) {
        let until = SimTime::from_millis(until_ms);
        if !self.tx.started() {
            let mut out = Vec::new();
            self.tx.start(self.now, &mut out);
            self.sender_sent(out);
            self.recovery.push((self.now, false));
        }
        loop {
            let next_q = self.q.peek().map(|r| r.0 .0);
            let timers = [
                self.tx.rto_deadline,
                self.rx.delack_deadline,
                self.tx.pace_deadline(),
            ];
            let next_t = timers.iter().flatten().min().copied();
            let t = match (next_q, next_t) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(t) => t,
                    None => break,
                },
            };
            if t > until || self.tx.finished() && self.q.is_empty() {
                break;
            }
            self.now = t;
            let mut out = Vec::new();
            if next_q == Some(t) {
                let std::cmp::Reverse((_, _, i)) = self.q.pop().unwrap();
                let (s, b, to_rx) = self.items[i];
                if to_rx {
                    self.rx.on_data(t, s.seq, s.flags, s.ecn, s.ts, &mut out);
                    let b = self.rx.sack_blocks();
                    for a in out.drain(..) {
                        self.push(t + self.owd, a, b, false);
                    }
                } else {
                    self.tx
                        .on_ack_sack(t, s.seq, s.flags, s.ecn, s.ts, &b, &mut out);
                    self.sender_sent(out);
                }
            } else if self.tx.rto_deadline == Some(t) {
                self.tx.on_rto(t, &mut out);
                self.sender_sent(out);
            } else if self.tx.pace_deadline() == Some(t) {
                self.tx.on_pace_timer(t, &mut out);
                self.sender_sent(out);
            } else {
                self.rx.on_delack(t, &mut out);
                let b = self.rx.sack_blocks();
                for a in out.drain(..) {
                    self.push(t + self.owd, a, b, false);
                }
            }
            self.note();
            self.tx.check_recovery().unwrap();
        }
    }

    /// From now on segments take `ms` each way (those on their way keep
    /// their time): a step in the path's delay.
    pub fn set_owd_ms(&mut self, ms: u64) {
        self.owd = SimTime::from_millis(ms);
    }

    /// The data segments in `marks` ((segment, transmission)) arrive
    /// CE-marked.
    pub fn set_marks(&mut self, marks: &[(u64, u32)]) {
        self.marks = marks.to_vec();
    }

    /// Every data segment sent from `from_ms` to `to_ms` is lost.
    pub fn set_outage_ms(&mut self, from_ms: u64, to_ms: u64) {
        self.outage = Some((SimTime::from_millis(from_ms), SimTime::from_millis(to_ms)));
    }

    /// One flow of `tcp` (50 ms each way, a segment every 1.2 ms at the
    /// bottleneck, segment 40 lost once so that it leaves slow start) whose
    /// path delay steps from 50 to 600 ms each way at 3 s: the ACKs stop for
    /// 1.1 s and the timer fires though nothing was lost. Returns the run to
    /// 6 s and its window just before the step.
    pub fn delay_spike(tcp: TcpSpec) -> (Net, f64) {
        let mut n = Net::new(tcp, u64::MAX, 50, 1200, &[(40, 1)]);
        n.run(3000);
        let before = n.tx.cwnd;
        n.set_owd_ms(600);
        n.run(6000);
        (n, before)
    }

    /// [`Net::delay_spike`] with `on` (a spurious-timeout detection on)
    /// and `off`: the one timeout is undone with `on`, whose window after
    /// the spike is at least the window before and which sends only the
    /// timer's segment again; not with `off`, which starts again from one
    /// segment and sends more than half its flight again. Returns both runs.
    pub fn spurious_timeout_undone(on: TcpSpec, off: TcpSpec, what: &str) -> (Net, Net) {
        let (on, before) = Net::delay_spike(on);
        let (off, _) = Net::delay_spike(off);
        let (after_on, after_off) = (on.cwnd_at(4500), off.cwnd_at(4500));
        eprintln!(
            "window {before:.1} before; at 4.5 s {after_on:.1} with {what}, {after_off:.1} \
             without; timeouts {} ({} undone) / {}; sent again after 3 s {} / {}",
            on.tx.stats.timeouts,
            on.tx.stats.timeouts_undone,
            off.tx.stats.timeouts,
            on.resent_from(3000),
            off.resent_from(3000)
        );
        assert!(on.tx.stats.timeouts >= 1 && off.tx.stats.timeouts >= 1);
        assert_eq!(on.tx.stats.timeouts_undone, 1);
        assert_eq!(off.tx.stats.timeouts_undone, 0);
        assert!(after_on >= before, "{after_on} against {before}");
        assert!(off
            .cwnd
            .iter()
            .any(|c| c.0 > SimTime::from_millis(3000) && c.1 <= 1.0));
        assert!(after_off < before, "{after_off} against {before}");
        assert!(on.resent_from(3000) <= 2, "{}", on.resent_from(3000));
        assert!(off.resent_from(3000) as f64 > 0.5 * before);
        (on, off)
    }

    /// The sender's window after its first event at or after `ms`.
    pub fn cwnd_at(&self, ms: u64) -> f64 {
        let t = SimTime::from_millis(ms);
        self.cwnd
            .iter()
            .find(|c| c.0 >= t)
            .expect("an event after")
            .1
    }

    /// How many segments went again from `ms` on.
    pub fn resent_from(&self, ms: u64) -> usize {
        let t = SimTime::from_millis(ms);
        self.sent.iter().filter(|s| s.2 && s.0 >= t).count()
    }

    /// The retransmissions: (time, segment).
    pub fn resent(&self) -> Vec<(SimTime, u64)> {
        self.sent
            .iter()
            .filter(|s| s.2)
            .map(|&(t, s, _)| (t, s))
            .collect()
    }
}
