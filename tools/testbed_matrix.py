#!/usr/bin/env python3
"""The simulator's linux profile beside the kernel's TCP on the testbed, cell by cell.

Each cell runs the dumbbell of ``scenarios/testbed/dumbbell-20.toml`` (100 ms base RTT, 1500-byte
packets, 20 s measured from 8 s) twice: on the testbed with the kernel's congestion control
(``--cc``) through aqmlab's AQM code on the router, and in the simulator with ``tcp.profile =
"linux"`` and the variant of the same name, its access links at the testbed's veth speed
(:func:`aqmlab.testbed.simulator_counterpart`). The grid: {reno, cubic, bbr} x {DropTail of one BDP,
PIE, FQ-CoDel} x {5, 20 flows} x {10, 50 Mbit/s}. Printed per cell: utilisation, mean queue
(packets) and Jain's index on both sides, and whether each is within the band docs/tcp.md states
(utilisation 0.02, mean queue 15 % + 2 packets, Jain 0.03). Needs root (the testbed).

Usage::

    tools/testbed_matrix.py [--cc reno cubic bbr] [--aqm droptail pie fq-codel]
        [--flows 5 20] [--rate 10 50] [--seed 1] [--json FILE] [--keep DIR]
        [--testbed-from FILE] [--sim-set KEY=VALUE ...] [--set KEY=VALUE ...] [--flow-series]
        [--reference testbed|linux-qdisc] [--ecn] [--router-priority nice|fifo]

Both sides run the same scenario: the testbed starts each flow when the simulator does (the
router's ``--check`` gives the simulator's start draws). ``--testbed-from`` takes each cell's
testbed figures from an earlier run's ``--json`` and runs only the simulator (no root needed):
the kernel's side does not change when the simulator's TCP does. ``--sim-set`` changes the
simulator's scenario only (``aqmlab run --set`` syntax, e.g. ``tcp.moderate_rcvbuf=true``);
``--set`` changes both sides' (a key the testbed honours: ``tcp.sack_compression=false`` is the
kernel's ``net.ipv4.tcp_comp_sack_nr = 0`` and the simulator's key), not with ``--testbed-from``.
``--flow-series`` traces every flow on both sides (``metrics.flow_series``; the testbed's from the
kernel's ``TCP_INFO`` every 10 ms) and prints each side's window growth in congestion avoidance,
segments per round trip (:func:`ca_growth`), over all its samples and over those in a state that
lets the window grow (``ca_state``: the kernel's ``tcpi_ca_state``). Each cell of ``--json``
records what each side ran with beyond the grid's scenario: ``testbed_set`` (the ``--set`` of the
kernel's run, carried over by ``--testbed-from``) and ``sim_set`` (the ``--set`` and ``--sim-set``
of the simulator's); a file written before these existed records neither, read as none.

``--reference linux-qdisc`` takes the kernel's side from Linux's own queue discs instead, in a
user-mode Linux guest (Linux 6.1, its TCP; :mod:`aqmlab.testbed.linux_qdisc`, ``make uml``, no
root needed): the schemes this machine's kernel lacks (``--aqm codel``, ``--aqm step``: a
sojourn step of 15 ms, codel's ``ce_threshold`` there) and DCTCP (``--cc dctcp``, ECN on every
flow and queue, as ``--ecn`` sets for the others). Sound at 10 Mbit/s; at 50 the guest's one CPU
holds the link below its rate (docs/testbed.md). The marks of both sides are printed too. The
simulator's access links stay the scenario's there (100 Mbit/s): the guest's veth speed is not
measured.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from aqmlab.testbed.cpus import CPU_CHOICES, CPUS
from aqmlab.testbed.priority import ROUTER_PRIORITIES

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = ROOT / "scenarios" / "testbed" / "dumbbell-20.toml"
RTT_S = 0.1
PACKET = 1500
CCS = ("reno", "cubic", "bbr")
AQMS = ("droptail", "pie", "fq-codel")
#: With ``--reference linux-qdisc`` also DCTCP (ECN on every flow and queue), CoDel and the step
#: on sojourn time (Linux: codel's ce_threshold), the schemes the kernel here lacks.
UML_CCS = ("dctcp",)
UML_AQMS = ("codel", "step")
#: The step's threshold: above a seventh of the BDP at 100 ms (the DCTCP paper's bound), 12.5
#: packets at 10 Mbit/s.
STEP_THRESHOLD = "15ms"


def bdp_packets(rate_mbps: float) -> int:
    return round(rate_mbps * 1e6 * RTT_S / (8 * PACKET))


def scenario(
    aqm: str, flows: int, rate_mbps: float, seed: int, ecn: bool = False
) -> dict[str, Any]:
    """The cell's scenario document (the testbed's; the simulator adds its TCP keys). With
    ``ecn`` every flow and the queue use ECN."""
    from aqmlab import scenario as sc

    doc = sc.load(DUMBBELL)
    doc["seed"] = seed
    doc["topology"]["bottleneck_rate"] = f"{rate_mbps:g}Mbps"
    # DropTail holds one BDP; the AQMs get room enough that their limit does not act.
    bdp = bdp_packets(rate_mbps)
    doc["topology"]["buffer"] = bdp if aqm == "droptail" else max(200, 2 * bdp)
    doc["aqm"] = {"kind": aqm}
    if aqm == "step":
        doc["aqm"]["threshold"] = STEP_THRESHOLD
    if ecn:
        doc["tcp"]["ecn"] = True
        if aqm != "droptail":
            doc["aqm"]["ecn"] = True
    doc["traffic"][0]["flows"] = flows
    # Each flow opens with SYN and SYN/ACK, as the kernel's connections do: a SYN dropped by
    # the queue delays its flow, and with ECN opens it without ECN (`tcp.ecn_fallback`).
    doc["traffic"][0]["handshake"] = True
    return doc


def figures(summary: dict[str, Any]) -> dict[str, float]:
    b, f = summary["bottleneck"], summary["flows"]
    return {
        "utilisation": float(b["utilization"]),
        "queue": float(b["queue_mean_pkts"]),
        "jain": float(f["jain_fairness"]),
        "drops": float(b["drops_early"] + b["drops_forced"] + b["drops_overflow"]),
        "departures": float(b["departures"]),
        # Loss recovery over the measurement window, where the summary has it (the testbed's
        # from the kernel's counters).
        **{
            k: float(f[k])
            for k in (
                "timeouts",
                "sack_recoveries",
                "tlp_probes",
                "timeouts_undone",
                "ecn_fallbacks",
            )
            if k in f
        },
    }


#: Loss-recovery states in which Linux's window does not grow (``tcp_cong_control``: a
#: reduction in progress, or the Loss state's slow start from one segment).
NO_GROWTH = ("cwr", "recovery", "loss")


def ca_growth(fs: Any, start_s: float, open_only: bool = False) -> float:
    """The window's growth in congestion avoidance, segments per round trip, over the flows'
    samples from ``start_s``: between consecutive samples of a flow whose ssthresh is the same
    and finite, with the window at or above it and not falling (no cut, no slow start), the
    sum of the window's increases over the sum of the intervals in smoothed RTTs. With
    ``open_only``, only the intervals whose first sample's ``ca_state`` lets the window grow
    (not in :data:`NO_GROWTH`): the time a recovery holds the window at ssthresh is left out."""
    t = fs.to_pydict()
    states = t.get("ca_state") or [""] * len(t["time_s"])
    last: dict[int, tuple[float, float, float, float, str]] = {}
    grown = rtts = 0.0
    for time_s, f, cwnd, ssth, srtt, state in zip(
        t["time_s"], t["flow"], t["cwnd"], t["ssthresh"], t["srtt_s"], states, strict=True
    ):
        p = last.get(f)
        last[f] = (time_s, cwnd, ssth, srtt, state)
        if p is None or p[0] < start_s or p[2] != ssth or ssth == float("inf"):
            continue
        if p[1] < ssth or cwnd < p[1] or not srtt > 0:
            continue
        if open_only and p[4] in NO_GROWTH:
            continue
        grown += cwnd - p[1]
        rtts += (time_s - p[0]) / srtt
    return grown / rtts if rtts > 0 else float("nan")


#: A cell of a ``--json`` file: its grid point, its ECN and its reference (a file written before
#: the last two existed ran the testbed without ECN).
CellKey = tuple[str, str, int, float, bool, str]


def sim_tcp(cc: str, reference: str = "testbed", ecn: bool = False) -> dict[str, Any]:
    """The simulator's `[tcp]` beside the kernel's congestion control `cc`: the linux profile
    with that variant, 1500-byte packets, and ECN where the kernel runs it."""
    tcp: dict[str, Any] = {"profile": "linux", "variant": cc, "packet_size": PACKET}
    if reference == "testbed":
        # The testbed's router hashes a connection's 5-tuple, which the kernel's new
        # sk_txhash after a timeout leaves as it was (the guest's queue reads the hash).
        tcp["txrehash"] = False
    if ecn:
        tcp["ecn"] = True
    return tcp


def cell_key(c: dict[str, Any]) -> CellKey:
    return (
        str(c["cc"]),
        str(c["aqm"]),
        int(c["flows"]),
        float(c["rate_mbps"]),
        bool(c.get("ecn", False)),
        str(c.get("reference", "testbed")),
    )


def cell_settings(c: dict[str, Any], field: str) -> list[str]:
    """A cell's overrides on one side (``testbed_set`` or ``sim_set``): none where the file
    predates them. Raises ValueError when the field is not a list."""
    v = c.get(field, [])
    if not isinstance(v, list):
        raise ValueError(f"{field}: {v!r} is not a list of KEY=VALUE")
    return [str(kv) for kv in v]


def within(sim: dict[str, float], tb: dict[str, float]) -> dict[str, bool]:
    return {
        "utilisation": abs(sim["utilisation"] - tb["utilisation"]) <= 0.02,
        "queue": abs(sim["queue"] - tb["queue"]) <= 0.15 * sim["queue"] + 2,
        "jain": abs(sim["jain"] - tb["jain"]) <= 0.03,
    }


def run_cell(
    cc: str,
    aqm: str,
    flows: int,
    rate: float,
    seed: int,
    keep: Path,
    earlier: dict[CellKey, tuple[dict[str, float], list[str]]] | None = None,
    sim_set: list[str] | None = None,
    series: bool = False,
    reference: str = "testbed",
    ecn: bool = False,
    router_priority: str | None = None,
    cpus: str = CPUS,
    both_set: list[str] | None = None,
) -> dict[str, Any]:
    import aqmlab
    from aqmlab import scenario as sc
    from aqmlab.testbed import run_testbed, simulator_counterpart

    ecn = ecn or cc == "dctcp"
    doc = scenario(aqm, flows, rate, seed, ecn)
    if reference == "linux-qdisc" and aqm == "pie":
        # Linux's pie always de-randomises (RFC 8033 section 5.4), with its own enqueue
        # rules; so does the simulator's here.
        doc["aqm"]["derandomize"] = True
        doc["aqm"]["enqueue"] = "linux"
        # The guest's pie updates on its 100 Hz clock: Linux's 15 ms runs as 20 ms there, and
        # both sides run 20 ms.
        doc["aqm"]["t_update"] = "20ms"
    if reference == "linux-qdisc" and aqm in ("codel", "fq-codel"):
        # Linux's CoDel steps 1/sqrt(count) by Newton's method; so does the simulator's here.
        doc["aqm"]["control_law"] = "linux"
    if both_set:
        sc.apply_overrides(doc, both_set)
    start_s = (sc._ns(doc["metrics"]["start"]) or 0) * 1e-9
    if series:
        doc["metrics"]["flow_series"] = list(range(flows))
    # What each side ran with beyond the grid's scenario (`--set` on both, `--sim-set` on the
    # simulator's alone), kept in the cell so that runs of different settings are not pooled.
    testbed_set = list(both_set or [])
    if earlier is not None:
        tb, testbed_set = earlier[(cc, aqm, flows, rate, ecn, reference)]
    elif reference == "linux-qdisc":
        from aqmlab.testbed.linux_qdisc import run_linux_qdisc

        summary = run_linux_qdisc(doc, cc)
        (keep / f"{cc}-{aqm}-{flows}-{rate:g}.linux-qdisc.json").write_text(json.dumps(summary))
        tb = figures(summary)
        tb["marks"] = float(summary["bottleneck"]["marks"])
    else:
        out = keep / f"{cc}-{aqm}-{flows}-{rate:g}"
        res = run_testbed(doc, out, cc=cc, router_priority=router_priority, cpus=cpus)
        tb = figures(json.loads((out / "summary.json").read_text()))
        if series:
            tb["growth"] = ca_growth(res.flow_series, start_s)
            tb["growth_open"] = ca_growth(res.flow_series, start_s, open_only=True)
    # The testbed's access links are veth pairs: the simulator's run at their speed. The guest's
    # veth speed is not measured: there the scenario's access links (100 Mbit/s).
    sim_doc = simulator_counterpart(doc) if reference == "testbed" else json.loads(json.dumps(doc))
    sim_doc["tcp"] = sim_tcp(cc, reference, ecn)
    # The simulator's TCP is the profile's: the keys set on both sides go on it again.
    sets = [kv for kv in both_set or [] if kv.startswith("tcp.")] + list(sim_set or [])
    if sets:
        sc.apply_overrides(sim_doc, sets)
    sim_run = aqmlab.run(sim_doc)
    sim = figures(sim_run.summary)
    b = sim_run.summary["bottleneck"]
    sim["marks"] = float(b["marks_early"] + b["marks_forced"])
    if series:
        sim["growth"] = ca_growth(sim_run.flow_series, start_s)
        sim["growth_open"] = ca_growth(sim_run.flow_series, start_s, open_only=True)
    return {
        "cc": cc,
        "aqm": aqm,
        "flows": flows,
        "rate_mbps": rate,
        "ecn": ecn,
        "reference": reference,
        "seed": seed,
        "sim": sim,
        "testbed": tb,
        "within": within(sim, tb),
        "testbed_set": testbed_set,
        "sim_set": list(both_set or []) + list(sim_set or []),
    }


def row(c: dict[str, Any]) -> str:
    s, t, w = c["sim"], c["testbed"], c["within"]

    def mark(k: str) -> str:
        return " " if w[k] else "*"

    return (
        f"{c['cc']:<6} {c['aqm']:<9} {c['flows']:>3} {c['rate_mbps']:>4g}  "
        f"{s['utilisation']:.3f} {t['utilisation']:.3f}{mark('utilisation')}  "
        f"{s['queue']:6.1f} {t['queue']:6.1f}{mark('queue')}  "
        f"{s['jain']:.3f} {t['jain']:.3f}{mark('jain')}  "
        f"{s['drops']:6.0f} {t['drops']:6.0f}"
        + (f"  marks {s['marks']:6.0f} {t['marks']:6.0f}" if "marks" in t else "")
        + (f"  {s['growth']:.2f} {t['growth']:.2f}" if "growth" in s and "growth" in t else "")
        + (
            f"  {s['growth_open']:.2f} {t['growth_open']:.2f}"
            if "growth_open" in s and "growth_open" in t
            else ""
        )
    )


HEADER = (
    "cc     aqm       flows Mb/s  util sim/tb       queue sim/tb     Jain sim/tb    drops sim/tb"
    "  [growth sim/tb  open sim/tb]"
    "\n(* outside the band: utilisation 0.02, queue 15 % + 2 packets, Jain 0.03; growth: the"
    " window's in congestion avoidance, segments per round trip, with --flow-series; open: the"
    " same over the samples in a state that lets it grow, neither CWR, Recovery nor Loss)"
)


def add_sim_set(ap: argparse.ArgumentParser) -> None:
    """``--sim-set KEY=VALUE`` (repeatable): a change to the simulator's side of each cell only."""
    ap.add_argument(
        "--sim-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change the simulator's scenario only (repeatable; aqmlab run --set syntax)",
    )


