//! `[[schedule]]` and `[metrics] phases` (issue 4's schedule acceptance).

mod common;

use common::{run, RED};

/// A dumbbell run of `duration` s with `flows` bulk flows, RED(20, 60) and
/// the extra TOML `tail` (schedule entries and metrics).
fn dumbbell_with(flows: u32, duration: u32, aqm: &str, tail: &str) -> String {
    format!(
        r#"
duration = "{duration}s"
seed = 3
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 500
{aqm}
[tcp]
packet_size = 500
[[traffic]]
kind = "bulk"
flows = {flows}
start = {{ uniform = ["0s", "5s"] }}
{tail}
"#
    )
}

/// A capacity step from 10 to 5 Mbps halves the bottleneck throughput
/// within a few RTTs: the phase starting 1 s (about 7 RTTs) after the step
/// carries half the bits of the phase before it, and utilisation (against
/// the rate actually in force) stays near 1.
#[test]
fn capacity_step_halves_throughput() {
    let r = run(&dumbbell_with(
        30,
        80,
        "",
        r#"
[[schedule]]
at = "40s"
action = "link"
link = "bottleneck"
rate = "5Mbps"
[metrics]
start = "10s"
phases = [[20, 40], [41, 80], [40, 41]]
"#,
    ));
    let p = &r.summary.phases;
    assert_eq!(p.len(), 3);
    let (before, after) = (&p[0].bottleneck, &p[1].bottleneck);
    let ratio = after.throughput_bps / before.throughput_bps;
    eprintln!(
        "before {} ({}), after {} ({}), ratio {ratio}",
        before.throughput_bps, before.utilization, after.throughput_bps, after.utilization
    );
    assert!((ratio - 0.5).abs() < 0.05, "throughput ratio {ratio}");
    assert!(after.utilization > 0.95, "{}", after.utilization);
    // The transition second itself: already at the new rate.
    assert!(
        p[2].bottleneck.throughput_bps < 5.2e6,
        "{}",
        p[2].bottleneck.throughput_bps
    );
    // The whole-run utilisation counts the capacity actually offered.
    assert!(r.summary.bottleneck.utilization > 0.95);
    assert!(r.summary.bottleneck.utilization <= 1.0 + 1e-9);
}

/// A step of the bottleneck delay from 20 to 100 ms (base RTT 100 -> 260 ms)
/// shows in the flows' measured RTT.
#[test]
fn rtt_step_shows_in_measured_rtt() {
    let r = run(&dumbbell_with(
        20,
        80,
        RED,
        r#"
[[schedule]]
at = "40s"
action = "link"
link = "bottleneck"
delay = "100ms"
[metrics]
start = "10s"
phases = [[20, 40], [50, 80]]
"#,
    ));
    let p = &r.summary.phases;
    let (before, after) = (p[0].flows.rtt_mean_s, p[1].flows.rtt_mean_s);
    // Base RTT plus queueing (a few tens of ms with RED(20, 60) at 10 Mb/s).
    assert!(before > 0.100 && before < 0.100 + 0.060, "before {before}");
    assert!(after > 0.260 && after < 0.260 + 0.060, "after {after}");
    assert!(
        (after - before - 0.160).abs() < 0.03,
        "step {}",
        after - before
    );
    let f = &r.flows;
    assert!(f.base_rtt_s.iter().all(|&x| (x - 0.260).abs() < 1e-9));
}

/// Flows added at 200 s count from then on; stopped flows stop counting and
/// stop sending.
#[test]
fn flows_started_and_stopped_by_the_schedule() {
    let r = run(&dumbbell_with(
        10,
        300,
        "",
        r#"
[[schedule]]
at = "100s"
action = "flows"
group = 0
start = 10
[[schedule]]
at = "200s"
action = "flows"
group = 0
stop = 15
[metrics]
start = "50s"
phases = [[50, 100], [110, 200], [210, 300]]
"#,
    ));
    let p = &r.summary.phases;
    assert_eq!(p[0].flows.count, 10);
    assert_eq!(p[1].flows.count, 20);
    assert_eq!(p[2].flows.count, 5);
    assert_eq!(
        r.summary.flows.count, 20,
        "active at some time in [50, 300]"
    );
    // DropTail with a large buffer: the link stays busy in every phase.
    for ph in p {
        assert!(
            ph.bottleneck.utilization > 0.95,
            "{}",
            ph.bottleneck.utilization
        );
    }
    // More flows, a longer standing queue.
    assert!(p[1].bottleneck.queue_mean_pkts > p[0].bottleneck.queue_mean_pkts);
    // Goodput shares: 10 flows share the link, then 20, then 5.
    for (ph, n) in p.iter().zip([10.0, 20.0, 5.0]) {
        let per_flow = ph.flows.goodput_bps_total / n;
        assert!(per_flow > 0.8 * 9.2e6 / n, "{n} flows: {per_flow}");
    }
    // The stopped flows deliver nothing in the last phase (the last 5
    // started are the ones stopped, so the first 5 run on).
    let f = &r.flows;
    let late: Vec<f64> = (0..20).map(|i| f.start_s[i]).collect();
    assert!(late[10..].iter().all(|&s| (100.0..=101.0).contains(&s)));
    assert_eq!(r.flows.flow.len(), 20);
}

/// Changing RED's max_p mid-run: a larger max_p holds the average lower.
#[test]
fn aqm_parameter_change() {
    let r = run(&dumbbell_with(
        50,
        120,
        r#"[aqm]
kind = "red"
min_th = 20
max_th = 100
max_p = 0.02
w_q = 0.002"#,
        r#"
[[schedule]]
at = "60s"
action = "aqm"
set = { max_p = 0.3 }
[metrics]
start = "20s"
phases = [[20, 60], [70, 120]]
"#,
    ));
    let p = &r.summary.phases;
    let (a, b) = (
        p[0].bottleneck.queue_mean_pkts,
        p[1].bottleneck.queue_mean_pkts,
    );
    assert!(b < 0.75 * a, "mean queue {a} -> {b}");
    assert!(r.summary.warnings.is_empty());
}
