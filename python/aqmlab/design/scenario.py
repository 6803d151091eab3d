"""A scenario's nominal networks: for every AQM link and every phase of the
schedule, N, Tp, C and the buffer the fluid model and the loop analysis use,
with the link's marking law in force.

Nominal values (where the papers leave the reading to us):
- N: the long-lived TCP flows whose data crosses the link forward (``bulk``
  groups, started by the group or the schedule); web sessions, UDP and
  reverse flows are left out, as the thesis counts N in section 4.5.
- Tp: their mean base round-trip time (dumbbell: 2 x (bottleneck_delay +
  source access + sink access delay), means of uniform draws; parking lot:
  the mean of ``long_rtt`` and ``short_rtt`` over the link's flows; custom:
  twice the sum of the path's link delays plus ``extra_delay``). On a custom
  topology the AQM links analysed are those that are the slowest link of
  some bulk group's path.
- C: the link rate in packets of ``tcp.packet_size`` per second; the buffer
  likewise in packets.
- A phase begins at 0 and at every scheduled ``link``, ``flows`` or ``aqm``
  change that touches the link (changes at equal times form one phase).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aqmlab.design.fluid import Phase
from aqmlab.design.model import (
    DesignError,
    Network,
    law_from_aqm,
    parse_rate_bps,
    parse_time_s,
)
from aqmlab.scenario import schedule_occurrences

__all__ = ["LinkPhases", "scenario_phases"]

_SIZE_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024, "MiB": 1024**2}


@dataclass
class LinkPhases:
    """One AQM link of a scenario and its phases."""

    link: str
    aqm_path: str
    phases: list[Phase]
    notes: list[str] = field(default_factory=list)


def _mean_time(v: Any, path: str) -> float:
    if isinstance(v, Mapping) and "uniform" in v:
        lo, hi = v["uniform"]
        return (parse_time_s(lo, path, True) + parse_time_s(hi, path, True)) / 2
    return parse_time_s(v, path, allow_zero=True)


def _buffer_pkts(v: Any, size: int, path: str) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    s = str(v)
    for u in sorted(_SIZE_UNITS, key=len, reverse=True):
        if s.endswith(u):
            try:
                return float(s[: -len(u)]) * _SIZE_UNITS[u] / size
            except ValueError:
                break
    raise DesignError(path, f"{v!r} is not a buffer in packets or bytes")


def _group_access(g: Mapping[str, Any], i: int, bottleneck_delay: float) -> float | None:
    """The one-way delay of each access link of a dumbbell group with a
    ``base_rtt`` (its mean, less the bottleneck's round trip, over four
    links), or None for a group that takes the topology's."""
    if "base_rtt" not in g:
        return None
    return (_mean_time(g["base_rtt"], f"traffic[{i}].base_rtt") - 2 * bottleneck_delay) / 4


def _has_aqm(aqm: Mapping[str, Any]) -> bool:
    return str(aqm.get("kind", "droptail")) != "droptail"


