//! `aqmlab-router`: the testbed's user-space router.
//!
//! It sits between two TUN devices, one in each router-side network
//! namespace of the dumbbell that `aqmlab testbed` builds, and emulates the
//! bottleneck in both directions with the core crate's own AQMs
//! ([`aqmlab_core::aqm`]): each IPv4 packet read from one side is queued
//! under the scenario's AQM, serialised at the bottleneck rate, delayed by
//! the path's one-way propagation delay, CE-marked (checksum updated) or
//! dropped, and written into the other side.
//!
//! ```text
//! aqmlab-router --check CONFIG.json            validate; print the derived link as JSON
//! aqmlab-router --run CONFIG.json --out R.json  route until the run ends; write the results
//! aqmlab-router --bench [--packets N]          the queue+AQM path in memory, per scheme
//! aqmlab-router --keep-awake CPUS              spin on CPUS in the idle class (awake.rs)
//! aqmlab-router --probe-timer SECONDS SLEEP_US  how late this CPU runs a task (probe.rs)
//! ```
//!
//! CONFIG is JSON: `{"scenario": {...}, "t0_ns": N, "tuns": [[NETNS, DEV], [NETNS, DEV]]}`
//! (`t0_ns` = 0: print `ready` once the TUN devices are attached and read
//! the start instant, CLOCK_MONOTONIC ns, from stdin; `"busy_poll": true`:
//! never sleep between events, for a router alone on its CPU);
//! the scenario document is decoded by the core ([`Scenario::from_value`]),
//! so it is validated exactly as for `aqmlab run`. Errors print one line
//! `error: ...` and exit with status 2.

mod awake;
mod ip;
mod link;
mod probe;
mod sys;
mod trace;

use aqmlab_core::aqm::{apply_set, AqmSpec, LinkInfo};
use aqmlab_core::rng::{Rng, Stream};
use aqmlab_core::scenario::{
    Action, Direction, LinkDir, LinkSel, Purpose, Scenario, TimeDist, Topology, TrafficSpec, Value,
};
use aqmlab_core::units::{BitRate, SimTime};
use link::{Dir, Slot, Stats};
use serde::Serialize;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::process::ExitCode;

/// Below this wait the router polls instead of sleeping, ns: about the
/// timer wake-up latency measured on the development machine (50-60 us).
const SPIN_NS: u64 = 60_000;

/// The link the router emulates, derived from the scenario.
#[derive(Debug, Serialize)]
struct Derived {
    rate_bps: u64,
    /// One-way delay applied in each direction: source access + bottleneck + sink access.
    delay_ns: u64,
    /// Base round-trip time of every flow.
    base_rtt_ns: u64,
    duration_ns: u64,
    measure_start_ns: u64,
    sample_interval_ns: u64,
    packet_size: u32,
    aqm: &'static str,
    reverse_aqm: &'static str,
    /// When each group's initial flows start, ns: the simulator's draws
    /// (`Scenario::initial_starts`), so that both run the same scenario.
    starts_ns: Vec<Vec<u64>>,
}

struct Setup {
    sc: Scenario,
    d: Derived,
    info_fwd: LinkInfo,
    info_rev: LinkInfo,
}

fn fixed(t: &Option<TimeDist>, path: &str) -> Result<SimTime, String> {
    match t {
        None => Ok(SimTime::ZERO),
        Some(TimeDist::Fixed(x)) => Ok(*x),
        Some(TimeDist::Uniform(..)) => Err(format!(
            "{path}: a delay drawn per flow is not supported by the testbed \
             (all flows share one emulated path); give a fixed time"
        )),
    }
}

