"""The experiment's figures (matplotlib, Agg), PNG and SVG, one style for all.

Kinds (``[[figure]] kind``):

``timeseries``
    ``series`` (columns of queue.parquet such as ``queue_pkts``, ``queue_bytes``, ``avg``, or
    ``param:NAME`` from params.parquet) against time, one panel per scheme, from the first seed
    (and the first value of each factor, unless the figure's optional ``factors`` fixes them).
    Parameters measured in packets (thresholds, ``q_ref``, ``avg``...) share the queue's axis;
    the others (``max_p``, probabilities, gains) go on a second axis at the right. Phase
    boundaries are dotted lines. Series longer than 2000 samples are drawn as their
    per-bucket min / max envelope (every peak stays visible).
``metric_vs_factor``
    ``metric`` against ``factor``, one line per scheme (and per value of the other factors),
    with the seeds' 95 % CI (or min-max range) as error bars, the paper's numbers as open
    diamonds and ns-2.35's (``[[ns2]]``) as open squares; optional ``phase`` (default "all").
``phase_bars``
    ``metric`` per phase, one bar per scheme, error bars, the paper's numbers and ns-2.35's as
    markers.
``ellipse``
    Queueing delay against goodput, RFC 7928 section 2.7: for each scheme the samples of every
    ``interval_s`` (1 s) of every seed, their mean as a dot and their one-sigma ellipse; the
    delay axis runs from large to small (better is up and right); each panel has its own
    scales. See :func:`ellipse`.
``cdf``
    ``of = "responses"`` (the default): the CDF of the response times (responses.parquet) up
    to ``x_max`` seconds (default 2), the responses of every seed that ended in the
    measurement interval pooled; ``of = "delay"``: the CDF of the queueing delay of the
    packets that left the bottleneck (or ``link``) in the measurement interval, in ms, from
    the points' delay histograms (delay.parquet, bins within 3.2 %) pooled over the seeds, up
    to ``x_max`` ms (default: the largest delay); with ``group = G`` only the packets of
    traffic group ``G`` (group_delay.parquet, ``metrics.group_delays``). One curve per scheme
    (and per value of the other factors); ``tail = true``: the complementary CDF on a log
    scale; ``log_x = true``: a logarithmic x axis, from the smallest value above 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
import pyarrow.compute as pc
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as MplFigure

from aqmlab._atomic import save_figure
from aqmlab.report.data import ALL, Figure, Output, Row
from aqmlab.report.metrics import MetricError, PointData
from aqmlab.report.tables import Cell

__all__ = ["KINDS", "FigureError", "draw"]

F64 = npt.NDArray[np.float64]

#: One style for every figure of every report.
STYLE: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titlelocation": "left",
    "axes.grid": True,
    "grid.linewidth": 0.3,
    "grid.color": "0.8",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.linewidth": 1.2,
    "svg.fonttype": "none",
    "svg.hashsalt": "aqmlab",
    "figure.dpi": 110,
}
PALETTE = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
]  # fmt: skip
#: Colours of the series drawn over the queue (dark, to stand out from any scheme's colour).
DARK = ["#111111", "#7a0177", "#b35806", "#01665e"]
#: Parameters drawn on the queue's axis (packets); the others go on a second axis.
QUEUE_SCALED = {"min_th", "max_th", "q_ref", "avg", "b_star", "target_queue", "threshold"}
#: About one min/max pair per pixel column of a 9-inch, 110 dpi panel.
MAX_POINTS = 2000


class FigureError(Exception):
    """A figure cannot be drawn (no data, a bad key); the report lists it and goes on."""


@contextmanager
def _style() -> Iterator[None]:
    with mpl.rc_context(STYLE):  # type: ignore[arg-type]
        yield


def _colour(out: Output, scheme: str) -> str:
    schemes = out.experiment.schemes
    i = schemes.index(scheme) if scheme in schemes else len(schemes)
    return PALETTE[i % len(PALETTE)]


def _save(fig: MplFigure, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
    save_figure(fig, png, dpi=110)
    save_figure(fig, svg, metadata={"Date": None})
    return [png, svg]


def envelope(t: F64, v: F64, n: int = MAX_POINTS) -> tuple[F64, F64]:
    """At most about ``n`` points: per bucket of samples its minimum and its maximum in time
    order, so peaks and troughs survive."""
    if len(t) <= n:
        return t, v
    k = math.ceil(len(t) / (n // 2))
    m = len(t) // k * k
    tb, vb = t[:m].reshape(-1, k), v[:m].reshape(-1, k)
    lo, hi = np.argmin(vb, axis=1), np.argmax(vb, axis=1)
    first = np.minimum(lo, hi)
    second = np.maximum(lo, hi)
    rows = np.arange(len(tb))
    tt = np.stack([tb[rows, first], tb[rows, second]], axis=1).ravel()
    vv = np.stack([vb[rows, first], vb[rows, second]], axis=1).ravel()
    return np.concatenate([tt, t[m:]]), np.concatenate([vv, v[m:]])


def cdf_steps(x: F64, p: F64, n: int = MAX_POINTS) -> tuple[F64, F64]:
    """A step CDF (values ``x`` sorted, cumulative probabilities ``p``) drawn with at most
    ``2 n + 2`` of its points: the first point at or above each of ``n`` probabilities evenly
    spaced in (0, 1] and each of ``n + 1`` evenly spaced in log(1 - p) from 1 - p = 1 down to
    1e-12, and the last.
    Drawn with ``where="post"``, the curve then lies within 1 / ``n`` of the whole one, and its
    tail (1 - p on a log scale) within a factor of 10^(12 / ``n``); tens of thousands of web
    responses otherwise cost seconds of drawing and a large SVG each."""
    if len(x) <= 2 * n:
        return x, p
    levels = np.concatenate(
        (np.linspace(0.0, 1.0, n + 1)[1:], 1.0 - np.logspace(0.0, -12.0, n + 1))
    )
    idx = np.unique(np.searchsorted(p, levels, side="left"))
    idx = np.unique(np.append(idx[idx < len(p)], len(p) - 1))
    return x[idx], p[idx]


def _fixed_factors(out: Output, fig: Figure) -> dict[str, int]:
    """The figure's optional ``factors`` as positions in each factor's values."""
    res = {}
    given = fig.get("factors") or {}
    for name, v in given.items():
        f = out.experiment.factor(name)
        if f is None:
            raise FigureError(f"factors.{name}: not a factor of the experiment")
        i = f.index(v)
        if i is None:
            raise FigureError(f"factors.{name}: {v!r} is not one of its values")
        res[name] = i
    return res


def _matches(out: Output, row: Row, fixed: dict[str, int]) -> bool:
    key = out.factor_key(row)
    return all(
        key[i] == fixed[f.name] for i, f in enumerate(out.experiment.factors) if f.name in fixed
    )


def _factor_text(out: Output, key: Sequence[int | None], skip: set[str]) -> str:
    parts = []
    for f, i in zip(out.experiment.factors, key, strict=True):
        if f.name not in skip and len(f.values) > 1:
            parts.append(f"{f.name} {'?' if i is None else f.label(i)}")
    return ", ".join(parts)


def _phase_lines(out: Output, ax: Axes, row: Row) -> None:
    for r in out.rows:
        if r.id == row.id and r.phase != ALL and not math.isnan(r.start_s):
            ax.axvline(r.start_s, color="0.55", lw=0.6, ls=":")


def timeseries(out: Output, fig: Figure, stem: Path) -> list[Path]:
    series = [str(s) for s in (fig.get("series") or ["queue_pkts", "avg"])]
    fixed = _fixed_factors(out, fig)
    for f in out.experiment.factors:
        fixed.setdefault(f.name, 0)
    panels: list[tuple[str, Row]] = []
    for scheme in out.experiment.schemes:
        rows = [
            r
            for r in out.rows
            if r.scheme == scheme and r.phase == ALL and r.ok and _matches(out, r, fixed)
        ]
        if rows:
            panels.append((scheme, min(rows, key=lambda r: r.seed)))
    if not panels:
        raise FigureError("no completed point to draw")
    with _style():
        # Fixed margins: constrained layout costs seconds with a dozen panels.
        height = 2.0 * len(panels) + 0.9
        mfig = MplFigure(figsize=(9, height))
        FigureCanvasAgg(mfig)
        mfig.subplots_adjust(
            left=0.07, right=0.92, top=1 - 0.55 / height, bottom=0.5 / height, hspace=0.4
        )
        axes = mfig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
        for ax, (scheme, row) in zip(axes, panels, strict=True):
            p = PointData(out.point_dir(row.id))
            try:
                q = p.queue(None)
            except MetricError as e:
                raise FigureError(f"{scheme}: {e}") from e
            t = np.asarray(q.column("time_s").to_numpy(), dtype=np.float64)
            right: Axes | None = None
            styles = itertools.cycle(["-", "--", "-.", ":"])
            handles = []
            for k, s in enumerate(series):
                if s.startswith("param:"):
                    name = s.split(":", 1)[1]
                    try:
                        pt = p.table("params")
                    except MetricError as e:
                        raise FigureError(f"{scheme}: {e}") from e
                    sel = pt.filter(pc.equal(pt.column("name"), name))
                    if sel.num_rows == 0:
                        continue  # the scheme does not adapt this one
                    x = np.asarray(sel.column("time_s").to_numpy(), dtype=np.float64)
                    y = np.asarray(sel.column("value").to_numpy(), dtype=np.float64)
                    on_right = name not in QUEUE_SCALED
                    label = name
                else:
                    if s not in q.column_names:
                        raise FigureError(
                            f"series {s!r}: not a column of queue.parquet "
                            f"({', '.join(q.column_names)}) nor param:NAME"
                        )
                    x = t
                    y = np.asarray(q.column(s).to_numpy(zero_copy_only=False), dtype=np.float64)
                    if not np.isfinite(y).any():
                        continue  # e.g. avg of a scheme without an average
                    # Cumulative counters are not on the queue's scale.
                    on_right, label = s in ("drops", "marks"), s
                x, y = envelope(x, y)
                if on_right:
                    if right is None:
                        right = ax.twinx()
                        right.grid(False)
                        right.spines["right"].set_visible(True)
                    (h,) = right.plot(
                        x, y, lw=1.0, ls=next(styles), color="0.2", label=label, zorder=4
                    )
                else:
                    # The first series (the queue) thin and at the back; a parameter on top.
                    is_param = s.startswith("param:")
                    lw = 0.5 if k == 0 else (1.4 if is_param else 0.8)
                    colour = _colour(out, scheme) if k == 0 else DARK[(k - 1) % len(DARK)]
                    z = 1 if k == 0 else (3 if is_param else 2)
                    (h,) = ax.plot(x, y, lw=lw, color=colour, label=label, zorder=z)
                handles.append(h)
            _phase_lines(out, ax, row)
            ax.set_title(f"{scheme} (seed {row.seed}{_sub(out, row)})")
            ax.set_ylabel("packets" if not series[0].endswith("bytes") else "bytes")
            ax.set_ylim(bottom=0)
            if handles:
                # Above the panel at the right, beside its title: not over the queue.
                ax.legend(
                    handles=handles, loc="lower right", bbox_to_anchor=(1.0, 1.0),
                    ncols=min(len(handles), 4), borderaxespad=0.1, columnspacing=1.0,
                )  # fmt: skip
        axes[-1].set_xlabel("time (s)")
        mfig.suptitle(fig.title or fig.name, x=0.01, y=1 - 0.08 / height, ha="left", fontsize=11)
        return _save(mfig, stem)


def _sub(out: Output, row: Row) -> str:
    txt = _factor_text(out, out.factor_key(row), set())
    return f", {txt}" if txt else ""


def _errbar(c: Cell) -> tuple[float, float]:
    a = c.ours
    if math.isnan(a.lo):
        return 0.0, 0.0
    return a.mean - a.lo, a.hi - a.mean


#: More curves than this in one axes: one panel per value of the other factors instead.
MAX_CURVES = 8


def _kkey(k: tuple[int | None, ...]) -> tuple[int, ...]:
    return tuple(-1 if i is None else i for i in k)


def _panels(
    n: int, width: float = 7.0, height: float = 4.2, panel_height: float = 3.0, share: bool = True
) -> tuple[MplFigure, list[Axes]]:
    """A figure with ``n`` panels (up to three a row, each ``panel_height`` inches high)
    sharing their axes (``share``), or each with its own."""
    if n <= 1:
        mfig = MplFigure(figsize=(width, height), layout="constrained")
        FigureCanvasAgg(mfig)
        return mfig, [mfig.subplots()]
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    mfig = MplFigure(figsize=(4.0 * ncols + 1.5, panel_height * nrows + 0.8), layout="constrained")
    FigureCanvasAgg(mfig)
    grid = mfig.subplots(nrows, ncols, sharex=share, sharey=share, squeeze=False)
    axes = list(grid.ravel())
    for ax in axes[n:]:
        ax.set_visible(False)
    return mfig, axes[:n]


def _legend(mfig: MplFigure, axes: list[Axes], loc: str = "best") -> None:
    """One legend: in the axes when there is one panel, else beside the panels (one entry
    per label)."""
    if len(axes) == 1:
        axes[0].legend(loc=loc)  # type: ignore[call-overload]
        return
    seen: dict[str, Any] = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    mfig.legend(list(seen.values()), list(seen), loc="outside right upper")
    for ax in axes:
        ax.label_outer()


def metric_vs_factor(out: Output, fig: Figure, stem: Path, cells: dict[Any, Cell]) -> list[Path]:
    exp = out.experiment
    mname, fname = str(fig.get("metric", "")), str(fig.get("factor", ""))
    if mname not in exp.metrics:
        raise FigureError(f"metric {mname!r} is not one of {', '.join(exp.metrics)}")
    fac = exp.factor(fname)
    if fac is None:
        raise FigureError(f"factor {fname!r} is not one of {[f.name for f in exp.factors]}")
    fi = exp.factors.index(fac)
    phase = str(fig.get("phase", ALL))
    fixed = _fixed_factors(out, fig)
    m = exp.metrics[mname]
    xs = fac.values if fac.numeric else list(range(len(fac.values)))
    lines: dict[tuple[str, tuple[int | None, ...]], list[Cell]] = {}
    for (scheme, fkey, ph, mn), c in cells.items():
        if mn != mname or ph != phase or fkey[fi] is None:
            continue
        if any(fkey[i] != fixed[f.name] for i, f in enumerate(exp.factors) if f.name in fixed):
            continue
        other = tuple(None if i == fi else k for i, k in enumerate(fkey))
        lines.setdefault((scheme, other), []).append(c)
    if not lines:
        raise FigureError(f"no values of {mname!r} in phase {phase!r}")
    order = {s: i for i, s in enumerate(exp.schemes)}
    others = sorted({o for _, o in lines}, key=_kkey)
    split = len(lines) > MAX_CURVES and len(others) > 1
    with _style():
        mfig, axes = _panels(len(others) if split else 1)
        styles = ["-", "--", "-.", ":"]
        paper_shown = ns2_shown = False
        for (scheme, other), cs in sorted(lines.items(), key=lambda kv: order.get(kv[0][0], 99)):
            ax = axes[others.index(other)] if split else axes[0]
            cs = sorted(cs, key=lambda c: c.factors[fi] or 0)
            x = [float(xs[c.factors[fi] or 0]) for c in cs]
            y = [c.ours.mean for c in cs]
            err = np.array([_errbar(c) for c in cs]).T
            sub = "" if split else _factor_text(out, other, {fname})
            colour = _colour(out, scheme)
            ax.errorbar(
                x, y, yerr=err if err.any() else None, color=colour,
                ls="-" if split else styles[others.index(other) % len(styles)],
                marker="o", ms=3.5, capsize=3, label=f"{scheme}{', ' + sub if sub else ''}",
            )  # fmt: skip
            px = [float(xs[c.factors[fi] or 0]) for c in cs if c.paper is not None]
            py = [c.paper.center for c in cs if c.paper is not None]
            if px:
                ax.plot(px, py, ls="none", marker="D", mfc="none", mec=colour, ms=6)
                paper_shown = True
            nx = [float(xs[c.factors[fi] or 0]) for c in cs if c.ns2 is not None]
            ny = [c.ns2.center for c in cs if c.ns2 is not None]
            if nx:
                ax.plot(nx, ny, ls="none", marker="s", mfc="none", mec=colour, ms=6)
                ns2_shown = True
        if paper_shown:
            axes[0].plot([], [], ls="none", marker="D", mfc="none", mec="0.3", label="paper")
        if ns2_shown:
            axes[0].plot([], [], ls="none", marker="s", mfc="none", mec="0.3", label="ns-2.35")
        for i, ax in enumerate(axes):
            if not fac.numeric:
                ax.set_xticks(xs, fac.labels)
            ax.set_xlabel(fname)
            ax.set_ylabel(m.label)
            if split:
                ax.set_title(_factor_text(out, others[i], {fname}), fontsize=9)
        _legend(mfig, axes)
        if split:
            mfig.suptitle(fig.title or fig.name, x=0.01, ha="left", fontsize=11)
        else:
            axes[0].set_title(fig.title or fig.name)
        return _save(mfig, stem)


def phase_bars(out: Output, fig: Figure, stem: Path, cells: dict[Any, Cell]) -> list[Path]:
    exp = out.experiment
    mname = str(fig.get("metric", ""))
    if mname not in exp.metrics:
        raise FigureError(f"metric {mname!r} is not one of {', '.join(exp.metrics)}")
    m = exp.metrics[mname]
    phases = [p for p in exp.phases if p != ALL] or [ALL]
    fixed = _fixed_factors(out, fig)
    keys = sorted(
        {
            fk
            for (_, fk, _, mn) in cells
            if mn == mname
            and all(fk[i] == fixed[f.name] for i, f in enumerate(exp.factors) if f.name in fixed)
        },
        key=_kkey,
    )
    groups = [(s, k) for s in exp.schemes for k in keys]
    if not groups:
        raise FigureError(f"no values of {mname!r}")
    # More bars than a panel reads (scheme x setting): one panel per setting of the other
    # factors, as the curve figures do; the figure stays near 7 x 4.2 inches a panel, never
    # a strip of hundreds of bars.
    # One phase and several settings: the settings along x (a group of bars per setting, a
    # bar per scheme), one panel.
    by_setting = len(phases) == 1 and len(keys) > 1
    split = not by_setting and len(groups) > MAX_CURVES and len(keys) > 1
    with _style():
        mfig, axes = _panels(len(keys) if split else 1, panel_height=4.0)
        paper_shown = ns2_shown = False
        for pi, ax in enumerate(axes):
            sel = [(s, k) for s, k in groups if k == keys[pi]] if split else groups
            if by_setting:
                sel = [(s, None) for s in exp.schemes]
            width = 0.8 / len(sel)
            hatches = ["", "//", "..", "xx", "\\\\"]
            for gi, (scheme, fk0) in enumerate(sel):
                fk = keys[0] if fk0 is None else fk0
                if by_setting:
                    x = np.arange(len(keys)) + (gi - (len(sel) - 1) / 2) * width
                    cs = [cells.get((scheme, k, phases[0], mname)) for k in keys]
                else:
                    x = np.arange(len(phases)) + (gi - (len(sel) - 1) / 2) * width
                    cs = [cells.get((scheme, fk, ph, mname)) for ph in phases]
                y = [c.ours.mean if c is not None else math.nan for c in cs]
                err = np.array([_errbar(c) if c is not None else (0.0, 0.0) for c in cs]).T
                sub = "" if split or by_setting else _factor_text(out, fk, set())
                ax.bar(
                    x, y, width=width * 0.92, yerr=err if err.any() else None, capsize=2,
                    color=_colour(out, scheme),
                    hatch="" if split or by_setting else hatches[keys.index(fk) % len(hatches)],
                    edgecolor="white", lw=0.3, label=f"{scheme}{', ' + sub if sub else ''}",
                )  # fmt: skip
                for xi, c in zip(x, cs, strict=True):
                    if c is not None and c.paper is not None:
                        ax.plot(xi, c.paper.center, ls="none", marker="D", mfc="white",
                                mec="black", ms=5, zorder=5)  # fmt: skip
                        paper_shown = True
                    if c is not None and c.ns2 is not None:
                        ax.plot(xi, c.ns2.center, ls="none", marker="s", mfc="white",
                                mec="#2a5d8f", ms=5, zorder=5)  # fmt: skip
                        ns2_shown = True
            if by_setting:
                ax.set_xticks(np.arange(len(keys)), [_factor_text(out, k, set()) for k in keys])
                ax.set_xlabel(f"phase {phases[0]}" if phases[0] != ALL else "")
            else:
                ax.set_xticks(np.arange(len(phases)), phases)
                ax.set_xlabel("phase")
            ax.set_ylabel(m.label)
            if split:
                ax.set_title(_factor_text(out, keys[pi], set()), fontsize=9)
        if paper_shown:
            axes[0].plot([], [], ls="none", marker="D", mfc="white", mec="black", label="paper")
        if ns2_shown:
            axes[0].plot([], [], ls="none", marker="s", mfc="white", mec="#2a5d8f",
                         label="ns-2.35")  # fmt: skip
        if split:
            _legend(mfig, axes)
            mfig.suptitle(fig.title or fig.name, x=0.01, ha="left", fontsize=11)
        else:
            # Beside the bars, not over them.
            axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
            axes[0].set_title(fig.title or fig.name)
        return _save(mfig, stem)


def _response_samples(out: Output, fig: Figure, r: Row) -> tuple[F64, F64] | None:
    """The response times of a point that ended in its measurement interval, each counted
    once: (values, weights)."""
    try:
        t = PointData(out.point_dir(r.id)).table("responses")
    except MetricError as e:
        out.warn(f"figure {fig.name}: point {r.id}: {e}")
        return None
    ends = np.asarray(t.column("end_s").to_numpy(), dtype=np.float64)
    rt = np.asarray(t.column("response_time_s").to_numpy(), dtype=np.float64)
    sel = (ends >= r.start_s) & (ends <= r.end_s)
    return rt[sel], np.ones(int(sel.sum()))


def _delay_samples(out: Output, fig: Figure, r: Row) -> tuple[F64, F64] | None:
    """A point's queueing-delay histogram (delay.parquet: the packets that left the link in
    the measurement interval; with the figure's ``group``, group_delay.parquet: that traffic
    group's packets) as (each bin's upper edge in ms, its count); the link is the figure's
    ``link``, else the first monitored one. The bin of delay 0 keeps its upper edge (1 ns)."""
    group = fig.get("group")
    try:
        if group is None:
            t = PointData(out.point_dir(r.id)).table("delay")
        else:
            t = PointData(out.point_dir(r.id)).table("group_delay")
    except MetricError as e:
        hint = " (the scenario needs metrics.group_delays = true)" if group is not None else ""
        out.warn(f"figure {fig.name}: point {r.id}: {e}{hint}")
        return None
    if t.num_rows == 0:
        out.warn(f"figure {fig.name}: point {r.id}: no delay histogram (an older folder?)")
        return None
    link = str(fig.get("link") or t.column("link")[0].as_py())
    t = t.filter(pc.equal(t.column("link"), link))
    if group is not None:
        t = t.filter(pc.equal(t.column("group"), int(group)))
        if t.num_rows == 0:
            out.warn(f"figure {fig.name}: point {r.id}: no packet of group {group} left {link}")
            return None
    if t.num_rows == 0:
        raise FigureError(f"link {link!r}: not a monitored link of point {r.id}")
    upper = np.asarray(t.column("upper_s").to_numpy(), dtype=np.float64) * 1e3
    count = np.asarray(t.column("count").to_numpy(), dtype=np.float64)
    return upper, count


def cdf(out: Output, fig: Figure, stem: Path) -> list[Path]:
    exp = out.experiment
    of = str(fig.get("of", "responses"))
    if of not in CDF_OF:
        raise FigureError(f"of = {of!r}; must be one of {', '.join(CDF_OF)}")
    delay = of == "delay"
    x_max = fig.get("x_max")
    x_max = None if x_max is None else float(x_max)
    if not delay and x_max is None:
        x_max = 2.0
    if x_max is not None and not x_max > 0:
        raise FigureError(f"x_max = {x_max!r}; must be > 0")
    tail = bool(fig.get("tail", False))
    log_x = bool(fig.get("log_x", False))
    fixed = _fixed_factors(out, fig)
    curves: dict[tuple[str, tuple[int | None, ...]], list[tuple[F64, F64]]] = {}
    for r in out.rows:
        if r.phase != ALL or not r.ok or not _matches(out, r, fixed):
            continue
        got = _delay_samples(out, fig, r) if delay else _response_samples(out, fig, r)
        if got is not None:
            curves.setdefault((r.scheme, out.factor_key(r)), []).append(got)
    curves = {k: v for k, v in curves.items() if sum(w.sum() for _, w in v) > 0}
    if not curves:
        what = "queueing-delay histogram" if delay else "web response"
        raise FigureError(f"no {what} in any completed point")
    order = {s: i for i, s in enumerate(exp.schemes)}
    keys = sorted({k for _, k in curves}, key=_kkey)
    unit = "queueing delay (ms)" if delay else "response time (s)"
    # The paper's figures: one panel per setting (load, ECN...), a curve per scheme.
    split = len(curves) > MAX_CURVES and len(keys) > 1
    with _style():
        mfig, axes = _panels(len(keys) if split else 1, height=4.5)
        styles = ["-", "--", "-.", ":"]
        lo, hi = math.inf, 0.0
        for (scheme, fk), parts in sorted(curves.items(), key=lambda kv: order.get(kv[0][0], 99)):
            ax = axes[keys.index(fk)] if split else axes[0]
            # Every seed pooled: the values sorted, each with its weight (1 a response, a
            # bin's count of packets).
            vals = np.concatenate([v for v, _ in parts])
            wts = np.concatenate([w for _, w in parts])
            idx = np.argsort(vals, kind="stable")
            x, w = vals[idx], wts[idx]
            n = float(w.sum())
            x, p = cdf_steps(x, np.cumsum(w) / n)
            sub = "" if split else _factor_text(out, fk, set())
            count = f"n = {n:.0f}" + (" packets" if delay else "")
            label = f"{scheme}{', ' + sub if sub else ''}" + ("" if split else f" ({count})")
            ls = "-" if split else styles[keys.index(fk) % len(styles)]
            colour = _colour(out, scheme)
            if log_x:
                # A log axis has no 0: the curve starts at the first value above 0 (delays of
                # 0, an empty queue, sit in the bin below 1 ns).
                keep = x > (1e-5 if delay else 0.0)
                if keep.any():
                    lo = min(lo, float(x[keep][0]))
            hi = max(hi, float(x[-1]))
            if tail:
                # P(X > x) just after each value; the last point (0) cannot be drawn.
                y = 1.0 - p
                keep = y > 1e-12
                ax.step(x[keep], y[keep], where="post", color=colour, ls=ls, label=label)
            else:
                end = max(x_max or 0.0, float(x[-1]))
                xs = np.concatenate(([0.0], x, [end]))
                ys = np.concatenate(([0.0], p, [1.0]))
                ax.step(xs, ys, where="post", color=colour, ls=ls, label=label)
        right = x_max if x_max is not None else hi * 1.02
        for i, ax in enumerate(axes):
            if log_x:
                ax.set_xscale("log")
                left = lo if math.isfinite(lo) else right / 1000
                ax.set_xlim(min(left, right / 10), right)
            else:
                ax.set_xlim(0, right)
            ax.set_xlabel(unit)
            if tail:
                ax.set_yscale("log")
                ax.set_ylabel(f"P({unit.split(' (')[0]} > x)")
            else:
                ax.set_ylim(0, 1)
                ax.set_ylabel("cumulative probability")
            if split:
                ax.set_title(_factor_text(out, keys[i], set()), fontsize=9)
        _legend(mfig, axes, "best")
        if split:
            mfig.suptitle(fig.title or fig.name, x=0.01, ha="left", fontsize=11)
        else:
            axes[0].set_title(fig.title or fig.name)
        return _save(mfig, stem)


def interval_samples(
    q_t: F64, q_bytes: F64, departed: F64, start: float, end: float, interval: float
) -> tuple[F64, F64]:
    """Per interval of ``interval`` s from ``start`` (whole intervals before ``end``): the mean
    queueing delay in s, estimated as the mean queue (bytes) over the bytes the link sent per
    second in the interval (Little's law), and that sending rate in bit/s. Intervals in which
    the link sent nothing are left out."""
    delays: list[float] = []
    rates: list[float] = []
    n = int((end - start) / interval + 1e-9)
    for i in range(n):
        a, b = start + i * interval, start + (i + 1) * interval
        sel = (q_t >= a) & (q_t < b)
        if sel.sum() < 2:
            continue
        ts, qs, ds = q_t[sel], q_bytes[sel], departed[sel]
        span = float(ts[-1] - ts[0])
        sent = float(ds[-1] - ds[0])
        if span <= 0 or sent <= 0:
            continue
        rate = sent / span  # bytes per second
        delays.append(float(np.mean(qs)) / rate)
        rates.append(rate * 8)
    return np.asarray(delays, dtype=np.float64), np.asarray(rates, dtype=np.float64)


def sigma_ellipse(x: F64, y: F64, n: int = 100) -> tuple[F64, F64]:
    """The one-sigma contour of the maximum-likelihood 2-D Gaussian of the samples (x, y): the
    mean plus the unit circle scaled by the square roots of the covariance's eigenvalues along
    its eigenvectors (RFC 7928 section 2.7)."""
    mx, my = float(np.mean(x)), float(np.mean(y))
    cov = np.cov(np.vstack([x, y]), bias=True)
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0.0, None)
    t = np.linspace(0, 2 * math.pi, n)
    circle = np.vstack([np.cos(t), np.sin(t)])
    pts = vecs @ (np.sqrt(vals)[:, None] * circle)
    return mx + pts[0], my + pts[1]


def ellipse(out: Output, fig: Figure, stem: Path) -> list[Path]:
    """Queueing delay against goodput (RFC 7928 section 2.7): per scheme (and setting of the
    factors the figure leaves free), the samples of every interval of ``interval_s`` of every
    seed in the phase, a dot at their mean and the one-sigma ellipse. Goodput per interval is
    the link's sending rate scaled by the point's goodput (TCP and UDP payload delivered) /
    throughput over the phase (the payload share of what the link carried)."""
    from aqmlab.report.metrics import _summary_value, goodput_all

    exp = out.experiment
    interval = float(fig.get("interval_s", 1.0))
    phase = str(fig.get("phase", ALL))
    fixed = _fixed_factors(out, fig)
    samples: dict[tuple[str, tuple[int | None, ...]], list[tuple[F64, F64]]] = {}
    points: dict[str, PointData] = {}
    for r in out.rows:
        if r.phase != phase or not r.ok or not _matches(out, r, fixed):
            continue
        try:
            p = PointData(out.point_dir(r.id))
            q = p.queue(None)
            good = goodput_all(p.summary_entry(r))
            thr = _summary_value(out, r, "bottleneck.throughput_bps", points)
        except MetricError as e:
            out.warn(f"figure {fig.name}: point {r.id}: {e}")
            continue
        share = good / thr if thr > 0 else math.nan
        d, rate = interval_samples(
            np.asarray(q.column("time_s").to_numpy(), dtype=np.float64),
            np.asarray(q.column("queue_bytes").to_numpy(), dtype=np.float64),
            np.asarray(q.column("departed_bytes").to_numpy(), dtype=np.float64),
            r.start_s,
            r.end_s,
            interval,
        )
        if len(d) and math.isfinite(share):
            samples.setdefault((r.scheme, out.factor_key(r)), []).append(
                (d * 1e3, rate * share / 1e6)
            )
    if not samples:
        raise FigureError("no queue samples in any completed point")
    order = {s: i for i, s in enumerate(exp.schemes)}
    keys = sorted({k for _, k in samples}, key=_kkey)
    with _style():
        # Each panel its own scales: a setting's delays may be ten times another's.
        mfig, axes = _panels(len(keys), height=4.5, share=False)
        for (scheme, fk), parts in sorted(samples.items(), key=lambda kv: order.get(kv[0][0], 99)):
            ax = axes[keys.index(fk)]
            x = np.concatenate([a for a, _ in parts])
            y = np.concatenate([b for _, b in parts])
            colour = _colour(out, scheme)
            # Past the palette's ten colours a scheme differs by its marker and line.
            k = order.get(scheme, 0) // len(PALETTE)
            ax.plot([float(np.mean(x))], [float(np.mean(y))], "osD^"[k % 4], color=colour,
                    ms=5, label=scheme)  # fmt: skip
            if len(x) >= 2:
                ex, ey = sigma_ellipse(x, y)
                ax.plot(ex, ey, color=colour, lw=1.0, ls=("-", "--", ":", "-.")[k % 4])
        for i, ax in enumerate(axes):
            ax.set_xlabel("queueing delay (ms)")
            ax.set_ylabel("goodput (Mb/s)")
            if len(keys) > 1:
                ax.set_title(_factor_text(out, keys[i], set()), fontsize=9)
        # Better is up and to the right, as on the RFC's plane.
        for ax in axes:
            ax.invert_xaxis()
        seen: dict[str, Any] = {}
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                seen.setdefault(lab, h)
        mfig.legend(list(seen.values()), list(seen), loc="outside right upper")
        title = fig.title or fig.name
        if len(keys) > 1:
            mfig.suptitle(title, x=0.01, ha="left", fontsize=11)
        else:
            axes[0].set_title(title)
        return _save(mfig, stem)


#: What a ``cdf`` figure draws: web response times, or the queueing delay of the packets.
CDF_OF = ("responses", "delay")

KINDS = ("timeseries", "metric_vs_factor", "phase_bars", "cdf", "ellipse")


def draw(out: Output, fig: Figure, folder: Path, cells: dict[Any, Cell]) -> list[Path]:
    """Draw one figure into ``folder`` as ``<name>.png`` and ``<name>.svg``; raises
    :class:`FigureError` when it cannot be drawn."""
    stem = folder / fig.name
    if fig.kind == "timeseries":
        return timeseries(out, fig, stem)
    if fig.kind == "metric_vs_factor":
        return metric_vs_factor(out, fig, stem, cells)
    if fig.kind == "phase_bars":
        return phase_bars(out, fig, stem, cells)
    if fig.kind == "cdf":
        return cdf(out, fig, stem)
    if fig.kind == "ellipse":
        return ellipse(out, fig, stem)
    raise FigureError(f"kind {fig.kind!r} is not one of {', '.join(KINDS)}")
