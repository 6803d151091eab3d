"""The network and the marking laws the design tools reason about.

Units throughout: the queue, thresholds and windows in packets, capacity in
packets per second, times in seconds, probabilities in [0, 1]. These are the
units of the thesis' fluid model (``003_b277268f444f7691.txt`` section 4.2,
eq. 4.1: W and q in packets, R in seconds, C in packets/second) and of the
``[aqm]`` keys of a scenario file (thresholds in packets; times become
strings such as ``"2ms"`` only when written as TOML).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Avq",
    "DesignError",
    "Law",
    "Network",
    "Pi",
    "Red",
    "Rem",
    "ap_red_derive",
    "law_from_aqm",
    "parse_rate_bps",
    "parse_time_s",
]

#: AP-RED's clamp of p_max (thesis section 4.3.1, after eq. 4.6).
MAX_P_LO, MAX_P_HI = 0.01, 0.5


class DesignError(ValueError):
    """Bad input to a design tool. ``arg`` names the argument or field
    (``--rate``, ``flows``, ``aqm.max_th``); ``str()`` is ``"arg: msg"``."""

    def __init__(self, arg: str, msg: str) -> None:
        super().__init__(f"{arg}: {msg}")
        self.arg = arg
        self.msg = msg


_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_NUM_UNIT = re.compile(r"^\s*([0-9.eE+-]+)\s*([A-Za-z/]+)\s*$")


def parse_rate_bps(text: Any, arg: str) -> float:
    """A rate such as ``"10Mbps"`` in bit/s (units bps, Kbps, Mbps, Gbps)."""
    m = _NUM_UNIT.match(str(text))
    allowed = 'a rate > 0 such as "10Mbps" (units bps, Kbps, Mbps, Gbps)'
    if not m or m.group(2) not in _RATE_UNITS:
        raise DesignError(arg, f"{text!r} is not {allowed}")
    try:
        v = float(m.group(1)) * _RATE_UNITS[m.group(2)]
    except ValueError:
        raise DesignError(arg, f"{text!r} is not {allowed}") from None
    if not (math.isfinite(v) and v > 0):
        raise DesignError(arg, f"{text!r} is not {allowed}")
    return v


def parse_time_s(text: Any, arg: str, allow_zero: bool = False) -> float:
    """A time such as ``"120ms"`` (or a number of seconds) in seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        v = float(text)
    else:
        m = _NUM_UNIT.match(str(text))
        allowed = 'a time such as "120ms" (units ns, us, ms, s)'
        if not m or m.group(2) not in _TIME_UNITS:
            raise DesignError(arg, f"{text!r} is not {allowed}")
        try:
            v = float(m.group(1)) * _TIME_UNITS[m.group(2)]
        except ValueError:
            raise DesignError(arg, f"{text!r} is not {allowed}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise DesignError(arg, f"{text!r} is not allowed; give a time > 0")
    return v


def _positive(arg: str, v: float, what: str = "a number > 0") -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise DesignError(arg, f"{v!r} is not allowed; give {what}")
    return float(v)


@dataclass(frozen=True)
class Network:
    """The nominal network of the fluid model (eq. 4.1): ``flows`` long-lived
    TCP flows N, base (propagation) round-trip time ``rtt`` Tp in seconds,
    bottleneck capacity ``capacity`` C in packets/second, ``buffer`` B in
    packets (``inf``: unbounded). The round-trip time of the model is
    R = Tp + q / C (propagation plus queueing delay)."""

    flows: float
    rtt: float
    capacity: float
    buffer: float = math.inf

    def __post_init__(self) -> None:
        _positive("flows", self.flows, "N >= 1 flow")
        if self.flows < 1:
            raise DesignError("flows", f"{self.flows!r} is not allowed; give N >= 1 flow")
        _positive("rtt", self.rtt, "a round-trip time > 0 s")
        _positive("capacity", self.capacity, "a capacity > 0 packets/s")
        if self.buffer != math.inf:
            _positive("buffer", self.buffer, "a buffer > 0 packets")

    @classmethod
    def from_rate(
        cls, flows: float, rtt_s: float, rate_bps: float, packet_size: int, buffer: float = math.inf
    ) -> Network:
        """C from a rate in bit/s and a packet size in bytes."""
        _positive("packet_size", packet_size, "a packet size >= 1 byte")
        return cls(flows, rtt_s, rate_bps / (8.0 * packet_size), buffer)

    @property
    def bdp(self) -> float:
        """Bandwidth-delay product Tp C, packets."""
        return self.rtt * self.capacity

    def equilibrium_p(self, q: float = 0.0) -> float:
        """Eq. 4.7: the drop probability at which N flows of round-trip time
        R = Tp + q / C fill C exactly: W = R C / N, p = 2 / W^2."""
        r = self.rtt + q / self.capacity
        return 2.0 * (self.flows / (r * self.capacity)) ** 2

    def window(self, q: float = 0.0) -> float:
        """W0 = R C / N at queue q, packets."""
        return (self.rtt + q / self.capacity) * self.capacity / self.flows


@dataclass(frozen=True)
class Red:
    """RED's marking law: the EWMA average x of weight ``w_q`` (eq. 2.3 of the
    thesis) and the drop function of eq. 2.4 (``gentle`` above max_th).

    ``uniform`` models the count of eq. 2.6 that ns-2 and aqmlab's engine
    apply: drops spaced uniformly in [1, 1/p_b] packets give an effective
    per-packet probability 2 p_b / (1 + p_b), about twice p_b; with ns-2's
    ``wait`` they are spaced in [1/p_b, 2/p_b], giving 2 p_b / 3. The thesis'
    analysis (eq. 4.2, 4.9) uses p_b itself; ``uniform = False`` gives that."""

    min_th: float
    max_th: float
    max_p: float
    w_q: float
    gentle: bool = True
    uniform: bool = True
    wait: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.min_th) and self.min_th >= 0):
            raise DesignError("min_th", f"{self.min_th!r} is not allowed; give min_th >= 0")
        if not (math.isfinite(self.max_th) and self.max_th > self.min_th):
            raise DesignError(
                "max_th", f"{self.max_th!r} must be greater than min_th ({self.min_th})"
            )
        if not (0 < self.max_p <= 1):
            raise DesignError("max_p", f"{self.max_p!r} is outside the allowed range (0, 1]")
        if not (0 < self.w_q < 1):
            raise DesignError("w_q", f"{self.w_q!r} is outside the allowed range (0, 1)")

    @property
    def slope(self) -> float:
        """L_red = p_max / (max_th - min_th) (eq. 4.2), per packet."""
        return self.max_p / (self.max_th - self.min_th)

    def p_b(self, x: float) -> float:
        """The drop function of the average x (eq. 2.4)."""
        if x < self.min_th:
            return 0.0
        if x < self.max_th:
            return self.slope * (x - self.min_th)
        if self.gentle and x < 2 * self.max_th:
            return self.max_p + (1 - self.max_p) * (x - self.max_th) / self.max_th
        return 1.0

    def prob(self, x: float) -> float:
        """The per-packet drop probability at average x."""
        pb = self.p_b(x)
        if self.uniform and pb < 1.0:
            return 2 * pb / 3 if self.wait else 2 * pb / (1 + pb)
        return pb

    def inverse(self, p: float) -> float:
        """The average at which :meth:`prob` is p (``inf`` above the law's range)."""
        pb = (1.5 * p if self.wait else p / (2 - p)) if self.uniform else p
        if pb <= 0:
            return self.min_th
        if pb <= self.max_p:
            return self.min_th + pb / self.slope
        if self.gentle and pb < 1:
            return self.max_th * (1 + (pb - self.max_p) / (1 - self.max_p))
        return math.inf

    def gain(self, x: float) -> float:
        """d prob / d x at average x (the L_red of the linear loop, with the
        count's factor 2 / (1 + p_b)^2 when ``uniform``)."""
        pb = self.p_b(x)
        if x < self.min_th:
            d = 0.0
        elif x < self.max_th:
            d = self.slope
        elif self.gentle and x < 2 * self.max_th:
            d = (1 - self.max_p) / self.max_th
        else:
            d = 0.0
        if not self.uniform:
            return d
        return d * 2 / 3 if self.wait else d * 2 / (1 + pb) ** 2

    def ewma_rate(self, capacity: float) -> float:
        """K = -ln(1 - w_q) / T_s with T_s = 1 / C (eq. 4.2, 4.15), 1/s."""
        return -math.log1p(-self.w_q) * capacity

    def aqm_table(self) -> dict[str, Any]:
        return {
            "kind": "red",
            "min_th": self.min_th,
            "max_th": self.max_th,
            "max_p": self.max_p,
            "w_q": self.w_q,
            "gentle": self.gentle,
        }


