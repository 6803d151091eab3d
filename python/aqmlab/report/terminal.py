"""Summary tables for the terminal (rich)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich import box
from rich.table import Table

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "DUAL_QUEUE_ROWS",
    "OPTIONAL_ROWS",
    "ROWS",
    "UDP_KINDS",
    "VARIANTS",
    "group_variant",
    "groups_table",
    "print_run",
    "shown_rows",
    "summary_table",
]

Fmt = Callable[[Any], str]

#: How a variant is written (the terminal's tables, `compare`'s set-up, the plots' legends).
VARIANTS = {
    "newreno": "NewReno",
    "reno": "Reno",
    "cubic": "CUBIC",
    "dctcp": "DCTCP",
    "bbr": "BBR",
    "prague": "Prague",
    "ledbat": "LEDBAT",
}


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

#: The two queues of a dual-queue scheme (DualPI2), shown after the bottleneck's delays when a
#: run has them (a run through any other scheme has no such figures).
DUAL_QUEUE_ROWS: list[tuple[str, str | None, str, Fmt]] = [
    ("L queue delay mean (ms)", "bottleneck", "l_queue_delay_mean_s", _ms),
    ("L queue delay p99 (ms)", "bottleneck", "l_queue_delay_p99_s", _ms),
    ("C queue delay mean (ms)", "bottleneck", "c_queue_delay_mean_s", _ms),
    ("C queue delay p99 (ms)", "bottleneck", "c_queue_delay_p99_s", _ms),
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
    node = summary if section is None else summary.get(section) or {}
    return node.get(key)


def shown_rows(
    summaries: Sequence[Mapping[str, Any]],
) -> list[tuple[str, str | None, str, Fmt]]:
    """The rows a table of ``summaries`` shows: :data:`ROWS`, the dual queue's after the
    bottleneck's delays where some summary has them, and the :data:`OPTIONAL_ROWS` some
    summary counts."""
    dual = [r for r in DUAL_QUEUE_ROWS if any(_get(s, r[1], r[2]) is not None for s in summaries)]
    counted = [r for r in OPTIONAL_ROWS if any(_get(s, r[1], r[2]) for s in summaries)]
    after = next(i for i, r in enumerate(ROWS) if r[2] == "queuing_delay_max_s") + 1
    return ROWS[:after] + dual + ROWS[after:] + counted


def summary_table(runs: Sequence[tuple[str, Mapping[str, Any]]], title: str = "") -> Table:
    """A table with one row per figure and one column per run."""
    t = Table(title=title or None, title_justify="left")
    t.add_column("", style="bold")
    for label, _ in runs:
        t.add_column(label, justify="right")
    section_seen: str | None = ""
    for label, section, key, fmt in shown_rows([s for _, s in runs]):
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


#: The traffic kinds whose senders are not TCP.
UDP_KINDS = ("cbr", "udp-onoff")


def group_variant(scenario: Mapping[str, Any], group: Mapping[str, Any]) -> str | None:
    """A traffic group's congestion control (``tcp.variant``'s key: the group's own, else the
    run's); ``None`` for a group whose sender is not TCP (UDP kinds, ``ping``)."""
    if group.get("kind", "bulk") in (*UDP_KINDS, "ping"):
        return None
    tcp = scenario.get("tcp") or {}
    return str(group.get("variant") or tcp.get("variant", "newreno"))


def _cc(scenario: Mapping[str, Any], group: Mapping[str, Any], sender: str | None) -> str:
    """A traffic group's sender as the groups' table names it: the congestion control
    (``sender`` where one names every TCP group's), and the ECN codepoint its data carries
    when ECN-capable; ``UDP`` for unresponsive kinds."""
    variant = group_variant(scenario, group)
    if variant is None:
        return "UDP"
    tcp = scenario.get("tcp") or {}
    name = sender or VARIANTS.get(variant, variant)
    if not group.get("ecn", tcp.get("ecn", False)):
        return name
    # Prague sends ECT(1) unless told otherwise (docs/scenario.md, `ecn_codepoint`).
    default = "ect1" if variant == "prague" else tcp.get("ecn_codepoint", "ect0")
    codepoint = group.get("ecn_codepoint", default)
    return f"{name} {'ECT(1)' if codepoint == 'ect1' else 'ECN'}"


