"""Points of an experiment: expansion, resolution, ids, cost estimates.

A point is (scheme, one value per factor, seed). Its scenario is the
experiment's scenario file with, in order, ``experiment.set`` (with
``--quick`` followed by ``quick.set``), the scheme's ``set``, each factor's
keys, and the command line's ``--set``; then validated by the engine (every
default filled in) with the point's seed. Its id is the first 16 hex digits
of the sha256 of the canonical JSON (sorted keys, no spaces) of
``{"scenario": resolved, "seed": seed}``.

Every point is resolved before anything runs. A point whose overrides do not
resolve keeps its error (it is recorded as failed; the others run).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aqmlab import scenario
from aqmlab.experiments.spec import Experiment, ExperimentError, canonical_json

__all__ = [
    "EVENTS_PER_PACKET",
    "EVENTS_PER_PACKET_WEB",
    "REVERSE_FACTOR",
    "Point",
    "estimate_events",
    "point_id",
    "resolve_points",
    "seconds",
]

#: Engine events per packet the bottleneck(s) can carry, measured on the
#: engine whose TCP endpoints take packets ahead of the clock: forward bulk
#: flows only, about 2.2 (1.7-2.7 over the scenario files: 2.2 for
#: `scenarios/demo_red.toml`, 2.7 with the 1 % loss of
#: `scenarios/tcp/rem-wireless.toml`); with reverse-path flows
#: :data:`REVERSE_FACTOR` times that (their data and the forward flows' ACKs
#: cross the bottleneck too: 3.5 for `scenarios/canonical.toml`, 3.8-4.0 for
#: the ARED, ST-RED and PI files); web traffic about 6.5 (`scenarios/web.toml`
#: and the 000/001 presets; web flows take no packet ahead).
EVENTS_PER_PACKET = 2.2
REVERSE_FACTOR = 1.7
EVENTS_PER_PACKET_WEB = 6.5


@dataclass
class Point:
    """One point of an experiment.

    ``factors`` maps each factor's name to its value as ``summary.parquet``
    shows it; ``factor_index`` holds the indices of those values. ``scenario``
    is the resolved scenario as run (seed included), ``None`` when the
    point's overrides did not resolve (then ``error`` says why).
    """

    index: int
    scheme: str
    factors: dict[str, Any]
    factor_index: tuple[int, ...]
    seed: int
    overrides: list[str]
    scenario: dict[str, Any] | None
    id: str
    error: str | None = None
    phases: list[tuple[str, float, float]] = field(default_factory=list)
    duration_s: float = 0.0
    est_events: float = 0.0

    @property
    def label(self) -> str:
        """``scheme, factor=value, ..., seed N``: how messages name a point."""
        parts = [self.scheme]
        parts += [f"{k}={_show(v)}" for k, v in self.factors.items()]
        parts.append(f"seed {self.seed}")
        return ", ".join(parts)

    def info(self) -> dict[str, Any]:
        """The identifying part of ``point.json`` / ``failed/<id>.json``."""
        return {"id": self.id, "scheme": self.scheme, "factors": self.factors, "seed": self.seed}


def _show(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v)


def point_id(resolved: Mapping[str, Any], seed: int) -> str:
    """The id of a point: 16 hex digits of sha256 of the canonical JSON of
    ``{"scenario": resolved, "seed": seed}``."""
    text = canonical_json({"scenario": resolved, "seed": seed})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _unresolved_id(doc: Any, seed: int, label: str) -> str:
    try:
        text = canonical_json({"unresolved": doc, "seed": seed})
    except (TypeError, ValueError):
        text = json.dumps({"unresolved": label, "seed": seed}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def resolve_points(exp: Experiment) -> list[Point]:
    """Every point of ``exp`` in a fixed order (schemes, then factors in
    file order, the last varying fastest, then seeds), each resolved.

    Raises :class:`ExperimentError` if the scenario file itself cannot be
    read; a point whose overrides fail keeps the error in ``Point.error``.
    """
    try:
        base = scenario.load(exp.scenario_path)
    except scenario.ScenarioError as e:
        raise ExperimentError("experiment.scenario", f"{exp.scenario_path}: {e.msg}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ExperimentError("experiment.scenario", f"{exp.scenario_path}: {e}") from None
    points: list[Point] = []
    ranges = [range(len(f.values)) for f in exp.factors]
    for sch in exp.schemes:
        for combo in itertools.product(*ranges):
            factors = {f.name: f.column_value(i) for f, i in zip(exp.factors, combo, strict=True)}
            overrides = [*exp.set, *sch.set]
            for f, i in zip(exp.factors, combo, strict=True):
                overrides += f.overrides(i)
            overrides += exp.extra_set
            doc = copy.deepcopy(base)
            resolved: dict[str, Any] | None = None
            error: str | None = None
            phases: list[tuple[str, float, float]] = []
            try:
                scenario.apply_overrides(doc, overrides)
                resolved = scenario.validate(doc)
                phases = _phases(exp, resolved)
            except (scenario.ScenarioError, ExperimentError) as e:
                error = str(e)
                resolved = None
                # The named phases still get their rows (with no figures).
                phases = [(n, math.nan, math.nan) for n in exp.phases]
            for seed in exp.seeds:
                p = Point(
                    index=len(points),
                    scheme=sch.name,
                    factors=dict(factors),
                    factor_index=tuple(combo),
                    seed=seed,
                    overrides=list(overrides),
                    scenario=None,
                    id="",
                    phases=list(phases),
                )
                if resolved is None:
                    p.error = error
                    p.id = _unresolved_id({**doc, "seed": seed}, seed, p.label)
                else:
                    sc = {**resolved, "seed": seed}
                    p.scenario = sc
                    p.id = point_id(sc, seed)
                    p.duration_s = seconds(sc.get("duration", "0s"))
                    p.est_events = estimate_events(sc)
                points.append(p)
    return points


def _phases(exp: Experiment, resolved: Mapping[str, Any]) -> list[tuple[str, float, float]]:
    """The point's phases: (name, start_s, end_s) per ``[metrics] phases``
    entry (a periodic one's span [from, to]), named by the experiment's
    ``[[phase]]`` entries (or, without any, by their interval)."""
    entries = resolved.get("metrics", {}).get("phases", [])
    spans = [
        (seconds(e["from"]), seconds(e["to"]))
        if isinstance(e, Mapping)
        else (seconds(e[0]), seconds(e[1]))
        for e in entries
    ]
    if exp.phases and len(exp.phases) != len(spans):
        raise ExperimentError(
            "phase",
            f"the experiment names {len(exp.phases)} phase(s) but this point's scenario has "
            f"{len(spans)} metrics.phases entr{'y' if len(spans) == 1 else 'ies'}",
        )
    names = list(exp.phases) or [
        _phase_name(e, a, b) for e, (a, b) in zip(entries, spans, strict=True)
    ]
    return [(n, a, b) for n, (a, b) in zip(names, spans, strict=True)]


def _phase_name(entry: Any, a: float, b: float) -> str:
    """A phase's default name: its span, and a periodic one's windows ("10-90 s, 100ms every
    200ms, offset 100ms")."""
    if not isinstance(entry, Mapping):
        return f"{a:g}-{b:g} s"
    offset = f", offset {entry['offset']}" if entry.get("offset") else ""
    return f"{a:g}-{b:g} s, {entry.get('length')} every {entry.get('every')}{offset}"


_TIME = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ns|us|ms|s)\s*")
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_RATE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(bps|Kbps|kbps|Mbps|Gbps)\s*")
_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def seconds(t: Any) -> float:
    """A time of a resolved scenario (``"1500us"``, or a number of seconds)
    in seconds; 0 for anything else."""
    if isinstance(t, int | float) and not isinstance(t, bool):
        return float(t)
    if isinstance(t, str):
        m = _TIME.fullmatch(t)
        if m:
            return float(m.group(1)) * _TIME_UNITS[m.group(2)]
    return 0.0


def _bps(r: Any) -> float:
    if isinstance(r, str):
        m = _RATE.fullmatch(r)
        if m:
            return float(m.group(1)) * _RATE_UNITS[m.group(2)]
    return 0.0


def events_per_packet(sc: Mapping[str, Any]) -> float:
    """The engine's events per packet of bottleneck capacity for ``sc``'s
    traffic (see :data:`EVENTS_PER_PACKET`)."""
    groups = [g for g in sc.get("traffic", []) or [] if isinstance(g, Mapping)]
    web = any(g.get("kind") == "web" for g in groups)
    base = EVENTS_PER_PACKET_WEB if web else EVENTS_PER_PACKET
    reverse = any(g.get("direction") == "reverse" for g in groups)
    return base * (REVERSE_FACTOR if reverse else 1.0)


def estimate_events(sc: Mapping[str, Any]) -> float:
    """Engine events a run of the resolved scenario ``sc`` takes, estimated:
    :func:`events_per_packet` x the packets per second the bottleneck links
    can carry (time-weighted over scheduled rate changes of a dumbbell's
    bottleneck) x the simulated seconds. Within about 30 % for congested
    scenarios; high for lightly loaded ones."""
    k = events_per_packet(sc)
    duration = seconds(sc.get("duration", "0s"))
    topo = sc.get("topology", {})
    size = float(sc.get("tcp", {}).get("packet_size", 1000) or 1000)
    kind = topo.get("kind", "dumbbell")
    if kind == "custom":
        links = topo.get("links", [])
        rate = sum(_bps(x.get("rate")) for x in links if x.get("monitor")) or max(
            (_bps(x.get("rate")) for x in links), default=0.0
        )
        return k * rate / (8 * size) * duration
    rate = _bps(topo.get("bottleneck_rate"))
    if kind == "parking-lot":
        return k * rate * int(topo.get("links", 1)) / (8 * size) * duration
    # A dumbbell: follow the bottleneck's scheduled rate changes.
    changes: list[tuple[float, float]] = []
    for s in sc.get("schedule", []) or []:
        if (
            s.get("action") == "link"
            and s.get("link") in ("bottleneck", "bottleneck-fwd")
            and "rate" in s
        ):
            changes.append((seconds(s.get("at")), _bps(s["rate"])))
    changes.sort()
    total, t, r = 0.0, 0.0, rate
    for at, new in changes:
        at = min(at, duration)
        total += r * (at - t)
        t, r = at, new
    total += r * max(duration - t, 0.0)
    return k * total / (8 * size)


def distinct(points: Sequence[Point]) -> dict[str, list[Point]]:
    """Points grouped by id, in first-appearance order (points whose
    scenarios resolve to the same document run once)."""
    out: dict[str, list[Point]] = {}
    for p in points:
        out.setdefault(p.id, []).append(p)
    return out
