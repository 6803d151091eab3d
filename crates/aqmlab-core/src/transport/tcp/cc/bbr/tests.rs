//! BBR's unit tests: hand-worked numbers for the model in `bbr.rs`.

use super::*;
use crate::rng::Stream;

fn ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

const MSS: u32 = 1000;

fn bbr() -> Bbr {
    let mut b = Bbr::new(Rng::new(1, Stream::Tcp(0)));
    b.init(SimTime::ZERO, 10, None, MSS);
    b
}

/// Linux's filter holds its best sample while at most 10 rounds old:
/// 5 in round 1, 3 in rounds 2-11; at round 11 the 5 is 10 rounds old
/// and stays; at round 12 it leaves for the second choice, the latest 3
/// (a sample equal to the second choice takes its place). A larger
/// sample replaces them all at once.
#[test]
fn the_max_filter_holds_its_best_while_ten_rounds_old() {
    let mut f = MaxFilter::default();
    f.update(1, 5.0);
    for r in 2..=11 {
        f.update(r, 3.0);
        assert_eq!(f.get(), 5.0, "round {r}");
    }
    f.update(12, 2.0);
    assert_eq!(f.get(), 3.0);
    assert_eq!(f.s[0], (11, 3.0));
    f.update(12, 7.0);
    assert_eq!(f.s, [(12, 7.0); 3]);
    // Rounds 13-22 of 1: the 7 stays through round 22, then the
    // second choice, the 1 of round 23 itself.
    for r in 13..=22 {
        f.update(r, 1.0);
        assert_eq!(f.get(), 7.0, "round {r}");
    }
    f.update(23, 1.0);
    assert_eq!(f.get(), 1.0);
}

/// Three choices approximate the window's maximum: a second choice is
/// taken only after a quarter of the window (rounds more than 2 after
/// the best), so the 8 of round 3 is not kept behind the 10 of round 1,
/// and when the 10 expires at round 12 the estimate is the 2 of round 4
/// onward, where the exact maximum of rounds 3-12 is 8.
#[test]
fn the_max_filter_forgets_samples_of_the_first_quarter() {
    let mut f = MaxFilter::default();
    f.update(1, 10.0);
    f.update(3, 8.0);
    assert_eq!(f.s[1], (1, 10.0));
    f.update(4, 2.0);
    assert_eq!(f.s[1], (4, 2.0));
    f.update(12, 2.0);
    assert_eq!(f.get(), 2.0);
}

/// Nothing left in the window (the third choice more than 10 rounds
/// old): the new sample is the estimate, however small.
#[test]
fn the_max_filter_resets_after_a_silent_window() {
    let mut f = MaxFilter::default();
    f.update(1, 10.0);
    f.update(20, 1.0);
    assert_eq!(f.s, [(20, 1.0); 3]);
}

/// cwnd = gain x BDP + 3 x TSO quantum, rounded up to even, +2 in
/// ProbeBW's phase 0. BtlBw 1000 segments/s, RTprop 100 ms: BDP 100.
/// The pacing rate 1000 x 1000 B x 0.99 = 990 000 B/s (7.9 Mbit/s):
/// ~1 ms is 966 bytes, less than a segment, so the quantum is its
/// floor of 2 segments (above 1.2 Mbit/s): 2 x 100 + 6 = 206.
#[test]
fn the_window_is_gain_times_bdp_plus_the_quantum() {
    let mut b = bbr();
    b.min_rtt = Some(ms(100));
    b.pacing_rate = Bbr::bytes_per_s(1000.0, 1.0, MSS) as u64;
    assert_eq!(b.pacing_rate, 990_000);
    assert_eq!(b.tso_segs_goal(MSS), 2);
    assert_eq!(b.bdp(1000.0, 1.0), 100);
    b.mode = Mode::ProbeBw;
    b.cycle_idx = 2;
    assert_eq!(b.inflight(1000.0, CWND_GAIN, MSS), 206);
    b.cycle_idx = 0;
    assert_eq!(b.inflight(1000.0, CWND_GAIN, MSS), 208);
    // 25 Mbit/s of 1000-byte segments: 3125 segments/s, ~3.0 KB per
    // ms at 0.99: 3 segments a quantum, 9 segments of budget; BDP at
    // gain 1.25 and 20 ms = ceil(78.125) = 79 -> 88.
    b.cycle_idx = 2;
    b.pacing_rate = Bbr::bytes_per_s(3125.0, 1.0, MSS) as u64;
    b.min_rtt = Some(ms(20));
    assert_eq!(b.tso_segs_goal(MSS), 3);
    assert_eq!(b.inflight(3125.0, 1.25, MSS), 88);
    // A slow path: below 1.2 Mbit/s one segment a quantum.
    b.pacing_rate = 100_000;
    assert_eq!(b.tso_segs_goal(MSS), 1);
}

