//! TCP Prague (`tcp.variant = "prague"`, `cc/prague.rs`) in whole runs:
//! beside CUBIC through DualPI2 at 100 Mbit/s and base RTTs 10, 50 and
//! 100 ms (RFC 9332 section 2.1's rough parity with k = 2, about a
//! millisecond of L queue, the link full), and beside CUBIC with ECN
//! through a single-queue RED that marks classic ECN, with and without
//! the classic-ECN-bottleneck detection; at 20 ms under each rule for an
//! ECE soon after a cut (`tcp.prague_cwr`). The algorithm's rules are
//! checked by hand in `cc/prague.rs`.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// A 100 Mbit/s dumbbell with base RTT `rtt_ms` (access links 1 ms each
/// way), 1500-byte packets (the linux profile), a 4000-packet buffer, the
/// queue `aqm`, `[tcp]` extra keys `tcp` and the traffic groups `traffic`;
/// 40 s, measured from 15 s.
fn prague_run(rtt_ms: u64, aqm: &str, tcp: &str, traffic: &str) -> RunResult {
    prague_run_seed(1, rtt_ms, aqm, tcp, traffic)
}

/// [`prague_run`] with seed `seed`.
fn prague_run_seed(seed: u64, rtt_ms: u64, aqm: &str, tcp: &str, traffic: &str) -> RunResult {
    let bottleneck_us = rtt_ms * 500 - 2000;
    run(&format!(
        r#"
duration = "40s"
seed = {seed}
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "{bottleneck_us}us"
access_rate = "1Gbps"
access_delay = "1ms"
buffer = 4000
[aqm]
{aqm}
[tcp]
profile = "linux"
ecn = true
{tcp}
{traffic}
[metrics]
start = "15s"
sample_interval = "10ms"
"#
    ))
}

/// One Prague flow and one CUBIC flow; CUBIC's ECN is `cubic_ecn`.
fn pair(cubic_ecn: bool) -> String {
    format!(
        r#"
[[traffic]]
kind = "bulk"
flows = 1
variant = "prague"
[[traffic]]
kind = "bulk"
flows = 1
ecn = {cubic_ecn}
"#
    )
}

/// The rate of the Prague flow over the CUBIC flow's.
fn ratio(r: &RunResult) -> f64 {
    r.flows.goodput_bps[0] / r.flows.goodput_bps[1]
}

/// One Prague flow and one classic flow of `variant` without ECN.
fn pair_with(variant: &str) -> String {
    format!(
        "\n[[traffic]]\nkind = \"bulk\"\nflows = 1\nvariant = \"prague\"\n[[traffic]]\nkind = \"bulk\"\nflows = 1\necn = false\nvariant = \"{variant}\"\n"
    )
}

/// RFC 9332 section 2.1: with k = 2 a scalable sender in L and a
/// Reno-friendly sender in C share roughly equally; L's p99 sojourn under
/// 2 ms in every run, C's mean printed. Seeds 1-10 at each RTT: Prague
/// against CUBIC is within [0.5, 2] on average at 10 and 50 ms (1.56 and
/// 1.99; single runs 1.11-1.92 and 1.42-2.44: CUBIC's window, held by
/// Linux's rule of keeping `cnt` for up to 1/32 s while the window stands
/// still, grows in steps the ratio feels; the L4S team's kernel gave
/// Prague 2.05-2.73 times CUBIC's rate at 10 and 20 ms, docs/l4s.md). At
/// 100 ms CUBIC is in its cubic mode (a BDP of 833 packets, CUBIC's drop
/// rate p about 5.6e-5, its RTT 107 ms): its window 1.054 (RTT / p)^(3/4)
/// is 1.86 times Reno's 1.22 / sqrt(p), and Prague / CUBIC falls to 0.64
/// on average against the 0.54 that predicts (0.50-0.82), below its 50 ms
/// share; Prague / NewReno is
/// 1.00 there: the coupling's parity is with Reno
/// (`prague_and_reno_share_dualpi2_at_100ms`).
/// The link is full at 10 and 50 ms (0.998 or more). At 100 ms not in
/// every run: after CUBIC's cut the two windows can sum below the BDP for
/// seconds, CUBIC on its plateau below its last maximum and Prague,
/// unscaled above 25 ms, adding a segment a round (docs/l4s.md); 0.920-0.983
/// over seeds 1-10. The relation checked there: Prague fills what one
/// CUBIC flow alone leaves, the mean over seeds 1-10 above CUBIC's alone.
/// Prague's packets are ECT(1), marked and never dropped.
#[test]
fn prague_and_cubic_share_dualpi2() {
    let mut means = Vec::new();
    let mut use_100 = 0.0;
    for rtt in [10, 50, 100] {
        let mut sum = 0.0;
        for seed in 1..=10 {
            let r = prague_run_seed(seed, rtt, "kind = \"dualpi2\"", "", &pair(false));
            let b = &r.summary.bottleneck;
            let (lp99, _) = common::dualpi2_figures(
                &format!("prague+cubic dualpi2 rtt {rtt} ms seed {seed}"),
                &r,
                ratio(&r),
            );
            sum += ratio(&r);
            assert!(lp99 < 0.002, "rtt {rtt} seed {seed}: L p99 {lp99}");
            if rtt < 100 {
                assert!(
                    b.utilization >= 0.95,
                    "rtt {rtt} seed {seed}: {}",
                    b.utilization
                );
            } else {
                use_100 += b.utilization / 10.0;
            }
            assert!(b.marks_ect1 > 0 && b.drops_ect1 == 0);
            assert_eq!(b.marks_ect0 + b.drops_ect0, 0);
        }
        means.push(sum / 10.0);
    }
    println!("mean Prague / CUBIC over seeds 1-10 at 10, 50, 100 ms: {means:.2?}");
    for (rtt, x) in [(10, means[0]), (50, means[1])] {
        assert!((0.5..=2.0).contains(&x), "rtt {rtt}: {x}");
    }
    // CUBIC's cubic mode at 100 ms: 1.93 x Reno's window at the same p_C.
    assert!(means[2] < means[1], "100 ms: {means:?}");
    let alone = (1..=10)
        .map(|seed| {
            let r = prague_run_seed(seed, 100, "kind = \"dualpi2\"", "", CUBIC_ALONE);
            r.summary.bottleneck.utilization
        })
        .sum::<f64>()
        / 10.0;
    println!("100 ms, seeds 1-10: link use {use_100:.3} with Prague, {alone:.3} CUBIC alone");
    assert!(use_100 > alone, "{use_100} against {alone}");
}

