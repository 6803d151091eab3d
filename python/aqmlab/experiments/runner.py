"""The sweep: run every point of an experiment into an output folder.

:func:`sweep` prepares the folder (a new one, an earlier sweep replaced, or
with ``resume`` the earlier one continued), writes ``experiment.json``,
runs the points that are not complete (on the local pool or a Dask
cluster), records failures, and finally writes ``summary.parquet`` from
the point folders.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from aqmlab import results
from aqmlab.experiments import store
from aqmlab.experiments.points import Point, distinct
from aqmlab.experiments.pool import Task
from aqmlab.experiments.progress import SweepProgress
from aqmlab.experiments.spec import Experiment

__all__ = [
    "SweepError",
    "SweepOutcome",
    "check_dir",
    "default_jobs",
    "engine_speed",
    "estimate_wall",
    "prepare_dir",
    "sweep",
    "sweep_many",
]


class SweepError(Exception):
    """The sweep cannot start (a bad output folder, no cluster)."""


@dataclass
class SweepOutcome:
    out: Path
    total: int
    ran: int
    skipped: int
    failures: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0
    removed_stale: int = 0
    summary_path: Path | None = None
    #: Sum of the engine's wall time of the points run now (their wall_time_s).
    engine_s: float = 0.0
    #: Sum of the points' whole time in their workers (engine, conversion, writing).
    busy_s: float = 0.0
    #: Workers used (local processes; 0 when unknown, on a cluster).
    workers: int = 0
    #: Wall seconds from the first point handed out to the last one back.
    run_s: float = 0.0

    def _repr_html_(self) -> str:
        """How the sweep shows itself in Jupyter: its folder and counts, one row per point
        (scheme, factors, seed, the bottleneck's figures) and the queues of its first points
        (inline PNG; :mod:`aqmlab._html`)."""
        from aqmlab._html import sweep_html

        failed = f", {len(self.failures)} failed" if self.failures else ""
        counts = f"{self.total} points: {self.ran} run, {self.skipped} already done{failed}"
        return sweep_html(self.out, counts)


def default_jobs() -> int:
    """Every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (not Linux)
        return max(1, os.cpu_count() or 1)


_CALIBRATION = """
duration = "60s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
buffer = 200
[aqm]
kind = "red"
[tcp]
packet_size = 500
[[traffic]]
kind = "bulk"
flows = 30
start = { uniform = ["0s", "2s"] }
"""

_speed_cache: dict[str, float] = {}


def engine_speed() -> tuple[float, float]:
    """(engine events per wall second, wall seconds of one point's overhead:
    building the result and writing its folder), measured now on this
    machine with a short built-in scenario (a 60 s, 10 Mbps RED dumbbell,
    about 260 000 events)."""
    if "eps" not in _speed_cache:
        from aqmlab import api

        r = api.run(_CALIBRATION)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            r.save(Path(d) / "run")
        write_s = time.perf_counter() - t0
        events = float(r.summary.get("events", 0))
        wall = max(float(r.summary.get("wall_time_s", 0.0)), 1e-6)
        _speed_cache["eps"] = events / wall
        _speed_cache["overhead"] = write_s
    return _speed_cache["eps"], _speed_cache["overhead"]


def estimate_wall(points: Sequence[Point], jobs: int) -> tuple[float, float]:
    """(estimated wall seconds on ``jobs`` workers, CPU seconds in all) of
    running ``points``: each point's estimated events over the engine's
    measured speed plus the per-point overhead; the points are spread over
    the workers longest first (the order the runner uses)."""
    eps, overhead = engine_speed()
    costs = sorted((p.est_events / eps + overhead for p in points), reverse=True)
    loads = [0.0] * max(1, min(jobs, len(costs) or 1))
    for c in costs:
        i = loads.index(min(loads))
        loads[i] += c
    return max(loads), sum(costs)


def check_dir(out: Path, name: str | None = None) -> None:
    """Raise :class:`SweepError` if ``out`` may not be written: it is not a
    directory, or a non-empty one that is not a sweep's, or (with ``name``)
    the sweep of another experiment."""
    if out.exists() and not out.is_dir():
        raise SweepError(f"{out}: exists and is not a directory")
    if (
        out.is_dir()
        and any(not _leftover(e) for e in out.iterdir())
        and not store.is_sweep_dir(out)
    ):
        raise SweepError(
            f"{out}: exists and is not an aqmlab sweep folder (no {store.EXPERIMENT_JSON}); "
            "refusing to write into it"
        )
    if store.is_sweep_dir(out):
        other = _experiment_name(out)
        if name is not None and other is not None and other != name:
            raise SweepError(
                f"{out}: holds the sweep of experiment {other!r}, not {name!r}; "
                "choose another --out (or remove it)"
            )


def _leftover(entry: Path) -> bool:
    """Whether ``entry`` is the temporary file of a write that a killed
    writer left (``aqmlab._atomic.tmp_name``: ``.NAME.tmp-PID``)."""
    return re.fullmatch(r"\..+\.tmp-\d+", entry.name) is not None and entry.is_file()


def prepare_dir(out: Path, resume: bool, name: str | None = None) -> str:
    """Make ``out`` ready (after :func:`check_dir`); return what was done
    ("new", "replaced", "resumed")."""
    check_dir(out, name)
    if store.is_sweep_dir(out):
        if resume:
            store.clean_partial(out)
            return "resumed"
        store.clear(out)
        return "replaced"
    out.mkdir(parents=True, exist_ok=True)
    for e in out.iterdir():
        if _leftover(e):
            # A writer killed before its experiment.json was in place.
            e.unlink()
    return "new"


def _experiment_name(out: Path) -> str | None:
    import json

    try:
        doc = json.loads((out / store.EXPERIMENT_JSON).read_text(encoding="utf-8"))
        name = doc["experiment"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return name if isinstance(name, str) else None


def experiment_json(
    exp: Experiment, points: Sequence[Point], command: list[str] | None
) -> dict[str, Any]:
    from aqmlab import _core
    from aqmlab._engine import _version

    return {
        **exp.doc,
        "command": command,
        "versions": {
            "aqmlab": _version(),
            "engine": _core.ENGINE_VERSION,
            "python": sys.version.split()[0],
        },
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": exp.quick,
        "experiment_file": str(exp.path),
        "scenario_file": str(exp.scenario_path),
        "points": [{**p.info(), "error": p.error} if p.error else p.info() for p in points],
    }


def point_info(group: Sequence[Point]) -> dict[str, Any]:
    """point.json's content (less "status") for the points of one id: the
    first one's, and the others (identical scenarios) under "also"."""
    info = group[0].info()
    if len(group) > 1:
        info["also"] = [
            {"scheme": p.scheme, "factors": p.factors, "seed": p.seed} for p in group[1:]
        ]
    return info


class _Book:
    """Records one experiment's outcomes in its folder."""

    def __init__(self, out: Path, infos: dict[str, dict[str, Any]]) -> None:
        self.out, self.infos = out, infos
        self.failures: dict[str, str] = {}
        self.engine_s = 0.0
        self.busy_s = 0.0

    def done(self, pid: str, wall_s: float, busy_s: float) -> None:
        store.clear_failed(self.out, pid)
        self.failures.pop(pid, None)
        self.engine_s += wall_s
        self.busy_s += max(busy_s, wall_s)

    def failed(self, pid: str, error: str) -> None:
        store.write_failed(self.out, self.infos[pid], error)
        self.failures[pid] = error


class _Router:
    """The runners' listener: each outcome to its experiment's book, and
    everything to the display."""

    def __init__(self, show: SweepProgress) -> None:
        self.show = show
        self.route: dict[str, tuple[_Book, str]] = {}

    def started(self, task: Task) -> None:
        self.show.started(task)

    def progress(self, key: str, sim_s: float) -> None:
        self.show.progress(key, sim_s)

    def requeued(self, key: str) -> None:
        self.show.requeued(key)

    def done(self, key: str, wall_s: float, busy_s: float) -> None:
        book, pid = self.route[key]
        book.done(pid, wall_s, busy_s)
        self.show.done(key, wall_s, busy_s)

    def failed(self, key: str, error: str) -> None:
        book, pid = self.route[key]
        book.failed(pid, error)
        self.show.failed(key, error)

    def tick(self) -> None:
        self.show.tick()


@dataclass
class _Job:
    exp: Experiment
    points: Sequence[Point]
    out: Path
    book: _Book
    todo: list[Task]
    total: int
    skipped: int
    unresolved: int
    removed: int


def _prepare(
    index: int,
    exp: Experiment,
    points: Sequence[Point],
    out: Path,
    resume: bool,
    command: list[str] | None,
    several: bool,
) -> _Job:
    prepare_dir(out, resume, exp.name)
    store.write_json_atomic(out / store.EXPERIMENT_JSON, experiment_json(exp, points, command))
    groups = distinct(points)
    infos = {pid: point_info(g) for pid, g in groups.items()}
    removed = store.remove_stale(out, groups) if resume else 0
    book = _Book(out, infos)
    todo: list[Task] = []
    skipped = unresolved = 0
    for pid, g in groups.items():
        p = g[0]
        if p.scenario is None:
            book.failed(pid, p.error or "did not resolve")
            unresolved += 1
            continue
        if resume and store.is_complete(out, pid):
            skipped += 1
            store.clear_failed(out, pid)
            continue
        label = " | ".join(q.label for q in g)
        todo.append(
            Task(
                id=pid,
                scenario=p.scenario,
                info=infos[pid],
                label=f"{exp.name}: {label}" if several else label,
                est_events=p.est_events,
                duration_s=p.duration_s,
                key=f"{index}:{pid}",
                out=str(out),
            )
        )
    return _Job(exp, points, out, book, todo, len(groups), skipped, unresolved, removed)


def sweep(exp: Experiment, points: Sequence[Point], out: Path, **kw: Any) -> SweepOutcome:
    """Run ``points`` of ``exp`` into ``out`` and write summary.parquet
    (:func:`sweep_many` with one experiment)."""
    return sweep_many([(exp, points, out)], **kw)[0]


def sweep_many(
    items: Sequence[tuple[Experiment, Sequence[Point], Path]],
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    timeout: float | None = None,
    command: list[str] | None = None,
    stream: TextIO | None = None,
    live: bool | None = None,
) -> list[SweepOutcome]:
    """Run the points of several experiments, each into its own folder, on
    one pool (or cluster), longest points first across all of them, so no
    worker idles between experiments; then write each summary.parquet.

    Every folder's lock is taken first (:mod:`aqmlab._lock`: one writer per
    folder; a folder another process is writing is refused), every folder
    is checked before any is touched, and with ``scheduler`` the cluster is
    reached first: a sweep that cannot start leaves every folder as it was
    (:class:`SweepError`)."""
    outs = [out for _, _, out in items]
    if len({o.resolve() for o in outs}) != len(outs):
        raise SweepError("two experiments would write the same output folder; give another --out")
    with contextlib.ExitStack() as held:
        for out in outs:
            try:
                held.enter_context(results.hold_folder(out))
            except results.ResultsError as e:
                raise SweepError(str(e)) from None
        return _sweep_held(
            items,
            jobs=jobs,
            scheduler=scheduler,
            resume=resume,
            timeout=timeout,
            command=command,
            stream=stream,
            live=live,
        )


def _sweep_held(
    items: Sequence[tuple[Experiment, Sequence[Point], Path]],
    *,
    jobs: int | None,
    scheduler: str | None,
    resume: bool,
    timeout: float | None,
    command: list[str] | None,
    stream: TextIO | None,
    live: bool | None,
) -> list[SweepOutcome]:
    """:func:`sweep_many` once every output folder's lock is held."""
    t0 = time.monotonic()
    for exp, _, out in items:
        check_dir(out, exp.name)
    client = None
    if scheduler:
        # Connect first: a cluster that cannot be used leaves the folders as they were.
        from aqmlab.experiments.cluster import ClusterError, connect

        try:
            client = connect(scheduler)
        except ClusterError as e:
            raise SweepError(str(e)) from None
    try:
        several = len(items) > 1
        prepared = [
            _prepare(i, exp, pts, out, resume, command, several)
            for i, (exp, pts, out) in enumerate(items)
        ]
    except BaseException:
        if client is not None:
            client.close()
        raise
    todo = [t for job in prepared for t in job.todo]
    n_jobs = jobs or default_jobs()
    prior = None
    if todo:
        try:
            prior = engine_speed()[0] * min(n_jobs, len(todo))
        except Exception:
            prior = None
    show = SweepProgress(
        todo,
        total=sum(j.total - j.unresolved for j in prepared),
        skipped=sum(j.skipped for j in prepared),
        prior_rate=prior,
        stream=stream,
        live=live,
    )
    router = _Router(show)
    for job in prepared:
        for t in job.todo:
            router.route[t.key] = (job.book, t.id)
    show.start()
    t_run = time.monotonic()
    try:
        if client is not None:
            from aqmlab.experiments.cluster import run_dask

            run_dask(todo, client, timeout, router, command)
        else:
            from aqmlab.experiments.pool import run_local

            run_local(todo, n_jobs, timeout, router, command)
    finally:
        show.stop()
    run_s = time.monotonic() - t_run
    outcomes = []
    for job in prepared:
        table = store.build_summary(job.out, job.points, [f.name for f in job.exp.factors])
        path = store.write_summary(job.out, table)
        outcomes.append(
            SweepOutcome(
                out=job.out,
                total=job.total,
                ran=len(job.todo),
                skipped=job.skipped,
                failures=job.book.failures,
                wall_s=time.monotonic() - t0,
                removed_stale=job.removed,
                summary_path=path,
                engine_s=job.book.engine_s,
                busy_s=job.book.busy_s,
                workers=0 if scheduler else min(n_jobs, len(todo)),
                run_s=run_s,
            )
        )
    return outcomes
