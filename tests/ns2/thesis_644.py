"""aqmlab beside ns-2.35 on ``thesis_6.4.4.tcl``'s set-ups (docs/fidelity.md, chapter 6).

The thesis' chapter 6 experiments without their HTTP sessions, which ns-2.35 has no model for:
N forward and M reverse ECN FTP flows on 15 Mbit/s, a 1 ms bottleneck, source access delays
uniform in 1-20 ms, buffer 1000, 500-byte packets, starts uniform in the first 10 s, figures
over 50-150 s. aqmlab runs the ``thesis-6.4.3`` preset's scenario with the preset's keys (ns-2's
TCP, ``tcp.profile = "ns2-2009"``) and the scheme's, its schedule, phases and HTTP sessions
taken out; ns-2.35 runs ``thesis_6.4.4.tcl`` with the same arguments. Each set-up prints loss
(drops over arrivals), utilisation, the queue's mean in packets and in 500-byte units (its bytes
over 500: the reverse flows' 40-byte ACKs count for little), and their standard deviations
(ns-2.35's samples every 100 ms, which give no deviation in packets; aqmlab's time-weighted).

Usage (``ns`` from Debian's ns2 package, ``make ns2``, for the ns-2 lines; not run in CI)::

    python tests/ns2/thesis_644.py --list
    python tests/ns2/thesis_644.py pi-1000 ared-300-packets [--aqmlab-only]

Running times on one core: aqmlab 5-40 s a set-up; ns-2.35 a minute, ten with PI at 1000 flows.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from pathlib import Path
from typing import Any

import tomllib

sys.path.insert(0, str(Path(__file__).parent))
import ns2_figures as nf

PRESETS = Path(__file__).resolve().parents[2] / "python" / "aqmlab" / "experiments" / "presets"

# ARED(75, 225) as the preset has it without ns-2's RED keys (aqmlab's defaults).
ARED_PLAIN = 'aqm={kind="ared",min_th=75,max_th=225,w_q=5e-5,interval="2s",ecn=true}'


@dataclasses.dataclass(frozen=True)
class Setup:
    """One set-up: the Tcl's arguments and aqmlab's scheme (by the preset's scheme name, or
    its own ``aqm`` override), with ``extra`` overrides on top."""

    name: str
    aqm: str
    forward: int
    reverse: int
    bytes_: bool
    packets: bool
    scheme: str
    extra: tuple[str, ...] = ()
    note: str = ""

    def tcl(self) -> str:
        red = " (RED in packets)" if self.packets else ""
        b = "true" if self.bytes_ else "false"
        return f"ns tests/ns2/thesis_6.4.4.tcl {self.aqm} {self.forward} {self.reverse} {b}{red}"


SETUPS = {
    s.name: s
    for s in (
        Setup("pi-1000", "pi", 1000, 50, True, False, "PI", note="Table 6-4: PI at 1000 ECN flows"),
        Setup("pi-300", "pi", 300, 50, True, False, "PI", note="the queue deviations"),
        Setup(
            "ared-300-packets",
            "ared",
            300,
            50,
            False,
            True,
            "ARED",
            note="ARED's queue, with ns-2's RED keys",
        ),
        Setup(
            "ared-300-packets-plain",
            "ared",
            300,
            50,
            False,
            True,
            "",
            (ARED_PLAIN,),
            "ARED's queue, aqmlab's RED defaults",
        ),
        Setup(
            "ared-300-bytes",
            "ared",
            300,
            50,
            False,
            False,
            "ARED",
            ('aqm.mode="byte"',),
            "ARED in ns-2.35's byte mode, with ns-2's RED keys",
        ),
        Setup(
            "ared-300-bytes-plain",
            "ared",
            300,
            50,
            False,
            False,
            "",
            (ARED_PLAIN, 'aqm.mode="byte"'),
            "ARED in ns-2.35's byte mode, aqmlab's RED defaults",
        ),
        Setup(
            "ared-100-packets",
            "ared",
            100,
            50,
            False,
            True,
            "ARED",
            note="ARED at 6.4.4's first load",
        ),
        Setup(
            "ared-100-bytes",
            "ared",
            100,
            50,
            False,
            False,
            "ARED",
            ('aqm.mode="byte"',),
            "ARED at 6.4.4's first load in ns-2.35's byte mode: the queue deviations",
        ),
    )
}


def aqmlab_644(s: Setup, seed: int = 1) -> dict[str, float]:
    """aqmlab's figures on set-up ``s`` (the module's head)."""
    import aqmlab

    preset = tomllib.loads((PRESETS / "thesis-6.4.3.toml").read_text())
    scheme: list[str] = []
    if s.scheme:
        scheme = next(x for x in preset["scheme"] if x["name"] == s.scheme)["set"]
    traffic = (
        f'traffic=[{{kind="bulk",flows={s.forward},start={{uniform=["0s","10s"]}}}},'
        f'{{kind="bulk",flows={s.reverse},direction="reverse",start={{uniform=["0s","10s"]}}}}]'
    )
    r = aqmlab.run(
        PRESETS / "scenarios" / "thesis-6.4.3.toml",
        overrides=[
            *preset["experiment"]["set"],
            *scheme,
            *s.extra,
            f"seed={seed}",
            "duration=150s",
            "schedule=[]",
            "metrics.phases=[]",
            "metrics.start=50s",
            traffic,
        ],
    )
    b: dict[str, Any] = r.summary["bottleneck"]
    return {
        "loss": b["loss_rate"],
        "utilisation": b["utilization"],
        "queue": b["queue_mean_pkts"],
        "std": b["queue_std_pkts"],
        "queue_units": b["queue_mean_bytes"] / 500.0,
        "std_units": b["queue_std_bytes"] / 500.0,
    }


def ns2_644(s: Setup) -> dict[str, float]:
    """ns-2.35's figures on set-up ``s`` (``thesis_6.4.4.tcl``)."""
    r = nf.run_644(s.aqm, s.forward, s.reverse, s.bytes_, packets=s.packets)
    return {**r, "queue_units": r["queue_meansize"], "std_units": r["std_meansize"]}


