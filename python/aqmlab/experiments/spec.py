"""Experiment files: loading and validation.

An experiment file (TOML, beside its scenario file) names a scenario, the
schemes and factors to cross, the seeds, and what the report shows (phases,
metrics, tables, the paper's and ns-2.35's numbers, figures).
``docs/experiments.md`` describes every key. :func:`load_experiment` reads a
file, checks every key (unknown keys are errors) and returns an
:class:`Experiment`; every error is an :class:`ExperimentError` that names the
field path (``scheme[2].set``).

Nothing here runs or resolves a scenario: :mod:`aqmlab.experiments.points`
expands the experiment into points and resolves each point's scenario.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FIGURE_KINDS",
    "RESERVED_COLUMNS",
    "Experiment",
    "ExperimentError",
    "Factor",
    "Scheme",
    "load_experiment",
    "parse_experiment",
]


class ExperimentError(ValueError):
    """An experiment file that does not parse or does not validate.

    ``path`` names the field (``scheme[2].set``; empty for the whole file),
    ``msg`` says what is wrong and what is allowed; ``str()`` is
    ``"path: msg"`` (or ``msg`` alone without a path).
    """

    def __init__(self, path: str, msg: str) -> None:
        super().__init__(f"{path}: {msg}" if path else msg)
        self.path = path
        self.msg = msg


#: Names of an experiment: what ``aqmlab reproduce NAME`` takes.
NAME_RE = re.compile(r"[a-z0-9][a-z0-9.-]*")
#: Most points one sweep may have (schemes x factor values x seeds): planning
#: 100 000 points takes about 30 s and 1 GB; more are refused before any is built.
MAX_POINTS = 100_000
#: File stems of figures.
STEM_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

#: Columns of ``summary.parquet`` that a factor may not be named after.
RESERVED_COLUMNS = (
    "id",
    "scheme",
    "seed",
    "phase",
    "phase_index",
    "start_s",
    "end_s",
    "status",
    "error",
    "duration_s",
    "measure_start_s",
    "wall_time_s",
    "events",
    "metric",
)

#: Figure kinds and the keys each one takes besides the common ones.
FIGURE_KINDS: dict[str, tuple[str, ...]] = {
    "timeseries": ("series",),
    "metric_vs_factor": ("metric", "factor"),
    "phase_bars": ("metric",),
    "cdf": ("of", "x_max", "tail", "log_x", "link", "group"),
    "ellipse": ("interval_s",),
}
#: What a ``cdf`` figure draws: web response times or the packets' queueing delay.
CDF_OF = ("responses", "delay")
#: Keys every figure takes: ``factors`` fixes factor values (the points drawn),
#: ``phase`` the phase of a metric figure (default "all").
FIGURE_COMMON = ("name", "title", "kind", "paper_ref", "factors", "phase")
#: The default series of a timeseries figure.
DEFAULT_SERIES = ("queue_pkts",)
#: Columns of queue.parquet a timeseries figure may draw (besides ``param:NAME``).
QUEUE_SERIES = ("queue_pkts", "queue_bytes", "avg", "drops", "marks")

STATS = ("mean", "range")
BETTER = ("higher", "lower", "none")

TOP_KEYS = (
    "experiment",
    "quick",
    "scheme",
    "factor",
    "phase",
    "metric",
    "table",
    "paper",
    "ns2",
    "figure",
    "relation",
)

#: Keys of a ``[[relation]]`` entry (``aqmlab.report.relations``).
RELATION_KEYS = (
    "claim",
    "source",
    "metric",
    "schemes",
    "op",
    "than",
    "value",
    "ratio",
    "tolerance",
    "phase",
    "factors",
)
RELATION_OPS = ("<", "<=", ">", ">=", "within")

#: Keys of a ``[[paper]]`` entry; ``[[ns2]]`` takes the same but ``band``.
PAPER_KEYS = ("scheme", "phase", "factors", "metric", "value", "range", "band", "note")
NS2_KEYS = tuple(k for k in PAPER_KEYS if k != "band")


@dataclass(frozen=True)
class Scheme:
    """A named set of overrides."""

    name: str
    set: tuple[str, ...]


@dataclass(frozen=True)
class Factor:
    """A factor crossed with the schemes and the other factors.

    ``keys`` are the scenario keys it sets; ``values[i]`` is one value per
    key (a tuple as long as ``keys``); ``raw[i]`` is the value as written in
    the file (a scalar for a one-key factor, a list otherwise) and
    ``labels[i]`` its display label.
    """

    name: str
    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]
    raw: tuple[Any, ...]
    labels: tuple[str, ...]
    given_labels: bool

    def overrides(self, i: int) -> list[str]:
        """The ``key=value`` overrides of value ``i``."""
        return [f"{k}={toml_value(v)}" for k, v in zip(self.keys, self.values[i], strict=True)]

    def column_value(self, i: int) -> Any:
        """The value of ``i`` in ``summary.parquet``'s column: the value for a
        one-key factor, else the label (given, or the values' JSON)."""
        if len(self.keys) == 1:
            return self.raw[i]
        return self.labels[i]


@dataclass
class Experiment:
    """A validated experiment (after ``--quick``, ``--seeds`` and ``--set``).

    ``doc`` is the normalised document written to ``experiment.json``: the
    file's tables with every default filled in, ``[table]`` always a list,
    ``experiment.seeds`` a list, and with ``--quick`` the ``[quick]`` table
    folded in (its ``set`` appended to ``experiment.set``, its seeds and
    factor values in place of the full ones).
    """

    name: str
    title: str
    source: str
    path: Path
    scenario_path: Path
    seeds: tuple[int, ...]
    set: tuple[str, ...]
    extra_set: tuple[str, ...]
    schemes: tuple[Scheme, ...]
    factors: tuple[Factor, ...]
    phases: tuple[str, ...]
    quick: bool
    doc: dict[str, Any] = field(default_factory=dict)

    def scheme(self, name: str) -> Scheme:
        for s in self.schemes:
            if s.name == name:
                return s
        raise KeyError(name)


def toml_value(v: Any) -> str:
    """``v`` written as a TOML value, for an override's right-hand side."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {_q(v)} as a TOML value")


# ---------------------------------------------------------------------------
# Loading


def load_experiment(
    path: str | Path,
    *,
    quick: bool = False,
    seeds: int | None = None,
    extra_set: Sequence[str] = (),
) -> Experiment:
    """Read and validate the experiment file ``path``.

    ``quick`` folds in the file's ``[quick]`` table; ``seeds`` (``--seeds K``)
    replaces the seeds by ``[1..K]``; ``extra_set`` (``--set``) is applied to
    every point after the file's own overrides. Raises
    :class:`ExperimentError` (with the field path) on a bad file, and
    ``OSError`` when it cannot be read.
    """
    p = Path(path)
    doc = experiment_toml(p.read_text(encoding="utf-8"), p.name)
    return parse_experiment(doc, p, quick=quick, seeds=seeds, extra_set=extra_set)


def experiment_toml(text: str, name: str) -> dict[str, Any]:
    """Parse an experiment file's text: :class:`ExperimentError` on bad TOML (naming the
    key it is in, when one is found), on values nested too deep or on integers Python will
    not read, never another exception."""
    from aqmlab import scenario

    try:
        return scenario._parse_toml(text, name)
    except scenario.ScenarioError as e:
        msg = e.msg.replace(f"invalid TOML in {name}: ", "invalid TOML: ")
        raise ExperimentError(e.path, msg) from None


def parse_experiment(
    doc: Mapping[str, Any],
    path: str | Path,
    *,
    quick: bool = False,
    seeds: int | None = None,
    extra_set: Sequence[str] = (),
) -> Experiment:
    """Validate an experiment document (what the TOML file parses to);
    ``path`` is the file it came from (the scenario path is relative to it)."""
    from aqmlab import scenario

    p = Path(path)
    try:
        # A copy without recursion: a document nested too deep is refused by its path.
        doc = scenario._copy_tree(doc)
    except scenario.ScenarioError as e:
        raise ExperimentError(e.path, e.msg) from None
    _check_leaves(doc)
    _only(doc, "", TOP_KEYS)
    if "experiment" not in doc:
        raise ExperimentError("experiment", "missing: every experiment file needs [experiment]")

    head = _table(doc["experiment"], "experiment")
    _only(head, "experiment", ("name", "title", "source", "scenario", "seeds", "set", "notes"))
    name = _str(head, "experiment", "name", required=True)
    if not NAME_RE.fullmatch(name):
        raise ExperimentError(
            "experiment.name",
            f"{_q(name)} is not a valid name: use lower-case letters, digits, '.' and '-', "
            "starting with a letter or digit",
        )
    title = _str(head, "experiment", "title", default=name)
    source = _str(head, "experiment", "source", default="")
    notes = _str(head, "experiment", "notes", default="")
    scen = _str(head, "experiment", "scenario", required=True)
    try:
        scenario_path = (p.parent / scen).resolve() if not Path(scen).is_absolute() else Path(scen)
        found = scenario_path.is_file()
    except (OSError, ValueError) as e:  # a NUL byte, a name too long
        raise ExperimentError("experiment.scenario", f"{_q(scen)}: {e}") from None
    if not found:
        raise ExperimentError(
            "experiment.scenario", f"{_q(scen)}: no such file (looked for {scenario_path})"
        )
    file_seeds = _seeds(head.get("seeds", [1]), "experiment.seeds")
    sets = _sets(head.get("set", []), "experiment.set")

    schemes = _schemes(doc.get("scheme"))
    factors = _factors(doc.get("factor"))
    all_factors = factors
    phases = _phases(doc.get("phase"))

    run_seeds = file_seeds
    quick_doc: dict[str, Any] = {}
    if "quick" in doc:
        quick_doc = _table(doc["quick"], "quick")
        _only(quick_doc, "quick", ("set", "seeds", "factors"))
        q_sets = _sets(quick_doc.get("set", []), "quick.set")
        q_seeds = _seeds(quick_doc["seeds"], "quick.seeds") if "seeds" in quick_doc else file_seeds
        q_factors = _quick_factors(quick_doc.get("factors", {}), factors)
        if quick:
            sets = sets + q_sets
            run_seeds = q_seeds
            factors = tuple(q_factors.get(f.name, f) for f in factors)
    if seeds is not None:
        if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
            raise ExperimentError("--seeds", f"expected a whole number >= 1, found {_q(seeds)}")
        _check_seed_count(seeds, "--seeds")
        run_seeds = tuple(range(1, seeds + 1))
    seeds_path = "experiment.seeds"
    if seeds is not None:
        seeds_path = "--seeds"
    elif quick and "seeds" in quick_doc:
        seeds_path = "quick.seeds"
    _check_plan(schemes, factors, run_seeds, seeds_path)
    extra = tuple(extra_set)
    for i, s in enumerate(extra):
        _check_override(s, f"--set[{i}]")

    metrics = _metrics(doc.get("metric"), all_factors, schemes)
    metric_names = [m["name"] for m in metrics]
    dims = ["scheme", "phase", *[f.name for f in factors]]
    tables = _tables(doc.get("table"), dims, metric_names, all_factors, phases)
    papers = _references(doc.get("paper"), "paper", schemes, all_factors, phases, metric_names)
    ns2 = _references(doc.get("ns2"), "ns2", schemes, all_factors, phases, metric_names)
    figures = _figures(doc.get("figure"), metric_names, all_factors, phases)
    relations = _relations(doc.get("relation"), schemes, all_factors, phases, metric_names)

    norm: dict[str, Any] = {
        "experiment": {
            "name": name,
            "title": title,
            "source": source,
            "scenario": scen,
            "seeds": list(run_seeds),
            "set": list(sets) + list(extra),
            "notes": notes,
        },
        "scheme": [{"name": s.name, "set": list(s.set)} for s in schemes],
        "factor": [_factor_doc(f) for f in factors],
        "phase": [{"name": n} for n in phases],
        "metric": metrics,
        "table": tables,
        "paper": papers,
        "ns2": ns2,
        "figure": figures,
        "relation": relations,
    }
    return Experiment(
        name=name,
        title=title,
        source=source,
        path=p,
        scenario_path=scenario_path,
        seeds=run_seeds,
        set=sets,
        extra_set=extra,
        schemes=schemes,
        factors=factors,
        phases=phases,
        quick=quick,
        doc=norm,
    )


# ---------------------------------------------------------------------------
# Sections


def _schemes(v: Any) -> tuple[Scheme, ...]:
    if v is None:
        raise ExperimentError("scheme", "missing: give at least one [[scheme]] (name, set)")
    items = _array_of_tables(v, "scheme")
    if not items:
        raise ExperimentError("scheme", "empty: give at least one [[scheme]]")
    out: list[Scheme] = []
    seen: set[str] = set()
    for i, t in enumerate(items):
        path = f"scheme[{i}]"
        _only(t, path, ("name", "set"))
        name = _str(t, path, "name", required=True)
        if name in seen:
            raise ExperimentError(f"{path}.name", f"{_q(name)} is used by an earlier scheme")
        seen.add(name)
        out.append(Scheme(name, _sets(t.get("set", []), f"{path}.set")))
    return tuple(out)


def _factors(v: Any) -> tuple[Factor, ...]:
    if v is None:
        return ()
    out: list[Factor] = []
    seen: set[str] = set()
    for i, t in enumerate(_array_of_tables(v, "factor")):
        path = f"factor[{i}]"
        _only(t, path, ("name", "key", "keys", "values", "labels"))
        name = _str(t, path, "name", required=True)
        if name in seen:
            raise ExperimentError(f"{path}.name", f"{_q(name)} is used by an earlier factor")
        if "." in name or "[" in name:
            raise ExperimentError(
                f"{path}.name",
                f"{_q(name)}: a factor's name may not contain '.' or '[' (the flattened "
                "figures of summary.parquet use dots)",
            )
        if name in RESERVED_COLUMNS:
            raise ExperimentError(
                f"{path}.name",
                f"{_q(name)} is a column of summary.parquet; choose another name "
                f"(reserved: {', '.join(RESERVED_COLUMNS)})",
            )
        seen.add(name)
        if ("key" in t) == ("keys" in t):
            raise ExperimentError(
                path, 'give either key = "a.b" or keys = ["a", "b"] (exactly one)'
            )
        if "key" in t:
            keys: tuple[str, ...] = (_str(t, path, "key", required=True),)
            single = True
        else:
            kl = t["keys"]
            if not isinstance(kl, list) or not kl or not all(isinstance(k, str) for k in kl):
                raise ExperimentError(
                    f"{path}.keys", f"expected a non-empty array of key strings, found {_q(kl)}"
                )
            keys = tuple(kl)
            single = False
        for j, k in enumerate(keys):
            kp = f"{path}.key" if single else f"{path}.keys[{j}]"
            _check_key(k, kp)
        if "values" not in t:
            raise ExperimentError(f"{path}.values", "missing: the factor's values (an array)")
        vals = t["values"]
        if not isinstance(vals, list) or not vals:
            raise ExperimentError(f"{path}.values", f"expected a non-empty array, found {_q(vals)}")
        values: list[tuple[Any, ...]] = []
        canon: set[str] = set()
        for j, x in enumerate(vals):
            vp = f"{path}.values[{j}]"
            if single:
                _check_value(x, vp)
                tup: tuple[Any, ...] = (x,)
            else:
                if not isinstance(x, list) or len(x) != len(keys):
                    raise ExperimentError(
                        vp,
                        f"expected an array of {len(keys)} values (one per key of keys), "
                        f"found {_q(x)}",
                    )
                for m, y in enumerate(x):
                    _check_value(y, f"{vp}[{m}]")
                tup = tuple(x)
            c = canonical_json(list(tup))
            if c in canon:
                raise ExperimentError(vp, f"{_q(x)} is given twice")
            canon.add(c)
            values.append(tup)
        if single:
            _same_kind([v[0] for v in values], f"{path}.values")
        given = "labels" in t
        if given:
            labels = t["labels"]
            if (
                not isinstance(labels, list)
                or len(labels) != len(values)
                or not all(isinstance(x, str) and x for x in labels)
            ):
                raise ExperimentError(
                    f"{path}.labels",
                    f"expected an array of {len(values)} non-empty strings (one per value), "
                    f"found {_q(labels)}",
                )
            if len(set(labels)) != len(labels):
                raise ExperimentError(f"{path}.labels", "labels must be distinct")
        else:
            labels = [_label(v[0]) if single else canonical_json(list(v)) for v in values]
        raw = tuple(v[0] if single else list(v) for v in values)
        out.append(Factor(name, keys, tuple(values), raw, tuple(labels), given))
    return tuple(out)


def _label(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _same_kind(values: list[Any], path: str) -> None:
    def kind(x: Any) -> str:
        if isinstance(x, bool):
            return "boolean"
        if isinstance(x, int | float):
            return "number"
        if isinstance(x, str):
            return "string"
        return "other"

    kinds = {kind(x) for x in values}
    if len(kinds) > 1:
        raise ExperimentError(
            path,
            f"mixes {' and '.join(sorted(kinds))} values; a factor's values must be of one "
            "kind (they form one column of summary.parquet)",
        )


def _factor_doc(f: Factor) -> dict[str, Any]:
    d: dict[str, Any] = {"name": f.name}
    if len(f.keys) == 1:
        d["key"] = f.keys[0]
    else:
        d["keys"] = list(f.keys)
    d["values"] = list(f.raw)
    if f.given_labels:
        d["labels"] = list(f.labels)
    return d


def _quick_factors(v: Any, factors: tuple[Factor, ...]) -> dict[str, Factor]:
    t = _table(v, "quick.factors")
    by_name = {f.name: f for f in factors}
    out: dict[str, Factor] = {}
    for name, vals in t.items():
        path = f"quick.factors.{name}"
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise ExperimentError(path, f"{_q(name)} is not a factor; known: {known}")
        f = by_name[name]
        if not isinstance(vals, list) or not vals:
            raise ExperimentError(path, f"expected a non-empty array of values, found {_q(vals)}")
        keep: list[int] = []
        for j, x in enumerate(vals):
            idx = _value_index(f, x, f"{path}[{j}]")
            if idx not in keep:
                keep.append(idx)
        keep.sort()
        out[name] = Factor(
            f.name,
            f.keys,
            tuple(f.values[i] for i in keep),
            tuple(f.raw[i] for i in keep),
            tuple(f.labels[i] for i in keep),
            f.given_labels,
        )
    return out


def _factor_index(f: Factor, x: Any) -> int | None:
    """The index of value ``x`` (a value as written, or a label) of ``f``."""
    cx = canonical_json(x if len(f.keys) > 1 else [x])
    for i, v in enumerate(f.values):
        if canonical_json(list(v)) == cx or _num_equal(list(v), x if len(f.keys) > 1 else [x]):
            return i
    if isinstance(x, str) and x in f.labels:
        return f.labels.index(x)
    return None


def _value_index(f: Factor, x: Any, path: str) -> int:
    """:func:`_factor_index` of ``x``, or an error at ``path`` listing the factor's values."""
    idx = _factor_index(f, x)
    if idx is None:
        raise ExperimentError(
            path,
            f"{_q(x)} is not a value of factor {_q(f.name)}; its values: "
            f"{', '.join(_label(y) if len(f.keys) == 1 else json.dumps(y) for y in f.raw)}",
        )
    return idx


