"""``aqmlab design ...``: parameter design, stability checks and the fluid
model from the command line.

    aqmlab design red|pi|rem|ap-red --rate R --rtt T --flows N [--packet-size B] [-o FIG]
    aqmlab design red|pi|rem|ap-red --scenario FILE [flags replacing its figures] [-o FIG]
    aqmlab design red|pi|rem|ap-red --apply FILE -o NEW.toml   (FILE with the designed [aqm])
    aqmlab design check SCENARIO.toml [--set K=V ...] [-o FIG] [--json]
    aqmlab design fluid SCENARIO.toml [--result DIR | --no-run] [--set K=V ...] [-o FIG]
    aqmlab design grid [--quick] [--jobs J] [-o FIG] [--json OUT]

Bad input is a one-line error naming the argument (exit status 2).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aqmlab._atomic import write_text
from aqmlab.design.model import ApRedInitial, DesignError, Network, parse_rate_bps, parse_time_s

__all__ = ["add_parser"]


#: Packet size of a design given neither --packet-size nor a scenario (ns-2's and the thesis').
DEFAULT_PACKET_SIZE = 500


def _net_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rate", help='bottleneck rate, e.g. "10Mbps" (required without --scenario/--apply)'
    )
    p.add_argument(
        "--rtt",
        help='base (propagation) round-trip time, e.g. "120ms" (required without '
        "--scenario/--apply)",
    )
    p.add_argument(
        "--flows",
        help="number of long-lived TCP flows N >= 1 (required without --scenario/--apply)",
    )
    p.add_argument(
        "--packet-size",
        default=None,
        metavar="BYTES",
        help=f"packet size in bytes, the unit of C, the queue and the thresholds (default: the "
        f"scenario's tcp.packet_size with --scenario/--apply, else {DEFAULT_PACKET_SIZE})",
    )
    p.add_argument("--buffer", default=None, help="buffer in packets (default unbounded)")
    p.add_argument("--target-delay", default=None, help='queueing delay to aim for, e.g. "20ms"')
    p.add_argument(
        "--scenario",
        metavar="FILE",
        help="design for this scenario's network: N, Tp, rate, buffer and tcp.packet_size of its "
        "first AQM link at the start (a flag given as well replaces the scenario's figure)",
    )
    p.add_argument(
        "--apply",
        metavar="FILE",
        help="as --scenario, and write the scenario with the designed [aqm] table to -o NEW.toml",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="Bode and Nyquist plot (.png, .svg, .pdf), or with --apply the new scenario (.toml)",
    )
    p.add_argument("--json", action="store_true", help="print the design as JSON")


def _number(text: str | None, arg: str, lo: float = 0.0, integer: bool = False) -> float:
    try:
        v = float(str(text))
    except ValueError:
        raise DesignError(arg, f"{text!r} is not a number") from None
    if not math.isfinite(v) or v <= lo:
        raise DesignError(arg, f"{text!r} is not allowed; give a number > {lo:g}")
    if integer and not v.is_integer():
        raise DesignError(arg, f"{text!r} is not a whole number")
    return v


@dataclass
class _Facts:
    """The network a design is made for, and where its packet size came from."""

    net: Network
    packet_size: int
    rate_bps: float
    #: "--packet-size", "tcp.packet_size of FILE" or "the default".
    size_from: str
    notes: list[str]
    #: With --scenario/--apply: the file, its text and its document (before any --set).
    file: str | None = None
    text: str = ""
    doc: dict[str, Any] | None = None


def _flows(text: str) -> float:
    try:
        flows = float(text)
    except ValueError:
        raise DesignError("--flows", f"{text!r} is not a number") from None
    if not (math.isfinite(flows) and flows >= 1):
        raise DesignError("--flows", f"{text!r} is not allowed; give N >= 1")
    return flows


def _network(a: argparse.Namespace) -> _Facts:
    """The network of the design: from the flags, or from a scenario (--scenario, --apply)
    with the flags given replacing its figures."""
    if a.scenario and a.apply:
        raise DesignError("--apply", "give --scenario FILE or --apply FILE, not both")
    file = a.apply or a.scenario
    size_given = a.packet_size is not None
    size = int(_number(a.packet_size, "--packet-size", integer=True)) if size_given else None
    if file is None:
        flags = (("--rate", a.rate), ("--rtt", a.rtt), ("--flows", a.flows))
        missing = [f for f, v in flags if v is None]
        if missing:
            raise DesignError(
                missing[0],
                f"required: give {', '.join(missing)}, or read the network from a scenario "
                "with --scenario FILE (or --apply FILE -o NEW.toml)",
            )
        rate = parse_rate_bps(a.rate, "--rate")
        rtt = parse_time_s(a.rtt, "--rtt")
        flows = _flows(a.flows)
        buf = math.inf if a.buffer is None else _number(a.buffer, "--buffer")
        used = size if size is not None else DEFAULT_PACKET_SIZE
        net = Network.from_rate(flows, rtt, rate, used, buf)
        where = "--packet-size" if size_given else "the default"
        return _Facts(net, used, rate, where, [])
    from aqmlab._input import check_scenario, display_name, load_file
    from aqmlab.design.apply import network_of

    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""  # load_file reports it
    doc = load_file(file)
    resolved = check_scenario(file, copy.deepcopy(doc))
    sn = network_of(resolved, a.design_command, display_name(file))
    notes = list(sn.notes)
    flows, rtt, rate = sn.net.flows, sn.net.rtt, sn.rate_bps
    buf = sn.net.buffer
    given = []
    if a.flows is not None:
        flows = _flows(a.flows)
        given.append(f"N = {flows:g} (--flows)")
    if a.rtt is not None:
        rtt = parse_time_s(a.rtt, "--rtt")
        given.append(f"Tp = {rtt * 1e3:g} ms (--rtt)")
    if a.rate is not None:
        rate = parse_rate_bps(a.rate, "--rate")
        given.append(f"C = {_rate_text(rate)} (--rate)")
    if a.buffer is not None:
        buf = _number(a.buffer, "--buffer")
        given.append(f"buffer {buf:g} packets (--buffer)")
    used = size if size is not None else sn.packet_size
    if size is not None and size != sn.packet_size:
        given.append(f"{size}-byte packets (--packet-size; tcp.packet_size is {sn.packet_size})")
    if given:
        notes.append(
            f"{display_name(file)}: designed with {', '.join(given)} in place of the scenario's"
        )
    net = Network.from_rate(flows, rtt, rate, used, buf)
    where = "--packet-size" if size_given else f"tcp.packet_size of {display_name(file)}"
    return _Facts(net, used, rate, where, notes, file, text, doc)


def _rate_text(bps: float) -> str:
    for scale, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if bps >= scale:
            return f"{bps / scale:.4g} {unit}"
    return f"{bps:.4g} bit/s"


def _user_errors(f: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Report :class:`DesignError` as the CLI's one-line input error (exit 2)."""

    @functools.wraps(f)
    def run(a: argparse.Namespace) -> int:
        from aqmlab._input import UserError

        try:
            return f(a)
        except DesignError as e:
            raise UserError(f"design {a.design_command}: {e}") from None

    return run


