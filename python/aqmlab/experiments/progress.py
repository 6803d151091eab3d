"""The sweep's progress display.

On a terminal: a live panel (rich) with points done / running / failed /
left, elapsed and estimated time left, and the slowest point running. Else
(a pipe, a log file, CI): one plain line per finished point.

Time left is estimated from each point's cost estimate (its estimated
engine events, :func:`aqmlab.experiments.points.estimate_events`): the cost
processed so far (finished points, and the simulated fraction of running
ones) over the elapsed time gives the rate; before anything has finished
the rate is the engine's measured speed times the workers.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from aqmlab.experiments.pool import Task

__all__ = ["SweepProgress", "format_duration"]


def format_duration(s: float) -> str:
    """``1:02:03``, ``2:03`` or ``4.2 s``."""
    if s != s or s < 0:  # NaN
        return "?"
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(round(s), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


@dataclass
class _State:
    task: Task
    status: str = "waiting"  # waiting | running | done | failed
    started: float = 0.0
    sim_s: float = 0.0
    wall_s: float = 0.0


class SweepProgress:
    """Collects the points' outcomes and shows them."""

    def __init__(
        self,
        tasks: list[Task],
        *,
        total: int,
        skipped: int,
        prior_rate: float | None,
        stream: TextIO | None = None,
        live: bool | None = None,
    ) -> None:
        self.states = {t.key: _State(t) for t in tasks}
        self.total = total
        self.skipped = skipped
        self.prior_rate = prior_rate
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.monotonic()
        self.finished = 0
        self.failures: dict[str, str] = {}
        self.total_cost = sum(t.est_events for t in tasks)
        self.console: Any = None
        self.live: Any = None
        is_tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.use_live = is_tty if live is None else live

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> None:
        if self.use_live:
            from rich.console import Console
            from rich.live import Live

            self.console = Console(file=self.stream)
            self.live = Live(
                self._render(), console=self.console, refresh_per_second=4, transient=False
            )
            self.live.start()
        elif self.skipped:
            self._line(f"{self.skipped} point(s) already complete, {len(self.states)} to run")

    def stop(self) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.stop()
            self.live = None

    # -- the Listener protocol ---------------------------------------------

    def started(self, task: Task) -> None:
        st = self.states[task.key]
        if st.status in ("waiting",):
            st.status, st.started = "running", time.monotonic()

    def requeued(self, pid: str) -> None:
        st = self.states[pid]
        if st.status == "running":
            st.status, st.sim_s = "waiting", 0.0

    def progress(self, pid: str, sim_s: float) -> None:
        st = self.states[pid]
        st.sim_s = sim_s
        if st.status == "waiting":
            st.status, st.started = "running", time.monotonic()

    def done(self, pid: str, wall_s: float, busy_s: float = 0.0) -> None:
        st = self.states[pid]
        if st.status in ("done", "failed"):
            return
        st.status, st.wall_s = "done", wall_s
        self.finished += 1
        if self.live is None:
            self._line(f"{self._count()} ok      {wall_s:7.1f} s  {st.task.label}")
        self.tick()

    def failed(self, pid: str, error: str) -> None:
        st = self.states[pid]
        if st.status in ("done", "failed"):
            return
        st.status = "failed"
        self.finished += 1
        self.failures[pid] = error
        if self.live is not None:
            self.live.console.print(f"[red]failed[/red] {st.task.label}: {error}")
        else:
            self._line(f"{self._count()} FAILED            {st.task.label}: {error}")
        self.tick()

    def tick(self) -> None:
        if self.live is not None:
            self.live.update(self._render())

    # -- figures -------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        c = {"done": 0, "running": 0, "failed": 0, "waiting": 0}
        for st in self.states.values():
            c[st.status] += 1
        return c

    def eta_s(self) -> float:
        """Estimated wall seconds left."""
        now = time.monotonic()
        elapsed = now - self.t0
        processed = 0.0
        for st in self.states.values():
            if st.status in ("done", "failed"):
                processed += st.task.est_events
            elif st.status == "running" and st.task.duration_s > 0:
                processed += st.task.est_events * min(1.0, st.sim_s / st.task.duration_s)
        left = max(self.total_cost - processed, 0.0)
        if left == 0:
            return 0.0
        if processed > 0 and elapsed > 1.0 and self.finished > 0:
            rate = processed / elapsed
        elif self.prior_rate:
            rate = self.prior_rate
        else:
            return float("nan")
        return left / rate

    def slowest(self) -> _State | None:
        running = [s for s in self.states.values() if s.status == "running"]
        return min(running, key=lambda s: s.started) if running else None

    # -- output ----------------------------------------------------------------

    def _count(self) -> str:
        n = self.skipped + self.finished
        w = len(str(self.total))
        return f"[{n:>{w}}/{self.total}]"

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        c = self.counts()
        done = c["done"] + self.skipped
        bar = ProgressBar(total=max(self.total, 1), completed=done + c["failed"], width=40)
        head = Table.grid(padding=(0, 2))
        head.add_row(
            bar,
            Text(f"{done + c['failed']}/{self.total} points"),
            Text(f"done {done}", style="green"),
            Text(f"running {c['running']}", style="cyan"),
            Text(f"failed {c['failed']}", style="red" if c["failed"] else "dim"),
            Text(f"left {c['waiting']}"),
        )
        elapsed = time.monotonic() - self.t0
        times = Text(
            f"elapsed {format_duration(elapsed)}   left ~{format_duration(self.eta_s())}",
            style="dim",
        )
        parts: list[Any] = [head, times]
        slow = self.slowest()
        if slow is not None:
            run_s = time.monotonic() - slow.started
            frac = (
                f", {100 * slow.sim_s / slow.task.duration_s:.0f} % simulated"
                if slow.task.duration_s > 0 and slow.sim_s > 0
                else ""
            )
            parts.append(
                Text(f"slowest running: {slow.task.label} ({format_duration(run_s)}{frac})")
            )
        return Group(*parts)
