//! Helpers shared by the scenario-level test files (`use crate::common;`).
#![allow(dead_code)]

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::{run_checked, RunResult};

pub fn scenario(text: &str) -> Scenario {
    let doc: Value = toml::from_str(text).expect("valid TOML");
    Scenario::from_value(doc).unwrap_or_else(|e| panic!("scenario error: {e}"))
}

/// Run and assert the accounting identities.
pub fn run(text: &str) -> RunResult {
    let (r, check) = run_checked(&scenario(text));
    check.unwrap_or_else(|e| panic!("accounting identity violated: {e}"));
    r
}

/// The testbed grid's dumbbell (`scenarios/testbed/dumbbell-20.toml`: 10
/// Mbit/s, 20 ms bottleneck and 15 ms access delays, 100 ms base RTT, a
/// 200-packet buffer, starts spread over 2 s, 20 s measured from 8 s):
/// `flows` bulk flows of the linux profile, seed `seed`; `aqm`, `tcp` and
/// `bulk` the lines of the `[aqm]` table (its kind included), more lines
/// of `[tcp]` and of the bulk group.
pub fn grid(seed: u64, flows: u32, aqm: &str, tcp: &str, bulk: &str) -> String {
    format!(
        r#"
duration = "20s"
seed = {seed}
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 200
[aqm]
{aqm}
[tcp]
profile = "linux"
{tcp}
[[traffic]]
kind = "bulk"
flows = {flows}
start = {{ uniform = ["0s", "2s"] }}
{bulk}
[metrics]
start = "8s"
"#
    )
}

/// [`grid`] through FQ-CoDel, `aqm` more lines of its table.
pub fn grid_fq_codel(seed: u64, flows: u32, aqm: &str, tcp: &str) -> String {
    grid(seed, flows, &format!("kind = \"fq-codel\"\n{aqm}"), tcp, "")
}

pub fn dumbbell(flows: u32, aqm: &str, extra_tcp: &str) -> String {
    format!(
        r#"
duration = "100s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 500
{aqm}
[tcp]
packet_size = 500
{extra_tcp}
[[traffic]]
kind = "bulk"
flows = {flows}
start = {{ uniform = ["0s", "5s"] }}
[metrics]
start = "40s"
"#
    )
}

/// One bulk flow, 10 Mbit/s, 42 ms base RTT, 1500-byte packets, a
/// 60-packet DropTail queue, 60 s; `tcp` and `metrics` are the bodies of
/// the `[tcp]` and `[metrics]` tables beside `packet_size`.
pub fn one_flow_droptail(tcp: &str, metrics: &str) -> String {
    format!(
        r#"
duration = "60s"
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "1ms"
buffer = 60
[aqm]
kind = "droptail"
[tcp]
packet_size = 1500
{tcp}
[[traffic]]
kind = "bulk"
flows = 1
[metrics]
{metrics}
"#
    )
}

pub const RED: &str = r#"[aqm]
kind = "red"
min_th = 20
max_th = 60
max_p = 0.1
w_q = 0.002"#;

/// The value of AQM parameter `name` in the params series at the last
/// record at or before `t_s` (NaN if none).
pub fn param_at(r: &RunResult, name: &str, t_s: f64) -> f64 {
    let p = &r.params;
    let mut v = f64::NAN;
    for i in 0..p.time_s.len() {
        if p.time_s[i] > t_s {
            break;
        }
        if p.name[i] == name {
            v = p.value[i];
        }
    }
    v
}

/// Mean of AQM parameter `name` over the records in [from_s, to_s].
pub fn param_mean(r: &RunResult, name: &str, from_s: f64, to_s: f64) -> f64 {
    let p = &r.params;
    let (mut sum, mut n) = (0.0, 0usize);
    for i in 0..p.time_s.len() {
        if p.name[i] == name && p.time_s[i] >= from_s && p.time_s[i] <= to_s {
            sum += p.value[i];
            n += 1;
        }
    }
    sum / n as f64
}

/// Time-weighted mean of the sampled queue (packets) over [from_s, to_s].
pub fn queue_mean(r: &RunResult, from_s: f64, to_s: f64) -> f64 {
    let q = &r.queue;
    let (mut sum, mut n) = (0.0, 0usize);
    for i in 0..q.time_s.len() {
        if q.time_s[i] >= from_s && q.time_s[i] <= to_s {
            sum += q.queue_pkts[i] as f64;
            n += 1;
        }
    }
    sum / n as f64
}

/// Print a DualPI2 run's figures after `label` (the first flow's rate over
/// the second's, `ratio`; L's p99 and mean sojourn, C's mean, utilisation,
/// L's marks and C's drops) and return L's p99 sojourn and C's mean, s.
pub fn dualpi2_figures(label: &str, r: &RunResult, ratio: f64) -> (f64, f64) {
    let b = &r.summary.bottleneck;
    let lp99 = b.l_queue_delay_p99_s.expect("DualPI2 reports L's p99");
    let cmean = b.c_queue_delay_mean_s.expect("DualPI2 reports C's mean");
    println!(
        "{label}: ratio {ratio:.2}, L p99 {:.2} ms, L mean {:.2} ms, C mean {:.1} ms, util {:.3}, marks ect1 {} drops not-ect {}",
        lp99 * 1e3,
        b.l_queue_delay_mean_s.unwrap_or(0.0) * 1e3,
        cmean * 1e3,
        b.utilization,
        b.marks_ect1,
        b.drops_not_ect
    );
    (lp99, cmean)
}