/// Decode the scenario and refuse what the router cannot emulate.
fn setup(doc: Value) -> Result<Setup, String> {
    let sc = Scenario::from_value(doc).map_err(|e| e.to_string())?;
    let Topology::Dumbbell(db) = &sc.topology else {
        return Err("topology.kind: the testbed emulates a dumbbell only".into());
    };
    if db.loss.is_some() || db.reverse_loss.is_some() || db.access_loss.is_some() {
        return Err("topology.loss: random link loss is not supported by the testbed".into());
    }
    if let Some(g) = sc.traffic.iter().position(|g| g.base_rtt().is_some()) {
        return Err(format!(
            "traffic[{g}].base_rtt: a base RTT per group is not supported by the testbed \
             (all flows share one emulated path); set topology.access_delay"
        ));
    }
    let a_src = fixed(
        &db.source_access_delay.or(db.access_delay),
        "topology.access_delay",
    )?;
    let a_snk = fixed(
        &db.sink_access_delay.or(db.access_delay),
        "topology.access_delay",
    )?;
    for (i, e) in sc.schedule.iter().enumerate() {
        match &e.action {
            Action::Link { link, delay, .. } => {
                if !matches!(link, LinkSel::Link { .. }) {
                    return Err(format!(
                        "schedule[{i}].link: the testbed changes the bottleneck only, not access links"
                    ));
                }
                if matches!(delay, Some(TimeDist::Uniform(..))) {
                    return Err(format!(
                        "schedule[{i}].delay: give a fixed time in the testbed"
                    ));
                }
            }
            Action::Aqm { link, .. } => {
                if !matches!(link, LinkSel::Link { .. }) {
                    return Err(format!(
                        "schedule[{i}].link: the testbed has one AQM link, the bottleneck"
                    ));
                }
            }
            // Traffic actions are carried out by the hosts' traffic programs.
            Action::Flows { .. } | Action::Udp { .. } | Action::Web { .. } => {}
        }
    }
    let delay = a_src + db.bottleneck_delay + a_snk;
    let (mut nf, mut nr) = (0u32, 0u32);
    for t in &sc.traffic {
        if let TrafficSpec::Bulk(b) = t {
            match b.direction {
                Direction::Forward => nf += b.flows,
                Direction::Reverse => nr += b.flows,
            }
        }
    }
    let info = |n: u32| LinkInfo {
        rate: db.bottleneck_rate,
        delay: db.bottleneck_delay,
        buffer: db.buffer,
        mean_pkt_size: u32::from(sc.tcp.packet_size),
        flows: n,
        rtt: if n > 0 { delay + delay } else { SimTime::ZERO },
        bulk_flows: n,
        bulk_rtt: if n > 0 { delay + delay } else { SimTime::ZERO },
    };
    let d = Derived {
        rate_bps: db.bottleneck_rate.bps(),
        delay_ns: delay.as_nanos(),
        base_rtt_ns: 2 * delay.as_nanos(),
        duration_ns: sc.duration.as_nanos(),
        measure_start_ns: sc.metrics.start.as_nanos(),
        sample_interval_ns: sc.metrics.sample_interval.as_nanos(),
        packet_size: u32::from(sc.tcp.packet_size),
        aqm: sc.aqm.kind(),
        reverse_aqm: sc.reverse_aqm.kind(),
        starts_ns: sc
            .initial_starts()
            .iter()
            .map(|g| g.iter().map(|t| t.as_nanos()).collect())
            .collect(),
    };
    let (info_fwd, info_rev) = (info(nf), info(nr));
    Ok(Setup {
        sc,
        d,
        info_fwd,
        info_rev,
    })
}

#[derive(serde::Deserialize)]
struct Config {
    scenario: Value,
    #[serde(default)]
    t0_ns: u64,
    #[serde(default)]
    tuns: Vec<(String, String)>,
    /// The hosts' ports of their flows: flow queues keyed by flow number.
    #[serde(default)]
    flow_ports: Option<ip::FlowPorts>,
    /// Poll the TUN devices without ever sleeping (`aqmlab testbed --cpus
    /// pinned`, where the router has its CPU to itself): a virtual CPU that
    /// halts between the router's events may be given back by the
    /// hypervisor only 100 ms later (docs/testbed.md).
    #[serde(default)]
    busy_poll: bool,
}

fn read_config(path: &str) -> Result<Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

/// Write-time lateness: how long after its computed release a packet was
/// written (the router's own added delay), in a histogram of 1 us buckets.
struct Lateness {
    hist: Vec<u64>,
    sum_ns: u128,
    max_ns: u64,
    n: u64,
}

impl Lateness {
    fn new() -> Lateness {
        Lateness {
            hist: vec![0; 100_001],
            sum_ns: 0,
            max_ns: 0,
            n: 0,
        }
    }
    fn add(&mut self, ns: u64) {
        self.n += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        let b = ((ns / 1000) as usize).min(self.hist.len() - 1);
        self.hist[b] += 1;
    }
    fn quantile_s(&self, q: f64) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let want = (q * self.n as f64).ceil() as u64;
        let mut acc = 0;
        for (i, c) in self.hist.iter().enumerate() {
            acc += c;
            if acc >= want {
                return (i as f64 + 0.5) * 1e-6;
            }
        }
        self.max_ns as f64 * 1e-9
    }
}

