"""Run a scenario on the testbed and write its result folder.

:func:`run_testbed` checks that the scenario means something on real hosts,
builds the dumbbell of namespaces (:mod:`aqmlab.testbed.netns`), starts the
router (``aqmlab-router``) and one traffic program per host side
(:mod:`aqmlab.testbed.host`) on a common start instant, waits for the run's
end, tears everything down (also on Ctrl-C, SIGTERM and errors) and writes
the same result folder as ``aqmlab run``: ``summary.json``,
``queue.parquet``, ``flows.parquet``, ``params.parquet``,
``responses.parquet`` (the web sessions' responses), ``flow_series.parquet``
(the kernel's ``TCP_INFO`` of the bulk flows ``metrics.flow_series`` lists,
every ``metrics.sample_interval``) and a ``manifest.json``
that says ``"mode": "testbed"`` with the kernel and congestion control.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import math
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pyarrow as pa

from aqmlab import results, scenario
from aqmlab.api import (
    EVENT_COLUMNS,
    FLOW_SERIES_COLUMNS,
    RunResult,
    params_table,
    responses_table,
    typed_table,
)
from aqmlab.testbed import host
from aqmlab.testbed.counterpart import ACCESS_RATE
from aqmlab.testbed.cpus import CPU_CHOICES, CPUS, Placement, placement, steal_s
from aqmlab.testbed.cpus import router_priority as priority_for
from aqmlab.testbed.netns import (
    Dumbbell,
    TestbedError,
    check_environment,
    kernel_ccs,
    work_dir_prefix,
)
from aqmlab.testbed.priority import HOST_FIFO, ROUTER_FIFO, ROUTER_NICE, ROUTER_PRIORITIES

__all__ = ["find_router", "plan", "run_testbed", "unsupported"]

#: `[tcp]` keys the kernel's TCP honours in the testbed (the others have no
#: meaning on real hosts and are refused when written).
TCP_KEYS = {"variant", "packet_size", "ecn", "rwnd", "timestamps", "frto", "sack_compression"}
BULK_KEYS = {"kind", "flows", "direction", "start", "ecn", "handshake"}
WEB_KEYS = {
    "kind", "sessions", "offered_load", "direction", "start", "http", "think", "think_shape",
    "objects", "size_median", "size_sigma", "size_tail", "size_max", "request_size", "ecn", "rtt",
    "pages",
}  # fmt: skip
UDP_KEYS = {"kind", "flows", "direction", "start", "rate", "density", "packet_size", "on", "off"}
#: Interval of the RTT probes (one 64-byte ICMP echo from left to right).
PROBE_INTERVAL_NS = 100_000_000
#: Margin between the processes' "ready" and the run's start.
START_MARGIN_NS = 200_000_000
#: The kernel's TCP counters the summary gives over the measurement window, summed over the
#: two hosts' network namespaces (``testbed.kernel_tcp``), as ``nstat`` names them ...
KERNEL_TCP_COUNTERS = (
    "TcpRetransSegs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPSackRecovery",
    "TcpExtTCPSackRecoveryFail",
    "TcpExtTCPRenoRecovery",
    "TcpExtTCPLossProbes",
    "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPLostRetransmit",
    "TcpExtTCPFastRetrans",
    "TcpExtTCPSlowStartRetrans",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPLossUndo",
    "TcpExtTCPFullUndo",
    "TcpExtTCPPartialUndo",
    "TcpExtTCPDSACKRecv",
    "TcpExtTCPDSACKOfoRecv",
    "TcpExtTCPDSACKUndo",
    "TcpExtTCPSACKReorder",
    "TcpExtTCPTSReorder",
    "TcpExtTCPHystartTrainDetect",
    "TcpExtTCPHystartTrainCwnd",
    "TcpExtTCPHystartDelayDetect",
    "TcpExtTCPHystartDelayCwnd",
)
#: ... and those with a key of the simulator's summary (``flows``) of the same meaning.
FLOW_COUNTERS = {
    "timeouts": "TcpExtTCPTimeouts",
    "sack_recoveries": "TcpExtTCPSackRecovery",
    "tlp_probes": "TcpExtTCPLossProbes",
    "timeouts_undone": "TcpExtTCPLossUndo",
    "reorderings": "TcpExtTCPSACKReorder",
}


def _ns(v: Any) -> int:
    n = scenario._ns(v, numbers_are_seconds=True)
    if n is None:
        raise TestbedError(f"not a time: {v!r}")
    return n


def host_sysctls(doc: Mapping[str, Any], resolved: Mapping[str, Any]) -> dict[str, str]:
    """The hosts' TCP settings the scenario writes (as resolved): ``tcp.timestamps`` as
    ``net.ipv4.tcp_timestamps`` (1 or 0), ``tcp.frto`` as ``net.ipv4.tcp_frto`` (2, the
    SACK-enhanced F-RTO, or 0), ``tcp.sack_compression`` as ``net.ipv4.tcp_comp_sack_nr`` (44 or
    0). A key not written leaves the kernel's default (1, 2 and 44), whatever the simulator's
    default."""
    tcp = doc.get("tcp", {})
    if not isinstance(tcp, Mapping):
        return {}
    out: dict[str, str] = {}
    if "timestamps" in tcp:
        out["net.ipv4.tcp_timestamps"] = "1" if resolved["tcp"].get("timestamps") else "0"
    if "frto" in tcp:
        out["net.ipv4.tcp_frto"] = "2" if resolved["tcp"].get("frto") else "0"
    if "sack_compression" in tcp:
        out["net.ipv4.tcp_comp_sack_nr"] = "44" if resolved["tcp"].get("sack_compression") else "0"
    return out


def unsupported(doc: Mapping[str, Any]) -> list[str]:
    """Keys of the scenario as written that the testbed cannot honour, each
    as ``path: reason`` (empty: the scenario can run)."""
    errs: list[str] = []
    topo = doc.get("topology", {})
    if isinstance(topo, Mapping) and topo.get("kind", "dumbbell") != "dumbbell":
        errs.append(f"topology.kind: {topo.get('kind')!r}: the testbed emulates a dumbbell only")
    for k in ("loss", "reverse_loss", "access_loss"):
        if isinstance(topo, Mapping) and k in topo:
            errs.append(f"topology.{k}: random link loss is not emulated by the testbed")
    for k in ("access_rate", "access_buffer"):
        if isinstance(topo, Mapping) and k in topo:
            errs.append(
                f"topology.{k}: {topo[k]!r}: not emulated by the testbed (its access links are "
                "veth pairs without a rate or a queue, a burst reaching the router at about 2.4 "
                f"Gbit/s; a simulator run held against it takes {ACCESS_RATE}: "
                "aqmlab.testbed.simulator_counterpart); leave the key out"
            )
    tcp = doc.get("tcp", {})
    if isinstance(tcp, Mapping):
        for k in tcp:
            if k not in TCP_KEYS:
                errs.append(
                    f"tcp.{k}: has no meaning for the kernel's TCP in the testbed "
                    f"(allowed there: {', '.join(sorted(TCP_KEYS))}; the congestion "
                    "control is chosen with --cc)"
                )
    for i, t in enumerate(doc.get("traffic", [])):
        if not isinstance(t, Mapping):
            continue
        kind = t.get("kind")
        allowed = {"bulk": BULK_KEYS, "cbr": UDP_KEYS, "udp-onoff": UDP_KEYS, "web": WEB_KEYS}.get(
            str(kind)
        )
        if allowed is None:
            errs.append(
                f"traffic[{i}].kind: {kind!r} is not supported by the testbed yet "
                '(only "bulk", "cbr", "udp-onoff" and "web")'
            )
            continue
        if kind == "web" and "rtt" in t and isinstance(topo, Mapping):
            base = 2 * (
                (scenario._ns(topo.get("bottleneck_delay", "0s")) or 0)
                + 2 * (scenario._ns(topo.get("access_delay", "0s")) or 0)
            )
            if scenario._ns(t["rtt"]) != base:
                errs.append(
                    f"traffic[{i}].rtt: {t['rtt']!r}: every web session of the testbed has "
                    f"the path's base RTT ({base / 1e6:g}ms); per-session RTTs are not emulated"
                )
        if kind == "web" and t.get("http") == "webtraf":
            errs.append(
                f"traffic[{i}].http: 'webtraf' is not supported by the testbed (its web clients "
                'speak "1.0" and "1.1"; a server that opens the response connection is a '
                "simulator model only)"
            )
        if kind == "web" and t.get("pages", "closed") != "closed":
            errs.append(
                f"traffic[{i}].pages: {t.get('pages')!r} is not supported by the testbed (its web "
                'clients wait for each page: "closed"; open pages are a simulator model only)'
            )
        for k in t:
            if k not in allowed:
                errs.append(
                    f"traffic[{i}].{k}: not supported by the testbed (all flows share one "
                    f"emulated path and the kernel's TCP; allowed: {', '.join(sorted(allowed))})"
                )
        mtu = tcp.get("packet_size", 1000) if isinstance(tcp, Mapping) else 1000
        if (
            kind in ("cbr", "udp-onoff")
            and isinstance(t.get("packet_size"), int)
            and t["packet_size"] > mtu
        ):
            errs.append(
                f"traffic[{i}].packet_size: {t['packet_size']} is larger than the testbed's "
                f"MTU (tcp.packet_size = {mtu}); UDP datagrams are not fragmented"
            )
    for i, e in enumerate(doc.get("schedule", [])):
        if isinstance(e, Mapping) and e.get("action") == "web":
            errs.append(
                f"schedule[{i}].action: {e.get('action')!r} is not supported by the testbed"
            )
        if isinstance(e, Mapping) and "every" in e:
            errs.append(
                f"schedule[{i}].every: {e['every']!r}: the testbed does not repeat schedule "
                "entries; write each change as an entry of its own"
            )
    metrics = doc.get("metrics", {})
    if isinstance(metrics, Mapping) and "phases" in metrics:
        errs.append("metrics.phases: per-phase summaries are not computed by the testbed yet")
    if isinstance(metrics, Mapping) and metrics.get("group_delays") is True:
        errs.append(
            "metrics.group_delays: the testbed's router keeps no delay histograms, so no "
            "traffic group's delays either (set it to false, or run the scenario in the simulator)"
        )
    return errs


def plan(
    resolved: Mapping[str, Any], starts_ns: Sequence[Sequence[int]] | None = None
) -> list[dict[str, Any]]:
    """Every flow of the run: id, group, direction, start and stop (ns after
    the run's start). ``starts_ns`` (per group, per initial flow: the
    router's ``--check`` gives the simulator's draws) sets when the initial
    flows start; without it they are drawn as the scenario says, from a
    stream seeded by the scenario's seed and the group (the same
    distribution, other values). Flows the schedule starts are drawn so
    either way."""
    seed = int(resolved.get("seed", 1))
    flows: list[dict[str, Any]] = []
    active: dict[int, list[dict[str, Any]]] = {}

    def draw(start: Any, rng: random.Random) -> int:
        if isinstance(start, Mapping) and "uniform" in start:
            lo, hi = (_ns(x) for x in start["uniform"])
            return rng.randint(lo, hi)
        return _ns(start)

    for g, t in enumerate(resolved.get("traffic", [])):
        rng = random.Random(seed * 1_000_003 + g)
        active[g] = []
        if t["kind"] == "web":
            continue  # sessions, not flows: see web_sessions()
        for i in range(int(t["flows"])):
            f = {
                "id": len(flows),
                "group": g,
                "kind": t["kind"],
                "forward": t.get("direction", "forward") == "forward",
                "start_ns": (
                    int(starts_ns[g][i])
                    if starts_ns is not None
                    else draw(t.get("start", "0s"), rng)
                ),
                "stop_ns": None,
                "udp": _udp(resolved, t, len(flows), seed),
            }
            flows.append(f)
            active[g].append(f)
    for i, e in enumerate(resolved.get("schedule", [])):
        if e.get("action") != "flows":
            continue
        g = int(e.get("group", 0))
        at = _ns(e["at"])
        spread = _ns(e.get("spread", "1s"))
        rng = random.Random(seed * 7_000_003 + i)
        t = resolved["traffic"][g]
        for _ in range(int(e.get("start", 0))):
            f = {
                "id": len(flows),
                "group": g,
                "kind": t["kind"],
                "forward": t.get("direction", "forward") == "forward",
                "start_ns": at + rng.randint(0, spread),
                "stop_ns": None,
                "udp": _udp(resolved, t, len(flows), seed),
            }
            flows.append(f)
            active[g].append(f)
        live = sorted(
            (f for f in active[g] if f["start_ns"] <= at), key=lambda f: -int(f["start_ns"])
        )
        for f in live[: int(e.get("stop", 0))]:
            f["stop_ns"] = at
            active[g].remove(f)
    return flows


def _bytes(v: Any) -> int:
    """A byte size as the resolved scenario writes it ("300B")."""
    if isinstance(v, int):
        return v
    text = str(v).strip()
    for unit, k in (("KB", 1000), ("MB", 1_000_000), ("B", 1)):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * k)
    raise TestbedError(f"not a byte size: {v!r}")


def _rate_bps(v: Any) -> float:
    """A rate as the scenario writes it ("10Mbps", 1e6) in bit/s."""
    if isinstance(v, int | float):
        return float(v)
    text = str(v).strip()
    for unit, k in (("Gbps", 1e9), ("Mbps", 1e6), ("Kbps", 1e3), ("kbps", 1e3), ("bps", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * k
    raise TestbedError(f"not a rate: {v!r}")


def _udp_rate(resolved: Mapping[str, Any], t: Mapping[str, Any], rate: Any, density: Any) -> float:
    """Each flow's rate: ``rate``, or ``density`` x C / flows."""
    if rate is not None:
        return _rate_bps(rate)
    c = _rate_bps(resolved["topology"]["bottleneck_rate"])
    return float(density) * c / max(1, int(t["flows"]))


