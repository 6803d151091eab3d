"""ST-RED's detector on ns-2.35's own RED average: thesis section 5.5.1 (docs/fidelity.md, item 4).

Before its first adjustment ST-RED (fig. 5.3 of ``003_b277268f444f7691.txt``) is ARED(20, 60)
whose adaptive rule keeps no bounds on max_p. ns-2.35 ships that ARED (``Queue/RED`` with
``adaptive_``; ``bottom_`` and ``top_`` set out of reach) but not ST-RED, so this script runs
section 5.5.1 in ns-2 as the cross-check study does (``crosscheck.THESIS_551``: 100 forward and
20 reverse FTP flows, 10 Mbit/s, 540-byte packets, d = 100 -> 900 -> 100 ms), traces RED's
average ``ave_`` at every arrival and runs fig. 5.3's detector over the trace, open loop: the
thresholds stay at 20 / 60 (q_ref 40), with w_q 5e-5, phi_1 1, phi_2 0.25, gamma 0.7 and section
5.5's h_s = 0.03 / sqrt(3). Each detection is reported; the first one is where ns-2's ST-RED
would first raise (large variance) or lower (small variance) its thresholds.

Beside it, aqmlab's ST-RED on the same set-up (closed loop, ns-2's TCP and RED keys,
``ST_RED_NS2``): its adjustments, and the same statistic (sigma / q_ref) from its own sigma^2 while
max_th is 60.

The return (``--steady K``): after adjustments whose factors multiply to K, ST-RED is ARED with
min_th 20 K, max_th 60 K, w_q 5e-5 / K and an interval of 0.5 K s (eq. 5.1-5.2, section 5.4.1).
For the thresholds to come back down, fig. 5.3 must find a small variance once d is back at
100 ms, i.e. sigma < h_s q_ref. ``--steady K`` runs that ARED in ns-2.35 and aqmlab at a steady
d = 100 ms and prints sigma / q_ref per 100 s, open loop (aqmlab's ST-RED with its detector
switched off: h_s 1e-9, h_l 1e6).

The closed loop (``--closed-loop``): ST-RED inside ns-2. ns-2.35 has no ST-RED, so a Tcl
procedure of ours runs fig. 5.3 beside each of the two bottleneck queues' ARED (forward and
reverse, as aqmlab's dumbbell runs ST-RED in both directions). Every ``dt`` (5 ms) it reads RED's
average ``ave_`` and the queue monitor's arrival count, and applies eq. 5.5 and 5.7 once per
arrival since the last sample (the weight 1 - (1 - phi w_q)^n), at the average just read. On a
detection it computes k (eq. 5.12 / 5.14) and sets the new thresholds, ``q_weight_`` and
``interval_`` (eq. 5.1-5.2, section 5.4.1) at once: the thresholds in force (``thresh_queue_``,
``maxthresh_queue_``, bytes) gate RED's drops and steer the adaptive rule. The slope and
intercept of RED's lines are computed only in ``reset``, which also drops whatever is queued,
zeroes the average and sets max_p to 1 / ``linterm_``; so the procedure resets the queue the next
time it finds it empty and restores the average and ``cur_max_p_`` (nothing is dropped; until
then the lines are those of the old thresholds). The gentle line stays based on ``linterm_``
(aqmlab's ``gentle_base = "initial"``). The longest such wait is reported.

Usage (needs ``ns``, Debian's ``ns2`` package: ``make ns2``)::

    python tests/ns2/st_red_551.py [--seeds 1 2 3] [--queue average|instantaneous]
    python tests/ns2/st_red_551.py --steady 1 2.636 [--seeds 1 2 3] [--duration 600]
    python tests/ns2/st_red_551.py --closed-loop [--seeds 1 2]
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import itertools

import crosscheck as cc

Q_REF = 40.0
W_Q = 5e-5
H_S = 0.03 / math.sqrt(3)
GAMMA = 0.7
H_L = GAMMA / math.sqrt(3)
# ns-2's RED as ST-RED's RED (ARED's keys but `bounds`: fig. 5.3 gives max_p no bounds).
ST_RED_NS2 = 'gentle_base = "initial"\nidle_decay = "ns2"\nadapt = "arrival"\n'
PHASES = tuple(range(0, 2001, 200))
DELAYS_MS = (100, 300, 500, 700, 900, 700, 500, 300, 100, 100)


@dataclass
class Detection:
    """Fig. 5.3's detector over one trace: sigma / q_ref per window (median, minimum) and the
    detections."""

    sigma_median: list[float] = field(default_factory=list)
    sigma_min: list[float] = field(default_factory=list)
    detections: list[tuple[float, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Risen:
    """ST-RED's RED after adjustments whose factors multiply to k (eq. 5.1-5.2, section 5.4.1)."""

    k: float

    @property
    def min_th(self) -> float:
        return 20.0 * self.k

    @property
    def max_th(self) -> float:
        return 60.0 * self.k

    @property
    def q_ref(self) -> float:
        return Q_REF * self.k

    @property
    def w_q(self) -> float:
        return W_Q / self.k

    @property
    def interval_s(self) -> float:
        return 0.5 * self.k


