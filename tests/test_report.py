"""The experiment report (aqmlab.report): metrics, tables beside the paper's, the ranking
check, figures, the HTML page and `aqmlab report`, on output folders built in the test from
tiny real runs (tests/expfolder.py)."""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import expfolder as E
from aqmlab.report import ROWS, build_index, build_report, summary_table
from aqmlab.report import tables as T
from aqmlab.report.data import Output, Row, load_output, parse_experiment
from aqmlab.report.figures import FigureError
from aqmlab.report.html import build
from aqmlab.report.metrics import PointData, evaluate, evaluate_all, step_mean, window_std_mean

from conftest import aqmlab_cli, assert_clean_error


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("exp")
    return {
        "bulk": E.build(root, E.BULK, E.SMALL, fail={("ARED", 2)}),
        "web": E.build(root, E.WEB_EXP, E.WEB),
    }


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return E.build(tmp_path_factory.mktemp("own"), E.OWN, E.SMALL)


@pytest.fixture(scope="module")
def bulk(folders: dict[str, Path]) -> Output:
    return load_output(folders["bulk"])


def test_terminal_table_still_importable() -> None:
    assert ROWS and callable(summary_table)


# ---- seeds combined ------------------------------------------------------------------------


def test_confidence_interval_by_hand() -> None:
    a = T.aggregate([1.0, 2.0, 3.0, 4.0])
    s = math.sqrt(sum((x - 2.5) ** 2 for x in [1, 2, 3, 4]) / 3)  # 1.2910
    half = 3.182 * s / 2
    assert a.n == 4 and a.mean == 2.5
    assert a.lo == pytest.approx(2.5 - half) and a.hi == pytest.approx(2.5 + half)
    assert half == pytest.approx(2.054, abs=1e-3)
    assert T.fmt_agg(a, 2) == "2.50 ± 2.05"


def test_interval_rules() -> None:
    assert T.t975(1) == 12.706 and T.t975(30) == 2.042 and T.t975(45) == 2.021
    assert T.t975(10**6) == 1.960
    # NaN (a failed seed) left out and counted; one seed has no interval.
    a = T.aggregate([5.0, math.nan])
    assert (a.n, a.n_nan, a.mean) == (1, 1, 5.0) and math.isnan(a.lo)
    assert T.fmt_agg(a, 1) == "5.0"
    r = T.aggregate([3.0, 1.0, 2.0], "range")
    assert (r.lo, r.mean, r.hi) == (1.0, 2.0, 3.0)
    assert T.fmt_agg(r, 1) == "1.0-3.0"
    assert not T.aggregate([math.nan]).ok


# ---- ranking --------------------------------------------------------------------------------


def _synthetic(values: dict[str, list[float]], papers: list[dict[str, object]]) -> Output:
    """An output folder in memory: metric "x" from summary.parquet, one row per seed."""
    exp = parse_experiment(
        {
            "experiment": {"name": "syn", "seeds": [1, 2]},
            "scheme": [{"name": s, "set": []} for s in values],
            "metric": [{"name": "x", "summary": "x", "digits": 1, "better": "lower"}],
            "table": {"name": "T", "rows": ["scheme"], "columns": [], "metrics": ["x"]},
            "paper": papers,
        }
    )
    out = Output(Path("/nonexistent"), exp, [], [])
    for s, vs in values.items():
        for seed, v in enumerate(vs, 1):
            out.rows.append(Row(f"{s}{seed}", s, {}, seed, "all", -1, 0.0, 1.0, "ok", "", {"x": v}))
    return out


def _pairs(out: Output) -> list[T.Pair]:
    return T.build_tables(out, evaluate_all(out)).pairs


def test_ranking_kept_and_not_kept() -> None:
    papers = [
        {"scheme": "A", "metric": "x", "value": 1.0},
        {"scheme": "B", "metric": "x", "value": 2.0},
        {"scheme": "C", "metric": "x", "value": 3.0},
    ]
    out = _synthetic({"A": [10, 12], "B": [20, 22], "C": [15, 15]}, papers)
    pairs = {(p.a, p.b): p for p in _pairs(out)}
    assert set(pairs) == {("A", "B"), ("A", "C"), ("B", "C")}
    assert pairs[("A", "B")].kept and pairs[("A", "C")].kept
    bc = pairs[("B", "C")]
    assert (bc.paper, bc.ours, bc.kept) == ("<", ">", False)
    tables = T.build_tables(out, evaluate_all(out))
    assert tables.kept == (2, 3)
    assert tables.ranking_summary() == [("x", 2, 3, 0)]


def test_ranking_ties_at_the_papers_precision() -> None:
    # The paper's 2.0 and 2.0 are a tie: kept only if ours are equal at 1 decimal.
    papers = [
        {"scheme": "A", "metric": "x", "value": 2.0},
        {"scheme": "B", "metric": "x", "value": 2.0},
    ]
    (p,) = _pairs(_synthetic({"A": [5.01, 5.03], "B": [4.98, 5.0]}, papers))
    assert (p.paper, p.ours, p.kept) == ("=", "=", True)
    (p,) = _pairs(_synthetic({"A": [5.0, 5.0], "B": [6.0, 6.0]}, papers))
    assert (p.paper, p.ours, p.kept) == ("=", "<", False)
    # Overlapping ranges are a tie too; disjoint ones are ordered.
    ranges = [
        {"scheme": "A", "metric": "x", "range": [1.0, 3.0]},
        {"scheme": "B", "metric": "x", "range": [2.0, 4.0]},
        {"scheme": "C", "metric": "x", "range": [5.0, 6.0]},
    ]
    pairs = {(p.a, p.b): p for p in _pairs(_synthetic({"A": [1], "B": [1], "C": [9]}, ranges))}
    assert pairs[("A", "B")].paper == "=" and pairs[("A", "B")].kept
    assert pairs[("A", "C")].paper == "<" and pairs[("A", "C")].kept
    # A "range" metric: our min-max ranges against the paper's, overlapping is a tie.
    out = _synthetic({"A": [1, 5], "B": [4, 8], "C": [9, 9]}, ranges)
    out.experiment.metrics["x"] = replace(out.experiment.metrics["x"], stat="range")
    pairs = {(p.a, p.b): p for p in _pairs(out)}
    assert (pairs[("A", "B")].ours, pairs[("A", "B")].kept) == ("=", True)  # 1-5 and 4-8
    assert (pairs[("B", "C")].ours, pairs[("B", "C")].kept) == ("<", True)
    out = _synthetic({"A": [1, 2], "B": [3, 8], "C": [9, 9]}, ranges)
    out.experiment.metrics["x"] = replace(out.experiment.metrics["x"], stat="range")
    (ab,) = [p for p in _pairs(out) if (p.a, p.b) == ("A", "B")]
    assert (ab.paper, ab.ours, ab.kept) == ("=", "<", False)
    # A scheme the paper gives no number for is not compared; one without data of ours counts
    # as "no data", neither kept nor not.
    out = _synthetic({"A": [1.0], "B": [math.nan], "D": [0.0]}, papers)
    (p,) = _pairs(out)
    assert (p.a, p.b, p.kept) == ("A", "B", None)


