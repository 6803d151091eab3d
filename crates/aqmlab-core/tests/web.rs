//! `[[traffic]] kind = "web"`: the web-browsing model of
//! `000_0675317d310dd341.txt` and `001_e060da456e213f64.txt`.
//!
//! The object-size acceptance (mean 7.2 KB, top 15 % of objects carrying
//! 75-85 % of the bytes) is a unit test beside the distribution
//! (`scenario/web.rs`, `object_size_sample`).

use crate::common;

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::RunResult;
use common::{run, scenario};
use std::collections::BTreeMap;

/// `000_...`'s first step: the model on an uncongested 1 Gbps dumbbell
/// (1 Gbps access links), 1500-byte packets, measured from 10 s.
fn uncongested(load: &str, http: &str, duration: &str) -> String {
    format!(
        r#"
duration = "{duration}"
seed = 1
[topology]
bottleneck_rate = "1Gbps"
bottleneck_delay = "1ms"
buffer = 2000
access_rate = "1Gbps"
[tcp]
packet_size = 1500
[[traffic]]
kind = "web"
offered_load = "{load}"
http = "{http}"
[metrics]
start = "10s"
"#
    )
}

/// [`uncongested`] at 1 Mbit/s with HTTP/1.0, the `web` group's load given
/// by `keys` (its number of sessions and the keys under test), measured
/// from 0 s.
fn sessions_from_zero(duration: &str, keys: &str) -> String {
    uncongested("1Mbps", "1.0", duration)
        .replace("offered_load = \"1Mbps\"", keys)
        .replace("start = \"10s\"", "start = \"0s\"")
}

/// `000_...`'s second step: a 100 Mbps bottleneck with RED* (RED that
/// marks ECN-capable packets above max_th instead of dropping them;
/// gentle off, so above max_th every packet is signalled: ECT ones
/// marked, the others dropped) and ECN, with or without ECN+. The
/// thresholds, 50 and 150 packets (6 and 18 ms at 100 Mb/s), are this
/// test's choice: the excerpt of `000_...` does not give RED's.
fn red_star(load: &str, ecn_plus: bool, duration: &str, seed: u64) -> String {
    format!(
        r#"
duration = "{duration}"
seed = {seed}
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "1ms"
buffer = 500
access_rate = "1Gbps"
[aqm]
kind = "red"
min_th = 50
max_th = 150
max_p = 0.1
w_q = 0.002
gentle = false
ecn = true
above_max = "mark"
[tcp]
packet_size = 1500
ecn = true
ecn_plus = {ecn_plus}
[[traffic]]
kind = "web"
offered_load = "{load}"
[metrics]
start = "10s"
"#
    )
}

/// Response time over the session's base RTT, for the responses that
/// ended in the measurement interval.
fn rtt_ratios(r: &RunResult) -> Vec<(f64, u32)> {
    let t = &r.responses;
    (0..t.flow.len())
        .filter(|&i| t.end_s[i] >= r.summary.measure_start_s)
        .map(|i| {
            (
                t.response_time_s[i] / r.flows.base_rtt_s[t.flow[i] as usize],
                t.object[i],
            )
        })
        .collect()
}

/// Share of the responses ended in the measurement interval that took at
/// most `t` seconds (the response-time CDF at `t`).
fn cdf_at(r: &RunResult, t: f64) -> f64 {
    let x = &r.responses;
    let sel: Vec<f64> = (0..x.flow.len())
        .filter(|&i| x.end_s[i] >= r.summary.measure_start_s)
        .map(|i| x.response_time_s[i])
        .collect();
    sel.iter().filter(|&&v| v <= t).count() as f64 / sel.len() as f64
}

/// Acceptance: the load the model offers to an uncongested 1 Gbps link is
/// within 10 % of `offered_load` (`000_...` measures it this way), for
/// HTTP/1.0 and 1.1; response times sit at their lower bound: no HTTP/1.0
/// response is faster than 2 base RTTs (SYN, SYN/ACK, request, response),
/// and most take exactly about that (a one-segment response).
#[test]
fn offered_load_and_uncongested_response_times() {
    for http in ["1.0", "1.1"] {
        let wall = std::time::Instant::now();
        let r = run(&uncongested("90Mbps", http, "40s"));
        let wall = wall.elapsed().as_secs_f64();
        let b = &r.summary.bottleneck;
        let w = r.summary.web.as_ref().expect("web summary");
        let ratio = b.throughput_bps / 90e6;
        eprintln!(
            "http {http}: sessions {}, realised {:.2} Mb/s ({ratio:.3} of offered), {} responses, p50 {:.3} s, wall {wall:.2} s",
            r.flows.flow.len(),
            b.throughput_bps / 1e6,
            w.completed,
            w.response_time_p50_s
        );
        assert!((ratio - 1.0).abs() < 0.10, "http {http}: {ratio}");
        assert_eq!(b.loss_rate, 0.0);
        assert_eq!(w.synack_drops + w.syn_drops + w.syn_retransmits, 0);
        // 90 Mb/s of 7.2 KB objects: about 1500 responses a second.
        assert!(w.completed > 30 * 1200, "{}", w.completed);
        let x = rtt_ratios(&r);
        let mut all: Vec<f64> = x.iter().map(|p| p.0).collect();
        all.sort_by(f64::total_cmp);
        let med = all[all.len() / 2];
        eprintln!(
            "  response time / base RTT: min {:.3}, median {med:.3}, p90 {:.3}",
            all[0],
            all[all.len() * 9 / 10]
        );
        // A handshake (1 RTT) and one window; persistent requests 1 RTT.
        for &(q, object) in &x {
            let floor = if http == "1.0" || object == 0 {
                2.0
            } else {
                1.0
            };
            assert!(q >= floor - 1e-6, "http {http}: {q} RTTs (object {object})");
        }
        assert!(med < 3.0, "median {med} RTTs");
    }
}

