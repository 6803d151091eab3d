//! RFC 3465 byte counting (`tcp.byte_counting`) in whole runs: with
//! delayed ACKs (one ACK per two segments) counting ACKs grows the window
//! by half a segment per round trip in congestion avoidance and by 1.5x
//! per round trip in slow start; counting the segments they acknowledge
//! gives one segment and 2x, as without delayed ACKs. The rules are checked
//! with hand-worked numbers in `transport/tcp/cc/reno.rs`.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// One flow with delayed ACKs and ECN over 10 Mbit/s, base RTT 100 ms (83
/// packets of 1500 bytes in flight), a step queue marking above 50 packets
/// (so that the window is cut without losses and grows between the cuts);
/// the window sampled every 10 ms.
fn one_flow(variant: &str, byte_counting: bool) -> RunResult {
    run(&one_flow_text(
        variant,
        &format!("byte_counting = {byte_counting}\n"),
    ))
}

/// `one_flow`'s scenario with `key` (a line of `[tcp]`, or nothing).
fn one_flow_text(variant: &str, key: &str) -> String {
    format!(
        r#"
duration = "60s"
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 1000
[aqm]
kind = "step"
threshold = 50
ecn = true
[tcp]
ecn = true
variant = "{variant}"
packet_size = 1500
delayed_ack = true
initial_cwnd = 2
{key}
[[traffic]]
kind = "bulk"
flows = 1
[metrics]
start = "0s"
sample_interval = "10ms"
flow_series = [0]
"#
    )
}

/// Growth in congestion avoidance, segments per round trip: the window's
/// rise over the samples where it grew slowly above an unchanged
/// ssthresh, over the round trips (by the smoothed RTT) they span.
fn avoidance_growth_per_rtt(r: &RunResult) -> f64 {
    let s = &r.flow_series;
    let (mut rise, mut rtts) = (0.0, 0.0);
    for i in 1..s.time_s.len() {
        let ca = s.ssthresh[i].is_finite()
            && s.ssthresh[i] == s.ssthresh[i - 1]
            && s.cwnd[i - 1] >= s.ssthresh[i - 1]
            && s.cwnd[i] >= s.cwnd[i - 1]
            // Not fast recovery's inflation (+1 per duplicate ACK: about
            // 8 segments per 10 ms sample here); byte counting's steps are
            // whole segments.
            && s.cwnd[i] - s.cwnd[i - 1] < 1.5
            && s.srtt_s[i] > 0.0;
        if ca {
            rise += s.cwnd[i] - s.cwnd[i - 1];
            rtts += (s.time_s[i] - s.time_s[i - 1]) / s.srtt_s[i];
        }
    }
    rise / rtts
}

/// When the window first reached 64 segments, seconds.
fn time_to_64(r: &RunResult) -> f64 {
    let s = &r.flow_series;
    let i = s.cwnd.iter().position(|&w| w >= 64.0).expect("reaches 64");
    s.time_s[i]
}

/// Seed 1: congestion avoidance grows by 0.485 segment per round trip
/// counting ACKs and 0.949 counting segments; slow start reaches 64
/// segments after 1.03 s against 0.55 s (5 round trips of about 110 ms
/// doubling from 2, against 8.5 of 1.5x).
#[test]
fn byte_counting_undoes_the_halving_by_delayed_acks() {
    let (off, on) = (one_flow("newreno", false), one_flow("newreno", true));
    let (g_off, g_on) = (
        avoidance_growth_per_rtt(&off),
        avoidance_growth_per_rtt(&on),
    );
    let (t_off, t_on) = (time_to_64(&off), time_to_64(&on));
    eprintln!(
        "avoidance: {g_off:.3} / {g_on:.3} segments per RTT; 64 segments at {t_off:.3} / {t_on:.3} s; utilisation {:.3} / {:.3}",
        off.summary.bottleneck.utilization, on.summary.bottleneck.utilization
    );
    assert!((g_off - 0.5).abs() < 0.1, "{g_off}");
    assert!((g_on - 1.0).abs() < 0.15, "{g_on}");
    assert!(t_on < 0.75 * t_off, "{t_on} against {t_off}");
    // The switch off leaves the run as it was.
    let plain = run(&one_flow_text("newreno", ""));
    assert_eq!(plain.flow_series.cwnd, off.flow_series.cwnd);
}

/// CUBIC's congestion avoidance counts acknowledged segments already;
/// byte counting changes its slow start only: 64 segments after 0.55 s
/// against 1.03 s (seed 1).
#[test]
fn byte_counting_with_cubic_changes_its_slow_start() {
    let (off, on) = (one_flow("cubic", false), one_flow("cubic", true));
    let (t_off, t_on) = (time_to_64(&off), time_to_64(&on));
    eprintln!("cubic: 64 segments at {t_off:.3} / {t_on:.3} s");
    assert!(t_on < 0.75 * t_off, "{t_on} against {t_off}");
    let u = |r: &RunResult| r.summary.bottleneck.utilization;
    eprintln!("cubic utilisation {:.3} / {:.3}", u(&off), u(&on));
}
