//! Linux's delayed-ACK timer and quick-ACK mode (`tcp.delack_timer =
//! "linux"`) in whole runs. The rules are checked by hand in
//! `transport/tcp/delack.rs`.

use crate::common;

use crate::pcap::records;
use aqmlab_core::RunResult;
use common::run;
use std::collections::HashMap;

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
/// (seed 1): timeouts 486 with the fixed 40 ms timer, 231 with Linux's,
/// the kernel 233 on the testbed (same scenario, same starts); mean queue
/// 62.4 and 67.2 packets, the kernel 75.1 (73.5 and 68.1-75.2 in other
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
/// kernel is least fair. `psh`: Linux's PSH (`tcp.psh`); `tcp`, `metrics`:
/// more keys of `[tcp]` and `[metrics]`.
fn cubic_20(seed: u64, psh: bool) -> RunResult {
    cubic_20_with(seed, psh, "tso_defer = false", "")
}

fn cubic_20_with(seed: u64, psh: bool, tcp: &str, metrics: &str) -> RunResult {
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
{tcp}
[[traffic]]
kind = "bulk"
flows = 20
start = {{ uniform = ["0s", "2s"] }}
handshake = true
[metrics]
start = "8s"
{metrics}
"#
    ))
}

/// A Linux sender marks PSH on every TSO/GSO packet of two segments or
/// more, and a Linux receiver acknowledges a pushed segment at once: a
/// window that opens by three puts the receiver's pairs out of step, and
/// the next packet's second segment is acknowledged alone. With the
/// bursts of fast access links that moves a full queue's drops onto the
/// small windows, and the flows part further. Measured without the TSO
/// deferral (seeds 1-12): Jain's index 0.856 without, 0.808 with, the
/// kernel on the testbed 0.742-0.782 (docs/tcp.md, "The DropTail cell at
/// 20 flows and 50 Mbit/s"); seeds 1-6 here 0.836 and 0.783.
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

/// Gaps of two and of three segments between one flow's successive PSH
/// segments in a run's capture, after 3 s.
fn psh_gaps(r: &RunResult) -> (u64, u64) {
    let mut last: HashMap<[u8; 12], u32> = HashMap::new();
    let (mut two, mut three) = (0, 0);
    for (t, h, _) in records(&r.pcap) {
        let ihl = usize::from(h[0] & 15) * 4;
        let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
        let tcp = &h[ihl..];
        let payload = total.saturating_sub(ihl + usize::from(tcp[12] >> 4) * 4) as u32;
        if t < 3_000_000_000 || payload == 0 || tcp[13] & 0x08 == 0 {
            continue;
        }
        let mut key = [0u8; 12];
        key[..8].copy_from_slice(&h[12..20]);
        key[8..].copy_from_slice(&tcp[..4]);
        let seq = u32::from_be_bytes(tcp[4..8].try_into().unwrap());
        if let Some(prev) = last.insert(key, seq) {
            match (seq.wrapping_sub(prev) + payload / 2) / payload {
                2 => two += 1,
                3 => three += 1,
                _ => {}
            }
        }
    }
    (two, three)
}

/// Linux's TSO deferral (`tcp.tso_defer`) holds back the single segment a
/// window that opens by three would send after a pair, while the oldest
/// segment's ACK is due within a millisecond: the gaps of three segments
/// between a flow's PSH segments fall. Measured (seed 4, after 3 s): 24.3 %
/// of the gaps with `psh` alone, 9.4 % with the deferral; the kernel's
/// capture 14 % (docs/tcp.md, "Linux's TSO deferral").
#[test]
fn linux_tso_deferral_sends_fewer_single_segments_after_a_pair() {
    let share = |defer: bool| {
        let r = cubic_20_with(4, true, &format!("tso_defer = {defer}"), "pcap = 2000000");
        let (two, three) = psh_gaps(&r);
        assert!(two > 10_000, "{two} gaps of two");
        three as f64 / (two + three) as f64
    };
    let (off, on) = (share(false), share(true));
    println!(
        "gaps of three among gaps of two and three: without the deferral {off:.3}, with {on:.3}"
    );
    assert!(on < 0.5 * off, "without {off:.3}, with {on:.3}");
}
