//! Scenario-level tests of PI, ST-PI and REM. Each checks a
//! relation or a tolerance over fixed seeds; every run checks the
//! accounting identities.

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::RunResult;
use common::{dumbbell, param_at, param_mean, run, scenario};

// ---------------------------------------------------------------- PI

/// The thesis's section 5.5 setting: 100 NewReno flows, 10 Mbps, 100 ms
/// base RTT, 500-byte packets, buffer 500; PI with ns-2's a and b at 170 Hz.
fn pi_run(aqm_extra: &str, duration_s: u32, start_s: u32) -> RunResult {
    let aqm = format!("[aqm]\nkind = \"pi\"\n{aqm_extra}");
    run(&dumbbell(100, &aqm, "")
        .replace(
            "duration = \"100s\"",
            &format!("duration = \"{duration_s}s\""),
        )
        .replace("start = \"40s\"", &format!("start = \"{start_s}s\"")))
}

/// PI holds the mean queue within 15 % of q_ref (40 and 120 packets) once
/// settled (the thesis notes PI-40 takes about 100 s to settle, section 5.5.1).
#[test]
fn pi_holds_the_mean_queue_near_q_ref() {
    for q_ref in [40.0, 120.0] {
        let r = pi_run(&format!("q_ref = {q_ref}"), 200, 100);
        let b = &r.summary.bottleneck;
        let q = b.queue_mean_pkts;
        eprintln!(
            "PI q_ref {q_ref}: mean queue {q:.1}, util {:.4}, loss {:.4}",
            b.utilization, b.loss_rate
        );
        assert!(
            (q - q_ref).abs() <= 0.15 * q_ref,
            "q_ref {q_ref}: mean queue {q:.1}"
        );
        assert!(
            b.utilization > 0.98,
            "q_ref {q_ref}: util {}",
            b.utilization
        );
        assert!(b.drops_early > 10 * b.drops_overflow);
        // p is sampled into params.parquet.
        let p = param_at(&r, "p", 200.0);
        assert!(p > 0.0 && p < 1.0, "p = {p}");
    }
}

/// A PI designed for the link by eq. 6.3 (N, R, C from the scenario) has a
/// gain about 16 times ns-2's and settles within 20 s, where ns-2's gains
/// are still far above q_ref.
#[test]
fn pi_designed_for_the_link_settles_faster_than_ns2_gains() {
    let designed = pi_run("q_ref = 40\ndesign = true", 60, 20);
    let ns2 = pi_run("q_ref = 40", 60, 20);
    let qd = designed.summary.bottleneck.queue_mean_pkts;
    let qn = ns2.summary.bottleneck.queue_mean_pkts;
    eprintln!("PI q_ref 40, 20-60 s: designed {qd:.1}, ns-2 gains {qn:.1}");
    assert!((qd - 40.0).abs() <= 0.15 * 40.0, "designed: {qd:.1}");
    assert!(qn > 1.3 * 40.0, "ns-2 gains: {qn:.1}");
    let a = param_at(&designed, "a", 60.0);
    assert!(a > 10.0 * 1.822e-5, "designed a = {a:e}");
}

// ---------------------------------------------------------------- ST-PI

/// 100 NewReno flows at 10 Mbps, 500-byte packets, buffer 1000 (section
/// 6.4's buffer), no ECN; the AQM starts from section 6.4's PI (a = 7.288e-5,
/// b = 7.264e-5, q_ref = 150, 170 Hz).
fn st_pi_run(kind: &str, bottleneck_delay: &str, access_delay: &str) -> RunResult {
    run(&format!(
        r#"
duration = "150s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "{bottleneck_delay}"
access_delay = {access_delay}
buffer = 1000
[aqm]
kind = "{kind}"
a = 7.288e-5
b = 7.264e-5
q_ref = 150
[tcp]
packet_size = 500
[[traffic]]
kind = "bulk"
flows = 100
start = {{ uniform = ["0s", "5s"] }}
[metrics]
start = "80s"
"#
    ))
}

