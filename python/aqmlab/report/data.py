"""Reading an experiment's output folder (the contract in ``docs/experiments.md``).

The report reads only what the runner wrote::

    DIR/experiment.json    the validated experiment, "command", "versions", "created", "quick"
    DIR/summary.parquet    one row per (point, phase)
    DIR/points/<id>/       one result folder per point (plus point.json)
    DIR/failed/<id>.json   the points that failed

:class:`Experiment` gives the parts of experiment.json the report needs with their defaults
filled in; :class:`Output` adds the summary rows and the point folders. Nothing here raises on
missing data: what is missing is recorded in ``Output.warnings`` and shows up as NaN.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

__all__ = [
    "ALL",
    "Experiment",
    "Factor",
    "Figure",
    "Metric",
    "Output",
    "Paper",
    "ReportError",
    "Row",
    "TableSpec",
    "full_form_command",
    "load_output",
    "same_value",
]

#: The phase that is the whole measurement interval.
ALL = "all"
EXPERIMENT_JSON = "experiment.json"
SUMMARY_PARQUET = "summary.parquet"


class ReportError(Exception):
    """The folder is not an experiment output folder (no or unreadable experiment.json)."""


def same_value(a: Any, b: Any) -> bool:
    """Whether two factor values are the same (numbers by value, 30 == 30.0; lists element-wise;
    anything else by its canonical JSON)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    return bool(_canon(a) == _canon(b))


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def selects(
    factors: Sequence[Factor], fkey: Sequence[int | None], wanted: Mapping[str, Sequence[Any]]
) -> bool:
    """Whether the factor positions ``fkey`` (None: a factor taken over all its values) lie
    among the ``wanted`` values of each factor named there; a factor not named is free."""
    for f, idx in zip(factors, fkey, strict=True):
        if f.name in wanted and (idx is None or all(f.index(v) != idx for v in wanted[f.name])):
            return False
    return True


@dataclass(frozen=True)
class Factor:
    name: str
    values: list[Any]
    labels: list[str]

    def index(self, v: Any) -> int | None:
        """The position of ``v`` among the values; ``v`` may also be a label, or the value's
        JSON text (as a parquet column may hold a list-valued factor)."""
        for i, x in enumerate(self.values):
            if same_value(x, v):
                return i
        for i, lab in enumerate(self.labels):
            if isinstance(v, str) and v == lab:
                return i
        if isinstance(v, str):
            try:
                parsed = json.loads(v)
            except ValueError:
                return None
            for i, x in enumerate(self.values):
                if same_value(x, parsed):
                    return i
        return None

    def label(self, i: int) -> str:
        return self.labels[i]

    @property
    def numeric(self) -> bool:
        """Whether every value is a plain number (plotted on a numeric axis)."""
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values)


@dataclass(frozen=True)
class Metric:
    name: str
    summary: str | None
    derived: str | None
    args: dict[str, Any]
    unit: str
    scale: float
    digits: int | None
    stat: str  # "mean" | "range"
    better: str  # "higher" | "lower" | "none"
    #: Factor values where the metric is measured (``factors``: the values of each factor
    #: named); elsewhere it has no value and its table cells read "-" (a web metric where a
    #: setting has no web traffic).
    factors: dict[str, list[Any]] = field(default_factory=dict)
    #: The schemes the metric is measured for (``schemes``; empty: every scheme); elsewhere
    #: its cells read "-" too (a figure of one scheme's own queues).
    schemes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name} ({self.unit})" if self.unit else self.name

    def applies(
        self, factors: Sequence[Factor], fkey: Sequence[int | None], scheme: str | None = None
    ) -> bool:
        """Whether the metric is measured at the factor positions ``fkey`` (for ``scheme``,
        when given)."""
        if self.schemes and scheme is not None and scheme not in self.schemes:
            return False
        return selects(factors, fkey, self.factors)


@dataclass(frozen=True)
class Paper:
    """A figure to set beside ours in one cell: the paper's (``[[paper]]``) or ns-2.35's
    (``[[ns2]]``). ``band``: the range is one band the paper gives for several cells (read off
    a figure or its text for every point), not this cell's own range."""

    scheme: str
    phase: str
    factors: dict[str, Any]
    metric: str
    value: float | None
    range: tuple[float, float] | None
    note: str
    band: bool = False

    @property
    def center(self) -> float:
        if self.value is not None:
            return self.value
        assert self.range is not None
        return (self.range[0] + self.range[1]) / 2


@dataclass(frozen=True)
class TableSpec:
    name: str
    rows: list[str]
    columns: list[str]
    metrics: list[str]
    #: Factor values the table is restricted to (factor name -> value or label), and the
    #: values a factor that lays it out shows, in order (factor name -> list of them).
    factors: dict[str, Any] = field(default_factory=dict)
    #: The phases its phase dimension shows, in order (empty: every named phase).
    phases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Figure:
    name: str
    title: str
    kind: str
    raw: dict[str, Any]
    paper_ref: str

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)


