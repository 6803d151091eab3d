"""The web traffic model (``[[traffic]] kind = "web"``): measuring its load.

``000_0675317d310dd341.txt`` sets its offered loads by running the web
sessions on an uncongested link and measuring the throughput they produce.
:func:`calibrate` does the same: it runs one ``web`` group with
``offered_load`` on a dumbbell whose bottleneck and access links are 1 Gbps
(bottleneck delay 1 ms, 1500-byte packets) and reports the realised
throughput of the bottleneck in the data direction.

>>> import aqmlab
>>> c = aqmlab.web.calibrate("90Mbps", duration="60s")
>>> c["ratio"]      # realised / offered

A seed fixes the web workload whatever the network does (``docs/scenario.md``,
"Common random numbers"), so two runs of one scenario and seed with different
schemes can be compared response by response: :func:`paired_responses`.

>>> red, pi = aqmlab.run(sc, overrides=["aqm.kind=red"]), aqmlab.run(sc, overrides=["aqm.kind=pi"])
>>> p = aqmlab.web.paired_responses(red, pi)
>>> p.column("response_time_s_a"), p.column("response_time_s_b")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from aqmlab import _core
from aqmlab.api import RunResult, run

__all__ = ["calibrate", "calibration_scenario", "paired_responses"]

#: The columns that name one object of a web workload in every run of a seed.
RESPONSE_KEY = ("group", "session", "page", "object")


def calibration_scenario(
    offered_load: str,
    duration: str = "60s",
    measure_from: str = "10s",
    seed: int = 1,
    web: Mapping[str, Any] | None = None,
    tcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The scenario :func:`calibrate` runs, as a dict: one ``web`` group with
    ``offered_load`` (plus the keys in ``web``, e.g. ``{"http": "1.1"}``) on
    an uncongested 1 Gbps dumbbell; ``tcp`` adds ``[tcp]`` keys."""
    return {
        "duration": duration,
        "seed": seed,
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "1Gbps",
            "bottleneck_delay": "1ms",
            "buffer": 5000,
            "access_rate": "1Gbps",
        },
        "tcp": {"packet_size": 1500, **(tcp or {})},
        "traffic": [{"kind": "web", "offered_load": offered_load, **(web or {})}],
        "metrics": {"start": measure_from},
    }


def calibrate(
    offered_load: str,
    duration: str = "60s",
    measure_from: str = "10s",
    seed: int = 1,
    web: Mapping[str, Any] | None = None,
    tcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the web model with ``offered_load`` on an uncongested 1 Gbps
    dumbbell and report what it really offered.

    Returns a dict: ``offered_bps`` (the nominal load), ``realised_bps`` (bits
    per second that crossed the bottleneck in the data direction, headers
    and SYN/ACKs included, from ``measure_from`` to ``duration``), ``ratio``
    (realised / offered), ``sessions`` (the number the engine derived),
    ``completed`` (responses in the interval), ``response_time_p50_s`` and
    ``result`` (the :class:`~aqmlab.RunResult`). Heavy-tailed sizes and
    think times make short runs noisy by a few per cent; use several seeds
    or a longer ``duration`` for a tight figure.
    """
    doc = calibration_scenario(offered_load, duration, measure_from, seed, web, tcp)
    r: RunResult = run(doc)
    offered = _rate_bps(offered_load)
    realised = float(r.summary["bottleneck"]["throughput_bps"])
    w = r.summary.get("web") or {}
    return {
        "offered_bps": offered,
        "realised_bps": realised,
        "ratio": realised / offered,
        # Open pages and a page's objects in parallel run each session on
        # `lanes` flows.
        "sessions": r.flows.num_rows // _lanes(r),
        "completed": int(w.get("completed", 0)),
        "response_time_p50_s": float(w.get("response_time_p50_s", float("nan"))),
        "result": r,
    }


def paired_responses(a: RunResult, b: RunResult) -> pa.Table:
    """The web responses two runs have in common, side by side.

    The runs should be of one scenario and seed that differ in the network
    (the scheme, a link, other traffic): they then ask for the same objects,
    at the same times with open pages. A response is named by ``group``,
    ``session``, ``page`` and ``object``; the table has one row per response
    completed in both runs (sorted by those columns), with ``size_bytes`` and
    ``start_s_a``, ``start_s_b``, ``end_s_a``, ``end_s_b``,
    ``response_time_s_a`` and ``response_time_s_b``. Responses that only one
    run completed before its end are left out.

    Raises ``ValueError`` if a response of both has two sizes: then the runs
    are not of one workload (another seed, ``[seeds] app``, or other web
    keys), and a pairing would compare different objects.
    """
    cols = [*RESPONSE_KEY, "size_bytes", "start_s", "end_s", "response_time_s"]
    left, right = (r.responses.select(cols) for r in (a, b))
    right = right.rename_columns([*RESPONSE_KEY, "size_b", "start_s", "end_s", "response_time_s"])
    t = left.join(
        right, keys=list(RESPONSE_KEY), join_type="inner", left_suffix="_a", right_suffix="_b"
    )
    size_a = t.column("size_bytes").to_numpy()
    size_b = t.column("size_b").to_numpy()
    differ = int((size_a != size_b).sum())
    if differ:
        raise ValueError(
            f"paired_responses: {differ} of the {t.num_rows} responses both runs completed "
            "differ in size, so the runs are not of one web workload (another seed, [seeds] app "
            "or other web keys); pair runs of one scenario and seed"
        )
    order = [
        "group",
        "session",
        "page",
        "object",
        "size_bytes",
        "start_s_a",
        "start_s_b",
        "end_s_a",
        "end_s_b",
        "response_time_s_a",
        "response_time_s_b",
    ]
    return t.select(order).sort_by([(k, "ascending") for k in RESPONSE_KEY])


def _lanes(r: RunResult) -> int:
    """Flows per session of the run's web group: ``lanes`` with open pages or a
    page's objects in parallel, else 1."""
    group = r.scenario["traffic"][0]
    laned = group.get("pages") == "open" or bool(group.get("parallel_objects"))
    return int(group.get("lanes", 1)) if laned else 1


_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def _rate_bps(rate: str) -> float:
    """A rate string (``"90Mbps"``) in bit/s; the engine has already
    validated it when this is called."""
    for unit in sorted(_RATE_UNITS, key=len, reverse=True):
        if rate.strip().endswith(unit):
            return float(rate.strip()[: -len(unit)]) * _RATE_UNITS[unit]
    raise _core.ScenarioError("traffic[0].offered_load", f"not a rate: {rate!r}")
