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

#: Time batches of the interval of a single pair of runs (batch means).
BATCHES = 10


@dataclass(frozen=True)
class WithinShare:
    """The share of the responses that took at most ``t_s`` seconds in each run, the difference
    b - a and the half-width of its 95 % interval. Taken over the responses begun from the
    comparison's start to ``t_s`` before the end, completed in either run: one that a run did
    not complete by its end took it more than ``t_s``."""

    t_s: float
    #: Responses the share is taken over (summed over the pairs of runs).
    n: int
    a: float
    b: float
    diff: float
    ci: float


@dataclass(frozen=True)
class ResponseComparison:
    """Runs of one web workload compared response by response (:func:`compare_responses`).
    ``a`` / ``b`` pairs are in the order the runs were given; differences are b - a.
    Response-time figures are in seconds and taken over the pairs. With several pairs of runs
    (seeds), shares and means are the means over the seeds of each seed's figure, medians are
    taken over the pooled pairs."""

    start_s: float
    #: The earliest end of the runs, seconds.
    end_s: float
    #: Pairs of runs (seeds).
    runs: int
    #: What the intervals are taken over: "seeds" (several pairs of runs) or "time batches".
    interval: str
    #: Responses each side completed that began at or after ``start_s``.
    completed: tuple[int, int]
    #: Of those, the ones both sides completed (the pairs), and the ones only a / only b did.
    paired: int
    only: tuple[int, int]
    #: Sessions the pairs come from, counted per pair of runs.
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

    def note(self) -> str:
        """One sentence: what the figures are taken over, and what the intervals are."""
        runs = "both runs" if self.runs == 1 else f"both runs of each of {self.runs} seeds"
        over = (
            f"over the {self.runs} seeds (Student's t)"
            if self.interval == "seeds"
            else f"over {BATCHES} time batches of the one pair of runs (batch means; "
            "give a pair per seed for the spread between runs)"
        )
        return (
            f"{self.paired} responses completed in {runs}, from {self.sessions} sessions; "
            f"95 % intervals {over}"
        )

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
                    f"within {w.t_s:g} s (begun by {self.end_s - w.t_s:g} s)",
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
                "b faster / as fast / slower (pairs)",
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


def _t_ci(values: Sequence[float]) -> float:
    """Half-width of the 95 % Student-t interval of the mean of independent ``values`` (NaN
    with fewer than two)."""
    from aqmlab.report.tables import t975

    v = np.asarray([x for x in values if not math.isnan(x)], dtype=float)
    if len(v) < 2:
        return float("nan")
    return t975(len(v) - 1) * float(np.std(v, ddof=1)) / math.sqrt(len(v))


def _batch_ci(
    d: npt.NDArray[np.float64], t: npt.NDArray[np.float64], lo: float, hi: float
) -> float:
    """The batch-means interval of the mean of ``d``: the responses are cut by their start
    times ``t`` into :data:`BATCHES` equal spans of [lo, hi], and the spans' means taken as
    independent (NaN with fewer than two non-empty spans)."""
    edges = np.linspace(lo, hi, BATCHES + 1)
    which = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, BATCHES - 1)
    means = [float(d[which == i].mean()) for i in range(BATCHES) if np.any(which == i)]
    return _t_ci(means)


@dataclass
class _Side:
    """One pair of runs, reduced to what the comparison needs."""

    end: float
    completed: tuple[int, int]
    in_pairs: tuple[int, int]
    sessions: int
    # The pairs: start (a's), response times.
    start: npt.NDArray[np.float64]
    ra: npt.NDArray[np.float64]
    rb: npt.NDArray[np.float64]
    # Every response completed in either run: its start, and its response time in each run
    # (NaN where the run did not complete it).
    u_start: npt.NDArray[np.float64]
    u_ra: npt.NDArray[np.float64]
    u_rb: npt.NDArray[np.float64]


def _reduce(a: RunResult, b: RunResult, start_s: float) -> _Side:
    p = paired_responses(a, b)  # checks the workload
    sa = p.column("start_s_a").to_numpy()
    sb = p.column("start_s_b").to_numpy()
    keep = (sa >= start_s) & (sb >= start_s)
    end = min(float(r.summary.get("duration_s", math.inf)) for r in (a, b))
    if not math.isfinite(end):
        end = max(float(np.max(r.responses.column("end_s").to_numpy())) for r in (a, b))
    cols = [*RESPONSE_KEY, "start_s", "response_time_s"]
    left, right = (r.responses.select(cols) for r in (a, b))
    u = left.join(
        right,
        keys=list(RESPONSE_KEY),
        join_type="full outer",
        left_suffix="_a",
        right_suffix="_b",
    )

    def col(name: str) -> npt.NDArray[np.float64]:
        return np.asarray(u.column(name).to_numpy(zero_copy_only=False), dtype=float)

    u_sa, u_sb = col("start_s_a"), col("start_s_b")
    # A response both completed counts if both its starts are from start_s; one that one run
    # completed, if that run's start is.
    u_start = np.where(np.isnan(u_sa), u_sb, np.where(np.isnan(u_sb), u_sa, np.fmax(u_sa, u_sb)))
    u_first = np.where(np.isnan(u_sa), u_sb, np.where(np.isnan(u_sb), u_sa, np.fmin(u_sa, u_sb)))
    u_keep = u_first >= start_s
    key = np.stack(
        [p.column("group").to_numpy()[keep], p.column("session").to_numpy()[keep]], axis=1
    )
    return _Side(
        end=end,
        completed=(
            int(np.sum(a.responses.column("start_s").to_numpy() >= start_s)),
            int(np.sum(b.responses.column("start_s").to_numpy() >= start_s)),
        ),
        in_pairs=(int(np.sum(sa >= start_s)), int(np.sum(sb >= start_s))),
        sessions=len(np.unique(key, axis=0)) if len(key) else 0,
        start=sa[keep],
        ra=p.column("response_time_s_a").to_numpy()[keep],
        rb=p.column("response_time_s_b").to_numpy()[keep],
        u_start=u_start[u_keep],
        u_ra=col("response_time_s_a")[u_keep],
        u_rb=col("response_time_s_b")[u_keep],
    )