#[derive(Serialize)]
struct DirOut {
    name: &'static str,
    total: Stats,
    at_measure_start: Stats,
    rate_bps: u64,
    /// Packets waiting in the queue when the run ended, and on the wire.
    queued_at_end: u64,
    held_at_end: u64,
}

#[derive(Serialize)]
struct Out<'a> {
    derived: &'a Derived,
    dirs: Vec<DirOut>,
    queue: &'a link::Series,
    /// The bottleneck's drops and marks (`metrics.trace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    events: Option<&'a trace::Trace>,
    late_mean_s: f64,
    late_p50_s: f64,
    late_p99_s: f64,
    late_max_s: f64,
    late_packets: u64,
    /// Packets read that were not IPv4 (dropped), and failed writes.
    not_ipv4: u64,
    write_errors: u64,
    /// Wall-clock lag of the loop: how late after t0 the router started.
    start_lag_s: f64,
    schedule_errors: Vec<String>,
    /// CPU time of the router over the run, user and system, seconds.
    cpu_user_s: f64,
    cpu_sys_s: f64,
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("--check") if args.len() == 2 => check(&args[1]),
        Some("--run") if args.len() == 4 && args[2] == "--out" => run(&args[1], &args[3]),
        Some("--bench") => bench(&args[1..]),
        Some("--web-plan") if args.len() == 2 => web_plan(&args[1]),
        Some("--keep-awake") if args.len() == 2 => {
            awake::parse_cpus(&args[1]).and_then(|c| awake::keep_awake(&c))
        }
        Some("--probe-timer") => probe::run(&args[1..]),
        _ => Err("usage: aqmlab-router --check CONFIG.json | --run CONFIG.json --out RESULT.json | --web-plan CONFIG.json | --bench [--packets N] | --keep-awake CPUS | --probe-timer SECONDS SLEEP_US".into()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn check(path: &str) -> Result<(), String> {
    let cfg = read_config(path)?;
    let s = setup(cfg.scenario)?;
    println!(
        "{}",
        serde_json::to_string(&s.d).map_err(|e| e.to_string())?
    );
    Ok(())
}

struct Side {
    tun: File,
}

fn build_dirs(s: &Setup) -> [Dir; 2] {
    // The simulator's stream of the bottleneck's AQM (links 0 and 1 of its
    // dumbbell), so that a scheme's own draws (FQ-CoDel's hash
    // perturbation, RED's coin) start where the simulator's do.
    let seed = s.sc.seed_for(Purpose::Aqm);
    let ms = s.sc.metrics.start;
    let delay = SimTime(s.d.delay_ns);
    let mut fwd = Dir::new(
        "bottleneck",
        s.sc.aqm.build(s.info_fwd),
        Rng::new(seed, Stream::Aqm(0)),
        &LinkInfo {
            delay,
            ..s.info_fwd
        },
        Some(s.sc.metrics.sample_interval),
        ms,
    );
    let rev = Dir::new(
        "bottleneck-rev",
        s.sc.reverse_aqm.build(s.info_rev),
        Rng::new(seed, Stream::Aqm(1)),
        &LinkInfo {
            delay,
            ..s.info_rev
        },
        None,
        ms,
    );
    if s.sc.metrics.trace {
        fwd.trace = Some(trace::Trace::new(s.sc.metrics.trace_limit));
    }
    [fwd, rev]
}

fn run(cfg_path: &str, out_path: &str) -> Result<(), String> {
    sys::die_with_parent_and_fine_timers();
    let cfg = read_config(cfg_path)?;
    let s = setup(cfg.scenario)?;
    if cfg.tuns.len() != 2 {
        return Err(format!(
            "{cfg_path}: tuns: give two [netns, device] pairs (left, right)"
        ));
    }
    // Attach to the right side's TUN first and end in the left side's
    // namespace, so `ip netns pids` finds the router there.
    let mut tuns: Vec<Option<File>> = vec![None, None];
    for i in [1usize, 0] {
        let (ns, dev) = &cfg.tuns[i];
        let nsf = File::open(ns).map_err(|e| format!("netns {ns}: {e}"))?;
        sys::enter_netns(&nsf).map_err(|e| format!("entering netns {ns}: {e} (are you root?)"))?;
        tuns[i] = Some(sys::open_tun(dev).map_err(|e| format!("TUN {dev} in {ns}: {e}"))?);
    }
    let sides: Vec<Side> = tuns
        .into_iter()
        .map(|t| Side {
            tun: t.expect("both opened above"),
        })
        .collect();
    let mut dirs = build_dirs(&s);
    let bufsize = (s.d.packet_size.max(1500) + 256) as usize;
    // Ready: both TUN devices are attached. Without a start instant in
    // the configuration, it comes on stdin (CLOCK_MONOTONIC ns).
    let t0 = if cfg.t0_ns != 0 {
        cfg.t0_ns
    } else {
        println!("ready");
        std::io::stdout()
            .flush()
            .map_err(|e| format!("stdout: {e}"))?;
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| format!("reading the start instant: {e}"))?;
        line.trim()
            .parse::<u64>()
            .map_err(|_| format!("expected the start instant (ns) on stdin, found {line:?}"))?
    };
    let end = SimTime(s.d.duration_ns);
    let mut late = Lateness::new();
    let (mut not_ipv4, mut write_errors) = (0u64, 0u64);
    // Every application in time order, repetitions included, each with
    // the time it is due.
    let sched =
        s.sc.schedule_in_order()
            .into_iter()
            .map(|o| {
                let e = &s.sc.schedule[o.entry as usize];
                (o.at, e.action.clone())
            })
            .collect::<Vec<_>>();
    let mut sched_i = 0usize;
    let mut schedule_errors = Vec::new();
    let clock = || SimTime(sys::monotonic_ns().saturating_sub(t0));
    // Wait for t0 (the hosts' traffic starts from the same instant).
    while sys::monotonic_ns() < t0 {
        let left = t0 - sys::monotonic_ns();
        std::thread::sleep(std::time::Duration::from_nanos(left.min(10_000_000)));
    }
    let start_lag = sys::monotonic_ns().saturating_sub(t0);
    let cpu0 = sys::cpu_times();
    loop {
        let now = clock();
        if now >= end {
            break;
        }
        // Scheduled changes of the link and the AQMs.
        while sched_i < sched.len() && sched[sched_i].0 <= now {
            let (at, action) = &sched[sched_i];
            apply_action(&mut dirs, *at, action, &s, &mut schedule_errors);
            sched_i += 1;
        }
        // Arrivals: side 0 (left) feeds the forward direction.
        for (si, side) in sides.iter().enumerate() {
            let dir = &mut dirs[si];
            for _ in 0..256 {
                let mut buf = dir
                    .free
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(bufsize));
                buf.resize(bufsize, 0);
                match (&side.tun).read(&mut buf) {
                    Ok(n) => {
                        buf.truncate(n);
                        match ip::parse(&buf) {
                            Ok(h) => {
                                let h = ip::FlowPorts::key(cfg.flow_ports, h);
                                let t = clock();
                                dir.advance(t);
                                dir.arrive(t, Slot::new(buf, &h, t));
                            }
                            Err(_) => {
                                not_ipv4 += 1;
                                dir.free.push(buf);
                            }
                        }
                    }
                    Err(e) => {
                        dir.free.push(buf);
                        if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted {
                            return Err(format!("reading the TUN device: {e}"));
                        }
                        break;
                    }
                }
            }
        }
        // Departures: the forward direction writes into the right side.
        let now = clock();
        for (di, dir) in dirs.iter_mut().enumerate() {
            dir.advance(now);
            let out = &sides[1 - di].tun;
            while let Some((due, slot)) = dir.due(now) {
                match (&*out).write(&slot.buf) {
                    Ok(_) => {}
                    Err(_) => write_errors += 1,
                }
                late.add(clock().0.saturating_sub(due.0));
                dir.free.push(slot.buf);
            }
        }
        let mut next = end.min(dirs[0].next_event()).min(dirs[1].next_event());
        if let Some(e) = sched.get(sched_i) {
            next = next.min(e.0);
        }
        let now = clock();
        if next > now {
            let wait = (next - now).as_nanos();
            if wait > SPIN_NS && !cfg.busy_poll {
                // Sleep until shortly before the event (or a packet).
                sys::wait_readable(&[&sides[0].tun, &sides[1].tun], wait - SPIN_NS)
                    .map_err(|e| format!("waiting for packets: {e}"))?;
            } else {
                // The last stretch (every wait with `busy_poll`): poll
                // without sleeping, so the wake-up latency of the kernel's
                // timers (tens of us) does not add to the emulated delay.
                sys::wait_readable(&[&sides[0].tun, &sides[1].tun], 0)
                    .map_err(|e| format!("waiting for packets: {e}"))?;
                std::hint::spin_loop();
            }
        }
    }
    let cpu1 = sys::cpu_times();
    // Close the series at the end of the run.
    for d in dirs.iter_mut() {
        d.advance(end);
    }
    let dirs_out: Vec<DirOut> = dirs
        .iter()
        .map(|d| DirOut {
            name: d.name,
            total: d.stats,
            at_measure_start: d.stats_at_start.unwrap_or(d.stats),
            rate_bps: d.rate.bps(),
            queued_at_end: d.qlen().pkts as u64,
            held_at_end: d.held(),
        })
        .collect();
    let out = Out {
        derived: &s.d,
        dirs: dirs_out,
        queue: &dirs[0].series,
        events: dirs[0].trace.as_ref(),
        late_mean_s: if late.n > 0 {
            (late.sum_ns / late.n as u128) as f64 * 1e-9
        } else {
            0.0
        },
        late_p50_s: late.quantile_s(0.5),
        late_p99_s: late.quantile_s(0.99),
        late_max_s: late.max_ns as f64 * 1e-9,
        late_packets: late.n,
        not_ipv4,
        write_errors,
        start_lag_s: start_lag as f64 * 1e-9,
        schedule_errors,
        cpu_user_s: cpu1.0 - cpu0.0,
        cpu_sys_s: cpu1.1 - cpu0.1,
    };
    let text = serde_json::to_string(&out).map_err(|e| e.to_string())?;
    let tmp = format!("{out_path}.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, out_path).map_err(|e| format!("{out_path}: {e}"))?;
    Ok(())
}