/// A synthetic path for one BBR sender: a bottleneck that serves
/// `rate` segments per second in order, `rtt` of propagation besides;
/// the sender sends when its window and its pacing rate allow (one
/// segment per `mss / pacing_rate`); one ACK per segment; the rate
/// samples are `rate.rs`'s.
struct Path {
    b: Bbr,
    r: RateEstimator,
    now: SimTime,
    gap: SimTime,
    rtt: SimTime,
    /// In flight, in order: (segment, when its ACK arrives).
    flight: std::collections::VecDeque<(u64, SimTime)>,
    next_seq: u64,
    next_send: SimTime,
    /// When the bottleneck finishes its last segment.
    busy_until: SimTime,
    /// Each change of state: (time, new state).
    modes: Vec<(SimTime, Mode)>,
}

impl Path {
    fn new(rate: f64, rtt: SimTime) -> Path {
        // The handshake measured the path empty: propagation and one
        // transmission.
        let gap = SimTime::from_secs_f64(1.0 / rate);
        let mut b = Bbr::new(Rng::new(1, Stream::Tcp(0)));
        b.init(SimTime::ZERO, 10, Some(rtt + gap), MSS);
        let mut r = RateEstimator::fresh();
        r.min_rtt = Some(rtt + gap);
        Path {
            b,
            r,
            now: SimTime::ZERO,
            gap,
            rtt,
            flight: Default::default(),
            next_seq: 0,
            next_send: SimTime::ZERO,
            busy_until: SimTime::ZERO,
            modes: vec![(SimTime::ZERO, Mode::Startup)],
        }
    }

    fn run_until(&mut self, t: SimTime) {
        loop {
            let ack_at = self.flight.front().map(|x| x.1);
            let send_at =
                ((self.flight.len() as u64) < self.b.cwnd).then(|| self.next_send.max(self.now));
            match (ack_at, send_at) {
                (Some(a), s) if s.is_none_or(|s| a <= s) => {
                    if a > t {
                        break;
                    }
                    self.now = a;
                    self.ack();
                }
                (_, Some(s)) => {
                    if s > t {
                        break;
                    }
                    self.now = s;
                    self.send();
                }
                _ => break,
            }
        }
        self.now = t;
    }

    fn send(&mut self) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let idle = self.flight.is_empty();
        if idle {
            self.b.on_tx_start(self.now, self.r.app_limited(), MSS);
        }
        let una = self.flight.front().map_or(seq, |x| x.0);
        self.r.on_sent(seq, una, idle, false, self.now);
        self.busy_until = self.busy_until.max(self.now) + self.gap;
        self.flight.push_back((seq, self.busy_until + self.rtt));
        let per_segment = MSS as f64 / self.b.pacing_rate as f64;
        self.next_send = self.now + SimTime::from_secs_f64(per_segment);
    }

    fn ack(&mut self) {
        let prior_in_flight = self.flight.len() as u64;
        let (seq, _) = self.flight.pop_front().expect("in flight");
        self.r.on_delivered(seq, self.now);
        let rs = self.r.sample(self.now);
        let a = AckInfo {
            now: self.now,
            delivered: self.r.delivered,
            delivered_time: self.r.delivered_time,
            lost: 0,
            prior_in_flight,
            in_flight: self.flight.len() as u64,
            state: CaState::Open,
            next_send: self.next_send,
            mss: MSS,
            srtt: Some(self.rtt),
        };
        if self.b.on_ack(&rs, &a) {
            self.r.mark_app_limited(self.flight.len() as u64);
        }
        if self.modes.last().unwrap().1 != self.b.mode {
            self.modes.push((self.now, self.b.mode));
        }
    }
}

