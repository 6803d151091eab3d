//! Set-ups of the seeds the scenario format once could not
//! say. Per-group TCP keys (item 11), web-simple sessions added and removed
//! by the schedule (12), the dumbbell's source and sink access delays (13),
//! per-purpose seeds (14). Fixed seeds; every run checks the accounting
//! identities.

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::world::World;
use aqmlab_core::RunResult;
use common::{run, scenario};

fn err(text: &str) -> (String, String) {
    let doc: Value = toml::from_str(text).expect("valid TOML");
    match Scenario::from_value(doc) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => (e.path.clone(), e.to_string()),
    }
}

/// The resolved scenario serialises to a document that decodes to itself.
fn round_trip(text: &str) {
    let sc = scenario(text);
    let json = serde_json::to_string(&sc).unwrap();
    let doc: Value = serde_json::from_str(&json).unwrap();
    let again = Scenario::from_value(doc).unwrap_or_else(|e| panic!("{e}\n{json}"));
    assert_eq!(json, serde_json::to_string(&again).unwrap());
}

const HEAD: &str = r#"
duration = "60s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "5ms"
buffer = 200
[tcp]
packet_size = 500
"#;

// ---------------------------------------------------------------- item 11

/// Section 5.5.4's mix: web-simple transfers of twelve 1 KB packets beside
/// 500-byte FTP. The group's `packet_size` sets its segments (every
/// response a whole number of 960-byte payloads) and its packets on the
/// wire; the bulk group keeps `[tcp]`'s 500 bytes.
#[test]
fn group_packet_size_sets_the_groups_segments() {
    let text = format!(
        "{HEAD}[[traffic]]\nkind = \"bulk\"\nflows = 10\nstart = {{ uniform = [\"0s\", \"2s\"] }}\n\
         [[traffic]]\nkind = \"web-simple\"\nsessions = 20\npacket_size = 1000\n"
    );
    let r = run(&text);
    let sizes = &r.responses.size_bytes;
    assert!(sizes.len() > 200, "{} responses", sizes.len());
    assert!(
        sizes.iter().all(|s| s % 960 == 0),
        "a size not of 960-byte segments"
    );
    let mean_segments = sizes.iter().sum::<u64>() as f64 / 960.0 / sizes.len() as f64;
    assert!(
        (mean_segments - 12.0).abs() < 1.5,
        "mean {mean_segments} segments"
    );
    // Bytes per departure on a bottleneck carrying one group only.
    let one = |extra: &str| -> f64 {
        let r = run(&format!(
            "{HEAD}[[traffic]]\nkind = \"bulk\"\nflows = 4\n{extra}\n[metrics]\nstart = \"10s\"\n"
        ));
        let b = &r.summary.bottleneck;
        b.throughput_bps * 50.0 / 8.0 / b.departures as f64
    };
    let (plain, big) = (one(""), one("packet_size = 1500"));
    println!("bytes per data packet: [tcp] {plain:.1}, group 1500: {big:.1}");
    assert!((plain - 500.0).abs() < 1.0, "{plain}");
    assert!((big - 1500.0).abs() < 1.0, "{big}");
}