def test_a_band_orders_only_what_it_does_not_overlap() -> None:
    """A paper range marked as a band (one range for several cells) gives no order with a range
    or value it overlaps: "not given by the paper", neither kept nor compared. Disjoint ranges
    still order a pair; overlapping ranges that are not bands are still a tie."""
    papers = [
        {"scheme": "A", "metric": "x", "range": [1.0, 3.0], "band": True},
        {"scheme": "B", "metric": "x", "range": [2.0, 4.0]},
        {"scheme": "C", "metric": "x", "range": [5.0, 6.0], "band": True},
        {"scheme": "D", "metric": "x", "value": 2.5},
        {"scheme": "E", "metric": "x", "range": [3.5, 4.5]},
    ]
    values = {"A": [1.0], "B": [2.0], "C": [9.0], "D": [0.5], "E": [9.0]}
    tables = T.build_tables(out := _synthetic(values, papers), evaluate_all(out))
    pairs = {(p.a, p.b): p for p in tables.pairs}
    for ab in (("A", "B"), ("A", "D")):
        p = pairs[ab]
        assert (p.given, p.paper, p.kept, p.verdict) == (False, "?", None, T.NOT_GIVEN), ab
    assert (pairs[("A", "C")].paper, pairs[("A", "C")].kept) == ("<", True)
    assert (pairs[("B", "E")].paper, pairs[("B", "E")].kept) == ("=", False)  # not bands: a tie
    assert tables.not_given() == {"x": 2}
    (summary,) = tables.ranking_summary()
    assert summary == ("x", tables.kept[0], len(pairs) - 2, 0)
    md = T.to_markdown(tables)
    assert "| x | all | A vs B | no order: A 1.0-3.0, B 2.0-4.0 " in md
    assert md.count(f"| {T.NOT_GIVEN} |") == 2 and "2 pairs not given by the paper" in md


def test_rem_5_1_bands_are_not_given_by_the_paper() -> None:
    """rem-5.1: the REM paper gives each scheme's goodput as one band over the five periods
    (DropTail 62-91 %, RED(10:30) 82-95 %, RED(20:80) and REM 90-96 %). Every two of them
    overlap, so the paper orders no pair: the 30 pairs are not given by the paper, not 30 pairs
    not kept; read as ties they would all be lost against any ordering of ours."""
    from aqmlab.experiments import load_experiment
    from aqmlab.experiments.catalog import find_preset

    preset = find_preset("rem-5.1")
    assert preset is not None
    exp = parse_experiment(load_experiment(preset.path).doc)
    assert all(p.band for p in exp.papers)
    # aqmlab's goodput per period, seed 1 (docs/fidelity.md, item 6), in % of the link.
    ours = {
        "DropTail": [55.9, 97.6, 98.8, 98.8, 98.6],
        "RED(10:30)": [82.5, 87.1, 91.4, 94.6, 97.2],
        "RED(20:80)": [86.9, 91.4, 93.4, 97.1, 98.5],
        "REM": [87.9, 95.9, 96.9, 97.0, 97.3],
    }
    out = Output(Path("/nonexistent"), exp, [], [])
    scale = exp.metrics["goodput"].scale
    for s, per_phase in ours.items():
        for i, (phase, v) in enumerate(zip(exp.phases, per_phase, strict=True)):
            values = {"flows.goodput_bps_total": v / scale}
            out.rows.append(Row(f"{s}-{i}", s, {}, 1, phase, i, 0.0, 1.0, "ok", "", values))
    tables = T.build_tables(out, evaluate_all(out))
    goodput = [p for p in tables.pairs if p.metric == "goodput"]
    assert len(goodput) == 30
    assert all(p.verdict == T.NOT_GIVEN and p.kept is None for p in goodput)
    assert tables.kept == (0, 0) and tables.not_given() == {"goodput": 30}
    assert tables.ranking_summary() == [("goodput", 0, 0, 0)]
    assert "**no**" not in T.to_markdown(tables)
    # Read as ties (no bands), the same figures gave "0 of 30 pairs kept".
    exp.papers = [replace(p, band=False) for p in exp.papers]
    tables = T.build_tables(out, evaluate_all(out))
    assert tables.kept == (0, 30) and not tables.not_given()


def test_precision_from_the_papers_numbers() -> None:
    exp = parse_experiment({"metric": [{"name": "m", "summary": "m"}]})
    ps = parse_experiment(
        {
            "paper": [
                {"scheme": "a", "metric": "m", "value": 99.25},
                {"scheme": "b", "metric": "m", "range": [1, 2.5]},
            ]
        }
    ).papers
    assert T.precision(exp.metrics["m"], ps) == 2


# ---- derived metrics --------------------------------------------------------------------------


def _ok_row(out: Output, scheme: str, phase: str, flows: int = 10, seed: int = 1) -> Row:
    for r in out.rows:
        if (r.scheme, r.phase, r.seed, r.ok) == (scheme, phase, seed, True) and r.factors[
            "flows"
        ] == flows:
            return r
    raise AssertionError("no such row")


def test_queue_metrics_by_hand(bulk: Output) -> None:
    row = _ok_row(bulk, "RED", "2-5 s")
    q = pq.read_table(bulk.point_dir(row.id) / "queue.parquet").to_pylist()
    samples = [r["queue_pkts"] for r in q if 2.0 <= r["time_s"] < 5.0]
    assert len(samples) == 300
    mean = sum(samples) / len(samples)
    std = math.sqrt(sum((x - mean) ** 2 for x in samples) / len(samples))
    m = bulk.experiment.metrics
    assert evaluate(bulk, row, m["queue"]) == pytest.approx(mean, rel=1e-12)
    std_metric = parse_experiment({"metric": [{"name": "s", "derived": "queue_std"}]}).metrics
    assert evaluate(bulk, row, std_metric["s"]) == pytest.approx(std, rel=1e-12)
    # queue_std_mean, window 1.5 s over [2, 5): two whole windows.
    w1 = [r["queue_pkts"] for r in q if 2.0 <= r["time_s"] < 3.5]
    w2 = [r["queue_pkts"] for r in q if 3.5 <= r["time_s"] < 5.0]
    expected = (float(np.std(w1)) + float(np.std(w2))) / 2
    assert evaluate(bulk, row, m["deviation"]) == pytest.approx(expected, rel=1e-12)
    # In mean-size packets: bytes / 500 (tcp.packet_size of the small scenario).
    mp = parse_experiment(
        {"metric": [{"name": "q", "derived": "queue_mean", "args": {"unit": "mean_pkts"}}]}
    ).metrics["q"]
    qb = [r["queue_bytes"] for r in q if 2.0 <= r["time_s"] < 5.0]
    assert evaluate(bulk, row, mp) == pytest.approx(sum(qb) / len(qb) / 500, rel=1e-12)


