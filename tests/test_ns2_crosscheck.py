"""aqmlab's TCP against ns-2.35 on the same dumbbell (docs/fidelity.md, item 20).

Runs when ``ns`` (Debian's ``ns2``, ``make ns2``) is installed; ``make test`` installs it.
Seed 1, 150 s of 100 NewReno flows (20 reverse) over 10 Mbit/s. The bands are a few times the
seed-to-seed spread of each figure in both simulators (docs/fidelity.md, item 20, 3 seeds).
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from file_modules import load

pytestmark = [
    pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (make ns2)"),
    pytest.mark.crosscheck,
]


def _module(name: str) -> ModuleType:
    return load(name, Path(__file__).parent / "ns2" / f"{name}.py")


cc = _module("crosscheck")


def _case(name: str) -> object:
    return next(c for c in cc.CASES if c.name == name)


def test_droptail_short_rtt_matches_ns2() -> None:
    """DropTail, 100 ms: with ns-2's TCP clock, ssthresh rule and recovery exit, drops, timeouts and
    retransmissions within 20 % of ns-2's, utilisation within one point."""
    case = _case("droptail-100ms")
    ns2 = cc.run_ns2(case, 1)
    ours = cc.run_aqmlab(case, 1, cc.NS2_TCP)
    assert abs(ours["utilisation"] - ns2["utilisation"]) < 0.01, (ours, ns2)
    for k in ("drops", "timeouts", "retransmits"):
        assert abs(ours[k] - ns2[k]) < 0.2 * ns2[k], (k, ours, ns2)


def test_ared_short_rtt_matches_ns2() -> None:
    """ARED(20, 60), 100 ms: with ns-2's 540-byte packets (`packetSize_ 500` plus its header) and
    ns-2's limited transmit (`limited_transmit_sends = "next"`), drops, timeouts and
    retransmissions within 8 % of ns-2's (3 seeds: 1-4 %), utilisation within half a point. With
    RFC 3042's limited transmit aqmlab has almost no spurious retransmissions, where ns-2 resends
    about one segment the receiver holds per timeout: 25 % fewer retransmissions."""
    case = _case("ared-100ms")
    ns2 = cc.run_ns2(case, 1)
    ours = cc.run_aqmlab(case, 1, cc.NS2_TCP)
    assert abs(ours["utilisation"] - ns2["utilisation"]) < 0.005, (ours, ns2)
    for k in ("drops", "timeouts", "retransmits"):
        assert abs(ours[k] - ns2[k]) < 0.08 * ns2[k], (k, ours, ns2)
    rfc = [t for t in cc.NS2_TCP if not t.startswith("limited_transmit_sends")]
    new = cc.run_aqmlab(case, 1, rfc)
    assert new["retransmits"] < 0.8 * ns2["retransmits"], (new, ns2)
    assert new["retransmits"] < 1.05 * new["drops"], new


def test_ns2s_limited_transmit_costs_utilisation_at_50_mbps() -> None:
    """ARED(20, 60), 100 ms, 100 flows at 50 Mbit/s (thesis section 5.5.2's top capacity): ns-2
    keeps 75 % of the link (seeds 1-6: 0.725-0.797). With ns-2's limited transmit and ns-2's idle
    rule as its clock rounds here (`idle_decay = "ns2-truncated"`) aqmlab comes within 2.5 points
    over seeds 1-3 (0.757 against 0.747; one seed's figure spreads over 0.73-0.81 in both
    simulators, so it is compared no more); with RFC 3042's it keeps 82-84 %, so the thesis
    presets' lower utilisation in 5.5.2 since `limited_transmit_sends = "next"` is ns-2's."""
    case = _case("ared-100ms-50mbps")
    seeds = (1, 2, 3)
    ns2 = [cc.run_ns2(case, s) for s in seeds]
    ours = [cc.run_aqmlab(case, s, cc.NS2_TCP) for s in seeds]
    rfc = cc.run_aqmlab(case, 1, [t for t in cc.NS2_TCP if not t.startswith("limited_transmit_")])

    def mean(runs: list[dict[str, Any]], k: str) -> float:
        return sum(r[k] for r in runs) / len(runs)

    u_ns2, u_ours = mean(ns2, "utilisation"), mean(ours, "utilisation")
    assert abs(u_ours - u_ns2) < 0.025, (u_ours, u_ns2)
    assert rfc["utilisation"] > max(r["utilisation"] for r in ns2) + 0.04, (rfc, ns2)
    rx_ns2, rx_ours = mean(ns2, "retransmits"), mean(ours, "retransmits")
    assert abs(rx_ours - rx_ns2) < 0.15 * rx_ns2, (rx_ours, rx_ns2)


