"""ST-RED's detector on ns-2.35's own RED average: thesis section 5.5.1 (docs/fidelity.md, item 4).

Before its first adjustment ST-RED (fig. 5.3 of ``003_b277268f444f7691.txt``) is ARED(20, 60)
whose adaptive rule keeps no bounds on max_p. ns-2.35 ships that ARED (``Queue/RED`` with
``adaptive_``; ``bottom_`` and ``top_`` set out of reach) but not ST-RED, so this script runs
section 5.5.1 in ns-2 as the cross-check study does (``crosscheck.THESIS_551``: 100 forward and
20 reverse FTP flows, 10 Mbit/s, 540-byte packets, d = 100 -> 900 -> 100 ms), traces RED's
average ``ave_`` at every arrival and runs fig. 5.3's detector over the trace, open loop: the
thresholds stay at 20 / 60 (q_ref 40), with w_q 5e-5, phi_1 1, phi_2 0.25, gamma 0.7 and section
5.5's h_s = 0.03 / sqrt(3). Each detection is reported; the first one is where ns-2's ST-RED
would first raise (large variance) or lower (small variance) its thresholds.

Beside it, aqmlab's ST-RED on the same set-up (closed loop, ns-2's TCP and RED keys,
``ST_RED_NS2``): its adjustments, and the same statistic (sigma / q_ref) from its own sigma^2 while
max_th is 60.

Usage (needs ``ns``, Debian's ``ns2`` package: ``make ns2``)::

    python tests/ns2/st_red_551.py [--seeds 1 2 3] [--queue average|instantaneous]
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import itertools

import crosscheck as cc

Q_REF = 40.0
W_Q = 5e-5
H_S = 0.03 / math.sqrt(3)
GAMMA = 0.7
H_L = GAMMA / math.sqrt(3)
# ns-2's RED as ST-RED's RED (ARED's keys but `bounds`: fig. 5.3 gives max_p no bounds).
ST_RED_NS2 = 'gentle_base = "initial"\nidle_decay = "ns2"\nadapt = "arrival"\n'
PHASES = tuple(range(0, 2001, 200))
DELAYS_MS = (100, 300, 500, 700, 900, 700, 500, 300, 100, 100)


@dataclass
class Detection:
    """Fig. 5.3's detector over one trace: per-phase medians of sigma / q_ref and the detections."""

    sigma_median: list[float] = field(default_factory=list)
    detections: list[tuple[float, str]] = field(default_factory=list)


def ns2_trace(seed: int, queue: str) -> tuple[np.ndarray, np.ndarray]:
    """RED's average (or the queue at arrivals) in ns-2.35, mean-size packets, per arrival."""
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    var = "ave_" if queue == "average" else "curq_"
    tcl = cc.THESIS_551.tcl(seed).replace(
        "Queue/RED set interval_ 0.5\n",
        "Queue/RED set interval_ 0.5\nQueue/RED set bottom_ 1e-12\nQueue/RED set top_ 1e12\n",
    )
    tcl = tcl.replace(
        'set qm [$ns monitor-queue $r1 $r2 ""]\n',
        'set qm [$ns monitor-queue $r1 $r2 ""]\nset redq [[$ns link $r1 $r2] queue]\n'
        f"set tf [open red.tr w]\n$redq trace {var}\n$redq attach $tf\n",
    )
    tag = "a" if queue == "average" else "Q"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "case.tcl").write_text(tcl)
        subprocess.run(
            [ns, "case.tcl"], capture_output=True, check=True, cwd=tmp, timeout=3600, text=True
        )
        times: list[float] = []
        values: list[float] = []
        with open(Path(tmp) / "red.tr") as f:
            for line in f:
                if line[0] == tag:
                    _, t, v = line.split()
                    times.append(float(t))
                    values.append(float(v) / cc.NS2_PAYLOAD)
    return np.array(times), np.array(values)


