"""Experiment files and sweeps: validation with field paths, point
ids, the output folder, failures, kill + resume, a changed experiment, and
the same table from a Dask cluster whose worker is killed mid-sweep."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from aqmlab.experiments import (
    ExperimentError,
    load_experiment,
    parse_experiment,
    point_id,
    presets,
    resolve_points,
    sweep,
)
from aqmlab.experiments.catalog import PRESETS_DIR
from daskcluster import dask_cluster

from conftest import ROOT, aqmlab_cli, assert_clean_error

DATA = ROOT / "tests" / "data" / "experiments"
TINY = DATA / "tiny.toml"
SWEEP = DATA / "tiny-sweep.toml"


def base_doc(**extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "experiment": {"name": "t", "scenario": str(TINY), "seeds": [1]},
        "scheme": [{"name": "A", "set": ["aqm.max_p=0.1"]}, {"name": "B"}],
        "factor": [{"name": "flows", "key": "traffic[0].flows", "values": [10, 20]}],
        "metric": [{"name": "loss", "summary": "bottleneck.loss_rate"}],
    }
    doc.update(extra)
    return doc


def test_a_summary_path_may_name_a_link_with_a_hyphen() -> None:
    doc = base_doc(metric=[{"name": "rev", "summary": "links.bottleneck-rev.loss_rate"}])
    exp = parse_experiment(doc, DATA / "x.toml")
    assert exp.doc["metric"][0]["summary"] == "links.bottleneck-rev.loss_rate"


def test_a_table_may_fix_factor_values() -> None:
    doc = base_doc()
    fname = doc["factor"][0]["name"]
    value = doc["factor"][0]["values"][0]
    doc["table"] = [{"name": "t", "rows": ["scheme"], "metrics": [doc["metric"][0]["name"]]}]
    doc["table"][0]["factors"] = {fname: value}
    exp = parse_experiment(doc, DATA / "x.toml")
    assert exp.doc["table"][0]["factors"] == {fname: value}
    doc["table"][0]["columns"] = [fname]
    e = error_of(doc)
    assert e.path == f"table[0].factors.{fname}" and "takes an array" in str(e), str(e)
    doc["table"][0]["columns"] = []
    doc["table"][0]["factors"] = {fname: "no such value"}
    e = error_of(doc)
    assert e.path == f"table[0].factors.{fname}" and "is not a value" in str(e), str(e)


def test_a_table_picks_the_values_of_a_factor_that_lays_it_out() -> None:
    """An array picks the values a factor in rows or columns shows, in its order; an array
    for a factor outside rows and columns, an empty one, a value listed twice or one that
    is not the factor's is an error naming the entry."""
    doc = base_doc()
    fname = doc["factor"][0]["name"]
    values = doc["factor"][0]["values"]
    table = {"name": "t", "rows": ["scheme"], "columns": [fname]}
    doc["table"] = [{**table, "metrics": [doc["metric"][0]["name"]]}]
    doc["table"][0]["factors"] = {fname: [values[-1], values[0]]}
    exp = parse_experiment(doc, DATA / "x.toml")
    assert exp.doc["table"][0]["factors"] == {fname: [values[-1], values[0]]}
    doc["table"][0]["columns"] = []
    e = error_of(doc)
    assert e.path == f"table[0].factors.{fname}" and "put " in str(e), str(e)
    doc["table"][0]["columns"] = [fname]
    doc["table"][0]["factors"] = {fname: []}
    assert error_of(doc).path == f"table[0].factors.{fname}"
    doc["table"][0]["factors"] = {fname: [values[0], values[0]]}
    e = error_of(doc)
    assert e.path == f"table[0].factors.{fname}[1]" and "listed twice" in str(e), str(e)
    doc["table"][0]["factors"] = {fname: [values[0], "no such value"]}
    e = error_of(doc)
    assert e.path == f"table[0].factors.{fname}[1]" and "is not a value" in str(e), str(e)


