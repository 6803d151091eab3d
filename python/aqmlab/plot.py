"""Plots of run results (matplotlib, Agg: no display needed)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import pyarrow as pa

from aqmlab._atomic import save_figure
from aqmlab._legend import legend_outside
from aqmlab.api import RunResult
from aqmlab.plotkinds import KINDS
from aqmlab.results import load_run

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "KINDS",
    "SMOOTHABLE",
    "Picture",
    "RunLike",
    "default_smooth",
    "delay_cdf",
    "flow_labels",
    "flow_rate",
    "goodput_rtt",
    "group_names",
    "jain_index",
    "moving_mean",
    "plot_queue",
    "plot_series",
    "response_cdf",
    "show",
    "window_rate",
]

#: What ``smooth`` applies to (a moving window over time); the others are refused.
SMOOTHABLE = ("queue", "queue-bytes", "delay", "throughput", "flows", "flow-throughput", "ping")
#: What is smoothed by default (rates: their raw samples draw a solid band).
RATES = ("throughput", "flow-throughput")
#: The smoothing window of ``throughput`` when none is given, s: a 10 ms sample holds a dozen
#: packets, so the raw series jumps by a tenth of the link between samples (a solid band).
THROUGHPUT_SMOOTH_S = 1.0

#: A run in memory or the path of its folder.
RunLike: TypeAlias = "RunResult | str | os.PathLike[str]"


def _figure(**kw: Any) -> Figure:
    """A Figure drawn by Agg. Matplotlib is imported here, on first use, so
    that the commands that draw nothing (``aqmlab run``) do not load it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kw)
    FigureCanvasAgg(fig)
    return fig


def _rows(t: pa.Table, column: str, value: Any) -> pa.Table:
    """The rows of `t` whose `column` equals `value`."""
    import pyarrow.compute as pc  # on first use: it takes a while to load

    return t.filter(pc.equal(t.column(column), value))


def _as_result(r: RunLike) -> RunResult:
    return r if isinstance(r, RunResult) else load_run(r)


def _first_link(q: pa.Table) -> pa.Table:
    """The rows of the first monitored link (the summary's bottleneck)."""
    if "link" not in q.column_names or q.num_rows == 0:
        return q
    first = q.column("link")[0]
    return _rows(q, "link", first)


