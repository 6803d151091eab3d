"""Scenario documents: loading TOML, ``--set`` overrides, validation.

A scenario is a plain nested dict (what a TOML file parses to). The engine
decodes and validates it once (``aqmlab._core.validate``); every error names
the field path and comes out as :class:`ScenarioError`. This module only
parses files, applies overrides and hands the document over as JSON.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeAlias

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from aqmlab import _tomlpath
from aqmlab._core import ScenarioError
from aqmlab._core import validate as _core_validate

__all__ = [
    "KindSwitchNote",
    "ScenarioError",
    "SpecSource",
    "TruncationNote",
    "apply_overrides",
    "apply_overrides_noted",
    "describe",
    "load",
    "parse_override",
    "to_json",
    "truncate",
    "validate",
]

#: Anything :func:`load` accepts: a file path, TOML text or a document.
SpecSource: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any]"

#: One step of a key path: a table key or an array index.
Step: TypeAlias = "str | int"

_SEGMENT = re.compile(r"([^.\[\]]*)((?:\[[^\[\]]*\])*)")

#: Deepest nesting of tables and arrays a document may have. The deepest
#: real key (``topology.links[0].loss.transitions[0][0]``) is 6 levels down;
#: the limit keeps every check, copy and the engine's JSON reader (which
#: stops at 128) far from their recursion limits.
MAX_DEPTH = 32

#: Range of an integer a scenario can hold (TOML and the engine: 64-bit signed).
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

#: Steps of a path shown when a value nests too deeply.
_SHOWN_STEPS = 6


def load(source: SpecSource) -> dict[str, Any]:
    """Return the scenario document of ``source``.

    ``source`` is a mapping (deep-copied), a path to a TOML file (a
    ``PathLike``, a string naming an existing file, or one-line string
    ending in ``.toml``), or TOML text (any other string: ``""`` and
    ``"# comment"`` are empty documents).
    A TOML syntax error raises :class:`ScenarioError` naming the file and the
    line; a missing file raises ``FileNotFoundError``.
    """
    if isinstance(source, Mapping):
        return _copy_tree(source)
    if isinstance(source, str) and not os.path.exists(source) and _looks_like_toml(source):
        return _parse_toml(source, "<string>")
    path = Path(source)
    text = path.read_text(encoding="utf-8")
    return _parse_toml(text, str(path))


def _looks_like_toml(s: str) -> bool:
    return "\n" in s or not s.strip().endswith(".toml")


def _parse_toml(text: str, name: str) -> dict[str, Any]:
    """Parse TOML text; a syntax error names the field it is in when the
    scan of :mod:`aqmlab._tomlpath` finds one (else the whole document)."""
    deep = _tomlpath.too_deep(text, MAX_DEPTH)
    if deep is not None:
        raise _too_deep(deep.steps, f" (line {deep.line} of {name})")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        at = _tomlpath.offset_of(text, str(e))
        loc = _tomlpath.path_at(text, at) if at is not None else None
        if loc is not None and loc.steps:
            raise ScenarioError(format_key(loc.steps), f"invalid TOML in {name}: {e}") from None
        where = f" at line {loc.line}" if loc is not None and "line" not in str(e) else ""
        raise ScenarioError("", f"{name}: invalid TOML{where}: {e}") from None
    except ValueError as e:
        # Python refuses integers of more than 4300 digits (int_max_str_digits).
        m = re.search(r"[0-9][0-9_]{4000,}", text)
        steps = _tomlpath.path_at(text, m.start()).steps if m else []
        raise ScenarioError(format_key(steps), f"invalid TOML in {name}: {e}") from None
    except RecursionError:  # pragma: no cover - too_deep catches it first
        raise ScenarioError("", f"{name}: nested too deeply for the TOML parser") from None


def _too_deep(steps: list[Step], where: str = "") -> ScenarioError:
    shown = format_key(steps[:_SHOWN_STEPS]) + ("..." if len(steps) > _SHOWN_STEPS else "")
    return ScenarioError(
        shown,
        f"tables and arrays nested more than {MAX_DEPTH} levels deep{where}; "
        "a scenario value is a number, a string, a boolean or a small table or list",
    )


def _copy_tree(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the tables and arrays of ``doc`` (leaves shared), without
    recursion; nesting deeper than :data:`MAX_DEPTH` (or a cycle) raises
    :class:`ScenarioError` naming the path."""
    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any, list[Step]]] = [(doc, root, [])]
    while stack:
        src, dst, steps = stack.pop()
        if len(steps) >= MAX_DEPTH:
            raise _too_deep(steps)
        items = src.items() if isinstance(src, Mapping) else enumerate(src)
        for k, v in items:
            if isinstance(v, Mapping):
                c: Any = {}
            elif isinstance(v, list | tuple):
                c = [None] * len(v)
            else:
                c = v
            dst[k] = c
            if c is not v:
                stack.append((v, c, [*steps, k]))
    return root