def add_parser(sub: Any) -> None:
    """Register ``design`` and its subcommands on the main parser's ``sub``."""
    d = sub.add_parser(
        "design",
        help="control-theory design: fluid model, stability checks, parameter sets",
        description="Parameter design from the seeds' control theory (docs/design.md).",
    )
    ds = d.add_subparsers(dest="design_command", required=True, metavar="WHAT")

    r = ds.add_parser("red", help="a RED set satisfying eq. 4.9 with a margin")
    _net_args(r)
    r.add_argument("--safety", default="0.5", help="w_q as a fraction of eq. 4.9's bound (0, 1]")
    r.add_argument("--min-phase-margin", default="30", help="degrees the exact loop must keep")
    r.set_defaults(func=_user_errors(_cmd_design))

    p = ds.add_parser("pi", help="a PI controller by eq. 6.3, a/b by Tustin's rule")
    _net_args(p)
    p.add_argument(
        "--lambda", dest="lam", default="0.128", help="omega_g R of eq. 6.4, in (0, 0.85)"
    )
    p.add_argument("--sampling-freq", default="160", help="sampling frequency, Hz (default 160)")
    p.add_argument("--q-ref", default=None, help="reference queue, packets")
    p.add_argument(
        "--rtt-total",
        action="store_true",
        help="--rtt is the design's full round trip R (Hollot et al.'s R+), not Tp",
    )
    p.set_defaults(func=_user_errors(_cmd_design))

    m = ds.add_parser("rem", help="REM with gamma from Theorem 1 and the loop's phase margin")
    _net_args(m)
    m.add_argument("--alpha", default="0.1", help="alpha of eq. 2/4, in (0, 1)")
    m.add_argument("--phi", default="1.001", help="phi of eq. 3, > 1")
    m.add_argument("--update-interval", default="2ms", help="price update period")
    m.add_argument("--min-phase-margin", default="45", help="degrees the delayed loop must keep")
    m.set_defaults(func=_user_errors(_cmd_design))

    a = ds.add_parser("ap-red", help="AP-RED's RED set scaled from an initial design (eq. 4.3-4.6)")
    _net_args(a)
    a.add_argument(
        "--initial",
        default="0.05,50,150,1e-4",
        help="max_p0,min_th0,max_th0,w_q0 (default section 4.5.1's)",
    )
    a.add_argument("--n0", default="50", help="N0 of the initial design")
    a.add_argument("--c0", default="2500", help="C0 of the initial design, packets/s")
    a.add_argument("--r0", default="120ms", help="R0 of the initial design")
    a.set_defaults(func=_user_errors(_cmd_design))

    setarg: dict[str, Any] = {
        "action": "append",
        "default": [],
        "metavar": "KEY=VALUE",
        "help": "override a scenario key (repeatable)",
    }
    c = ds.add_parser("check", help="stability of a scenario's AQM links, phase by phase")
    c.add_argument("file", metavar="SCENARIO", help="scenario file (TOML)")
    c.add_argument("--set", dest="sets", **setarg)
    c.add_argument("-o", "--output", metavar="FIG", help="Bode and Nyquist plot of every phase")
    c.add_argument("--json", action="store_true", help="print the rows as JSON")
    c.set_defaults(func=_user_errors(_cmd_check))

    f = ds.add_parser("fluid", help="the fluid model over the engine's queue of a scenario")
    f.add_argument("file", metavar="SCENARIO", help="scenario file (TOML)")
    f.add_argument("--set", dest="sets", **setarg)
    f.add_argument("--result", metavar="DIR", help="read the packet queue from this result folder")
    f.add_argument("--no-run", action="store_true", help="the fluid model only")
    f.add_argument(
        "-o", "--output", metavar="FIG", default="fluid.png", help="figure (default fluid.png)"
    )
    f.add_argument("--json", action="store_true", help="print the statistics as JSON")
    f.set_defaults(func=_user_errors(_cmd_fluid))

    g = ds.add_parser("grid", help="the RED proposition against the engine over R x C")
    g.add_argument("--quick", action="store_true", help="a 2 x 3 grid of 40 s runs")
    g.add_argument("--jobs", default="1", help="worker processes")
    g.add_argument("-o", "--output", metavar="FIG", default="design-grid.png", help="figure")
    g.add_argument("--json", metavar="OUT", help="write the rows and counts to this JSON file")
    g.set_defaults(func=_user_errors(_cmd_grid))