@dataclass
class Experiment:
    """The parts of experiment.json the report reads, defaults filled in."""

    name: str
    title: str
    source: str
    scenario: str
    seeds: list[int]
    notes: str
    command: Any
    versions: dict[str, Any]
    created: str
    quick: bool
    schemes: list[str]
    scheme_sets: dict[str, list[str]]
    factors: list[Factor]
    phases: list[str]
    metrics: dict[str, Metric]
    tables: list[TableSpec]
    papers: list[Paper]
    figures: list[Figure]
    raw: dict[str, Any]
    ns2: list[Paper] = field(default_factory=list)

    def factor(self, name: str) -> Factor | None:
        for f in self.factors:
            if f.name == name:
                return f
        return None

    @property
    def all_phases(self) -> list[str]:
        """``"all"`` then the named phases."""
        return [ALL, *[p for p in self.phases if p != ALL]]


def full_form_command(exp: Experiment) -> str:
    """The command that runs an experiment's full form: ``aqmlab reproduce NAME`` for a
    preset shipped with aqmlab, else ``aqmlab sweep FILE`` (the experiment file it ran)."""
    import shlex

    from aqmlab.experiments.catalog import PRESETS_DIR, find_preset

    file = str(exp.raw.get("experiment_file") or "")
    if not file:
        if find_preset(exp.name) is not None:
            return f"aqmlab reproduce {exp.name}"
        return "aqmlab sweep on its experiment file, without --quick"
    try:
        preset = Path(file).resolve().is_relative_to(PRESETS_DIR)
    except (OSError, ValueError):
        preset = False
    if preset:
        return f"aqmlab reproduce {exp.name}"
    return f"aqmlab sweep {shlex.quote(file)}"


def _list(doc: Mapping[str, Any], *keys: str) -> list[Any]:
    """The first of ``keys`` present, as a list ([table] may be a table or an array)."""
    for k in keys:
        if k in doc and doc[k] is not None:
            v = doc[k]
            return list(v) if isinstance(v, list) else [v]
    return []


def _seeds(v: Any) -> list[int]:
    if isinstance(v, int) and not isinstance(v, bool):
        return list(range(1, v + 1))
    if isinstance(v, list):
        return [int(x) for x in v]
    return []


def _label(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (list, tuple)):
        return ", ".join(_label(x) for x in v)
    return str(v)


def parse_experiment(doc: Mapping[str, Any]) -> Experiment:
    """An :class:`Experiment` from the content of experiment.json. The experiment's own keys
    may be under ``"experiment"`` (as in the TOML file) or at the top level."""
    inner = doc.get("experiment")
    meta: Mapping[str, Any] = inner if isinstance(inner, dict) else doc
    factors = []
    for f in _list(doc, "factor", "factors"):
        values = list(f.get("values", []))
        labels = f.get("labels") or [_label(v) for v in values]
        factors.append(Factor(str(f["name"]), values, [str(x) for x in labels]))
    metrics = {}
    for m in _list(doc, "metric", "metrics"):
        digits = m.get("digits")
        metrics[str(m["name"])] = Metric(
            name=str(m["name"]),
            summary=m.get("summary"),
            derived=m.get("derived"),
            args=dict(m.get("args") or {}),
            unit=str(m.get("unit", "")),
            scale=float(m.get("scale", 1.0)),
            digits=None if digits is None else int(digits),
            stat=str(m.get("stat", "mean")),
            better=str(m.get("better", "none")),
            factors={k: list(v) for k, v in (m.get("factors") or {}).items()},
            schemes=tuple(str(x) for x in m.get("schemes") or ()),
        )
    papers = [_reference(p) for p in _list(doc, "paper", "papers")]
    ns2 = [_reference(p) for p in _list(doc, "ns2")]
    tables = [
        TableSpec(
            name=str(t.get("name", f"Table {i + 1}")),
            rows=[str(x) for x in t.get("rows", ["scheme"])],
            columns=[str(x) for x in t.get("columns", [])],
            metrics=[str(x) for x in t.get("metrics", list(metrics))],
            factors=dict(t.get("factors") or {}),
            phases=[str(x) for x in t.get("phases") or []],
        )
        for i, t in enumerate(_list(doc, "table", "tables"))
    ]
    figures = [
        Figure(
            name=str(f.get("name", f"figure-{i + 1}")),
            title=str(f.get("title", "")),
            kind=str(f.get("kind", "")),
            raw=dict(f),
            paper_ref=str(f.get("paper_ref", "")),
        )
        for i, f in enumerate(_list(doc, "figure", "figures"))
    ]
    schemes = _list(doc, "scheme", "schemes")
    versions = doc.get("versions") or {}
    return Experiment(
        name=str(meta.get("name", "")),
        title=str(meta.get("title", "")),
        source=str(meta.get("source", "")),
        scenario=str(meta.get("scenario", "")),
        seeds=_seeds(meta.get("seeds", [])),
        notes=str(meta.get("notes", "")),
        command=doc.get("command"),
        versions=dict(versions) if isinstance(versions, dict) else {"version": versions},
        created=str(doc.get("created", "")),
        quick=bool(doc.get("quick", False)),
        schemes=[str(s["name"]) for s in schemes],
        scheme_sets={str(s["name"]): [str(x) for x in s.get("set", [])] for s in schemes},
        factors=factors,
        phases=[str(p["name"]) for p in _list(doc, "phase", "phases")],
        metrics=metrics,
        tables=tables,
        papers=papers,
        figures=figures,
        raw=dict(doc),
        ns2=ns2,
    )


