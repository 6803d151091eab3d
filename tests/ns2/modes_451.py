"""Thesis section 4.5.1's queue in two regimes, in ns-2.35 and aqmlab (docs/fidelity.md item 20).

``crosscheck.THESIS_451`` (50 FTP flows and 20 reverse ones, 10 Mbit/s, d = 120 ms, RED 50-150
with w_q 1e-4) is bistable in both simulators: the queue either swings from empty to about 150
packets once per round trip, or follows RED's slow cycle (about 3 s), on which most of its
standard deviation rests. Which one a run falls into depends on the reverse traffic and on the
seed. This script runs the case in both simulators over seeds and prints, per simulator, the
queue's mean and standard deviation (mean-size packets, every 10 ms over 20-100 s, the ranges
over seeds) and the share of the queue's variance at 2-10 Hz (the round-trip band).

Usage (needs ``ns``: ``make ns2``)::

    python tests/ns2/modes_451.py [--aqm red|ared] [--reverse 20] [--seeds 1 2 ...]
        [--tcp KEY=VALUE ...] [--plot SEED]

``--tcp`` replaces or adds keys of aqmlab's ``[tcp]`` beyond ns-2's (``crosscheck.NS2_TCP``);
``--plot SEED`` draws that seed's queue in both simulators as ``modes-451.png`` instead.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import crosscheck as cc

SAMPLE_S = 0.01


def fast_share(q: np.ndarray) -> float:
    """The share of the queue's variance at 2-10 Hz (10 ms samples)."""
    x = q - q.mean()
    power = np.abs(np.fft.rfft(x)) ** 2
    f = np.fft.rfftfreq(len(x), SAMPLE_S)
    return float(power[(f > 2.0) & (f < 10.0)].sum() / power[f > 0].sum())


def tcp_keys(extra: list[str]) -> list[str]:
    """ns-2's TCP keys with `extra` (KEY=VALUE) replacing or adding to them."""
    keys = dict(t.split("=", 1) for t in cc.NS2_TCP)
    keys.update(t.split("=", 1) for t in extra)
    return [f"{k}={v}" for k, v in keys.items()]


def queue(sim: str, case: cc.Case, seed: int, tcp: list[str]) -> np.ndarray:
    """The forward bottleneck queue of one run, mean-size packets every 10 ms."""
    return cc.queue_ns2(case, seed) if sim == "ns-2.35" else cc.queue_aqmlab(case, seed, tcp)


def _one(job: tuple[str, cc.Case, int, list[str]]) -> tuple[str, float, float, float]:
    sim, case, seed, tcp = job
    q = queue(sim, case, seed, tcp)
    return sim, float(q.mean()), float(q.std()), fast_share(q)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aqm", choices=sorted(cc.THESIS_451), default="red")
    ap.add_argument("--reverse", type=int, default=20, help="reverse flows (at least 1)")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 17)))
    ap.add_argument("--tcp", nargs="*", default=[], metavar="KEY=VALUE")
    ap.add_argument("--plot", type=int, metavar="SEED")
    args = ap.parse_args(argv)
    if args.reverse < 1:
        ap.error(f"--reverse: {args.reverse}: the scenario format needs at least 1 flow")
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
    case = dataclasses.replace(cc.THESIS_451[args.aqm], reverse=args.reverse)
    tcp = tcp_keys(args.tcp)
    sims = ("ns-2.35", "aqmlab")
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 1, figsize=(12, 6), sharex=True)
        for ax, sim in zip(axes, sims, strict=True):
            q = queue(sim, case, args.plot, tcp)
            t = case.start_s + SAMPLE_S * np.arange(len(q))
            ax.plot(t, q, lw=0.5)
            share = fast_share(q)
            ax.set_title(f"{sim}: mean {q.mean():.1f}, sd {q.std():.1f}, 2-10 Hz {share:.2f}")
            ax.set_ylabel("queue (500-byte packets)")
        axes[-1].set_xlabel("time (s)")
        fig.tight_layout()
        fig.savefig("modes-451.png", dpi=80)
        print("wrote modes-451.png")
        return 0
    jobs = [(sim, case, s, tcp) for sim in sims for s in args.seeds]
    rows: dict[str, list[tuple[float, float, float]]] = {sim: [] for sim in sims}
    with ProcessPoolExecutor(2) as ex:
        for sim, mean, sd, share in ex.map(_one, jobs):
            rows[sim].append((mean, sd, share))
    print(f"{case.name}, {args.reverse} reverse flows, seeds {args.seeds[0]}-{args.seeds[-1]}")
    print("| simulator | mean | sd (range) | 2-10 Hz share (range) |")
    print("|---|---|---|---|")
    for sim, r in rows.items():
        a = np.array(r)
        print(
            f"| {sim} | {a[:, 0].mean():.1f} | {a[:, 1].mean():.1f} "
            f"({a[:, 1].min():.1f}-{a[:, 1].max():.1f}) | {a[:, 2].mean():.2f} "
            f"({a[:, 2].min():.2f}-{a[:, 2].max():.2f}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