def test_a_table_names_its_phases() -> None:
    """``phases`` picks the named phases a table's phase dimension shows; a phase that is not
    named, one listed twice, or the key without a phase dimension is an error naming it."""
    doc = base_doc(phase=[{"name": "early"}, {"name": "late"}])
    table = {"name": "t", "rows": ["scheme"], "columns": ["phase"]}
    doc["table"] = [{**table, "metrics": [doc["metric"][0]["name"]], "phases": ["late"]}]
    exp = parse_experiment(doc, DATA / "x.toml")
    assert exp.doc["table"][0]["phases"] == ["late"]
    doc["table"][0]["phases"] = ["late", "middle"]
    e = error_of(doc)
    assert e.path == "table[0].phases[1]" and '"middle" is not a phase' in str(e), str(e)
    doc["table"][0]["phases"] = ["late", "late"]
    assert error_of(doc).path == "table[0].phases[1]"
    doc["table"][0]["phases"] = ["late"]
    doc["table"][0]["columns"] = []
    e = error_of(doc)
    assert e.path == "table[0].phases" and 'put "phase" in rows or columns' in str(e), str(e)


def error_of(doc: dict[str, Any], **kw: Any) -> ExperimentError:
    with pytest.raises(ExperimentError) as e:
        parse_experiment(doc, DATA / "x.toml", **kw)
    return e.value


