//! SACK loss recovery (RFC 6675), RACK-TLP (RFC 8985) and PRR (RFC 6937)
//! in whole runs (`tcp.sack`, `tcp.rack`, `tcp.prr`): three losses in one
//! window repaired in about one round trip where NewReno takes three, a
//! tail loss repaired by a probe rather than a timeout, and long bulk runs
//! through RED and DropTail with the scoreboard's counters checked against
//! a recount throughout. Hand-worked cases are the unit tests of
//! `transport/tcp/{sack,scoreboard,sack_recovery,rack,prr}.rs`.

use crate::common;

use aqmlab_core::scenario::Scenario;
use aqmlab_core::units::SimTime;
use aqmlab_core::world::{Options, World};
use aqmlab_core::RunResult;

/// A world to run in steps, reading flow state in between. Endpoints do not
/// take packets ahead of the clock (`Options::ahead`, which changes nothing
/// but speed in a run that is not stepped): a run stepped by `run_until`
/// with them on can differ from the same run in one go (seen with steps of
/// 50-200 ms).
fn stepped(sc: &Scenario) -> World {
    World::with_options(
        sc,
        Options {
            ahead: false,
            ..Options::default()
        },
    )
}

/// One flow through 10 Mbit/s, 44 ms of base RTT, 1500-byte packets and a
/// DropTail buffer of 20 packets; the receiver's window of 54 segments
/// stops slow start just after the queue overflows, so exactly three
/// segments of one window are lost (every second one of the last pairs
/// slow start sends).
fn one_window(tcp: &str) -> String {
    format!(
        r#"
duration = "2s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "1ms"
buffer = 20
[aqm]
kind = "droptail"
[tcp]
packet_size = 1500
rwnd = 54
{tcp}
[[traffic]]
kind = "bulk"
flows = 1
start = "0s"
"#
    )
}

/// The first recovery of flow 0, stepping the run by a millisecond: when
/// it began and ended, the times of the retransmissions in it, and the
/// drops when it began.
struct Recovery {
    on: u64,
    off: u64,
    resent: Vec<u64>,
    drops: u64,
    timeouts: u64,
}

fn first_recovery(text: &str) -> Recovery {
    let sc = common::scenario(text);
    let mut w = stepped(&sc);
    let (mut on, mut off, mut drops) = (None, None, 0);
    let mut resent = Vec::new();
    let mut retx = 0;
    for t in 1..=2000 {
        w.run_until(SimTime::from_millis(t));
        w.check_accounting().unwrap();
        let f = w.flow(0);
        if f.in_recovery() && on.is_none() {
            on = Some(t);
            drops = f.stats.data_dropped;
        }
        if on.is_some() && f.stats.retransmits > retx {
            resent.push(t);
        }
        retx = f.stats.retransmits;
        if on.is_some() && !f.in_recovery() {
            off = Some(t);
            break;
        }
    }
    Recovery {
        on: on.expect("a recovery"),
        off: off.expect("its end"),
        resent,
        drops,
        timeouts: w.flow(0).stats.timeouts,
    }
}

/// RFC 6675 repairs the three holes of one window in one round of
/// retransmissions: all three leave within a base round trip (44 ms) of the
/// first (before its ACK can return), and the recovery ends within about one round trip of its
/// start (the first retransmission's round trip, with the queue it waits
/// in, is some 68 ms). NewReno sends one retransmission per partial ACK,
/// each a round trip after the one before, and needs three round trips.
/// Neither times out. (Measured: SACK 75 ms, with PRR 61 ms, NewReno
/// 150 ms.)
#[test]
fn sack_repairs_three_losses_in_one_round_trip_newreno_in_three() {
    let base_rtt = 44;
    let s = first_recovery(&one_window("sack = true"));
    let n = first_recovery(&one_window(""));
    for (name, r) in [("sack", &s), ("newreno", &n)] {
        assert_eq!(r.drops, 3, "{name}: three segments of one window lost");
        assert_eq!(r.resent.len(), 3, "{name}: {:?}", r.resent);
        assert_eq!(r.timeouts, 0, "{name}");
    }
    assert!(s.resent[2] - s.resent[0] < base_rtt, "{:?}", s.resent);
    assert!(s.off - s.on < 2 * base_rtt, "SACK: {} ms", s.off - s.on);
    for k in 1..3 {
        assert!(n.resent[k] - n.resent[k - 1] >= base_rtt, "{:?}", n.resent);
    }
    assert!(n.off - n.on > 3 * base_rtt, "NewReno: {} ms", n.off - n.on);
    assert!(2 * (s.off - s.on) <= n.off - n.on);
    // PRR sends the holes as they are found: sooner still.
    let p = first_recovery(&one_window("sack = true\nprr = true"));
    assert!(p.off - p.on <= s.off - s.on, "PRR {} ms", p.off - p.on);
}

