"""How runs and sweeps show themselves in Jupyter (``_repr_html_``).

A run shows a line saying what ran, a table of its monitored links' figures (the bottleneck
first, one column per link), its flows' figures, and a small picture of the bottleneck's queue
(an inline PNG, 480 x 144 px). A sweep shows its folder and counts, one row per point (scheme,
factors, seed and the bottleneck's figures; at most :data:`MAX_ROWS`), and the queues of its
first points on one small axes. Both are plain HTML (no script, no style sheet), drawn with
matplotlib's Agg in memory: nothing is written to disk.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from aqmlab.api import RunResult

__all__ = ["MAX_QUEUES", "MAX_ROWS", "png_img", "run_html", "sweep_html"]

#: Most rows of a sweep's table (the rest counted below it).
MAX_ROWS = 30
#: Most points whose queues a sweep's picture draws.
MAX_QUEUES = 6
#: The inline picture: inches at 80 dpi.
PICTURE_IN = (6.0, 1.8)
PICTURE_DPI = 80


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan


def _fmt(v: float, digits: int = 3) -> str:
    if not math.isfinite(v):
        return "-"
    if v != 0 and abs(v) < 10 ** -(digits - 1):
        return f"{v:.{digits - 1}e}"
    return f"{v:,.0f}" if abs(v) >= 10**digits else f"{v:.{digits}g}"


#: The link rows of a run's table: (label, summary key, scale to the unit shown).
LINK_ROWS: tuple[tuple[str, str, float], ...] = (
    ("utilization (%)", "utilization", 100.0),
    ("throughput (Mb/s)", "throughput_bps", 1e-6),
    ("mean queue (packets)", "queue_mean_pkts", 1.0),
    ("queue std (packets)", "queue_std_pkts", 1.0),
    ("queueing delay mean (ms)", "queuing_delay_mean_s", 1e3),
    ("queueing delay p50 (ms)", "queuing_delay_p50_s", 1e3),
    ("queueing delay p99 (ms)", "queuing_delay_p99_s", 1e3),
    ("loss rate (%)", "loss_rate", 100.0),
    ("marks", "marks", 1.0),
)
#: The flow rows: (label, summary key under ``flows``, scale).
FLOW_ROWS: tuple[tuple[str, str, float], ...] = (
    ("forward flows", "count", 1.0),
    ("goodput, all (Mb/s)", "goodput_bps_total", 1e-6),
    ("Jain's fairness index", "jain_fairness", 1.0),
    ("retransmits", "retransmits", 1.0),
    ("timeouts", "timeouts", 1.0),
)


def _drops(figs: Mapping[str, Any]) -> float:
    return sum(_num(figs.get(k, 0)) for k in ("drops_early", "drops_forced", "drops_overflow"))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td style="text-align:{"left" if i == 0 else "right"}">{html.escape(c)}</td>'
            for i, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def png_img(fig: Figure, alt: str) -> str:
    """``fig`` as an ``<img>`` with its PNG inline (base64)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PICTURE_DPI)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"/>'