def _num_equal(a: list[Any], b: Any) -> bool:
    if not isinstance(b, list) or len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, bool) or isinstance(y, bool):
            if x is not y:
                return False
        elif isinstance(x, int | float) and isinstance(y, int | float):
            if float(x) != float(y):
                return False
        elif x != y:
            return False
    return True


def _phases(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    out: list[str] = []
    for i, t in enumerate(_array_of_tables(v, "phase")):
        path = f"phase[{i}]"
        _only(t, path, ("name",))
        name = _str(t, path, "name", required=True)
        if name == "all":
            raise ExperimentError(
                f"{path}.name", '"all" is reserved for the whole measurement interval'
            )
        if name in out:
            raise ExperimentError(f"{path}.name", f"{_q(name)} is used by an earlier phase")
        out.append(name)
    return tuple(out)


def _derived_names() -> list[str] | None:
    """The derived metrics of ``aqmlab.report.metrics``, if that module is
    there and lists them (``DERIVED`` or ``REGISTRY``, a mapping)."""
    try:
        from importlib import import_module

        mod = import_module("aqmlab.report.metrics")
    except Exception:
        return None
    for attr in ("DERIVED", "REGISTRY", "METRICS"):
        reg = getattr(mod, attr, None)
        if isinstance(reg, Mapping):
            return sorted(str(k) for k in reg)
    return None


def _scheme_names(sch: Any, path: str, names: list[str]) -> list[str]:
    """A ``schemes`` key: a non-empty array of the experiment's scheme names."""
    if not isinstance(sch, list) or not sch:
        raise ExperimentError(path, f"expected a non-empty array of scheme names, found {_q(sch)}")
    for j, s in enumerate(sch):
        if s not in names:
            raise ExperimentError(
                f"{path}[{j}]", f"{_q(s)} is not a scheme; known: {', '.join(names)}"
            )
    return list(sch)


def _metrics(
    v: Any, factors: tuple[Factor, ...], schemes: tuple[Scheme, ...] = ()
) -> list[dict[str, Any]]:
    if v is None:
        return []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    derived_known = _derived_names()
    for i, t in enumerate(_array_of_tables(v, "metric")):
        path = f"metric[{i}]"
        _only(
            t,
            path,
            (
                "name",
                "summary",
                "derived",
                "args",
                "unit",
                "scale",
                "digits",
                "stat",
                "better",
                "factors",
                "schemes",
            ),
        )
        name = _str(t, path, "name", required=True)
        if name in seen:
            raise ExperimentError(f"{path}.name", f"{_q(name)} is used by an earlier metric")
        seen.add(name)
        m: dict[str, Any] = {"name": name}
        if ("summary" in t) == ("derived" in t):
            raise ExperimentError(
                path,
                'give either summary = "dotted.path" (a figure of summary.json) or '
                'derived = "NAME" (a metric computed from the run folder), exactly one',
            )
        if "summary" in t:
            s = _str(t, path, "summary", required=True)
            # Steps are keys, or a list element's name (link names carry hyphens) or index.
            if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", s):
                raise ExperimentError(
                    f"{path}.summary",
                    f"{_q(s)} is not a dotted path of summary.json (e.g. bottleneck.utilization)",
                )
            m["summary"] = s
            if "args" in t:
                raise ExperimentError(f"{path}.args", "only a derived metric takes args")
        else:
            d = _str(t, path, "derived", required=True)
            if derived_known is not None and d not in derived_known:
                raise ExperimentError(
                    f"{path}.derived",
                    f"{_q(d)} is not a derived metric; known: {', '.join(derived_known)}",
                )
            m["derived"] = d
            m["args"] = _table(t.get("args", {}), f"{path}.args")
        m["unit"] = _str(t, path, "unit", default="")
        m["scale"] = _number(t, path, "scale", default=1.0)
        if "digits" in t:
            dg = t["digits"]
            if isinstance(dg, bool) or not isinstance(dg, int) or not 0 <= dg <= 12:
                raise ExperimentError(f"{path}.digits", f"expected 0..12, found {_q(dg)}")
            m["digits"] = dg
        m["stat"] = _choice(t, path, "stat", STATS, "mean")
        m["better"] = _choice(t, path, "better", BETTER, "none")
        if "factors" in t:
            m["factors"] = _metric_factors(t["factors"], f"{path}.factors", factors)
        if "schemes" in t:
            m["schemes"] = _scheme_names(t["schemes"], f"{path}.schemes", [s.name for s in schemes])
        out.append(m)
    return out


def _metric_factors(v: Any, path: str, factors: tuple[Factor, ...]) -> dict[str, list[Any]]:
    """A metric's ``{ factor = value }``, or ``{ factor = [value, ...] }`` (it is measured at
    each of them): the values as summary.parquet's columns hold them, a list per factor."""
    out: dict[str, list[Any]] = {}
    for fname, fv in _table(v, path).items():
        f = next((x for x in factors if x.name == fname), None)
        if f is None or not isinstance(fv, list) or _factor_index(f, fv) is not None:
            out[fname] = [_factor_values({fname: fv}, path, factors)[fname]]
            continue
        if not fv:
            raise ExperimentError(f"{path}.{fname}", "an empty list; give one value or more")
        out[fname] = [
            f.column_value(_value_index(f, x, f"{path}.{fname}[{i}]")) for i, x in enumerate(fv)
        ]
    return out


def _tables(
    v: Any,
    dims: list[str],
    metric_names: list[str],
    factors: tuple[Factor, ...] = (),
    phases: tuple[str, ...] = (),
) -> list[dict[str, Any]]:
    if v is None:
        return []
    single = isinstance(v, dict)
    items = [v] if single else _array_of_tables(v, "table")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, t0 in enumerate(items):
        path = "table" if single else f"table[{i}]"
        t = _table(t0, path)
        _only(t, path, ("name", "rows", "columns", "metrics", "factors", "phases"))
        name = _str(t, path, "name", required=True)
        if name in seen:
            raise ExperimentError(f"{path}.name", f"{_q(name)} is used by an earlier table")
        seen.add(name)
        used: dict[str, str] = {}
        tab: dict[str, Any] = {"name": name}
        for key in ("rows", "columns"):
            lst = t.get(key, [])
            if not isinstance(lst, list) or not all(isinstance(x, str) for x in lst):
                raise ExperimentError(
                    f"{path}.{key}", f"expected an array of names, found {_q(lst)}"
                )
            for j, dname in enumerate(lst):
                if dname not in dims:
                    raise ExperimentError(
                        f"{path}.{key}[{j}]",
                        f"{_q(dname)} is not a dimension; known: {', '.join(dims)}",
                    )
                if dname in used:
                    raise ExperimentError(
                        f"{path}.{key}[{j}]", f"{_q(dname)} is already in {path}.{used[dname]}"
                    )
                used[dname] = key
            tab[key] = list(lst)
        ms = t.get("metrics")
        if not isinstance(ms, list) or not ms or not all(isinstance(x, str) for x in ms):
            raise ExperimentError(
                f"{path}.metrics", f"expected a non-empty array of metric names, found {_q(ms)}"
            )
        for j, mname in enumerate(ms):
            if mname not in metric_names:
                raise ExperimentError(
                    f"{path}.metrics[{j}]",
                    f"{_q(mname)} is not a metric; known: {', '.join(metric_names) or 'none'}",
                )
        tab["metrics"] = list(ms)
        if "factors" in t:
            tab["factors"] = _table_factors(t["factors"], f"{path}.factors", factors, used)
        if "phases" in t:
            tab["phases"] = _table_phases(t["phases"], f"{path}.phases", phases, used)
        out.append(tab)
    return out


def _table_factors(
    v: Any, path: str, factors: tuple[Factor, ...], used: dict[str, str]
) -> dict[str, Any]:
    """A table's ``factors``: a value fixes a factor that does not lay out the table (the
    table shows those points only); an array of values picks the values a factor that lays
    it out shows, in this order."""
    fs = _table(v, path)
    shown = {k: x for k, x in fs.items() if isinstance(x, list)}
    out = _factor_values({k: x for k, x in fs.items() if k not in shown}, path, factors)
    for fname in out:
        if fname in used:
            raise ExperimentError(
                f"{path}.{fname}",
                f"{_q(fname)} is in {path.rsplit('.', 1)[0]}.{used[fname]}; a factor that lays "
                "out the table takes an array of the values it shows, or is fixed by one value "
                "and left out of rows and columns",
            )
    by_factor = {f.name: f for f in factors}
    for fname, vals in shown.items():
        if fname not in by_factor:
            raise ExperimentError(
                f"{path}.{fname}",
                f"{_q(fname)} is not a factor; known: {', '.join(by_factor) or 'none'}",
            )
        if fname not in used:
            raise ExperimentError(
                f"{path}.{fname}",
                f"an array picks the values a factor in rows or columns shows; put {_q(fname)} "
                "in rows or columns, or fix it by one value",
            )
        if not vals:
            raise ExperimentError(f"{path}.{fname}", "expected a non-empty array of values")
        f = by_factor[fname]
        picked: list[Any] = []
        for j, x in enumerate(vals):
            value = f.column_value(_value_index(f, x, f"{path}.{fname}[{j}]"))
            if value in picked:
                raise ExperimentError(f"{path}.{fname}[{j}]", f"{_q(x)} is listed twice")
            picked.append(value)
        out[fname] = picked
    return out


def _table_phases(v: Any, path: str, phases: tuple[str, ...], used: dict[str, str]) -> list[str]:
    """A table's ``phases``: the named phases its phase dimension shows, in this order."""
    if "phase" not in used:
        raise ExperimentError(
            path, 'selects the phases of the phase dimension; put "phase" in rows or columns'
        )
    if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
        raise ExperimentError(path, f"expected a non-empty array of phase names, found {_q(v)}")
    for j, ph in enumerate(v):
        if ph not in phases:
            raise ExperimentError(
                f"{path}[{j}]", f"{_q(ph)} is not a phase; known: {', '.join(phases) or 'none'}"
            )
        if ph in v[:j]:
            raise ExperimentError(f"{path}[{j}]", f"{_q(ph)} is listed twice")
    return list(v)


def _references(
    v: Any,
    section: str,
    schemes: tuple[Scheme, ...],
    factors: tuple[Factor, ...],
    phases: tuple[str, ...],
    metric_names: list[str],
) -> list[dict[str, Any]]:
    """``[[paper]]`` or ``[[ns2]]`` (``section``): figures to set beside ours, each for the
    cell its scheme, phase, factor values and metric select."""
    if v is None:
        return []
    scheme_names = [s.name for s in schemes]
    out: list[dict[str, Any]] = []
    for i, t in enumerate(_array_of_tables(v, section)):
        path = f"{section}[{i}]"
        _only(t, path, PAPER_KEYS if section == "paper" else NS2_KEYS)
        entry: dict[str, Any] = {}
        sch = _str(t, path, "scheme", required=True)
        if sch not in scheme_names:
            raise ExperimentError(
                f"{path}.scheme", f"{_q(sch)} is not a scheme; known: {', '.join(scheme_names)}"
            )
        entry["scheme"] = sch
        ph = _str(t, path, "phase", default="all")
        if ph != "all" and ph not in phases:
            raise ExperimentError(
                f"{path}.phase",
                f"{_q(ph)} is not a phase; known: {', '.join(['all', *phases])}",
            )
        entry["phase"] = ph
        entry["factors"] = _factor_values(t.get("factors", {}), f"{path}.factors", factors)
        met = _str(t, path, "metric", required=True)
        if met not in metric_names:
            raise ExperimentError(
                f"{path}.metric",
                f"{_q(met)} is not a metric; known: {', '.join(metric_names) or 'none'}",
            )
        entry["metric"] = met
        if ("value" in t) == ("range" in t):
            raise ExperimentError(
                path, "give either value = X or range = [LOW, HIGH] (exactly one)"
            )
        if "value" in t:
            entry["value"] = _number(t, path, "value", default=0.0)
        else:
            r = t["range"]
            if (
                not isinstance(r, list)
                or len(r) != 2
                or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in r)
                or not all(math.isfinite(float(x)) for x in r)
                or float(r[0]) > float(r[1])
            ):
                raise ExperimentError(
                    f"{path}.range", f"expected [LOW, HIGH] with LOW <= HIGH, found {_q(r)}"
                )
            entry["range"] = [float(r[0]), float(r[1])]
        if "band" in t:
            band = t["band"]
            if not isinstance(band, bool):
                raise ExperimentError(f"{path}.band", f"expected true or false, found {_q(band)}")
            if band and "range" not in t:
                raise ExperimentError(
                    f"{path}.band", "a band is a range: give range = [LOW, HIGH] with band = true"
                )
            if band:
                entry["band"] = True
        if "note" in t:
            entry["note"] = _str(t, path, "note", default="")
        out.append(entry)
    return out


