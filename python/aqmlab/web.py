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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aqmlab import _core
from aqmlab.api import RunResult, run

__all__ = ["calibrate", "calibration_scenario"]


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
        # Open pages run each session on `lanes` flows.
        "sessions": r.flows.num_rows // _lanes(r),
        "completed": int(w.get("completed", 0)),
        "response_time_p50_s": float(w.get("response_time_p50_s", float("nan"))),
        "result": r,
    }


def _lanes(r: RunResult) -> int:
    """Flows per session of the run's web group (``lanes`` with open pages, else 1)."""
    group = r.scenario["traffic"][0]
    return int(group.get("lanes", 1)) if group.get("pages") == "open" else 1


_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def _rate_bps(rate: str) -> float:
    """A rate string (``"90Mbps"``) in bit/s; the engine has already
    validated it when this is called."""
    for unit in sorted(_RATE_UNITS, key=len, reverse=True):
        if rate.strip().endswith(unit):
            return float(rate.strip()[: -len(unit)]) * _RATE_UNITS[unit]
    raise _core.ScenarioError("traffic[0].offered_load", f"not a rate: {rate!r}")
