//! The few system calls the router needs that `std` does not offer: entering
//! a network namespace, attaching to a TUN device, the monotonic clock,
//! waiting on two descriptors with a nanosecond timeout, dying with the
//! parent, and a thread's CPU and scheduling class. Each `unsafe` block says
//! why it is sound.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// Now on CLOCK_MONOTONIC, ns (the clock Python's `time.monotonic_ns` reads,
/// the same in every network namespace).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec that lives for the call;
    // CLOCK_MONOTONIC always exists on Linux, so the call cannot fail.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Move this (single-threaded) process into the network namespace `ns`
/// (an open `/var/run/netns/NAME` or `/proc/PID/ns/net`).
pub fn enter_netns(ns: &File) -> io::Result<()> {
    // SAFETY: setns only reads the descriptor number, which `ns` keeps open
    // for the duration of the call; it touches no memory of ours.
    let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Open `/dev/net/tun` and attach to the TUN device `name` (raw IP packets,
/// no packet-information prefix) of the current network namespace; the
/// descriptor is non-blocking.
pub fn open_tun(name: &str) -> io::Result<File> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("TUN device name {name:?} must have 1 to 15 bytes"),
        ));
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    // SAFETY: `ifreq` is a plain C struct for which all-zero bytes are a
    // valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF reads and writes one `struct ifreq`; `req` is a
    // valid, initialised ifreq (name NUL-terminated: at most 15 bytes were
    // copied into 16 zeroed ones) that outlives the call, and `f` is open.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut libc::ifreq) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// Wait until one of `fds` is readable or `timeout_ns` has passed.
pub fn wait_readable(fds: &[&File], timeout_ns: u64) -> io::Result<()> {
    let mut p: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `p` holds `p.len()` initialised pollfd structs for open
    // descriptors and lives for the call; `ts` is a valid timespec; a null
    // signal mask means "leave the mask alone".
    let r = unsafe {
        libc::ppoll(
            p.as_mut_ptr(),
            p.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Die (SIGKILL) when the parent process dies, and ask for the finest timer
/// slack (the kernel's default of 50 us would blur the link's timing).
pub fn die_with_parent_and_fine_timers() {
    die_with_parent();
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and touches no memory
    // of ours.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// CPU time this process has used (user, system), seconds.
pub fn cpu_times() -> (f64, f64) {
    // SAFETY: `rusage` is a plain C struct for which all-zero bytes are valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage that outlives the call.
    unsafe {
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// Run the calling thread on CPU `cpu` only.
pub fn pin_thread(cpu: usize) -> io::Result<()> {
    // SAFETY: `cpu_set_t` is a plain bit array for which all-zero bytes are
    // the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if cpu >= 8 * std::mem::size_of::<libc::cpu_set_t>() {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: `cpu` is within the set's bits (checked above) and `set` is a
    // valid, writable cpu_set_t.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is the calling thread; `set` is a valid cpu_set_t of the
    // size passed, read for the duration of the call.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Put the calling thread in the kernel's idle class (`SCHED_IDLE`): it runs
/// only when nothing else on its CPU wants to, and yields at once to any
/// task that wakes there.
pub fn sched_idle() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param
    // read for the duration of the call.
    let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Die (SIGKILL) when the parent process dies.
pub fn die_with_parent() {
    // SAFETY: PR_SET_PDEATHSIG takes a plain integer and touches no memory
    // of ours.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
}
