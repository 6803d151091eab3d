//! `metrics.pcap`: the capture holds the first N packets to leave the
//! queue of the monitored link (both directions of the dumbbell's
//! bottleneck), in time order, with the run's own counts of packets and
//! CE marks; capturing changes no figure of the run.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// (time ns, IP header and transport header, bytes on the wire) of every
/// record of a capture file.
pub(crate) fn records(f: &[u8]) -> Vec<(u64, Vec<u8>, u32)> {
    assert_eq!(
        &f[..4],
        &0xa1b2_3c4du32.to_le_bytes(),
        "not a nanosecond pcap"
    );
    let word = |i: usize| u32::from_le_bytes(f[i..i + 4].try_into().unwrap());
    assert_eq!((word(16), word(20)), (40, 101));
    let mut out = Vec::new();
    let mut i = 24;
    while i < f.len() {
        let t = u64::from(word(i)) * 1_000_000_000 + u64::from(word(i + 4));
        let (incl, orig) = (word(i + 8) as usize, word(i + 12));
        out.push((t, f[i + 16..i + 16 + incl].to_vec(), orig));
        i += 16 + incl;
    }
    out
}

fn scenario(aqm: &str, pcap: u64, extra: &str) -> String {
    format!(
        r#"
duration = "10s"
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "5ms"
buffer = 200
{aqm}
[tcp]
packet_size = 1000
ecn = true
[[traffic]]
kind = "bulk"
flows = 20
start = {{ uniform = ["0s", "1s"] }}
[[traffic]]
kind = "bulk"
flows = 3
direction = "reverse"
{extra}
[metrics]
pcap = {pcap}
"#
    )
}

const RED: &str =
    "[aqm]\nkind = \"red\"\nmin_th = 5\nmax_th = 30\nmax_p = 0.1\nw_q = 0.002\necn = true";
const CODEL: &str = "[aqm]\nkind = \"codel\"\necn = true";

/// Packets in the capture = departures of the two directions; CE-marked
/// ones = the marks, less (an AQM that marks at enqueue) those still
/// queued at the end.
fn check_counts(r: &RunResult, exact_marks: bool) -> Vec<(u64, Vec<u8>, u32)> {
    let recs = records(&r.pcap);
    let links = &r.summary.links;
    assert_eq!(links.len(), 2);
    let departed: u64 = links.iter().map(|l| l.figures.departures).sum();
    let marks: u64 = links.iter().map(|l| l.figures.marks).sum();
    let waiting: u64 = links
        .iter()
        .map(|l| {
            let f = &l.figures;
            f.arrivals - f.departures - f.drops_early - f.drops_forced - f.drops_overflow
        })
        .sum();
    assert_eq!(recs.len() as u64, departed);
    let bytes: u64 = recs.iter().map(|r| u64::from(r.2)).sum();
    let thr: f64 = links.iter().map(|l| l.figures.throughput_bps).sum();
    // The throughput counts bits sent by the end: a packet in transmission
    // then (one on each direction, at most 1000 bytes) counts in part.
    let gap = bytes as f64 * 8.0 / 10.0 - thr;
    assert!((0.0..1600.0).contains(&gap), "{bytes} B, {thr} bit/s");
    let ce = recs.iter().filter(|r| r.1[1] & 3 == 3).count() as u64;
    assert!(marks > 100, "{marks} marks");
    if exact_marks {
        assert_eq!(ce, marks);
    } else {
        assert!(
            ce <= marks && ce + waiting >= marks,
            "{ce} CE, {marks} marks, {waiting} waiting"
        );
    }
    assert!(
        recs.windows(2).all(|w| w[0].0 <= w[1].0),
        "out of time order"
    );
    assert!(recs.last().unwrap().0 <= 10_000_000_000);
    recs
}

#[test]
fn red_capture_matches_the_runs_counters() {
    let r = run(&scenario(RED, 1_000_000, ""));
    let recs = check_counts(&r, false);
    // Data of the forward flows: sequence numbers from 1 in steps of the
    // 960-byte MSS; their ACKs echo marks with ECE (TCP flags byte 33).
    let data: Vec<&(u64, Vec<u8>, u32)> = recs
        .iter()
        .filter(|r| r.2 == 1000 && r.1[12] == 10 && r.1[13] < 128)
        .collect();
    assert!(data.len() > 5000);
    for d in &data {
        let seq = u32::from_be_bytes(d.1[24..28].try_into().unwrap());
        assert_eq!((seq - 1) % 960, 0, "{seq}");
    }
    assert!(recs.iter().any(|r| r.1[33] & 0x40 != 0), "no ECE");
    assert!(recs.iter().any(|r| r.1[33] & 0x80 != 0), "no CWR");
}

#[test]
fn codel_marks_at_dequeue_every_one_captured() {
    check_counts(&run(&scenario(CODEL, 1_000_000, "")), true);
}

/// The first N are the first N of the whole capture; the figures are
/// those of the run without a capture; the same seed gives the same file.
#[test]
fn first_n_packets_and_no_change_to_the_run() {
    let all = run(&scenario(RED, 1_000_000, ""));
    let some = run(&scenario(RED, 1000, ""));
    assert_eq!(records(&some.pcap).len(), 1000);
    assert_eq!(some.pcap[..], all.pcap[..some.pcap.len()]);
    assert_eq!(run(&scenario(RED, 1000, "")).pcap, some.pcap);
    let none = run(&scenario(RED, 0, ""));
    assert!(none.pcap.is_empty());
    let figures = |r: &RunResult| {
        let mut s = serde_json::to_value(&r.summary).unwrap();
        s["wall_time_s"] = 0.0.into();
        s.to_string()
    };
    assert_eq!(figures(&all), figures(&none));
    let sc = serde_json::to_value(&none.scenario).unwrap();
    assert!(sc["metrics"].get("pcap").is_none(), "{sc}");
}

/// UDP datagrams go as UDP with their size; a parking lot captures link0
/// alone (its reverse direction is not measured).
#[test]
fn udp_and_parking_lot() {
    let r = run(&scenario(
        CODEL,
        1_000_000,
        "[[traffic]]\nkind = \"cbr\"\nrate = \"1Mbps\"\npacket_size = 200",
    ));
    let recs = records(&r.pcap);
    let udp: Vec<_> = recs.iter().filter(|r| r.1[9] == 17).collect();
    // 1 Mbit/s of 200-byte datagrams for 10 s: 6250 sent.
    assert!((6000..=6250).contains(&udp.len()), "{}", udp.len());
    assert!(udp.iter().all(|r| r.2 == 200 && r.1.len() == 28));
    let r = run(r#"
duration = "5s"
[topology]
kind = "parking-lot"
links = 2
bottleneck_rate = "10Mbps"
[[traffic]]
kind = "bulk"
flows = 4
path = "long"
[metrics]
pcap = 1000000
"#);
    let link0 = &r.summary.links[0];
    assert_eq!(link0.name, "link0");
    assert_eq!(records(&r.pcap).len() as u64, link0.figures.departures);
}