/// The other per-group TCP keys reach the group's flows, the resolved
/// scenario shows them, and bad values name the group's field.
#[test]
fn group_tcp_keys_resolve_and_validate() {
    let text = format!(
        "{HEAD}[[traffic]]\nkind = \"bulk\"\nflows = 2\nvariant = \"reno\"\ndelayed_ack = true\ninitial_cwnd = 4\n\
         [[traffic]]\nkind = \"bulk\"\nflows = 2\n"
    );
    let sc = scenario(&text);
    let t0 = sc.traffic[0].tcp(&sc.tcp);
    let t1 = sc.traffic[1].tcp(&sc.tcp);
    assert_eq!(format!("{:?}", t0.variant), "Reno");
    assert!(t0.delayed_ack && t0.initial_cwnd == 4 && t0.packet_size == 500);
    assert_eq!(format!("{:?}", t1.variant), "NewReno");
    assert!(!t1.delayed_ack && t1.initial_cwnd == 1);
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["variant"], "reno");
    assert_eq!(json["traffic"][0]["initial_cwnd"], 4);
    assert!(json["traffic"][1].get("variant").is_none());
    round_trip(&text);
    round_trip(&format!(
        "{HEAD}[[traffic]]\nkind = \"web-simple\"\npacket_size = 1000\n\
         [[traffic]]\nkind = \"web\"\nsessions = 3\nrtt = \"80ms\"\npacket_size = 1500\n"
    ));
    let bad = |group: &str| err(&format!("{HEAD}[[traffic]]\nkind = \"bulk\"\n{group}\n"));
    let (p, m) = bad("packet_size = 40");
    assert_eq!(p, "traffic[0].packet_size");
    assert!(m.contains("[41, 65535]"), "{m}");
    let (p, m) = bad("variant = \"vegas\"");
    assert_eq!(p, "traffic[0].variant");
    assert!(m.contains("newreno"), "{m}");
    let (p, m) = bad("initial_cwnd = 0");
    assert_eq!(p, "traffic[0].initial_cwnd");
    assert!(m.contains("[1, 1000]"), "{m}");
    let (p, _) = bad("delayed_ack = 3");
    assert_eq!(p, "traffic[0].delayed_ack");
    // Run-wide timers stay in [tcp].
    let (p, m) = bad("min_rto = \"1s\"");
    assert_eq!(p, "traffic[0].min_rto");
    assert!(m.contains("unknown key"), "{m}");
}

// ---------------------------------------------------------------- item 12

const WEB_HEAD: &str = r#"
duration = "100s"
seed = 2
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "5ms"
[tcp]
packet_size = 1000
[[traffic]]
kind = "web-simple"
sessions = 1
think = "200ms"
"#;

/// Transfers of flow `f`: their start times.
fn starts_of(r: &RunResult, f: u32) -> Vec<f64> {
    (0..r.responses.flow.len())
        .filter(|&i| r.responses.flow[i] == f)
        .map(|i| r.responses.start_s[i])
        .collect()
}

/// Section 5.5.4: one more web-simple session every 20 s here (100 s in
/// the thesis), then two removed: each added session's first transfer
/// begins at its time (+ spread), a removed one finishes its transfer and
/// begins no other, the oldest session runs on.
#[test]
fn web_simple_sessions_added_and_removed_by_the_schedule() {
    let text = format!(
        "{WEB_HEAD}[[schedule]]\nat = \"20s\"\naction = \"web\"\nadd_sessions = 1\n\
         [[schedule]]\nat = \"40s\"\naction = \"web\"\nadd_sessions = 2\nspread = \"5s\"\n\
         [[schedule]]\nat = \"60s\"\naction = \"web\"\nremove_sessions = 2\n"
    );
    let r = run(&text);
    let s0 = starts_of(&r, 0);
    let s1 = starts_of(&r, 1);
    let s2 = starts_of(&r, 2);
    let s3 = starts_of(&r, 3);
    println!(
        "transfers: {} {} {} {}; first of 1: {:.3}, of 2: {:.3}, of 3: {:.3}; last of 2: {:.3}, of 3: {:.3}",
        s0.len(),
        s1.len(),
        s2.len(),
        s3.len(),
        s1[0],
        s2[0],
        s3[0],
        s2.last().unwrap(),
        s3.last().unwrap()
    );
    assert!(
        s0[0] < 1.0 && *s0.last().unwrap() > 95.0,
        "the first session runs on"
    );
    assert!((s1[0] - 20.0).abs() < 1e-9, "added at 20 s: {}", s1[0]);
    for s in [&s2, &s3] {
        assert!(
            s[0] >= 40.0 && s[0] <= 45.0,
            "added in [40, 45] s: {}",
            s[0]
        );
        assert!(*s.last().unwrap() < 60.0, "removed at 60 s");
    }
    assert!(
        *s1.last().unwrap() > 95.0,
        "the session of flow 1 is not among the two most recent"
    );
    // Flow 1 is active across the run after 20 s: it has about as many
    // transfers per second as flow 0.
    let rate0 = s0.len() as f64 / 100.0;
    let rate1 = s1.len() as f64 / 80.0;
    assert!((rate1 / rate0 - 1.0).abs() < 0.3, "{rate0} vs {rate1}");
    round_trip(&text);
}