def parse_override(item: str) -> tuple[list[Step], Any]:
    """Split ``"key.path=value"`` into its key path and its value.

    The key path is dotted; array elements are written ``traffic[0]`` or
    ``traffic.0``. The value is read as a TOML value (``0.05``, ``true``,
    ``"10Mbps"``, ``[1, 2]``, ``{ uniform = ["0s", "1s"] }``); anything that
    is not valid TOML is taken as a plain string, so ``aqm.kind=red`` works.
    """
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ScenarioError("", f"malformed override {item!r}: expected key=value")
    steps = parse_key(key)
    raw = raw.strip()
    deep = _tomlpath.too_deep(f"v = {raw}", MAX_DEPTH - len(steps))
    if deep is not None:
        raise _too_deep([*steps, *deep.steps[1:]], " (in the --set value)")
    return steps, _parse_value(raw)


def parse_key(key: str) -> list[Step]:
    """Parse ``"traffic[0].flows"`` or ``"traffic.0.flows"`` into steps."""
    steps: list[Step] = []
    for part in key.split("."):
        m = _SEGMENT.fullmatch(part.strip())
        if m is None:
            raise ScenarioError("", f"malformed key {key!r}: cannot read {part!r}")
        name, indices = m.group(1), m.group(2)
        if name.isdigit():
            steps.append(int(name))
        elif name:
            steps.append(name)
        elif not indices:
            raise ScenarioError("", f"malformed key {key!r}: empty name")
        for idx in re.findall(r"\[([^\[\]]*)\]", indices):
            if not idx.strip().isdigit():
                raise ScenarioError(
                    "", f"malformed key {key!r}: index [{idx}] is not a whole number >= 0"
                )
            steps.append(int(idx))
    if not steps or isinstance(steps[0], int):
        raise ScenarioError("", f"malformed key {key!r}: it must start with a name")
    return steps


def _parse_value(raw: str) -> Any:
    try:
        parsed = tomllib.loads(f"v = {raw}")
    except (tomllib.TOMLDecodeError, RecursionError, ValueError):
        return raw
    if set(parsed) != {"v"}:
        return raw
    return parsed["v"]


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def format_key(steps: Iterable[Step]) -> str:
    """The field-path form the engine uses: ``traffic[0].flows``; a key that
    TOML could not write bare is quoted (``metrics." window"``, ``""``)."""
    out = ""
    for s in steps:
        if isinstance(s, int):
            out += f"[{s}]"
        else:
            k = s if _BARE_KEY.fullmatch(s) else json.dumps(s, ensure_ascii=not _is_text(s))
            out += f".{k}" if out else k
    return out


class KindSwitchNote(UserWarning):
    """An override changed an AQM table's ``kind``, so the table started
    again from the new scheme's defaults (issued by :func:`apply_overrides`)."""


def apply_overrides(
    doc: dict[str, Any], overrides: Iterable[str], unset: Iterable[str] = ()
) -> dict[str, Any]:
    """Apply ``key=value`` overrides to ``doc`` in place and return it.

    ``unset`` keys are removed first (each must be present). Then each
    override is set in turn: missing intermediate tables are created;
    indexing past the end of an array, or through a value that is not a
    table or an array, raises :class:`ScenarioError` naming the key.
    Unknown keys are left for the engine's validation to report.

    Setting the ``kind`` of an AQM table (``aqm``, ``topology.links[i].aqm``,
    ``topology.overrides[i].aqm``) to a different scheme starts that table
    from the new scheme's defaults: the old scheme's keys are dropped, except
    those set by these same overrides. Each switch that dropped keys is
    issued as a :class:`KindSwitchNote` warning (see
    :func:`apply_overrides_noted`).
    """
    import warnings

    for note in apply_overrides_noted(doc, overrides, unset):
        warnings.warn(note, KindSwitchNote, stacklevel=2)
    return doc


