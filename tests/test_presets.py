"""The seeds' presets (python/aqmlab/experiments/presets/): every experiment file parses, names
what exists, and every point it describes (full and quick form) resolves, through the runner's
own resolver (aqmlab.experiments.resolve_points), to a scenario the engine accepts. A few checks
pin the presets' set-ups where the seeds fix them. Nothing is run here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from aqmlab.experiments import Point, load_experiment, resolve_points
from aqmlab.papers import by_seed, split_source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PRESETS = Path(__file__).resolve().parents[1] / "python" / "aqmlab" / "experiments" / "presets"


def _is_experiment(path: Path) -> bool:
    with path.open("rb") as f:
        return "experiment" in tomllib.load(f)


# Every experiment file (scenario files, in scenarios/ or beside them, have no [experiment]).
FILES = sorted(p for p in PRESETS.rglob("*.toml") if _is_experiment(p))

# Derived metrics of the report's registry (aqmlab.report.metrics) the presets use.
DERIVED = {
    "queue_mean",
    "queue_std",
    "queue_std_mean",
    "param_mean",
    "param_final",
    "response_within",
    "response_quantile",
    "completed_requests",
    "goodput_bytes",
    "goodput_all",
    "goodput_ratio",
    "group_goodput",
    "group_loss",
    "group_jain",
    "loss_ratio",
    "response_mean",
    "loss_sync",
    "summary_sum",
}
TOP_KEYS = {
    "experiment",
    "quick",
    "scheme",
    "factor",
    "phase",
    "metric",
    "table",
    "paper",
    "ns2",
    "figure",
    "relation",
}

# The seeds' experiments (every preset but the format's small examples).
SEED_FILES = [p for p in FILES if not p.stem.startswith("example-")]


def _read(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        return tomllib.load(f)


def test_there_are_presets() -> None:
    names = [_read(p)["experiment"]["name"] for p in FILES]
    assert len(set(names)) == len(names), "preset names must be unique"
    seeds = {
        "003_b277268f444f7691.txt": ["thesis-4.5"]
        + [f"thesis-5.5.{i}" for i in range(1, 6)]
        + [f"thesis-6.4.{i}" for i in range(1, 6)],
        "002_80945567bf68047d.txt": [
            "rem-4.1",
            "rem-4.2",
            "rem-4.3",
            "rem-5.1",
            "rem-5.1-loss",
            "rem-5.2",
        ],
        "004_618a487a53bfbc7f.txt": ["feng-fig1-4", "feng-fig6-7"],
        "000_0675317d310dd341.txt": ["ecn-web-000", "ecn-web-000-replay"],
        "001_e060da456e213f64.txt": ["aqm-web-001"],
    }
    by_name = {_read(p)["experiment"]["name"]: _read(p)["experiment"] for p in FILES}
    for seed, want in seeds.items():
        for n in want:
            assert n in by_name, n
            # The source names the paper (its citation), then the place in it.
            paper = by_seed(seed)
            assert paper is not None, seed
            source = by_name[n]["source"]
            assert source.startswith(paper.citation + ": "), (n, source)
            assert split_source(source) == (paper, source[len(paper.citation) + 2 :])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_preset_is_consistent(path: Path) -> None:
    exp = _read(path)
    assert set(exp) <= TOP_KEYS, set(exp) - TOP_KEYS
    e = exp["experiment"]
    assert e["source"].strip() and e["title"].strip()
    if path in SEED_FILES:
        assert e["notes"].strip(), "notes must say what was chosen where the paper is silent"
    assert (path.parent / e["scenario"]).is_file()
    schemes = [s["name"] for s in exp["scheme"]]
    assert len(set(schemes)) == len(schemes)
    metrics = {m["name"]: m for m in exp["metric"]}
    assert len(metrics) == len(exp["metric"])
    for m in exp["metric"]:
        assert ("summary" in m) != ("derived" in m), m["name"]
        if "derived" in m:
            assert m["derived"] in DERIVED, m["derived"]
        assert m.get("stat", "mean") in ("mean", "range")
        assert m.get("better", "none") in ("higher", "lower", "none")
    phases = ["all"] + [p["name"] for p in exp.get("phase", [])]
    assert len(set(phases)) == len(phases)
    factors = {f["name"]: f for f in exp.get("factor", [])}
    tables = exp["table"] if isinstance(exp["table"], list) else [exp["table"]]
    for t in tables:
        for dim in t["rows"] + t.get("columns", []):
            assert dim in ("scheme", "phase") or dim in factors, (t["name"], dim)
        for m in t["metrics"]:
            assert m in metrics, (t["name"], m)
    refs = [("paper", i, p) for i, p in enumerate(exp.get("paper", []))]
    refs += [("ns2", i, p) for i, p in enumerate(exp.get("ns2", []))]
    for section, i, p in refs:
        where = f"{section}[{i}]"
        assert p["scheme"] in schemes, (where, p["scheme"])
        assert p["metric"] in metrics, (where, p["metric"])
        assert p.get("phase", "all") in phases, (where, p.get("phase"))
        assert ("value" in p) != ("range" in p), where
        if "range" in p:
            lo, hi = p["range"]
            assert lo <= hi, where
        for name, v in p.get("factors", {}).items():
            assert name in factors, (where, name)
            assert v in factors[name].get("labels", []) or v in factors[name]["values"], (where, v)
        assert p.get("note"), where
        if section == "ns2":
            # Where the figure comes from: the script that made it and the seeds.
            assert "tests/ns2/" in p["note"] and "seed" in p["note"], where
    for f in exp.get("figure", []):
        if "metric" in f:
            assert f["metric"] in metrics, (f["name"], f["metric"])
        if "factor" in f:
            assert f["factor"] in factors, (f["name"], f["factor"])
    for i, r in enumerate(exp.get("relation", [])):
        assert r["metric"] in metrics, (f"relation[{i}]", r["metric"])
        assert r["claim"].strip() and r["source"].strip(), f"relation[{i}]"
        for s in [r.get("than"), *r.get("schemes", [])]:
            assert s is None or s in schemes, (f"relation[{i}]", s)
    if "metrics" in exp.get("quick", {}):
        pytest.fail("quick has no metrics key")


def _resolve(path: Path, quick: bool) -> list[Point]:
    return resolve_points(load_experiment(path, quick=quick))


@pytest.mark.parametrize("quick", [False, True], ids=["full", "quick"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_point_validates(path: Path, quick: bool) -> None:
    """The runner's resolver: overrides applied in the documented order, the engine's validation,
    and as many `[metrics] phases` entries as `[[phase]]` names."""
    points = _resolve(path, quick)
    assert points
    bad = [f"{p.label}: {p.error}" for p in points if p.error is not None]
    assert not bad, f"{path.name} ({'quick' if quick else 'full'}): " + "; ".join(bad)
    assert len({p.id for p in points}) == len(points), "two points resolve to the same run"


def _web_simple(sc: dict[str, Any]) -> list[dict[str, Any]]:
    return [g for g in sc["traffic"] if g["kind"] == "web-simple"]


THESIS = [p for p in SEED_FILES if p.stem.startswith("thesis-")]
CHAPTER_6 = [p for p in THESIS if p.stem.startswith("thesis-6.4.")]
REM = [p for p in SEED_FILES if p.stem.startswith("rem-")]


@pytest.mark.parametrize("path", THESIS, ids=lambda p: p.stem)
def test_thesis_tcp_and_http(path: Path) -> None:
    """003: HTTP transfers of twelve 1 KB packets (1000 bytes on the wire) beside 500-byte FTP,
    ns-2's ECT retransmissions, ns-2 of ~2009's limited transmit (sending as `singledup_` does)
    and Impatient timer, and ns-2's window cut and recovery exit (docs/tcp.md)."""
    for quick in (False, True):
        for p in _resolve(path, quick):
            assert p.scenario is not None
            tcp = p.scenario["tcp"]
            assert tcp["packet_size"] == 500
            assert tcp["ect_retransmits"] is True
            assert tcp["limited_transmit"] is True
            assert tcp["partial_ack_timer"] == "first"
            assert tcp["limited_transmit_sends"] == "next"
            assert tcp["loss_ssthresh"] == "ns2", p.label
            assert tcp["recovery_exit"] == "ssthresh", p.label
            for g in _web_simple(p.scenario):
                assert (g["packet_size"], g["mean_packets"]) == (1000, 12), p.label


