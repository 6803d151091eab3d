"""Summary tables for the terminal (rich)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.table import Table

__all__ = ["OPTIONAL_ROWS", "ROWS", "summary_table"]

Fmt = Callable[[Any], str]


def _int(x: Any) -> str:
    return f"{int(x):,}"


def _f(digits: int) -> Fmt:
    return lambda x: f"{float(x):.{digits}f}"


def _mbps(x: Any) -> str:
    return f"{float(x) / 1e6:.3f}"


def _ms(x: Any) -> str:
    return f"{float(x) * 1e3:.2f}"


def _pct(x: Any) -> str:
    return f"{float(x) * 100:.3f}"


#: (label, section, key, format) of every row of the summary table.
ROWS: list[tuple[str, str | None, str, Fmt]] = [
    ("duration (s)", None, "duration_s", _f(1)),
    ("measured from (s)", None, "measure_start_s", _f(1)),
    ("seed", None, "seed", str),
    ("events", None, "events", _int),
    ("wall time (s)", None, "wall_time_s", _f(2)),
    ("utilization", "bottleneck", "utilization", _f(4)),
    ("throughput (Mb/s)", "bottleneck", "throughput_bps", _mbps),
    ("loss rate (%)", "bottleneck", "loss_rate", _pct),
    ("arrivals", "bottleneck", "arrivals", _int),
    ("drops early", "bottleneck", "drops_early", _int),
    ("drops forced", "bottleneck", "drops_forced", _int),
    ("drops overflow", "bottleneck", "drops_overflow", _int),
    ("marks", "bottleneck", "marks", _int),
    ("queue mean (pkts)", "bottleneck", "queue_mean_pkts", _f(2)),
    ("queue std (pkts)", "bottleneck", "queue_std_pkts", _f(2)),
    ("queue window std (pkts)", "bottleneck", "queue_window_std_mean_pkts", _f(2)),
    ("queuing delay (ms)", "bottleneck", "queuing_delay_mean_s", _ms),
    ("queuing delay p50 (ms)", "bottleneck", "queuing_delay_p50_s", _ms),
    ("queuing delay p90 (ms)", "bottleneck", "queuing_delay_p90_s", _ms),
    ("queuing delay p99 (ms)", "bottleneck", "queuing_delay_p99_s", _ms),
    ("queuing delay max (ms)", "bottleneck", "queuing_delay_max_s", _ms),
    ("flows (forward)", "flows", "count", _int),
    ("goodput total (Mb/s)", "flows", "goodput_bps_total", _mbps),
    ("Jain fairness", "flows", "jain_fairness", _f(4)),
    ("retransmits", "flows", "retransmits", _int),
    ("timeouts", "flows", "timeouts", _int),
]

#: Rows shown only when a run has a figure other than 0: the loss recovery's
#: counters of ``tcp.sack``, ``tcp.rack``, ``tcp.undo`` and ``tcp.dsack``.
OPTIONAL_ROWS: list[tuple[str, str | None, str, Fmt]] = [
    ("SACK recoveries", "flows", "sack_recoveries", _int),
    ("RACK detections", "flows", "rack_detections", _int),
    ("TLP probes", "flows", "tlp_probes", _int),
    ("timeouts undone", "flows", "timeouts_undone", _int),
    ("D-SACKs", "flows", "dsacks", _int),
    ("cuts undone by D-SACK", "flows", "dsack_undos", _int),
    ("reordering seen", "flows", "reorderings", _int),
]


def _get(summary: Mapping[str, Any], section: str | None, key: str) -> Any:
    node = summary if section is None else summary.get(section, {})
    return node.get(key)


def summary_table(runs: Sequence[tuple[str, Mapping[str, Any]]], title: str = "") -> Table:
    """A table with one row per figure and one column per run."""
    t = Table(title=title or None, title_justify="left")
    t.add_column("", style="bold")
    for label, _ in runs:
        t.add_column(label, justify="right")
    section_seen: str | None = ""
    shown = [r for r in OPTIONAL_ROWS if any(_get(s, r[1], r[2]) for _, s in runs)]
    for label, section, key, fmt in ROWS + shown:
        if section != section_seen:
            section_seen = section
            if section is not None:
                t.add_section()
                t.add_row(f"[dim]{section}[/dim]", *[""] * len(runs))
        cells = []
        for _, summary in runs:
            v = _get(summary, section, key)
            cells.append("-" if v is None else fmt(v))
        t.add_row(label, *cells)
    return t
