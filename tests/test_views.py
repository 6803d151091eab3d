"""Per-flow views (``--what flow-throughput`` and ``goodput-rtt``) and how runs and sweeps show
themselves in Jupyter (``_repr_html_``): the figures' contents, not just that a file appeared."""

from __future__ import annotations

import base64
import re
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import aqmlab

from conftest import ROOT, SMALL, aqmlab_cli, assert_clean_error

#: Two groups of bulk flows on a dumbbell: NewReno at 40 ms, CUBIC at 160 ms; flows 0, 1 and 7
#: traced.
TWO_GROUPS = """
duration = "12s"
seed = 4

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
buffer = 100

[aqm]
kind = "red"

[tcp]
packet_size = 1000

[[traffic]]
kind = "bulk"
flows = 5
base_rtt = "40ms"
start = { uniform = ["0s", "2s"] }

[[traffic]]
kind = "bulk"
flows = 3
variant = "cubic"
base_rtt = "160ms"
start = { uniform = ["0s", "2s"] }

[metrics]
start = "2s"
flow_series = [0, 1, 7]
"""


@pytest.fixture(scope="module")
def two_groups(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("views") / "two-groups"
    aqmlab.run(TWO_GROUPS, out=out)
    return out


def _figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures the plots draw from now on (they are saved as usual)."""
    import aqmlab.plot as P

    figs: list[Any] = []
    real = P._save
    monkeypatch.setattr(P, "_save", lambda fig, path: (figs.append(fig), real(fig, path))[1])
    return figs


def test_flow_rate_by_hand() -> None:
    from aqmlab.plot import flow_rate

    # Samples every 0.5 s of the rate since the previous one: 0, 4000, 8000, 0, 4000 bits
    # delivered, i.e. 0, 500, 1500, 1500, 2000 bytes so far. Over 1 s: 12, 8 and 4 kb/s.
    t, y = flow_rate([0, 0.5, 1, 1.5, 2], [0, 8000, 16000, 0, 8000], 1.0)
    assert list(t) == [1, 1.5, 2] and np.allclose(y, [12000, 8000, 4000])
    # No window: the samples as they are.
    t, y = flow_rate([0, 0.5], [0, 8000], 0.0)
    assert list(y) == [0, 8000]


def test_flow_throughput_draws_one_labelled_curve_per_traced_flow(
    two_groups: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aqmlab.plot import flow_rate, plot_series

    figs = _figures(monkeypatch)
    plot_series([("red", two_groups)], tmp_path / "a.png", what="flow-throughput")
    plot_series(
        [("red", two_groups), ("again", two_groups)],
        tmp_path / "b.png",
        what="flow-throughput",
        flows=[7],
        smooth=0.5,
    )
    ax = figs[0].axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert labels == [
        "flow 0 (group 0: bulk NewReno)",
        "flow 1 (group 0: bulk NewReno)",
        "flow 7 (group 1: bulk CUBIC)",
    ]
    # 12 s of samples: smoothed by default as throughput is, over a twentieth of a run
    # shorter than 20 s; Mb/s.
    assert ax.get_title(loc="left") == "red (mean over 600 ms)"
    assert ax.get_ylabel() == "throughput (Mb/s)"
    r = aqmlab.load_run(two_groups)
    fs = r.flow_series.to_pydict()
    k = np.asarray(fs["flow"]) == 7
    t, y = flow_rate(np.asarray(fs["time_s"])[k], np.asarray(fs["delivery_rate_bps"])[k], 0.6)
    x7, y7 = figs[0].axes[0].get_lines()[2].get_data()
    assert np.array_equal(x7, t) and np.allclose(y7, y / 1e6)
    assert 0 < float(np.max(y7)) <= 10.0  # at most the bottleneck's 10 Mbit/s
    # Two runs: two panels of one curve each (--flow), over the window asked for.
    assert [len(a.get_lines()) for a in figs[1].axes] == [1, 1]
    assert figs[1].axes[1].get_title(loc="left") == "again (mean over 500 ms)"


def test_a_flow_series_names_each_flows_group_and_sender(
    two_groups: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aqmlab.plot import plot_series

    figs = _figures(monkeypatch)
    plot_series([("red", two_groups)], tmp_path / "c.png", what="flows", flows=[0, 7])
    labels = [ln.get_label() for ln in figs[0].axes[0].get_lines()]
    assert labels == ["flow 0 (group 0: bulk NewReno)", "flow 7 (group 1: bulk CUBIC)"]


def test_goodput_against_rtt_has_a_point_per_flow_coloured_by_group(
    two_groups: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aqmlab.plot import jain_index, plot_series

    figs = _figures(monkeypatch)
    plot_series([("red", two_groups)], tmp_path / "g.png", what="goodput-rtt")
    ax = figs[0].axes[0]
    sets = ax.collections
    assert [c.get_label() for c in sets] == [
        "group 0: bulk NewReno (5)",
        "group 1: bulk CUBIC (3)",
    ]
    f = aqmlab.load_run(two_groups).flows.to_pydict()
    for g, c in enumerate(sets):
        rows = [i for i, x in enumerate(f["group"]) if x == g]
        xy = c.get_offsets()
        assert len(xy) == len(rows)
        assert np.allclose(xy[:, 0], [f["base_rtt_s"][i] * 1e3 for i in rows])
        assert np.allclose(xy[:, 1], [f["goodput_bps"][i] / 1e6 for i in rows])
    assert not np.allclose(sets[0].get_facecolor(), sets[1].get_facecolor())
    # The base RTTs asked for (40 and 160 ms) are where the points are.
    assert np.allclose(sets[0].get_offsets()[:, 0], 40) and np.allclose(
        sets[1].get_offsets()[:, 0], 160
    )
    jain = jain_index(f["goodput_bps"])
    assert ax.get_title(loc="left") == f"red: 8 flows, Jain's index {jain:.3f}"
    assert ax.get_xlabel() == "base RTT (ms)" and ax.get_ylabel() == "goodput (Mb/s)"
    # Jain's index by hand: equal shares 1, one flow with everything 1/n.
    assert jain_index([2, 2, 2]) == 1 and jain_index([3, 0, 0, 0]) == 0.25


def test_per_flow_views_on_the_command_line(two_groups: Path, tmp_path: Path) -> None:
    p = aqmlab_cli("plot", "--help")
    assert p.returncode == 0
    text = " ".join(p.stdout.split())
    assert "flow-throughput (each traced flow's throughput over time)" in text
    assert "goodput-rtt (each flow's goodput against its base RTT" in text
    for args in (
        ["--what", "flow-throughput"],
        ["--what", "flow-throughput", "--flow", "7", "--smooth", "200ms"],
        ["--what", "goodput-rtt"],
    ):
        out = tmp_path / "p.png"
        p = aqmlab_cli("plot", two_groups, *args, "-o", out)
        assert p.returncode == 0, (args, p.stderr)
        assert out.read_bytes()[:4] == b"\x89PNG"
    small = tmp_path / "small"
    assert aqmlab_cli("run", SMALL, "-o", small, "-q").returncode == 0
    for dirs, args, words in (
        ([two_groups], ["--what", "goodput-rtt", "--smooth", "1s"], "smoothing is for --what"),
        ([small], ["--what", "flow-throughput"], "metrics.flow_series=[0, 1]"),
        ([two_groups], ["--what", "flow-throughput", "--flow", "3"], "flow 3 is not in the flow"),
        ([two_groups], ["--what", "flow-throughput", "--smooth", "60s"], "longer than the series"),
    ):
        p = aqmlab_cli("plot", *dirs, *args, "-o", tmp_path / "x.png")
        assert_clean_error(p)
        assert words in p.stderr, (args, p.stderr)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


def _images(page: str) -> list[bytes]:
    return [
        base64.b64decode(m)
        for m in re.findall(r'<img [^>]*src="data:image/png;base64,([^"]+)"', page)
    ]


def test_a_run_shows_its_figures_and_queue_in_jupyter(two_groups: Path) -> None:
    r = aqmlab.load_run(two_groups)
    start = time.perf_counter()
    page = r._repr_html_()
    took = time.perf_counter() - start
    b = r.summary["bottleneck"]
    assert page.startswith('<div class="aqmlab-run">') and page.endswith("</div>")
    assert "dumbbell, AQM red, TCP NewReno; group 1 CUBIC; 12 s, measured from 2 s; seed 4" in page
    assert f"folder <code>{two_groups}</code>" in page
    # The links' table: the bottleneck first, then its reverse direction.
    head = re.search(r'<table class="aqmlab-links"><thead><tr>(.*?)</tr>', page)
    assert head and head.group(1) == "<th>link</th><th>bottleneck</th><th>bottleneck-rev</th>"
    row = re.search(r"<td[^>]*>utilization \(%\)</td><td[^>]*>([^<]*)</td>", page)
    assert row and row.group(1) == f"{100 * b['utilization']:.3g}"
    row = re.search(r"<td[^>]*>mean queue \(packets\)</td><td[^>]*>([^<]*)</td>", page)
    assert row and row.group(1) == f"{b['queue_mean_pkts']:.3g}"
    drops = b["drops_early"] + b["drops_forced"] + b["drops_overflow"]
    assert re.search(rf"<td[^>]*>drops</td><td[^>]*>{drops}</td>", page)
    assert '<table class="aqmlab-flows">' in page and "Jain&#x27;s fairness index" in page
    # One small picture of the queue, inline.
    (png,) = _images(page)
    assert _png_size(png) == (480, 144)
    assert len(page) < 60_000, len(page)
    assert took < 5, took


def test_a_sweep_shows_its_points_in_jupyter(tmp_path: Path) -> None:
    from aqmlab.experiments import SweepOutcome

    out = tmp_path / "tiny"
    exp = ROOT / "tests" / "data" / "experiments" / "tiny-sweep.toml"
    p = aqmlab_cli("sweep", exp, "--out", out, "--no-report", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    page = SweepOutcome(out=out, total=8, ran=8, skipped=0)._repr_html_()
    assert f"<code>{out}</code>: 8 points: 8 run, 0 already done</p>" in page
    head = re.search(r'<table class="aqmlab-points"><thead><tr>(.*?)</tr>', page)
    assert head
    cols = re.findall(r"<th>([^<]*)</th>", head.group(1))
    assert cols[:4] == ["scheme", "flows", "seed", "status"]
    assert "mean queue (pkts)" in cols and "utilization (%)" in cols
    body = page.split('<table class="aqmlab-points">')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>", body)
    assert rows == [(s, f, k) for s in ("RED", "RED hi") for f in ("10", "20") for k in ("1", "2")]
    # The queues of the first six points on one small picture.
    (png,) = _images(page)
    assert _png_size(png) == (480, 144)
    assert "the first 6 of 8" in page


def test_html_figures_are_written_for_reading() -> None:
    from aqmlab._html import _fmt

    # Three significant digits; counts of 1000 and more whole, with thousands separators.
    assert [_fmt(x) for x in (12520, 744, 93.65, 9.975, 1016.4, 0)] == [
        "12,520",
        "744",
        "93.7",
        "9.97",
        "1,016",
        "0",
    ]
    assert _fmt(1e-5) == "1.00e-05" and _fmt(float("nan")) == "-"