def test_ns2s_clock_truncates_idle_periods_of_one_packet_time_at_50_mbps() -> None:
    """The same 50 Mbit/s set-up, seed 1 (docs/fidelity.md, item 20): ARED holds RED's average
    near 39.5 mean-size packets in both simulators, but with `idle_decay = "ns2"` aqmlab's queue
    sits 8 packets higher than ns-2's (46.4 against 38.3). ns-2 computes the idle packets m from
    its floating-point clock, and here every idle period of exactly one packet time (an ACK
    every 540-byte data packet: 500 bytes' time between them) comes out just under one and
    counts none; `"ns2-truncated"` counts them so and gives ns-2's queue (37.4)."""
    case = _case("ared-100ms-50mbps")
    ns2 = cc.queue_ns2(case, 1).mean()
    exact = cc.queue_aqmlab(dataclasses.replace(case, idle_decay="ns2"), 1, cc.NS2_TCP).mean()
    truncated = cc.queue_aqmlab(case, 1, cc.NS2_TCP).mean()
    assert abs(truncated - ns2) < 0.05 * ns2, (truncated, ns2)
    assert exact > 1.1 * ns2, (exact, ns2)


def test_ared_long_rtt_needs_ns2s_clock() -> None:
    """ARED(20, 60), 900 ms: ns-2 keeps 72-74 % of the link. aqmlab with ns-2's 10 ms TCP clock
    and ns-2's adaptive RED comes within 4 points with drops within 30 % (seed 1: 0.725 against
    0.721, 2190 against 2012) and, over seeds 1-3, timeouts within 30 % (801 against 729). On an
    exact clock spurious timeouts cost it 3 points over seeds 1-24 (0.705 against 0.740; over
    seeds 1-3 alone anywhere from 1 to 3 points, as small changes in the order of simultaneous
    events move runs between two regimes) and multiply the timeouts by 2.9 (16 294 against 5637
    with ns-2's clock over seeds 1-24; 1835 against ns-2's 729 over seeds 1-3; docs/tcp.md, "The
    RTT clock"). With the careful rule one segment early (docs/tcp.md, "The careful rule") the
    exact clock also doubled the drops, through fast retransmissions started by go-back-N's
    duplicate ACKs (4897 against 2012 on seed 1); with the exact rule it adds 34 % over seeds 1-3
    (8334 against 6232)."""
    case = _case("ared-900ms")
    seeds = (1, 2, 3)
    ns2 = [cc.run_ns2(case, s) for s in seeds]
    ours = [cc.run_aqmlab(case, s, cc.NS2_TCP) for s in seeds]
    exact = [cc.run_aqmlab(case, s, []) for s in seeds]
    assert abs(ours[0]["utilisation"] - ns2[0]["utilisation"]) < 0.04, (ours[0], ns2[0])
    assert abs(ours[0]["drops"] - ns2[0]["drops"]) < 0.3 * ns2[0]["drops"], (ours[0], ns2[0])

    def total(runs: list[dict[str, Any]], k: str) -> float:
        return sum(r[k] for r in runs)

    # Timeouts swing between regimes from seed to seed at this RTT: compared over seeds 1-3.
    to_ns2, to_ours = total(ns2, "timeouts"), total(ours, "timeouts")
    assert abs(to_ours - to_ns2) < 0.3 * to_ns2, (to_ours, to_ns2)
    # The cost in utilisation varies from 0.02 to 0.06 between seeds (the exact clock's runs fall
    # into two regimes, 0.68-0.69 and 0.72-0.75): compared over seeds 1-24, aqmlab runs only.
    # So are the timeouts, against aqmlab's on ns-2's clock (which are ns-2's over seeds 1-3).
    many = range(1, 25)
    ours_many = [cc.run_aqmlab(case, s, cc.NS2_TCP) for s in many]
    exact_many = [cc.run_aqmlab(case, s, []) for s in many]
    u_ours, u_exact = total(ours_many, "utilisation") / 24, total(exact_many, "utilisation") / 24
    assert u_exact < u_ours - 0.02, (u_exact, u_ours)
    to_exact, to_ours_many = total(exact_many, "timeouts"), total(ours_many, "timeouts")
    assert to_exact > 2.5 * to_ours_many, (to_exact, to_ours_many)
    assert total(exact, "drops") < 1.5 * total(ns2, "drops"), (exact, ns2)