/// Sessions fetch their pages' objects one after another: within a page
/// the object indices run 0, 1, ... and each request starts no earlier
/// than the previous response ended (HTTP/1.1: exactly then).
#[test]
fn pages_fetch_objects_in_order() {
    for http in ["1.0", "1.1"] {
        let r = run(&format!(
            r#"
duration = "30s"
seed = 4
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "2ms"
access_rate = "1Gbps"
[tcp]
packet_size = 1500
[[traffic]]
kind = "web"
sessions = 60
http = "{http}"
think = "1s"
objects = 4
"#
        ));
        let t = &r.responses;
        let mut pages: BTreeMap<(u32, u64), Vec<usize>> = BTreeMap::new();
        for i in 0..t.flow.len() {
            pages.entry((t.flow[i], t.page[i])).or_default().push(i);
        }
        assert!(pages.len() > 500, "{}", pages.len());
        let mut multi = 0;
        for rows in pages.values() {
            for (k, &i) in rows.iter().enumerate() {
                assert_eq!(t.object[i] as usize, k);
            }
            for pair in rows.windows(2) {
                let (a, b) = (pair[0], pair[1]);
                assert!(t.start_s[b] >= t.end_s[a] - 1e-12);
                if http == "1.1" {
                    assert!((t.start_s[b] - t.end_s[a]).abs() < 1e-9);
                }
                multi += 1;
            }
        }
        assert!(multi > 500, "{multi}");
        // Mean objects per page: 4 (geometric), over complete pages.
        let n = pages.values().map(|v| v.len()).sum::<usize>() as f64 / pages.len() as f64;
        assert!(n > 3.0 && n < 4.6, "{n}");
    }
}

/// Acceptance (`000_...` figure 3): RED* with ECN at 90 % load (the
/// paper's "lightly congested" case) drops SYN/ACKs (they are not
/// ECN-capable, so a signal drops them while data is marked); each costs
/// the client a 3 s SYN timeout, and the response-time CDF is clearly worse
/// than with ECN+, whose ECN-capable SYN/ACKs are marked instead. Two
/// seeds: at 0.5 s the gap is a few points (ECN+ flows wait out RFC 3168
/// holds at one segment too), at 2 s, past the SYN timeout, it is the
/// dropped share. (Run at 105 % load before the ECN fix of docs/fidelity.md
/// item 2: since ECE ACKs stop
/// opening the window both variants hold more there, and the 0.5 s gap
/// fell to 0.027; at 90 % it is 0.046 for seed 1.)
#[test]
fn red_star_drops_synacks_unless_ecn_plus() {
    let wall = std::time::Instant::now();
    let mut gap_half = 0.0;
    for seed in [1, 2] {
        let ecn = run(&red_star("90Mbps", false, "35s", seed));
        let plus = run(&red_star("90Mbps", true, "35s", seed));
        let (we, wp) = (
            ecn.summary.web.clone().unwrap(),
            plus.summary.web.clone().unwrap(),
        );
        let (ce, cp) = (cdf_at(&ecn, 0.5), cdf_at(&plus, 0.5));
        let (ce2, cp2) = (cdf_at(&ecn, 2.0), cdf_at(&plus, 2.0));
        eprintln!(
            "seed {seed} ECN : SYN/ACKs {} dropped {} ({:.1} %), CDF(0.5 s) {ce:.3}, CDF(2 s) {ce2:.3}, util {:.3}",
            we.synacks_sent,
            we.synack_drops,
            100.0 * we.synack_drops as f64 / we.synacks_sent as f64,
            ecn.summary.bottleneck.utilization
        );
        eprintln!(
            "seed {seed} ECN+: SYN/ACKs {} dropped {}, marked {}, CDF(0.5 s) {cp:.3}, CDF(2 s) {cp2:.3}, util {:.3}",
            wp.synacks_sent,
            wp.synack_drops,
            wp.synack_marks,
            plus.summary.bottleneck.utilization
        );
        // A share of the SYN/ACKs is dropped, and each drop costs a SYN timeout.
        assert!(
            we.synack_drops as f64 > 0.02 * we.synacks_sent as f64,
            "{we:?}"
        );
        assert!(we.syn_retransmits >= we.synack_drops / 2, "{we:?}");
        // ECN+ removes most of those drops: its SYN/ACKs are marked instead.
        assert!(wp.synack_drops * 10 <= we.synack_drops, "{wp:?}");
        assert!(wp.synack_marks > 0);
        assert!(
            cp > ce,
            "seed {seed}: CDF(0.5 s): ECN {ce:.3}, ECN+ {cp:.3}"
        );
        // Past the 3 s SYN timeout the gap is the share of connections
        // whose SYN/ACK was dropped (5.1 % and 3.5 % of SYN/ACKs: gaps of
        // 0.057 and 0.037): at least half of it.
        let dropped = we.synack_drops as f64 / we.synacks_sent as f64;
        assert!(
            cp2 > ce2 + 0.5 * dropped,
            "seed {seed}: CDF(2 s): ECN {ce2:.3}, ECN+ {cp2:.3}, dropped {dropped:.3}"
        );
        // The 3 s timeouts show in the tail.
        assert!(we.response_time_p99_s > 3.0 && wp.response_time_p99_s < 3.0);
        gap_half += (cp - ce) / 2.0;
    }
    eprintln!(
        "mean CDF(0.5 s) gap {gap_half:.3}; wall {:.2} s",
        wall.elapsed().as_secs_f64()
    );
    assert!(gap_half > 0.03, "{gap_half}");
}

