"""Web traffic (``kind = "web"``): the responses table in memory and on
disk, the response-time CDF, and the load calibration helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aqmlab
from aqmlab.plot import response_cdf

WEB: dict[str, Any] = {
    "duration": "12s",
    "seed": 3,
    "topology": {"bottleneck_rate": "100Mbps", "bottleneck_delay": "1ms", "access_rate": "1Gbps"},
    "tcp": {"packet_size": 1500},
    "traffic": [{"kind": "web", "sessions": 200, "think": "1s"}],
    "metrics": {"start": "2s"},
}


@pytest.fixture(scope="module")
def web_run() -> aqmlab.RunResult:
    return aqmlab.run(WEB)


def test_responses_table(web_run: aqmlab.RunResult) -> None:
    t = web_run.responses
    assert t.column_names == [
        "flow",
        "session",
        "group",
        "page",
        "object",
        "size_bytes",
        "start_s",
        "end_s",
        "response_time_s",
    ]
    assert t.num_rows > 500
    # Without lanes a session is its one flow.
    assert t.column("session").to_pylist() == t.column("flow").to_pylist()
    rt = t.column("response_time_s").to_numpy()
    assert np.allclose(rt, t.column("end_s").to_numpy() - t.column("start_s").to_numpy())
    # HTTP/1.0 with a handshake: at least two base RTTs (10-150 ms) each.
    assert rt.min() >= 0.02 - 1e-9
    w = web_run.summary["web"]
    # One SYN/ACK per connection (HTTP/1.0: per response), more after losses.
    assert w["synacks_sent"] >= w["completed"]
    assert 0 <= w["synack_drops"] < 0.01 * w["synacks_sent"]


def test_response_cdf(web_run: aqmlab.RunResult) -> None:
    t, p = web_run.response_cdf()
    assert len(t) == web_run.summary["web"]["completed"]
    assert np.all(np.diff(t) >= 0) and p[-1] == 1.0
    median = t[np.searchsorted(p, 0.5)]
    assert median == pytest.approx(web_run.summary["web"]["response_time_p50_s"])
    t_all, _ = web_run.response_cdf(measured_only=False)
    assert len(t_all) == web_run.responses.num_rows > len(t)


def test_responses_round_trip_and_plot(web_run: aqmlab.RunResult, tmp_path: Path) -> None:
    out = web_run.save(tmp_path / "run")
    assert (out / "responses.parquet").is_file()
    back = aqmlab.load_run(out)
    assert back.responses.equals(web_run.responses)
    png = response_cdf([("a", web_run), ("b", out)], tmp_path / "cdf.png")
    assert png.stat().st_size > 1000


def test_bulk_runs_have_an_empty_responses_table(small_file: Path) -> None:
    r = aqmlab.run(small_file)
    assert r.responses.num_rows == 0
    assert "response_time_s" in r.responses.column_names
    assert len(r.response_cdf()[0]) == 0
    assert "web" not in r.summary


def test_calibrate_reports_the_realised_load() -> None:
    c = aqmlab.web.calibrate("20Mbps", duration="25s", measure_from="5s")
    assert c["offered_bps"] == 20e6
    assert 0.8 < c["ratio"] < 1.2, c
    assert c["sessions"] > 400
    assert c["result"].summary["bottleneck"]["loss_rate"] == 0.0
    # A page's objects in parallel run each session on `lanes` (4) flows, closed pages too.
    par = aqmlab.web.calibrate("20Mbps", "8s", "2s", web={"parallel_objects": True})
    assert par["sessions"] * 4 == par["result"].flows.num_rows
    assert abs(par["sessions"] - c["sessions"]) < 0.1 * c["sessions"], (par["sessions"], c)


def test_paired_responses_compare_one_workload_response_by_response() -> None:
    """Open pages with a page's objects on 32 lanes: a congested RED* with ECN and a 1 Gbit/s
    link run the same requests (a seed fixes the workload), so every response both completed
    has one size, and one start time unless it waited for a lane; the congested run is slower on
    the pairs. Another seed is
    another workload, and the pairing refuses it."""
    web = {
        "kind": "web",
        "sessions": 300,
        "think": "1s",
        "pages": "open",
        "lanes": 32,
        "parallel_objects": True,
    }
    red = {
        "kind": "red",
        "min_th": 5,
        "max_th": 15,
        "max_p": 0.1,
        "gentle": False,
        "above_max": "mark",
        "ecn": True,
    }
    base = {**WEB, "traffic": [web], "tcp": {"packet_size": 1500, "ecn": True}}
    slow = aqmlab.run(
        {**base, "aqm": red, "topology": {**WEB["topology"], "bottleneck_rate": "30Mbps"}}
    )
    fast = aqmlab.run({**base, "topology": {**WEB["topology"], "bottleneck_rate": "1Gbps"}})
    p = aqmlab.web.paired_responses(slow, fast)
    assert p.column_names[:5] == ["group", "session", "page", "object", "size_bytes"]
    assert p.num_rows > 0.95 * slow.responses.num_rows > 1000
    # An object starts at its time unless every lane of its session was busy.
    moved = int(np.sum(p.column("start_s_a").to_numpy() != p.column("start_s_b").to_numpy()))
    waited = slow.summary["web"]["pages_waited"] + fast.summary["web"]["pages_waited"]
    assert moved <= waited < 0.2 * p.num_rows, (moved, waited)
    slower = p.column("response_time_s_a").to_numpy() - p.column("response_time_s_b").to_numpy()
    assert np.mean(slower) > 0.01 and np.mean(slower > 0) > 0.5
    other = aqmlab.run(
        {**base, "seed": 4, "topology": {**WEB["topology"], "bottleneck_rate": "1Gbps"}}
    )
    with pytest.raises(ValueError, match="not of one web workload"):
        aqmlab.web.paired_responses(slow, other)


def test_web_schedule_action_and_bad_keys() -> None:
    doc = {
        **WEB,
        "schedule": [{"at": "5s", "action": "web", "group": 0, "add_sessions": 50}],
    }
    r = aqmlab.run(doc)
    assert r.flows.num_rows == 250
    bad = {**WEB, "traffic": [{"kind": "web", "sessions": 10, "think_shape": 0.5}]}
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.run(bad)
    assert e.value.path == "traffic[0].think_shape"
