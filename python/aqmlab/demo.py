"""The demo (``make demo``, ``aqmlab demo``, ``python -m aqmlab.demo``).

By default it reproduces one experiment of the thesis (W. Chen, "Parameter Self-Tuning in
Internet Congestion Control", Loughborough University, 2010; section 5.5.3: ARED, PI and ST-RED
while the FTP flows go 30 -> 200 -> 30) in full, prints the thesis' Table 5-3 with our numbers
beside the paper's, and the path of the HTML report. ``--quick`` runs the shortened form
instead (every time divided by 20: a few seconds, but its figures are not meant to match the
paper's, and the demo says so before the table). ``--preset NAME`` picks another preset
(``aqmlab reproduce --list``); ``--red-droptail`` runs the small RED vs DropTail comparison
instead (``scenarios/demo_red.toml`` and ``scenarios/demo_droptail.toml``: 100 bulk NewReno
flows over 10 Mb/s) and draws its queues.

Why the full form by default: the demo is the first table a newcomer sees, and the quick form's
numbers are far from the paper's (PI-40's mean queue 117 packets against 39.4), which reads as a
broken simulator. The full form takes about 15 s of wall time on 2 idle cores (measured: 15.3 s
for the whole command; 40 s while other jobs loaded the same 2 cores), well within the few
minutes a first run may take.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aqmlab import api
from aqmlab._input import Parser, UserError

__all__ = ["DEMOS", "DEMO_PRESET", "FULL_FORM_FIGURES", "find_scenarios", "main"]

#: The thesis experiment the demo reproduces.
DEMO_PRESET = "thesis-5.5.3"

#: What the demo's full form gives for one cell of Table 5-3, against the paper (measured with
#: ``aqmlab reproduce thesis-5.5.3``, seed 1; the quick form's note quotes it).
FULL_FORM_FIGURES = "PI-40's mean queue is 40.6 packets against the paper's 39.4"

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
    from rich.console import Console

    from aqmlab.plot import plot_queue
    from aqmlab.report import summary_table

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


def _plan(preset: str, quick: bool, jobs: int | None) -> tuple[Any, str]:
    """The preset's experiment and a line that says what is about to run and for how long."""
    from aqmlab.experiments.catalog import find_preset
    from aqmlab.experiments.points import resolve_points
    from aqmlab.experiments.progress import format_duration
    from aqmlab.experiments.runner import default_jobs, estimate_wall
    from aqmlab.experiments.spec import ExperimentError, load_experiment
    from aqmlab.papers import split_source

    found = find_preset(preset)
    if found is None:
        raise UserError(f"demo --preset: unknown preset {preset!r} (aqmlab reproduce --list)")
    try:
        exp = load_experiment(found.path, quick=quick)
        points = [p for p in resolve_points(exp) if p.scenario is not None]
    except ExperimentError as e:
        raise UserError(f"{found.path}: {e}") from None
    workers = jobs or default_jobs()
    wall, _ = estimate_wall(points, workers)
    sim = max((p.duration_s for p in points), default=0.0)
    paper, where = split_source(exp.source)
    cited = f"{paper.short}, {where}" if paper is not None else exp.source
    form = "quick form" if quick else "full form"
    line = (
        f"demo: {exp.name} ({form}): {exp.title}\n"
        f"  from {cited}\n"
        f"  {len(points)} runs of {sim:g} simulated seconds on {workers} worker(s), "
        f"estimated {format_duration(wall)}"
    )
    return exp, line


def quick_note(preset: str) -> str:
    """What the demo prints before the quick form's table."""
    full = f"aqmlab reproduce {preset}"
    text = (
        "note: this is the quick form, shortened (every time divided by 20), so its figures "
        "are not meant to match the paper's. The full form: "
        f"`{full}` (or `aqmlab demo` without --quick)"
    )
    if preset == DEMO_PRESET:
        text += f", about 15 s on 2 cores, where {FULL_FORM_FIGURES}."
    else:
        text += "."
    return text


def reproduce(preset: str, out: Path, jobs: int | None, quick: bool = False) -> int:
    """Run ``preset`` (in quick form with ``quick``) into ``out``, then print its tables
    (ours beside the paper's), the ranking check and the report's path."""
    from aqmlab._input import SET_ARGUMENT
    from aqmlab.experiments.command import add_parsers
    from aqmlab.report.cli import report_command

    _, intro = _plan(preset, quick, jobs)
    print(intro, flush=True)
    argv = ["reproduce", preset, "--out", str(out), "--no-report"]
    if quick:
        argv.append("--quick")
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    parser = Parser(prog="aqmlab")
    add_parsers(parser.add_subparsers(dest="command", required=True), dict(SET_ARGUMENT))
    args = parser.parse_args(argv)
    args.argv = argv
    status = int(args.func(args))
    if status != 0:
        return status
    if quick:
        print(quick_note(preset), flush=True)
    return report_command([out], quick_note=False)


def _jobs(text: str) -> int:
    try:
        v = int(text, 10)
    except ValueError:
        v = 0
    if v < 1:
        raise UserError(f"demo --jobs {text!r}: expected a whole number >= 1")
    return v


def main(argv: Sequence[str] | None = None) -> int:
    doc = __doc__ or ""
    p = Parser(prog="aqmlab demo", description=doc.split("\n\n")[0])
    p.add_argument("--out", "-o", default="demo-out", help="where to write results (demo-out)")
    p.add_argument(
        "--preset", default=DEMO_PRESET, help=f"the preset to reproduce (default {DEMO_PRESET})"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="the shortened form: seconds instead of half a minute, not meant to match the paper",
    )
    p.add_argument("--jobs", default=None, help="worker processes (default: all cores)")
    p.add_argument(
        "--red-droptail", action="store_true", help="run the RED vs DropTail comparison instead"
    )
    args = p.parse_args(argv)
    jobs = None if args.jobs is None else _jobs(str(args.jobs))
    out = Path(args.out)
    if args.red_droptail:
        return red_droptail(out)
    folder = f"{args.preset}-quick" if args.quick else str(args.preset)
    return reproduce(args.preset, out / folder, jobs, args.quick)


if __name__ == "__main__":
    from aqmlab._input import print_error

    try:
        raise SystemExit(main())
    except UserError as e:
        print_error(str(e))
        raise SystemExit(2) from None
