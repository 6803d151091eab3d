"""aqmlab against ns-3.44 (PyPI's ``ns3`` wheel) on the same dumbbell, and on two queues in
sequence (tests/ns3/README.md).

Runs when the wheel is installed in this Python (``make ns3``; ``make test`` installs it). Each
pair is one case of ``tests/ns3/crosscheck.py`` (NewReno and CUBIC, SACK off on both sides, through
RED, PIE and CoDel, 5 and 20 flows, with and without ECN; the same with SACK and without ECN, BBR
with SACK through the three and DCTCP through a step-marking queue, ten of these (``CI_NEWER``);
NewReno through FQ-PIE and FQ-COBALT and DCTCP sending ECT(1) beside NewReno through FQ-CoDel with
a CE threshold, the five flow-queue pairs; NewReno through COBALT on one queue and through Floyd's
Adaptive RED, 5 and 20 flows, with drops and with ECN; 10 Mbit/s, base RTT 70-130 ms, 1500-byte
packets, 40 s with the last 30 measured), seed 1 (the flow-queue pairs seed 2), all pairs run once
in a pool of two workers (``pytest -s`` prints the table). The bands are the largest differences
measured over seeds 1-3 on the pairs without SACK where the two models are the same (README.md,
"Agreement"); the newer TCPs and the flow-queue schemes are held to the same bands (README.md, "The
newer TCPs", "The flow-queue schemes", "COBALT on one queue", "Adaptive RED"). The three pairs
of two queues in sequence (RFC 7928 section 10.2's path: NewReno with SACK and ECN through RED,
PIE and CoDel at L and M) run seeds 1-5 and hold their means to the same bands (README.md, "Two
queues in sequence").

A pair outside a band is an expected failure when ns-3's figures show a known defect (README.md,
"Where ns-3 differs": its scoreboard without SACK, its spurious timeouts with SACK) or the two
models differ (BBR; for the flow-queue pairs, only in the figures the named difference moves; for
newreno-pie-5-sack, the cut with SACK, README.md, "The newer TCPs"), naming the figures. A pair
within every band passes whatever else it shows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from file_modules import load


def _module(name: str, file: str) -> ModuleType:
    return load(name, Path(__file__).parent / "ns3" / file)


cc = _module("ns3_crosscheck", "crosscheck.py")

pytestmark = [
    pytest.mark.skipif(not cc.available(), reason=f"ns-3 not installed ({cc.INSTALL})"),
    pytest.mark.crosscheck,
]

# The pairs without SACK, and of the newer TCPs (README.md, "The newer TCPs") those that keep the
# module's time modest: DCTCP, SACK with 5 flows, one SACK pair with 20 flows and one BBR pair
# (`crosscheck.py --seeds 1 2 3` runs them all: the README's tables).
CI_NEWER = (
    "dctcp-step-5-ecn",
    "dctcp-step-20-ecn",
    *(f"{v}-{a}-5-sack" for v in ("newreno", "cubic") for a in ("red", "pie", "codel")),
    "newreno-red-20-sack",
    "bbr-pie-5-sack",
)
# The flow-queue pairs (README.md, "The flow-queue schemes"), the COBALT pairs ("COBALT on one
# queue") and Floyd's Adaptive RED's ("Adaptive RED") all run.
CASES = {
    c.name: c
    for c in cc.all_cases()
    if c in cc.cases()
    or c.name in CI_NEWER
    or c in cc.fq_cases()
    or c in cc.cobalt_cases()
    or c in cc.ared_cases()
}
# Seed 1 would put flows 0 and 1 of the flow-queue pairs in one queue in aqmlab (its hash is
# perturbed from the seed's stream: 4 queues for 5 flows, Jain's index 0.915), where ns-3's hash
# of the 5-tuples gives each its own: seed 2 gives both sides 5 queues.
CI_SEED = {c.name: 2 for c in cc.fq_cases()}

# The agreement reached on the 28 of 72 runs (24 pairs, seeds 1-3) where both models are the
# same (README.md, "Agreement"), each band the largest difference measured when it was set,
# rounded up: the utilisation in points (0.018), the mean queue and queuing delay as a share of
# the larger of the two (0.153, 0.155), the drop or mark rate likewise (NewReno 0.103; CUBIC
# 0.276, when aqmlab's CUBIC cut its fractional window), Jain's index in points (0.063). With
# CUBIC's whole-segment cut the CUBIC pairs measure 0.0215 (seed 3 of cubic-codel-5-ecn; seed 1
# here 0.012), 0.120, 0.127 and 0.212.
UTILISATION = 0.02
QUEUE = 0.16
# DCTCP is held to NewReno's band: both sides grow it as Reno and hold its window in CWR after
# an ECN cut, the rule that widens CUBIC's.
SIGNAL = {"newreno": 0.11, "cubic": 0.28, "dctcp": 0.11, "bbr": 0.11}
JAIN = 0.07

# Pairs whose models differ whatever the run shows (README.md, "The newer TCPs").
MODEL_DIFFERENCE = {
    "bbr": (
        "ns-3.44's TcpBbr has no long-term bandwidth (policer) sampling, which Linux's and "
        "aqmlab's BBR use under these drop rates (aqmlab paces at gain 1 in 83-88 % of its ProbeBW "
        "samples, the gain cycle alone 75 %), a window budget of 3 segments (aqmlab 6), and "
        "RTprop renewed by an RTT equal to it (Linux before 5.10; Linux 6.x and aqmlab only by a "
        "shorter one, so their flows enter ProbeRTT every 10 s on these constant-delay paths); "
        "seeds 1-3: ns-3 drops 13-54 % more in all 18 runs, Jain's index differs by up to 0.43 "
        "either way"
    ),
}
# Single-queue pairs outside a band for a rule the two models set differently, per pair (README.md,
# "The newer TCPs").
NAMED_DIFFERENCE = {
    "newreno-pie-5-sack": (
        "the cut at three duplicate ACKs with SACK: ns-3's NewReno halves its pipe, which leaves "
        'out the SACKed segments, aqmlab the window (loss_ssthresh = "window"); over seeds 1-12 '
        "aqmlab drops 11.2 % more (1569 against 1394) and recovers 16 % more often, as through RED "
        "(8.6 %) and CoDel (8.5 %) within their bands; with ns-3 cutting as aqmlab "
        "(crosscheck.py --ns3-window-cut) the gap is 2.7 %, the utilisation 0.966 against 0.962, "
        "and seeds 1 and 2 agree within every band (seed 1's utilisation 0.976 against 0.964) "
        "(test_newreno_pie_sack_agrees_when_ns3_cuts_the_window)"
    ),
}


def ns3_scoreboard_defect(ns3: dict[str, Any], ours: dict[str, Any], sack: bool) -> str | None:
    """Why this ns-3 run is not the model aqmlab runs, or None: its senders entered the loss state
    more than 1.5 times as often as aqmlab's timed out, plus 2 (ns-3.44 without SACK: after a
    timeout its scoreboard can count the whole window lost, and dupacks are ignored in that
    state; with SACK: spurious timeouts, as its fast retransmission does not restart the
    retransmission timer), or they retransmitted more than twice the segments the queue
    dropped."""
    if ns3["timeouts"] > 1.5 * ours["timeouts"] + 2:
        cause = (
            "spurious timeouts: its fast retransmission does not restart the timer"
            if sack
            else "the scoreboard without SACK"
        )
        return (
            f"ns-3 loss-state entries {ns3['timeouts']} (aqmlab timeouts {ours['timeouts']}), "
            f"{cause}"
        )
    rtx = ns3["retransmits"]
    if rtx > 2 * max(ns3["drops"], 1) and rtx > 2 * ours["retransmits"] + 10:
        return f"ns-3 retransmits {rtx} for {ns3['drops']} drops (aqmlab {ours['retransmits']})"
    return None


@pytest.fixture(scope="module")
def pairs() -> dict[str, dict[str, Any]]:
    rows = cc.run_pairs([(c, CI_SEED.get(c.name, 1)) for c in CASES.values()], workers=2)
    print("\n" + cc.table(rows))
    return {r["case"]: r for r in rows}


def _rel(a: float, b: float) -> float:
    top = max(abs(a), abs(b))
    return abs(a - b) / top if top > 0 else 0.0


def outside_bands(name: str, pairs: dict[str, dict[str, Any]]) -> list[str]:
    """The figures of the pair outside the bands."""
    return outside(CASES[name], pairs[name]["aqmlab"], pairs[name]["ns3"])


def outside(case: Any, ours: dict[str, Any], ns3: dict[str, Any]) -> list[str]:
    """The figures of one run of `case` on both sides outside the bands."""
    signal = "mark_pct" if case.ecn else "drop_pct"
    bands = {
        "utilisation": abs(ours["utilisation"] - ns3["utilisation"]) <= UTILISATION,
        "queue_pkts": _rel(ours["queue_pkts"], ns3["queue_pkts"]) <= QUEUE,
        "delay_ms": _rel(ours["delay_ms"], ns3["delay_ms"]) <= QUEUE,
        signal: _rel(ours[signal], ns3[signal]) <= SIGNAL[case.variant],
        "jain": abs(ours["jain"] - ns3["jain"]) <= JAIN,
    }
    return [k for k, ok in bands.items() if not ok]


def hold(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """The pair within the bands, or an expected failure naming why the models differ."""
    case = CASES[name]
    ours, ns3 = pairs[name]["aqmlab"], pairs[name]["ns3"]
    outside = outside_bands(name, pairs)
    if not outside:
        return
    why = (
        ns3_scoreboard_defect(ns3, ours, case.sack)
        or MODEL_DIFFERENCE.get(case.variant)
        or NAMED_DIFFERENCE.get(name)
    )
    if why:
        pytest.xfail(f"{name}: {', '.join(outside)} outside; {why}; README.md")
    raise AssertionError(f"{name}: {', '.join(outside)} outside the bands", ours, ns3)


@pytest.mark.parametrize("name", [c.name for c in cc.cases()])
def test_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    hold(name, pairs)


def test_ns3_limited_transmit_without_sack_keeps_stale_reno_sacks() -> None:
    """Why the pairs run without limited transmit (README.md, "Limited transmit without SACK"):
    ns-3.44's limited transmit without SACK counts each of the first two duplicate ACKs as a
    Reno SACK that a new ACK does not clear. NewReno through RED, 5 flows, seed 1: ns-3 keeps
    0.697 of the link with 6722 retransmissions for 1634 drops (with it off: 0.987 and 95
    retransmissions at a drop rate of 0.36 %), where aqmlab with RFC 3042's limited transmit
    keeps 0.990 with 112 retransmissions for 96 drops."""
    case = CASES["newreno-red-5"]
    _, starts, delays = cc.run_aqmlab(case, 1)
    lt = dict(case.ns3_config(1, starts, delays), limited_transmit=True)
    ns3 = cc.run_ns3(lt)
    assert ns3["utilisation"] < 0.8, ns3
    assert ns3["retransmits"] > 3 * ns3["drops"], ns3
    rfc = cc.Case(case.variant, case.aqm, case.flows)
    toml = rfc.toml(1).replace("limited_transmit = false", "limited_transmit = true")
    import aqmlab

    s = aqmlab.run(toml).summary
    assert s["bottleneck"]["utilization"] > 0.98, s["bottleneck"]
    assert s["flows"]["retransmits"] < 2 * (s["bottleneck"]["drops_early"] + 1), s["flows"]


@pytest.mark.parametrize("name", [c.name for c in cc.dctcp_cases() if c.name in CASES])
def test_dctcp_step_marking_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """TcpDctcp (g = 1/16, alpha from 1) through RED as a step (K = 20) beside aqmlab's DCTCP
    with byte counting (ns-3's DCTCP is a TcpLinuxReno) through `kind = "step"`."""
    hold(name, pairs)


@pytest.mark.parametrize("name", [c.name for c in cc.bbr_cases() if c.name in CASES])
def test_bbr_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """TcpBbr (paced, SACK and limited transmit on) beside aqmlab's BBR with SACK, no RACK, no
    PRR."""
    hold(name, pairs)


@pytest.mark.parametrize("name", [c.name for c in cc.sack_cases() if c.name in CASES])
def test_sack_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """NewReno and CUBIC with SACK (RFC 6675's recovery, TcpClassicRecovery: no PRR; no RACK)."""
    hold(name, pairs)


@pytest.mark.parametrize("name", [c.name for c in cc.cobalt_cases()])
def test_cobalt_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """COBALT on one queue (CoDel's part as CAKE runs it, BLUE beside it) beside ns-3's
    CobaltQueueDisc, NewReno with drops (SACK) and with ECN, 5 and 20 flows."""
    hold(name, pairs)


@pytest.mark.parametrize("name", [c.name for c in cc.ared_cases()])
def test_ared_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """Floyd's Adaptive RED (automatic mode, ns-2's adaptation on an arrival, bounds tested and
    not clamped) beside ns-3's RedQueueDisc with ARED on, NewReno with drops (SACK) and with ECN,
    5 and 20 flows."""
    hold(name, pairs)


def test_newreno_pie_sack_agrees_when_ns3_cuts_the_window() -> None:
    """What keeps newreno-pie-5-sack outside its bands (utilisation 0.976 against 0.952 on seed 1,
    drop rate 11.9 % apart on seed 2) is ns-3's cut at three duplicate ACKs with SACK, half its
    pipe, against aqmlab's half the window: with dumbbell.cc's NewReno that halves the window,
    both seeds come within every band."""
    case = CASES["newreno-pie-5-sack"]
    for seed in (1, 2):
        ours, starts, delays = cc.run_aqmlab(case, seed)
        ns3 = cc.run_ns3(dict(case.ns3_config(seed, starts, delays), cc=cc.NS3_WINDOW_CUT))
        assert not outside(case, ours, ns3), (seed, ours, ns3)


def _fq_sack_cut(ours: dict[str, Any], ns3: dict[str, Any]) -> str:
    return (
        "the cut at three duplicate ACKs with SACK: ns-3 halves its pipe, (W - 2) / 2 "
        "with limited transmit (flow 0 of newreno-fq-pie-5-sack, seed 2: 22 recoveries from 22.4 "
        'segments on average to 9.9), aqmlab the window (loss_ssthresh = "window"), so at the '
        "share the scheduler fixes aqmlab's sawtooth is shorter and it cuts more often; ns-3 "
        "with aqmlab's cut (crosscheck.py --ns3-window-cut) closes the drop gap over seeds 1-12 "
        "from 3.4 % to 0.4 % (FQ-PIE) and from 6.5 % to -0.2 % (FQ-COBALT); this run: aqmlab "
        f"{ours['fast_rtx'] + ours['timeouts']} recoveries and timeouts and {ours['drops']} drops, "
        f"ns-3 {ns3['fast_rtx'] + ns3['timeouts']} and {ns3['drops']}, goodput "
        f"{ours['goodput_mbps']:.2f} against {ns3['goodput_mbps']:.2f} Mbit/s"
    )


def _fq_ecn_cut(ours: dict[str, Any], ns3: dict[str, Any]) -> str:
    return (
        "the ECN cut: ns-3 holds cwnd in CA_CWR until the ACK passes the highest segment sent, "
        'aqmlab\'s window grows on (README.md, "ECN"), so aqmlab cuts more often at the share '
        f"the scheduler gives each flow; this run: aqmlab {ours['ecn_cuts']} ECN cuts and "
        f"{ours['marks']} marks, ns-3 {ns3['ecn_cuts']} and {ns3['marks']}"
    )


def _fq_l4s(ours: dict[str, Any], ns3: dict[str, Any]) -> str:
    return (
        "the queue: ns-3's total counts its device queue, "
        f"{ns3['queue_pkts'] - ns3['qdisc_pkts']:.2f} packets on average, a large share of "
        f"queues this small (ns-3's queue disc alone {ns3['qdisc_pkts']:.2f}, aqmlab "
        f"{ours['queue_pkts']:.2f} packets); ns-3.44's TcpDctcp cuts to (1 - alpha / 2) cwnd "
        "with no floor (Linux and aqmlab: 2 segments), so under the marks of a 1 ms threshold, "
        "below one packet's 1.2 ms, its windows fall under one segment and wait for a timeout "
        f"({ns3['timeouts']} loss-state entries, aqmlab {ours['timeouts']} timeouts); ns-3 marks "
        f"{ns3['marks']} packets, aqmlab {ours['marks']}: ns-3.44's TcpLinuxReno, and TcpDctcp "
        "on it, keep their increase count through a cut, where Linux and aqmlab clear it, so "
        "ns-3's windows grow back sooner and stand higher (crosscheck.py --ns3-count-reset; "
        'test_dctcp_marks_agree_when_ns3_clears_its_count; README.md, "The flow-queue schemes")'
    )


def test_dctcp_marks_agree_when_ns3_clears_its_count() -> None:
    """FQ-CoDel's CE threshold at 5 ms (2 DCTCP flows sending ECT(1) beside 3 NewReno with
    classic ECN, seed 2), where no DCTCP window reaches ns-3's missing floor and the goodputs
    agree: ns-3 marks more than a quarter more (2012 against 1580) because ns-3.44's
    TcpLinuxReno, and TcpDctcp on it, carry their linear-increase count through a cut, so their
    windows grow back sooner; Linux's tcp_init_cwnd_reduction clears snd_cwnd_cnt, as aqmlab
    does. With dumbbell.cc's versions that clear it, the marks come within the band (1635, 3.4 %
    apart) and so do the ECN cuts."""
    case = dataclasses.replace(CASES["dctcp2-newreno3-fq-codel-ce1ms-ecn"], ce_threshold_ms=5.0)
    ours, starts, delays = cc.run_aqmlab(case, 2)
    config = case.ns3_config(2, starts, delays)
    as_is = cc.run_ns3(config)
    cleared_cc = [cc.NS3_COUNT_RESET[k] for k in ("dctcp",) * 2 + ("classic",) * 3]
    cleared = cc.run_ns3(dict(config, flow_cc=cleared_cc))
    assert as_is["marks"] > 1.2 * ours["marks"], (as_is, ours)
    for key in ("marks", "ecn_cuts"):
        assert abs(cleared[key] - ours[key]) < 0.11 * max(cleared[key], ours[key]), (
            key,
            cleared,
            ours,
        )
    for a, b in zip(ours["flow_goodput_mbps"], cleared["flow_goodput_mbps"], strict=True):
        assert abs(a - b) < 0.1, (ours, cleared)


# The figures each flow-queue pair leaves outside the bands on seed 2, and the model
# difference that does it (README.md, "The flow-queue schemes").
FQ_MODEL_DIFFERENCE = {
    "newreno-fq-pie-5-sack": ({"drop_pct"}, _fq_sack_cut),
    "newreno-fq-cobalt-5-sack": ({"drop_pct"}, _fq_sack_cut),
    "newreno-fq-pie-5-ecn": ({"mark_pct"}, _fq_ecn_cut),
    "dctcp2-newreno3-fq-codel-ce1ms-ecn": ({"queue_pkts", "delay_ms", "mark_pct"}, _fq_l4s),
}


@pytest.mark.parametrize("name", [c.name for c in cc.fq_cases()])
def test_fq_pair(name: str, pairs: dict[str, dict[str, Any]]) -> None:
    """FQ-PIE, FQ-COBALT (ns-3's FqPie, FqCobalt; NewReno, 5 flows, SACK with drops, no SACK
    with ECN) and FQ-CoDel with a 1 ms CE threshold for ECT(1) (ns-3's FqCoDel in L4S mode;
    2 DCTCP flows sending ECT(1), 3 NewReno with classic ECN), seed 2: each flow has its own
    queue on both sides, and the pair is within the bands or outside only where a named model
    difference puts it."""
    ours, ns3 = pairs[name]["aqmlab"], pairs[name]["ns3"]
    case = CASES[name]
    assert ns3["queues"] == case.flows, ns3
    if not case.dctcp_flows:  # DCTCP's queues empty too often for the 100 ms samples
        assert ours["queues"] == case.flows, ours
    outside = outside_bands(name, pairs)
    if not outside:
        return
    expected, why = FQ_MODEL_DIFFERENCE.get(name, (set(), None))
    if why is not None and set(outside) <= expected:
        pytest.xfail(f"{name}: {', '.join(outside)} outside; {why(ours, ns3)}; README.md")
    raise AssertionError(f"{name}: {', '.join(outside)} outside the bands", ours, ns3)


# Two queues in sequence (README.md, "Two queues in sequence"): each side's means over seeds 1-5,
# held to the dumbbell's bands. The chain's figures move more from seed to seed than the
# dumbbell's (which of the A flows M marks sets what each gets, and so L's queue): ns-3's L
# utilisation spans 0.818-0.873 over seeds 1-5 of the CoDel pair, a mean of three seeds is
# uncertain by about the band itself.
CHAIN_SEEDS = (1, 2, 3, 4, 5)
CHAIN = {c.name: c for c in cc.chain_cases()}
# L's packet time at 5 Mbit/s, which ns-3's device queue hides from the queue disc at L.
L_PACKET_MS = 1500 * 8 / 5e6 * 1e3
CHAIN_FIGURES = (
    "utilisation",
    "queue_pkts",
    "delay_ms",
    "mark_pct",
    "jain",
    "lm_utilisation",
    "lm_queue_pkts",
    "lm_delay_ms",
    "lm_mark_pct",
)


@pytest.fixture(scope="module")
def chain_pairs() -> dict[str, list[dict[str, Any]]]:
    rows = cc.run_pairs([(c, s) for c in CHAIN.values() for s in CHAIN_SEEDS], workers=2)
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["case"], []).append(r)
    return out