# ---------------------------------------------------------------------------
# Validation


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (lambda d: d.update(schemes=[]), "schemes", 'unknown key "schemes"'),
        (lambda d: d["scheme"][1].update(sets=[]), "scheme[1].sets", "unknown key"),
        (lambda d: d["scheme"][1].update(set="aqm.max_p=1"), "scheme[1].set", "expected an array"),
        (lambda d: d["scheme"][1].update(name="A"), "scheme[1].name", "earlier scheme"),
        (lambda d: d["scheme"][0]["set"].append("=3"), "scheme[0].set[1]", "malformed"),
        (lambda d: d["experiment"].update(name="My Exp"), "experiment.name", "not a valid name"),
        (lambda d: d["experiment"].update(seeds=[1, 1]), "experiment.seeds[1]", "twice"),
        (lambda d: d["experiment"].update(scenario="nope.toml"), "experiment.scenario", "no such"),
        (lambda d: d["experiment"].pop("scenario"), "experiment.scenario", "missing"),
        (lambda d: d["factor"][0].update(values=[10, "x"]), "factor[0].values", "mixes"),
        (lambda d: d["factor"][0].update(name="seed"), "factor[0].name", "reserved"),
        (lambda d: d["factor"][0].update(keys=["a"]), "factor[0]", "exactly one"),
        (
            lambda d: d["metric"][0].update(summary="bottleneck..loss_rate"),
            "metric[0].summary",
            "not a dotted path",
        ),
        (
            lambda d: d.update(quick={"factors": {"flows": [30]}}),
            "quick.factors.flows[0]",
            'not a value of factor "flows"',
        ),
        (
            lambda d: d.update(paper=[{"scheme": "A", "metric": "lost", "value": 1}]),
            "paper[0].metric",
            '"lost" is not a metric; known: loss',
        ),
        (
            lambda d: d.update(paper=[{"scheme": "C", "metric": "loss", "value": 1}]),
            "paper[0].scheme",
            '"C" is not a scheme',
        ),
        (
            lambda d: d.update(paper=[{"scheme": "A", "metric": "loss", "range": [2, 1]}]),
            "paper[0].range",
            "LOW <= HIGH",
        ),
        (
            lambda d: d.update(paper=[{"scheme": "A", "metric": "loss", "value": 1, "band": True}]),
            "paper[0].band",
            "a band is a range",
        ),
        (
            lambda d: d.update(ns2=[{"scheme": "A", "metric": "lost", "value": 1}]),
            "ns2[0].metric",
            '"lost" is not a metric; known: loss',
        ),
        (
            lambda d: d.update(ns2=[{"scheme": "C", "metric": "loss", "value": 1}]),
            "ns2[0].scheme",
            '"C" is not a scheme',
        ),
        (
            lambda d: d.update(ns2=[{"scheme": "A", "metric": "loss", "phase": "x", "value": 1}]),
            "ns2[0].phase",
            '"x" is not a phase; known: all',
        ),
        (
            lambda d: d.update(ns2=[{"scheme": "A", "metric": "loss", "value": 1, "seed": 1}]),
            "ns2[0].seed",
            'unknown key "seed"',
        ),
        (
            lambda d: d.update(
                ns2=[{"scheme": "A", "metric": "loss", "range": [0, 1], "band": True}]
            ),
            "ns2[0].band",
            'unknown key "band"',
        ),
        (
            lambda d: d.update(
                ns2=[{"scheme": "A", "metric": "loss", "factors": {"flows": 30}, "value": 1}]
            ),
            "ns2[0].factors.flows",
            'not a value of factor "flows"',
        ),
        (
            lambda d: d.update(ns2=[{"scheme": "A", "metric": "loss"}]),
            "ns2[0]",
            "exactly one",
        ),
        (
            lambda d: d.update(ns2={"scheme": "A", "metric": "loss", "value": 1}),
            "ns2",
            "write [[ns2]]",
        ),
        (
            lambda d: d.update(table={"name": "T", "rows": ["schme"], "metrics": ["loss"]}),
            "table.rows[0]",
            "not a dimension",
        ),
        (
            lambda d: d.update(
                figure=[{"name": "f", "kind": "timeseries", "factor": "flows"}],
            ),
            "figure[0].factor",
            'not a key of a "timeseries" figure',
        ),
        (
            lambda d: d["metric"][0].update(schemes=["Z"]),
            "metric[0].schemes[0]",
            '"Z" is not a scheme',
        ),
        (
            lambda d: d["metric"][0].update(schemes=[]),
            "metric[0].schemes",
            "a non-empty array of scheme names",
        ),
        (
            lambda d: d.update(figure=[{"name": "f", "kind": "cdf", "group": 1}]),
            "figure[0].group",
            'for of = "delay" only',
        ),
        (
            lambda d: d.update(figure=[{"name": "f", "kind": "cdf", "of": "delay", "group": -1}]),
            "figure[0].group",
            "a whole number >= 0",
        ),
        (
            lambda d: d.update(figure=[{"name": "f", "kind": "pie"}]),
            "figure[0].kind",
            "one of",
        ),
        (
            lambda d: d.update(
                figure=[{"name": "f", "kind": "timeseries", "factors": {"flows": 30}}],
            ),
            "figure[0].factors.flows",
            'not a value of factor "flows"',
        ),
        (
            lambda d: (
                d.update(figure=[{"name": "f", "kind": "phase_bars", "metric": "loss"}])
                or d["figure"][0].update(phase="late")
            ),
            "figure[0].phase",
            '"late" is not a phase; known: all',
        ),
        (
            lambda d: d["metric"][0].update(stat="median"),
            "metric[0].stat",
            '"mean", "range"',
        ),
    ],
)
def test_validation_names_the_field(change: Any, path: str, words: str) -> None:
    doc = base_doc()
    change(doc)
    e = error_of(doc)
    assert e.path == path, str(e)
    assert words in e.msg, str(e)
    assert str(e).startswith(f"{path}: ")


def test_ns2_entries_are_kept_beside_the_papers() -> None:
    """[[ns2]] selects a cell as [[paper]] does and reaches experiment.json normalised."""
    doc = base_doc(
        paper=[{"scheme": "A", "metric": "loss", "range": [1, 2], "band": True, "note": "fig. 7"}],
        ns2=[{"scheme": "B", "metric": "loss", "factors": {"flows": 20}, "value": 3, "note": "n"}],
    )
    exp = parse_experiment(doc, DATA / "x.toml")
    assert exp.doc["paper"] == [
        {"scheme": "A", "phase": "all", "factors": {}, "metric": "loss", "range": [1.0, 2.0],
         "band": True, "note": "fig. 7"}
    ]  # fmt: skip
    assert exp.doc["ns2"] == [
        {"scheme": "B", "phase": "all", "factors": {"flows": 20}, "metric": "loss", "value": 3.0,
         "note": "n"}
    ]  # fmt: skip
    assert parse_experiment(base_doc(), DATA / "x.toml").doc["ns2"] == []


