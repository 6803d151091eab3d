"""Web traffic (``kind = "web"``): the responses table in memory and on
disk, the response-time CDF, and the load calibration helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aqmlab
from aqmlab.plot import response_cdf

from conftest import aqmlab_cli, assert_clean_error

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


#: Open pages with a page's objects on 32 lanes, 300 sessions: a workload two networks can
#: run request for request.
OPEN_WEB: dict[str, Any] = {
    "kind": "web",
    "sessions": 300,
    "think": "1s",
    "pages": "open",
    "lanes": 32,
    "parallel_objects": True,
}
RED_STAR_ECN: dict[str, Any] = {
    "kind": "red",
    "min_th": 5,
    "max_th": 15,
    "max_p": 0.1,
    "gentle": False,
    "above_max": "mark",
    "ecn": True,
}
OPEN_BASE: dict[str, Any] = {
    **WEB,
    "traffic": [OPEN_WEB],
    "tcp": {"packet_size": 1500, "ecn": True},
}


@pytest.fixture(scope="module")
def slow_fast() -> tuple[aqmlab.RunResult, aqmlab.RunResult]:
    """One open-page workload on a congested 30 Mbit/s RED* with ECN and on a 1 Gbit/s link."""
    return _run_open(3, "30Mbps", RED_STAR_ECN), _run_open(3, "1Gbps")


def test_paired_responses_compare_one_workload_response_by_response(
    slow_fast: tuple[aqmlab.RunResult, aqmlab.RunResult],
) -> None:
    """A congested RED* with ECN and a 1 Gbit/s link run the same requests (a seed fixes the
    workload), so every response both completed has one size, and one start time unless it
    waited for a lane; the congested run is slower on the pairs. Another seed is another
    workload, and the pairing refuses it."""
    slow, fast = slow_fast
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
        {**OPEN_BASE, "seed": 4, "topology": {**WEB["topology"], "bottleneck_rate": "1Gbps"}}
    )
    with pytest.raises(ValueError, match="not of one web workload"):
        aqmlab.web.paired_responses(slow, other)


def _run_open(seed: int, rate: str, aqm: dict[str, Any] | None = None) -> aqmlab.RunResult:
    doc: dict[str, Any] = {
        **OPEN_BASE,
        "seed": seed,
        "topology": {**WEB["topology"], "bottleneck_rate": rate},
    }
    if aqm is not None:
        doc["aqm"] = aqm
    return aqmlab.run(doc)


def test_compare_responses_sums_up_the_pairs(
    slow_fast: tuple[aqmlab.RunResult, aqmlab.RunResult],
) -> None:
    """The summary of a pairing: the fast link completes more responses within every time,
    the differences are b - a with intervals that exclude zero, and the pairs and the responses
    one run alone completed add up to what each run completed. The shares count a response
    the slow run did not complete by its end as slower than the time, where the pairs alone
    would leave it out. Two seeds give an interval over the seeds. A run against itself differs
    by nothing."""
    slow, fast = slow_fast
    c = aqmlab.web.compare_responses(slow, fast)
    assert c.start_s == 2.0 and c.end_s == 12.0
    assert c.runs == 1 and c.interval == "time batches"
    assert [w.t_s for w in c.within] == [0.5, 1.0, 2.0]
    for w in c.within:
        assert w.b >= w.a and w.diff == pytest.approx(w.b - w.a)
        assert 0 < w.ci < 1
        assert w.n >= c.paired * 0.5
    assert c.within[0].diff > c.within[0].ci  # the fast link is faster, beyond the noise
    assert c.mean_diff_s < -c.mean_diff_ci_s < 0
    assert c.mean_diff_s == pytest.approx(c.mean_s[1] - c.mean_s[0])
    assert c.median_s[1] < c.median_s[0]
    assert c.b_faster + c.same + c.b_slower == pytest.approx(1)
    assert c.b_faster > 0.5
    assert 0 < c.sessions <= 300
    # Open pages: a response is either in the pairs or only in the run that completed it.
    assert c.completed[0] == c.paired + c.only[0]
    assert c.completed[1] == c.paired + c.only[1]
    assert c.completed[1] >= c.completed[0] and c.paired > 1000
    # Censoring: over the pairs alone the slow run looks faster than it is.
    p = aqmlab.web.paired_responses(slow, fast)
    sa, sb = p.column("start_s_a").to_numpy(), p.column("start_s_b").to_numpy()
    ok = (np.minimum(sa, sb) >= 2) & (np.maximum(sa, sb) <= 12 - 0.5)
    pairs_only = float(np.mean(p.column("response_time_s_a").to_numpy()[ok] <= 0.5))
    assert c.within[0].a < pairs_only - 0.01, (c.within[0].a, pairs_only)
    assert c.within[0].n > int(np.sum(ok))
    rows = c.rows()
    assert rows[0][0].startswith("responses begun from 2 s") and len(rows) == 2 + 3 + 3
    assert rows[2][0] == "within 0.5 s (begun by 11.5 s)"
    # Later starts keep fewer responses; the within times are the caller's.
    later = aqmlab.web.compare_responses(slow, fast, within=[0.25], start_s=6.0)
    assert later.paired < c.paired and [w.t_s for w in later.within] == [0.25]
    # Two seeds: the figures are the seeds' means, the interval Student's t over the seeds.
    slow4, fast4 = _run_open(4, "30Mbps", RED_STAR_ECN), _run_open(4, "1Gbps")
    c4 = aqmlab.web.compare_responses(slow4, fast4)
    both = aqmlab.web.compare_responses([slow, slow4], [fast, fast4])
    assert both.runs == 2 and both.interval == "seeds"
    assert both.paired == c.paired + c4.paired and both.sessions == c.sessions + c4.sessions
    for w, w1, w4 in zip(both.within, c.within, c4.within, strict=True):
        assert w.diff == pytest.approx((w1.diff + w4.diff) / 2)
        assert w.ci == pytest.approx(12.706 * abs(w1.diff - w4.diff) / 2)
        assert w.n == w1.n + w4.n
    assert both.mean_diff_s == pytest.approx((c.mean_diff_s + c4.mean_diff_s) / 2)
    # The same pair twice: no spread between the seeds.
    twice = aqmlab.web.compare_responses([slow, slow], [fast, fast])
    assert twice.within[0].diff == pytest.approx(c.within[0].diff) and twice.within[0].ci == 0
    with pytest.raises(ValueError, match="one b run for each a run"):
        aqmlab.web.compare_responses([slow, slow], [fast])
    same = aqmlab.web.compare_responses(slow, slow)
    assert same.same == 1 and same.mean_diff_s == 0 and same.only == (0, 0)
    assert all(w.diff == 0 and w.ci == 0 for w in same.within)
    with pytest.raises(ValueError, match="within"):
        aqmlab.web.compare_responses(slow, fast, within=[0.5, 0])
    with pytest.raises(ValueError, match="no response began"):
        aqmlab.web.compare_responses(slow, fast, start_s=100.0)
    with pytest.raises(ValueError, match="not of one web workload"):
        aqmlab.web.compare_responses([slow, slow4], [fast4, fast])


def test_response_intervals() -> None:
    """Student's t over independent values; batch means over equal spans of start times."""
    from aqmlab.web import BATCHES, _batch_ci, _t_ci

    v = [0.1, 0.2, 0.3]
    assert _t_ci(v) == pytest.approx(4.303 * 0.1 / np.sqrt(3))
    assert np.isnan(_t_ci([0.1])) and _t_ci([0.2, 0.2]) == 0
    # Ten spans of [0, 10] s, a value per span: the interval of the ten span means, however
    # many responses each span has.
    vals = np.linspace(-1, 1, BATCHES) ** 2
    t = np.concatenate([np.linspace(i, i + 0.99, 3 + 5 * i) for i in range(BATCHES)])
    d = np.concatenate([np.full(3 + 5 * i, vals[i]) for i in range(BATCHES)])
    assert _batch_ci(d, t, 0.0, 10.0) == pytest.approx(_t_ci(list(vals)))
    # Fewer than two spans with responses: no interval.
    assert np.isnan(_batch_ci(d[:3], t[:3], 0.0, 10.0))


