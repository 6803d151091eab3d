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

/// A 100 Mbit/s dumbbell (bottleneck 20 ms, access links 2-10 ms: base
/// RTTs 48-80 ms), Linux's TCP (1500-byte packets), a `buffer`-packet
/// buffer, the queue `aqm`, five CUBIC bulk flows and one unresponsive
/// 50 Mbit/s CBR (UDP) flow from 5 s (three times its sixth of the link);
/// 40 s, measured from 15 s. Seed 2: with seed 1 the perturbed hash puts
/// flows 0 and 1 in one queue (1 chance in 1024 per pair, as in Linux),
/// and these tests are about the scheduler's shares, not collisions.
fn cubic_udp_mix(aqm: &str, buffer: u32) -> RunResult {
    run(&format!(
        r#"
duration = "40s"
seed = 2
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "20ms"
access_rate = "1Gbps"
access_delay = {{ uniform = ["2ms", "10ms"] }}
buffer = {buffer}
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
rate = "50Mbps"
packet_size = 1500
start = "5s"
[metrics]
start = "15s"
sample_interval = "10ms"
"#
    ))
}

/// Mean queuing delay of flows `0..n` (mean RTT less base RTT), ms.
fn tcp_qdelay_ms(r: &RunResult, n: usize) -> f64 {
    (0..n)
        .map(|i| (r.flows.rtt_mean_s[i] - r.flows.base_rtt_s[i]) * 1e3)
        .sum::<f64>()
        / n as f64
}

/// FQ-PIE: the five CUBIC flows share fairly (Jain >= 0.95), the
/// 50 Mbit/s UDP flow is held near its sixth of the link by DRR and its own
/// queue's PIE (which drops it early), and the CUBIC flows' queuing delay
/// (mean RTT less base RTT) is near PIE's 15 ms target; the 10240-packet
/// buffer never overflows. The UDP queue's PIE cycles (p climbs to 1, the
/// queue drains, its delay reads 0 and p collapses, the queue refills), so
/// the mean over every packet is well above 15 ms, yet far below
/// DropTail's, under which the UDP flow takes about half the link.
#[test]
fn fq_pie_fair_with_udp_and_delay_near_target() {
    let r = cubic_udp_mix("kind = \"fq-pie\"", 10240);
    let b = &r.summary.bottleneck;
    let g = &r.flows.goodput_bps;
    let tcp: Vec<f64> = g[..5].to_vec();
    let j = jain(&tcp);
    let udp_share = g[5] / 100e6;
    let d = b.queuing_delay_mean_s * 1e3;
    let dtcp = tcp_qdelay_ms(&r, 5);
    println!(
        "fq-pie: tcp Mb/s {:?} jain {j:.4} udp {:.2} Mb/s share {udp_share:.3} tcp qdelay {dtcp:.2} ms delay (all) {d:.2} ms util {:.3} early {} overflow {}",
        tcp.iter().map(|x| (x / 1e5).round() / 10.0).collect::<Vec<_>>(),
        g[5] / 1e6,
        b.utilization,
        b.drops_early,
        b.drops_overflow
    );
    let dt = cubic_udp_mix("kind = \"droptail\"", 10240);
    let dtb = &dt.summary.bottleneck;
    let dtd = dtb.queuing_delay_mean_s * 1e3;
    println!(
        "droptail: udp share {:.3} jain {:.4} delay {dtd:.2} ms",
        dt.flows.goodput_bps[5] / 100e6,
        jain(&dt.flows.goodput_bps[..5])
    );
    assert!(j >= 0.95, "jain {j}");
    assert!((0.14..=0.20).contains(&udp_share), "udp share {udp_share}");
    assert!((dtcp - 15.0).abs() <= 7.5, "tcp delay {dtcp:.2} ms");
    assert!(d < dtd / 5.0, "delay {d:.2} ms vs DropTail {dtd:.2} ms");
    assert!(b.utilization > 0.95, "utilisation {}", b.utilization);
    assert!(b.drops_early > 0);
    assert_eq!(b.drops_overflow, 0);
    assert!(dt.flows.goodput_bps[5] / 100e6 > 0.4);
}