/// `http = "webtraf"` (ns-2's WebTraf, the web model `000_...` cites as
/// [11]; docs/fidelity.md, item 7): two connections per object. On the
/// uncongested link the offered load still comes out within 10 %, and no
/// response is faster than 3.5 base RTTs (request connection: SYN,
/// SYN/ACK, request, ACK; response connection: SYN, SYN/ACK, response),
/// where HTTP/1.0's floor is 2. Under RED* with ECN at 90 % load three
/// packets per object that are not ECN-capable cross the congested queue
/// (the server's SYN/ACK, its ACK of the request and its SYN): ECN+ takes
/// the SYN/ACK drops away but not the others, so the share of responses
/// within 0.5 s gains less than with HTTP/1.0 (0.026 against 0.053) and
/// stays far below it (0.71-0.73 against 0.85-0.91), and 4.5 % of the
/// responses still take over 2 s with ECN+ (HTTP/1.0: 0.4 %).
#[test]
fn webtraf_spends_two_connections_per_object() {
    let r = run(&uncongested("90Mbps", "webtraf", "40s"));
    let b = &r.summary.bottleneck;
    let w = r.summary.web.as_ref().expect("web summary");
    let ratio = b.throughput_bps / 90e6;
    let mut q: Vec<f64> = rtt_ratios(&r).iter().map(|p| p.0).collect();
    q.sort_by(f64::total_cmp);
    eprintln!(
        "webtraf uncongested: {ratio:.3} of offered, {} responses, RTTs min {:.3} median {:.3}",
        w.completed,
        q[0],
        q[q.len() / 2]
    );
    assert!((ratio - 1.0).abs() < 0.10, "{ratio}");
    assert_eq!(
        w.synack_drops + w.syn_retransmits + w.request_retransmits,
        0
    );
    assert!(
        q[0] >= 3.5 - 1e-6 && q[q.len() / 2] < 4.5,
        "{} {}",
        q[0],
        q[q.len() / 2]
    );
    let webtraf = |plus: bool| {
        let sc = red_star("90Mbps", plus, "35s", 1)
            .replace("kind = \"web\"\n", "kind = \"web\"\nhttp = \"webtraf\"\n");
        assert!(sc.contains("webtraf"));
        run(&sc)
    };
    let (ecn, plus) = (webtraf(false), webtraf(true));
    let (e10, p10) = (
        run(&red_star("90Mbps", false, "35s", 1)),
        run(&red_star("90Mbps", true, "35s", 1)),
    );
    let (we, wp) = (
        ecn.summary.web.clone().unwrap(),
        plus.summary.web.clone().unwrap(),
    );
    let (ce, cp) = (cdf_at(&ecn, 0.5), cdf_at(&plus, 0.5));
    let (ce10, cp10) = (cdf_at(&e10, 0.5), cdf_at(&p10, 0.5));
    let two = [&ecn, &plus, &e10, &p10].map(|r| cdf_at(r, 2.0));
    eprintln!(
        "CDF(2 s): webtraf ECN {:.3} ECN+ {:.3}; HTTP/1.0 ECN {:.3} ECN+ {:.3}",
        two[0], two[1], two[2], two[3]
    );
    eprintln!(
        "RED* 90 %: webtraf CDF(0.5 s) ECN {ce:.3} ECN+ {cp:.3} (SYN/ACK drops {} -> {}, SYN drops {} -> {}, requests sent again {} -> {}); HTTP/1.0 ECN {ce10:.3} ECN+ {cp10:.3}",
        we.synack_drops, wp.synack_drops, we.syn_drops, wp.syn_drops,
        we.request_retransmits, wp.request_retransmits
    );
    assert!(we.synack_drops > 0 && wp.synack_drops * 10 <= we.synack_drops);
    // What ECN+ leaves: the servers' SYNs and ACKs of requests are dropped.
    assert!(wp.syn_drops > 0 && wp.request_retransmits > 0, "{wp:?}");
    // ECN+ gains less within 0.5 s, and past the 3 s SYN timeout it
    // leaves several times HTTP/1.0's share of slow responses.
    assert!(cp - ce < 0.75 * (cp10 - ce10), "{ce} {cp} {ce10} {cp10}");
    assert!(1.0 - two[1] > 5.0 * (1.0 - two[3]), "{two:?}");
    assert!(ce < ce10 - 0.1 && cp < cp10 - 0.1);
}

/// `teardown = false`: no FIN and no FIN/ACK (ns-2's one-way TCP has no
/// FIN), for every connection pattern; the responses still all complete,
/// and under RED* the queue then holds no closing packets, so that fewer
/// packets arrive at it.
#[test]
fn teardown_false_sends_no_closing_packets() {
    for http in ["1.0", "1.1", "webtraf"] {
        let with = red_star("90Mbps", false, "12s", 1).replace(
            "kind = \"web\"\n",
            &format!("kind = \"web\"\nhttp = \"{http}\"\n"),
        );
        let without = with.replace("kind = \"web\"\n", "kind = \"web\"\nteardown = false\n");
        assert!(without.contains("teardown = false"));
        let (a, b) = (run(&with), run(&without));
        let (wa, wb) = (
            a.summary.web.clone().unwrap(),
            b.summary.web.clone().unwrap(),
        );
        eprintln!(
            "{http}: FINs {} -> {}, FIN/ACKs {} -> {}, completed {} -> {}, arrivals {} -> {}",
            wa.fins_sent,
            wb.fins_sent,
            wa.fin_acks_sent,
            wb.fin_acks_sent,
            wa.completed,
            wb.completed,
            a.summary.bottleneck.arrivals,
            b.summary.bottleneck.arrivals
        );
        assert!(wa.fins_sent > 0 && wa.fin_acks_sent > 0, "{http}: {wa:?}");
        assert_eq!((wb.fins_sent, wb.fin_acks_sent), (0, 0), "{http}");
        assert!(b.summary.bottleneck.arrivals < a.summary.bottleneck.arrivals);
        let c = wb.completed as f64 / wa.completed as f64;
        assert!((c - 1.0).abs() < 0.1, "{http}: {c}");
    }
}

