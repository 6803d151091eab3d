"""RED vs DropTail on the dumbbell (``make demo``, ``aqmlab demo``,
``python -m aqmlab.demo``).

Runs ``scenarios/demo_red.toml`` and ``scenarios/demo_droptail.toml`` (100
bulk NewReno flows over 10 Mb/s), prints both summaries side by side, writes
both result folders and a queue plot into ``demo-out/``.
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

__all__ = ["DEMOS", "find_scenarios", "main"]

#: (label, scenario file, result folder name)
DEMOS = [
    ("RED", "demo_red.toml", "red"),
    ("DropTail", "demo_droptail.toml", "droptail"),
]


def find_scenarios() -> Path:
    """The ``scenarios/`` folder: in the current directory or in the source
    tree this package was installed from."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        cand = base / "scenarios"
        if all((cand / f).is_file() for _, f, _ in DEMOS):
            return cand
    raise FileNotFoundError(
        "cannot find scenarios/demo_red.toml; run the demo from the aqmlab source tree"
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aqmlab demo", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="demo-out", help="where to write results (demo-out)")
    args = p.parse_args(argv)
    out = Path(args.out)
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


if __name__ == "__main__":
    raise SystemExit(main())