def _factor_values(v: Any, path: str, factors: tuple[Factor, ...]) -> dict[str, Any]:
    """``{ factor = value }`` (a value or a label of each factor named), as
    the values summary.parquet's columns hold."""
    fs = _table(v, path)
    by_factor = {f.name: f for f in factors}
    out: dict[str, Any] = {}
    for fname, fv in fs.items():
        if fname not in by_factor:
            raise ExperimentError(
                f"{path}.{fname}",
                f"{_q(fname)} is not a factor; known: {', '.join(by_factor) or 'none'}",
            )
        f = by_factor[fname]
        out[fname] = f.column_value(_value_index(f, fv, f"{path}.{fname}"))
    return out


def _figures(
    v: Any, metric_names: list[str], factors: tuple[Factor, ...], phases: tuple[str, ...]
) -> list[dict[str, Any]]:
    if v is None:
        return []
    factor_names = [f.name for f in factors]
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    all_kind_keys = sorted({k for ks in FIGURE_KINDS.values() for k in ks})
    for i, t in enumerate(_array_of_tables(v, "figure")):
        path = f"figure[{i}]"
        _only(t, path, (*FIGURE_COMMON, *all_kind_keys))
        name = _str(t, path, "name", required=True)
        if not STEM_RE.fullmatch(name):
            raise ExperimentError(
                f"{path}.name",
                f"{_q(name)} is not a file stem: use letters, digits, '.', '_' and '-'",
            )
        if name in seen:
            raise ExperimentError(f"{path}.name", f"{_q(name)} is used by an earlier figure")
        seen.add(name)
        kind = _choice(t, path, "kind", tuple(FIGURE_KINDS), None)
        fig: dict[str, Any] = {"name": name, "title": _str(t, path, "title", default=name)}
        fig["kind"] = kind
        if "paper_ref" in t:
            fig["paper_ref"] = _str(t, path, "paper_ref", default="")
        if "factors" in t:
            fig["factors"] = _factor_values(t["factors"], f"{path}.factors", factors)
        if "phase" in t:
            ph = _str(t, path, "phase", default="all")
            if ph != "all" and ph not in phases:
                raise ExperimentError(
                    f"{path}.phase",
                    f"{_q(ph)} is not a phase; known: {', '.join(['all', *phases])}",
                )
            fig["phase"] = ph
        for k in all_kind_keys:
            if k in t and k not in FIGURE_KINDS[kind]:
                takers = [n for n, ks in FIGURE_KINDS.items() if k in ks]
                raise ExperimentError(
                    f"{path}.{k}",
                    f"not a key of a {_q(kind)} figure (only of kind {', '.join(takers)}); "
                    f"a {_q(kind)} figure takes: {', '.join(FIGURE_KINDS[kind]) or 'nothing more'}",
                )
        if kind == "timeseries":
            series = t.get("series", list(DEFAULT_SERIES))
            if not isinstance(series, list) or not series:
                raise ExperimentError(
                    f"{path}.series", f"expected a non-empty array of names, found {_q(series)}"
                )
            for j, s in enumerate(series):
                if not isinstance(s, str) or not (
                    s in QUEUE_SERIES or (s.startswith("param:") and len(s) > len("param:"))
                ):
                    raise ExperimentError(
                        f"{path}.series[{j}]",
                        f"{_q(s)} is not a series; allowed: {', '.join(QUEUE_SERIES)} "
                        "or param:NAME (an adapted parameter of params.parquet)",
                    )
            fig["series"] = list(series)
        elif kind in ("metric_vs_factor", "phase_bars"):
            met = _str(t, path, "metric", required=True)
            if met not in metric_names:
                raise ExperimentError(
                    f"{path}.metric",
                    f"{_q(met)} is not a metric; known: {', '.join(metric_names) or 'none'}",
                )
            fig["metric"] = met
            if kind == "metric_vs_factor":
                fac = _str(t, path, "factor", required=True)
                if fac not in factor_names:
                    raise ExperimentError(
                        f"{path}.factor",
                        f"{_q(fac)} is not a factor; known: {', '.join(factor_names) or 'none'}",
                    )
                fig["factor"] = fac
        elif kind == "ellipse":
            if "interval_s" in t:
                x = _number(t, path, "interval_s", default=1.0)
                if not x > 0:
                    raise ExperimentError(
                        f"{path}.interval_s", f"expected a number of seconds > 0, found {_q(x)}"
                    )
                fig["interval_s"] = x
        else:  # cdf
            if "x_max" in t:
                x = _number(t, path, "x_max", default=0.0)
                if x <= 0:
                    raise ExperimentError(f"{path}.x_max", f"expected a number > 0, found {_q(x)}")
                fig["x_max"] = x
            fig["of"] = _choice(t, path, "of", CDF_OF, "responses")
            for key in ("tail", "log_x"):
                flag = t.get(key, False)
                if not isinstance(flag, bool):
                    raise ExperimentError(
                        f"{path}.{key}", f"expected true or false, found {_q(flag)}"
                    )
                fig[key] = flag
            if "link" in t:
                if fig["of"] != "delay":
                    raise ExperimentError(
                        f"{path}.link",
                        'a link is chosen for of = "delay" only (responses are end to end)',
                    )
                fig["link"] = _str(t, path, "link", required=True)
            if "group" in t:
                g = t["group"]
                if fig["of"] != "delay":
                    raise ExperimentError(
                        f"{path}.group",
                        'a traffic group is chosen for of = "delay" only '
                        "(its packets' queueing delay, metrics.group_delays)",
                    )
                if isinstance(g, bool) or not isinstance(g, int) or g < 0:
                    raise ExperimentError(
                        f"{path}.group",
                        f"expected a [[traffic]] index (a whole number >= 0), found {_q(g)}",
                    )
                fig["group"] = g
        out.append(fig)
    return out