@pytest.mark.parametrize("path", THESIS, ids=lambda p: p.stem)
def test_thesis_red_family_runs_as_ns2(path: Path) -> None:
    """003's RED-family schemes ran on ns-2's `red.cc`: `wait_`, the `qlen > 1` gate, the gentle
    line fixed from the initial max_p, the idle rule, and (ARED) max_p's range from `bottom_` to
    `top_`; ARED's and ST-RED's rule runs at arrivals (docs/fidelity.md, item 4)."""
    seen = 0
    for p in _resolve(path, False):
        assert p.scenario is not None
        aqm = p.scenario["aqm"]
        if aqm["kind"] not in ("ared", "st-red", "ap-red"):
            continue
        seen += 1
        assert aqm["wait"] is True and aqm["empty_gate"] is True, p.label
        assert aqm["gentle_base"] == "initial", p.label
        assert aqm["idle_decay"] == "ns2", p.label
        if aqm["kind"] in ("ared", "st-red"):
            assert aqm["adapt"] == "arrival", p.label
        if aqm["kind"] == "ared":
            assert aqm["bounds"] == "ns2", p.label
    assert seen > 0


@pytest.mark.parametrize("path", CHAPTER_6, ids=lambda p: p.stem)
def test_chapter_6_draws_redraw_d_only(path: Path) -> None:
    """Seven runs that differ in the draws of d only: every purpose but `rtt` has a fixed seed,
    d sits on the source links, and the metrics combine the seeds as a range."""
    exp = _read(path)
    assert exp["experiment"]["seeds"] == 7
    assert all(m.get("stat") == "range" for m in exp["metric"])
    points = _resolve(path, False)
    assert sorted({p.seed for p in points}) == list(range(1, 8))
    for p in points:
        assert p.scenario is not None
        assert p.scenario["seeds"] == {"start": 1, "aqm": 1, "loss": 1, "app": 1}, p.label
        topo = p.scenario["topology"]
        assert "uniform" in topo["source_access_delay"]
        assert topo["sink_access_delay"] == "0s"
        assert "access_delay" not in topo