def line(who: str, f: dict[str, float]) -> str:
    std = f" (deviation {f['std']:.1f})" if "std" in f else ""
    return (
        f"  {who:8} loss {100 * f['loss']:6.2f} %  utilisation {100 * f['utilisation']:6.2f} %  "
        f"queue {f['queue']:6.1f} packets{std}, {f['queue_units']:6.1f} 500-byte units "
        f"(deviation {f['std_units']:.1f})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("setups", nargs="*", metavar="SETUP", help="set-ups to run (--list)")
    ap.add_argument("--list", action="store_true", help="list the set-ups and exit")
    ap.add_argument("--aqmlab-only", action="store_true", help="leave ns-2.35 out")
    args = ap.parse_args(argv)
    if args.list or not args.setups:
        for s in SETUPS.values():
            print(f"{s.name:24} {s.note}")
        return 0
    unknown = [n for n in args.setups if n not in SETUPS]
    if unknown:
        allowed = ", ".join(SETUPS)
        print(f"error: set-up {unknown[0]!r} is not one of: {allowed}", file=sys.stderr)
        return 2
    with_ns2 = not args.aqmlab_only
    if with_ns2 and shutil.which("ns") is None:
        print(
            "error: ns-2 not found: install Debian's ns2 package (make ns2), or --aqmlab-only",
            file=sys.stderr,
        )
        return 2
    for name in args.setups:
        s = SETUPS[name]
        print(f"{s.name}: {s.note}; {s.tcl()}", flush=True)
        print(line("aqmlab", aqmlab_644(s)), flush=True)
        if with_ns2:
            print(line("ns-2.35", ns2_644(s)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
