"""The demo (``make demo``, ``aqmlab demo``, ``python -m aqmlab.demo``).

By default it reproduces one experiment of the thesis (``003_b277268f444f7691.txt`` section
5.5.3: ARED, PI and ST-RED while the FTP flows go 30 -> 200 -> 30) in its quick form, prints
the thesis' Table 5-3 with our numbers beside the paper's, and the path of the HTML report.
``--preset NAME`` picks another preset (``aqmlab reproduce --list``); ``--red-droptail`` runs
the small RED vs DropTail comparison instead (``scenarios/demo_red.toml`` and
``scenarios/demo_droptail.toml``: 100 bulk NewReno flows over 10 Mb/s) and draws its queues.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from aqmlab import api
from aqmlab.plot import plot_queue
from aqmlab.report import summary_table

__all__ = ["DEMOS", "DEMO_PRESET", "find_scenarios", "main"]

#: The thesis experiment the demo reproduces in quick form.
DEMO_PRESET = "thesis-5.5.3"

#: (label, scenario file, result folder name) of the RED vs DropTail demo.
DEMOS = [
    ("RED", "demo_red.toml", "red"),
    ("DropTail", "demo_droptail.toml", "droptail"),
]


def find_scenarios() -> Path:
    """The ``scenarios/`` folder: in the current directory or in the source
    tree this package was installed from."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), here.parent, *here.parents):
        cand = base / "scenarios"
        if all((cand / f).is_file() for _, f, _ in DEMOS):
            return cand
    raise FileNotFoundError(
        "cannot find scenarios/demo_red.toml; run the demo from the aqmlab source tree"
    )


def red_droptail(out: Path) -> int:
    """RED vs DropTail: both summaries side by side and the queue plot."""
    console = Console()
    try:
        scen = find_scenarios()
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    runs = []
    for label, file, folder in DEMOS:
        with console.status(f"running {label} ({scen / file}) ..."):
            r = api.run(scen / file, out=out / folder)
        console.print(f"{label}: {r.wall_time_s:.2f} s wall, results in {out / folder}")
        runs.append((label, r))
    console.print(summary_table([(label, r.summary) for label, r in runs], title="RED vs DropTail"))
    png = plot_queue(runs, out / "queue.png", title="Bottleneck queue, 100 flows at 10 Mb/s")
    console.print(f"queue plot: {png}")
    return 0


def reproduce(preset: str, out: Path, jobs: int | None) -> int:
    """Run ``preset`` in quick form into ``out``, then print its tables (ours beside the
    paper's), the ranking check and the report's path."""
    from aqmlab._input import SET_ARGUMENT, Parser
    from aqmlab.experiments.command import add_parsers
    from aqmlab.report.cli import report_command

    argv = ["reproduce", preset, "--quick", "--out", str(out), "--no-report"]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    parser = Parser(prog="aqmlab")
    add_parsers(parser.add_subparsers(dest="command", required=True), dict(SET_ARGUMENT))
    args = parser.parse_args(argv)
    args.argv = argv
    status = int(args.func(args))
    if status != 0:
        return status
    return report_command([out])


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aqmlab demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="demo-out", help="where to write results (demo-out)")
    p.add_argument(
        "--preset", default=DEMO_PRESET, help=f"the preset to reproduce (default {DEMO_PRESET})"
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument(
        "--red-droptail", action="store_true", help="run the RED vs DropTail comparison instead"
    )
    args = p.parse_args(argv)
    out = Path(args.out)
    if args.red_droptail:
        return red_droptail(out)
    return reproduce(args.preset, out / f"{args.preset}-quick", args.jobs)


if __name__ == "__main__":
    from aqmlab._input import UserError, print_error

    try:
        raise SystemExit(main())
    except UserError as e:
        print_error(str(e))
        raise SystemExit(2) from None
