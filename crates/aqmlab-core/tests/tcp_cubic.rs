//! CUBIC (RFC 9438, `tcp.variant = "cubic"`) in whole runs: a loss cuts the
//! window by beta = 0.7 (of the window in whole segments, as Linux) where
//! NewReno halves it, and the same scenario and
//! seed give the same run. The window's cubic shape over time is checked
//! with hand-worked numbers in `transport/tcp/cc/cubic.rs`.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// One flow, 10 Mbit/s, 42 ms base RTT, a 60-packet DropTail buffer, the
/// flow's window sampled every millisecond.
fn one_flow(variant: &str) -> RunResult {
    run(&common::one_flow_droptail(
        &format!("variant = \"{variant}\""),
        "sample_interval = \"1ms\"\nflow_series = [0]\nstart = \"0s\"",
    ))
}

/// ssthresh after each congestion event over the window just before it
/// (events with more than four segments in the window).
fn cuts(r: &RunResult) -> Vec<f64> {
    events(r).map(|(w, s)| s / w).collect()
}

/// (window just before, ssthresh after) of each congestion event with
/// more than four segments in the window.
fn events(r: &RunResult) -> impl Iterator<Item = (f64, f64)> + '_ {
    let s = &r.flow_series;
    (1..s.cwnd.len())
        .filter(|&i| s.ssthresh[i] != s.ssthresh[i - 1] && s.ssthresh[i].is_finite())
        .filter(|&i| s.cwnd[i - 1] > 4.0)
        .map(|i| (s.cwnd[i - 1], s.ssthresh[i]))
}

#[test]
fn cubic_cuts_by_beta_where_newreno_halves() {
    let cubic = one_flow("cubic");
    let c: Vec<(f64, f64)> = events(&cubic).collect();
    // Cut from the same whole window, the steady cycle sets the same
    // ssthresh again, which `events` does not see; the flow had at least
    // ten fast retransmissions.
    assert!(c.len() >= 3, "{c:?}");
    assert!(cubic.summary.flows.fast_retransmits >= 10);
    // beta = 0.7 of the window in whole segments, as Linux's integer
    // arithmetic (717 / 1024): within one segment of 0.7 cwnd.
    for &(w, s) in &c {
        assert_eq!(s, ((w.floor() as u64 * 717) >> 10) as f64, "{c:?}");
        assert!((s - 0.7 * w).abs() < 1.0, "{c:?}");
    }
    let nr = one_flow("newreno");
    let newreno = cuts(&nr);
    // NewReno's steady cycle cuts to the same ssthresh every time, so
    // `cuts` (which sees changes of ssthresh) finds few; the flow had at
    // least ten fast retransmissions.
    assert!(!newreno.is_empty(), "{newreno:?}");
    assert!(
        nr.summary.flows.fast_retransmits >= 10,
        "{}",
        nr.summary.flows.fast_retransmits
    );
    // FlightSize / 2 with the flight a segment or so off the window.
    assert!(
        newreno.iter().all(|x| (x - 0.5).abs() < 0.01),
        "{newreno:?}"
    );
    // The link stays busy.
    let u = |r: &RunResult| r.summary.bottleneck.utilization;
    assert!(u(&cubic) > 0.9, "{}", u(&cubic));
}

#[test]
fn a_cubic_run_is_the_same_run_again() {
    let (a, b) = (one_flow("cubic"), one_flow("cubic"));
    assert_eq!(a.flow_series.cwnd, b.flow_series.cwnd);
    assert_eq!(a.summary.events, b.summary.events);
}
