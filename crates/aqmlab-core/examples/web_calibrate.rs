//! Measure the load a `web` group really offers, as `000_0675317d310dd341.txt`
//! does: run it on an uncongested 1 Gbps dumbbell and report the realised
//! throughput in the data direction.
//!
//! Usage: `cargo run --release --example web_calibrate -- [LOAD [DURATION
//! [SEED [http=1.1] [KEY=NUMBER ...]]]]`, e.g. `-- 90Mbps 60s 1 http=1.1`.
//! The measurement starts at 10 s. `KEY=VALUE` sets a key of the web
//! group (`think=3s`, `objects=2`; numbers are read as numbers).

use aqmlab_core::scenario::web::calibration_scenario;
use aqmlab_core::scenario::Value;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let load = args.first().map_or("90Mbps", |s| s.as_str());
    let duration = args.get(1).map_or("60s", |s| s.as_str());
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut extra = Vec::new();
    for kv in args.iter().skip(3) {
        let Some((k, v)) = kv.split_once('=') else {
            eprintln!("error: {kv}: expected KEY=VALUE");
            return ExitCode::from(2);
        };
        let val = match (v.parse::<i64>(), v.parse::<f64>()) {
            (Ok(i), _) => Value::Int(i),
            (_, Ok(x)) if k != "http" => Value::Float(x),
            _ => Value::Str(v.to_string()),
        };
        extra.push(("traffic", k, val));
    }
    let sc = match calibration_scenario(load, duration, "10s", seed, &extra) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let offered = aqmlab_core::units::BitRate::parse(load).map_or(f64::NAN, |r| r.bps() as f64);
    let r = aqmlab_core::run(&sc, &mut |_, _| true).expect("not interrupted");
    let s = &r.summary;
    let w = s.web.clone().unwrap_or_default();
    println!(
        "offered {:.2} Mb/s realised {:.2} Mb/s ratio {:.4} sessions {} completed {} p50 {:.3}s wall {:.2}s",
        offered / 1e6,
        s.bottleneck.throughput_bps / 1e6,
        s.bottleneck.throughput_bps / offered,
        sc.total_flows(),
        w.completed,
        w.response_time_p50_s,
        s.wall_time_s
    );
    ExitCode::SUCCESS
}