def apply_overrides_noted(
    doc: dict[str, Any], overrides: Iterable[str], unset: Iterable[str] = ()
) -> list[str]:
    """:func:`apply_overrides`, returning the notes of the kind switches
    instead of issuing them as warnings."""
    for key in unset:
        _unset(doc, parse_key(key.strip()))
    notes: list[str] = []
    #: Keys each table received from these overrides: kept across a switch.
    given: dict[str, dict[str, Any]] = {}
    for item in overrides:
        steps, value = parse_override(item)
        if _is_aqm_kind(steps):
            table = _get(doc, steps[:-1])
            old = table.get("kind", "droptail") if isinstance(table, dict) else None
            if isinstance(table, dict) and isinstance(value, str) and value != old:
                where = format_key(steps[:-1])
                mine = given.get(where, {})
                dropped = [k for k in table if k != "kind" and k not in mine]
                table.clear()
                table["kind"] = value
                table.update(mine)
                if dropped:
                    notes.append(
                        f"{where}.kind: {old} -> {value}: {where} starts from {value}'s "
                        f"defaults (dropped {', '.join(dropped)})"
                    )
                continue
        if len(steps) >= 2 and isinstance(steps[-1], str):
            given.setdefault(format_key(steps[:-1]), {})[steps[-1]] = value
        _set(doc, steps, value)
    return notes


def _is_aqm_kind(steps: list[Step]) -> bool:
    """Whether ``steps`` is the ``kind`` of an AQM table."""
    return len(steps) >= 2 and steps[-1] == "kind" and steps[-2] == "aqm"


def _get(doc: Any, steps: list[Step]) -> Any:
    """The value at ``steps``, or None when the path does not exist."""
    node = doc
    for s in steps:
        ok_table = isinstance(node, dict) and isinstance(s, str) and s in node
        ok_array = isinstance(node, list) and isinstance(s, int) and s < len(node)
        if not (ok_table or ok_array):
            return None
        node = node[s]
    return node


def _unset(doc: dict[str, Any], steps: list[Step]) -> None:
    """Remove the key or array element at ``steps``; a missing one is an error."""
    parent = _get(doc, steps[:-1])
    last = steps[-1]
    key = format_key(steps)
    in_table = isinstance(parent, dict) and isinstance(last, str) and last in parent
    in_array = isinstance(parent, list) and isinstance(last, int) and last < len(parent)
    if in_table or in_array:
        del parent[last]
    else:
        raise ScenarioError(key, "cannot unset it: the scenario does not set it")


def _set(doc: dict[str, Any], steps: list[Step], value: Any) -> None:
    node: Any = doc
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        here = format_key(steps[: i + 1])
        if isinstance(node, dict):
            if isinstance(step, int):
                parent = format_key(steps[:i])
                raise ScenarioError(here, f"{parent} is a table, not an array; cannot index it")
            if last:
                node[step] = value
                return
            if step not in node:
                node[step] = {}
            node = node[step]
        elif isinstance(node, list):
            parent = format_key(steps[:i])
            if not isinstance(step, int):
                raise ScenarioError(
                    here, f"{parent} is an array; select an element first ({parent}[0].{step})"
                )
            if step >= len(node):
                raise ScenarioError(
                    here,
                    f"index {step} is out of range: {parent} has {len(node)} "
                    f"element{'s' if len(node) != 1 else ''}",
                )
            if last:
                node[step] = value
                return
            node = node[step]
        else:
            parent = format_key(steps[:i])
            raise ScenarioError(
                here, f"{parent} is {_kind(node)}, not a table; cannot set a key inside it"
            )