def add_scheduling(ap: argparse.ArgumentParser) -> None:
    """``--router-priority nice|fifo`` and ``--cpus pinned|shared``: how the testbed's
    processes are scheduled (``aqmlab testbed``'s flags of the same names)."""
    ap.add_argument(
        "--router-priority",
        choices=ROUTER_PRIORITIES,
        default=None,
        help="the testbed's router in the real-time class, the hosts' programs in it below the "
        "router (the default with shared CPUs), or the router at nice -10 and the hosts' programs "
        "in the ordinary class (the only choice with --cpus pinned)",
    )
    ap.add_argument(
        "--cpus",
        choices=CPU_CHOICES,
        default=CPUS,
        help="the processes where the kernel puts them (default), or the router alone on one "
        "CPU, polling, and the others kept awake",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cc", nargs="+", default=list(CCS), choices=CCS + UML_CCS)
    ap.add_argument("--aqm", nargs="+", default=list(AQMS), choices=AQMS + UML_AQMS)
    ap.add_argument(
        "--reference",
        choices=("testbed", "linux-qdisc"),
        default="testbed",
        help="the kernel's side: the testbed (aqmlab's AQM code on the router, the host's "
        "kernel; root) or Linux's own queue discs in a user-mode Linux guest (make uml)",
    )
    ap.add_argument(
        "--ecn", action="store_true", help="every flow and queue with ECN (DCTCP's always)"
    )
    ap.add_argument("--flows", nargs="+", type=int, default=[5, 20])
    ap.add_argument("--rate", nargs="+", type=float, default=[10.0, 50.0], help="Mbit/s")
    add_scheduling(ap)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the cells as JSON here")
    ap.add_argument("--keep", type=Path, help="keep the testbed's result folders here")
    ap.add_argument(
        "--testbed-from",
        type=Path,
        help="an earlier run's --json: take the testbed's figures from it, run the simulator only",
    )
    add_sim_set(ap)
    ap.add_argument(
        "--set",
        dest="both_set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change both sides' scenario (repeatable; aqmlab run --set syntax; a key the testbed "
        "honours, e.g. tcp.sack_compression=false); not with --testbed-from",
    )
    ap.add_argument(
        "--flow-series",
        action="store_true",
        help="trace every flow on both sides and print the window's growth in congestion "
        "avoidance (segments per round trip)",
    )
    args = ap.parse_args(argv)
    if args.reference == "testbed":
        for name, chosen, only in (("--cc", args.cc, UML_CCS), ("--aqm", args.aqm, UML_AQMS)):
            bad = [x for x in chosen if x in only]
            if bad:
                print(
                    f"error: {name} {bad[0]}: only with --reference linux-qdisc (this kernel "
                    "lacks it)",
                    file=sys.stderr,
                )
                return 2
    from aqmlab import ScenarioError
    from aqmlab.testbed import TestbedError

    earlier = None
    if args.testbed_from and args.both_set:
        print(
            f"error: --set {args.both_set[0]}: not with --testbed-from (its kernel runs were taken "
            "without it; --sim-set changes the simulator's side)",
            file=sys.stderr,
        )
        return 2
    if args.testbed_from:
        try:
            earlier = {
                cell_key(c): (c["testbed"], cell_settings(c, "testbed_set"))
                for c in json.loads(args.testbed_from.read_text())
            }
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(
                f"error: --testbed-from {args.testbed_from}: not an earlier --json ({e})",
                file=sys.stderr,
            )
            return 2
        wanted = [
            (cc, aqm, flows, rate, args.ecn or cc == "dctcp", args.reference)
            for cc, aqm, flows, rate in itertools.product(args.cc, args.aqm, args.flows, args.rate)
        ]
        missing = [k for k in wanted if k not in earlier]
        if missing:
            cc, aqm, flows, rate, ecn, ref = missing[0]
            print(
                f"error: --testbed-from {args.testbed_from}: no cell {cc} {aqm} {flows} flows "
                f"{rate:g} Mbit/s{' with ECN' if ecn else ''} ({ref}) ({len(missing)} missing)",
                file=sys.stderr,
            )
            return 2

    cells = []
    with tempfile.TemporaryDirectory() as tmp:
        keep = args.keep or Path(tmp)
        keep.mkdir(parents=True, exist_ok=True)
        print(HEADER, flush=True)
        for rate, flows, aqm, cc in itertools.product(args.rate, args.flows, args.aqm, args.cc):
            try:
                c = run_cell(
                    cc,
                    aqm,
                    flows,
                    rate,
                    args.seed,
                    keep,
                    earlier,
                    args.sim_set,
                    args.flow_series,
                    args.reference,
                    args.ecn,
                    args.router_priority,
                    args.cpus,
                    args.both_set,
                )
            except (TestbedError, ScenarioError) as e:
                print(f"error: {e}", file=sys.stderr)
                return 2
            cells.append(c)
            print(row(c), flush=True)
    n = len(cells)
    for k in ("utilisation", "queue", "jain"):
        print(f"{k}: within the band in {sum(c['within'][k] for c in cells)} of {n} cells")
    if args.json:
        args.json.write_text(json.dumps(cells, indent=1))
    return 0


if __name__ == "__main__":
    from pipe_exit import run

    sys.exit(run(main))
