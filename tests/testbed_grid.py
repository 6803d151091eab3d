"""The testbed grid's tool (tools/testbed_matrix.py) as a module for the tests: a cell's scenario,
the simulator's `[tcp]` beside a kernel congestion control (`sim_tcp`), a summary's figures and
the band they are held to. The tool imports aqmlab only inside its functions."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from file_modules import load


def _load() -> ModuleType:
    return load(
        "testbed_matrix", Path(__file__).resolve().parents[1] / "tools" / "testbed_matrix.py"
    )


grid = _load()
