"""Bad input: a seeded fuzzer over the example scenarios.

Every mutated scenario either validates or gives a ``ScenarioError`` naming
its field (or, for broken TOML text, its line): never another exception, a
panic or an abort. A subset that validates is run for a fraction of a second
in a child process, so that an abort or a hang is caught and named.

``make test`` checks a corpus of :data:`CASES` cases (a few seconds). For a
longer search set ``AQMLAB_FUZZ``: ``AQMLAB_FUZZ=50000 pytest
tests/test_fuzz.py`` checks 50 000 cases and runs one in 200 of those that
validate; ``AQMLAB_FUZZ_SEED`` picks another seed. A failing case is replayed
with ``python tests/fuzz.py SEED INDEX``.
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT, TESTS, aqmlab_cli, assert_clean_error

sys.path.insert(0, str(TESTS))
import fuzz

SEED = int(os.environ.get("AQMLAB_FUZZ_SEED", "20261124"))
#: Validation cases: a few thousand by default, AQMLAB_FUZZ for a long run.
CASES = int(os.environ.get("AQMLAB_FUZZ", "3000"))
#: Cases run for fuzz.RUN_DURATION: one in 200 of those that validate, at
#: least 12 and (by default) at most 24.
RUNS = max(12, CASES // 200) if "AQMLAB_FUZZ" in os.environ else 16
#: Wall seconds one child process may take per case before it counts as hung.
RUN_TIMEOUT_S = 120.0


def test_corpus_is_the_example_scenarios() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in fuzz.CORPUS}
    assert "scenarios/canonical.toml" in names and "scenarios/aqm/pi.toml" in names
    assert len(names) >= 15


def test_cases_are_reproducible() -> None:
    a, b = fuzz.make_case(SEED, 17), fuzz.make_case(SEED, 17)
    assert a.name() == b.name() and a.doc == b.doc and a.text == b.text


def _validated() -> tuple[Counter[str], list[str], list[int]]:
    counts: Counter[str] = Counter()
    bad: list[str] = []
    valid: list[int] = []
    for i in range(CASES):
        case = fuzz.make_case(SEED, i)
        out = fuzz.check(case)
        counts[out.kind] += 1
        if out.kind == "bad":
            bad.append(f"{case.name()} -> {out.detail}")
        elif out.kind == "ok":
            valid.append(i)
    return counts, bad, valid


_RESULT: tuple[Counter[str], list[str], list[int]] | None = None


def validated() -> tuple[Counter[str], list[str], list[int]]:
    global _RESULT
    if _RESULT is None:
        _RESULT = _validated()
    return _RESULT


def test_every_mutated_scenario_validates_or_names_its_field() -> None:
    counts, bad, _ = validated()
    print(f"fuzz: {CASES} cases, seed {SEED}: {dict(counts)}")
    assert not bad, f"{len(bad)} of {CASES} cases broke the contract:\n" + "\n".join(bad[:20])
    # The mutations reach both outcomes: enough scenarios stay valid for the
    # run subset, and most are caught.
    assert counts["ok"] >= CASES // 50
    assert counts["error"] >= CASES // 2


def _run_batch(indices: list[int]) -> dict[int, str]:
    """Run cases in child processes; a crash or a hang names its case and
    the rest go on in a new child."""
    results: dict[int, str] = {}
    todo = list(indices)
    while todo:
        results.update(_watch(todo))
        todo = [i for i in todo if i not in results]
    return results


def _watch(todo: list[int]) -> dict[int, str]:
    """One child over ``todo``: each finished case's line, and for the case
    running when the child died or stalled, what happened."""
    out: dict[int, str] = {}
    child = subprocess.Popen(
        [sys.executable, str(TESTS / "fuzz.py"), str(SEED), "--run", *map(str, todo)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    current: int | None = None
    sel = selectors.DefaultSelector()
    sel.register(child.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            child.kill()
            child.wait()
            if current is not None:
                out[current] = f"bad hung for more than {RUN_TIMEOUT_S:.0f} s"
            break
        line = child.stdout.readline()
        if not line:
            child.wait()
            if current is not None:
                err = (child.stderr.read() if child.stderr else "")[-300:]
                out[current] = f"bad process died with status {child.returncode}: {err}"
            break
        idx, _, rest = line.strip().partition(" ")
        if rest == "start":
            current = int(idx)
            deadline = time.monotonic() + RUN_TIMEOUT_S
        else:
            out[int(idx)] = rest
            current = None
    sel.close()
    return out


def test_a_subset_runs_without_panic_or_abort() -> None:
    _, _, valid = validated()
    # Spread over the corpus, deterministic.
    step = max(1, len(valid) // RUNS)
    pick = valid[::step][:RUNS]
    results = _run_batch(pick)
    kinds = Counter(r.split(" ", 1)[0] for r in results.values())
    print(f"fuzz runs: {len(pick)} cases: {dict(kinds)}")
    bad = [
        f"{fuzz.make_case(SEED, i).name()} -> {r}"
        for i, r in sorted(results.items())
        if r.startswith("bad")
    ]
    assert not bad, "\n".join(bad)
    assert kinds["ok"] >= len(pick) // 2


HANDMADE = {
    "seed_2_63": ("seed = 9223372036854775808", "seed"),
    "buffer_10_400": ("buffer = 1" + "0" * 400, "topology.buffer"),
    "deep_inline_table": ("buffer = " + "{a = " * 1000 + "1" + "}" * 1000, "topology.buffer"),
    "lone_surrogate": ('bottleneck_rate = "\\uD800"', "topology.bottleneck_rate"),
    "deep_header": ("[topology." + ".".join(["t"] * 200) + "]", "topology.t"),
}


@pytest.mark.parametrize("name", sorted(HANDMADE))
def test_cli_names_the_field_of_a_value_toml_cannot_hold(tmp_path: Path, name: str) -> None:
    line, field = HANDMADE[name]
    text = (ROOT / "tests" / "data" / "small.toml").read_text()
    if line.startswith("seed"):
        text = text.replace("seed = 1", line)
    elif line.startswith("["):
        text += "\n" + line + "\nx = 1\n"
    else:
        key = line.split(" ", 1)[0]
        text = "\n".join(
            ln
            for ln in text.replace("[topology]", "[topology]\n" + line).splitlines()
            if not (ln.startswith(key + " ") and ln != line)
        )
    f = tmp_path / "x.toml"
    f.write_text(text)
    p = aqmlab_cli("validate", f)
    assert_clean_error(p)
    # FILE: or FILE:LINE:COL: (the key's place in the file), then the field.
    assert re.search(rf"{re.escape(str(f))}(:\d+:\d+)?: {re.escape(field)}", p.stderr), p.stderr


@pytest.mark.parametrize("index", range(3))
def test_cli_reports_a_mutated_file_in_one_line(tmp_path: Path, index: int) -> None:
    """Mutated TOML text through ``aqmlab validate``: status 2, one
    ``error:`` line, no traceback."""
    i = 0
    found = None
    while found is None:
        case = fuzz.make_case(SEED + 1, 1000 * index + i)
        i += 1
        if case.text is not None and fuzz.check(case).kind == "error":
            found = case.text
    f = tmp_path / "mutated.toml"
    f.write_text(found, encoding="utf-8", errors="surrogateescape")
    p = aqmlab_cli("validate", f)
    assert_clean_error(p)


def test_cli_non_utf8_override_names_the_field(tmp_path: Path) -> None:
    """A --set value that is not UTF-8 (a lone surrogate in Python's argv)."""
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "aqmlab",
            "validate",
            str(ROOT / "tests/data/small.toml"),
            "--set",
            b"aqm.kind=\xff".decode("utf-8", "surrogateescape"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert_clean_error(p)
    assert "aqm.kind" in p.stderr
