#!/usr/bin/env python3
"""Where a full queue's drops fall: the kernel's flows on the testbed beside the simulator's.

For one cell of ``tools/testbed_matrix.py`` (the dumbbell of ``scenarios/testbed/dumbbell-20.toml``
with its AQM, flows and rate), each seed runs on the testbed with the kernel's congestion control
and in the simulator's linux profile, both with every flow's TCP state (``metrics.flow_series``)
and every drop and mark of the bottleneck (``metrics.trace``). Printed per side, over the seeds:

- Jain's index of the goodput (the measurement interval) and of the windows at 3, 8 and 13 s;
- Jain's index of the flows' sending rates (window over smoothed RTT, averaged over each of the
  stretches 2-5, 5-8, ... s of the run's duration) and the largest flow's rate over the mean
  rate in each;
- the congestion events of ``--window`` (data drops no more than 0.4 s apart): how many, their
  drops and the flows they hit;
- for the flows grouped by their window over the mean window just before an event, the share of
  the event's drops they took over their share of the window (1: drops in proportion to the
  window), and how often such a flow was hit;
- the SYNs the queue dropped over the whole run.

Usage::

    tools/drop_shares.py --seeds 1-12 (--keep DIR | --from DIR) [--cc cubic] [--aqm droptail]
        [--flows 20] [--rate 50] [--window 3 13] [--sim-set KEY=VALUE ...]
        [--router-priority nice|fifo]

``--keep DIR`` keeps each seed's testbed folder as ``DIR/sN`` (needs root); ``--from DIR`` reads
them from an earlier ``--keep`` instead of running the testbed (no root). docs/tcp.md, "The
DropTail cell at 20 flows and 50 Mbit/s", has what it found there.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import testbed_matrix as tm

#: Window over the mean window: the groups' lower edges.
CLASSES = (0.0, 0.5, 0.8, 1.25, 2.0)
#: Data drops further apart than this belong to two congestion events, s.
EVENT_GAP_S = 0.4
#: The stretches over which each flow's sending rate is averaged, s.
STRETCHES = tuple((float(a), float(a + 3)) for a in range(2, 30, 3))


@dataclass
class Side:
    """What one side's runs add up to."""

    jain: list[float] = field(default_factory=list)
    window_jain: dict[float, list[float]] = field(default_factory=dict)
    rate_jain: dict[tuple[float, float], list[float]] = field(default_factory=dict)
    rate_top: dict[tuple[float, float], list[float]] = field(default_factory=dict)
    events: int = 0
    drops: int = 0
    hit: int = 0
    syn_drops: int = 0
    drop_share: np.ndarray = field(default_factory=lambda: np.zeros(len(CLASSES)))
    window_share: np.ndarray = field(default_factory=lambda: np.zeros(len(CLASSES)))
    flows_hit: np.ndarray = field(default_factory=lambda: np.zeros(len(CLASSES)))
    flows_seen: np.ndarray = field(default_factory=lambda: np.zeros(len(CLASSES)))


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if (x**2).sum() > 0 else float("nan")


def windows_at(fs: dict[str, Any], flows: int, t: float) -> np.ndarray:
    """Each flow's last sampled window at or before ``t`` (0 before its first sample)."""
    time, flow, cwnd = (np.asarray(fs[k]) for k in ("time_s", "flow", "cwnd"))
    out = np.zeros(flows)
    for f in range(flows):
        m = (flow == f) & (time <= t)
        if m.any():
            out[f] = cwnd[m][-1]
    return out


def rates_over(fs: dict[str, Any], flows: int, a: float, b: float) -> np.ndarray | None:
    """Each flow's mean window over smoothed RTT from ``a`` to ``b``, segments/s (0 for a flow
    without a sample there), or None where no flow has one."""
    time, flow, cwnd, srtt = (np.asarray(fs[k]) for k in ("time_s", "flow", "cwnd", "srtt_s"))
    m = (time >= a) & (time < b) & (srtt > 0)
    if not m.any():
        return None
    out = np.zeros(flows)
    for f in range(flows):
        mf = m & (flow == f)
        if mf.any():
            out[f] = float(np.mean(cwnd[mf] / srtt[mf]))
    return out