def _relations(
    v: Any,
    schemes: tuple[Scheme, ...],
    factors: tuple[Factor, ...],
    phases: tuple[str, ...],
    metric_names: list[str],
) -> list[dict[str, Any]]:
    if v is None:
        return []
    names = [s.name for s in schemes]
    out: list[dict[str, Any]] = []
    for i, t in enumerate(_array_of_tables(v, "relation")):
        path = f"relation[{i}]"
        _only(t, path, RELATION_KEYS)
        rel: dict[str, Any] = {
            "claim": _str(t, path, "claim", required=True),
            "source": _str(t, path, "source", default=""),
        }
        met = _str(t, path, "metric", required=True)
        if met not in metric_names:
            raise ExperimentError(
                f"{path}.metric", f"{_q(met)} is not a metric; known: {', '.join(metric_names)}"
            )
        rel["metric"] = met
        rel["op"] = _choice(t, path, "op", RELATION_OPS, "<")
        if ("than" in t) == ("value" in t):
            raise ExperimentError(
                path, "give exactly one of than (a scheme) and value (a number) as the reference"
            )
        if "than" in t:
            than = _str(t, path, "than", required=True)
            if than not in names:
                raise ExperimentError(
                    f"{path}.than", f"{_q(than)} is not a scheme; known: {', '.join(names)}"
                )
            rel["than"] = than
        else:
            rel["value"] = _number(t, path, "value", default=0.0)
        if "schemes" in t:
            rel["schemes"] = _scheme_names(t["schemes"], f"{path}.schemes", names)
        rel["ratio"] = _number(t, path, "ratio", default=1.0)
        if not rel["ratio"] > 0:
            raise ExperimentError(f"{path}.ratio", f"expected a number > 0, found {_q(t['ratio'])}")
        rel["tolerance"] = _number(t, path, "tolerance", default=0.05)
        if not rel["tolerance"] >= 0:
            raise ExperimentError(
                f"{path}.tolerance", f"expected a number >= 0, found {_q(t['tolerance'])}"
            )
        if "tolerance" in t and rel["op"] != "within":
            raise ExperimentError(f"{path}.tolerance", 'a tolerance goes with op = "within" only')
        ph = _str(t, path, "phase", default="all")
        if ph != "all" and ph not in phases:
            raise ExperimentError(
                f"{path}.phase", f"{_q(ph)} is not a phase; known: {', '.join(['all', *phases])}"
            )
        rel["phase"] = ph
        if "factors" in t:
            rel["factors"] = _factor_values(t["factors"], f"{path}.factors", factors)
        out.append(rel)
    return out