def steady_case(duration_s: float) -> cc.Case:
    """The study's set-up at a steady d = 100 ms (bottleneck one-way delay 20 ms)."""
    return replace(cc.THESIS_551, duration_s=duration_s, schedule=(), phases=())


def ns2_trace(
    seed: int, queue: str, risen: Risen | None = None, duration_s: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """RED's average (or the queue at arrivals) in ns-2.35, mean-size packets, per arrival.

    Without ``risen``: the study (d = 100 -> 900 -> 100 ms) with ARED(20, 60). With it: ARED at
    the risen parameters and a steady d = 100 ms for ``duration_s``.
    """
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    var = "ave_" if queue == "average" else "curq_"
    # Out of reach: the reverse link's average stays under the target band while d is long, and
    # its max_p falls by 0.9 every 0.5 s; a floor of 1e-12 is reached by 600 s and cut its climb
    # back after the return from about 280 s to 50 (docs/fidelity.md, item 4).
    unbounded = "Queue/RED set bottom_ 1e-300\nQueue/RED set top_ 1e12\n"
    if risen is None:
        tcl = cc.THESIS_551.tcl(seed)
        tcl = tcl.replace(
            "Queue/RED set interval_ 0.5\n", f"Queue/RED set interval_ 0.5\n{unbounded}"
        )
    else:
        tcl = steady_case(duration_s or 600.0).tcl(seed)
        for old, new in (
            ("thresh_ 20\n", f"thresh_ {risen.min_th!r}\n"),
            ("maxthresh_ 60\n", f"maxthresh_ {risen.max_th!r}\n"),
            ("q_weight_ 0.00005\n", f"q_weight_ {risen.w_q!r}\n"),
            ("interval_ 0.5\n", f"interval_ {risen.interval_s!r}\n{unbounded}"),
        ):
            if f"Queue/RED set {old}" not in tcl:
                raise RuntimeError(f"crosscheck's script has no 'Queue/RED set {old.strip()}'")
            tcl = tcl.replace(f"Queue/RED set {old}", f"Queue/RED set {new}")
    tcl = tcl.replace(
        'set qm [$ns monitor-queue $r1 $r2 ""]\n',
        'set qm [$ns monitor-queue $r1 $r2 ""]\nset redq [[$ns link $r1 $r2] queue]\n'
        f"set tf [open red.tr w]\n$redq trace {var}\n$redq attach $tf\n",
    )
    tag = "a" if queue == "average" else "Q"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "case.tcl").write_text(tcl)
        subprocess.run(
            [ns, "case.tcl"], capture_output=True, check=True, cwd=tmp, timeout=3600, text=True
        )
        times: list[float] = []
        values: list[float] = []
        with open(Path(tmp) / "red.tr") as f:
            for line in f:
                if line[0] == tag:
                    _, t, v = line.split()
                    times.append(float(t))
                    values.append(float(v) / cc.NS2_PAYLOAD)
    return np.array(times), np.array(values)


