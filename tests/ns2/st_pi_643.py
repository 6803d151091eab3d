"""ST-PI's detector on ns-2.35's own PI queue: thesis section 6.4.3 (docs/fidelity.md, item 5).

Before its first adjustment ST-PI (fig. 6.1 of ``003_b277268f444f7691.txt``) is PI. ns-2.35 ships
PI (``Queue/PI``) but not ST-PI, so this script runs the first phase of section 6.4.3 in ns-2 with
``thesis_6.4.4.tcl`` (300 forward and 50 reverse ECN FTP flows, 15 Mbit/s, PI at q_ref 150 with
the section 6.4 gains and ``bytes_``, no HTTP sessions), samples the queue (packets) at PI's 170 Hz
and runs fig. 6.1's detector over the samples, open loop: q_ref stays 150, phi_1 = 1/7 per second,
phi_2 = phi_1 / 4, gamma = 0.7, h_l = gamma / sqrt(3), and section 6.4's h_s = 0.45 / sqrt(3).
Beside it, aqmlab's ST-PI on the same set-up: its q_ref's steps.

The closed loop (``--closed-loop``): the whole of section 6.4.3 (15 Mbit/s, 5 from 200 s, 15 again
from 400 s; 600 s) with fig. 6.1 driving ns-2's PI on both bottleneck queues, as aqmlab's
dumbbell runs ST-PI in both directions. A Tcl procedure of ours samples each queue (packets)
every T_s = 1/170 s, runs eq. 6.11-6.12 and the detection, and on a detection sets the PI
queue's ``qref_``, ``a_`` and ``b_`` (eq. 6.6: q_ref <- k q_ref, a and b over k^2; q_ref kept
within 1 packet and half the buffer, as aqmlab's defaults). ns-2's PI reads those at its next
update, so nothing else is needed. Beside it, aqmlab's ST-PI on the same set-up (the 6.4.3
preset's keys, without its HTTP sessions, which ns-2.35 has no model for): q_ref's steps and the
forward queue's mean and standard deviation per measured phase (100-200, 300-400, 500-600 s).

Usage (needs ``ns``: ``make ns2``)::

    python tests/ns2/st_pi_643.py [--flows 300] [--duration 150]
    python tests/ns2/st_pi_643.py --closed-loop
"""

from __future__ import annotations

import argparse
import io
import math
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import crosscheck as cc

HERE = Path(__file__).parent
Q_REF = 150.0
T_S = 1.0 / 170
PHI_1 = 1.0 / 7
PHI_2 = PHI_1 / 4
GAMMA = 0.7
H_L = GAMMA / math.sqrt(3)
H_S = 0.45 / math.sqrt(3)


@dataclass
class Detection:
    """Fig. 6.1's detector over one run: sigma / q_ref every 10 s, and the detections."""

    sigma: list[tuple[float, float]] = field(default_factory=list)
    detections: list[tuple[float, str, float]] = field(default_factory=list)


def _run_pi(tcl: str, flows: int, reverse: int, output: str) -> str:
    """Run a ``thesis_6.4.4.tcl``-based script with PI (``bytes_``) in ns-2.35; the text of the
    file it writes, ``output``."""
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "case.tcl").write_text(tcl)
        subprocess.run(
            [ns, "case.tcl", "pi", str(flows), str(reverse), "true"],
            capture_output=True,
            check=True,
            cwd=tmp,
            timeout=3600,
            text=True,
        )
        return (Path(tmp) / output).read_text()


def ns2_queue(flows: int, reverse: int, duration: float) -> tuple[np.ndarray, np.ndarray]:
    """PI's queue in ns-2.35 (packets), sampled every 1/170 s."""
    tcl = (HERE / "thesis_6.4.4.tcl").read_text()
    tcl = tcl.replace('$ns at 150 "snap; exit 0"', f'$ns at {duration} "snap; close $qf; exit 0"')
    sampler = cc.queue_sampler("pkts_", T_S, 0.0)
    tcl = tcl.replace('$ns at 0.1 "sample"\n', '$ns at 0.1 "sample"\n' + sampler)
    data = np.loadtxt(io.StringIO(_run_pi(tcl, flows, reverse, "q.tr")))
    return data[:, 0], data[:, 1]


