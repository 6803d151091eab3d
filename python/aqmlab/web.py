"""The web traffic model (``[[traffic]] kind = "web"``): measuring its load.

``000_0675317d310dd341.txt`` sets its offered loads by running the web
sessions on an uncongested link and measuring the throughput they produce.
:func:`calibrate` does the same: it runs one ``web`` group with
``offered_load`` on a dumbbell whose bottleneck and access links are 1 Gbps
(bottleneck delay 1 ms, 1500-byte packets) and reports the realised
throughput of the bottleneck in the data direction.

>>> import aqmlab
>>> c = aqmlab.web.calibrate("90Mbps", duration="60s")
>>> c["ratio"]      # realised / offered

A seed fixes the web workload whatever the network does (``docs/scenario.md``,
"Common random numbers"), so two runs of one scenario and seed with different
schemes can be compared response by response: :func:`paired_responses`.

>>> red, pi = aqmlab.run(sc, overrides=["aqm.kind=red"]), aqmlab.run(sc, overrides=["aqm.kind=pi"])
>>> p = aqmlab.web.paired_responses(red, pi)
>>> p.column("response_time_s_a"), p.column("response_time_s_b")

:func:`compare_responses` sums such a pairing up (the shares within given
times, the response times, the paired differences with 95 % intervals);
``aqmlab compare --responses A B`` prints it for two result folders.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aqmlab import _core
from aqmlab.api import RunResult, run

__all__ = [
    "ResponseComparison",
    "calibrate",
    "calibration_scenario",
    "compare_responses",
    "paired_responses",
]

#: The columns that name one object of a web workload in every run of a seed.
RESPONSE_KEY = ("group", "session", "page", "object")


def calibration_scenario(
    offered_load: str,
    duration: str = "60s",
    measure_from: str = "10s",
    seed: int = 1,
    web: Mapping[str, Any] | None = None,
    tcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The scenario :func:`calibrate` runs, as a dict: one ``web`` group with
    ``offered_load`` (plus the keys in ``web``, e.g. ``{"http": "1.1"}``) on
    an uncongested 1 Gbps dumbbell; ``tcp`` adds ``[tcp]`` keys."""
    return {
        "duration": duration,
        "seed": seed,
        "topology": {
            "kind": "dumbbell",
            "bottleneck_rate": "1Gbps",
            "bottleneck_delay": "1ms",
            "buffer": 5000,
            "access_rate": "1Gbps",
        },
        "tcp": {"packet_size": 1500, **(tcp or {})},
        "traffic": [{"kind": "web", "offered_load": offered_load, **(web or {})}],
        "metrics": {"start": measure_from},
    }


