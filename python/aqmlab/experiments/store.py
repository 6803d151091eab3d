"""The sweep output folder.

::

    DIR/
      experiment.json    the validated experiment, "command", "versions", "created", "quick",
                         and "points" (id, scheme, factors, seed of every point, in order)
      points/<id>/       a run folder (aqmlab.results) plus point.json, written atomically
      failed/<id>.json   a point that failed: id, scheme, factors, seed, error
      summary.parquet    one row per (point, phase)

A point folder is written as ``points/<id>.tmp-<pid>`` (the run folder, then
``point.json`` last) and renamed to ``points/<id>``; a folder without
``point.json``, or with a ``.tmp-`` / ``.old-`` name, is half-written and is
removed by :func:`clean_partial` before a sweep resumes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import _atomic, results
from aqmlab.experiments.points import seconds

if TYPE_CHECKING:
    from aqmlab.api import RunResult
    from aqmlab.experiments.points import Point

__all__ = [
    "EXPERIMENT_JSON",
    "POINT_JSON",
    "SUMMARY_PARQUET",
    "build_summary",
    "clean_partial",
    "is_complete",
    "is_sweep_dir",
    "write_failed",
    "write_point",
]

EXPERIMENT_JSON = "experiment.json"
POINT_JSON = "point.json"
SUMMARY_PARQUET = "summary.parquet"
POINTS = "points"
FAILED = "failed"
REPORT = "report"
#: Fixed columns of summary.parquet before the factors.
HEAD_COLUMNS = ("id", "scheme")
#: Fixed columns after the factors, before the flattened figures.
TAIL_COLUMNS = ("seed", "phase", "phase_index", "start_s", "end_s", "status", "error")
#: Columns that differ between identical runs (compare tables without them).
WALL_COLUMNS = ("wall_time_s",)


def is_sweep_dir(d: Path) -> bool:
    """Whether ``d`` is a sweep output folder (holds experiment.json)."""
    return d.is_dir() and (d / EXPERIMENT_JSON).is_file()


def point_dir(out: Path, pid: str) -> Path:
    return out / POINTS / pid


def is_complete(out: Path, pid: str) -> bool:
    """Whether point ``pid`` has a complete folder (point.json with status ok
    and a run folder's manifest)."""
    d = point_dir(out, pid)
    pj = d / POINT_JSON
    if not (pj.is_file() and results.is_run_dir(d)):
        return False
    try:
        info = json.loads(pj.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("status") == "ok" and info.get("id") == pid


def write_point(
    out: Path, info: Mapping[str, Any], result: RunResult, command: list[str] | None
) -> Path:
    """Write point ``info["id"]``'s folder atomically: the run folder and
    point.json in ``points/<id>.tmp-<pid>``, then renamed to ``points/<id>``
    (replacing an earlier folder of the same id)."""
    pid = str(info["id"])
    target = point_dir(out, pid)
    stage = target.with_name(f"{pid}.tmp-{os.getpid()}")
    if stage.exists():
        shutil.rmtree(stage)
    try:
        result.command = list(command) if command is not None else None
        results.write_run(result, stage, lock=False)  # the sweep holds the folder
        text = json.dumps({**info, "status": "ok"}, indent=2, allow_nan=False) + "\n"
        (stage / POINT_JSON).write_text(text, encoding="utf-8")
        if target.exists():
            old = target.with_name(f"{pid}.old-{os.getpid()}")
            if old.exists():
                shutil.rmtree(old)
            target.rename(old)
            stage.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            stage.rename(target)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return target


def write_failed(out: Path, info: Mapping[str, Any], error: str) -> Path:
    """Write ``failed/<id>.json`` atomically."""
    d = out / FAILED
    d.mkdir(parents=True, exist_ok=True)
    target = d / f"{info['id']}.json"
    text = json.dumps({**info, "error": error}, indent=2, default=str) + "\n"
    return _atomic.write_text(target, text)


def clear_failed(out: Path, pid: str) -> None:
    (out / FAILED / f"{pid}.json").unlink(missing_ok=True)


def clean_partial(out: Path) -> int:
    """Remove half-written point folders and temporary files; return how
    many were removed."""
    n = 0
    pdir = out / POINTS
    if pdir.is_dir():
        for d in pdir.iterdir():
            partial = ".tmp-" in d.name or ".old-" in d.name
            if not partial and d.is_dir() and not (d / POINT_JSON).is_file():
                partial = True
            if partial:
                if d.is_dir():
                    shutil.rmtree(d, ignore_errors=True)
                else:
                    d.unlink(missing_ok=True)
                n += 1
    fdir = out / FAILED
    if fdir.is_dir():
        for f in fdir.glob(".*.tmp-*"):
            f.unlink(missing_ok=True)
            n += 1
    for f in out.glob(f".{SUMMARY_PARQUET}.tmp-*"):
        f.unlink(missing_ok=True)
    for f in out.glob(f".{EXPERIMENT_JSON}.tmp-*"):
        f.unlink(missing_ok=True)
    return n


def remove_stale(out: Path, keep: Iterable[str]) -> int:
    """Remove point folders and failure records whose id is not in ``keep``
    (points of an earlier version of the experiment); return the count."""
    ids = set(keep)
    n = 0
    pdir = out / POINTS
    if pdir.is_dir():
        for d in pdir.iterdir():
            if d.name not in ids:
                shutil.rmtree(d, ignore_errors=True) if d.is_dir() else d.unlink()
                n += 1
    fdir = out / FAILED
    if fdir.is_dir():
        for f in fdir.glob("*.json"):
            if f.stem not in ids:
                f.unlink()
                n += 1
    return n


def clear(out: Path) -> None:
    """Empty an earlier sweep folder (what a sweep without --resume does)."""
    for name in (POINTS, FAILED, REPORT):
        shutil.rmtree(out / name, ignore_errors=True)
    for name in (SUMMARY_PARQUET, EXPERIMENT_JSON):
        (out / name).unlink(missing_ok=True)


def write_json_atomic(path: Path, doc: Any) -> None:
    _atomic.write_text(path, json.dumps(doc, indent=2, default=str) + "\n")


# ---------------------------------------------------------------------------
# summary.parquet


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every scalar of ``d`` (nested tables flattened with dots; arrays left
    out)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        elif isinstance(v, bool | int | float | str) or v is None:
            out[key] = v
    return out


def point_rows(
    p: Point, summary: Mapping[str, Any] | None, status: str, error: str | None
) -> list[dict[str, Any]]:
    """The rows of one point: the whole measurement interval ("all", index
    -1) and one per phase."""
    base = {"id": p.id, "scheme": p.scheme, **p.factors, "seed": p.seed}
    rows: list[dict[str, Any]] = []
    if summary is not None:
        top = {k: v for k, v in summary.items() if not isinstance(v, Mapping | list)}
        top.pop("seed", None)
        figures = flatten(summary)
        figures.pop("seed", None)
        rows.append(
            {
                **figures,
                **base,
                "phase": "all",
                "phase_index": -1,
                "start_s": _float(summary.get("measure_start_s")),
                "end_s": _float(summary.get("duration_s")),
                "status": status,
                "error": error,
            }
        )
        entries = summary.get("phases", []) or []
        for i, (name, a, b) in enumerate(p.phases):
            ph = entries[i] if i < len(entries) and isinstance(entries[i], Mapping) else {}
            figs = {**flatten(top), **flatten(ph)}
            start, end = figs.pop("start_s", a), figs.pop("end_s", b)
            rows.append(
                {
                    **figs,
                    **base,
                    "phase": name,
                    "phase_index": i,
                    "start_s": _float(start),
                    "end_s": _float(end),
                    "status": status,
                    "error": error,
                }
            )
        return rows
    sc = p.scenario
    start = seconds(sc.get("metrics", {}).get("start", "0s")) if sc else math.nan
    end = p.duration_s if sc else math.nan
    rows.append(
        {
            **base,
            "phase": "all",
            "phase_index": -1,
            "start_s": start,
            "end_s": end,
            "status": status,
            "error": error,
        }
    )
    for i, (name, a, b) in enumerate(p.phases):
        rows.append(
            {
                **base,
                "phase": name,
                "phase_index": i,
                "start_s": a,
                "end_s": b,
                "status": status,
                "error": error,
            }
        )
    return rows


def _float(v: Any) -> float:
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return math.nan


def _column(values: Sequence[Any]) -> pa.Array:
    """One column with a type that does not depend on which points ran
    where: booleans, int64 if every value is a whole number, float64 if
    every value is a number, else strings (other values as JSON)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return pa.array(values, pa.bool_())
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.array(values, pa.int64())
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return pa.array([None if v is None else float(v) for v in values], pa.float64())
    return pa.array(
        [None if v is None else (v if isinstance(v, str) else json.dumps(v)) for v in values],
        pa.string(),
    )


def read_point_summary(out: Path, pid: str) -> dict[str, Any] | None:
    if not is_complete(out, pid):
        return None
    try:
        doc: dict[str, Any] = json.loads(
            (point_dir(out, pid) / results.SUMMARY).read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return None
    return doc


def read_failure(out: Path, pid: str) -> str | None:
    f = out / FAILED / f"{pid}.json"
    if not f.is_file():
        return None
    try:
        return str(json.loads(f.read_text(encoding="utf-8")).get("error", "failed"))
    except (OSError, ValueError):
        return "failed (unreadable failure record)"


def build_summary(out: Path, points: Sequence[Point], factor_names: Sequence[str]) -> pa.Table:
    """The table of every point (in the experiment's order) from the point
    folders and failure records in ``out``: one row per (point, phase).

    A point with neither (never run) has status "missing". The table depends
    only on the folders' contents, so a killed and resumed sweep gives the
    same table as an uninterrupted one (except ``wall_time_s``).
    """
    rows: list[dict[str, Any]] = []
    cache: dict[str, tuple[dict[str, Any] | None, str, str | None]] = {}
    for p in points:
        if p.id not in cache:
            summary = read_point_summary(out, p.id)
            if summary is not None:
                cache[p.id] = (summary, "ok", None)
            else:
                err = read_failure(out, p.id)
                cache[p.id] = (None, "failed" if err is not None else "missing", err)
        summary, status, err = cache[p.id]
        rows.extend(point_rows(p, summary, status, err))
    fixed = [*HEAD_COLUMNS, *factor_names, *TAIL_COLUMNS]
    extra = sorted({k for r in rows for k in r} - set(fixed))
    cols: dict[str, pa.Array] = {}
    for name in fixed:
        vals = [r.get(name) for r in rows]
        if name == "phase_index":
            cols[name] = pa.array(vals, pa.int64())
        elif name in ("start_s", "end_s"):
            cols[name] = pa.array(vals, pa.float64())
        elif name in ("id", "scheme", "phase", "status", "error"):
            cols[name] = pa.array(vals, pa.string())
        elif name == "seed":
            cols[name] = pa.array(vals, pa.int64())
        else:
            cols[name] = _column(vals)
    for name in extra:
        cols[name] = _column([r.get(name) for r in rows])
    return pa.table(cols)


def write_summary(out: Path, table: pa.Table) -> Path:
    return _atomic.write_via(out / SUMMARY_PARQUET, lambda tmp: pq.write_table(table, tmp))
