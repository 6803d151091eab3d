"""The Python API: run a scenario and get its results in memory.

>>> import aqmlab
>>> r = aqmlab.run("scenarios/canonical.toml", seed=3, overrides=["aqm.max_p=0.05"])
>>> r.summary["bottleneck"]["utilization"]
>>> r.queue.column_names        # a pyarrow.Table
>>> r.save("out/canonical-3")   # only now is anything written
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aqmlab import _core
from aqmlab._engine import ProgressFn, _version, run_raw
from aqmlab.scenario import (
    SpecSource,
    TruncationNote,
    apply_overrides,
    load,
    resolved_from_json,
)
from aqmlab.scenario import (
    truncate as _truncate,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ProgressFn", "RunResult", "prepare", "run"]


@dataclass
class RunResult:
    """Everything one run produced.

    ``scenario`` is the resolved scenario (every default filled in, the seed as
    run); ``summary`` holds every scalar figure (see ``docs/scenario.md``);
    ``queue`` is the queue time series of the bottleneck and ``flows`` one row
    per flow, ``params`` the bottleneck AQM's adapted parameters over time
    (columns ``time_s``, ``name``, ``value``; empty for schemes that adapt
    nothing), ``responses`` one row per completed web request/response
    (``flow``, ``group``, ``page``, ``object``, ``size_bytes``, ``start_s``,
    ``end_s``, ``response_time_s``; empty without web traffic), ``pings``
    one row per latency probe of the ``ping`` groups (``flow``, ``group``,
    ``seq``, ``sent_s``, ``rtt_s``, NaN when no echo came back), ``delay``
    the queueing delay histogram of every monitored link over the
    measurement interval (``link``, ``lower_s``, ``upper_s``, ``count``: one
    row per non-empty log-spaced bin), ``group_delay`` the same per traffic
    group with ``metrics.group_delays = true`` (``link``, ``group``,
    ``lower_s``, ``upper_s``, ``count``; empty without it), ``flow_series`` the TCP state of the
    flows listed in ``metrics.flow_series`` (``time_s``, ``flow``, ``cwnd``,
    ``ssthresh``, ``srtt_s``, ``rto_s``, ``delivery_rate_bps``, DCTCP's
    ``alpha``; for pacing flows ``pacing_rate_bps`` and ``rate_sample_bps``,
    for BBR ``bbr_state`` and ``bbr_bw_bps``) and
    ``events`` the drops and marks on the monitored links with
    ``metrics.trace = true`` (``time_s``, ``link``, ``flow``, ``event``, ``packet``),
    all ``pyarrow.Table``; see ``docs/results.md`` for every column.

    ``pcap`` holds the bytes of the packet capture of ``metrics.pcap = N``
    (empty without it), written as ``packets.pcap`` by :meth:`save`;
    ``folder`` is the result folder the run was saved to or loaded from
    (``None`` before), and ``pcap_path`` the capture's path in it.
    """

    scenario: dict[str, Any]
    summary: dict[str, Any]
    queue: pa.Table
    flows: pa.Table
    params: pa.Table = field(default_factory=lambda: params_table({}))
    responses: pa.Table = field(default_factory=lambda: responses_table({}))
    pings: pa.Table = field(default_factory=lambda: typed_table({}, PING_COLUMNS))
    delay: pa.Table = field(default_factory=lambda: typed_table({}, DELAY_COLUMNS))
    group_delay: pa.Table = field(default_factory=lambda: typed_table({}, GROUP_DELAY_COLUMNS))
    flow_series: pa.Table = field(default_factory=lambda: typed_table({}, FLOW_SERIES_COLUMNS))
    events: pa.Table = field(default_factory=lambda: typed_table({}, EVENT_COLUMNS))
    pcap: bytes = b""
    peak_packets: int = 0
    engine_version: str = _core.ENGINE_VERSION
    aqmlab_version: str = field(default_factory=_version)
    created_at: str = ""
    command: list[str] | None = None
    folder: Path | None = None

    @property
    def pcap_path(self) -> Path | None:
        """``packets.pcap`` in the result folder, when the run captured
        packets (``metrics.pcap``) and was saved or loaded; else ``None``."""
        from aqmlab.results import PCAP

        if self.folder is None or not (self.folder / PCAP).is_file():
            return None
        return self.folder / PCAP

    @property
    def seed(self) -> int:
        return int(self.summary["seed"])

    @property
    def wall_time_s(self) -> float:
        return float(self.summary.get("wall_time_s", 0.0))

    def to_pandas(self, table: str = "queue") -> pd.DataFrame:
        """``queue``, ``flows``, ``params``, ``responses``, ``pings``, ... as a pandas
        DataFrame (needs pandas: ``pip install 'aqmlab[pandas]'``)."""
        if table not in TABLES:
            raise ValueError(
                f"table must be one of {', '.join(repr(t) for t in TABLES)}, not {table!r}"
            )
        try:
            import pandas  # noqa: F401
        except ImportError as e:
            raise ImportError(
                "RunResult.to_pandas needs pandas: pip install 'aqmlab[pandas]'"
            ) from e
        t: pa.Table = getattr(self, table)
        return t.to_pandas()

    def response_cdf(
        self, measured_only: bool = True
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The empirical CDF of the web response times: ``(t, p)`` with the
        response times in seconds sorted ascending and ``p[i]`` the share of
        responses that took at most ``t[i]``. With ``measured_only`` only the
        responses that ended in the measurement interval (from
        ``summary["measure_start_s"]``) count, as in ``summary["web"]``.
        Both arrays are empty without web responses."""
        t: npt.NDArray[np.float64] = np.asarray(
            self.responses.column("response_time_s").to_numpy(), dtype=np.float64
        )
        if measured_only:
            start = float(self.summary.get("measure_start_s", 0.0))
            t = t[np.asarray(self.responses.column("end_s").to_numpy()) >= start]
        t = np.sort(t)
        p = np.arange(1, len(t) + 1, dtype=np.float64) / max(len(t), 1)
        return t, p

    def _repr_html_(self) -> str:
        """How the run shows itself in Jupyter: what ran, a table of its monitored links'
        and flows' figures and a small picture of the bottleneck's queue (inline PNG;
        :mod:`aqmlab._html`)."""
        from aqmlab._html import run_html

        return run_html(self)

    def save(self, out: str | os.PathLike[str], command: list[str] | None = None) -> Path:
        """Write the run folder ``out`` (see :func:`aqmlab.results.write_run`)."""
        from aqmlab.results import write_run

        if command is not None:
            self.command = list(command)
        self.folder = write_run(self, out)
        return self.folder