def _udp(resolved: Mapping[str, Any], t: Mapping[str, Any], fid: int, seed: int) -> Any:
    if t["kind"] not in ("cbr", "udp-onoff"):
        return None
    u: dict[str, Any] = {
        "packet_size": int(t["packet_size"]),
        "rate_bps": _udp_rate(resolved, t, t.get("rate"), t.get("density")),
        "seed": seed * 9_000_011 + fid,
    }
    if t["kind"] == "udp-onoff":
        u["on_ns"] = _ns(t["on"])
        u["off_ns"] = _ns(t["off"])
    return u


def udp_rate_changes(resolved: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The schedule's ``udp`` actions: (at, group, new per-flow rate)."""
    out = []
    for e in resolved.get("schedule", []):
        if e.get("action") == "udp":
            g = int(e.get("group", 0))
            t = resolved["traffic"][g]
            r = _udp_rate(resolved, t, e.get("rate"), e.get("density"))
            out.append({"at_ns": _ns(e["at"]), "group": g, "rate_bps": r})
    return out


def web_sessions(
    resolved: Mapping[str, Any], scripts: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The web sessions: the core's scripts (``aqmlab-router --web-plan``),
    each with its begin time (the group's start drawn per session, plus
    the residual think) and its server's address."""
    seed = int(resolved.get("seed", 1))
    out = []
    rngs: dict[int, random.Random] = {}
    for w in scripts:
        g = int(w["group"])
        t = resolved["traffic"][g]
        rng = rngs.setdefault(g, random.Random(seed * 5_000_011 + g))
        start = t.get("start", "0s")
        if isinstance(start, Mapping) and "uniform" in start:
            lo, hi = (_ns(x) for x in start["uniform"])
            s0 = rng.randint(lo, hi)
        else:
            s0 = _ns(start)
        fwd = t.get("direction", "forward") == "forward"
        out.append(
            {
                **w,
                "forward": fwd,
                "begin_ns": s0 + int(float(w["residual_s"]) * 1e9),
                # The server sits on the data's sending side.
                "server": Dumbbell.receiver_addr(g, not fwd),
            }
        )
    return out


def find_router() -> str:
    """The router binary: $AQMLAB_ROUTER, then ``aqmlab-router`` on PATH, then the one the
    wheel ships in the package (``aqmlab/bin``), then the workspace's
    ``target/release/aqmlab-router``."""
    env = os.environ.get("AQMLAB_ROUTER")
    if env:
        return env
    w = shutil.which("aqmlab-router")
    if w:
        return w
    here = Path(__file__).resolve()
    shipped = here.parent.parent / "bin" / "aqmlab-router"
    if shipped.is_file():
        if not os.access(shipped, os.X_OK):
            with contextlib.suppress(OSError):
                shipped.chmod(0o755)
        return str(shipped)
    for parent in here.parents:
        cand = parent / "target" / "release" / "aqmlab-router"
        if cand.is_file():
            return str(cand)
    raise TestbedError(
        "the router binary aqmlab-router is not built: run `make build` "
        "(or cargo build --release -p aqmlab-testbed), or set AQMLAB_ROUTER"
    )


def _die_with_parent() -> None:
    """In the child before exec: die with the parent (prctl PR_SET_PDEATHSIG)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)


def _router_child() -> None:
    """In the router's child before exec: die with the parent, and run at a
    higher CPU priority (nice -10) so that on a loaded machine its wake-ups
    stay close to the link's schedule."""
    _die_with_parent()
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, ROUTER_NICE)


def _router_child_fifo() -> None:
    """As :func:`_router_child`, in the real-time class (``--router-priority fifo``)."""
    _router_child()
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(ROUTER_FIFO))