/// The event trace names what was dropped or marked: under RED* with ECN
/// the SYN/ACKs are dropped (as many as the web summary counts in the
/// measured interval, and more over the whole run), with ECN+ they are
/// marked and none is dropped.
#[test]
fn trace_names_the_dropped_packets() {
    for plus in [false, true] {
        let sc =
            red_star("90Mbps", plus, "15s", 1).replace("[metrics]\n", "[metrics]\ntrace = true\n");
        let r = run(&sc);
        let w = r.summary.web.clone().unwrap();
        let ev = &r.events;
        let count = |what: &str, packet: &str| {
            (0..ev.time_s.len())
                .filter(|&i| {
                    ev.link[i] == "bottleneck"
                        && ev.event[i].starts_with(what)
                        && ev.packet[i] == packet
                })
                .count() as u64
        };
        let (dropped, marked) = (count("drop", "syn-ack"), count("mark", "syn-ack"));
        eprintln!(
            "ECN+ {plus}: SYN/ACKs dropped {dropped} (summary {}), marked {marked} (summary {}); data marked {}",
            w.synack_drops,
            w.synack_marks,
            count("mark", "data")
        );
        assert!(count("mark", "data") > 0);
        assert!(ev
            .packet
            .iter()
            .all(|p| ["data", "ack", "syn", "syn-ack", "request", "fin"].contains(p)));
        if plus {
            assert_eq!(dropped, 0);
            assert!(
                marked >= w.synack_marks && w.synack_marks > 0,
                "{marked} {w:?}"
            );
        } else {
            assert_eq!(marked, 0);
            assert!(
                dropped >= w.synack_drops && w.synack_drops > 0,
                "{dropped} {w:?}"
            );
        }
    }
}

