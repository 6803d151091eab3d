"""The Python API: aqmlab.run, RunResult, run folders."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet
import pytest

import aqmlab
from aqmlab import _core, results
from aqmlab.results import ResultsError, load_run, write_run

from conftest import same_table

QUEUE_COLUMNS = ["link", "time_s", "queue_pkts", "queue_bytes", "avg", "drops", "marks"]
FLOW_COLUMNS = [
    "flow",
    "group",
    "direction",
    "bytes_delivered",
    "goodput_bps",
    "retransmits",
    "timeouts",
    "marks_seen",
]


@pytest.fixture(scope="module")
def result() -> aqmlab.RunResult:
    doc = {
        "duration": "10s",
        "seed": 1,
        "topology": {"bottleneck_rate": "10Mbps", "buffer": 100},
        "aqm": {"kind": "red", "min_th": 5, "max_th": 30},
        "tcp": {"packet_size": 500},
        "traffic": [
            {"kind": "bulk", "flows": 8},
            {"kind": "bulk", "flows": 3, "direction": "reverse"},
        ],
        "metrics": {"sample_interval": "20ms", "start": "2s"},
    }
    return aqmlab.run(doc, seed=4)


def test_run_returns_tables_and_summary(result: aqmlab.RunResult) -> None:
    assert isinstance(result.queue, pa.Table)
    assert isinstance(result.flows, pa.Table)
    assert result.queue.column_names[: len(QUEUE_COLUMNS)] == QUEUE_COLUMNS
    assert set(FLOW_COLUMNS) <= set(result.flows.column_names)
    # One sample at 0 and one every sample_interval up to the end.
    assert result.queue.num_rows == 10 / 0.02 + 1
    assert result.flows.num_rows == 11
    t = result.queue.column("time_s").to_pylist()
    assert t[0] == 0.0 and t[-1] == pytest.approx(10.0)
    assert result.flows.column("direction").to_pylist().count("reverse") == 3
    assert pa.types.is_floating(result.queue.schema.field("avg").type)
    s = result.summary
    assert s["seed"] == 4 and result.seed == 4
    assert s["duration_s"] == 10.0
    assert s["flows"]["count"] == 8
    assert 0.5 < s["bottleneck"]["utilization"] <= 1.0
    assert s["wall_time_s"] > 0


def test_resolved_scenario(result: aqmlab.RunResult) -> None:
    sc = result.scenario
    assert sc["seed"] == 4
    assert sc["aqm"]["kind"] == "red"
    assert sc["aqm"]["w_q"] == 0.002  # a default, filled in
    assert sc["tcp"]["variant"] == "newreno"
    # The resolved scenario is itself a valid scenario that resolves to itself.
    assert aqmlab.validate(sc) == sc


def test_run_does_not_touch_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    aqmlab.run(Path(__file__).parent / "data" / "small.toml", seed=2)
    assert list(tmp_path.iterdir()) == []


def test_droptail_average_is_nan(small_doc: dict[str, Any]) -> None:
    small_doc["aqm"] = {"kind": "droptail"}
    small_doc["duration"] = "6s"
    r = aqmlab.run(small_doc)
    avg = r.queue.column("avg")
    assert avg.null_count == 0
    assert all(x != x for x in avg.to_pylist())  # NaN: the scheme has no average


def test_save_writes_the_four_files(result: aqmlab.RunResult, tmp_path: Path) -> None:
    out = result.save(tmp_path / "run", command=["aqmlab", "run", "x.toml"])
    assert sorted(p.name for p in out.iterdir()) == sorted(results.FILES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    man = json.loads((out / "manifest.json").read_text())
    assert man["scenario"] == result.scenario
    assert man["seed"] == 4
    assert man["engine_version"] == aqmlab.ENGINE_VERSION
    assert man["aqmlab_version"] == aqmlab.__version__
    assert man["command"] == ["aqmlab", "run", "x.toml"]
    assert man["wall_time_s"] == result.summary["wall_time_s"]
    assert man["created_at"].endswith("+00:00")
    text = (out / "summary.json").read_text()
    assert json.loads(text) == result.summary
    assert list(json.loads(text)) == sorted(json.loads(text))

    back = load_run(out)
    assert back.summary == result.summary
    assert back.scenario == result.scenario
    assert same_table(back.queue, result.queue)
    assert same_table(back.flows, result.flows)


def test_run_with_out_writes_the_folder(small_doc: dict[str, Any], tmp_path: Path) -> None:
    small_doc["duration"] = "6s"
    r = aqmlab.run(small_doc, out=tmp_path / "r")
    assert load_run(tmp_path / "r").summary == r.summary


def test_interrupted_write_leaves_nothing(
    result: aqmlab.RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pyarrow.parquet, "write_table", boom)
    with pytest.raises(KeyboardInterrupt):
        write_run(result, tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_interrupted_rewrite_keeps_the_old_result(
    result: aqmlab.RunResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = write_run(result, tmp_path / "run")
    before = (out / "manifest.json").read_text()

    def boom(*_: object, **__: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(pyarrow.parquet, "write_table", boom)
    with pytest.raises(OSError, match="disk full"):
        write_run(result, out)
    assert (out / "manifest.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_an_earlier_result_is_replaced(result: aqmlab.RunResult, tmp_path: Path) -> None:
    out = write_run(result, tmp_path / "run")
    (out / "stale.txt").write_text("from an earlier run")
    write_run(result, out)
    assert not (out / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_folder_that_is_not_a_result_is_refused(result: aqmlab.RunResult, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    with pytest.raises(ResultsError, match="not an aqmlab result folder"):
        write_run(result, tmp_path / "data")
    (tmp_path / "file").write_text("x")
    with pytest.raises(ResultsError):
        result.save(tmp_path / "file")
    with pytest.raises(ResultsError):
        load_run(tmp_path / "data")


def test_progress_callback(small_doc: dict[str, Any]) -> None:
    small_doc["duration"] = "40s"
    small_doc["traffic"][0]["flows"] = 40
    seen: list[float] = []
    r = aqmlab.run(small_doc, progress=seen.append)
    assert seen, "the callback was never called"
    assert seen == sorted(seen) and 0 < seen[-1] <= 40
    assert r.summary["duration_s"] == 40

    # A callback of two arguments also gets the events processed so far.
    pairs: list[tuple[float, int]] = []
    r2 = aqmlab.run(small_doc, progress=lambda t, n: pairs.append((t, n)))
    assert [t for t, _ in pairs] == seen
    events = [n for _, n in pairs]
    assert events == sorted(events) and 0 < events[-1] <= r2.summary["events"]

    with pytest.raises(KeyboardInterrupt):
        aqmlab.run(small_doc, progress=lambda t: False)

    class Stop(Exception):
        pass

    def raising(t: float) -> None:
        raise Stop(t)

    with pytest.raises(Stop):
        aqmlab.run(small_doc, progress=raising)


def test_progress_calls_at_most_every_s(small_doc: dict[str, Any]) -> None:
    """`every_s` (what `aqmlab run` uses, 0.1 s) bounds the calls into Python by wall time:
    each takes the interpreter's lock, which the thread loading numpy and pyarrow holds."""
    from aqmlab._engine import run_raw

    small_doc["duration"] = "40s"
    small_doc["traffic"][0]["flows"] = 40
    calls: list[float] = []
    run_raw(small_doc, calls.append, None)
    assert calls
    few: list[float] = []
    raw = run_raw(small_doc, few.append, None, every_s=3600.0)
    assert few == []  # the run takes far less than an hour
    assert aqmlab.api.from_core(raw).summary["duration_s"] == 40