def _is_text(s: str) -> bool:
    """Whether ``s`` is valid Unicode (no lone surrogates)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return f"a {type(v).__name__}"


def to_json(doc: Mapping[str, Any]) -> str:
    """Serialise a document for the engine, rejecting what it cannot hold
    with the field path: TOML dates and times, non-finite numbers, integers
    outside 64 bits, strings that are not valid Unicode (lone surrogates),
    and tables/arrays nested more than :data:`MAX_DEPTH` levels."""
    check_plain(doc)
    return json.dumps(doc)


def check_plain(doc: Mapping[str, Any]) -> None:
    """Raise :class:`ScenarioError` (with the field path) for the first value
    of ``doc`` the engine cannot hold (see :func:`to_json`). Iterative, so a
    document of any depth gives an error, never a ``RecursionError``."""
    stack: list[tuple[Any, list[Step]]] = [(doc, [])]
    while stack:
        v, steps = stack.pop()
        if isinstance(v, Mapping | list | tuple):
            if len(steps) >= MAX_DEPTH:
                raise _too_deep(steps)
            if isinstance(v, Mapping):
                for k in v:
                    if not isinstance(k, str):
                        raise ScenarioError(format_key(steps), f"key {k!r} is not a string")
                    _check_text(k, [*steps, k], "key")
                kids: list[tuple[Any, list[Step]]] = [(x, [*steps, k]) for k, x in v.items()]
            else:
                kids = [(x, [*steps, i]) for i, x in enumerate(v)]
            stack.extend(reversed(kids))
            continue
        where = format_key(steps)
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            if not INT_MIN <= v <= INT_MAX:
                raise ScenarioError(
                    where,
                    f"the integer {_short_int(v)} is outside the range a scenario can hold "
                    f"[-2^63, 2^63 - 1]",
                )
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise ScenarioError(where, f"{v} is not a finite number")
        elif isinstance(v, str):
            _check_text(v, steps, "string")
        elif isinstance(v, _dt.date | _dt.time):
            raise ScenarioError(
                where,
                f'a TOML date or time ({v}) is not allowed; write durations as strings like "15ms"',
            )
        elif v is None:
            raise ScenarioError(where, "null values are not allowed in a scenario")
        else:
            raise ScenarioError(where, f"unsupported value of type {type(v).__name__}")


def _check_text(s: str, steps: list[Step], what: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ScenarioError(
            format_key(steps),
            f"the {what} {s[:40]!r} is not valid Unicode (character {e.start} is a lone "
            "surrogate, e.g. from a file or argument that is not UTF-8)",
        ) from None


def _short_int(v: int) -> str:
    # str() of a huge int is slow (and refused past 4300 digits): give its size.
    if v.bit_length() <= 100:
        return str(v)
    return f"{'-' if v < 0 else ''}1e{int(v.bit_length() * math.log10(2))} (about)"


def validate(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``doc`` and return the resolved scenario (every default filled
    in). Raises :class:`ScenarioError` naming the field path on a bad value."""
    try:
        return resolved_from_json(_core_validate(to_json(doc)))
    except ScenarioError as e:
        raise with_truncate_hint(e) from None


class TruncationNote(UserWarning):
    """What :func:`truncate` dropped or clipped (issued by ``aqmlab.run(...,
    truncate=True)``)."""


#: Errors of values past the end of the run, which ``--truncate`` removes.
_PAST_END = re.compile(
    r"^(schedule\[\d+\]\.at|metrics\.phases\[\d+\](\[[01]\]|\.to)?|metrics\.start)$"
)


def with_truncate_hint(e: ScenarioError) -> ScenarioError:
    """``e`` with a hint to ``--truncate`` if it is about a time past the end."""
    if _PAST_END.match(e.path) and "end of the run" in e.msg:
        return ScenarioError(
            e.path,
            f"{e.msg}; to drop what lies past the end, run with --truncate (Python: truncate=True)",
        )
    return e


_TIME = re.compile(r"^\s*([0-9.eE+-]+)\s*(ns|us|ms|s)\s*$")
_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def _ns(v: Any, numbers_are_seconds: bool = False) -> int | None:
    """A time value in integer nanoseconds as the engine reads it (f64,
    rounded half away from zero), or None if it is not a time."""
    if isinstance(v, str):
        m = _TIME.match(v)
        if m is None:
            return None
        try:
            x = float(m.group(1)) * _UNIT_NS[m.group(2)]
        except ValueError:
            return None
    elif numbers_are_seconds and isinstance(v, int | float) and not isinstance(v, bool):
        x = float(v) * 1e9
    else:
        return None
    if not math.isfinite(x) or x < 0:
        return None
    return math.floor(x + 0.5)


def _fmt_ns(ns: int) -> str:
    for unit, k in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % k == 0:
            return f"{ns // k}{unit}"
    return f"{ns}ns"


def schedule_occurrences(resolved: Mapping[str, Any]) -> list[tuple[int, int, Mapping[str, Any]]]:
    """Every application of a resolved scenario's ``[[schedule]]`` entries as the engine
    runs them: (entry index, time in ns, entry), an entry with ``every`` once per repetition
    (at ``at``, ``at + every``, ... before ``until`` and ``duration``), in time order and at
    equal times in file order."""
    end = _ns(resolved.get("duration")) or 0
    out: list[tuple[int, int, Mapping[str, Any]]] = []
    for i, e in enumerate(resolved.get("schedule", []) or []):
        at = _ns(e.get("at")) or 0
        every = _ns(e.get("every"))
        if not every:
            out.append((i, at, e))
            continue
        stop = min(end, _ns(e.get("until")) or end)
        out.extend((i, t, e) for t in range(at, stop, every))
    out.sort(key=lambda o: (o[1], o[0]))
    return out