#: The keys of each design's [aqm] table that are queue sizes, in packets.
_QUEUE_KEYS = ("q_ref", "min_th", "max_th", "b_star")


def _sizes_comment(aqm: dict[str, Any], facts: _Facts) -> str:
    """``for 500-byte packets at 10 Mbit/s: q_ref = 30 packets = 12.0 ms of queue``."""
    per_packet_s = facts.packet_size * 8 / facts.rate_bps
    sizes = [
        f"{k} = {aqm[k]:g} packets = {aqm[k] * per_packet_s * 1e3:.1f} ms"
        for k in _QUEUE_KEYS
        if isinstance(aqm.get(k), (int, float))
    ]
    head = f"for {facts.packet_size}-byte packets at {_rate_text(facts.rate_bps)}"
    return f"{head}: {', '.join(sizes)} of queue" if sizes else head


def _print_design(d: Any, facts: _Facts, as_json: bool) -> None:
    from aqmlab.design.tune import to_toml

    if as_json:
        doc = d.as_dict()
        doc["network"]["packet_size_bytes"] = facts.packet_size
        doc["network"]["packet_size_from"] = facts.size_from
        doc["network"]["rate_bps"] = facts.rate_bps
        print(json.dumps(doc, indent=1, default=_json_default))
        return
    n = d.net
    print(
        f"network: N = {n.flows:g}, Tp = {n.rtt * 1e3:.1f} ms, C = {_rate_text(facts.rate_bps)}"
        f" = {n.capacity:.1f} packets/s (RC = {n.bdp:.1f} packets)"
    )
    per_packet_ms = facts.packet_size * 8 / facts.rate_bps * 1e3
    hint = (
        "; give --packet-size, or --scenario FILE for its tcp.packet_size"
        if facts.size_from == "the default"
        else ""
    )
    print(
        f"packets: {facts.packet_size} bytes ({facts.size_from}{hint}): C, q0, q_ref and the "
        f"thresholds count them; one packet is {per_packet_ms:.3g} ms of queue at C"
    )
    op = d.op
    print(
        f"operating point (eq. 4.7): q0 = {op.q0:.1f} packets, p0 = {op.p0:.4g}, "
        f"W0 = {op.w0:.2f}, R0 = {op.r0 * 1e3:.1f} ms ({op.regime})"
    )
    for k, v in d.numbers.items():
        if not k.startswith("_"):
            print(f"  {k} = {v:.5g}")
    if d.prop is not None:
        pr = d.prop
        verdict = {True: "holds", False: "does NOT hold", None: "does not apply"}[pr.holds]
        print(
            f"{pr.name}: {pr.lhs_label} = {pr.lhs:.4g} vs {pr.rhs_label} = {pr.rhs:.4g} "
            f"(ratio {pr.ratio:.3g}): {verdict}"
        )
        if pr.detail:
            print(f"  {pr.detail}")
    if d.margins is not None:
        m = d.margins
        wg = "none (|L| < 1)" if m.wg is None else f"{m.wg:.4g} rad/s"
        print(
            f"loop: crossover {wg}, phase margin {m.pm:.1f} deg, gain margin {m.gm:.3g}, "
            f"delay margin {m.dm:.3g} s: {'stable' if m.stable else 'UNSTABLE'}"
        )
    for note in d.notes:
        print(f"note: {note}")
    print()
    print(f"# {_sizes_comment(d.aqm(), facts)}")
    print(to_toml(d.aqm()), end="")


