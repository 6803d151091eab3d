"""A seeded fuzzer over experiment files and the command lines of every command.

Two kinds of case, each reproducible from ``(seed, index)`` alone:

- **Experiment files**: a preset or a test experiment, mutated as ``fuzz.py`` mutates
  scenarios (type swaps, huge and NaN numbers, deleted and renamed keys, deep nesting, cut
  TOML text, ...). The contract: :func:`aqmlab.experiments.parse_experiment` accepts it or
  raises ``ExperimentError`` naming a field; when it parses, resolving its points (a plan of
  at most a few hundred) gives each point a scenario or an error, never an exception.
- **Command lines** of ``sweep``, ``reproduce``, ``report``, ``design``, ``testbed``,
  ``compare`` and ``plot``: a valid command line with one to three mutations (a value swapped
  for a bad one, a flag dropped, repeated or unknown, a path that is a file, missing or
  unwritable, a garbage file in place of a result). The contract, run in this process
  through :func:`aqmlab.cli.main`: exit 0, or exit 1 or 2 with one line ``error: ...``, and
  never a traceback, an "internal error" or a panic. Commands that would run simulations are
  given ``--dry-run`` (sweeps) or a result folder made once (report, compare, plot), so a
  case takes milliseconds; a testbed case never reaches a real run (its file or flags are
  always bad).

``python tests/fuzz_commands.py SEED INDEX`` shows one case.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fuzz

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = sorted(
    [
        *ROOT.glob("python/aqmlab/experiments/presets/*.toml"),
        *ROOT.glob("tests/data/experiments/*.toml"),
    ]
)
#: Most points a fuzzed experiment may plan before its points are resolved.
MAX_RESOLVED = 200


@dataclass
class Case:
    seed: int
    index: int
    kind: str  # "experiment" or "cli"
    what: str
    mutations: list[str] = field(default_factory=list)
    doc: dict[str, Any] | None = None
    text: str | None = None
    source: Path | None = None
    argv: list[str] = field(default_factory=list)

    def name(self) -> str:
        return f"{self.seed}:{self.index} {self.kind} {self.what} [{'; '.join(self.mutations)}]"


@dataclass
class Outcome:
    kind: str  # "ok", "error" or "bad"
    detail: str = ""


# -- experiment files ----------------------------------------------------------------------


def _experiment_case(seed: int, index: int, rng: random.Random) -> Case:
    from aqmlab.experiments.spec import experiment_toml

    source = rng.choice(EXPERIMENTS)
    text = source.read_text()
    case = Case(seed, index, "experiment", source.name, source=source)
    if rng.random() < 0.15:
        case.text, what = fuzz._mutate_text(text, rng)
        case.mutations.append(what)
        return case
    doc = experiment_toml(text, source.name)
    funcs = [f for f, _ in fuzz.DOC_MUTATIONS if f not in (fuzz._m_schedule, fuzz._m_phases)]
    funcs.append(_m_experiment)
    for _ in range(rng.choice([1, 1, 2, 3])):
        f = rng.choice(funcs)
        try:
            case.mutations.append(f(doc, rng))
        except (IndexError, KeyError, ValueError, TypeError):
            case.mutations.append(f"{f.__name__} (no place)")
    case.doc = doc
    return case


def _m_experiment(doc: dict[str, Any], rng: random.Random) -> str:
    """A mutation aimed at the experiment format: seeds, factors, phases, overrides."""
    head = doc.setdefault("experiment", {})
    k = rng.randrange(7)
    if k == 0:
        v = rng.choice([0, -1, 10**12, 10**400, 2**64, [1, 1], [], [-1], ["a"], 1.5, True])
        head["seeds"] = v
        return f"experiment.seeds={fuzz._short(v)}"
    if k == 1:
        head["set"] = [rng.choice(["=", "x", "aqm.kind=", 'aqm.kind="nope"', "duration=1e400s"])]
        return f"experiment.set={head['set']!r}"
    if k == 2:
        doc["phase"] = [{"name": str(i)} for i in range(rng.choice([0, 1, 3, 50]))]
        return f"{len(doc['phase'])} phases"
    if k == 3:
        n = rng.choice([0, 1, 400, 100_001])
        doc["factor"] = [{"name": "f", "key": "traffic[0].flows", "values": list(range(1, n + 1))}]
        return f"a factor of {n} values"
    if k == 4:
        doc["scheme"] = [{"name": "A"}] * rng.choice([2, 0])
        return f"{len(doc['scheme'])} schemes of one name"
    if k == 5:
        head["scenario"] = rng.choice(["", "/proc/1/x.toml", "/", "../" * 50 + "x.toml"])
        return f"experiment.scenario={head['scenario']!r}"
    doc[rng.choice(["quick", "table", "paper", "figure", "metric"])] = fuzz._random_value(rng)
    return "a section swapped for a value"


def check_experiment(case: Case) -> Outcome:
    from aqmlab.experiments import ExperimentError, parse_experiment, resolve_points
    from aqmlab.experiments.spec import experiment_toml

    assert case.source is not None
    try:
        doc = experiment_toml(case.text, case.source.name) if case.text is not None else case.doc
        assert doc is not None
        exp = parse_experiment(doc, case.source)
        planned = len(exp.schemes) * len(exp.seeds)
        for f in exp.factors:
            planned *= len(f.values)
        if planned <= MAX_RESOLVED:
            resolve_points(exp)
    except ExperimentError as e:
        if e.path or (case.text is not None and "TOML" in e.msg):
            return Outcome("error", str(e))
        return Outcome("bad", f"ExperimentError without a field: {e}")
    except BaseException as e:
        return Outcome("bad", f"{type(e).__name__}: {e}"[:500])
    return Outcome("ok")


# -- command lines -------------------------------------------------------------------------


@dataclass
class Fixtures:
    """What the command lines point at: made once per test session (see test_fuzz_commands)."""

    tmp: Path
    run: Path  # a run folder
    sweep: Path  # a sweep folder
    garbage: Path  # a text file that is no TOML, Parquet or folder
    scenario: Path  # a valid scenario file


#: Bad values a flag's value may be swapped for.
BAD_VALUES = [
    "",
    "-1",
    "0",
    "nan",
    "inf",
    "1e400",
    "99999999999999999999",
    "x",
    "10Mbps",
    "1ms",
    "\ud800",
    "--",
    "=",
    "a=b=c",
    "/proc/1/x",
    "/",
]


def _base_commands(fx: Fixtures) -> list[list[str]]:
    sweep_file = str(ROOT / "tests/data/experiments/tiny-sweep.toml")
    out = str(fx.tmp / "out")
    return [
        ["sweep", sweep_file, "--quick", "--dry-run", "--out", out, "--jobs", "2"],
        ["sweep", sweep_file, "--dry-run", "--seeds", "3", "--set", "aqm.max_p=0.2"],
        ["reproduce", "example-schemes", "--quick", "--dry-run", "--out", out],
        ["reproduce", "--list"],
        ["report", str(fx.sweep)],
        ["design", "red", "--rate", "10Mbps", "--rtt", "100ms", "--flows", "20"],
        ["design", "pi", "--rate", "10Mbps", "--rtt", "100ms", "--flows", "60", "--q-ref", "100"],
        ["design", "rem", "--rate", "10Mbps", "--rtt", "100ms", "--flows", "60"],
        ["design", "check", str(fx.scenario)],
        ["testbed", "--cleanup", str(fx.scenario)],
        ["testbed", str(fx.garbage), "--out", out, "--cc", "cubic"],
        ["compare", str(fx.run), str(fx.run), "--format", "csv"],
        ["compare", "--responses", str(fx.run), str(fx.run), "--within", "0.5,1"],
        ["plot", str(fx.run), "--what", "queue", "-o", str(fx.tmp / "q.png")],
    ]


def _cli_case(seed: int, index: int, rng: random.Random, fx: Fixtures) -> Case:
    argv = list(rng.choice(_base_commands(fx)))
    case = Case(seed, index, "cli", " ".join(argv[:2]), argv=argv)
    for _ in range(rng.choice([1, 1, 2, 3])):
        case.mutations.append(_mutate_argv(argv, rng, fx))
    if argv[0] == "testbed" and "--cleanup" not in argv and str(fx.garbage) not in argv:
        # Never a real testbed run: its file stays bad.
        argv.append(str(fx.garbage))
        case.mutations.append("the garbage file again")
    if argv[0] in ("sweep", "reproduce") and "--dry-run" not in argv and "--list" not in argv:
        argv.append("--dry-run")  # a case plans, it never runs a sweep
    case.argv = argv
    return case


def _mutate_argv(argv: list[str], rng: random.Random, fx: Fixtures) -> str:
    k = rng.randrange(7)
    if len(argv) < 2:
        k = 5
    i = rng.randrange(1, max(2, len(argv)))
    if k <= 1:
        v = rng.choice([*BAD_VALUES, str(fx.garbage), str(fx.garbage / "sub"), str(fx.run)])
        old, argv[i] = argv[i], v
        return f"{old!r} -> {v!r}"
    if k == 2:
        old = argv.pop(i)
        return f"drop {old!r}"
    if k == 3:
        argv.insert(i, argv[i])
        return f"repeat {argv[i]!r}"
    if k == 4:
        flag = rng.choice(["--bogus", "--seeds", "--jobs", "--timeout", "--set", "-o", "--what"])
        v = rng.choice(BAD_VALUES)
        argv[i:i] = [flag, v]
        return f"insert {flag} {v!r}"
    if k == 5:
        v = rng.choice([str(fx.garbage), str(fx.tmp / "missing"), str(fx.run), str(fx.sweep)])
        argv.insert(i, v)
        return f"insert path {v!r}"
    v = rng.choice(["--help", "-h", "--version", "--list", "--all", "--resume", "--quick"])
    argv.insert(i, v)
    return f"insert {v}"


def check_cli(case: Case) -> Outcome:
    from aqmlab import cli

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(case.argv)
            except SystemExit as e:  # --help
                status = int(e.code or 0) if not isinstance(e.code, str) else 2
    except BaseException as e:
        return Outcome("bad", f"{type(e).__name__}: {e}"[:500])
    text = err.getvalue()
    for word in ("Traceback", "internal error", "panicked"):
        if word in text:
            return Outcome("bad", f"status {status}: {text[-500:]}")
    if status == 0:
        return Outcome("ok")
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    if status in (1, 2) and len(errors) == 1:
        return Outcome("error", errors[0][:300])
    return Outcome("bad", f"status {status}, {len(errors)} error lines: {text[-500:]}")


# -- cases ---------------------------------------------------------------------------------


def make_case(seed: int, index: int, fx: Fixtures | None = None) -> Case:
    """Case ``index`` with seed ``seed``: an experiment file, or (given the fixtures) a
    command line."""
    rng = random.Random(seed * 1_000_003 + index)
    if fx is None or rng.random() < 0.5:
        return _experiment_case(seed, index, rng)
    return _cli_case(seed, index, rng, fx)


def check(case: Case) -> Outcome:
    return check_experiment(case) if case.kind == "experiment" else check_cli(case)


def main(argv: list[str]) -> int:
    """``python tests/fuzz_commands.py SEED INDEX``: show and check one experiment case."""
    ap = argparse.ArgumentParser(
        prog="tests/fuzz_commands.py", description="Show and check one case."
    )
    ap.add_argument("seed", type=int, help="the fuzzer's seed")
    ap.add_argument("index", type=int, help="the case's index")
    args = ap.parse_args(argv)
    c = make_case(args.seed, args.index)
    print(c.name())
    print(check(c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
