"""The engine's run, without the result tables: what ``aqmlab.run`` and the
``aqmlab run`` command share before the tables are built.

Nothing here imports numpy or pyarrow, so that the command can load them on
another thread while the engine runs (the engine releases the interpreter's
lock, so that ``aqmlab run`` spends little beyond the engine's own time).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from aqmlab import _core
from aqmlab._core import ScenarioError
from aqmlab.scenario import to_json, with_truncate_hint

#: Called now and then during a run with the simulated time in seconds and,
#: if it takes a second argument, the events processed so far; returning
#: ``False`` stops the run (``KeyboardInterrupt``).
ProgressFn = Callable[..., "bool | None"]


def run_raw(
    doc: Mapping[str, Any],
    progress: ProgressFn | None = None,
    free: int | None = -1,
    every_s: float = 0.0,
) -> Any:
    """Run the prepared scenario ``doc``; return what ``_core.run`` returns
    (``aqmlab.api.from_core`` turns it into a :class:`aqmlab.RunResult`).
    A run that would not fit in the ``free`` bytes (by default what
    :func:`available_memory` finds now; ``None``: no check) is refused
    before it starts (``ScenarioError``). ``progress`` is called at most
    once per ``every_s`` wall seconds (0: at each of the engine's progress
    points)."""
    if free == -1:
        free = available_memory()
    try:
        return _core.run(to_json(doc), with_events(progress), free, every_s)
    except ScenarioError as e:
        raise with_truncate_hint(e) from None


def available_memory() -> int | None:
    """Bytes this process can still take: the machine's available memory
    (``MemAvailable``) and what ``ulimit -v`` leaves above the process's
    current size, whichever is less; ``None`` where neither is known."""
    known: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    known.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/status", encoding="ascii") as f:
                size = next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmSize:"))
            known.append(max(0, soft - size))
    except (ImportError, OSError, ValueError, IndexError, StopIteration):
        pass
    return min(known) if known else None


def with_events(progress: ProgressFn | None) -> Callable[[float, int], Any] | None:
    """``progress`` as the engine calls it, ``(simulated_s, events)``."""
    if progress is None:
        return None
    import inspect

    try:
        params = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):
        params = None
    if params is not None:
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [p for p in params if p.kind in kinds]
        varargs = any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params)
        if varargs or len(positional) >= 2:
            return progress
    one = progress
    return lambda sim_s, events: one(sim_s)


@functools.cache
def _version() -> str:
    """aqmlab's version (the installed package's, else the engine's)."""
    try:
        from importlib.metadata import version

        return version("aqmlab")
    except Exception:
        return _core.ENGINE_VERSION
