//! `make bench`: run scenario files and print speed figures.
//!
//! Usage: `cargo run --release --example bench -- [--reps N] SPEC [SPEC ...]`
//! where SPEC is `FILE` or `FILE@KIND` (the file with its `[aqm]` table
//! replaced by `kind = KIND` and that scheme's defaults).
//!
//! Each SPEC runs N times (default 3); the line shows the median run's wall
//! seconds, simulated seconds per wall second (median and best, since other
//! load on the machine only ever slows a run down), events per wall second,
//! bottleneck packets per wall second, and the process's peak resident
//! memory so far. For scenarios with web traffic an extra line gives the
//! requests completed per wall second (completed in the measurement
//! interval, scaled to the whole run like `bn_pkts/s`).

use aqmlab_core::scenario::{Scenario, Value};
use std::process::ExitCode;

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<f64>().ok())
            })
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn load(spec: &str) -> Result<(String, Scenario), String> {
    let (file, kind) = match spec.split_once('@') {
        Some((f, k)) => (f, Some(k)),
        None => (spec, None),
    };
    let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let mut doc: Value = toml::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    let stem = std::path::Path::new(file)
        .file_stem()
        .map_or(file.to_string(), |n| n.to_string_lossy().into_owned());
    let name = match kind {
        Some(k) => {
            if let Value::Table(entries) = &mut doc {
                entries.retain(|(key, _)| key != "aqm");
                entries.push((
                    "aqm".into(),
                    Value::Table(vec![("kind".into(), Value::Str(k.into()))]),
                ));
            }
            format!("{stem}@{k}")
        }
        None => stem,
    };
    let sc = Scenario::from_value(doc).map_err(|e| format!("{spec}: {e}"))?;
    Ok((name, sc))
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps = 3usize;
    if args.first().is_some_and(|a| a == "--reps") {
        match args.get(1).and_then(|v| v.parse().ok()).filter(|&n| n > 0) {
            Some(n) => reps = n,
            None => {
                eprintln!("error: --reps: expected a positive integer");
                return ExitCode::from(2);
            }
        }
        args.drain(..2);
    }
    if args.is_empty() {
        eprintln!("usage: bench [--reps N] FILE[@AQM_KIND] ...");
        return ExitCode::from(2);
    }
    println!(
        "{:<30} {:>8} {:>10} {:>10} {:>12} {:>12} {:>8}",
        "scenario", "wall_s", "sim_s/s", "best", "events/s", "bn_pkts/s", "peak_MB"
    );
    for spec in args {
        let (name, sc) = match load(&spec) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        // Keep only the summaries, so peak memory is that of one run.
        let mut runs: Vec<aqmlab_core::Summary> = (0..reps)
            .map(|_| {
                aqmlab_core::run(&sc, &mut |_| true)
                    .expect("not interrupted")
                    .summary
            })
            .collect();
        runs.sort_by(|a, b| a.wall_time_s.total_cmp(&b.wall_time_s));
        let best = runs[0].wall_time_s;
        let s = &runs[reps / 2];
        println!(
            "{:<30} {:>8.3} {:>10.1} {:>10.1} {:>12.0} {:>12.0} {:>8.1}",
            name,
            s.wall_time_s,
            s.duration_s / s.wall_time_s,
            s.duration_s / best,
            s.events as f64 / s.wall_time_s,
            s.bottleneck.departures as f64 * s.duration_s
                / (s.duration_s - s.measure_start_s)
                / s.wall_time_s,
            peak_rss_mb()
        );
        eprintln!(
            "  util {:.4} loss {:.4} qmean {:.1} early {} forced {} overflow {} marks {} goodput {:.0} jain {:.3} timeouts {}",
            s.bottleneck.utilization,
            s.bottleneck.loss_rate,
            s.bottleneck.queue_mean_pkts,
            s.bottleneck.drops_early,
            s.bottleneck.drops_forced,
            s.bottleneck.drops_overflow,
            s.bottleneck.marks,
            s.flows.goodput_bps_total,
            s.flows.jain_fairness,
            s.flows.timeouts
        );
        if let Some(w) = &s.web {
            let scale = s.duration_s / (s.duration_s - s.measure_start_s);
            eprintln!(
                "  web: requests/s {:.0} (completed {}, p50 {:.3} s, p90 {:.3} s, SYN/ACK drops {})",
                w.completed as f64 * scale / s.wall_time_s,
                w.completed,
                w.response_time_p50_s,
                w.response_time_p90_s,
                w.synack_drops
            );
        }
    }
    ExitCode::SUCCESS
}
