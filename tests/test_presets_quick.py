"""Every preset runs in its quick form, as one sweep on two workers, and its report
builds; an index page covers them all. The whole set is timed (printed with ``-s``); the goal is
five minutes on two cores."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab.experiments.catalog import presets
from aqmlab.report import build_index

CMD = [sys.executable, "-m", "aqmlab", "reproduce", "--all", "--quick", "--jobs", "2"]


@pytest.mark.crosscheck
def test_every_preset_runs_quick_and_its_report_builds(tmp_path: Path) -> None:
    names = [p.name for p in presets() if not p.problem]
    assert len(names) >= 20, names
    t0 = time.monotonic()
    r = subprocess.run(
        [*CMD, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.monotonic() - t0
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    dirs = []
    for name in names:
        d = tmp_path / f"{name}-quick"
        assert (d / "summary.parquet").is_file(), name
        assert (d / "report" / "index.html").is_file(), name
        dirs.append(d)
    index = build_index(dirs, tmp_path / "index.html")
    text = index.read_text()
    assert all(name in text for name in names)
    print(f"\nall {len(names)} quick presets with their reports: {wall:.0f} s on 2 workers")
