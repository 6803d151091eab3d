"""The testbed grid's tool (tools/testbed_matrix.py) as a module for the tests: a cell's scenario,
the simulator's `[tcp]` beside a kernel congestion control (`sim_tcp`), a summary's figures and
the band they are held to. The tool imports aqmlab only inside its functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def _load() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "tools" / "testbed_matrix.py"
    spec = importlib.util.spec_from_file_location("testbed_matrix", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


grid = _load()