def prepare(
    spec: SpecSource,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    truncate: bool = False,
    unset: Iterable[str] = (),
) -> dict[str, Any]:
    """The scenario document that :func:`run` hands to the engine: ``spec``
    loaded, ``overrides`` applied, then ``seed`` set if given. With
    ``truncate``, what lies past the end of the run is dropped
    (:func:`aqmlab.scenario.truncate`), each change issued as a
    :class:`~aqmlab.scenario.TruncationNote` warning."""
    doc = load(spec)
    apply_overrides(doc, overrides, unset)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise _core.ScenarioError("seed", f"expected a whole number >= 0, found {seed!r}")
        doc["seed"] = seed
    if truncate:
        import warnings

        for note in _truncate(doc):
            warnings.warn(note, TruncationNote, stacklevel=3)
    return doc


def run(
    spec: SpecSource,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    progress: ProgressFn | None = None,
    out: str | os.PathLike[str] | None = None,
    truncate: bool = False,
    unset: Iterable[str] = (),
) -> RunResult:
    """Run a scenario and return its results.

    ``spec`` is a path to a TOML file, TOML text or a dict. ``seed`` replaces
    the scenario's seed; ``overrides`` are ``key=value`` strings as for
    ``aqmlab run --set`` and ``unset`` keys to remove as for ``--unset``.
    ``progress(simulated_seconds)`` (or ``progress(simulated_seconds,
    events)``, events processed so far) is called now and then; returning
    ``False`` stops the run with ``KeyboardInterrupt``.
    Nothing is written unless ``out`` is given (then the run folder ``out``,
    whose lock is held from the start: :class:`aqmlab.results.ResultsError`
    if another process is writing it).
    With ``truncate``, schedule entries and phases past the end of the run
    are dropped (``--set duration=...`` shorter than the scenario; see
    :func:`prepare`). Raises :class:`aqmlab.ScenarioError` on a bad scenario.
    ECN-capable traffic that meets a queue whose marking is off (or a queue set to mark that
    no ECN-capable traffic reaches) is an :class:`aqmlab.ECNNote` warning (:mod:`aqmlab.ecn`).
    """
    doc = prepare(spec, seed, overrides, truncate, unset)
    _warn_ecn(doc)
    if out is None:
        return from_core(run_raw(doc, progress))
    from aqmlab.results import check_target, hold_folder

    with hold_folder(out):
        check_target(out)
        result = from_core(run_raw(doc, progress))
        result.save(out)
    return result