/// A removed web-simple session completes the transfer under way (its
/// response is recorded) instead of being cut off.
#[test]
fn removed_web_simple_session_finishes_its_transfer() {
    let text = format!(
        "{}mean_packets = 400\n[[schedule]]\nat = \"10s\"\naction = \"web\"\nremove_sessions = 1\n",
        WEB_HEAD.replace("duration = \"100s\"", "duration = \"30s\"")
    );
    let r = run(&text);
    let ends: Vec<f64> = r.responses.end_s.clone();
    let starts = starts_of(&r, 0);
    // The transfer under way at 10 s began before 10 s and ended after it.
    let last_start = *starts.last().unwrap();
    assert!(last_start < 10.0, "no transfer begins after the removal");
    let last_end = *ends.last().unwrap();
    println!("last transfer {last_start:.3} -> {last_end:.3}");
    assert!(
        last_end > 10.0,
        "the transfer under way completes: {last_end}"
    );
}

/// `web` removal on a `web` group: a removed session begins no new page.
#[test]
fn web_sessions_removed_begin_no_new_page() {
    let text = r#"
duration = "60s"
seed = 3
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[[traffic]]
kind = "web"
sessions = 6
think = "1s"
rtt = "50ms"
[[schedule]]
at = "20s"
action = "web"
remove_sessions = 3
"#;
    let r = run(text);
    let rs = &r.responses;
    for f in 3..6u32 {
        let pages_before: Vec<u64> = (0..rs.flow.len())
            .filter(|&i| rs.flow[i] == f && rs.start_s[i] < 20.0)
            .map(|i| rs.page[i])
            .collect();
        let max_before = pages_before.iter().copied().max().unwrap_or(0);
        for i in (0..rs.flow.len()).filter(|&i| rs.flow[i] == f) {
            assert!(
                rs.page[i] <= max_before,
                "flow {f} began page {} after removal",
                rs.page[i]
            );
        }
    }
    for f in 0..3u32 {
        assert!(
            (0..rs.flow.len()).any(|i| rs.flow[i] == f && rs.start_s[i] > 40.0),
            "flow {f} runs on"
        );
    }
}

/// Validation: the `flows` action points web groups to `web`; removals
/// are counted against the sessions active; `web` needs a web group.
#[test]
fn web_schedule_errors() {
    let e = |sched: &str| err(&format!("{WEB_HEAD}{sched}"));
    let (p, m) = e("[[schedule]]\nat = \"1s\"\naction = \"flows\"\nstart = 1\n");
    assert_eq!(p, "schedule[0].action");
    assert!(
        m.contains("web-simple") && m.contains("add_sessions"),
        "{m}"
    );
    let (p, m) = e("[[schedule]]\nat = \"1s\"\naction = \"web\"\nremove_sessions = 2\n");
    assert_eq!(p, "schedule[0].remove_sessions");
    assert!(m.contains("more than the 1 sessions"), "{m}");
    let (p, _) = e("[[schedule]]\nat = \"1s\"\naction = \"web\"\n");
    assert_eq!(p, "schedule[0].add_sessions");
    let (p, _) =
        e("[[schedule]]\nat = \"1s\"\naction = \"web\"\nremove_sessions = 1\nspread = \"1s\"\n");
    assert_eq!(p, "schedule[0].spread");
    let (p, m) = err(&format!(
        "{HEAD}[[traffic]]\nkind = \"bulk\"\n[[schedule]]\nat = \"1s\"\naction = \"web\"\nadd_sessions = 1\n"
    ));
    assert_eq!(p, "schedule[0].group");
    assert!(m.contains("web or web-simple"), "{m}");
    // Adding then removing in order is fine.
    scenario(&format!(
        "{WEB_HEAD}[[schedule]]\nat = \"1s\"\naction = \"web\"\nadd_sessions = 2\n[[schedule]]\nat = \"2s\"\naction = \"web\"\nremove_sessions = 3\n"
    ));
}

// ---------------------------------------------------------------- item 13