def test_sampled_queue_mean_is_close_to_the_exact_one(bulk: Output) -> None:
    row = _ok_row(bulk, "ARED", "all")
    summ = json.loads((bulk.point_dir(row.id) / "summary.json").read_text())
    exact = summ["bottleneck"]["queue_mean_pkts"]
    sampled = evaluate(bulk, row, bulk.experiment.metrics["queue"])
    assert sampled == pytest.approx(exact, rel=0.05, abs=0.5)


def test_window_rule() -> None:
    t = np.arange(0, 10, 0.5)
    v = np.where(t < 5, 0.0, 1.0) + (np.arange(len(t)) % 2)
    # Windows [0, 4), [4, 8) and the partial [8, 10) (half a window: counted).
    ws = [np.std(v[(t >= a) & (t < b)]) for a, b in ((0, 4), (4, 8), (8, 10))]
    assert window_std_mean(t, v, 0, 10, 4) == pytest.approx(np.mean(ws))
    # [0, 9): the partial [8, 9) is a quarter window: left out.
    assert window_std_mean(t, v, 0, 9, 4) == pytest.approx(np.mean(ws[:2]))


def test_step_mean_by_hand() -> None:
    ts, vs = np.array([0.0, 2.0, 3.5]), np.array([1.0, 3.0, 5.0])
    assert step_mean(ts, vs, 1.0, 4.0) == pytest.approx((1 * 1 + 3 * 1.5 + 5 * 0.5) / 3)
    assert step_mean(ts, vs, 2.0, 3.0) == 3.0


def _fake_point(root: Path, params: dict[str, list[object]], responses: pa.Table) -> PointData:
    d = root / "points" / "p"
    d.mkdir(parents=True)
    pq.write_table(pa.table(params), d / "params.parquet")
    pq.write_table(responses, d / "responses.parquet")
    return PointData(d)


def test_param_and_response_metrics_by_hand(tmp_path: Path) -> None:
    rt = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    ends = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 11.0]
    _fake_point(
        tmp_path,
        {
            "time_s": [0.0, 0.0, 2.0, 4.0],
            "name": ["max_p", "min_th", "max_p", "max_p"],
            "value": [0.1, 20.0, 0.2, 0.4],
        },
        pa.table(
            {
                "response_time_s": rt,
                "end_s": ends,
                "start_s": [0.0] * 10,
                "group": [2] * 5 + [3] * 5,
            }
        ),
    )
    exp = parse_experiment(
        {
            "metric": [
                {"name": "rm", "derived": "response_mean"},
                {"name": "rm2", "derived": "response_mean", "args": {"group": 2}},
                {"name": "rm3", "derived": "response_mean", "args": {"group": 3}},
                {"name": "rm4", "derived": "response_mean", "args": {"group": 4}},
                {"name": "pm", "derived": "param_mean", "args": {"name": "max_p"}},
                {"name": "pf", "derived": "param_final", "args": {"name": "max_p"}},
                {"name": "w", "derived": "response_within", "args": {"t_s": 0.45}},
                {"name": "q9", "derived": "response_quantile", "args": {"q": 0.9}},
                {"name": "n", "derived": "completed_requests"},
                {"name": "bad", "derived": "param_mean", "args": {"name": "nothere"}},
                {"name": "typo", "derived": "queue_meen"},
            ]
        }
    )
    out = Output(tmp_path, exp, [], [])
    row = Row("p", "s", {}, 1, "all", -1, 1.0, 10.0, "ok", "", {})
    m = exp.metrics
    # max_p: 0.1 on [1, 2), 0.2 on [2, 4), 0.4 on [4, 10]: (0.1 + 0.4 + 2.4) / 9.
    assert evaluate(out, row, m["pm"]) == pytest.approx(2.9 / 9)
    assert evaluate(out, row, m["pf"]) == 0.4
    # Responses that ended in [1, 10]: the first nine; four of them took <= 0.45 s.
    assert evaluate(out, row, m["w"]) == pytest.approx(4 / 9)
    assert evaluate(out, row, m["q9"]) == pytest.approx(0.9)  # nearest rank: ceil(8.1) = 9th
    assert evaluate(out, row, m["n"]) == 9
    # Their mean 0.5 s; group 2's (0.1-0.5) 0.3, group 3's (0.6-0.9; its fifth ended at 11 s)
    # 0.75; group 4 has none.
    assert evaluate(out, row, m["rm"]) == pytest.approx(0.5)
    assert evaluate(out, row, m["rm2"]) == pytest.approx(0.3)
    assert evaluate(out, row, m["rm3"]) == pytest.approx(0.75)
    assert math.isnan(evaluate(out, row, m["rm4"]))
    assert any("no web response of group 4 ended in [1, 10] s" in w for w in out.warnings)
    assert math.isnan(evaluate(out, row, m["bad"]))
    assert math.isnan(evaluate(out, row, m["typo"]))
    assert any("no 'nothere' (it has max_p, min_th)" in w for w in out.warnings)
    assert any("unknown derived metric 'queue_meen'" in w for w in out.warnings)


def test_derived_metrics_over_a_periodic_phase(tmp_path: Path) -> None:
    """A periodic phase over [1, 10] s, 1 s every 2 s: the responses that ended in its
    windows [1, 2), [3, 4), ..., [9, 10) count (those of 1, 3, 5, 7 and 9 s: mean 0.5 s);
    goodput_bytes is over the 5 s its windows measured; param_mean is not defined over
    windows (NaN and a warning naming the phase's windows)."""
    rt = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    ends = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    p = _fake_point(
        tmp_path,
        {"time_s": [0.0], "name": ["max_p"], "value": [0.1]},
        pa.table({"response_time_s": rt, "end_s": ends, "start_s": [0.0] * 10, "group": [0] * 10}),
    )
    phase = {
        "start_s": 1.0,
        "end_s": 10.0,
        "every_s": 2.0,
        "length_s": 1.0,
        "offset_s": 0.0,
        "windows": 5,
        "measured_s": 5.0,
        "flows": {"goodput_bps_total": 8e6},
    }
    (p.path / "summary.json").write_text(json.dumps({"phases": [phase]}))
    exp = parse_experiment(
        {
            "phase": [{"name": "odd seconds"}],
            "metric": [
                {"name": "rm", "derived": "response_mean"},
                {"name": "n", "derived": "completed_requests"},
                {"name": "gb", "derived": "goodput_bytes"},
                {"name": "pm", "derived": "param_mean", "args": {"name": "max_p"}},
            ],
        }
    )
    out = Output(tmp_path, exp, [], [])
    row = Row("p", "s", {}, 1, "odd seconds", 0, 1.0, 10.0, "ok", "", {})
    m = exp.metrics
    assert evaluate(out, row, m["n"]) == 5
    assert evaluate(out, row, m["rm"]) == pytest.approx(0.5)
    assert evaluate(out, row, m["gb"]) == pytest.approx(8e6 * 5 / 8)
    assert math.isnan(evaluate(out, row, m["pm"]))
    assert any(
        "param_mean is not defined over the windows of a periodic phase (every 2 s, 1 s long)" in w
        for w in out.warnings
    )


