//! `make bench`: run scenario files and print speed figures.
//!
//! Usage: `cargo run --release --example bench -- [--reps N] SPEC [SPEC ...]`
//! where SPEC is `FILE` or `FILE@KIND` (the file with its `[aqm]` table
//! replaced by `kind = KIND` and that scheme's defaults). `make bench` builds
//! it as `make build` builds the extension, with the engine's profile
//! (`tools/pgo.sh`; about 18 % faster); `cargo run` as above builds it without.
//!
//! Each SPEC runs N times (default 3); the line shows the median run's wall
//! seconds, simulated seconds per wall second (median and best, since other
//! load on the machine only ever slows a run down), events per wall second,
//! bottleneck packets per wall second, the process's peak resident
//! memory so far, `ns/ev`: wall ns per event at the best run (a run is
//! deterministic, so every repetition takes the same events), and `x_ev`
//! that figure over the first SPEC's (`make bench` lists the canonical
//! scenario first and its linux-profile twin second, so the second row's
//! `x_ev` is the linux profile's cost per event in NewReno's). For scenarios with web traffic an extra line gives the
//! requests completed per wall second (completed in the measurement
//! interval, scaled to the whole run like `bn_pkts/s`).
//!
//! `bench --scale [--events N] [--warmup W] [--reps R] FILE` prints the scaling table:
//! FILE (the canonical dumbbell) scaled by 1, 10, 100 and 1000
//! (bottleneck rate, flows, buffer and RED thresholds; access links 10x the
//! bottleneck as in the canonical scenario; every flow starts in the first
//! second, so that all of them are running when the measurement begins),
//! each row set up, run unmeasured to W simulated seconds (default 2),
//! then for N measured events (default 10 M).
//! Columns: flows, set-up wall time, simulated seconds the measured events
//! cover, events per wall second, ns per event, `best`: ns per event with
//! each of the ten slices the measured events run in timed by its fastest
//! repetition (a run is deterministic, so every repetition runs the same
//! events; other load on the machine only ever slows a slice down), that
//! figure over the first row's (the engine's goals: at most 1.5 at 10 000
//! flows and 2 at 100 000 against 100), `sim_s/s`: simulated seconds per
//! wall second at `best` (comparable between versions of the engine that
//! need different numbers of events for the same traffic), `ns/pkt`: wall
//! ns at `best` per packet the bottleneck can carry (`tcp.packet_size`
//! bytes at the row's rate over the simulated seconds covered: the work per
//! unit of traffic, whatever the number of events it takes) and `x_pkt` its
//! ratio to the first row's, peak resident memory of the row,
//! and that memory beyond the process's before the row per flow (both
//! from the first repetition).
//! The rows are measured in turn, `--reps R` times over (default 3); the
//! other columns are the medians of the repetitions (set-up and memory:
//! the first). `--rows 1,10` picks the scale factors. `--setup N` (default 200 000)
//! then times the set-up of FILE with its first traffic group's flows
//! raised to N, all starting at 0 s: building the world, and running the
//! events of time 0 (every flow's start and first packets).

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

/// Resident memory now (VmRSS) or its peak since the last reset (VmHWM), MB.
fn rss_mb(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(key)).and_then(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<f64>().ok())
            })
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Reset the peak resident memory to the current (Linux 4.0+), so that each
/// row's peak is its own.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Multiply the integer at `path` of `doc` by `k`.
fn scale_int(doc: &mut Value, path: &[&str], k: i64) {
    if let Some(Value::Int(v)) = get_mut(doc, path) {
        *v *= k;
    }
}

fn get_mut<'a>(doc: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(doc);
    };
    match doc {
        Value::Table(t) => t
            .iter_mut()
            .find(|(k, _)| k == first)
            .and_then(|(_, v)| get_mut(v, rest)),
        Value::Array(a) => first
            .parse::<usize>()
            .ok()
            .and_then(|i| a.get_mut(i))
            .and_then(|v| get_mut(v, rest)),
        _ => None,
    }
}

/// The canonical scenario scaled by `k`: bottleneck 10k Mbit/s, access
/// links 10x that, buffer, RED thresholds and flows x k.
fn scaled(base: &Value, k: i64) -> Result<Scenario, String> {
    let mut doc = base.clone();
    // Long enough for the measured events at every scale.
    if let Some(v) = get_mut(&mut doc, &["duration"]) {
        *v = Value::Str("2000s".into());
    }
    if let Some(v) = get_mut(&mut doc, &["topology", "bottleneck_rate"]) {
        *v = Value::Str(format!("{}Mbps", 10 * k));
    }
    if let Some(v) = get_mut(&mut doc, &["topology", "access_rate"]) {
        *v = Value::Str(format!("{}Mbps", 100 * k));
    }
    scale_int(&mut doc, &["topology", "buffer"], k);
    scale_int(&mut doc, &["aqm", "min_th"], k);
    scale_int(&mut doc, &["aqm", "max_th"], k);
    for i in 0..8 {
        let g = i.to_string();
        scale_int(&mut doc, &["traffic", &g, "flows"], k);
        if let Some(v) = get_mut(&mut doc, &["traffic", &g, "start"]) {
            *v = Value::Table(vec![(
                "uniform".into(),
                Value::Array(vec![Value::Str("0s".into()), Value::Str("1s".into())]),
            )]);
        }
    }
    Scenario::from_value(doc).map_err(|e| format!("x{k}: {e}"))
}

