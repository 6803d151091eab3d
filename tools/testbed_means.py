#!/usr/bin/env python3
"""The testbed grid's cells over several seeds: each side's mean, and the band on the means.

One run of a cell on the kernel is one draw of it: BBR's shares in particular move from run to
run of the same kernel with the same flow starts (docs/tcp.md, "The kernel against itself"). This
reads the ``--json`` files of several ``tools/testbed_matrix.py`` runs, one seed each (each seed
starts the flows at the same instants on both sides), and prints per cell the simulator's and
the kernel's mean over the seeds of utilisation, mean queue (packets) and Jain's index, whether
the two means are within the band of docs/tcp.md (utilisation 0.02, queue 15 % + 2 packets of the
simulator's, Jain 0.03), the standard deviation of each side's runs, and in how many seeds the
single runs were within the band. A second table gives each figure's means (the drops and the
timeouts too, where every run has them) and ``t``, the difference of the means in standard errors
of that difference (each side's variance of its runs over their number; ``-`` with one run or
none spread): whether the seeds separate the two sides at all. Needs no root: it reads the files
only.

Usage::

    tools/testbed_matrix.py --cc bbr --seed 1 --json s1.json   # as root, once per seed
    tools/testbed_means.py s1.json s2.json s3.json [--csv FILE]

A cell is its grid point (variant, scheme, flows, rate), its ECN and its reference. A cell's
runs are those of the files that hold it: a grid's files hold every cell, and more seeds of a few
cells may come in files of their own (``--cc bbr --aqm fq-codel --flows 5 --seed 6``); ``n``
gives each cell's number of runs. No two files may hold the same seed's run of a cell (a file's
cells name their seed; an earlier file without it is told apart by its name only), and a cell's
runs must have run with the same settings on each side (``testbed_matrix.py``'s ``--set`` and
``--sim-set``, recorded in each cell as ``testbed_set`` and ``sim_set``; none where a file has
neither): runs of different settings are not pooled.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The grid's own cell and band (the runner imports aqmlab only inside its functions).
from testbed_matrix import CellKey as Key
from testbed_matrix import cell_key, cell_settings
from testbed_matrix import within as band

FIGURES = ("utilisation", "queue", "jain")
#: Figures shown beside them in the second table where every run on both sides has them.
COUNTS = ("drops", "timeouts")


def load(paths: list[Path]) -> dict[Key, list[dict[str, Any]]]:
    """Each cell's runs, one from each file that holds it, in the files' order (the cells in the
    order they first appear). Raises ValueError naming the file and what is wrong with it."""
    runs: dict[Key, list[dict[str, Any]]] = {}
    seeds: dict[tuple[Key, int], Path] = {}
    # Each cell's settings on each side and the file they were first read from.
    settings: dict[Key, tuple[tuple[list[str], list[str]], Path]] = {}
    for p in paths:
        try:
            cells = json.loads(p.read_text())
            keys = [cell_key(c) for c in cells]
            sets = [(cell_settings(c, "testbed_set"), cell_settings(c, "sim_set")) for c in cells]
            for c in cells:
                for side in ("sim", "testbed"):
                    for k in FIGURES:
                        float(c[side][k])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{p}: not a testbed_matrix.py --json ({e})") from e
        if len(set(keys)) != len(keys):
            raise ValueError(f"{p}: a cell appears twice")
        for key, c, these in zip(keys, cells, sets, strict=True):
            if "seed" in c:
                seed = int(c["seed"])
                if (key, seed) in seeds:
                    raise ValueError(
                        f"{p}: seed {seed}'s run of cell {key}, as in {seeds[key, seed]}"
                    )
                seeds[key, seed] = p
            first = settings.setdefault(key, (these, p))
            if first[0] != these:
                raise ValueError(
                    f"{p}: cell {key} ran with {_show(these)}, where {first[1]}'s ran with "
                    f"{_show(first[0])} (runs of different settings are not pooled)"
                )
            runs.setdefault(key, []).append(c)
    return runs


def _show(s: tuple[list[str], list[str]]) -> str:
    """A cell's settings as a reader sees them: each side's overrides, or none."""
    return f"{s[0] or 'none'} on the kernel and {s[1] or 'none'} on the simulator"


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Means, standard deviations (None for one run) and the single runs' verdicts of a cell,
    each held to the band as ``testbed_matrix.within`` holds one run."""
    side = {s: {k: [float(r[s][k]) for r in runs] for k in FIGURES} for s in ("sim", "testbed")}
    means = {s: {k: statistics.fmean(v) for k, v in side[s].items()} for s in side}
    on_means = band(means["sim"], means["testbed"])
    per_run = [band(r["sim"], r["testbed"]) for r in runs]
    out: dict[str, Any] = {"n": len(runs)}
    for k in FIGURES:
        out[k] = {
            "sim": means["sim"][k],
            "testbed": means["testbed"][k],
            "sim_sd": statistics.stdev(side["sim"][k]) if len(runs) > 1 else None,
            "testbed_sd": statistics.stdev(side["testbed"][k]) if len(runs) > 1 else None,
            "within": on_means[k],
            "runs_within": sum(w[k] for w in per_run),
            "t": t_of(side["sim"][k], side["testbed"][k]),
        }
    for k in COUNTS:
        if all(k in r[s] for r in runs for s in ("sim", "testbed")):
            a, b = ([float(r[s][k]) for r in runs] for s in ("sim", "testbed"))
            out[k] = {"sim": statistics.fmean(a), "testbed": statistics.fmean(b), "t": t_of(a, b)}
    return out