def _json_default(o: Any) -> Any:
    if isinstance(o, float):
        return None if math.isnan(o) else str(o)
    return str(o)


def _cmd_design(a: argparse.Namespace) -> int:
    from aqmlab.design import tune
    from aqmlab.design.linear import loop
    from aqmlab.design.plots import check_figure_path, plot_loops

    scenario_out = a.output is not None and Path(a.output).suffix.lower() == ".toml"
    if scenario_out and not a.apply:
        raise DesignError(
            "-o",
            f"{a.output!r}: a scenario is written with --apply FILE (the scenario to put the "
            "design in); a figure ends in .png, .svg or .pdf",
        )
    if a.apply and not scenario_out:
        raise DesignError(
            "--apply",
            f"{a.apply!r}: give the new scenario to write with -o NEW.toml"
            + (f" (not {a.output!r})" if a.output else ""),
        )
    if a.output and not scenario_out:
        check_figure_path(a.output)
    facts = _network(a)
    for n in facts.notes:
        print(f"note: {n}", file=sys.stderr)
    net = facts.net
    td = None if a.target_delay is None else parse_time_s(a.target_delay, "--target-delay")
    what = a.design_command
    if what == "red":
        d = tune.design_red(
            net,
            td,
            _number(a.safety, "--safety"),
            _number(a.min_phase_margin, "--min-phase-margin", lo=-1e-300),
        )
    elif what == "pi":
        q_ref = None if a.q_ref is None else _number(a.q_ref, "--q-ref")
        d = tune.design_pi(
            net,
            _number(a.lam, "--lambda"),
            _number(a.sampling_freq, "--sampling-freq"),
            td,
            q_ref,
            a.rtt_total,
        )
    elif what == "rem":
        d = tune.design_rem(
            net,
            td,
            _number(a.alpha, "--alpha"),
            _number(a.phi, "--phi", lo=1.0),
            parse_time_s(a.update_interval, "--update-interval"),
            _number(a.min_phase_margin, "--min-phase-margin", lo=-1e-300),
        )
    else:
        parts = str(a.initial).split(",")
        if len(parts) != 4:
            raise DesignError("--initial", f"{a.initial!r}: give max_p0,min_th0,max_th0,w_q0")
        vals = [_number(x, "--initial", lo=-1e-300) for x in parts]
        init = ApRedInitial(
            vals[0],
            vals[1],
            vals[2],
            vals[3],
            _number(a.n0, "--n0"),
            _number(a.c0, "--c0"),
            parse_time_s(a.r0, "--r0"),
        )
        d = tune.design_ap_red(net, init)
    _print_design(d, facts, a.json)
    if scenario_out:
        _write_applied(a, d, facts)
    elif a.output:
        lp = loop(d.law, d.net, d.op)
        path = plot_loops([(what, lp, d.margins)], a.output, title=f"aqmlab design {what}")
        print(f"wrote {path}")
    return 0