def _reference(p: Mapping[str, Any]) -> Paper:
    """A ``[[paper]]`` or ``[[ns2]]`` entry of experiment.json."""
    rng = p.get("range")
    return Paper(
        scheme=str(p["scheme"]),
        phase=str(p.get("phase", ALL)),
        factors=dict(p.get("factors") or {}),
        metric=str(p["metric"]),
        value=None if p.get("value") is None else float(p["value"]),
        range=None if rng is None else (float(rng[0]), float(rng[1])),
        note=str(p.get("note", "")),
        band=bool(p.get("band", False)),
    )


@dataclass
class Row:
    """One row of summary.parquet: a point in one phase."""

    id: str
    scheme: str
    factors: dict[str, Any]
    seed: int
    phase: str
    phase_index: int
    start_s: float
    end_s: float
    status: str
    error: str
    values: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Output:
    """An experiment output folder, read."""

    dir: Path
    experiment: Experiment
    rows: list[Row]
    failures: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)

    def warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

    def point_dir(self, point_id: str) -> Path:
        return self.dir / "points" / point_id

    def rows_for(self, phase: str) -> Iterator[Row]:
        return (r for r in self.rows if r.phase == phase)

    def factor_key(self, row: Row) -> tuple[int | None, ...]:
        """The row's factor values as positions in each factor's values."""
        out: list[int | None] = []
        for f in self.experiment.factors:
            out.append(f.index(row.factors.get(f.name)))
        return tuple(out)


_FIXED = ("id", "scheme", "seed", "phase", "phase_index", "start_s", "end_s", "status", "error")


def _clean(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def load_output(out_dir: Path) -> Output:
    """Read ``out_dir``; raises :class:`ReportError` if it has no readable experiment.json."""
    d = Path(out_dir)
    ej = d / EXPERIMENT_JSON
    if not ej.is_file():
        raise ReportError(f"{d}: not an experiment output folder (no {EXPERIMENT_JSON})")
    try:
        doc = json.loads(ej.read_text(encoding="utf-8"))
        exp = parse_experiment(doc)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ReportError(f"{ej}: cannot read the experiment: {type(e).__name__}: {e}") from e
    out = Output(d, exp, [], [])
    sp = d / SUMMARY_PARQUET
    if sp.is_file():
        try:
            recs = pq.read_table(sp).to_pylist()
        except (OSError, ValueError) as e:
            why = " ".join(str(e).split()).rstrip(".")
            raise ReportError(
                f"{sp}: cannot read: {why}; the sweep writes it again from its point folders: "
                f"aqmlab sweep FILE --resume --out {d}"
            ) from None
        fnames = {f.name for f in exp.factors}
        for r in recs:
            values = {k: _clean(v) for k, v in r.items() if k not in _FIXED and k not in fnames}
            out.rows.append(
                Row(
                    id=str(r.get("id", "")),
                    scheme=str(r.get("scheme", "")),
                    factors={k: r.get(k) for k in fnames},
                    seed=int(r.get("seed") or 0),
                    phase=str(r.get("phase", ALL)),
                    phase_index=int(r["phase_index"]) if r.get("phase_index") is not None else -1,
                    start_s=float(r["start_s"]) if r.get("start_s") is not None else math.nan,
                    end_s=float(r["end_s"]) if r.get("end_s") is not None else math.nan,
                    status=str(r.get("status") or "ok"),
                    error=str(r.get("error") or ""),
                    values=values,
                )
            )
    else:
        out.warn(f"{sp}: missing; every metric is NaN")
    fd = d / "failed"
    if fd.is_dir():
        for p in sorted(fd.glob("*.json")):
            try:
                out.failures.append(json.loads(p.read_text(encoding="utf-8")))
            except (OSError, ValueError) as e:
                out.failures.append({"id": p.stem, "error": f"unreadable {p.name}: {e}"})
    seen = {str(f.get("id")) for f in out.failures}
    for r in out.rows:
        if not r.ok and r.id not in seen:
            seen.add(r.id)
            out.failures.append(
                {
                    "id": r.id,
                    "scheme": r.scheme,
                    "factors": r.factors,
                    "seed": r.seed,
                    "error": r.error,
                }
            )
    return out


def seeds_of(rows: Sequence[Row]) -> list[int]:
    return sorted({r.seed for r in rows})
