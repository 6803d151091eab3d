//! `tcp.profile`: a named set of `[tcp]` defaults that the keys a scenario
//! gives then refine; the seeds' ns-2 sets as profiles give the same runs
//! as the keys written out; contradictions are refused naming the field.

use crate::common;

use aqmlab_core::scenario::{
    LimitedTransmitSends, LossSsthresh, PartialAckTimer, RecoveryExit, Scenario, SynLossCut,
    TcpVariant, TimeoutInRecovery, Value,
};
use aqmlab_core::units::SimTime;

fn with_tcp(tcp: &str) -> String {
    format!(
        "duration = \"20s\"\nseed = 3\n[topology]\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"20ms\"\naccess_delay = \"15ms\"\nbuffer = 100\n[aqm]\nkind = \"red\"\nmin_th = 20\nmax_th = 60\n[tcp]\n{tcp}\n[[traffic]]\nkind = \"bulk\"\nflows = 10\nstart = {{ uniform = [\"0s\", \"2s\"] }}\n[metrics]\nstart = \"5s\"\n"
    )
}

fn err(text: &str) -> String {
    let doc: Value = toml::from_str(text).expect("valid TOML");
    Scenario::from_value(doc).expect_err("refused").to_string()
}

#[test]
fn linux_profile_sets_the_kernels_defaults_and_keys_refine_it() {
    let s = common::scenario(&with_tcp("profile = \"linux\""));
    let t = s.tcp;
    assert_eq!(t.variant, TcpVariant::Cubic);
    assert_eq!((t.initial_cwnd, t.packet_size), (10, 1500));
    assert!(t.delayed_ack && !t.ecn_hold && t.byte_counting);
    assert_eq!(t.delack_timeout, SimTime::from_millis(40));
    assert_eq!(t.initial_rto, SimTime::from_secs(1));
    assert_eq!(t.min_rto, SimTime::from_millis(200));
    assert_eq!(t.max_rto, SimTime::from_secs(120));
    assert!(t.undo() && t.cubic_linux() && t.delack_linux());
    assert_eq!(t.syn_loss_cut, SynLossCut::Linux);
    // A key refines the profile.
    let s = common::scenario(&with_tcp(
        "profile = \"linux\"\ninitial_cwnd = 4\nvariant = \"reno\"",
    ));
    assert_eq!((s.tcp.initial_cwnd, s.tcp.variant), (4, TcpVariant::Reno));
    assert_eq!(s.tcp.packet_size, 1500);
    // The Linux profile runs: SACK recoveries, no collapse.
    let r = common::run(&with_tcp("profile = \"linux\""));
    assert!(r.summary.flows.sack_recoveries > 0);
    assert!(
        r.summary.bottleneck.utilization > 0.9,
        "{}",
        r.summary.bottleneck.utilization
    );
}

/// The thesis' ns-2.35 set written as keys and as `profile = "ns2-2009"`
/// give the same run; likewise the REM paper's 2001 set.
#[test]
fn ns2_profiles_are_the_seeds_sets() {
    let t = common::scenario(&with_tcp("profile = \"ns2-2009\"")).tcp;
    assert!(t.ect_retransmits);
    assert_eq!(t.clock_tick, SimTime::from_millis(10));
    assert_eq!(t.loss_ssthresh, LossSsthresh::Ns2);
    assert_eq!(t.recovery_exit, RecoveryExit::Ssthresh);
    assert_eq!(t.limited_transmit_sends, LimitedTransmitSends::Next);
    assert_eq!(t.timeout_in_recovery, TimeoutInRecovery::Cut);
    assert!(t.cwr_on_retransmit());
    let t = common::scenario(&with_tcp("profile = \"ns2-2001\"")).tcp;
    assert!(t.ect_retransmits && !t.limited_transmit);
    assert!(!t.cwr_on_retransmit());
    assert_eq!(t.partial_ack_timer, PartialAckTimer::Every);
    assert_eq!(t.loss_ssthresh, LossSsthresh::Flight);
    for (profile, keys) in [
        (
            "ns2-2009",
            "ect_retransmits = true\ncwr_on_retransmit = true\nclock_tick = \"10ms\"\nloss_ssthresh = \"ns2\"\nrecovery_exit = \"ssthresh\"\nlimited_transmit_sends = \"next\"\ntimeout_in_recovery = \"cut\"",
        ),
        (
            "ns2-2001",
            "limited_transmit = false\npartial_ack_timer = \"every\"\nect_retransmits = true\ntimeout_in_recovery = \"cut\"",
        ),
    ] {
        let a = common::run(&with_tcp(&format!("profile = \"{profile}\"")));
        let b = common::run(&with_tcp(keys));
        assert!(a.summary.flows.fast_retransmits > 0);
        assert_eq!(a.flows.goodput_bps, b.flows.goodput_bps, "{profile}");
        assert_eq!(a.summary.events, b.summary.events, "{profile}");
    }
}

/// `syn_loss_cut` takes `true`, `false` or `"linux"`, and the resolved
/// scenario lists it as it was written.
#[test]
fn syn_loss_cut_takes_a_switch_or_linux() {
    for (text, want, listed) in [
        ("", SynLossCut::Cut, "true"),
        ("syn_loss_cut = false", SynLossCut::Keep, "false"),
        ("syn_loss_cut = \"linux\"", SynLossCut::Linux, "\"linux\""),
        (
            "profile = \"linux\"\nsyn_loss_cut = true",
            SynLossCut::Cut,
            "true",
        ),
    ] {
        let s = common::scenario(&with_tcp(text));
        assert_eq!(s.tcp.syn_loss_cut, want, "{text}");
        let json = serde_json::to_string(&s.tcp).unwrap();
        assert!(
            json.contains(&format!("\"syn_loss_cut\":{listed}")),
            "{json}"
        );
    }
    for bad in ["\"rfc5681\"", "1"] {
        let e = err(&with_tcp(&format!("syn_loss_cut = {bad}")));
        assert!(
            e.contains("tcp.syn_loss_cut: expected true, false or \"linux\", found"),
            "{e}"
        );
    }
}

/// `syn_linear_timeouts`: on in the linux profile, off otherwise, listed
/// in the resolved scenario only when on; a boolean.
#[test]
fn syn_linear_timeouts_are_linuxs_in_the_profile() {
    for (text, want) in [
        ("", false),
        ("profile = \"linux\"", true),
        ("profile = \"linux\"\nsyn_linear_timeouts = false", false),
        ("syn_linear_timeouts = true", true),
    ] {
        let s = common::scenario(&with_tcp(text));
        assert_eq!(s.tcp.syn_linear_timeouts(), want, "{text}");
        let json = serde_json::to_string(&s.tcp).unwrap();
        assert_eq!(
            json.contains("\"syn_linear_timeouts\":true"),
            want,
            "{json}"
        );
    }
    let e = err(&with_tcp("syn_linear_timeouts = 4"));
    assert!(
        e.contains("tcp.syn_linear_timeouts: expected true or false, found"),
        "{e}"
    );
}

#[test]
fn bad_profiles_are_refused_naming_the_field() {
    let e = err(&with_tcp("profile = \"freebsd\""));
    assert!(
        e.contains("tcp.profile: unknown value \"freebsd\"; allowed: \"aqmlab\", \"linux\", \"ns2-2001\", \"ns2-2009\""),
        "{e}"
    );
    let e = err(&with_tcp("profile = \"ns2-2009\"\nvariant = \"cubic\""));
    assert!(
        e.contains("tcp.variant: \"cubic\" contradicts profile = \"ns2-2009\""),
        "{e}"
    );
}
