"""aqmlab beside ns-2.35 on the same dumbbell: one description, two simulators.

The seeds' numbers come from ns-2, so where aqmlab and a seed disagree the first question is
whether ns-2 itself gives the seed's number for the set-up as the paper describes it. This
script writes the set-up once, as a :class:`Case`, and renders it both as an aqmlab scenario
and as an ns-2 Tcl script (our own, written from ns-2's documented Tcl API), runs both and
prints the figures side by side: bottleneck utilisation and packet drops, and the forward TCP
senders' timeouts and retransmitted packets, over the measurement window.

Usage (needs ``ns``, Debian's ``ns2`` package: ``make ns2``)::

    python tests/ns2/crosscheck.py [--seeds 1 2 3] [--case NAME ...]

The ns-2 side: NewReno senders (``Agent/TCP/Newreno``) with ``TCPSink`` receivers (an ACK per
segment), FTP sources, ns-2.35's defaults otherwise (10 ms TCP clock, 200 ms minimum RTO,
limited transmit, the Impatient NewReno timer, RED in byte mode with ``wait_`` and the
``qlen > 1`` gate). Forward flows start uniformly in [0, 10] s, reverse flows likewise.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

# ns-2's TCP as the thesis' presets configure aqmlab's (`tcp.profile = "ns2-2009"`; docs/tcp.md,
# "Defaults and ns-2").
NS2_TCP = [
    'clock_tick="10ms"',
    'loss_ssthresh="ns2"',
    'recovery_exit="ssthresh"',
    'limited_transmit_sends="next"',
    "ect_retransmits=true",
    "cwr_on_retransmit=true",
    'timeout_in_recovery="cut"',
]

# ns-2's adaptive RED (red.cc): the gentle line fixed from the initial max_p (1 / linterm_),
# max_p's range bottom_ = min(0.01, 80 000 / bandwidth) to top_ = 0.5 without clamping, the idle
# period rounded down plus the arrival's own sample, and updateMaxP run at arrivals.
NS2_ARED = 'gentle_base = "initial"\nbounds = "ns2"\nadapt = "arrival"\n'
# The same RED with a fixed max_p (ns-2's `adaptive_ 0`): the keys ARED's rule does not need.
NS2_RED = 'gentle_base = "initial"\n'

# ns-2's one-way TCP adds its 40-byte header to `packetSize_`: `packetSize_ 500` puts 540-byte
# packets on the wire (its queue traces show 540), while RED's `mean_pktsize_ 500` stays 500.
NS2_PAYLOAD = 500
WIRE_BYTES = NS2_PAYLOAD + 40


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    aqm: str  # "droptail", "ared" or "red" (RED with a fixed max_p)
    bottleneck_delay_ms: int
    flows: int = 100
    reverse: int = 20
    buffer: int = 500
    duration_s: float = 200.0
    start_s: float = 50.0
    min_th: int = 20
    max_th: int = 60
    # (time s, bottleneck one-way delay ms) changes, both directions; and the phase bounds
    # (s) at which per-phase figures are taken.
    schedule: tuple[tuple[float, int], ...] = ()
    phases: tuple[float, ...] = ()
    rate_mbps: int = 10
    w_q: float = 5e-5
    # RED's initial max_p (ns-2: 1 / linterm_); None leaves both simulators' defaults (0.1).
    max_p: float | None = None
    # ns-2's idle rule as its clock rounds in this set-up: an idle period of exactly k mean-size
    # packet times counts k packets ("ns2") or k - 1 ("ns2-truncated"), traced per case
    # (aqm/red.rs, `IdleDecay::Ns2Truncated`; docs/fidelity.md, item 20).
    idle_decay: str = "ns2"

    def toml(self, seed: int, tcp: list[str]) -> str:
        max_p = "" if self.max_p is None else f"max_p = {self.max_p!r}\n"
        if self.aqm in ("ared", "red"):
            adaptive = self.aqm == "ared"
            w_q = "5e-5" if self.w_q == 5e-5 else repr(self.w_q)
            interval = 'interval = "0.5s"\n' if adaptive else ""
            aqm = (
                f'kind = "{self.aqm}"\nmin_th = {self.min_th}\nmax_th = {self.max_th}\n'
                f'w_q = {w_q}\n{max_p}{interval}mode = "byte"\nwait = true\nempty_gate = true\n'
                f"mean_pkt_size = {NS2_PAYLOAD}\n{NS2_ARED if adaptive else NS2_RED}"
                f'idle_decay = "{self.idle_decay}"\n'
            )
            # ns-2's RED in bytes counts its limit in mean-size packets.
            buffer = f'"{self.buffer * NS2_PAYLOAD}B"'
        else:
            aqm = 'kind = "droptail"\n'
            buffer = str(self.buffer)
        tcp_lines = "".join(t + "\n" for t in tcp)
        sched = "".join(
            f'  {{ at = "{t}s", action = "link", link = "bottleneck", delay = "{d}ms" }},\n'
            for t, d in self.schedule
        )
        bounds = [self.start_s, *self.phases, self.duration_s]
        phases = ", ".join(f"[{a}, {b}]" for a, b in itertools.pairwise(bounds))
        return f"""duration = "{self.duration_s}s"