# Fig. 5.3 beside ns-2's RED (our own Tcl; see the module doc). @NAME@-style fields are filled in
# by :func:`closed_loop_tcl`; st($q,...) holds one queue's detector.
CLOSED_LOOP_TCL = r"""
set st_dt @DT@
set st_f [open st.tr w]
proc st_derive {q} {
  global st
  set qref [expr {0.5 * ($st($q,minth) + $st($q,maxth))}]
  set st($q,qref) $qref
  set st($q,up2) [expr {pow(@HL@ * $qref, 2)}]
  set st($q,lo2) [expr {pow(@HS@ * $qref, 2)}]
  set st($q,g0) [expr {0.5 * ($st($q,up2) + $st($q,lo2))}]
  set st($q,dlo) [expr {(1.0 - @GAMMA@) * $qref}]
  set st($q,dhi) [expr {(1.0 + @GAMMA@) * $qref}]
  set st($q,a1) $st($q,wq)
  set st($q,a2) [expr {@PHI2@ * $st($q,wq)}]
}
proc st_init {q red mon} {
  global st
  array set st [list $q,red $red $q,mon $mon $q,arr 0 $q,s2 0.0 $q,minth @MINTH@ \
    $q,maxth @MAXTH@ $q,wq @WQ@ $q,iv @IV@ $q,pending 0 $q,next 0.0]
  st_derive $q
  set st($q,g2) $st($q,g0)
}
proc st_set {q now} {
  global st st_f
  set red $st($q,red)
  $red set thresh_ $st($q,minth)
  $red set maxthresh_ $st($q,maxth)
  $red set thresh_queue_ [expr {$st($q,minth) * @MEANPKT@}]
  $red set maxthresh_queue_ [expr {$st($q,maxth) * @MEANPKT@}]
  $red set q_weight_ $st($q,wq)
  $red set interval_ $st($q,iv)
  if {!$st($q,pending)} {
    set st($q,pending) 1
    set st($q,pending_at) $now
  }
  puts $st_f "A $q $now $st($q,maxth)"
}
proc st_reset {q now} {
  global st st_f
  set red $st($q,red)
  set ave [$red set ave_]
  set maxp [$red set cur_max_p_]
  $red reset
  $red set ave_ $ave
  $red set cur_max_p_ $maxp
  set st($q,pending) 0
  puts $st_f "R $q $now [expr {$now - $st($q,pending_at)}]"
}
# The sampler is a coroutine: its frame, made once, holds links to the queues' and monitors'
# bound variables (`instvar`), which read the current value as `$obj set` would at a fraction
# of the cost of a method call, 400 000 times a run.
proc st_loop {} {
  global ns st st_dt st_f
  set sched [$ns set scheduler_]
  foreach q {fwd rev} {
    $st($q,red) instvar [list ave_ ave_$q]
    $st($q,mon) instvar [list parrivals_ arr_$q] [list pkts_ pkts_$q] [list size_ size_$q]
  }
  yield
  while 1 {
    set now [$sched now]
    foreach q {fwd rev} {
      set arr [set arr_$q]
      set n [expr {$arr - $st($q,arr)}]
      set st($q,arr) $arr
      set x [expr {[set ave_$q] / @MEANPKT@}]
      set qref $st($q,qref)
      if {$n > 0 && $x > 0 && $x < 2.0 * $qref} {
        set e2 [expr {($x - $qref) * ($x - $qref)}]
        set s2 [expr {$st($q,s2) + (1.0 - pow(1.0 - $st($q,a1), $n)) * ($e2 - $st($q,s2))}]
        set st($q,s2) $s2
        if {$x > $st($q,dlo) && $x < $st($q,dhi)} {
          set g2 [expr {$st($q,g2) + (1.0 - pow(1.0 - $st($q,a2), $n)) * ($e2 - $st($q,g2))}]
          set st($q,g2) $g2
          set large [expr {$g2 > $st($q,up2) && $s2 > $st($q,up2)}]
          set small [expr {$g2 < $st($q,lo2) && $s2 < $st($q,lo2)}]
          if {($large || $small) && $s2 > 0} {
            set k [expr {sqrt($s2) / (($large ? @HL@ : @HS@) * $qref)}]
            set st($q,minth) [expr {$st($q,minth) * $k}]
            set st($q,maxth) [expr {$st($q,maxth) * $k}]
            set st($q,wq) [expr {min(1.0, $st($q,wq) / $k)}]
            set st($q,iv) [expr {max(0.001, $st($q,iv) * $k)}]
            st_derive $q
            set st($q,g2) $st($q,g0)
            puts $st_f "D $q $now [expr {$large ? "large" : "small"}] $k"
            st_set $q $now
          }
        }
      }
      if {$st($q,pending) && [set pkts_$q] == 0} {
        st_reset $q $now
      }
      if {$now >= $st($q,next)} {
        puts $st_f "S $q $now $st($q,s2) $st($q,qref) $x [set size_$q]"
        set st($q,next) [expr {$st($q,next) + 0.1}]
      }
    }
    $sched at [expr {$now + $st_dt}] "st_sample"
    yield
  }
}
st_init fwd [[$ns link $r1 $r2] queue] $qm
st_init rev [[$ns link $r2 $r1] queue] [$ns monitor-queue $r2 $r1 ""]
coroutine st_sample st_loop
$ns at @DT@ "st_sample"
"""


