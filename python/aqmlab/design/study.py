"""Scenario-level tools: the stability check of every phase, the fluid model
beside the engine, and the grid study of the RED proposition."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aqmlab.design.fluid import FluidResult, fluid
from aqmlab.design.model import DesignError, Network, Red, parse_time_s
from aqmlab.design.packets import PacketQueue, packet_queue, queue_verdict
from aqmlab.design.scenario import scenario_phases
from aqmlab.design.tune import analyse

__all__ = ["GRID", "Comparison", "check_scenario", "compare", "grid_scenario", "grid_study"]


def check_scenario(resolved: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per AQM link and phase: the nominal network, the operating
    point (eq. 4.7), the proposition's two sides and the loop's margins."""
    rows = []
    for lp in scenario_phases(resolved):
        for ph in lp.phases:
            d = analyse(ph.law, ph.net)
            m = d.margins
            prop = d.prop
            rows.append(
                {
                    "link": lp.link,
                    "phase": ph.label,
                    "start_s": ph.start,
                    "scheme": type(ph.law).__name__.lower(),
                    "flows": ph.net.flows,
                    "rtt_s": ph.net.rtt,
                    "capacity_pkts": ph.net.capacity,
                    "p0": d.op.p0,
                    "q0_pkts": d.op.q0,
                    "r0_s": d.op.r0,
                    "regime": d.op.regime,
                    "prop_name": prop.name if prop else None,
                    "prop_lhs": prop.lhs if prop else None,
                    "prop_rhs": prop.rhs if prop else None,
                    "prop_holds": prop.holds if prop else None,
                    "phase_margin_deg": m.pm if m else None,
                    "gain_margin": m.gm if m else None,
                    "delay_margin_s": m.dm if m else None,
                    "crossover_rad_s": m.wg if m else None,
                    "stable": m.stable if m else None,
                    "notes": list(lp.notes) + d.notes,
                    "_design": d,
                }
            )
    return rows


@dataclass
class Comparison:
    """The fluid model and the engine on one scenario, from ``start`` s."""

    fluid: FluidResult
    packets: PacketQueue | None
    start: float
    fluid_stats: dict[str, float]
    packet_stats: dict[str, Any] | None
    link: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "link": self.link,
            "start_s": self.start,
            "fluid": {**self.fluid_stats, "oscillates": self.fluid.oscillates(self.start)},
            "packets": self.packet_stats,
        }


def compare(
    doc: dict[str, Any],
    result_dir: str | None = None,
    run_engine: bool = True,
    h: float | None = None,
) -> Comparison:
    """Integrate the fluid model of the scenario ``doc`` (validated here) for
    its duration and set it beside the engine's queue of the same scenario
    (run now, or read from ``result_dir``). Statistics from ``metrics.start``."""
    from aqmlab import scenario

    resolved = scenario.validate(doc) if result_dir is None else _resolved_of(result_dir)
    lp = scenario_phases(resolved)[0]
    duration = parse_time_s(resolved.get("duration"), "duration")
    start = parse_time_s(resolved.get("metrics", {}).get("start", "0s"), "metrics.start", True)
    if start >= duration:
        start = duration / 2
    fl = fluid(lp.phases, duration, h=h)
    pq = None
    pstats = None
    if result_dir is not None or run_engine:
        pq = packet_queue(doc if result_dir is None else None, result_dir, lp.link)
        sel = pq.t >= start
        pstats = queue_verdict(pq.t[sel], pq.q[sel])
    return Comparison(fl, pq, start, fl.stats(start), pstats, lp.link)


def _resolved_of(result_dir: str) -> dict[str, Any]:
    from aqmlab import results

    if not results.is_run_dir(result_dir):
        raise DesignError("--result", f"{result_dir}: not an aqmlab result folder")
    return dict(results.load_run(result_dir).scenario)


#: The grid study's default: thesis chapter 4's RED set (0.05/50/150/1e-4,
#: section 4.5.1), N = 50 bulk flows, 500-byte packets, over 5 round-trip
#: times x 4 capacities = 20 configurations.
GRID: dict[str, Any] = {
    "red": {"min_th": 50, "max_th": 150, "max_p": 0.05, "w_q": 1e-4},
    "flows": 50,
    "rtts_ms": [40, 80, 120, 180, 250],
    "rates_mbps": [2, 5, 10, 15],
    "packet_size": 500,
    "buffer": 600,
    "duration_s": 80,
    "start_s": 30,
    "seed": 1,
}