def detect(times: np.ndarray, q: np.ndarray) -> Detection:
    """Fig. 6.1 (eq. 6.11-6.12 with eq. 5.6-5.10) per sample, q_ref fixed at 150."""
    up2, lo2 = (H_L * Q_REF) ** 2, (H_S * Q_REF) ** 2
    g0 = 0.5 * (up2 + lo2)
    s2, g2 = 0.0, g0
    a1, a2 = PHI_1 * T_S, PHI_2 * T_S
    out = Detection()
    next_report = 10.0
    for t, x in zip(times.tolist(), q.tolist(), strict=True):
        if 0.0 < x < 2 * Q_REF:
            e2 = (x - Q_REF) ** 2
            s2 += a1 * (e2 - s2)
            if (1 - GAMMA) * Q_REF < x < (1 + GAMMA) * Q_REF:
                g2 += a2 * (e2 - g2)
                large = g2 > up2 and s2 > up2
                if large or (g2 < lo2 and s2 < lo2):
                    h = H_L if large else H_S
                    k = math.sqrt(s2) / (h * Q_REF)
                    out.detections.append((t, "large" if large else "small", k))
                    g2 = g0
        if t >= next_report:
            out.sigma.append((next_report, math.sqrt(s2) / Q_REF))
            next_report += 10.0
    return out


# Fig. 6.1 beside ns-2's PI (our own Tcl; see the module doc): sp($q,...) holds one queue's
# detector and controller values. @NAME@ fields are filled in by :func:`closed_loop_tcl`.
CLOSED_LOOP_TCL = r"""
set sp_f [open stpi.tr w]
proc sp_g0 {qref} { return [expr {0.5 * (pow(@HS@ * $qref, 2) + pow(@HL@ * $qref, 2))}] }
proc sp_init {q pi mon} {
  global sp
  array set sp [list $q,pi $pi $q,mon $mon $q,s2 0.0 $q,qref @QREF@ $q,a @A@ $q,b @B@]
  set sp($q,g2) [sp_g0 @QREF@]
}
# The sampler is a coroutine whose frame holds links to the monitors' bound variables
# (`instvar`): a read costs a fraction of a `$mon set pkts_` method call.
proc sp_loop {} {
  global ns sp sp_f
  set sched [$ns set scheduler_]
  foreach q {fwd rev} { $sp($q,mon) instvar [list pkts_ pkts_$q] }
  yield
  while 1 {
  set now [$sched now]
  foreach q {fwd rev} {
    set x [set pkts_$q]
    set qref $sp($q,qref)
    if {$q == "fwd"} { puts $sp_f "Q $now $x" }
    if {$x > 0 && $x < 2.0 * $qref} {
      set e2 [expr {($x - $qref) * ($x - $qref)}]
      set s2 [expr {$sp($q,s2) + @A1@ * ($e2 - $sp($q,s2))}]
      set sp($q,s2) $s2
      if {$x > (1.0 - @GAMMA@) * $qref && $x < (1.0 + @GAMMA@) * $qref} {
        set g2 [expr {$sp($q,g2) + @A2@ * ($e2 - $sp($q,g2))}]
        set sp($q,g2) $g2
        set up2 [expr {pow(@HL@ * $qref, 2)}]
        set lo2 [expr {pow(@HS@ * $qref, 2)}]
        set large [expr {$g2 > $up2 && $s2 > $up2}]
        if {$large || ($g2 < $lo2 && $s2 < $lo2)} {
          set k [expr {sqrt($s2) / (($large ? @HL@ : @HS@) * $qref)}]
          set new [expr {min(max(1.0, $k * $qref), max(@QMAX@, $qref))}]
          if {$new != $qref} {
            set k [expr {$new / $qref}]
            set sp($q,a) [expr {$sp($q,a) / ($k * $k)}]
            set sp($q,b) [expr {$sp($q,b) / ($k * $k)}]
            set sp($q,qref) $new
            $sp($q,pi) set qref_ $new
            $sp($q,pi) set a_ $sp($q,a)
            $sp($q,pi) set b_ $sp($q,b)
            puts $sp_f "A $q $now $new [expr {$large ? "large" : "small"}]"
          }
          set sp($q,g2) [sp_g0 $sp($q,qref)]
        }
      }
    }
  }
  $sched at [expr {$now + @TS@}] "sp_sample"
  yield
  }
}
sp_init fwd [[$ns link $r1 $r2] queue] $qm
sp_init rev [[$ns link $r2 $r1] queue] [$ns monitor-queue $r2 $r1 ""]
coroutine sp_sample sp_loop
$ns at @TS@ "sp_sample"
"""
# Section 6.4.3's capacity (Mbit/s) from each time (s).
CAPACITY_643 = ((200.0, 5), (400.0, 15))
PHASES_643 = ((100.0, 200.0), (300.0, 400.0), (500.0, 600.0))