def test_a_table_shows_the_phases_it_names() -> None:
    doc = {
        "phase": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "metric": [{"name": "d", "summary": "bottleneck.queuing_delay_mean_s"}],
        "table": [{"name": "t", "rows": ["scheme"], "columns": ["phase"], "metrics": ["d"]}],
    }
    exp = parse_experiment({**doc, "table": [{**doc["table"][0], "phases": ["c", "a"]}]})
    assert exp.tables[0].phases == ["c", "a"]
    assert [v for v, _ in T._dim_values(exp, "phase", ["d"], exp.tables[0].phases)] == ["c", "a"]


def test_group_loss_by_hand(tmp_path: Path) -> None:
    """Group 1's two started flows sent 300 + 100 data packets and lost 6 + 2: 8 / 400; its
    flow that never started (NaN start, 50 sent by no one) does not count; group 2 has none;
    group 1's rate over group 0's (10 / 1000) is 2."""
    d = tmp_path / "points" / "p"
    d.mkdir(parents=True)
    flows = {
        "group": [0, 1, 1, 1],
        "start_s": [0.0, 0.0, 1.0, float("nan")],
        "data_sent": [1000, 300, 100, 50],
        "drops": [10, 6, 2, 5],
    }
    pq.write_table(pa.table(flows), d / "flows.parquet")
    exp = parse_experiment(
        {
            "metric": [
                {"name": "l0", "derived": "group_loss", "args": {"group": 0}},
                {"name": "l1", "derived": "group_loss", "args": {"group": 1}},
                {"name": "l2", "derived": "group_loss", "args": {"group": 2}},
                {"name": "r", "derived": "loss_ratio", "args": {"num": 1, "den": 0}},
            ]
        }
    )
    out = Output(tmp_path, exp, [], [])
    row = Row("p", "s", {}, 1, "all", -1, 1.0, 10.0, "ok", "", {})
    assert evaluate(out, row, exp.metrics["l0"]) == pytest.approx(0.01)
    assert evaluate(out, row, exp.metrics["l1"]) == pytest.approx(8 / 400)
    assert math.isnan(evaluate(out, row, exp.metrics["l2"]))
    assert evaluate(out, row, exp.metrics["r"]) == pytest.approx((8 / 400) / 0.01)
    assert any("no started flow of group 2" in w for w in out.warnings)


def test_group_jain_by_hand(tmp_path: Path) -> None:
    """Groups 0 and 2's started flows delivered 1, 1 and 4 Mbit/s: (6)^2 / (3 x 18) = 2/3;
    group 1's (a web transfer at 0.01) and a flow that never started are left out; group 0
    alone: 1; group 3 has none; a group given as one number is refused."""
    d = tmp_path / "points" / "p"
    d.mkdir(parents=True)
    flows = {
        "group": [0, 0, 1, 2, 2],
        "start_s": [0.0, 1.0, 0.0, 0.0, float("nan")],
        "goodput_bps": [1e6, 1e6, 1e4, 4e6, 0.0],
    }
    pq.write_table(pa.table(flows), d / "flows.parquet")
    exp = parse_experiment(
        {
            "metric": [
                {"name": "j02", "derived": "group_jain", "args": {"groups": [0, 2]}},
                {"name": "j0", "derived": "group_jain", "args": {"groups": [0]}},
                {"name": "j3", "derived": "group_jain", "args": {"groups": [3]}},
                {"name": "bad", "derived": "group_jain", "args": {"groups": 0}},
            ]
        }
    )
    out = Output(tmp_path, exp, [], [])
    row = Row("p", "s", {}, 1, "all", -1, 1.0, 10.0, "ok", "", {})
    assert evaluate(out, row, exp.metrics["j02"]) == pytest.approx(2 / 3)
    assert evaluate(out, row, exp.metrics["j0"]) == pytest.approx(1.0)
    assert math.isnan(evaluate(out, row, exp.metrics["j3"]))
    assert math.isnan(evaluate(out, row, exp.metrics["bad"]))
    assert any("no started flow of groups [3]" in w for w in out.warnings)
    assert any("args.groups, a list of [[traffic]] indices (got 0)" in w for w in out.warnings)


def test_summary_sum_by_hand(tmp_path: Path) -> None:
    """A group's delay at two links in sequence: 0.004 + 0.012 s over the whole run, 0.001 +
    0.002 s in the phase's own entry; a path that is not there, or paths given as one string,
    give NaN and a warning that names the fault."""
    d = tmp_path / "points" / "p"
    d.mkdir(parents=True)

    def links(at_l: float, at_m: float) -> list[dict[str, object]]:
        return [
            {"name": "mr", "groups": {"0": {"delay_mean_s": at_m}}},
            {"name": "lm", "groups": {"0": {"delay_mean_s": at_l}}},
        ]

    summary = {"links": links(0.004, 0.012), "phases": [{"links": links(0.001, 0.002)}]}
    (d / "summary.json").write_text(json.dumps(summary))
    paths = ["links.lm.groups.0.delay_mean_s", "links.mr.groups.0.delay_mean_s"]
    exp = parse_experiment(
        {
            "phase": [{"name": "first"}],
            "metric": [
                {"name": "path", "derived": "summary_sum", "args": {"paths": paths}},
                {"name": "gone", "derived": "summary_sum", "args": {"paths": ["links.x.y"]}},
                {"name": "bad", "derived": "summary_sum", "args": {"paths": paths[0]}},
            ],
        }
    )
    out = Output(tmp_path, exp, [], [])
    whole = Row("p", "s", {}, 1, "all", -1, 10.0, 60.0, "ok", "", {})
    first = Row("p", "s", {}, 1, "first", 0, 10.0, 30.0, "ok", "", {})
    assert evaluate(out, whole, exp.metrics["path"]) == pytest.approx(0.016)
    assert evaluate(out, first, exp.metrics["path"]) == pytest.approx(0.003)
    assert math.isnan(evaluate(out, whole, exp.metrics["gone"]))
    assert math.isnan(evaluate(out, whole, exp.metrics["bad"]))
    assert any("summary.json has no 'links.x.y'" in w for w in out.warnings)
    assert any("args.paths, a list of dotted summary paths" in w for w in out.warnings)