/// A path of 1000 segments/s and 100 ms (+1 ms of transmission):
/// Startup doubles the delivery rate per round until three rounds
/// bring less than 25 % more; Drain then paces at 1/2.885 with
/// ssthresh one BDP's inflight (ceil(1000 x 0.101) = 101, + 3 x 2 of
/// quantum = 107, rounded up to even: 108) and ProbeBW follows when the
/// flight is down to it, with cwnd gain 2. In ProbeBW the flight stays
/// under 1.25 BDP + the quantum and BtlBw is the path's rate.
#[test]
fn startup_drain_probe_bw_on_a_steady_path() {
    let mut p = Path::new(1000.0, ms(100));
    p.run_until(SimTime::from_secs(5));
    let modes: Vec<Mode> = p.modes.iter().map(|m| m.1).collect();
    assert_eq!(modes, [Mode::Startup, Mode::Drain, Mode::ProbeBw]);
    // Startup lasts some 10 rounds of ~100 ms (10 -> ~200 segments in
    // flight, then three rounds without growth), Drain about one.
    let (drain, probe) = (p.modes[1].0, p.modes[2].0);
    assert!(drain > ms(800) && drain < ms(2000), "{drain:?}");
    assert!(probe > drain && probe < drain + ms(400), "{probe:?}");
    assert!(p.b.full_bw_reached);
    assert_eq!(p.b.ssthresh, Some(108));
    assert!((p.b.bw() - 1000.0).abs() < 5.0, "{}", p.b.bw());
    assert_eq!(p.b.min_rtt, Some(ms(101)));
    assert_eq!(p.b.cwnd_gain, CWND_GAIN);
    let mut most = 0;
    let end = SimTime::from_secs(10);
    while p.now < end {
        let t = p.now + ms(1);
        p.run_until(t);
        most = most.max(p.flight.len());
    }
    assert!(most <= 127 + 8, "{most}");
    assert!(p.r.delivered > 9_500, "{}", p.r.delivered);
}

/// Drain's and Startup's gains, and the pacing rate they give.
#[test]
fn gains_per_mode() {
    let mut b = bbr();
    b.update_gains();
    assert!((b.pacing_gain - 2.885).abs() < 1e-3);
    b.mode = Mode::Drain;
    b.update_gains();
    assert!((b.pacing_gain - 1.0 / 2.885).abs() < 1e-3);
    assert!((b.cwnd_gain - 2.885).abs() < 1e-3);
    b.mode = Mode::ProbeRtt;
    b.update_gains();
    assert_eq!((b.pacing_gain, b.cwnd_gain), (1.0, 1.0));
    // 1000 segments/s at gain 1.25 with 1000-byte segments, less 1 %:
    // 1 237 500 B/s.
    b.full_bw_reached = true;
    b.set_pacing_rate(1000.0, 1.25, Some(ms(100)), MSS);
    assert_eq!(b.pacing_rate, 1_237_500);
}

/// The start phase of ProbeBW is never the draining 0.75 (index 1),
/// and each of the other seven comes up.
#[test]
fn probe_bw_starts_anywhere_but_the_draining_phase() {
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..700 {
        let mut b = Bbr::new(Rng::new(seed, Stream::Tcp(3)));
        b.reset_probe_bw_mode(SimTime::ZERO);
        seen[b.cycle_idx] += 1;
    }
    assert_eq!(seen[1], 0);
    assert!(
        seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 60),
        "{seen:?}"
    );
}

/// 10 s without an RTT below RTprop: ProbeRTT, the window 4 (the
/// window before saved); 200 ms after the flight fell to 4 and a round
/// later, back to ProbeBW with the window restored and RTprop's clock
/// renewed. RTprop (101 ms) is the handshake's, at time 0: no later
/// sample is shorter (equal ones do not renew it). The path's delay
/// grows from 100 to 120 ms at 3 s, so the expired filter takes a
/// longer sample.
#[test]
fn probe_rtt_after_ten_seconds_without_a_new_minimum() {
    let mut p = Path::new(1000.0, ms(100));
    p.run_until(SimTime::from_secs(3));
    assert_eq!(p.b.mode, Mode::ProbeBw);
    p.rtt = ms(120);
    let stamp = p.b.min_rtt_stamp;
    assert_eq!(stamp, SimTime::ZERO);
    while p.b.mode != Mode::ProbeRtt {
        let t = p.now + ms(1);
        p.run_until(t);
    }
    let entered = p.modes.last().unwrap().0;
    // On the first ACK after 10 s past the stamp (an ACK a ms).
    assert!(entered > stamp + MIN_RTT_WIN);
    assert!(entered < stamp + MIN_RTT_WIN + ms(2), "{entered:?}");
    assert_eq!(p.b.cwnd, CWND_MIN);
    assert!(p.b.prior_cwnd > 100, "{}", p.b.prior_cwnd);
    // The expired filter took the first sample after it, longer than
    // RTprop (101 ms): the path's 121 ms, with whatever queue there was.
    assert!(
        p.b.min_rtt.is_some_and(|r| r >= ms(121)),
        "{:?}",
        p.b.min_rtt
    );
    while p.b.mode == Mode::ProbeRtt {
        let t = p.now + ms(1);
        p.run_until(t);
    }
    let left = p.modes.last().unwrap().0;
    assert!(left > entered + PROBE_RTT_TIME, "{:?}", left - entered);
    assert!(left < entered + ms(500), "{:?}", left - entered);
    assert_eq!(p.b.mode, Mode::ProbeBw);
    assert!(p.b.cwnd >= p.b.prior_cwnd);
    assert_eq!(p.b.min_rtt_stamp, left);
    // With 4 segments in flight the queue drained: RTprop is the
    // path's again.
    assert_eq!(p.b.min_rtt, Some(ms(121)));
}

