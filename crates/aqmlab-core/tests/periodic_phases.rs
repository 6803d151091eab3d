//! Periodic phases (`[metrics] phases` entries `{from, to, every, length,
//! offset}`): measured over their windows only, they partition a span as
//! plain phases do, and they change nothing of the run they measure.

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::world::PhaseSummary;
use common::run;

/// The bottleneck alternates 1 and 10 Mbit/s every 100 ms from 5 s (RFC
/// 7928 section 8.2.6's Experiment 2 on a shorter run), eight NewReno
/// flows through PIE; `phases` is the `[metrics]` line.
fn alternating(phases: &str) -> String {
    format!(
        r#"
duration = "15s"
seed = 3
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "1ms"
access_delay = "24ms"
buffer = 83
[aqm]
kind = "pie"
[[traffic]]
kind = "bulk"
flows = 8
start = {{ uniform = ["0s", "1s"] }}
[[schedule]]
at = "5s"
every = "200ms"
action = "link"
link = "bottleneck"
rate = "1Mbps"
[[schedule]]
at = "5100ms"
every = "200ms"
action = "link"
link = "bottleneck"
rate = "10Mbps"
[metrics]
start = "5s"
{phases}
"#
    )
}

const STATES: &str = r#"phases = [[5, 15], { from = "5s", to = "15s", every = "200ms", length = "100ms" }, { from = "5s", to = "15s", every = "200ms", length = "100ms", offset = "100ms" }]"#;

/// The counts of a phase's bottleneck.
fn counts(p: &PhaseSummary) -> [u64; 6] {
    let b = &p.bottleneck;
    [
        b.arrivals,
        b.departures,
        b.drops_early + b.drops_forced + b.drops_overflow,
        b.marks,
        p.flows.retransmits,
        p.flows.timeouts,
    ]
}

/// The two states' windows tile [5, 15 s]: every count of the plain phase
/// is the sum of theirs, the summed sojourn and the bits sent too; each
/// state measures 5 s in 50 windows; the 1 Mbit/s windows carry at most 1
/// Mbit/s, the 10 Mbit/s ones several times that.
#[test]
fn the_two_capacity_states_add_up_to_their_span() {
    let r = run(&alternating(STATES));
    let [all, slow, fast] = [0, 1, 2].map(|i| r.summary.phases[i].clone());
    for (s, offset) in [(&slow, 0.0), (&fast, 0.1)] {
        assert_eq!((s.start_s, s.end_s), (5.0, 15.0));
        assert_eq!((s.every_s, s.length_s), (Some(0.2), Some(0.1)));
        assert_eq!(s.offset_s, Some(offset));
        assert_eq!((s.windows, s.measured_s), (Some(50), Some(5.0)));
    }
    assert_eq!(all.every_s, None);
    let (c, a, b) = (counts(&all), counts(&slow), counts(&fast));
    for k in 0..c.len() {
        assert_eq!(c[k], a[k] + b[k], "count {k}: {c:?} = {a:?} + {b:?}");
    }
    let sojourn =
        |p: &PhaseSummary| p.bottleneck.queuing_delay_mean_s * p.bottleneck.departures as f64;
    let (s0, s1, s2) = (sojourn(&all), sojourn(&slow), sojourn(&fast));
    assert!((s0 - s1 - s2).abs() < 1e-9 * s0, "{s0} {s1} {s2}");
    // Bits sent: throughput x measured time.
    let bits = |p: &PhaseSummary, t: f64| p.bottleneck.throughput_bps * t;
    let (b0, b1, b2) = (bits(&all, 10.0), bits(&slow, 5.0), bits(&fast, 5.0));
    assert!((b0 - b1 - b2).abs() < 1e-6 * b0, "{b0} {b1} {b2}");
    // The capacity of each state is about its own rate (a rate change
    // takes effect once the packet in transmission has left, so a window's
    // first packet still goes at the other rate): utilisation is about
    // throughput over 1 or 10 Mbit/s.
    let (ts, tf) = (
        slow.bottleneck.throughput_bps,
        fast.bottleneck.throughput_bps,
    );
    assert!(ts < 1.02e6 && ts > 0.9e6, "{ts}");
    let (us, uf) = (slow.bottleneck.utilization, fast.bottleneck.utilization);
    assert!((us / (ts / 1e6) - 1.0).abs() < 0.05, "{us} {ts}");
    assert!((uf / (tf / 10e6) - 1.0).abs() < 0.05, "{uf} {tf}");
    assert!(tf > 3e6, "{tf}");
    // Goodput by delivery time: the states' add up to the span's (each
    // phase bounds a flow's in-order segments by those that reached the
    // receiver in it, so not to the byte).
    let g = |p: &PhaseSummary, t: f64| p.flows.goodput_bps_total * t;
    let (g0, g1, g2) = (g(&all, 10.0), g(&slow, 5.0), g(&fast, 5.0));
    assert!((g0 - g1 - g2).abs() < 0.01 * g0, "{g0} {g1} {g2}");
    // A packet's delay counts where it leaves the queue: those that leave
    // early in the 10 Mbit/s windows waited through the 1 Mbit/s ones
    // (seed 3: 82 ms mean against 43 ms).
    let (ds, df) = (
        slow.bottleneck.queuing_delay_mean_s,
        fast.bottleneck.queuing_delay_mean_s,
    );
    assert!(df > ds, "{ds} {df}");
    assert!(slow.bottleneck.departures * 5 < fast.bottleneck.departures);
}

/// Periodic phases measure a run without changing it: the main figures
/// are the same with and without them, and the same scenario and seed
/// give the same figures, phases included, to the bit.
#[test]
fn periodic_phases_change_nothing_they_measure() {
    let main = |text: &str| {
        let mut s = run(text).summary;
        s.phases.clear();
        s.wall_time_s = 0.0;
        s.events = 0; // the windows' own events
        serde_json::to_string(&s).unwrap()
    };
    assert_eq!(main(&alternating("")), main(&alternating(STATES)));
    let whole = |text: &str| {
        let mut s = run(text).summary;
        s.wall_time_s = 0.0;
        serde_json::to_string(&s).unwrap()
    };
    assert_eq!(whole(&alternating(STATES)), whole(&alternating(STATES)));
}

/// The resolved scenario writes a periodic phase as it reads it, so that a
/// run of the resolved scenario is the same run.
#[test]
fn a_resolved_periodic_phase_reads_back_the_same() {
    let sc = common::scenario(&alternating(STATES));
    let json = serde_json::to_string(&sc).unwrap();
    let v: Value = serde_json::from_str(&json).unwrap();
    let again = Scenario::from_value(v).unwrap();
    assert_eq!(again.metrics.phases, sc.metrics.phases);
}
