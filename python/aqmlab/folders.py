"""The folders ``aqmlab plot`` and ``aqmlab compare`` take, and the names they show.

A command line names result folders of three kinds:

- a run folder (``aqmlab run -o DIR``): shown by its folder name (its path where two names
  repeat);
- a point folder of a sweep (``SWEEP/points/<id>``): shown by its scheme and factor values,
  read from its ``point.json`` (``PI, buffer=200``), not by its hexadecimal id;
- a whole sweep folder (``SWEEP``, holding ``experiment.json``): every complete point of it,
  in the experiment's order, each shown as a point folder is; ``--where NAME=VALUE`` keeps the
  points whose scheme, factor or seed has that value (several values of one name: any of them;
  several names: all of them), e.g. ``--where scheme=PI --where buffer=200``.

A name shows the seed only where the points shown differ in seed, and is prefixed with the
sweep folder's name only where two sweeps would show the same name (``thesis-5.5.3: PI-40``
beside ``thesis-5.5.3-quick: PI-40``). :func:`expand` does
this; a mistake (a folder of none of the three kinds, an unknown ``--where`` name, a value no
point has) is a :class:`SelectionError` that names the argument, the value and what is
allowed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab import results

__all__ = ["Selected", "SelectionError", "expand", "parse_where"]

EXPERIMENT_JSON = "experiment.json"
POINT_JSON = "point.json"
POINTS = "points"


class SelectionError(Exception):
    """A folder argument or a ``--where`` term that selects nothing sensible."""


@dataclass
class Selected:
    """One result folder to show, and its name."""

    path: Path
    label: str
    #: scheme, factors and seed of a sweep's point (None for a plain run folder).
    scheme: str | None = None
    factors: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    #: The name of the sweep folder the point came from.
    sweep: str | None = None


def parse_where(terms: Iterable[str]) -> dict[str, list[str]]:
    """``["scheme=PI", "buffer=200", "scheme=RED"]`` -> ``{"scheme": ["PI", "RED"],
    "buffer": ["200"]}``."""
    out: dict[str, list[str]] = {}
    for t in terms:
        name, sep, value = t.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise SelectionError(
                f"--where {t!r}: expected NAME=VALUE, NAME being scheme, seed or a factor of "
                "the sweep (e.g. --where scheme=PI --where buffer=200; put --where after the "
                "folders)"
            )
        out.setdefault(name, []).append(value)
    return out


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, str):
        return v
    return json.dumps(v)


def _matches(value: Any, text: str) -> bool:
    """Whether a point's value is the ``--where`` text: numbers as numbers (``200`` is
    ``200.0``), booleans as ``true``/``false``, the rest as text."""
    if isinstance(value, bool):
        return text.lower() == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            x = float(text)
        except ValueError:
            return False
        return math.isclose(float(value), x, rel_tol=1e-12, abs_tol=0.0) or float(value) == x
    return _show(value) == text


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise SelectionError(f"{path}: cannot read the {what}: {e}") from None


def _point_complete(d: Path) -> dict[str, Any] | None:
    """point.json of a complete point folder, else None."""
    if not (results.is_run_dir(d) and (d / POINT_JSON).is_file()):
        return None
    try:
        info = json.loads((d / POINT_JSON).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return info if isinstance(info, dict) and info.get("status") == "ok" else None


def _sweep_points(d: Path) -> tuple[str, list[str], list[Selected], int]:
    """(experiment name, factor names, complete points in order, points left out)."""
    folder_name = d.resolve().name or str(d)
    doc = _read_json(d / EXPERIMENT_JSON, "sweep's experiment.json")
    if not isinstance(doc, dict):
        raise SelectionError(f"{d / EXPERIMENT_JSON}: not an experiment record")
    head = doc.get("experiment")
    exp: dict[str, Any] = head if isinstance(head, dict) else {}
    name = str(exp.get("name") or d.resolve().name)
    factors = [
        str(f["name"])
        for f in doc.get("factor", []) or []
        if isinstance(f, dict) and isinstance(f.get("name"), str)
    ]
    listed = doc.get("points", [])
    if not isinstance(listed, list):
        raise SelectionError(f"{d / EXPERIMENT_JSON}: its points are not a list")
    out: list[Selected] = []
    left_out = 0
    for p in listed:
        if not isinstance(p, dict) or not isinstance(p.get("id"), str) or p.get("error"):
            left_out += 1
            continue
        folder = d / POINTS / p["id"]
        if _point_complete(folder) is None:
            left_out += 1
            continue
        seed = p.get("seed")
        out.append(
            Selected(
                folder,
                "",
                scheme=str(p.get("scheme", "")),
                factors=dict(p.get("factors") or {}),
                seed=seed if isinstance(seed, int) else None,
                sweep=folder_name,
            )
        )
    return name, factors, out, left_out


def _filter(
    points: list[Selected], where: Mapping[str, list[str]], known: Sequence[str], d: Path
) -> list[Selected]:
    names = ["scheme", "seed", *known]
    for name, wanted in where.items():
        if name not in names:
            raise SelectionError(
                f"--where {name}={wanted[0]}: {d} has no {name!r} to choose by; "
                f"its names: {', '.join(names)}"
            )

    def value(p: Selected, name: str) -> Any:
        if name == "scheme":
            return p.scheme
        if name == "seed":
            return p.seed
        return p.factors.get(name)

    for name, wanted in where.items():
        have = list(dict.fromkeys(_show(value(p, name)) for p in points))
        for w in wanted:
            if not any(_matches(value(p, name), w) for p in points):
                raise SelectionError(
                    f"--where {name}={w}: no point of {d} has it; {name} is one of: "
                    f"{', '.join(have) or 'none'}"
                )
    return [
        p
        for p in points
        if all(any(_matches(value(p, n), w) for w in ws) for n, ws in where.items())
    ]


def _point_label(p: Selected, with_seed: bool) -> str:
    parts = [p.scheme or "?"]
    parts += [f"{k}={_show(v)}" for k, v in p.factors.items()]
    if with_seed and p.seed is not None:
        parts.append(f"seed {p.seed}")
    return ", ".join(parts)


def _run_labels(dirs: Sequence[Path]) -> list[str]:
    """Each folder's name; the whole path where names repeat."""
    names = [d.resolve().name or str(d) for d in dirs]
    if len(set(names)) == len(names):
        return names
    return [str(d) for d in dirs]