/// One measurement of a `--scale` row.
#[derive(Clone)]
struct Row {
    flows: u32,
    setup: f64,
    sim: f64,
    events_per_s: f64,
    ns_per_event: f64,
    /// Wall time of each slice, s, and its events (the same events in
    /// every repetition: a run is deterministic).
    slices: Vec<(f64, u64)>,
    peak: f64,
    bytes_per_flow: f64,
}

/// ns per event with each slice's fastest repetition: the same events
/// timed `reps` times, so other load on the machine (which only ever slows
/// a slice down) is left out as far as one repetition escaped it.
fn best_of(reps: &[Row]) -> f64 {
    let (mut wall, mut n) = (0.0, 0u64);
    for (i, &(_, events)) in reps[0].slices.iter().enumerate() {
        wall += reps
            .iter()
            .filter_map(|r| r.slices.get(i).map(|s| s.0))
            .fold(f64::INFINITY, f64::min);
        n += events;
    }
    wall * 1e9 / n.max(1) as f64
}

/// Set up the canonical scenario scaled by `k`, run it unmeasured to
/// `warmup` s, then `events` events in timed slices.
fn measure_row(base: &Value, k: i64, warmup: u64, events: u64) -> Result<Row, String> {
    let sc = scaled(base, k)?;
    let flows = sc.total_flows();
    let before = rss_mb("VmRSS:");
    reset_peak();
    let t0 = std::time::Instant::now();
    let mut w = aqmlab_core::world::World::new(&sc);
    let setup = t0.elapsed().as_secs_f64();
    w.run_until(aqmlab_core::units::SimTime::from_secs(warmup));
    let sim0 = w.now();
    // In SLICES slices, each timed (see `best_of`).
    let (mut n, mut wall, mut slices) = (0u64, 0.0f64, Vec::new());
    for i in 0..SLICES {
        let want = events * (i + 1) / SLICES - events * i / SLICES;
        let t1 = std::time::Instant::now();
        let done = w.run_events(want);
        let dt = t1.elapsed().as_secs_f64();
        n += done;
        wall += dt;
        slices.push((dt, done));
        if done < want {
            break; // the run ended
        }
    }
    let sim = (w.now() - sim0).as_secs_f64();
    let peak = rss_mb("VmHWM:");
    drop(w);
    Ok(Row {
        flows,
        setup,
        sim,
        events_per_s: n as f64 / wall,
        ns_per_event: wall * 1e9 / n.max(1) as f64,
        slices,
        peak,
        bytes_per_flow: (peak - before) * 1024.0 * 1024.0 / flows.max(1) as f64,
    })
}

/// The measured events of a `--scale` row run in this many timed slices.
const SLICES: u64 = 10;

