"""Linux's own queue discs as a reference (aqmlab.testbed.linux_qdisc).

The mapping from a scenario's ``[aqm]`` to the guest's ``tc`` arguments and the summary
of a guest's record need nothing; the run in a user-mode Linux guest needs ``linux.uml``
(``make uml``) and is skipped with the reason otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import aqmlab
from aqmlab import scenario, testbed
from aqmlab.testbed import linux_qdisc
from aqmlab.testbed.linux_qdisc import (
    available,
    guest_spec,
    qdisc_args,
    run_linux_qdisc,
    summarise,
)
from testbed_grid import grid

ROOT = Path(__file__).resolve().parents[1]
DUMBBELL = ROOT / "scenarios" / "testbed" / "dumbbell-20.toml"


def _doc(**aqm: Any) -> dict[str, Any]:
    doc = scenario.load(DUMBBELL)
    doc["aqm"] = aqm
    return doc


def _args(**aqm: Any) -> list[str]:
    return qdisc_args(scenario.validate(_doc(**aqm)))


def test_each_scheme_maps_to_its_linux_queue_disc() -> None:
    assert _args(kind="droptail") == ["pfifo", "limit", "200"]
    assert _args(kind="pie", ecn=True, derandomize=True, enqueue="linux", t_update="20ms") == [
        *("pie", "limit", "200", "target", "15000us", "tupdate", "20000us"),
        *("alpha", "2", "beta", "20", "ecn"),
    ]
    assert _args(kind="codel", target="3ms", control_law="linux") == [
        *("codel", "limit", "200", "target", "3000us", "interval", "100000us", "noecn"),
    ]
    assert _args(kind="fq-codel", flows=64, ecn=True, control_law="linux") == [
        *("fq_codel", "limit", "200", "target", "5000us", "interval", "100000us"),
        *("flows", "64", "quantum", "1514", "ecn"),
    ]
    # The step on sojourn time: codel's ce_threshold, CoDel's own law out of reach.
    assert _args(kind="step", threshold="15ms", ecn=True) == [
        *("codel", "limit", "200", "target", "10s", "interval", "100s"),
        *("ce_threshold", "15000us", "noecn"),
    ]


@pytest.mark.parametrize(
    ("aqm", "named"),
    [
        ({"kind": "red"}, "aqm.kind: 'red'"),
        ({"kind": "codel"}, "aqm.control_law: 'rfc8289': Linux's codel has 'linux' only"),
        (
            {"kind": "fq-codel", "maxpacket_backlog": "flow", "control_law": "linux"},
            "aqm.maxpacket_backlog: 'flow'",
        ),
        ({"kind": "fq-codel", "ce_threshold": "1ms", "control_law": "linux"}, "aqm.ce_threshold"),
        ({"kind": "pie", "alpha": 0.1, "derandomize": True, "t_update": "20ms"}, "aqm.alpha: 0.1"),
        ({"kind": "pie", "t_update": "20ms"}, "aqm.derandomize: False: Linux's pie has True only"),
        (
            {"kind": "pie", "derandomize": True, "t_update": "20ms"},
            "aqm.enqueue: 'rfc8033': Linux's pie has 'linux' only",
        ),
        (
            {"kind": "pie", "target": "15.5us", "derandomize": True, "t_update": "20ms"},
            "aqm.target",
        ),
        # The guest's pie would run the 15 ms default as 20 ms (its clock ticks at 100 Hz).
        ({"kind": "pie", "derandomize": True}, "aqm.t_update: '15ms': the guest's pie"),
        (
            {"kind": "pie", "derandomize": True, "t_update": "25ms"},
            'would run as 30 ms); set aqm.t_update = "30ms"',
        ),
        ({"kind": "step", "threshold": 20, "ecn": True}, "aqm.threshold: 20"),
        ({"kind": "step", "threshold": "1ms"}, "aqm.ecn: false"),
    ],
)
def test_what_linux_cannot_do_is_named(aqm: dict[str, Any], named: str) -> None:
    with pytest.raises(testbed.TestbedError, match=re.escape(named)):
        _args(**aqm)


def test_a_buffer_in_bytes_is_named() -> None:
    doc = _doc(kind="codel")
    doc["topology"]["buffer"] = "300KB"
    with pytest.raises(testbed.TestbedError, match=re.escape("topology.buffer")):
        qdisc_args(scenario.validate(doc))


def test_the_scenario_must_be_one_bulk_group(tmp_path: Path) -> None:
    doc = _doc(kind="pie")
    doc["traffic"].append({"kind": "cbr", "flows": 1, "rate": "1Mbps"})
    with pytest.raises(testbed.TestbedError, match="one group of bulk flows"):
        guest_spec(doc, "cubic", tmp_path)
    with pytest.raises(testbed.TestbedError, match=re.escape("--cc: 'vegas'")):
        guest_spec(_doc(kind="pie"), "vegas", tmp_path)
    with pytest.raises(testbed.TestbedError, match=re.escape("tcp.ecn: false: DCTCP needs ECN")):
        guest_spec(_doc(kind="pie"), "dctcp", tmp_path)


def test_the_guests_record_summarised() -> None:
    # 12 s measured at 10 Mbit/s: 10 000 packets of 1500 bytes (1514 with the Ethernet
    # header the qdisc counts) fill the link; the flows deliver 6 and 3 MB in the 12 s.
    spec = {
        "duration_ns": 20_000_000_000,
        "measure_start_ns": 8_000_000_000,
        "rate_bps": 10e6,
        "starts_ns": [0, 1, 2],
        "cc": "dctcp",
        "qdisc": ["codel"],
        "ecn": True,
    }
    start = {"bytes": 1_000, "packets": 10, "drops": 2, "ce_mark": 5, "drop_overlimit": 1}
    end = {
        "bytes": 1_000 + 10_000 * 1514,
        "packets": 10_010,
        "drops": 12,
        "ce_mark": 305,
        "drop_overlimit": 4,
    }
    rx = {"0": {"bytes": 7_000_000, "bytes_at_start": 1_000_000}, "1": {"bytes": 3_000_000}}
    # tcpi_options: flow 0 negotiated ECN (bit 8), flow 1 fell back to none. Flow 0 had
    # retransmitted once when the measurement began, flow 1 opened later.
    tx = {
        "0": {"info": {"total_retrans": 4, "options": 15}, "info_at_start": {"total_retrans": 1}},
        "1": {"info": {"total_retrans": 1, "options": 7}},
    }
    res = {
        "kernel": "6.1",
        "qdisc_at_start": start,
        "qdisc_at_end": end,
        # time, queued packets and bytes, bytes and packets sent; the last sample 12 ms late:
        # the link's rate over 12.012 s.
        "samples": [
            [8_000_000_000, 2, 3000, 1_000, 10],
            [20_012_000_000, 4, 6000, 1_000 + 10_000 * 1514, 10_010],
        ],
        "hosts": {"l": {"tx": tx}, "r": {"rx": rx}},
    }
    s = summarise(spec, res)
    b, f = s["bottleneck"], s["flows"]
    assert b["utilization"] == pytest.approx(12 / 12.012)
    assert b["queue_mean_pkts"] == 3.0 and b["queue_mean_bytes"] == 4500.0
    assert b["queue_samples"] == 2 and b["queue_nonempty_share"] == 1.0
    assert (b["drops_early"], b["drops_overflow"], b["marks"]) == (7, 3, 300)
    assert f["goodput_bps"] == [4e6, 2e6, 0.0]  # flow 2 never connected
    assert f["jain_fairness"] == pytest.approx(36 / (3 * 20))
    assert f["retransmits"] == 4  # within the measurement: 3 + 1
    assert f["ecn_fallbacks"] == 1
    assert summarise(dict(spec, ecn=False), res)["flows"]["ecn_fallbacks"] == 0


def test_a_guest_that_dies_at_boot_is_refused_with_its_consoles_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The trial boot's reason quotes the console's failure and panic, not its stack dump; a
    guest whose init writes its file is fit."""
    console = (
        "Run /tmp/aqmlab-uml-probe-x/init.sh as init process\n"
        "userspace - ptrace set fp regs failed, errno = 14\n"
        "Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b\n"
        " [<606931e5>] panic+0x197/0x376\n"
        " [<6002e653>] fatal_sigsegv+0x39/0x45\n"
    )

    def dies(init: Path, work: Path, mem: str, timeout: float) -> str:
        return console

    def starts(init: Path, work: Path, mem: str, timeout: float) -> str:
        assert f"{work}/ok" in init.read_text()
        (work / "ok").write_text("ok\n")
        return "Run init as init process\n"

    try:
        monkeypatch.setattr(linux_qdisc, "_boot", dies)
        linux_qdisc.boots.cache_clear()
        assert linux_qdisc.boots() == (
            "linux.uml does not start on this host: userspace - ptrace set fp regs failed, "
            "errno = 14; Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b"
        )
        monkeypatch.setattr(linux_qdisc, "_boot", starts)
        linux_qdisc.boots.cache_clear()
        assert linux_qdisc.boots() is None
    finally:
        linux_qdisc.boots.cache_clear()


