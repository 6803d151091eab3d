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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from aqmlab import _core
from aqmlab.scenario import SpecSource, apply_overrides, load, resolved_from_json, to_json

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ProgressFn", "RunResult", "prepare", "run"]

#: Called with the simulated time in seconds now and then during a run;
#: returning ``False`` stops the run (``KeyboardInterrupt``).
ProgressFn = Callable[[float], "bool | None"]


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("aqmlab")
    except Exception:
        return _core.ENGINE_VERSION


@dataclass
class RunResult:
    """Everything one run produced.

    ``scenario`` is the resolved scenario (every default filled in, the seed as
    run); ``summary`` holds every scalar figure (see ``docs/scenario.md``);
    ``queue`` is the queue time series of the bottleneck and ``flows`` one row
    per flow, ``params`` the bottleneck AQM's adapted parameters over time
    (columns ``time_s``, ``name``, ``value``; empty for schemes that adapt
    nothing), all ``pyarrow.Table``.
    """

    scenario: dict[str, Any]
    summary: dict[str, Any]
    queue: pa.Table
    flows: pa.Table
    params: pa.Table = field(default_factory=lambda: params_table({}))
    peak_packets: int = 0
    engine_version: str = _core.ENGINE_VERSION
    aqmlab_version: str = field(default_factory=_version)
    created_at: str = ""
    command: list[str] | None = None

    @property
    def seed(self) -> int:
        return int(self.summary["seed"])

    @property
    def wall_time_s(self) -> float:
        return float(self.summary.get("wall_time_s", 0.0))

    def to_pandas(self, table: str = "queue") -> pd.DataFrame:
        """``queue``, ``flows`` or ``params`` as a pandas DataFrame (needs
        pandas: ``pip install 'aqmlab[pandas]'``)."""
        if table not in ("queue", "flows", "params"):
            raise ValueError(f"table must be 'queue', 'flows' or 'params', not {table!r}")
        try:
            import pandas  # noqa: F401
        except ImportError as e:
            raise ImportError(
                "RunResult.to_pandas needs pandas: pip install 'aqmlab[pandas]'"
            ) from e
        t: pa.Table = getattr(self, table)
        return t.to_pandas()

    def save(self, out: str | os.PathLike[str], command: list[str] | None = None) -> Path:
        """Write the run folder ``out`` (see :func:`aqmlab.results.write_run`)."""
        from aqmlab.results import write_run

        if command is not None:
            self.command = list(command)
        return write_run(self, out)


def prepare(
    spec: SpecSource,
    seed: int | None = None,
    overrides: Iterable[str] = (),
) -> dict[str, Any]:
    """The scenario document that :func:`run` hands to the engine: ``spec``
    loaded, ``overrides`` applied, then ``seed`` set if given."""
    doc = load(spec)
    apply_overrides(doc, overrides)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise _core.ScenarioError("seed", f"expected a whole number >= 0, found {seed!r}")
        doc["seed"] = seed
    return doc


def run(
    spec: SpecSource,
    seed: int | None = None,
    overrides: Iterable[str] = (),
    progress: ProgressFn | None = None,
    out: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run a scenario and return its results.

    ``spec`` is a path to a TOML file, TOML text or a dict. ``seed`` replaces
    the scenario's seed; ``overrides`` are ``key=value`` strings as for
    ``aqmlab run --set``. ``progress(simulated_seconds)`` is called now and
    then; returning ``False`` stops the run with ``KeyboardInterrupt``.
    Nothing is written unless ``out`` is given (then the run folder ``out``).
    Raises :class:`aqmlab.ScenarioError` on a bad scenario.
    """
    doc = prepare(spec, seed, overrides)
    if out is not None:
        from aqmlab.results import check_target

        check_target(out)
    raw = _core.run(to_json(doc), progress)
    result = from_core(raw)
    if out is not None:
        result.save(out)
    return result


def from_core(raw: Mapping[str, Any]) -> RunResult:
    """Build a :class:`RunResult` from what ``_core.run`` returns."""
    return RunResult(
        scenario=resolved_from_json(raw["scenario"]),
        summary=json.loads(raw["summary"]),
        queue=columns_to_table(raw["queue"]),
        flows=columns_to_table(raw["flows"]),
        params=params_table(raw["params"]),
        peak_packets=int(raw["peak_packets"]),
        engine_version=str(raw["version"]),
        created_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    )


def params_table(cols: Mapping[str, list[Any]]) -> pa.Table:
    """The AQM parameter series (long format: time_s, name, value)."""
    return pa.table(
        {
            "time_s": pa.array(cols.get("time_s", []), pa.float64()),
            "name": pa.array(cols.get("name", []), pa.string()),
            "value": pa.array(cols.get("value", []), pa.float64()),
        }
    )


def columns_to_table(cols: Mapping[str, list[Any]]) -> pa.Table:
    """A dict of column name -> list as a pyarrow Table. NaN stays NaN (the
    engine's "no value", e.g. the average of a scheme that has none)."""
    arrays = {}
    for name, values in cols.items():
        arr = pa.array(values)
        if pa.types.is_null(arr.type):
            arr = arr.cast(pa.float64())
        arrays[name] = arr
    return pa.table(arrays)