def calibrate(
    offered_load: str,
    duration: str = "60s",
    measure_from: str = "10s",
    seed: int = 1,
    web: Mapping[str, Any] | None = None,
    tcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the web model with ``offered_load`` on an uncongested 1 Gbps
    dumbbell and report what it really offered.

    Returns a dict: ``offered_bps`` (the nominal load), ``realised_bps`` (bits
    per second that crossed the bottleneck in the data direction, headers
    and SYN/ACKs included, from ``measure_from`` to ``duration``), ``ratio``
    (realised / offered), ``sessions`` (the number the engine derived),
    ``completed`` (responses in the interval), ``response_time_p50_s`` and
    ``result`` (the :class:`~aqmlab.RunResult`). Heavy-tailed sizes and
    think times make short runs noisy by a few per cent; use several seeds
    or a longer ``duration`` for a tight figure.
    """
    doc = calibration_scenario(offered_load, duration, measure_from, seed, web, tcp)
    r: RunResult = run(doc)
    offered = _rate_bps(offered_load)
    realised = float(r.summary["bottleneck"]["throughput_bps"])
    w = r.summary.get("web") or {}
    return {
        "offered_bps": offered,
        "realised_bps": realised,
        "ratio": realised / offered,
        # Open pages and a page's objects in parallel run each session on
        # `lanes` flows.
        "sessions": r.flows.num_rows // _lanes(r),
        "completed": int(w.get("completed", 0)),
        "response_time_p50_s": float(w.get("response_time_p50_s", float("nan"))),
        "result": r,
    }


def paired_responses(a: RunResult, b: RunResult) -> pa.Table:
    """The web responses two runs have in common, side by side.

    The runs should be of one scenario and seed that differ in the network
    (the scheme, a link, other traffic): they then ask for the same objects,
    at the same times with open pages. A response is named by ``group``,
    ``session``, ``page`` and ``object``; the table has one row per response
    completed in both runs (sorted by those columns), with ``size_bytes`` and
    ``start_s_a``, ``start_s_b``, ``end_s_a``, ``end_s_b``,
    ``response_time_s_a`` and ``response_time_s_b``. Responses that only one
    run completed before its end are left out.

    Raises ``ValueError`` if a response of both has two sizes: then the runs
    are not of one workload (another seed, ``[seeds] app``, or other web
    keys), and a pairing would compare different objects.
    """
    cols = [*RESPONSE_KEY, "size_bytes", "start_s", "end_s", "response_time_s"]
    left, right = (r.responses.select(cols) for r in (a, b))
    right = right.rename_columns([*RESPONSE_KEY, "size_b", "start_s", "end_s", "response_time_s"])
    t = left.join(
        right, keys=list(RESPONSE_KEY), join_type="inner", left_suffix="_a", right_suffix="_b"
    )
    size_a = t.column("size_bytes").to_numpy()
    size_b = t.column("size_b").to_numpy()
    differ = int((size_a != size_b).sum())
    if differ:
        raise ValueError(
            f"paired_responses: {differ} of the {t.num_rows} responses both runs completed "
            "differ in size, so the runs are not of one web workload (another seed, [seeds] app "
            "or other web keys); pair runs of one scenario and seed"
        )
    order = [
        "group",
        "session",
        "page",
        "object",
        "size_bytes",
        "start_s_a",
        "start_s_b",
        "end_s_a",
        "end_s_b",
        "response_time_s_a",
        "response_time_s_b",
    ]
    return t.select(order).sort_by([(k, "ascending") for k in RESPONSE_KEY])


#: The response times :func:`compare_responses` gives shares within, seconds (the ECN+
#: study's CDFs run to 2 s).
WITHIN_S = (0.5, 1.0, 2.0)

#: Two response times closer than this are the same (times are whole nanoseconds).
SAME_S = 1e-9


@dataclass(frozen=True)
class WithinShare:
    """The share of the paired responses that took at most ``t_s`` seconds in each run, and
    the difference b - a with the half-width of its 95 % interval."""

    t_s: float
    a: float
    b: float
    diff: float
    ci: float


@dataclass(frozen=True)
class ResponseComparison:
    """Two runs of one web workload compared response by response
    (:func:`compare_responses`). ``a`` / ``b`` pairs are in the order the runs were given;
    differences are b - a. Response-time figures are in seconds and taken over the pairs."""

    start_s: float
    #: Pairs of runs pooled (one per seed).
    runs: int
    #: Responses each side completed that began at or after ``start_s``.
    completed: tuple[int, int]
    #: Of those, the ones both sides completed (the pairs), and the ones only a / only b did.
    paired: int
    only: tuple[int, int]
    #: Sessions the pairs come from, counted per pair of runs (the clusters of the intervals).
    sessions: int
    within: tuple[WithinShare, ...]
    median_s: tuple[float, float]
    mean_s: tuple[float, float]
    #: Mean of the paired differences and the half-width of its 95 % interval.
    mean_diff_s: float
    mean_diff_ci_s: float
    #: Median of the paired differences.
    median_diff_s: float
    #: Shares of the pairs where b was faster, as fast (within a nanosecond), slower.
    b_faster: float
    same: float
    b_slower: float

    def rows(self) -> list[tuple[str, str, str, str]]:
        """The comparison as (figure, a, b, b - a) text rows: counts, shares in per cent
        with the difference in points, times in ms; ``±`` is a 95 % interval."""
        na, nb = self.completed
        out = [
            (
                f"responses begun from {self.start_s:g} s, completed",
                f"{na}",
                f"{nb}",
                f"{nb - na:+d}",
            ),
            (
                "  completed in both (the pairs)",
                f"{self.paired}",
                f"{self.paired}",
                f"only a: {self.only[0]}, only b: {self.only[1]}",
            ),
        ]
        for w in self.within:
            out.append(
                (
                    f"within {w.t_s:g} s (pairs)",
                    f"{100 * w.a:.1f} %",
                    f"{100 * w.b:.1f} %",
                    f"{100 * w.diff:+.1f} ± {100 * w.ci:.1f} points",
                )
            )
        out += [
            (
                "median response time (pairs)",
                _ms(self.median_s[0]),
                _ms(self.median_s[1]),
                f"median difference {_ms(self.median_diff_s, sign=True)}",
            ),
            (
                "mean response time (pairs)",
                _ms(self.mean_s[0]),
                _ms(self.mean_s[1]),
                f"{_ms(self.mean_diff_s, sign=True)} ± {_ms(self.mean_diff_ci_s)}",
            ),
            (
                "b faster / as fast / slower",
                "",
                "",
                f"{100 * self.b_faster:.1f} / {100 * self.same:.1f} / {100 * self.b_slower:.1f} %",
            ),
        ]
        return out


def _ms(x: float, sign: bool = False) -> str:
    if math.isnan(x):
        return "-"
    v = 1000 * x
    digits = 1 if abs(v) < 100 else 0
    return f"{v:+.{digits}f} ms" if sign else f"{v:.{digits}f} ms"


def _cluster_ci(d: npt.NDArray[np.float64], cluster: npt.NDArray[np.int64]) -> float:
    """Half-width of the 95 % interval of the mean of ``d``, with a standard error taken over
    clusters (responses of one session are not independent: they share its round trip and
    its lanes): sqrt(G / (G - 1) * sum over clusters of (sum of d - m)^2) / n. NaN with fewer
    than two clusters."""
    n = len(d)
    groups = int(cluster.max()) + 1 if n else 0
    if n == 0 or len(np.unique(cluster)) < 2:
        return float("nan")
    resid = np.bincount(cluster, weights=d - d.mean(), minlength=groups)
    g = len(np.unique(cluster))
    return 1.96 * math.sqrt(g / (g - 1) * float(np.sum(resid**2))) / n


def compare_responses(
    a: RunResult | Sequence[RunResult],
    b: RunResult | Sequence[RunResult],
    within: Sequence[float] = WITHIN_S,
    start_s: float | None = None,
) -> ResponseComparison:
    """Compare two runs of one web workload response by response; or several such pairs (one
    per seed: ``a`` and ``b`` lists of runs, ``a[i]`` paired with ``b[i]``), pooled.

    The runs of a pair should be of one scenario and seed that differ in the
    network (:func:`paired_responses`, which this calls: ``ValueError`` if they
    are of two workloads). Responses count if they began at or after
    ``start_s`` in the run that completed them (default: the latest of the
    runs' measurement starts); a pair counts if both its starts are. The shares
    within ``within`` seconds and the response times are taken over the pairs,
    so both sides are judged on the same objects; the responses only one side
    completed are counted beside them.

    The 95 % intervals take their standard error over sessions (a session of
    each pair of runs), not over responses: a session's responses share its
    round trip (and, with lanes, its connections), so they are not
    independent, and an interval over responses would be too narrow. Raises
    ``ValueError`` for a ``within`` time that is not positive, lists of two
    lengths, or when no response is paired.
    """
    runs_a = [a] if isinstance(a, RunResult) else list(a)
    runs_b = [b] if isinstance(b, RunResult) else list(b)
    if len(runs_a) != len(runs_b) or not runs_a:
        raise ValueError(
            f"{len(runs_a)} runs against {len(runs_b)}: give one b run for each a run "
            "(one pair per seed)"
        )
    ts = [float(t) for t in within]
    for t in ts:
        if not (t > 0 and math.isfinite(t)):
            raise ValueError(f"within: {t!r} s; each time must be a positive number of seconds")
    if start_s is None:
        start_s = max(float(r.summary.get("measure_start_s", 0.0)) for r in (*runs_a, *runs_b))
    if not math.isfinite(start_s):
        raise ValueError(f"start_s: {start_s!r}; must be a finite number of seconds")
    completed = [0, 0]
    in_pairs = [0, 0]
    ras, rbs, keys = [], [], []
    for k, (ra_run, rb_run) in enumerate(zip(runs_a, runs_b, strict=True)):
        for side, r in enumerate((ra_run, rb_run)):
            completed[side] += int(np.sum(r.responses.column("start_s").to_numpy() >= start_s))
        p = paired_responses(ra_run, rb_run)
        sa = p.column("start_s_a").to_numpy()
        sb = p.column("start_s_b").to_numpy()
        keep = (sa >= start_s) & (sb >= start_s)
        # only: what one side completed (begun from start_s) and the other did not. A closed
        # page begun before start_s in one run and after it in the other is in neither the
        # pairs nor `only`.
        in_pairs[0] += int(np.sum(sa >= start_s))
        in_pairs[1] += int(np.sum(sb >= start_s))
        ras.append(p.column("response_time_s_a").to_numpy()[keep])
        rbs.append(p.column("response_time_s_b").to_numpy()[keep])
        keys.append(
            np.stack(
                [
                    np.full(int(np.sum(keep)), k, dtype=np.int64),
                    p.column("group").to_numpy()[keep].astype(np.int64),
                    p.column("session").to_numpy()[keep].astype(np.int64),
                ],
                axis=1,
            )
        )
    ra = np.concatenate(ras)
    rb = np.concatenate(rbs)
    n = len(ra)
    if n == 0:
        raise ValueError(
            f"no response began at or after {start_s:g} s and was completed in both runs"
        )
    _, cluster = np.unique(np.concatenate(keys), axis=0, return_inverse=True)
    cluster = cluster.reshape(-1).astype(np.int64)
    shares = []
    for t in ts:
        ia, ib = (ra <= t).astype(float), (rb <= t).astype(float)
        shares.append(
            WithinShare(
                t,
                float(ia.mean()),
                float(ib.mean()),
                float((ib - ia).mean()),
                _cluster_ci(ib - ia, cluster),
            )
        )
    d = rb - ra
    return ResponseComparison(
        start_s=float(start_s),
        runs=len(runs_a),
        completed=(completed[0], completed[1]),
        paired=n,
        only=(completed[0] - in_pairs[0], completed[1] - in_pairs[1]),
        sessions=int(cluster.max()) + 1,
        within=tuple(shares),
        median_s=(float(np.median(ra)), float(np.median(rb))),
        mean_s=(float(ra.mean()), float(rb.mean())),
        mean_diff_s=float(d.mean()),
        mean_diff_ci_s=_cluster_ci(d, cluster),
        median_diff_s=float(np.median(d)),
        b_faster=float(np.mean(d < -SAME_S)),
        same=float(np.mean(np.abs(d) <= SAME_S)),
        b_slower=float(np.mean(d > SAME_S)),
    )


def _lanes(r: RunResult) -> int:
    """Flows per session of the run's web group: ``lanes`` with open pages or a
    page's objects in parallel, else 1."""
    group = r.scenario["traffic"][0]
    laned = group.get("pages") == "open" or bool(group.get("parallel_objects"))
    return int(group.get("lanes", 1)) if laned else 1


_RATE_UNITS = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def _rate_bps(rate: str) -> float:
    """A rate string (``"90Mbps"``) in bit/s; the engine has already
    validated it when this is called."""
    for unit in sorted(_RATE_UNITS, key=len, reverse=True):
        if rate.strip().endswith(unit):
            return float(rate.strip()[: -len(unit)]) * _RATE_UNITS[unit]
    raise _core.ScenarioError("traffic[0].offered_load", f"not a rate: {rate!r}")
