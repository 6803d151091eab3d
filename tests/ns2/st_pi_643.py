"""ST-PI's detector on ns-2.35's own PI queue: thesis section 6.4.3 (docs/fidelity.md, item 5).

Before its first adjustment ST-PI (fig. 6.1 of ``003_b277268f444f7691.txt``) is PI. ns-2.35 ships
PI (``Queue/PI``) but not ST-PI, so this script runs the first phase of section 6.4.3 in ns-2 with
``thesis_6.4.4.tcl`` (300 forward and 50 reverse ECN FTP flows, 15 Mbit/s, PI at q_ref 150 with
the section 6.4 gains and ``bytes_``, no HTTP sessions), samples the queue (packets) at PI's 170 Hz
and runs fig. 6.1's detector over the samples, open loop: q_ref stays 150, phi_1 = 1/7 per second,
phi_2 = phi_1 / 4, gamma = 0.7, h_l = gamma / sqrt(3), and section 6.4's h_s = 0.45 / sqrt(3).
Beside it, aqmlab's ST-PI on the same set-up: its q_ref's steps.

Usage (needs ``ns``: ``make ns2``)::

    python tests/ns2/st_pi_643.py [--flows 300] [--duration 150]
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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


def ns2_queue(flows: int, reverse: int, duration: float) -> tuple[np.ndarray, np.ndarray]:
    """PI's queue in ns-2.35 (packets), sampled every 1/170 s."""
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    tcl = (HERE / "thesis_6.4.4.tcl").read_text()
    tcl = tcl.replace('$ns at 150 "snap; exit 0"', f'$ns at {duration} "snap; close $qf; exit 0"')
    sampler = (
        "set qf [open queue.tr w]\n"
        'proc qsample {} { global ns qm qf; puts $qf "[$ns now] [$qm set pkts_]"; '
        f'$ns at [expr [$ns now] + {T_S!r}] "qsample" }}\n'
        '$ns at 0.0 "qsample"\n'
    )
    tcl = tcl.replace('$ns at 0.1 "sample"\n', '$ns at 0.1 "sample"\n' + sampler)
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
        data = np.loadtxt(Path(tmp) / "queue.tr")
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
    args = ap.parse_args(argv)
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
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