/// The dumbbell of `scenarios/aqm/cobalt.toml` with the queue `aqm`:
/// 10 Mbit/s, base RTT 60 ms, 200-packet buffer, ten NewReno flows
/// (1500-byte packets) and, when `udp` is set, an unresponsive 12 Mbit/s
/// CBR flow from 20 s; 60 s, measured from 25 s.
fn cobalt_run(aqm: &str, udp: bool) -> RunResult {
    let cbr = if udp {
        "[[traffic]]\nkind = \"cbr\"\nflows = 1\nrate = \"12Mbps\"\npacket_size = 1500\nstart = \"20s\""
    } else {
        ""
    };
    run(&format!(
        r#"
duration = "60s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_rate = "100Mbps"
access_delay = "5ms"
buffer = 200
[aqm]
{aqm}
[tcp]
variant = "newreno"
packet_size = 1500
[[traffic]]
kind = "bulk"
flows = 10
start = {{ uniform = ["0s", "2s"] }}
{cbr}
[metrics]
start = "25s"
sample_interval = "10ms"
"#
    ))
}

/// COBALT with TCP only behaves as CoDel: the mean queuing delay is within
/// a band around the 5 ms target, the link full. With an unresponsive UDP
/// flow that overfills the buffer, CoDel's drops alone leave the buffer
/// overflowing and the delay high; COBALT's BLUE part climbs on each
/// overflow and sheds the UDP flow harder: fewer overflow drops, a lower
/// delay, and less of the link to the UDP flow.
#[test]
fn cobalt_holds_target_and_blue_sheds_unresponsive_flow() {
    let c = cobalt_run("kind = \"cobalt\"", false);
    let b = &c.summary.bottleneck;
    let d = b.queuing_delay_mean_s * 1e3;
    println!(
        "cobalt, tcp only: delay {d:.2} ms util {:.3} early {} forced {} overflow {}",
        b.utilization, b.drops_early, b.drops_forced, b.drops_overflow
    );
    assert!((2.5..=12.0).contains(&d), "delay {d:.2} ms");
    assert!(b.utilization > 0.9, "utilisation {}", b.utilization);
    let mut figs = Vec::new();
    for aqm in ["codel", "cobalt"] {
        let r = cobalt_run(&format!("kind = \"{aqm}\""), true);
        let b = &r.summary.bottleneck;
        let udp = r.flows.goodput_bps[10] / 10e6;
        let d = b.queuing_delay_mean_s * 1e3;
        println!(
            "{aqm} + udp: udp share {udp:.3} delay {d:.2} ms early {} forced {} overflow {} p_drop end {:.4}",
            b.drops_early,
            b.drops_forced,
            b.drops_overflow,
            if aqm == "cobalt" { common::param_at(&r, "p_drop", 59.0) } else { 0.0 }
        );
        figs.push((udp, d, b.drops_overflow, b.drops_forced));
    }
    let (codel, cobalt) = (figs[0], figs[1]);
    assert!(cobalt.3 > 0, "BLUE dropped");
    assert!(
        cobalt.2 < codel.2,
        "overflow {} vs CoDel {}",
        cobalt.2,
        codel.2
    );
    assert!(
        cobalt.1 < codel.1,
        "delay {} vs CoDel {}",
        cobalt.1,
        codel.1
    );
    assert!(
        cobalt.0 < codel.0,
        "udp share {} vs CoDel {}",
        cobalt.0,
        codel.0
    );
}