fn apply_action(dirs: &mut [Dir; 2], at: SimTime, a: &Action, s: &Setup, errors: &mut Vec<String>) {
    let which = |link: &LinkSel| -> [bool; 2] {
        match link {
            LinkSel::Link { dir, .. } => match dir {
                LinkDir::Both => [true, true],
                LinkDir::Fwd => [true, false],
                LinkDir::Rev => [false, true],
            },
            _ => [false, false],
        }
    };
    match a {
        Action::Link {
            link,
            rate,
            delay,
            reorder,
        } => {
            let w = which(link);
            // The bottleneck's own delay changes; the access delays stay.
            let extra = SimTime(s.d.delay_ns) - bottleneck_delay(&s.sc);
            for (i, d) in dirs.iter_mut().enumerate() {
                if w[i] {
                    let nd = match delay {
                        Some(TimeDist::Fixed(x)) => Some(extra + *x),
                        _ => None,
                    };
                    let mut info = if i == 0 { s.info_fwd } else { s.info_rev };
                    info.rate = rate.unwrap_or(d.rate);
                    if let Some(TimeDist::Fixed(x)) = delay {
                        info.delay = *x;
                    }
                    d.set_link(at, *rate, nd, *reorder, &info);
                }
            }
        }
        Action::Aqm { link, set } => {
            let w = which(link);
            for (i, d) in dirs.iter_mut().enumerate() {
                if w[i] {
                    for (k, v, e) in
                        apply_set(&mut d.aqm, set.iter().map(|(k, v)| (k.as_str(), *v)))
                    {
                        errors.push(format!("{} at {at}: {k} = {v}: {e}", d.name));
                    }
                }
            }
        }
        _ => {}
    }
}

