"""Shared fixtures: a short scenario and a way to run the CLI as a user does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import aqmlab

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SMALL = TESTS / "data" / "small.toml"


def aqmlab_cli(
    *args: str | Path,
    cwd: Path | None = None,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m aqmlab ARGS`` in a subprocess and capture its output
    (in ``env``, or this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "aqmlab", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )


def assert_clean_error(p: subprocess.CompletedProcess[str]) -> None:
    """A user error: status 2, one ``error:`` line, no traceback or panic."""
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.startswith("error: "), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert "panicked" not in p.stderr


@pytest.fixture
def small_doc() -> dict[str, Any]:
    """The short test scenario as a dict (a fresh copy per test)."""
    return aqmlab.load(SMALL)


@pytest.fixture
def small_file() -> Path:
    return SMALL


def same_table(a: pa.Table, b: pa.Table) -> bool:
    """Equal schemas and values, NaN equal to NaN (``Table.equals`` says NaN != NaN)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for name in a.column_names:
        x, y = a.column(name).to_numpy(), b.column(name).to_numpy()
        if x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True