def grid_scenario(rtt_s: float, rate_mbps: float, g: Mapping[str, Any]) -> dict[str, Any]:
    """A dumbbell of base RTT ``rtt_s`` (access links 5 ms each side) and
    capacity ``rate_mbps`` with the grid's RED and flows."""
    bd = rtt_s / 2 - 0.010
    if bd < 0:
        raise DesignError("rtts_ms", f"{rtt_s * 1e3:g} ms is below the access links' 20 ms")
    return {
        "duration": f"{g['duration_s']}s",
        "seed": int(g["seed"]),
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": f"{rate_mbps:g}Mbps",
            "bottleneck_delay": f"{bd * 1e3:g}ms",
            "buffer": int(g["buffer"]),
            "access_rate": "100Mbps",
            "access_delay": "5ms",
        },
        "aqm": {"kind": "red", **g["red"]},
        "tcp": {"variant": "newreno", "packet_size": int(g["packet_size"])},
        "traffic": [{"kind": "bulk", "flows": int(g["flows"]), "start": {"uniform": ["0s", "5s"]}}],
        "metrics": {"sample_interval": "10ms", "start": f"{g['start_s']}s", "window": "10s"},
    }


def _grid_point(args: tuple[float, float, dict[str, Any]]) -> dict[str, Any]:
    rtt_s, rate, g = args
    from aqmlab import api

    doc = grid_scenario(rtt_s, rate, g)
    res = api.run(doc)
    tab = res.queue
    import numpy as np

    t = np.asarray(tab.column("time_s").to_numpy(zero_copy_only=False), dtype=float)
    q = np.asarray(tab.column("queue_pkts").to_numpy(zero_copy_only=False), dtype=float)
    sel = t >= float(g["start_s"])
    v = queue_verdict(t[sel], q[sel])
    net = Network(
        float(g["flows"]), rtt_s, rate * 1e6 / (8 * int(g["packet_size"])), float(g["buffer"])
    )
    red = Red(**g["red"])
    d = analyse(red, net)
    assert d.prop is not None and d.margins is not None
    return {
        "rtt_ms": rtt_s * 1e3,
        "rate_mbps": rate,
        "capacity_pkts": net.capacity,
        "rc_pkts": net.bdp,
        "prop_lhs": d.prop.lhs,
        "prop_rhs": d.prop.rhs,
        "prop_ratio": d.prop.ratio,
        "prop_holds": bool(d.prop.holds),
        "phase_margin_deg": d.margins.pm,
        "linear_stable": d.margins.stable,
        "q0_pkts": d.op.q0,
        **v,
        "utilization": float(res.summary["bottleneck"]["utilization"]),
    }


def grid_study(g: Mapping[str, Any] | None = None, jobs: int = 1) -> dict[str, Any]:
    """Run the grid (``GRID`` by default) in the engine and compare each
    point with eq. 4.9 and with the exact loop. Returns the rows and the
    counts: disagreements of the proposition and of the loop with the
    engine's verdict, and the mean queue std of each side of the proposition."""
    g = dict(GRID if g is None else g)
    pts = [(r / 1e3, c, g) for r in g["rtts_ms"] for c in g["rates_mbps"]]
    if jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(jobs) as ex:
            rows = list(ex.map(_grid_point, pts))
    else:
        rows = [_grid_point(p) for p in pts]
    st = [r["std"] for r in rows if r["prop_holds"]]
    un = [r["std"] for r in rows if not r["prop_holds"]]
    return {
        "grid": {k: v for k, v in g.items()},
        "rows": rows,
        "points": len(rows),
        "prop_stable": len(st),
        "prop_unstable": len(un),
        "mean_std_prop_stable": sum(st) / len(st) if st else math.nan,
        "mean_std_prop_unstable": sum(un) / len(un) if un else math.nan,
        "max_std_prop_stable": max(st) if st else math.nan,
        "min_std_prop_unstable": min(un) if un else math.nan,
        "prop_disagreements": sum(1 for r in rows if r["prop_holds"] == r["oscillates"]),
        "linear_disagreements": sum(1 for r in rows if r["linear_stable"] == r["oscillates"]),
    }


def rows_public(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
