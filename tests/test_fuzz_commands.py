"""A seeded fuzzer over experiment files and the command lines of sweep, reproduce, report,
design, testbed, compare and plot (tests/fuzz_commands.py): every case is accepted, or
refused with one ``error:`` line naming what is wrong; never a traceback or a panic.

``make test`` checks :data:`CASES` cases (seconds). For a longer search set
``AQMLAB_FUZZ_COMMANDS``: ``AQMLAB_FUZZ_COMMANDS=20000 pytest tests/test_fuzz_commands.py``;
``AQMLAB_FUZZ_SEED`` picks another seed. A failing experiment case is shown with
``python tests/fuzz_commands.py SEED INDEX``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import aqmlab
from aqmlab.experiments import load_experiment, resolve_points, sweep

from conftest import SMALL, TESTS

sys.path.insert(0, str(TESTS))
import fuzz_commands as fc

SEED = int(os.environ.get("AQMLAB_FUZZ_SEED", "20261128"))
CASES = int(os.environ.get("AQMLAB_FUZZ_COMMANDS", "400"))


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[fc.Fixtures]:
    tmp = tmp_path_factory.mktemp("fuzz-commands")
    run = tmp / "run"
    aqmlab.run(SMALL, overrides=["duration=6s", 'metrics.start="2s"'], out=run)
    exp = load_experiment(TESTS / "data/experiments/tiny-sweep.toml", quick=True)
    with open(os.devnull, "w") as quiet:
        sweep(exp, resolve_points(exp), tmp / "sweep", jobs=1, live=False, stream=quiet)
    garbage = tmp / "garbage"
    garbage.write_text("garbage\x00\n")
    cwd = Path.cwd()
    os.chdir(tmp)  # default output folders (results/...) land here
    try:
        yield fc.Fixtures(tmp=tmp, run=run, sweep=tmp / "sweep", garbage=garbage, scenario=SMALL)
    finally:
        os.chdir(cwd)


def test_cases_are_reproducible(fixtures: fc.Fixtures) -> None:
    for i in (3, 4, 5):
        a, b = fc.make_case(SEED, i, fixtures), fc.make_case(SEED, i, fixtures)
        assert a.name() == b.name() and a.argv == b.argv and a.doc == b.doc


def test_every_case_is_accepted_or_refused_in_one_line(fixtures: fc.Fixtures) -> None:
    counts: Counter[str] = Counter()
    bad: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(CASES):
            case = fc.make_case(SEED, i, fixtures)
            out = fc.check(case)
            counts[f"{case.kind} {out.kind}"] += 1
            if out.kind == "bad":
                bad.append(f"{case.name()} {case.argv} -> {out.detail}")
    print(f"fuzz commands: {CASES} cases, seed {SEED}: {dict(counts)}")
    assert not bad, f"{len(bad)} of {CASES} cases broke the contract:\n" + "\n".join(bad[:20])
    # Both kinds reach both outcomes.
    for kind in ("experiment", "cli"):
        assert counts[f"{kind} ok"] >= CASES // 40, counts
        assert counts[f"{kind} error"] >= CASES // 10, counts