/// `--scale`: the scaling table.
fn scale_table(args: &[String]) -> Result<(), String> {
    let mut events = 10_000_000u64;
    let mut warmup = 2u64;
    let mut rows: Vec<i64> = vec![1, 10, 100, 1000];
    let mut setup_flows = 200_000u64;
    let mut reps = 3u64;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{name}: expected a non-negative integer"))
        };
        match a.as_str() {
            "--events" => events = num("--events")?.max(1),
            "--warmup" => warmup = num("--warmup")?,
            "--setup" => setup_flows = num("--setup")?,
            "--reps" => reps = num("--reps")?.max(1),
            "--rows" => {
                let v = it.next().ok_or("--rows: expected e.g. 1,10,100")?;
                rows = v
                    .split(',')
                    .map(|x| x.trim().parse::<i64>().ok().filter(|&k| k > 0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or(format!(
                        "--rows {v}: expected positive integers, e.g. 1,10,100"
                    ))?;
            }
            f => file = Some(f.to_string()),
        }
    }
    let file = file.ok_or("--scale: a scenario file is needed (scenarios/canonical.toml)")?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{file}: {e}"))?;
    let base: Value = toml::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
    println!(
        "{:<12} {:>7} {:>8} {:>8} {:>12} {:>9} {:>8} {:>6} {:>9} {:>7} {:>6} {:>8} {:>9}",
        "bottleneck",
        "flows",
        "setup_s",
        "sim_s",
        "events/s",
        "ns/event",
        "best",
        "x_row1",
        "sim_s/s",
        "ns/pkt",
        "x_pkt",
        "peak_MB",
        "B/flow"
    );
    // Rows in turn, `reps` times over, so that a spell of load on the
    // machine falls on every row alike; per row the median of the
    // repetitions' figures, `best_of` them, and the memory of the first
    // (later ones start with the allocator's pages of the rows before).
    let mut out: Vec<Vec<Row>> = vec![Vec::new(); rows.len()];
    for _ in 0..reps {
        for (j, &k) in rows.iter().enumerate() {
            out[j].push(measure_row(&base, k, warmup, events)?);
        }
    }
    let first = out.first().map_or(f64::NAN, |r| best_of(r));
    // Wall ns per packet the bottleneck can carry, at `best`: the work per
    // unit of traffic, whatever the number of events it takes.
    let pkt_bytes = match get_mut(&mut base.clone(), &["tcp", "packet_size"]) {
        Some(Value::Int(b)) => *b as f64,
        _ => 1000.0,
    };
    let ns_per_pkt = |k: i64, reps: &[Row]| {
        let events: u64 = reps[0].slices.iter().map(|s| s.1).sum();
        let pkts = reps[0].sim * 10e6 * k as f64 / (8.0 * pkt_bytes);
        events as f64 * best_of(reps) / pkts.max(1.0)
    };
    let first_pkt = rows
        .first()
        .zip(out.first())
        .map_or(f64::NAN, |(&k, r)| ns_per_pkt(k, r));
    for (k, reps) in rows.iter().zip(&out) {
        let rate = 10.0 * *k as f64;
        let label = if rate >= 1000.0 {
            format!("{} Gbit/s", rate / 1000.0)
        } else {
            format!("{rate} Mbit/s")
        };
        let med = |f: fn(&Row) -> f64| {
            let mut v: Vec<f64> = reps.iter().map(f).collect();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let best = best_of(reps);
        let per_pkt = ns_per_pkt(*k, reps);
        println!(
            "{:<12} {:>7} {:>8.3} {:>8.3} {:>12.0} {:>9.1} {:>8.1} {:>6.2} {:>9.3} {:>7.0} {:>6.2} {:>8.1} {:>9.0}",
            label,
            reps[0].flows,
            reps[0].setup,
            reps[0].sim,
            med(|r| r.events_per_s),
            med(|r| r.ns_per_event),
            best,
            best / first,
            reps[0].sim / (reps[0].slices.iter().map(|s| s.1).sum::<u64>() as f64 * best * 1e-9),
            per_pkt,
            per_pkt / first_pkt,
            reps[0].peak,
            reps[0].bytes_per_flow
        );
    }
    if setup_flows > 0 {
        let mut doc = base.clone();
        if let Some(v) = get_mut(&mut doc, &["traffic", "0", "flows"]) {
            *v = Value::Int(setup_flows as i64);
        }
        if let Some(v) = get_mut(&mut doc, &["traffic", "0", "start"]) {
            *v = Value::Str("0s".into());
        }
        let sc = Scenario::from_value(doc).map_err(|e| format!("--setup: {e}"))?;
        let t0 = std::time::Instant::now();
        let mut w = aqmlab_core::world::World::new(&sc);
        let build = t0.elapsed().as_secs_f64();
        w.run_until(aqmlab_core::units::SimTime::ZERO);
        let total = t0.elapsed().as_secs_f64();
        println!(
            "set-up of {} flows starting at 0 s: {:.3} s (build {:.3} s, {} events at time 0 {:.3} s)",
            sc.total_flows(),
            total,
            build,
            w.events_processed(),
            total - build
        );
    }
    Ok(())
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
    if args.first().is_some_and(|a| a == "--scale") {
        return match scale_table(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        };
    }
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
        "{:<30} {:>8} {:>10} {:>10} {:>12} {:>12} {:>8} {:>8} {:>6}",
        "scenario",
        "wall_s",
        "sim_s/s",
        "best",
        "events/s",
        "bn_pkts/s",
        "peak_MB",
        "ns/ev",
        "x_ev"
    );
    let mut first_ns_per_event = None;
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
                aqmlab_core::run(&sc, &mut |_, _| true)
                    .expect("not interrupted")
                    .summary
            })
            .collect();
        runs.sort_by(|a, b| a.wall_time_s.total_cmp(&b.wall_time_s));
        let best = runs[0].wall_time_s;
        let s = &runs[reps / 2];
        let ns_per_event = best * 1e9 / s.events.max(1) as f64;
        let first = *first_ns_per_event.get_or_insert(ns_per_event);
        println!(
            "{:<30} {:>8.3} {:>10.1} {:>10.1} {:>12.0} {:>12.0} {:>8.1} {:>8.1} {:>6.3}",
            name,
            s.wall_time_s,
            s.duration_s / s.wall_time_s,
            s.duration_s / best,
            s.events as f64 / s.wall_time_s,
            s.bottleneck.departures as f64 * s.duration_s
                / (s.duration_s - s.measure_start_s)
                / s.wall_time_s,
            peak_rss_mb(),
            ns_per_event,
            ns_per_event / first
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
