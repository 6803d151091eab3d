//! `aqmlab-router --probe-timer SECONDS SLEEP_US`: how late a task runs on
//! this CPU.
//!
//! The figures of docs/testbed.md on a virtual machine's CPUs come from it:
//! start it where and as the router would run (`taskset -c 1 chrt -f 50
//! aqmlab-router --probe-timer 20 60`, or under `nice -n -10`), with or
//! without `aqmlab-router --keep-awake 0` or a busy loop beside it. With
//! SLEEP_US above 0 it sleeps that long at a time (`ppoll`, as the router
//! waits for its next event) and counts how late each wake-up came; with 0
//! it reads the clock without sleeping (as the router polls with
//! `busy_poll`) and counts the gaps between two reads: the time it was off
//! its CPU. It prints one line: the wake-ups (or clock reads) counted, the
//! worst, how many passed 1, 10 and 50 ms, and the CPU time the hypervisor took
//! from the machine meanwhile (`steal` in `/proc/stat`).

use crate::sys;

/// What one probe measured.
#[derive(Debug)]
pub struct Probe {
    /// Wake-ups (or, polling, clock reads) counted.
    pub n: u64,
    pub worst_ns: u64,
    /// How many came later than 1, 10 and 50 ms.
    pub over: [u64; 3],
    pub steal_s: f64,
}

const OVER_NS: [u64; 3] = [1_000_000, 10_000_000, 50_000_000];

/// Read `SECONDS SLEEP_US` from the command line.
pub fn parse(args: &[String]) -> Result<(f64, u64), String> {
    let [secs, sleep] = args else {
        return Err("--probe-timer: give SECONDS and SLEEP_US (0: poll without sleeping)".into());
    };
    let secs = secs
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .ok_or_else(|| format!("--probe-timer: SECONDS {secs:?} is not a time in (0, 86400]"))?;
    let sleep = sleep
        .parse::<u64>()
        .ok()
        .filter(|u| *u <= 1_000_000)
        .ok_or_else(|| format!("--probe-timer: SLEEP_US {sleep:?} is not 0 to 1000000"))?;
    Ok((secs, sleep))
}

/// The machine's stolen CPU time since boot, s (0 where it is not counted).
fn steal_s() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
        return 0.0;
    };
    let ticks = stat
        .lines()
        .next()
        .filter(|l| l.starts_with("cpu "))
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf takes a plain integer and touches no memory of ours.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        ticks as f64 / hz as f64
    } else {
        0.0
    }
}

/// Sleep `sleep_us` at a time (or poll, with 0) for `secs` seconds.
pub fn probe(secs: f64, sleep_us: u64) -> Result<Probe, String> {
    let steal0 = steal_s();
    let start = sys::monotonic_ns();
    let end = start + (secs * 1e9) as u64;
    let sleep_ns = sleep_us * 1000;
    let mut p = Probe {
        n: 0,
        worst_ns: 0,
        over: [0; 3],
        steal_s: 0.0,
    };
    let mut last = start;
    loop {
        if sleep_ns > 0 {
            sys::wait_readable(&[], sleep_ns).map_err(|e| format!("--probe-timer: {e}"))?;
        }
        let now = sys::monotonic_ns();
        if now >= end {
            break;
        }
        let late = (now - last).saturating_sub(sleep_ns);
        last = now;
        p.n += 1;
        p.worst_ns = p.worst_ns.max(late);
        for (c, t) in p.over.iter_mut().zip(OVER_NS) {
            *c += u64::from(late > t);
        }
    }
    p.steal_s = (steal_s() - steal0).max(0.0);
    Ok(p)
}

/// The command: probe, then print the one line.
pub fn run(args: &[String]) -> Result<(), String> {
    let (secs, sleep_us) = parse(args)?;
    let p = probe(secs, sleep_us)?;
    let what = if sleep_us > 0 { "wake-ups" } else { "reads" };
    println!(
        "{what} {}, worst {:.2} ms, over 1 ms {}, over 10 ms {}, over 50 ms {}, steal {:.2} s",
        p.n,
        p.worst_ns as f64 * 1e-6,
        p.over[0],
        p.over[1],
        p.over[2],
        p.steal_s
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse, probe};

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments_are_read_and_bad_ones_named() {
        assert_eq!(parse(&args(&["20", "60"])).unwrap(), (20.0, 60));
        assert_eq!(parse(&args(&["0.5", "0"])).unwrap(), (0.5, 0));
        let e = parse(&args(&["0", "60"])).unwrap_err();
        assert!(
            e.contains("SECONDS \"0\"") && e.contains("--probe-timer"),
            "{e}"
        );
        let e = parse(&args(&["1", "-3"])).unwrap_err();
        assert!(e.contains("SLEEP_US \"-3\""), "{e}");
        assert!(parse(&args(&["1"])).is_err());
    }

    #[test]
    fn a_probe_counts_its_wake_ups_and_the_late_ones_among_them() {
        for sleep_us in [0, 200] {
            let p = probe(0.02, sleep_us).unwrap();
            assert!(p.n > 0, "{p:?}");
            // Each count of late ones is within the one before.
            assert!(p.over[0] <= p.n && p.over[1] <= p.over[0] && p.over[2] <= p.over[1]);
            assert!(p.steal_s >= 0.0);
        }
    }
}
