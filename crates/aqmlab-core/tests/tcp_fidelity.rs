//! docs/fidelity.md items 1, 2 and 6: TCP's loss recovery and its answer to ECN
//! under the seeds' loads. Each test fails on the TCP before the fixes
//! (figures in docs/fidelity.md).

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// 30 NewReno flows, ARED(20,60), 10 Mbit/s, 100 ms, 500-byte packets, no
/// reverse traffic (the case of docs/fidelity.md item 1), measured over 20-150 s.
fn ared30(seed: u64, tcp: &str) -> RunResult {
    ared(30, "20ms", "15ms", seed, tcp)
}

fn ared(flows: u32, bottleneck: &str, access: &str, seed: u64, tcp: &str) -> RunResult {
    run(&format!(
        r#"
duration = "150s"
seed = {seed}
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "{bottleneck}"
access_delay = "{access}"
buffer = 500
[aqm]
kind = "ared"
min_th = 20
max_th = 60
[tcp]
packet_size = 500
{tcp}
[[traffic]]
kind = "bulk"
flows = {flows}
start = {{ uniform = ["0s", "5s"] }}
[metrics]
start = "20s"
"#
    ))
}

/// Loss events (fast retransmissions + timeouts), timeouts, retransmissions
/// and drops at the bottleneck.
fn recovery(r: &RunResult) -> (u64, u64, u64, u64) {
    let f = &r.summary.flows;
    let b = &r.summary.bottleneck;
    (
        f.fast_retransmits + f.timeouts,
        f.timeouts,
        f.retransmits,
        b.drops_early + b.drops_forced + b.drops_overflow,
    )
}

/// A1: with the timer restarted at the fast retransmission, limited
/// transmit and NewReno's rules, timeouts are a small share of loss events
/// and retransmissions stay close to drops. Before the fixes (seed 1):
/// 1666 timeouts and 18 363 retransmissions for 7252 drops over 0-150 s.
/// The timeouts left come from windows with three or more losses, which
/// the Impatient variant (RFC 6582, the default) ends in a timeout; the
/// Slow-but-Steady variant repairs them one per round trip.
///
/// Since RFC 6582 section 3.2 step 2's careful rule is applied exactly (no
/// fast retransmission unless the ACK covers more than `recover`;
/// docs/fidelity.md item 20) the duplicate ACKs that go-back-N's needless resends draw after
/// a timeout no longer start one. On this configuration (aqmlab's default
/// RED and TCP) that makes timeouts 17-19 % of loss events (11-14 % before)
/// and 7-8 % with Slow-but-Steady (4.6-4.9 %), with fewer retransmissions
/// per drop (1.31-1.33, was 1.62-1.74; 1.03-1.05). The bounds follow; the
/// issue's own figure ("about 100-150" timeouts, 2-3 % of loss events) is
/// checked on the configuration ns-2 runs, below.
#[test]
fn timeouts_are_a_small_share_of_loss_events() {
    for seed in [1, 2] {
        let (events, to, retx, drops) = recovery(&ared30(seed, ""));
        assert!(
            (to as f64) < 0.20 * events as f64,
            "seed {seed}: {to} timeouts in {events} loss events"
        );
        assert!(
            (retx as f64) < 1.5 * drops as f64,
            "seed {seed}: {retx} retransmissions for {drops} drops"
        );
        let (events, to, retx, drops) = recovery(&ared30(seed, "partial_ack_timer = \"every\""));
        assert!(
            (to as f64) < 0.09 * events as f64,
            "seed {seed}, every: {to} timeouts in {events} loss events"
        );
        assert!(
            (retx as f64) < 1.1 * drops as f64,
            "seed {seed}, every: {retx} retransmissions for {drops} drops"
        );
    }
}