def test_cli_compare_responses(
    slow_fast: tuple[aqmlab.RunResult, aqmlab.RunResult], tmp_path: Path
) -> None:
    """``aqmlab compare --responses`` on two saved runs: a table, markdown and CSV with the
    library's figures; bad flags and folders are one-line errors."""
    slow, fast = slow_fast
    a, b = tmp_path / "slow", tmp_path / "fast"
    slow.save(a)
    fast.save(b)
    c = aqmlab.web.compare_responses(slow, fast, within=[0.5, 1])
    p = aqmlab_cli("compare", "--responses", a, b, "--within", "0.5,1", "--format", "csv")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0] == "figure,unit,a,b,diff,ci"
    within = [ln.split(",") for ln in lines if ln.startswith("within 0.5 s,share")]
    assert len(within) == 1
    assert float(within[0][4]) == pytest.approx(c.within[0].diff)
    md = aqmlab_cli("compare", "--responses", a, b, "--format", "markdown")
    assert md.returncode == 0 and "| within 2 s" in md.stdout, md.stdout
    table = aqmlab_cli("compare", "--responses", a, b, "--from", "6")
    assert table.returncode == 0 and "responses begun from 6 s" in table.stdout, table.stdout
    pooled = aqmlab_cli("compare", "--responses", a, b, a, b, "--format", "csv")
    assert pooled.returncode == 0, pooled.stderr
    assert f"paired,responses,{2 * c.paired},{2 * c.paired}" in pooled.stdout
    assert "runs,pairs of runs,2,2" in pooled.stdout
    assert "over the 2 seeds" in aqmlab_cli("compare", "--responses", a, b, a, b).stdout
    assert_clean_error(aqmlab_cli("compare", "--responses", a))
    assert_clean_error(aqmlab_cli("compare", "--responses", a, b, a))
    assert_clean_error(aqmlab_cli("compare", "--responses", a, b, "--within", "0.5,x"))
    assert_clean_error(aqmlab_cli("compare", "--responses", a, b, "--within", "-1"))
    assert_clean_error(aqmlab_cli("compare", "--responses", a, b, "--from", "100"))
    assert_clean_error(aqmlab_cli("compare", a, b, "--within", "1"))
    assert_clean_error(aqmlab_cli("compare", "--responses", a, tmp_path / "none"))


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