def _rem_wireless(sources: int, ns2_args: list[str], overrides: list[str]) -> tuple[float, float]:
    """Goodput over 20-100 s of the REM paper's section 5.1 link with a fixed number of sources
    on DropTail: ns-2.35 (`rem_5.1_droptail.tcl SOURCES ns2_args...`) and aqmlab's preset
    scenario with `overrides`."""
    import subprocess

    import aqmlab

    tcl = Path(__file__).parent / "ns2" / "rem_5.1_droptail.tcl"
    scenario = (
        Path(__file__).parents[1] / "python/aqmlab/experiments/presets/scenarios/rem-5.1.toml"
    )
    capacity = 2e6 / (48 * 8) * 80.0  # packets over 20-100 s
    out = subprocess.run(
        ["ns", str(tcl), str(sources), *ns2_args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.split()
    ns2 = (int(out[4]) - int(out[1])) / capacity
    r = aqmlab.run(
        scenario,
        overrides=[
            "duration=100s",
            "schedule=[]",
            "metrics.phases=[]",
            "metrics.start=20s",
            f"traffic[0].flows={sources}",
            *overrides,
        ],
    )
    ours = r.summary["flows"]["goodput_bps_total"] * 6.0 / 2e6  # 48-byte packets, 8 B payload
    return ours, ns2


def test_rem_wireless_droptail_matches_ns2() -> None:
    """The REM paper's section 5.1 with DropTail (docs/fidelity.md, item 6): at 20 and 40
    sources ns-2.35 and aqmlab's preset scenario give the same goodput within 3 points (0.55
    and 0.99 in both), far from the paper's 0.62-0.91 at 40 sources."""
    old_tcp = ["tcp.limited_transmit=false", 'tcp.partial_ack_timer="every"']
    for sources in (20, 40):
        ours, ns2 = _rem_wireless(sources, ["1", "1", "100000"], old_tcp)
        assert abs(ours - ns2) < 0.03, (sources, ours, ns2)
    assert ours > 0.95 and ns2 > 0.95


def test_rem_wireless_modified_newreno_on_droptail_matches_ns2() -> None:
    """The other reading of section 5.1's DropTail line (docs/fidelity.md, item 6): the modified
    NewReno, which does not cut on duplicate ACKs, on DropTail too. ns-2.35 runs it with
    `decrease_num_ 1.0`: 0.972 at 20 sources and 0.961 at 100 (seed 1). aqmlab with ns-2.35's
    TCP keys gives 0.964 and 0.951, within 2.5 points, so this reading does not give the paper's
    62-91 % either. The cut on a timeout matters here: with the literal RFC 5681 FlightSize
    (`loss_ssthresh = "flight"`, aqmlab's default), which still counts the segments go-back-N
    sends again and those fast recovery's inflated window let out, 20 sources get 0.83."""
    ns2_235 = [f"tcp.{k}" for k in cc.NS2_TCP] + ["tcp.initial_cwnd=2", "tcp.dupack_halving=false"]
    for sources in (20, 100):
        ours, ns2 = _rem_wireless(sources, ["1", "0", "100000", "1.0"], ns2_235)
        assert abs(ours - ns2) < 0.025, (sources, ours, ns2)
        assert ours > 0.94 and ns2 > 0.94, (sources, ours, ns2)
    flight = [k for k in ns2_235 if "loss_ssthresh" not in k]
    literal, ns2 = _rem_wireless(20, ["1", "0", "100000", "1.0"], flight)
    assert literal < ns2 - 0.08, (literal, ns2)


def test_red_star_admission_problem_in_ns2_is_not_the_papers(tmp_path: Path) -> None:
    """The ECN+ paper's RED* with ECN at 90 % load (docs/fidelity.md, item 7): the paper reads
    about 30 % of responses within 0.5 s. ns-2.35 with its own web model (PackMime-HTTP over
    Full-TCP, `tests/ns2/ecn_web_packmime.tcl`) gives 0.88, and aqmlab's preset scenario 0.83:
    both far above the paper, within 10 points of each other."""
    import subprocess

    import aqmlab

    tcl = Path(__file__).parent / "ns2" / "ecn_web_packmime.tcl"
    out = tmp_path / "responses.txt"
    subprocess.run(
        ["ns", str(tcl), "100", "1440", "35", "1", "0", "RED", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        cwd=tmp_path,
    )
    times = [
        float(r.split()[3]) / 1000
        for r in out.read_text().splitlines()
        if float(r.split()[0]) >= 10
    ]
    ns2 = sum(1 for t in times if t < 0.5) / len(times)
    scenario = (
        Path(__file__).parents[1] / "python/aqmlab/experiments/presets/scenarios/ecn-web-000.toml"
    )
    r = aqmlab.run(
        scenario,
        overrides=[
            'aqm={kind="red",min_th=20,max_th=60,max_p=0.1,w_q=0.002,gentle=false,'
            'above_max="mark",ecn=true}',
            "tcp.ecn=true",
            "tcp.ecn_plus=false",
            "duration=35s",
            "metrics.start=10s",
            'traffic[0].offered_load="90Mbps"',
        ],
    )
    resp = r.responses.column("response_time_s").to_pylist()
    ends = r.responses.column("end_s").to_pylist()
    ours_t = [t for t, e in zip(resp, ends, strict=True) if e >= 10]
    ours = sum(1 for t in ours_t if t < 0.5) / len(ours_t)
    assert r.summary["web"]["synack_drops"] > 0
    assert ns2 > 0.8 and ours > 0.75, (ours, ns2)
    assert abs(ours - ns2) < 0.1, (ours, ns2)


def test_webtraf_connection_pattern_in_ns2_and_ours() -> None:
    """The ECN+ paper's RED* with ECN at 90 % load (docs/fidelity.md, item 7) with the web model
    the paper cites, ns-2's WebTraf (`tests/ns2/ecn_web_webtraf.py`): two connections per object,
    three packets per object that are not ECN-capable in the congested queue. ns-2.35 and
    aqmlab's `http = "webtraf"` with ns-2's workload (the same sessions and whole-segment objects,
    a page's objects at gaps of 50 ms, the think time from the page's end) and ns-2's RED and TCP
    rules agree within 8 points on the share of responses within 0.5 s (25 s runs, seeds 1-4:
    ns-2 0.763-0.791, aqmlab 0.753-0.800, on average 0.780 and 0.776), 11-13 points under
    aqmlab's one connection per object;
    in both simulators ECN+ gains under 3 points there (it makes only the SYN/ACK ECN-capable).
    Still far above the paper's 0.30."""
    from concurrent.futures import ThreadPoolExecutor

    wt = _module("ecn_web_webtraf")
    with ThreadPoolExecutor(max_workers=2) as pool:
        ecn, plus = pool.map(lambda p: wt.ns2(100, "90%", True, p, 25.0), [False, True])
    ours = wt.aqmlab_run(100, "90%", True, False, 25.0)
    ours_plus = wt.aqmlab_run(100, "90%", True, True, 25.0)
    one = wt.aqmlab_run(100, "90%", True, False, 25.0, http="1.0")
    got = [x.within[0] for x in (ecn, plus, ours, ours_plus, one)]
    assert 0.6 < ecn.within[0] < 0.8, got
    assert abs(ours.within[0] - ecn.within[0]) < 0.08, got
    assert one.within[0] > ours.within[0] + 0.07, got
    assert plus.within[0] - ecn.within[0] < 0.03, got
    assert ours_plus.within[0] - ours.within[0] < 0.03, got


def test_open_pages_and_a_common_start_give_the_papers_collapse_in_ns2_and_ours() -> None:
    """The ECN+ paper re-runs its request traces on the congested link (docs/fidelity.md, item
    7): requests that keep coming whatever the congestion. ns-2's WebTraf does that with
    `interPageOption_ 0` (think time from page start to page start; aqmlab's `pages = "open"`),
    launches a page's objects at gaps of 50 ms (`parallel_objects`, `object_gap`) and begins each
    session with a page (`first_page = "start"`), here at times uniform in 0-5 s. Pareto think
    times of infinite variance keep the pages after that common start dense: 110-145 Mbit/s in
    the first 10 s, 89.5 over 10-40 s. Both simulators run the same workload (1840 sessions,
    objects of whole segments, no FIN, round trips 1 ms apart in ns-2) with ns-2's RED and TCP
    rules, and a lost SYN cuts the window of its own connection only (RFC 5681 section 3.1:
    aqmlab's `syn_loss_cut`; ns-2's WebTraf would keep the cut on its recycled TCP agent for
    every later connection), and WebTraf's pages (ceil(Exponential of mean 2.5) objects, 3.033 on
    average). Under RED* and ECN the share of responses within 0.5 s over 10-40 s falls to
    0.37-0.51 in ns-2 on seeds 1-4 (mean 0.441), near the paper's 0.30, and to 0.40-0.53 in
    aqmlab (mean 0.449); over seeds 1-12, 0.429 and 0.419. One seed says little at this tipping
    point, so the test compares the means. Begun at stationary times (seeds 1-2) both answer
    faster. With one connection per object (`http = "1.0"`) ECN+ repairs it in aqmlab (seeds
    1-4: 0.68 -> 0.89), the paper's figure 3."""
    wt = _module("ecn_web_webtraf")
    seeds = (1, 2, 3, 4)
    run = (100, "90%", True, False, 40.0)
    with ThreadPoolExecutor(max_workers=2) as pool:
        theirs = [pool.submit(wt.ns2, *run, s, "open", "ns2") for s in seeds]
        steady = [pool.submit(wt.ns2, *run, s, "open", "stationary") for s in seeds[:2]]
        ours = [wt.aqmlab_run(*run, seed=s, pages="open") for s in seeds]
        ours_steady = [
            wt.aqmlab_run(*run, seed=s, pages="open", start="stationary") for s in seeds[:2]
        ]
        one = [wt.aqmlab_run(*run, http="1.0", pages="open", seed=s) for s in seeds]
        one_plus = [
            wt.aqmlab_run(100, "90%", True, True, 40.0, http="1.0", pages="open", seed=s)
            for s in seeds
        ]
        ns2 = [f.result() for f in theirs]
        ns2_steady = [f.result() for f in steady]

    def mean(ps: list) -> float:
        return sum(p.within[0] for p in ps) / len(ps)

    got = (
        [p.row() for p in ns2],
        [p.row() for p in ours],
        [p.row() for p in ns2_steady],
        [p.row() for p in ours_steady],
        [p.row() for p in one],
        [p.row() for p in one_plus],
    )
    assert mean(ns2) < 0.5 and mean(ours) < 0.5, got
    assert all(p.mbps < 82.0 for p in ns2 + ours), got
    assert abs(mean(ours) - mean(ns2)) < 0.04, (mean(ns2), mean(ours), got)
    assert mean(ns2_steady) > mean(ns2[:2]) + 0.08, got
    assert mean(ours_steady) > mean(ours[:2]) + 0.08, got
    assert mean(one_plus) > mean(one) + 0.15, got


def test_st_red_rises_at_long_rtt_in_ns2s_dynamics_and_ours() -> None:
    """Thesis section 5.5.1 (docs/fidelity.md, item 4), seed 1. ns-2.35's own RED average, under
    the ARED that ST-RED is before its first adjustment, makes fig. 5.3's detector (RED's average,
    section 5.5's h_s) find large variances only once d reaches 700-900 ms and never a small one;
    aqmlab's ST-RED on the same set-up, with ns-2's RED keys (the idle rule and the rule at
    arrivals among them), raises its thresholds in the same phases and not before, several times:
    the rise of figure 5.4 (the queue to about 120 packets) comes out in both. Open loop (the
    detector's statistic over each simulator's own average, thresholds fixed) the two agree in
    every phase, the return included: there the reverse link's max_p, which fell by 0.9 every
    0.5 s while d was long, takes about 280 s to climb back, and sigma / q_ref stays twice its
    value at the start (0.10 against 0.045) in both."""
    st = _module("st_red_551")
    t, q = st.ns2_trace(1, "average")
    d = st.detect(t, q)
    assert d.detections, d
    assert all(600 <= s <= 1200 and k == "large" for s, k in d.detections), d.detections
    assert max(d.sigma_median[:2]) < 0.1, d.sigma_median
    assert min(d.sigma_median[3:6]) > 0.25, d.sigma_median
    # After the return (1600-1800 s) the slow climb of the reverse link's max_p.
    assert 1.5 * d.sigma_median[0] < d.sigma_median[8] < 0.15, d.sigma_median
    # Phases 1 (d = 300 ms on the way out) and 9 (the last 200 s) vary by a factor of two from
    # seed to seed in both simulators (seeds 1-6 at 300 ms: ns-2.35 0.038-0.071, aqmlab
    # 0.050-0.117); the means of the other eight over those seeds are within 14 %, here seed 1.
    open_loop = st.aqmlab_open_loop(1)
    for i, (ns2_m, our_m) in enumerate(zip(d.sigma_median, open_loop, strict=True)):
        if i in (1, 9):
            assert 0.03 < our_m < 0.15 and 0.03 < ns2_m < 0.15, (i, open_loop, d.sigma_median)
        else:
            assert abs(our_m - ns2_m) < 0.25 * ns2_m, (i, open_loop, d.sigma_median)
    ours = st.aqmlab_st_red(1, "average")
    assert len(ours["steps"]) >= 2, ours
    assert all(600 <= s <= 1200 and m > 60 for s, m in ours["steps"]), ours["steps"]
    # max_th 60 -> 113.6 on this seed (948-1161 s): q_ref 40 -> 75.7.
    assert ours["steps"][-1][1] > 100, ours["steps"]
    # The average swings as ns-2's at 900 ms (sigma / q_ref 0.48 against 0.44-0.48; 0.32-0.37
    # with Floyd's idle rule and a clock for the adaptive rule). Taken open loop: the closed
    # loop's figure covers only the time before the first step (16-150 s of the phase,
    # depending on the seed; docs/tcp.md, "The loss's ssthresh").
    assert open_loop[4] > 0.38, open_loop


def test_st_pi_finds_no_small_variance_in_ns2s_pi() -> None:
    """Thesis section 6.4.3's first phase (docs/fidelity.md, item 5): 300 forward and 50 reverse
    ECN flows at 15 Mbit/s, PI at q_ref 150 with `bytes_`, no HTTP. ns-2.35's own PI holds 150
    packets with a standard deviation of about 80, so fig. 6.1's detector (section 6.4's h_s)
    finds no small variance in 200 s: sigma / q_ref stays near 0.5, twice h_s. The thesis'
    ST-PI sat at 46-75 packets by 100-200 s, which needs one. aqmlab's ST-PI on the same set-up
    never lowers q_ref either (one step up: to 242.8 at 124 s with ns-2's window cut, to 219.6
    at 198 s with `loss_ssthresh = "window"`), and aqmlab's PI, which ST-PI is until its first
    step, keeps a deviation within 15 % of ns-2's (87.6 against 81.4 packets). The deviation is
    PI's, open loop as ns-2's: ST-PI's over 50-200 s also holds the level its step moves to."""
    st = _module("st_pi_643")
    t, q = st.ns2_queue(300, 50, 200.0)
    m = t >= 50
    assert abs(q[m].mean() - 150) < 10 and q[m].std() > 60, (q[m].mean(), q[m].std())
    d = st.detect(t, q)
    assert not any(k == "small" for _, k, _ in d.detections), d.detections
    assert min(s for when, s in d.sigma if when >= 50) > 1.5 * st.H_S, d.sigma
    ours = st.aqmlab_st_pi(300, 50, 200.0)
    assert all(q_ref > 150 for _, q_ref in ours["steps"]), ours
    pi = st.aqmlab_st_pi(300, 50, 200.0, scheme="PI")
    assert abs(pi["std"] - q[m].std()) < 0.15 * q[m].std(), (pi, q[m].std())


def test_st_pi_closed_loop_in_ns2_raises_q_ref() -> None:
    """Thesis section 6.4.3 whole (docs/fidelity.md, item 5, closed loop): fig. 6.1 driving
    ns-2.35's own PI on both bottleneck queues (a Tcl driver of ours at PI's 170 Hz;
    `st_pi_643.ns2_closed_loop`), 300 + 50 ECN flows, 15 -> 5 -> 15 Mbit/s, beside aqmlab's
    ST-PI. The thesis' ST-PI holds 46-75 packets in all three phases (Table 6-3), which needs
    small variances; in both simulators every detection is a large variance, q_ref only rises
    (to the cap of half the buffer) and the queue stands at 1.8 times the thesis' 75 or more."""
    st = _module("st_pi_643")
    ns2, ours = st.ns2_closed_loop(), st.aqmlab_closed_loop()
    for run in (ns2, ours):
        assert run.steps and all(kind == "large" for _, _, kind in run.steps), run
        q_refs = [st.Q_REF] + [q for _, q, _ in run.steps]
        assert all(b > a for a, b in itertools.pairwise(q_refs)), run.steps
        assert min(run.queue_mean) > 1.8 * 75, run.queue_mean
        assert run.queue_mean[2] > run.queue_mean[0], run.queue_mean


def test_st_red_finds_no_small_variance_at_100_ms_once_risen() -> None:
    """Thesis section 5.5.1's return (docs/fidelity.md, item 4). After its rise ST-RED is ARED
    at min_th 20 K, max_th 60 K, w_q 5e-5 / K, interval 0.5 K s (eq. 5.1-5.2); K = 158.2 / 60 is
    the largest rise of seed 1 on the cross-check set-up seen so far (q_ref 105.4; 113.6 / 60
    with ns-2's cut, `loss_ssthresh = "ns2"`). For the thresholds to come back once d
    is 100 ms again, fig. 5.3 must find sigma < h_s q_ref on RED's average. At a steady 100 ms
    ns-2.35's own average gives sigma / q_ref about 0.04 at the risen parameters as at the design
    point (q_ref 40), more than twice section 5.5's h_s = 0.0173 in every 100 s window: its
    detector finds no small variance, so the thesis' return is not in ns-2's dynamics with the
    thesis' h_s. aqmlab's average gives the same ratio."""
    st = _module("st_red_551")
    duration = 400.0
    medians = {}
    for k in (1.0, 158.158 / 60.0):
        risen = st.Risen(k)
        d = st.detect(*st.ns2_trace(1, "average", risen, duration), risen, 100.0)
        ours = st.aqmlab_steady(1, risen, duration)
        assert not any(kind == "small" for _, kind in d.detections), (k, d.detections)
        # From 100 s on (the first window holds the start-up).
        assert min(d.sigma_min[1:]) > 1.5 * st.H_S, (k, d.sigma_min)
        assert min(ours.sigma_min[1:]) > 1.5 * st.H_S, (k, ours.sigma_min)
        ns2_m, our_m = float(np.median(d.sigma_median[1:])), float(np.median(ours.sigma_median[1:]))
        assert abs(our_m - ns2_m) < 0.2 * ns2_m, (k, ours.sigma_median, d.sigma_median)
        medians[k] = ns2_m
    # The ratio hardly moves with the thresholds (0.044 at q_ref 40, 0.041 at 105.4 on seed 1).
    lo, hi = sorted(medians.values())
    assert hi < 1.3 * lo, medians


def test_st_red_closed_loop_in_ns2_rises_and_does_not_return() -> None:
    """Thesis section 5.5.1 (docs/fidelity.md, item 4, closed loop), seed 1: fig. 5.3
    driving ns-2.35's own ARED on both bottleneck queues (a Tcl driver of ours, sampling every
    5 ms; `st_red_551.ns2_closed_loop`) beside aqmlab's ST-RED. In both simulators the forward
    thresholds rise while d is long (700-900 ms) and never come back: no small variance is found
    in the 2000 s, sigma / q_ref stays several times h_s once d is back at 100 ms, and the queue
    ends about twice its level at the start, where figure 5.4's returns near 60 packets from about
    120. Before the first step (d = 100-500 ms) the two queues agree phase by phase."""
    st = _module("st_red_551")
    ns2, ours = st.ns2_closed_loop(1), st.aqmlab_closed_loop(1)
    for run in (ns2, ours):
        assert len(run.steps) >= 2, run
        assert all(600 <= t <= 1200 for t, _ in run.steps), run.steps
        maxth = [60.0] + [m for _, m in run.steps]
        assert all(b > a for a, b in itertools.pairwise(maxth)) and maxth[-1] > 100, run.steps
        assert run.small == 0, run
        assert min(run.sigma_median[8:]) > 3 * st.H_S, run.sigma_median
        assert run.queue_mean[9] > 1.5 * run.queue_mean[0], run.queue_mean
    # ns-2's RED takes the new lines at the forward queue's next empty moment, within a second.
    assert ns2.reset_wait_s[0] < 1.0, ns2.reset_wait_s
    # Before 600 s (d = 100-500 ms), where neither steps, the queues agree phase by phase.
    for i in range(3):
        assert abs(ours.queue_mean[i] - ns2.queue_mean[i]) < 0.1 * ns2.queue_mean[i], (
            i,
            ours.queue_mean,
            ns2.queue_mean,
        )


def test_thesis_4_5_experiment_1_queue_is_ns2s() -> None:
    """Thesis section 4.5.1 (docs/fidelity.md, item 20) without its HTTP sessions: 50 FTP and 20
    reverse flows, 10 Mbit/s, d = 120 ms, min_th 50, max_th 150, w_q 1e-4, max_p 0.05. ARED's
    queue sits at the thesis' 100 packets in both simulators (means over seeds 1-16: ns-2.35
    98.8, aqmlab 100.0), but with a standard deviation of about 80 packets in both (79.3, 83.9),
    not figure 4.3's "small fluctuations"; RED with AP-RED's initial set (fixed max_p) sits a
    little higher and swings less (ns-2.35 105.5 / 59.4, aqmlab 103.2 / 57.6). The set-up lies
    where both simulators switch between an RTT-periodic queue and RED's slow cycle (between 15
    and 30 reverse flows), so one seed's RED deviation spreads over 46-66 packets in both:
    compared over 16 seeds."""
    seeds = list(range(1, 17))
    for case in cc.THESIS_451.values():
        # The runs are independent: on both cores (about 1 s each in ns-2, 0.2 s in aqmlab).
        with ProcessPoolExecutor(2) as ex:
            ns2 = list(ex.map(cc.queue_ns2, [case] * len(seeds), seeds))
            ours = list(
                ex.map(cc.queue_aqmlab, [case] * len(seeds), seeds, [cc.NS2_TCP] * len(seeds))
            )
        ns2_mean, our_mean = np.mean([q.mean() for q in ns2]), np.mean([q.mean() for q in ours])
        ns2_std, our_std = np.mean([q.std() for q in ns2]), np.mean([q.std() for q in ours])
        assert abs(our_mean - ns2_mean) < 0.05 * ns2_mean, (case.name, our_mean, ns2_mean)
        assert abs(our_std - ns2_std) < 0.1 * ns2_std, (case.name, our_std, ns2_std)
        if case.aqm == "ared":
            assert abs(ns2_mean - 100) < 10, ns2_mean
            assert min(ns2_std, our_std) > 0.7 * ns2_mean, (ns2_std, our_std)
        else:
            assert 0.5 * ns2_mean < ns2_std < 0.7 * ns2_mean, (ns2_mean, ns2_std)


def test_ared_queue_on_the_chapter_6_set_ups_is_ns2s() -> None:
    """The thesis' chapter 6 set-ups without the HTTP sessions (`tests/ns2/thesis_644.py`;
    docs/fidelity.md, Tables 6-1 to 6-5 and the queue deviations), seed 1, 50-150 s. With ns-2's
    RED keys aqmlab's ARED keeps ns-2.35's queue: 300 ECN flows in packets (269.5 against 272.4
    packets, drops 17.3 against 17.9 %), and 100 flows in ns-2.35's byte mode (154.3 against 155.5
    in 500-byte units, deviation 123.9 against 122.4). With aqmlab's RED defaults the first queue
    stands 40 % lower (156.0 packets): ns-2's gentle line from the initial max_p is what holds it
    above max_th's 225."""
    t = _module("thesis_644")
    ns2 = t.ns2_644(t.SETUPS["ared-300-packets"])
    ours = t.aqmlab_644(t.SETUPS["ared-300-packets"])
    assert abs(ours["queue"] - ns2["queue"]) < 0.05 * ns2["queue"], (ours, ns2)
    assert abs(ours["loss"] - ns2["loss"]) < 0.02, (ours, ns2)
    plain = t.aqmlab_644(t.SETUPS["ared-300-packets-plain"])
    assert plain["queue"] < 0.7 * ns2["queue"], (plain, ns2)
    ns2_b = t.ns2_644(t.SETUPS["ared-100-bytes"])
    ours_b = t.aqmlab_644(t.SETUPS["ared-100-bytes"])
    for k in ("queue_units", "std_units"):
        assert abs(ours_b[k] - ns2_b[k]) < 0.05 * ns2_b[k], (k, ours_b, ns2_b)