/// One CUBIC flow without ECN.
const CUBIC_ALONE: &str = "\n[[traffic]]\nkind = \"bulk\"\nflows = 1\necn = false\n";

/// The coupling's parity is with a Reno-friendly flow: Prague against
/// NewReno at 100 ms is within [0.5, 2], above Prague against CUBIC.
#[test]
fn prague_and_reno_share_dualpi2_at_100ms() {
    let r = prague_run(100, "kind = \"dualpi2\"", "", &pair_with("newreno"));
    let b = &r.summary.bottleneck;
    println!(
        "prague+newreno dualpi2 rtt 100 ms: ratio {:.2}, L p99 {:.2} ms, C mean {:.1} ms, util {:.3}",
        ratio(&r),
        b.l_queue_delay_p99_s.unwrap() * 1e3,
        b.c_queue_delay_mean_s.unwrap() * 1e3,
        b.utilization
    );
    assert!((0.5..=2.0).contains(&ratio(&r)), "{}", ratio(&r));
    assert!(b.l_queue_delay_p99_s.unwrap() < 0.002);
    let cubic = prague_run(100, "kind = \"dualpi2\"", "", &pair(false));
    assert!(
        ratio(&r) > ratio(&cubic),
        "{} against {}",
        ratio(&r),
        ratio(&cubic)
    );
}

/// A single-queue RED marking classic ECN: without the detection Prague
/// answers RED's low marking probability as an L4S signal (a small alpha)
/// and starves CUBIC; with it the score climbs on the deep queue, the
/// cuts fall back toward Reno's and the two share within a factor 2.
#[test]
fn prague_falls_back_on_a_classic_ecn_red() {
    let red = "kind = \"red\"\necn = true\nmin_th = 50\nmax_th = 150\nmax_p = 0.1\nw_q = 0.002";
    let mut got = Vec::new();
    for detect in [false, true] {
        let tcp = format!("prague_classic_ecn_detection = {detect}");
        let r = prague_run(20, red, &tcp, &pair(true));
        let b = &r.summary.bottleneck;
        println!(
            "prague+cubic(ecn) red rtt 20 ms, detection {detect}: ratio {:.2}, queue mean {:.1} ms, util {:.3}",
            ratio(&r),
            b.queuing_delay_mean_s * 1e3,
            b.utilization
        );
        got.push(ratio(&r));
    }
    assert!(got[0] > 2.0, "without detection: {}", got[0]);
    assert!((0.5..=2.0).contains(&got[1]), "with detection: {}", got[1]);
}

/// The detection sees DualPI2's L queue as L4S (shallow and steady: the
/// score stays low), so with it on Prague shares with CUBIC as without.
#[test]
fn the_detection_leaves_dualpi2_alone() {
    let r = prague_run(
        50,
        "kind = \"dualpi2\"",
        "prague_classic_ecn_detection = true",
        &pair(false),
    );
    println!(
        "prague+cubic dualpi2 rtt 50 ms, detection on: ratio {:.2}",
        ratio(&r)
    );
    assert!((1.0..=2.0).contains(&ratio(&r)), "{}", ratio(&r));
}

/// Two flows of `variant` (ECT(1)) through DualPI2 at 100 Mbit/s with
/// base RTTs of 10 and 50 ms (each group's `base_rtt`), 40 s measured from
/// 15 s, `tcp`: more keys of `[tcp]`.
fn rtt_pair(variant: &str, tcp: &str) -> RunResult {
    run(&format!(
        r#"
duration = "40s"
seed = 1
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "1ms"
access_rate = "1Gbps"
buffer = 4000
[aqm]
kind = "dualpi2"
[tcp]
profile = "linux"
ecn = true
{tcp}
[[traffic]]
kind = "bulk"
flows = 1
variant = "{variant}"
ecn_codepoint = "ect1"
base_rtt = "10ms"
[[traffic]]
kind = "bulk"
flows = 1
variant = "{variant}"
ecn_codepoint = "ect1"
base_rtt = "50ms"
[metrics]
start = "15s"
"#
    ))
}