@dataclass(frozen=True)
class Pi:
    """The PI controller of eq. 3.7, p(k+1) = p(k) + a (q(k+1) - q_ref) -
    b (q(k) - q_ref), sampled at ``sampling_freq`` Hz, p clamped to [0, 1]."""

    a: float
    b: float
    q_ref: float
    sampling_freq: float

    def __post_init__(self) -> None:
        _positive("a", self.a, "a > 0")
        _positive("b", self.b, "b > 0")
        if not (math.isfinite(self.q_ref) and self.q_ref > 0):
            raise DesignError("q_ref", f"{self.q_ref!r} is not allowed; give q_ref > 0 packets")
        _positive("sampling_freq", self.sampling_freq, "a sampling frequency > 0 Hz")

    @property
    def period(self) -> float:
        return 1.0 / self.sampling_freq

    def continuous(self) -> tuple[float, float]:
        """K_p and z of C(s) = K_p (s + z) / s (eq. 6.1) whose Tustin
        discretisation is (a, b): K_p = (a + b) / 2, z = (2 / T)(a - b)/(a + b)."""
        kp = (self.a + self.b) / 2
        return kp, 2 * self.sampling_freq * (self.a - self.b) / (self.a + self.b)

    def aqm_table(self) -> dict[str, Any]:
        return {
            "kind": "pi",
            "a": self.a,
            "b": self.b,
            "q_ref": self.q_ref,
            "sampling_freq": self.sampling_freq,
        }


