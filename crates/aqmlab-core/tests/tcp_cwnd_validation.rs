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

fn refused(tcp: &str) -> String {
    let text = common::one_flow_droptail(tcp, "");
    let doc: aqmlab_core::scenario::Value = toml::from_str(&text).expect("valid TOML");
    aqmlab_core::scenario::Scenario::from_value(doc)
        .expect_err("refused")
        .to_string()
}

/// Written without SACK the switch is refused, naming the key and the
/// value; the linux profile without SACK turns it off; a value other than
/// true, false and "linux-2020" is refused naming the three.
#[test]
fn cwnd_validation_needs_sack() {
    let e = refused("sack = false\ncwnd_validation = true");
    assert!(
        e.contains("tcp.cwnd_validation") && e.contains("true is not allowed"),
        "{e}"
    );
    let e = refused("sack = false\ncwnd_validation = \"linux-2020\"");
    assert!(
        e.contains("\"linux-2020\" is not allowed without SACK"),
        "{e}"
    );
    let e = refused("profile = \"linux\"\ncwnd_validation = \"linux-6\"");
    assert!(
        e.contains("tcp.cwnd_validation") && e.contains("\"linux-2020\""),
        "{e}"
    );
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

/// `"linux-2020"`: Linux's record before its fixes of 2020 and 2022 in place of 6.x's (on in the
/// profile), listed in the resolved scenario as such; the receiver-held
/// flow's window stops at twice its segments out under either.
#[test]
fn the_record_of_2020_is_a_choice_of_the_key() {
    let s = common::scenario(&common::one_flow_droptail(
        "profile = \"linux\"\ncwnd_validation = \"linux-2020\"",
        "",
    ));
    assert!(s.tcp.cwnd_validation() && s.tcp.cwnd_validation_2020());
    let r = common::run(&common::one_flow_droptail(
        "profile = \"linux\"\nrwnd = 20\ncwnd_validation = \"linux-2020\"",
        "start = \"0s\"\nsample_interval = \"100ms\"\nflow_series = [0]",
    ));
    assert_eq!(*r.flow_series.cwnd.last().expect("samples"), 40.0);
}
