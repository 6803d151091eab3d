//! Scenario-level tests of BLUE and AVQ: the dumbbell of
//! `common::dumbbell` (10 Mb/s, base RTT 100 ms, 500-byte packets, buffer
//! 500 packets, NewReno bulk flows), fixed seeds, relations and tolerances.
//! Every run checks the accounting identities.

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::RunResult;
use common::{dumbbell, run, scenario};

/// A dumbbell run of `duration_s` seconds measured from `start_s`.
fn run_for(flows: u32, aqm: &str, tcp: &str, duration_s: u32, start_s: u32) -> RunResult {
    let text = dumbbell(flows, aqm, tcp)
        .replace(
            "duration = \"100s\"",
            &format!("duration = \"{duration_s}s\""),
        )
        .replace("start = \"40s\"", &format!("start = \"{start_s}s\""));
    run(&text)
}

/// Number of records of parameter `name` in the params series.
fn records(r: &RunResult, name: &str) -> usize {
    r.params.name.iter().filter(|n| **n == name).count()
}

/// BLUE (defaults: freeze_time 100 ms, delta1 0.0025, delta2 0.00025, ECN
/// marking) against DropTail with the same 500-packet buffer and the same
/// 100 ECN-capable NewReno flows: BLUE learns a marking probability that
/// keeps the buffer from overflowing, so its loss rate is a small fraction
/// of DropTail's, at full utilisation.
#[test]
fn blue_loses_less_than_droptail() {
    // Retransmissions ECT as in ns-2, so that every packet BLUE signals is
    // ECN-capable (RFC 3168's non-ECT retransmissions: below).
    let dt = run(&dumbbell(100, "", "ecn = true\nect_retransmits = true"));
    let bl = run(&dumbbell(
        100,
        "[aqm]\nkind = \"blue\"\necn = true",
        "ecn = true\nect_retransmits = true",
    ));
    let (d, b) = (&dt.summary.bottleneck, &bl.summary.bottleneck);
    assert!(
        b.loss_rate < 0.25 * d.loss_rate,
        "BLUE loss {} vs DropTail {}",
        b.loss_rate,
        d.loss_rate
    );
    assert!(d.loss_rate > 0.01, "DropTail loss {}", d.loss_rate);
    assert!(b.utilization > 0.97, "BLUE utilisation {}", b.utilization);
    assert!(
        b.marks > 10 * b.drops_overflow,
        "marks {} overflow {}",
        b.marks,
        b.drops_overflow
    );
    assert_eq!(
        b.drops_early + b.drops_forced,
        0,
        "ECN on: every signal is a mark"
    );
    // Marks replace losses, so far fewer retransmissions. (This compared
    // timeouts before the TCP fixes of docs/fidelity.md item 1: DropTail's
    // came from a TCP defect, a timer not restarted at the fast
    // retransmission, and are now 3; BLUE's are spurious RTOs when its
    // queue swings by more than the RTTVAR margin.)
    assert!(
        2 * bl.summary.flows.retransmits < dt.summary.flows.retransmits,
        "retransmissions {} vs {}",
        bl.summary.flows.retransmits,
        dt.summary.flows.retransmits
    );
    // With RFC 3168 section 6.1.5's non-ECT retransmissions, the only
    // packets BLUE drops early are retransmissions.
    let rfc = run(&dumbbell(
        100,
        "[aqm]\nkind = \"blue\"\necn = true",
        "ecn = true",
    ));
    let r = &rfc.summary.bottleneck;
    assert!(
        r.drops_early + r.drops_forced <= rfc.summary.flows.retransmits,
        "early drops {} vs retransmissions {}",
        r.drops_early + r.drops_forced,
        rfc.summary.flows.retransmits
    );
    assert!(r.marks > 10 * (r.drops_early + r.drops_forced));
    // p was learned (0.0025 per step) and every step was recorded besides
    // the 10 ms samples (100 s / 10 ms + 1 = 10 001).
    let p = common::param_at(&bl, "p", 100.0);
    assert!((0.0025..0.5).contains(&p), "p {p}");
    assert!(records(&bl, "p") > 10_001, "{}", records(&bl, "p"));
}

/// AVQ (defaults tau 0.98, alpha 0.15 /s, ECN marking) holds the
/// utilisation at tau with a small mean queue, for 50 and for 100 flows.
/// The virtual capacity converges slowly from C (alpha is small), so the
/// runs last 200 s and are measured over the second half.
#[test]
fn avq_holds_utilisation_at_tau_with_small_queue() {
    for flows in [50, 100] {
        let r = run_for(
            flows,
            "[aqm]\nkind = \"avq\"\necn = true",
            "ecn = true",
            200,
            100,
        );
        let b = &r.summary.bottleneck;
        assert!(
            (b.utilization - 0.98).abs() <= 0.03,
            "{flows} flows: utilisation {}",
            b.utilization
        );
        assert!(
            b.queue_mean_pkts < 0.2 * 500.0,
            "{flows} flows: mean queue {}",
            b.queue_mean_pkts
        );
        assert_eq!(b.drops_overflow, 0, "{flows} flows");
        assert!(b.marks > 0);
        // The virtual link runs slower than the real one.
        let vc = common::param_mean(&r, "virtual_capacity", 100.0, 200.0);
        assert!(
            vc > 0.0 && vc < 0.98 * 10e6,
            "{flows} flows: virtual capacity {vc}"
        );
        assert!(records(&r, "virtual_queue") > 0);
    }
}