/// FQ-COBALT (COBALT under the flow scheduler) keeps the CUBIC + UDP mix
/// of the FQ-PIE test fair, with a 1000-packet buffer: the UDP queue
/// overflows until its BLUE has climbed, then CoDel's and BLUE's drops
/// hold it; the CUBIC flows' delay stays low.
#[test]
fn fq_cobalt_fair_with_udp() {
    let r = cubic_udp_mix("kind = \"fq-cobalt\"", 1000);
    let b = &r.summary.bottleneck;
    let g = &r.flows.goodput_bps;
    let j = jain(&g[..5]);
    let udp_share = g[5] / 100e6;
    let d = b.queuing_delay_mean_s * 1e3;
    let dtcp = tcp_qdelay_ms(&r, 5);
    println!(
        "fq-cobalt: jain {j:.4} udp share {udp_share:.3} tcp qdelay {dtcp:.2} ms delay (all) {d:.2} ms util {:.3} early {} forced {} overflow {}",
        b.utilization, b.drops_early, b.drops_forced, b.drops_overflow
    );
    assert!(dtcp < 15.0, "tcp delay {dtcp:.2} ms");
    assert!(j >= 0.95, "jain {j}");
    assert!((0.12..=0.22).contains(&udp_share), "udp share {udp_share}");
    assert!(b.utilization > 0.95);
}

/// A 100 Mbit/s dumbbell, base RTT 20 ms, Linux's TCP with ECN, buffer
/// 4000 packets: one DCTCP flow sending ECT(1) and one CUBIC flow sending
/// ECT(0), through FQ-CoDel with `ecn = true` and `extra` keys; 40 s,
/// measured from 15 s. Seed 2 (with seed 1 flows 0 and 1 share a queue).
fn ce_run(extra: &str) -> RunResult {
    run(&format!(
        r#"
duration = "40s"
seed = 2
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "8ms"
access_rate = "1Gbps"
access_delay = "1ms"
buffer = 4000
[aqm]
kind = "fq-codel"
ecn = true
{extra}
[tcp]
profile = "linux"
ecn = true
[[traffic]]
kind = "bulk"
flows = 1
variant = "dctcp"
ecn_codepoint = "ect1"
[[traffic]]
kind = "bulk"
flows = 1
[metrics]
start = "15s"
sample_interval = "10ms"
"#
    ))
}

/// FQ-CoDel's CE threshold (1 ms, ECT(1) only): DCTCP's ECT(1) packets
/// are CE-marked above 1 ms of sojourn (cause Forced), which keeps its
/// queuing delay (mean RTT less base RTT) near the threshold, where
/// without the threshold CoDel alone lets it sit at CoDel's 5 ms target
/// and above; the CUBIC flow's ECT(0) packets see CoDel only (marks of
/// cause Early, none of cause Forced on ECT(0)). Both flows keep their
/// halves of the link (the scheduler).
#[test]
fn ce_threshold_marks_ect1_near_threshold() {
    let off = ce_run("");
    let on = ce_run("ce_threshold = \"1ms\"");
    let qd = |r: &RunResult, i: usize| (r.flows.rtt_mean_s[i] - r.flows.base_rtt_s[i]) * 1e3;
    for (name, r) in [("off", &off), ("1ms", &on)] {
        let b = &r.summary.bottleneck;
        println!(
            "ce_threshold {name}: dctcp qdelay {:.2} ms cubic qdelay {:.2} ms marks ect1 {} ect0 {} early {} forced {} goodput {:.1} / {:.1} Mb/s",
            qd(r, 0),
            qd(r, 1),
            b.marks_ect1,
            b.marks_ect0,
            b.marks_early,
            b.marks_forced,
            r.flows.goodput_bps[0] / 1e6,
            r.flows.goodput_bps[1] / 1e6
        );
    }
    let b = &on.summary.bottleneck;
    assert!(b.marks_ect1 > 0 && b.marks_forced > 0);
    assert_eq!(off.summary.bottleneck.marks_forced, 0);
    // Every Forced mark is an ECT(1) one; ECT(0) marks are CoDel's.
    assert!(b.marks_forced <= b.marks_ect1);
    assert!(qd(&on, 0) < 3.0, "DCTCP queuing delay {:.2} ms", qd(&on, 0));
    assert!(
        qd(&on, 0) < qd(&off, 0),
        "below the run without the threshold"
    );
    let share = on.flows.goodput_bps[0] / (on.flows.goodput_bps[0] + on.flows.goodput_bps[1]);
    assert!((0.35..=0.65).contains(&share), "DCTCP share {share}");
}