seed = {seed}
schedule = [
{sched}]
[topology]
kind = "dumbbell"
bottleneck_rate = "{self.rate_mbps}Mbps"
bottleneck_delay = "{self.bottleneck_delay_ms}ms"
access_rate = "100Mbps"
access_delay = "15ms"
buffer = {buffer}
[aqm]
{aqm}[tcp]
variant = "newreno"
packet_size = {WIRE_BYTES}
{tcp_lines}[[traffic]]
kind = "bulk"
flows = {self.flows}
start = {{ uniform = ["0s", "10s"] }}
[[traffic]]
kind = "bulk"
flows = {self.reverse}
direction = "reverse"
start = {{ uniform = ["0s", "10s"] }}
[metrics]
sample_interval = "100ms"
start = "{self.start_s}s"
phases = [{phases}]
"""

    def tcl(self, seed: int) -> str:
        queue = "DropTail" if self.aqm == "droptail" else "RED"
        red = f"Queue/RED set q_weight_ {self.w_q:.10f}".rstrip("0") + "\n"
        red += (
            "Queue/RED set adaptive_ 1\nQueue/RED set interval_ 0.5\n" if self.aqm == "ared" else ""
        )
        if self.max_p is not None:
            red += f"Queue/RED set linterm_ {1 / self.max_p!r}\n"
        changes = "".join(
            f'$ns at {t} "[[$ns link $r1 $r2] link] set delay_ {d}ms; '
            f'[[$ns link $r2 $r1] link] set delay_ {d}ms"\n'
            for t, d in self.schedule
        )
        snaps = "".join(f'$ns at {t} "snap"\n' for t in self.phases)
        return f"""set ns [new Simulator]