def detect(times: np.ndarray, q: np.ndarray) -> Detection:
    """Fig. 5.3 (eq. 5.5-5.10) over the samples, thresholds fixed at q_ref = 40."""
    up2, lo2 = (H_L * Q_REF) ** 2, (H_S * Q_REF) ** 2
    g0 = 0.5 * (up2 + lo2)
    s2, g2 = 0.0, g0
    a1, a2 = W_Q, 0.25 * W_Q
    out = Detection()
    sampled: list[list[float]] = [[] for _ in DELAYS_MS]
    next_sample = 0.0
    d_lo, d_hi = (1 - GAMMA) * Q_REF, (1 + GAMMA) * Q_REF
    for t, x in zip(times.tolist(), q.tolist(), strict=True):
        if 0.0 < x < 2 * Q_REF:
            e2 = (x - Q_REF) ** 2
            s2 += a1 * (e2 - s2)
            if d_lo < x < d_hi:
                g2 += a2 * (e2 - g2)
                large = g2 > up2 and s2 > up2
                if large or (g2 < lo2 and s2 < lo2):
                    out.detections.append((t, "large" if large else "small"))
                    g2 = g0
        if t >= next_sample:
            sampled[min(int(t // 200), len(DELAYS_MS) - 1)].append(math.sqrt(s2) / Q_REF)
            next_sample += 1.0
    out.sigma_median = [float(np.median(v)) if v else math.nan for v in sampled]
    return out


def aqmlab_st_red(seed: int, queue: str) -> dict[str, Any]:
    """aqmlab's ST-RED on the study's set-up: max_th's steps, sigma / q_ref per phase."""
    import aqmlab

    toml = cc.THESIS_551.toml(seed, cc.NS2_TCP)
    st_red = (
        '[aqm]\nkind = "st-red"\nmin_th = 20\nmax_th = 60\nw_q = 5e-5\n'
        f'h_s = {H_S!r}\ninterval = "0.5s"\nmode = "byte"\nwait = true\nempty_gate = true\n'
        f'mean_pkt_size = {cc.NS2_PAYLOAD}\n{ST_RED_NS2}variance_queue = "{queue}"\n'
    )
    toml = re.sub(r"\[aqm\]\n.*?(?=\[tcp\])", lambda _: st_red, toml, flags=re.S)
    params = aqmlab.run(toml).params
    name = np.array(params.column("name").to_pylist())
    t = params.column("time_s").to_numpy()
    v = params.column("value").to_numpy()
    th_t, th_v = t[name == "max_th"], v[name == "max_th"]
    steps = [
        (float(th_t[i + 1]), float(th_v[i + 1])) for i in np.nonzero(np.diff(th_v))[0].tolist()
    ]
    first = steps[0][0] if steps else math.inf
    s_t, s_v = t[name == "sigma2"], v[name == "sigma2"]
    medians = []
    for a, b in itertools.pairwise(PHASES):
        m = (s_t >= a) & (s_t < min(b, first))
        medians.append(float(np.median(np.sqrt(s_v[m]) / Q_REF)) if m.any() else math.nan)
    return {"steps": steps, "sigma_median": medians}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--queue", choices=["average", "instantaneous"], default="average")
    args = ap.parse_args(argv)
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
    head = " | ".join(f"{d} ms" for d in DELAYS_MS)
    print(f"q = {args.queue}; h_s = {H_S:.4f}, h_l = {H_L:.4f} (sigma / q_ref)\n")
    print(f"| run | {head} | detections (s) |")
    print("|---|" + "---|" * (len(DELAYS_MS) + 1))
    for seed in args.seeds:
        d = detect(*ns2_trace(seed, args.queue))
        dets = ", ".join(f"{t:.0f} {k}" for t, k in d.detections) or "none"
        cells = " | ".join(f"{x:.3f}" for x in d.sigma_median)
        print(f"| ns-2.35, seed {seed} (open loop) | {cells} | {dets} |")
        a = aqmlab_st_red(seed, args.queue)
        steps = ", ".join(f"{t:.0f} -> max_th {m:.1f}" for t, m in a["steps"]) or "none"
        cells = " | ".join(f"{x:.3f}" for x in a["sigma_median"])
        print(f"| aqmlab, seed {seed} (ST-RED) | {cells} | {steps} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