/// One web session's script, drawn with the core's web model
/// ([`aqmlab_core::traffic::web`]): the residual think time before its
/// first page (0 with `first_page = "start"`), then per page its objects' sizes and the think time after it.
#[derive(Serialize)]
struct WebScript {
    session: u32,
    group: u32,
    http: &'static str,
    request_bytes: u32,
    residual_s: f64,
    /// (object sizes in bytes, think time after the page in seconds).
    pages: Vec<(Vec<u64>, f64)>,
}

/// `--web-plan`: the scripts of every session of every `web` group, with
/// pages enough to fill the run (think times alone reach its end).
fn web_plan(path: &str) -> Result<(), String> {
    use aqmlab_core::scenario::web::{FirstPage, Http, Pages};
    use aqmlab_core::traffic::web::Session;
    let cfg = read_config(path)?;
    let s = setup(cfg.scenario)?;
    let sc = &s.sc;
    let app_seed = sc.seed_for(Purpose::App);
    let horizon = sc.duration.as_secs_f64();
    let mut out = Vec::new();
    let mut f = 0u32;
    for (g, t) in sc.traffic.iter().enumerate() {
        if let TrafficSpec::Web(w) = t {
            if w.params.pages == Pages::Open {
                return Err(format!(
                    "traffic[{g}].pages = \"open\": the testbed's web clients wait for each \
                     page (\"closed\"); open pages are a simulator model only"
                ));
            }
            let mss = w.tcp.apply(&sc.tcp).mss();
            for _ in 0..w.n {
                let mut ses =
                    Session::new(w.params, Rng::new(app_seed, Stream::App(f)), f as usize);
                let residual = match ses.p.first_page {
                    FirstPage::Residual => ses.p.residual_think(&mut ses.rng),
                    FirstPage::Start => 0.0,
                };
                let mut pages = Vec::new();
                let mut t_s = residual;
                while t_s < horizon && pages.len() < 100_000 {
                    ses.begin_page();
                    let sizes: Vec<u64> = (0..ses.objects)
                        .map(|_| ses.draw_object(mss).bytes)
                        .collect();
                    let think = ses.p.think(&mut ses.rng);
                    t_s += think;
                    pages.push((sizes, think));
                }
                out.push(WebScript {
                    session: f,
                    group: g as u32,
                    http: match w.params.http {
                        Http::V10 => "1.0",
                        Http::V11 => "1.1",
                        Http::WebTraf => {
                            return Err(format!(
                                "traffic[{g}].http = \"webtraf\": the testbed's web clients \
                                 speak \"1.0\" and \"1.1\" (a server that opens the response \
                                 connection is a simulator model only)"
                            ))
                        }
                    },
                    request_bytes: w.params.request_bytes,
                    residual_s: residual,
                    pages,
                });
                f += 1;
            }
        } else {
            f += t.flows();
        }
    }
    println!(
        "{}",
        serde_json::to_string(&out).map_err(|e| e.to_string())?
    );
    Ok(())
}

