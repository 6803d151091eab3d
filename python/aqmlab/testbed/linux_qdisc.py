"""Linux's own queue discs as a reference: a scenario's dumbbell in a user-mode Linux guest.

This machine's kernel lacks most AQM queue discs (no pie, codel, fq_codel) and
DCTCP. Debian's ``user-mode-linux`` package carries a kernel (6.1) that runs
as an ordinary process and has all of them as modules. :func:`run_linux_qdisc`
boots that kernel with the host's root as its file system (hostfs), and the
guest (:mod:`aqmlab.testbed.uml_guest`) runs the scenario's bulk flows with the
guest kernel's TCP through the guest kernel's queue disc, the one that
corresponds to the scenario's ``[aqm]`` (:func:`qdisc_args`). The flows start
when the simulator's do (the router's ``--check`` gives the draws), as on the
testbed. The figures come back as a summary shaped like ``summary.json``'s
``bottleneck`` and ``flows`` (utilisation, mean queue, drops, marks, goodputs,
Jain's index) plus the queue disc's own statistics. See docs/testbed.md,
"Linux's queue discs".

It needs no root on the host (the guest is root in its own kernel); it needs
``linux.uml`` and its modules, ``ethtool`` and ``kmod`` (``make uml``).
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aqmlab import scenario
from aqmlab.testbed.netns import TestbedError
from aqmlab.testbed.runner import (
    FLOW_COUNTERS,
    _bytes,
    _jain,
    _rate_bps,
    ecn_fallbacks,
    find_router,
    kernel_tcp_window,
    plan,
    sender_count_within,
)

UML = "linux.uml"
MODULES = Path("/usr/lib/uml/modules")
#: The guest's qdisc sees each packet with its Ethernet header.
ETH_HEADER = 14
#: The scenario's congestion controls and the guest's module for each.
CC_MODULES = {"reno": None, "cubic": None, "dctcp": "tcp_dctcp", "bbr": "tcp_bbr"}
#: HTB's bucket, packets of the MTU: a timer of the guest's that fires late (its one CPU runs the
#: hosts' programs too) costs the link no time up to 4.8 ms at 10 Mbit/s; a burst at most that.
BURST_PACKETS = 4
#: Queue-disc statistics (``tc -s -j``) that count ECN marks, by their names there.
MARK_STATS = ("ecn_mark", "ce_mark", "marked")
#: ... and those that count drops on a full queue.
OVERLIMIT_STATS = ("drop_overlimit", "overlimit")


def available() -> str | None:
    """Why the reference cannot run here, or None when it can."""
    if shutil.which(UML) is None:
        return f"{UML} is missing (make uml, or as root: apt-get install user-mode-linux)"
    for tool in ("ethtool", "modprobe", "tc", "ip"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            return f"{tool} is missing (make uml)"
    if not MODULES.is_dir() or not any(MODULES.iterdir()):
        return f"no modules for {UML} under {MODULES}"
    return boots()


#: The trial boot's init: it writes a file and powers the guest off.
PROBE_INIT = """#!/bin/sh
echo ok > {work}/ok
/sbin/poweroff -f
"""
#: How long the trial boot may take before it counts as hung.
PROBE_TIMEOUT_S = 60.0


@functools.cache
def boots() -> str | None:
    """Why the guest kernel cannot start on this host, or None when it can: a trial boot whose
    init writes a file. Debian's 6.1 guest dies at its first user process on some CPUs (on an
    Intel Xeon with AVX-512 and AMX: ``userspace - ptrace set fp regs failed, errno = 14``);
    the reason then quotes the guest's console. Booted once per process."""
    with tempfile.TemporaryDirectory(prefix="aqmlab-uml-probe-") as tmps:
        work = Path(tmps)
        init = work / "init.sh"
        init.write_text(PROBE_INIT.format(work=work))
        init.chmod(0o755)
        try:
            console = _boot(init, work, "mem=64M", PROBE_TIMEOUT_S)
        except TestbedError as e:
            return str(e)
        if (work / "ok").exists():
            return None
        return f"{UML} does not start on this host: " + _console_reason(console)