/// A `web` schedule action adds sessions: the offered load steps up in
/// proportion (300 -> 600 sessions doubles it, within the noise of
/// heavy-tailed traffic).
#[test]
fn schedule_adds_sessions() {
    let r = run(r#"
duration = "40s"
seed = 3
[topology]
bottleneck_rate = "1Gbps"
bottleneck_delay = "1ms"
access_rate = "1Gbps"
buffer = 2000
[tcp]
packet_size = 1500
[[traffic]]
kind = "web"
sessions = 400
[[schedule]]
at = "20s"
action = "web"
group = 0
add_sessions = 400
[metrics]
start = "5s"
phases = [[5, 20], [25, 40]]
"#);
    assert_eq!(r.flows.flow.len(), 800);
    let late = (0..800).filter(|&f| r.flows.start_s[f] == 20.0).count();
    assert_eq!(late, 400);
    let p = &r.summary.phases;
    let (a, b) = (
        p[0].bottleneck.throughput_bps,
        p[1].bottleneck.throughput_bps,
    );
    let (ca, cb) = (
        p[0].web.as_ref().unwrap().completed,
        p[1].web.as_ref().unwrap().completed,
    );
    eprintln!(
        "before {:.2} Mb/s ({ca}), after {:.2} Mb/s ({cb})",
        a / 1e6,
        b / 1e6
    );
    assert!(b / a > 1.5 && b / a < 2.6, "{a} -> {b}");
    assert!(cb as f64 / ca as f64 > 1.6 && (cb as f64 / ca as f64) < 2.4);
    // Sessions added later draw their own RTTs: all within 10-150 ms.
    assert!(r
        .flows
        .base_rtt_s
        .iter()
        .all(|&x| (0.0099..=0.1501).contains(&x)));
}

/// Same seed, same responses; the session RTTs are uniform on 10-150 ms.
#[test]
fn deterministic_and_rtts_uniform() {
    let text = r#"
duration = "15s"
seed = 9
[topology]
bottleneck_rate = "100Mbps"
bottleneck_delay = "2ms"
[[traffic]]
kind = "web"
sessions = 400
http = "1.1"
"#;
    let (a, b) = (run(text), run(text));
    assert_eq!(a.responses.response_time_s, b.responses.response_time_s);
    assert_eq!(a.responses.size_bytes, b.responses.size_bytes);
    let rtt = &a.flows.base_rtt_s;
    let mean = rtt.iter().sum::<f64>() / rtt.len() as f64;
    assert!((mean - 0.08).abs() < 0.006, "{mean}");
    let below = rtt.iter().filter(|&&x| x < 0.045).count() as f64 / rtt.len() as f64;
    assert!((below - 0.25).abs() < 0.06, "{below}");
}

/// The resolved scenario shows what was written (`offered_load`, not a
/// derived session count) and re-validates to the same run size.
#[test]
fn resolved_scenario_round_trips() {
    let sc = scenario(&uncongested("90Mbps", "1.1", "20s"));
    let json = serde_json::to_value(&sc).unwrap();
    let g = &json["traffic"][0];
    assert_eq!(g["kind"], "web");
    assert_eq!(g["offered_load"], "90Mbps");
    assert_eq!(g["http"], "1.1");
    assert_eq!(g["size_median"], "1320B");
    assert!(g.get("sessions").is_none());
    let doc: Value = serde_json::from_value(json).unwrap();
    let again = Scenario::from_value(doc).unwrap();
    assert_eq!(again.total_flows(), sc.total_flows());
    assert!(
        sc.total_flows() > 2000 && sc.total_flows() < 4000,
        "{}",
        sc.total_flows()
    );
}

/// Bad keys name their field, the value and what is allowed.
#[test]
fn bad_web_keys_are_reported() {
    let base = |extra: &str, delay: &str| {
        format!(
            r#"
duration = "10s"
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "{delay}"
[[traffic]]
kind = "web"
{extra}
"#
        )
    };
    let err = |text: String| {
        let doc: Value = toml::from_str(&text).unwrap();
        Scenario::from_value(doc).unwrap_err()
    };
    let e = err(base("sessions = 5\noffered_load = \"1Mbps\"", "1ms"));
    assert_eq!(e.path, "traffic[0].offered_load");
    let e = err(base("", "1ms"));
    assert_eq!(e.path, "traffic[0].sessions");
    let e = err(base("sessions = 5", "20ms"));
    assert_eq!(e.path, "traffic[0].rtt");
    assert!(e.msg.contains("10ms") && e.msg.contains("40ms"), "{e}");
    let e = err(base("sessions = 5\nhttp = \"2\"", "1ms"));
    assert_eq!(e.path, "traffic[0].http");
    let ok = |text: String| {
        let doc: Value = toml::from_str(&text).unwrap();
        Scenario::from_value(doc).unwrap()
    };
    let sc = ok(base("sessions = 5\nhttp = 1.1", "1ms"));
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["http"], "1.1");
    let e = err(base("sessions = 5\nhttp = 2.0", "1ms"));
    assert_eq!(e.path, "traffic[0].http");
    let e = err(base("sessions = 5\nthink_shape = 1.0", "1ms"));
    assert_eq!(e.path, "traffic[0].think_shape");
    let e = err(base("sessions = 5\nsize_max = \"10KB\"", "1ms"));
    assert_eq!(e.path, "traffic[0].size_max");
    let e = err(base("sessions = 5\nsize_tail = 0.6", "1ms"));
    assert_eq!(e.path, "traffic[0].size_tail");
    let e = err(base(
        "sessions = 5\n[[schedule]]\nat = \"1s\"\naction = \"web\"\nadd_sessions = 0",
        "1ms",
    ));
    assert_eq!(e.path, "schedule[0].add_sessions");
    // Each (keys, the field path its error names).
    let sched = "[[schedule]]\nat = \"1s\"\naction = \"web\"\nadd_sessions = 1";
    for (keys, path) in [
        ("pages = \"loop\"".to_string(), "traffic[0].pages"),
        ("pages = \"open\"\nlanes = 0".into(), "traffic[0].lanes"),
        (
            "parallel_objects = true\nlanes = 65".into(),
            "traffic[0].lanes",
        ),
        (format!("pages = \"open\"\n{sched}"), "schedule[0].group"),
        (
            format!("parallel_objects = true\n{sched}"),
            "schedule[0].group",
        ),
        (
            "parallel_objects = true\nobject_gap = \"fast\"".into(),
            "traffic[0].object_gap",
        ),
    ] {
        let e = err(base(&format!("sessions = 5\n{keys}"), "1ms"));
        assert_eq!(e.path, path, "{keys}");
    }
    let e = err(base("sessions = 5\nlanes = 2", "1ms"));
    assert_eq!(e.path, "traffic[0].lanes");
    assert!(
        e.msg.contains("open") && e.msg.contains("parallel_objects"),
        "{e}"
    );
    let e = err(base("sessions = 5\nobject_gap = \"50ms\"", "1ms"));
    assert_eq!(e.path, "traffic[0].object_gap");
    assert!(
        e.msg.contains("50ms") && e.msg.contains("parallel_objects"),
        "{e}"
    );
    let sc = ok(base(
        "sessions = 5\nparallel_objects = true\nobject_gap = \"50ms\"",
        "1ms",
    ));
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["object_gap"], "50ms");
    assert_eq!(json["traffic"][0]["lanes"], 4);
    let e = err(base("sessions = 5\nfirst_page = \"now\"", "1ms"));
    assert_eq!(e.path, "traffic[0].first_page");
    assert!(e.msg.contains("residual") && e.msg.contains("start"), "{e}");
    let e = err(base("sessions = 5\nwhole_segments = 1", "1ms"));
    assert_eq!(e.path, "traffic[0].whole_segments");
    let e = err(base("sessions = 5\nteardown = \"no\"", "1ms"));
    assert_eq!(e.path, "traffic[0].teardown");
    let sc = ok(base("sessions = 5\nteardown = false", "1ms"));
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["teardown"], false);
    let sc = ok(base("sessions = 5\nwhole_segments = true", "1ms"));
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["whole_segments"], true);
    let sc = ok(base("sessions = 5\nfirst_page = \"start\"", "1ms"));
    let json = serde_json::to_value(&sc).unwrap();
    assert_eq!(json["traffic"][0]["first_page"], "start");
    let sc = ok(base("sessions = 5\npages = \"open\"", "1ms"));
    let json = serde_json::to_value(&sc).unwrap();
    assert!(json["traffic"][0].get("first_page").is_none());
    assert!(json["traffic"][0].get("teardown").is_none());
    assert_eq!(json["traffic"][0]["pages"], "open");
    assert_eq!(json["traffic"][0]["lanes"], 4);
    assert_eq!(sc.total_flows(), 20);
}