def test_seed_must_be_a_whole_number(small_doc: dict[str, Any]) -> None:
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(aqmlab.ScenarioError) as e:
            aqmlab.run(small_doc, seed=bad)  # type: ignore[arg-type]
        assert e.value.path == "seed"


def test_scenario_error() -> None:
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate({"duration": "1s"})
    err = e.value
    assert isinstance(err, ValueError)
    assert (err.path, err.msg) == ("topology", "missing required table [topology]")
    assert str(err) == "topology: missing required table [topology]"
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.path, back.msg) == (aqmlab.ScenarioError, err.path, err.msg)


def test_json_syntax_error_has_empty_path() -> None:
    with pytest.raises(aqmlab.ScenarioError) as e:
        _core.validate("{not json")
    assert e.value.path == ""
    assert "does not parse" in str(e.value)
    with pytest.raises(aqmlab.ScenarioError):
        _core.run('{"duration": null}')


def test_toml_error_names_the_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text('duration = "10s"\nseed = \n')
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.load(f)
    assert str(f) in str(e.value) and "line 2" in str(e.value)


def test_load_accepts_text_dicts_and_paths(small_doc: dict[str, Any]) -> None:
    text = (Path(__file__).parent / "data" / "small.toml").read_text()
    assert aqmlab.load(text) == small_doc
    assert aqmlab.load(Path(__file__).parent / "data" / "small.toml") == small_doc
    copy = aqmlab.load(small_doc)
    copy["aqm"]["max_p"] = 0.5
    assert small_doc["aqm"]["max_p"] == 0.1
    with pytest.raises(FileNotFoundError):
        aqmlab.load(os.path.join("no", "such", "file.toml"))


