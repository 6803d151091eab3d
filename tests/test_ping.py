"""Latency under load: a ``ping`` traffic group's probes in the summary, in ``pings.parquet``
and in ``aqmlab plot --what ping``, on the RRUL-like example run with two schemes."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import aqmlab

from conftest import ROOT, aqmlab_cli, assert_clean_error

RRUL = ROOT / "scenarios" / "rrul.toml"
SHORT = ["duration=20s", "metrics.start=5s"]


@pytest.fixture(scope="module")
def rrul(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("rrul")
    out = {}
    for kind in ("droptail", "fq-codel"):
        out[kind] = base / kind
        aqmlab.run(RRUL, overrides=[*SHORT, f"aqm.kind={kind}"], out=out[kind])
    return out


def test_probes_see_the_queue_each_scheme_keeps(rrul: dict[str, Path]) -> None:
    dt = aqmlab.load_run(rrul["droptail"])
    fq = aqmlab.load_run(rrul["fq-codel"])
    a, b = dt.summary["ping"], fq.summary["ping"]
    # Probes every 200 ms sent in [5 s, 20 s): 75, as many in both runs.
    assert a["probes"] == b["probes"] == 75
    assert a["count"] == 1 and a["answered"] <= a["probes"]
    # The base RTT is 40 ms (2 x (10 + 2 x 5) ms): DropTail's 500 packets add up to 300 ms,
    # FQ-CoDel serves the probe flow ahead of the bulk flows' queues.
    assert b["rtt_p99_s"] < 0.05 < a["rtt_p50_s"], (a, b)
    assert b["rtt_min_s"] >= 0.04
    # One row per probe, in sending order; the summary is made of them.
    t = fq.pings.to_pydict()
    assert t["seq"][:3] == [1, 2, 3] and t["sent_s"] == sorted(t["sent_s"])
    measured = [r for s, r in zip(t["sent_s"], t["rtt_s"], strict=True) if 5 <= s < 20]
    assert len(measured) == 75
    assert max(r for r in measured if not math.isnan(r)) == pytest.approx(b["rtt_max_s"])
    # The probe flow is neither TCP nor UDP traffic in the summary.
    assert "udp" not in fq.summary and fq.summary["flows"]["count"] == 4
    kinds = fq.flows.column("kind").to_pylist()
    assert kinds.count("ping") == 1


def test_plot_ping_draws_one_curve_per_probe_flow(rrul: dict[str, Path], tmp_path: Path) -> None:
    png = tmp_path / "ping.png"
    r = aqmlab_cli("plot", str(rrul["droptail"]), str(rrul["fq-codel"]), "--what", "ping",
                   "-o", str(png))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 10_000
    from aqmlab.plot import plot_series

    fig_path = plot_series([("fq", rrul["fq-codel"])], tmp_path / "one.png", what="ping")
    assert fig_path.is_file()


def test_ping_errors_name_the_key(tmp_path: Path) -> None:
    r = aqmlab_cli("run", str(RRUL), "--set", "traffic[2].interval=0s", "-o", str(tmp_path / "o"))
    assert_clean_error(r)
    assert "traffic[2].interval" in r.stderr and "0s is not allowed" in r.stderr
    no_ping = tmp_path / "np"
    aqmlab.run(
        ROOT / "scenarios" / "canonical.toml",
        overrides=["duration=2s", "metrics.start=1s"],
        out=no_ping,
    )
    r = aqmlab_cli("plot", str(no_ping), "--what", "ping", "-o", str(tmp_path / "x.png"))
    assert_clean_error(r)
    assert "no latency probes" in r.stderr