def _chain_means(rows: list[dict[str, Any]], side: str) -> dict[str, float]:
    return {k: cc.mean_over_seeds(rows, side, k) for k in CHAIN_FIGURES}


def chain_outside(ours: dict[str, float], ns3: dict[str, float]) -> list[str]:
    """The figures of M -> R (the bottleneck, as the dumbbell's) and of L -> M (`lm_`) outside
    the bands."""
    out = []
    for k in CHAIN_FIGURES:
        figure = k.removeprefix("lm_")
        if figure == "utilisation":
            ok = abs(ours[k] - ns3[k]) <= UTILISATION
        elif figure == "jain":
            ok = abs(ours[k] - ns3[k]) <= JAIN
        elif figure == "mark_pct":
            ok = _rel(ours[k], ns3[k]) <= SIGNAL["newreno"]
        else:
            ok = _rel(ours[k], ns3[k]) <= QUEUE
        if not ok:
            out.append(k)
    return out


def _device_packet(ours: dict[str, float], ns3: dict[str, float]) -> str:
    return (
        "ns-3's queue disc hands each packet to its device a packet time before it is sent, "
        f"{L_PACKET_MS:.1f} ms at L's 5 Mbit/s, so its CoDel at L sees that much less "
        'delay than aqmlab\'s for the same queue (README.md, "The device queue"): aqmlab marks '
        f"{ours['lm_mark_pct']:.3f} % of L's arrivals, ns-3 {ns3['lm_mark_pct']:.3f} %; with "
        "aqmlab's target at L raised by the packet time most of the gap closes "
        "(test_chain_gaps_close_with_the_device_packet_counted)"
    )