global defaultRNG
$defaultRNG seed {seed}
Agent/TCP set packetSize_ {NS2_PAYLOAD}
Agent/TCP set window_ 100000
Queue/RED set bytes_ true
Queue/RED set queue_in_bytes_ true
Queue/RED set mean_pktsize_ {NS2_PAYLOAD}
Queue/RED set thresh_ {self.min_th}
Queue/RED set maxthresh_ {self.max_th}
{red}set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 {self.rate_mbps}Mb {self.bottleneck_delay_ms}ms {queue}
$ns queue-limit $r1 $r2 {self.buffer}
$ns queue-limit $r2 $r1 {self.buffer}
set qm [$ns monitor-queue $r1 $r2 ""]
set rng [new RNG]
$rng seed {seed}
set N {self.flows}
for {{set i 0}} {{$i < [expr {self.flows} + {self.reverse}]}} {{incr i}} {{
  set s($i) [$ns node]
  set d($i) [$ns node]
  $ns duplex-link $s($i) $r1 100Mb 15ms DropTail
  $ns duplex-link $d($i) $r2 100Mb 15ms DropTail
  foreach {{a b}} [list $s($i) $r1 $r1 $s($i) $d($i) $r2 $r2 $d($i)] {{
    $ns queue-limit $a $b 100000
  }}
  set tcp($i) [new Agent/TCP/Newreno]
  set sink($i) [new Agent/TCPSink]
  if {{$i < $N}} {{
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $d($i) $sink($i)
  }} else {{
    $ns attach-agent $d($i) $tcp($i)
    $ns attach-agent $s($i) $sink($i)
  }}
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]
  $ftp($i) attach-agent $tcp($i)
  $ns at [$rng uniform 0 10] "$ftp($i) start"
}}
proc snap {{}} {{
  global qm tcp N
  set to 0
  set rx 0
  for {{set i 0}} {{$i < $N}} {{incr i}} {{
    set to [expr $to + [$tcp($i) set nrexmit_]]
    set rx [expr $rx + [$tcp($i) set nrexmitpack_]]
  }}
  puts "[$qm set bdepartures_] [$qm set pdrops_] $to $rx"
}}
$ns at {self.start_s} "snap"
{changes}{snaps}$ns at {self.duration_s} "snap; exit 0"
$ns run
"""


CASES = [
    Case("droptail-100ms", "droptail", 20),
    Case("droptail-900ms", "droptail", 420),
    Case("ared-100ms", "ared", 20),
    Case("ared-900ms", "ared", 420),
    # Thesis section 5.5.2's top capacity with the same 100 flows. ns-2.35's clock truncates
    # every idle period of exactly one packet time here (3286 of 3286 in 100-101 s).
    Case("ared-100ms-50mbps", "ared", 20, rate_mbps=50, idle_decay="ns2-truncated"),
]

FIGURES = ("utilisation", "drops", "timeouts", "retransmits")


# Thesis section 5.5.1 (Table 5-1) as aqmlab's preset reads it, with ARED(20, 60): d steps
# 100 -> 900 -> 100 ms every 200 s (the bottleneck's one-way delay 20 ... 420 ms).
THESIS_551 = Case(
    "thesis-5.5.1-ared",
    "ared",
    20,
    duration_s=2000.0,
    start_s=0.0,
    schedule=tuple(
        zip(range(200, 1800, 200), (120, 220, 320, 420, 320, 220, 120, 20), strict=True)
    ),
    phases=tuple(float(t) for t in range(200, 2000, 200)),
)

STUDIES = {"thesis-5.5.1": THESIS_551}

# Thesis section 4.5.1 (experiment 1) without its HTTP sessions, which ns-2.35 has no model
# for: 50 FTP flows and 20 reverse ones, 10 Mbit/s, d = 120 ms (bottleneck 30 ms one way),
# min_th 50, max_th 150, w_q 1e-4, max_p 0.05: ARED ("a stable queue with small fluctuations
# around the equilibrium point of 100 packets") and AP-RED's initial set as plain RED.
THESIS_451 = {
    aqm: Case(
        f"thesis-4.5.1-{aqm}",
        aqm,
        30,
        flows=50,
        duration_s=100.0,
        start_s=20.0,
        min_th=50,
        max_th=150,
        w_q=1e-4,
        max_p=0.05,
    )
    for aqm in ("ared", "red")
}


def run_ns2(case: Case, seed: int) -> dict[str, Any]:
    """ns-2's figures over the measurement window, and its utilisation per phase."""
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "case.tcl"
        script.write_text(case.tcl(seed))
        out = subprocess.run(
            [ns, str(script)], capture_output=True, text=True, check=True, cwd=tmp, timeout=3600
        ).stdout.split()
    snaps = [[float(x) for x in out[i : i + 4]] for i in range(0, len(out), 4)]
    # ns-2's queue monitor counts bytes in a 32-bit int: undo its wrap-around.
    deps = [snaps[0][0]]
    for row in snaps[1:]:
        d = row[0]
        while d < deps[-1]:
            d += 2.0**32
        deps.append(d)
    bounds = [case.start_s, *case.phases, case.duration_s]
    per_phase = [
        (deps[i + 1] - deps[i]) * 8 / (bounds[i + 1] - bounds[i]) / (case.rate_mbps * 1e6)
        for i in range(len(bounds) - 1)
    ]
    a, b = snaps[0], snaps[-1]
    window = case.duration_s - case.start_s
    return {
        "utilisation": (deps[-1] - deps[0]) * 8 / window / (case.rate_mbps * 1e6),
        "drops": b[1] - a[1],
        "timeouts": b[2] - a[2],
        "retransmits": b[3] - a[3],
        "phases": per_phase,
    }


