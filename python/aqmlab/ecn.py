"""ECN takes two switches, and aqmlab says when only one is on.

The rule (docs/scenario.md, "ECN: two switches"):

- The hosts' switch, ``tcp.ecn`` (or a traffic group's ``ecn``), makes a group's TCP
  ECN-capable: its data leaves ECT(0) and its senders answer an ECN-Echo.
- The queue's switch, the ``ecn`` key of an AQM table (``[aqm]``, ``[reverse_aqm]``, a link's
  ``aqm``), makes that queue mark ECN-capable packets where it would drop them.
- Neither turns the other on, and every scheme's ``ecn`` is off unless the file says
  otherwise, as in the seed papers and ns-2 (and Linux's RED, PIE and CoDel queues; Linux's
  fq_codel, which marks by default, is the exception). So a file's queue does what its
  ``[aqm]`` table says whatever the traffic, and a preset gives the paper's numbers.
- When the two disagree, the run says so once, before it starts: ECN-capable traffic that
  meets a queue able to mark whose ``ecn`` is off (it drops where it could mark), and a queue
  set to mark that no ECN-capable traffic reaches (it can only drop). ``aqmlab run`` and
  ``aqmlab validate`` print one ``note:`` line on stderr; :func:`aqmlab.run` issues an
  :class:`ECNNote` warning (shown once per place in the calling code, as Python shows
  warnings).

:func:`ecn_notes` finds the disagreements in a resolved scenario
(:func:`aqmlab.scenario.validate`); which queues a group's data crosses follows the topology:
the dumbbell's forward and reverse bottleneck, a parking lot's links (with their overrides), a
custom topology's path.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["ECNNote", "ecn_notes"]

#: Traffic kinds that run TCP (and so may be ECN-capable).
TCP_KINDS = ("bulk", "web-simple", "web", "video")


class ECNNote(UserWarning):
    """ECN-capable traffic meets a queue whose marking is off, or a queue set to mark meets no
    ECN-capable traffic (see :mod:`aqmlab.ecn`)."""


def _marks(table: Mapping[str, Any]) -> bool | None:
    """A queue's marking switch: True or False for a scheme that can mark, None for one that
    cannot (DropTail)."""
    v = table.get("ecn")
    return bool(v) if isinstance(v, bool) else None


def _queues(resolved: Mapping[str, Any], group: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path, AQM table) of each queue the group's data crosses."""
    topo = resolved.get("topology", {}) or {}
    kind = topo.get("kind", "dumbbell")
    reverse = group.get("direction", "forward") == "reverse"
    top = resolved.get("aqm", {}) or {}
    top_rev = resolved.get("reverse_aqm", top) or top
    if kind == "custom":
        links = list(topo.get("links", []) or [])
        path = group.get("path")
        nodes = [str(x) for x in path] if isinstance(path, list) else []
        if reverse:
            nodes.reverse()
        for a, b in itertools.pairwise(nodes):
            for i, link in enumerate(links):
                ends = (str(link.get("from")), str(link.get("to")))
                if ends == (a, b):
                    if "aqm" in link:
                        yield f"topology.links[{i}].aqm", link["aqm"]
                    else:
                        yield "aqm", top
                elif ends == (b, a):
                    if "reverse_aqm" in link:
                        yield f"topology.links[{i}].reverse_aqm", link["reverse_aqm"]
                    elif "aqm" in link:
                        yield f"topology.links[{i}].aqm", link["aqm"]
                    else:
                        yield "reverse_aqm", top_rev
        return
    yield ("reverse_aqm", top_rev) if reverse else ("aqm", top)
    if kind == "parking-lot":
        path = str(group.get("path", "long"))
        for i, o in enumerate(topo.get("overrides", []) or []):
            link = str(o.get("link", ""))
            if path.startswith("short:") and link != f"link{path.split(':', 1)[1]}":
                continue
            if reverse and ("reverse_aqm" in o or "aqm" in o):
                key = "reverse_aqm" if "reverse_aqm" in o else "aqm"
                yield f"topology.overrides[{i}].{key}", o[key]
            elif not reverse and "aqm" in o:
                yield f"topology.overrides[{i}].aqm", o["aqm"]


def _every_queue(resolved: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path, AQM table) of every queue of the scenario that traffic may cross."""
    topo = resolved.get("topology", {}) or {}
    top = resolved.get("aqm", {}) or {}
    yield "aqm", top
    rev = resolved.get("reverse_aqm", top) or top
    if rev != top:  # not named twice when it is [aqm]'s copy
        yield "reverse_aqm", rev
    for name in ("links", "overrides"):
        entries = topo.get(name)
        if not isinstance(entries, list):
            continue
        for i, e in enumerate(entries):
            for key in ("aqm", "reverse_aqm"):
                if isinstance(e, Mapping) and key in e:
                    yield f"topology.{name}[{i}].{key}", e[key]


def _listed(items: Sequence[str], most: int = 3) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" (+{len(items) - most} more)" if len(items) > most else "")


def ecn_notes(resolved: Mapping[str, Any]) -> list[str]:
    """The disagreements between the hosts' and the queues' ECN switches in a resolved
    scenario, one sentence each (at most two: traffic that meets queues that do not mark, and
    queues set to mark that no ECN-capable traffic reaches)."""
    tcp_ecn = bool((resolved.get("tcp", {}) or {}).get("ecn", False))
    capable: list[str] = []  # where the traffic's ECN comes from
    met_off: dict[str, str] = {}  # queue path -> its kind, for queues that do not mark
    for gi, g in enumerate(resolved.get("traffic", []) or []):
        if not isinstance(g, Mapping) or g.get("kind") not in TCP_KINDS:
            continue
        on = g.get("ecn", tcp_ecn)
        if not on:
            continue
        capable.append(f"traffic[{gi}].ecn" if "ecn" in g else "tcp.ecn")
        for path, table in _queues(resolved, g):
            if isinstance(table, Mapping) and _marks(table) is False:
                met_off.setdefault(path, str(table.get("kind", "?")))
    notes = []
    if met_off:
        where = _listed(sorted(set(capable)))
        queues = _listed([f"{p} ({k})" for p, k in met_off.items()])
        keys = " ".join(f"--set {p}.ecn=true" for p in list(met_off)[:2])
        them = "that queue drops where it" if len(met_off) == 1 else "those queues drop where they"
        notes.append(
            f"ECN-capable traffic ({where} = true) meets {queues} with marking off: {them} "
            f"could mark; to mark, {keys} (a queue's ECN is its own switch, off "
            "unless set: docs/scenario.md, ECN)"
        )
    marking = [
        p
        for p, table in _every_queue(resolved)
        if isinstance(table, Mapping) and _marks(table) is True
    ]
    if marking and not capable:
        notes.append(
            f"{_listed(marking)}: set to mark (ecn = true), but no traffic is ECN-capable "
            "(tcp.ecn = false), so every signal is a drop; --set tcp.ecn=true makes the TCP "
            "traffic ECN-capable"
        )
    return notes