def _red_marks_at_l(ours: dict[str, float], ns3: dict[str, float]) -> str:
    return (
        "L's RED hardly acts (its average under min_th), marking a handful of L's arrivals a run "
        f"({ours['lm_mark_pct']:.3f} % against ns-3's {ns3['lm_mark_pct']:.3f} %, two or three "
        "packets in the 30 s): too few for their rate to be compared"
    )


# The figures each chain pair leaves outside the bands, and why (README.md, "Two queues in
# sequence").
CHAIN_DIFFERENCE = {
    "chain-newreno-red-5+5-ecn-sack": ({"lm_mark_pct"}, _red_marks_at_l),
    "chain-newreno-codel-5+5-ecn-sack": ({"lm_mark_pct"}, _device_packet),
}


@pytest.mark.parametrize("name", list(CHAIN))
def test_chain_pair(name: str, chain_pairs: dict[str, list[dict[str, Any]]]) -> None:
    """RFC 7928 section 10.2's path (the `rfc7928-10` preset): NewReno with SACK and ECN, 5
    flows through L -> M (5 Mbit/s) and M -> R (10 Mbit/s), 5 through M -> R alone, the same
    scheme at both: M's utilisation, queue, delay, mark rate and Jain's index and L's
    utilisation, queue, delay and mark rate within the bands (means over seeds 1-5), or outside
    only where ns-3's device queue puts them."""
    rows = chain_pairs[name]
    ours, ns3 = _chain_means(rows, "aqmlab"), _chain_means(rows, "ns3")
    outside = chain_outside(ours, ns3)
    if not outside:
        return
    if name in CHAIN_DIFFERENCE:
        expected, why = CHAIN_DIFFERENCE[name]
        if set(outside) <= expected:
            pytest.xfail(f"{name}: {', '.join(outside)} outside; {why(ours, ns3)}")
    raise AssertionError(f"{name}: {', '.join(outside)} outside the bands", ours, ns3)


