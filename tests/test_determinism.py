"""Acceptance 6: the same scenario and seed give the same bytes in
summary.json (wall time aside); another seed gives different figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from conftest import SMALL, aqmlab_cli, same_table


def run_cli(out: Path, *extra: str) -> None:
    p = aqmlab_cli("run", SMALL, "--out", out, "--quiet", *extra)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""


def summary_without_wall_time(d: Path) -> tuple[str, dict[str, Any]]:
    """summary.json's text with the wall_time_s line taken out, and its figures."""
    text = (d / "summary.json").read_text()
    lines = [ln for ln in text.splitlines(keepends=True) if '"wall_time_s"' not in ln]
    assert len(lines) == len(text.splitlines()) - 1
    data = json.loads(text)
    data.pop("wall_time_s")
    return "".join(lines), data


def test_same_seed_same_bytes_other_seed_other_figures(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    run_cli(a, "--seed", "7")
    run_cli(b, "--seed", "7")
    run_cli(c, "--seed", "8")

    text_a, sa = summary_without_wall_time(a)
    text_b, _ = summary_without_wall_time(b)
    assert text_a == text_b
    assert sa["seed"] == 7
    for t in ("queue.parquet", "flows.parquet", "params.parquet", "responses.parquet"):
        assert same_table(pq.read_table(a / t), pq.read_table(b / t))

    text_c, sc = summary_without_wall_time(c)
    assert sc["seed"] == 8
    assert text_c != text_a
    ba, bc = sa["bottleneck"], sc["bottleneck"]
    assert (ba["arrivals"], ba["drops_early"], ba["queue_mean_pkts"]) != (
        bc["arrivals"],
        bc["drops_early"],
        bc["queue_mean_pkts"],
    )
    assert not same_table(pq.read_table(a / "queue.parquet"), pq.read_table(c / "queue.parquet"))


def test_api_and_cli_agree(tmp_path: Path) -> None:
    import aqmlab

    run_cli(tmp_path / "cli", "--seed", "5")
    _, from_cli = summary_without_wall_time(tmp_path / "cli")
    r = aqmlab.run(SMALL, seed=5)
    from_api = dict(r.summary)
    from_api.pop("wall_time_s")
    assert from_api == from_cli
