"""The paired comparison of docs/fidelity.md, item 7: `ecn-web-000-replay`'s schemes with no
ECN, ECN and ECN+, response by response (`aqmlab.web.compare_responses`), pooled over seeds.

Run from the repository root after `make build`:
    nice .venv/bin/python docs/figures/fidelity_7_pairs.py [SEEDS] [SCHEMES]
SEEDS: comma-separated (default 1-8); SCHEMES: names of the preset's schemes (default RED*,RED,
REM,PI). Prints a Markdown table. About 3 s of simulation per run on one core: 10 minutes for
the default 192 runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import aqmlab
from aqmlab.experiments.spec import load_experiment
from aqmlab.web import ResponseComparison, compare_responses

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ROOT / "python" / "aqmlab" / "experiments" / "presets"


def _seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not comma-separated integers") from None


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("seeds", nargs="?", type=_seeds, default=list(range(1, 9)), metavar="SEEDS")
    ap.add_argument("schemes", nargs="?", default="RED*,RED,REM,PI", metavar="SCHEMES")
    args = ap.parse_args(argv)
    exp = load_experiment(PRESETS / "ecn-web-000-replay.toml")
    seeds: list[int] = args.seeds
    names: list[str] = args.schemes.split(",")
    ecn = next(f for f in exp.factors if f.name == "ecn")
    load = next(f for f in exp.factors if f.name == "load")
    assert ecn.labels == ("no ECN", "ECN", "ECN+"), ecn.labels

    print(
        "| scheme | load | ECN | ECN+ - ECN | ECN+ - no ECN | ECN - no ECN "
        "| mean time, ECN+ - ECN |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in names:
        for li, ll in enumerate(load.labels):
            runs: list[list[aqmlab.RunResult]] = [[], [], []]  # no ECN, ECN, ECN+
            for seed in seeds:
                for e in range(3):
                    ov = [
                        *exp.set,
                        *exp.scheme(name).set,
                        *ecn.overrides(e),
                        *load.overrides(li),
                        f"seed={seed}",
                    ]
                    runs[e].append(aqmlab.run(exp.scenario_path, overrides=ov))
            plus_ecn = compare_responses(runs[1], runs[2])
            plus_none = compare_responses(runs[0], runs[2])
            ecn_none = compare_responses(runs[0], runs[1])
            print(
                f"| {name} | {ll} | {100 * plus_ecn.within[0].a:.1f} % | {_d(plus_ecn)} | "
                f"{_d(plus_none)} | {_d(ecn_none)} | {1000 * plus_ecn.mean_diff_s:+.0f} ± "
                f"{1000 * plus_ecn.mean_diff_ci_s:.0f} ms |",
                flush=True,
            )


def _d(c: ResponseComparison) -> str:
    w = c.within[0]
    return f"{100 * w.diff:+.1f} ± {100 * w.ci:.1f}"


if __name__ == "__main__":
    main(sys.argv[1:])