@dataclass
class ClosedLoop:
    """ST-PI over section 6.4.3: the forward queue's q_ref steps (time, q_ref, kind), the reverse
    queue's, and per measured phase the forward queue's mean and standard deviation (packets)."""

    steps: list[tuple[float, float, str]]
    reverse_steps: list[tuple[float, float, str]]
    queue_mean: list[float]
    queue_std: list[float]


def closed_loop_tcl(flows: int = 300, reverse: int = 50, duration: float = 600.0) -> str:
    """Section 6.4.3 in ns-2.35 (``thesis_6.4.4.tcl``, PI with ``bytes_``) with fig. 6.1 driving
    both bottleneck queues' PI."""
    tcl = (HERE / "thesis_6.4.4.tcl").read_text()
    fields = {
        "@HS@": repr(H_S),
        "@HL@": repr(H_L),
        "@GAMMA@": repr(GAMMA),
        "@A1@": repr(PHI_1 * T_S),
        "@A2@": repr(PHI_2 * T_S),
        "@TS@": repr(T_S),
        "@QREF@": repr(Q_REF),
        "@A@": "0.00007288",
        "@B@": "0.00007264",
        "@QMAX@": "500.0",
    }
    driver = CLOSED_LOOP_TCL
    for key, value in fields.items():
        driver = driver.replace(key, value)
    capacity = "".join(
        f'$ns at {t} "[[$ns link $r1 $r2] link] set bandwidth_ {c}Mb; '
        f'[[$ns link $r2 $r1] link] set bandwidth_ {c}Mb"\n'
        for t, c in CAPACITY_643
    )
    for old, new in (
        ('$ns at 0.1 "sample"\n', '$ns at 0.1 "sample"\n' + driver + capacity),
        ('$ns at 150 "snap; exit 0"', f'$ns at {duration} "flush $sp_f; exit 0"'),
    ):
        if old not in tcl:
            raise RuntimeError(f"thesis_6.4.4.tcl has no {old.strip()!r}")
        tcl = tcl.replace(old, new)
    return tcl


def ns2_closed_loop(flows: int = 300, reverse: int = 50, duration: float = 600.0) -> ClosedLoop:
    """ST-PI inside ns-2.35 (the Tcl driver) over section 6.4.3."""
    tcl = closed_loop_tcl(flows, reverse, duration)
    lines = _run_pi(tcl, flows, reverse, "stpi.tr").splitlines()
    steps: dict[str, list[tuple[float, float, str]]] = {"fwd": [], "rev": []}
    t_q: list[tuple[float, float]] = []
    for line in lines:
        f = line.split()
        if f[0] == "Q":
            t_q.append((float(f[1]), float(f[2])))
        elif f[0] == "A":
            steps[f[1]].append((float(f[2]), float(f[3]), f[4]))
    a = np.array(t_q)
    means, stds = [], []
    for lo, hi in PHASES_643:
        m = (a[:, 0] >= lo) & (a[:, 0] < hi)
        means.append(float(a[m, 1].mean()))
        stds.append(float(a[m, 1].std()))
    return ClosedLoop(steps["fwd"], steps["rev"], means, stds)


def aqmlab_closed_loop(flows: int = 300, reverse: int = 50) -> ClosedLoop:
    """aqmlab's ST-PI over section 6.4.3 (the preset's keys, without the HTTP sessions); the
    reverse queue's steps from the mirrored run, as params.parquet holds the forward queue's."""
    import tomllib

    import aqmlab

    root = HERE.parents[1] / "python/aqmlab/experiments/presets"
    preset = tomllib.loads((root / "thesis-6.4.3.toml").read_text())
    st_pi = next(s for s in preset["scheme"] if s["name"] == "ST-PI")

    def run(fwd: int, rev: int) -> Any:
        traffic = (
            f'traffic=[{{kind="bulk",flows={fwd},start={{uniform=["0s","10s"]}}}},'
            f'{{kind="bulk",flows={rev},direction="reverse",start={{uniform=["0s","10s"]}}}}]'
        )
        overrides = [*preset["experiment"]["set"], *st_pi["set"], traffic]
        return aqmlab.run(root / "scenarios/thesis-6.4.3.toml", overrides=overrides)

    def steps_of(r: Any) -> list[tuple[float, float, str]]:
        name = np.array(r.params.column("name").to_pylist())
        t = r.params.column("time_s").to_numpy()
        v = r.params.column("value").to_numpy()
        qt, qv = t[name == "q_ref"], v[name == "q_ref"]
        return [
            (float(qt[i + 1]), float(qv[i + 1]), "large" if qv[i + 1] > qv[i] else "small")
            for i in np.nonzero(np.diff(qv))[0].tolist()
        ]

    r = run(flows, reverse)
    phases = r.summary["phases"]
    return ClosedLoop(
        steps_of(r),
        steps_of(run(reverse, flows)),
        [ph["bottleneck"]["queue_mean_pkts"] for ph in phases],
        [ph["bottleneck"]["queue_std_pkts"] for ph in phases],
    )


