"""The ECN+ paper's RED* experiment with ns-2's WebTraf beside aqmlab's ``http = "webtraf"``.

``000_0675317d310dd341.txt`` runs "the model developed in [11]" (sessions of pages of objects:
ns-2's WebTraf, after Feldmann et al.) and reads, with RED* and ECN at 90 % load, "only about 30%
of flows have response times less than 0.5 sec" (figure 3; docs/fidelity.md, item 7). WebTraf
spends two connections on each object (``ecn_web_webtraf.tcl``): three packets per object that
are not ECN-capable cross the congested queue, where one connection per object has one.

ns-2: ``ecn_web_webtraf.tcl`` with aqmlab's object sizes (its lognormal body and Pareto tail,
mean 7.2 KB, cut into 1460-byte segments: a CDF table for ns-2's Empirical random variable) and
1970 sessions begun with a page at times uniform in 0-5 s, which offer 89.9 Mbit/s on the
1 Gbit/s link (2300: 102.2 Mbit/s, for 105 %). aqmlab: the preset scenario ``ecn-web-000`` with
ns-2's workload (the same sessions, begun the same way, ``first_page = "start"``, objects of
whole segments, ``whole_segments``), ``http = "webtraf"`` and RED* (20 / 60) as ns-2's RED runs
it (``wait``, ``empty_gate``, ``idle_decay = "ns2"``: red.cc's rules, on in ns-2's defaults),
with ns-2's TCP (``crosscheck.NS2_TCP``), its one-way TCP's initial window of two segments
(``windowInit_``) and receive window of 20 (``window_``), and with ``http = "webtraf"`` no FIN
(``teardown = false``: ns-2's one-way TCP has none). Response times run from the request to the
response's last byte at the client (the paper's definition); ns-2's WebTraf records when the
server has the last ACK, so the client's one-way delay back is taken off.

With ``--pages open`` both simulators run open pages (a session's think time from page start to
page start, whether the page has arrived or not: WebTraf's ``interPageOption_ 0``, aqmlab's
``pages = "open"`` with 32 lanes and ``parallel_objects``, a page's objects asked for at once as
WebTraf launches them). They begin as WebTraf's
``create-session`` begins them, with a page at a time uniform in 0-5 s (aqmlab's ``first_page =
"start"``): 1840 sessions then offer 89.5 Mbit/s over 10-40 s on the 1 Gbit/s link, from
110-145 Mbit/s in the first 10 s down to about 80 at 40 s (Pareto think times of infinite
variance keep the pages that follow a common start denser than the stationary rate for tens of
seconds). With ``--start stationary`` ns-2's sessions begin at draws from the think time's
equilibrium residual, as aqmlab's default ``first_page = "residual"``: 2200 sessions offer a flat
87 Mbit/s.

Usage (needs ``ns``: ``make ns2``)::

    python tests/ns2/ecn_web_webtraf.py [--duration 35] [--seed 1 | --seeds 4] \\
        [--pages open [--start stationary]]

ns-2's clients are 140 nodes whose round trips lie 1 ms apart (a session keeps the one it
picked), and ns-2's initial window after a lost SYN is restored at every launch, so that the
one-segment window of RFC 5681 acts on that connection only, as aqmlab's ``syn_loss_cut``
(``--ns2-iw agent`` runs ns-2.35 as it is, where WebTraf's recycled TCP agent keeps it for
every later connection; ecn_web_webtraf.tcl).

At the tipping point one seed says little: with open pages the share within 0.5 s under ECN
spreads over 0.37-0.51 in ns-2 and 0.45-0.51 in aqmlab on seeds 1-4 (40 s runs). ``--seeds N``
runs seeds 1..N in both simulators and prints each seed's share and the means.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import crosscheck as cc  # noqa: E402

TCL = HERE / "ecn_web_webtraf.tcl"
PRESET = HERE.parents[1] / "python/aqmlab/experiments/presets/scenarios/ecn-web-000.toml"
NCLIENT = 140
SESSIONS = {"90%": 1970, "105%": 2300}
# Open pages: the same number of sessions in both simulators, aqmlab's objects rounded up to
# whole segments as WebTraf's (``whole_segments``), so that the two workloads are the same (1840
# sessions begun in 0-5 s: 89.5 Mbit/s on the 1 Gbit/s link over 10-40 s in ns-2, 88.9 in aqmlab).
OPEN_SESSIONS = {"ns2": 1840, "stationary": 2200}
# ns-2's RED (red.cc) beside RED*'s keys: `wait_` (signals spread over 1/p to 2/p arrivals), no
# signal while at most one packet waits (`qlen > 1`), the idle rule of red.cc.
NS2_RED = 'wait=true,empty_gate=true,idle_decay="ns2"'
START = 10.0
# WebTraf's objects per page: ceil(Exponential of mean 2.5), geometric on 1, 2, ... with mean
# 1 / (1 - exp(-1 / 2.5)) = 3.033 (aqmlab's default is 3).
PAGE_OBJECTS = 1 / (1 - math.exp(-1 / 2.5))


@dataclass
class Profile:
    """Responses ended in the measured interval: how many, and the share within 0.5, 1, 2 s."""

    n: int
    within: tuple[float, float, float]
    mbps: float

    def row(self) -> str:
        a, b, c = self.within
        return f"{a:.3f} / {b:.3f} / {c:.3f} ({self.mbps:.1f} Mbit/s)"


def _shares(times: list[float], mbps: float) -> Profile:
    n = len(times)
    if n == 0:
        raise RuntimeError("no response ended in the measured interval")
    w = tuple(sum(1 for t in times if t <= x) / n for x in (0.5, 1.0, 2.0))
    return Profile(n, (w[0], w[1], w[2]), mbps)


def size_table(path: Path, mss: int = 1460) -> float:
    """Write aqmlab's default object-size distribution (docs/scenario.md, ``kind = "web"``: a
    lognormal body of median 1320 bytes and sigma 1.72 spliced at its 93 % quantile to a bounded
    Pareto tail up to 2 MB, continuous in density) as segment counts for ns-2's Empirical random
    variable: lines "k 0 P(object <= k mss)". Returns the mean segment count."""
    from scipy.stats import norm

    median, sigma, tail, top = 1320.0, 1.72, 0.07, 2e6
    mu = math.log(median)
    zc = float(norm.ppf(1 - tail))
    splice = math.exp(mu + sigma * zc)
    r = splice / top
    target = float(norm.pdf(zc)) / (sigma * tail)
    lo, hi = 1e-9, 1.0
    while hi / (1 - r**hi) < target:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid / (1 - r**mid) < target else (lo, mid)
    a = (lo + hi) / 2
    ra = r**a

    def cdf(x: float) -> float:
        if x <= splice:
            return float(norm.cdf((math.log(x) - mu) / sigma))
        return 1 - tail * ((splice / x) ** a - ra) / (1 - ra)

    n = math.ceil(top / mss)
    mean, prev = 0.0, 0.0
    with path.open("w") as f:
        for k in range(1, n + 1):
            c = cdf(k * mss) if k < n else 1.0
            f.write(f"{k} 0 {c:.12f}\n")
            mean += k * (c - prev)
            prev = c
    return mean


def residual_starts(path: Path, n: int, seed: int, think: float = 5.0, shape: float = 1.5) -> None:
    """Write n session start times drawn from the equilibrium residual of a Pareto think time
    (mean ``think``, shape ``shape``; aqmlab's ``WebParams::residual_think``): a session that
    begins with a page at such a time gives page requests stationary from the start."""
    import numpy as np

    k = think * (shape - 1) / shape
    v = 1.0 - np.random.default_rng(seed).random(n)  # survival level in (0, 1]
    x = np.where(
        v > 1 / shape, (1 - v) * shape * k / (shape - 1), k * (shape * v) ** (-1 / (shape - 1))
    )
    path.write_text("".join(f"{t:.6f}\n" for t in x))


def ns2(
    bw: int,
    load: str,
    ecn: bool,
    plus: bool,
    duration: float,
    seed: int = 1,
    pages: str = "closed",
    start: str = "ns2",
    iw: str = "connection",
) -> Profile:
    """ns-2.35's WebTraf run: the response-time profile and the R2-R1 throughput. With open
    pages ``load`` is ignored: the sessions are ``OPEN_SESSIONS[start]``. ``iw``:
    ``"connection"`` restores the initial window at every launch (a lost SYN cuts its own
    connection's window only, as aqmlab's ``syn_loss_cut``); ``"agent"`` runs ns-2 as it is,
    where the cut stays with the recycled TCP agent (ecn_web_webtraf.tcl)."""
    n = OPEN_SESSIONS[start] if pages == "open" else SESSIONS[load]
    with tempfile.TemporaryDirectory() as tmp:
        sizes = Path(tmp) / "sizes.cdf"
        size_table(sizes)
        args = [str(bw), str(n), str(duration), str(int(ecn)), str(int(plus))]
        extra = [pages, iw]
        if pages == "open" and start == "stationary":
            residual_starts(Path(tmp) / "starts.txt", n, seed)
            extra.append(str(Path(tmp) / "starts.txt"))
        out = subprocess.run(
            ["ns", str(TCL), *args, str(seed), str(sizes), *extra],
            capture_output=True,
            text=True,
            check=True,
            timeout=1800,
            cwd=tmp,
        ).stdout
    req: dict[str, float] = {}
    times: list[float] = []
    departed: dict[int, int] = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "req" and f[1] == "+":
            req[f[2]] = float(f[-1])
        elif len(f) >= 9 and f[0] == "resp" and f[1] == "-":
            # The client's last byte: the server's completion less the way back.
            c = int(f[7]) - 3
            back = (4.0 + 70.0 * (c + 0.5) / NCLIENT + 1.0) / 1000
            t = float(f[-1]) - back
            if t >= START and f[2] in req:
                times.append(t - req[f[2]])
        elif len(f) == 4 and f[0] == "bytes":
            departed[round(float(f[1]))] = int(f[2])
    last = max(departed)
    mbps = (departed[last] - departed[int(START)]) * 8 / (last - START) / 1e6
    return _shares(times, mbps)


def aqmlab_run(
    bw: int,
    load: str,
    ecn: bool,
    plus: bool,
    duration: float,
    http: str = "webtraf",
    seed: int = 1,
    pages: str = "closed",
    start: str = "ns2",
    extra: tuple[str, ...] = (),
) -> Profile:
    """aqmlab's preset with RED* as ns-2's RED runs it (``NS2_RED``) and ns-2's TCP
    (``crosscheck.NS2_TCP``, its initial and receive windows), with ns-2's workload: its number
    of sessions (``SESSIONS[load]``, or ``OPEN_SESSIONS[start]`` with open pages), objects of
    whole segments, sessions begun as ns-2's (``start``), a page's objects asked for at gaps of
    50 ms on average as WebTraf's ``interObj``, each on a lane of its own (``parallel_objects``,
    ``object_gap``, 32 lanes); with ``http = "webtraf"`` no closing
    packets (``teardown = false``), as ns-2's one-way TCP. ``extra``: more ``--set``
    overrides."""
    import aqmlab

    onoff = "true" if ecn else "false"
    n = OPEN_SESSIONS[start] if pages == "open" else SESSIONS[load]
    load_keys = [
        f"traffic[0].sessions={n}",
        f"traffic[0].objects={PAGE_OBJECTS}",
        "traffic[0].whole_segments=true",
        "traffic[0].lanes=32",
        "traffic[0].parallel_objects=true",
        'traffic[0].object_gap="50ms"',
    ]
    if start == "ns2":
        load_keys += ['traffic[0].first_page="start"', 'traffic[0].start={uniform=["0s","5s"]}']
    if http == "webtraf":
        load_keys.append("traffic[0].teardown=false")  # ns-2's one-way TCP has no FIN
    r = aqmlab.run(
        PRESET,
        overrides=[
            'aqm={kind="red",min_th=20,max_th=60,max_p=0.1,w_q=0.002,gentle=false,'
            f'above_max="mark",{NS2_RED},ecn={onoff}}}',
            f"tcp.ecn={onoff}",
            f"tcp.ecn_plus={'true' if plus else 'false'}",
            "tcp.initial_cwnd=2",
            "tcp.rwnd=20",
            f"duration={duration}s",
            f"metrics.start={START}s",
            f'traffic[0].http="{http}"',
            f'topology.bottleneck_rate="{bw}Mbps"',
            f"seed={seed}",
            f'traffic[0].pages="{pages}"',
            *load_keys,
            *(f"tcp.{k}" for k in cc.NS2_TCP),
            *extra,
        ],
        unset=["traffic[0].offered_load"],
    )
    rt = r.responses.column("response_time_s").to_pylist()
    ends = r.responses.column("end_s").to_pylist()
    times = [t for t, e in zip(rt, ends, strict=True) if e >= START]
    return _shares(times, r.summary["bottleneck"]["throughput_bps"] / 1e6)


CASES = [
    ("uncongested, 90 %", 1000, "90%", False, False),
    ("no ECN, 90 %", 100, "90%", False, False),
    ("ECN, 90 %", 100, "90%", True, False),
    ("ECN+, 90 %", 100, "90%", True, True),
    ("ECN, 105 %", 100, "105%", True, False),
    ("ECN+, 105 %", 100, "105%", True, True),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=35.0, help="seconds (measured from 10 s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=0, help="run seeds 1..N and print the means")
    ap.add_argument("--pages", choices=["closed", "open"], default="closed")
    ap.add_argument(
        "--start",
        choices=["ns2", "stationary"],
        default="ns2",
        help="open pages: sessions begin with a page in 0-5 s (ns2) or at stationary times",
    )
    ap.add_argument(
        "--ns2-iw",
        choices=["connection", "agent"],
        default="connection",
        help="ns-2's window after a lost SYN: on that connection only, or kept by the recycled "
        "TCP agent as ns-2.35 does",
    )
    a = ap.parse_args(argv)
    if a.duration <= START + 1:
        ap.error(f"--duration {a.duration}: must exceed {START + 1:g} s")
    if a.start != "ns2" and a.pages != "open":
        ap.error("--start applies to --pages open only")
    if a.seeds < 0 or a.seeds > 100:
        ap.error(f"--seeds {a.seeds}: must be in 1..100")
    seeds = list(range(1, a.seeds + 1)) if a.seeds else [a.seed]
    cases = [c for c in CASES if a.pages == "closed" or c[2] == "90%"]
    runs = [(c, s) for c in cases for s in seeds]
    with ThreadPoolExecutor(max_workers=2) as pool:
        theirs = list(
            pool.map(
                lambda r: ns2(
                    r[0][1], r[0][2], r[0][3], r[0][4], a.duration, r[1], a.pages, a.start, a.ns2_iw
                ),
                runs,
            )
        )
    what = f"open pages, {a.start} start" if a.pages == "open" else "closed pages"
    print(f"share of responses within 0.5 / 1 / 2 s (throughput), RED* 20 / 60, {what}")
    print(f"{'':20} {'ns-2.35 WebTraf':36} {'aqmlab webtraf':36} aqmlab 1.0")
    for i, c in enumerate(cases):
        rows: list[tuple[Profile, Profile, Profile]] = []
        for j, s in enumerate(seeds):
            run = (c[1], c[2], c[3], c[4], a.duration)
            ours = aqmlab_run(*run, seed=s, pages=a.pages, start=a.start)
            one = aqmlab_run(*run, http="1.0", seed=s, pages=a.pages, start=a.start)
            rows.append((theirs[i * len(seeds) + j], ours, one))
            label = c[0] if len(seeds) == 1 else f"{c[0]}, seed {s}"
            print(f"{label:20} {rows[-1][0].row():36} {ours.row():36} {one.row()}")
        if len(seeds) > 1:
            means = [_mean([r[k] for r in rows]) for k in range(3)]
            print(f"{c[0] + ', mean':20} {means[0].row():36} {means[1].row():36} {means[2].row()}")
    return 0


def _mean(profiles: list[Profile]) -> Profile:
    """The seeds' mean profile (shares and throughput averaged, responses summed)."""
    k = len(profiles)
    w = [sum(p.within[i] for p in profiles) / k for i in range(3)]
    return Profile(
        sum(p.n for p in profiles), (w[0], w[1], w[2]), sum(p.mbps for p in profiles) / k
    )


if __name__ == "__main__":
    sys.exit(main())