def _host_child_fifo() -> None:
    """In a host program's child before exec: die with the parent, and run in the real-time
    class below the router (:data:`HOST_FIFO`)."""
    _die_with_parent()
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(HOST_FIFO))


def _router_preexec(priority: str, cpu: int | None) -> Callable[[], None]:
    """The router's child set-up: its class (``priority``), and with ``cpu`` that CPU alone."""
    base = _router_child_fifo if priority == "fifo" else _router_child

    def child() -> None:
        base()
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    return child


def _keep_awake(router: str, place: Placement) -> subprocess.Popen[bytes]:
    """Start ``aqmlab-router --keep-awake`` on the hosts' CPUs (:mod:`aqmlab.testbed.cpus`) and
    wait for its ``ready``."""
    p = subprocess.Popen(
        [router, "--keep-awake", ",".join(str(c) for c in place.hosts)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_die_with_parent,
    )
    assert p.stdout is not None
    if p.stdout.readline().strip() != b"ready":
        p.wait()
        err = p.stderr.read().decode(errors="replace").strip() if p.stderr else ""
        raise TestbedError(f"--cpus pinned: the hosts' CPUs could not be kept awake ({err})")
    return p


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt (as Ctrl-C does), so the
    tear-down in ``finally`` runs for them too."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def run_testbed(
    doc: dict[str, Any],
    out: str | os.PathLike[str],
    cc: str = "reno",
    command: Sequence[str] | None = None,
    log: Callable[[str], None] | None = None,
    router_priority: str | None = None,
    cpus: str = CPUS,
) -> RunResult:
    """Run the scenario document ``doc`` on the testbed and write the
    result folder ``out``; the router is scheduled as ``router_priority`` says
    (:data:`ROUTER_PRIORITIES`; by default ``"fifo"``, or ``"nice"`` with ``cpus="pinned"``),
    the processes placed as ``cpus`` says (:data:`CPU_CHOICES`). Raises :class:`TestbedError`
    (set-up, an unsupported key or option) or ``aqmlab.ScenarioError`` (a bad scenario)."""
    say = log or (lambda s: None)
    if router_priority is not None and router_priority not in ROUTER_PRIORITIES:
        raise TestbedError(
            f"--router-priority: {router_priority!r} is not one of {', '.join(ROUTER_PRIORITIES)}"
        )
    if cpus not in CPU_CHOICES:
        raise TestbedError(f"--cpus: {cpus!r} is not one of {', '.join(CPU_CHOICES)}")
    place = placement(cpus)
    try:
        router_priority = priority_for(router_priority, place)
    except ValueError as e:
        raise TestbedError(str(e)) from None
    resolved = scenario.validate(doc)
    errs = unsupported(doc)
    if errs:
        raise TestbedError("; ".join(errs))
    results.check_target(out)
    check_environment()
    ccs = kernel_ccs()
    if cc not in ccs:
        raise TestbedError(
            f"--cc: {cc!r} is not available in this kernel (available: {', '.join(ccs) or 'none'})"
        )
    router = find_router()
    ecn_default = bool(resolved["tcp"].get("ecn", False))
    groups = resolved.get("traffic", [])
    ecn_groups = {g: bool(t.get("ecn", ecn_default)) for g, t in enumerate(groups)}

    # Addressing: a group's address sits where its connections are accepted:
    # the data's receivers for bulk and UDP, the servers (the data's
    # senders) for web.
    def accepts_right(t: Mapping[str, Any]) -> bool:
        fwd = t.get("direction", "forward") == "forward"
        return bool(fwd != (t["kind"] == "web"))

    fwd_groups = [g for g, t in enumerate(groups) if accepts_right(t)]
    rev_groups = [g for g, t in enumerate(groups) if not accepts_right(t)]
    mtu = int(resolved["tcp"]["packet_size"])
    if mtu < 576:
        raise TestbedError(
            f"tcp.packet_size: {mtu} is below 576, the smallest IPv4 MTU the testbed uses"
        )
    wall0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=work_dir_prefix()) as tmps:
        tmp = Path(tmps)
        cfg = {"scenario": json.loads(scenario.to_json(doc)), "t0_ns": 0, "tuns": []}
        (tmp / "check.json").write_text(json.dumps(cfg))
        chk = subprocess.run(
            [router, "--check", str(tmp / "check.json")], capture_output=True, text=True
        )
        if chk.returncode != 0:
            raise TestbedError(chk.stderr.strip().removeprefix("error: "))
        derived = json.loads(chk.stdout)
        # The initial flows start when the simulator's would.
        flows = plan(resolved, derived["starts_ns"])
        scripts: list[dict[str, Any]] = []
        if any(t["kind"] == "web" for t in groups):
            wp = subprocess.run(
                [router, "--web-plan", str(tmp / "check.json")], capture_output=True, text=True
            )
            if wp.returncode != 0:
                raise TestbedError(wp.stderr.strip().removeprefix("error: "))
            scripts = json.loads(wp.stdout)
        sessions = web_sessions(resolved, scripts)
        db = Dumbbell(
            mtu=mtu,
            ecn_groups=ecn_groups,
            forward_groups=fwd_groups,
            reverse_groups=rev_groups,
            host_sysctls=host_sysctls(doc, resolved),
        )
        procs: list[subprocess.Popen[bytes]] = []
        awake: subprocess.Popen[bytes] | None = None
        own_cpus = os.sched_getaffinity(0)
        with _signals_raise():
            try:
                if place is not None:
                    # The runner and the hosts (its children) stay off the router's CPU.
                    os.sched_setaffinity(0, set(place.hosts))
                    awake = _keep_awake(router, place)
                say(f"setting up namespaces {db.tag}-*")
                db.up()
                cfg["t0_ns"] = 0  # handed over on stdin once every process is ready
                cfg["tuns"] = [[db.netns_path("rl"), "tb0"], [db.netns_path("rr"), "tb0"]]
                if flows:
                    cfg["flow_ports"] = {
                        "base": host.FLOW_PORT_BASE,
                        "count": min(len(flows), host.FLOW_PORTS),
                    }
                # Alone on its CPU, the router polls rather than let that CPU halt.
                cfg["busy_poll"] = place is not None
                (tmp / "router.json").write_text(json.dumps(cfg))
                traced = {int(f) for f in resolved["metrics"].get("flow_series", [])}
                every = scenario._ns(resolved["metrics"].get("sample_interval", "10ms"))
                common = {
                    "t0_ns": 0,
                    "duration_ns": derived["duration_ns"],
                    "measure_start_ns": derived["measure_start_ns"],
                    "cc": cc,
                    "probe_interval_ns": PROBE_INTERVAL_NS,
                }
                hosts = {}
                for side in ("l", "r"):
                    left = side == "l"
                    spec = dict(common)
                    spec["out"] = str(tmp / f"host-{side}.out.json")
                    spec["flows"] = [
                        {
                            "id": f["id"],
                            "group": f["group"],
                            "dst": Dumbbell.receiver_addr(f["group"], f["forward"]),
                            "start_ns": f["start_ns"],
                            "stop_ns": f["stop_ns"],
                            "udp": f["udp"],
                            "port": host.FLOW_PORT_BASE + f["id"]
                            if f["id"] < host.FLOW_PORTS
                            else None,
                        }
                        for f in flows
                        if f["forward"] == left
                    ]
                    mine = rev_groups if left else fwd_groups
                    spec["listen"] = [
                        Dumbbell.receiver_addr(g, not left)
                        for g in mine
                        if groups[g]["kind"] == "bulk"
                    ]
                    spec["listen_udp"] = [
                        Dumbbell.receiver_addr(g, not left)
                        for g in mine
                        if groups[g]["kind"] in ("cbr", "udp-onoff")
                    ]
                    spec["web_servers"] = [
                        [Dumbbell.receiver_addr(g, not left), _bytes(groups[g]["request_size"])]
                        for g in mine
                        if groups[g]["kind"] == "web"
                    ]
                    # The clients browse from the data's receiving side.
                    spec["web_sessions"] = [w for w in sessions if w["forward"] != left]
                    spec["udp_rates"] = udp_rate_changes(resolved)
                    if "rwnd" in doc.get("tcp", {}):
                        # The receiver's window in segments of MSS = packet_size - 40.
                        spec["window_clamp"] = int(resolved["tcp"]["rwnd"]) * (mtu - 40)
                    spec["probe_to"] = "10.2.0.2" if left else None
                    spec["series"] = {
                        "flows": [
                            f["id"]
                            for f in flows
                            if f["forward"] == left and f["udp"] is None and f["id"] in traced
                        ],
                        "interval_ns": every or 10_000_000,
                    }
                    (tmp / f"host-{side}.json").write_text(json.dumps(spec))
                    hosts[side] = tmp / f"host-{side}.out.json"
                say("starting the router and the hosts")
                try:
                    procs.append(
                        subprocess.Popen(
                            [
                                router,
                                "--run",
                                str(tmp / "router.json"),
                                "--out",
                                str(tmp / "router.out.json"),
                            ],
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            preexec_fn=_router_preexec(
                                router_priority, None if place is None else place.router
                            ),
                        )
                    )
                except subprocess.SubprocessError as e:
                    # The real-time class refused (no CAP_SYS_NICE, or no real-time time left).
                    raise TestbedError(
                        f"--router-priority {router_priority}: the router could not be "
                        f"scheduled so ({e})"
                    ) from None
                # The hosts' programs follow the router into the real-time class, below it.
                host_preexec = _host_child_fifo if router_priority == "fifo" else _die_with_parent
                try:
                    for side in ("l", "r"):
                        procs.append(
                            subprocess.Popen(
                                [
                                    "ip",
                                    "netns",
                                    "exec",
                                    db.ns(side),
                                    sys.executable,
                                    # The file itself: it needs the standard
                                    # library only, so it starts fast.
                                    str(Path(__file__).with_name("host.py")),
                                    str(tmp / f"host-{side}.json"),
                                ],
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                preexec_fn=host_preexec,
                            )
                        )
                except subprocess.SubprocessError as e:
                    raise TestbedError(
                        f"--router-priority {router_priority}: the hosts' programs could not be "
                        f"scheduled in the real-time class below the router ({e})"
                    ) from None
                # Every process says "ready" (TUN devices attached, sockets
                # listening); then all get the same start instant.
                for p, what in zip(procs, ("router", "left host", "right host"), strict=True):
                    assert p.stdout is not None
                    if p.stdout.readline().strip() != b"ready":
                        p.wait()
                        err = p.stderr.read().decode(errors="replace").strip() if p.stderr else ""
                        raise TestbedError(f"the {what} failed to start: {err}")
                t0 = time.monotonic_ns() + START_MARGIN_NS
                steal0 = steal_s()
                for p in procs:
                    assert p.stdin is not None
                    p.stdin.write(f"{t0}\n".encode())
                    p.stdin.close()
                deadline = t0 + int(derived["duration_ns"]) + 30_000_000_000
                for p in procs:
                    left_s = max(0.0, (deadline - time.monotonic_ns()) * 1e-9)
                    try:
                        p.wait(timeout=left_s)
                    except subprocess.TimeoutExpired:
                        raise TestbedError("the testbed's processes did not end in time") from None
                for p, what in zip(procs, ("router", "left host", "right host"), strict=True):
                    if p.returncode != 0:
                        err = p.stderr.read().decode(errors="replace").strip() if p.stderr else ""
                        raise TestbedError(f"the {what} failed (status {p.returncode}): {err}")
                rout = json.loads((tmp / "router.out.json").read_text())
                rout["priority"] = router_priority
                rout["cpus"] = cpus if place is not None else "shared"
                # /proc/stat counts in ticks (1/100 s): no more digits than that.
                rout["steal_s"] = round(steal_s() - steal0, 3)
                hl = json.loads(hosts["l"].read_text())
                hr = json.loads(hosts["r"].read_text())
                fifo = bool(hl.get("fifo")) and bool(hr.get("fifo"))
                rout["host_priority"] = "fifo" if fifo else "ordinary"
            finally:
                for p in procs if awake is None else [*procs, awake]:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                os.sched_setaffinity(0, own_cpus)
                say("tearing down")
                db.down()
    wall = time.monotonic() - wall0
    result = _result(resolved, derived, rout, hl, hr, flows, cc, wall)
    result.flow_series = flow_series_table(list(hl.get("series", [])) + list(hr.get("series", [])))
    resp = sorted(list(hl.get("responses", [])) + list(hr.get("responses", [])), key=lambda r: r[6])
    if resp:
        # A host's row: flow, group, page, object, size_bytes, start_s, end_s,
        # response_time_s. Testbed sessions have no lanes: the session is its flow.
        names = ("flow", "group", "page", "object", "size_bytes", "start_s", "end_s")
        cols = dict(zip((*names, "response_time_s"), zip(*resp, strict=True), strict=True))
        cols["session"] = cols["flow"]
        result.responses = responses_table({k: list(v) for k, v in cols.items()})
        ms = derived["measure_start_ns"] * 1e-9
        rt = np.asarray([r[7] for r in resp if r[6] >= ms])
        if rt.size:
            result.summary["web"] = {
                "completed": int(rt.size),
                "response_time_mean_s": float(rt.mean()),
                "response_time_p50_s": float(np.quantile(rt, 0.5)),
                "response_time_p90_s": float(np.quantile(rt, 0.9)),
                "response_time_p99_s": float(np.quantile(rt, 0.99)),
            }
    result.command = list(command) if command else None
    _write(result, out, _manifest_extra(derived, rout, cc))
    return result


