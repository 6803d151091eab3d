"""The terminal's tables of one run: the dual queue's rows of the summary and the table of
traffic groups that ``aqmlab run`` prints beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from rich.console import Console

from aqmlab.report.terminal import groups_table, shown_rows, summary_table

from conftest import aqmlab_cli


def _text(table: Any, width: int = 120) -> str:
    c = Console(width=width, record=True)
    c.print(table)
    return c.export_text()


def _flows(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows)


def _flow(flow: int, group: int, goodput: float, **kw: Any) -> dict[str, Any]:
    row = {
        "flow": flow,
        "group": group,
        "kind": "bulk",
        "direction": "forward",
        "goodput_bps": goodput,
        "retransmits": 0,
        "marks_seen": 0,
        "rtt_mean_s": 0.05,
    }
    return row | kw


def test_the_dual_queue_rows_follow_the_bottlenecks_delays_only_where_a_run_has_them() -> None:
    plain = {"bottleneck": {"queuing_delay_max_s": 0.02}, "flows": {}}
    dual = {
        "bottleneck": {
            "queuing_delay_max_s": 0.03,
            "l_queue_delay_mean_s": 0.0001,
            "l_queue_delay_p99_s": 0.0009,
            "c_queue_delay_mean_s": 0.0151,
            "c_queue_delay_p99_s": 0.0252,
        },
        "flows": {},
    }
    keys = [r[2] for r in shown_rows([plain])]
    assert not any(k.startswith(("l_queue", "c_queue")) for k in keys)
    keys = [r[2] for r in shown_rows([plain, dual])]
    at = keys.index("queuing_delay_max_s")
    assert keys[at + 1 : at + 5] == [
        "l_queue_delay_mean_s",
        "l_queue_delay_p99_s",
        "c_queue_delay_mean_s",
        "c_queue_delay_p99_s",
    ]
    text = _text(summary_table([("plain", plain), ("dual", dual)]))
    line = next(x for x in text.splitlines() if "L queue delay p99 (ms)" in x)
    # The run without the figure shows a dash; the other its figure in ms.
    assert [c.strip() for c in line.split("│")[2:4]] == ["-", "0.90"]


def test_groups_by_hand() -> None:
    scenario = {
        "tcp": {"variant": "cubic", "ecn": False},
        "traffic": [
            {"kind": "bulk", "flows": 2, "variant": "prague", "ecn": True},
            {"kind": "bulk", "flows": 1, "variant": "bbr"},
            {"kind": "bulk", "flows": 2, "ecn": True},
            {"kind": "ping"},
        ],
    }
    flows = _flows(
        [
            _flow(0, 0, 10e6, marks_seen=30, rtt_mean_s=0.020),
            _flow(1, 0, 20e6, marks_seen=10, rtt_mean_s=0.030),
            _flow(2, 1, 50e6, retransmits=7, rtt_mean_s=0.040),
            _flow(3, 2, 20e6, retransmits=2, rtt_mean_s=0.050),
            # No RTT sample: left out of its group's mean.
            _flow(5, 2, 0.0, rtt_mean_s=float("nan")),
            _flow(4, 3, 1e3, kind="ping"),
        ]
    )
    t = groups_table(scenario, flows)
    assert t is not None
    rows = [x.split() for x in _text(t).splitlines()[4:7]]
    # group, kind, sender, flows, Mb/s, share %, RTT ms, retx, marks
    assert rows[0] == ["0", "bulk", "Prague", "ECT(1)", "2", "30.000", "30.0", "25.00", "0", "40"]
    assert rows[1] == ["1", "bulk", "BBR", "1", "50.000", "50.0", "40.00", "7", "0"]
    assert rows[2] == ["2", "bulk", "CUBIC", "ECN", "2", "20.000", "20.0", "50.00", "2", "0"]
    assert "ping" not in _text(t)


def test_groups_per_direction_and_none_for_one_group() -> None:
    scenario = {
        "tcp": {"variant": "newreno"},
        "traffic": [{"kind": "bulk"}, {"kind": "bulk", "direction": "reverse"}, {"kind": "cbr"}],
    }
    flows = _flows(
        [
            _flow(0, 0, 6e6),
            _flow(1, 1, 9e6, direction="reverse"),
            _flow(2, 2, 2e6),
        ]
    )
    t = groups_table(scenario, flows)
    assert t is not None
    rows = [x.split() for x in _text(t).splitlines()[4:7]]
    # Each share is of its own direction's goodput.
    assert rows[0][:7] == ["0", "bulk", "NewReno", "for", "1", "6.000", "75.0"]
    assert rows[1][:7] == ["1", "bulk", "NewReno", "rev", "1", "9.000", "100.0"]
    assert rows[2][:7] == ["2", "cbr", "UDP", "for", "1", "2.000", "25.0"]
    assert rows[2][8] == "-"  # a UDP group's retransmissions
    assert groups_table(scenario, _flows([_flow(0, 0, 6e6), _flow(1, 0, 6e6)])) is None


def test_run_prints_its_groups_and_dual_queues(tmp_path: Path) -> None:
    f = tmp_path / "mix.toml"
    f.write_text(
        """duration = "5s"
seed = 1
[topology]
kind = "dumbbell"
bottleneck_rate = "20Mbps"
bottleneck_delay = "5ms"
[aqm]
kind = "dualpi2"
[tcp]
profile = "linux"
[[traffic]]
kind = "bulk"
variant = "prague"
ecn = true
[[traffic]]
kind = "bulk"
"""
    )
    p = aqmlab_cli("run", f, "--out", tmp_path / "out", env={"COLUMNS": "100"})
    assert p.returncode == 0, p.stderr
    assert "L queue delay p99 (ms)" in p.stdout and "C queue delay mean (ms)" in p.stdout
    lines = p.stdout.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("traffic groups")))
    rows = [x.split() for x in lines[at + 4 : at + 6]]
    assert rows[0][:5] == ["0", "bulk", "Prague", "ECT(1)", "1"]
    assert rows[1][:4] == ["1", "bulk", "CUBIC", "1"]
    shares = [float(rows[0][6]), float(rows[1][5])]
    assert abs(sum(shares) - 100.0) < 0.15


def test_groups_of_the_testbed_name_the_kernels_sender() -> None:
    """The testbed's kernel runs one congestion control for every TCP group (`--cc`), and its
    flows table counts no marks: the groups' table names that sender and shows no marks."""
    scenario = {
        "tcp": {"variant": "newreno"},
        "traffic": [{"kind": "bulk", "flows": 1}, {"kind": "cbr", "flows": 1}],
    }
    flows = _flows([_flow(0, 0, 8e6), _flow(1, 1, 2e6)]).drop_columns(["marks_seen"])
    t = groups_table(scenario, flows, sender="cubic (kernel)")
    assert t is not None
    rows = [x.split() for x in _text(t).splitlines()[4:6]]
    assert rows[0] == ["0", "bulk", "cubic", "(kernel)", "1", "8.000", "80.0", "50.00", "0", "-"]
    assert rows[1] == ["1", "cbr", "UDP", "1", "2.000", "20.0", "50.00", "-", "-"]