def _warn_ecn(doc: Mapping[str, Any]) -> None:
    """Issue an :class:`aqmlab.ecn.ECNNote` for each disagreement between the traffic's and
    the queues' ECN switches (:func:`aqmlab.ecn.ecn_notes`). A document that does not
    validate is left for the run to report."""
    import warnings

    from aqmlab.ecn import ECNNote, ecn_notes
    from aqmlab.scenario import validate

    try:
        resolved = validate(doc)
    except _core.ScenarioError:
        return
    for note in ecn_notes(resolved):
        warnings.warn(note, ECNNote, stacklevel=3)


def from_core(raw: Mapping[str, Any]) -> RunResult:
    """Build a :class:`RunResult` from what ``_core.run`` returns."""
    return RunResult(
        scenario=resolved_from_json(raw["scenario"]),
        summary=json.loads(raw["summary"]),
        queue=columns_to_table(raw["queue"]),
        flows=columns_to_table(raw["flows"]),
        params=params_table(raw["params"]),
        responses=responses_table(raw.get("responses", {})),
        pings=typed_table(raw.get("pings", {}), PING_COLUMNS),
        delay=typed_table(raw.get("delay", {}), DELAY_COLUMNS),
        group_delay=typed_table(raw.get("group_delay", {}), GROUP_DELAY_COLUMNS),
        flow_series=typed_table(raw.get("flow_series", {}), FLOW_SERIES_COLUMNS),
        events=typed_table(raw.get("events", {}), EVENT_COLUMNS),
        pcap=bytes(raw.get("pcap", b"")),
        peak_packets=int(raw["peak_packets"]),
        engine_version=str(raw["version"]),
        created_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )


#: Columns of the AQM parameter series (long format).
PARAM_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("time_s", pa.float64()),
    ("name", pa.string()),
    ("value", pa.float64()),
)


def params_table(cols: Mapping[str, Column]) -> pa.Table:
    """The AQM parameter series (long format: time_s, name, value)."""
    return typed_table(cols, PARAM_COLUMNS)


#: The tables of a run, by attribute name.
TABLES = (
    "queue",
    "flows",
    "params",
    "responses",
    "pings",
    "delay",
    "group_delay",
    "flow_series",
    "events",
)

#: Columns of the latency probes' table.
PING_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("flow", pa.uint32()),
    ("group", pa.uint32()),
    ("seq", pa.uint64()),
    ("sent_s", pa.float64()),
    ("rtt_s", pa.float64()),
)

#: Columns of the delay histogram.
DELAY_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("link", pa.string()),
    ("lower_s", pa.float64()),
    ("upper_s", pa.float64()),
    ("count", pa.uint64()),
)

