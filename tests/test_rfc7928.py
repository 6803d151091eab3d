"""The pieces the RFC 7928 presets add: ``[[relation]]`` checks, the delay/goodput ellipse
(RFC 7928 section 2.7), loss synchronisation (section 2.4) and the per-group goodput metrics;
a small experiment run end to end; the presets' quick forms sized for CI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tomllib

from aqmlab.experiments import resolve_points
from aqmlab.experiments.catalog import PRESETS_DIR
from aqmlab.experiments.spec import ExperimentError, load_experiment, parse_experiment
from aqmlab.report.figures import interval_samples, sigma_ellipse
from aqmlab.report.metrics import loss_events
from aqmlab.report.relations import holds

TESTS = Path(__file__).resolve().parent
MINI = TESTS / "data" / "rfc7928-mini.toml"
RFC = sorted(
    PRESETS_DIR.glob("rfc7928-*.toml"),
    key=lambda p: tuple(int(x) for x in p.stem.removeprefix("rfc7928-").split(".")),
)


def _aqm_kinds() -> list[str]:
    """Every scheme the engine has: the values its refusal of an unknown kind lists."""
    import aqmlab
    from aqmlab import ScenarioError, scenario

    doc = scenario.load(TESTS.parent / "scenarios" / "canonical.toml")
    doc["aqm"] = {"kind": "no-such-scheme"}
    with pytest.raises(ScenarioError) as e:
        aqmlab.run(doc)
    return [k.strip().strip('"') for k in str(e.value).split("allowed:")[1].split(",")]


def test_loss_events_by_hand() -> None:
    # Drops at 0, 0.05 (flow 1, 2), 0.5 (flow 1), 0.52 (flow 1), 2.0 (flow 3); gap 0.1 s:
    # three events {1, 2}, {1}, {3}.
    t = np.array([0.0, 0.05, 0.5, 0.52, 2.0])
    f = np.array([1, 2, 1, 1, 3], dtype=np.int64)
    ev = loss_events(t, f, 0.1)
    assert [(s, sorted(h)) for s, h in ev] == [(0.0, [1, 2]), (0.5, [1]), (2.0, [3])]
    assert loss_events(t, f, 10.0)[0][1] == {1, 2, 3}


def test_sigma_ellipse_by_hand() -> None:
    # Four points (+-2, 0), (0, +-1): mean (0, 0), ML covariance diag(2, 0.5); the contour's
    # half-axes are sqrt(2) along x and sqrt(0.5) along y.
    x = np.array([2.0, -2.0, 0.0, 0.0])
    y = np.array([0.0, 0.0, 1.0, -1.0])
    ex, ey = sigma_ellipse(x, y, n=400)
    assert max(ex) == pytest.approx(math.sqrt(2), rel=1e-3)
    assert max(ey) == pytest.approx(math.sqrt(0.5), rel=1e-3)
    # Every contour point satisfies x^2 / 2 + y^2 / 0.5 = 1.
    assert np.allclose(ex**2 / 2 + ey**2 / 0.5, 1.0)


def test_interval_samples_by_hand() -> None:
    # Samples every 0.1 s; the link sends 125 000 bytes/s (1 Mbit/s); the queue holds 12 500
    # bytes in the first second and 25 000 in the second: delays 0.1 s and 0.2 s (Little).
    t = np.round(np.arange(0, 2.0, 0.1), 9)
    q = np.where(t < 1.0, 12_500.0, 25_000.0)
    dep = t * 125_000.0
    d, r = interval_samples(t, q, dep, 0.0, 2.0, 1.0)
    assert d == pytest.approx([0.1, 0.2])
    assert r == pytest.approx([1e6, 1e6])


def test_relation_operators() -> None:
    assert holds("<", 1.0, 2.0, 0) and not holds("<", 2.0, 2.0, 0)
    assert holds("<=", 2.0, 2.0, 0) and holds(">=", 2.0, 2.0, 0) and not holds(">", 2.0, 2.0, 0)
    assert holds("within", 1.04, 1.0, 0.05) and not holds("within", 1.06, 1.0, 0.05)
    assert holds("within", 0.0, 0.0, 0.05) and not holds("within", 0.1, 0.0, 0.05)


def _doc() -> dict:
    with MINI.open("rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize(
    ("edit", "path", "says"),
    [
        (lambda r: r.update(metric="lost"), "relation[0].metric", '"lost" is not a metric'),
        (lambda r: r.update(value=1.0), "relation[0]", "exactly one of than"),
        (lambda r: r.update(op="=="), "relation[0].op", "is not allowed"),
        (lambda r: r.update(than="RED"), "relation[0].than", '"RED" is not a scheme'),
        (lambda r: r.update(schemes=["PIE", "X"]), "relation[0].schemes[1]", "not a scheme"),
        (lambda r: r.update(ratio=0), "relation[0].ratio", "> 0"),
        (lambda r: r.update(tolerance=0.1), "relation[0].tolerance", 'op = "within"'),
        (lambda r: r.update(phase="late"), "relation[0].phase", '"late" is not a phase'),
        (lambda r: r.update(colour="red"), "relation[0].colour", "unknown key"),
        (lambda r: r.pop("claim"), "relation[0].claim", "missing"),
    ],
)
def test_bad_relations_name_the_field(edit, path: str, says: str) -> None:  # type: ignore[no-untyped-def]
    doc = _doc()
    edit(doc["relation"][0])
    with pytest.raises(ExperimentError) as e:
        parse_experiment(doc, MINI)
    assert e.value.path == path, str(e.value)
    assert says in str(e.value), str(e.value)


def test_a_metric_is_measured_where_its_factors_say() -> None:
    """One value, or a list of them: the report's metric applies at those settings only."""
    from aqmlab.report.data import parse_experiment as report_experiment

    doc = _doc()
    for given, where in (("5.3.2", [False, True]), (["5.1.2", "5.3.2"], [True, True])):
        doc["metric"][3]["factors"] = {"test": given}
        exp = report_experiment(parse_experiment(doc, MINI).doc)
        m = exp.metrics["IW3 / IW10"]
        assert [m.applies(exp.factors, (k,)) for k in (0, 1)] == where, given
    assert exp.metrics["delay"].applies(exp.factors, (0,))


