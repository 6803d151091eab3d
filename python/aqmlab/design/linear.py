"""Operating points, loop transfer functions, margins and the seeds' stability
propositions.

The loop is the thesis' linear model (``003_b277268f444f7691.txt`` section
4.2, fig. 4.1, eq. 4.2): TCP P_tcp(s) = (R C^2 / 2N^2) / (s + 2N / (R^2 C)),
queue P_queue(s) = (N / R) / (s + 1 / R), the delay e^{-sR}, and the AQM's
controller. Its open loop is

    L(s) = C_aqm(s) (C^2 / 2N) e^{-sR} / ((s + 2N / (R^2 C)) (s + 1 / R))

(eq. 4.10 for RED, eq. 6.2 for PI), R being the round-trip time at the
operating point, R = Tp + q0 / C. Controllers:

- RED: L_red / (s / K + 1), K = -ln(1 - w_q) C (eq. 4.2, 4.16); L_red is
  the slope of the drop function at the operating point (with the count's
  factor when the law models it, see :class:`~aqmlab.design.model.Red`).
- PI: K_p (s + z) / s (eq. 6.1); K_p and z from a and b by Tustin's rule.
- REM: the price update of eq. 4 every T_s seconds is, in continuous time,
  price = gamma (s + alpha / T_s) / s * q; the marking of eq. 3 has slope
  ln(phi) (1 - m0) at the operating point, so C(s) = gamma ln(phi) (1 - m0)
  (s + alpha / T_s) / s: a PI controller.

Frequency responses of the rational part come from ``scipy.signal.freqs``;
the delay multiplies them as e^{-j w R}. SciPy is imported where it is first
used: loading ``scipy.signal`` takes over a second, which every ``aqmlab design``
command would otherwise pay before it reads its arguments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from aqmlab.design.model import Avq, DesignError, Law, Network, Pi, Red, Rem

__all__ = [
    "Loop",
    "Margins",
    "OperatingPoint",
    "Proposition",
    "loop",
    "operating_point",
    "pi_proposition",
    "proposition",
    "red_proposition",
    "rem_proposition",
]


@dataclass(frozen=True)
class OperatingPoint:
    """The equilibrium of eq. 4.1 under a law: queue q0 and the law's own
    state x0 (RED's average, PI's p, REM's price), drop probability p0
    (eq. 4.7: p0 = 2 (N / (R0 C))^2), window W0 = R0 C / N, round trip
    R0 = Tp + q0 / C. ``regime``: ``"aqm"`` (the law holds the queue),
    ``"overflow"`` (the law cannot drop enough below the buffer: the buffer
    holds it), ``"saturated"`` (the law's range cannot supply p0: RED pinned
    at max_th without gentle, or p0 would exceed 1). Outside ``"aqm"`` the
    loop is not linearisable and no margins are given."""

    q0: float
    p0: float
    w0: float
    r0: float
    regime: str
    state: float = 0.0


def operating_point(law: Law, net: Network) -> OperatingPoint:
    """The equilibrium of the fluid model (eq. 4.7) for ``law`` on ``net``."""
    C = net.capacity

    def at(q: float, regime: str, state: float = 0.0) -> OperatingPoint:
        return OperatingPoint(
            q, net.equilibrium_p(q), net.window(q), net.rtt + q / C, regime, state
        )

    if isinstance(law, Red):

        def f(q: float) -> float:
            return law.prob(q) - net.equilibrium_p(q)

        top = 2 * law.max_th if law.gentle else law.max_th
        top = min(top, net.buffer)
        if f(top * (1 - 1e-12)) < 0:
            # The drop function cannot supply p0 below its top: the queue is
            # pinned there (forced drops above max_th, or the buffer).
            return at(top, "overflow" if top >= net.buffer else "saturated", top)
        lo = law.min_th
        from scipy import optimize

        q = optimize.brentq(f, lo, top * (1 - 1e-12), xtol=1e-10)
        return at(q, "aqm", q)
    if isinstance(law, (Pi, Rem)):
        q = law.q_ref if isinstance(law, Pi) else law.b_star
        if q > net.buffer:
            q = net.buffer
        op = at(q, "aqm")
        if op.p0 >= 1:
            return OperatingPoint(q, 1.0, op.w0, op.r0, "saturated", 0.0)
        state = op.p0 if isinstance(law, Pi) else law.price(op.p0)
        return OperatingPoint(op.q0, op.p0, op.w0, op.r0, "aqm", state)
    if isinstance(law, Avq):
        # The arrival rate settles at tau C: the real queue empties, the
        # flows see R = Tp and signal probability 2 (N / (Tp tau C))^2.
        p = 2 * (net.flows / (net.rtt * law.tau * C)) ** 2
        return OperatingPoint(
            0.0,
            min(p, 1.0),
            net.rtt * law.tau * C / net.flows,
            net.rtt,
            "aqm" if p < 1 else "saturated",
            law.tau * C,
        )
    raise DesignError("law", f"unknown law {law!r}")


@dataclass(frozen=True)
class Margins:
    """Stability margins of a loop: gain crossover ``wg`` (rad/s, ``None``
    when |L| < 1 everywhere), phase margin ``pm`` (degrees), phase crossover
    ``w180`` (rad/s) and gain margin ``gm`` (factor; ``inf`` when the phase
    never reaches -180 degrees), delay margin ``dm`` (seconds of extra delay
    the loop tolerates: pm in radians / wg). ``stable``: the Nyquist verdict
    for these loops (open-loop stable but for an integrator, one crossover):
    pm > 0 and gm > 1."""

    wg: float | None
    pm: float
    w180: float | None
    gm: float
    dm: float
    stable: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "crossover_rad_s": self.wg,
            "phase_margin_deg": self.pm,
            "phase_crossover_rad_s": self.w180,
            "gain_margin": self.gm,
            "gain_margin_db": 20 * math.log10(self.gm) if math.isfinite(self.gm) else math.inf,
            "delay_margin_s": self.dm,
            "stable": self.stable,
        }


@dataclass(frozen=True)
class Loop:
    """An open loop num(s) / den(s) e^{-s delay} (polynomial coefficients,
    highest power first)."""

    num: npt.NDArray[np.float64]
    den: npt.NDArray[np.float64]
    delay: float
    name: str = ""
    notes: list[str] = field(default_factory=list)

    def response(self, w: npt.ArrayLike) -> npt.NDArray[np.complex128]:
        """L(j w) for angular frequencies w (rad/s, > 0)."""
        from scipy import signal

        w = np.atleast_1d(np.asarray(w, dtype=float))
        _, h = signal.freqs(self.num, self.den, worN=w)
        return np.asarray(h * np.exp(-1j * w * self.delay), dtype=np.complex128)

    def phase(self, w: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The phase of L(j w) in degrees, continuous from w -> 0 (w sorted)."""
        from scipy import signal

        w = np.atleast_1d(np.asarray(w, dtype=float))
        _, h = signal.freqs(self.num, self.den, worN=w)
        # At the grid's low end the rational part's phase is about -90 k
        # degrees (k <= 1 integrators, positive gain): inside (-180, 180],
        # so unwrapping from there gives the continuous phase.
        rational = np.unwrap(np.angle(h))
        return np.asarray(np.degrees(rational - w * self.delay), dtype=np.float64)

    def grid(self, n: int = 4000) -> npt.NDArray[np.float64]:
        """A log frequency grid covering the loop's corners and 20 / delay."""
        poles = np.abs(np.roots(self.den))
        zeros = np.abs(np.roots(self.num)) if len(self.num) > 1 else np.array([])
        corners = np.concatenate([poles[poles > 0], zeros[zeros > 0], [1.0 / self.delay]])
        lo = max(corners.min() / 1e4, 1e-9)
        hi = corners.max() * 1e3
        return np.asarray(np.logspace(math.log10(lo), math.log10(hi), n), dtype=np.float64)

    def margins(self) -> Margins:
        from scipy import optimize

        w = self.grid()
        mag = np.abs(self.response(w))
        ph = self.phase(w)
        mag_f = lambda x: float(np.abs(self.response([x]))[0]) - 1.0  # noqa: E731
        above = np.nonzero(mag >= 1.0)[0]
        if len(above) == 0:
            wg, pm = None, math.inf
        else:
            i = above[-1]
            if i + 1 >= len(w):
                raise DesignError("loop", "the loop gain does not fall below 1")
            wg = float(optimize.brentq(mag_f, w[i], w[i + 1], xtol=1e-14, rtol=1e-12))
            pm = 180.0 + float(np.interp(wg, w, ph))
        cross = np.nonzero(ph <= -180.0)[0]
        if len(cross) == 0:
            w180, gm = None, math.inf
        else:
            j = cross[0]
            ph_f = lambda x: float(np.interp(x, w, ph)) + 180.0  # noqa: E731
            w180 = float(optimize.brentq(ph_f, w[j - 1], w[j])) if j > 0 else float(w[0])
            mag180 = float(np.abs(self.response([w180]))[0])
            gm = 1.0 / mag180 if mag180 > 0 else math.inf
        dm = math.inf if wg is None else math.radians(pm) / wg
        return Margins(wg, pm, w180, gm, dm, bool(pm > 0 and gm > 1))


def _plant(
    net: Network, op: OperatingPoint
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(C^2 / 2N) / ((s + 2N / (R^2 C)) (s + 1 / R)) at the operating point."""
    N, C, R = net.flows, net.capacity, op.r0
    num = np.array([C * C / (2 * N)], dtype=np.float64)
    den = np.asarray(np.polymul([1.0, 2 * N / (R * R * C)], [1.0, 1.0 / R]), dtype=np.float64)
    return num, den


def loop(law: Law, net: Network, op: OperatingPoint | None = None) -> Loop:
    """The open loop of ``law`` on ``net`` linearised at ``op`` (default: the
    law's operating point)."""
    op = op or operating_point(law, net)
    pn, pd = _plant(net, op)
    notes: list[str] = []
    if op.regime != "aqm":
        notes.append(f"operating point: {op.regime} (q0 = {op.q0:.1f} packets)")
    if isinstance(law, Red):
        g = law.gain(op.q0)
        K = law.ewma_rate(net.capacity)
        cn, cd = np.array([g]), np.array([1.0 / K, 1.0])
        name = "RED (eq. 4.10)"
    elif isinstance(law, Pi):
        kp, z = law.continuous()
        cn, cd = np.array([kp, kp * z]), np.array([1.0, 0.0])
        name = "PI (eq. 6.2)"
    elif isinstance(law, Rem):
        k = law.gamma * math.log(law.phi) * (1 - op.p0)
        cn, cd = np.array([k, k * law.alpha / law.update_interval]), np.array([1.0, 0.0])
        name = "REM (eq. 4 as a PI)"
    else:
        raise DesignError(
            "law", "the linear analysis covers RED, PI and REM (AVQ: fluid model only)"
        )
    return Loop(np.polymul(cn, pn), np.polymul(cd, pd), op.r0, name, notes)


@dataclass(frozen=True)
class Proposition:
    """A seed's sufficient stability condition: ``lhs`` <= ``rhs`` (or
    ``lhs`` < ``rhs``) with the two sides as numbers. ``holds`` is None when
    the proposition does not apply to this configuration."""

    name: str
    lhs_label: str
    lhs: float
    rhs_label: str
    rhs: float
    holds: bool | None
    detail: str = ""

    @property
    def ratio(self) -> float:
        """lhs / rhs: below 1 the proposition holds, the smaller the safer."""
        return self.lhs / self.rhs if self.rhs else math.inf

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "lhs": {self.lhs_label: self.lhs},
            "rhs": {self.rhs_label: self.rhs},
            "ratio": self.ratio,
            "holds": self.holds,
            "detail": self.detail,
        }


def red_proposition(red: Red, net: Network) -> Proposition:
    """Eq. 4.9: L_red w_q <= 0.8 N^3 / (RC)^5 (N <= RC/2) or 0.4 N^2 / (RC)^4
    (N > RC/2), with L_red = p_max / (max_th - min_th) and R the round-trip
    time of the network as the thesis uses it for AP-RED (section 4.5: the
    round-trip propagation delay d)."""
    N, rc = net.flows, net.rtt * net.capacity
    lhs = red.slope * red.w_q
    if rc / 2 >= N:
        rhs, branch = 0.8 * N**3 / rc**5, "N <= RC/2: 0.8 N^3 / (RC)^5"
    else:
        rhs, branch = 0.4 * N**2 / rc**4, "N > RC/2: 0.4 N^2 / (RC)^4"
    return Proposition(
        "thesis eq. 4.9",
        "L_red w_q",
        lhs,
        branch,
        rhs,
        lhs <= rhs,
        f"N = {N:g}, RC = {rc:.1f} packets",
    )


def pi_proposition(pi: Pi, net: Network) -> Proposition:
    """Eq. 6.3-6.5: K_p = 2 lambda sqrt(lambda^2 + 1) N / (R^2 C^2) and z =
    2N / (R^2 C) with lambda in (0, 0.85); R at the operating point
    (Tp + q_ref / C). lambda is solved from the controller's K_p; the
    proposition applies when z is within 10 % of 2N / (R^2 C)."""
    N, C = net.flows, net.capacity
    R = net.rtt + pi.q_ref / C
    kp, z = pi.continuous()
    target = kp * R * R * C * C / N  # = 2 lambda sqrt(lambda^2 + 1)
    lam = math.sqrt((math.sqrt(1 + target * target) - 1) / 2)
    p_tcp = 2 * N / (R * R * C)
    applies = abs(z / p_tcp - 1) <= 0.1
    phase = -90 - math.degrees(lam) - math.degrees(math.atan(lam))
    detail = (
        f"z = {z:.4g} rad/s vs 2N/(R^2 C) = {p_tcp:.4g} rad/s; omega_g = lambda/R = "
        f"{lam / R:.4g} rad/s; eq. 6.5 phase at omega_g {phase:.1f} deg"
    )
    return Proposition(
        "thesis eq. 6.3",
        "lambda",
        lam,
        "upper bound",
        0.85,
        (lam < 0.85) if applies else None,
        detail,
    )


def rem_proposition(rem: Rem, net: Network) -> Proposition:
    """Theorem 1 of ``002_80945567bf68047d.txt`` for one link: stable for
    0 < alpha < 1 and gamma <= 2 / omega_L, omega_L = sum_s beta_s the
    eigenvalue of A B A^T with beta_s = -1 / U_s''(x_s*) = -dx_s/dprice.
    For TCP Reno x_s = sqrt(2 / m) / R packets/s (eq. 4.7's W^2 m = 2) with
    m = 1 - phi^-price, rates in packets per period T_s as in eq. 2."""
    op = operating_point(rem, net)
    m = op.p0
    ts = rem.update_interval
    if not (0 < m < 1):
        return Proposition(
            "REM Theorem 1",
            "gamma",
            rem.gamma,
            "2 / omega_L",
            0.0,
            None,
            f"no interior equilibrium (m* = {m:.3g})",
        )
    dx_dm = -0.5 * math.sqrt(2) * m**-1.5 / op.r0 * ts
    dm_dp = math.log(rem.phi) * (1 - m)
    omega = net.flows * abs(dx_dm * dm_dp)
    bound = 2 / omega
    return Proposition(
        "REM Theorem 1",
        "gamma",
        rem.gamma,
        "2 / omega_L",
        bound,
        rem.gamma <= bound and 0 < rem.alpha < 1,
        f"price* = {op.state:.4g}, m* = {m:.4g}, omega_L = {omega:.4g}; "
        "the theorem's model has no feedback delay",
    )


def proposition(law: Law, net: Network) -> Proposition | None:
    """The seed's proposition for ``law`` (None for AVQ: the seeds give none)."""
    if isinstance(law, Red):
        return red_proposition(law, net)
    if isinstance(law, Pi):
        return pi_proposition(law, net)
    if isinstance(law, Rem):
        return rem_proposition(law, net)
    return None