/// Chapter 6's claim (section 6.4.1, table 6-1): ST-PI lowers q_ref (and
/// with it the queue) when the round-trip time is small and raises it when
/// the round-trip time is large, where PI keeps q_ref = 150 whatever the
/// RTT. Two RTTs run separately: 30 ms and about 780 ms (access delays
/// uniform in 90-150 ms, as the initial d of section 6.4.1). 150 s each:
/// since RFC 6582's careful rule is applied exactly (docs/fidelity.md item
/// 20) the long RTT's first large-variance step comes at 123.7 s on seed 1 (q_ref
/// 150 -> 213.6; seeds 2 and 3: at 52.3 and 85.6 s), after the 120 s this
/// test ran before.
#[test]
fn st_pi_q_ref_follows_the_round_trip_time() {
    let short = st_pi_run("st-pi", "5ms", "\"5ms\"");
    let long = st_pi_run("st-pi", "150ms", "{ uniform = [\"90ms\", \"150ms\"] }");
    let pi_short = st_pi_run("pi", "5ms", "\"5ms\"");
    let (qs, ql) = (
        param_at(&short, "q_ref", 150.0),
        param_at(&long, "q_ref", 150.0),
    );
    eprintln!(
        "ST-PI q_ref at 150 s: {qs:.1} (RTT 30 ms), {ql:.1} (RTT ~780 ms); util {:.4} / {:.4}",
        short.summary.bottleneck.utilization, long.summary.bottleneck.utilization
    );
    assert!(qs < 0.6 * 150.0, "short RTT: q_ref {qs:.1}");
    assert!(ql > 150.0, "long RTT: q_ref {ql:.1}");
    assert!(ql > 2.0 * qs, "q_ref {ql:.1} (long) vs {qs:.1} (short)");
    // q_ref changes are recorded when they happen (take_changed), at PI
    // sampling instants that are off the 10 ms sampling grid.
    let p = &short.params;
    let off_grid = (0..p.time_s.len())
        .filter(|&i| p.name[i] == "q_ref")
        .filter(|&i| ((p.time_s[i] * 100.0).round() - p.time_s[i] * 100.0).abs() > 1e-6)
        .count();
    assert!(off_grid >= 1, "no q_ref change recorded");
    // At the short RTT the queue follows the lowered q_ref, well below PI's.
    let q_st = short.summary.bottleneck.queue_mean_pkts;
    let q_pi = pi_short.summary.bottleneck.queue_mean_pkts;
    eprintln!(
        "RTT 30 ms, 80-150 s: mean queue ST-PI {q_st:.1} (mean q_ref {:.1}), PI {q_pi:.1}",
        param_mean(&short, "q_ref", 80.0, 150.0)
    );
    let qs_mean = param_mean(&short, "q_ref", 80.0, 150.0);
    assert!(
        (q_st - qs_mean).abs() <= 0.2 * qs_mean,
        "ST-PI queue {q_st:.1} vs mean q_ref {qs_mean:.1}"
    );
    assert!((q_pi - 150.0).abs() <= 0.1 * 150.0, "PI queue {q_pi:.1}");
    assert!(short.summary.bottleneck.utilization > 0.99);
}

// ---------------------------------------------------------------- REM

/// Section 4.1 of `002_80945567bf68047d.txt`: one 64 Mbps link, 80 ms base
/// RTT, buffer 120 packets, 1000-byte packets, `flows` NewReno bulk flows
/// starting within `spread_s`; the queue is measured from `start_s`.
fn rem_text(
    aqm: &str,
    ecn: bool,
    duration_s: u32,
    flows: u32,
    spread_s: u32,
    start_s: u32,
) -> String {
    format!(
        r#"
duration = "{duration_s}s"
seed = 1
[topology]
bottleneck_rate = "64Mbps"
bottleneck_delay = "30ms"
access_delay = "5ms"
access_rate = "1Gbps"
buffer = 120
{aqm}
[tcp]
packet_size = 1000
ecn = {ecn}
[[traffic]]
kind = "bulk"
flows = {flows}
start = {{ uniform = ["0s", "{spread_s}s"] }}
[metrics]
start = "{start_s}s"
"#
    )
}

