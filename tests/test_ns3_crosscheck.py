"""aqmlab against ns-3.44 (PyPI's ``ns3`` wheel) on the same dumbbell (tests/ns3/README.md).

Runs when the wheel is installed in this Python (``make ns3``; ``make test`` installs it). Each
pair is one case of ``tests/ns3/crosscheck.py`` (NewReno and CUBIC, SACK off on both sides,
through RED, PIE and CoDel, 5 and 20 flows, with and without ECN; 10 Mbit/s, base RTT 70-130
ms, 1500-byte packets, 40 s with the last 30 measured), seed 1, all pairs run once in a pool of
two workers (``pytest -s`` prints the table). The bands are the largest differences measured
over seeds 1-3 on the pairs where the two models are the same (README.md, "Agreement").

Where ns-3's scoreboard without SACK misbehaves (README.md, "Where ns-3 differs") the two
models are not the same: such a pair is an expected failure naming the ns-3 figures that show
it, and is held to the bands as soon as those figures no longer show it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _module(name: str, file: str) -> ModuleType:
    path = Path(__file__).parent / "ns3" / file
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


cc = _module("ns3_crosscheck", "crosscheck.py")

pytestmark = [
    pytest.mark.skipif(not cc.available(), reason=f"ns-3 not installed ({cc.INSTALL})"),
    pytest.mark.crosscheck,
]

CASES = {c.name: c for c in cc.cases()}

# The agreement reached on the 28 of 72 runs (24 pairs, seeds 1-3) where both models are the
# same (README.md, "Agreement"), each band the largest difference measured, rounded up: the
# utilisation in points (0.018), the mean queue and queuing delay as a share of the larger of
# the two (0.153, 0.155), the drop or mark rate likewise (NewReno 0.103; CUBIC 0.276: ns-3's
# CUBIC does not grow its window for a round trip after an ECN cut, README.md), Jain's index
# in points (0.063).
UTILISATION = 0.02
QUEUE = 0.16
SIGNAL = {"newreno": 0.11, "cubic": 0.28}
JAIN = 0.07


def ns3_scoreboard_defect(ns3: dict[str, Any], ours: dict[str, Any]) -> str | None:
    """Why this ns-3 run is not the model aqmlab runs, or None: its senders entered the loss state
    more than 1.5 times as often as aqmlab's timed out, plus 2 (ns-3.44 without SACK: after a
    timeout its scoreboard can count the whole window lost, and dupacks are ignored in that
    state), or they retransmitted more than twice the segments the queue dropped."""
    if ns3["timeouts"] > 1.5 * ours["timeouts"] + 2:
        return f"ns-3 loss-state entries {ns3['timeouts']} (aqmlab timeouts {ours['timeouts']})"
    rtx = ns3["retransmits"]
    if rtx > 2 * max(ns3["drops"], 1) and rtx > 2 * ours["retransmits"] + 10:
        return f"ns-3 retransmits {rtx} for {ns3['drops']} drops (aqmlab {ours['retransmits']})"
    return None


@pytest.fixture(scope="module")
def pairs() -> dict[str, dict[str, Any]]:
    rows = cc.run_pairs([(c, 1) for c in CASES.values()], workers=2)
    print("\n" + cc.table(rows))
    return {r["case"]: r for r in rows}


def _rel(a: float, b: float) -> float:
    top = max(abs(a), abs(b))
    return abs(a - b) / top if top > 0 else 0.0


@pytest.mark.parametrize("name", list(CASES))
def test_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    ours, ns3 = pairs[name]["aqmlab"], pairs[name]["ns3"]
    why = ns3_scoreboard_defect(ns3, ours)
    if why:
        pytest.xfail(f"{name}: {why}; README.md, 'Where ns-3 differs'")
    assert abs(ours["utilisation"] - ns3["utilisation"]) <= UTILISATION, (ours, ns3)
    assert _rel(ours["queue_pkts"], ns3["queue_pkts"]) <= QUEUE, (ours, ns3)
    assert _rel(ours["delay_ms"], ns3["delay_ms"]) <= QUEUE, (ours, ns3)
    signal = "mark_pct" if CASES[name].ecn else "drop_pct"
    assert _rel(ours[signal], ns3[signal]) <= SIGNAL[CASES[name].variant], (ours, ns3)
    assert abs(ours["jain"] - ns3["jain"]) <= JAIN, (ours, ns3)


def test_ns3_limited_transmit_without_sack_keeps_stale_reno_sacks() -> None:
    """Why the pairs run without limited transmit (README.md, "Limited transmit without SACK"):
    ns-3.44's limited transmit without SACK counts each of the first two duplicate ACKs as a
    Reno SACK that a new ACK does not clear. NewReno through RED, 5 flows, seed 1: ns-3 keeps
    0.697 of the link with 6722 retransmissions for 1634 drops (with it off: 0.987 and 95
    retransmissions at a drop rate of 0.36 %), where aqmlab with RFC 3042's limited transmit
    keeps 0.990 with 112 retransmissions for 96 drops."""
    case = CASES["newreno-red-5"]
    _, starts, delays = cc.run_aqmlab(case, 1)
    lt = dict(case.ns3_config(1, starts, delays), limited_transmit=True)
    ns3 = cc.run_ns3(lt)
    assert ns3["utilisation"] < 0.8, ns3
    assert ns3["retransmits"] > 3 * ns3["drops"], ns3
    rfc = cc.Case(case.variant, case.aqm, case.flows)
    toml = rfc.toml(1).replace("limited_transmit = false", "limited_transmit = true")
    import aqmlab

    s = aqmlab.run(toml).summary
    assert s["bottleneck"]["utilization"] > 0.98, s["bottleneck"]
    assert s["flows"]["retransmits"] < 2 * (s["bottleneck"]["drops_early"] + 1), s["flows"]


# Pairs for the TCPs aqmlab does not model yet: the ns-3 side is written (tests/ns3/crosscheck.py
# NS3_CC, dumbbell.cc's "step" marking); enable each when aqmlab's key lands.


def test_dctcp_step_marking_pair() -> None:
    pytest.skip("aqmlab has no tcp.variant = 'dctcp' nor a step-marking AQM yet (ns-3: TcpDctcp)")


def test_bbr_pair() -> None:
    pytest.skip("aqmlab has no tcp.variant = 'bbr' yet (ns-3: TcpBbr, paced, SACK on)")


def test_sack_pair() -> None:
    pytest.skip("aqmlab has no tcp.sack yet (ns-3: Sack on, limited transmit on)")