def _scheduling(rout: Mapping[str, Any]) -> dict[str, str]:
    """How the run's processes were scheduled, as the summary and the manifest say it: the
    router's class, the hosts' programs' class, and where the processes ran."""
    return {
        "router_priority": rout["priority"],
        "host_priority": rout["host_priority"],
        "cpus": rout["cpus"],
    }


def _manifest_extra(derived: Mapping[str, Any], rout: Mapping[str, Any], cc: str) -> dict[str, Any]:
    return {
        "mode": "testbed",
        "testbed": {
            "kernel": platform.release(),
            "congestion_control": cc,
            "host": platform.node(),
            "router": dict(derived),
            "router_late_p99_s": rout["late_p99_s"],
            **_scheduling(rout),
        },
    }


def _write(result: RunResult, out: str | os.PathLike[str], extra: Mapping[str, Any]) -> Path:
    """As :func:`aqmlab.results.write_run`, with the manifest's testbed keys."""
    target = results.check_target(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir()
        results._write_files(result, tmp)
        man = results.manifest(result)
        man.update(extra)
        (tmp / results.MANIFEST).write_text(json.dumps(man, indent=2, allow_nan=False) + "\n")
        results._replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


#: ``TCP_INFINITE_SSTHRESH``: the kernel's ssthresh before the first reduction.
INFINITE_SSTHRESH = 0x7FFFFFFF
#: BBR v1's pacing and window gains in 1/256 (``tcp_bbr.c``): Startup's high gain 2.885
#: (both), Drain's pacing gain 1 / 2.885; ProbeRTT's window gain 1; ProbeBW's window gain 2.
BBR_HIGH_GAIN = 739
BBR_DRAIN_GAIN = 88
BBR_UNIT = 256


def bbr_state(pacing_gain: int, cwnd_gain: int) -> str:
    """BBR v1's state from the gains ``TCP_CC_INFO`` gives (empty for other controls)."""
    if pacing_gain == 0 and cwnd_gain == 0:
        return ""
    if pacing_gain == BBR_HIGH_GAIN:
        return "startup"
    if pacing_gain == BBR_DRAIN_GAIN:
        return "drain"
    if cwnd_gain == BBR_UNIT:
        return "probe_rtt"
    return "probe_bw"


#: Linux's ``tcpi_ca_state`` values (``enum tcp_ca_state``) by name.
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")


def flow_series_table(rows: Sequence[Sequence[float]]) -> pa.Table:
    """The hosts' ``TCP_INFO`` samples as the simulator's ``flow_series`` table: per row
    time, flow, cwnd, ssthresh, srtt, RTO, bytes acknowledged, pacing rate and delivery rate
    (bytes/s), BBR's bandwidth (bytes/s) and gains, ``tcpi_ca_state`` (``ca_state`` by
    Linux's names; empty where unknown), the data segments sent, the MSS and the segments in
    flight. ssthresh is infinite where the kernel
    says ``TCP_INFINITE_SSTHRESH``; ``delivery_rate_bps`` is the payload acknowledged since
    the flow's previous sample (NaN at its first), ``send_rate_bps`` the payload of the data
    segments sent since then (``tcpi_data_segs_out`` times the MSS; NaN at its first),
    ``in_flight`` the kernel's ``tcp_packets_in_flight``, ``rate_sample_bps`` the kernel's
    ``tcpi_delivery_rate``, ``pacing_rate_bps`` its ``tcpi_pacing_rate`` for BBR (the
    only control of the testbed that paces; NaN for the others, as in the simulator);
    ``alpha`` is NaN. BBR's state counts from a flow's first Startup sample: before it the
    connection is not yet established or BBR has not yet seen an ACK (its gains are then
    not its state's)."""
    rows = sorted(rows, key=lambda r: (r[0], r[1]))
    cols: dict[str, list[Any]] = {name: [] for name, _ in FLOW_SERIES_COLUMNS}
    last: dict[int, tuple[float, float, float]] = {}
    begun: set[int] = set()
    nan = math.nan
    for t, fid, cwnd, ssth, srtt, rto, acked, pacing, rate, bw, pg, cg, ca, segs, mss, fl in rows:
        f = int(fid)
        prev = last.get(f)
        last[f] = (t, acked, segs)
        state = bbr_state(int(pg), int(cg))
        if state == "startup":
            begun.add(f)
        elif f not in begun:
            state = ""
        cols["time_s"].append(t)
        cols["flow"].append(f)
        cols["cwnd"].append(cwnd)
        cols["ssthresh"].append(math.inf if ssth >= INFINITE_SSTHRESH else ssth)
        cols["srtt_s"].append(srtt)
        cols["rto_s"].append(rto)
        cols["delivery_rate_bps"].append(
            (acked - prev[1]) * 8 / (t - prev[0]) if prev is not None and t > prev[0] else nan
        )
        cols["send_rate_bps"].append(
            (segs - prev[2]) * mss * 8 / (t - prev[0]) if prev is not None and t > prev[0] else nan
        )
        cols["in_flight"].append(fl)
        cols["alpha"].append(nan)
        cols["pacing_rate_bps"].append(pacing * 8 if state else nan)
        cols["rate_sample_bps"].append(rate * 8)
        cols["bbr_state"].append(state)
        cols["bbr_bw_bps"].append(bw * 8 if state else nan)
        cols["ca_state"].append(CA_STATES[int(ca)] if 0 <= ca < len(CA_STATES) else "")
    return typed_table(cols, FLOW_SERIES_COLUMNS)


def sender_count_within(tx: Mapping[str, Any], info: Mapping[str, Any], key: str) -> int:
    """A sender's ``TCP_INFO`` count ``key`` (``total_retrans``, ``data_segs_out``) over the
    measurement interval: ``info``'s, its last, less what it read when the interval began (a
    flow opened later had counted nothing)."""
    return int(info.get(key, 0)) - int(tx.get("info_at_start", {}).get(key, 0))


def kernel_tcp_window(hosts: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The kernel's TCP counters over the measurement window (end less start), summed over the
    hosts' records; a counter missing at the end (no ``/proc`` to read) is left out."""
    out: dict[str, int] = {}
    for h in hosts:
        mib = h.get("mib", {})
        start, end = mib.get("start", {}), mib.get("end", {})
        for k in KERNEL_TCP_COUNTERS:
            if k in end:
                out[k] = out.get(k, 0) + int(end[k]) - int(start.get(k, 0))
    return out


#: ``tcpi_options``' bit of a connection that negotiated ECN (``TCPI_OPT_ECN``).
TCPI_OPT_ECN = 8


def ecn_fallbacks(infos: Iterable[Mapping[str, Any]]) -> int:
    """Of the connections that asked for ECN (their final ``TCP_INFO`` given), those that run
    without it: the kernel's fallback after a SYN sent again (``tcp.ecn_fallback``)."""
    return sum(1 for i in infos if "options" in i and not int(i["options"]) & TCPI_OPT_ECN)


def _jain(x: Sequence[float]) -> float:
    if not x or sum(v * v for v in x) == 0:
        return 0.0
    return float(sum(x) ** 2 / (len(x) * sum(v * v for v in x)))


def _link_summary(
    d: Mapping[str, Any], q: Mapping[str, Any] | None, t_meas: float, window: float, pkt: int
) -> dict[str, Any]:
    a, s = d["total"], d["at_measure_start"]
    dl = {k: a[k] - s[k] for k in a}
    out: dict[str, Any] = {
        "name": d["name"],
        "arrivals": dl["arrivals"],
        "departures": dl["departures"],
        "drops_early": dl["drops_early"],
        "drops_forced": dl["drops_forced"],
        "drops_overflow": dl["drops_overflow"],
        "marks_early": dl["marks_early"],
        "marks_forced": dl["marks_forced"],
        "marks": dl["marks_early"] + dl["marks_forced"],
        "drops_ect": dl.get("drops_ect", 0),
        "lost_on_link": 0,
        "arrival_mean_size_bytes": dl["arrival_bytes"] / dl["arrivals"] if dl["arrivals"] else 0.0,
        "loss_rate": (dl["drops_early"] + dl["drops_forced"] + dl["drops_overflow"])
        / dl["arrivals"]
        if dl["arrivals"]
        else 0.0,
        "throughput_bps": dl["departure_bytes"] * 8 / t_meas,
        "utilization": dl["departure_bytes"] * 8 / t_meas / d["rate_bps"],
        "queuing_delay_mean_s": dl["sojourn_ns"] * 1e-9 / dl["departures"]
        if dl["departures"]
        else 0.0,
    }
    if q is not None:
        t = np.asarray(q["time_s"], dtype=np.float64)
        start = float(q.get("_start", 0.0))
        m = t >= start
        qp = np.asarray(q["queue_pkts"], dtype=np.float64)[m]
        qb = np.asarray(q["queue_bytes"], dtype=np.float64)[m]
        tt = t[m]
        mean_size = out["arrival_mean_size_bytes"] or float(pkt)
        for suffix, arr in (("pkts", qp), ("bytes", qb), ("meanpkts", qb / mean_size)):
            out[f"queue_mean_{suffix}"] = float(arr.mean()) if arr.size else 0.0
            out[f"queue_std_{suffix}"] = float(arr.std()) if arr.size else 0.0
            stds = []
            if arr.size and window > 0:
                idx = np.floor((tt - start) / window).astype(np.int64)
                for w in np.unique(idx):
                    sel = arr[idx == w]
                    if sel.size > 1:
                        stds.append(float(sel.std()))
            out[f"queue_window_std_mean_{suffix}"] = float(np.mean(stds)) if stds else 0.0
            out["queue_windows"] = len(stds)
    return out


def events_table(ev: Mapping[str, Any] | None) -> tuple[pa.Table, int]:
    """The router's record of the bottleneck's drops and marks (``metrics.trace``) as the
    simulator's ``events`` table, and the number of events past ``metrics.trace_limit``."""
    if not ev:
        return typed_table({}, EVENT_COLUMNS), 0
    cols = {k: ev[k] for k in ("time_s", "flow", "event", "packet")}
    cols["link"] = ["bottleneck"] * len(ev["time_s"])
    return typed_table(cols, EVENT_COLUMNS), int(ev.get("over_limit", 0))


def _result(
    resolved: Mapping[str, Any],
    derived: Mapping[str, Any],
    rout: Mapping[str, Any],
    hl: Mapping[str, Any],
    hr: Mapping[str, Any],
    flows: list[dict[str, Any]],
    cc: str,
    wall: float,
) -> RunResult:
    dur = derived["duration_ns"] * 1e-9
    ms = derived["measure_start_ns"] * 1e-9
    t_meas = dur - ms
    window = scenario._ns(resolved["metrics"].get("window", "10s")) or 0
    q = dict(rout["queue"])
    q["_start"] = ms
    links = [
        _link_summary(rout["dirs"][0], q, t_meas, window * 1e-9, int(derived["packet_size"])),
        _link_summary(rout["dirs"][1], None, t_meas, 0.0, int(derived["packet_size"])),
    ]
    bottleneck = {k: v for k, v in links[0].items() if k != "name"}
    # Per-flow records: receivers' counts and senders' TCP_INFO.
    rows: dict[str, list[Any]] = {
        c: []
        for c in (
            "flow",
            "group",
            "kind",
            "direction",
            "start_s",
            "opened_s",
            "base_rtt_s",
            "bytes_delivered",
            "goodput_bps",
            "data_sent",
            "retransmits",
            "rtt_mean_s",
            "cwnd_final",
        )
    }
    good = []
    udp_sent, udp_got, udp_pk, udp_n = 0.0, 0.0, [0, 0], 0
    base_rtt = derived["base_rtt_ns"] * 1e-9
    for f in flows:
        rx_side, tx_side = (hr, hl) if f["forward"] else (hl, hr)
        rx = rx_side["rx"].get(str(f["id"]), {})
        tx = tx_side["tx"].get(str(f["id"]), {})
        info = tx.get("info", {})
        delivered = int(rx.get("bytes", 0))
        at_start = rx.get("bytes_at_start")
        gp = (delivered - int(at_start or 0)) * 8 / t_meas if rx else 0.0
        if f["udp"] is not None:
            size = int(f["udp"]["packet_size"])
            sent = int(tx.get("sent", 0)) - int(tx.get("sent_at_start") or 0)
            got = int(rx.get("packets", 0)) - int(rx.get("packets_at_start") or 0)
            udp_sent += sent * size * 8 / t_meas
            udp_got += got * size * 8 / t_meas
            udp_pk[0] += sent
            udp_pk[1] += got
            udp_n += 1
            info = {"data_segs_out": tx.get("sent", 0)}
        elif f["forward"]:
            good.append(gp)
        rows["flow"].append(f["id"])
        rows["group"].append(f["group"])
        rows["kind"].append(f.get("kind", "bulk"))
        rows["direction"].append("forward" if f["forward"] else "reverse")
        rows["start_s"].append(f["start_ns"] * 1e-9)
        rows["opened_s"].append(float(tx.get("started_s", math.nan)))
        rows["base_rtt_s"].append(base_rtt)
        rows["bytes_delivered"].append(delivered)
        rows["goodput_bps"].append(gp)
        for col, key in (("data_sent", "data_segs_out"), ("retransmits", "total_retrans")):
            rows[col].append(sender_count_within(tx, info, key))
        rows["rtt_mean_s"].append(float(info.get("rtt_s", math.nan)))
        rows["cwnd_final"].append(float(info.get("cwnd", math.nan)))
    probes = hl.get("probes", [])
    first_start = min((f["start_ns"] * 1e-9 for f in flows), default=dur)
    idle = [r for (t, r) in probes if t + r < first_start]
    meas = [r for (t, r) in probes if t >= ms]
    fwd_rtts = [
        r
        for r, d in zip(rows["rtt_mean_s"], rows["direction"], strict=True)
        if d == "forward" and not math.isnan(r)
    ]
    kernel_tcp = kernel_tcp_window([hl, hr])
    ecn_groups = {
        g: bool(t.get("ecn", resolved["tcp"].get("ecn", False)))
        for g, t in enumerate(resolved.get("traffic", []))
    }
    fallbacks = ecn_fallbacks(
        (hl if f["forward"] else hr)["tx"].get(str(f["id"]), {}).get("info", {})
        for f in flows
        if f["forward"] and f["udp"] is None and ecn_groups.get(int(f["group"]), False)
    )
    summary: dict[str, Any] = {
        "duration_s": dur,
        "measure_start_s": ms,
        "seed": int(resolved.get("seed", 1)),
        "wall_time_s": wall,
        "bottleneck": bottleneck,
        "links": links,
        "flows": {
            "count": len(good),
            "goodput_bps_total": float(sum(good)),
            "jain_fairness": _jain(good),
            "retransmits": int(
                sum(
                    r
                    for r, d in zip(rows["retransmits"], rows["direction"], strict=True)
                    if d == "forward"
                )
            ),
            "rtt_mean_s": float(np.mean(fwd_rtts)) if fwd_rtts else 0.0,
            "ecn_fallbacks": fallbacks,
            **{k: kernel_tcp[m] for k, m in FLOW_COUNTERS.items() if m in kernel_tcp},
        },
        **(
            {
                "udp": {
                    "count": udp_n,
                    "sent_bps": udp_sent,
                    "delivered_bps": udp_got,
                    "loss_rate": max(0.0, 1 - udp_pk[1] / udp_pk[0]) if udp_pk[0] else 0.0,
                }
            }
            if udp_n
            else {}
        ),
        "testbed": {
            "congestion_control": cc,
            "kernel": platform.release(),
            "base_rtt_s": base_rtt,
            "probe_interval_s": PROBE_INTERVAL_NS * 1e-9,
            "probe_rtt_idle_median_s": float(np.median(idle)) if idle else None,
            "probe_rtt_idle_min_s": float(np.min(idle)) if idle else None,
            "probe_rtt_idle_count": len(idle),
            "probe_rtt_mean_s": float(np.mean(meas)) if meas else None,
            **_scheduling(rout),
            "steal_s": rout.get("steal_s", 0.0),
            "router_late_mean_s": rout["late_mean_s"],
            "router_late_p50_s": rout["late_p50_s"],
            "router_late_p99_s": rout["late_p99_s"],
            "router_late_max_s": rout["late_max_s"],
            "router_start_lag_s": rout["start_lag_s"],
            "router_cpu_user_s": rout.get("cpu_user_s", 0.0),
            "router_cpu_sys_s": rout.get("cpu_sys_s", 0.0),
            "not_ipv4": rout["not_ipv4"],
            "write_errors": rout["write_errors"],
            "schedule_errors": rout["schedule_errors"],
            "host_errors": list(hl.get("errors", [])) + list(hr.get("errors", [])),
            "kernel_tcp": kernel_tcp or None,
            # Whole-run counters of each direction (the identity
            # arrivals = departures + drops + queued_at_end holds for them).
            "totals": [
                {**d["total"], "queued_at_end": d["queued_at_end"], "name": d["name"]}
                for d in rout["dirs"]
            ],
        },
    }
    summary["testbed"] = {k: v for k, v in summary["testbed"].items() if v is not None}
    rq = rout["queue"]
    queue = pa.table(
        {
            "link": pa.array(["bottleneck"] * len(rq["time_s"]), pa.string()),
            "time_s": pa.array(rq["time_s"], pa.float64()),
            "queue_pkts": pa.array(rq["queue_pkts"], pa.uint32()),
            "queue_bytes": pa.array(rq["queue_bytes"], pa.uint64()),
            "avg": pa.array([math.nan if v is None else v for v in rq["avg"]], pa.float64()),
            "drops": pa.array(rq["drops"], pa.uint64()),
            "marks": pa.array(rq["marks"], pa.uint64()),
        }
    )
    params = params_table(
        {
            "time_s": rq["param_time_s"],
            "name": rq["param_name"],
            "value": [math.nan if v is None else v for v in rq["param_value"]],
        }
    )
    events, over_limit = events_table(rout.get("events"))
    if over_limit:
        limit = resolved.get("metrics", {}).get("trace_limit")
        summary.setdefault("warnings", []).append(
            f"metrics.trace: bottleneck: {over_limit} drops and marks past trace_limit = "
            f"{limit} were counted, not traced"
        )
    return RunResult(
        scenario=dict(resolved),
        summary=summary,
        queue=queue,
        flows=pa.table(rows),
        params=params,
        events=events,
        created_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
