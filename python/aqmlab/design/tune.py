"""Parameter design: sets that satisfy the seeds' propositions with stated
margins, ready to paste as ``[aqm]`` TOML.

- PI: thesis eq. 6.3 (K_p, z from N, R, C and lambda), discretised by
  Tustin's rule at the sampling frequency into eq. 3.7's a and b (the same
  rule as the engine's ``pi.rs``, ``design = true``); eq. 6.6 rescales it.
- RED: thresholds around a target queue, p_max from the equilibrium
  (eq. 4.7), w_q from eq. 4.9 with a safety factor, lowered further if
  the exact loop's phase margin asks for it.
- AP-RED: eq. 4.3-4.6 from an initial design (section 4.5.1's by default).
- REM: b* from the target, alpha and phi the paper's, gamma the largest that
  keeps Theorem 1's bound and the delayed loop's phase margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aqmlab.design.linear import (
    Margins,
    OperatingPoint,
    Proposition,
    loop,
    operating_point,
    proposition,
)
from aqmlab.design.model import (
    ApRedInitial,
    DesignError,
    Law,
    Network,
    Pi,
    Red,
    Rem,
    ap_red_derive,
)

__all__ = [
    "DEFAULT_LAMBDA",
    "Design",
    "analyse",
    "design_ap_red",
    "design_pi",
    "design_pi_gains",
    "design_red",
    "design_rem",
    "pi_kp_z",
    "scale_pi",
    "to_toml",
]

#: Default lambda of eq. 6.3: the engine's (``pi.rs``), with which Tustin's
#: rule at 160 Hz gives Hollot et al.'s a and b for their network.
DEFAULT_LAMBDA = 0.128


@dataclass
class Design:
    """A law on a network with its analysis: operating point, margins of the
    linear loop, the seed's proposition, and the numbers of the design."""

    kind: str
    law: Law
    net: Network
    op: OperatingPoint
    margins: Margins | None
    prop: Proposition | None
    numbers: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def aqm(self) -> dict[str, Any]:
        """The ``[aqm]`` table of the design."""
        t = self.law.aqm_table()
        if self.kind == "ap-red":
            t = dict(self.numbers.get("_ap_red_table", {})) or t  # type: ignore[arg-type]
        return t

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "aqm": self.aqm(),
            "network": {
                "flows": self.net.flows,
                "rtt_s": self.net.rtt,
                "capacity_pkts": self.net.capacity,
                "buffer_pkts": self.net.buffer,
            },
            "operating_point": {
                "q0_pkts": self.op.q0,
                "p0": self.op.p0,
                "w0_pkts": self.op.w0,
                "r0_s": self.op.r0,
                "regime": self.op.regime,
            },
            "margins": self.margins.as_dict() if self.margins else None,
            "proposition": self.prop.as_dict() if self.prop else None,
            "numbers": {k: v for k, v in self.numbers.items() if not k.startswith("_")},
            "notes": self.notes,
        }


def analyse(law: Law, net: Network, kind: str | None = None) -> Design:
    """Operating point, margins and proposition of a given law on a network."""
    op = operating_point(law, net)
    notes = []
    m: Margins | None = None
    if op.regime == "aqm":
        try:
            m = loop(law, net, op).margins()
        except DesignError:
            m = None
    elif op.p0 >= 1:
        notes.append(
            f"{net.flows:g} flows cannot share C at R0 = {op.r0 * 1e3:.0f} ms with a window "
            "above sqrt(2) (eq. 4.7 gives p0 >= 1): TCP lives on timeouts there, which the "
            "fluid model leaves out; no loop analysis"
        )
    else:
        notes.append(
            f"operating point {op.regime}: the law cannot supply p0 = {op.p0:.3g} in its range; "
            f"the queue is pinned at {op.q0:.1f} packets and the loop is not linear there"
        )
    d = Design(kind or type(law).__name__.lower(), law, net, op, m, proposition(law, net))
    d.notes.extend(notes)
    return d


def pi_kp_z(n: float, r: float, c: float, lam: float) -> tuple[float, float]:
    """Eq. 6.3: K_p = 2 lambda sqrt(lambda^2 + 1) N / (R^2 C^2), z = 2N / (R^2 C)."""
    if not (0 < lam < 0.85):
        raise DesignError("lambda", f"{lam!r} is outside the allowed range (0, 0.85) (eq. 6.3)")
    return 2 * lam * math.sqrt(lam * lam + 1) * n / (r * r * c * c), 2 * n / (r * r * c)


def design_pi_gains(n: float, r: float, c: float, lam: float, fs: float) -> tuple[float, float]:
    """Eq. 6.3 then Tustin's rule (s = (2/T)(z - 1)/(z + 1)) at fs Hz: a =
    K_p (1 + z T / 2), b = K_p (1 - z T / 2). The engine's rule (pi.rs)."""
    kp, z = pi_kp_z(n, r, c, lam)
    t = 1.0 / fs
    return kp * (1 + z * t / 2), kp * (1 - z * t / 2)


