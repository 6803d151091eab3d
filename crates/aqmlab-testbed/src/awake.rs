//! `aqmlab-router --keep-awake CPUS`: keep the hosts' CPUs from halting.
//!
//! In a virtual machine an idle CPU halts, and a task woken there (a
//! receiver whose data has arrived, a sender whose ACKs have) waits until
//! the hypervisor runs that CPU again: on the 2-CPU KVM guest this testbed
//! was built on, a wake-up across CPUs took 21 us at the median, 2.1 ms at
//! the 99th percentile and up to 9 ms on a quiet machine, and tens of ms
//! under a testbed run. A receiver woken that late leaves its data unread,
//! and Linux then holds back its ACKs (an ACK for every second segment
//! needs the window not to shrink), so its sender falls silent and then
//! bursts. One thread per CPU named, each pinned there in the idle class
//! (`SCHED_IDLE`), spins: the CPU never halts, and any task that wakes there
//! takes it at once (the same test: 7 us at the median, 15 us at the 99th
//! percentile, 0.26 ms at worst). Never on the router's CPU: a runnable
//! ordinary task there would get the kernel's fair-server share of a
//! real-time router's CPU (up to 50 ms of each second), stalling the router;
//! the router keeps its own CPU from halting by polling (`busy_poll`).
//!
//! Prints `ready` once every thread is pinned and idle-class, then spins
//! until killed (it dies with its parent). A CPU it cannot pin to or a class
//! it cannot take is an error: it prints it and exits, its threads with it,
//! and never says `ready`.

use crate::sys;
use std::sync::mpsc;

/// Parse `CPUS` (`"0,2,3"`) into CPU numbers.
pub fn parse_cpus(arg: &str) -> Result<Vec<usize>, String> {
    let cpus = arg
        .split(',')
        .map(|c| {
            c.trim()
                .parse::<usize>()
                .map_err(|_| format!("--keep-awake: {c:?} is not a CPU number; give them as 0,2,3"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if cpus.is_empty() {
        return Err("--keep-awake: no CPU given".into());
    }
    Ok(cpus)
}

/// Spin on every CPU of `cpus` in the idle class until killed.
pub fn keep_awake(cpus: &[usize]) -> Result<(), String> {
    sys::die_with_parent();
    let (tx, rx) = mpsc::channel::<Result<(), String>>();
    for &cpu in cpus {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let set = sys::pin_thread(cpu)
                .map_err(|e| format!("--keep-awake: CPU {cpu}: {e}"))
                .and_then(|()| {
                    sys::sched_idle().map_err(|e| format!("--keep-awake: SCHED_IDLE: {e}"))
                });
            let ok = set.is_ok();
            // The receiver outlives every thread's report.
            let _ = tx.send(set);
            if ok {
                loop {
                    std::hint::spin_loop();
                }
            }
        });
    }
    drop(tx);
    for r in rx.iter().take(cpus.len()) {
        r?;
    }
    println!("ready");
    // The spinning threads never end; the process ends when it is killed.
    loop {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::parse_cpus;

    #[test]
    fn cpus_are_parsed_and_bad_ones_named() {
        assert_eq!(parse_cpus("0,2, 3").unwrap(), vec![0, 2, 3]);
        let e = parse_cpus("0,x").unwrap_err();
        assert!(e.contains("\"x\"") && e.contains("--keep-awake"), "{e}");
        assert!(parse_cpus("").is_err());
    }
}
