//! Traffic kinds beyond bulk TCP: cbr, udp-onoff.

use crate::common;

use common::run;

/// ON/OFF UDP at density rho: each of n flows sends rho C / n while ON
/// (`003_b277268f444f7691.txt` section 5.5.5), ON and OFF exponential with
/// mean 1 s, so the group's long-run mean rate is rho C x ON / (ON + OFF).
/// With DropTail and 100 bulk flows the TCP flows get the remainder.
#[test]
fn udp_onoff_density_and_tcp_remainder() {
    let r = run(r#"
duration = "300s"
seed = 5
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 500
[tcp]
packet_size = 500
[[traffic]]
kind = "bulk"
flows = 100
start = { uniform = ["0s", "5s"] }
[[traffic]]
kind = "udp-onoff"
flows = 100
density = 0.9
[metrics]
start = "20s"
"#);
    let u = r.summary.udp.as_ref().expect("udp summary");
    assert_eq!(u.count, 100);
    let target = 0.9 * 10e6 * 0.5;
    assert!(
        (u.sent_bps - target).abs() < 0.05 * target,
        "sent {} vs {target}",
        u.sent_bps
    );
    let b = &r.summary.bottleneck;
    assert!(b.utilization > 0.97, "{}", b.utilization);
    // The bulk flows' goodput (payload) is the rest of the link, less
    // headers (40 of 500 bytes) and their own losses.
    let rest = b.throughput_bps - u.delivered_bps;
    let tcp = r.summary.flows.goodput_bps_total;
    assert!(tcp > 0.85 * rest && tcp < rest, "tcp {tcp} of {rest}");
    assert!(tcp > 3.5e6, "{tcp}");
    // UDP does not back off: its loss rate is the queue's.
    assert!(u.loss_rate > 0.0 && (u.loss_rate - b.loss_rate).abs() < 0.5 * b.loss_rate + 0.005);
}

/// A CBR flow on an uncongested path delivers exactly its rate, and a
/// scheduled density change takes effect.
#[test]
fn cbr_rate_and_scheduled_change() {
    let r = run(r#"
duration = "40s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
buffer = 100
[[traffic]]
kind = "cbr"
flows = 2
rate = "1Mbps"
packet_size = 1000
[[schedule]]
at = "20s"
action = "udp"
group = 0
density = 0.4
[metrics]
start = "1s"
phases = [[1, 20], [21, 40]]
"#);
    let p = &r.summary.phases;
    let a = p[0].udp.as_ref().unwrap();
    let b = p[1].udp.as_ref().unwrap();
    // 2 x 1 Mb/s, then density 0.4 of 10 Mb/s shared: 2 x 2 Mb/s.
    assert!((a.sent_bps - 2e6).abs() < 2e6 * 0.002, "{}", a.sent_bps);
    assert!((b.sent_bps - 4e6).abs() < 4e6 * 0.002, "{}", b.sent_bps);
    assert!(b.loss_rate < 1e-3);
    assert_eq!(r.summary.bottleneck.drops_overflow, 0);
}

/// `sizes = "fixed"`: every transfer of a `web-simple` session carries
/// `mean_packets` segments (50 x 960 payload bytes of 1000-byte packets),
/// and the resolved scenario writes the key as it reads it, so that a run
/// of the resolved scenario is the same run.
#[test]
fn web_simple_fixed_sizes() {
    let text = r#"
duration = "20s"
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "20ms"
access_delay = "5ms"
[tcp]
packet_size = 1000
[[traffic]]
kind = "web-simple"
sessions = 3
mean_packets = 49.7
sizes = "fixed"
[metrics]
start = "2s"
"#;
    let r = run(text);
    let sizes = &r.responses.size_bytes;
    assert!(sizes.len() > 30, "{}", sizes.len());
    assert!(sizes.iter().all(|&b| b == 50 * 960), "{sizes:?}");
    let sc = common::scenario(text);
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["sizes"], "fixed");
    let again =
        aqmlab_core::scenario::Scenario::from_value(serde_json::from_value(json).unwrap()).unwrap();
    assert_eq!(
        serde_json::to_value(&again).unwrap(),
        serde_json::to_value(&sc).unwrap()
    );
}

/// `web-simple` sessions: every transfer is recorded; a session's next
/// transfer starts only after the previous one is fully acknowledged (so
/// after its last byte arrived, plus at least the ACK's way back); on an
/// uncongested link response times are a few RTTs.
#[test]
fn web_simple_sessions() {
    let r = run(r#"
duration = "60s"
seed = 2
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "20ms"
access_delay = "5ms"
buffer = 1000
[tcp]
packet_size = 1000
[[traffic]]
kind = "web-simple"
sessions = 20
start = { uniform = ["0s", "2s"] }
[metrics]
start = "5s"
"#);
    let w = r.summary.web.as_ref().expect("web summary");
    assert!(w.completed > 500, "{}", w.completed);
    let t = &r.responses;
    // Think time 0.5 s and ~0.2-0.6 s per transfer: ~1.5 transfers/s/session.
    let mut by_flow: std::collections::BTreeMap<u32, Vec<(f64, f64)>> = Default::default();
    for i in 0..t.flow.len() {
        by_flow
            .entry(t.flow[i])
            .or_default()
            .push((t.start_s[i], t.end_s[i]));
    }
    assert_eq!(by_flow.len(), 20);
    // Every completed transfer was closed: the client's FIN, answered by
    // the server's FIN/ACK (the few in flight at the end aside).
    let all = r.responses.flow.len() as u64;
    let w_all = r.summary.web.as_ref().unwrap();
    assert!(
        w_all.fins_sent >= w.completed && w_all.fins_sent <= all,
        "{w_all:?}"
    );
    assert!(w_all.fin_acks_sent + 20 >= w_all.fins_sent && w_all.fin_acks_sent <= w_all.fins_sent);
    for v in by_flow.values() {
        for pair in v.windows(2) {
            // One-way delay back to the sender: 5 + 20 + 5 ms.
            assert!(pair[1].0 >= pair[0].1 + 0.030, "{pair:?}");
        }
    }
    // Base RTT 60 ms; a 12-packet transfer with a handshake and slow start
    // from 1 segment takes about 5 RTTs; the tail is longer.
    assert!(
        w.response_time_p50_s > 0.12 && w.response_time_p50_s < 0.5,
        "{w:?}"
    );
    assert_eq!(r.summary.bottleneck.loss_rate, 0.0);
    // Mean payload per transfer: 12 packets of 960 bytes, within 10 %.
    let mean = t.size_bytes.iter().sum::<u64>() as f64 / t.size_bytes.len() as f64;
    assert!((mean / 960.0 - 12.0).abs() < 1.2, "{mean}");
}
