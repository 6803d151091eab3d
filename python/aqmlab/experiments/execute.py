"""Running one point in memory (shared by the local pool and Dask workers)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from aqmlab import _core

__all__ = ["PointFailure", "execute"]


class PointFailure(Exception):
    """A point that could not be run: its message is the recorded error."""


def execute(
    scenario: Mapping[str, Any],
    timeout: float | None = None,
    on_progress: Callable[[float], bool] | None = None,
) -> Any:
    """Run the resolved ``scenario`` (its seed included) and return the
    :class:`aqmlab.RunResult`. ``timeout`` (wall seconds) stops the run;
    ``on_progress(simulated_seconds)`` returning False stops it too. Any
    failure (a scenario error, an engine panic, the timeout) raises
    :class:`PointFailure` with a one-line message."""
    from aqmlab import api
    from aqmlab._engine import available_memory
    from aqmlab.scenario import ScenarioError, to_json

    t0 = time.monotonic()
    state = {"sim": 0.0, "timed_out": False, "stopped": False}

    def progress(sim_s: float, events: int = 0) -> bool:
        state["sim"] = sim_s
        if timeout is not None and time.monotonic() - t0 > timeout:
            state["timed_out"] = True
            return False
        if on_progress is not None and on_progress(sim_s) is False:
            state["stopped"] = True
            return False
        return True

    try:
        raw = _core.run(to_json(scenario), progress, available_memory())
    except KeyboardInterrupt:
        if state["timed_out"]:
            raise PointFailure(
                f"timed out after {timeout:g} s (at simulated time {state['sim']:.1f} s of "
                f"{scenario.get('duration', '?')})"
            ) from None
        raise
    except ScenarioError as e:
        raise PointFailure(f"scenario error: {e}") from None
    except Exception as e:
        raise PointFailure(f"{type(e).__name__}: {_one_line(str(e))}") from None
    except BaseException as e:  # a Rust panic arrives as pyo3's PanicException
        if type(e).__name__ == "PanicException":
            raise PointFailure(f"engine panic: {_one_line(str(e))}") from None
        raise
    return api.from_core(raw)


def _one_line(s: str) -> str:
    return " ".join(s.split())