@pytest.mark.parametrize(
    ("factors", "path", "says"),
    [
        ({"tests": "5.1.2"}, "metric[3].factors.tests", '"tests" is not a factor; known: test'),
        ({"test": "5.9"}, "metric[3].factors.test", '"5.9" is not a value of factor "test"'),
        ({"test": ["5.1.2", "5.9"]}, "metric[3].factors.test[1]", '"5.9" is not a value of'),
        ({"test": []}, "metric[3].factors.test", "an empty list"),
    ],
)
def test_bad_metric_factors_name_the_field(factors: dict, path: str, says: str) -> None:
    doc = _doc()
    assert doc["metric"][3]["name"] == "IW3 / IW10"
    doc["metric"][3]["factors"] = factors
    with pytest.raises(ExperimentError) as e:
        parse_experiment(doc, MINI)
    assert e.value.path == path, str(e.value)
    assert says in str(e.value), str(e.value)


def test_bad_ellipse_interval() -> None:
    doc = _doc()
    doc["figure"][0]["interval_s"] = 0
    with pytest.raises(ExperimentError) as e:
        parse_experiment(doc, MINI)
    assert e.value.path == "figure[0].interval_s" and "> 0" in str(e.value)


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rfc") / "mini"
    subprocess.run(
        [sys.executable, "-m", "aqmlab", "sweep", str(MINI), "--jobs", "2", "--out", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def test_mini_report_checks_relations_and_draws_the_ellipse(mini: Path) -> None:
    rep = mini / "report"
    s = json.loads((rep / "summary.json").read_text())
    # Relations 1 and 2: PIE and CoDel in two settings each (8 checks); relation 3: PIE in
    # one setting, never kept.
    assert s["relations"]["checked"] == 9 and s["relations"]["no_data"] == 0
    assert s["relations"]["kept"] <= 8
    assert s["figures_failed"] == []
    assert (rep / "ellipse.png").is_file() and (rep / "ellipse.svg").is_file()
    page = (rep / "index.html").read_text()
    assert "<h2>Relations</h2>" in page and "not kept" in page
    md = (rep / "tables.md").read_text()
    assert "a goodput above 100 Mbit/s on a 10 Mbit/s link (never kept) (0/1 kept)" in md
    # "IW3 / IW10" is measured in 5.1.2 only (its `factors`): "-" under 5.3.2, no warning.
    ratio = md[md.index("### The two NewReno flows of 5.1.2") :].splitlines()
    pie = next(ln for ln in ratio if ln.startswith("| PIE |"))
    assert pie.endswith("| - |") and "**" in pie, pie
    assert s["warnings"] == 0


def test_mini_metrics_are_sane(mini: Path) -> None:
    import pyarrow.parquet as pq

    t = pq.read_table(mini / "summary.parquet").to_pylist()
    rows = [r for r in t if r["phase"] == "all"]
    assert len(rows) == 3 * 2 * 2
    from aqmlab.report.data import load_output
    from aqmlab.report.metrics import evaluate_all

    out = load_output(mini)
    vals = evaluate_all(out)
    for (pid, _phase), v in vals.items():
        assert 0 < v["goodput"] <= 10.0, (pid, v)
        assert math.isnan(v["loss sync"]) or 0 < v["loss sync"] <= 1.0
    # The two NewReno flows of 5.1.2 through CoDel share the link: IW3 / IW10 near 1.
    ratios = [
        vals[(r.id, "all")]["IW3 / IW10"]
        for r in out.rows
        if r.phase == "all" and r.scheme == "CoDel" and r.factors["test"] == "5.1.2"
    ]
    assert all(0.5 < x < 2.0 for x in ratios), ratios
    # Not measured in 5.3.2 (the metric's `factors`): NaN, and no warning says so.
    assert all(
        math.isnan(vals[(r.id, "all")]["IW3 / IW10"])
        for r in out.rows
        if r.factors["test"] == "5.3.2"
    )
    assert not any("IW3 / IW10" in w for w in out.warnings), out.warnings


def test_rfc7928_presets_run_every_scheme_and_cite_the_rfc() -> None:
    every = _aqm_kinds()
    assert len(every) >= 21 and "dualpi2" in every and "fq-cobalt" in every
    sections = ("3.1", "4.4", "4.5", 5, 6, 7, 8, "8.3", 9, "9.2", 10)
    assert [p.stem for p in RFC] == [f"rfc7928-{n}" for n in sections]
    for p in RFC:
        with p.open("rb") as f:
            doc = tomllib.load(f)
        assert "RFC 7928" in doc["experiment"]["source"], p.stem
        kinds = sorted(s["set"][0].split('"')[1] for s in doc["scheme"])
        # Section 8.3 runs each scheme three times: at half, one and two times its parameter.
        times = 3 if p.stem == "rfc7928-8.3" else 1
        assert kinds == sorted(every * times), p.stem
        assert doc["relation"], p.stem
        assert any(f["kind"] == "ellipse" for f in doc["figure"]), p.stem
        exp = load_experiment(p, quick=True)
        assert exp.seeds == (1,)
    notes = (PRESETS_DIR / "rfc7928-5.toml").read_text()
    assert "5.4" in notes and 'variant =\n"ledbat"' in notes and "5 ms" in notes
    # Section 8.2.1's flow counts for S = 83 + 83 packets: round(0.036 S), round(0.081 S),
    # round(0.114 S).
    with (PRESETS_DIR / "rfc7928-8.toml").open("rb") as f:
        eight = tomllib.load(f)
    counts = [v[0][0]["flows"] for v in eight["factor"][0]["values"][:3]]
    assert counts == [round(k * 166) for k in (0.036, 0.081, 0.114)] == [6, 13, 19]
    # Section 8.2.6's Experiment 2: two entries that repeat every 200 ms, 100 ms apart, from
    # 10 s to the end: 1 Mbit/s in 10.0-10.1 s, 10 Mbit/s in 10.1-10.2 s, ...
    labels = eight["factor"][0]["labels"]
    exp2 = eight["factor"][0]["values"][labels.index("varying capacity every 100 ms")][1]
    assert [(e["at"], e["every"], e["rate"]) for e in exp2] == [
        ("10s", "200ms", "1Mbps"),
        ("10100ms", "200ms", "10Mbps"),
    ]
    # Results per phase: the 20 s phases of 8.2.5 and 8.2.6, a table for each varying case;
    # Experiment 2 per capacity state: two periodic phases (the first and the second 100 ms of
    # every 200 ms from 10 s), the other conditions the whole 10-90 s in their place.
    twenty = [[10, 30], [30, 50], [50, 70], [70, 90]]
    phases = [v[2] for v in eight["factor"][0]["values"]]
    assert eight["factor"][0]["keys"] == ["traffic", "schedule", "metrics.phases", "metrics.start"]
    # Section 8.2's optional runs with slow start: the three levels again, measured from 0 s.
    starts = {label: v[3] for label, v in zip(labels, eight["factor"][0]["values"], strict=True)}
    slow = [label for label, start in starts.items() if start == "0s"]
    assert slow == ["mild, with slow start", "medium, with slow start", "heavy, with slow start"]
    assert [v[0] for v in eight["factor"][0]["values"][6:]] == [
        v[0] for v in eight["factor"][0]["values"][:3]
    ]
    assert all(start == "10s" for label, start in starts.items() if label not in slow)
    state = {"from": "10s", "to": "90s", "every": "200ms", "length": "100ms"}
    for label, ph in zip(labels, phases, strict=True):
        assert ph[:4] == twenty, label
        if label == "varying capacity every 100 ms":
            assert ph[4:] == [state, {**state, "offset": "100ms"}]
        else:
            assert ph[4:] == [[10, 90], [10, 90]], label
    assert [p["name"] for p in eight["phase"]] == [
        "10-30 s",
        "30-50 s",
        "50-70 s",
        "70-90 s",
        "Exp. 2 at 1 Mbit/s",
        "Exp. 2 at 10 Mbit/s",
    ]
    per_phase = [t for t in eight["table"] if t.get("columns") == ["phase"]]
    assert [(t["factors"]["condition"], t["phases"]) for t in per_phase] == [
        ("varying congestion 6-13-19-6", ["10-30 s", "30-50 s", "50-70 s", "70-90 s"]),
        ("varying capacity 10-1 Mbit/s", ["10-30 s", "30-50 s", "50-70 s", "70-90 s"]),
        ("varying capacity every 100 ms", ["Exp. 2 at 1 Mbit/s", "Exp. 2 at 10 Mbit/s"]),
    ]
    per_state = [r for r in eight["relation"] if r.get("phase", "").startswith("Exp. 2")]
    assert [(r["metric"], r["phase"]) for r in per_state] == [
        ("delay", "Exp. 2 at 1 Mbit/s"),
        ("utilisation", "Exp. 2 at 10 Mbit/s"),
    ]


def test_the_pattern_names_the_eleven_presets() -> None:
    """`aqmlab reproduce 'rfc7928-*' --quick`, as CI's quick runs of each preset do one by one:
    the pattern picks sections 3.1 (an asymmetric link), 4.4 (packet sizes), 4.5 (section 6
    with ECN), 5-8, 8.3 (parameter sensitivity), 9, 9.2 (bidirectional traffic) and 10 (two
    AQMs in sequence) in the order of their numbers, every scheme in each (651 points in all:
    section 8.3 runs each scheme at three settings)."""
    p = subprocess.run(
        [sys.executable, "-m", "aqmlab", "reproduce", "rfc7928-*", "--quick", "--dry-run"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    names = [ln.split(" ")[0] for ln in p.stdout.splitlines() if "(quick form):" in ln]
    sections = ("3.1", "4.4", "4.5", 5, 6, 7, 8, "8.3", 9, "9.2", 10)
    assert names == [f"rfc7928-{n}" for n in sections]
    lines = [ln for ln in p.stdout.splitlines() if " points (" in ln and " scheme(s) x " in ln]
    assert sum(" points (21 scheme" in ln for ln in lines) == 10, lines
    assert sum(" points (63 scheme" in ln for ln in lines) == 1, lines
    assert sum(int(ln.split(" ")[0]) for ln in lines) == 651, lines


def test_section_10_puts_two_aqms_in_sequence() -> None:
    """Figure 3's path: group 0 (senders A) crosses L -> M and M -> R, group 1 (senders B)
    joins at M; the scheme is the preset's [aqm], which both links take (neither names its
    own), while every host link is DropTail; M -> R is the summary's bottleneck; the factor sets
    L -> M's rate; the A flows' path delay sums their delay at both links."""
    with (PRESETS_DIR / "rfc7928-10.toml").open("rb") as f:
        ten = tomllib.load(f)
    with (PRESETS_DIR / "scenarios" / "rfc7928-multi.toml").open("rb") as f:
        multi = tomllib.load(f)
    links = {ln["name"]: ln for ln in multi["topology"]["links"]}
    assert multi["topology"]["links"][0]["name"] == "mr"
    assert multi["topology"]["links"][1]["name"] == "lm"
    assert "aqm" not in links["mr"] and "aqm" not in links["lm"]
    hosts = [ln for name, ln in links.items() if name not in ("mr", "lm")]
    assert all(ln["aqm"] == {"kind": "droptail"} for ln in hosts)
    a, b = (t["path"] for t in multi["traffic"])
    assert a[1:4] == ["L", "M", "R"] and b[1:3] == ["M", "R"] and "L" not in b
    factor = ten["factor"][0]
    assert factor["key"] == "topology.links[1].rate"
    assert factor["values"] == ["20Mbps", "5Mbps", "2.5Mbps"]
    path = next(m for m in ten["metric"] if m["name"] == "A's path delay")
    assert path["args"]["paths"] == [
        "links.lm.groups.0.delay_mean_s",
        "links.mr.groups.0.delay_mean_s",
    ]
    for quick in (False, True):
        exp = load_experiment(PRESETS_DIR / "rfc7928-10.toml", quick=quick)
        assert all(x.error is None for x in resolve_points(exp))


def test_section_8_3_runs_each_scheme_at_three_settings() -> None:
    """Each scheme three times: its default exactly as the other presets run it, and its
    principal parameter halved (`x0.5`) and doubled (`x2`); PIE's target 7.5 and 30 ms, RED's
    thresholds 2.5/7.5 and 10/30, DropTail's buffer 42 and 166 packets; the relations leave
    DropTail's own settings out."""
    with (PRESETS_DIR / "rfc7928-8.3.toml").open("rb") as f:
        doc = tomllib.load(f)
    with (PRESETS_DIR / "rfc7928-8.toml").open("rb") as f:
        eight = tomllib.load(f)
    sets = {s["name"]: s["set"] for s in doc["scheme"]}
    for s in eight["scheme"]:
        assert sets[s["name"]] == s["set"], s["name"]
        assert f"{s['name']} x0.5" in sets and f"{s['name']} x2" in sets, s["name"]
    assert sets["PIE x0.5"] == ['aqm={kind="pie", target="7.5ms"}']
    assert sets["PIE x2"] == ['aqm={kind="pie", target="30ms"}']
    assert sets["RED x0.5"] == ['aqm={kind="red", min_th=2.5, max_th=7.5}']
    assert sets["RED x2"] == ['aqm={kind="red", min_th=10, max_th=30}']
    assert sets["DropTail x0.5"][1:] == ["topology.buffer=42"]
    assert sets["DropTail x2"][1:] == ["topology.buffer=166"]
    for r in doc["relation"]:
        assert r["than"] == "DropTail"
        assert sorted(r["schemes"]) == sorted(n for n in sets if not n.startswith("DropTail"))