def test_to_pandas(result: aqmlab.RunResult) -> None:
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ImportError, match="aqmlab\\[pandas\\]"):
            result.to_pandas()
        return
    df = result.to_pandas("queue")
    assert len(df) == result.queue.num_rows
    assert len(result.to_pandas("flows")) == result.flows.num_rows


def test_schedule_and_phases_through_the_api() -> None:
    """A scheduled flow start shows in the per-phase summaries, and the
    resolved scenario keeps the schedule and the phases."""
    doc = {
        "duration": "20s",
        "seed": 2,
        "topology": {"bottleneck_rate": "10Mbps", "buffer": 100},
        "traffic": [{"kind": "bulk", "flows": 2}],
        "schedule": [{"at": "10s", "action": "flows", "start": 3, "spread": "0s"}],
        "metrics": {"phases": [[2, 10], [10.5, 20]]},
    }
    r = aqmlab.run(doc)
    phases = r.summary["phases"]
    assert [p["flows"]["count"] for p in phases] == [2, 5]
    assert phases[1]["start_s"] == 10.5
    assert r.scenario["schedule"][0]["action"] == "flows"
    assert r.scenario["metrics"]["phases"] == [["2s", "10s"], ["10500ms", "20s"]]
    assert r.params.column_names == ["time_s", "name", "value"]
    assert r.summary["links"][0]["name"] == "bottleneck"


def test_dsack_counters() -> None:
    """``tcp.dsack`` (on in the linux profile): a step down of the path's delay reorders the
    flows' segments, the copies RACK sends are reported duplicate, and the reports are counted in
    the summary, the flows table and the terminal's summary; off, none is, and the switch stays
    out of the resolved scenario."""
    from rich.console import Console

    from aqmlab.report import summary_table

    doc = {
        "duration": "20s",
        "seed": 1,
        "topology": {"bottleneck_rate": "10Mbps", "bottleneck_delay": "100ms", "buffer": 100},
        "aqm": {"kind": "droptail"},
        "tcp": {"profile": "linux"},
        "traffic": [{"kind": "bulk", "flows": 4}],
        "schedule": [{"at": "10s", "action": "link", "link": "bottleneck", "delay": "10ms"}],
        "metrics": {"start": "2s"},
    }
    r = aqmlab.run(doc)
    f = r.summary["flows"]
    assert r.scenario["tcp"]["dsack"] is True
    assert f["dsacks"] > 0
    for c in ("dsacks", "dsack_undos", "reorderings"):
        assert sum(r.flows.column(c).to_pylist()) == f[c]
    off = aqmlab.run(doc, overrides=["tcp.dsack=false"])
    assert off.summary["flows"]["dsacks"] == 0
    assert "dsack" not in off.scenario["tcp"]
    c = Console(width=200, record=True)
    c.print(summary_table([("on", r.summary), ("off", off.summary)]))
    assert "D-SACKs" in c.export_text()


