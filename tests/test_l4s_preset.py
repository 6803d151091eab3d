"""The l4s-coexistence preset: it cites RFC 9332, its quick form runs (24 short runs, about 4 s on
two workers), and its report carries the RFC's relations, each checked for its schemes and
settings, and renders in a real browser where Chromium is installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from aqmlab.experiments.catalog import find_preset
from aqmlab.experiments.spec import load_experiment
from browser import check_page, chromium

NAME = "l4s-coexistence"

#: (claim's start, schemes it checks) of every relation, in the file's order.
RELATIONS = [
    ("with k = 2 a Prague flow gets at least half", {"DualPI2"}),
    ("with k = 2 a Prague flow gets at most twice", {"DualPI2"}),
    ("the L queue's 99th-percentile sojourn is below 2 ms", {"DualPI2"}),
    ("the C queue's mean sojourn is near the 15 ms target", {"DualPI2"}),
    ("the link is kept full", {"DualPI2"}),
    ("through a single-queue classic-ECN RED, Prague with the fallback gets at least half",
     {"RED (classic ECN)"}),
    ("through a single-queue classic-ECN RED, Prague with the fallback gets at most twice",
     {"RED (classic ECN)"}),
    ("without the fallback Prague takes more than twice", {"RED (classic ECN), no fallback"}),
]  # fmt: skip


def test_the_preset_cites_rfc_9332_and_its_quick_form_is_small() -> None:
    p = find_preset(NAME)
    assert p is not None and p.problem is None
    assert "RFC 9332" in p.source and "section 2.1" in p.source
    full = load_experiment(p.path)
    assert [f.name for f in full.factors] == ["mix", "rate", "rtt"]
    assert [len(f.values) for f in full.factors] == [4, 3, 5]
    quick = load_experiment(p.path, quick=True)
    assert quick.seeds == (1,)
    assert [len(f.values) for f in quick.factors] == [2, 1, 2]
    assert len(quick.schemes) == 6


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("l4s") / "quick"
    r = subprocess.run(
        [sys.executable, "-m", "aqmlab", "reproduce", NAME, "--quick", "--jobs", "2",
         "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return out


def test_the_quick_form_checks_every_relation(quick: Path) -> None:
    rep = quick / "report"
    s = json.loads((rep / "summary.json").read_text())
    assert s["points"] == 24 and s["failed"] == 0
    assert s["figures_failed"] == []
    # DualPI2's own queues are measured for DualPI2 alone (the metrics' `schemes`): the other
    # schemes' cells read "-", and no value is left "could not be computed".
    assert s["warnings"] == 0
    # Each relation: one scheme, in the quick form's 2 mixes x 2 RTTs; every check has data.
    assert s["relations"]["checked"] == 4 * len(RELATIONS)
    assert s["relations"]["no_data"] == 0
    md = (rep / "tables.md").read_text()
    for i, (claim, schemes) in enumerate(RELATIONS):
        head = f"### {i + 1}. {claim}"
        assert head in md, head
        block = md.split(head, 1)[1].split("### ", 1)[0]
        rows = [ln for ln in block.splitlines() if ln.startswith("| ") and "verdict" not in ln]
        assert {ln.split(" | ")[0][2:] for ln in rows} == schemes
        assert all(ln.endswith(("| kept |", "| not kept |")) for ln in rows), rows
    # The per-class ratio, DualPI2's L p99 and C mean are real numbers for DualPI2.
    assert "Rate ratio per flow class" in md and "DualPI2's queues" in md


def test_the_flow_classes_delays_are_measured_under_every_scheme(quick: Path) -> None:
    """Each group's packets' delays at the bottleneck (`metrics.group_delays`): a number for
    every scheme and point, and under DualPI2 its L and C queues' own figures."""
    md = (quick / "report" / "tables.md").read_text()
    head = "### Queueing delay per flow class, every scheme"
    assert head in md
    block = md.split(head, 1)[1].split("### ", 1)[0]
    rows = [ln for ln in block.splitlines() if ln.startswith("| ") and "scheme" not in ln]
    assert len(rows) == 6 * 2, rows
    assert all("could not" not in ln and "nan" not in ln.lower() for ln in rows), rows
    t = pq.read_table(quick / "summary.parquet").to_pylist()
    whole = [r for r in t if r["phase"] == "all"]
    assert len(whole) == 24
    for r in whole:
        assert r["bottleneck.groups.0.delay_p99_s"] > 0, r["scheme"]
        assert r["bottleneck.groups.1.delay_mean_s"] > 0, r["scheme"]
        if r["scheme"] == "DualPI2":
            assert r["bottleneck.groups.0.delay_p99_s"] == r["bottleneck.l_queue_delay_p99_s"]
            assert r["bottleneck.groups.1.delay_mean_s"] == r["bottleneck.c_queue_delay_mean_s"]


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed: `make browser`")
def test_the_quick_report_renders(quick: Path) -> None:
    res = check_page(quick / "report" / "index.html", width=1400)
    assert res.errors == []
    assert res.title.startswith(f"{NAME}:")
    assert len(res.images) == 3
    for img in res.images:
        assert img["complete"] and img["width"] > 300 and img["height"] > 200, img
