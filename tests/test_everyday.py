"""Everyday use: the AQM kind switch and --unset, compare, re-runs,
delay quantiles and CDFs, plots, the optional series, the examples in the
package, progress lines, --out checks, leftovers and Ctrl-C."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aqmlab
from aqmlab import results, scenario
from aqmlab.cli import progress_line
from aqmlab.compare import compare
from aqmlab.examples import examples_dir, list_examples

from conftest import ROOT, SMALL, aqmlab_cli, assert_clean_error

KINDS = [
    "droptail",
    "red",
    "ared-feng",
    "ared",
    "autotune-red",
    "pi",
    "rem",
    "blue",
    "avq",
    "ap-red",
    "st-red",
    "st-pi",
    "pie",
    "codel",
    "fq-codel",
    "step",
    "pi2",
    "dualpi2",
    "fq-pie",
    "cobalt",
    "fq-cobalt",
]


def _aqm_tables(doc: Any, path: str = "") -> list[str]:
    """The keys of every AQM table of a document (``aqm``, links' ``aqm``)."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            p = f"{path}.{k}" if path else k
            if k == "aqm" and isinstance(v, dict):
                out.append(p)
            out += _aqm_tables(v, p)
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _aqm_tables(v, f"{path}[{i}]")
    return out


EXAMPLES = sorted((ROOT / "scenarios").rglob("*.toml"))


@pytest.mark.parametrize("file", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "scenarios")))
def test_kind_switch_validates_on_every_example(file: Path) -> None:
    tables = _aqm_tables(scenario.load(file))
    assert tables, f"{file} has no AQM table"
    for table in tables:
        for kind in KINDS:
            doc = scenario.load(file)
            notes = scenario.apply_overrides_noted(doc, [f"{table}.kind={kind}"])
            scenario.validate(doc)  # raises on a leftover key
            old = scenario._get(scenario.load(file), scenario.parse_key(table))
            if old.get("kind", "droptail") != kind and set(old) - {"kind"}:
                assert len(notes) == 1 and f"{table} starts from {kind}'s defaults" in notes[0]
            else:
                assert notes == []


def test_kind_switch_keeps_keys_given_with_it_and_warns_in_the_api() -> None:
    doc = scenario.load(SMALL)
    notes = scenario.apply_overrides_noted(
        doc, ["aqm.target=20ms", "aqm.kind=codel", "aqm.interval=200ms"]
    )
    assert doc["aqm"] == {"kind": "codel", "target": "20ms", "interval": "200ms"}
    assert "dropped min_th, max_th, max_p, w_q" in notes[0]
    # The same kind again: nothing is reset.
    doc = scenario.load(SMALL)
    assert scenario.apply_overrides_noted(doc, ["aqm.kind=red"]) == []
    assert doc["aqm"]["min_th"] == 20
    with pytest.warns(scenario.KindSwitchNote, match="aqm starts from pie"):
        aqmlab.api.prepare(SMALL, overrides=["aqm.kind=pie"])


def test_unset_removes_keys_and_names_a_missing_one(tmp_path: Path) -> None:
    pi = ROOT / "scenarios" / "aqm" / "pi.toml"
    p = aqmlab_cli("validate", pi, "--set", "aqm.design=true")
    assert_clean_error(p)
    assert "a = " in p.stderr
    p = aqmlab_cli(
        "validate", pi, "--set", "aqm.design=true", "--unset", "aqm.a", "--unset", "aqm.b"
    )
    assert p.returncode == 0, p.stderr
    p = aqmlab_cli("validate", pi, "--unset", "aqm.nope")
    assert_clean_error(p)
    assert "aqm.nope: cannot unset it" in p.stderr
    doc = scenario.load(SMALL)
    scenario.apply_overrides(doc, [], unset=["traffic[0]"])
    assert doc["traffic"] == []


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """RED, PI and CoDel on the small dumbbell, run by the CLI."""
    base = tmp_path_factory.mktemp("cmp")
    dirs = []
    for kind in ("red", "pi", "codel"):
        out = base / kind
        p = aqmlab_cli("run", SMALL, "--set", f"aqm.kind={kind}", "-o", out, "-q")
        assert p.returncode == 0, p.stderr
        if kind != "red":
            assert f"aqm.kind: red -> {kind}" in p.stderr
        dirs.append(out)
    return dirs


def test_delay_quantiles_are_ordered_and_agree_with_the_histogram(three_runs: list[Path]) -> None:
    for d in three_runs:
        r = aqmlab.load_run(d)
        b = r.summary["bottleneck"]
        q = [b[f"queuing_delay_{k}_s"] for k in ("p50", "p90", "p99", "max")]
        assert 0 < q[0] <= q[1] <= q[2] <= q[3], q
        # The mean lies between the smallest and the largest delay.
        assert b["queuing_delay_mean_s"] <= q[3]
        h = r.delay.filter(np.asarray(r.delay.column("link").to_pylist()) == "bottleneck")
        counts = np.asarray(h.column("count").to_numpy())
        # Every departed packet in the measurement interval is in the histogram.
        assert counts.sum() == b["departures"]
        upper = np.asarray(h.column("upper_s").to_numpy())
        lower = np.asarray(h.column("lower_s").to_numpy())
        cum = np.cumsum(counts) / counts.sum()
        k = int(np.searchsorted(cum, 0.5))
        assert lower[k] <= q[0] <= upper[k]
        assert len(h) <= 976  # bounded, whatever the run's length
    reds = aqmlab.load_run(three_runs[0]).summary["bottleneck"]
    pis = aqmlab.load_run(three_runs[1]).summary["bottleneck"]
    assert reds["queuing_delay_p50_s"] != pis["queuing_delay_p50_s"]


