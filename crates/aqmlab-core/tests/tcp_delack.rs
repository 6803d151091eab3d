//! Linux's delayed-ACK timer and quick-ACK mode (`tcp.delack_timer =
//! "linux"`) in whole runs. The rules are checked by hand in
//! `transport/tcp/delack.rs`.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// 100 Reno flows of the linux profile through FQ-CoDel at 10 Mbit/s,
/// 100 ms base RTT (the testbed grid's dumbbell: 20 ms bottleneck, 15 ms
/// access delays, a 200-packet buffer), starts spread over 2 s, 20 s
/// measured from 8 s, seed 1; `timer` the receivers' delayed-ACK rule;
/// no rehash at a timeout, as the testbed's router hashes the 5-tuple; the
/// quantum of the kernel's run, 1514 bytes (with one packet's 1500, the
/// default: 279 and 270 timeouts, the kernel's 233 below both).
fn many(timer: &str) -> RunResult {
    run(&common::grid_fq_codel(
        1,
        100,
        "quantum = 1514",
        &format!("variant = \"reno\"\ndelack_timer = \"{timer}\"\ntxrehash = false"),
    ))
}

/// At 100 flows a flow's segments arrive tens of milliseconds apart, so
/// Linux's receivers hold an ACK longer than 40 ms (ato follows the gaps
/// and doubles each time the timer beats the next segment). Measured
/// (seed 1): timeouts 444 with the fixed 40 ms timer, 259 with Linux's,
/// the kernel 233 on the testbed (same scenario, same starts); mean queue
/// 57.4 and 65.1 packets, the kernel 75.1 (73.5 and 68.1-75.2 in other
/// runs).
#[test]
fn linux_delayed_acks_halve_the_timeouts_of_100_reno_flows() {
    let fixed = many("fixed");
    let linux = many("linux");
    let (tf, tl) = (fixed.summary.flows.timeouts, linux.summary.flows.timeouts);
    let (qf, ql) = (
        fixed.summary.bottleneck.queue_mean_pkts,
        linux.summary.bottleneck.queue_mean_pkts,
    );
    eprintln!("timeouts {tf} / {tl}; mean queue {qf:.1} / {ql:.1} packets");
    assert!((tl as f64) < 0.6 * tf as f64, "{tl} against {tf}");
    assert!(ql > qf, "{ql} against {qf}");
}

/// CUBIC at 20 flows of the linux profile through DropTail at 50 Mbit/s,
/// 100 ms base RTT, a buffer of one BDP (417 packets), the access links at
/// the testbed's veth speed (2.5 Gbit/s), starts spread over 2 s with a
/// handshake, 20 s measured from 8 s: the testbed grid's cell where the
/// kernel is least fair. `psh`: Linux's PSH (`tcp.psh`).
fn cubic_20(seed: u64, psh: bool) -> RunResult {
    run(&format!(
        r#"
duration = "20s"
seed = {seed}
[topology]
kind = "dumbbell"
bottleneck_rate = "50Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
access_rate = "2.5Gbps"
buffer = 417
[aqm]
kind = "droptail"
[tcp]
profile = "linux"
psh = {psh}
[[traffic]]
kind = "bulk"
flows = 20
start = {{ uniform = ["0s", "2s"] }}
handshake = true
[metrics]
start = "8s"
"#
    ))
}

/// A Linux sender marks PSH on every TSO/GSO packet of two segments or
/// more, and a Linux receiver acknowledges a pushed segment at once: a
/// window that opens by three puts the receiver's pairs out of step, and
/// the next packet's second segment is acknowledged alone. With the
/// bursts of fast access links that moves a full queue's drops onto the
/// small windows, and the flows part further. Measured (seeds 1-12):
/// Jain's index 0.856 without, 0.808 with, the kernel on the testbed
/// 0.768 (docs/tcp.md, "Linux's PSH"); seeds 1-6 here 0.836 and 0.783.
#[test]
fn linux_psh_leaves_cubic_flows_less_fair_through_a_full_droptail_queue() {
    let mean = |psh: bool| {
        (1..=6)
            .map(|s| cubic_20(s, psh).summary.flows.jain_fairness)
            .sum::<f64>()
            / 6.0
    };
    let (off, on) = (mean(false), mean(true));
    println!("Jain's index, seeds 1-6: without PSH {off:.3}, with {on:.3}");
    assert!(on < off - 0.03, "without {off:.3}, with {on:.3}");
}