def groups_table(
    scenario: Mapping[str, Any], flows: pa.Table, sender: str | None = None
) -> Table | None:
    """The figures of each traffic group of one run, numbered in the file's order
    (``flows.parquet`` summed or averaged over the group's flows): its sender, flows,
    goodput, share of its direction's goodput, mean RTT (the flows' means averaged),
    retransmissions and marks seen; the direction (``fwd``, ``rev``) where groups run both
    ways. ``sender`` names every TCP group's congestion control where the scenario's does not
    (the testbed's kernel, ``cubic (kernel)``); a figure the run has no column for, and a UDP
    group's retransmissions, read ``-``. ``None`` where the run has fewer than two groups to
    set side by side (``ping`` groups, probes, are left out as in the summary)."""
    import pyarrow.compute as pc

    if flows.num_rows == 0 or not {"flow", "group", "direction"} <= set(flows.column_names):
        return None
    if "kind" in flows.column_names:
        flows = flows.filter(pc.not_equal(flows["kind"], "ping"))
    sums = [c for c in ("goodput_bps", "retransmits", "marks_seen") if c in flows.column_names]
    aggs = [("flow", "count")] + [(c, "sum") for c in sums]
    if "rtt_mean_s" in flows.column_names:
        # A flow without an RTT sample (NaN) stays out of its group's mean.
        rtt = flows["rtt_mean_s"]
        flows = flows.set_column(
            flows.column_names.index("rtt_mean_s"),
            "rtt_mean_s",
            pc.if_else(pc.is_nan(rtt), None, rtt),
        )
        aggs.append(("rtt_mean_s", "mean"))
    agg = flows.group_by(["group", "direction"]).aggregate(aggs)
    rows = sorted(agg.to_pylist(), key=lambda r: (r["group"], r["direction"]))
    if len(rows) < 2:
        return None
    total: dict[str, float] = {}
    for r in rows:
        total[r["direction"]] = total.get(r["direction"], 0.0) + float(
            r.get("goodput_bps_sum") or 0
        )
    traffic = list(scenario.get("traffic") or [])
    both = len(total) > 1
    t = Table(
        title="traffic groups",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    heads = ["group", "kind", "sender"] + (["dir"] if both else [])
    for name in heads:
        t.add_column(name)
    for name in ("flows", "Mb/s", "share %", "RTT ms", "retx", "marks"):
        t.add_column(name, justify="right", no_wrap=True)
    for r in rows:
        g = int(r["group"])
        spec = traffic[g] if g < len(traffic) else {}
        goodput = r.get("goodput_bps_sum")
        whole = total[r["direction"]]
        rtt = r.get("rtt_mean_s_mean")
        udp = spec.get("kind") in UDP_KINDS
        cells = [str(g), str(spec.get("kind", "-")), _cc(scenario, spec, sender)]
        cells += [str(r["direction"])[:3]] if both else []
        cells += [
            _int(r["flow_count"]),
            "-" if goodput is None else _mbps(goodput),
            "-" if goodput is None or whole <= 0 else f"{100 * float(goodput) / whole:.1f}",
            "-" if rtt is None else _ms(rtt),
            "-" if udp or r.get("retransmits_sum") is None else _int(r["retransmits_sum"]),
            "-" if r.get("marks_seen_sum") is None else _int(r["marks_seen_sum"]),
        ]
        t.add_row(*cells)
    return t


def print_run(label: str, result: Any, sender: str | None = None) -> None:
    """What ``aqmlab run`` and ``aqmlab testbed`` print of a run: its summary and, with two
    traffic groups or more, :func:`groups_table` (``sender``: as there)."""
    from rich.console import Console

    console = Console()
    console.print(summary_table([(label, result.summary)]))
    groups = groups_table(result.scenario, result.flows, sender)
    if groups is not None:
        console.print(groups)
