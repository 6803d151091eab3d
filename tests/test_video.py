"""Adaptive video sessions (``kind = "video"``): the example scenario through a FIFO and through
FQ-CoDel, ``summary.video`` over the run and its phases, the session in ``flows.parquet``, the
same figures from the same seed, and bad keys refused naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import aqmlab

from conftest import ROOT, aqmlab_cli, assert_clean_error

VIDEO = ROOT / "scenarios" / "video.toml"
SHORT = ["duration=40s", "metrics.start=15s", "metrics.phases=[[15, 25], [25, 40]]"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("video")
    out = {}
    for kind in ("droptail", "fq-codel"):
        out[kind] = base / kind
        aqmlab.run(VIDEO, overrides=[*SHORT, f"aqm.kind={kind}"], out=out[kind])
    return out


def test_the_player_streams_steadier_through_fq_codel(runs: dict[str, Path]) -> None:
    dt = aqmlab.load_run(runs["droptail"]).summary
    fq = aqmlab.load_run(runs["fq-codel"]).summary
    a, b = dt["video"], fq["video"]
    assert a["sessions"] == b["sessions"] == 1
    # 2 s segments over 25 s: about 12 each (more while the buffer fills).
    assert 11 <= a["segments"] <= 16 and 11 <= b["segments"] <= 16, (a, b)
    # Bitrates of the ladder, below the link (10 Mbit/s shared with four CUBIC flows).
    for v in (a, b):
        assert 300_000 <= v["bitrate_mean_bps"] <= 4_300_000
        assert v["stalls"] == 0 and v["stall_time_s"] == 0 and v["rebuffer_ratio"] == 0
    # Behind the FIFO's 300 packets the download rates swing and the player switches; in its
    # own flow queue it holds one bitrate.
    assert b["switches"] <= a["switches"], (a, b)
    assert fq["bottleneck"]["queuing_delay_mean_s"] < dt["bottleneck"]["queuing_delay_mean_s"]
    # Playback began before the measurement: no startup delay in it.
    assert "startup_delay_mean_s" not in a


def test_phases_and_the_flow_table_carry_the_session(runs: dict[str, Path]) -> None:
    r = aqmlab.load_run(runs["fq-codel"])
    phases = r.summary["phases"]
    assert [p["video"]["sessions"] for p in phases] == [1, 1]
    # A segment ends in one phase or the other, so the phases' counts add up to the run's
    # (both phases cover the measurement interval, 15-40 s, end to end).
    assert sum(p["video"]["segments"] for p in phases) == r.summary["video"]["segments"]
    kinds = r.flows.column("kind").to_pylist()
    assert kinds.count("video") == 1 and kinds.count("bulk") == 4
    i = kinds.index("video")
    goodput = r.flows.column("goodput_bps").to_pylist()[i]
    # The session's goodput carries its segments: about their bitrate while the buffer is full.
    assert goodput == pytest.approx(r.summary["video"]["bitrate_mean_bps"], rel=0.3)


def test_the_same_seed_gives_the_same_figures(runs: dict[str, Path], tmp_path: Path) -> None:
    aqmlab.run(VIDEO, overrides=[*SHORT, "aqm.kind=droptail"], out=tmp_path / "again")
    a = json.loads((runs["droptail"] / "summary.json").read_text())
    b = json.loads((tmp_path / "again" / "summary.json").read_text())
    for s in (a, b):
        s.pop("wall_time_s")
    assert a == b


@pytest.mark.parametrize(
    ("override", "field", "fragment"),
    [
        ("traffic[1].bitrates=[]", "traffic[1].bitrates", "0 bitrates"),
        ('traffic[1].bitrates=["1Mbps", "1Mbps"]', "traffic[1].bitrates[1]", "is not above"),
        ('traffic[1].segment="5ms"', "traffic[1].segment", "[10ms, 600s]"),
        ("traffic[1].window=0", "traffic[1].window", "[1, 100] segments"),
        ('traffic[1].buffer="3s"', "traffic[1].buffer", "2 x segment = 4s"),
        ('traffic[1].request_size="70KB"', "traffic[1].request_size", "[1, 65495] bytes"),
    ],
)
def test_bad_keys_are_refused_naming_the_field(override: str, field: str, fragment: str) -> None:
    p = aqmlab_cli("validate", VIDEO, "--set", override, cwd=ROOT)
    assert_clean_error(p)
    assert f"{field}: " in p.stderr and fragment in p.stderr, p.stderr