# ---------------------------------------------------------------------------
# Small checkers


def _check_leaves(doc: Mapping[str, Any]) -> None:
    """Refuse, by path, what no field of an experiment can hold: text that is not UTF-8 (a
    lone surrogate), a number beyond a float's range, NaN or infinity."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, path = stack.pop()
        items = node.items() if isinstance(node, Mapping) else enumerate(node)
        for k, v in items:
            here = f"{path}[{k}]" if isinstance(k, int) else (f"{path}.{k}" if path else str(k))
            if isinstance(k, str) and not _utf8(k):
                raise ExperimentError(_printable(here), "a key that is not UTF-8 text")
            if isinstance(v, str) and not _utf8(v):
                raise ExperimentError(_printable(here), f"not UTF-8 text: {_printable(v)[:60]}")
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**1023:
                raise ExperimentError(_printable(here), "a number too large for any field")
            if isinstance(v, float) and not math.isfinite(v):
                raise ExperimentError(_printable(here), f"expected a finite number, found {v}")
            if isinstance(v, Mapping | list):
                stack.append((v, here))


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _only(t: Mapping[str, Any], path: str, allowed: Sequence[str]) -> None:
    for k in t:
        if k not in allowed:
            where = f"{path}.{k}" if path else k or '""'
            raise ExperimentError(where, f"unknown key {_q(k)}; allowed here: {', '.join(allowed)}")


def _table(v: Any, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ExperimentError(path, f"expected a table, found {_show(v)}")
    return v


def _array_of_tables(v: Any, path: str) -> list[dict[str, Any]]:
    if isinstance(v, dict):
        raise ExperimentError(path, f"expected an array of tables: write [[{path}]], not [{path}]")
    if not isinstance(v, list):
        raise ExperimentError(path, f"expected an array of tables ([[{path}]]), found {_show(v)}")
    for i, t in enumerate(v):
        if not isinstance(t, dict):
            raise ExperimentError(f"{path}[{i}]", f"expected a table, found {_show(t)}")
    return v


def _str(
    t: Mapping[str, Any], path: str, key: str, *, required: bool = False, default: str = ""
) -> str:
    if key not in t:
        if required:
            raise ExperimentError(f"{path}.{key}", "missing (required)")
        return default
    v = t[key]
    if not isinstance(v, str):
        raise ExperimentError(f"{path}.{key}", f"expected a string, found {_show(v)}")
    if required and not v.strip():
        raise ExperimentError(f"{path}.{key}", "must not be empty")
    return v


def _number(t: Mapping[str, Any], path: str, key: str, *, default: float) -> float:
    if key not in t:
        return default
    v = t[key]
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(float(v)):
        raise ExperimentError(f"{path}.{key}", f"expected a finite number, found {_show(v)}")
    return float(v)


def _choice(
    t: Mapping[str, Any], path: str, key: str, allowed: Sequence[str], default: str | None
) -> str:
    if key not in t:
        if default is None:
            raise ExperimentError(
                f"{path}.{key}", f"missing (required): one of {', '.join(map(_q, allowed))}"
            )
        return default
    v = t[key]
    if v not in allowed:
        raise ExperimentError(
            f"{path}.{key}", f"{_show(v)} is not allowed; one of {', '.join(map(_q, allowed))}"
        )
    return str(v)


def _seeds(v: Any, path: str) -> tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 1:
            raise ExperimentError(
                path, f"{v} seeds: expected n >= 1 (meaning seeds 1..n) or an array of seeds"
            )
        _check_seed_count(v, path)
        return tuple(range(1, v + 1))
    if not isinstance(v, list) or not v:
        raise ExperimentError(
            path, f"expected a whole number n >= 1 or a non-empty array of seeds, found {_show(v)}"
        )
    out: list[int] = []
    for i, s in enumerate(v):
        if isinstance(s, bool) or not isinstance(s, int) or s < 0 or s >= 2**64:
            raise ExperimentError(f"{path}[{i}]", f"expected a whole number >= 0, found {_show(s)}")
        if s in out:
            raise ExperimentError(f"{path}[{i}]", f"seed {s} is given twice")
        out.append(s)
    return tuple(out)


def _check_seed_count(n: int, path: str) -> None:
    """Refuse more seeds than one sweep can run, before any is made."""
    if n > MAX_POINTS:
        raise ExperimentError(
            path, f"{n} seeds: a sweep runs at most {MAX_POINTS} points; use fewer seeds"
        )


def _check_plan(
    schemes: Sequence[Any], factors: Sequence[Factor], seeds: Sequence[int], seeds_path: str
) -> None:
    """Refuse a plan of more than :data:`MAX_POINTS` points (schemes x
    factor values x seeds), counted before any point is built, naming the
    part that contributes most."""
    parts = [("scheme", len(schemes))]
    parts += [(f"factor.{f.name}.values", len(f.values)) for f in factors]
    parts.append((seeds_path, len(seeds)))
    total = math.prod(n for _, n in parts)
    if total > MAX_POINTS:
        field, n = max(parts, key=lambda p: p[1])
        shape = " x ".join(f"{n_} {name}" for name, n_ in parts)
        raise ExperimentError(
            field,
            f"{n} entries make {total} points ({shape}); a sweep runs at most {MAX_POINTS} "
            "points: split it or use fewer",
        )


def _sets(v: Any, path: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ExperimentError(path, f'expected an array of "key=value" strings, found {_show(v)}')
    for i, s in enumerate(v):
        _check_override(s, f"{path}[{i}]")
    return tuple(v)


def _check_override(s: str, path: str) -> None:
    from aqmlab.scenario import ScenarioError, parse_override

    try:
        parse_override(s)
    except ScenarioError as e:
        raise ExperimentError(path, e.msg) from None


def _check_key(k: str, path: str) -> None:
    from aqmlab.scenario import ScenarioError, parse_key

    try:
        parse_key(k)
    except ScenarioError as e:
        raise ExperimentError(path, e.msg) from None


def _check_value(x: Any, path: str) -> None:
    if isinstance(x, float) and not math.isfinite(x):
        raise ExperimentError(path, f"{x} is not a finite number")
    if not isinstance(x, str | int | float | bool | list | dict):
        raise ExperimentError(
            path, f"{_show(x)} cannot be a scenario value (TOML dates and times are not allowed)"
        )


def _q(v: Any) -> str:
    """A value as it is quoted in messages (JSON: strings in double quotes)."""
    try:
        return json.dumps(v, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(v)


def _show(v: Any) -> str:
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return f"an array {json.dumps(v, default=str)[:60]}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def canonical_json(v: Any) -> str:
    """Sorted keys, no spaces: the form point ids are hashed from."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