def test_summary_paths_step_into_lists_by_name_or_index() -> None:
    from aqmlab.report.metrics import MetricError, _entry_value

    entry = {
        "links": [
            {"name": "bottleneck", "loss_rate": 0.1},
            {"name": "bottleneck-rev", "loss_rate": 0.2},
        ]
    }
    assert _entry_value(entry, "links.bottleneck-rev.loss_rate") == 0.2
    assert _entry_value(entry, "links.0.loss_rate") == 0.1
    for bad in ("links.nosuch.loss_rate", "links.2.loss_rate", "links.bottleneck.x"):
        with pytest.raises(MetricError, match="has no"):
            _entry_value(entry, bad)


def test_param_of_a_static_scheme_is_its_configured_value(bulk: Output) -> None:
    m = bulk.experiment.metrics["max_p"]
    assert evaluate(bulk, _ok_row(bulk, "RED", "2-5 s"), m) == 0.1  # small.toml's max_p
    ared = evaluate(bulk, _ok_row(bulk, "ARED", "2-5 s"), m)
    assert 0 < ared <= 0.5 and ared != 0.1  # ARED adapts it


def test_goodput_and_summary_metrics(bulk: Output) -> None:
    row = _ok_row(bulk, "RED", "5-8 s", flows=20, seed=2)
    summ = json.loads((bulk.point_dir(row.id) / "summary.json").read_text())
    ph = summ["phases"][1]
    g = parse_experiment({"metric": [{"name": "g", "derived": "goodput_bytes"}]}).metrics["g"]
    assert evaluate(bulk, row, g) == pytest.approx(ph["flows"]["goodput_bps_total"] * 3 / 8)
    u = bulk.experiment.metrics["utilisation"]
    assert evaluate(bulk, row, u) == ph["bottleneck"]["utilization"]


def test_missing_data_is_nan_with_a_warning(folders: dict[str, Path], tmp_path: Path) -> None:
    d = tmp_path / "copy"
    shutil.copytree(folders["bulk"], d)
    out = load_output(d)
    row = _ok_row(out, "RED", "all")
    (d / "points" / row.id / "queue.parquet").unlink()
    assert math.isnan(evaluate(out, row, out.experiment.metrics["queue"]))
    assert any("queue.parquet: missing" in w for w in out.warnings)
    nope = parse_experiment({"metric": [{"name": "z", "summary": "bottleneck.nope"}]})
    assert math.isnan(evaluate(out, row, nope.metrics["z"]))
    assert any("no column 'bottleneck.nope'" in w for w in out.warnings)
    # And the whole report still builds, listing what it could not compute.
    page = build_report(d).read_text()
    assert "queue.parquet: missing" in page


# ---- tables -------------------------------------------------------------------------------


def test_table_layout(bulk: Output) -> None:
    tables = T.build_tables(bulk, evaluate_all(bulk))
    t1 = [t for t in tables.tables if t.name == "Table 1"]
    # flows is not in Table 1's layout: one table per value.
    assert [t.slice for t in t1] == ["flows = 10", "flows = 20"]
    t = t1[0]
    assert t.row_dims == ["scheme"] and [r[0] for r in t.row_labels] == ["RED", "ARED"]
    assert t.col_headers == [
        ["utilisation (%)", "utilisation (%)", "queue (pkts)", "queue (pkts)"],
        ["2-5 s", "5-8 s", "2-5 s", "5-8 s"],
    ]
    c = t.cells[0][0]
    assert c is not None and (c.scheme, c.phase, c.metric.name) == ("RED", "2-5 s", "utilisation")
    assert c.paper is not None and c.paper.value == 90.0
    assert c.diff == pytest.approx(c.ours.mean - 90.0)
    assert c.ours.n == 2  # two seeds of RED
    ared = t.cells[1][0]
    assert ared is not None and (ared.ours.n, ared.ours.n_nan) == (1, 1)  # seed 2 failed
    # Table 2: flows down, schemes across; the range metric as min-max, the paper's range.
    (t2,) = [t for t in tables.tables if t.name == "Table 2"]
    assert [r[0] for r in t2.row_labels] == ["10", "20"]
    assert t2.col_headers[1] == ["RED", "ARED"]
    cell = t2.cells[1][0]
    assert cell is not None and cell.ours.stat == "range" and cell.paper is not None
    assert cell.paper.range == (5.0, 9.0)
    assert cell.ours.lo == min(cell.values) and cell.ours.hi == max(cell.values)


def test_a_table_fixing_a_factor_shows_that_value_only(bulk: Output) -> None:
    """``factors = { flows = 20 }``: one table, of the flows = 20 points (not one per value);
    a value the run lacks (a quick form without it) leaves the table out."""
    import dataclasses

    spec = next(t for t in bulk.experiment.tables if t.name == "Table 1")
    fixed = [
        dataclasses.replace(spec, name="only 20", factors={"flows": 20}),
        dataclasses.replace(spec, name="none", factors={"flows": 99}),
    ]
    out = dataclasses.replace(bulk, experiment=dataclasses.replace(bulk.experiment, tables=fixed))
    tables = T.build_tables(out, evaluate_all(out))
    (t,) = tables.tables
    assert (t.name, t.slice) == ("only 20", "")
    whole = [x for x in T.build_tables(bulk, evaluate_all(bulk)).tables if x.name == "Table 1"]
    ref = next(x for x in whole if x.slice == "flows = 20")
    assert [[c and c.ours.mean for c in r] for r in t.cells] == [
        [c and c.ours.mean for c in r] for r in ref.cells
    ]


def test_a_table_shows_the_values_of_a_factor_it_picks(bulk: Output) -> None:
    """``factors = { flows = [20] }`` with flows laying out the rows: those rows only, in
    the order given, as in the whole table; values the run lacks are left out, and the table
    with them all."""
    import dataclasses

    spec = next(t for t in bulk.experiment.tables if t.name == "Table 2")
    picked = [
        dataclasses.replace(spec, name="20 then 10", factors={"flows": [20, 10]}),
        dataclasses.replace(spec, name="20", factors={"flows": [99, 20]}),
        dataclasses.replace(spec, name="none", factors={"flows": [99]}),
    ]
    out = dataclasses.replace(bulk, experiment=dataclasses.replace(bulk.experiment, tables=picked))
    tables = T.build_tables(out, evaluate_all(out)).tables
    assert [t.name for t in tables] == ["20 then 10", "20"]
    whole = next(t for t in T.build_tables(bulk, evaluate_all(bulk)).tables if t.name == "Table 2")

    def means(t: T.ReportTable) -> list[list[float | None]]:
        return [[c.ours.mean if isinstance(c, T.Cell) else None for c in r] for r in t.cells]

    assert [r[0] for r in tables[0].row_labels] == ["20", "10"]
    assert means(tables[0]) == means(whole)[::-1]
    assert [r[0] for r in tables[1].row_labels] == ["20"] and means(tables[1]) == means(whole)[1:]