/// Web transfers that each leave in one burst (an initial window of 1000
/// segments) into a DropTail buffer of 8 packets: the burst's last
/// segments are dropped, a tail loss no duplicate ACK reports. Without
/// RACK-TLP only the retransmission timer repairs it; with it a probe
/// (RFC 8985 section 7) sends the last segment again two round trips
/// later, its SACK shows the other losses and recovery repairs them.
fn bursts(tcp: &str) -> RunResult {
    common::run(&format!(
        r#"
duration = "60s"
seed = 3
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "1ms"
buffer = 8
[aqm]
kind = "droptail"
[tcp]
packet_size = 1000
initial_cwnd = 1000
sack = true
{tcp}
[[traffic]]
kind = "web-simple"
sessions = 4
mean_packets = 20
think = "1s"
[metrics]
start = "0s"
"#
    ))
}

/// Measured (seed 3, 60 s): SACK alone 103 timeouts, 158 responses of
/// mean 0.37 s; with RACK-TLP 5 timeouts, 11 probes, 180 responses of mean
/// 0.18 s.
#[test]
fn rack_tlp_repairs_tail_losses_by_probes_rather_than_timeouts() {
    let sack = bursts("");
    let tlp = bursts("rack = true");
    let (s, t) = (&sack.summary.flows, &tlp.summary.flows);
    assert!(s.timeouts >= 50, "SACK alone: {} timeouts", s.timeouts);
    assert!(
        5 * t.timeouts <= s.timeouts,
        "{} against {}",
        t.timeouts,
        s.timeouts
    );
    assert!(t.tlp_probes > 0 && t.rack_detections > 0);
    assert_eq!((s.tlp_probes, s.rack_detections), (0, 0));
    let ws = sack.summary.web.as_ref().expect("responses");
    let wt = tlp.summary.web.as_ref().expect("responses");
    assert!(wt.completed >= ws.completed);
    assert!(wt.response_time_mean_s < 0.75 * ws.response_time_mean_s);
}

/// Ten bulk flows for 60 s through RED and DropTail: NewReno, and SACK with
/// RACK-TLP and PRR. The scoreboard's counters equal a recount every 100
/// ms; SACK's flows keep the link at least as busy as NewReno's, with
/// fewer timeouts.
fn bulk(aqm: &str, tcp: &str) -> RunResult {
    let text = format!(
        r#"
duration = "60s"
seed = 2
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = {{ uniform = ["1ms", "30ms"] }}
buffer = 100
{aqm}
[tcp]
packet_size = 1000
{tcp}
[[traffic]]
kind = "bulk"
flows = 10
start = {{ uniform = ["0s", "2s"] }}
[metrics]
start = "10s"
"#
    );
    let sc = common::scenario(&text);
    let mut w = stepped(&sc);
    for t in 1..=600 {
        w.run_until(SimTime::from_millis(100 * t));
        w.check_accounting()
            .unwrap_or_else(|e| panic!("at {} ms: {e}", 100 * t));
    }
    w.finish()
}