def scenario_phases(resolved: Mapping[str, Any]) -> list[LinkPhases]:
    """The AQM links of a resolved scenario (``aqmlab.scenario.validate``)
    and their phases. Raises :class:`DesignError` when no link runs an AQM
    or a path is one the tools do not read."""
    topo = resolved.get("topology", {})
    kind = topo.get("kind", "dumbbell")
    size = int(resolved.get("tcp", {}).get("packet_size", 1000))
    traffic = list(resolved.get("traffic", []))
    # Each repetition of an entry with `every` is a change of its own.
    schedule = schedule_occurrences(resolved)
    if kind == "dumbbell":
        links = ["bottleneck"]
        aqms = {"bottleneck": (dict(resolved.get("aqm", {})), "aqm")}
    elif kind == "parking-lot":
        k = int(topo.get("links", 4))
        links = [f"link{i}" for i in range(k)]
        aqms = {ln: (dict(resolved.get("aqm", {})), "aqm") for ln in links}
        for i, o in enumerate(topo.get("overrides", []) or []):
            if "aqm" in o:
                aqms[o["link"]] = (dict(o["aqm"]), f"topology.overrides[{i}].aqm")
    elif kind == "custom":
        tl = list(topo.get("links", []))
        links = [str(lk.get("name", f"link{i}")) for i, lk in enumerate(tl)]
        aqms = {
            ln: (
                (dict(lk["aqm"]), f"topology.links[{i}].aqm")
                if "aqm" in lk
                else (dict(resolved.get("aqm", {})), "aqm")
            )
            for i, (ln, lk) in enumerate(zip(links, tl, strict=True))
        }
        ends = {(str(lk["from"]), str(lk["to"])): ln for ln, lk in zip(links, tl, strict=True)}
        # Each bulk group's links crossed forward (from -> to), in path order;
        # a reverse group reads its path backwards. Hops the other way load
        # reverse queues, which are not analysed.
        used: list[list[str]] = []
        for g in traffic:
            path = g.get("path") if g.get("kind") == "bulk" else None
            nodes = [str(x) for x in path] if isinstance(path, list) else []
            if g.get("direction", "forward") == "reverse":
                nodes.reverse()
            hops = itertools.pairwise(nodes)
            used.append([ends[h] for h in hops if h in ends])
    else:
        raise DesignError(
            "topology.kind",
            f"{kind!r}: the design tools read dumbbell, parking-lot and custom scenarios",
        )
    with_aqm = [ln for ln in links if _has_aqm(aqms[ln][0])]
    if not with_aqm:
        raise DesignError(
            "aqm.kind",
            f"{aqms[links[0]][0].get('kind', 'droptail')!r}: the scenario runs no AQM to analyse "
            "(give [aqm] a kind such as red, pi or rem)",
        )

    # The state the schedule changes.
    active = [int(g.get("flows", 0)) if g.get("kind") == "bulk" else 0 for g in traffic]
    rate: dict[str, float] = {}
    delay: dict[str, float] = {}
    buf: dict[str, float] = {}
    over = (
        {o["link"]: o for o in (topo.get("overrides", []) or [])} if kind == "parking-lot" else {}
    )
    for ln in links if kind != "custom" else []:
        o = over.get(ln, {})
        rate[ln] = parse_rate_bps(
            o.get("rate", topo.get("bottleneck_rate")), "topology.bottleneck_rate"
        )
        delay[ln] = parse_time_s(
            o.get("delay", topo.get("bottleneck_delay", "20ms")), "topology.bottleneck_delay", True
        )
        buf[ln] = _buffer_pkts(o.get("buffer", topo.get("buffer", 100)), size, "topology.buffer")
    if kind == "custom":
        for i, (ln, lk) in enumerate(zip(links, tl, strict=True)):
            rate[ln] = parse_rate_bps(lk.get("rate"), f"topology.links[{i}].rate")
            delay[ln] = parse_time_s(lk.get("delay"), f"topology.links[{i}].delay", True)
            buf[ln] = _buffer_pkts(lk.get("buffer", 100), size, f"topology.links[{i}].buffer")
        extra = [
            2 * _mean_time(g["extra_delay"], f"traffic[{i}].extra_delay")
            if "extra_delay" in g
            else 0.0
            for i, g in enumerate(traffic)
        ]
        # Analysed: AQM links that are the slowest link of some bulk group's path.
        bottlenecks = {min(u, key=lambda ln: rate[ln]) for u in used if u}
        with_aqm = [ln for ln in with_aqm if ln in bottlenecks]
        if not with_aqm:
            raise DesignError(
                "aqm.kind",
                "no AQM link is the slowest link of a bulk group's path: nothing to analyse",
            )
    if kind == "dumbbell":
        base_ad = topo.get("access_delay", "1ms")
        src = _mean_time(topo.get("source_access_delay", base_ad), "topology.source_access_delay")
        snk = _mean_time(topo.get("sink_access_delay", base_ad), "topology.sink_access_delay")
        # Each group's mean one-way access delays (sender's side, receiver's):
        # a group's base_rtt leaves a quarter of what the bottleneck's round
        # trip does not take to each of its four access links.
        acc = [
            [q, q] if (q := _group_access(g, i, delay["bottleneck"])) is not None else [src, snk]
            for i, g in enumerate(traffic)
        ]
    elif kind == "parking-lot":
        long_rtt = _mean_time(topo.get("long_rtt", "100ms"), "topology.long_rtt")
        short_rtt = _mean_time(topo.get("short_rtt", "40ms"), "topology.short_rtt")
    params: dict[str, dict[str, Any]] = {ln: copy.deepcopy(aqms[ln][0]) for ln in links}

    def flows_on(ln: str) -> tuple[float, float]:
        """(N, mean Tp) of the forward bulk flows crossing link ``ln``."""
        if kind == "dumbbell":
            fwd = [
                (a, x)
                for a, g, x in zip(active, traffic, acc, strict=True)
                if g.get("kind") == "bulk" and g.get("direction", "forward") == "forward"
            ]
            n_f = sum(a for a, _ in fwd)
            if n_f == 0:
                return 0.0, 2 * (delay[ln] + src + snk)
            return float(n_f), sum(a * 2 * (delay[ln] + x[0] + x[1]) for a, x in fwd) / n_f
        if kind == "custom":
            # A flow's base RTT: its data and ACK paths (both ways over its links).
            groups = [(a, u, x) for a, u, x in zip(active, used, extra, strict=True) if ln in u]
            n_c = float(sum(a for a, _, _ in groups))
            if n_c == 0:
                return 0.0, 0.0
            tp = sum(a * (2 * sum(delay[k] for k in u) + x) for a, u, x in groups) / n_c
            return n_c, tp
        idx = links.index(ln)
        n_l = n_s = 0.0
        for a, g in zip(active, traffic, strict=True):
            if g.get("kind") != "bulk" or g.get("direction", "forward") != "forward":
                continue
            path = str(g.get("path", "long"))
            if path == "long":
                n_l += a
            elif path == "short":
                n_s += sum(1 for i in range(a) if i % len(links) == idx)
            elif path.startswith("short:") and int(path.split(":")[1]) == idx:
                n_s += a
        n = float(n_l + n_s)
        return n, ((n_l * long_rtt + n_s * short_rtt) / n if n else long_rtt)

    out = {ln: LinkPhases(ln, aqms[ln][1], []) for ln in with_aqm}

    def snapshot(t: float, label: str) -> None:
        for ln in with_aqm:
            n, tp = flows_on(ln)
            lp = out[ln]
            if n < 1:
                lp.notes.append(f"{label}: no long-lived TCP flow crosses {ln}; phase skipped")
                continue
            net = Network(n, tp, rate[ln] / (8 * size), buf[ln])
            law, note = law_from_aqm(params[ln], net, aqms[ln][1])
            if note and note not in lp.notes:
                lp.notes.append(note)
            if lp.phases and lp.phases[-1].start == t:
                lp.phases[-1] = Phase(t, net, law, label)
            else:
                lp.phases.append(Phase(t, net, law, label))

    snapshot(0.0, "start")
    for i, t_ns, e in schedule:
        t = t_ns / 1e9
        act = e.get("action")
        if act == "flows":
            g = int(e.get("group", 0))
            active[g] += int(e.get("start", 0)) - int(e.get("stop", 0))
        elif act == "link":
            name = str(e.get("link", ""))
            base = name.removesuffix("-fwd")
            if base in links and not name.endswith("-rev"):
                if "rate" in e:
                    rate[base] = parse_rate_bps(e["rate"], f"schedule[{i}].rate")
                if "delay" in e:
                    d = parse_time_s(e["delay"], f"schedule[{i}].delay", True)
                    if kind == "parking-lot":
                        long_rtt += 2 * (d - delay[base])
                        short_rtt += 2 * (d - delay[base])
                    delay[base] = d
            elif (
                kind == "dumbbell"
                and name in ("access", "access-source", "access-sink")
                and "delay" in e
            ):
                d = _mean_time(e["delay"], f"schedule[{i}].delay")
                for x in acc:
                    if name in ("access", "access-source"):
                        x[0] = d
                    if name in ("access", "access-sink"):
                        x[1] = d
            else:
                continue
        elif act == "aqm":
            name = str(e.get("link", links[0])).removesuffix("-fwd")
            if name in params:
                params[name].update(e.get("set", {}))
            else:
                continue
        else:
            continue
        snapshot(t, f"schedule[{i}] at {t:g}s")
    result = [out[ln] for ln in with_aqm if out[ln].phases]
    if not result:
        raise DesignError("traffic", "no long-lived (bulk) TCP flow crosses an AQM link")
    return result


def end_of(phases: list[Phase], i: int, duration: float) -> float:
    """The end of phase ``i`` (the next one's start, or the run's end)."""
    return phases[i + 1].start if i + 1 < len(phases) else duration


def nominal(resolved: Mapping[str, Any]) -> tuple[LinkPhases, float]:
    """The first AQM link's phases and the run's duration."""
    return scenario_phases(resolved)[0], parse_time_s(resolved.get("duration", "0s"), "duration")
