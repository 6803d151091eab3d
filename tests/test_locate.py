"""Errors name the line and column of the key in the user's file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from aqmlab._tomlpath import format_steps, locate

TEXT = """duration = "10s"
schedule = [ { at = "1s", action = "link", link = "bottleneck", rate = "5Mbps" },
             { at = "2s", action = "link", link = "bottleneck", rate = "0Mbps" } ]

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"

[[traffic]]
kind = "bulk"
flows = 5

[[traffic]]
kind = "bulk"
flows = 0
start = { uniform = ["0s", "-1s"] }
"""


def test_locate_keys_tables_and_array_elements() -> None:
    assert locate(TEXT, "traffic[1].flows") == (15, 1)
    assert locate(TEXT, "traffic[0].flows") == (11, 1)
    assert locate(TEXT, "topology.bottleneck_rate") == (7, 1)
    assert locate(TEXT, "schedule[1].rate") == (3, 65)
    # Inside a value: the deepest key that holds it.
    assert locate(TEXT, "traffic[1].start.uniform[1]") == (16, 11)
    # A key the file does not have: its table's header; no table at all: nothing.
    assert locate(TEXT, "topology.buffer") == (5, 1)
    assert locate(TEXT, "aqm.kind") is None
    assert format_steps(["traffic", 1, "flows"]) == "traffic[1].flows"


def _validate(path: Path, *args: str) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "validate", str(path), *args],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2, p
    return p.stderr.strip()


def test_cli_error_gives_line_and_column(tmp_path: Path) -> None:
    f = tmp_path / "s.toml"
    f.write_text(TEXT.replace('"-1s"', '"1s"').replace('"0Mbps"', '"5Mbps"'))
    assert _validate(f).startswith(f"error: {f}:15:1: traffic[1].flows: ")
    # Set on the command line: the file's line would mislead, so none is given.
    assert _validate(f, "--set", "traffic[1].flows=0").startswith(f"error: {f}: traffic[1].flows: ")