def _target_queue(net: Network, target_delay: float | None, default: float) -> float:
    if target_delay is None:
        return default
    if not (math.isfinite(target_delay) and target_delay > 0):
        raise DesignError("--target-delay", f"{target_delay!r} is not allowed; give a delay > 0")
    q = target_delay * net.capacity
    if q > net.buffer:
        raise DesignError(
            "--target-delay",
            f"{target_delay:g}s is {q:.0f} packets, more than the buffer ({net.buffer:g})",
        )
    return q


def design_pi(
    net: Network,
    lam: float = DEFAULT_LAMBDA,
    sampling_freq: float = 160.0,
    target_delay: float | None = None,
    q_ref: float | None = None,
    rtt_total: bool = False,
) -> Design:
    """A PI controller for ``net`` by eq. 6.3 and Tustin's rule. q_ref: given,
    else ``target_delay`` x C, else a tenth of the bandwidth-delay product
    (section 6.4 designs q_ref = 150 packets for R C = 1500). R in eq. 6.3 is
    the round trip at the operating point, Tp + q_ref / C (the engine's
    rule), or ``net.rtt`` itself with ``rtt_total`` (Hollot et al.'s R+)."""
    if not (math.isfinite(sampling_freq) and sampling_freq > 0):
        raise DesignError(
            "--sampling-freq", f"{sampling_freq!r} is not allowed; give a frequency > 0 Hz"
        )
    if q_ref is None:
        q_ref = _target_queue(net, target_delay, max(0.1 * net.bdp, 5.0))
    elif not (math.isfinite(q_ref) and q_ref > 0):
        raise DesignError("--q-ref", f"{q_ref!r} is not allowed; give q_ref > 0 packets")
    r = net.rtt if rtt_total else net.rtt + q_ref / net.capacity
    kp, z = pi_kp_z(net.flows, r, net.capacity, lam)
    a, b = design_pi_gains(net.flows, r, net.capacity, lam, sampling_freq)
    law = Pi(a, b, q_ref, sampling_freq)
    if rtt_total:
        # The analysis takes R = Tp + q_ref / C: Tp is what the design's R leaves.
        tp = r - q_ref / net.capacity
        if tp <= 0:
            raise DesignError(
                "--q-ref", f"q_ref / C = {q_ref / net.capacity:g}s is not below R = {r:g}s"
            )
        net = Network(net.flows, tp, net.capacity, net.buffer)
    d = analyse(law, net, "pi")
    d.numbers.update(
        {
            "K_p": kp,
            "z_rad_s": z,
            "lambda": lam,
            "omega_g_rad_s": lam / r,
            "R_design_s": r,
            "a": a,
            "b": b,
            "K_PI_hollot": kp * z,
        }
    )
    d.notes.append(
        f"eq. 6.3 with R = {r * 1e3:.1f} ms; Tustin at {sampling_freq:g} Hz; "
        f"Hollot et al.'s form K_PI (s/z + 1)/s has K_PI = K_p z = {kp * z:.4g}"
    )
    return d


def scale_pi(pi: Pi, r0: float, c0: float, r: float, c: float) -> Pi:
    """Eq. 6.6: q_ref = k q_ref0, K_p = K_p0 / k^2 with k = (R / R0)(C / C0);
    a and b scale as K_p (z and the sampling period unchanged)."""
    k = (r / r0) * (c / c0)
    return Pi(pi.a / k**2, pi.b / k**2, pi.q_ref * k, pi.sampling_freq)


def _largest(ok: Callable[[float], bool], hi: float, lo: float = 0.0) -> float:
    """The largest x in (lo, hi] with ok(x), ok monotone (true below a bound)."""
    if ok(hi):
        return hi
    a, b = hi * 1e-8, hi
    if not ok(a):
        raise DesignError("design", "no stable value found")
    for _ in range(200):
        m = math.sqrt(a * b)
        a, b = (m, b) if ok(m) else (a, m)
        if b / a < 1 + 1e-6:
            break
    return a


