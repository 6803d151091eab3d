//! `tcp.cwnd_validation` (Linux's `tcp_is_cwnd_limited`, on in the linux
//! profile): a sender held back by something other than its window does
//! not grow the window.

use crate::common;

/// One linux-profile flow whose receiver offers 20 segments on a path of
/// 35 (10 Mbit/s, 42 ms): the window leaves slow start nowhere near a loss
/// and, with the switch, stops at twice the 20 segments the receiver lets
/// out (slow start may grow to twice the most segments outstanding, and
/// outside it the window never limits the sender); without it, every ACK
/// grows the window as if the window were what held the sender back.
#[test]
fn a_window_the_receiver_holds_back_stops_at_twice_the_segments_out() {
    let last_cwnd = |switch: bool| {
        let r = common::run(&common::one_flow_droptail(
            &format!("profile = \"linux\"\nrwnd = 20\ncwnd_validation = {switch}"),
            "start = \"0s\"\nsample_interval = \"100ms\"\nflow_series = [0]",
        ));
        assert_eq!(r.summary.bottleneck.drops_overflow, 0);
        *r.flow_series.cwnd.last().expect("samples")
    };
    let (on, off) = (last_cwnd(true), last_cwnd(false));
    assert_eq!(on, 40.0);
    assert!(off > 1000.0, "without the switch the window grew to {off}");
}

/// Written without SACK the switch is refused, naming the key; the linux
/// profile without SACK turns it off.
#[test]
fn cwnd_validation_needs_sack() {
    let text = common::one_flow_droptail("sack = false\ncwnd_validation = true", "");
    let doc: aqmlab_core::scenario::Value = toml::from_str(&text).expect("valid TOML");
    let e = aqmlab_core::scenario::Scenario::from_value(doc).expect_err("refused");
    assert!(e.to_string().contains("tcp.cwnd_validation"), "{e}");
    let s = common::scenario(&common::one_flow_droptail(
        "profile = \"linux\"\nsack = false\nrack = false\nrtt_estimator = \"timed\"",
        "",
    ));
    assert!(!s.tcp.cwnd_validation());
    assert!(
        common::scenario(&common::one_flow_droptail("profile = \"linux\"", ""))
            .tcp
            .cwnd_validation()
    );
}