def _ranges(name: str, idx: list[int]) -> str:
    """``schedule[3], schedule[10..44]`` for indices [3, 10, 11, ..., 44]."""
    out: list[str] = []
    i = 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and idx[j + 1] == idx[j] + 1:
            j += 1
        out.append(f"{name}[{idx[i]}]" if i == j else f"{name}[{idx[i]}..{idx[j]}]")
        i = j + 1
    return ", ".join(out)


def truncate(doc: dict[str, Any]) -> list[str]:
    """Fit ``doc`` (in place) into its ``duration``, so that a long scenario
    can be tried short (``--set duration=20s --truncate``): every
    ``[[schedule]]`` entry at or after the end is dropped, ``metrics.phases``
    that begin at or after the end (a periodic one: whose first window does)
    are dropped and those that end after it end at it, and a ``metrics.start``
    at or after the end becomes ``0s``. Returns one note per change (empty
    when nothing lies past the end); values that are not times are left for
    validation to report."""
    end = _ns(doc.get("duration"))
    if end is None:
        return []
    notes: list[str] = []
    sched = doc.get("schedule")
    if isinstance(sched, list):
        kept, dropped, actions, times = [], [], [], []
        for i, e in enumerate(sched):
            at = _ns(e.get("at")) if isinstance(e, Mapping) else None
            if at is not None and at >= end:
                dropped.append(i)
                actions.append(str(e.get("action", "?")))
                times.append(at)
            else:
                kept.append(e)
        if dropped:
            if kept:
                doc["schedule"] = kept
            else:
                del doc["schedule"]
            kinds = ", ".join(dict.fromkeys(actions))
            span = _fmt_ns(min(times)) + (
                f" to {_fmt_ns(max(times))}" if max(times) != min(times) else ""
            )
            notes.append(
                f"dropped {len(dropped)} of {len(sched)} schedule entries at or after the end "
                f"({_fmt_ns(end)}): {_ranges('schedule', dropped)} ({kinds} at {span})"
            )
    metrics = doc.get("metrics")
    if not isinstance(metrics, dict):
        return notes
    phases = metrics.get("phases")
    if isinstance(phases, list):
        kept_phases: list[Any] = []
        gone: list[int] = []
        for i, ph in enumerate(phases):
            if isinstance(ph, dict):
                # A periodic phase: dropped if its first window begins at or after the end.
                a, b = _ns(ph.get("from"), True), _ns(ph.get("to"), True)
                first = None if a is None else a + (_ns(ph.get("offset", 0), True) or 0)
                if first is not None and first >= end:
                    gone.append(i)
                    continue
                if b is not None and b > end:
                    notes.append(
                        f"clipped metrics.phases[{i}] (from {ph.get('from')} to {ph.get('to')}, "
                        f"every {ph.get('every')}) to end at {_fmt_ns(end)}"
                    )
                    ph = {**ph, "to": _fmt_ns(end)}
                kept_phases.append(ph)
                continue
            if not (isinstance(ph, list) and len(ph) == 2):
                kept_phases.append(ph)
                continue
            a, b = _ns(ph[0], True), _ns(ph[1], True)
            if a is not None and a >= end:
                gone.append(i)
                continue
            if b is not None and b > end:
                notes.append(
                    f"clipped metrics.phases[{i}] [{ph[0]}, {ph[1]}] to end at {_fmt_ns(end)}"
                )
                ph = [ph[0], _fmt_ns(end)]
            kept_phases.append(ph)
        if gone:
            notes.append(
                f"dropped {len(gone)} of {len(phases)} phases that begin at or after the end: "
                f"{_ranges('metrics.phases', gone)}"
            )
        if kept_phases:
            metrics["phases"] = kept_phases
        else:
            del metrics["phases"]
    start = _ns(metrics.get("start"))
    if start is not None and start >= end:
        notes.append(f"metrics.start {metrics['start']} is past the end: measuring from 0s")
        metrics["start"] = "0s"
    return notes


def resolved_from_json(text: str) -> dict[str, Any]:
    """Parse the engine's resolved scenario; unset optional values (null in the
    engine's output) are left out, so the result is itself a valid document."""
    doc: dict[str, Any] = _drop_nulls(json.loads(text))
    return doc


def _drop_nulls(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_nulls(x) for x in v]
    return v