def design_red(
    net: Network,
    target_delay: float | None = None,
    safety: float = 0.5,
    min_phase_margin: float = 30.0,
    gentle: bool = True,
    wait: bool = False,
) -> Design:
    """A RED set for ``net``: target queue q_t = ``target_delay`` x C (default
    a third of the bandwidth-delay product, as section 4.5.1's 50/150 for
    RC = 300); min_th = q_t / 2, max_th = 3 q_t / 2 (the thesis' 1:3);
    p_max such that the equilibrium (eq. 4.7, R = Tp + q_t / C) sits at q_t
    under the engine's drop law (the count of eq. 2.6); w_q = ``safety`` x
    the bound of eq. 4.9, lowered until the exact loop has
    ``min_phase_margin`` degrees."""
    if not (0 < safety <= 1):
        raise DesignError("--safety", f"{safety!r} is outside the allowed range (0, 1]")
    q_t = _target_queue(net, target_delay, net.bdp / 3)
    if q_t < 3:
        raise DesignError(
            "--target-delay", f"the target queue {q_t:.2f} packets is below 3 packets"
        )
    min_th, max_th = q_t / 2, 1.5 * q_t
    p_need = net.equilibrium_p(q_t)
    if p_need >= 0.5:
        raise DesignError(
            "--flows",
            f"{net.flows:g} flows need p = {p_need:.3f} at the target queue; RED cannot hold "
            "them there (raise --target-delay)",
        )
    # p_b at the middle of [min_th, max_th] is max_p / 2.
    pb = p_need * 1.5 if wait else p_need / (2 - p_need)
    max_p = 2 * pb
    if max_p > 1:
        raise DesignError(
            "--flows",
            f"{net.flows:g} flows need p = {p_need:.3f} at the target queue; RED cannot hold "
            "them there (raise --target-delay)",
        )
    base = Red(min_th, max_th, max_p, 1e-3, gentle, True, wait)
    prop = proposition(base, net)
    assert prop is not None
    w_bound = safety * prop.rhs / base.slope

    def ok(w: float) -> bool:
        law = Red(min_th, max_th, max_p, w, gentle, True, wait)
        m = loop(law, net).margins()
        return m.stable and m.pm >= min_phase_margin

    w_q = _largest(ok, min(w_bound, 0.5))
    law = Red(min_th, max_th, max_p, w_q, gentle, True, wait)
    d = analyse(law, net, "red")
    d.numbers.update({"target_queue_pkts": q_t, "w_q_eq_4_9": w_bound / safety, "safety": safety})
    if w_q < w_bound * (1 - 1e-6):
        d.notes.append(
            f"w_q lowered from {w_bound:.3g} (eq. 4.9 x {safety:g}) to reach "
            f"{min_phase_margin:g} deg of phase margin"
        )
    return d


def design_ap_red(net: Network, init: ApRedInitial | None = None) -> Design:
    """Eq. 4.3-4.6: the RED set AP-RED derives from ``init`` (section
    4.5.1's by default) for N, C and R = ``net``'s."""
    init = init or ApRedInitial()
    red = ap_red_derive(init, net.flows, net.capacity, net.rtt)
    d = analyse(red, net, "ap-red")
    k = (net.rtt / init.r0) * (net.capacity / init.c0)
    d.numbers.update(
        {
            "k_r": net.rtt / init.r0,
            "k_c": net.capacity / init.c0,
            "k_n": net.flows / init.n0,
            "k": k,
        }
    )
    table = {
        "kind": "ap-red",
        "max_p0": init.max_p0,
        "min_th0": init.min_th0,
        "max_th0": init.max_th0,
        "w_q0": init.w_q0,
        "n0": int(init.n0) if float(init.n0).is_integer() else init.n0,
        "c0": init.c0,
        "r0": f"{init.r0 * 1e3:g}ms",
        "estimator": "oracle",
    }
    d.numbers["_ap_red_table"] = table  # type: ignore[assignment]
    d.notes.append(
        f"derived RED: max_p {red.max_p:.4g}, min_th {red.min_th:.4g}, max_th {red.max_th:.4g}, "
        f'w_q {red.w_q:.4g} (paste as kind = "red" to fix them)'
    )
    return d


def design_rem(
    net: Network,
    target_delay: float | None = None,
    alpha: float = 0.1,
    phi: float = 1.001,
    update_interval: float = 0.002,
    min_phase_margin: float = 45.0,
) -> Design:
    """REM for ``net``: b* = ``target_delay`` x C (default the paper's 20
    packets), alpha and phi the paper's section 4 values, gamma the largest
    that satisfies Theorem 1 (gamma <= 2 / omega_L) and gives the delayed
    loop ``min_phase_margin`` degrees."""
    b_star = _target_queue(net, target_delay, 20.0)
    base = Rem(1e-3, alpha, phi, b_star, update_interval)
    op = operating_point(base, net)
    if op.regime != "aqm":
        raise DesignError("--flows", f"{net.flows:g} flows need p >= 1 at b* = {b_star:.0f}")
    prop = proposition(base, net)
    assert prop is not None
    bound = prop.rhs

    def ok(g: float) -> bool:
        m = loop(Rem(g, alpha, phi, b_star, update_interval), net).margins()
        return m.stable and m.pm >= min_phase_margin

    gamma = _largest(ok, bound)
    law = Rem(gamma, alpha, phi, b_star, update_interval)
    d = analyse(law, net, "rem")
    d.numbers.update({"gamma_theorem_1_bound": bound, "price_star": d.op.state, "m_star": d.op.p0})
    if gamma < bound * (1 - 1e-6):
        d.notes.append(
            f"gamma held below Theorem 1's bound {bound:.3g} for "
            f"{min_phase_margin:g} deg of phase margin with the feedback delay"
        )
    return d


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, int):
        return str(v)
    return f"{float(v):.5g}"


def to_toml(aqm: dict[str, Any]) -> str:
    """An ``[aqm]`` table as TOML text (4 significant digits; a and b of PI
    with 4 decimals of mantissa)."""
    lines = ["[aqm]"]
    for k, v in aqm.items():
        lines.append(f"{k} = {_fmt(v)}")
    return "\n".join(lines) + "\n"