def _small_axes() -> tuple[Figure, Any]:
    from aqmlab.plot import _figure

    fig = _figure(figsize=PICTURE_IN, layout="constrained")
    ax = fig.subplots()
    ax.set_xlabel("time (s)", fontsize=8)
    ax.set_ylabel("queue (packets)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(True, lw=0.3)
    return fig, ax


def _queue_xy(r: RunResult) -> tuple[Any, Any]:
    from aqmlab.plot import _first_link

    q = _first_link(r.queue)
    if q.num_rows == 0:
        return np.zeros(0), np.zeros(0)
    t = np.asarray(q.column("time_s").to_numpy(), dtype=float)
    y = np.asarray(q.column("queue_pkts").to_numpy(), dtype=float)
    return t, y


def _what_ran(sc: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
    from aqmlab.compare import tcp_text

    topo = str((sc.get("topology") or {}).get("kind", "?"))
    aqm = str((sc.get("aqm") or {}).get("kind", "?"))
    start, end = _num(summary.get("measure_start_s")), _num(summary.get("duration_s"))
    return (
        f"{topo}, AQM {aqm}, TCP {tcp_text(sc)}; {_fmt(end)} s, measured from {_fmt(start)} s; "
        f"seed {summary.get('seed', '?')}"
    )


def run_html(r: RunResult) -> str:
    """The HTML of a run (see the module's documentation)."""
    s = r.summary
    links = [x for x in s.get("links") or [] if isinstance(x, Mapping)]
    if not links and isinstance(s.get("bottleneck"), Mapping):
        links = [{"name": "bottleneck", **s["bottleneck"]}]
    rows = [
        [label, *(_fmt(_num(x.get(key)) * scale) for x in links)] for label, key, scale in LINK_ROWS
    ]
    rows.insert(-1, ["drops", *(_fmt(_drops(x)) for x in links)])
    parts = [
        '<div class="aqmlab-run">',
        f"<p><b>aqmlab run</b>: {html.escape(_what_ran(r.scenario, s))}"
        + (f"<br/>folder <code>{html.escape(str(r.folder))}</code>" if r.folder else "")
        + "</p>",
        _table(["link", *(str(x.get("name", "?")) for x in links)], rows, "aqmlab-links"),
    ]
    flows = s.get("flows")
    if isinstance(flows, Mapping):
        frows = [[label, _fmt(_num(flows.get(k)) * sc)] for label, k, sc in FLOW_ROWS]
        parts.append(_table(["flows", "value"], frows, "aqmlab-flows"))
    t, y = _queue_xy(r)
    if len(t):
        fig, ax = _small_axes()
        ax.plot(t, y, lw=0.5, color="tab:blue")
        start = _num(s.get("measure_start_s"))
        if start > 0:
            ax.axvline(start, color="0.5", lw=0.8, ls="--")
        ax.set_ylim(bottom=0)
        parts.append(png_img(fig, f"queue of {links[0].get('name', 'the bottleneck')}"))
    parts.append("</div>")
    return "".join(parts)


def sweep_html(out: Path, counts: str) -> str:
    """The HTML of the sweep folder ``out`` (see the module's documentation); ``counts`` is a
    line about the sweep as run (points run, skipped, failed)."""
    import pyarrow.parquet as pq

    from aqmlab.experiments.store import SUMMARY_PARQUET, TAIL_COLUMNS
    from aqmlab.folders import SelectionError, expand
    from aqmlab.results import ResultsError, load_run

    parts = [
        '<div class="aqmlab-sweep">',
        f"<p><b>aqmlab sweep</b> <code>{html.escape(str(out))}</code>: {html.escape(counts)}</p>",
    ]
    path = out / SUMMARY_PARQUET
    if path.is_file():
        t = pq.read_table(path)
        names = t.column_names
        factors = names[names.index("scheme") + 1 : names.index(TAIL_COLUMNS[0])]
        figures: tuple[tuple[str, str, float], ...] = (
            ("utilization (%)", "bottleneck.utilization", 100.0),
            ("mean queue (pkts)", "bottleneck.queue_mean_pkts", 1.0),
            ("delay p99 (ms)", "bottleneck.queuing_delay_p99_s", 1e3),
            ("loss rate (%)", "bottleneck.loss_rate", 100.0),
            ("goodput (Mb/s)", "flows.goodput_bps_total", 1e-6),
        )
        figures = tuple(f for f in figures if f[1] in names)
        recs = [x for x in t.to_pylist() if x.get("phase") == "all"]
        rows = [
            [
                str(x.get("scheme")),
                *(str(x.get(f)) for f in factors),
                str(x.get("seed")),
                str(x.get("status")),
                *(_fmt(_num(x.get(key)) * scale) for _, key, scale in figures),
            ]
            for x in recs[:MAX_ROWS]
        ]
        header = ["scheme", *factors, "seed", "status", *(label for label, _, _ in figures)]
        parts.append(_table(header, rows, "aqmlab-points"))
        if len(recs) > MAX_ROWS:
            parts.append(f"<p>... and {len(recs) - MAX_ROWS} more points</p>")
    else:
        parts.append("<p>no summary.parquet yet</p>")
    try:
        chosen, _ = expand([out])
    except SelectionError:
        chosen = []
    if chosen:
        fig, ax = _small_axes()
        for sel in chosen[:MAX_QUEUES]:
            try:
                qt, qy = _queue_xy(load_run(sel.path))
            except ResultsError:
                continue
            ax.plot(qt, qy, lw=0.5, label=sel.label)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        more = f" (the first {MAX_QUEUES} of {len(chosen)})" if len(chosen) > MAX_QUEUES else ""
        parts.append(png_img(fig, f"queues of the points{more}"))
        if more:
            parts.append(f"<p>queues of the first {MAX_QUEUES} of {len(chosen)} points</p>")
    parts.append("</div>")
    return "".join(parts)