def describe(resolved: Mapping[str, Any]) -> str:
    """A one-line description of a resolved scenario: the topology, the
    queue discipline of each link (a custom topology's or parking lot's own
    per-link schemes, not only ``[aqm]``), the traffic by kind (TCP flows,
    UDP sources, web-simple and web sessions), the duration and the seed."""
    topo = resolved.get("topology", {})
    kind = topo.get("kind", "?")
    top = resolved.get("aqm", {})
    if kind == "custom":
        links = topo.get("links", [])
        parts = [f"custom {len(topo.get('nodes', []))} nodes, {len(links)} links"]
        parts.append(_per_link_aqm([(str(x.get("name", "?")), x.get("aqm", top)) for x in links]))
    else:
        nlinks = f"{topo.get('links')} x " if kind == "parking-lot" else ""
        rate, delay = topo.get("bottleneck_rate", "?"), topo.get("bottleneck_delay", "?")
        parts = [f"{kind} {nlinks}{rate} / {delay}", f"buffer {_buffer(topo.get('buffer'))}"]
        if kind == "parking-lot":
            over = {str(o.get("link")): o.get("aqm") for o in topo.get("overrides", [])}
            names = [f"link{k}" for k in range(int(topo.get("links", 0) or 0))]
            parts.append(_per_link_aqm([(n, over.get(n) or top) for n in names]))
        else:
            parts.append(_aqm(top))
    parts.append(_traffic(resolved))
    parts.append(f"{resolved.get('duration', '?')}, seed {resolved.get('seed', '?')}")
    return ", ".join(parts)


def _per_link_aqm(links: list[tuple[str, Mapping[str, Any]]]) -> str:
    """``red(...) on core2; droptail on 5 links`` (one scheme: just it)."""
    groups: dict[str, list[str]] = {}
    for name, a in links:
        groups.setdefault(_aqm(a), []).append(name)
    if len(groups) <= 1:
        return next(iter(groups), "droptail")
    out = []
    for desc, names in groups.items():
        on = ", ".join(names) if len(names) <= 3 else f"{len(names)} links"
        out.append(f"{desc} on {on}")
    return "; ".join(out)


def _traffic(resolved: Mapping[str, Any]) -> str:
    """Traffic by kind and direction: TCP bulk flows, UDP sources, sessions."""
    variant = resolved.get("tcp", {}).get("variant", "tcp")
    counts: dict[tuple[str, str], int] = {}
    loads: list[str] = []
    for g in resolved.get("traffic", []):
        k = g.get("kind", "?")
        d = g.get("direction", "forward")
        if k == "bulk":
            label = f"{variant} flows"
            n = g.get("flows", 0)
        elif k in ("cbr", "udp-onoff"):
            label = f"{k} UDP sources"
            n = g.get("flows", 0)
        elif k == "ping":
            label = "latency probes"
            n = g.get("flows", 0)
        elif k == "web-simple":
            label = "web-simple sessions"
            n = g.get("sessions", 0)
        elif k == "video":
            label = "video sessions"
            n = g.get("sessions", 0)
        elif k == "web":
            if "sessions" not in g:
                loads.append(f"web sessions for {g.get('offered_load', '?')} ({d})")
                continue
            label = "web sessions"
            n = g.get("sessions", 0)
        else:
            label, n = f"{k}", g.get("flows", 0)
        counts[(label, d)] = counts.get((label, d), 0) + int(n)
    by_label: dict[str, list[str]] = {}
    for (label, d), n in counts.items():
        by_label.setdefault(label, []).append(f"{n} {d}")
    parts = [" + ".join(ns) + f" {label}" for label, ns in by_label.items()]
    added = sum(
        int(e.get("start", 0)) + int(e.get("add_sessions", 0))
        for _, _, e in schedule_occurrences(resolved)
        if e.get("action") in ("flows", "web")
    )
    text = " + ".join([*parts, *loads]) or "no traffic"
    return f"{text} (+{added} started by the schedule)" if added else text


def _buffer(b: Any) -> str:
    return f"{b} pkts" if isinstance(b, int) else str(b)


def _aqm(a: Mapping[str, Any]) -> str:
    kind = str(a.get("kind", "droptail"))
    if kind == "red":
        extra = " ecn" if a.get("ecn") else ""
        return (
            f"red(min_th {_num(a.get('min_th'))}, max_th {_num(a.get('max_th'))}, "
            f"max_p {_num(a.get('max_p'))}, w_q {_num(a.get('w_q'))}){extra}"
        )
    return kind


def _num(x: Any) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)
