"""The training run of the engine's profile-guided build (``tools/pgo.sh``).

Runs the instrumented extension on a mix of what aqmlab is used for, briefly: the schemes
named on the command line on the canonical dumbbell, web traffic, the parking lot, a custom
topology with Markov loss, the wireless TCP and a changing round-trip time. The compiler then
lays out and inlines the engine for these paths; the figures the engine computes do not change
(no fast-math: only speed). Usage: ``python tools/pgo_train.py KIND...`` from the project root,
with the instrumented ``aqmlab`` installed.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import aqmlab

SHORT = ["duration=20s", "metrics.start=5s"]
OTHERS = (
    "scenarios/canonical-linux.toml",
    "scenarios/web.toml",
    "scenarios/parking-lot.toml",
    "scenarios/custom.toml",
    "scenarios/markov-loss.toml",
    "scenarios/tcp/rem-wireless.toml",
    "scenarios/aqm/st-red-rtt.toml",
)


def main(kinds: list[str]) -> None:
    start = time.perf_counter()
    warnings.simplefilter("ignore")  # the truncation notes of the shortened files
    aqmlab.run("scenarios/canonical.toml")
    for kind in kinds:
        aqmlab.run(
            "scenarios/canonical.toml",
            overrides=["duration=40s", "metrics.start=10s", f'aqm={{kind="{kind}"}}'],
        )
    for f in OTHERS:
        aqmlab.run(f, overrides=SHORT, truncate=True)
    print(f"training runs: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument(
        "kinds", nargs="*", metavar="KIND", help="schemes run on the canonical dumbbell"
    )
    try:
        main(ap.parse_args(sys.argv[1:]).kinds)
    except aqmlab.ScenarioError as e:
        sys.exit(f"error: {e}")