#: Keys of a scheme's table that a design replaces by other means (PI's ``design`` computes
#: a and b, which the design gives).
_REPLACED = {"pi": ("design",)}


def _write_applied(a: argparse.Namespace, d: Any, facts: _Facts) -> None:
    """Write ``a.output``: the scenario ``a.apply`` with the designed [aqm] table."""
    import shlex

    from aqmlab import scenario
    from aqmlab._atomic import write_text
    from aqmlab._input import check_scenario, display_name
    from aqmlab.design.apply import apply_aqm
    from aqmlab.design.tune import to_toml

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    assert facts.doc is not None and facts.file is not None
    file = display_name(facts.file)
    designed: dict[str, Any] = tomllib.loads(to_toml(d.aqm()))["aqm"]  # the numbers as printed
    old = facts.doc.get("aqm")
    old_table: dict[str, Any] = dict(old) if isinstance(old, dict) else {}
    kind = designed["kind"]
    if old_table.get("kind") == kind:
        drop = _REPLACED.get(kind, ())
        kept = {k: v for k, v in old_table.items() if k not in designed and k not in drop}
        new_table = {**designed, **kept}
        said = f"kept from its [aqm]: {', '.join(kept)}" if kept else ""
    else:
        new_table = designed
        gone = [k for k in old_table if k != "kind"]
        said = (
            f"its [aqm] was {old_table.get('kind', 'droptail')}; the design starts from {kind}'s "
            f"defaults" + (f" (dropped {', '.join(gone)})" if gone else "")
        )
    command = shlex.join(["aqmlab", "design", *[str(x) for x in getattr(a, "argv", [])[1:]]])
    comment = (
        f"designed by `{command}`\n"
        f"for N = {facts.net.flows:g}, Tp = {facts.net.rtt * 1e3:.1f} ms, "
        f"C = {facts.net.capacity:.1f} packets/s; {_sizes_comment(designed, facts)}"
    )
    text = apply_aqm(facts.text, facts.doc, new_table, comment, file)
    check_scenario(str(a.output), scenario.load(text))
    try:
        write_text(a.output, text)
    except OSError as e:
        raise DesignError("-o", f"{a.output!r}: cannot write: {e.strerror or e}") from None
    print(f"wrote {a.output}: {file} with the designed [aqm]" + (f"; {said}" if said else ""))
    print(f"check every phase of it: aqmlab design check {shlex.quote(str(a.output))}")


