//! `[[traffic]] kind = "video"`: an adaptive video player over one
//! persistent connection, its bitrate chosen from the measured download
//! rates, its playback stalled when the buffer runs out.

use crate::common;

use aqmlab_core::RunResult;
use common::run;

/// One video session (the default ladder, 0.3-4.3 Mbit/s, 2 s segments,
/// a 12 s buffer) beside `bulk` NewReno flows on a dumbbell of `rate`,
/// base RTT 100 ms, a DropTail buffer of 100 packets, measured from 20 s;
/// `extra` adds keys at the end (a schedule).
fn video(rate: &str, bulk: u32, duration: &str, extra: &str) -> RunResult {
    let bulk = if bulk > 0 {
        format!("[[traffic]]\nkind = \"bulk\"\nflows = {bulk}\nbase_rtt = \"100ms\"\n")
    } else {
        String::new()
    };
    run(&format!(
        r#"
duration = "{duration}"
seed = 1
[topology]
bottleneck_rate = "{rate}"
bottleneck_delay = "1ms"
buffer = 100
[tcp]
profile = "linux"
variant = "newreno"
[[traffic]]
kind = "video"
base_rtt = "100ms"
{bulk}
[metrics]
start = "20s"
{extra}
"#
    ))
}

fn video_goodput(r: &RunResult) -> f64 {
    let t = &r.flows;
    (0..t.flow.len())
        .filter(|&i| t.kind[i] == "video")
        .map(|i| t.goodput_bps[i])
        .sum()
}

/// Alone on 10 Mbit/s the player takes the top bitrate (4.3 Mbit/s is
/// below 0.9 x the link) and, its buffer full, fetches a segment every
/// 2 s: its goodput is the bitrate, within the 2 % a segment more or less
/// in the 40 s measured makes (one segment of 20 is 5 %: the count of
/// segments is checked exactly instead).
#[test]
fn alone_it_streams_the_top_bitrate_at_its_rate() {
    let r = video("10Mbps", 0, "60s", "");
    let v = r.summary.video.as_ref().expect("a video summary");
    assert_eq!(v.sessions, 1);
    assert_eq!(v.bitrate_mean_bps, 4_300_000.0, "{v:?}");
    assert_eq!(v.switches, 0);
    assert_eq!(v.stalls, 0);
    assert!((19..=21).contains(&v.segments), "{v:?}");
    let g = video_goodput(&r);
    assert!((g / 4.3e6 - 1.0).abs() < 0.06, "goodput {g}");
    // The start: the first segments at the lowest bitrates, then the top.
    assert!(
        v.startup_delay_mean_s.is_none(),
        "playback began before 20 s"
    );
}

/// Beside 4 bulk flows on 10 Mbit/s (a fifth of the link each, 2 Mbit/s)
/// the player settles below its share, as players fetching segments ON
/// and OFF beside long-lived flows do (Huang et al., IMC 2012): each
/// segment's download starts from the window the idle period left and
/// waits behind the bulk flows' queue, so the rates it measures, times
/// 0.9, allow the two lowest rungs where alone it streams 4.3; it never
/// stalls. Which of the two it holds is close: the next rung asks a
/// harmonic mean of 0.83 Mbit/s, and the lowest rung's 75 kB segments
/// measure 0.30-0.73 Mbit/s (0.8-2.0 s each) where 187.5 kB ones of
/// 0.75 Mbit/s, more rounds of slow start over one request's wait,
/// measure 0.61-0.87 in its first 16 s (measured: 0.3 Mbit/s the whole
/// 40 s; the seed does not change it). On 2 Mbit/s alone, 1.2 Mbit/s at
/// most (0.9 x 2 = 1.8 allows no more).
#[test]
fn beside_bulk_flows_it_stays_below_its_share() {
    let r = video("10Mbps", 4, "60s", "");
    let v = r.summary.video.as_ref().unwrap();
    assert!(
        v.bitrate_mean_bps >= 0.3e6 && v.bitrate_mean_bps <= 0.75e6,
        "{v:?}"
    );
    assert_eq!(v.stalls, 0, "{v:?}");
    let bulk = {
        let t = &r.flows;
        (0..t.flow.len())
            .filter(|&i| t.kind[i] == "bulk")
            .map(|i| t.goodput_bps[i])
            .sum::<f64>()
            / 4.0
    };
    assert!(
        video_goodput(&r) < bulk,
        "{} against {bulk}",
        video_goodput(&r)
    );
    let r = video("2Mbps", 0, "60s", "");
    let v = r.summary.video.as_ref().unwrap();
    assert!(
        v.bitrate_mean_bps <= 1.2e6 && v.bitrate_mean_bps >= 0.75e6,
        "{v:?}"
    );
    assert_eq!(v.stall_time_s, 0.0);
}