/// [`rtt_pair`]'s short flow's goodput over the long one's, the link full
/// and L's queue short.
fn rtt_pair_ratio(variant: &str, tcp: &str) -> f64 {
    let r = rtt_pair(variant, tcp);
    let b = &r.summary.bottleneck;
    assert!(b.utilization > 0.95, "{variant}: {}", b.utilization);
    assert!(b.l_queue_delay_p99_s.unwrap() < 0.002, "{variant}");
    r.flows.goodput_bps[0] / r.flows.goodput_bps[1]
}

/// Prague's RTT independence (the reference's RATE mode, draft section
/// 2.3.4): past its 500 rounds a flow whose SRTT is under 25 ms grows as a
/// 25 ms flow does (a segment per 25 ms), so against a 50 ms flow (a
/// segment per 50 ms) it takes about twice the rate, where DCTCP, whose
/// 10 ms flow adds a segment every 10 ms, takes more than the RTTs' ratio
/// of 5 (the rate a window of the same size gives). DCTCP without Linux's
/// TSO deferral, whose bursts cost it the link here
/// ([`linux_tso_deferral_bursts_cost_dctcp_the_link_through_dualpi2`]).
/// Measured (seed 1): Prague 2.39, DCTCP 8.60 (13.02 without PSH).
#[test]
fn prague_at_10_ms_takes_about_twice_the_rate_of_prague_at_50_ms() {
    let prague = rtt_pair_ratio("prague", "");
    let dctcp = rtt_pair_ratio("dctcp", "tso_defer = false");
    println!("short / long goodput, 10 ms against 50 ms through DualPI2: Prague {prague:.2}, DCTCP {dctcp:.2}");
    assert!((1.5..=3.5).contains(&prague), "prague {prague}");
    assert!(dctcp > 5.0, "dctcp {dctcp}");
    assert!(prague < dctcp / 3.0, "prague {prague}, dctcp {dctcp}");
}

/// A DCTCP flow that does not pace and defers as Linux's
/// `tcp_tso_should_defer` does sends its window in packets of its size
/// goal (about 1 ms at its pacing rate: 6-9 segments for the 10 ms flow
/// at 100 Mbit/s), held until an ACK lets the whole packet go. Each such
/// burst, at the access link's 1 Gbit/s, lifts L's queue by most of its
/// 1 ms step (8.3 packets), so the step marks more and the two flows keep
/// less in flight. Measured (seed 1): utilisation 0.993 without the
/// deferral, 0.902 with it (0.907 without PSH).
#[test]
fn linux_tso_deferral_bursts_cost_dctcp_the_link_through_dualpi2() {
    let util = |tcp: &str| rtt_pair("dctcp", tcp).summary.bottleneck.utilization;
    let (off, on) = (util("tso_defer = false"), util(""));
    println!("DCTCP pair through DualPI2: utilisation {off:.3} without the deferral, {on:.3} with");
    assert!(
        off > 0.98 && on < off - 0.05,
        "without {off:.3}, with {on:.3}"
    );
}

/// At 20 ms, under the 25 ms of RTT independence, the rule for an ECE
/// that comes sooner than 25 ms after a cut sets how often Prague cuts
/// (`tcp.prague_cwr`). The kernel module's (the default) starts a
/// reduction at once, which then passes its round trip without a cut; UDP
/// Prague's starts nothing and cuts at the first ECE once a round trip and
/// 25 ms have passed. Seeds 1-5: more cuts in every seed (seed 1: 645
/// against 530), and Prague / CUBIC 2.02 against 2.63 on average, lower
/// in every seed (docs/l4s.md has ten seeds of the preset's set-up).
#[test]
fn udp_prague_rule_cuts_more_often_at_20_ms() {
    let (mut sum, mut sum_udp) = (0.0, 0.0);
    for seed in 1..=5 {
        let run_rule = |rule: &str| {
            let r = prague_run_seed(
                seed,
                20,
                "kind = \"dualpi2\"",
                &format!("prague_cwr = \"{rule}\""),
                &pair(false),
            );
            (ratio(&r), r.summary.flows.ecn_reductions)
        };
        let (linux, linux_cuts) = run_rule("linux");
        let (udp, udp_cuts) = run_rule("udp-prague");
        println!("seed {seed}: ratio {linux:.2} / {udp:.2}, cuts {linux_cuts} / {udp_cuts}");
        assert!(
            udp_cuts as f64 > 1.1 * linux_cuts as f64,
            "seed {seed}: {udp_cuts} against {linux_cuts}"
        );
        sum += linux;
        sum_udp += udp;
    }
    assert!(
        sum_udp < 0.95 * sum,
        "{} against {}",
        sum_udp / 5.0,
        sum / 5.0
    );
}
