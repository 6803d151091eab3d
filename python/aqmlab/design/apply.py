"""A design read from a scenario and written back into it.

``aqmlab design pi --scenario FILE`` designs for the network a scenario describes: N, Tp, the
link's rate and buffer as ``aqmlab design check`` reads them (:mod:`aqmlab.design.scenario`),
and the packet size, ``tcp.packet_size``, in which C, the queue and the thresholds are counted.
``--apply FILE -o NEW.toml`` does the same and writes NEW.toml: FILE with its ``[aqm]`` table
replaced by the design's. The rest of the file, comments included, is copied as it is; the new
table keeps the old one's keys the design does not set when the scheme stays the same
(``ecn``, ``mode``, ``scale_by_size`` ...) and starts from the new scheme's defaults when it
changes, as ``--set aqm.kind=...`` does. The result is checked twice before it is written: it
must parse to exactly the scenario meant (else the ``[aqm]`` table is written in a form this
does not rewrite, inline or as dotted keys, and the command says so), and the engine must
accept it.
"""

from __future__ import annotations

import copy
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aqmlab.design.model import DesignError, Network

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ScenarioNetwork", "apply_aqm", "network_of", "toml_value"]

#: The ``kind`` of the ``[aqm]`` table each design writes.
DESIGN_KINDS = {"red": "red", "pi": "pi", "rem": "rem", "ap-red": "ap-red"}


@dataclass
class ScenarioNetwork:
    """The network of a scenario's first AQM link at the start of the run."""

    net: Network
    packet_size: int
    rate_bps: float
    link: str
    notes: list[str] = field(default_factory=list)


def network_of(resolved: Mapping[str, Any], kind: str, file: str) -> ScenarioNetwork:
    """The nominal network a design of ``kind`` would run on in ``resolved``: the first link
    that takes the top-level ``[aqm]`` table, read as if that table were the design's (so a
    DropTail scenario can be given an AQM)."""
    from aqmlab import scenario
    from aqmlab._core import ScenarioError
    from aqmlab.design.scenario import scenario_phases

    doc = copy.deepcopy(dict(resolved))
    doc["aqm"] = {"kind": DESIGN_KINDS[kind]}
    doc.pop("reverse_aqm", None)
    try:
        as_design = scenario.validate(doc)
    except ScenarioError as e:
        raise DesignError(file, str(e)) from None
    links = [lp for lp in scenario_phases(as_design) if lp.aqm_path == "aqm"]
    if not links:
        raise DesignError(
            file,
            "no link of the scenario takes its queue from [aqm] (each AQM link gives its own); "
            "the design is written into [aqm] only",
        )
    lp = links[0]
    phase = lp.phases[0]
    size = int(resolved.get("tcp", {}).get("packet_size", 1000))
    notes = [n for n in lp.notes if "phase skipped" not in n]
    if len(lp.phases) > 1:
        notes.append(
            f"{file}: the network of {lp.link} changes during the run ({len(lp.phases)} phases); "
            f"designed for the first (from {phase.start:g} s); `aqmlab design check` checks "
            "every phase"
        )
    rate = phase.net.capacity * 8.0 * size
    return ScenarioNetwork(phase.net, size, rate, lp.link, notes)


# ---- TOML text ---------------------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def toml_value(v: Any) -> str:
    """``v`` as a TOML value (inline tables for tables)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise DesignError("--apply", f"cannot write {v!r} as TOML")


def _key(k: str) -> str:
    return k if _BARE.fullmatch(k) else json.dumps(k, ensure_ascii=False)


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$")


def _blank_or_comment(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def _aqm_region(lines: list[str]) -> tuple[int, int] | None:
    """[start, end) of the ``[aqm]`` table's lines (its header, its keys and its sub-tables
    ``[aqm.x]``; not the blank lines and comments just before the next table), or None."""
    start = None
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        if m is None:
            continue
        name = m.group(1).replace(" ", "")
        inside = name == "aqm" or name.startswith("aqm.")
        if start is None and name == "aqm" and not line.lstrip().startswith("[["):
            start = i
        elif start is not None and not inside:
            end = i
            while end > start + 1 and _blank_or_comment(lines[end - 1]):
                end -= 1
            return start, end
    if start is None:
        return None
    end = len(lines)
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return start, end


def apply_aqm(
    text: str, doc: Mapping[str, Any], aqm: Mapping[str, Any], comment: str, file: str
) -> str:
    """``text`` (the scenario file ``file``, which parses to ``doc``) with its ``[aqm]`` table
    replaced by ``aqm`` under ``comment`` (or, without one, ``aqm`` appended); checked to parse
    to ``doc`` with that table."""
    table = ["# " + c for c in comment.splitlines()]
    table += ["[aqm]", *(f"{_key(k)} = {toml_value(v)}" for k, v in aqm.items())]
    lines = text.splitlines()
    region = _aqm_region(lines)
    if region is None:
        if "aqm" in doc:
            raise DesignError(
                file,
                "its [aqm] is written inline or as dotted keys, which --apply does not rewrite; "
                "paste the table printed above instead",
            )
        new_lines = [*lines, "", *table]
    else:
        a, b = region
        new_lines = [*lines[:a], *table, *lines[b:]]
    out = "\n".join(new_lines) + "\n"
    want = dict(doc)
    want["aqm"] = dict(aqm)
    try:
        got = tomllib.loads(out)
    except tomllib.TOMLDecodeError as e:
        raise DesignError(file, f"--apply could not rewrite its [aqm] table ({e})") from None
    if got != want:
        raise DesignError(
            file,
            "--apply could not rewrite its [aqm] table (it is written in a form this does not "
            "rewrite: inline, as dotted keys, or with keys elsewhere); paste the table printed "
            "above instead",
        )
    return out