/// Section 6.4: d "at the source links". Each side draws its own delay;
/// a flow's base RTT is 2 x (bottleneck + source + sink); a reverse flow's
/// source is on the right; `access-source` in the schedule moves the
/// senders' links only.
#[test]
fn source_and_sink_access_delays() {
    let text = r#"
duration = "20s"
seed = 4
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
source_access_delay = { uniform = ["20ms", "40ms"] }
sink_access_delay = "2ms"
[[traffic]]
kind = "bulk"
flows = 3
[[traffic]]
kind = "bulk"
flows = 2
direction = "reverse"
[[schedule]]
at = "10s"
action = "link"
link = "access-source"
delay = "50ms"
"#;
    let sc = scenario(text);
    let mut w = World::new(&sc);
    w.run_until(aqmlab_core::units::SimTime::from_secs(5));
    for f in 0..5usize {
        // Access links of flow f: 2 + 4f .. (left up, left down, right down, right up).
        let d: Vec<u64> = (0..4)
            .map(|k| w.link(2 + 4 * f + k).delay.0 / 1000)
            .collect();
        let (src, snk) = if f < 3 { (d[0], d[2]) } else { (d[2], d[0]) };
        assert_eq!(d[0], d[1]);
        assert_eq!(d[2], d[3]);
        assert!((20_000..=40_000).contains(&src), "flow {f}: {d:?}");
        assert_eq!(snk, 2_000, "flow {f}: {d:?}");
    }
    w.run_until(aqmlab_core::units::SimTime::from_secs(11));
    for f in 0..5usize {
        let d: Vec<u64> = (0..4)
            .map(|k| w.link(2 + 4 * f + k).delay.0 / 1000)
            .collect();
        let (src, snk) = if f < 3 { (d[0], d[2]) } else { (d[2], d[0]) };
        assert_eq!((src, snk), (50_000, 2_000), "flow {f}: {d:?}");
    }
    let r = run(text);
    for (f, rtt) in r.flows.base_rtt_s.iter().enumerate() {
        assert!(
            (rtt - 2.0 * (0.010 + 0.050 + 0.002)).abs() < 1e-12,
            "flow {f}: {rtt}"
        );
    }
    round_trip(text);
}

/// Without the side keys the results are those of `access_delay` alone;
/// with one side given the other keeps `access_delay`.
#[test]
fn access_delay_sides_default_and_validate() {
    let base = |topo: &str| {
        format!(
            "duration = \"30s\"\nseed = 2\n[topology]\nbottleneck_rate = \"10Mbps\"\n{topo}\n[[traffic]]\nkind = \"bulk\"\nflows = 5\nstart = {{ uniform = [\"0s\", \"2s\"] }}\n"
        )
    };
    let r = run(&base("access_delay = { uniform = [\"1ms\", \"9ms\"] }"));
    let s = run(&base(
        "access_delay = { uniform = [\"1ms\", \"9ms\"] }\nsource_access_delay = \"30ms\"",
    ));
    for f in 0..5 {
        let a = r.flows.base_rtt_s[f];
        let b = s.flows.base_rtt_s[f];
        // b = 2 (20 ms + 30 ms + sink), sink drawn in [1, 9] ms.
        assert!(a > 2.0 * 0.022 - 1e-12 && a < 2.0 * 0.038 + 1e-12, "{a}");
        assert!(b > 2.0 * 0.051 - 1e-12 && b < 2.0 * 0.059 + 1e-12, "{b}");
    }
    let (p, m) = err(&base(
        "access_delay = \"1ms\"\nsource_access_delay = \"2ms\"\nsink_access_delay = \"3ms\"",
    ));
    assert_eq!(p, "topology.access_delay");
    assert!(m.contains("unused"), "{m}");
    let (p, _) = err(&base(
        "sink_access_delay = { uniform = [\"9ms\", \"1ms\"] }",
    ));
    assert_eq!(p, "topology.sink_access_delay.uniform");
    let (p, _) = err(&base("source_access_delay = 5"));
    assert_eq!(p, "topology.source_access_delay");
    let (p, m) = err(&format!(
        "{}[[schedule]]\nat = \"1s\"\naction = \"link\"\nlink = \"access-left\"\ndelay = \"1ms\"\n",
        base("")
    ));
    assert_eq!(p, "schedule[0].link");
    assert!(
        m.contains("\"access-source\"") && m.contains("\"access-sink\""),
        "{m}"
    );
}

// ---------------------------------------------------------------- item 14