def test_ranking_on_the_real_folder_is_consistent(bulk: Output) -> None:
    tables = T.build_tables(bulk, evaluate_all(bulk))
    assert len(tables.pairs) == 2  # utilisation and queue at flows 10; deviation has one scheme
    for p in tables.pairs:
        key = ((0,), p.phase)
        a = tables.cells[(p.a, key[0], p.phase, p.metric)].ours.mean
        b = tables.cells[(p.b, key[0], p.phase, p.metric)].ours.mean
        assert p.ours == ("=" if round(a, 1) == round(b, 1) else ("<" if a < b else ">"))
        assert p.kept == (p.ours == p.paper)
    (q,) = [p for p in tables.pairs if p.metric == "queue"]
    assert q.paper == "="  # 25.0 and 25.0


def test_markdown_and_rich(bulk: Output) -> None:
    from rich.console import Console

    tables = T.build_tables(bulk, evaluate_all(bulk))
    md = T.to_markdown(tables)
    assert "### Table 1 (flows = 10)" in md and "paper 90.0, Δ " in md
    assert (
        "| utilisation | phase 2-5 s, flows = 10 | RED vs ARED | RED > ARED (90.0 vs 80.0) |" in md
    )
    console = Console(width=200, record=True)
    console.print(T.to_rich(tables.tables[0]))
    text = console.export_text()
    assert "paper 90.0" in text and "2-5 s" in text


# ---- ns-2.35 beside the paper --------------------------------------------------------------

NS2_NOTE = "ns-2.35, seed 1: tests/ns2/made-up.tcl, for the test"


def _with_ns2(src: Path, dst: Path, ns2: list[dict[str, object]]) -> Path:
    """A copy of an output folder whose experiment.json has these [[ns2]] entries."""
    shutil.copytree(src, dst)
    shutil.rmtree(dst / "report", ignore_errors=True)
    ej = dst / "experiment.json"
    doc = json.loads(ej.read_text())
    doc["ns2"] = ns2
    ej.write_text(json.dumps(doc))
    return dst


def test_ns2_figure_is_a_third_value_where_given(folders: dict[str, Path], tmp_path: Path) -> None:
    from rich.console import Console

    d = _with_ns2(
        folders["bulk"],
        tmp_path / "bulk-ns2",
        [
            {"scheme": "RED", "phase": "2-5 s", "factors": {"flows": 10},
             "metric": "utilisation", "value": 91.5, "note": NS2_NOTE},
            {"scheme": "ARED", "phase": "5-8 s", "metric": "queue", "value": 12.5, "note": ""},
        ],
    )  # fmt: skip
    out = load_output(d)
    tables = T.build_tables(out, evaluate_all(out))
    t = next(t for t in tables.tables if t.title == "Table 1 (flows = 10)")
    red = t.cells[0][0]
    assert red is not None and (red.scheme, red.phase, red.metric.name) == (
        "RED",
        "2-5 s",
        "utilisation",
    )
    assert red.ns2 is not None and red.text_ns2() == "91.5"
    d_ns2 = red.ours.mean - 91.5
    assert red.text_ns2_diff() == f"Δ {'+' if d_ns2 >= 0 else '-'}{abs(d_ns2):.1f}"
    # The queue entry names no factor: it is ARED's at both flows; no other cell has one.
    with_ns2 = {(c.scheme, c.phase, c.metric.name, c.factors) for c in tables.cells.values()
                if c.ns2 is not None}  # fmt: skip
    assert with_ns2 == {
        ("RED", "2-5 s", "utilisation", (0,)),
        ("ARED", "5-8 s", "queue", (0,)),
        ("ARED", "5-8 s", "queue", (1,)),
    }
    # ns-2's figures take no part in the ranking.
    plain = load_output(folders["bulk"])
    assert tables.kept == T.build_tables(plain, evaluate_all(plain)).kept
    # tables.md: the third line in the cell, and the figure's note.
    md = T.to_markdown(tables)
    assert f"paper 90.0, {red.text_diff()}<br>ns-2.35 91.5, {red.text_ns2_diff()} |" in md
    assert f"- RED, phase 2-5 s, flows = 10, utilisation 91.5. {NS2_NOTE}" in md
    assert md.count("<br>ns-2.35 ") == 3
    # The terminal's table.
    console = Console(width=250, record=True)
    console.print(T.to_rich(t))
    assert f"ns-2.35 91.5  {red.text_ns2_diff()}" in console.export_text()
    # The page, its tables.md, its figure (ARED's queue as an open square) and the CLI.
    page = build_report(d).read_text()
    assert f'<span class="ns2">ns-2.35 91.5</span> <span class="diff">{red.text_ns2_diff()}' in page
    assert NS2_NOTE in page
    assert "ns-2.35 91.5" in (d / "report" / "tables.md").read_text()
    assert "ns-2.35" in (d / "report" / "queue-phases.svg").read_text()
    p = aqmlab_cli("report", d)
    assert p.returncode == 0, p.stderr
    assert "ns-2.35 91.5" in p.stdout
    # Without [[ns2]] entries nothing of ns-2 is shown.
    plain_page = build_report(folders["bulk"]).read_text()
    assert "ns-2.35" not in plain_page
    assert "ns-2.35" not in (folders["bulk"] / "report" / "tables.md").read_text()


# ---- report folder, HTML, CLI -------------------------------------------------------------


def test_report_folder_and_page(folders: dict[str, Path]) -> None:
    index = build_report(folders["bulk"])
    d = index.parent
    for name in ("queue", "util-flows", "queue-phases"):
        assert (d / f"{name}.png").stat().st_size > 5000
        assert (d / f"{name}.svg").read_text().lstrip().startswith("<?xml")
    page = index.read_text()
    assert page.count('<img src="data:image/png;base64,') == 3
    assert "<script" not in page
    # Offline: nothing is fetched from elsewhere (links to local files only).
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "aqmlab sweep test-bulk.toml" in page  # the command
    assert "simulated failure for the tests" in page  # failures listed
    assert "<strong>everything</strong>" in page  # notes rendered
    summary = json.loads((d / "summary.json").read_text())
    assert summary["failed"] == 2 and summary["compared"] == 2
    md = (d / "tables.md").read_text()
    # Rebuilding from the same results gives the same tables.
    build_report(folders["bulk"])
    assert (d / "tables.md").read_text() == md


def test_web_report_figures(folders: dict[str, Path]) -> None:
    index = build_report(folders["web"])
    page = index.read_text()
    assert page.count("data:image/png;base64,") == 2
    assert "not drawn" not in page


