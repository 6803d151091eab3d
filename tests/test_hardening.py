"""Bad input that validation once let through, ``--truncate`` and the outline of
``aqmlab validate``."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import pytest

import aqmlab
from aqmlab import scenario
from aqmlab.scenario import MAX_DEPTH, ScenarioError

from conftest import ROOT, SMALL, aqmlab_cli, assert_clean_error


def error_of(doc: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as e:
        scenario.validate(doc)
    return e.value


def nested(depth: int, leaf: Any = 1) -> Any:
    v = leaf
    for _ in range(depth):
        v = {"a": v}
    return v


# -- values TOML or the engine cannot hold -----------------------------------


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("seed", 2**63, "seed"),
        ("seed", 2**64 + 5, "seed"),
        ("topology.buffer", 10**400, "topology.buffer"),
        ("topology.buffer", -(10**30), "topology.buffer"),
        ("aqm.max_p", math.inf, "aqm.max_p"),
        ("aqm.kind", "re\ud800d", "aqm.kind"),
    ],
)
def test_value_the_engine_cannot_hold_names_its_field(
    small_doc: dict[str, Any], key: str, value: Any, path: str
) -> None:
    scenario.apply_overrides(small_doc, [f"{key}=0"])
    node = small_doc
    *parents, last = key.split(".")
    for k in parents:
        node = node[k]
    node[last] = value
    e = error_of(small_doc)
    assert e.path == path, str(e)


def test_a_key_that_is_not_unicode_is_named(small_doc: dict[str, Any]) -> None:
    small_doc["aqm"]["x\udc80"] = 1
    e = error_of(small_doc)
    assert e.path == 'aqm."x\\udc80"', str(e)


@pytest.mark.parametrize("depth", [MAX_DEPTH, 200, 1000, 5000])
def test_deep_nesting_is_a_scenario_error_not_a_recursion_error(
    small_doc: dict[str, Any], depth: int
) -> None:
    small_doc["aqm"]["max_p"] = nested(depth)
    e = error_of(small_doc)
    assert e.path.startswith("aqm.max_p"), str(e)
    # load() copies without recursion too.
    with pytest.raises(ScenarioError) as e2:
        scenario.load({"aqm": nested(depth)})
    assert e2.value.path.startswith("aqm.a")


def test_a_cyclic_document_is_a_scenario_error() -> None:
    doc: dict[str, Any] = {"duration": "1s"}
    doc["aqm"] = doc
    with pytest.raises(ScenarioError) as e:
        scenario.validate(scenario.load(doc))
    assert e.value.path.startswith("aqm.aqm")


def test_deep_override_value_names_the_key(small_doc: dict[str, Any]) -> None:
    value = "{a = " * 1000 + "1" + "}" * 1000
    with pytest.raises(ScenarioError) as e:
        scenario.apply_overrides(small_doc, [f"aqm.max_p={value}"])
    assert e.value.path.startswith("aqm.max_p.a"), str(e.value)


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("seed = 9223372036854775808", "seed"),
        ("seed = 1" + "0" * 5000, "seed"),
        ('seed = "\\uD800"', "seed"),
        ("seed = " + "[" * 1000 + "1" + "]" * 1000, "seed"),
    ],
)
def test_toml_text_errors_name_the_field(line: str, path: str) -> None:
    text = SMALL.read_text().replace("seed = 1", line, 1)
    with pytest.raises(ScenarioError) as e:
        scenario.validate(scenario.load(text))
    assert e.value.path.startswith(path), str(e.value)


def test_toml_error_inside_an_array_of_tables_names_its_index() -> None:
    text = SMALL.read_text() + '\n[[schedule]]\nat = "1s"\naction = "flows"\nstart = 1e\n'
    with pytest.raises(ScenarioError) as e:
        scenario.load(text)
    assert e.value.path == "schedule[0].start", str(e.value)


# -- what a run would cost -----------------------------------------------------


def test_a_sample_interval_that_cannot_fit_is_refused_with_the_figure(
    small_doc: dict[str, Any],
) -> None:
    scenario.apply_overrides(small_doc, ["metrics.sample_interval=1ns"])
    e = error_of(small_doc)
    assert e.path == "metrics.sample_interval"
    # 20 s / 1 ns + 1 samples of one monitored link.
    assert "2.0e10 queue samples" in e.msg and "TB" in e.msg, e.msg
    assert "metrics.memory_limit is 4.0 GB" in e.msg


def test_memory_limit_is_a_setting(small_doc: dict[str, Any]) -> None:
    # 20 s at 10 us: 2e6 samples, about 400 MB: refused under 300 MB, run under 4 GB.
    scenario.apply_overrides(small_doc, ["metrics.sample_interval=10us"])
    scenario.validate(small_doc)
    scenario.apply_overrides(small_doc, ['metrics.memory_limit="300MB"'])
    assert error_of(small_doc).path == "metrics.sample_interval"
    scenario.apply_overrides(small_doc, ["metrics.memory_limit=0"])
    assert error_of(small_doc).path == "metrics.memory_limit"


def test_a_window_that_cannot_fit_is_refused(small_doc: dict[str, Any]) -> None:
    scenario.apply_overrides(small_doc, ["metrics.window=1ns"])
    assert error_of(small_doc).path == "metrics.window"


def test_an_aqm_ticking_too_often_for_the_run_is_refused() -> None:
    doc = scenario.load(ROOT / "scenarios/aqm/pi.toml")
    scenario.apply_overrides(doc, ["aqm.sampling_freq=1000000"])
    scenario.validate(doc)  # 1 MHz over 300 s: 6e8 ticks, allowed
    scenario.apply_overrides(doc, ["duration=2000s"])
    e = error_of(doc)
    assert e.path == "aqm" and "timer events" in e.msg, str(e)


def test_a_udp_source_faster_than_the_event_budget_is_refused(small_doc: dict[str, Any]) -> None:
    small_doc["traffic"].append(
        {"kind": "cbr", "flows": 1, "rate": "1000000Gbps", "packet_size": 1000}
    )
    e = error_of(small_doc)
    assert e.path == "traffic[1].rate", str(e)


def test_markov_holding_times_below_a_packet_time_are_refused() -> None:
    doc = scenario.load(ROOT / "scenarios/markov-loss.toml")
    scenario.validate(doc)
    # 48-byte packets at 2 Mbps: 192 us.
    doc["topology"]["links"][0]["loss"]["hold"] = ["50ms", "192us", "1ns"]
    e = error_of(doc)
    assert e.path == "topology.links[0].loss.hold[2]", str(e)
    assert "192us" in e.msg
    doc["topology"]["links"][0]["loss"]["hold"] = ["50ms", "192us", "192us"]
    scenario.validate(doc)


# -- item 17: --truncate ---------------------------------------------------------


def test_a_short_duration_suggests_truncate() -> None:
    doc = scenario.load(ROOT / "scenarios/markov-loss.toml")
    scenario.apply_overrides(doc, ["duration=120s"])
    e = error_of(doc)
    assert "--truncate" in e.msg and "truncate=True" in e.msg


def test_truncate_drops_entries_and_clips_phases() -> None:
    doc = scenario.load(ROOT / "scenarios/markov-loss.toml")
    scenario.apply_overrides(doc, ["duration=120s"])
    notes = scenario.truncate(doc)
    resolved = scenario.validate(doc)
    assert [e["at"] for e in resolved["schedule"]] == ["50s"] * 5 + ["100s"] * 5
    phases = resolved["metrics"]["phases"]
    assert phases[-1] == ["100s", "120s"] and len(phases) == 3
    assert len(notes) == 3
    assert "dropped 35 of 45 schedule entries" in notes[0] and "schedule[10..44]" in notes[0]
    assert "clipped metrics.phases[2]" in notes[1]
    assert "metrics.phases[3..9]" in notes[2]


def test_truncate_clips_or_drops_a_periodic_phase() -> None:
    doc = scenario.load(SMALL)
    doc.setdefault("metrics", {})["phases"] = [
        {"from": "2s", "to": "30s", "every": "1s", "length": "500ms"},
        {"from": "19s", "to": "30s", "every": "2s", "length": "500ms", "offset": "1s"},
    ]
    scenario.apply_overrides(doc, ["duration=20s"])
    notes = scenario.truncate(doc)
    resolved = scenario.validate(doc)
    assert resolved["metrics"]["phases"] == [
        {"from": "2s", "to": "20s", "every": "1s", "length": "500ms"}
    ]
    assert "clipped metrics.phases[0]" in notes[0] and "dropped 1 of 2 phases" in notes[1]


def test_truncate_keeps_an_entry_just_before_the_end_and_moves_a_late_start() -> None:
    doc = scenario.load(SMALL)
    doc["schedule"] = [
        {"at": "4999999999ns", "action": "flows", "group": 0, "stop": 1},
        {"at": "5s", "action": "flows", "group": 0, "stop": 1},
    ]
    doc["metrics"]["start"] = "6s"
    scenario.apply_overrides(doc, ["duration=5s"])
    notes = scenario.truncate(doc)
    assert [e["at"] for e in doc["schedule"]] == ["4999999999ns"]
    assert doc["metrics"]["start"] == "0s" and len(notes) == 2
    scenario.validate(doc)


def test_run_truncate_in_python_warns_with_the_notes() -> None:
    with pytest.warns(scenario.TruncationNote) as notes:
        r = aqmlab.run(
            ROOT / "scenarios/markov-loss.toml",
            overrides=["duration=1s", "metrics.sample_interval=100ms"],
            truncate=True,
        )
    assert "schedule" not in r.scenario
    assert r.summary["duration_s"] == 1.0
    texts = [str(n.message) for n in notes]
    assert len(texts) == 3 and "schedule[0..44]" in texts[0], texts


def test_truncate_without_anything_past_the_end_changes_nothing() -> None:
    doc = scenario.load(SMALL)
    before = repr(doc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scenario.truncate(doc) == []
    assert repr(doc) == before


def test_cli_truncate(tmp_path: Path) -> None:
    f = ROOT / "scenarios/markov-loss.toml"
    p = aqmlab_cli("validate", f, "--set", "duration=120s")
    assert_clean_error(p)
    assert "--truncate" in p.stderr
    p = aqmlab_cli("validate", f, "--set", "duration=120s", "--truncate")
    assert p.returncode == 0, p.stderr
    assert "note: " in p.stderr and "schedule[10..44]" in p.stderr
    out = tmp_path / "run"
    p = aqmlab_cli(
        "run",
        f,
        "--out",
        out,
        "-q",
        "--truncate",
        "--set",
        "duration=2s",
        "--set",
        "metrics.sample_interval=100ms",
    )
    assert p.returncode == 0, p.stderr
    assert (out / "manifest.json").exists()


# -- item 18: the outline of aqmlab validate ----------------------------------


def describe(doc: dict[str, Any]) -> str:
    return scenario.describe(scenario.validate(doc))


def test_outline_counts_udp_apart_from_tcp_and_shows_web_simple(
    small_doc: dict[str, Any],
) -> None:
    small_doc["traffic"] += [
        {"kind": "cbr", "flows": 3, "rate": "1Mbps"},
        {"kind": "web-simple", "sessions": 7},
    ]
    text = describe(small_doc)
    assert "20 forward newreno flows" in text, text
    assert "3 forward cbr UDP sources" in text, text
    assert "7 forward web-simple sessions" in text, text


def test_outline_shows_the_schemes_of_a_custom_topology() -> None:
    text = describe(scenario.load(ROOT / "scenarios/markov-loss.toml"))
    assert "ecn on wireless" in text and "droptail on 6 links" in text, text
    assert "+180 started by the schedule" in text, text
    doc = scenario.load(ROOT / "scenarios/markov-loss.toml")
    doc["aqm"] = {"kind": "pi"}
    text = describe(doc)
    # [aqm] applies only to links without their own: here the six host links.
    assert "pi on 6 links" in text and text.count("red(") == 1, text


# -- item 19: no profiler output in the repository -------------------------------


def test_no_profiler_output_is_tracked_and_it_is_ignored() -> None:
    import shutil
    import subprocess

    ignore = (ROOT / ".gitignore").read_text().splitlines()
    assert "cachegrind.out.*" in ignore and "callgrind.out.*" in ignore
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert not [f for f in files if "grind.out." in f or f.startswith("perf.data")]


def test_schedule_occurrences_expand_repeating_entries_as_the_engine() -> None:
    """Each repetition of an entry with ``every`` in time order, at equal times in file order;
    ``until`` and the end of the run excluded (worked by hand)."""
    resolved = {
        "duration": "1s",
        "schedule": [
            {"at": "500ms", "every": "200ms", "action": "link", "rate": "1Mbps"},
            {"at": "700ms", "action": "flows", "start": 1},
            {"at": "100ms", "every": "300ms", "until": "700ms", "action": "flows", "start": 2},
        ],
    }
    got = [(i, t // 1_000_000) for i, t, _ in scenario.schedule_occurrences(resolved)]
    assert got == [(2, 100), (2, 400), (0, 500), (0, 700), (1, 700), (0, 900)]
    doc = scenario.load(SMALL)
    doc["duration"] = "20s"
    doc["schedule"] = [{"at": "1s", "every": "5s", "action": "flows", "start": 1}]
    ok = scenario.validate(doc)
    assert ok["schedule"][0]["every"] == "5s"
    assert "(+4 started by the schedule)" in scenario.describe(ok)
