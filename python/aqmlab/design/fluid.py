"""The TCP fluid model of eq. 4.1 (``003_b277268f444f7691.txt`` section 4.2),
integrated in time with the buffer's bounds and an AQM marking law:

    dW/dt = 1 / R(t) - W(t) W(t - R(t)) / (2 R(t - R(t))) p(t - R(t))
    dq/dt = N(t) W(t) / R(t) - C(t),   0 <= q <= B
    R(t)  = Tp(t) + q(t) / C(t)

p is the probability a packet is signalled: the law's (RED on its EWMA
average, PI and REM at their sampling instants, AVQ from its virtual queue),
combined with the buffer's own drops when q = B and the input exceeds C
(the fraction 1 - C / input is lost). N, C and Tp are piecewise constant,
one :class:`Phase` each, as a scenario's schedule changes them; a phase may
carry its own law (AP-RED derives new parameters, a scheduled ``aqm`` change
sets new ones) and the law's state carries over.

Why a fixed-step integrator and not ``scipy.integrate.solve_ivp``: scipy has
no delay-differential solver, R(t) depends on the state, and PI and REM are
sampled controllers (160-500 Hz), so an adaptive ODE solver would have to be
restarted at every sample with the history kept by hand. Forward Euler at
step ``h`` (default 1 ms, at most R / 50) with a stored, linearly
interpolated history is the method of steps for these equations; halving
``h`` moves the mean and standard deviation of the queue by less than 2 %
(``tests/test_design.py::test_fluid_step_convergence``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from aqmlab.design.model import Avq, DesignError, Law, Network, Pi, Red, Rem

__all__ = ["FluidResult", "Phase", "fluid"]


@dataclass(frozen=True)
class Phase:
    """From ``start`` seconds on, the network is ``net`` and the law ``law``."""

    start: float
    net: Network
    law: Law
    label: str = ""


@dataclass
class FluidResult:
    """Samples of the fluid model every ``dt`` seconds: time ``t`` (s), queue
    ``q`` (packets), window ``w`` (packets), signal probability ``p``, and
    the law's state ``x`` (RED's average, PI's and REM's p or price, AVQ's
    virtual capacity in packets/s)."""

    t: npt.NDArray[np.float64]
    q: npt.NDArray[np.float64]
    w: npt.NDArray[np.float64]
    p: npt.NDArray[np.float64]
    x: npt.NDArray[np.float64]
    phases: list[Phase] = field(default_factory=list)

    def window(self, start: float, end: float | None = None) -> npt.NDArray[np.bool_]:
        end = self.t[-1] + 1 if end is None else end
        return np.asarray((self.t >= start) & (self.t < end))

    def stats(self, start: float, end: float | None = None) -> dict[str, float]:
        """Mean, standard deviation, min and max of the queue from ``start``."""
        q = self.q[self.window(start, end)]
        if len(q) == 0:
            raise DesignError("start", f"{start:g}s leaves no samples")
        return {
            "mean": float(q.mean()),
            "std": float(q.std()),
            "min": float(q.min()),
            "max": float(q.max()),
            "empty_fraction": float(np.mean(q < 0.5)),
        }

    def oscillates(self, start: float, end: float | None = None, tol: float = 0.05) -> bool:
        """Whether the queue keeps oscillating from ``start``: over the second
        half of the window its swing (max - min) exceeds ``tol`` times its
        mean (at least one packet) and it turns back at least three times
        (turning points counted with a hysteresis of a quarter of the swing).
        A stable equilibrium damps to a constant; a slow approach to it (a
        weak integral action) moves one way only and is not an oscillation."""
        q = self.q[self.window(start, end)]
        q = q[len(q) // 2 :]
        if len(q) < 4:
            return False
        swing = float(q.max() - q.min())
        if swing <= tol * max(float(q.mean()), 1.0):
            return False
        hyst = swing / 4
        turns, direction, ref = 0, 0, float(q[0])
        for v in q[1:]:
            if direction >= 0 and v < ref - hyst:
                turns += direction > 0
                direction, ref = -1, v
            elif direction <= 0 and v > ref + hyst:
                turns += direction < 0
                direction, ref = 1, v
            elif (direction > 0 and v > ref) or (direction < 0 and v < ref):
                ref = v
        return turns >= 3


def _phases(spec: Network | Sequence[Phase], law: Law | None) -> list[Phase]:
    if isinstance(spec, Network):
        if law is None:
            raise DesignError("law", "a marking law is needed")
        return [Phase(0.0, spec, law)]
    ph = sorted(spec, key=lambda p: p.start)
    if not ph or ph[0].start != 0:
        raise DesignError("phases", "the first phase must start at 0 s")
    return ph


def fluid(
    spec: Network | Sequence[Phase],
    duration: float,
    law: Law | None = None,
    h: float | None = None,
    dt: float = 0.01,
    w0: float = 1.0,
) -> FluidResult:
    """Integrate eq. 4.1 for ``duration`` seconds from W = ``w0``, q = 0.

    ``spec`` is a network (with ``law``) or a list of phases. ``h`` is the
    step (default min(1 ms, R / 50) over the phases); samples every ``dt``."""
    if not (math.isfinite(duration) and duration > 0):
        raise DesignError("duration", f"{duration!r} is not allowed; give a time > 0")
    phases = _phases(spec, law)
    if h is None:
        h = min([1e-3] + [p.net.rtt / 50 for p in phases])
    if not (h > 0 and dt >= h):
        raise DesignError("h", f"step {h!r} must be > 0 and at most dt = {dt!r}")
    n = math.ceil(duration / h) + 1
    every = max(1, round(dt / h))
    # History of W, R and p at every step (for the delayed terms).
    hw = np.empty(n)
    hr = np.empty(n)
    hp = np.empty(n)
    out_n = n // every + 1
    ot, oq, ow, op_, ox = (np.empty(out_n) for _ in range(5))
    k_out = 0

    W, q = w0, 0.0
    # Law state.
    x = 0.0  # RED average / PI p / REM price / AVQ virtual capacity
    q_old = 0.0  # PI's and REM's previous sample
    vq = 0.0  # AVQ's virtual queue
    next_tick = 0.0
    pi_p = 0.0
    mark = 0.0  # probability the law signals now
    pi_idx = 0
    cur = phases[0]
    if isinstance(cur.law, Avq):
        x = cur.net.capacity

    for i in range(n):
        t = i * h
        while pi_idx + 1 < len(phases) and t >= phases[pi_idx + 1].start:
            pi_idx += 1
            cur = phases[pi_idx]
        net, lw = cur.net, cur.law
        N, C, Tp, B = net.flows, net.capacity, net.rtt, net.buffer
        R = Tp + q / C
        inflow = N * W / R

        # The law's signal probability now.
        if isinstance(lw, Red):
            mark = lw.prob(x)
        elif isinstance(lw, Pi):
            if t >= next_tick:
                pi_p = min(max(pi_p + lw.a * (q - lw.q_ref) - lw.b * (q_old - lw.q_ref), 0.0), 1.0)
                q_old = q
                next_tick += lw.period
            mark, x = pi_p, pi_p
        elif isinstance(lw, Rem):
            if t >= next_tick:
                x = max(x + lw.gamma * (q - (1 - lw.alpha) * q_old - lw.alpha * lw.b_star), 0.0)
                q_old = q
                next_tick += lw.update_interval
            mark = lw.prob(x)
        elif isinstance(lw, Avq):
            vb = B if math.isfinite(B) else 1e9
            mark = 1.0 - x / inflow if (vq >= vb and inflow > x) else 0.0
        # The buffer's own drops.
        ovf = 1.0 - C / inflow if (q >= B and inflow > C) else 0.0
        p = 1.0 - (1.0 - mark) * (1.0 - ovf)
        hw[i], hr[i], hp[i] = W, R, p

        if i % every == 0 and k_out < out_n:
            ot[k_out], oq[k_out], ow[k_out], op_[k_out], ox[k_out] = t, q, W, p, x
            k_out += 1

        # Delayed terms at t - R (linear interpolation in the history).
        td = t - R
        if td <= 0:
            wd, rd, pd = w0, hr[0], 0.0
        else:
            f = td / h
            j = int(f)
            a = f - j
            if j + 1 <= i:
                wd = hw[j] + a * (hw[j + 1] - hw[j])
                rd = hr[j] + a * (hr[j + 1] - hr[j])
                pd = hp[j] + a * (hp[j + 1] - hp[j])
            else:
                wd, rd, pd = hw[j], hr[j], hp[j]
        dW = 1.0 / R - W * wd / (2.0 * rd) * pd
        dq = inflow - C
        W = max(W + h * dW, 1.0)
        q = min(max(q + h * dq, 0.0), B)
        if isinstance(lw, Red):
            x += h * lw.ewma_rate(C) * (q - x)
        elif isinstance(lw, Avq):
            vb = B if math.isfinite(B) else 1e9
            admitted = inflow * (1.0 - mark)
            vq = min(max(vq + h * (admitted - x), 0.0), vb)
            x = min(max(x + h * lw.alpha * (lw.tau * C - inflow), 0.0), C)

    k = k_out
    return FluidResult(ot[:k], oq[:k], ow[:k], op_[:k], ox[:k], list(phases))


def describe(r: FluidResult, start: float) -> dict[str, Any]:
    """Summary of a fluid run from ``start``: queue statistics and verdict."""
    s = r.stats(start)
    return {**s, "oscillates": r.oscillates(start)}