def test_a_valid_experiment_and_its_quick_form() -> None:
    exp = load_experiment(SWEEP)
    assert [s.name for s in exp.schemes] == ["RED", "RED hi"]
    assert exp.seeds == (1, 2)
    assert len(resolve_points(exp)) == 8
    quick = load_experiment(SWEEP, quick=True)
    assert quick.seeds == (1,) and quick.factors[0].raw == (10,)
    assert quick.doc["factor"][0]["values"] == [10]
    assert len(resolve_points(quick)) == 2
    assert len(resolve_points(load_experiment(SWEEP, seeds=3))) == 12


def test_point_ids_hash_the_resolved_scenario_and_seed() -> None:
    exp = load_experiment(SWEEP)
    points = resolve_points(exp)
    assert len({p.id for p in points}) == len(points)
    p = points[0]
    assert p.scenario is not None and p.scenario["seed"] == p.seed
    assert p.id == point_id(p.scenario, p.seed) and len(p.id) == 16
    # The same point from another spelling of the same overrides has the same id.
    again = resolve_points(load_experiment(SWEEP, extra_set=["aqm.max_p=0.1"]))
    assert again[0].id == p.id  # RED already has max_p 0.1
    assert again[-1].id != points[-1].id  # RED hi changed to 0.1
    assert p.phases == [("first", 2.0, 4.0), ("second", 4.0, 6.0)]


def test_presets_are_valid_and_listed() -> None:
    found = presets()
    names = [p.name for p in found]
    assert "example-red-maxp" in names and "example-schemes" in names
    for p in found:
        assert p.problem is None, (p.path, p.problem)
        for quick in (False, True):
            exp = load_experiment(p.path, quick=quick)
            pts = resolve_points(exp)
            assert pts and all(x.error is None for x in pts), [x.error for x in pts]
    # Numbers in names order by value: section 9.2 of RFC 7928 before section 10.
    assert names.index("rfc7928-9.2") < names.index("rfc7928-10") < names.index("thesis-4.5")
    assert names.index("rem-5.1") < names.index("rem-5.1-loss") < names.index("rem-5.2")
    r = aqmlab_cli("reproduce", "--list")
    assert r.returncode == 0, r.stderr
    assert "example-red-maxp" in r.stdout and "source:" in r.stdout
    assert str(PRESETS_DIR.name) in r.stdout


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(SWEEP.read_text().replace('set = ["aqm.max_p=0.3"]', "sets = []"))
    shutil.copy(TINY, tmp_path / "tiny.toml")
    p = aqmlab_cli("sweep", bad, "--dry-run")
    assert_clean_error(p)
    assert "bad.toml: scheme[1].sets: unknown key" in p.stderr
    p = aqmlab_cli("reproduce", "no-such-preset")
    assert_clean_error(p)
    assert "unknown preset 'no-such-preset'; known: " in p.stderr
    p = aqmlab_cli("sweep", SWEEP, "--jobs", "0")
    assert_clean_error(p)
    assert "--jobs" in p.stderr