def closed_loop() -> int:
    """Section 6.4.3, ST-PI closed loop in ns-2.35 and aqmlab, beside Table 6-3."""
    thesis = ("49-75 / 16-20", "50-57 / 14-17", "46-56 / 15-17")
    print("forward queue, mean / standard deviation (packets), and q_ref's steps\n")
    print(
        "| run | 100-200 s (15 Mbps) | 300-400 s (5 Mbps) | 500-600 s (15 Mbps) "
        "| forward q_ref steps | reverse |"
    )
    print("|---|---|---|---|---|---|")
    print(f"| thesis ST-PI (Table 6-3, with HTTP) | {' | '.join(thesis)} | | |")
    for run, c in (("ns-2.35", ns2_closed_loop()), ("aqmlab", aqmlab_closed_loop())):
        cells = " | ".join(
            f"{m:.1f} / {s:.1f}" for m, s in zip(c.queue_mean, c.queue_std, strict=True)
        )
        fwd = ", ".join(f"{t:.0f} -> {v:.1f} ({k})" for t, v, k in c.steps) or "none"
        rev = ", ".join(f"{t:.0f} -> {v:.1f} ({k})" for t, v, k in c.reverse_steps) or "none"
        print(f"| {run} | {cells} | {fwd} | {rev} |", flush=True)
    return 0


def aqmlab_st_pi(
    flows: int, reverse: int, duration: float, scheme: str = "ST-PI"
) -> dict[str, Any]:
    """aqmlab's ST-PI (or another scheme of the preset, e.g. ``"PI"``) on the same set-up (the
    6.4.3 preset's scenario without its HTTP sessions, ns-2's TCP keys): q_ref's steps and the
    queue's statistics."""
    import tomllib

    import aqmlab

    root = HERE.parents[1] / "python/aqmlab/experiments/presets"
    preset = tomllib.loads((root / "thesis-6.4.3.toml").read_text())
    st_pi = next(s for s in preset["scheme"] if s["name"] == scheme)
    traffic = (
        f'traffic=[{{kind="bulk",flows={flows},start={{uniform=["0s","10s"]}}}},'
        f'{{kind="bulk",flows={reverse},direction="reverse",start={{uniform=["0s","10s"]}}}}]'
    )
    r = aqmlab.run(
        root / "scenarios/thesis-6.4.3.toml",
        overrides=[
            *preset["experiment"]["set"],
            *st_pi["set"],
            f"duration={duration}s",
            "schedule=[]",
            "metrics.phases=[]",
            "metrics.start=50s",
            traffic,
        ],
    )
    name = np.array(r.params.column("name").to_pylist())
    t = r.params.column("time_s").to_numpy()
    v = r.params.column("value").to_numpy()
    qt, qv = t[name == "q_ref"], v[name == "q_ref"]
    steps = [(float(qt[i + 1]), float(qv[i + 1])) for i in np.nonzero(np.diff(qv))[0].tolist()]
    b = r.summary["bottleneck"]
    return {"steps": steps, "queue": b["queue_mean_pkts"], "std": b["queue_std_pkts"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=300)
    ap.add_argument("--reverse", type=int, default=50)
    ap.add_argument("--duration", type=float, default=150.0)
    ap.add_argument(
        "--closed-loop", action="store_true", help="section 6.4.3 with ST-PI inside ns-2 and aqmlab"
    )
    args = ap.parse_args(argv)
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
    if args.closed_loop:
        return closed_loop()
    t, q = ns2_queue(args.flows, args.reverse, args.duration)
    m = t >= 50
    print(f"h_s = {H_S:.3f}, h_l = {H_L:.3f}; q_ref 150")
    print(f"ns-2.35 PI: queue {q[m].mean():.1f} packets, standard deviation {q[m].std():.1f}")
    d = detect(t, q)
    print("  sigma / q_ref every 10 s: " + " ".join(f"{s:.2f}" for _, s in d.sigma))
    dets = ", ".join(f"{t:.1f} s {k} (k {x:.2f})" for t, k, x in d.detections) or "none"
    print(f"  detections (open loop): {dets}")
    a = aqmlab_st_pi(args.flows, args.reverse, args.duration)
    steps = ", ".join(f"{t:.1f} s -> {v:.1f}" for t, v in a["steps"]) or "none"
    print(f"aqmlab ST-PI: queue {a['queue']:.1f}, standard deviation {a['std']:.1f}")
    print(f"  q_ref steps: {steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