#: Columns of the per-group delay histograms (``metrics.group_delays``).
GROUP_DELAY_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("link", pa.string()),
    ("group", pa.uint32()),
    ("lower_s", pa.float64()),
    ("upper_s", pa.float64()),
    ("count", pa.uint64()),
)

#: Columns of the flow series.
FLOW_SERIES_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("time_s", pa.float64()),
    ("flow", pa.uint32()),
    ("cwnd", pa.float64()),
    ("ssthresh", pa.float64()),
    ("srtt_s", pa.float64()),
    ("rto_s", pa.float64()),
    ("delivery_rate_bps", pa.float64()),
    ("send_rate_bps", pa.float64()),
    ("in_flight", pa.float64()),
    ("alpha", pa.float64()),
    ("pacing_rate_bps", pa.float64()),
    ("rate_sample_bps", pa.float64()),
    ("bbr_state", pa.string()),
    ("bbr_bw_bps", pa.float64()),
    ("ca_state", pa.string()),
)

#: Columns of the event trace.
EVENT_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("time_s", pa.float64()),
    ("link", pa.string()),
    ("flow", pa.uint32()),
    ("event", pa.string()),
    ("packet", pa.string()),
)


#: A column as the engine hands it over: ``(type, rows, data, offsets)``
#: (see ``crates/aqmlab-py/src/columns.rs``), or a plain list of values.
Column = tuple[str, int, bytes, bytes | None] | Sequence[Any]

#: Arrow types of the engine's column types (``"null"``: an empty column).
_BUFFER_TYPES: dict[str, pa.DataType] = {
    "i64": pa.int64(),
    "u32": pa.uint32(),
    "u64": pa.uint64(),
    "f64": pa.float64(),
    "str": pa.string(),
    "large_str": pa.large_string(),
}


def column_array(col: Column, t: pa.DataType | None = None) -> pa.Array:
    """An Arrow array from an engine column (its buffers wrapped, not
    copied) or from a list of values; cast to ``t`` when given. An empty
    column without ``t`` is ``float64``."""
    if isinstance(col, tuple):
        kind, rows, data, offsets = col
        if kind == "null":
            arr = pa.array([], t or pa.float64())
        elif kind == "bool":
            arr = pa.array(np.frombuffer(data, np.bool_))
        else:
            buffers = [None, pa.py_buffer(data)]
            if offsets is not None:
                buffers = [None, pa.py_buffer(offsets), pa.py_buffer(data)]
            arr = pa.Array.from_buffers(_BUFFER_TYPES[kind], rows, buffers)
    else:
        arr = pa.array(col, t)
        if t is None and pa.types.is_null(arr.type):
            arr = arr.cast(pa.float64())
    return arr if t is None or arr.type == t else arr.cast(t)


def typed_table(
    cols: Mapping[str, Column], columns: tuple[tuple[str, pa.DataType], ...]
) -> pa.Table:
    """A table with fixed column types (the same schema when empty)."""
    return pa.table({name: column_array(cols.get(name, []), t) for name, t in columns})


#: Columns of the responses table and their types.
RESPONSE_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("flow", pa.uint32()),
    ("session", pa.uint32()),
    ("group", pa.uint32()),
    ("page", pa.uint64()),
    ("object", pa.uint32()),
    ("size_bytes", pa.uint64()),
    ("start_s", pa.float64()),
    ("end_s", pa.float64()),
    ("response_time_s", pa.float64()),
)


def responses_table(cols: Mapping[str, Column]) -> pa.Table:
    """The web responses (one row per completed request/response), with
    fixed column types so that an empty table has the same schema."""
    return typed_table(cols, RESPONSE_COLUMNS)


def columns_to_table(cols: Mapping[str, Column]) -> pa.Table:
    """A dict of column name -> engine column (or list) as a pyarrow Table.
    NaN stays NaN (the engine's "no value", e.g. the average of a scheme
    that has none)."""
    return pa.table({name: column_array(col) for name, col in cols.items()})
