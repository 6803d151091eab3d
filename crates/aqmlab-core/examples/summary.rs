//! Run scenario files and print each one's `summary.json` (without the
//! Python layer). Usage: `cargo run --release --example summary -- FILE...`
//! A `FILE@seed=N` runs with seed N.

use aqmlab_core::scenario::{Scenario, Value};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        eprintln!("usage: summary FILE[@seed=N]...");
        return ExitCode::from(2);
    }
    for arg in args {
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
        let r = match aqmlab_core::run(&sc, &mut |_, _| true) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {file}: {e}");
                return ExitCode::from(2);
            }
        };
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