def t_of(a: list[float], b: list[float]) -> float | None:
    """The difference of the means of ``a`` and ``b`` in standard errors of that difference
    (Welch's: each side's variance over its number of runs); None with one run or no spread."""
    if len(a) < 2 or len(b) < 2:
        return None
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    return (statistics.fmean(a) - statistics.fmean(b)) / se if se > 0 else None


def fmt_sd(x: float | None, digits: int) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def table(cells: dict[Key, dict[str, Any]]) -> str:
    lines = [
        "cc     aqm       flows Mb/s  n   util sim/tb       queue sim/tb       Jain sim/tb"
        "     sd(Jain) sim/tb  runs within u/q/J",
        "(means over the seeds; * outside the band on the means: utilisation 0.02, queue 15 % +"
        " 2 packets, Jain 0.03; sd: the standard deviation of a side's runs)",
    ]
    for (cc, aqm, flows, rate, ecn, ref), s in cells.items():
        u, q, j = s["utilisation"], s["queue"], s["jain"]

        def m(f: dict[str, Any]) -> str:
            return " " if f["within"] else "*"

        name = f"{cc}{'+ecn' if ecn else ''}" + ("" if ref == "testbed" else f" ({ref})")
        lines.append(
            f"{name:<6} {aqm:<9} {flows:>3} {rate:>4g}  {s['n']:>2}  "
            f"{u['sim']:.3f} {u['testbed']:.3f}{m(u)}  "
            f"{q['sim']:7.1f} {q['testbed']:7.1f}{m(q)}  "
            f"{j['sim']:.3f} {j['testbed']:.3f}{m(j)}  "
            f"{fmt_sd(j['sim_sd'], 3):>6} {fmt_sd(j['testbed_sd'], 3):>6}  "
            f"{u['runs_within']}/{q['runs_within']}/{j['runs_within']} of {s['n']}"
        )
    n = len(cells)
    for k in FIGURES:
        on_means = sum(s[k]["within"] for s in cells.values())
        runs = sum(s[k]["runs_within"] for s in cells.values())
        total = sum(s["n"] for s in cells.values())
        lines.append(
            f"{k}: the means within the band in {on_means} of {n} cells; "
            f"single runs in {runs} of {total}"
        )
    lines.append(
        "each figure's means, simulator / kernel (t: their difference in standard errors of that"
        " difference)"
    )
    digits = {"utilisation": 3, "queue": 1, "jain": 3, "drops": 0, "timeouts": 2}
    for (cc, aqm, flows, rate, ecn, ref), s in cells.items():
        name = f"{cc}{'+ecn' if ecn else ''}" + ("" if ref == "testbed" else f" ({ref})")
        shown = [
            f"{k} {s[k]['sim']:.{d}f}/{s[k]['testbed']:.{d}f} ({fmt_t(s[k]['t'])})"
            for k, d in digits.items()
            if k in s
        ]
        lines.append(f"{name:<6} {aqm:<9} {flows:>3} {rate:>4g}  " + "  ".join(shown))
    return "\n".join(lines)


def fmt_t(t: float | None) -> str:
    return "-" if t is None else f"{t:+.1f}"


def write_csv(path: Path, cells: dict[Key, dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        head = ["cc", "aqm", "flows", "rate_mbps", "ecn", "reference", "n"]
        for k in FIGURES:
            head += [f"{k}_{x}" for x in ("sim", "testbed", "sim_sd", "testbed_sd", "within", "t")]
        counts = [k for k in COUNTS if all(k in s for s in cells.values())]
        for k in counts:
            head += [f"{k}_{x}" for x in ("sim", "testbed", "t")]
        w.writerow(head)
        for key, s in cells.items():
            row: list[Any] = [*key, s["n"]]
            for k in FIGURES:
                f_ = s[k]
                row += [f_[x] for x in ("sim", "testbed", "sim_sd", "testbed_sd", "within", "t")]
            for k in counts:
                row += [s[k][x] for x in ("sim", "testbed", "t")]
            w.writerow(row)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "files", nargs="+", type=Path, metavar="FILE", help="testbed_matrix.py --json files"
    )
    ap.add_argument("--csv", type=Path, help="also write the table as CSV here")
    args = ap.parse_args(argv)
    if len(set(args.files)) != len(args.files):
        print("error: FILE: a file is named twice (give each seed's run once)", file=sys.stderr)
        return 2
    try:
        runs = load(args.files)
    except ValueError as e:
        print(f"error: FILE {e}", file=sys.stderr)
        return 2
    cells = {k: summarise(v) for k, v in runs.items()}
    print(table(cells))
    if args.csv:
        write_csv(args.csv, cells)
    return 0


if __name__ == "__main__":
    from pipe_exit import run

    sys.exit(run(main))
