//! A traffic group's `base_rtt` on the dumbbell: the access delays of its
//! flows are set so that each flow's two-way propagation delay is the RTT
//! drawn for it, 2 x (bottleneck_delay + 2 x access delay). Checked
//! against the flows' own first RTT samples, with windows too small to
//! queue; and the validation against the topology.

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use common::{run, scenario};

fn err(text: &str) -> (String, String) {
    let doc: Value = toml::from_str(text).expect("valid TOML");
    match Scenario::from_value(doc) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => (e.path.clone(), e.to_string()),
    }
}

/// Forward flows with RTTs drawn from 20-200 ms and reverse flows at a
/// fixed 40 ms, across a 10 ms bottleneck; `rwnd = 2` keeps the 100 Mbit/s
/// bottleneck's queue empty, so each flow's first RTT sample (its smoothed
/// RTT at the first sample after it) is its base RTT plus the
/// transmission of a 1500-byte packet and an ACK on each of the three
/// links (0.12 + 0.12 + 0.12 ms and 3 x 3.2 us).
const TEXT: &str = r#"
duration = "3s"
seed = 4
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "10ms"
access_rate = "100Mbps"
buffer = 500
[tcp]
packet_size = 1500
rwnd = 2
[[traffic]]
kind = "bulk"
flows = 40
start = { uniform = ["0s", "1s"] }
base_rtt = { uniform = ["20ms", "200ms"] }
[[traffic]]
kind = "bulk"
flows = 5
direction = "reverse"
base_rtt = "40ms"
[metrics]
sample_interval = "1ms"
flow_series = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44]
"#;

#[test]
fn measured_rtts_are_the_groups_base_rtts() {
    let r = run(TEXT);
    let base = &r.flows.base_rtt_s;
    // The drawn RTTs fill the range; the reverse group's are 40 ms exactly.
    let fwd = &base[..40];
    let lo = fwd.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = fwd.iter().cloned().fold(0.0, f64::max);
    assert!(fwd.iter().all(|&b| (0.020..=0.200).contains(&b)), "{fwd:?}");
    assert!(lo < 0.040 && hi > 0.180, "{lo} {hi}");
    assert!(base[40..].iter().all(|&b| b == 0.040), "{:?}", &base[40..]);
    // Each flow's least smoothed RTT (its first sample: nothing queues).
    let s = &r.flow_series;
    let mut min = vec![f64::INFINITY; 45];
    for (i, &f) in s.flow.iter().enumerate() {
        if s.srtt_s[i] > 0.0 {
            min[f as usize] = min[f as usize].min(s.srtt_s[i]);
        }
    }
    // 1500 bytes at 100 Mbit/s three times, a 40-byte ACK three times.
    let tx = 3.0 * (1500.0 * 8.0 / 1e8) + 3.0 * (40.0 * 8.0 / 1e8);
    for f in 0..45 {
        let d = min[f] - base[f];
        assert!(
            (tx - 1e-6..=tx + 0.5e-3).contains(&d),
            "flow {f}: least RTT {} against base {} (+{tx})",
            min[f],
            base[f]
        );
    }
}

/// The same seed gives the same RTTs, and the flows' draws do not depend
/// on the other groups: a flow's RTT comes from its own stream.
#[test]
fn base_rtt_draws_are_per_flow() {
    let a = run(TEXT);
    let b = run(&TEXT.replace("flows = 5\n", "flows = 1\n").replace(
        "flow_series = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44]",
        "",
    ));
    assert_eq!(a.flows.base_rtt_s[..40], b.flows.base_rtt_s[..40]);
}

/// A fixed base RTT is exact to the nanosecond, also where a quarter of
/// what the bottleneck leaves is not a whole nanosecond; a group without
/// one keeps the default 1 ms access links.
#[test]
fn fixed_base_rtt_is_exact() {
    let text = r#"
duration = "1s"
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "7ms"
[[traffic]]
kind = "bulk"
flows = 2
base_rtt = "40.000003ms"
[[traffic]]
kind = "cbr"
rate = "1Mbps"
base_rtt = "14ms"
[[traffic]]
kind = "web-simple"
sessions = 1
"#;
    let sc = scenario(text);
    let json = serde_json::to_value(&sc).unwrap();
    assert!(json["topology"].get("access_delay").is_none(), "{json}");
    let r = run(text);
    let ns: Vec<u64> = r
        .flows
        .base_rtt_s
        .iter()
        .map(|s| (s * 1e9).round() as u64)
        .collect();
    assert_eq!(ns, vec![40_000_003, 40_000_003, 14_000_000, 18_000_000]);
}

/// The resolved scenario reads back as itself (the default access delay
/// left out, so that a re-run does not see it as given).
#[test]
fn resolved_base_rtt_round_trips() {
    let sc = scenario(TEXT);
    let json = serde_json::to_string(&sc).unwrap();
    assert!(
        json.contains(r#""base_rtt":{"uniform":["20ms","200ms"]}"#),
        "{json}"
    );
    let doc: Value = serde_json::from_str(&json).unwrap();
    let again = Scenario::from_value(doc).unwrap_or_else(|e| panic!("{e}\n{json}"));
    assert_eq!(json, serde_json::to_string(&again).unwrap());
}

#[test]
fn base_rtt_is_validated_against_the_topology() {
    let head = "duration = \"5s\"\n[topology]\nbottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"20ms\"\n";
    // Below the bottleneck's round trip: the field, the value, the least allowed.
    let (p, m) = err(&format!(
        "{head}[[traffic]]\nkind = \"bulk\"\nbase_rtt = {{ uniform = [\"30ms\", \"200ms\"] }}\n"
    ));
    assert_eq!(p, "traffic[0].base_rtt");
    assert!(
        m.contains("30ms") && m.contains("give at least 40ms"),
        "{m}"
    );
    // Exactly the bottleneck's round trip: access links of no delay.
    let r = run(&format!(
        "{head}[[traffic]]\nkind = \"bulk\"\nbase_rtt = \"40ms\"\n"
    ));
    assert_eq!(r.flows.base_rtt_s, vec![0.040]);
    // With an access delay of the topology's: one or the other.
    for key in ["access_delay", "source_access_delay", "sink_access_delay"] {
        let (p, m) = err(&format!(
            "{head}{key} = \"5ms\"\n[[traffic]]\nkind = \"udp-onoff\"\nrate = \"1Mbps\"\n\
             [[traffic]]\nkind = \"web-simple\"\nbase_rtt = \"50ms\"\n"
        ));
        assert_eq!(p, "traffic[1].base_rtt");
        assert!(
            m.contains(&format!("topology.{key}")) && m.contains("50ms"),
            "{m}"
        );
    }
    // Not on a parking lot nor a custom topology; a web group's is `rtt`.
    let (p, m) = err(
        "duration = \"5s\"\n[topology]\nkind = \"parking-lot\"\nbottleneck_rate = \"10Mbps\"\n\
         [[traffic]]\nkind = \"bulk\"\nbase_rtt = \"50ms\"\n",
    );
    assert_eq!(p, "traffic[0].base_rtt");
    assert!(m.contains("long_rtt"), "{m}");
    let (p, m) = err(&format!(
        "{head}[[traffic]]\nkind = \"web\"\nsessions = 2\nbase_rtt = \"50ms\"\n"
    ));
    assert_eq!(p, "traffic[0].base_rtt");
    assert!(m.contains("`rtt`"), "{m}");
}
