"""Scenario documents: loading TOML, ``--set`` overrides, validation.

A scenario is a plain nested dict (what a TOML file parses to). The engine
decodes and validates it once (``aqmlab._core.validate``); every error names
the field path and comes out as :class:`ScenarioError`. This module only
parses files, applies overrides and hands the document over as JSON.
"""

from __future__ import annotations

import copy
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

from aqmlab._core import ScenarioError
from aqmlab._core import validate as _core_validate

__all__ = [
    "ScenarioError",
    "SpecSource",
    "apply_overrides",
    "describe",
    "load",
    "parse_override",
    "to_json",
    "validate",
]

#: Anything :func:`load` accepts: a file path, TOML text or a document.
SpecSource: TypeAlias = "str | os.PathLike[str] | Mapping[str, Any]"

#: One step of a key path: a table key or an array index.
Step: TypeAlias = "str | int"

_SEGMENT = re.compile(r"([^.\[\]]*)((?:\[[^\[\]]*\])*)")


def load(source: SpecSource) -> dict[str, Any]:
    """Return the scenario document of ``source``.

    ``source`` is a mapping (deep-copied), a path to a TOML file, or TOML text
    (a string that is not an existing file and contains a newline or ``=``).
    A TOML syntax error raises :class:`ScenarioError` naming the file and the
    line; a missing file raises ``FileNotFoundError``.
    """
    if isinstance(source, Mapping):
        return copy.deepcopy(dict(source))
    if isinstance(source, str) and not os.path.exists(source) and _looks_like_toml(source):
        return _parse_toml(source, "<string>")
    path = Path(source)
    text = path.read_text(encoding="utf-8")
    return _parse_toml(text, str(path))


def _looks_like_toml(s: str) -> bool:
    return "\n" in s or "=" in s


def _parse_toml(text: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"{name}: invalid TOML: {e}") from None


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
    return parse_key(key), _parse_value(raw.strip())


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
    except tomllib.TOMLDecodeError:
        return raw
    if set(parsed) != {"v"}:
        return raw
    return parsed["v"]


def format_key(steps: Iterable[Step]) -> str:
    """The field-path form the engine uses: ``traffic[0].flows``."""
    out = ""
    for s in steps:
        if isinstance(s, int):
            out += f"[{s}]"
        else:
            out += f".{s}" if out else s
    return out


def apply_overrides(doc: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Apply ``key=value`` overrides to ``doc`` in place and return it.

    Missing intermediate tables are created; indexing past the end of an
    array, or through a value that is not a table or an array, raises
    :class:`ScenarioError` naming the key. Unknown keys are left for the
    engine's validation to report.
    """
    for item in overrides:
        steps, value = parse_override(item)
        _set(doc, steps, value)
    return doc


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
    """Serialise a document for the engine, rejecting what JSON cannot carry
    (TOML dates and times, non-finite numbers) with the field path."""
    _check_plain(doc, [])
    return json.dumps(doc)


def _check_plain(v: Any, steps: list[Step]) -> None:
    if isinstance(v, Mapping):
        for k, x in v.items():
            if not isinstance(k, str):
                raise ScenarioError(format_key(steps), f"key {k!r} is not a string")
            _check_plain(x, [*steps, k])
    elif isinstance(v, list | tuple):
        for i, x in enumerate(v):
            _check_plain(x, [*steps, i])
    elif isinstance(v, float) and not math.isfinite(v):
        raise ScenarioError(format_key(steps), f"{v} is not a finite number")
    elif isinstance(v, _dt.date | _dt.time):
        raise ScenarioError(
            format_key(steps),
            f'a TOML date or time ({v}) is not allowed; write durations as strings like "15ms"',
        )
    elif v is None:
        raise ScenarioError(format_key(steps), "null values are not allowed in a scenario")
    elif not isinstance(v, str | int | float):
        raise ScenarioError(format_key(steps), f"unsupported value of type {type(v).__name__}")


def validate(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``doc`` and return the resolved scenario (every default filled
    in). Raises :class:`ScenarioError` naming the field path on a bad value."""
    return resolved_from_json(_core_validate(to_json(doc)))


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
    """A one-line description of a resolved scenario."""
    topo = resolved.get("topology", {})
    kind = topo.get("kind", "?")
    if kind == "custom":
        parts = [f"custom {len(topo.get('nodes', []))} nodes, {len(topo.get('links', []))} links"]
    else:
        links = f"{topo.get('links')} x " if kind == "parking-lot" else ""
        rate, delay = topo.get("bottleneck_rate", "?"), topo.get("bottleneck_delay", "?")
        parts = [f"{kind} {links}{rate} / {delay}", f"buffer {_buffer(topo.get('buffer'))}"]
    parts.append(_aqm(resolved.get("aqm", {})))
    groups = resolved.get("traffic", [])
    fwd = sum(g.get("flows", 0) for g in groups if g.get("direction") == "forward")
    rev = sum(g.get("flows", 0) for g in groups if g.get("direction") == "reverse")
    flows = f"{fwd} forward"
    if rev:
        flows += f" + {rev} reverse"
    parts.append(f"{flows} {resolved.get('tcp', {}).get('variant', 'tcp')} flows")
    parts.append(f"{resolved.get('duration', '?')}, seed {resolved.get('seed', '?')}")
    return ", ".join(parts)


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