const SEEDS_BASE: &str = r#"
duration = "40s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = { uniform = ["1ms", "30ms"] }
buffer = 100
loss = { kind = "bernoulli", p = 0.001 }
[aqm]
kind = "red"
min_th = 10
max_th = 40
max_p = 0.1
[tcp]
packet_size = 1000
[[traffic]]
kind = "bulk"
flows = 10
start = { uniform = ["0s", "5s"] }
[[traffic]]
kind = "web"
sessions = 5
rtt = { uniform = ["40ms", "200ms"] }
"#;

/// The thesis' "seven times": `[seeds] rtt` redraws the RTTs and nothing
/// else (start times equal), `[seeds] start` the start times and nothing
/// else (RTTs equal); every purpose at the run's seed is the run without
/// `[seeds]`, bit for bit.
#[test]
fn seeds_per_purpose_vary_one_stream_only() {
    let with = |seeds: &str| run(&format!("{SEEDS_BASE}[seeds]\n{seeds}\n"));
    let a = run(SEEDS_BASE);
    let rtt = with("rtt = 3");
    let start = with("start = 3");
    let same = with("rtt = 1\nstart = 1\naqm = 1\nloss = 1\napp = 1");
    let ft = |r: &RunResult| (r.flows.base_rtt_s.clone(), r.flows.start_s.clone());
    let (a_rtt, a_start) = ft(&a);
    let (r_rtt, r_start) = ft(&rtt);
    let (s_rtt, s_start) = ft(&start);
    // Bulk flows 0..10 and the web sessions' flows 10..15: every RTT redrawn, starts kept.
    for f in 0..15 {
        assert_ne!(a_rtt[f], r_rtt[f], "flow {f}: rtt seed kept the RTT");
        assert_eq!(a_start[f].to_bits(), r_start[f].to_bits(), "flow {f}");
        assert_eq!(a_rtt[f].to_bits(), s_rtt[f].to_bits(), "flow {f}");
    }
    for f in 0..10 {
        assert_ne!(
            a_start[f], s_start[f],
            "flow {f}: start seed kept the start"
        );
    }
    // Same seeds everywhere: the same run.
    let (x, y) = (&a.summary, &same.summary);
    assert_eq!(x.events, y.events);
    assert_eq!(
        x.bottleneck.queue_mean_pkts.to_bits(),
        y.bottleneck.queue_mean_pkts.to_bits()
    );
    assert_eq!(
        x.flows.goodput_bps_total.to_bits(),
        y.flows.goodput_bps_total.to_bits()
    );
    assert_eq!(a.responses.size_bytes, same.responses.size_bytes);
    // The web sessions' object sizes come from the app stream: an rtt seed
    // leaves the first object of each session's first page as it was.
    let first = |r: &RunResult, f: u32| {
        (0..r.responses.flow.len())
            .find(|&i| r.responses.flow[i] == f)
            .map(|i| r.responses.size_bytes[i])
    };
    for f in 10..15 {
        if let (Some(x), Some(y)) = (first(&a, f), first(&rtt, f)) {
            assert_eq!(x, y, "session {f}");
        }
    }
    // The aqm and loss seeds change the run but not the RTTs or starts.
    for s in ["aqm = 9", "loss = 9", "app = 9"] {
        let r = with(s);
        assert_ne!(r.summary.events, a.summary.events, "{s} changed nothing");
        assert_eq!(ft(&r), (a_rtt.clone(), a_start.clone()), "{s}");
    }
    round_trip(&format!("{SEEDS_BASE}[seeds]\nrtt = 3\napp = 0\n"));
}

#[test]
fn seeds_table_validates() {
    let (p, m) = err(&format!("{SEEDS_BASE}[seeds]\nrtt = -1\n"));
    assert_eq!(p, "seeds.rtt");
    assert!(m.contains("negative"), "{m}");
    let (p, m) = err(&format!("{SEEDS_BASE}[seeds]\nrtts = 1\n"));
    assert_eq!(p, "seeds.rtts");
    assert!(m.contains("app, aqm, loss, rtt, start"), "{m}");
    let (p, _) = err(&format!("{SEEDS_BASE}[seeds]\nstart = \"x\"\n"));
    assert_eq!(p, "seeds.start");
    let (p, _) = err(&format!("{SEEDS_BASE}seeds = 3\n")
        .replace("seeds = 3\n", "")
        .replace("seed = 1", "seed = 1\nseeds = 3"));
    assert_eq!(p, "seeds");
}