/// A lower tau gives a proportionally lower utilisation (eq. 3.12's
/// equilibrium x = tau C) and a shorter queue.
#[test]
fn avq_utilisation_follows_tau() {
    let hi = run_for(
        50,
        "[aqm]\nkind = \"avq\"\necn = true",
        "ecn = true",
        200,
        100,
    );
    let lo = run_for(
        50,
        "[aqm]\nkind = \"avq\"\necn = true\ntau = 0.9",
        "ecn = true",
        200,
        100,
    );
    let (h, l) = (&hi.summary.bottleneck, &lo.summary.bottleneck);
    assert!(
        (l.utilization - 0.9).abs() <= 0.02,
        "utilisation {}",
        l.utilization
    );
    assert!(l.utilization < h.utilization);
    assert!(
        l.queue_mean_pkts < h.queue_mean_pkts,
        "{} vs {}",
        l.queue_mean_pkts,
        h.queue_mean_pkts
    );
}

/// Without ECN, AVQ drops; the capacity update counts every arrival
/// (fig. 3.4), so it is the offered load, utilisation / (1 - loss rate),
/// that settles at tau, and the delivered utilisation is lower by the drop
/// rate.
#[test]
fn avq_drop_mode_holds_offered_load_at_tau() {
    let r = run_for(50, "[aqm]\nkind = \"avq\"", "", 200, 100);
    let b = &r.summary.bottleneck;
    let offered = b.utilization / (1.0 - b.loss_rate);
    assert!((offered - 0.98).abs() <= 0.02, "offered load {offered}");
    assert!(b.drops_early > 0 && b.marks == 0);
    assert!(b.drops_early > 10 * b.drops_overflow);
    assert!(
        b.queue_mean_pkts < 0.2 * 500.0,
        "mean queue {}",
        b.queue_mean_pkts
    );
}

/// Bad values are errors naming the field; resolved scenarios round-trip.
#[test]
fn blue_and_avq_decode() {
    let err = |aqm: &str| {
        let doc: Value = toml::from_str(&dumbbell(10, aqm, "")).unwrap();
        Scenario::from_value(doc).unwrap_err()
    };
    assert_eq!(err("[aqm]\nkind = \"blue\"\ndelta1 = 2").path, "aqm.delta1");
    assert_eq!(
        err("[aqm]\nkind = \"blue\"\nfreeze_time = 5").path,
        "aqm.freeze_time"
    );
    assert_eq!(
        err("[aqm]\nkind = \"blue\"\nthreshold = -3").path,
        "aqm.threshold"
    );
    assert_eq!(err("[aqm]\nkind = \"blue\"\nmax_p = 0.1").path, "aqm.max_p");
    assert_eq!(err("[aqm]\nkind = \"avq\"\ntau = 1.5").path, "aqm.tau");
    assert_eq!(err("[aqm]\nkind = \"avq\"\nalpha = 0").path, "aqm.alpha");
    let e = err("[aqm]\nkind = \"avq\"\ntau = 0");
    assert!(e.msg.contains("(0, 1]"), "{}", e.msg);
    for aqm in [
        "[aqm]\nkind = \"blue\"",
        "[aqm]\nkind = \"blue\"\nthreshold = 100\nfreeze_time = \"10ms\"\necn = true",
        "[aqm]\nkind = \"avq\"\ntau = 0.95\nalpha = 0.2",
    ] {
        let sc = scenario(&dumbbell(10, aqm, ""));
        let json = serde_json::to_string(&sc).unwrap();
        let back: Value = serde_json::from_str(&json).unwrap();
        let sc2 = Scenario::from_value(back).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert_eq!(json, serde_json::to_string(&sc2).unwrap());
    }
}

/// The example scenarios decode with the keys they set, and run (shortened
/// to 20 s here).
#[test]
fn example_scenarios_run() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/aqm");
    for (file, kind) in [("blue.toml", "blue"), ("avq.toml", "avq")] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect(file);
        let sc = scenario(&text);
        assert_eq!(sc.aqm.kind(), kind);
        let short = text
            .replace("duration = \"200s\"", "duration = \"20s\"")
            .replace("start = \"100s\"", "start = \"10s\"");
        let r = run(&short);
        let b = &r.summary.bottleneck;
        assert!(b.utilization > 0.8, "{file}: utilisation {}", b.utilization);
        assert!(b.marks > 0, "{file}: no marks");
    }
}