/// On a path of constant delay the RTT of an empty queue recurs
/// exactly; it does not renew RTprop (Linux's strict test since 5.10),
/// so ProbeRTT comes every 10 s: at 10 s after the handshake's sample,
/// then 10 s after the first one ended (each on the first ACK past it,
/// an ACK a ms).
#[test]
fn probe_rtt_every_ten_seconds_on_a_constant_path() {
    let mut p = Path::new(1000.0, ms(100));
    p.run_until(SimTime::from_secs(25));
    let entries: Vec<SimTime> = p
        .modes
        .iter()
        .filter(|m| m.1 == Mode::ProbeRtt)
        .map(|m| m.0)
        .collect();
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(entries[0] > MIN_RTT_WIN && entries[0] < MIN_RTT_WIN + ms(2));
    let left = p
        .modes
        .iter()
        .find(|m| m.0 > entries[0] && m.1 != Mode::ProbeRtt)
        .expect("ProbeRTT ends")
        .0;
    let gap = entries[1] - left;
    assert!(gap > MIN_RTT_WIN && gap < MIN_RTT_WIN + ms(2), "{gap:?}");
}

/// Fast recovery's first round conserves packets: cwnd = in flight +
/// delivered (20 + 1 = 21), whatever the model says; leaving the
/// recovery restores the window saved when it began (100).
#[test]
fn packet_conservation_then_the_window_restored() {
    let mut b = bbr();
    b.min_rtt = Some(ms(100));
    b.cwnd = 100;
    b.save_cwnd();
    let rs = RateSample {
        acked: 1,
        losses: 1,
        ..RateSample::default()
    };
    let mut a = AckInfo {
        now: ms(1000),
        delivered: 500,
        delivered_time: ms(1000),
        lost: 1,
        prior_in_flight: 21,
        in_flight: 20,
        state: CaState::Recovery,
        next_send: ms(1000),
        mss: MSS,
        srtt: Some(ms(100)),
    };
    b.on_ack(&rs, &a);
    assert_eq!(b.cwnd, 21);
    a.state = CaState::Open;
    let rs = RateSample {
        acked: 5,
        ..RateSample::default()
    };
    b.on_ack(&rs, &a);
    assert!(b.cwnd >= 100, "{}", b.cwnd);
    // A timeout: one segment, and the window before kept for later.
    b.cwnd = 80;
    b.prev_state = CaState::Open;
    b.on_timeout(true, 500, ms(1000), 40, MSS);
    assert_eq!((b.cwnd, b.prior_cwnd), (1, 80));
}

/// Two lossy intervals (4 rounds each, 25 % lost) at 500 and 520
/// segments/s agree within 1/8: BBR assumes a policer and uses 510.
#[test]
fn a_policer_is_found_from_two_lossy_intervals() {
    let b = policed();
    assert!(b.lt_use_bw);
    assert_eq!(b.lt_bw, 510.0);
    assert_eq!(b.bw(), 510.0);
}

/// BBR in its long-term mode after two lossy intervals of 4 rounds: 500
/// delivered and 125 lost in the first second, 520 and 130 in the next.
fn policed() -> Bbr {
    let mut b = bbr();
    b.mode = Mode::ProbeBw;
    let lossy = RateSample {
        losses: 1,
        acked: 1,
        ..RateSample::default()
    };
    // A loss starts sampling at t = 0.
    b.round_start = false;
    b.lt_bw_sampling(&lossy, 0, SimTime::ZERO, 0, MSS);
    assert!(b.lt_is_sampling);
    for _ in 0..4 {
        b.round_start = true;
        b.lt_bw_sampling(&RateSample::default(), 0, SimTime::ZERO, 0, MSS);
    }
    b.round_start = false;
    b.lt_bw_sampling(&lossy, 500, SimTime::from_secs(1), 125, MSS);
    assert_eq!(b.lt_bw, 500.0);
    assert!(!b.lt_use_bw);
    for _ in 0..4 {
        b.round_start = true;
        b.lt_bw_sampling(&RateSample::default(), 500, SimTime::from_secs(1), 125, MSS);
    }
    b.round_start = false;
    b.lt_bw_sampling(&lossy, 1020, SimTime::from_secs(2), 255, MSS);
    b
}