@dataclass(frozen=True)
class Rem:
    """REM (``002_80945567bf68047d.txt``): the price update of eq. 4 every
    ``update_interval`` seconds, price += gamma (b(t+1) - (1 - alpha) b(t) -
    alpha b*), kept >= 0, and the marking m = 1 - phi^(-price) of eq. 3."""

    gamma: float = 0.001
    alpha: float = 0.1
    phi: float = 1.001
    b_star: float = 20.0
    update_interval: float = 0.002

    def __post_init__(self) -> None:
        _positive("gamma", self.gamma, "gamma > 0")
        if not (0 < self.alpha < 1):
            raise DesignError("alpha", f"{self.alpha!r} is outside (0, 1) (Theorem 1)")
        if not (math.isfinite(self.phi) and self.phi > 1):
            raise DesignError("phi", f"{self.phi!r} is not allowed; give phi > 1")
        if not (math.isfinite(self.b_star) and self.b_star >= 0):
            raise DesignError("b_star", f"{self.b_star!r} is not allowed; give b* >= 0 packets")
        _positive("update_interval", self.update_interval, "a period > 0 s")

    def prob(self, price: float) -> float:
        return 1.0 - float(self.phi ** (-max(price, 0.0)))

    def price(self, m: float) -> float:
        """The price at which the marking probability is m (eq. 3 inverted)."""
        return -math.log1p(-m) / math.log(self.phi)

    def aqm_table(self) -> dict[str, Any]:
        return {
            "kind": "rem",
            "gamma": self.gamma,
            "alpha": self.alpha,
            "phi": self.phi,
            "b_star": self.b_star,
            "update_interval": _fmt_time(self.update_interval),
        }


@dataclass(frozen=True)
class Avq:
    """AVQ (thesis section 3.7, eq. 3.12): a virtual queue with the real
    buffer's size drained at C~, which follows dC~/dt = alpha (tau C - x)."""

    tau: float = 0.98
    alpha: float = 0.15

    def __post_init__(self) -> None:
        if not (0 < self.tau <= 1):
            raise DesignError("tau", f"{self.tau!r} is outside the allowed range (0, 1]")
        _positive("alpha", self.alpha, "alpha > 0 (1/s)")

    def aqm_table(self) -> dict[str, Any]:
        return {"kind": "avq", "tau": self.tau, "alpha": self.alpha}


Law = Red | Pi | Rem | Avq


@dataclass(frozen=True)
class ApRedInitial:
    """AP-RED's initial design (thesis section 4.5.1 by default)."""

    max_p0: float = 0.05
    min_th0: float = 50.0
    max_th0: float = 150.0
    w_q0: float = 1e-4
    n0: float = 50.0
    c0: float = 2500.0
    r0: float = 0.120
    extra: dict[str, Any] = field(default_factory=dict)