def test_sack_rack_prr_counters() -> None:
    """``tcp.sack``, ``tcp.rack`` and ``tcp.prr``: their counters travel to the summary, the
    flows table and the terminal's summary (rows shown only when a run has them)."""
    from rich.console import Console

    from aqmlab.report import summary_table

    doc = {
        "duration": "20s",
        "seed": 1,
        "topology": {"bottleneck_rate": "10Mbps", "buffer": 30},
        "aqm": {"kind": "droptail"},
        "tcp": {"packet_size": 1000, "sack": True, "rack": True, "prr": True},
        "traffic": [{"kind": "bulk", "flows": 4}],
        "metrics": {"start": "2s"},
    }
    r = aqmlab.run(doc)
    f = r.summary["flows"]
    assert f["sack_recoveries"] > 0 and f["rack_detections"] > 0
    assert f["sack_recoveries"] == f["fast_retransmits"]
    cols = r.flows.column_names
    for c in ("sack_recoveries", "rack_detections", "tlp_probes", "timeouts_undone", "dsacks",
              "dsack_undos", "reorderings"):  # fmt: skip
        assert c in cols
        assert sum(r.flows.column(c).to_pylist()) == f[c]
    assert r.scenario["tcp"]["sack"] is True
    plain = aqmlab.run(doc, overrides=["tcp.rack=false", "tcp.sack=false", "tcp.prr=false"])
    assert plain.summary["flows"]["sack_recoveries"] == 0
    # Off, the switches stay out of the resolved scenario (a sweep's point ids as before).
    assert not {"sack", "rack", "prr"} & set(plain.scenario["tcp"])

    def text(runs: list[tuple[str, Any]]) -> str:
        c = Console(width=200, record=True)
        c.print(summary_table(runs))
        return c.export_text()

    assert "SACK recoveries" not in text([("plain", plain.summary)])
    assert "SACK recoveries" in text([("plain", plain.summary), ("sack", r.summary)])
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate({**doc, "tcp": {"rack": True}})
    assert e.value.path == "tcp.rack"


def test_group_delays_are_a_table_of_their_own(tmp_path: Path) -> None:
    """``metrics.group_delays``: each traffic group's histogram in ``group_delay`` (and
    ``group_delay.parquet``), whose counts are the summary's ``groups.G.packets`` and add up to
    the link's own histogram; without the switch the table is empty and the file absent."""
    doc = {
        "duration": "10s",
        "topology": {"bottleneck_rate": "10Mbps", "buffer": 100},
        "tcp": {"packet_size": 500},
        "traffic": [
            {"kind": "bulk", "flows": 3},
            {"kind": "bulk", "flows": 3, "direction": "reverse"},
            {"kind": "bulk", "flows": 2, "base_rtt": "200ms"},
        ],
        "metrics": {"start": "2s", "group_delays": True},
    }
    r = aqmlab.run(doc)
    g = r.group_delay
    assert g.column_names == ["link", "group", "lower_s", "upper_s", "count"]
    groups = r.summary["bottleneck"]["groups"]
    # The forward groups' data and the reverse group's ACKs cross the bottleneck.
    assert sorted(groups) == ["0", "1", "2"]
    rows = g.to_pylist()
    for key, figures in groups.items():
        n = sum(x["count"] for x in rows if x["link"] == "bottleneck" and x["group"] == int(key))
        assert n == figures["packets"]
    link = sum(x["count"] for x in r.delay.to_pylist() if x["link"] == "bottleneck")
    assert (
        link == sum(f["packets"] for f in groups.values()) == r.summary["bottleneck"]["departures"]
    )
    out = r.save(tmp_path / "run")
    assert (out / results.GROUP_DELAY).is_file()
    assert same_table(load_run(out).group_delay, g)
    doc["metrics"] = {"start": "2s"}
    plain = aqmlab.run(doc)
    assert plain.group_delay.num_rows == 0 and "groups" not in plain.summary["bottleneck"]
    assert not (plain.save(tmp_path / "plain") / results.GROUP_DELAY).exists()