def test_index_page(folders: dict[str, Path], tmp_path: Path) -> None:
    out = build_index([folders["bulk"], folders["web"]], tmp_path / "all.html")
    page = out.read_text()
    assert "test-bulk" in page and "test-web" in page
    # bulk: the queue pair is a tie in the paper and not in ours, so never kept; the
    # utilisation pair is kept when RED's utilisation is above ARED's, as in the paper.
    pairs = json.loads((build_report(folders["bulk"]).parent / "summary.json").read_text())
    kept, compared = pairs["kept"], pairs["compared"]
    assert compared > 0 and kept < compared
    verdict = "not kept" if kept == 0 else f"partly kept ({100 * kept / compared:.0f} %)"
    assert verdict in page
    assert "no paper values" in page  # web: the paper gives no number
    for href in re.findall(r'href="([^"]+)"', page):
        assert (out.parent / href).is_file()


def test_cli_report(folders: dict[str, Path], tmp_path: Path) -> None:
    p = aqmlab_cli("report", folders["bulk"], folders["web"], "--index", tmp_path / "i.html")
    assert p.returncode == 0, p.stderr
    assert "Table 1 (flows = 10)" in p.stdout and "paper 90.0" in p.stdout
    assert "report in" in p.stdout and (tmp_path / "i.html").is_file()


def test_cli_report_bad_folder(tmp_path: Path) -> None:
    assert_clean_error(aqmlab_cli("report", tmp_path / "nope"))
    assert_clean_error(aqmlab_cli("report", tmp_path))
    (tmp_path / "experiment.json").write_text("{not json")
    p = aqmlab_cli("report", tmp_path)
    assert_clean_error(p)
    assert "experiment.json" in p.stderr


def test_envelope_keeps_every_peak() -> None:
    from aqmlab.report.figures import envelope

    t = np.arange(100_000, dtype=np.float64)
    v = np.sin(t / 50.0) + (t % 997 == 0) * 10.0  # spikes every 997 samples
    te, ve = envelope(t, v, 2000)
    assert len(te) <= 2100 and np.all(np.diff(te) >= 0)
    assert ve.max() == v.max() and ve.min() == v.min()
    spikes = t[v > 5]
    assert np.isin(spikes, te).all()


def test_cdf_splits_into_one_panel_per_setting(tmp_path: Path) -> None:
    """More than eight curves: one panel per factor value, a curve per scheme in each."""
    from aqmlab.report.figures import draw

    schemes = ["A", "B", "C", "D", "E"]
    exp = parse_experiment(
        {
            "scheme": [{"name": s, "set": []} for s in schemes],
            "factor": [
                {"name": "load", "key": "x", "values": [90, 105], "labels": ["90 %", "105 %"]}
            ],
            "figure": [{"name": "cdf", "kind": "cdf", "x_max": 1.0, "tail": True}],
        }
    )
    out = Output(tmp_path, exp, [], [])
    rng = np.random.default_rng(1)
    for i, s in enumerate(schemes):
        for load in (90, 105):
            pid = f"{s}{load}"
            d = tmp_path / "points" / pid
            d.mkdir(parents=True)
            rt = rng.exponential(0.1 * (i + 1), 200)
            pq.write_table(pa.table({"end_s": np.full(200, 5.0), "response_time_s": rt}),
                           d / "responses.parquet")  # fmt: skip
            out.rows.append(Row(pid, s, {"load": load}, 1, "all", -1, 0.0, 10.0, "ok", "", {}))
    files = draw(out, exp.figures[0], tmp_path / "fig", {})
    svg = next(f for f in files if f.suffix == ".svg").read_text()
    assert "load 90 %" in svg and "load 105 %" in svg  # one panel title per setting
    # Side by side, sharing the y axis: its label once, at the left.
    assert svg.count("P(response time &gt; x)") == 1


def test_a_reports_header_names_the_paper_and_a_quick_forms_full_form(
    folders: dict[str, Path], tmp_path: Path
) -> None:
    """A folder whose source cites a seed by its file name (as folders made before the presets
    named their papers do) is shown with the paper's name; a quick form's report says that its
    figures are not meant to match and gives the full form's command."""
    d = tmp_path / "old"
    shutil.copytree(folders["bulk"], d)
    doc = json.loads((d / "experiment.json").read_text())
    doc["experiment"]["source"] = "003_b277268f444f7691.txt, section 5.5.3, Table 5-3"
    doc["quick"] = True
    doc["experiment_file"] = str(tmp_path / "my exp.toml")
    (d / "experiment.json").write_text(json.dumps(doc))
    p = aqmlab_cli("report", d)
    assert p.returncode == 0, p.stderr
    cited = (
        'W. Chen, "Parameter Self-Tuning in Internet Congestion Control", PhD thesis, '
        "Loughborough University, 2010: section 5.5.3, Table 5-3"
    )
    assert f"source: {cited}" in " ".join(p.stdout.split())
    note = p.stdout.index("note: this is the quick form")
    assert note < p.stdout.index("Table 1")
    assert "not meant to match the paper's" in p.stdout
    flat = " ".join(p.stdout.split())  # rich wraps long lines
    assert f"the full form: aqmlab sweep '{tmp_path / 'my exp.toml'}'" in flat
    page = (d / "report" / "index.html").read_text()
    assert cited.replace('"', "&quot;") in page
    assert "003_b277268f444f7691" not in page
    assert "<b>quick form</b>" in page
    index = build_index([d], tmp_path / "i.html").read_text()
    assert cited.replace('"', "&quot;") in index


def test_papers_are_named_everywhere_a_reader_meets_them() -> None:
    from aqmlab.papers import PAPERS, by_seed, cite_source, split_source

    root = Path(__file__).resolve().parent.parent
    bib = " ".join((root / "docs" / "papers.md").read_text().split())
    readme = (root / "README.md").read_text()
    assert "docs/papers.md" in readme
    for paper in PAPERS:
        assert paper.title in bib and paper.seed in bib and str(paper.year) in bib
        assert paper.title in " ".join(readme.split()), paper.title
        assert by_seed(paper.seed) is paper and by_seed(paper.seed[:4]) is paper
        # Either spelling of a source reads the same.
        for head in (paper.seed + ", ", paper.citation + ": "):
            assert split_source(head + "figure 2") == (paper, "figure 2")
            assert cite_source(head + "figure 2") == paper.citation + ": figure 2"
    assert split_source("example (no paper)") == (None, "example (no paper)")
    assert cite_source("tests/expfolder.py") == "tests/expfolder.py"
    # The listing shows each paper by name, not its seed file.
    p = aqmlab_cli("reproduce", "--list")
    assert p.returncode == 0, p.stderr
    assert not re.search(r"\b00[0-4]_[0-9a-f]{16}\.txt", p.stdout)
    block = p.stdout[p.stdout.index("thesis-5.5.3 ") :].splitlines()[:4]
    chen = by_seed("003_")
    assert chen is not None
    assert block[1].strip() == f"paper:  {chen.citation}"
    assert block[2].strip() == "where:  section 5.5.3, Table 5-3, figure 5.6"


# ---- an experiment of one's own (no paper numbers) -----------------------------------------