fn bottleneck_delay(sc: &Scenario) -> SimTime {
    match &sc.topology {
        Topology::Dumbbell(db) => db.bottleneck_delay,
        _ => SimTime::ZERO,
    }
}

/// The router's per-packet work without the system calls: arrive (the
/// AQM's enqueue hook, the buffer), transmit (the dequeue hook), release,
/// for 1500-byte ECN-capable packets on a link too fast to queue, per
/// scheme. The figure bounds what the AQM code allows; the TUN reads and
/// writes (two system calls per packet) are measured by `make bench-testbed`.
fn bench(args: &[String]) -> Result<(), String> {
    let mut n: u64 = 2_000_000;
    if args.len() == 2 && args[0] == "--packets" {
        n = args[1]
            .parse()
            .map_err(|_| format!("--packets: expected a whole number, found {:?}", args[1]))?;
    } else if !args.is_empty() {
        return Err("usage: aqmlab-router --bench [--packets N]".into());
    }
    println!("{:<14} {:>12} {:>14}", "aqm", "Mpkt/s", "Gbit/s (1500B)");
    for kind in [
        "droptail", "red", "ared", "pi", "rem", "blue", "avq", "pie", "codel", "st-pi",
    ] {
        let doc = Value::Table(vec![("kind".into(), Value::Str(kind.into()))]);
        let t = aqmlab_core::scenario::decode::Table::new(doc, "aqm").map_err(|e| e.to_string())?;
        let spec = AqmSpec::decode(t, 1500).map_err(|e| e.to_string())?;
        let mut li = LinkInfo::new(BitRate(100_000_000_000), 1500);
        li.flows = 10;
        li.rtt = SimTime::from_millis(100);
        let mut d = Dir::new(
            "b",
            spec.build(li),
            Rng::new(1, Stream::Aqm(0)),
            &li,
            None,
            SimTime::ZERO,
        );
        let pkt = ip::build_tcp(1500, 0b10, 4000, 1, 0x10);
        for _ in 0..64 {
            d.free.push(pkt.clone());
        }
        let t0 = std::time::Instant::now();
        // One packet per 120 ns of link time: the link (100 Gb/s) keeps up.
        for i in 0..n {
            let now = SimTime(i * 120);
            let buf = d.free.pop().unwrap_or_else(|| pkt.clone());
            let slot = Slot::read(buf, now).map_err(|e| format!("{e:?}"))?;
            d.advance(now);
            d.arrive(now, slot);
            while let Some((_, s)) = d.due(now) {
                d.free.push(s.buf);
            }
        }
        let dt = t0.elapsed().as_secs_f64();
        let pps = n as f64 / dt;
        println!(
            "{kind:<14} {:>12.2} {:>14.1}",
            pps / 1e6,
            pps * 1500.0 * 8.0 / 1e9
        );
    }
    Ok(())
}
