//! Scenario-level tests of the flow-queue schemes beside FQ-CoDel: FQ-PIE
//! (Linux `sch_fq_pie`), and FQ-CoDel's CE threshold (Linux `ce_threshold`
//! with the ECT(1) selector). Fixed seeds; every run checks the
//! accounting identities (`common::run`). The figures quoted are those of
//! seed 1 when the tests were written (printed with `--nocapture`).

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// Jain's fairness index of `x`.
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

/// A 10 Mbit/s dumbbell (bottleneck 20 ms, access links 2-10 ms: base
/// RTTs 48-80 ms), Linux's TCP (1500-byte packets), a 10240-packet buffer
/// (`fq_pie`'s limit), the queue `aqm`, five CUBIC bulk flows and one
/// unresponsive 20 Mbit/s CBR (UDP) flow from 5 s; 60 s, measured from 20 s.
fn cubic_udp_mix(aqm: &str) -> RunResult {
    run(&format!(
        r#"
duration = "60s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_rate = "1Gbps"
access_delay = {{ uniform = ["2ms", "10ms"] }}
buffer = 10240
[aqm]
{aqm}
[tcp]
profile = "linux"
[[traffic]]
kind = "bulk"
flows = 5
start = {{ uniform = ["0s", "2s"] }}
[[traffic]]
kind = "cbr"
flows = 1
rate = "20Mbps"
packet_size = 1500
start = "5s"
[metrics]
start = "20s"
sample_interval = "10ms"
"#
    ))
}

/// FQ-PIE: the five CUBIC flows share fairly (Jain >= 0.95), the 20 Mbit/s
/// UDP flow is held near its sixth of the link by DRR and its own queue's
/// PIE (which drops it early, with p near 1), and the mean queuing delay
/// is near PIE's 15 ms target; the 10240-packet buffer never overflows.
/// Under DropTail the UDP flow takes most of the link and the queue fills.
#[test]
fn fq_pie_fair_with_udp_and_delay_near_target() {
    let r = cubic_udp_mix("kind = \"fq-pie\"");
    let b = &r.summary.bottleneck;
    let g = &r.flows.goodput_bps;
    let tcp: Vec<f64> = g[..5].to_vec();
    let j = jain(&tcp);
    let udp_share = g[5] / 10e6;
    let d = b.queuing_delay_mean_s * 1e3;
    println!(
        "fq-pie: tcp Mb/s {:?} jain {j:.4} udp {:.3} Mb/s share {udp_share:.3} delay {d:.2} ms util {:.3} early {} overflow {}",
        tcp.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>(),
        g[5] / 1e6,
        b.utilization,
        b.drops_early,
        b.drops_overflow
    );
    let dt = cubic_udp_mix("kind = \"droptail\"");
    let dtb = &dt.summary.bottleneck;
    println!(
        "droptail: udp share {:.3} delay {:.2} ms",
        dt.flows.goodput_bps[5] / 10e6,
        dtb.queuing_delay_mean_s * 1e3
    );
    assert!(j >= 0.95, "jain {j}");
    assert!((0.12..=0.22).contains(&udp_share), "udp share {udp_share}");
    assert!((d - 15.0).abs() <= 7.5, "delay {d:.2} ms");
    assert!(b.utilization > 0.95, "utilisation {}", b.utilization);
    assert!(b.drops_early > 0);
    assert_eq!(b.drops_overflow, 0);
    assert!(dt.flows.goodput_bps[5] / 10e6 > 0.5);
}