def test_chain_gaps_close_with_the_device_packet_counted(
    chain_pairs: dict[str, list[dict[str, Any]]],
) -> None:
    """What keeps the CoDel chain pair's marks at L outside the band is ns-3's device queue:
    counting in aqmlab the packet it hides (CoDel's target at L raised by L's packet time,
    2.4 ms) closes at least half of the gap between the means over seeds 1-5. The PIE pair's
    figures are all within the bands, and the RED pair's but for L's marks, a handful a run."""
    import aqmlab

    case = CHAIN["chain-newreno-codel-5+5-ecn-sack"]
    table = case.aqm_table()
    target = case.codel_target_ms
    shifted = table.replace(f'target = "{target}ms"', f'target = "{target + L_PACKET_MS:.1f}ms"')
    assert shifted != table
    runs = []
    for seed in CHAIN_SEEDS:
        s = aqmlab.run(case.toml(seed, {"lm": shifted})).summary
        lm = next(x for x in s["links"] if x["name"] == "lm")
        runs.append(100 * lm["marks"] / lm["arrivals"])
    rows = chain_pairs[case.name]
    ours, ns3 = _chain_means(rows, "aqmlab"), _chain_means(rows, "ns3")
    k = "lm_mark_pct"
    assert k in chain_outside(ours, ns3), (case.name, ours, ns3)
    counted = sum(runs) / len(runs)
    assert abs(counted - ns3[k]) <= 0.5 * abs(ours[k] - ns3[k]), (k, counted, ours[k], ns3[k])