def test_compare_table_markdown_and_csv(three_runs: list[Path], tmp_path: Path) -> None:
    p = aqmlab_cli("compare", *three_runs)
    assert p.returncode == 0, p.stderr
    assert "queuing delay p99 (ms)" in p.stdout and "codel" in p.stdout
    # What differs that matters, in one line; not a list of every key of three AQMs.
    assert p.stdout.startswith("the columns differ in: AQM\n"), p.stdout
    assert "more keys" not in p.stdout and "aqm.max_p" not in p.stdout
    md = tmp_path / "t.md"
    p = aqmlab_cli("compare", *three_runs, "-o", md)
    assert p.returncode == 0, p.stderr
    text = md.read_text()
    assert text.startswith("the columns differ in: AQM.\n\n| figure | red | pi | codel |")
    # Differing figures are bold, equal ones are not; the set-up comes first.
    assert "| seed | 1 | 1 | 1 |" in text
    assert "| AQM | **red** | **pi** | **codel** |" in text
    assert "| utilization | **" in text
    # What a run cost is shown, never as a difference.
    assert re.search(r"\| events \| [0-9,]+ \| [0-9,]+ \|", text), text
    p = aqmlab_cli("compare", *three_runs, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    util = next(r for r in rows if r["field"] == "bottleneck.utilization")
    assert util["differs"] == "1" and 0 < float(util["pi"]) <= 1
    assert next(r for r in rows if r["field"] == "seed")["differs"] == "0"
    for fld in ("events", "wall_time_s"):
        assert next(r for r in rows if r["field"] == fld)["differs"] == "0"
    assert_clean_error(aqmlab_cli("compare", three_runs[0], tmp_path))
    assert_clean_error(aqmlab_cli("compare", *three_runs, "-o", tmp_path / "t.txt"))
    assert compare(three_runs).labels == ["red", "pi", "codel"]


def _as_testbed(run: Path, out: Path, cc: str = "cubic") -> Path:
    """A copy of a simulator's run folder whose summary has the testbed's shape: its
    ``testbed`` section (kernel congestion control), retransmissions over the whole run, no
    delay percentiles, no timeouts, no event count."""
    shutil.copytree(run, out)
    s = json.loads((out / "summary.json").read_text())
    for k in ("queuing_delay_p50_s", "queuing_delay_p90_s", "queuing_delay_p99_s",
              "queuing_delay_max_s"):  # fmt: skip
        del s["bottleneck"][k]
    for k in ("timeouts", "sack_recoveries", "rack_detections", "tlp_probes", "timeouts_undone",
              "dsacks", "dsack_undos", "reorderings"):  # fmt: skip
        s["flows"].pop(k, None)
    del s["events"]
    s["flows"]["retransmits"] += 1000  # and those before the measurement interval
    s["testbed"] = {"congestion_control": cc, "kernel": "6.1.0-18-amd64"}
    (out / "summary.json").write_text(json.dumps(s))
    return out


def test_compare_a_simulated_run_and_a_testbed_run_like_with_like(
    three_runs: list[Path], tmp_path: Path
) -> None:
    sim = three_runs[0]
    tb = _as_testbed(sim, tmp_path / "tb-cubic")
    cmp = compare([sim, tb])
    rows = {r.field: r for r in cmp.rows}
    # The same scenario file, but not the same scenario: the engine and TCP differ, and say so.
    assert cmp.headline() == "the columns differ in: engine, TCP"
    assert rows["engine"].shown == ["simulator", "testbed"] and rows["engine"].differs
    assert rows["tcp"].shown == ["NewReno", "cubic (Linux 6.1.0)"] and rows["tcp"].differs
    # Retransmissions: the testbed's are over the whole run, not comparable, not a difference.
    re_row = rows["flows.retransmits"]
    assert re_row.shown[1].endswith("(whole run)") and not re_row.differs
    assert "not comparable" in re_row.note
    # The testbed has no delay percentiles nor timeouts: absent, not a difference.
    for fld in ("bottleneck.queuing_delay_p99_s", "flows.timeouts"):
        assert rows[fld].shown[1] == "absent" and not rows[fld].differs, fld
    # The same figure in both is the same.
    assert not rows["bottleneck.utilization"].differs
    p = aqmlab_cli("compare", sim, tb)
    assert p.returncode == 0, p.stderr
    assert "the same scenario" not in p.stdout
    assert "retransmits: not comparable: the testbed counts it over the whole run" in " ".join(
        p.stdout.split()
    )
    # Two testbed runs count alike: their retransmissions are compared.
    tb2 = _as_testbed(three_runs[1], tmp_path / "tb-reno", cc="reno")
    rows = {r.field: r for r in compare([tb, tb2]).rows}
    assert rows["flows.retransmits"].note == ""


def test_compare_seeds_of_one_scenario_as_one_column_with_a_t_interval(tmp_path: Path) -> None:
    short = ["duration=6s", "metrics.start=2s", "metrics.window=1s"]
    dirs = []
    for seed in (1, 2, 3):
        out = tmp_path / f"red-s{seed}"
        p = aqmlab_cli("run", SMALL, "-o", out, "-q", "--seed", str(seed),
                       *[a for s in short for a in ("--set", s)])  # fmt: skip
        assert p.returncode == 0, p.stderr
        dirs.append(out)
    other = tmp_path / "pi"
    p = aqmlab_cli("run", SMALL, "-o", other, "-q", "--set", "aqm.kind=pi",
                   *[a for s in short for a in ("--set", s)])  # fmt: skip
    assert p.returncode == 0, p.stderr
    cmp = compare([*dirs, other])
    assert cmp.labels == ["red-s1, red-s2, red-s3", "pi"]
    rows = {r.field: r for r in cmp.rows}
    assert rows["seed"].shown == ["1-3 (3 seeds)", "1"]
    # The mean and the half-width of Student's 95 % interval, by hand.
    util = [aqmlab.load_run(d).summary["bottleneck"]["utilization"] for d in dirs]
    mean = sum(util) / 3
    s = math.sqrt(sum((u - mean) ** 2 for u in util) / 2)
    half = 4.302652729911275 * s / math.sqrt(3)  # t(0.975, 2)
    u = rows["bottleneck.utilization"]
    assert u.raw[0] == pytest.approx(mean) and u.ci[0] == pytest.approx(half)
    assert u.shown[0] == f"{mean:.4f} ± {half:.4f}"
    assert math.isnan(u.ci[1])
    # A difference inside the interval is not highlighted.
    lo, hi = mean - half, mean + half
    assert u.differs == (not lo <= u.raw[1] <= hi and f"{mean:.4f}" != f"{u.raw[1]:.4f}")
    text = compare([*dirs, other]).csv()
    head = next(csv.reader(io.StringIO(text)))
    assert head == ["figure", "field", "red-s1, red-s2, red-s3", "pi",
                    "red-s1, red-s2, red-s3 ci95", "comparable", "differs"]  # fmt: skip
    # --per-run keeps them apart.
    assert compare([*dirs, other], per_run=True).labels == ["red-s1", "red-s2", "red-s3", "pi"]
    p = aqmlab_cli("compare", *dirs, "--per-run", "--format", "csv")
    assert _csv_header(p)[2:-2] == ["red-s1", "red-s2", "red-s3"]


def test_compare_counts_over_intervals_of_different_lengths_are_not_compared(
    three_runs: list[Path], tmp_path: Path
) -> None:
    longer = tmp_path / "longer"
    p = aqmlab_cli("run", three_runs[0], "-o", longer, "-q", "--set", "metrics.start=2s")
    assert p.returncode == 0, p.stderr
    rows = {r.field: r for r in compare([three_runs[0], longer]).rows}
    assert rows["window"].differs
    for fld in ("bottleneck.arrivals", "bottleneck.drops_early", "flows.retransmits"):
        assert not rows[fld].differs and "different lengths" in rows[fld].note, fld


def test_rerun_from_a_result_folder(three_runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "again"
    p = aqmlab_cli("run", three_runs[1], "-o", out, "-q")
    assert p.returncode == 0, p.stderr
    a, b = aqmlab.load_run(three_runs[1]), aqmlab.load_run(out)
    assert a.summary["events"] == b.summary["events"]
    assert a.summary["bottleneck"] == b.summary["bottleneck"]
    p = aqmlab_cli("run", three_runs[1], "-o", out, "-q", "--set", "aqm.kind=pie")
    assert p.returncode == 0, p.stderr
    assert aqmlab.load_run(out).scenario["aqm"]["kind"] == "pie"


@pytest.mark.parametrize(
    ("what", "extra"),
    [
        ("queue", []),
        ("queue-bytes", []),
        ("delay", []),
        ("throughput", []),
        ("cdf", []),
        ("params", []),
        ("queue", ["--link", "bottleneck"]),
    ],
)
def test_plot_choices(three_runs: list[Path], tmp_path: Path, what: str, extra: list[str]) -> None:
    runs = three_runs[1:] if what == "params" else three_runs  # RED adapts nothing
    out = tmp_path / f"{what}.png"
    p = aqmlab_cli("plot", *runs, "--what", what, *extra, "-o", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_smoothing_windows_by_hand() -> None:
    from aqmlab.plot import default_smooth, moving_mean, window_rate

    # 10 ms samples; 1000 and 1500 bytes leave in turn: 0.8 and 1.2 Mb/s between neighbours (the
    # solid band), exactly 1 Mb/s over any whole second.
    t = np.round(np.arange(0, 1001) * 0.01, 9)
    b = np.concatenate(([0.0], np.cumsum(np.where(np.arange(1000) % 2 == 0, 1000.0, 1500.0))))
    raw_t, raw = window_rate(t, b, 0.0)
    assert set(np.round(raw / 1e6, 9)) == {0.8, 1.2} and raw_t[0] == 0.01
    st, sm = window_rate(t, b, 1.0)
    assert st[0] == pytest.approx(1.0) and np.allclose(sm, 1e6)
    # The trailing mean of the samples in (t - w, t], from a whole window after the first.
    mt, mm = moving_mean([0, 1, 2, 3, 4], [0, 2, 4, 6, 8], 2.0)
    assert list(mt) == [2, 3, 4] and list(mm) == [3, 5, 7]
    # Throughput's default: 1 s, a twentieth of a shorter series; none for the others.
    assert default_smooth("throughput", t) == 0.5  # 10 s of samples
    assert default_smooth("throughput", np.arange(0, 40.001, 0.01)) == 1.0
    assert default_smooth("queue", t) == 0.0


def test_plot_legends_stay_off_the_traces(
    three_runs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import aqmlab.plot as P

    figs: list[Any] = []
    real = P._save

    def keep(fig: Any, path: Any) -> Any:
        figs.append(fig)
        return real(fig, path)

    monkeypatch.setattr(P, "_save", keep)
    P.plot_series([("red", three_runs[0]), ("pi", three_runs[1])], tmp_path / "q.png")
    P.plot_series([("red", three_runs[0])], tmp_path / "t.png", what="throughput")
    for fig in figs:
        r = fig.canvas.get_renderer()
        for ax in fig.axes:
            leg = ax.get_legend()
            assert leg is not None
            box, frame = leg.get_window_extent(r), ax.get_window_extent(r)
            assert not box.overlaps(frame), (box, frame)
    # The throughput panel says over which window it is a mean.
    assert figs[1].axes[0].get_title(loc="left") == "red (mean over 1 s)"


def test_plot_smooth_and_log_x_on_the_command_line(three_runs: list[Path], tmp_path: Path) -> None:
    for args in (
        ["--what", "throughput", "--smooth", "200ms"],
        ["--what", "queue", "--smooth", "0.5"],
        ["--what", "throughput", "--smooth", "0"],
        ["--what", "cdf", "--log-x"],
    ):
        out = tmp_path / "p.png"
        p = aqmlab_cli("plot", three_runs[0], *args, "-o", out)
        assert p.returncode == 0, (args, p.stderr)
        assert out.read_bytes()[:4] == b"\x89PNG"
    for args, words in (
        (["--smooth", "fast"], "--smooth 'fast': not a time window"),
        (["--smooth=-1s"], "--smooth '-1s': not a time window"),
        (["--what", "params", "--smooth", "1s"], "smoothing is for --what queue"),
        (["--what", "queue", "--log-x"], "--log-x is for --what cdf"),
        (["--what", "queue", "--smooth", "100s"], "longer than the series"),
    ):
        p = aqmlab_cli("plot", *three_runs[1:], *args, "-o", tmp_path / "x.png")
        assert_clean_error(p)
        assert words in p.stderr, (args, p.stderr)


def test_plot_a_cdf_per_traffic_group(three_runs: list[Path], tmp_path: Path) -> None:
    """`--what cdf --group G`: one curve per traffic group from a run with
    `metrics.group_delays`; a run without it, a group with no packets, another `--what` and a
    bad index are refused with one error line."""
    run = tmp_path / "groups"
    p = aqmlab_cli("run", SMALL, "--set", "metrics.group_delays=true", "-o", run, "-q")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "g.png"
    p = aqmlab_cli("plot", run, "--what", "cdf", "--group", "0", "--log-x", "-o", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:4] == b"\x89PNG"
    for dirs, args, words in (
        ([three_runs[0]], ["--what", "cdf", "--group", "0"], "metrics.group_delays = true"),
        ([run], ["--what", "cdf", "--group", "7"], "no packet of traffic group 7"),
        ([run], ["--what", "queue", "--group", "0"], "--group is for --what cdf"),
        ([run], ["--what", "cdf", "--group", "-1"], "a whole number >= 0"),
    ):
        p = aqmlab_cli("plot", *dirs, *args, "-o", tmp_path / "x.png")
        assert_clean_error(p)
        assert words in p.stderr, (args, p.stderr)


def test_plot_errors_name_the_choice(three_runs: list[Path], tmp_path: Path) -> None:
    p = aqmlab_cli("plot", three_runs[0], "--link", "nope", "-o", tmp_path / "x.png")
    assert_clean_error(p)
    assert "'nope'" in p.stderr and "'bottleneck'" in p.stderr
    p = aqmlab_cli("plot", three_runs[0], "--what", "flows", "-o", tmp_path / "x.png")
    assert_clean_error(p)
    assert "metrics.flow_series" in p.stderr
    p = aqmlab_cli("plot", three_runs[0], "--what", "params", "-o", tmp_path / "x.png")
    assert_clean_error(p)


def test_dctcp_alpha_in_the_flow_series(tmp_path: Path) -> None:
    """DCTCP's alpha per traced flow (NaN for the other variants), saved and read back; the
    step example runs and DCTCP without ECN is refused naming the field."""
    step = ROOT / "scenarios" / "aqm" / "step.toml"
    sets = ["duration=0.3s", "metrics.start=0.1s", "metrics.flow_series=[0]"]
    r = aqmlab.run(step, overrides=sets)
    alpha = np.asarray(r.flow_series.column("alpha").to_numpy())
    assert ((alpha >= 0) & (alpha <= 1)).all() and alpha.min() < 1
    assert r.summary["bottleneck"]["marks_forced"] > 0
    r.save(tmp_path / "run")
    back = aqmlab.load_run(tmp_path / "run").flow_series.column("alpha").to_pylist()
    assert back == alpha.tolist()
    reno = aqmlab.run(step, overrides=[*sets, "tcp.variant=newreno"])
    assert np.isnan(np.asarray(reno.flow_series.column("alpha").to_numpy())).all()
    p = aqmlab_cli("validate", step, "--set", "tcp.ecn=false")
    assert_clean_error(p)
    assert 'tcp.ecn: false is not allowed with variant = "dctcp"' in p.stderr


def test_flow_series_and_event_trace_are_off_by_default_and_bounded(tmp_path: Path) -> None:
    r = aqmlab.run(SMALL)
    assert r.flow_series.num_rows == 0 and r.events.num_rows == 0
    r = aqmlab.run(SMALL, overrides=["metrics.flow_series=[0, 3]", "metrics.trace=true"])
    fs = r.flow_series
    # One row per flow per sample (every 10 ms over 20 s, from 0 s).
    assert fs.num_rows == 2 * 2001
    assert set(fs.column("flow").to_pylist()) == {0, 3}
    cw = np.asarray(fs.column("cwnd").to_numpy())
    assert (cw >= 1).all() and cw.max() > 2
    rate = np.asarray(fs.column("delivery_rate_bps").to_numpy())
    # At most the link's rate, up to one packet per sample (a 10 ms sample
    # holds 25 packets of 500 B at 10 Mb/s; a 26th lands on its edge).
    assert (rate <= 10e6 * 26 / 25 + 1).all() and rate.max() > 0
    ev = r.events
    b = r.summary["bottleneck"]
    t = np.asarray(ev.column("time_s").to_numpy())
    assert (np.diff(t) >= 0).all()
    names = ev.column("event").to_pylist()
    assert set(names) <= {
        "drop-early",
        "drop-forced",
        "drop-overflow",
        "mark-early",
        "mark-forced",
        "lost",
    }
    # Over the whole run the trace holds at least the measured drops.
    assert sum(1 for n in names if n.startswith("drop")) >= b["drops_early"]
    # What was dropped: bulk flows' data on the forward link, their ACKs on the reverse one.
    kinds = set(zip(ev.column("link").to_pylist(), ev.column("packet").to_pylist(), strict=True))
    assert ("bottleneck", "data") in kinds, kinds
    assert kinds <= {(lk, k) for lk in ("bottleneck", "bottleneck-rev") for k in ("data", "ack")}
    r = aqmlab.run(SMALL, overrides=["metrics.trace=true", "metrics.trace_limit=10"])
    assert r.events.num_rows <= 20  # 10 per monitored link
    assert any("trace_limit = 10" in w for w in r.summary["warnings"])
    out = r.save(tmp_path / "x")
    assert aqmlab.load_run(out).events.num_rows == r.events.num_rows


def test_flow_series_of_pacing_and_bbr_flows(tmp_path: Path) -> None:
    """The pacing columns: NaN and an empty state for a flow that does not pace; a BBR flow's
    state names, bandwidth estimate and pacing rate; a folder keeps them."""
    over = ["metrics.flow_series=[0]", "traffic[0].flows=1", "duration=10s", "metrics.start=1s"]
    fs = aqmlab.run(SMALL, overrides=over).flow_series
    assert np.isnan(np.asarray(fs.column("pacing_rate_bps").to_numpy())).all()
    assert set(fs.column("bbr_state").to_pylist()) == {""}
    r = aqmlab.run(SMALL, overrides=[*over, "tcp.variant=bbr"])
    fs = r.flow_series
    states = fs.column("bbr_state").to_pylist()
    assert states[0] == "startup" and "probe_bw" in states
    assert set(states) <= {"startup", "drain", "probe_bw", "probe_rtt"}
    bw = np.asarray(fs.column("bbr_bw_bps").to_numpy())
    pace = np.asarray(fs.column("pacing_rate_bps").to_numpy())
    # The link carries 10 Mb/s of 500-byte packets: 9.2 Mb/s of payload.
    assert 0 < bw.max() <= 9.2e6 * 1.01
    assert np.nanmax(pace) > bw.max()  # Startup's gain
    assert r.scenario["tcp"]["pacing"] is True
    back = aqmlab.load_run(r.save(tmp_path / "bbr")).flow_series
    assert back.column("bbr_state").to_pylist() == states
    p = aqmlab_cli(
        "plot",
        tmp_path / "bbr",
        "--what",
        "flows",
        "--series",
        "bbr_bw_bps",
        "-o",
        tmp_path / "bw.png",
    )
    assert p.returncode == 0, p.stderr


def test_flow_series_refusals() -> None:
    with pytest.raises(aqmlab.ScenarioError, match=r"metrics.flow_series\[0\].*20 flows"):
        aqmlab.run(SMALL, overrides=["metrics.flow_series=[20]"])


@pytest.mark.parametrize(
    ("override", "path"),
    [
        ('metrics.window="1ns"', "metrics.window"),
        ('metrics.sample_interval="1ns"', "metrics.sample_interval"),
        ('tcp.max_rto="1ns"', "tcp.max_rto"),  # below min_rto: refused first
        ('tcp.min_rto="1ns"', None),
    ],
)
def test_runs_that_would_eat_the_machine_are_refused_before_they_start(
    override: str, path: str | None
) -> None:
    t = time.monotonic()
    p = aqmlab_cli("validate", SMALL, "--set", override)
    assert time.monotonic() - t < 30
    if path is None:
        assert p.returncode == 0, p.stderr
    else:
        assert_clean_error(p)
        assert p.stderr.startswith(f"error: {SMALL}: {path}"), p.stderr


def test_tiny_rto_bounds_are_refused() -> None:
    p = aqmlab_cli("validate", SMALL, "--set", 'tcp.min_rto="1ns"', "--set", 'tcp.max_rto="1ns"')
    assert_clean_error(p)
    assert "tcp.max_rto" in p.stderr and "timer events" in p.stderr


def test_large_runs_get_a_warning_with_the_figure(tmp_path: Path) -> None:
    # 20 s at 10 us: 2e6 rows, about 0.7 GB: under the warning; 4 us: 1.75 GB.
    p = aqmlab_cli(
        "run",
        SMALL,
        "--set",
        'metrics.sample_interval="4us"',
        "--set",
        "duration=1ms",
        "--set",
        "metrics.start=0s",
        "--set",
        "metrics.window=1ms",
        "-o",
        tmp_path / "x",
        "-q",
    )
    assert p.returncode == 0, p.stderr
    assert "warning" not in p.stderr
    from aqmlab._core import estimate

    doc = scenario.load(SMALL)
    scenario.apply_overrides(doc, ['metrics.sample_interval="4us"'])
    e = estimate(scenario.to_json(doc))
    assert e["bytes"] > e["warn"]


def test_unwritable_out_is_found_before_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    t = time.monotonic()
    p = aqmlab_cli("run", SMALL, "-o", blocker / "sub" / "run", "-q", "--set", "duration=200s")
    assert time.monotonic() - t < 20  # the 200 s run never started
    assert_clean_error(p)
    assert "cannot write there" in p.stderr


def test_leftover_tmp_folders_of_killed_runs_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    left = tmp_path / f"run.tmp-{dead}"
    left.mkdir()
    (left / "summary.json").write_text("{}")
    mine = tmp_path / f"run.tmp-{os.getpid()}x"  # not a pid: left alone
    mine.mkdir()
    p = aqmlab_cli("run", SMALL, "-o", tmp_path / "run", "-q")
    assert p.returncode == 0, p.stderr
    assert not left.exists() and mine.exists()
    assert results.is_run_dir(tmp_path / "run")


def test_progress_lines_when_not_on_a_terminal() -> None:
    line = progress_line(50.0, 200.0, 10.0, 82_000_000)
    assert line == (
        "progress: 50.0/200 s simulated (25 %), 5 sim-s per s, 8.2 M events/s, "
        "10 s elapsed, ETA 30 s"
    )
    assert "ETA unknown" in progress_line(0.0, 200.0, 1.0)
    assert "0 events/s" in progress_line(0.0, 200.0, 1.0)
    assert "1.5 k events/s" in progress_line(1.0, 200.0, 2.0, 3000)


def test_progress_bar_on_a_terminal_loads_rich_only_when_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The terminal test follows rich's rules without importing rich (which
    would cost 40 ms before the engine starts); the bar still appears on a
    terminal once the run has lasted PROGRESS_AFTER_S."""
    from aqmlab import cli

    probe = (
        "import sys; from aqmlab.cli import _LazyProgress; "
        "p = _LazyProgress(10.0, True); p(1.0, 5); print('rich' in sys.modules)"
    )
    env = {**os.environ, "FORCE_COLOR": "1"}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False", out.stderr
    for key, value, terminal in [
        ("FORCE_COLOR", "1", True),
        ("FORCE_COLOR", "", False),
        ("TTY_COMPATIBLE", "0", False),
        ("TTY_COMPATIBLE", "1", True),
    ]:
        for k in ("FORCE_COLOR", "TTY_COMPATIBLE"):
            monkeypatch.delenv(k, raising=False)
        monkeypatch.setenv(key, value)
        from rich.console import Console

        assert Console(stderr=True).is_terminal is terminal, (key, value)
        p = cli._LazyProgress(10.0, True)
        assert (p.enabled, p.log) == (terminal, not terminal), (key, value)
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setattr(cli, "PROGRESS_AFTER_S", 0.0)
    p = cli._LazyProgress(10.0, True)
    assert p(2.0, 1000) is True
    assert p.progress is not None
    assert p.progress.tasks[0].completed == 2.0
    p.close()
    assert p.progress is None


def test_ctrl_c_while_loading_exits_130_with_one_line() -> None:
    # SIGINT at several moments of the start-up (the imports take ~0.5 s;
    # the interpreter's own start, before aqmlab runs, takes ~0.03 s on a
    # quiet machine). A signal inside the interpreter's own start is
    # Python's to handle ("Could not import runpy module"), so the moments
    # count from the end of a bare start measured now, under today's load.
    starts = []
    for _ in range(3):
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-c", "import runpy"], check=True)
        starts.append(time.monotonic() - t0)
    base = sorted(starts)[1]
    for delay in (base + 0.05, base + 0.15, base + 0.25, base + 0.35):
        proc = subprocess.Popen(
            [sys.executable, "-m", "aqmlab", "validate", str(SMALL)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        # Before Python installs its handler the signal kills the process
        # silently; afterwards the command exits 130 with one line (or it
        # finished first).
        assert proc.returncode in (0, 130, -signal.SIGINT), err
        if "Traceback" in err:
            # Under load a moment may still fall inside Python's own start:
            # runpy finding and reading aqmlab's __main__, before aqmlab's
            # entry point runs. Such a traceback has only the interpreter's
            # frozen frames; one with a frame of aqmlab's is a failure.
            frames = [ln for ln in err.splitlines() if ln.lstrip().startswith('File "')]
            assert frames and all('File "<frozen ' in ln for ln in frames), (delay, err)
            continue
        if proc.returncode == 130:
            assert err.strip() == "aqmlab: interrupted", err


def test_examples_ship_in_the_package(tmp_path: Path) -> None:
    names = [n for n, _ in list_examples()]
    assert "canonical.toml" in names and "aqm/codel.toml" in names
    assert examples_dir().parent == Path(aqmlab.__file__).resolve().parent
    p = aqmlab_cli("examples", "-o", tmp_path / "ex")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "ex" / "aqm" / "pie.toml").is_file()


def test_load_tells_paths_from_text(tmp_path: Path) -> None:
    assert aqmlab.load("# comment") == {}
    assert aqmlab.load("") == {}
    assert aqmlab.load('duration = "1s"') == {"duration": "1s"}
    with pytest.raises(FileNotFoundError):
        aqmlab.load("nope.toml")
    f = tmp_path / "x.toml"
    f.write_text("seed = 3\n")
    assert aqmlab.load(str(f)) == {"seed": 3}


def test_duration_is_exact_and_utilisation_cannot_exceed_the_wire() -> None:
    r = aqmlab.run(SMALL, overrides=["duration=60s", "metrics.start=5s"])
    assert json.dumps(r.summary["duration_s"]) == "60.0"
    for link in r.summary["links"]:
        assert link["utilization"] <= 1.0
    assert r.summary["flows"]["goodput_bps_total"] <= 10e6


def test_summary_keys_are_documented() -> None:
    doc = (ROOT / "docs" / "results.md").read_text()
    for key in (
        "queuing_delay_p99_s",
        "delay.parquet",
        "flow_series.parquet",
        "events.parquet",
        "departed_bytes",
        "data_sent",
    ):
        assert key in doc, key


def test_warnings_module_is_quiet_by_default() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        aqmlab.api.prepare(SMALL)


def test_error_messages_quote_a_bounded_piece_of_the_input() -> None:
    p = aqmlab_cli("validate", SMALL, "--set", "aqm.kind=" + "x" * 5000)
    assert_clean_error(p)
    assert len(p.stderr) < 600, len(p.stderr)
    assert "(5000 characters)" in p.stderr and '"droptail"' in p.stderr
    from aqmlab._input import bound_quotes

    assert bound_quotes('value "short" ok') == 'value "short" ok'
    # Two short values far apart are two values, not one long one between them,
    # and an apostrophe opens none.
    far = 'a = "linux", ' + "and Linux's " * 10 + 'b = "timed" ok'
    assert bound_quotes(far) == far
    assert bound_quotes(f'a = "{"z" * 70}" b') == f'a = "{"z" * 40}...{"z" * 12}" (70 characters) b'
    assert len(bound_quotes("y" * 10_000)) <= 2000


def test_units_accept_exponents_and_spaces_as_documented() -> None:
    doc = scenario.load(SMALL)
    doc["duration"] = "2e1s"
    doc["topology"]["bottleneck_rate"] = "10 Mbps"
    r = scenario.validate(doc)
    assert r["duration"] == "20s" and r["topology"]["bottleneck_rate"] == "10Mbps"
    text = (ROOT / "docs" / "scenario.md").read_text()
    assert '"5e-3s"' in text and '"10 Mbps"' in text


@pytest.mark.parametrize(("rate", "size"), [("10Kbps", 1500), ("100Kbps", 9000), ("1Mbps", 64000)])
def test_utilisation_and_goodput_stay_within_the_wire_on_slow_links(rate: str, size: int) -> None:
    r = aqmlab.run(
        SMALL,
        overrides=[
            f"topology.bottleneck_rate={rate}",
            f"tcp.packet_size={size}",
            "traffic[0].flows=2",
            "duration=30s",
            "metrics.start=7s",
        ],
    )
    b = r.summary["bottleneck"]
    assert 0 < b["utilization"] <= 1.0, b["utilization"]
    cap = float(rate.removesuffix("Kbps").removesuffix("Mbps")) * (1e3 if "K" in rate else 1e6)
    assert b["throughput_bps"] <= cap * (1 + 1e-9)
    assert r.summary["flows"]["goodput_bps_total"] <= cap


# ---- ECN: two switches, and a note when they disagree ----------------------------------


def _resolved(*sets: str, file: Path = SMALL) -> dict[str, Any]:
    doc = aqmlab.load(file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aqmlab.apply_overrides(doc, list(sets))
    return aqmlab.validate(doc)


def test_ecn_notes_name_the_queue_and_the_switch(tmp_path: Path) -> None:
    from aqmlab.ecn import ecn_notes

    short = ["--set", "duration=8s", "--set", "metrics.start=2s", "--set", "metrics.window=2s"]
    # ECN-capable traffic, CoDel with its marking off: the run goes on, says so once, and drops.
    p = aqmlab_cli(
        "run", SMALL, "-o", tmp_path / "off", "--quiet", "--set", "aqm.kind=codel",
        "--set", "tcp.ecn=true", *short,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stderr.splitlines() if "ECN-capable traffic" in ln]
    assert len(notes) == 1, p.stderr
    assert notes[0].startswith(f"note: {SMALL}: ECN-capable traffic (tcp.ecn = true) meets aqm")
    assert "--set aqm.ecn=true" in notes[0] and "codel" in notes[0]
    off = json.loads((tmp_path / "off" / "summary.json").read_text())["bottleneck"]
    assert off["marks"] == 0 and off["drops_early"] > 0
    # Both switches on: no note, and marks.
    p = aqmlab_cli(
        "run", SMALL, "-o", tmp_path / "on", "--quiet", "--set", "aqm.kind=codel",
        "--set", "tcp.ecn=true", "--set", "aqm.ecn=true", *short,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "ECN" not in p.stderr, p.stderr
    on = json.loads((tmp_path / "on" / "summary.json").read_text())["bottleneck"]
    assert on["marks"] > 0
    # A queue set to mark with no ECN-capable traffic: validate says every signal is a drop.
    p = aqmlab_cli("validate", SMALL, "--set", "aqm.ecn=true")
    assert p.returncode == 0, p.stderr
    assert p.stderr.strip().splitlines() == [
        f"note: {SMALL}: aqm: set to mark (ecn = true), but no traffic is ECN-capable "
        "(tcp.ecn = false), so every signal is a drop; --set tcp.ecn=true makes the TCP "
        "traffic ECN-capable"
    ]
    # No note where nothing can mark or nothing asks to: DropTail, and ECN off on both sides.
    assert ecn_notes(_resolved("aqm.kind=droptail", "tcp.ecn=true")) == []
    assert ecn_notes(_resolved()) == []
    # One group made ECN-capable on its own; the reverse queue for a reverse group.
    (note,) = ecn_notes(_resolved("traffic[0].ecn=true"))
    assert "(traffic[0].ecn = true) meets aqm (red)" in note
    (note,) = ecn_notes(
        _resolved(
            "tcp.ecn=true",
            "aqm.ecn=true",
            'reverse_aqm={kind="pi"}',
            'traffic=[{kind="bulk",flows=2},{kind="bulk",flows=2,direction="reverse"}]',
        )
    )
    assert "meets reverse_aqm (pi)" in note and "--set reverse_aqm.ecn=true" in note
    # A custom topology: the queues on the group's path, link by link.
    custom = ROOT / "scenarios" / "custom.toml"
    (note,) = ecn_notes(_resolved("tcp.ecn=true", "aqm.ecn=true", file=custom))
    # core1 takes [aqm] (marking on); core2 has its own RED (off), both ways.
    assert "meets topology.links[1].aqm (red) with marking off: that queue drops" in note


def test_the_api_warns_once_about_ecn_switches_that_disagree() -> None:
    short = ["duration=4s", "metrics.start=1s", "metrics.window=1s"]
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        aqmlab.run(SMALL, overrides=[*short, "tcp.ecn=true"])
    ecn = [w for w in got if issubclass(w.category, aqmlab.ECNNote)]
    assert len(ecn) == 1 and "aqm.ecn=true" in str(ecn[0].message)
    assert ecn[0].filename == __file__  # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error", aqmlab.ECNNote)
        aqmlab.run(SMALL, overrides=[*short, "tcp.ecn=true", "aqm.ecn=true"])  # no warning


# ---- plot and compare on sweep folders ---------------------------------------------------

TINY_SWEEP = ROOT / "tests" / "data" / "experiments" / "tiny-sweep.toml"


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny sweep in full: RED and RED hi x flows 10, 20 x seeds 1, 2 (8 points)."""
    out = tmp_path_factory.mktemp("sweep") / "tiny"
    p = aqmlab_cli("sweep", TINY_SWEEP, "--out", out, "--no-report", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    return out


def _csv_header(p: subprocess.CompletedProcess[str]) -> list[str]:
    assert p.returncode == 0, p.stderr
    return next(csv.reader(io.StringIO(p.stdout)))


def test_compare_a_sweep_folder_labels_points_by_scheme_and_factors(
    swept: Path, tmp_path: Path
) -> None:
    # Every point, in the experiment's order; the seeds differ, so they are named.
    head = _csv_header(aqmlab_cli("compare", swept, "--per-run", "--format", "csv"))
    assert head[2:-2] == [
        f"{s}, flows={f}, seed {k}" for s in ("RED", "RED hi") for f in (10, 20) for k in (1, 2)
    ]
    # By default the seeds of one point make one column, its mean and 95 % interval.
    head = _csv_header(aqmlab_cli("compare", swept, "--format", "csv"))
    cols = [f"{s}, flows={f}" for s in ("RED", "RED hi") for f in (10, 20)]
    assert head[2:-2] == cols + [f"{c} ci95" for c in cols]
    # --where: one name twice is either value; two names are both.
    p = aqmlab_cli(
        "compare", swept, "--where", "scheme=RED hi", "flows=20", "--where", "seed=1",
        "--format", "csv",
    )  # fmt: skip
    assert _csv_header(p)[2:-2] == ["RED hi, flows=20"]
    p = aqmlab_cli(
        "compare", swept, "--where", "seed=2", "--where", "flows=10", "flows=20", "--format", "csv"
    )
    assert _csv_header(p)[2:-2] == ["RED, flows=10", "RED, flows=20", "RED hi, flows=10",
                                    "RED hi, flows=20"]  # fmt: skip
    # A point folder given alone is named by its point.json, not by its id.
    info = json.loads(next((swept / "points").glob("*/point.json")).read_text())
    p = aqmlab_cli("compare", swept / "points" / info["id"], "--format", "csv")
    flows = info["factors"]["flows"]
    assert _csv_header(p)[2:-2] == [f"{info['scheme']}, flows={flows}"]
    # Two sweeps with the same points (a copy), beside a run folder: the points are told apart
    # by their sweep folder's name, the run folder is named by its own.
    copy = tmp_path / "tiny-copy"
    shutil.copytree(swept, copy)
    run = next((swept / "points").iterdir())
    plain = tmp_path / "plain-run"
    shutil.copytree(run, plain)
    (plain / "point.json").unlink()
    p = aqmlab_cli("compare", swept, copy, plain, "--where", "scheme=RED", "flows=10", "seed=1",
                   "--format", "csv")  # fmt: skip
    assert _csv_header(p)[2:-2] == ["tiny: RED, flows=10", "tiny-copy: RED, flows=10", "plain-run"]


def test_plot_a_sweep_folder_and_its_mistakes(swept: Path, tmp_path: Path) -> None:
    out = tmp_path / "red-hi.png"
    p = aqmlab_cli("plot", swept, "--where", "scheme=RED hi", "seed=1", "-o", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:4] == b"\x89PNG"
    p = aqmlab_cli("plot", swept, "--what", "cdf", "-o", tmp_path / "cdf.png")
    assert p.returncode == 0, p.stderr
    # The labels the figure shows.
    from aqmlab.folders import expand

    chosen, notes = expand([swept], ["scheme=RED", "flows=10"])
    assert [s.label for s in chosen] == ["RED, flows=10, seed 1", "RED, flows=10, seed 2"]
    assert notes == []
    # Mistakes: one error line naming the term and what is allowed.
    for where, words in (
        (["buffer=200"], "has no 'buffer' to choose by; its names: scheme, seed, flows"),
        (["scheme=PI"], "--where scheme=PI: no point of"),
        (["flows=30"], "flows is one of: 10, 20"),
        (["scheme"], "--where 'scheme': expected NAME=VALUE"),
    ):
        p = aqmlab_cli("plot", swept, "--where", *where, "-o", tmp_path / "x.png")
        assert_clean_error(p)
        assert words in p.stderr, p.stderr
    p = aqmlab_cli("compare", tmp_path, "--where", "seed=1")
    assert_clean_error(p)
    assert "nor a sweep folder (no experiment.json)" in p.stderr
    p = aqmlab_cli("compare", swept / "points", "--format", "csv")
    assert_clean_error(p)
    # A failed or missing point is left out, with a note.
    broken = tmp_path / "broken"
    shutil.copytree(swept, broken)
    gone = sorted((broken / "points").iterdir())[0]
    shutil.rmtree(gone)
    p = aqmlab_cli("compare", broken, "--per-run", "--format", "csv")
    assert len(_csv_header(p)) == 2 + 7 + 2
    assert "note: " in p.stderr and "1 of 8 point(s) left out" in p.stderr
