//! LEDBAT (RFC 6817, `tcp.variant = "ledbat"`) in whole runs: alone it
//! fills the link and holds the queue near its TARGET (100 ms with RFC
//! 6817's values, 5 ms with RFC 7928 section 5.4's); beside NewReno it
//! yields through a DropTail queue, whose standing queue is far above its
//! target, and stops yielding through CoDel, whose 5 ms target is its own:
//! the interaction RFC 7928 section 5.4 asks about (its reference GONG2014).
//! The sender's rules are checked with hand-worked numbers in
//! `transport/tcp/cc/ledbat.rs`.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// A 10 Mbit/s dumbbell at a 100 ms base RTT (RFC 7928's), Linux's TCP,
/// `buffer` packets, `aqm`, and the `traffic` groups; 60 s measured from
/// 20 s.
fn ledbat_run(buffer: u32, aqm: &str, ledbat: &str, traffic: &str) -> RunResult {
    run(&format!(
        r#"
duration = "60s"
seed = 1
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
bottleneck_delay = "1ms"
buffer = {buffer}
access_delay = "24.5ms"
[aqm]
kind = "{aqm}"
[tcp]
profile = "linux"
ledbat = "{ledbat}"
{traffic}
[metrics]
start = "20s"
"#
    ))
}

const LEDBAT_ALONE: &str = r#"[[traffic]]
kind = "bulk"
flows = 1
variant = "ledbat"
initial_cwnd = 2
"#;

/// Alone through a 300-packet DropTail queue (360 ms), LEDBAT fills the
/// link and its queue settles between half its TARGET and the TARGET
/// (measured: 85.8 ms for 100 ms, 4.5 ms for 5 ms; its own estimate, a
/// filtered round trip, also holds the ACKs' delay): no loss.
#[test]
fn ledbat_alone_holds_the_queue_near_its_target() {
    for (profile, target_ms) in [("rfc6817", 100.0), ("rfc7928", 5.0)] {
        let r = ledbat_run(300, "droptail", profile, LEDBAT_ALONE);
        let b = &r.summary.bottleneck;
        let q_ms = b.queuing_delay_mean_s * 1e3;
        println!(
            "{profile}: utilisation {:.3}, queue {q_ms:.1} ms",
            b.utilization
        );
        assert!(b.utilization >= 0.95, "{profile}: {}", b.utilization);
        assert!(
            (0.5 * target_ms..=target_ms).contains(&q_ms),
            "{profile}: {q_ms} ms against {target_ms}"
        );
        assert_eq!(b.drops_forced + b.drops_overflow, 0, "{profile}");
    }
}

/// RFC 7928 section 5.4's scenario (a NewReno flow and a LEDBAT flow with
/// TARGET 5 ms and GAIN 10, an 83-packet buffer): through DropTail LEDBAT
/// takes under a tenth of NewReno's goodput (measured 0.17 against 9.57
/// Mbit/s over 20-60 s); through CoDel at least half of it (measured 5.60
/// against 3.22).
#[test]
fn ledbat_yields_through_droptail_and_not_through_codel() {
    let traffic = r#"[[traffic]]
kind = "bulk"
flows = 1
variant = "newreno"
initial_cwnd = 3
[[traffic]]
kind = "bulk"
flows = 1
variant = "ledbat"
initial_cwnd = 2
"#;
    let ratio = |aqm: &str| {
        let r = ledbat_run(83, aqm, "rfc7928", traffic);
        let g = &r.flows.goodput_bps;
        println!(
            "{aqm}: NewReno {:.2}, LEDBAT {:.2} Mbit/s",
            g[0] / 1e6,
            g[1] / 1e6
        );
        g[1] / g[0]
    };
    let droptail = ratio("droptail");
    assert!(
        droptail < 0.1,
        "through DropTail LEDBAT / NewReno = {droptail}"
    );
    let codel = ratio("codel");
    assert!(codel >= 0.5, "through CoDel LEDBAT / NewReno = {codel}");
}
