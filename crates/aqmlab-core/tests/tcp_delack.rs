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