def run_aqmlab(case: Case, seed: int, tcp: list[str]) -> dict[str, float]:
    import aqmlab

    s: dict[str, Any] = aqmlab.run(case.toml(seed, tcp)).summary
    b, f = s["bottleneck"], s["flows"]
    return {
        "utilisation": b["utilization"],
        "drops": b["drops_early"] + b["drops_forced"] + b["drops_overflow"],
        "timeouts": f["timeouts"],
        "retransmits": f["retransmits"],
        "phases": [p["bottleneck"]["utilization"] for p in s["phases"]],
    }


def queue_sampler(field: str, interval: float, start: float) -> str:
    """Tcl that writes the time and the queue monitor ``$qm``'s ``field`` (``size_``, ``pkts_``)
    to ``q.tr`` every ``interval`` seconds from ``start``. The sampler is a coroutine whose frame
    holds a link to the monitor's bound variable (``instvar``): reading it costs a fraction of a
    ``$qm set`` method call, and ns-2 reads the same value either way."""
    return (
        "set qf [open q.tr w]\n"
        "proc qloop {} {\n"
        "  global ns qm qf\n"
        "  set sched [$ns set scheduler_]\n"
        f"  $qm instvar {field}\n"
        "  yield\n"
        "  while 1 {\n"
        "    set now [$sched now]\n"
        f'    puts $qf "$now ${field}"\n'
        f'    $sched at [expr {{$now + {interval!r}}}] "qsample"\n'
        "    yield\n"
        "  }\n"
        "}\n"
        "coroutine qsample qloop\n"
        f'$ns at {start} "qsample"\n'
    )


def queue_ns2(case: Case, seed: int) -> np.ndarray:
    """The forward bottleneck queue in ns-2.35, mean-size packets, every 10 ms from start_s."""
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    monitor = 'set qm [$ns monitor-queue $r1 $r2 ""]\n'
    tcl = case.tcl(seed).replace(monitor, monitor + queue_sampler("size_", 0.01, case.start_s))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "case.tcl").write_text(tcl)
        subprocess.run([ns, "case.tcl"], capture_output=True, check=True, cwd=tmp, timeout=3600)
        q = np.loadtxt(Path(tmp) / "q.tr", ndmin=2)
    return np.asarray(q[q[:, 0] < case.duration_s, 1] / NS2_PAYLOAD)


def queue_aqmlab(case: Case, seed: int, tcp: list[str]) -> np.ndarray:
    """The same in aqmlab: the bottleneck's queue in bytes every 10 ms, in mean-size packets."""
    import aqmlab

    toml = case.toml(seed, tcp).replace('sample_interval = "100ms"', 'sample_interval = "10ms"')
    table = aqmlab.run(toml).queue
    link = np.array(table.column("link").to_pylist())
    t = table.column("time_s").to_numpy()
    q = table.column("queue_bytes").to_numpy()
    return np.asarray(q[(link == "bottleneck") & (t >= case.start_s)] / NS2_PAYLOAD)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--case", nargs="+", choices=[c.name for c in CASES])
    ap.add_argument("--study", choices=sorted(STUDIES), help="a longer set-up, per phase")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    cases = [c for c in CASES if not args.case or c.name in args.case]
    if args.study:
        cases = [STUDIES[args.study]]
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
    rows = []
    for case in cases:
        for label, fn in (
            ("aqmlab, defaults", lambda c, s: run_aqmlab(c, s, [])),
            ("aqmlab, ns-2's TCP", lambda c, s: run_aqmlab(c, s, NS2_TCP)),
            ("ns-2.35", run_ns2),
        ):
            per_seed = [fn(case, seed) for seed in args.seeds]
            rows.append((case.name, label, per_seed))
    if args.json:
        print(json.dumps([{"case": c, "run": lab, "seeds": v} for c, lab, v in rows], indent=1))
        return 0
    print("| case | run | " + " | ".join(FIGURES) + " |")
    print("|---|---|" + "---|" * len(FIGURES))
    for name, label, per_seed in rows:
        cells = []
        for k in FIGURES:
            vals = [r[k] for r in per_seed]
            fmt = "{:.3f}" if k == "utilisation" else "{:.0f}"
            cells.append(" / ".join(fmt.format(v) for v in vals))
        print(f"| {name} | {label} | " + " | ".join(cells) + " |")
    if args.study:
        print("\nutilisation per phase (first seed):")
        for _name, label, per_seed in rows:
            print(f"{label:>20}: " + " ".join(f"{u:.3f}" for u in per_seed[0]["phases"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
