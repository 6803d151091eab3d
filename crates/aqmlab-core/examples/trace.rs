//! Print a flow's congestion window and the bottleneck queue over time.
//! Usage: `cargo run --release --example trace -- FILE [FLOW] [STEP_MS]`

use aqmlab_core::scenario::{Scenario, Value};
use aqmlab_core::units::SimTime;
use aqmlab_core::world::World;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: trace FILE [FLOW] [STEP_MS]");
        return ExitCode::from(2);
    };
    let flow: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let step: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let doc: Value = match toml::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let sc = match Scenario::from_value(doc) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut w = World::new(&sc);
    let mut t = SimTime::ZERO;
    println!("t_s cwnd ssthresh rto_ms queue drops timeouts fastrx");
    while t < sc.duration {
        t += SimTime::from_millis(step);
        w.run_until(t);
        let f = w.flow(flow);
        let l = w.link(0);
        println!(
            "{:.2} {:.1} {:.1} {} {} {} {} {}",
            t.as_secs_f64(),
            f.cwnd,
            f.ssthresh,
            f.rto.as_nanos() / 1_000_000,
            l.qlen().pkts,
            l.stats.drops(),
            f.stats.timeouts,
            f.stats.fast_retransmits
        );
    }
    ExitCode::SUCCESS
}