/// A1 as ns-2 runs it: the same 30 flows with ns-2's RED (byte mode,
/// `wait_`, the `qlen > 1` gate, the gentle line and max_p's range of
/// `red.cc`, a byte-counted buffer), ns-2's TCP keys and its 540-byte
/// packets, 20-150 s. ns-2.35 times out 142 / 151 / 138 times (seeds 1-3,
/// 3.1-3.5 % of its drops; `tests/ns2/crosscheck.py`); aqmlab 126 / 131 /
/// 136 (2.9-3.3 %), and 95 / 81 / 89 before the careful rule was exact:
/// the issue's "about 100-150", 2-3 % of the loss events.
#[test]
fn timeouts_as_ns2_runs_the_case() {
    for seed in [1, 2] {
        let r = run(&format!(
            r#"
duration = "150s"
seed = {seed}
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = "250000B"
[aqm]
kind = "ared"
min_th = 20
max_th = 60
w_q = 5e-5
interval = "0.5s"
mode = "byte"
wait = true
empty_gate = true
mean_pkt_size = 500
gentle_base = "initial"
bounds = "ns2"
[tcp]
packet_size = 540
clock_tick = "10ms"
loss_ssthresh = "window"
recovery_exit = "ssthresh"
limited_transmit_sends = "next"
ect_retransmits = true
[[traffic]]
kind = "bulk"
flows = 30
start = {{ uniform = ["0s", "10s"] }}
[metrics]
start = "20s"
"#
        ));
        let (events, to, _, drops) = recovery(&r);
        assert!((110..=160).contains(&to), "seed {seed}: {to} timeouts");
        assert!(
            (to as f64) < 0.04 * events as f64 && (to as f64) < 0.04 * drops as f64,
            "seed {seed}: {to} timeouts in {events} loss events, {drops} drops"
        );
    }
}

/// A1: with windows of two or three segments (60 flows, 40 ms round trip)
/// limited transmit (RFC 3042) repairs by fast retransmission losses that
/// would otherwise need the timer (seed 1: 6957 timeouts with it, 11 693
/// without). With 15-segment windows it changes little (525 against 451:
/// its extra segments meet the same RED queue).
#[test]
fn limited_transmit_avoids_timeouts_with_small_windows() {
    let small = |tcp: &str| ared(60, "5ms", "5ms", 1, tcp).summary.flows;
    let (on, off) = (small(""), small("limited_transmit = false"));
    assert!(
        (on.timeouts as f64) < 0.75 * off.timeouts as f64,
        "timeouts with limited transmit {}, without {}",
        on.timeouts,
        off.timeouts
    );
    assert!(on.fast_retransmits > off.fast_retransmits);
}