/// Run length and measurement start for the 320-flow runs started at once:
/// the price needs about 35 s to reach its level (it grows by at most
/// gamma alpha (120 - 20) per 2 ms period, 5 per second). Since RFC 6582's
/// careful rule is applied exactly (docs/fidelity.md item 20) the rate form's queue
/// settles later: 28.1 packets over 40-60 s (seeds 2-5: 20.9-26.9), 21.8
/// over 60-100 s (seeds 2, 3: 20.7, 21.3); so 100 s, measured from 60 s.
const REM_320_TIMES: (u32, u32) = (100, 60);

/// One period of the section 4.1 experiment: its flows, and the
/// bottleneck's mean queue, loss rate and utilisation over it.
struct Period {
    flows: u64,
    queue: f64,
    loss: f64,
    util: f64,
}

/// The experiment of `002_80945567bf68047d.txt` section 4.1 (figure 2):
/// 64 Mbps, 80 ms RTT, buffer 120 packets, 1000-byte packets; 20 NewReno
/// bulk flows at time 0 and 20 more every 50 s until 320 are active (750 s),
/// then `extra_s` more seconds at 320. Returns the figures of each 50 s
/// period (`[[metrics]] phases`), and when `extra_s` >= 100 those of the
/// run's last 100 s.
fn rem_figure_2(aqm: &str, tcp: &str, extra_s: u32) -> Vec<Period> {
    let ecn = aqm.contains("ecn = true");
    let mut phases: Vec<String> = (0..16)
        .map(|k| format!("[{}, {}]", 50 * k, 50 * (k + 1)))
        .collect();
    if extra_s >= 100 {
        phases.push(format!("[{}, {}]", 700 + extra_s, 800 + extra_s));
    }
    let mut text =
        rem_text(aqm, ecn, 800 + extra_s, 20, 1, 0).replace("[tcp]\n", &format!("[tcp]\n{tcp}\n"));
    text.push_str(&format!("phases = [{}]\n", phases.join(", ")));
    for k in 1..16 {
        text.push_str(&format!(
            "[[schedule]]\nat = \"{}s\"\naction = \"flows\"\nstart = 20\n",
            50 * k
        ));
    }
    let r = run(&text);
    r.summary
        .phases
        .iter()
        .map(|ph| Period {
            flows: ph.flows.count,
            queue: ph.bottleneck.queue_mean_pkts,
            loss: ph.bottleneck.loss_rate,
            util: ph.bottleneck.utilization,
        })
        .collect()
}

fn show(name: &str, periods: &[Period]) {
    for p in periods {
        eprintln!(
            "{name}: {:3} flows: mean queue {:5.1}, loss {:.5}, util {:.4}",
            p.flows, p.queue, p.loss, p.util
        );
    }
}