def test_a_spread_is_rounded_at_the_values_precision() -> None:
    # A spread that rounds to nothing at the value's precision is no spread: the value alone.
    same = T.aggregate([100.0, 100.0 + 4.3e-14 * 0.5, 100.0 + 4.3e-14])
    assert T.fmt_agg(same, 1) == "100.0" and T.fmt_agg(same, None) == "100"
    assert T.fmt_parts(same, 1) == ("100.0", "")
    # At the metric's digits; without them at the mean's last digit, two significant at most.
    assert T.fmt_spread(39.4, 0.44, 1) == "0.4"
    assert T.fmt_spread(39.4, 0.04, 1) == ""
    assert T.fmt_spread(100.0, 4.27, None) == "4"
    assert T.fmt_spread(0.505, 0.0637, None) == "0.064"
    assert T.fmt_spread(0.0005, 0.006353, None) == "0.0064"
    assert T.fmt_spread(1.25e7, 6.35e6, None) == "6.35e+06"
    assert T.fmt_spread(0.0, 0.002, None) == "0.002" and T.fmt_spread(0.0, 0.0, None) == ""
    # Min-max ranges whose ends print the same are one value.
    assert T.fmt_agg(T.aggregate([2.0, 2.0 + 1e-12], "range"), 1) == "2.0"


def test_a_report_of_ones_own_experiment_shows_what_it_has(own: Path) -> None:
    b = build(own)
    assert not b.tables.with_paper
    page = b.index.read_text()
    md = (b.index.parent / "tables.md").read_text()
    # No paper column, no ranking check.
    for text in (page, md):
        assert "paper -" not in text and "Ranking" not in text
        assert "gives no pair" not in text and "No pair" not in text
    # Factor columns say what was varied.
    t = b.tables.tables[0]
    assert t.col_headers[1][:3] == ["flows = 5", "flows = 10", "flows = 20"]
    assert "flows = 10" in md and "flows = 10" in page
    # The value, and its spread under it (a 95 % interval over the two seeds).
    cell = t.cells[0][0]
    assert cell is not None and cell.ours.n == 2
    main, spread = cell.text_parts()
    assert f'<span class="ours">{main}</span>' in page
    if spread:
        assert f'<span class="spread">{spread}</span>' in page
    summary = json.loads((b.index.parent / "summary.json").read_text())
    assert summary["with_paper"] is False
    # The terminal: the table, no paper line, no ranking.
    p = aqmlab_cli("report", own)
    assert p.returncode == 0, p.stderr
    assert "Results" in p.stdout and "paper" not in p.stdout and "Ranking" not in p.stdout
    # Its figures: the queueing-delay CDF on a log axis, and the bars per setting.
    assert [err for _, _, err in b.figures] == ["", ""]
    svg = (b.index.parent / "delay-cdf.svg").read_text()
    assert "queueing delay (ms)" in svg and "packets)" in svg


def test_a_wide_table_is_cut_between_its_metrics_to_fit_the_page(own: Path) -> None:
    b = build(own)
    t = b.tables.tables[0]
    labels, cols = T.column_widths(t)
    assert len(cols) == 12
    assert T.fit_width(t) == [t] or labels + sum(cols) > T.PAGE_WIDTH_PX
    # On a narrower page it is cut between metrics (each metric's three columns together),
    # each part repeating the rows.
    narrow = labels + max(sum(cols[:6]), sum(cols[6:])) + 1
    parts = T.fit_width(t, narrow)
    assert [p.part for p in parts] == ["1 of 2", "2 of 2"]
    assert [p.col_headers[0] for p in parts] == [t.col_headers[0][:6], t.col_headers[0][6:]]
    assert all(p.row_labels == t.row_labels for p in parts)
    assert parts[0].title == "Results, part 1 of 2"
    # A metric wider than the page alone is cut between its columns.
    room = cols[0] + cols[1] + 1
    parts = T.fit_width(t, labels + room)
    assert len(parts) >= 6
    assert [h for p in parts for h in p.col_headers[1]] == t.col_headers[1]  # all, in order
    for p in parts:
        _, pc = T.column_widths(p)
        assert sum(pc) <= room or len(pc) == 1


def test_a_delay_cdf_pools_the_seeds_histograms(own: Path, tmp_path: Path) -> None:
    from aqmlab.report.figures import _delay_samples, draw

    out = load_output(own)
    fig = out.experiment.figures[0]
    rows = [r for r in out.rows if r.phase == "all" and r.scheme == "RED"]
    counts = 0.0
    for r in rows:
        got = _delay_samples(out, fig, r)
        assert got is not None
        upper, count = got
        assert np.all(np.diff(upper) > 0)
        # Every packet that left the bottleneck in the measurement interval.
        assert (
            count.sum()
            == json.loads((out.point_dir(r.id) / "summary.json").read_text())["bottleneck"][
                "departures"
            ]
        )
        counts += count.sum()
    # Drawn with a linear axis, and refused for a link the points do not monitor.
    linear = E.copy.deepcopy(fig)
    linear.raw["log_x"] = False
    assert draw(out, linear, tmp_path, {})[0].is_file()
    bad = E.copy.deepcopy(fig)
    bad.raw["link"] = "nope"
    with pytest.raises(FigureError, match="'nope': not a monitored link"):
        draw(out, bad, tmp_path, {})


def test_phase_bars_of_many_settings_keep_a_sane_size(own: Path) -> None:
    import struct

    b = build(own)
    png = b.index.parent / "util-bars.png"
    w, h = struct.unpack(">II", png.read_bytes()[16:24])
    # One phase, three settings: a group of bars per setting in one panel.
    assert w <= 1300 and 1.2 <= w / h <= 2.5, (w, h)


def test_a_cdf_is_drawn_with_few_points_and_stays_within_its_bound() -> None:
    """A step CDF of 50 000 values is drawn with at most 2 n + 2 of them; read as steps
    (``where="post"``) the thinned curve is within 1 / n of the whole one at every value, and
    its tail 1 - p within a factor 10^(12 / n) down to the last value; 2 n values or fewer are
    drawn as they are."""
    from aqmlab.report.figures import cdf_steps

    rng = np.random.default_rng(1)
    x = np.sort(rng.pareto(1.2, 50_000))
    p = np.arange(1, len(x) + 1) / len(x)
    n = 200
    tx, tp = cdf_steps(x, p, n)
    assert len(tx) <= 2 * n + 2 and tx[0] == x[0] and tx[-1] == x[-1] and tp[-1] == p[-1]
    drawn = tp[np.searchsorted(tx, x, side="right") - 1]
    assert np.all(p - drawn <= 1.0 / n + 1e-12) and np.all(drawn <= p)
    tail = (p < 1.0) & (drawn < 1.0)
    assert np.all((1 - drawn[tail]) / (1 - p[tail]) <= 10 ** (12 / n) * (1 + 1e-9))
    small = x[: 2 * n]
    assert cdf_steps(small, p[: 2 * n], n)[0] is small