def _load(file: str, sets: list[str]) -> dict[str, Any]:
    from aqmlab._input import load_file

    return load_file(file, sets)


def _resolve(file: str, doc: dict[str, Any]) -> dict[str, Any]:
    from aqmlab._input import check_scenario

    return check_scenario(file, doc)


def _cmd_check(a: argparse.Namespace) -> int:
    from aqmlab.design.linear import loop
    from aqmlab.design.plots import check_figure_path, plot_loops
    from aqmlab.design.study import check_scenario, rows_public

    if a.output:
        check_figure_path(a.output)
    resolved = _resolve(a.file, _load(a.file, a.sets))
    rows = check_scenario(resolved)
    if a.json:
        print(json.dumps(rows_public(rows), indent=1, default=_json_default))
    else:
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"{Path(a.file).name}: stability by phase")
        for col in (
            "link",
            "from",
            "scheme",
            "N",
            "Tp ms",
            "C pkt/s",
            "p0",
            "q0",
            "R0 ms",
            "proposition lhs / rhs",
            "holds",
            "PM deg",
            "GM",
            "DM s",
            "loop",
        ):
            t.add_column(col)
        for r in rows:
            pl = "-" if r["prop_lhs"] is None else f"{r['prop_lhs']:.3g} / {r['prop_rhs']:.3g}"
            holds = {True: "yes", False: "NO", None: "n/a"}[r["prop_holds"]]
            loop_v = {True: "stable", False: "UNSTABLE", None: "-"}[r["stable"]]
            pm = "-" if r["phase_margin_deg"] is None else f"{r['phase_margin_deg']:.1f}"
            gm = "-" if r["gain_margin"] is None else f"{r['gain_margin']:.3g}"
            dm = "-" if r["delay_margin_s"] is None else f"{r['delay_margin_s']:.3g}"
            t.add_row(
                r["link"],
                f"{r['start_s']:g}s",
                r["scheme"],
                f"{r['flows']:g}",
                f"{r['rtt_s'] * 1e3:.1f}",
                f"{r['capacity_pkts']:.0f}",
                f"{r['p0']:.4f}",
                f"{r['q0_pkts']:.1f}{'' if r['regime'] == 'aqm' else ' (' + r['regime'] + ')'}",
                f"{r['r0_s'] * 1e3:.1f}",
                pl,
                holds,
                pm,
                gm,
                dm,
                loop_v,
            )
        Console(width=180).print(t)
        notes = sorted({n for r in rows for n in r["notes"]})
        for n in notes:
            print(f"note: {n}")
    if a.output:
        loops = []
        for r in rows:
            d = r["_design"]
            try:
                lp = loop(d.law, d.net, d.op)
            except DesignError:
                continue
            loops.append((f"{r['link']} from {r['start_s']:g}s", lp, d.margins))
        if loops:
            print(
                "wrote",
                plot_loops(loops, a.output, title=f"aqmlab design check {Path(a.file).name}"),
            )
        else:
            print("no linear loop to plot (AVQ has the fluid model only)")
    return 0