/// Web groups take `path` like every traffic kind: on a parking lot the
/// sessions' RTTs come from `long_rtt` (and `rtt` is refused), on a custom
/// topology from the path; responses still take at least two RTTs.
#[test]
fn web_on_parking_lot_and_custom_topologies() {
    let lot = |extra: &str| {
        format!(
            r#"
duration = "20s"
[topology]
kind = "parking-lot"
links = 2
bottleneck_rate = "100Mbps"
bottleneck_delay = "2ms"
buffer = 500
long_rtt = {{ uniform = ["40ms", "60ms"] }}
short_rtt = {{ uniform = ["20ms", "30ms"] }}
[tcp]
packet_size = 1500
[[traffic]]
kind = "web"
offered_load = "20Mbps"
path = "long"
{extra}
"#
        )
    };
    let r = run(&lot(""));
    let t = &r.responses;
    assert!(t.flow.len() > 1000, "{}", t.flow.len());
    for i in 0..t.flow.len() {
        let rtt = r.flows.base_rtt_s[t.flow[i] as usize];
        assert!((0.0399..=0.0601).contains(&rtt), "{rtt}");
        assert!(t.response_time_s[i] >= 2.0 * rtt - 1e-6);
    }
    let doc: Value = toml::from_str(&lot("rtt = \"50ms\"")).unwrap();
    let e = Scenario::from_value(doc).unwrap_err();
    assert_eq!(e.path, "traffic[0].rtt");
    let r = run(r#"
duration = "15s"
[topology]
kind = "custom"
nodes = ["s", "r1", "r2", "d"]
[[topology.links]]
name = "core"
from = "r1"
to = "r2"
rate = "100Mbps"
delay = "10ms"
buffer = 500
monitor = true
[[topology.links]]
name = "left"
from = "s"
to = "r1"
rate = "1Gbps"
delay = "5ms"
[[topology.links]]
name = "right"
from = "r2"
to = "d"
rate = "1Gbps"
delay = "5ms"
[tcp]
packet_size = 1500
[[traffic]]
kind = "web"
sessions = 200
think = "1s"
path = ["s", "r1", "r2", "d"]
"#);
    let t = &r.responses;
    assert!(t.flow.len() > 500, "{}", t.flow.len());
    assert!(t.response_time_s.iter().all(|&x| x >= 0.080 - 1e-6));
}

/// `pages = "open"`: a session's pages come at think-time gaps from page
/// start to page start (a replayed request trace; ns-2's WebTraf with
/// `interPageOption_ = 0`), fetched in parallel on the session's lanes.
/// With a 600 ms RTT and a 200 ms mean think time a page (2 RTTs per
/// object) outlasts the gap: with 4 lanes the same session's responses
/// overlap in time, and with 1 lane pages wait (and are counted).
#[test]
fn open_pages_run_in_parallel_on_a_sessions_lanes() {
    let sc = |lanes: u32| {
        sessions_from_zero("30s", &format!("sessions = 10\npages = \"open\"\nlanes = {lanes}\nthink = \"200ms\"\nrtt = \"600ms\""))
    };
    let four = run(&sc(4));
    let one = run(&sc(1));
    assert_eq!(four.flows.base_rtt_s.len(), 40);
    assert_eq!(one.flows.base_rtt_s.len(), 10);
    let (w4, w1) = (
        four.summary.web.clone().unwrap(),
        one.summary.web.clone().unwrap(),
    );
    let t = &four.responses;
    let overlaps = (0..t.flow.len())
        .flat_map(|i| (0..t.flow.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            t.flow[i] / 4 == t.flow[j] / 4
                && t.flow[i] != t.flow[j]
                && t.start_s[i] < t.end_s[j]
                && t.start_s[j] < t.end_s[i]
        })
        .count();
    eprintln!(
        "open pages: 4 lanes {} responses, {overlaps} overlapping pairs, {} waited; 1 lane {} responses, {} waited",
        w4.completed, w4.pages_waited, w1.completed, w1.pages_waited
    );
    assert!(overlaps > 0);
    // Lanes share their session's RTT (one client).
    for s in 0..10 {
        let r = &four.flows.base_rtt_s[4 * s..4 * s + 4];
        assert!(r.iter().all(|&x| x == r[0]), "{r:?}");
    }
    assert!(w1.pages_waited > 0 && w4.pages_waited < w1.pages_waited);
    assert!(w4.completed > w1.completed);
    // `parallel_objects`: a page's objects start together, each on a lane,
    // and are numbered in their page (the session's page, not the lane's).
    let par = run(&sc(4).replace(
        "pages = \"open\"",
        "pages = \"open\"\nparallel_objects = true",
    ));
    let t = &par.responses;
    let together = (1..t.flow.len())
        .filter(|&i| {
            (0..i).any(|j| {
                t.session[i] == t.session[j]
                    && t.page[i] == t.page[j]
                    && t.flow[i] != t.flow[j]
                    && t.object[i] != t.object[j]
                    && t.start_s[i] == t.start_s[j]
            })
        })
        .count();
    assert!(together > 0);
    for i in 0..t.flow.len() {
        assert_eq!(t.session[i], t.flow[i] / 4 * 4);
        for j in 0..i {
            let same =
                (t.session[i], t.page[i], t.object[i]) == (t.session[j], t.page[j], t.object[j]);
            assert!(
                !same,
                "two responses are object {} of page {}",
                t.object[i], t.page[i]
            );
        }
    }
}

/// Common random numbers: a seed fixes the web workload whatever the
/// network does. Open pages with objects in parallel on lanes (the
/// replayed pattern of item 7): under RED* with ECN at 95 Mbit/s, where
/// lanes are busy far longer than on an uncongested link, every response
/// (session, page, object) has the start time and size it has on a
/// 1 Gbit/s link; with closed pages (think times from a page's end) the
/// sizes still agree. And the page clock does not depend on `lanes`: with
/// 8 and 32 lanes the sessions begin the same pages at the same times.
/// Before, a lane drew the sizes of the objects it took and the owner's
/// object sizes came from its page clock's stream, so the workload moved
/// with the congestion (seed 1 of `ecn-web-000-replay`: 22 080 of 24 347
/// start times before 15 s shared with the uncongested run).
#[test]
fn a_seed_fixes_the_web_workload_whatever_the_scheme() {
    type Key = (u32, u64, u32);
    let sc = |pages: &str, lanes: u32, fast: bool| {
        let s = red_star("95Mbps", false, "12s", 3)
            .replace("min_th = 50", "min_th = 20")
            .replace("max_th = 150", "max_th = 60")
            .replace(
                "kind = \"web\"\n",
                &format!(
                    "kind = \"web\"\npages = \"{pages}\"\nlanes = {lanes}\nparallel_objects = true\nobject_gap = \"50ms\"\nfirst_page = \"start\"\nstart = {{ uniform = [\"0s\", \"5s\"] }}\n"
                ),
            );
        if fast {
            s.replace(
                "bottleneck_rate = \"100Mbps\"",
                "bottleneck_rate = \"1Gbps\"",
            )
            .replace("buffer = 500", "buffer = 30000")
            .replace("min_th = 20", "min_th = 10000")
            .replace("max_th = 60", "max_th = 20000")
        } else {
            s
        }
    };
    let table = |r: &RunResult| -> std::collections::HashMap<Key, (f64, u64)> {
        let t = &r.responses;
        (0..t.flow.len())
            .map(|i| {
                (
                    (t.session[i], t.page[i], t.object[i]),
                    (t.start_s[i], t.size_bytes[i]),
                )
            })
            .collect()
    };
    for pages in ["open", "closed"] {
        let (slow, fast) = (run(&sc(pages, 32, false)), run(&sc(pages, 32, true)));
        let (a, b) = (table(&slow), table(&fast));
        let w = slow.summary.web.clone().unwrap();
        let both = a.keys().filter(|k| b.contains_key(k)).count();
        let same_start = a
            .iter()
            .filter(|(k, v)| b.get(k).is_some_and(|x| x.0 == v.0))
            .count();
        let same_size = a
            .iter()
            .filter(|(k, v)| b.get(k).is_some_and(|x| x.1 == v.1))
            .count();
        eprintln!(
            "{pages} pages: {} responses under RED*, {} uncongested, {both} in both; {same_start} with the same start, {same_size} the same size; {} pages waited for a lane",
            a.len(),
            b.len(),
            w.pages_waited
        );
        // The congested run completes fewer; the uncongested run has (almost)
        // every one of them, with its size.
        assert!(a.len() > 1000 && a.len() < b.len());
        assert!(both as f64 > 0.99 * a.len() as f64);
        assert_eq!(same_size, both);
        if pages == "open" {
            assert_eq!(same_start, both);
        } else {
            // A closed page starts when the one before has arrived.
            assert!((same_start as f64) < 0.9 * both as f64);
        }
    }
    let pages_begun = |lanes: u32| {
        let r = run(&sc("open", lanes, true));
        let t = &r.responses;
        let mut v: Vec<(u32, u64, u64)> = (0..t.flow.len())
            .filter(|&i| t.object[i] == 0)
            .map(|i| {
                (
                    t.session[i] / lanes,
                    t.page[i],
                    (t.start_s[i] * 1e9).round() as u64,
                )
            })
            .collect();
        v.sort_unstable();
        v
    };
    let (eight, many) = (pages_begun(8), pages_begun(32));
    assert!(eight.len() > 1000);
    assert_eq!(eight, many);
}

/// Closed pages with `parallel_objects` (ns-2's WebTraf by default,
/// `interPageOption_ = 1`): a page's objects start together, each on a lane
/// of the session, and the next page comes a think time after the page's
/// last object has arrived. With a 600 ms RTT and a 200 ms mean think time
/// open pages overlap the page before; closed ones never do.
#[test]
fn closed_pages_fetch_their_objects_in_parallel_then_think() {
    let sc = |pages: &str| {
        sessions_from_zero("30s", &format!("sessions = 10\npages = \"{pages}\"\nparallel_objects = true\nlanes = 32\nthink = \"200ms\"\nrtt = \"600ms\""))
    };
    // Per session: its pages as (start, last end, objects), by start time.
    let pages = |r: &RunResult| {
        let t = &r.responses;
        let mut by: BTreeMap<(u32, u64), (f64, f64, u32)> = BTreeMap::new();
        for i in 0..t.flow.len() {
            let key = (t.flow[i] / 32, t.start_s[i].to_bits());
            let e = by.entry(key).or_insert((t.start_s[i], 0.0, 0));
            e.1 = e.1.max(t.end_s[i]);
            e.2 += 1;
        }
        let mut per: BTreeMap<u32, Vec<(f64, f64, u32)>> = BTreeMap::new();
        for ((s, _), v) in by {
            per.entry(s).or_default().push(v);
        }
        for v in per.values_mut() {
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        per
    };
    let (closed, open) = (run(&sc("closed")), run(&sc("open")));
    let (pc, po) = (pages(&closed), pages(&open));
    let overlapping = |p: &BTreeMap<u32, Vec<(f64, f64, u32)>>| {
        p.values()
            .flat_map(|v| v.windows(2))
            .filter(|w| w[1].0 < w[0].1)
            .count()
    };
    let multi = pc.values().flatten().filter(|p| p.2 > 1).count();
    let w = closed.summary.web.clone().unwrap();
    eprintln!(
        "closed, objects in parallel: {} responses, {} pages of several objects started together, {} overlapping; open: {} overlapping",
        w.completed,
        multi,
        overlapping(&pc),
        overlapping(&po)
    );
    assert_eq!(closed.flows.base_rtt_s.len(), 320);
    assert!(multi > 10, "{multi}");
    assert_eq!(overlapping(&pc), 0);
    assert!(overlapping(&po) > 10);
    assert!(w.completed > 100 && w.pages_waited == 0, "{w:?}");
}

/// `object_gap`: a page's objects are launched at exponential gaps of
/// that mean (WebTraf's `interObj`), each on a lane held for it, instead of
/// all at once; with closed pages the next think time still waits for the
/// last of them, so that pages come less often.
#[test]
fn object_gap_spreads_a_pages_launches() {
    let sc = |gap: &str| {
        sessions_from_zero("60s", &format!("sessions = 20\nparallel_objects = true\nlanes = 32\nthink = \"2s\"\nobject_gap = \"{gap}\"\nfirst_page = \"start\""))
    };
    // Per session, the gaps between consecutive launches.
    let gaps = |r: &RunResult| {
        let t = &r.responses;
        let mut per: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
        for i in 0..t.flow.len() {
            per.entry(t.flow[i] / 32).or_default().push(t.start_s[i]);
        }
        let mut g = Vec::new();
        for v in per.values_mut() {
            v.sort_by(f64::total_cmp);
            g.extend(v.windows(2).map(|w| w[1] - w[0]));
        }
        g
    };
    let (at_once, spread) = (run(&sc("0s")), run(&sc("100ms")));
    let (g0, g1) = (gaps(&at_once), gaps(&spread));
    let ties = |g: &[f64]| g.iter().filter(|&&x| x == 0.0).count();
    let within: Vec<f64> = g1.iter().copied().filter(|&x| x < 0.5).collect();
    let mean = within.iter().sum::<f64>() / within.len() as f64;
    let w = spread.summary.web.clone().unwrap();
    eprintln!(
        "object_gap 0: {} simultaneous launches; 100ms: {}, {} gaps under 0.5 s of mean {mean:.3} s, {} responses, {} waited",
        ties(&g0),
        ties(&g1),
        within.len(),
        w.completed,
        w.pages_waited
    );
    assert!(ties(&g0) > 50);
    assert_eq!(ties(&g1), 0);
    assert!(within.len() > 50 && (0.06..0.14).contains(&mean), "{mean}");
    // Closed pages that last longer come less often.
    let n0 = at_once.summary.web.as_ref().unwrap().completed;
    assert!(w.pages_waited == 0, "{w:?}");
    assert!(
        w.completed < n0 && w.completed * 5 > n0 * 4,
        "{} {n0}",
        w.completed
    );
}

/// `first_page = "start"`: a session begins with a page when it begins, as
/// ns-2's WebTraf `create-session` starts one (docs/fidelity.md, item 7),
/// where by default it first thinks for an equilibrium residual think
/// time. With every session begun at 0 s every session's first response
/// starts at 0 s, with closed and with open pages; with the residual few
/// do in the first 100 ms (its density at 0 is 0.2 per second).
#[test]
fn first_page_start_begins_each_session_with_a_page() {
    for pages in ["closed", "open"] {
        let sc = |first: &str| {
            sessions_from_zero(
                "3s",
                &format!("sessions = 40\npages = \"{pages}\"\nfirst_page = \"{first}\""),
            )
        };
        let lanes = if pages == "open" { 4 } else { 1 };
        let early = |r: &RunResult| {
            let t = &r.responses;
            let mut first: Vec<bool> = vec![false; 40];
            for i in 0..t.flow.len() {
                if t.start_s[i] < 0.1 {
                    first[t.flow[i] as usize / lanes] = true;
                }
            }
            first.iter().filter(|&&b| b).count()
        };
        let (at_start, residual) = (run(&sc("start")), run(&sc("residual")));
        let (a, b) = (early(&at_start), early(&residual));
        eprintln!(
            "{pages} pages: sessions with a response begun in 0-100 ms: start {a}, residual {b}"
        );
        assert_eq!(a, 40);
        assert!(b <= 4, "{b}");
        assert!(
            at_start
                .responses
                .start_s
                .iter()
                .filter(|&&s| s == 0.0)
                .count()
                >= 40
        );
    }
}

/// `pages = "open"` under RED* with ECN (`000_0675317d310dd341.txt`,
/// figure 3; docs/fidelity.md, item 7): requests that come at their time
/// whatever the congestion ("re-run the web-request traces") keep coming
/// while SYN/ACKs are dropped, and the share of responses within 0.5 s
/// falls far below that of sessions that wait for their pages; ECN+
/// repairs most of it. Objects arrive on their own (one per page, a third
/// of the think time: WebTraf launches a page's objects in parallel), 95
/// Mbit/s nominal, RED* 20 / 60 as the ns-2 cross-checks, 32 lanes.
#[test]
fn open_pages_deepen_the_admission_problem() {
    let sc = |pages: &str, plus: bool| {
        let lanes = if pages == "open" { "lanes = 32\n" } else { "" };
        let s = red_star("95Mbps", plus, "35s", 1)
            .replace("min_th = 50", "min_th = 20")
            .replace("max_th = 150", "max_th = 60")
            .replace(
                "kind = \"web\"\n",
                &format!(
                    "kind = \"web\"\npages = \"{pages}\"\n{lanes}objects = 1\nthink = \"1667ms\"\n"
                ),
            );
        run(&s)
    };
    let (closed, open, open_plus) = (sc("closed", false), sc("open", false), sc("open", true));
    let c = [&closed, &open, &open_plus].map(|r| cdf_at(r, 0.5));
    let drops = [&closed, &open, &open_plus].map(|r| r.summary.web.as_ref().unwrap().synack_drops);
    eprintln!(
        "RED* 20/60, 95 Mbit/s: CDF(0.5 s) closed ECN {:.3}, open ECN {:.3}, open ECN+ {:.3}; SYN/ACK drops {drops:?}",
        c[0], c[1], c[2]
    );
    assert!(c[1] < c[0] - 0.1, "{c:?}");
    assert!(c[2] > c[1] + 0.1, "{c:?}");
    assert!(drops[1] > 4 * drops[0] && drops[2] == 0, "{drops:?}");
}
