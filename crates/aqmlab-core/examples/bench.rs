//! `make bench`: run scenario files and print speed figures.
//!
//! Usage: `cargo run --release --example bench -- FILE [FILE ...]`
//! For each file: wall seconds, simulated seconds per wall second, events per
//! wall second, bottleneck packets per wall second, and the process's peak
//! resident memory so far.

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

fn main() -> ExitCode {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: bench FILE [FILE ...]");
        return ExitCode::from(2);
    }
    println!(
        "{:<28} {:>8} {:>10} {:>12} {:>12} {:>9}",
        "scenario", "wall_s", "sim_s/s", "events/s", "bn_pkts/s", "peak_MB"
    );
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {f}: {e}");
                return ExitCode::from(2);
            }
        };
        let doc: Value = match toml::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: {f}: {e}");
                return ExitCode::from(2);
            }
        };
        let sc = match Scenario::from_value(doc) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {f}: {e}");
                return ExitCode::from(2);
            }
        };
        let r = aqmlab_core::run(&sc, &mut |_| true).expect("not interrupted");
        let s = &r.summary;
        let name = std::path::Path::new(&f)
            .file_stem()
            .map_or(f.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<28} {:>8.3} {:>10.1} {:>12.0} {:>12.0} {:>9.1}",
            name,
            s.wall_time_s,
            s.duration_s / s.wall_time_s,
            s.events as f64 / s.wall_time_s,
            r.summary.bottleneck.departures as f64 * s.duration_s
                / (s.duration_s - s.measure_start_s)
                / s.wall_time_s,
            peak_rss_mb()
        );
        eprintln!(
            "  util {:.4} loss {:.4} qmean {:.1} early {} forced {} overflow {} goodput {:.0} jain {:.3} timeouts {}",
            s.bottleneck.utilization,
            s.bottleneck.loss_rate,
            s.bottleneck.queue_mean_pkts,
            s.bottleneck.drops_early,
            s.bottleneck.drops_forced,
            s.bottleneck.drops_overflow,
            s.flows.goodput_bps_total,
            s.flows.jain_fairness,
            s.flows.timeouts
        );
    }
    ExitCode::SUCCESS
}