def moving_mean(t: Any, y: Any, window: float) -> tuple[Any, Any]:
    """The trailing mean of the samples ``y`` at times ``t`` over ``window`` seconds: at each
    sample time t_i, the mean of the samples in (t_i - window, t_i], from the first sample a
    whole window after the first (none before: a partial window would weigh the start
    differently)."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if window <= 0 or len(t) == 0:
        return t, y
    c = np.concatenate(([0.0], np.cumsum(y)))
    j = np.searchsorted(t, t - window, side="right")
    i = np.arange(len(t))
    keep = t - t[0] >= window * (1 - 1e-9)
    return t[keep], (c[i + 1] - c[j])[keep] / (i + 1 - j)[keep]


def window_rate(t: Any, cum_bytes: Any, window: float) -> tuple[Any, Any]:
    """The rate (bit/s) over the ``window`` seconds before each sample time, from a cumulative
    byte count: (B(t_i) - B(t_j)) x 8 / (t_i - t_j), t_j the latest sample at or before
    t_i - window; the exact mean rate over the window when the samples are evenly spaced. From
    the first sample a whole window after the first. ``window`` 0: between neighbours."""
    t = np.asarray(t, dtype=float)
    b = np.asarray(cum_bytes, dtype=float)
    if window <= 0:
        dt = np.diff(t)
        return t[1:], np.diff(b) * 8 / np.where(dt > 0, dt, np.nan)
    j = np.searchsorted(t, t - window * (1 - 1e-9), side="right") - 1
    keep = j >= 0
    i = np.arange(len(t))[keep]
    j = j[keep]
    dt = t[i] - t[j]
    return t[i], (b[i] - b[j]) * 8 / np.where(dt > 0, dt, np.nan)


def flow_rate(t: Any, rate_bps: Any, window: float) -> tuple[Any, Any]:
    """A flow's delivery rate (bit/s) over the ``window`` seconds before each sample time, from
    the flow series' per-sample rates (``delivery_rate_bps``: the bits delivered since the
    previous sample over the time since it): the rates are summed back into bits delivered,
    B(t_i) = sum over k <= i of rate_k x (t_k - t_(k-1)), and :func:`window_rate` takes the
    exact mean over the window. ``window`` 0: the samples as they are."""
    t = np.asarray(t, dtype=float)
    r = np.asarray(rate_bps, dtype=float)
    if window <= 0 or len(t) == 0:
        return t, r
    dt = np.diff(t, prepend=t[0])
    return window_rate(t, np.cumsum(r * dt) / 8, window)


def default_smooth(what: str, t: Any) -> float:
    """The smoothing window when none is given, s: for ``throughput`` and ``flow-throughput``
    1 s, or a twentieth of the series where it is shorter than 20 s (at least one sample
    interval); none for the others."""
    if what not in RATES or len(t) < 2:
        return 0.0
    span = float(t[-1] - t[0])
    step = float(np.median(np.diff(t)))
    return max(step, min(THROUGHPUT_SMOOTH_S, span / 20))


def group_names(r: RunResult) -> dict[int, str]:
    """A short name of each ``[[traffic]]`` group of the run, by index: ``group 1: bulk
    CUBIC`` (the group's own variant, else ``tcp.variant``; UDP kinds without one), with
    ``reverse`` for a reverse group."""
    from aqmlab.report.terminal import VARIANTS, group_variant

    names: dict[int, str] = {}
    for i, g in enumerate(r.scenario.get("traffic") or []):
        g = g if isinstance(g, Mapping) else {}
        words = [str(g.get("kind", "bulk"))]
        v = group_variant(r.scenario, g)
        if v is not None:
            words.append(VARIANTS.get(v, v))
        if g.get("direction") == "reverse":
            words.append("reverse")
        names[i] = f"group {i}: {' '.join(words)}"
    return names


def flow_labels(r: RunResult) -> dict[int, str]:
    """Each flow's label, ``flow 3 (group 1: bulk CUBIC)``, from ``flows.parquet``'s ``group``
    and :func:`group_names`."""
    groups = group_names(r)
    f = r.flows
    if "flow" not in f.column_names or "group" not in f.column_names:
        return {}
    out: dict[int, str] = {}
    for flow, g in zip(f.column("flow").to_pylist(), f.column("group").to_pylist(), strict=True):
        out[int(flow)] = f"flow {flow} ({groups.get(int(g), f'group {g}')})"
    return out


def _window_text(w: float) -> str:
    return f"{w * 1e3:g} ms" if w < 1 else f"{w:g} s"


def plot_queue(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    title: str | None = None,
    smooth: float | None = None,
) -> Path:
    """Draw the instantaneous queue and the AQM's average against time, one
    panel per run (sharing the axes), and save the figure as ``path`` (PNG,
    or any format matplotlib knows from the extension). ``smooth``: draw the
    queue's trailing mean over that many seconds (:func:`moving_mean`) instead
    of its samples. The legend goes above each panel, off the traces."""
    if not runs:
        raise ValueError("plot_queue needs at least one run")
    loaded = [(label, _as_result(r)) for label, r in runs]
    n = len(loaded)
    fig = _figure(figsize=(10, 2.6 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    top = 1.0
    for ax, (label, r) in zip(axes, loaded, strict=True):
        q = _first_link(r.queue)
        t = q.column("time_s").to_numpy()
        qp = q.column("queue_pkts").to_numpy()
        top = max(top, float(qp.max(initial=0)))
        if smooth:
            tq, qs = moving_mean(t, qp, smooth)
            if len(tq) == 0:
                raise ValueError(
                    f"{label}: the smoothing window ({_window_text(smooth)}) is longer than the "
                    "series"
                )
            ax.plot(
                tq, qs, lw=0.8, color="tab:blue", label=f"queue, mean over {_window_text(smooth)}"
            )
        else:
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
        legend_outside(ax, fontsize=8)
    axes[-1].set_ylim(0, 1.05 * top)  # shared by every panel
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def response_cdf(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    title: str | None = None,
    xmax: float = 2.0,
    log_x: bool = False,
) -> Path:
    """Draw the CDFs of the web response times of several runs on one axes
    (response time in seconds up to ``xmax``, 2 s as in
    ``000_0675317d310dd341.txt``'s figures) and save the figure as ``path``.
    Each curve counts the responses that ended in its run's measurement
    interval (see :meth:`aqmlab.RunResult.response_cdf`); the legend gives
    each run's share of responses done within 0.5 s. ``log_x``: a logarithmic
    time axis, from the shortest response (the CDF's body and its tail both
    show when response times span decades)."""
    if not runs:
        raise ValueError("response_cdf needs at least one run")
    if not xmax > 0:
        raise ValueError(f"xmax must be positive, not {xmax!r}")
    fig = _figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    lowest = math.inf
    for label, r in runs:
        t, p = _as_result(r).response_cdf()
        if len(t) == 0:
            raise ValueError(f"{label}: the run has no web responses")
        at_half = float(np.searchsorted(t, 0.5, side="right")) / len(t)
        # A step function from (0, 0), through every response, to xmax.
        x = np.concatenate(([0.0], t, [max(xmax, float(t[-1]))]))
        y = np.concatenate(([0.0], p, [1.0]))
        if log_x:
            pos = t[t > 0]
            lowest = min(lowest, float(pos[0]) if len(pos) else math.inf)
        ax.step(x, y, where="post", lw=1.4, label=f"{label} (<= 0.5 s: {100 * at_half:.1f} %)")
    if log_x:
        ax.set_xscale("log")
        ax.set_xlim(min(lowest, xmax / 10) if math.isfinite(lowest) else xmax / 1000, xmax)
    else:
        ax.set_xlim(0, xmax)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel("response time (s)")
    ax.set_ylabel("cumulative probability")
    ax.grid(True, lw=0.3)
    ax.legend(loc="best", fontsize=8)
    if title:
        ax.set_title(title)
    return _save(fig, path)


_RATE = re.compile(r"^\s*([0-9.eE+-]+)\s*(bps|kbps|Mbps|Gbps)\s*$")
_RATE_UNIT = {"bps": 1.0, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def link_rate_bps(scenario: Mapping[str, Any], link: str) -> float | None:
    """The configured rate of monitored link ``link`` (bit/s), or None."""
    topo = scenario.get("topology", {})
    rate: Any = None
    if topo.get("kind") == "custom":
        for x in topo.get("links", []):
            if x.get("name") == link:
                rate = x.get("rate")
    else:
        rate = topo.get("bottleneck_rate")
    m = _RATE.match(str(rate)) if rate is not None else None
    return float(m.group(1)) * _RATE_UNIT[m.group(2)] if m else None


def _links(r: RunResult) -> list[str]:
    if "link" not in r.queue.column_names:
        return []
    return list(dict.fromkeys(r.queue.column("link").to_pylist()))


def _link_rows(r: RunResult, link: str | None, label: str) -> tuple[str, pa.Table]:
    """The queue rows of ``link`` (default: the first monitored link)."""
    names = _links(r)
    if link is None:
        return (names[0] if names else "bottleneck"), _first_link(r.queue)
    if link not in names:
        raise ValueError(
            f"{label}: no monitored link {link!r}; the queue series has "
            f"{', '.join(repr(n) for n in names) or 'no link'}"
        )
    return link, _rows(r.queue, "link", link)


def _save(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write the figure whole or not at all (:mod:`aqmlab._atomic`)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    return save_figure(fig, out, dpi=120)


def delay_cdf(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    link: str | None = None,
    title: str | None = None,
    log_x: bool = False,
    groups: Sequence[int] = (),
) -> Path:
    """The CDFs of the queueing delay of the packets that crossed ``link``
    (default: each run's first monitored link) in the measurement interval,
    one curve per run, from the runs' delay histograms (``delay.parquet``;
    bins within 3.2 % of the delay), with the p50/p99 in the legend.
    ``log_x``: a logarithmic delay axis from the smallest delay above 0 (the
    packets that found the queue empty stay in the curve's first step).
    ``groups``: one curve per run and traffic group instead, each of that
    group's packets alone (``group_delay.parquet``, ``metrics.group_delays``)."""
    if not runs:
        raise ValueError("delay_cdf needs at least one run")
    fig = _figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    lowest = math.inf
    for run_label, rl in runs:
        r = _as_result(rl)
        d = r.delay
        if d.num_rows == 0:
            raise ValueError(
                f"{run_label}: the run has no delay histogram (made before aqmlab 0.2?)"
            )
        name = link or d.column("link")[0].as_py()
        if _rows(d, "link", name).num_rows == 0:
            have = ", ".join(repr(x) for x in dict.fromkeys(d.column("link").to_pylist()))
            raise ValueError(f"{run_label}: no delay histogram of link {name!r} (have {have})")
        for label, rows, p50, p99 in _delay_curves(run_label, r, name, groups):
            lowest = min(lowest, _cdf_curve(ax, label, rows, p50, p99, log_x))
    ax.set_xlabel("queueing delay (ms)")
    ax.set_ylabel("cumulative probability")
    ax.set_ylim(0, 1.0)
    if log_x:
        ax.set_xscale("log")
        if math.isfinite(lowest):
            ax.set_xlim(left=lowest)
    else:
        ax.set_xlim(left=0)
    ax.grid(True, lw=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(title or f"Queueing delay at {link or 'the bottleneck'}", loc="left")
    return _save(fig, path)


def _delay_curves(
    label: str, r: RunResult, link: str, groups: Sequence[int]
) -> list[tuple[str, pa.Table, float, float]]:
    """The curves :func:`delay_cdf` draws for run ``r``: (label, histogram rows, the summary's
    p50 and p99 in seconds), the link's whole histogram or each of ``groups``'."""
    figs: Mapping[str, Any] = next(
        (s for s in r.summary.get("links", []) if s.get("name") == link), {}
    )
    nan = float("nan")
    if not groups:
        p50, p99 = (figs.get(f"queuing_delay_{q}_s", nan) for q in ("p50", "p99"))
        return [(label, _rows(r.delay, "link", link), p50, p99)]
    g = r.group_delay
    if g.num_rows == 0:
        raise ValueError(
            f"{label}: the run kept no delay per traffic group (run it with "
            "metrics.group_delays = true)"
        )
    rows = _rows(g, "link", link)
    out: list[tuple[str, pa.Table, float, float]] = []
    for k in groups:
        of = _rows(rows, "group", k)
        if of.num_rows == 0:
            have = ", ".join(str(x) for x in sorted(set(rows.column("group").to_pylist())))
            raise ValueError(
                f"{label}: no packet of traffic group {k} left {link} (groups with packets: "
                f"{have or 'none'})"
            )
        per_group = figs.get("groups", {}).get(str(k), {})
        p50, p99 = (per_group.get(f"delay_{q}_s", nan) for q in ("p50", "p99"))
        out.append((f"{label}, group {k}", of, p50, p99))
    return out


def _cdf_curve(
    ax: Any, label: str, rows: pa.Table, p50_s: float, p99_s: float, log_x: bool
) -> float:
    """Draw one histogram's CDF on ``ax``; returns its smallest x (for a log axis)."""
    lowest = math.inf
    upper = np.asarray(rows.column("upper_s").to_numpy(), dtype=float) * 1e3
    count = np.asarray(rows.column("count").to_numpy(), dtype=float)
    p = np.cumsum(count) / count.sum()
    lower0 = float(rows.column("lower_s")[0].as_py()) * 1e3
    x = np.concatenate(([lower0], upper))
    y = np.concatenate(([0.0], p))
    if log_x:
        # Delays of 0 (an empty queue: the first bin, from 0) cannot be placed on a log
        # axis: the curve starts at the lower edge of the first bin above 0, with the share
        # of the packets below it.
        lowers = np.asarray(rows.column("lower_s").to_numpy(), dtype=float) * 1e3
        k = int(np.argmax(lowers > 0)) if (lowers > 0).any() else len(lowers)
        x = np.concatenate((lowers[k : k + 1], upper[k:]))
        y = np.concatenate(([p[k - 1] if k > 0 else 0.0], p[k:]))[: len(x)]
        if len(x):
            lowest = min(lowest, float(x[0]))
    ax.plot(x, y, lw=1.4, label=f"{label} (p50 {p50_s * 1e3:.1f} ms, p99 {p99_s * 1e3:.1f} ms)")
    return lowest


def plot_series(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    what: str = "queue",
    link: str | None = None,
    params: Sequence[str] = (),
    flows: Sequence[int] = (),
    series: str = "cwnd",
    title: str | None = None,
    smooth: float | None = None,
    log_x: bool = False,
    groups: Sequence[int] = (),
) -> Path:
    """One panel per run, against time: ``what`` is ``queue`` (packets, with
    the AQM's average), ``queue-bytes``, ``delay`` (the queue's drain time at
    the link's configured rate, ms), ``throughput`` (bits that started
    transmission per sample interval, Mb/s), ``params`` (the AQM's adapted
    parameters, ``params`` names or all) or ``flows`` (``series`` of the
    flow series: cwnd, ssthresh, srtt_s, rto_s, delivery_rate_bps, send_rate_bps,
    in_flight, alpha, pacing_rate_bps, rate_sample_bps or bbr_bw_bps, for ``flows``
    or every traced flow) or ``flow-throughput`` (each traced flow's delivery rate, Mb/s,
    one curve per flow labelled by :func:`flow_labels`) or ``ping`` (each
    latency probe's round trip against its sending time, ms, one curve per
    probe flow; lost probes left out). ``cdf`` draws
    :func:`delay_cdf` (``log_x``: a logarithmic delay axis; ``groups``: a curve per
    traffic group), ``goodput-rtt``
    :func:`goodput_rtt`.

    ``smooth``: a window in seconds; each curve becomes its trailing mean over
    it (:func:`moving_mean`), throughput and flow-throughput the mean rate over
    it (:func:`window_rate`, :func:`flow_rate`); 0 draws the samples as they
    are. None: the default, :func:`default_smooth` (1 s for the two
    throughputs, none for the others). The
    legend goes outside the axes (:func:`aqmlab._legend.legend_outside`)."""
    if what not in KINDS:
        raise ValueError(f"what must be one of {', '.join(KINDS)}, not {what!r}")
    if smooth is not None and (not math.isfinite(smooth) or smooth < 0):
        raise ValueError(f"smooth must be a window of 0 s or more, not {smooth!r}")
    if smooth and what not in SMOOTHABLE:
        raise ValueError(
            f"smooth is for {', '.join(SMOOTHABLE)}, not {what} (its curves are not samples "
            "over time)"
        )
    if log_x and what != "cdf":
        raise ValueError(f"log_x is for the cdf, not {what} (a time axis stays linear)")
    if groups and what != "cdf":
        raise ValueError(f"groups are for the cdf, not {what}")
    if what == "cdf":
        return delay_cdf(runs, path, link, title, log_x=log_x, groups=groups)
    if what == "goodput-rtt":
        return goodput_rtt(runs, path, title)
    if what == "queue" and link is None and not params and not flows:
        return plot_queue(runs, path, title, smooth=smooth)
    if not runs:
        raise ValueError("plot_series needs at least one run")
    loaded = [(label, _as_result(r)) for label, r in runs]
    n = len(loaded)
    fig = _figure(figsize=(10, 2.6 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    ylabel = ""
    for ax, (label, r) in zip(axes, loaded, strict=True):
        used = 0.0  # the smoothing window drawn, s
        if what in ("queue", "queue-bytes", "delay", "throughput"):
            name, q = _link_rows(r, link, label)
            t = np.asarray(q.column("time_s").to_numpy(), dtype=float)
            if what == "queue":
                y = np.asarray(q.column("queue_pkts").to_numpy(), dtype=float)
                ylabel = "packets"
            elif what == "queue-bytes":
                y = np.asarray(q.column("queue_bytes").to_numpy(), dtype=float)
                ylabel = "bytes"
            elif what == "delay":
                rate = link_rate_bps(r.scenario, name)
                if rate is None:
                    raise ValueError(f"{label}: the rate of link {name!r} is not known")
                y = np.asarray(q.column("queue_bytes").to_numpy(), dtype=float) * 8e3 / rate
                ylabel = "drain time (ms)"
            else:
                if "departed_bytes" not in q.column_names:
                    raise ValueError(f"{label}: the run has no throughput series (older folder)")
                b = np.asarray(q.column("departed_bytes").to_numpy(), dtype=float)
                w = default_smooth(what, t) if smooth is None else smooth
                t, y = window_rate(t, b, w)
                y = y / 1e6
                ylabel = "throughput (Mb/s)"
                if w > 0:
                    used = w
            if what != "throughput":
                w = smooth or 0.0
                if w > 0:
                    t, y = moving_mean(t, y, w)
                    used = w
            if len(t) == 0:
                raise ValueError(
                    f"{label}: the smoothing window ({_window_text(used)}) is longer than the "
                    "series"
                )
            ax.plot(t, y, lw=0.6 if not used else 1.0, label=name)
        elif what == "params":
            pt = r.params
            names = list(params) or list(dict.fromkeys(pt.column("name").to_pylist()))
            if not names:
                raise ValueError(f"{label}: the scheme reports no adapted parameters")
            for nm in names:
                rows = _rows(pt, "name", nm)
                if rows.num_rows == 0:
                    have = ", ".join(dict.fromkeys(pt.column("name").to_pylist())) or "none"
                    raise ValueError(f"{label}: no parameter {nm!r} (have: {have})")
                ax.step(
                    rows.column("time_s").to_numpy(),
                    rows.column("value").to_numpy(),
                    where="post",
                    lw=1.0,
                    label=nm,
                )
            ylabel = "value"
            if len(names) > 1:
                ax.set_yscale("symlog", linthresh=1e-6)
        elif what == "ping":
            pt = r.pings
            if pt.num_rows == 0:
                raise ValueError(f"{label}: the run has no latency probes (a `ping` traffic group)")
            ids = list(flows) or list(dict.fromkeys(pt.column("flow").to_pylist()))
            labels = flow_labels(r)
            for f in ids:
                rows = _rows(pt, "flow", f)
                if rows.num_rows == 0:
                    raise ValueError(f"{label}: flow {f} sent no probes")
                ft = np.asarray(rows.column("sent_s").to_numpy(), dtype=float)
                fy = np.asarray(rows.column("rtt_s").to_numpy(), dtype=float) * 1e3
                ok = ~np.isnan(fy)
                ft, fy = ft[ok], fy[ok]
                if smooth:
                    ft, fy = moving_mean(ft, fy, smooth)
                    used = smooth
                ax.plot(ft, fy, lw=0.8, marker=".", ms=2, label=labels.get(int(f), f"flow {f}"))
            ylabel = "round trip (ms)"
        elif what == "flow-throughput":
            fs = _flow_series(r, label)
            ids = list(flows) or list(dict.fromkeys(fs.column("flow").to_pylist()))
            labels = flow_labels(r)
            for f in ids:
                rows = _rows(fs, "flow", f)
                if rows.num_rows == 0:
                    raise ValueError(f"{label}: flow {f} is not in the flow series")
                ft = np.asarray(rows.column("time_s").to_numpy(), dtype=float)
                fy = np.asarray(rows.column("delivery_rate_bps").to_numpy(), dtype=float)
                w = default_smooth(what, ft) if smooth is None else smooth
                ft, fy = flow_rate(ft, fy, w)
                if len(ft) == 0:
                    raise ValueError(
                        f"{label}: the smoothing window ({_window_text(w)}) is longer than the "
                        "series"
                    )
                used = w
                ax.plot(ft, fy / 1e6, lw=1.0, label=labels.get(int(f), f"flow {f}"))
            ylabel = "throughput (Mb/s)"
        else:
            fs = _flow_series(r, label)
            text = ("time_s", "flow", "bbr_state", "ca_state")
            if series not in fs.column_names or series in text:
                cols = [c for c in fs.column_names if c not in text]
                raise ValueError(f"series must be one of {', '.join(cols)}, not {series!r}")
            ids = list(flows) or list(dict.fromkeys(fs.column("flow").to_pylist()))
            labels = flow_labels(r)
            for f in ids:
                rows = _rows(fs, "flow", f)
                if rows.num_rows == 0:
                    raise ValueError(f"{label}: flow {f} is not in the flow series")
                ft = np.asarray(rows.column("time_s").to_numpy(), dtype=float)
                fy = np.asarray(rows.column(series).to_numpy(zero_copy_only=False), dtype=float)
                if smooth:
                    ft, fy = moving_mean(ft, fy, smooth)
                    used = smooth
                ax.plot(ft, fy, lw=0.8, label=labels.get(int(f), f"flow {f}"))
            ylabel = series
        ax.set_title(
            label + (f" (mean over {_window_text(used)})" if used else ""), loc="left", fontsize=10
        )
        ax.set_ylabel(ylabel)
        ax.grid(True, lw=0.3)
        legend_outside(ax, fontsize=8)
    axes[-1].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def _flow_series(r: RunResult, label: str) -> pa.Table:
    """The run's flow series; ValueError saying how to trace flows when it has none."""
    if r.flow_series.num_rows == 0:
        raise ValueError(f"{label}: no flow series; run with --set 'metrics.flow_series=[0, 1]'")
    return r.flow_series


def jain_index(x: Any) -> float:
    """Jain's fairness index of the values ``x``: (sum x)^2 / (n sum x^2), 1 when all are
    equal, 1/n when one has everything; NaN for none (or all zero)."""
    x = np.asarray(x, dtype=float)
    sq = float((x * x).sum())
    return float(x.sum()) ** 2 / (len(x) * sq) if len(x) and sq > 0 else math.nan


def goodput_rtt(
    runs: Sequence[tuple[str, RunLike]],
    path: str | os.PathLike[str],
    title: str | None = None,
) -> Path:
    """Each flow's goodput over the measurement interval against its base RTT
    (``flows.parquet``'s ``goodput_bps`` and ``base_rtt_s``), one point per flow that started,
    coloured by traffic group (:func:`group_names`), one panel per run sharing the axes; each
    panel's title gives the number of flows and their Jain's fairness index. Under TCP's
    window-per-round-trip dynamics the points fall with the RTT (goodput ~ 1/RTT for Reno-like
    flows sharing one drop rate)."""
    if not runs:
        raise ValueError("goodput_rtt needs at least one run")
    loaded = [(label, _as_result(r)) for label, r in runs]
    n = len(loaded)
    fig = _figure(figsize=(8, 2.8 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    colours = [f"C{i}" for i in range(10)]
    for ax, (label, r) in zip(axes, loaded, strict=True):
        f = r.flows
        missing = [c for c in ("goodput_bps", "base_rtt_s", "group") if c not in f.column_names]
        if missing:
            raise ValueError(f"{label}: flows.parquet has no {', '.join(missing)} (older folder)")
        start = np.asarray(f.column("start_s").to_numpy(zero_copy_only=False), dtype=float)
        rtt = np.asarray(f.column("base_rtt_s").to_numpy(), dtype=float) * 1e3
        good = np.asarray(f.column("goodput_bps").to_numpy(), dtype=float) / 1e6
        group = np.asarray(f.column("group").to_numpy())
        began = np.isfinite(start)
        if not began.any():
            raise ValueError(f"{label}: no flow started")
        names = group_names(r)
        for g in dict.fromkeys(group[began].tolist()):
            k = began & (group == g)
            ax.scatter(
                rtt[k],
                good[k],
                s=14,
                color=colours[int(g) % len(colours)],
                label=f"{names.get(int(g), f'group {g}')} ({int(k.sum())})",
            )
        ax.set_title(
            f"{label}: {int(began.sum())} flows, Jain's index {jain_index(good[began]):.3f}",
            loc="left",
            fontsize=10,
        )
        ax.set_ylabel("goodput (Mb/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, lw=0.3)
        legend_outside(ax, fontsize=8)
    axes[-1].set_xlabel("base RTT (ms)")
    axes[-1].set_xlim(left=0)
    if title:
        fig.suptitle(title)
    return _save(fig, path)


@dataclass(frozen=True)
class Picture:
    """A figure file that shows itself in Jupyter (PNG or SVG, by its extension): the plots
    write files, ``show(plot_series(...))`` puts the file in the notebook too."""

    path: Path

    def _repr_png_(self) -> bytes | None:
        return self.path.read_bytes() if self.path.suffix.lower() == ".png" else None

    def _repr_svg_(self) -> str | None:
        if self.path.suffix.lower() != ".svg":
            return None
        return self.path.read_text(encoding="utf-8")


def show(path: str | os.PathLike[str]) -> Picture:
    """The figure file ``path`` (a plot's PNG or SVG) as a :class:`Picture`, which Jupyter
    shows inline: ``show(plot_series([("RED", r)], "queue.png"))``."""
    p = Path(path)
    if p.suffix.lower() not in (".png", ".svg"):
        raise ValueError(f"show: {p} is not a .png or .svg file (Jupyter shows those inline)")
    if not p.is_file():
        raise ValueError(f"show: {p} does not exist")
    return Picture(p)