/// Section 4.1, figure 2 (left): as the sources grow from 20 to 320 (the
/// window from about 32 to about 2 packets), REM with dropping holds the
/// mean queue around b* = 20 in every period, while DropTail's mean queue
/// steadily increases; REM keeps the utilisation above DropTail's.
///
/// Measured (seed 1): REM 20.1, 22.4, 22.4, ... 26.3 (160 flows), ... 23.1
/// (all periods within 20.1-26.3), utilisation 0.88 then 0.956-0.992.
#[test]
fn rem_holds_the_queue_near_b_star_as_flows_grow() {
    let rem = rem_figure_2("[aqm]\nkind = \"rem\"", "", 0);
    let droptail = rem_figure_2("", "", 0);
    show("REM", &rem);
    show("DropTail", &droptail);
    assert_eq!(rem.len(), 16);
    for (k, (r, d)) in rem.iter().zip(&droptail).enumerate() {
        assert_eq!(r.flows, 20 * (k as u64 + 1), "period {k}");
        // (6.0 before the TCP fixes of docs/fidelity.md items 1-2; 26.3 at 160 flows since.)
        assert!(
            (r.queue - 20.0).abs() <= 6.5,
            "REM, {} flows: mean queue {:.1}",
            r.flows,
            r.queue
        );
        if k >= 1 {
            assert!(r.util > d.util, "{} flows: utilisation", r.flows);
            assert!(r.util > 0.95, "{} flows: utilisation {}", r.flows, r.util);
        }
    }
    // DropTail's queue grows: each 100-flow step raises it, and at 320
    // flows it is well above b*.
    let dq: Vec<f64> = droptail.iter().map(|p| p.queue).collect();
    for k in [0, 4, 9] {
        assert!(dq[k + 5] > dq[k] + 5.0, "DropTail queue {dq:?}");
    }
    assert!(dq[15] > 3.0 * 20.0, "DropTail queue {dq:?}");
}

/// The price update of eq. 2 (measured input rate) holds the queue near b*
/// too, in the hardest case (320 flows, all started in the first 5 s).
#[test]
fn rem_rate_form_holds_the_queue_near_b_star() {
    let (d, s) = REM_320_TIMES;
    let aqm = "[aqm]\nkind = \"rem\"\nform = \"rate\"";
    let r = run(&rem_text(aqm, false, d, 320, 5, s));
    let q = r.summary.bottleneck.queue_mean_pkts;
    eprintln!(
        "REM eq. 2, 320 flows: mean queue {q:.1}, loss {:.4}",
        r.summary.bottleneck.loss_rate
    );
    assert!((q - 20.0).abs() <= 8.0, "mean queue {q:.1}");
}

/// REM with ECN marking in the same experiment: "the loss rate under REM
/// with marking is nearly zero regardless of the number of sources"
/// (section 4.1), and the utilisation is higher than DropTail's.
///
/// Before the ECN fix of docs/fidelity.md item 2 the mean queue departed
/// from figure 2 while the load grew (up to 52.4 at 320 flows): every ECE
/// ACK but one opened the window, so the price had to climb far higher
/// than the flows' true answer to marks needs, and lagged. With RFC 3168's
/// rule it holds b* throughout.
///
/// Measured (seed 1, ECT retransmissions): loss 0.0047 in the first period
/// (the 20 flows' slow start), then 0.0015, 0.0007, ... at most 4.4e-4
/// from 140 flows on, 0 from 300; mean queue 20.4, 22.2, ... 27.3, 26.4.
#[test]
fn rem_with_ecn_is_nearly_lossless() {
    // Retransmissions ECT, as in the paper's ns-2 (aqmlab's default follows
    // RFC 3168 section 6.1.5 and drops them instead of marking).
    let rem = rem_figure_2(
        "[aqm]\nkind = \"rem\"\necn = true",
        "ect_retransmits = true",
        200,
    );
    show("REM+ECN", &rem);
    assert_eq!(rem.len(), 17);
    // Utilisation: above 0.94 in the 40-flow period (the new flows' slow
    // start; 0.9465 here, 0.943-0.958 over seeds 1-5, where DropTail keeps
    // 0.87-0.88; 0.9578 before RFC 6582's careful rule was applied exactly,
    // docs/fidelity.md item 20) and above 0.965 from 60 flows on (0.969-0.994).
    for p in &rem[1..] {
        assert!(p.loss < 2e-3, "{} flows: loss {}", p.flows, p.loss);
        let floor = if p.flows <= 40 { 0.94 } else { 0.965 };
        assert!(p.util > floor, "{} flows: util {}", p.flows, p.util);
    }
    // From 140 flows on (windows of 4-5 packets and less) no loss at all
    // but for a few overflows when 20 new flows start. (Below 2e-4 before
    // the ECN fix of docs/fidelity.md item 2, when the queue lagged far
    // above b* instead: 4.4e-4 at 140 flows since ECE ACKs stopped opening
    // the window.)
    for p in &rem[6..] {
        assert!(p.loss < 5e-4, "{} flows: loss {}", p.flows, p.loss);
    }
    // The queue stays near b* while the load is moderate, lags while the
    // price climbs, and settles back near b* at 320 flows.
    for p in &rem[..5] {
        assert!(
            (p.queue - 20.0).abs() <= 8.0,
            "{} flows: {:.1}",
            p.flows,
            p.queue
        );
    }
    // Since ECE ACKs no longer open the window (docs/fidelity.md item 2) the queue
    // holds near b* while the load grows too (20.4-27.3; before: up to
    // 52.4 at 320 flows, bounded by 60 here).
    for p in &rem {
        assert!(
            (p.queue - 20.0).abs() <= 8.0,
            "{} flows: {:.1}",
            p.flows,
            p.queue
        );
    }
    let last = &rem[16];
    assert!(
        (last.queue - 20.0).abs() <= 5.0,
        "320 flows, [900, 1000] s: mean queue {:.1}",
        last.queue
    );
}