/// Measured (seed 2): RED, NewReno utilisation 0.940 with 51 timeouts and
/// 908 retransmissions for 831 drops; SACK, RACK-TLP and PRR 0.947 with
/// no timeout and 926 retransmissions for 921 drops. DropTail: 1.0, 73
/// timeouts, 869 retransmissions for 570 drops; 1.0, no timeout, 517
/// retransmissions for 517 drops.
#[test]
fn long_bulk_runs_stay_consistent() {
    for aqm in [common::RED, "[aqm]\nkind = \"droptail\""] {
        let nr = bulk(aqm, "");
        let sk = bulk(aqm, "sack = true\nrack = true\nprr = true");
        let (a, b) = (&nr.summary.flows, &sk.summary.flows);
        let drops = |r: &RunResult| r.flows.drops.iter().sum::<u64>();
        let util = |r: &RunResult| r.summary.bottleneck.utilization;
        assert!(
            util(&sk) >= util(&nr),
            "{aqm}: {} < {}",
            util(&sk),
            util(&nr)
        );
        assert!(b.timeouts <= a.timeouts, "{aqm}: {} timeouts", b.timeouts);
        assert!(
            100 * b.timeouts <= b.sack_recoveries,
            "{aqm}: a timeout storm"
        );
        // Retransmissions close to the drops: no spurious ones to speak of.
        assert!(b.retransmits <= drops(&sk) + drops(&sk) / 20, "{aqm}");
        assert!(b.sack_recoveries > 100 && b.rack_detections > 100 && b.tlp_probes > 0);
        assert_eq!(b.sack_recoveries, b.fast_retransmits);
        assert_eq!(
            (a.sack_recoveries, a.rack_detections, a.tlp_probes),
            (0, 0, 0)
        );
    }
}

/// CUBIC's window with SACK's recovery: the same consistency, the link as
/// busy as CUBIC's with NewReno's recovery. Measured (DropTail, seed 2):
/// utilisation 1.0 both; NewReno's recovery 113 timeouts and 1046
/// retransmissions for 715 drops, SACK with RACK-TLP and PRR 1 and 615 for
/// 617.
#[test]
fn cubic_with_sack() {
    let aqm = "[aqm]\nkind = \"droptail\"";
    let c = bulk(aqm, "variant = \"cubic\"");
    let cs = bulk(
        aqm,
        "variant = \"cubic\"\nsack = true\nrack = true\nprr = true",
    );
    let util = |r: &RunResult| r.summary.bottleneck.utilization;
    assert!(util(&cs) >= util(&c) - 1e-3, "{} < {}", util(&cs), util(&c));
    assert!(cs.summary.flows.timeouts <= c.summary.flows.timeouts);
    assert!(cs.summary.flows.sack_recoveries > 0);
}

/// `scenarios/testbed/delay-jitter.toml` with the linux profile: the
/// bottleneck's delay alternates 40 / 30 ms each way every second, and each
/// step down lets the packets sent after it overtake 10 ms worth on the wire.
/// RACK sees the reordering (Linux's `reord_seen`) and, from then on, waits
/// min_rtt / 4 (25 ms) for a segment overtaken, so that next to nothing
/// is sent again needlessly (2 D-SACKs in this run, at most 3 allowed).
/// (RACK without it marked every overtaken
/// segment lost at once: 76 D-SACKs on the testbed's counterpart of the
/// file, where the kernel reports 0-3; docs/tcp.md, "Reordering".) With
/// every step keeping the wire's order there is no reordering to see.
#[test]
fn rack_tolerates_the_reordering_it_has_seen() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/testbed/delay-jitter.toml"
    );
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("[tcp]\n", "[tcp]\nprofile = \"linux\"\n");
    let figures = |text: &str| {
        let f = common::run(text).summary.flows;
        (f.reorderings, f.dsacks, f.retransmits, f.sack_recoveries)
    };
    let reordered = figures(&text);
    let in_order =
        figures(&text.replace("delay = \"30ms\"\n", "delay = \"30ms\"\nreorder = false\n"));
    eprintln!("reorderings, D-SACKs, retransmissions, recoveries: reordered {reordered:?}, in order {in_order:?}");
    assert!(reordered.0 >= 20, "{reordered:?}");
    assert!(reordered.1 <= 3, "{reordered:?}");
    assert_eq!((in_order.0, in_order.1), (0, 0), "{in_order:?}");
}