@dataclass
class ClosedLoop:
    """ST-RED over the study, one seed: the forward queue's threshold steps (time, max_th),
    the reverse queue's, the longest wait (s) for an empty queue to reset ns-2's RED lines after a
    step (forward, reverse; ns-2 only), the forward queue's small-variance detections, and per
    200 s phase the median of sigma / q_ref (at the q_ref in force) and the forward queue's mean
    (mean-size packets)."""

    steps: list[tuple[float, float]]
    reverse_steps: list[tuple[float, float]]
    reset_wait_s: tuple[float, float]
    small: int
    sigma_median: list[float]
    queue_mean: list[float]


def closed_loop_tcl(seed: int, dt: float = 0.005) -> str:
    """The study in ns-2.35 with fig. 5.3 driving both bottleneck queues' ARED."""
    fields = {
        "@DT@": repr(dt),
        "@HL@": repr(H_L),
        "@HS@": repr(H_S),
        "@GAMMA@": repr(GAMMA),
        "@PHI2@": "0.25",
        "@MINTH@": "20.0",
        "@MAXTH@": "60.0",
        "@WQ@": repr(W_Q),
        "@IV@": "0.5",
        "@MEANPKT@": f"{float(cc.NS2_PAYLOAD)!r}",
    }
    driver = CLOSED_LOOP_TCL
    for key, value in fields.items():
        driver = driver.replace(key, value)
    tcl = cc.THESIS_551.tcl(seed)
    monitor = 'set qm [$ns monitor-queue $r1 $r2 ""]\n'
    unbounded = "Queue/RED set bottom_ 1e-300\nQueue/RED set top_ 1e12\n"
    end = f'$ns at {cc.THESIS_551.duration_s} "snap; exit 0"'
    for old, new in (
        (monitor, monitor + driver),
        ("Queue/RED set interval_ 0.5\n", f"Queue/RED set interval_ 0.5\n{unbounded}"),
        (end, end.replace("snap;", "snap; flush $st_f;")),
    ):
        if old not in tcl:
            raise RuntimeError(f"crosscheck's script has no {old.strip()!r}")
        tcl = tcl.replace(old, new)
    return tcl


