"""An experiment's ``[[metric]]`` entries, evaluated per (point, phase).

A metric is either ``summary = "dotted.path"``: the column of that name in ``summary.parquet``
(the phase's row holds the phase's own figures), or ``derived = NAME`` with ``args``: a function
of the point's result folder and the phase's interval [start, end] (seconds), from the registry
:data:`DERIVED` below. Every value is in the run's own units; the metric's ``scale`` turns it
into display units afterwards.

Missing data (a failed point, a missing column or file, no samples in the interval) gives NaN
and a warning in the output's ``warnings``, never an exception.

A periodic phase (``metrics.phases`` entry ``{from, to, every, length, offset}``) is measured
over its windows only: ``summary`` metrics are the engine's figures of its windows; the
derived metrics that read a table over [start, end] (the queue samples, the web responses, the
drops of ``loss_sync``) keep the rows whose time lies in a window; ``goodput_bytes`` and
``link_bytes`` multiply by the time the windows measured (``measured_s``); those of a
``[[traffic]]`` group (``group_*``, ``goodput_ratio``, ``loss_ratio``) read the measurement
interval whatever the phase; ``queue_std_mean``, ``param_mean`` and ``param_final`` are not
defined over windows (NaN and a warning).

Derived metrics (``args`` in brackets, with defaults):

``queue_mean`` [unit = "pkts", link]
    Mean of the queue samples (``queue.parquet``, every ``metrics.sample_interval``) with
    start <= t < end. ``unit``: ``"pkts"`` (packets), ``"bytes"``, or ``"mean_pkts"``: bytes
    divided by the mean packet size (``args.mean_pkt_size``, else the scenario's
    ``aqm.mean_pkt_size``, else ``tcp.packet_size``), the unit in which the thesis
    (``003_...``) compares byte-mode queues. ``link``: a monitored link's name (default the
    first, the bottleneck). The samples are a sample-and-hold view of the queue, so this is
    its time-weighted mean at the sampling resolution (``summary.json``'s
    ``queue_mean_pkts`` is exact over every change, over the measurement interval).
``queue_std`` [unit, link]
    Standard deviation of the same samples.
``queue_std_mean`` [window_s = 200, unit, link]
    Mean of the per-window standard deviations of the samples over consecutive windows of
    ``window_s`` from start (thesis section 5.5.1's "average queue deviation": the mean of the
    standard deviations over each 200 s). A partial last window counts if it is at least half a
    window long, or if it is the only one (as ``summary.json``'s
    ``queue_window_std_mean_pkts``).
``param_mean`` [name]
    Time-weighted mean over [start, end] of the AQM's adapted parameter ``name`` from
    ``params.parquet`` (each recorded value holds until the next one). For a scheme that does
    not record ``name`` (a static RED's ``max_p``), the number ``aqm.<name>`` of the resolved
    scenario, which holds the whole run.
``param_final`` [name]
    The value of ``name`` in force at ``end`` (the last recorded at or before ``end``).
``response_within`` [t_s]
    Share (0..1) of the web responses that ended in [start, end] whose response time is
    <= ``t_s`` seconds (``responses.parquet``).
``response_quantile`` [q]
    Nearest-rank ``q``-quantile (0 < q <= 1) of the response times of the responses that ended
    in [start, end], seconds.
``completed_requests``
    Number of web responses that ended in [start, end].
``goodput_bytes``
    Payload bytes the forward flows delivered in order in [start, end]: the phase's
    ``flows.goodput_bps_total`` x (end - start) / 8 (for the whole interval the same figure of
    ``summary.json``; a periodic phase's ``measured_s`` in place of end - start).
``link_bytes``
    Bytes that started transmission on the bottleneck in [start, end]:
    ``bottleneck.throughput_bps`` x (end - start) / 8 (a periodic phase: x ``measured_s``).
``group_goodput`` [group]
    Mean goodput (bit/s) of the started flows of ``[[traffic]]`` group ``group``
    (``flows.parquet``'s ``goodput_bps``). ``flows.parquet`` covers the measurement interval,
    so the figure is that interval's whatever the phase.
``goodput_ratio`` [num, den]
    ``group_goodput`` of group ``num`` divided by that of group ``den`` (RFC 7928 section 6.3:
    the ratio of the two flows' average goodputs).
``group_jain`` [groups]
    Jain's index, (sum x)^2 / (n sum x^2), of the goodputs of the started flows of the
    ``[[traffic]]`` groups listed in ``groups`` (``flows.parquet``, over the measurement
    interval): the fairness among the long-lived flows of a mix, where the summary's
    ``flows.jain_fairness`` takes every forward TCP flow, short web transfers included.
``group_loss`` [group]
    Drop rate of ``[[traffic]]`` group ``group``: its started flows' data packets dropped in
    the network over the data packets they sent (first transmissions and retransmissions;
    ``flows.parquet``'s ``drops`` and ``data_sent``, over the measurement interval). RFC 7928
    section 6.3 asks it per category of flows.
``loss_ratio`` [num, den]
    ``group_loss`` of group ``num`` over that of group ``den`` (RFC 7928 section 4.4: whether
    an AQM drops the flows of small packets less often than those of large ones, RFC 7141).
``goodput_all``
    Payload rate (bit/s) delivered to the receivers by every forward flow, TCP and UDP: the
    phase's ``flows.goodput_bps_total`` plus ``udp.delivered_bps`` where there are UDP flows.
``summary_sum`` [paths]
    Sum of the numbers at the dotted ``paths`` (a list, each as a ``summary`` metric's path) of
    the phase's summary entry: a traffic group's queueing delay over two links in sequence
    (``links.lm.groups.0.delay_mean_s`` + ``links.mr.groups.0.delay_mean_s``, RFC 7928 section
    10.2), or the drops of two links.
``response_mean`` [group]
    Mean response time (s) of the web responses that ended in [start, end] (RFC 7928
    section 2.1: the flow completion time of the short transfers); with ``group``, those of
    ``[[traffic]]`` group ``group`` only (``responses.parquet``'s ``group``).
``loss_sync`` [gap_s, link]
    Loss synchronisation (RFC 7928 section 2.4; the "global synchronisation ratio" of Hassayoun
    and Ros): the data drops of forward TCP flows at the link (``events.parquet``; needs
    ``metrics.trace = true``) are cut into loss events wherever two drops are more than
    ``gap_s`` apart (default: the forward TCP flows' mean base RTT, one round trip, the time a
    sender takes to react); each event's ratio is the number of distinct flows that lost a
    packet in it over the number of forward TCP flows started by its first drop; the value is
    the mean ratio over the events, of the drops in [start, end) only (drops that never pause
    for ``gap_s`` make the interval one event). 1: every loss event hits every flow (global
    synchronisation); 1 / n: each event hits one flow of n.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from aqmlab.ecn import TCP_KINDS
from aqmlab.report.data import ALL, Metric, Output, Row

__all__ = ["DERIVED", "Derived", "MetricError", "PointData", "evaluate", "evaluate_all"]

F64 = npt.NDArray[np.float64]


class MetricError(Exception):
    """A metric cannot be computed for one point and phase (becomes NaN and a warning)."""


class PointData:
    """A point's result folder, its files read on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tables: dict[str, pa.Table] = {}
        self._json: dict[str, Any] = {}

    def table(self, name: str) -> pa.Table:
        if name not in self._tables:
            p = self.path / f"{name}.parquet"
            if not p.is_file():
                raise MetricError(f"{p}: missing")
            try:
                self._tables[name] = pq.read_table(p)
            except (OSError, ValueError) as e:
                raise MetricError(f"{p}: cannot read: {e}") from e
        return self._tables[name]

    def json(self, name: str) -> Any:
        if name not in self._json:
            p = self.path / f"{name}.json"
            try:
                self._json[name] = json.loads(p.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise MetricError(f"{p}: cannot read: {e}") from e
        return self._json[name]

    @property
    def scenario(self) -> dict[str, Any]:
        man = self.json("manifest")
        sc = man.get("scenario") if isinstance(man, dict) else None
        return sc if isinstance(sc, dict) else {}

    def summary_entry(self, row: Row) -> dict[str, Any]:
        """summary.json, or its ``phases`` entry for a phase row."""
        s = self.json("summary")
        if row.phase == ALL or row.phase_index < 0:
            return dict(s)
        phases = s.get("phases") or []
        if row.phase_index >= len(phases):
            raise MetricError(f"{self.path}: summary.json has no phases[{row.phase_index}]")
        return dict(phases[row.phase_index])

    def queue(self, link: str | None) -> pa.Table:
        q = self.table("queue")
        if "link" in q.column_names and q.num_rows:
            name = link if link is not None else q.column("link")[0].as_py()
            q = q.filter(pc.equal(q.column("link"), name))
            if q.num_rows == 0:
                raise MetricError(f"queue.parquet has no link {link!r}")
        return q


def _col(t: pa.Table, name: str) -> F64:
    if name not in t.column_names:
        raise MetricError(f"no column {name!r} (has {', '.join(t.column_names)})")
    return np.asarray(t.column(name).to_numpy(zero_copy_only=False), dtype=np.float64)


def _mean_pkt_size(p: PointData, args: Mapping[str, Any]) -> float:
    if "mean_pkt_size" in args:
        return float(args["mean_pkt_size"])
    sc = p.scenario
    aqm = sc.get("aqm")
    tcp = sc.get("tcp")
    cands = (
        aqm.get("mean_pkt_size") if isinstance(aqm, dict) else None,
        tcp.get("packet_size") if isinstance(tcp, dict) else None,
    )
    for v in cands:
        if isinstance(v, (int, float)) and v > 0:
            return float(v)
    raise MetricError("no mean packet size: give args.mean_pkt_size")


@dataclass(frozen=True)
class Windows:
    """The windows of a periodic phase within its [start, end]: ``length`` seconds every
    ``every``, the first at start + ``offset``."""

    every: float
    length: float
    offset: float

    def mask(self, t: F64, start: float, end: float) -> npt.NDArray[np.bool_]:
        """Which of the times ``t`` lie in a window [w, w + length)."""
        first = start + self.offset
        inside: npt.NDArray[np.bool_] = (
            (t >= first) & (t < end) & (np.mod(t - first, self.every) < self.length)
        )
        return inside


def _in(
    t: F64, start: float, end: float, windows: Windows | None, closed: bool = False
) -> npt.NDArray[np.bool_]:
    """The times in [start, end) (``closed``: [start, end]), or in the windows."""
    if windows is not None:
        return windows.mask(t, start, end)
    inside: npt.NDArray[np.bool_] = (t >= start) & ((t <= end) if closed else (t < end))
    return inside


def _periodic(p: PointData, row: Row) -> Windows | None:
    """The windows of the row's phase if it is periodic."""
    if row.phase == ALL or row.phase_index < 0:
        return None
    e = p.summary_entry(row)
    if not isinstance(e.get("every_s"), int | float):
        return None
    return Windows(float(e["every_s"]), float(e["length_s"]), float(e.get("offset_s", 0.0)))


def queue_samples(
    p: PointData,
    start: float,
    end: float,
    args: Mapping[str, Any],
    windows: Windows | None = None,
) -> F64:
    """The queue samples with start <= t < end (or in the ``windows``) in ``args.unit``."""
    q = p.queue(args.get("link"))
    t = _col(q, "time_s")
    unit = str(args.get("unit", "pkts"))
    if unit == "pkts":
        v = _col(q, "queue_pkts")
    elif unit == "bytes":
        v = _col(q, "queue_bytes")
    elif unit == "mean_pkts":
        v = _col(q, "queue_bytes") / _mean_pkt_size(p, args)
    else:
        raise MetricError(f'args.unit = {unit!r}; allowed: "pkts", "bytes", "mean_pkts"')
    sel = _in(t, start, end, windows)
    if not sel.any():
        raise MetricError(f"no queue samples in [{start:g}, {end:g}) s")
    return v[sel]


def _queue_mean(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    return float(np.mean(queue_samples(p, start, end, args, windows)))


def _queue_std(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    return float(np.std(queue_samples(p, start, end, args, windows)))


def window_std_mean(t: F64, v: F64, start: float, end: float, window: float) -> float:
    """Mean over consecutive windows of ``window`` seconds from ``start`` of the standard
    deviation of the samples ``v`` (at times ``t``) in each window; a partial last window counts
    if it is at least half a window long or the only one. NaN without samples."""
    if not window > 0:
        raise MetricError(f"args.window_s = {window!r}; must be > 0")
    stds: list[float] = []
    w0 = start
    while w0 < end:
        w1 = min(w0 + window, end)
        full = w1 - w0 >= window * (1 - 1e-9)
        if full or w1 - w0 >= window / 2 or (not stds and w1 >= end):
            sel = (t >= w0) & (t < w1)
            if sel.any():
                stds.append(float(np.std(v[sel])))
        w0 += window
    return float(np.mean(stds)) if stds else math.nan


def _queue_std_mean(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    window = float(args.get("window_s", 200.0))
    q = p.queue(args.get("link"))
    t = _col(q, "time_s")
    v = queue_samples(p, -math.inf, math.inf, args)
    r = window_std_mean(t, v, start, end, window)
    if math.isnan(r):
        raise MetricError(f"no queue samples in [{start:g}, {end:g}) s")
    return r


def _param_series(p: PointData, args: Mapping[str, Any]) -> tuple[F64, F64]:
    name = args.get("name")
    if not isinstance(name, str):
        raise MetricError("args.name (the parameter's name) is required")
    t = p.table("params")
    if t.num_rows:
        t = t.filter(pc.equal(t.column("name"), name))
    if t.num_rows == 0:
        # A scheme that does not adapt it: its configured value holds the whole run.
        try:
            aqm = p.scenario.get("aqm")
        except MetricError:
            aqm = None
        v = aqm.get(name) if isinstance(aqm, dict) else None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return np.array([0.0]), np.array([float(v)])
        names = sorted(set(p.table("params").column("name").to_pylist()))
        has = f"it has {', '.join(names)}" if names else "it is empty"
        raise MetricError(
            f"params.parquet has no {name!r} ({has}) and the scenario's aqm has no number {name!r}"
        )
    ts, vs = _col(t, "time_s"), _col(t, "value")
    order = np.argsort(ts, kind="stable")
    return ts[order], vs[order]


def step_mean(ts: F64, vs: F64, start: float, end: float) -> float:
    """Time-weighted mean over [start, end] of the step function that takes value ``vs[i]``
    from ``ts[i]`` until the next time (before the first time: the first value)."""
    if not end > start:
        raise MetricError(f"empty interval [{start:g}, {end:g}]")
    # Breakpoints inside the interval, and the value in force at each piece's start.
    inside = (ts > start) & (ts < end)
    cuts = np.concatenate(([start], ts[inside], [end]))
    idx = np.searchsorted(ts, cuts[:-1], side="right") - 1
    vals = vs[np.clip(idx, 0, len(vs) - 1)]
    if np.all(vals == vals[0]):
        return float(vals[0])  # exact for a constant
    return float(np.sum(vals * np.diff(cuts)) / (end - start))


def _param_mean(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    ts, vs = _param_series(p, args)
    return step_mean(ts, vs, start, end)


def _param_final(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    ts, vs = _param_series(p, args)
    i = int(np.searchsorted(ts, end, side="right")) - 1
    return float(vs[max(i, 0)])


def _responses(
    p: PointData, start: float, end: float, group: Any = None, windows: Windows | None = None
) -> F64:
    t = p.table("responses")
    e = _col(t, "end_s")
    rt = _col(t, "response_time_s")
    sel = _in(e, start, end, windows, closed=True)
    if group is not None:
        sel &= _col(t, "group") == float(group)
    return rt[sel]


def _response_within(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    if "t_s" not in args:
        raise MetricError("args.t_s (seconds) is required")
    rt = _responses(p, start, end, windows=windows)
    if len(rt) == 0:
        raise MetricError(f"no web responses ended in [{start:g}, {end:g}] s")
    return float(np.mean(rt <= float(args["t_s"])))


def nearest_rank(x: F64, q: float) -> float:
    """The nearest-rank ``q``-quantile of ``x`` (the smallest value with at least a share q of
    the values at or below it)."""
    if not 0 < q <= 1:
        raise MetricError(f"args.q = {q!r}; must be in (0, 1]")
    s = np.sort(x)
    k = max(math.ceil(q * len(s)), 1)
    return float(s[k - 1])


def _response_quantile(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    if "q" not in args:
        raise MetricError("args.q (in (0, 1]) is required")
    rt = _responses(p, start, end, windows=windows)
    if len(rt) == 0:
        raise MetricError(f"no web responses ended in [{start:g}, {end:g}] s")
    return nearest_rank(rt, float(args["q"]))


def _completed(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    return float(len(_responses(p, start, end, windows=windows)))


def _entry_value(entry: Mapping[str, Any], path: str) -> float:
    """The number at dotted ``path`` of a summary entry; in a list (``links``) a step is an
    index or the ``name`` of an element (``links.bottleneck-rev.loss_rate``)."""
    node: Any = entry
    for k in path.split("."):
        if isinstance(node, list):
            named = [e for e in node if isinstance(e, dict) and e.get("name") == k]
            if named:
                node = named[0]
                continue
            if k.isdigit() and int(k) < len(node):
                node = node[int(k)]
                continue
            raise MetricError(f"summary.json has no {path!r}")
        if not isinstance(node, dict) or k not in node:
            raise MetricError(f"summary.json has no {path!r}")
        node = node[k]
    return float(node)


def _goodput_bytes(
    p: PointData, start: float, end: float, args: Mapping[str, Any], row: Row
) -> float:
    e = p.summary_entry(row)
    return _entry_value(e, "flows.goodput_bps_total") * _measured(e, start, end) / 8


def _link_bytes(p: PointData, start: float, end: float, args: Mapping[str, Any], row: Row) -> float:
    e = p.summary_entry(row)
    return _entry_value(e, "bottleneck.throughput_bps") * _measured(e, start, end) / 8


def _measured(entry: Mapping[str, Any], start: float, end: float) -> float:
    """The time a summary entry's rates are over: a periodic phase's ``measured_s``, else
    end - start."""
    m = entry.get("measured_s")
    return float(m) if isinstance(m, int | float) else end - start


def goodput_all(entry: Mapping[str, Any]) -> float:
    """``flows.goodput_bps_total`` + ``udp.delivered_bps`` (0 without UDP flows) of a summary
    entry."""
    udp = entry.get("udp")
    extra = 0.0
    if isinstance(udp, dict) and isinstance(udp.get("delivered_bps"), (int, float)):
        extra = float(udp["delivered_bps"])
    return _entry_value(entry, "flows.goodput_bps_total") + extra


def _goodput_all(
    p: PointData, start: float, end: float, args: Mapping[str, Any], row: Row
) -> float:
    return goodput_all(p.summary_entry(row))


def _summary_sum(
    p: PointData, start: float, end: float, args: Mapping[str, Any], row: Row
) -> float:
    paths = args.get("paths")
    if not isinstance(paths, list) or not paths or not all(isinstance(x, str) for x in paths):
        raise MetricError(
            f"summary_sum needs args.paths, a list of dotted summary paths (got {paths!r})"
        )
    e = p.summary_entry(row)
    return float(sum(_entry_value(e, x) for x in paths))


def _group_goodput(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    if "group" not in args:
        raise MetricError("group_goodput needs args.group (a [[traffic]] index)")
    f = p.table("flows")
    group = _col(f, "group")
    began = ~np.isnan(_col(f, "start_s"))
    sel = (group == float(args["group"])) & began
    if not sel.any():
        raise MetricError(f"flows.parquet has no started flow of group {args['group']}")
    return float(np.mean(_col(f, "goodput_bps")[sel]))


def _group_jain(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    groups = args.get("groups")
    if (
        not isinstance(groups, list)
        or not groups
        or not all(isinstance(g, int) and not isinstance(g, bool) for g in groups)
    ):
        raise MetricError(
            f"group_jain needs args.groups, a list of [[traffic]] indices (got {groups!r})"
        )
    f = p.table("flows")
    sel = np.isin(_col(f, "group"), [float(g) for g in groups]) & ~np.isnan(_col(f, "start_s"))
    if not sel.any():
        raise MetricError(f"flows.parquet has no started flow of groups {groups}")
    x = _col(f, "goodput_bps")[sel]
    squares = float(np.sum(x * x))
    if squares <= 0:
        raise MetricError(f"the flows of groups {groups} delivered nothing")
    return float(np.sum(x)) ** 2 / (len(x) * squares)


def _group_loss(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    if "group" not in args:
        raise MetricError("group_loss needs args.group (a [[traffic]] index)")
    f = p.table("flows")
    sel = (_col(f, "group") == float(args["group"])) & ~np.isnan(_col(f, "start_s"))
    if not sel.any():
        raise MetricError(f"flows.parquet has no started flow of group {args['group']}")
    sent = float(np.sum(_col(f, "data_sent")[sel]))
    if sent <= 0:
        raise MetricError(f"group {args['group']} sent no data")
    return float(np.sum(_col(f, "drops")[sel])) / sent


def _group_ratio(
    per_group: Callable[[PointData, float, float, Mapping[str, Any]], float],
    name: str,
    none: str,
    p: PointData,
    start: float,
    end: float,
    args: Mapping[str, Any],
) -> float:
    """``per_group`` of group ``args.num`` over that of group ``args.den`` (``none``: what a
    zero denominator means)."""
    if "num" not in args or "den" not in args:
        raise MetricError(f"{name} needs args.num and args.den (group indices)")
    den = per_group(p, start, end, {"group": args["den"]})
    if den <= 0:
        raise MetricError(f"group {args['den']} {none}")
    return per_group(p, start, end, {"group": args["num"]}) / den


def _loss_ratio(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    return _group_ratio(_group_loss, "loss_ratio", "lost nothing", p, start, end, args)


def _goodput_ratio(p: PointData, start: float, end: float, args: Mapping[str, Any]) -> float:
    return _group_ratio(_group_goodput, "goodput_ratio", "delivered nothing", p, start, end, args)


def _response_mean(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    group = args.get("group")
    r = _responses(p, start, end, group, windows)
    if len(r) == 0:
        of = "" if group is None else f" of group {group}"
        raise MetricError(f"no web response{of} ended in [{start:g}, {end:g}] s")
    return float(np.mean(r))


def loss_events(
    times: F64, flows: npt.NDArray[np.int64], gap: float
) -> list[tuple[float, set[int]]]:
    """The drops (time-ordered ``times`` and their ``flows``) cut into loss events where two
    consecutive drops are more than ``gap`` apart: (first drop's time, the flows hit)."""
    events: list[tuple[float, set[int]]] = []
    last = -math.inf
    for t, fl in zip(times.tolist(), flows.tolist(), strict=True):
        if t - last > gap or not events:
            events.append((t, set()))
        events[-1][1].add(int(fl))
        last = t
    return events


def _loss_sync(
    p: PointData, start: float, end: float, args: Mapping[str, Any], windows: Windows | None = None
) -> float:
    f = p.table("flows")
    kinds = f.column("kind").to_pylist()
    dirs = f.column("direction").to_pylist()
    starts = _col(f, "start_s")
    ids = f.column("flow").to_numpy().astype(np.int64)
    tcp = np.array([k in TCP_KINDS and d == "forward" for k, d in zip(kinds, dirs, strict=True)])
    if not tcp.any():
        raise MetricError("no forward TCP flow")
    gap = args.get("gap_s")
    if gap is None:
        rtt = _col(f, "base_rtt_s")[tcp & ~np.isnan(starts)]
        if len(rtt) == 0:
            raise MetricError("no forward TCP flow started")
        gap = float(np.mean(rtt))
    ev = p.table("events")
    if ev.num_rows == 0:
        man = p.scenario.get("metrics", {})
        if not (isinstance(man, dict) and man.get("trace")):
            raise MetricError("events.parquet is empty: loss_sync needs metrics.trace = true")
        return math.nan
    links = ev.column("link").to_pylist()
    name = args.get("link", links[0] if links else None)
    names = ev.column("event").to_pylist()
    packets = ev.column("packet").to_pylist()
    tcp_ids = set(ids[tcp].tolist())
    efl = ev.column("flow").to_numpy().astype(np.int64)
    keep = np.array(
        [
            ln == name and e.startswith("drop") and pk == "data" and int(fl) in tcp_ids
            for ln, e, pk, fl in zip(links, names, packets, efl.tolist(), strict=True)
        ],
        dtype=bool,
    )
    times = _col(ev, "time_s")
    # Only the drops in the interval (a periodic phase: in its windows; a gap between two
    # windows longer than gap_s cuts an event): drops that never pause for gap_s make one
    # event of it.
    keep &= _in(times, start, end, windows)
    events = loss_events(times[keep], efl[keep], float(gap))
    tcp_starts = np.sort(starts[tcp & ~np.isnan(starts)])
    ratios = []
    for t, hit in events:
        n = int(np.searchsorted(tcp_starts, t, side="right"))
        ratios.append(len(hit) / max(n, len(hit)))
    if not ratios:
        within = "the windows of " if windows is not None else ""
        raise MetricError(f"no loss event in {within}[{start:g}, {end:g}] s")
    return float(np.mean(ratios))


@dataclass(frozen=True)
class Derived:
    """A derived metric: ``fn(point, start_s, end_s, args)``, or with ``needs_row`` also the
    summary row (for figures of the phase's summary entry). ``periodic``: how it reads a
    periodic phase: ``"windows"`` (``fn`` takes ``windows=``, the rows in the windows),
    ``"phase"`` (from the phase's summary entry, or over the measurement interval whatever
    the phase), ``""`` (not defined over windows)."""

    fn: Callable[..., float]
    args: tuple[str, ...]
    doc: str
    needs_row: bool = False
    periodic: str = ""


#: The derived metrics by name (documented in this module's docstring).
DERIVED: dict[str, Derived] = {
    "queue_mean": Derived(
        _queue_mean, ("unit", "link", "mean_pkt_size"), "mean queue", periodic="windows"
    ),
    "queue_std": Derived(
        _queue_std, ("unit", "link", "mean_pkt_size"), "queue std", periodic="windows"
    ),
    "queue_std_mean": Derived(
        _queue_std_mean,
        ("window_s", "unit", "link", "mean_pkt_size"),
        "mean of per-window queue standard deviations",
    ),
    "param_mean": Derived(_param_mean, ("name",), "time-weighted mean of a parameter"),
    "param_final": Derived(_param_final, ("name",), "a parameter's value at the end"),
    "response_within": Derived(
        _response_within, ("t_s",), "share of responses <= t_s", periodic="windows"
    ),
    "response_quantile": Derived(
        _response_quantile, ("q",), "response-time quantile", periodic="windows"
    ),
    "completed_requests": Derived(_completed, (), "responses completed", periodic="windows"),
    "goodput_bytes": Derived(
        _goodput_bytes, (), "payload bytes delivered", needs_row=True, periodic="phase"
    ),
    "link_bytes": Derived(
        _link_bytes, (), "bytes sent on the bottleneck", needs_row=True, periodic="phase"
    ),
    "group_goodput": Derived(
        _group_goodput, ("group",), "mean goodput of a group's flows", periodic="phase"
    ),
    "goodput_ratio": Derived(
        _goodput_ratio, ("num", "den"), "ratio of two groups' goodputs", periodic="phase"
    ),
    "group_loss": Derived(
        _group_loss, ("group",), "drop rate of a group's flows", periodic="phase"
    ),
    "group_jain": Derived(
        _group_jain, ("groups",), "Jain's index of some groups' flows", periodic="phase"
    ),
    "loss_ratio": Derived(
        _loss_ratio, ("num", "den"), "ratio of two groups' drop rates", periodic="phase"
    ),
    "response_mean": Derived(_response_mean, ("group",), "mean response time", periodic="windows"),
    "goodput_all": Derived(
        _goodput_all, (), "TCP and UDP payload delivered", needs_row=True, periodic="phase"
    ),
    "summary_sum": Derived(
        _summary_sum, ("paths",), "sum of summary figures", needs_row=True, periodic="phase"
    ),
    "loss_sync": Derived(
        _loss_sync, ("gap_s", "link"), "loss synchronisation ratio", periodic="windows"
    ),
}


def _summary_value(out: Output, row: Row, path: str, points: dict[str, PointData]) -> float:
    if path in row.values:
        v = row.values[path]
        if v is None:
            raise MetricError(f"summary.parquet: {path!r} is empty")
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise MetricError(f"summary.parquet: {path!r} is not a number ({v!r})")
        return float(v)
    # Not a column (e.g. a list element): look in the point's summary.json.
    p = points.setdefault(row.id, PointData(out.point_dir(row.id)))
    try:
        return _entry_value(p.summary_entry(row), path)
    except MetricError:
        raise MetricError(f"summary.parquet has no column {path!r}") from None


def evaluate(
    out: Output, row: Row, metric: Metric, points: dict[str, PointData] | None = None
) -> float:
    """The metric's value (run units, before ``scale``) for one summary row; NaN and a warning
    in ``out.warnings`` when it cannot be computed."""
    points = {} if points is None else points
    where = (
        f"metric {metric.name!r}, point {row.id} ({row.scheme}, seed {row.seed}), "
        f"phase {row.phase!r}"
    )
    if not row.ok or not metric.applies(out.experiment.factors, out.factor_key(row), row.scheme):
        return math.nan
    try:
        if metric.summary is not None:
            return _summary_value(out, row, metric.summary, points)
        if metric.derived is None:
            raise MetricError("neither summary nor derived is given")
        d = DERIVED.get(metric.derived)
        if d is None:
            raise MetricError(
                f"unknown derived metric {metric.derived!r}; known: {', '.join(sorted(DERIVED))}"
            )
        unknown = sorted(set(metric.args) - set(d.args))
        if unknown:
            raise MetricError(
                f"{metric.derived} takes no args {', '.join(unknown)}; "
                f"it takes {', '.join(d.args) or 'none'}"
            )
        if math.isnan(row.start_s) or math.isnan(row.end_s):
            raise MetricError("the phase's start_s/end_s are missing")
        p = points.setdefault(row.id, PointData(out.point_dir(row.id)))
        windows = _periodic(p, row)
        if windows is not None and not d.periodic:
            raise MetricError(
                f"{metric.derived} is not defined over the windows of a periodic phase "
                f"(every {windows.every:g} s, {windows.length:g} s long)"
            )
        if d.needs_row:
            return float(d.fn(p, row.start_s, row.end_s, metric.args, row))
        if windows is not None and d.periodic == "windows":
            return float(d.fn(p, row.start_s, row.end_s, metric.args, windows=windows))
        return float(d.fn(p, row.start_s, row.end_s, metric.args))
    except MetricError as e:
        out.warn(f"{where}: {e}")
    except (OSError, ValueError, TypeError, KeyError, pa.ArrowException) as e:
        out.warn(f"{where}: {type(e).__name__}: {e}")
    return math.nan


def evaluate_all(out: Output) -> dict[tuple[str, str], dict[str, float]]:
    """Every metric for every summary row: ``{(point id, phase): {metric: value}}`` in display
    units (``scale`` applied)."""
    res: dict[tuple[str, str], dict[str, float]] = {}
    points: dict[str, PointData] = {}
    # One point's tables in memory at a time (a 2000 s run's queue series is ~10 MB).
    for row in sorted(out.rows, key=lambda r: r.id):
        if row.id not in points:
            points = {}
        vals = {}
        for m in out.experiment.metrics.values():
            vals[m.name] = evaluate(out, row, m, points) * m.scale
        res[(row.id, row.phase)] = vals
    return res