def _cmd_fluid(a: argparse.Namespace) -> int:
    from aqmlab.design.plots import check_figure_path, plot_fluid_vs_packets
    from aqmlab.design.study import compare

    check_figure_path(a.output)
    if a.result and a.no_run:
        raise DesignError("--no-run", "give --result or --no-run, not both")
    doc = _load(a.file, a.sets)
    resolved = _resolve(a.file, doc)
    if a.result:
        from aqmlab import results

        if results.is_run_dir(a.result):
            stored = dict(results.load_run(a.result).scenario)
            if {k: v for k, v in stored.items() if k != "seed"} != {
                k: v for k, v in resolved.items() if k != "seed"
            }:
                print(
                    f"note: {a.result} ran another scenario than {a.file}; "
                    "the fluid model follows the result folder's"
                )
    try:
        c = compare(doc, a.result, run_engine=not a.no_run)
    except Exception as e:
        from aqmlab._core import ScenarioError

        if isinstance(e, ScenarioError):
            raise DesignError(a.file, str(e)) from None
        raise
    fs = c.fluid_stats
    fo = c.fluid.oscillates(c.start)
    line = (
        f"fluid: mean {fs['mean']:.1f} std {fs['std']:.1f} packets "
        f"({'oscillates' if fo else 'settles'})"
    )
    if c.packet_stats is not None:
        ps = c.packet_stats
        line += (
            f"; packets: mean {ps['mean']:.1f} std {ps['std']:.1f} cv {ps['cv']:.2f} "
            f"acf_min {ps['acf_min']:.2f} ({'oscillates' if ps['oscillates'] else 'stable'})"
        )
    if a.json:
        print(json.dumps(c.as_dict(), indent=1, default=_json_default))
    else:
        print(f"{c.link}, from {c.start:g} s: {line}")
    pk = None if c.packets is None else (c.packets.t, c.packets.q)
    path = plot_fluid_vs_packets(
        c.fluid, pk, a.output, title=f"{Path(a.file).name}: {c.link}", start=c.start, stats=line
    )
    print(f"wrote {path}")
    return 0


def _cmd_grid(a: argparse.Namespace) -> int:
    from aqmlab.design.plots import check_figure_path, plot_grid
    from aqmlab.design.study import GRID, grid_study

    check_figure_path(a.output)
    jobs = int(_number(a.jobs, "--jobs", integer=True))
    g = dict(GRID)
    if a.quick:
        g.update(rtts_ms=[80, 250], rates_mbps=[5, 10, 15], duration_s=40, start_s=15)
    res = grid_study(g, jobs)
    print(
        f"{'RTT ms':>6} {'Mb/s':>5} {'RC':>6} {'eq4.9 ratio':>11} {'holds':>5} {'PM deg':>7} "
        f"{'q mean':>6} {'q std':>6} {'engine':>10}"
    )
    for r in res["rows"]:
        print(
            f"{r['rtt_ms']:6.0f} {r['rate_mbps']:5g} {r['rc_pkts']:6.0f} {r['prop_ratio']:11.3g} "
            f"{'yes' if r['prop_holds'] else 'NO':>5} {r['phase_margin_deg']:7.1f} "
            f"{r['mean']:6.1f} "
            f"{r['std']:6.1f} {'oscillates' if r['oscillates'] else 'stable':>10}"
        )
    print(
        f"eq. 4.9 stable: {res['prop_stable']} points, queue std mean "
        f"{res['mean_std_prop_stable']:.1f} "
        f"(max {res['max_std_prop_stable']:.1f}); unstable: {res['prop_unstable']} points, mean "
        f"{res['mean_std_prop_unstable']:.1f} (min {res['min_std_prop_unstable']:.1f})"
    )
    print(
        f"disagreements with the engine's verdict: eq. 4.9 {res['prop_disagreements']} of "
        f"{res['points']}, exact loop {res['linear_disagreements']} of {res['points']}"
    )
    if a.json:
        write_text(a.json, json.dumps(res, indent=1, default=_json_default) + "\n")
        print(f"wrote {a.json}")
    print(f"wrote {plot_grid(res['rows'], a.output)}")
    return 0
