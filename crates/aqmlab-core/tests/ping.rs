//! Latency probes (`kind = "ping"`): on an idle path every probe's round
//! trip is the base RTT plus its own transmission on each link, each probe
//! has its row, and the summary's percentiles and loss come from them; under
//! load the probes see the queue a scheme keeps (the RRUL measurement:
//! FQ-CoDel serves the sparse probe flow ahead of the bulk flows' queue).

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use common::run;

/// 10 Mbit/s bottleneck of 20 ms, access links of 100 Mbit/s and 15 ms
/// (base RTT 100 ms), one ping flow from 0 s at the default interval.
const IDLE: &str = r#"
duration = "10s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_rate = "100Mbps"
access_delay = "15ms"
buffer = 100
[[traffic]]
kind = "ping"
[metrics]
start = "2s"
"#;

#[test]
fn idle_path_probes_see_the_base_rtt_and_their_transmission() {
    let r = run(IDLE);
    let p = &r.pings;
    // One probe every 200 ms from 0 s to the run's end at 10 s inclusive:
    // 51, numbered from 1; the last one's echo is still on its way.
    assert_eq!(p.seq.len(), 51);
    assert!(p.rtt_s[50].is_nan());
    assert_eq!(p.seq[..3], [1, 2, 3]);
    assert!((p.sent_s[1] - 0.2).abs() < 1e-12);
    // 64 bytes take 51.2 us at 10 Mbit/s and 5.12 us at 100 Mbit/s; each
    // way crosses two access links and the bottleneck.
    let want = 0.1 + 2.0 * (51.2e-6 + 2.0 * 5.12e-6);
    for &rtt in &p.rtt_s[..50] {
        assert!((rtt - want).abs() < 1e-9, "{rtt} against {want}");
    }
    let s = r.summary.ping.expect("a ping summary");
    // Sent in [2 s, 10 s): 40 probes, all answered (the one sent at 9.8 s
    // at 9.9 s).
    assert_eq!((s.count, s.probes, s.answered), (1, 40, 40));
    assert_eq!(s.loss_rate, 0.0);
    assert!((s.rtt_p99_s - want).abs() < 1e-9 && (s.rtt_min_s - want).abs() < 1e-9);
    // Probes are not UDP traffic in the summary, nor TCP flows.
    assert!(r.summary.udp.is_none());
    assert_eq!(r.summary.flows.count, 0);
    // Without ping groups there is no table and no summary.
    let bulk = IDLE.replace("kind = \"ping\"", "kind = \"bulk\"");
    let b = run(&bulk);
    assert!(b.pings.seq.is_empty() && b.summary.ping.is_none());
}

fn loaded(aqm: &str) -> aqmlab_core::world::PingSummary {
    let text = format!(
        r#"
duration = "30s"
seed = 3
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_rate = "100Mbps"
access_delay = "15ms"
buffer = 200
[aqm]
kind = "{aqm}"
[tcp]
packet_size = 1500
[[traffic]]
kind = "bulk"
flows = 8
start = {{ uniform = ["0s", "1s"] }}
[[traffic]]
kind = "ping"
interval = "100ms"
[metrics]
start = "10s"
"#
    );
    run(&text).summary.ping.expect("a ping summary")
}

#[test]
fn under_load_probes_see_the_queue_the_scheme_keeps() {
    // Eight bulk flows fill DropTail's 200 packets (up to 240 ms at 1.2 ms
    // a packet): the probes wait behind them. FQ-CoDel puts the probe flow,
    // which never builds a queue, on its new list: it waits for at most the
    // packet in transmission and a quantum of one other flow.
    let dt = loaded("droptail");
    let fq = loaded("fq-codel");
    println!("droptail {dt:?}\nfq-codel {fq:?}");
    assert_eq!(dt.probes, 200);
    assert!(dt.rtt_p50_s > 0.2, "{dt:?}");
    assert!(fq.rtt_p99_s < 0.11, "{fq:?}");
    assert!(fq.rtt_p99_s < dt.rtt_min_s);
    // DropTail drops probes at the full buffer; FQ-CoDel drops from the
    // longest flow queue, never the probe flow's.
    assert!(dt.loss_rate > 0.0 && fq.loss_rate == 0.0);
}

#[test]
fn bad_ping_keys_are_named() {
    for (text, path, what) in [
        (
            "interval = \"0s\"",
            "traffic[0].interval",
            "0s is not allowed",
        ),
        ("packet_size = 20", "traffic[0].packet_size", "[40, 65535]"),
        ("rate = \"1Mbps\"", "traffic[0].rate", ""),
    ] {
        let doc: Value =
            toml::from_str(&IDLE.replace("kind = \"ping\"", &format!("kind = \"ping\"\n{text}")))
                .unwrap();
        let e = Scenario::from_value(doc).expect_err(text);
        assert_eq!(e.path, path, "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
}
