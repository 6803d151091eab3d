//! Run scenario files and print each one's `summary.json` (without the
//! Python layer). Usage: `cargo run --release --example summary -- FILE...`
//! A `FILE@seed=N` runs with seed N. `--no-cut-through` and
//! `--no-plan-departures` and `--no-ahead` turn those engine switches off
//! ([`aqmlab_core::world::Options`]), to compare a scenario's figures with
//! and without them over seeds.

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::world::{Options, World};
use std::process::ExitCode;

const USAGE: &str =
    "usage: summary [--no-cut-through] [--no-plan-departures] [--no-ahead] FILE[@seed=N]...";

fn main() -> ExitCode {
    let mut opts = Options::default();
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--no-cut-through" => opts.cut_through = false,
            "--no-plan-departures" => opts.plan_departures = false,
            "--no-ahead" => opts.ahead = false,
            a if a.starts_with("--") => {
                eprintln!("error: unknown option {a}\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => files.push(arg),
        }
    }
    if files.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    for arg in files {
        let (file, seed) = match arg.split_once("@seed=") {
            Some((f, s)) => match s.parse::<u64>() {
                Ok(n) => (f.to_string(), Some(n)),
                Err(_) => {
                    eprintln!("error: {arg}: seed must be a non-negative integer");
                    return ExitCode::from(2);
                }
            },
            None => (arg.clone(), None),
        };
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::from(2);
            }
        };
        let doc: Value = match toml::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::from(2);
            }
        };
        let mut sc = match Scenario::from_value(doc) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::from(2);
            }
        };
        if let Some(s) = seed {
            sc.seed = s;
        }
        let wall = std::time::Instant::now();
        let mut w = World::with_options(&sc, opts);
        w.run_until(sc.duration);
        let mut r = w.finish();
        r.summary.wall_time_s = wall.elapsed().as_secs_f64();
        match serde_json::to_string(&r.summary) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}