def ap_red_derive(init: ApRedInitial, n: float, c: float, r: float) -> Red:
    """Eq. 4.3-4.6: the RED parameters scaled from ``init`` for N flows,
    capacity C (packets/s) and round-trip time R (s). Agrees with the
    engine's ``aqm::ap_red::derive`` (p_max clamped to [0.01, 0.5], w_q <= 1)."""
    k_r, k_c, k_n = r / init.r0, c / init.c0, n / init.n0
    k = k_r * k_c
    max_p = min(max((k_n / k) ** 2 * init.max_p0, MAX_P_LO), MAX_P_HI)
    w_q = k_n / (k * k) * init.w_q0 if n <= r * c / 2 else init.w_q0 / k
    return Red(k * init.min_th0, k * init.max_th0, max_p, min(w_q, 0.999999))


def _fmt_time(s: float) -> str:
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        v = s / f
        if v >= 1 and abs(v - round(v, 6)) < 1e-9:
            return f"{round(v, 6):g}{unit}"
    return f"{round(s * 1e9)}ns"


def _num(aqm: Mapping[str, Any], key: str, path: str, default: float | None = None) -> float:
    v = aqm.get(key, default)
    if v is None:
        raise DesignError(f"{path}.{key}", "missing")
    if isinstance(v, str):
        return parse_time_s(v, f"{path}.{key}")
    return float(v)


def law_from_aqm(aqm: Mapping[str, Any], net: Network, path: str = "aqm") -> tuple[Law, str]:
    """The marking law of a resolved ``[aqm]`` table on network ``net``, and a
    note on what the model leaves out (empty when nothing). Raises
    :class:`DesignError` for a scheme the fluid model does not cover."""
    kind = str(aqm.get("kind", "droptail"))

    def g(key: str, default: float | None = None) -> float:
        return _num(aqm, key, path, default)

    if kind == "autotune-red" and "min_th" not in aqm:
        raise DesignError(
            f"{path}.kind",
            "'autotune-red' derives its thresholds while it runs; the design tools model RED "
            'with given thresholds (try kind = "red" or "ared")',
        )
    if kind in ("red", "ared", "ared-feng", "autotune-red", "st-red"):
        note = (
            ""
            if kind == "red"
            else f"{kind} adapts its parameters; modelled as RED with the initial ones"
        )
        gentle, wait = bool(aqm.get("gentle", True)), bool(aqm.get("wait", False))
        return Red(g("min_th"), g("max_th"), g("max_p"), g("w_q"), gentle, True, wait), note
    if kind == "ap-red":
        init = ApRedInitial(
            g("max_p0"), g("min_th0"), g("max_th0"), g("w_q0"), g("n0"), g("c0"), g("r0")
        )
        red = ap_red_derive(init, net.flows, net.capacity, net.rtt)
        gentle, wait = bool(aqm.get("gentle", True)), bool(aqm.get("wait", False))
        red = Red(red.min_th, red.max_th, red.max_p, red.w_q, gentle, True, wait)
        return red, "AP-RED modelled by its derived RED parameters (eq. 4.3-4.6, oracle N, R, C)"
    if kind in ("pi", "st-pi"):
        fs = g("sampling_freq", 170.0)
        q_ref = g("q_ref", 50.0)
        design = aqm.get("design")
        note = (
            ""
            if kind == "pi"
            else "ST-PI adapts q_ref and the gains; modelled as PI with the initial ones"
        )
        if design:
            from aqmlab.design.tune import design_pi_gains

            d = design if isinstance(design, Mapping) else {}
            n = float(d.get("flows", net.flows))
            r = (
                parse_time_s(d["rtt"], f"{path}.design.rtt")
                if "rtt" in d
                else net.rtt + q_ref / net.capacity
            )
            lam = float(d.get("lambda", 0.128))
            c = net.capacity
            if "capacity" in d:
                size = float(aqm.get("mean_pkt_size", 500))
                c = parse_rate_bps(d["capacity"], f"{path}.design.capacity") / (8 * size)
            a, b = design_pi_gains(n, r, c, lam, fs)
            return Pi(a, b, q_ref, fs), note
        return Pi(g("a", 1.822e-5), g("b", 1.816e-5), q_ref, fs), note
    if kind == "rem":
        if aqm.get("form", "queue") != "queue":
            note = "REM's rate form (eq. 2) modelled as its queue form (eq. 4)"
        else:
            note = ""
        return (
            Rem(g("gamma"), g("alpha"), g("phi"), g("b_star"), g("update_interval", 0.002)),
            note,
        )
    if kind == "avq":
        return Avq(g("tau", 0.98), g("alpha", 0.15)), ""
    raise DesignError(
        f"{path}.kind",
        f"{kind!r} has no fluid model here; the design tools cover red, ared, ared-feng, "
        "autotune-red, st-red, ap-red, pi, st-pi, rem and avq",
    )
