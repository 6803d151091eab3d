"""Acceptance 8: malformed scenarios and bad command lines give one clear
error line naming the field, exit status 2, and no traceback or panic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT, SMALL, TESTS, aqmlab_cli, assert_clean_error

MALFORMED = sorted((TESTS / "malformed").glob("*.toml"))


def expectation(path: Path) -> tuple[str, str]:
    """The ``# path:`` and ``# expect:`` lines of a malformed file's header."""
    head = path.read_text().splitlines()[:5]
    fields = dict(
        m.groups() for line in head if (m := re.match(r"#\s*(path|expect):\s?(.*)$", line))
    )
    assert "path" in fields and "expect" in fields, f"{path.name}: header lacks path/expect"
    return fields["path"].strip(), fields["expect"].strip()


def test_there_are_enough_malformed_files() -> None:
    assert len(MALFORMED) >= 14


@pytest.mark.parametrize("path", MALFORMED, ids=[p.stem for p in MALFORMED])
def test_validate_rejects_malformed_file(path: Path) -> None:
    field, fragment = expectation(path)
    rel = path.relative_to(ROOT)
    p = aqmlab_cli("validate", rel, cwd=ROOT)
    assert_clean_error(p)
    err = p.stderr.strip()
    # A field error may give the key's line and column in the file (FILE:LINE:COL: ...).
    err = re.sub(rf"^error: {re.escape(str(rel))}:\d+:\d+: ", f"error: {rel}: ", err)
    assert err.startswith(f"error: {rel}: "), err
    if field:
        assert f"{rel}: {field}: " in err, err
    else:
        # Whole-document errors (TOML syntax) name the line instead.
        assert "line" in err, err
    assert fragment in err, err


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("aqm.bogus=1", "aqm.bogus"),
        ("nosuch.key=3", "nosuch"),
        ("traffic[3].flows=5", "traffic[3]"),
        ("traffic.0.flows=0", "traffic[0].flows"),
        ("aqm.max_p=1.5", "aqm.max_p"),
        ("topology.bottleneck_rate=fast", "topology.bottleneck_rate"),
        ("duration.x=1", "duration.x"),
        ("=5", "malformed override"),
        ("aqm.max_p", "malformed override"),
        ("aqm..max_p=0.1", "malformed key"),
    ],
)
def test_run_rejects_bad_override(tmp_path: Path, override: str, key: str) -> None:
    out = tmp_path / "out"
    p = aqmlab_cli("run", SMALL, "--out", out, "--set", override)
    assert_clean_error(p)
    assert key in p.stderr
    assert not out.exists()


@pytest.mark.parametrize("seed", ["abc", "-1", "1.5", ""])
def test_run_rejects_bad_seed(tmp_path: Path, seed: str) -> None:
    out = tmp_path / "out"
    p = aqmlab_cli("run", SMALL, "--out", out, "--seed", seed)
    assert_clean_error(p)
    assert "seed" in p.stderr
    assert not out.exists()


def test_run_refuses_to_overwrite_a_folder_that_is_not_a_result(tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("...")
    p = aqmlab_cli("run", SMALL, "--out", out)
    assert_clean_error(p)
    assert str(out) in p.stderr
    assert (out / "thesis.tex").read_text() == "..."
    assert sorted(x.name for x in tmp_path.iterdir()) == ["precious"]


def test_missing_file(tmp_path: Path) -> None:
    p = aqmlab_cli("validate", tmp_path / "nope.toml")
    assert_clean_error(p)
    assert "nope.toml" in p.stderr
    p = aqmlab_cli("run", tmp_path / "nope.toml", "--out", tmp_path / "o")
    assert_clean_error(p)


def test_usage_errors_are_one_line() -> None:
    for args in (["run", str(SMALL)], ["frobnicate"], []):
        assert_clean_error(aqmlab_cli(*args))


def test_plot_of_a_folder_that_is_not_a_result(tmp_path: Path) -> None:
    p = aqmlab_cli("plot", tmp_path)
    assert_clean_error(p)
    assert "not an aqmlab result folder" in p.stderr


def test_validate_good_files() -> None:
    files = sorted((ROOT / "scenarios").glob("*.toml"))
    assert files
    p = aqmlab_cli("validate", *files, SMALL)
    assert p.returncode == 0, p.stderr
    for f in [*files, SMALL]:
        assert f"{f}: ok" in p.stdout


def test_validate_reports_each_bad_file_and_goes_on() -> None:
    bad = MALFORMED[0]
    p = aqmlab_cli("validate", bad, SMALL)
    assert p.returncode == 2
    assert f"{SMALL}: ok" in p.stdout
    assert str(bad) in p.stderr
