"""The packet-level side: a scenario's queue from the engine (run now, or read
from a result folder) and the verdict on whether it oscillates.

The packet queue is never still: single flows' sawtooths and random drops
make it fluctuate even around a stable equilibrium. A sustained oscillation
of the feedback loop shows in one of two ways, and :func:`queue_verdict`
calls the queue oscillating when either is seen:

- the queue swings over its whole mean (coefficient of variation
  std / mean > 0.5): the loop drives the queue empty and full again (RED's
  unstable configurations do this);
- a periodic component dominates: the autocorrelation of the queue dips
  below -0.5 within 10 s (PI's unstable configurations oscillate around
  q_ref without emptying).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from aqmlab.design.model import DesignError

__all__ = ["PacketQueue", "packet_queue", "queue_verdict"]

#: Thresholds of :func:`queue_verdict`.
CV_LIMIT = 0.5
ACF_LIMIT = -0.5
ACF_HORIZON_S = 5.0


@dataclass
class PacketQueue:
    """The monitored queue of one link: times (s) and lengths (packets)."""

    t: npt.NDArray[np.float64]
    q: npt.NDArray[np.float64]
    summary: dict[str, Any]
    scenario: dict[str, Any]

    def window(self, start: float, end: float | None = None) -> npt.NDArray[np.float64]:
        end = float(self.t[-1]) + 1 if end is None else end
        return self.q[(self.t >= start) & (self.t < end)]


def _from_result(result: Any, link: str) -> PacketQueue:
    tab = result.queue
    links = np.asarray(tab.column("link").to_pylist())
    keep = links == link
    if not keep.any():
        keep = links == links[0] if len(links) else keep
    t = np.asarray(tab.column("time_s").to_numpy(zero_copy_only=False), dtype=float)[keep]
    q = np.asarray(tab.column("queue_pkts").to_numpy(zero_copy_only=False), dtype=float)[keep]
    return PacketQueue(t, q, result.summary, result.scenario)


def packet_queue(
    doc: dict[str, Any] | None = None,
    result_dir: str | os.PathLike[str] | None = None,
    link: str = "bottleneck",
) -> PacketQueue:
    """Run the scenario ``doc`` in the engine, or read ``result_dir``."""
    if result_dir is not None:
        from aqmlab import results

        if not results.is_run_dir(result_dir):
            raise DesignError("--result", f"{result_dir}: not an aqmlab result folder")
        return _from_result(results.load_run(result_dir), link)
    if doc is None:
        raise DesignError("scenario", "a scenario or a result folder is needed")
    from aqmlab import api

    return _from_result(api.run(doc), link)


def acf_min(
    q: npt.NDArray[np.float64], dt: float, horizon: float = ACF_HORIZON_S
) -> tuple[float, float, float]:
    """The lowest autocorrelation of ``q`` (sampled every ``dt`` s) at lags up
    to ``horizon`` seconds, its lag in seconds, and the autocorrelation at
    twice that lag (a period later: high again for a periodic queue)."""
    x = q - q.mean()
    v = float((x * x).mean())
    if v == 0 or len(x) < 4:
        return 0.0, 0.0, 0.0
    n = len(x)
    lags = min(int(2 * horizon / dt), n // 2)
    f = np.fft.rfft(x, 2 * n)
    ac = np.fft.irfft(f * np.conj(f))[: lags + 1] / (n * v)
    # Unbiased by the overlap length.
    ac = ac * n / (n - np.arange(lags + 1))
    half = min(int(horizon / dt), lags // 2)
    i = int(np.argmin(ac[1 : half + 1])) + 1
    return float(ac[i]), i * dt, float(ac[min(2 * i, lags)])


def queue_verdict(t: npt.NDArray[np.float64], q: npt.NDArray[np.float64]) -> dict[str, Any]:
    """Statistics of a packet queue and whether it oscillates (module doc)."""
    if len(q) < 4:
        raise DesignError("metrics.start", "fewer than 4 queue samples to judge")
    dt = float(np.median(np.diff(t)))
    mean, std = float(q.mean()), float(q.std())
    cv = std / max(mean, 1.0)
    a, lag, again = acf_min(q, dt)
    return {
        "mean": mean,
        "std": std,
        "cv": cv,
        "acf_min": a,
        "acf_lag_s": lag,
        "acf_period": again,
        "empty_fraction": float(np.mean(q < 0.5)),
        "oscillates": bool(cv > CV_LIMIT or a < ACF_LIMIT),
    }