@pytest.mark.parametrize("path", REM, ids=lambda p: p.stem)
def test_rem_paper_tcp(path: Path) -> None:
    """002: ns-2 of 2001's TCP (no limited transmit, Slow-but-Steady, ECT retransmissions); a
    custom topology's groups spread their RTTs per flow."""
    for quick in (False, True):
        for p in _resolve(path, quick):
            assert p.scenario is not None
            tcp = p.scenario["tcp"]
            assert tcp["limited_transmit"] is False
            assert tcp["partial_ack_timer"] == "every"
            assert tcp["ect_retransmits"] is True
            if p.scenario["topology"]["kind"] == "custom":
                for g in p.scenario["traffic"]:
                    assert g["extra_delay"] == {"uniform": ["0s", "2ms"]}, p.label


def test_rem_wireless_red_runs_as_ns2() -> None:
    """002 section 5.1 (docs/fidelity.md item 6): the RED schemes run ns-2's RED (`wait`, a
    forced drop above max_th for ECN-capable packets too); with it RED(20:80) keeps the link
    at least 4 points busier at 20 sources than marking without wait, and RED(10:30) at 100
    sources at least 15 points busier than marking above max_th."""
    import aqmlab

    path = PRESETS / "rem-5.1.toml"
    for p in _resolve(path, False):
        assert p.scenario is not None
        aqm = p.scenario["aqm"]
        if aqm["kind"] == "red":
            assert aqm["wait"] is True and aqm["above_max"] == "drop", p.label
    common = [
        "tcp.limited_transmit=false",
        'tcp.partial_ack_timer="every"',
        "tcp.ect_retransmits=true",
        "tcp.ecn=true",
        "tcp.dupack_halving=false",
        "duration=60s",
        "schedule=[]",
        "metrics.phases=[]",
        "metrics.start=20s",
    ]

    def goodput(flows: int, th: tuple[int, int], ns2: bool) -> float:
        rule = "wait=true" if ns2 else 'above_max="mark"'
        red = f"min_th={th[0]},max_th={th[1]},max_p=0.1,w_q=0.002,gentle=false,ecn=true,{rule}"
        r = aqmlab.run(
            PRESETS / "scenarios" / "rem-5.1.toml",
            overrides=[*common, f"traffic[0].flows={flows}", f'aqm={{kind="red",{red}}}'],
        )
        util: float = r.summary["bottleneck"]["utilization"]
        return util

    assert goodput(20, (20, 80), True) > goodput(20, (20, 80), False) + 0.04
    assert goodput(100, (10, 30), True) > goodput(100, (10, 30), False) + 0.15