def test_dry_run_lists_points_and_estimates(tmp_path: Path) -> None:
    p = aqmlab_cli("sweep", SWEEP, "--dry-run", "--jobs", "2", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert "8 points (2 scheme(s) x 2 factor combination(s) x 2 seed(s))" in p.stdout
    assert "estimate: 48 simulated seconds" in p.stdout
    assert "events/s measured" in p.stdout
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------
# Sweeps


def table_without_wall(path: Path) -> pa.Table:
    t = pq.read_table(path)
    return t.drop([c for c in t.column_names if c == "wall_time_s"])


def stamps(out: Path) -> dict[str, tuple[int, int]]:
    """(inode, mtime) of every complete point's point.json."""
    res = {}
    for d in (out / "points").iterdir():
        f = d / "point.json"
        if f.is_file() and ".tmp-" not in d.name:
            st = f.stat()
            res[d.name] = (st.st_ino, st.st_mtime_ns)
    return res


def write_experiment(tmp: Path, text: str) -> Path:
    shutil.copy(TINY, tmp / "tiny.toml")
    f = tmp / "exp.toml"
    f.write_text(text)
    return f


def test_sweep_output_folder_and_failures(tmp_path: Path) -> None:
    text = SWEEP.read_text() + (
        '\n[[scheme]]\nname = "broken"\nset = ["aqm.max_p=7"]\n'
        '\n[[scheme]]\nname = "slow"\nset = ["duration=5000s"]\n'
    )
    f = write_experiment(tmp_path, text)
    out = tmp_path / "out"
    p = aqmlab_cli(
        "sweep", f, "--out", out, "--quick", "--jobs", "2", "--timeout", "1", "--no-report"
    )
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "error: 2 point(s) of tiny-sweep failed:" in p.stderr
    assert "broken, flows=10, seed 1" in p.stderr and "aqm.max_p" in p.stderr
    assert "timed out after 1 s" in p.stderr
    assert "Traceback" not in p.stderr
    exp = json.loads((out / "experiment.json").read_text())
    assert exp["quick"] is True and exp["experiment"]["seeds"] == [1]
    assert exp["command"][:2] == ["aqmlab", "sweep"]
    assert {"aqmlab", "engine", "python"} <= set(exp["versions"])
    assert len(exp["points"]) == 4
    failed = sorted((out / "failed").glob("*.json"))
    assert len(failed) == 2
    records = [json.loads(x.read_text()) for x in failed]
    assert {r["scheme"] for r in records} == {"broken", "slow"}
    assert all(set(r) == {"id", "scheme", "factors", "seed", "error"} for r in records)
    ok = [d for d in (out / "points").iterdir()]
    assert len(ok) == 2
    for d in ok:
        info = json.loads((d / "point.json").read_text())
        assert info["status"] == "ok" and info["id"] == d.name
        assert info["factors"] == {"flows": 10} and info["seed"] == 1
        assert (d / "manifest.json").is_file() and (d / "queue.parquet").is_file()
    t = pq.read_table(out / "summary.parquet")
    assert t.num_rows == 4 * 3
    assert t.column_names[:10] == [
        "id",
        "scheme",
        "flows",
        "seed",
        "phase",
        "phase_index",
        "start_s",
        "end_s",
        "status",
        "error",
    ]
    rows = t.to_pylist()
    assert [r["phase"] for r in rows[:3]] == ["all", "first", "second"]
    assert [r["phase_index"] for r in rows[:3]] == [-1, 0, 1]
    by_scheme = {r["scheme"]: r for r in rows if r["phase"] == "all"}
    assert by_scheme["RED"]["status"] == "ok" and by_scheme["RED"]["error"] is None
    assert 0 < by_scheme["RED"]["bottleneck.utilization"] <= 1
    assert by_scheme["broken"]["status"] == "failed"
    assert "aqm.max_p" in by_scheme["broken"]["error"]
    assert by_scheme["broken"]["bottleneck.utilization"] is None
    phase = next(r for r in rows if r["scheme"] == "RED" and r["phase"] == "second")
    assert (phase["start_s"], phase["end_s"]) == (4.0, 6.0)
    assert phase["bottleneck.loss_rate"] is not None


def test_kill_and_resume_gives_the_same_table(tmp_path: Path) -> None:
    # 8 points of ~0.3 s each on one worker: killed after two are complete.
    args = ["--jobs", "1", "--no-report", "--set", "duration=120s"]
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "aqmlab", "sweep", str(SWEEP), "--out", str(out), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if (out / "points").is_dir() and len(stamps(out)) >= 2:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(10)
    time.sleep(0.3)
    before = stamps(out)
    assert 2 <= len(before) < 8, len(before)
    assert not (out / "summary.parquet").exists()
    # Leave a half-written folder as a crash in mid-write would.
    (out / "points" / "0123456789abcdef.tmp-99999").mkdir()
    p = aqmlab_cli("sweep", SWEEP, "--out", out, "--resume", *args)
    assert p.returncode == 0, p.stderr
    assert f"{len(before)} already complete" in p.stdout
    after = stamps(out)
    assert len(after) == 8
    assert {k: after[k] for k in before} == before  # complete points untouched
    assert sorted(x.name for x in (out / "points").iterdir()) == sorted(after)

    whole = tmp_path / "whole"
    p = aqmlab_cli("sweep", SWEEP, "--out", whole, *args[:-2], "--jobs", "2", "--set", args[-1])
    assert p.returncode == 0, p.stderr
    assert table_without_wall(out / "summary.parquet").equals(
        table_without_wall(whole / "summary.parquet")
    )

    # A changed scheme re-runs only its own points.
    changed = tmp_path / "changed.toml"
    changed.write_text(
        SWEEP.read_text()
        .replace("aqm.max_p=0.3", "aqm.max_p=0.25")
        .replace('scenario = "tiny.toml"', f'scenario = "{TINY}"')
    )
    red = {
        d.name
        for d in (whole / "points").iterdir()
        if json.loads((d / "point.json").read_text())["scheme"] == "RED"
    }
    before = stamps(whole)
    p = aqmlab_cli("sweep", changed, "--out", whole, "--resume", *args[:-2], "--set", args[-1])
    assert p.returncode == 0, p.stderr
    assert "4 already complete" in p.stdout and "removed 4 point(s)" in p.stdout
    after = stamps(whole)
    assert len(after) == 8
    assert {k: after[k] for k in red} == {k: before[k] for k in red}
    assert set(after) - red == set(after) - set(before)  # the RED hi points are new
    t = pq.read_table(whole / "summary.parquet")
    assert set(t.column("scheme").to_pylist()) == {"RED", "RED hi"}


def test_several_experiments_share_one_sweep(tmp_path: Path) -> None:
    example = PRESETS_DIR / "example-schemes.toml"
    p = aqmlab_cli(
        "sweep",
        SWEEP,
        example,
        "--quick",
        "--out",
        tmp_path,
        "--no-report",
        "--set",
        "duration=12s",
        "--set",
        "metrics.phases=[[2, 6], [6, 12]]",
    )
    assert p.returncode == 0, p.stderr
    for name, n in (("tiny-sweep-quick", 2), ("example-schemes-quick", 4)):
        t = pq.read_table(tmp_path / name / "summary.parquet")
        assert t.num_rows == n * 3 and set(t.column("status").to_pylist()) == {"ok"}
    assert "example-schemes: DropTail, seed 1" in p.stderr  # labels name the experiment
    # The time line in words; where the time went only with --verbose.
    assert "sweep: 6 run(s) in " in p.stdout and " on " in p.stdout
    assert "simulating" not in p.stdout and "time:" not in p.stdout
    p = aqmlab_cli("sweep", SWEEP, "--quick", "--out", tmp_path / "v", "--no-report", "--verbose")
    assert p.returncode == 0, p.stderr
    assert "  time:    simulating " in p.stdout and "saving each run's results added" in p.stdout
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("sweep: 2 run(s) in ") and "went to starting them" in last, last


def test_a_folder_of_another_experiment_is_not_touched(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "experiment.json").write_text(json.dumps({"experiment": {"name": "other"}}))
    (out / "points").mkdir()
    for extra in ([], ["--resume"]):
        p = aqmlab_cli("sweep", SWEEP, "--out", out, "--quick", *extra)
        assert_clean_error(p)
        assert "holds the sweep of experiment 'other'" in p.stderr
    assert (out / "points").is_dir()
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("mine")
    p = aqmlab_cli("sweep", SWEEP, "--out", tmp_path / "plain", "--quick")
    assert_clean_error(p)
    assert "not an aqmlab sweep folder" in p.stderr


def test_sweep_api_with_duplicate_points(tmp_path: Path) -> None:
    # Two schemes that resolve to the same scenario run once; both get rows.
    doc = base_doc()
    doc["scheme"] = [{"name": "A", "set": ["aqm.max_p=0.1"]}, {"name": "B"}]
    doc["factor"] = []
    exp = parse_experiment(doc, DATA / "x.toml")
    points = resolve_points(exp)
    assert points[0].id == points[1].id
    with open(os.devnull, "w") as quiet:
        outcome = sweep(exp, points, tmp_path / "o", jobs=1, live=False, stream=quiet)
    assert not outcome.failures and outcome.total == 1
    info = json.loads((tmp_path / "o" / "points" / points[0].id / "point.json").read_text())
    assert info["also"] == [{"scheme": "B", "factors": {}, "seed": 1}]
    t = pq.read_table(tmp_path / "o" / "summary.parquet")
    assert t.column("scheme").to_pylist() == ["A"] * 3 + ["B"] * 3


# ---------------------------------------------------------------------------
# Dask


def test_dask_cluster_with_a_killed_worker_gives_the_local_table(tmp_path: Path) -> None:
    args = ["--no-report", "--set", "duration=120s"]
    out = tmp_path / "dask"
    with dask_cluster(tmp_path) as c:
        sweep_proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "aqmlab", "sweep", str(SWEEP), "--out", str(out)),
                *("--scheduler", c.address, *args),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and sweep_proc.poll() is None:
            if (out / "points").is_dir() and len(stamps(out)) >= 1:
                break
            time.sleep(0.02)
        assert sweep_proc.poll() is None, "the sweep ended before a worker could be killed"
        assert len(stamps(out)) <= 6  # both workers hold points now
        c.workers[0].kill()  # worker w0, with a point in hand
        stdout, stderr = sweep_proc.communicate(timeout=120)
        assert sweep_proc.returncode == 0, (stdout, stderr)
        assert len(stamps(out)) == 8
    local = tmp_path / "local"
    p = aqmlab_cli("sweep", SWEEP, "--out", local, "--jobs", "2", *args)
    assert p.returncode == 0, p.stderr
    assert table_without_wall(out / "summary.parquet").equals(
        table_without_wall(local / "summary.parquet")
    )
    # The point folders hold the same data too.
    some = sorted(stamps(out))[0]
    for name in ("queue.parquet", "flows.parquet"):
        assert pq.read_table(out / "points" / some / name).equals(
            pq.read_table(local / "points" / some / name)
        )