// ---------------------------------------------------------------- files

/// The resolved scenario of each kind (defaults filled in) decodes to itself.
#[test]
fn resolved_scenarios_round_trip() {
    for aqm in [
        "[aqm]\nkind = \"pi\"",
        "[aqm]\nkind = \"pi\"\ndesign = true",
        "[aqm]\nkind = \"pi\"\ndesign = { flows = 10, rtt = \"100ms\", capacity = \"10Mbps\" }",
        "[aqm]\nkind = \"st-pi\"\nmode = \"byte\"\necn = true",
        "[aqm]\nkind = \"st-pi\"\nq_ref_max = 200\nvariance_centre = \"adaptive\"",
        "[aqm]\nkind = \"rem\"\nform = \"rate\"",
    ] {
        let sc = scenario(&dumbbell(10, aqm, ""));
        let json = serde_json::to_string(&sc).unwrap();
        let back: Value = serde_json::from_str(&json).unwrap();
        let sc2 = Scenario::from_value(back).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert_eq!(json, serde_json::to_string(&sc2).unwrap());
    }
}

/// Bad values are scenario errors naming the field.
#[test]
fn bad_values_name_the_field() {
    for (aqm, path) in [
        ("kind = \"pi\"\nsampling_freq = -1", "aqm.sampling_freq"),
        ("kind = \"pi\"\na = 1e-5\ndesign = true", "aqm.design"),
        ("kind = \"st-pi\"\nh_s = 0.9", "aqm.h_s"),
        (
            "kind = \"st-pi\"\nvariance_centre = \"median\"",
            "aqm.variance_centre",
        ),
        ("kind = \"rem\"\nphi = 0.9", "aqm.phi"),
        (
            "kind = \"rem\"\nupdate_interval = \"0ms\"",
            "aqm.update_interval",
        ),
        ("kind = \"rem\"\nprice = 1", "aqm.price"),
    ] {
        let text = dumbbell(10, &format!("[aqm]\n{aqm}"), "");
        let doc: Value = toml::from_str(&text).unwrap();
        let e = Scenario::from_value(doc).unwrap_err();
        assert_eq!(e.path, path, "{aqm}: {e}");
    }
}

/// The example scenarios of `scenarios/aqm/` are valid.
#[test]
fn example_scenarios_are_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/aqm");
    for (file, kind) in [
        ("pi.toml", "pi"),
        ("st-pi.toml", "st-pi"),
        ("st-pi-capacity.toml", "st-pi"),
        ("rem.toml", "rem"),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let sc = scenario(&text);
        assert_eq!(sc.aqm.kind(), kind, "{file}");
    }
}
