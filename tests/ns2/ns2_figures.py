"""ns-2.35's figures for the presets' ``[[ns2]]`` entries, made again from the ns-2 scripts.

A preset's ``[[ns2]]`` entries (docs/experiments.md) hold what ns-2.35 gives on the cross-check's
version of the preset's set-up, so that the report can set it beside the paper's figure and
aqmlab's. This script runs the ns-2 scripts that made them and prints the entries as TOML, ready
to replace those in the preset; on stderr it sets each beside the value the preset stores.

Usage (needs ``ns``, Debian's ``ns2`` package: ``make ns2``; not run in CI)::

    python tests/ns2/ns2_figures.py PRESET [PRESET ...]
    python tests/ns2/ns2_figures.py --list

Each figure is rounded to the decimals docs/fidelity.md states it with; every one comes out as
the preset stores it. Running times on one core: rem-5.1 10 s, thesis-5.5.1 40 s, thesis-6.4.3
a minute, thesis-6.4.4 ten minutes (ns-2's PI with 1000 flows).
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import crosscheck as cc

HERE = Path(__file__).resolve().parent
PRESETS = HERE.parents[1] / "python" / "aqmlab" / "experiments" / "presets"


@dataclasses.dataclass(frozen=True)
class Entry:
    """One ``[[ns2]]`` entry."""

    scheme: str
    metric: str
    value: float
    note: str
    phase: str = "all"

    def toml(self) -> str:
        lines = ["[[ns2]]", f"scheme = {_q(self.scheme)}"]
        if self.phase != "all":
            lines.append(f"phase = {_q(self.phase)}")
        lines += [f"metric = {_q(self.metric)}", f"value = {self.value!r}"]
        lines.append(f"note = {_q(self.note)}")
        return "\n".join(lines)


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ns(args: list[str], cwd: Path, timeout: float = 3600) -> list[str]:
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    out = subprocess.run(
        [ns, *args], capture_output=True, text=True, check=True, cwd=cwd, timeout=timeout
    )
    return out.stdout.split()


# ---- thesis 5.5.1: crosscheck.THESIS_551, with the preset's phases -------------------------

# The preset's phases end at 200, 400, ..., 1600 s; the last one runs to 2000 s (d = 100 ms).
PHASES_551 = [
    "1: d 100 ms",
    "2: d 300 ms",
    "3: d 500 ms",
    "4: d 700 ms",
    "5: d 900 ms",
    "6: d 700 ms",
    "7: d 500 ms",
    "8: d 300 ms",
    "9: d 100 ms",
]
NOTE_551 = (
    "ns-2.35, seed 1 (`python tests/ns2/crosscheck.py --study thesis-5.5.1`; "
    "docs/fidelity.md, Table 5-1): the preset's set-up with ARED(20, 60) and ns-2's 540-byte "
    "packets (packetSize_ 500 plus its header; the preset sends 500), {what}"
)


def thesis_551() -> list[Entry]:
    case = dataclasses.replace(cc.THESIS_551, phases=tuple(float(t) for t in range(200, 1800, 200)))
    r = cc.run_ns2(case, 1)
    out = [
        Entry(
            "ARED (20,60)",
            "utilisation",
            round(100 * r["utilisation"], 1),
            NOTE_551.format(what="utilisation over 0-2000 s"),
        )
    ]
    for name, u in zip(PHASES_551, r["phases"], strict=True):
        what = "utilisation over the phase"
        if name.startswith("9:"):
            what += " (1600-2000 s: the mean of the study's 1600-1800 and 1800-2000 s phases)"
        out.append(
            Entry(
                "ARED (20,60)", "utilisation", round(100 * u, 1), NOTE_551.format(what=what), name
            )
        )
    return out


# ---- thesis chapter 6: tests/ns2/thesis_6.4.4.tcl -----------------------------------------

TCL_644 = HERE / "thesis_6.4.4.tcl"
# ns-2.35's RED runs in byte mode by default; the chapter 6 presets run ARED in packets.
RED_PACKETS = "Queue/RED set bytes_ false\nQueue/RED set queue_in_bytes_ false\n"


def run_644(
    aqm: str, forward: int, reverse: int, bytes_: bool, packets: bool = False
) -> dict[str, float]:
    """``thesis_6.4.4.tcl``'s figures over 50-150 s: loss (drops / arrivals), utilisation of
    15 Mbit/s, the mean queue in packets and in 500-byte units, and its standard deviation in
    500-byte units (samples every 100 ms)."""
    tcl = TCL_644.read_text()
    if packets:
        tcl = tcl.replace(
            "Queue/RED set setbit_ true\n", "Queue/RED set setbit_ true\n" + RED_PACKETS
        )
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "case.tcl").write_text(tcl)
        out = _ns(
            ["case.tcl", aqm, str(forward), str(reverse), "true" if bytes_ else "false"], Path(tmp)
        )
    a = [float(x) for x in out[:6]]
    b = [float(x) for x in out[6:12]]
    departed = b[2] - a[2]
    while departed < 0:  # ns-2's byte counter is a 32-bit int
        departed += 2.0**32
    return {
        "loss": (b[1] - a[1]) / (b[0] - a[0]),
        "utilisation": departed * 8 / 100.0 / 15e6,
        "queue": b[3],
        "queue_meansize": b[4],
        "std_meansize": b[5],
    }


NOTE_644 = (
    "ns-2.35, seed 1: `ns tests/ns2/thesis_6.4.4.tcl pi 1000 50 true` (docs/fidelity.md, Table "
    "6-4: PI at 1000 ECN flows), PI at q_ref 150 with bytes_ (the preset's scale_by_size), 1000 "
    "ECN FTP flows and 50 reverse ones from the start, no HTTP sessions, 50-150 s; {what}"
)


def thesis_644() -> list[Entry]:
    r = run_644("pi", 1000, 50, True)
    ph = "500-600 s"
    return [
        Entry(
            "PI",
            "utilisation",
            round(100 * r["utilisation"], 2),
            NOTE_644.format(what="utilisation"),
            ph,
        ),
        Entry(
            "PI", "loss", round(100 * r["loss"], 2), NOTE_644.format(what="drops over arrivals"), ph
        ),
        Entry(
            "PI", "queue", round(r["queue"], 1), NOTE_644.format(what="mean queue in packets"), ph
        ),
    ]


def thesis_643() -> list[Entry]:
    ph = "100-200 s"
    ared = run_644("ared", 300, 50, False, packets=True)
    pi = run_644("pi", 300, 50, True)
    return [
        Entry(
            "ARED",
            "queue",
            round(ared["queue"], 1),
            "ns-2.35, seed 1: `ns tests/ns2/thesis_6.4.4.tcl ared 300 50 false` with RED's bytes_ "
            "and queue_in_bytes_ false (docs/fidelity.md, Tables 6-1 to 6-5: ARED's queue and "
            "loss), ARED(75, 225) in packets, 300 ECN FTP flows and 50 reverse ones, 15 Mbit/s, no "
            "HTTP sessions, 50-150 s; mean queue in packets",
            ph,
        ),
        Entry(
            "PI",
            "queue",
            round(pi["queue"], 1),
            "ns-2.35, seed 1: `ns tests/ns2/thesis_6.4.4.tcl pi 300 50 true` (docs/fidelity.md, "
            "Tables 6-3 and 6-4: the queue deviations), PI at q_ref 150 with bytes_, 300 ECN FTP "
            "flows and 50 reverse ones, 15 Mbit/s, no HTTP sessions, 50-150 s; mean queue in "
            "packets",
            ph,
        ),
    ]


# ---- REM paper section 5.1: tests/ns2/rem_5.1_droptail.tcl --------------------------------

TCL_REM = HERE / "rem_5.1_droptail.tcl"
PACKETS_PER_S = 2e6 / (48 * 8)  # 48-byte packets on 2 Mbit/s


def rem_goodput(sources: int, seed: int = 1, old: bool = False) -> float:
    """Goodput over 20-100 s, a share of the link, of ``sources`` NewReno sources on DropTail."""
    with tempfile.TemporaryDirectory() as tmp:
        out = _ns(
            [str(TCL_REM), str(sources), str(seed), "1" if old else "0", "100000"], Path(tmp), 600
        )
    return (int(out[4]) - int(out[1])) / (80.0 * PACKETS_PER_S)


NOTE_REM = (
    "ns-2.35, seed 1, its TCP defaults: `ns tests/ns2/rem_5.1_droptail.tcl {n} 1 0 100000` "
    "(docs/fidelity.md, section 5.1, figures 7 and 8): DropTail with plain NewReno, {n} sources "
    "for 100 s (not added every 50 s as here), goodput over 20-100 s"
)


def rem_51() -> list[Entry]:
    return [
        Entry(
            "DropTail",
            "goodput",
            round(100 * rem_goodput(n), 1),
            NOTE_REM.format(n=n),
            f"{n} sources",
        )
        for n in (20, 40, 100)
    ]


RECIPES: dict[str, Callable[[], list[Entry]]] = {
    "thesis-5.5.1": thesis_551,
    "thesis-6.4.3": thesis_643,
    "thesis-6.4.4": thesis_644,
    "rem-5.1": rem_51,
}


def stored(preset: str) -> list[dict[str, Any]]:
    """The preset's ``[[ns2]]`` entries as the file holds them."""
    import tomllib

    for f in PRESETS.glob("*.toml"):
        doc = tomllib.loads(f.read_text(encoding="utf-8"))
        if doc.get("experiment", {}).get("name") == preset:
            return list(doc.get("ns2", []))
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("presets", nargs="*", metavar="PRESET", help=", ".join(RECIPES))
    ap.add_argument("--list", action="store_true", help="the presets this script makes figures for")
    args = ap.parse_args(argv)
    if args.list or not args.presets:
        print("\n".join(RECIPES))
        return 0
    unknown = [p for p in args.presets if p not in RECIPES]
    if unknown:
        print(f"error: no ns-2 figures for {', '.join(unknown)}; for: {', '.join(RECIPES)}",
              file=sys.stderr)  # fmt: skip
        return 2
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
    for preset in args.presets:
        entries = RECIPES[preset]()
        print(f"# {preset}: paste into its preset in place of the [[ns2]] entries\n")
        print("\n\n".join(e.toml() for e in entries) + "\n")
        old = {
            (s["scheme"], s.get("phase", "all"), s["metric"]): s.get("value")
            for s in stored(preset)
        }
        for e in entries:
            was = old.get((e.scheme, e.phase, e.metric))
            same = "same" if was == e.value else f"stored {was}"
            print(
                f"{preset}: {e.scheme}, {e.phase}, {e.metric}: {e.value} ({same})", file=sys.stderr
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
