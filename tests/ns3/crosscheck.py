"""aqmlab beside ns-3 (3.44, PyPI's ``ns3`` wheel) on the same dumbbell (and on two queues in
sequence, :class:`ChainCase`): one description, two simulators.

A :class:`Case` is written once and rendered twice: as an aqmlab scenario (run through
:func:`aqmlab.run`) and as a ``Setup`` of ``dumbbell.cc``, a C++ dumbbell that cppyy (the
wheel's bindings) compiles and runs. The aqmlab run goes first; its flows' start times and base
RTTs (``flows.parquet``) are handed to ns-3, so both simulators start the same flows at the same
instants over the same paths. Each pair prints bottleneck utilisation, mean queue (packets) and
queuing delay, drop and mark rates, Jain's fairness index, and the senders' fast recoveries,
timeouts, ECN cuts and retransmissions over the measurement window. tests/ns3/README.md says what
each side models and where they differ.

Usage (needs the ``ns3`` wheel in this Python: ``make ns3``)::

    python tests/ns3/crosscheck.py [--seeds 1 2] [--case NAME ...] [--jobs 2] [--json]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import importlib.util
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INSTALL = "make ns3 (pip install 'ns3==3.44.post0')"

# The ns-3 modules the dumbbell uses, libraries in link order (each after those it links to).
NS3_LIBRARIES = (
    "core",
    "network",
    "stats",
    "bridge",
    "mobility",
    "traffic-control",
    "internet",
    "point-to-point",
    "applications",
)
NS3_HEADERS = ("core", "network", "internet", "point-to-point", "traffic-control", "applications")

# aqmlab's TCP keys that give ns-3's TcpSocketBase with TcpClassicRecovery (README.md, "TCP").
AQMLAB_TCP = {
    "initial_cwnd": "10",
    "min_rto": '"200ms"',
    "delayed_ack": "false",
    "recovery_exit": '"ssthresh"',
    "loss_ssthresh": '"window"',
    # ns-3's ReTxTimeout sets ssthresh again from the bytes in flight unless it is already in
    # its loss state, so a timeout during fast recovery cuts again, as ns-2 does.
    "timeout_in_recovery": '"cut"',
    # ns-3.44's limited transmit without SACK leaves stale Reno SACKs on its scoreboard
    # (README.md, "Limited transmit without SACK"): off on both sides.
    "limited_transmit": "false",
}

# What each variant and SACK add to AQMLAB_TCP (README.md, "The newer TCPs").
AQMLAB_SACK = {
    # ns-3's SACK with TcpClassicRecovery: RFC 6675's pipe and cwnd = ssthresh at once, no RACK
    # (ns-3.44 has none) and no PRR; its limited transmit is on, which aqmlab's SACK sending
    # generalises (a SACKed segment lets a new one go).
    "sack": "true",
    "rack": "false",
    "prr": "false",
    "limited_transmit": "true",
}
AQMLAB_VARIANT = {
    # ns-3's TcpDctcp is a TcpLinuxReno: slow start and congestion avoidance per segment
    # acknowledged.
    "dctcp": {"byte_counting": "true"},
}

# ns-3's TcpCubic grows as Linux's `tcp_cubic` does (toward W(t + min RTT), with Linux's Reno
# estimate), which is aqmlab's `cubic = "linux"`; that model takes its minimum RTT from an RTT
# sample on every ACK, Linux's estimator, which needs the SACK sender. So the CUBIC pairs with
# SACK run it, those without SACK RFC 9438's (README.md, "The newer TCPs"); HyStart is off on both
# sides.
AQMLAB_CUBIC_SACK = {"cubic": '"linux"', "rtt_estimator": '"linux"'}

NS3_CC = {
    "newreno": "ns3::TcpNewReno",
    "cubic": "ns3::TcpCubic",
    "dctcp": "ns3::TcpDctcp",
    "bbr": "ns3::TcpBbr",
}

# Feng et al.'s initial max_p (fig. 7 of their paper; ns-3's LInterm default 50).
FENG_MAX_P = 0.02

# dumbbell.cc's NewReno whose cut at three duplicate ACKs halves the window, as aqmlab's
# `loss_ssthresh = "window"`, where ns-3's halves its pipe (README.md, "The flow-queue schemes").
NS3_WINDOW_CUT = "aqmlab_ns3::TcpNewRenoWindowCut"

# ns-3's congestion controls of a mixed pair's flows (DCTCP beside classic flows growing by byte
# counting), and dumbbell.cc's versions of them that clear the linear-increase count at a cut, as
# Linux and aqmlab do (--ns3-count-reset; README.md, "The flow-queue schemes").
NS3_MIXED = {"dctcp": "ns3::TcpDctcp", "classic": "ns3::TcpLinuxReno"}
NS3_COUNT_RESET = {
    "dctcp": "aqmlab_ns3::TcpDctcpCountReset",
    "classic": "aqmlab_ns3::TcpLinuxRenoCountReset",
}

FIGURES = (
    "utilisation",
    "queue_pkts",
    "delay_ms",
    "drop_pct",
    "mark_pct",
    "jain",
    "fast_rtx",
    "timeouts",
    "ecn_cuts",
    "retransmits",
)


def ns3_prefix() -> Path | None:
    """Where the ``ns3`` wheel keeps ns-3 (its ``lib64`` and ``include``), or None. Found through
    the installed distribution: ``import ns3`` would also see this folder, tests/ns3."""
    try:
        root = Path(str(importlib.metadata.distribution("ns3").locate_file("ns3")))
    except importlib.metadata.PackageNotFoundError:
        return None
    return root if (root / "lib64").is_dir() else None


def available() -> bool:
    """Whether the ``ns3`` wheel and its cppyy are installed in this Python (not loaded)."""
    return ns3_prefix() is not None and importlib.util.find_spec("cppyy") is not None


@dataclasses.dataclass(frozen=True)
class Case:
    variant: str  # "newreno", "cubic", "dctcp", "bbr"
    # "red", "ared", "ared-feng", "pie", "codel", "cobalt", "step" (DCTCP's marking), "fq-pie",
    # "fq-cobalt", "fq-codel"
    aqm: str
    flows: int
    ecn: bool = False
    sack: bool = False
    # The first `dctcp_flows` of `flows` are DCTCP sending ECT(1) (the L4S identifier; ns-3's
    # TcpDctcp with UseEct0 false), the others `variant` (README.md, "The flow-queue schemes").
    dctcp_flows: int = 0
    rate_mbps: float = 10.0
    bottleneck_delay_ms: float = 25.0
    # Each flow's access delay, drawn in aqmlab (uniform, ms); base RTT 2 (25 + 2 d): 70-130 ms.
    access_delay_ms: tuple[float, float] = (5.0, 20.0)
    access_rate_mbps: float = 100.0
    packet_size: int = 1500  # bytes on the wire (IP), 40 of them headers
    buffer: int = 500  # packets
    start_spread_s: float = 2.0
    duration_s: float = 40.0
    measure_s: float = 10.0  # the measurement window is [measure_s, duration_s]
    # RED (packet mode, ns-3's RedQueueDisc with ns-2's rules)
    min_th: float = 20.0
    max_th: float = 60.0
    max_p: float = 0.1
    w_q: float = 0.002
    # PIE (RFC 8033's defaults)
    pie_target_ms: float = 15.0
    pie_t_update_ms: float = 15.0
    # CoDel (RFC 8289's defaults)
    codel_target_ms: float = 5.0
    codel_interval_ms: float = 100.0
    # step marking threshold, packets
    step_k: float = 20.0
    # The flow-queue schemes (Linux's and ns-3's defaults): queues, DRR quantum in bytes
    fq_flows: int = 1024
    fq_quantum: int = 1514
    # COBALT's BLUE (RFC-less: CAKE's 1/256 and 1/4096, ns-3's defaults too)
    cobalt_increment: float = 1 / 256
    cobalt_decrement: float = 1 / 4096
    # FQ-CoDel's CE threshold for ECT(1) (Linux ce_threshold; ns-3's L4S mode), ms; None: off
    ce_threshold_ms: float | None = None

    @property
    def name(self) -> str:
        tail = ("-ecn" if self.ecn else "") + ("-sack" if self.sack else "")
        aqm = self.aqm
        if self.ce_threshold_ms is not None:
            aqm += f"-ce{self.ce_threshold_ms:g}ms"
        if self.dctcp_flows:
            mix = f"dctcp{self.dctcp_flows}-{self.variant}{self.flows - self.dctcp_flows}"
            return f"{mix}-{aqm}{tail}"
        return f"{self.variant}-{aqm}-{self.flows}{tail}"

    @property
    def ared_bottom(self) -> float:
        """ARED's lower bound on max_p as aqmlab's `bounds = "ns2"` sets it (ns-2's red.cc):
        min(0.01, 80 000 / the link rate in bit/s); ns-3's `Bottom` is set to it."""
        return min(0.01, 80_000 / (self.rate_mbps * 1e6))

    def aqm_table(self) -> str:
        ecn = "true" if self.ecn else "false"
        if self.aqm == "red":
            # ns-3's RED: ns-2's wait_, qlen > 1 gate and idle rule; the gentle region marks
            # (UseHardDrop false), as aqmlab's above_max = "mark".
            return (
                f'kind = "red"\nmin_th = {self.min_th}\nmax_th = {self.max_th}\n'
                f"max_p = {self.max_p}\nw_q = {self.w_q}\ngentle = true\nwait = true\n"
                f'empty_gate = true\nidle_decay = "ns2"\nabove_max = "mark"\necn = {ecn}\n'
            )
        if self.aqm == "ared":
            # ns-3's ARED (RedQueueDisc with ARED on): ns-2's red.cc adaptation (on an arrival
            # once Interval has passed since max_p last changed, the bounds tested, not clamped),
            # thresholds and weight from the link with TargetDelay 5 ms, the gentle line fixed
            # from the initial max_p; the RED rules of the "red" pairs.
            return (
                f'kind = "ared"\ntarget_delay = "5ms"\nmax_p = {self.max_p}\ninterval = "0.5s"\n'
                f'beta = 0.9\nbounds = "ns2"\nadapt = "arrival"\ngentle = true\n'
                f'gentle_base = "initial"\nwait = true\nempty_gate = true\nidle_decay = "ns2"\n'
                f'above_max = "mark"\necn = {ecn}\n'
            )
        if self.aqm == "ared-feng":
            # ns-3's FengAdaptive starts Above, so its first arrival (average 0) divides max_p
            # by 3: aqmlab starts Below from that value. Not gentle on both sides (Feng et al.'s
            # RED; ns-3's gentle line stays where the initial max_p put it).
            return (
                f'kind = "ared-feng"\nmin_th = {self.min_th}\nmax_th = {self.max_th}\n'
                f"max_p = {FENG_MAX_P / 3!r}\nw_q = {self.w_q}\ngentle = false\nwait = true\n"
                f'empty_gate = true\nidle_decay = "ns2"\nabove_max = "mark"\necn = {ecn}\n'
            )
        if self.aqm == "pie":
            return (
                f'kind = "pie"\ntarget = "{self.pie_target_ms}ms"\n'
                f't_update = "{self.pie_t_update_ms}ms"\nalpha = 0.125\nbeta = 1.25\n'
                f'max_burst = "150ms"\nmark_ecnth = 0.1\necn = {ecn}\n'
            )
        if self.aqm == "codel":
            # ns-3 counts a packet above target when at least MinBytes stay queued behind it;
            # aqmlab when more than maxpacket do.
            return (
                f'kind = "codel"\ntarget = "{self.codel_target_ms}ms"\n'
                f'interval = "{self.codel_interval_ms}ms"\nmaxpacket = {self.packet_size - 1}\n'
                f"ecn = {ecn}\n"
            )
        if self.aqm == "fq-pie":
            # ns-3's FqPie: each queue's PIE draws at random (UseDerandomization false), where
            # Linux, and aqmlab by default, de-randomise.
            return (
                f'kind = "fq-pie"\nflows = {self.fq_flows}\nquantum = {self.fq_quantum}\n'
                f'target = "{self.pie_target_ms}ms"\nt_update = "{self.pie_t_update_ms}ms"\n'
                f'alpha = 0.125\nbeta = 1.25\nmax_burst = "150ms"\nmark_ecnth = 0.1\n'
                f"derandomize = false\ncap_drop_adjustment = true\necn = {ecn}\n"
            )
        if self.aqm == "cobalt":
            # ns-3's CobaltQueueDisc: CAKE's CoDel (no MinBytes test) and BLUE on one queue.
            return (
                f'kind = "cobalt"\ntarget = "{self.codel_target_ms}ms"\n'
                f'interval = "{self.codel_interval_ms}ms"\n'
                f"increment = {self.cobalt_increment!r}\ndecrement = {self.cobalt_decrement!r}\n"
                f"ecn = {ecn}\n"
            )
        if self.aqm == "fq-cobalt":
            return (
                f'kind = "fq-cobalt"\nflows = {self.fq_flows}\nquantum = {self.fq_quantum}\n'
                f'target = "{self.codel_target_ms}ms"\ninterval = "{self.codel_interval_ms}ms"\n'
                f"increment = {self.cobalt_increment!r}\ndecrement = {self.cobalt_decrement!r}\n"
                f"ecn = {ecn}\n"
            )
        if self.aqm == "fq-codel":
            # ns-3's FqCoDel runs a CoDelQueueDisc per queue, MinBytes 1500 on the queue's own
            # bytes: aqmlab's "flow" backlog with maxpacket one byte less (as "codel" above).
            ce = (
                ""
                if self.ce_threshold_ms is None
                else f'ce_threshold = "{self.ce_threshold_ms}ms"\n'
            )
            return (
                f'kind = "fq-codel"\nflows = {self.fq_flows}\nquantum = {self.fq_quantum}\n'
                f'target = "{self.codel_target_ms}ms"\ninterval = "{self.codel_interval_ms}ms"\n'
                f'maxpacket = {self.packet_size - 1}\nmaxpacket_backlog = "flow"\n'
                f"{ce}ecn = {ecn}\n"
            )
        if self.aqm == "step":
            # ns-3's RED with QW = 1 and MinTh = MaxTh = K signals an arrival when the queue disc
            # holds K or more, the device queue's packet besides: more than K waiting in all,
            # as aqmlab's step.
            return f'kind = "step"\nthreshold = {round(self.step_k)}\necn = {ecn}\n'
        raise ValueError(f"no aqmlab scheme for {self.aqm!r}")

    def tcp_keys(self) -> dict[str, str]:
        """aqmlab's ``[tcp]`` keys besides ``variant``, ``packet_size`` and ``ecn``."""
        keys = dict(AQMLAB_TCP)
        if self.sack:
            keys.update(AQMLAB_SACK)
        keys.update(AQMLAB_VARIANT.get(self.variant, {}))
        if self.sack and self.variant == "cubic":
            keys.update(AQMLAB_CUBIC_SACK)
        if self.dctcp_flows:
            # run-wide: the classic flows grow by byte counting too, as ns-3's TcpLinuxReno
            keys.update(AQMLAB_VARIANT["dctcp"])
        return keys

    def traffic_tables(self) -> str:
        start = f'start = {{ uniform = ["0s", "{self.start_spread_s}s"] }}\n'
        group = 'kind = "bulk"\nhandshake = true\n' + start
        out = ""
        if self.dctcp_flows:
            out += (
                f'[[traffic]]\n{group}flows = {self.dctcp_flows}\nvariant = "dctcp"\n'
                f'ecn = true\necn_codepoint = "ect1"\n'
            )
        return out + f"[[traffic]]\n{group}flows = {self.flows - self.dctcp_flows}\n"

    def ns3_flow_cc(self) -> list[str]:
        """Each flow's ns-3 congestion control when the flows differ, else []."""
        if not self.dctcp_flows:
            return []
        # aqmlab's classic flows grow by byte counting beside DCTCP (run-wide key): ns-3's
        # TcpLinuxReno, NewReno's rules with byte counting.
        classic = NS3_MIXED["classic"] if self.variant == "newreno" else NS3_CC[self.variant]
        dctcp = [NS3_MIXED["dctcp"]] * self.dctcp_flows
        return dctcp + [classic] * (self.flows - self.dctcp_flows)

    def toml(self, seed: int) -> str:
        lo, hi = self.access_delay_ms
        return f"""duration = "{self.duration_s}s"
seed = {seed}
[topology]
kind = "dumbbell"
bottleneck_rate = "{self.rate_mbps}Mbps"
bottleneck_delay = "{self.bottleneck_delay_ms}ms"
access_rate = "{self.access_rate_mbps}Mbps"
access_delay = {{ uniform = ["{lo}ms", "{hi}ms"] }}
buffer = {self.buffer}
access_buffer = 10000
{self.toml_tail(self.traffic_tables())}"""

    def toml_tail(self, traffic: str) -> str:
        """The scenario's tables after its topology: the scheme, TCP, ``traffic`` and the
        measurement."""
        tcp = "".join(f"{k} = {v}\n" for k, v in self.tcp_keys().items())
        return f"""[aqm]
{self.aqm_table()}[tcp]
variant = "{self.variant}"
packet_size = {self.packet_size}
ecn = {"true" if self.ecn else "false"}
{tcp}{traffic}[metrics]
sample_interval = "100ms"
start = "{self.measure_s}s"
"""

    def ns3_config(
        self, seed: int, starts_ns: Sequence[int], access_delays_ns: Sequence[int]
    ) -> dict[str, Any]:
        """The fields of dumbbell.cc's ``Setup`` for this case."""
        return {
            "cc": NS3_CC[self.variant],
            "aqm": self.aqm,
            "ecn": self.ecn,
            "sack": self.sack,
            "limited_transmit": self.sack,
            "rate_bps": self.rate_mbps * 1e6,
            "bottleneck_delay_ns": round(self.bottleneck_delay_ms * 1e6),
            "access_rate_bps": self.access_rate_mbps * 1e6,
            "access_delay_ns": list(access_delays_ns),
            "start_ns": list(starts_ns),
            "packet_size": self.packet_size,
            "buffer": self.buffer,
            "initial_cwnd": int(AQMLAB_TCP["initial_cwnd"]),
            "min_rto_ns": 200_000_000,
            "del_ack_count": 1,
            "duration_ns": round(self.duration_s * 1e9),
            "measure_start_ns": round(self.measure_s * 1e9),
            "run": seed,
            "red_min_th": self.min_th,
            "red_max_th": self.max_th,
            "red_max_p": FENG_MAX_P if self.aqm == "ared-feng" else self.max_p,
            "red_w_q": self.w_q,
            "red_ared": self.aqm == "ared",
            "red_feng": self.aqm == "ared-feng",
            "red_bottom": self.ared_bottom if self.aqm == "ared" else 0.0,
            "red_gentle": self.aqm != "ared-feng",
            "pie_target_ns": round(self.pie_target_ms * 1e6),
            "pie_t_update_ns": round(self.pie_t_update_ms * 1e6),
            "codel_target_ns": round(self.codel_target_ms * 1e6),
            "codel_interval_ns": round(self.codel_interval_ms * 1e6),
            "step_k": self.step_k,
            "flow_cc": self.ns3_flow_cc(),
            "dctcp_ect0": not self.dctcp_flows,
            "fq_flows": self.fq_flows,
            "fq_quantum": self.fq_quantum,
            "pie_derandomize": False,
            "cobalt_increment": self.cobalt_increment,
            "cobalt_decrement": self.cobalt_decrement,
            # ns-3's BLUE also climbs on a sojourn above 400 ms, a rule aqmlab does not model:
            # out of reach (docs/aqm/cobalt.md)
            "cobalt_blue_threshold_ns": 1000 * 10**9,
            "ce_threshold_ns": (
                -1 if self.ce_threshold_ms is None else round(self.ce_threshold_ms * 1e6)
            ),
            "use_l4s": self.ce_threshold_ms is not None,
        }


@dataclasses.dataclass(frozen=True)
class ChainCase(Case):
    """Two queues in sequence, RFC 7928 section 10.2's path (the `rfc7928-10` preset): the first
    `a_flows` of `flows` cross L -> M and then M -> R, the others join at M; both links carry
    the scheme under test, M -> R is the bottleneck of `rate_mbps` and `bottleneck_delay_ms`.
    Each flow has its own sender and receiver and two access links of one delay, spread evenly
    over `access_delay_ms` (no draw: both sides take the same numbers), written in aqmlab as a
    custom topology with one traffic group per flow, as the dumbbell is in ns-3."""

    a_flows: int = 5
    lm_rate_mbps: float = 5.0
    lm_delay_ms: float = 10.0

    @property
    def name(self) -> str:
        tail = ("-ecn" if self.ecn else "") + ("-sack" if self.sack else "")
        b = self.flows - self.a_flows
        return f"chain-{self.variant}-{self.aqm}-{self.a_flows}+{b}{tail}"

    def access_delays_ms(self) -> list[float]:
        lo, hi = self.access_delay_ms
        n = self.flows
        return [round(lo + (hi - lo) * i / max(n - 1, 1), 3) for i in range(n)]

    def toml(self, seed: int, link_aqm: Mapping[str, str] | None = None) -> str:
        """The scenario; ``link_aqm`` gives a link (``"lm"``, ``"mr"``) a queue discipline of
        its own (an ``aqm_table`` text) in place of ``[aqm]``."""

        def own(link: str) -> str:
            table = (link_aqm or {}).get(link)
            if table is None:
                return ""
            return "aqm = { " + ", ".join(ln for ln in table.splitlines() if ln) + " }\n"

        n = self.flows
        nodes = [f"s{i}" for i in range(n)] + ["L", "M", "R"] + [f"r{i}" for i in range(n)]
        host = (
            f'rate = "{self.access_rate_mbps}Mbps"\nbuffer = 10000\naqm = {{ kind = "droptail" }}\n'
        )
        links = (
            f'[[topology.links]]\nname = "mr"\nfrom = "M"\nto = "R"\n'
            f'rate = "{self.rate_mbps}Mbps"\ndelay = "{self.bottleneck_delay_ms}ms"\n'
            f"buffer = {self.buffer}\nmonitor = true\n{own('mr')}"
            f'[[topology.links]]\nname = "lm"\nfrom = "L"\nto = "M"\n'
            f'rate = "{self.lm_rate_mbps}Mbps"\ndelay = "{self.lm_delay_ms}ms"\n'
            f"buffer = {self.buffer}\nmonitor = true\n{own('lm')}"
        )
        traffic = ""
        start = f'start = {{ uniform = ["0s", "{self.start_spread_s}s"] }}\n'
        for i, d in enumerate(self.access_delays_ms()):
            entry = "L" if i < self.a_flows else "M"
            links += (
                f'[[topology.links]]\nname = "s{i}"\nfrom = "s{i}"\nto = "{entry}"\n'
                f'delay = "{d}ms"\n{host}'
                f'[[topology.links]]\nname = "r{i}"\nfrom = "R"\nto = "r{i}"\n'
                f'delay = "{d}ms"\n{host}'
            )
            path = (
                [f"s{i}", "L", "M", "R", f"r{i}"] if entry == "L" else [f"s{i}", "M", "R", f"r{i}"]
            )
            traffic += (
                f'[[traffic]]\nkind = "bulk"\nhandshake = true\nflows = 1\n{start}'
                f"path = {json.dumps(path)}\n"
            )
        return f"""duration = "{self.duration_s}s"
seed = {seed}
[topology]
kind = "custom"
nodes = {json.dumps(nodes)}
{links}{self.toml_tail(traffic)}"""

    def ns3_config(
        self, seed: int, starts_ns: Sequence[int], access_delays_ns: Sequence[int]
    ) -> dict[str, Any]:
        return {
            **super().ns3_config(seed, starts_ns, access_delays_ns),
            "chain_lm_rate_bps": self.lm_rate_mbps * 1e6,
            "chain_lm_delay_ns": round(self.lm_delay_ms * 1e6),
            "chain_a_flows": self.a_flows,
        }


def jain(xs: Sequence[float]) -> float:
    s = sum(xs)
    q = sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q > 0 else math.nan


def run_aqmlab(case: Case, seed: int) -> tuple[dict[str, float], list[int], list[int]]:
    """aqmlab's figures, and its flows' start times and per-link access delays (ns)."""
    import aqmlab

    t0 = time.perf_counter()
    r = aqmlab.run(case.toml(seed))
    wall = time.perf_counter() - t0
    s = r.summary
    b, f = s["bottleneck"], s["flows"]
    drops = b["drops_early"] + b["drops_forced"] + b["drops_overflow"]
    flows = r.flows.to_pylist()
    starts = [round(x["start_s"] * 1e9) for x in flows]
    # base RTT = 2 (bottleneck delay + 2 d): d is each of the flow's two access links' delay.
    delays = [
        round((x["base_rtt_s"] * 1e9 / 2 - case.bottleneck_delay_ms * 1e6) / 2) for x in flows
    ]
    lm: dict[str, float] = {}
    if isinstance(case, ChainCase):
        delays = [round(d * 1e6) for d in case.access_delays_ms()]
        link = next(x for x in s["links"] if x["name"] == "lm")
        lm = _chain_link(
            link["utilization"],
            link["queue_mean_pkts"],
            link["queuing_delay_mean_s"],
            link["drops_early"] + link["drops_forced"] + link["drops_overflow"],
            link["marks"],
            link["arrivals"],
        )
    figs = {
        "utilisation": b["utilization"],
        "queue_pkts": b["queue_mean_pkts"],
        "delay_ms": b["queuing_delay_mean_s"] * 1e3,
        "drop_pct": 100 * drops / b["arrivals"],
        "mark_pct": 100 * b["marks"] / b["arrivals"],
        "drops": drops,
        "marks": b["marks"],
        "jain": f["jain_fairness"],
        "goodput_mbps": f["goodput_bps_total"] / 1e6,
        "flow_goodput_mbps": [x["goodput_bps"] / 1e6 for x in flows],
        "fast_rtx": f["fast_retransmits"],
        "timeouts": f["timeouts"],
        "ecn_cuts": f["ecn_reductions"],
        "retransmits": f["retransmits"],
        "queues": _aqmlab_queues(r),
        "wall_s": wall,
        **lm,
    }
    return figs, starts, delays


def _chain_link(
    utilisation: float, queue: float, delay_s: float, drops: int, marks: int, arrivals: int
) -> dict[str, float]:
    """A chain's L -> M figures, named as the bottleneck's with `lm_` before them."""
    return {
        "lm_utilisation": utilisation,
        "lm_queue_pkts": queue,
        "lm_delay_ms": delay_s * 1e3,
        "lm_drop_pct": 100 * drops / max(arrivals, 1),
        "lm_mark_pct": 100 * marks / max(arrivals, 1),
    }


def _aqmlab_queues(r: Any) -> int:
    """The flow-queue schemes: the most flow queues holding packets at once in the 100 ms
    samples, a lower bound of the queues the flows hash into (equal when every flow keeps a
    backlog); 0 for the other schemes."""
    p = r.params.to_pydict() if r.params is not None else {}
    names, values = p.get("name", []), p.get("value", [])
    counts = [v for n, v in zip(names, values, strict=True) if n == "active_flows"]
    return int(max(counts, default=0))


_NS3: Any = None


def load_ns3() -> Any:
    """Load ns-3's libraries into cppyy and compile dumbbell.cc (once per process): the
    namespace ``aqmlab_ns3``. Loads only the modules the dumbbell needs (about 2 s; the
    wheel's ``from ns import ns`` loads all 45, about 25 s)."""
    global _NS3
    if _NS3 is not None:
        return _NS3
    if not available():
        raise RuntimeError(f"ns-3 not found: install the ns3 wheel ({INSTALL})")
    import cppyy
    import libcppyy  # the module cppyy's package installs beside itself

    prefix = ns3_prefix()
    assert prefix is not None
    version = next((prefix / "lib64").glob("libns3.*-core.so")).name.split("-")[0]
    libcppyy.AddSmartPtrType("Ptr")
    cppyy.add_library_path(str(prefix / "lib64"))
    cppyy.add_include_path(str(prefix / "include"))
    # Libraries before headers: the headers' static initialisers need the symbols.
    for lib in NS3_LIBRARIES:
        cppyy.load_library(f"{version}-{lib}.so")
    for module in NS3_HEADERS:
        cppyy.include(f"ns3/{module}-module.h")
    cppyy.cppdef((HERE / "dumbbell.cc").read_text())
    _NS3 = cppyy.gbl.aqmlab_ns3
    return _NS3


def run_ns3(config: dict[str, Any]) -> dict[str, float]:
    """ns-3's figures for one ``Setup`` (see :meth:`Case.ns3_config`)."""
    ns = load_ns3()
    c = ns.Setup()
    for key, value in config.items():
        if isinstance(value, list):
            vec = getattr(c, key)
            for v in value:
                vec.push_back(v)
        else:
            setattr(c, key, value)
    r = ns.Run(c)
    arrivals = max(int(r.arrivals), 1)
    goodputs = [float(x) for x in r.goodput_bps]
    return {
        "utilisation": r.utilisation,
        "queue_pkts": r.queue_mean_pkts,
        "qdisc_pkts": r.qdisc_mean_pkts,
        "delay_ms": r.wait_mean_s * 1e3,
        "sojourn_ms": r.sojourn_mean_s * 1e3,
        "drop_pct": 100 * int(r.drops) / arrivals,
        "mark_pct": 100 * int(r.marks) / arrivals,
        "drops": int(r.drops),
        "marks": int(r.marks),
        "jain": jain(goodputs),
        "goodput_mbps": sum(goodputs) / 1e6,
        "flow_goodput_mbps": [g / 1e6 for g in goodputs],
        "fast_rtx": int(r.fast_recoveries),
        "timeouts": int(r.loss_entries),
        "ecn_cuts": int(r.ecn_cuts),
        "retransmits": int(r.retransmits),
        "queues": int(r.queues),
        "events": int(r.events),
        "reasons": {str(k): int(v) for k, v in r.reasons},
        "wall_s": r.wall_s,
        **(
            _chain_link(
                r.lm_utilisation,
                r.lm_queue_mean_pkts,
                r.lm_wait_mean_s,
                int(r.lm_drops),
                int(r.lm_marks),
                int(r.lm_arrivals),
            )
            if config.get("chain_lm_rate_bps")
            else {}
        ),
    }


# Diagnosis (--queue-trace): a folder for each ns-3 run's queue trace (dumbbell.cc's
# Setup::queue_trace_path), or None.
QUEUE_TRACE_DIR: Path | None = None


def red_average_steps(case: Case, path: Path) -> list[tuple[float, str, float, float]]:
    """From a ``--queue-trace`` file of a RED-family pair, ns-3's RED average rebuilt arrival by
    arrival (its estimator: the queue disc's packets before the arrival, weight ``w_q``, and an
    idle period counted in packet times of ``packet_size`` at the link rate; an arrival's own
    count change comes before it in the file) and the steps of max_p its adaptation takes:
    Feng's status changes (entering Below under ``min_th``, Above over ``max_th``) for
    ``ared-feng``, ARED's AIMD steps (thresholds and weight from the link, ``Bottom`` as the pair
    sets it) for ``ared``, none for ``red``: (seconds, what, average, max_p after it)."""
    ptc = case.rate_mbps * 1e6 / (8 * case.packet_size)
    w_q, min_th, max_th, max_p = case.w_q, case.min_th, case.max_th, case.max_p
    if case.aqm == "ared":
        w_q = 1 - math.exp(-1 / ptc)
        min_th = max(5.0, 0.005 * ptc / 2)
        max_th = 3 * min_th
    elif case.aqm == "ared-feng":
        max_p = FENG_MAX_P
    bottom = case.ared_bottom
    avg, queued, status, last_set = 0.0, 0, "Above", 0
    idle_since: int | None = 0
    steps: list[tuple[float, str, float, float]] = []
    for line in path.read_text().splitlines():
        kind, *fields = line.split()
        t = int(fields[0])
        if kind == "q":
            n = int(fields[1])
            if n == 0 and queued > 0:
                idle_since = t
            queued = n
            continue
        m = int(ptc * (t - idle_since) * 1e-9) if idle_since is not None else 0
        idle_since = None
        avg = avg * (1 - w_q) ** (m + 1) + w_q * (queued - 1)
        step = None
        if case.aqm == "ared" and t > last_set + 500_000_000:
            part = 0.4 * (max_th - min_th)
            if avg < min_th + part and max_p > bottom:
                max_p, step = max_p * 0.9, "decrease"
            elif avg > max_th - part and max_p < 0.5:
                max_p, step = max_p + min(0.01, max_p / 4), "increase"
            if step:
                last_set = t
        elif case.aqm == "ared-feng":
            if min_th < avg < max_th:
                status = "Between"
            elif avg < min_th and status != "Below":
                status, max_p, step = "Below", max_p / 3, "Below"
            elif avg > max_th and status != "Above":
                status, max_p, step = "Above", max_p * 2, "Above"
        if step:
            steps.append((t * 1e-9, step, avg, max_p))
    return steps


def run_pair(case: Case, seed: int) -> dict[str, Any]:
    ours, starts, delays = run_aqmlab(case, seed)
    config = case.ns3_config(seed, starts, delays)
    if QUEUE_TRACE_DIR is not None:
        config["queue_trace_path"] = str(QUEUE_TRACE_DIR / f"{case.name}-seed{seed}.txt")
    theirs = run_ns3(config)
    return {"case": case.name, "seed": seed, "aqmlab": ours, "ns3": theirs}


def _run_pair_args(args: tuple[Case, int]) -> dict[str, Any]:
    return run_pair(*args)


def run_pairs(jobs: Iterable[tuple[Case, int]], workers: int = 2) -> list[dict[str, Any]]:
    """Every (case, seed) pair in a pool of worker processes, each loading ns-3 once; results
    in the order given."""
    todo = list(jobs)
    if workers <= 1 or len(todo) <= 1:
        return [run_pair(c, s) for c, s in todo]
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        return list(pool.map(_run_pair_args, todo))


def mean_over_seeds(rows: Sequence[dict[str, Any]], side: str, key: str) -> float:
    return sum(float(r[side][key]) for r in rows) / len(rows)


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The pairs as a Markdown table: one line per case and simulator, seeds separated by /."""
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    out = ["| case | engine | " + " | ".join(FIGURES) + " |", "|---|---|" + "---:|" * len(FIGURES)]
    for name, runs in by_case.items():
        for side in ("aqmlab", "ns3"):
            cells = []
            for k in FIGURES:
                vals = [r[side][k] for r in runs]
                if k in ("utilisation", "jain"):
                    fmt = "{:.3f}"
                elif k in ("queue_pkts", "delay_ms", "drop_pct", "mark_pct"):
                    fmt = "{:.2f}"
                else:
                    fmt = "{:.0f}"
                cells.append(" / ".join(fmt.format(v) for v in vals))
            label = "ns-3.44" if side == "ns3" else "aqmlab"
            out.append(f"| {name} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def totals(rows: Sequence[dict[str, Any]]) -> str:
    """Each case over its seeds as a Markdown table: the signal (drops, or marks with ECN), the
    recoveries and the timeouts summed, the signal's gap ((aqmlab - ns-3) / the larger) over the
    sums and its range over the seeds, the mean utilisation and its range of differences, the
    mean queue (ns-3: its total, and its queue disc alone)."""
    ecn = {c.name: c.ecn for c in all_cases()}
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)

    def gap(a: float, b: float) -> float:
        return (a - b) / max(a, b, 1)

    out = [
        "| case | seeds | signal, aqmlab / ns-3 | gap | gap per seed | utilisation | difference "
        "per seed | queue, aqmlab / ns-3 (queue disc) | recoveries | timeouts |",
        "|---|---:|---|---:|---|---|---|---|---|---|",
    ]
    for name, runs in by_case.items():
        sig = "marks" if ecn.get(name) else "drops"
        a, b = (sum(int(r[side][sig]) for r in runs) for side in ("aqmlab", "ns3"))
        per = [gap(r["aqmlab"][sig], r["ns3"][sig]) for r in runs]
        du = [r["aqmlab"]["utilisation"] - r["ns3"]["utilisation"] for r in runs]

        def mean(side: str, key: str, runs: list[dict[str, Any]] = runs) -> float:
            return sum(float(r[side][key]) for r in runs) / len(runs)

        def total(key: str, runs: list[dict[str, Any]] = runs) -> str:
            return " / ".join(
                str(sum(int(r[side][key]) for r in runs)) for side in ("aqmlab", "ns3")
            )

        out.append(
            f"| {name} | {len(runs)} | {sig} {a} / {b} | {100 * gap(a, b):+.1f} % | "
            f"{100 * min(per):+.1f} to {100 * max(per):+.1f} % | "
            f"{mean('aqmlab', 'utilisation'):.3f} / {mean('ns3', 'utilisation'):.3f} | "
            f"{min(du):+.3f} to {max(du):+.3f} | {mean('aqmlab', 'queue_pkts'):.2f} / "
            f"{mean('ns3', 'queue_pkts'):.2f} ({mean('ns3', 'qdisc_pkts'):.2f}) | "
            f"{total('fast_rtx')} | {total('timeouts')} |"
        )
    return "\n".join(out)


def cases(variants: Sequence[str] = ("newreno", "cubic")) -> list[Case]:
    """The cross-check's pairs without SACK: each variant through RED, PIE and CoDel, 5 and 20
    flows, with and without ECN."""
    return [
        Case(v, a, n, ecn=e)
        for v in variants
        for a in ("red", "pie", "codel")
        for n in (5, 20)
        for e in (False, True)
    ]


def sack_cases() -> list[Case]:
    """NewReno and CUBIC with SACK through RED, PIE and CoDel, 5 and 20 flows, without ECN (the
    losses are what SACK changes)."""
    return [
        Case(v, a, n, sack=True)
        for v in ("newreno", "cubic")
        for a in ("red", "pie", "codel")
        for n in (5, 20)
    ]


def bbr_cases() -> list[Case]:
    """BBR (paced, SACK on: ns-3.44's BBR needs it) through RED, PIE and CoDel, 5 and 20 flows;
    BBR v1 does not answer ECN, so no ECN."""
    return [Case("bbr", a, n, sack=True) for a in ("red", "pie", "codel") for n in (5, 20)]


def dctcp_cases() -> list[Case]:
    """DCTCP through the step-marking queue (K = 20 packets), 5 and 20 flows."""
    return [Case("dctcp", "step", n, ecn=True) for n in (5, 20)]


def fq_cases() -> list[Case]:
    """The flow-queue schemes, 5 flows: NewReno through FQ-PIE and FQ-COBALT, with drops (SACK
    on, as the SACK pairs: ns-3's loss state without SACK is not the model) and with ECN (SACK
    off, as the ECN pairs), and FQ-CoDel with a 1 ms CE threshold for ECT(1) (ns-3's L4S mode):
    2 DCTCP flows sending ECT(1) beside 3 NewReno flows with classic ECN."""
    return [
        *(Case("newreno", a, 5, sack=True) for a in ("fq-pie", "fq-cobalt")),
        *(Case("newreno", a, 5, ecn=True) for a in ("fq-pie", "fq-cobalt")),
        Case("newreno", "fq-codel", 5, ecn=True, dctcp_flows=2, ce_threshold_ms=1.0),
    ]


def _drops_and_ecn(aqm: str) -> list[Case]:
    """NewReno through `aqm`, 5 and 20 flows: with drops (SACK on, as the SACK pairs) and with ECN
    (SACK off, as the ECN pairs)."""
    return [Case("newreno", aqm, n, sack=not e, ecn=e) for n in (5, 20) for e in (False, True)]


def cobalt_cases() -> list[Case]:
    """COBALT on one queue beside ns-3's CobaltQueueDisc."""
    return _drops_and_ecn("cobalt")


def ared_cases() -> list[Case]:
    """Floyd's Adaptive RED beside ns-3's ARED."""
    return _drops_and_ecn("ared")


def feng_cases() -> list[Case]:
    """Feng's self-configuring RED beside ns-3's FengAdaptive (README.md, "Adaptive RED": the two
    land in different states; not in the test)."""
    return _drops_and_ecn("ared-feng")


def chain_cases() -> list[Case]:
    """Two queues in sequence (RFC 7928 section 10.2, README.md "Two queues in sequence"):
    NewReno with SACK and ECN, 5 flows through L -> M and M -> R and 5 through M -> R alone,
    L -> M at half the bottleneck's rate, RED, PIE and CoDel at both. With ECN neither side
    recovers from losses, so ns-3's spurious timeouts with SACK do not enter."""
    return [ChainCase("newreno", a, 10, ecn=True, sack=True) for a in ("red", "pie", "codel")]


def chain_cubic_cases() -> list[Case]:
    """CUBIC (Linux's, as every CUBIC pair with SACK) through the two queues with PIE at both
    (README.md, "Two queues in sequence"; not in the test: its marks at L spread from seed to
    seed too widely for five seeds to hold a band)."""
    return [ChainCase("cubic", "pie", 10, ecn=True, sack=True)]


def all_cases() -> list[Case]:
    return (
        cases()
        + sack_cases()
        + bbr_cases()
        + dctcp_cases()
        + fq_cases()
        + cobalt_cases()
        + ared_cases()
        + feng_cases()
        + chain_cases()
        + chain_cubic_cases()
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--case", nargs="+", help="case names (default: all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--duration", type=float, help="simulated seconds (default 40)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument(
        "--queue-trace",
        metavar="DIR",
        help="diagnosis: write each ns-3 run's bottleneck arrivals and queue lengths to DIR",
    )
    ap.add_argument(
        "--totals",
        action="store_true",
        help="each case over its seeds: signals, recoveries and timeouts summed, means",
    )
    ap.add_argument(
        "--ns3-window-cut",
        action="store_true",
        help="diagnosis: ns-3's NewReno cuts to half the window, as aqmlab (README.md)",
    )
    ap.add_argument(
        "--ns3-count-reset",
        action="store_true",
        help="diagnosis: ns-3's DCTCP and Linux Reno clear their increase count at a cut, as "
        "Linux and aqmlab (README.md)",
    )
    args = ap.parse_args(argv)
    if args.ns3_window_cut:
        NS3_CC["newreno"] = NS3_WINDOW_CUT
    if args.ns3_count_reset:
        NS3_MIXED.update(NS3_COUNT_RESET)
        NS3_CC["dctcp"] = NS3_COUNT_RESET["dctcp"]
    if args.queue_trace:
        global QUEUE_TRACE_DIR
        QUEUE_TRACE_DIR = Path(args.queue_trace)
        QUEUE_TRACE_DIR.mkdir(parents=True, exist_ok=True)
    if not available():
        print(f"error: ns-3 not found: install the ns3 wheel ({INSTALL})", file=sys.stderr)
        return 2
    names = {c.name for c in all_cases()}
    unknown = [n for n in args.case or [] if n not in names]
    if unknown:
        print(
            f"error: --case: no case named {', '.join(unknown)} (crosscheck.py's cases: "
            f"{', '.join(sorted(names))})",
            file=sys.stderr,
        )
        return 2
    if any(s < 1 for s in args.seeds):
        print(f"error: --seeds: {args.seeds}: seeds are positive whole numbers", file=sys.stderr)
        return 2
    chosen = [c for c in all_cases() if not args.case or c.name in args.case]
    if args.duration:
        chosen = [dataclasses.replace(c, duration_s=args.duration) for c in chosen]
    t0 = time.perf_counter()
    rows = run_pairs([(c, s) for c in chosen for s in args.seeds], args.jobs)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(totals(rows) if args.totals else table(rows))
    print(f"\n{len(rows)} pairs in {time.perf_counter() - t0:.1f} s")
    if QUEUE_TRACE_DIR is not None:
        for c in chosen:
            if c.aqm not in ("ared", "ared-feng"):
                continue
            for seed in args.seeds:
                steps = red_average_steps(c, QUEUE_TRACE_DIR / f"{c.name}-seed{seed}.txt")
                print(f"\n{c.name}, seed {seed}: ns-3's max_p, rebuilt (time, step, average)")
                for t, what, avg, p in steps:
                    print(f"  {t:9.3f} s  {what:8s}  average {avg:6.1f}  max_p {p:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