WHY_NOT = available()
needs_uml = pytest.mark.skipif(WHY_NOT is not None, reason=f"no user-mode Linux: {WHY_NOT}")


@needs_uml
@pytest.mark.crosscheck
def test_dctcp_through_linuxs_step_agrees_with_the_simulator() -> None:
    """Five DCTCP flows at 10 Mbit/s and 100 ms through a 15 ms step on sojourn time: Linux
    6.1's DCTCP through codel's ce_threshold, and the simulator's linux profile through
    ``kind = "step"``, within the testbed grid's band (docs/testbed.md)."""
    doc = _doc(kind="step", threshold="15ms", ecn=True)
    doc["tcp"]["ecn"] = True
    doc["traffic"][0]["flows"] = 5
    linux = run_linux_qdisc(doc, "dctcp")
    lb, lf = linux["bottleneck"], linux["flows"]
    sim_doc = dict(doc, tcp=grid.sim_tcp("dctcp", "guest", ecn=True))
    sim = aqmlab.run(sim_doc).summary
    sb, sf = sim["bottleneck"], sim["flows"]
    assert lb["queue_samples"] > 1000  # every 10 ms over the 12 s measured
    # DCTCP keeps the link full with marks alone.
    assert lb["utilization"] > 0.97 and sb["utilization"] > 0.97
    assert lb["drops_early"] + lb["drops_overflow"] == 0 and lb["marks"] > 1000
    assert abs(lb["utilization"] - sb["utilization"]) <= 0.02
    assert abs(lb["queue_mean_pkts"] - sb["queue_mean_pkts"]) <= 0.15 * sb["queue_mean_pkts"] + 2
    assert abs(lf["jain_fairness"] - sf["jain_fairness"]) <= 0.03
    sim_marks = sb["marks_early"] + sb["marks_forced"]
    assert abs(lb["marks"] - sim_marks) <= 0.15 * sim_marks