/// A2: 1000 ECN flows on 15 Mbit/s under PI (q_ref 150, thesis section
/// 6.4 parameters), 50 reverse flows: the windows go below one segment per
/// round trip through the RFC 3168 hold, so PI holds its reference. Before
/// the fix every ECE ACK but one opened the window and the queue sat at
/// 993-995 of 1000 packets with PI marking 91 % of arrivals.
#[test]
fn ecn_flows_hold_at_one_segment_and_pi_holds_q_ref() {
    let r = run(r#"
duration = "150s"
seed = 1
[topology]
bottleneck_rate = "15Mbps"
bottleneck_delay = "20ms"
buffer = 1000
access_rate = "100Mbps"
access_delay = { uniform = ["1ms", "20ms"] }
[aqm]
kind = "pi"
a = 7.288e-5
b = 7.264e-5
q_ref = 150
sampling_freq = 170
ecn = true
[tcp]
packet_size = 500
ecn = true
[[traffic]]
kind = "bulk"
flows = 1000
start = { uniform = ["0s", "10s"] }
[[traffic]]
kind = "bulk"
flows = 50
direction = "reverse"
start = { uniform = ["0s", "10s"] }
[metrics]
start = "50s"
"#);
    let b = &r.summary.bottleneck;
    assert!(
        (120.0..180.0).contains(&b.queue_mean_pkts),
        "mean queue {}",
        b.queue_mean_pkts
    );
    assert!(b.utilization > 0.99, "utilisation {}", b.utilization);
    // The forward data is marked, not dropped: its loss stays small.
    let fwd_drops: u64 = (0..r.flows.flow.len())
        .filter(|&i| r.flows.direction[i] == "forward")
        .map(|i| r.flows.drops[i])
        .sum();
    let fwd_sent: u64 = (0..r.flows.flow.len())
        .filter(|&i| r.flows.direction[i] == "forward")
        .map(|i| r.flows.data_sent[i])
        .sum();
    assert!(
        (fwd_drops as f64) < 0.01 * fwd_sent as f64,
        "forward data loss {fwd_drops} of {fwd_sent}"
    );
    assert!(r.summary.flows.ecn_reductions > 50_000);
}

/// The wireless link of `002_80945567bf68047d.txt` section 5 (2 Mbit/s,
/// 48-byte packets, buffer 100, 80 ms) with `flows` sources and Bernoulli
/// loss `p`. `marking`: the scheme's `[aqm]` with ECN and the paper's
/// modified NewReno; `None`: DropTail with plain NewReno.
fn wireless(flows: u32, p: f64, marking: Option<&str>) -> f64 {
    let (aqm, tcp) = match marking {
        Some(a) => (a, "ecn = true\ndupack_halving = false"),
        None => ("kind = \"droptail\"", ""),
    };
    let r = run(&format!(
        r#"
duration = "100s"
seed = 1
[topology]
bottleneck_rate = "2Mbps"
bottleneck_delay = "20ms"
buffer = 100
access_rate = "100Mbps"
access_delay = "10ms"
loss = {{ kind = "bernoulli", p = {p} }}
[aqm]
{aqm}
[tcp]
packet_size = 48
{tcp}
[[traffic]]
kind = "bulk"
flows = {flows}
start = {{ uniform = ["0s", "1s"] }}
[metrics]
start = "0s"
"#
    ));
    // Goodput as a share of the link: payload delivered over the payload
    // the link could carry (8 of 48 bytes a packet).
    r.summary.flows.goodput_bps_total / (2e6 * 8.0 / 48.0)
}

const REM: &str =
    "kind = \"rem\"\nphi = 1.001\nalpha = 0.1\ngamma = 0.001\nb_star = 20\necn = true";
const RED_20_80: &str = "kind = \"red\"\nmin_th = 20\nmax_th = 80\nmax_p = 0.1\necn = true";
const RED_10_30: &str = "kind = \"red\"\nmin_th = 10\nmax_th = 30\nmax_p = 0.1\necn = true";

/// A6, figure 8 (32 sources, 100 s): with random loss, marking and the
/// modified NewReno raise goodput well above DropTail's, and REM does
/// better than RED.
#[test]
fn wireless_marking_beats_droptail() {
    for p in [0.02, 0.05] {
        let dt = wireless(32, p, None);
        let rem = wireless(32, p, Some(REM));
        let red = wireless(32, p, Some(RED_20_80));
        let red_small = wireless(32, p, Some(RED_10_30));
        assert!(rem > dt + 0.1, "p {p}: REM {rem} vs DropTail {dt}");
        assert!(red > dt + 0.1, "p {p}: RED(20:80) {red} vs DropTail {dt}");
        assert!(
            red_small > dt + 0.1,
            "p {p}: RED(10:30) {red_small} vs DropTail {dt}"
        );
        assert!(
            rem > red && rem > red_small,
            "p {p}: REM {rem} vs RED {red}"
        );
    }
    // Figure 7's first period (20 sources, 1 % loss): the random loss keeps
    // plain NewReno's windows small; marking does not.
    let dt = wireless(20, 0.01, None);
    let rem = wireless(20, 0.01, Some(REM));
    let red = wireless(20, 0.01, Some(RED_20_80));
    assert!(rem > dt + 0.1, "REM {rem} vs DropTail {dt}");
    assert!(red > dt + 0.1, "RED(20:80) {red} vs DropTail {dt}");
}

/// One NewReno flow (`common::one_flow_droptail`), measured from 10 s.
fn one_flow_droptail(tcp: &str) -> RunResult {
    common::run(&common::one_flow_droptail(tcp, "start = \"10s\""))
}

/// A timeout during fast recovery keeps the recovery's ssthresh by
/// default, as Linux's `tcp_enter_loss` does. Cutting again from RFC 5681
/// eq. (4)'s FlightSize, which then counts the segments the inflated
/// window let out (`timeout_in_recovery = "cut"` with `loss_ssthresh =
/// "flight"`), sets ssthresh above the window the link holds; slow start
/// overshoots, the queue overflows in bursts, go-back-N repeats: measured
/// 0.665 of the link and 53 timeouts in 50 s, against 1.000 and none.
#[test]
fn a_timeout_in_recovery_does_not_collapse_the_flow() {
    let good = one_flow_droptail("");
    let bad = one_flow_droptail("timeout_in_recovery = \"cut\"\nloss_ssthresh = \"flight\"");
    let (g, b) = (&good.summary, &bad.summary);
    assert!(
        g.bottleneck.utilization > 0.98,
        "{}",
        g.bottleneck.utilization
    );
    assert!(g.flows.timeouts <= 1, "{}", g.flows.timeouts);
    assert!(
        b.bottleneck.utilization < 0.8,
        "{}",
        b.bottleneck.utilization
    );
    assert!(b.flows.timeouts > 20, "{}", b.flows.timeouts);
    // `"window"` avoids it too (its cut at such a timeout halves the
    // recovery's window).
    let window = one_flow_droptail("timeout_in_recovery = \"cut\"\nloss_ssthresh = \"window\"");
    assert!(window.summary.bottleneck.utilization > 0.98);
}

/// The case the ns-3 cross-check found collapsing with the defaults of the
/// day: five NewReno flows (aqmlab's default TCP, no SACK, no ECN) through
/// RED (min_th 20, max_th 60, max_p 0.1, w_q 0.002, gentle, wait; a
/// 500-packet buffer) at 10 Mbit/s and 100 ms, opened with a handshake, 40
/// s measured from 10 s (the set-up of `tests/ns3/crosscheck.py`), seeds
/// 1-9. With the defaults every seed uses at least 0.97 of the link with
/// at most 5 timeouts (measured 0.975-0.991, 0-4); with a timeout in
/// recovery cutting again from the flight (`timeout_in_recovery = "cut"`,
/// the earlier default) seed 4 falls to 0.929 with 12 timeouts.
#[test]
fn five_newreno_flows_through_red_keep_the_link_in_every_seed() {
    let run = |seed: u64, tcp: &str| {
        common::run(&format!(
            r#"
duration = "40s"
seed = {seed}
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 500
[aqm]
kind = "red"
min_th = 20
max_th = 60
max_p = 0.1
w_q = 0.002
gentle = true
wait = true
[tcp]
packet_size = 1500
{tcp}
[[traffic]]
kind = "bulk"
handshake = true
flows = 5
start = {{ uniform = ["0s", "2s"] }}
[metrics]
start = "10s"
"#
        ))
        .summary
    };
    let mut worst_cut = 1.0f64;
    for seed in 1..=9 {
        let s = run(seed, "");
        assert!(
            s.bottleneck.utilization >= 0.97 && s.flows.timeouts <= 5,
            "seed {seed}: utilisation {}, {} timeouts",
            s.bottleneck.utilization,
            s.flows.timeouts
        );
        worst_cut = worst_cut.min(
            run(seed, "timeout_in_recovery = \"cut\"")
                .bottleneck
                .utilization,
        );
    }
    assert!(worst_cut < 0.95, "{worst_cut}");
}