def ns2_closed_loop(seed: int, dt: float = 0.005) -> ClosedLoop:
    """ST-RED inside ns-2.35 (the Tcl driver) over the study."""
    ns = shutil.which("ns")
    if ns is None:
        raise RuntimeError("ns-2 not found: install Debian's ns2 package (make ns2)")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "case.tcl").write_text(closed_loop_tcl(seed, dt))
        subprocess.run(
            [ns, "case.tcl"], capture_output=True, check=True, cwd=tmp, timeout=3600, text=True
        )
        lines = (Path(tmp) / "st.tr").read_text().splitlines()
    steps: dict[str, list[tuple[float, float]]] = {"fwd": [], "rev": []}
    wait = {"fwd": 0.0, "rev": 0.0}
    small = 0
    rows: list[list[float]] = []
    for line in lines:
        f = line.split()
        if f[0] == "A":
            steps[f[1]].append((float(f[2]), float(f[3])))
        elif f[0] == "R":
            wait[f[1]] = max(wait[f[1]], float(f[3]))
        elif f[0] == "D" and f[1] == "fwd" and f[3] == "small":
            small += 1
        elif f[0] == "S" and f[1] == "fwd":
            rows.append([float(x) for x in f[2:]])
    a = np.array(rows)
    t, s2, q_ref, size = a[:, 0], a[:, 1], a[:, 2], a[:, 4]
    sigma, queue = [], []
    for lo, hi in itertools.pairwise(PHASES):
        m = (t >= lo) & (t < hi)
        sigma.append(float(np.median(np.sqrt(s2[m]) / q_ref[m])))
        queue.append(float(size[m].mean() / cc.NS2_PAYLOAD))
    return ClosedLoop(steps["fwd"], steps["rev"], (wait["fwd"], wait["rev"]), small, sigma, queue)


def aqmlab_closed_loop(seed: int) -> ClosedLoop:
    """aqmlab's ST-RED over the study (both directions), the same figures as
    :func:`ns2_closed_loop`; the reverse queue's steps from the mirrored run (the 20 flows
    forward and the 100 reverse), as params.parquet holds the forward queue's only."""
    import aqmlab

    def run(toml: str) -> tuple[Any, dict[str, tuple[np.ndarray, np.ndarray]]]:
        r = aqmlab.run(toml)
        name = np.array(r.params.column("name").to_pylist())
        t = r.params.column("time_s").to_numpy()
        v = r.params.column("value").to_numpy()
        return r, {n: (t[name == n], v[name == n]) for n in ("max_th", "sigma2", "q_ref")}

    def steps_of(series: tuple[np.ndarray, np.ndarray]) -> list[tuple[float, float]]:
        t, v = series
        return [(float(t[i + 1]), float(v[i + 1])) for i in np.nonzero(np.diff(v))[0].tolist()]

    toml = st_red_toml(seed, "average")
    r, p = run(toml)
    mirrored = toml.replace("flows = 100\n", "flows = @\n").replace("flows = 20\n", "flows = 100\n")
    _, p_rev = run(mirrored.replace("flows = @\n", "flows = 20\n"))
    (s_t, s_v), (q_t, q_v) = p["sigma2"], p["q_ref"]
    table = r.queue
    link = np.array(table.column("link").to_pylist())
    qt = table.column("time_s").to_numpy()
    qb = table.column("queue_bytes").to_numpy()
    sigma, queue = [], []
    for lo, hi in itertools.pairwise(PHASES):
        m = (s_t >= lo) & (s_t < hi)
        # q_ref in force at each sample: the last value reported at or before it.
        ref = q_v[np.searchsorted(q_t, s_t[m], side="right") - 1]
        sigma.append(float(np.median(np.sqrt(s_v[m]) / ref)))
        mq = (link == "bottleneck") & (qt >= lo) & (qt < hi)
        queue.append(float(qb[mq].mean() / cc.NS2_PAYLOAD))
    fwd = steps_of(p["max_th"])
    small = sum(1 for a, b in itertools.pairwise([60.0, *(m for _, m in fwd)]) if b < a)
    return ClosedLoop(fwd, steps_of(p_rev["max_th"]), (0.0, 0.0), small, sigma, queue)