def add_run(
    side: Side,
    summary: dict[str, Any],
    fs: dict[str, Any],
    ev: dict[str, Any],
    flows: int,
    window: tuple[float, float],
) -> None:
    side.jain.append(float(summary["flows"]["jain_fairness"]))
    for t in (3.0, 8.0, 13.0):
        side.window_jain.setdefault(t, []).append(jain(windows_at(fs, flows, t)))
    for st in STRETCHES:
        if st[1] > summary.get("duration_s", float("inf")):
            break
        r = rates_over(fs, flows, *st)
        if r is not None:
            side.rate_jain.setdefault(st, []).append(jain(r))
            side.rate_top.setdefault(st, []).append(float(r.max() / r.mean()))
    side.syn_drops += sum(
        p == "syn" and e.startswith("drop") for p, e in zip(ev["packet"], ev["event"], strict=True)
    )
    packet = np.asarray(ev["packet"], dtype=object)
    time, flow = np.asarray(ev["time_s"]), np.asarray(ev["flow"])
    m = (packet == "data") & (time >= window[0]) & (time <= window[1])
    time, flow = time[m], flow[m]
    if not len(time):
        return
    for idx in np.split(np.arange(len(time)), np.where(np.diff(time) > EVENT_GAP_S)[0] + 1):
        w = windows_at(fs, flows, time[idx[0]] - 0.01)
        if w.sum() == 0:
            continue
        drops = np.bincount(flow[idx], minlength=flows)[:flows]
        side.events += 1
        side.drops += int(drops.sum())
        side.hit += int((drops > 0).sum())
        cls = np.searchsorted(CLASSES, w / w.mean(), side="right") - 1
        for f in range(flows):
            side.drop_share[cls[f]] += drops[f] / drops.sum()
            side.window_share[cls[f]] += w[f] / w.sum()
            side.flows_hit[cls[f]] += drops[f] > 0
            side.flows_seen[cls[f]] += 1


def report(name: str, side: Side) -> None:
    n = len(side.jain)
    wj = ", ".join(f"{t:g} s {np.mean(v):.3f}" for t, v in side.window_jain.items())
    print(f"{name}: {n} runs; Jain's index {np.mean(side.jain):.3f}; of the windows at {wj}")
    rj = ", ".join(
        f"{a:g}-{b:g} s {np.mean(v):.3f} ({np.mean(side.rate_top[(a, b)]):.2f})"
        for (a, b), v in side.rate_jain.items()
        if len(v) == n
    )
    print(f"  of the rates (the largest over the mean) over {rj}")
    if side.events:
        print(
            f"  congestion events {side.events / n:.1f} a run, {side.drops / side.events:.1f} drops"
            f" and {side.hit / side.events:.1f} flows hit each; SYNs dropped {side.syn_drops}"
        )
    edges = [*CLASSES[1:], float("inf")]
    for k, (lo, hi) in enumerate(zip(CLASSES, edges, strict=True)):
        if side.flows_seen[k] == 0:
            continue
        share = side.drop_share[k] / side.window_share[k] if side.window_share[k] else float("nan")
        print(
            f"  window {lo:g}-{hi:g} x the mean: drops / window share {share:.2f}, hit in "
            f"{side.flows_hit[k] / side.flows_seen[k]:.2f} of {int(side.flows_seen[k])} "
            "flow-events"
        )


def seeds_of(text: str) -> list[int]:
    """``1-12`` or ``1,3,5``."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=seeds_of, required=True, help="e.g. 1-12 or 1,3,5")
    ap.add_argument("--cc", default="cubic", choices=tm.CCS)
    ap.add_argument("--aqm", default="droptail", choices=tm.AQMS)
    ap.add_argument("--flows", type=int, default=20)
    ap.add_argument("--rate", type=float, default=50.0, help="Mbit/s")
    ap.add_argument("--window", type=float, nargs=2, default=(3.0, 13.0), metavar=("FROM", "TO"))
    tm.add_sim_set(ap)
    tm.add_scheduling(ap)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--keep", type=Path, help="keep the testbed's folders here (DIR/sN)")
    src.add_argument("--from", dest="src", type=Path, help="read the testbed's folders from here")
    a = ap.parse_args(argv)

    import pyarrow.parquet as pq

    import aqmlab
    from aqmlab import scenario as sc
    from aqmlab.testbed import TestbedError, run_testbed, simulator_counterpart

    window = (a.window[0], a.window[1])
    kernel, sim = Side(), Side()
    for seed in a.seeds:
        doc = tm.scenario(a.aqm, a.flows, a.rate, seed)
        doc["metrics"]["flow_series"] = list(range(a.flows))
        doc["metrics"]["trace"] = True
        if a.src is not None:
            folder = a.src / f"s{seed}"
        else:
            folder = a.keep / f"s{seed}"
            try:
                run_testbed(doc, folder, cc=a.cc, router_priority=a.router_priority, cpus=a.cpus)
            except TestbedError as e:
                print(f"error: {e}", file=sys.stderr)
                return 2
        add_run(
            kernel,
            json.loads((folder / "summary.json").read_text()),
            pq.read_table(folder / "flow_series.parquet").to_pydict(),
            pq.read_table(folder / "events.parquet").to_pydict(),
            a.flows,
            window,
        )
        sim_doc = simulator_counterpart(doc)
        sim_doc["tcp"] = tm.sim_tcp(a.cc)
        if a.sim_set:
            sc.apply_overrides(sim_doc, a.sim_set)
        r = aqmlab.run(sim_doc)
        add_run(sim, r.summary, r.flow_series.to_pydict(), r.events.to_pydict(), a.flows, window)
    print(
        f"{a.cc} through {a.aqm}, {a.flows} flows, {a.rate:g} Mbit/s; events over "
        f"{window[0]:g}-{window[1]:g} s"
    )
    report("kernel", kernel)
    report("simulator", sim)
    return 0


if __name__ == "__main__":
    from pipe_exit import run

    sys.exit(run(main))