def expand(
    args: Sequence[str | Path], where: Iterable[str] = ()
) -> tuple[list[Selected], list[str]]:
    """The folders to show for the command line's folder arguments (see the module's
    documentation), and notes for the user (points of a sweep left out because they failed
    or have not run)."""
    chosen = parse_where(where)
    out: list[Selected] = []
    notes: list[str] = []
    sweeps = 0
    for a in args:
        d = Path(a)
        if d.is_dir() and (d / EXPERIMENT_JSON).is_file():
            sweeps += 1
            _, factors, points, left_out = _sweep_points(d)
            if left_out:
                notes.append(
                    f"{d}: {left_out} of {left_out + len(points)} point(s) left out "
                    "(failed, or not run yet)"
                )
            if not points:
                raise SelectionError(f"{d}: the sweep has no complete point to show")
            if chosen:
                points = _filter(points, chosen, factors, d)
                if not points:
                    terms = " ".join(f"{n}={w}" for n, ws in chosen.items() for w in ws)
                    raise SelectionError(
                        f"--where {terms}: no point of {d} has all of these (each alone "
                        "matches some)"
                    )
            out += points
        elif results.is_run_dir(d):
            info = _point_complete(d) if (d / POINT_JSON).is_file() else None
            if info is not None:
                seed = info.get("seed")
                out.append(
                    Selected(
                        d,
                        "",
                        scheme=str(info.get("scheme", "")),
                        factors=dict(info.get("factors") or {}),
                        seed=seed if isinstance(seed, int) else None,
                    )
                )
            else:
                out.append(Selected(d, ""))
        else:
            raise SelectionError(
                f"{d}: not an aqmlab result folder (no {results.MANIFEST}) nor a sweep folder "
                f"(no {EXPERIMENT_JSON})"
            )
    if chosen and not sweeps:
        raise SelectionError(
            "--where chooses points of a sweep folder (one holding experiment.json); none was given"
        )
    _name(out)
    return out, notes


def _name(items: list[Selected]) -> None:
    """Give each item its label (see the module's documentation)."""
    points = [s for s in items if s.scheme is not None]
    with_seed = len({s.seed for s in points}) > 1
    for s in points:
        s.label = _point_label(s, with_seed)
    plain = [s for s in items if s.scheme is None]
    for s, label in zip(plain, _run_labels([s.path for s in plain]), strict=True):
        s.label = label
    counts: dict[str, int] = {}
    for s in items:
        counts[s.label] = counts.get(s.label, 0) + 1
    for s in items:
        if counts[s.label] > 1 and s.scheme is not None:
            where = s.sweep or s.path.parent.parent.resolve().name
            s.label = f"{where}: {s.label}"
    # Still the same (one sweep given twice, two copies of a folder): the paths tell them apart.
    counts = {}
    for s in items:
        counts[s.label] = counts.get(s.label, 0) + 1
    for s in items:
        if counts[s.label] > 1:
            s.label = f"{s.label} ({s.path})"