def test_progress_display_counts_time_left_and_slowest() -> None:
    from rich.console import Console

    from aqmlab.experiments.pool import Task
    from aqmlab.experiments.progress import SweepProgress, format_duration

    tasks = [Task(f"p{i}", {}, {}, f"RED, seed {i}", 1e6 * (i + 1), 10.0) for i in range(4)]
    show = SweepProgress(tasks, total=5, skipped=1, prior_rate=1e6, live=False)
    show.started(tasks[0])
    show.started(tasks[1])
    show.progress("p1", 5.0)
    show.done("p0", 1.0, 1.1)
    show.failed("p2", "timed out")
    assert show.counts() == {"done": 1, "running": 1, "failed": 1, "waiting": 1}
    assert show.slowest() is not None and show.slowest().task.label == "RED, seed 1"
    console = Console(record=True, width=120)
    console.print(show._render())
    text = console.export_text()
    assert "3/5 points" in text and "done 2" in text and "running 1" in text
    assert "failed 1" in text and "left 1" in text
    assert "slowest running: RED, seed 1" in text and "50 % simulated" in text
    assert "elapsed" in text and "left ~" in text
    assert format_duration(3725) == "1:02:05" and format_duration(4.25) == "4.2 s"


def test_sweep_prints_the_reports_tables(tmp_path: Path) -> None:
    """As docs/report.md promises: `aqmlab sweep` prints the report's tables (the experiment
    has no paper numbers, so no ranking check), then where the results and the report are."""
    out = tmp_path / "o"
    p = aqmlab_cli("sweep", SWEEP, "--quick", "--out", out)
    assert p.returncode == 0, p.stderr
    text = p.stdout
    assert "tiny-sweep: Test sweep (quick)" in text and "Loss" in text
    assert "flows" in text and "RED hi" in text
    assert "Ranking" not in text and "paper" not in text
    # The tables come before the paths.
    assert text.index("Loss") < text.index("  report:  ") < text.index("\nsweep: ")
    assert f"  report:  {out / 'report' / 'index.html'}" in text
    # --no-report: neither.
    p = aqmlab_cli("sweep", SWEEP, "--quick", "--out", tmp_path / "n", "--no-report")
    assert p.returncode == 0, p.stderr
    assert "Loss" not in p.stdout and "report:" not in p.stdout