def detect(
    times: np.ndarray, q: np.ndarray, risen: Risen | None = None, window_s: float = 200.0
) -> Detection:
    """Fig. 5.3 (eq. 5.5-5.10) over the samples with fixed thresholds (q_ref 40, or ``risen``'s).

    sigma / q_ref is sampled once a second; its median and minimum are kept per ``window_s``
    (the study's 200 s phases by default).
    """
    q_ref, w_q = (Q_REF, W_Q) if risen is None else (risen.q_ref, risen.w_q)
    up2, lo2 = (H_L * q_ref) ** 2, (H_S * q_ref) ** 2
    g0 = 0.5 * (up2 + lo2)
    s2, g2 = 0.0, g0
    a1, a2 = w_q, 0.25 * w_q
    out = Detection()
    windows = len(DELAYS_MS) if risen is None else max(1, math.ceil(float(times[-1]) / window_s))
    sampled: list[list[float]] = [[] for _ in range(windows)]
    next_sample = 0.0
    d_lo, d_hi = (1 - GAMMA) * q_ref, (1 + GAMMA) * q_ref
    for t, x in zip(times.tolist(), q.tolist(), strict=True):
        if 0.0 < x < 2 * q_ref:
            e2 = (x - q_ref) ** 2
            s2 += a1 * (e2 - s2)
            if d_lo < x < d_hi:
                g2 += a2 * (e2 - g2)
                large = g2 > up2 and s2 > up2
                if large or (g2 < lo2 and s2 < lo2):
                    out.detections.append((t, "large" if large else "small"))
                    g2 = g0
        if t >= next_sample:
            sampled[min(int(t // window_s), windows - 1)].append(math.sqrt(s2) / q_ref)
            next_sample += 1.0
    out.sigma_median = [float(np.median(v)) if v else math.nan for v in sampled]
    out.sigma_min = [float(np.min(v)) if v else math.nan for v in sampled]
    return out


def st_red_toml(
    seed: int, queue: str, risen: Risen | None = None, duration_s: float = 600.0
) -> str:
    """aqmlab's ST-RED on the study's set-up; with ``risen``, at its parameters and a steady
    d = 100 ms with the detector switched off (h_s 1e-9, h_l 1e6): ARED without bounds."""
    if risen is None:
        toml = cc.THESIS_551.toml(seed, cc.NS2_TCP)
        head = f'min_th = 20\nmax_th = 60\nw_q = 5e-5\nh_s = {H_S!r}\ninterval = "0.5s"\n'
    else:
        toml = steady_case(duration_s).toml(seed, cc.NS2_TCP)
        head = (
            f"min_th = {risen.min_th!r}\nmax_th = {risen.max_th!r}\nw_q = {risen.w_q!r}\n"
            f'h_s = 1e-9\nh_l = 1e6\ninterval = "{risen.interval_s!r}s"\n'
        )
    st_red = (
        f'[aqm]\nkind = "st-red"\n{head}mode = "byte"\nwait = true\nempty_gate = true\n'
        f'mean_pkt_size = {cc.NS2_PAYLOAD}\n{ST_RED_NS2}variance_queue = "{queue}"\n'
    )
    return re.sub(r"\[aqm\]\n.*?(?=\[tcp\])", lambda _: st_red, toml, flags=re.S)


def _sigma2_detector_off(toml: str) -> tuple[np.ndarray, np.ndarray]:
    """Run aqmlab's ST-RED with its detector switched off; the times and values of its sigma^2."""
    import aqmlab

    params = aqmlab.run(toml).params
    name = np.array(params.column("name").to_pylist())
    t = params.column("time_s").to_numpy()
    v = params.column("value").to_numpy()
    if len(set(v[name == "max_th"].tolist())) != 1:
        raise RuntimeError("ST-RED adjusted its thresholds with its detector switched off")
    return t[name == "sigma2"], v[name == "sigma2"]


def aqmlab_steady(seed: int, risen: Risen, duration_s: float, window_s: float = 100.0) -> Detection:
    """sigma / q_ref of eq. 5.5 from aqmlab's own sigma^2 at the risen parameters, per window."""
    s_t, s_v = _sigma2_detector_off(st_red_toml(seed, "average", risen, duration_s))
    out = Detection()
    for a in np.arange(0.0, duration_s, window_s):
        m = (s_t >= a) & (s_t < a + window_s)
        r = np.sqrt(s_v[m]) / risen.q_ref
        out.sigma_median.append(float(np.median(r)) if m.any() else math.nan)
        out.sigma_min.append(float(np.min(r)) if m.any() else math.nan)
    return out


def aqmlab_open_loop(seed: int) -> list[float]:
    """sigma / q_ref per phase (median) of aqmlab's ST-RED on the study's set-up with its detector
    switched off (h_s 1e-9, h_l 1e6): ARED(20, 60) without bounds on max_p, fig. 5.3's statistic
    over its own average, open loop as :func:`detect` runs over ns-2's."""
    toml = st_red_toml(seed, "average").replace(f"h_s = {H_S!r}\n", "h_s = 1e-9\nh_l = 1e6\n")
    s_t, s_v = _sigma2_detector_off(toml)
    medians = []
    for a, b in itertools.pairwise(PHASES):
        m = (s_t >= a) & (s_t < b)
        medians.append(float(np.median(np.sqrt(s_v[m]) / Q_REF)) if m.any() else math.nan)
    return medians


def aqmlab_st_red(seed: int, queue: str) -> dict[str, Any]:
    """aqmlab's ST-RED on the study's set-up: max_th's steps, sigma / q_ref per phase."""
    import aqmlab

    toml = st_red_toml(seed, queue)
    params = aqmlab.run(toml).params
    name = np.array(params.column("name").to_pylist())
    t = params.column("time_s").to_numpy()
    v = params.column("value").to_numpy()
    th_t, th_v = t[name == "max_th"], v[name == "max_th"]
    steps = [
        (float(th_t[i + 1]), float(th_v[i + 1])) for i in np.nonzero(np.diff(th_v))[0].tolist()
    ]
    first = steps[0][0] if steps else math.inf
    s_t, s_v = t[name == "sigma2"], v[name == "sigma2"]
    medians = []
    for a, b in itertools.pairwise(PHASES):
        m = (s_t >= a) & (s_t < min(b, first))
        medians.append(float(np.median(np.sqrt(s_v[m]) / Q_REF)) if m.any() else math.nan)
    return {"steps": steps, "sigma_median": medians}


def steady(ks: list[float], seeds: list[int], duration_s: float) -> int:
    """sigma / q_ref per 100 s at a steady 100 ms, ns-2.35 and aqmlab, open loop."""
    windows = math.ceil(duration_s / 100.0)
    head = " | ".join(f"{100 * i}-{100 * (i + 1)} s" for i in range(windows))
    print(f"sigma / q_ref at d = 100 ms, median (minimum) per 100 s; h_s = {H_S:.4f}\n")
    print(f"| K | q_ref | run | {head} | detections |")
    print("|---|---|---|" + "---|" * (windows + 1))
    for k in ks:
        risen = Risen(k)
        for seed in seeds:
            d = detect(*ns2_trace(seed, "average", risen, duration_s), risen, 100.0)
            a = aqmlab_steady(seed, risen, duration_s)
            for run, x in ((f"ns-2.35, seed {seed}", d), (f"aqmlab, seed {seed}", a)):
                cells = " | ".join(
                    f"{m:.3f} ({lo:.3f})" for m, lo in zip(x.sigma_median, x.sigma_min, strict=True)
                )
                dets = ", ".join(f"{t:.0f} {kind}" for t, kind in x.detections) or "none"
                if x is a:
                    dets = "(detector off)"
                print(f"| {k:g} | {risen.q_ref:.1f} | {run} | {cells} | {dets} |", flush=True)
    return 0


def closed_loop(seeds: list[int]) -> int:
    """ST-RED over the study in ns-2.35 (the Tcl driver) and in aqmlab, per seed."""
    head = " | ".join(f"{d} ms" for d in DELAYS_MS)
    print(f"closed loop; h_s = {H_S:.4f}: sigma / q_ref and the forward queue per phase\n")
    print(f"| run | figure | {head} |")
    print("|---|---|" + "---|" * len(DELAYS_MS))
    steps = []
    for seed in seeds:
        for run, c in (
            (f"ns-2.35, seed {seed}", ns2_closed_loop(seed)),
            (f"aqmlab, seed {seed}", aqmlab_closed_loop(seed)),
        ):
            print(
                f"| {run} | sigma / q_ref | "
                + " | ".join(f"{x:.3f}" for x in c.sigma_median)
                + " |"
            )
            print(
                f"| {run} | queue | " + " | ".join(f"{x:.1f}" for x in c.queue_mean) + " |",
                flush=True,
            )
            steps.append((run, c))
    print(
        "\n| run | forward max_th steps (s -> max_th) | reverse | small variances (forward) "
        "| longest wait for ns-2's reset, s (forward / reverse) |"
    )
    print("|---|---|---|---|---|")
    for run, c in steps:
        fwd = ", ".join(f"{t:.0f} -> {m:.1f}" for t, m in c.steps) or "none"
        rev = ", ".join(f"{t:.0f} -> {m:.1f}" for t, m in c.reverse_steps) or "none"
        wait = " / ".join(f"{w:.2f}" for w in c.reset_wait_s)
        print(f"| {run} | {fwd} | {rev} | {c.small} | {wait} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--queue", choices=["average", "instantaneous"], default="average")
    ap.add_argument(
        "--steady",
        type=float,
        nargs="+",
        metavar="K",
        help="ARED at ST-RED's parameters after adjustments multiplying to K, d = 100 ms",
    )
    ap.add_argument("--duration", type=float, default=600.0, help="seconds, with --steady")
    ap.add_argument(
        "--closed-loop", action="store_true", help="ST-RED inside ns-2 (a Tcl driver) and aqmlab's"
    )
    args = ap.parse_args(argv)
    if shutil.which("ns") is None:
        print("error: ns-2 not found: install Debian's ns2 package (make ns2)", file=sys.stderr)
        return 2
    if args.steady:
        if any(k <= 0 for k in args.steady) or args.duration < 100:
            print("error: --steady K must be > 0 and --duration at least 100 s", file=sys.stderr)
            return 2
        return steady(args.steady, args.seeds, args.duration)
    if args.closed_loop:
        return closed_loop(args.seeds)
    head = " | ".join(f"{d} ms" for d in DELAYS_MS)
    print(f"q = {args.queue}; h_s = {H_S:.4f}, h_l = {H_L:.4f} (sigma / q_ref)\n")
    print(f"| run | {head} | detections (s) |")
    print("|---|" + "---|" * (len(DELAYS_MS) + 1))
    for seed in args.seeds:
        d = detect(*ns2_trace(seed, args.queue))
        dets = ", ".join(f"{t:.0f} {k}" for t, k in d.detections) or "none"
        cells = " | ".join(f"{x:.3f}" for x in d.sigma_median)
        print(f"| ns-2.35, seed {seed} (open loop) | {cells} | {dets} |")
        a = aqmlab_st_red(seed, args.queue)
        steps = ", ".join(f"{t:.0f} -> max_th {m:.1f}" for t, m in a["steps"]) or "none"
        cells = " | ".join(f"{x:.3f}" for x in a["sigma_median"])
        print(f"| aqmlab, seed {seed} (ST-RED) | {cells} | {steps} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