def compare_responses(
    a: RunResult | Sequence[RunResult],
    b: RunResult | Sequence[RunResult],
    within: Sequence[float] = WITHIN_S,
    start_s: float | None = None,
) -> ResponseComparison:
    """Compare two runs of one web workload response by response; or several such pairs, one
    per seed (``a`` and ``b`` lists of runs, ``a[i]`` paired with ``b[i]``).

    The runs of a pair should be of one scenario and seed that differ in the
    network (:func:`paired_responses`, which this calls: ``ValueError`` if they
    are of two workloads). Responses count if they began at or after
    ``start_s`` (default: the latest of the runs' measurement starts).

    - The share within ``t`` seconds is taken over every response begun from
      ``start_s`` to ``t`` before the end that either run completed: one a
      run did not complete by its end took it more than ``t``. (Over the
      pairs alone the slow responses begun near the end, which one run did
      not complete, would drop out of the comparison.)
    - Response times and the shares of faster / slower are taken over the
      pairs, the responses both runs completed.

    The 95 % intervals: with several pairs of runs, Student's t over the
    seeds' own figures (the runs are the independent replications; a run's
    responses are not independent, as they share one bottleneck's history).
    With one pair, batch means over :data:`BATCHES` spans of start times,
    which does not see the spread between runs: give a pair per seed for
    that. Raises ``ValueError`` for a ``within`` time that is not positive,
    lists of two lengths, or when no response is paired.
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
    sides = [_reduce(x, y, start_s) for x, y in zip(runs_a, runs_b, strict=True)]
    n = sum(len(s.ra) for s in sides)
    if n == 0:
        raise ValueError(
            f"no response began at or after {start_s:g} s and was completed in both runs"
        )
    end = min(s.end for s in sides)
    seeds = len(sides) > 1

    def summed(
        per: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
        hi: float,
    ) -> tuple[float, float]:
        """The mean of the values and its interval: per seed (d, start) arrays."""
        nonempty = [(d, t) for d, t in per if len(d)]
        if not nonempty:
            return float("nan"), float("nan")
        if seeds:
            means = [float(d.mean()) for d, _ in nonempty]
            return float(np.mean(means)), _t_ci(means)
        d, t = nonempty[0]
        return float(d.mean()), _batch_ci(d, t, start_s, hi)

    def seed_mean(per: list[npt.NDArray[np.float64]]) -> float:
        vals = [float(x.mean()) for x in per if len(x)]
        return float(np.mean(vals)) if vals else float("nan")

    shares = []
    for t in ts:
        ia, ib, dd = [], [], []
        for s in sides:
            ok = s.u_start <= s.end - t
            wa = (s.u_ra[ok] <= t).astype(float)  # NaN (not completed) compares False
            wb = (s.u_rb[ok] <= t).astype(float)
            ia.append(wa)
            ib.append(wb)
            dd.append((wb - wa, s.u_start[ok]))
        diff, ci = summed(dd, end - t)
        shares.append(
            WithinShare(t, sum(len(x) for x in ia), seed_mean(ia), seed_mean(ib), diff, ci)
        )
    mean_diff, mean_ci = summed([(s.rb - s.ra, s.start) for s in sides], end)
    ra = np.concatenate([s.ra for s in sides])
    rb = np.concatenate([s.rb for s in sides])
    d = rb - ra
    return ResponseComparison(
        start_s=float(start_s),
        end_s=end,
        runs=len(sides),
        interval="seeds" if seeds else "time batches",
        completed=(sum(s.completed[0] for s in sides), sum(s.completed[1] for s in sides)),
        paired=n,
        only=(
            sum(s.completed[0] - s.in_pairs[0] for s in sides),
            sum(s.completed[1] - s.in_pairs[1] for s in sides),
        ),
        sessions=sum(s.sessions for s in sides),
        within=tuple(shares),
        median_s=(float(np.median(ra)), float(np.median(rb))),
        mean_s=(seed_mean([s.ra for s in sides]), seed_mean([s.rb for s in sides])),
        mean_diff_s=mean_diff,
        mean_diff_ci_s=mean_ci,
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