/// An undone reduction (`bbr_undo_cwnd`): the long-term rate is left
/// and its sampling starts again from the counts of now, Startup's
/// full-pipe test too; the window is untouched.
#[test]
fn an_undo_ends_the_long_term_rate() {
    let mut b = policed();
    b.full_bw = 700.0;
    b.full_bw_cnt = 2;
    let cwnd = b.cwnd;
    b.on_undo(1100, SimTime::from_millis(2100), 270);
    assert!(!b.lt_use_bw && !b.lt_is_sampling);
    assert_eq!(b.lt_bw, 0.0);
    assert_eq!(b.bw(), b.bw.get());
    assert_eq!((b.lt_last_delivered, b.lt_last_lost), (1100, 270));
    assert_eq!(b.lt_last_stamp, SimTime::from_millis(2100));
    assert_eq!((b.full_bw, b.full_bw_cnt), (0.0, 0));
    assert_eq!(b.cwnd, cwnd);
}

/// A BBR flow whose path delay steps from 50 to 600 ms each way at
/// 3 s (as `Net::delay_spike`, with no loss before): the timeout's loss
/// starts the long-term sampler, and the undo the echo then finds
/// starts it again (`bbr_undo_cwnd`).
#[test]
fn an_undone_timeout_starts_the_long_term_sampler_again() {
    use crate::scenario::TcpVariant;
    use crate::transport::tcp::testing::{recovery_spec, Net};
    let mut t = recovery_spec(true, true, false);
    t.variant = TcpVariant::Bbr;
    t.pacing = true;
    let mut n = Net::new(t, u64::MAX, 50, 1200, &[]);
    n.run(3000);
    n.set_owd_ms(600);
    let sampling = |n: &Net| {
        let b =
            n.tx.pace
                .as_ref()
                .and_then(|p| p.bbr.as_ref())
                .expect("BBR");
        (b.lt_is_sampling, b.lt_use_bw)
    };
    assert_eq!(sampling(&n), (false, false));
    let mut ms = 3000;
    while n.tx.stats.timeouts == 0 {
        ms += 1;
        n.run(ms);
    }
    assert_eq!(n.tx.stats.timeouts_undone, 0);
    assert_eq!(sampling(&n), (true, false), "the timeout's loss at {ms} ms");
    n.run(6000);
    assert_eq!((n.tx.stats.timeouts, n.tx.stats.timeouts_undone), (1, 1));
    assert_eq!(sampling(&n), (false, false));
}

/// An ECN-Echo, then a loss in the window it answered (Linux's
/// `tcp_enter_cwr`, then `tcp_enter_recovery` within the CWR state). A BBR
/// flow with SACK and RACK in Startup (a window of 10 at first, 50 ms each
/// way, 1.2 ms a segment at the bottleneck): segment 50 arrives CE-marked
/// and its echo (by 372 ms) enters CWR with the window then, 60, saved; the
/// window grows on in Startup to 72, and segment 60, lost, starts a
/// recovery at 408 ms, which continues the CWR state: the window saved
/// stays 60 (the recovery starts no reduction of its own, so
/// `bbr_ssthresh` does not save 72).
#[test]
fn a_loss_in_the_cwr_state_keeps_the_window_saved_at_the_echo() {
    use crate::scenario::TcpVariant;
    use crate::transport::tcp::testing::{recovery_spec, Net};
    let mut t = recovery_spec(true, true, false);
    t.variant = TcpVariant::Bbr;
    t.pacing = true;
    t.ecn = true;
    t.initial_cwnd = 10;
    let mut n = Net::new(t, u64::MAX, 50, 1200, &[(60, 1)]);
    n.set_marks(&[(50, 1)]);
    let (mut at_echo, mut before_loss, mut saved) = (None, 0, None);
    for ms in 100..800 {
        n.run(ms);
        let b =
            n.tx.pace
                .as_ref()
                .and_then(|p| p.bbr.as_ref())
                .expect("BBR");
        match n.tx.ca_state_name() {
            "cwr" => {
                at_echo.get_or_insert((ms, b.prior_cwnd));
                before_loss = b.cwnd;
            }
            "recovery" => {
                saved = Some((ms, b.prior_cwnd));
                break;
            }
            _ => {}
        }
    }
    assert_eq!(at_echo, Some((372, 60)));
    assert_eq!(before_loss, 72);
    assert_eq!(saved, Some((408, 60)));
}
