"""The local process pool: points run in worker processes on this machine.

Each worker is a long-lived process (started once, with the ``spawn``
method) that takes one point at a time over a pipe, runs it in memory and
writes its folder atomically (:func:`aqmlab.experiments.store.write_point`);
only the point's outcome travels back. A worker that dies (killed, out of
memory) fails its point and is replaced; a point over ``--timeout`` is stopped
by the engine's progress callback, or, should the engine not call back, its
worker is killed a grace period later. On Linux a worker dies with its
parent (``PR_SET_PDEATHSIG``), so killing the sweep leaves nothing running.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Listener", "Task", "run_local"]

#: Wall seconds between two progress messages of a worker.
PROGRESS_EVERY_S = 0.5


@dataclass
class Task:
    """A point to run: plain data, picklable."""

    id: str
    scenario: dict[str, Any]
    info: dict[str, Any]
    label: str
    est_events: float
    duration_s: float
    #: The task's name towards the listener (unique in a sweep of several experiments).
    key: str = ""
    #: The output folder its point is written into.
    out: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.id


class Listener(Protocol):
    """What a runner tells about the points (the progress display and the
    sweep's bookkeeping)."""

    def started(self, task: Task) -> None: ...
    def progress(self, pid: str, sim_s: float) -> None: ...
    def done(self, pid: str, wall_s: float, busy_s: float) -> None:
        """Point ``pid`` is complete: the engine took ``wall_s``, the whole
        point (engine, conversion, writing its folder) ``busy_s``."""

    def failed(self, pid: str, error: str) -> None: ...
    def requeued(self, pid: str) -> None: ...
    def tick(self) -> None: ...


def _set_pdeathsig() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _worker_main(conn: Connection, parent: int, timeout: float | None) -> None:
    """A worker process: run points until the pipe closes."""
    _set_pdeathsig()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != parent:
        return
    from aqmlab.experiments.execute import PointFailure, execute
    from aqmlab.experiments.store import write_point

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        pid = msg["key"]
        last = [time.monotonic()]

        def on_progress(sim_s: float, pid: str = pid, last: list[float] = last) -> bool:
            if os.getppid() != parent:
                return False
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                with contextlib.suppress(OSError):
                    conn.send(("progress", pid, sim_s))
            return True

        t0 = time.monotonic()
        try:
            result = execute(msg["scenario"], timeout, on_progress)
            write_point(Path(msg["out"]), msg["info"], result, msg.get("command"))
            busy = time.monotonic() - t0
            reply: tuple[Any, ...] = ("done", pid, (float(result.wall_time_s), busy))
        except PointFailure as e:
            reply = ("failed", pid, str(e))
        except KeyboardInterrupt:
            return  # the parent went away
        except OSError as e:
            reply = ("failed", pid, f"cannot write the point's folder: {e}")
        except Exception as e:
            reply = ("failed", pid, f"{type(e).__name__}: {e}")
        try:
            conn.send(reply)
        except OSError:
            return


class _Worker:
    def __init__(self, ctx: Any, timeout: float | None) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(
            target=_worker_main,
            args=(child, os.getpid(), timeout),
            daemon=True,
            name="aqmlab-sweep-worker",
        )
        self.proc.start()
        child.close()
        self.task: Task | None = None
        self.started = 0.0

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.conn.close()


def grace_s(timeout: float) -> float:
    """How long past ``--timeout`` a worker may go before it is killed."""
    return max(5.0, 0.2 * timeout)


def run_local(
    tasks: Sequence[Task],
    jobs: int,
    timeout: float | None,
    listener: Listener,
    command: list[str] | None = None,
) -> None:
    """Run ``tasks`` on ``jobs`` worker processes, longest estimate first,
    each point into its task's ``out``; every outcome goes to ``listener``
    (by the task's ``key``). Returns when all are done (or raises
    ``KeyboardInterrupt``, after stopping the workers)."""
    if not tasks:
        return
    ctx = mp.get_context("spawn")
    queue = deque(sorted(tasks, key=lambda t: -t.est_events))
    workers: list[_Worker] = []
    try:
        for _ in range(max(1, min(jobs, len(queue)))):
            workers.append(_Worker(ctx, timeout))
        while True:
            for w in workers:
                if w.task is None and queue and w.proc.is_alive():
                    t = queue.popleft()
                    w.task, w.started = t, time.monotonic()
                    payload = {
                        "key": t.key,
                        "out": t.out,
                        "scenario": t.scenario,
                        "info": t.info,
                        "command": command,
                    }
                    try:
                        w.conn.send(payload)
                    except OSError:
                        queue.appendleft(t)
                        w.task = None
                        continue
                    listener.started(t)
            if not queue and all(w.task is None for w in workers):
                break
            handles: list[Any] = [w.conn for w in workers] + [w.proc.sentinel for w in workers]
            wait(handles, timeout=0.25)
            replaced: list[_Worker] = []
            for w in workers:
                _drain(w, listener)
                if not w.proc.is_alive():
                    _drain(w, listener)
                    if w.task is not None:
                        code = w.proc.exitcode
                        why = (
                            f"killed by signal {-code}"
                            if code is not None and code < 0
                            else f"exit status {code}"
                        )
                        listener.failed(w.task.key, f"the worker process died ({why})")
                        w.task = None
                    w.kill()
                    replaced.append(w)
                elif (
                    w.task is not None
                    and timeout is not None
                    and time.monotonic() - w.started > timeout + grace_s(timeout)
                ):
                    listener.failed(
                        w.task.key,
                        f"timed out after {timeout:g} s (the engine did not stop; "
                        "its worker was killed)",
                    )
                    w.task = None
                    w.kill()
                    replaced.append(w)
            for w in replaced:
                workers.remove(w)
                if queue:
                    workers.append(_Worker(ctx, timeout))
            if not workers and queue:
                workers.append(_Worker(ctx, timeout))
            listener.tick()
    finally:
        for w in workers:
            w.stop()
        deadline = time.monotonic() + 2.0
        for w in workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill()


def _drain(w: _Worker, listener: Listener) -> None:
    """Handle every message waiting on ``w``'s pipe."""
    while True:
        try:
            if not w.conn.poll():
                return
            kind, pid, value = w.conn.recv()
        except (EOFError, OSError):
            return
        if kind == "progress":
            listener.progress(pid, float(value))
        elif kind == "done":
            w.task = None
            listener.done(pid, float(value[0]), float(value[1]))
        elif kind == "failed":
            w.task = None
            listener.failed(pid, str(value))