/// The link falls to 0.2 Mbit/s at 30 s, below the lowest bitrate: the
/// segment under way (4.3 Mbit/s x 2 s, 1.07 MB: 43 s at 0.2 Mbit/s; the
/// player does not abandon a request) outlasts the buffer (at most 12 s),
/// and playback stalls. Later segments come at lower bitrates, but even
/// the lowest (0.3 Mbit/s) takes 3 s to bring 2 s of play: stalls recur
/// to the end. The rebuffer ratio is the stalled share of the time
/// watched (all 100 s measured: playback began before 20 s).
#[test]
fn a_link_below_the_lowest_bitrate_stalls_playback() {
    let sched = r#"
[[schedule]]
at = "30s"
action = "link"
link = "bottleneck"
rate = "0.2Mbps"
"#;
    let r = video("10Mbps", 0, "120s", sched);
    let v = r.summary.video.as_ref().unwrap();
    assert!(v.stalls >= 2, "{v:?}");
    assert!(v.stall_time_s > 40.0 && v.stall_time_s < 90.0, "{v:?}");
    assert!(
        (v.rebuffer_ratio - v.stall_time_s / 100.0).abs() < 1e-9,
        "{v:?}"
    );
    assert!(v.switches >= 1, "{v:?}");
    assert!(v.bitrate_mean_bps < 4.3e6, "{v:?}");
}

/// Two video groups in one run, one with a ladder that stops at 1.2 Mbit/s:
/// `summary.video.groups` keeps each group's sessions apart (keyed by the
/// group's `[[traffic]]` index, the bulk group between them has none), and
/// the groups' counts add up to the total, whose bitrate is their
/// segment-weighted mean. With one video group its only entry is the total.
#[test]
fn each_video_group_has_its_own_figures() {
    let capped = r#"
[[traffic]]
kind = "video"
base_rtt = "100ms"
bitrates = ["300kbps", "750kbps", "1.2Mbps"]
"#;
    let r = video("10Mbps", 2, "60s", "");
    let v = r.summary.video.as_ref().unwrap();
    assert_eq!(v.groups.len(), 1);
    let g = &v.groups["0"];
    assert!(g.groups.is_empty());
    assert_eq!(
        (
            g.sessions,
            g.segments,
            g.switches,
            g.stalls,
            g.bitrate_mean_bps
        ),
        (
            v.sessions,
            v.segments,
            v.switches,
            v.stalls,
            v.bitrate_mean_bps
        )
    );
    // The capped group comes after the bulk group: [[traffic]] index 2
    // (a `[[traffic]]` table after `[metrics]` joins the same list).
    let r = video("10Mbps", 2, "60s", capped);
    let v = r.summary.video.as_ref().unwrap();
    let keys: Vec<&str> = v.groups.keys().map(String::as_str).collect();
    assert_eq!(keys, ["0", "2"]);
    let (a, b) = (&v.groups["0"], &v.groups["2"]);
    println!("all {v:?}");
    assert_eq!((a.sessions, b.sessions, v.sessions), (1, 1, 2));
    assert_eq!(a.segments + b.segments, v.segments);
    assert_eq!(a.switches + b.switches, v.switches);
    assert_eq!(a.stalls + b.stalls, v.stalls);
    assert!((a.stall_time_s + b.stall_time_s - v.stall_time_s).abs() < 1e-9);
    // The capped ladder holds its group at 1.2 Mbit/s at most.
    assert!(b.bitrate_mean_bps <= 1.2e6, "{b:?}");
    let weighted = (a.bitrate_mean_bps * a.segments as f64
        + b.bitrate_mean_bps * b.segments as f64)
        / v.segments as f64;
    assert!((weighted / v.bitrate_mean_bps - 1.0).abs() < 1e-12);
}