def _boot(init: Path, work: Path, mem: str, timeout: float) -> str:
    """Boot the guest with ``init`` on the host's root and wait for it to end; returns its
    console. Raises :class:`TestbedError` when it does not end within ``timeout`` seconds."""
    cmd = [UML, mem, "rootfstype=hostfs", "rootflags=/", "rw", f"init={init}"]
    cmd += ["con=null", "con0=null,fd:1"]
    if os.geteuid() == 0 and shutil.which("chrt"):
        # Real-time priority keeps the guest's clock and timers near the host's.
        cmd = ["chrt", "-f", "50", *cmd]
    env = dict(os.environ, TMPDIR=str(work))
    log = work / "console.log"
    with open(log, "wb") as console:
        try:
            subprocess.run(
                cmd,
                stdout=console,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise TestbedError(f"{UML} did not end within {timeout:g} s") from None
    return log.read_text(errors="replace")


def _console_reason(console: str) -> str:
    """The guest console's lines that say why it stopped (a failure and the panic), or its
    last line."""
    lines = [ln.strip() for ln in console.splitlines() if ln.strip()]
    # The stack dump's lines ("[<addr>] function") name functions, not reasons.
    said = [ln for ln in lines if not ln.startswith("[<")]
    why = [ln for ln in said if "failed" in ln or "Kernel panic" in ln]
    return "; ".join(why[-2:]) if why else (lines[-1] if lines else "no console output")


#: The guest kernel's clock tick (it runs at 100 Hz): Linux's pie rounds its update interval
#: up to a whole number of them.
GUEST_TICK_NS = 10_000_000


def _time_us(v: Any, field: str, ticks_of: str | None = None) -> str:
    """The time `v` as `tc` takes it; with `ticks_of`, the disc that keeps it in the guest's
    clock ticks (rounded up there): refused unless a whole number of them."""
    ns = scenario._ns(v, numbers_are_seconds=True)
    if ns is None or ns <= 0:
        raise TestbedError(f"{field}: {v!r} is not a positive time")
    if ns % 1000:
        raise TestbedError(f"{field}: {v!r}: Linux's queue discs take whole microseconds")
    if ticks_of is not None and ns % GUEST_TICK_NS:
        runs = -(-ns // GUEST_TICK_NS) * GUEST_TICK_NS // 1_000_000
        raise TestbedError(
            f"{field}: {v!r}: the guest's {ticks_of} keeps it in ticks of its 100 Hz clock, so "
            f"it takes whole multiples of 10 ms ({v!r} would run as {runs} ms); set "
            f'{field} = "{runs}ms" on both sides'
        )
    return f"{ns // 1000}us"


def qdisc_args(resolved: Mapping[str, Any]) -> list[str]:
    """The ``tc qdisc add ... <these>`` of Linux's queue disc that stands for the resolved
    scenario's ``[aqm]`` and buffer; a key Linux's disc has no counterpart for raises
    :class:`TestbedError` naming it."""
    aqm = dict(resolved["aqm"])
    kind = aqm.pop("kind")
    buf = resolved["topology"]["buffer"]
    if isinstance(buf, str) and buf.endswith("B"):
        raise TestbedError(
            f"topology.buffer: {buf!r}: Linux's queue discs here take a limit in packets"
        )
    limit = str(int(buf))
    mtu = int(resolved["tcp"]["packet_size"])
    ecn = bool(aqm.pop("ecn", False))
    args: list[str]
    # Keys that are the defaults of both, so need no argument.
    same: dict[str, Any]
    if kind == "droptail":
        args, same = ["pfifo", "limit", limit], {}
    elif kind == "pie":
        args = ["pie", "limit", limit]
        args += ["target", _time_us(aqm.pop("target"), "aqm.target")]
        # Linux's pie keeps `tupdate` in jiffies, rounded up: its default 15 ms runs as 20 ms.
        args += ["tupdate", _time_us(aqm.pop("t_update"), "aqm.t_update", ticks_of="pie")]
        for k, scale in (("alpha", 16), ("beta", 16)):
            v = float(aqm.pop(k)) * scale
            if v != round(v):
                raise TestbedError(
                    f"aqm.{k}: {v / scale:g}: Linux's pie takes it in steps of 1/16 Hz"
                )
            args += [k, str(round(v))]
        args += ["ecn"] if ecn else []
        # Linux's pie: 150 ms burst allowance, the ECN threshold 10 %, the timestamp
        # estimator, the cap on an increment above 10 %, RFC 8033 section 5.4's
        # de-randomisation (its accumulated probability, always on) and its own enqueue.
        same = {
            "max_burst": "150ms",
            "mark_ecnth": 0.1,
            "derandomize": True,
            "enqueue": "linux",
            "cap_drop_adjustment": True,
            "mean_pkt_size": mtu,
        }
    elif kind in ("codel", "fq-codel"):
        args = ["codel" if kind == "codel" else "fq_codel", "limit", limit]
        law = aqm.pop("control_law", "rfc8289")
        if law != "linux":
            # As pie's de-randomisation: the simulator's side must run the kernel's rule.
            raise TestbedError(
                f"aqm.control_law: {law!r}: Linux's {args[0]} has 'linux' only (one Newton "
                'step on 1/sqrt(count) per change); set aqm.control_law = "linux"'
            )
        args += ["target", _time_us(aqm.pop("target"), "aqm.target")]
        args += ["interval", _time_us(aqm.pop("interval"), "aqm.interval")]
        if kind == "fq-codel":
            args += ["flows", str(int(aqm.pop("flows")))]
            # Linux counts the 14-byte Ethernet header in each packet's bytes: the quantum
            # scaled as HTB's rate is, so that a quantum of one packet stays one packet.
            q = int(_bytes(aqm.pop("quantum")))
            args += ["quantum", str(round(q * (mtu + ETH_HEADER) / mtu))]
        args += ["ecn"] if ecn else ["noecn"]
        # Linux's CoDel reads MAXPACKET from the packets it has seen (at least the MTU
        # here), fq_codel against the whole disc's backlog.
        same = {"maxpacket": mtu, "maxpacket_backlog": "all"}
    elif kind == "step":
        thr = aqm.pop("threshold")
        if not (isinstance(thr, str) and not thr.endswith("B") and scenario._ns(thr)):
            raise TestbedError(
                f"aqm.threshold: {thr!r}: Linux's stand-in for a step (codel's ce_threshold) "
                "takes a sojourn time, not a length"
            )
        if not ecn:
            raise TestbedError(
                "aqm.ecn: false: Linux's stand-in for a step (codel's ce_threshold) marks only"
            )
        # CoDel's own law never acts (target 10 s); ce_threshold marks every ECN-capable
        # packet whose sojourn exceeds the threshold at dequeue.
        args = ["codel", "limit", limit, "target", "10s", "interval", "100s"]
        args += ["ce_threshold", _time_us(thr, "aqm.threshold"), "noecn"]
        same = {}
    else:
        raise TestbedError(
            f"aqm.kind: {kind!r} has no Linux queue disc in this reference "
            '(allowed: "droptail", "pie", "codel", "fq-codel", "step")'
        )
    for k, v in aqm.items():
        if k in same and _same(same[k], v):
            continue
        if k in same:
            raise TestbedError(
                f"aqm.{k}: {v!r}: Linux's {args[0]} has {same[k]!r} only (fixed in the kernel)"
            )
        raise TestbedError(f"aqm.{k}: {v!r}: Linux's {args[0]} has no such setting")
    return args


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        ta, tb = scenario._ns(a), scenario._ns(b)
        if ta is not None and tb is not None:
            return ta == tb
    return bool(a == b)


def guest_spec(doc: Mapping[str, Any], cc: str, work: Path) -> dict[str, Any]:
    """What the guest runs for the scenario document ``doc`` (checked here, on the host)."""
    resolved = scenario.validate(dict(doc))
    topo = resolved["topology"]
    if topo.get("kind", "dumbbell") != "dumbbell":
        raise TestbedError(f"topology.kind: {topo.get('kind')!r}: the reference is a dumbbell")
    groups = resolved.get("traffic", [])
    if len(groups) != 1 or groups[0]["kind"] != "bulk":
        raise TestbedError("traffic: the reference runs one group of bulk flows")
    g = groups[0]
    if g.get("direction", "forward") != "forward":
        raise TestbedError(f"traffic[0].direction: {g['direction']!r}: forward only")
    if resolved.get("schedule"):
        raise TestbedError("schedule: the reference runs no schedule")
    if cc not in CC_MODULES:
        raise TestbedError(f"--cc: {cc!r} (allowed: {', '.join(CC_MODULES)})")
    ecn = bool(g.get("ecn", resolved["tcp"].get("ecn", False)))
    if cc == "dctcp" and not ecn:
        raise TestbedError("tcp.ecn: false: DCTCP needs ECN")
    qdisc = qdisc_args(resolved)
    kind = resolved["aqm"]["kind"]
    modules = ["veth", "sch_htb", "sch_netem"]
    modules += {"pie": ["sch_pie"], "codel": ["sch_codel"], "fq-codel": ["sch_fq_codel"]}.get(
        kind, ["sch_codel"] if kind == "step" else []
    )
    if CC_MODULES[cc]:
        modules.append(str(CC_MODULES[cc]))
    # The simulator's start draws, from the router's --check.
    check = work / "check.json"
    check.write_text(
        json.dumps({"scenario": json.loads(scenario.to_json(dict(doc))), "t0_ns": 0, "tuns": []})
    )
    chk = subprocess.run([find_router(), "--check", str(check)], capture_output=True, text=True)
    if chk.returncode != 0:
        raise TestbedError(chk.stderr.strip().removeprefix("error: "))
    derived = json.loads(chk.stdout)
    flows = plan(resolved, derived["starts_ns"])
    return {
        "work": str(work),
        "mtu": int(resolved["tcp"]["packet_size"]),
        "rate_bps": _rate_bps(topo["bottleneck_rate"]),
        "rtt_ns": int(derived["base_rtt_ns"]),
        "qdisc": qdisc,
        "cc": cc,
        "ecn": ecn,
        "duration_ns": int(derived["duration_ns"]),
        "measure_start_ns": int(derived["measure_start_ns"]),
        "starts_ns": [int(f["start_ns"]) for f in flows],
        "sample_ns": 10_000_000,
        "burst_packets": BURST_PACKETS,
        "modules": modules,
        "host_py": str(Path(__file__).with_name("host.py")),
    }


INIT = """#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs run /run
mkdir -p /run/netns /run/mroot/lib/modules
mount --bind {modules} /run/mroot/lib/modules
{python} {guest} {spec} > {work}/guest.log 2>&1
poweroff -f
"""


def run_linux_qdisc(
    doc: Mapping[str, Any], cc: str, log: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run the scenario ``doc`` in the guest with its kernel's congestion control ``cc``
    and return the summary (see the module's doc). Raises :class:`TestbedError`."""
    why = available()
    if why:
        raise TestbedError(why)
    say = log or (lambda s: None)
    with tempfile.TemporaryDirectory(prefix="aqmlab-uml-") as tmps:
        work = Path(tmps)
        spec = guest_spec(doc, cc, work)
        spec["modules_root"] = "/run/mroot"
        (work / "spec.json").write_text(json.dumps(spec))
        init = work / "init.sh"
        init.write_text(
            INIT.format(
                modules=MODULES,
                python=sys.executable,
                guest=Path(__file__).with_name("uml_guest.py"),
                spec=work / "spec.json",
                work=work,
            )
        )
        init.chmod(0o755)
        timeout = (spec["duration_ns"] * 1e-9) * 3 + 120
        say(f"booting {UML} for {spec['duration_ns'] * 1e-9:g} s of traffic")
        console = _boot(init, work, "mem=1G", timeout)
        if (work / "error.txt").exists():
            raise TestbedError("the guest failed: " + (work / "error.txt").read_text().strip())
        if not (work / "result.json").exists():
            raise TestbedError(f"the guest wrote no result; its console ended:\n{console[-800:]}")
        res = json.loads((work / "result.json").read_text())
    return summarise(spec, res)


def summarise(spec: Mapping[str, Any], res: Mapping[str, Any]) -> dict[str, Any]:
    """The guest's record as a summary (``bottleneck``, ``flows``, ``linux_qdisc``)."""
    t = (spec["duration_ns"] - spec["measure_start_ns"]) * 1e-9
    a, b = res["qdisc_at_start"], res["qdisc_at_end"]
    samples = res["samples"]

    def delta(k: str) -> int:
        return int(b.get(k, 0)) - int(a.get(k, 0))

    pkts = delta("packets")
    if len(samples) > 1 and len(samples[0]) >= 5:
        # The link's rate from the first and last samples' counters, each read at a known
        # instant (the counters of ``tc`` may be read some ms off the measurement's edges in
        # a busy guest).
        (t_a, *_, bytes_a, pkts_a), (t_b, *_, bytes_b, pkts_b) = samples[0], samples[-1]
        t_link = (t_b - t_a) * 1e-9
        ip_bytes = bytes_b - bytes_a - ETH_HEADER * (pkts_b - pkts_a)
    else:
        t_link, ip_bytes = t, delta("bytes") - ETH_HEADER * pkts
    marks = sum(delta(k) for k in MARK_STATS)
    overflow = sum(delta(k) for k in OVERLIMIT_STATS if k in b)
    drops = delta("drops")
    q = [s[1] for s in samples]
    qb = [s[2] for s in samples]
    rx = res["hosts"]["r"]["rx"]
    tx = res["hosts"]["l"]["tx"]
    good = [
        (int(rx[str(i)]["bytes"]) - int(rx[str(i)].get("bytes_at_start") or 0)) * 8 / t
        if str(i) in rx
        else 0.0
        for i in range(len(spec["starts_ns"]))
    ]
    kernel_tcp = kernel_tcp_window([res["hosts"]["l"], res["hosts"]["r"]])
    return {
        "bottleneck": {
            "departures": pkts,
            "utilization": ip_bytes * 8 / t_link / spec["rate_bps"],
            "queue_mean_pkts": sum(q) / len(q) if q else math.nan,
            "queue_mean_bytes": sum(qb) / len(qb) if qb else math.nan,
            "queue_samples": len(q),
            # A work-conserving link is busy at least while its queue holds a packet: a
            # utilisation well below this share says the guest lost the link's time.
            "queue_nonempty_share": sum(1 for v in q if v > 0) / len(q) if q else math.nan,
            "drops_early": drops - overflow,
            "drops_forced": 0,
            "drops_overflow": overflow,
            "marks": marks,
        },
        "flows": {
            "count": len(good),
            "goodput_bps": good,
            "goodput_bps_total": sum(good),
            "jain_fairness": _jain(good),
            # Within the measurement interval, as the testbed's summary counts them.
            "retransmits": sum(
                sender_count_within(v, v["info"], "total_retrans") for v in tx.values()
            ),
            "ecn_fallbacks": ecn_fallbacks(v["info"] for v in tx.values()) if spec["ecn"] else 0,
            # The guest kernel's counters over the measurement (timeouts, SACK recoveries,
            # loss probes, timeouts undone), as the testbed's summary has them.
            **{k: kernel_tcp[m] for k, m in FLOW_COUNTERS.items() if m in kernel_tcp},
        },
        "linux_qdisc": {
            "kernel": res["kernel"],
            "cc": spec["cc"],
            "qdisc": spec["qdisc"],
            "stats_at_start": a,
            "stats_at_end": b,
            "kernel_tcp": kernel_tcp,
        },
    }
