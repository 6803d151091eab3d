"""Plots of run results (matplotlib, Agg: no display needed)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from aqmlab.api import RunResult
from aqmlab.results import load_run

__all__ = ["RunLike", "plot_queue", "response_cdf"]

#: A run in memory or the path of its folder.
RunLike: TypeAlias = "RunResult | str | os.PathLike[str]"


def _as_result(r: RunLike) -> RunResult:
    return r if isinstance(r, RunResult) else load_run(r)


def _first_link(q: pa.Table) -> pa.Table:
    """The rows of the first monitored link (the summary's bottleneck)."""
    if "link" not in q.column_names or q.num_rows == 0:
        return q
    first = q.column("link")[0]
    return q.filter(pc.equal(q.column("link"), first))


def plot_queue(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    title: str | None = None,
) -> Path:
    """Draw the instantaneous queue and the AQM's average against time, one
    panel per run (sharing the axes), and save the figure as ``path`` (PNG,
    or any format matplotlib knows from the extension)."""
    if not runs:
        raise ValueError("plot_queue needs at least one run")
    loaded = [(label, _as_result(r)) for label, r in runs]
    n = len(loaded)
    fig = Figure(figsize=(10, 2.6 * n + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    top = 1.0
    for ax, (label, r) in zip(axes, loaded, strict=True):
        q = _first_link(r.queue)
        t = q.column("time_s").to_numpy()
        qp = q.column("queue_pkts").to_numpy()
        top = max(top, float(qp.max(initial=0)))
        ax.plot(t, qp, lw=0.5, color="tab:blue", label="queue")
        if "avg" in q.column_names:
            avg = q.column("avg").to_numpy(zero_copy_only=False).astype(float)
            if np.isfinite(avg).any():
                ax.plot(t, avg, lw=1.4, color="tab:red", label="average")
        start = r.summary.get("measure_start_s")
        if start:
            ax.axvline(float(start), color="0.5", lw=0.8, ls="--")
        b = r.summary.get("bottleneck", {})
        ax.set_title(
            f"{label}: mean {b.get('queue_mean_pkts', float('nan')):.1f} pkts, "
            f"utilization {b.get('utilization', float('nan')):.3f}, "
            f"loss {100 * b.get('loss_rate', float('nan')):.2f} %",
            loc="left",
            fontsize=10,
        )
        ax.set_ylabel("packets")
        ax.grid(True, lw=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1].set_ylim(0, 1.05 * top)  # shared by every panel
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    return out


def response_cdf(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    title: str | None = None,
    xmax: float = 2.0,
) -> Path:
    """Draw the CDFs of the web response times of several runs on one axes
    (response time in seconds up to ``xmax``, 2 s as in
    ``000_0675317d310dd341.txt``'s figures) and save the figure as ``path``.
    Each curve counts the responses that ended in its run's measurement
    interval (see :meth:`aqmlab.RunResult.response_cdf`); the legend gives
    each run's share of responses done within 0.5 s."""
    if not runs:
        raise ValueError("response_cdf needs at least one run")
    if not xmax > 0:
        raise ValueError(f"xmax must be positive, not {xmax!r}")
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for label, r in runs:
        t, p = _as_result(r).response_cdf()
        if len(t) == 0:
            raise ValueError(f"{label}: the run has no web responses")
        at_half = float(np.searchsorted(t, 0.5, side="right")) / len(t)
        # A step function from (0, 0), through every response, to xmax.
        x = np.concatenate(([0.0], t, [max(xmax, float(t[-1]))]))
        y = np.concatenate(([0.0], p, [1.0]))
        ax.step(x, y, where="post", lw=1.4, label=f"{label} (<= 0.5 s: {100 * at_half:.1f} %)")
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel("response time (s)")
    ax.set_ylabel("cumulative probability")
    ax.grid(True, lw=0.3)
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    return out
