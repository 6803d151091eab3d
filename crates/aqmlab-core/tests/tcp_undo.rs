//! A spurious retransmission timeout undone (`tcp.undo`) in whole runs:
//! the bottleneck's delay steps up and the ACKs stop for longer than the
//! timer, though nothing is lost. The undo's rules are checked by hand in
//! `transport/tcp/undo.rs`.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// One CUBIC flow of the linux profile (`undo` and `frto` as given) through a
/// 10 Mbit/s DropTail of one BDP, 100 ms base RTT, whose bottleneck delay
/// steps from 40 to 1000 ms each way at 10 s and back at 20 s; measured
/// from 5 s, the window traced every 10 ms.
fn spike(undo: bool, frto: bool) -> RunResult {
    run(&format!(
        r#"
duration = "30s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "40ms"
access_rate = "100Mbps"
access_delay = "5ms"
buffer = 84
[aqm]
kind = "droptail"
[tcp]
profile = "linux"
undo = {undo}
frto = {frto}
[[traffic]]
kind = "bulk"
flows = 1
[metrics]
start = "5s"
sample_interval = "10ms"
flow_series = [0]
[[schedule]]
at = "10s"
action = "link"
link = "bottleneck"
delay = "1000ms"
[[schedule]]
at = "20s"
action = "link"
link = "bottleneck"
delay = "40ms"
"#
    ))
}

/// The window's samples in [lo, hi) seconds.
fn window(r: &RunResult, lo: f64, hi: f64) -> Vec<f64> {
    let s = &r.flow_series;
    (0..s.time_s.len())
        .filter(|&i| s.time_s[i] >= lo && s.time_s[i] < hi)
        .map(|i| s.cwnd[i])
        .collect()
}

/// The step stops the ACKs for about 1.9 s and the timer fires (once, its
/// backoff then longer than the gap). With the undo, the first late ACK
/// echoes a timestamp from before the retransmission: the window before
/// the step comes back, and the flow keeps the link as full as before;
/// without it the flow starts again from one segment. Measured: a window
/// of 144 before the step; over 11.5-12 s at least 146 with the undo, 43
/// without; one timeout each; goodput 6.261 and 6.078 Mbit/s (the flow's
/// retransmissions over the run 442 and 357: the window kept fills the
/// buffer again at once). The kernel's CUBIC on the testbed, the same scenario
/// with two flows, undid both of its timeouts (`TCPLossUndo`), its windows
/// back at 106 and 46 segments 0.35 s after the timer, as here.
#[test]
fn a_delay_step_times_out_and_the_undo_restores_the_window() {
    let on = spike(true, true);
    let off = spike(false, false);
    let before = window(&on, 9.9, 10.0);
    let (w_on, w_off) = (window(&on, 11.5, 12.0), window(&off, 11.5, 12.0));
    let least = |w: &[f64]| w.iter().cloned().fold(f64::INFINITY, f64::min);
    eprintln!(
        "window before {:.0}; over 11.5-12 s at least {:.0} with the undo, {:.0} without; \
         timeouts {} ({} undone) / {} ({}); retransmissions {} / {}; goodput {:.3} / {:.3} \
         Mbit/s",
        before[0],
        least(&w_on),
        least(&w_off),
        on.summary.flows.timeouts,
        on.summary.flows.timeouts_undone,
        off.summary.flows.timeouts,
        off.summary.flows.timeouts_undone,
        on.summary.flows.retransmits,
        off.summary.flows.retransmits,
        on.flows.goodput_bps[0] * 1e-6,
        off.flows.goodput_bps[0] * 1e-6,
    );
    assert!(on.summary.flows.timeouts >= 1 && off.summary.flows.timeouts >= 1);
    assert_eq!(on.summary.flows.timeouts_undone, on.summary.flows.timeouts);
    assert_eq!(off.summary.flows.timeouts_undone, 0);
    assert!(least(&w_on) >= before[0], "{w_on:?} against {before:?}");
    assert!(
        least(&w_off) < 0.5 * before[0],
        "{w_off:?} against {before:?}"
    );
    assert!(on.flows.goodput_bps[0] > off.flows.goodput_bps[0]);
}

/// The flow series names the sender's loss-recovery state (`ca_state`, as
/// Linux's `tcpi_ca_state`): the flow passes through `disorder` into fast
/// recovery when the buffer overflows; after the delay step's timeout it
/// is in `loss` until what was outstanding is acknowledged, unless the
/// undo reopens it (then `open` again within the first ACKs after the
/// step). No ECN here, so never `cwr`.
#[test]
fn the_flow_series_names_the_loss_recovery_state() {
    let states = |r: &RunResult, lo: f64, hi: f64| -> Vec<&'static str> {
        let s = &r.flow_series;
        (0..s.time_s.len())
            .filter(|&i| s.time_s[i] >= lo && s.time_s[i] < hi)
            .map(|i| s.ca_state[i])
            .collect()
    };
    let (on, off) = (spike(true, true), spike(false, false));
    for r in [&on, &off] {
        let all = states(r, 0.0, 30.0);
        assert!(all.contains(&"recovery") && all.contains(&"open") && all.contains(&"disorder"));
        assert!(all
            .iter()
            .all(|s| ["open", "disorder", "recovery", "loss"].contains(s)));
    }
    assert!(states(&off, 10.0, 12.0).contains(&"loss"));
    assert!(states(&on, 11.5, 12.0).iter().all(|&s| s == "open"));
}

/// Without the echo's undo, F-RTO finds the same timeout spurious (the
/// first ACKs after the step deliver segments sent before the timer and
/// never sent again) and restores the window; the flow then stays open.
/// The ACK that undoes it also acknowledges the oldest segment, whose copy
/// the timer sent 0.36 s before, so RACK's newest send time is the copy's,
/// later than most of what is still on its way with the step's delay: an
/// ACK that ran RACK's detection would deem all of those lost when the
/// reordering timer ran out (126 segments at 11.47 s, the window 170 -> 45).
/// Linux runs it only for an ACK that SACKs, echoes CE, is a duplicate or
/// comes outside the open state, and the next ACK's timer replaces the
/// reordering timer; so does aqmlab. Measured: the window 144 before the
/// step; over 11.5-12 s at least 146; open from 11.2 to 20 s.
#[test]
fn an_undo_by_frto_keeps_the_window_and_the_flow_open() {
    let r = spike(false, true);
    let before = window(&r, 9.9, 10.0);
    let after = window(&r, 11.5, 12.0);
    let least = after.iter().cloned().fold(f64::INFINITY, f64::min);
    let s = &r.flow_series;
    let states: Vec<&str> = (0..s.time_s.len())
        .filter(|&i| s.time_s[i] >= 11.2 && s.time_s[i] < 20.0)
        .map(|i| s.ca_state[i])
        .collect();
    eprintln!(
        "window before {:.0}; over 11.5-12 s at least {least:.0}; timeouts {} ({} undone); \
         states from 11.2 to 20 s {:?}",
        before[0],
        r.summary.flows.timeouts,
        r.summary.flows.timeouts_undone,
        states.iter().collect::<std::collections::BTreeSet<_>>()
    );
    assert_eq!(r.summary.flows.timeouts, 1);
    assert_eq!(r.summary.flows.timeouts_undone, 1);
    assert!(least >= before[0], "{after:?} against {before:?}");
    assert!(states.iter().all(|&s| s == "open"), "{states:?}");
}
