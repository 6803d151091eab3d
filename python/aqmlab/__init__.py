"""aqmlab: a laboratory for Active Queue Management.

A deterministic packet-level simulator (the Rust engine in ``aqmlab._core``)
driven from Python: scenario files, a CLI, run folders on disk and plots.

>>> import aqmlab
>>> r = aqmlab.run("scenarios/canonical.toml", seed=2)
>>> r.summary["bottleneck"]["queue_mean_pkts"]

The names below are imported on first use, so that ``import aqmlab`` (and
the ``aqmlab`` command's start, which Ctrl-C may interrupt) stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aqmlab import web
    from aqmlab._core import ENGINE_VERSION, ScenarioError
    from aqmlab.api import RunResult, run
    from aqmlab.ecn import ECNNote
    from aqmlab.results import ResultsError, load_run
    from aqmlab.scenario import apply_overrides, load, validate

    __version__: str

#: Where each public name lives.
_LAZY = {
    "ENGINE_VERSION": "aqmlab._core",
    "ScenarioError": "aqmlab._core",
    "ECNNote": "aqmlab.ecn",
    "RunResult": "aqmlab.api",
    "run": "aqmlab.api",
    "ResultsError": "aqmlab.results",
    "load_run": "aqmlab.results",
    "apply_overrides": "aqmlab.scenario",
    "load": "aqmlab.scenario",
    "validate": "aqmlab.scenario",
}

__all__ = [
    "ENGINE_VERSION",
    "ECNNote",
    "ResultsError",
    "RunResult",
    "ScenarioError",
    "__version__",
    "apply_overrides",
    "load",
    "load_run",
    "run",
    "validate",
    "web",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from aqmlab._engine import _version

        value: Any = _version()
    elif name == "web":
        value = importlib.import_module("aqmlab.web")
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        # A submodule (aqmlab.api, aqmlab.plot ...), as an eager import made them.
        try:
            value = importlib.import_module(f"aqmlab.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"aqmlab.{name}":
                raise
            raise AttributeError(f"module 'aqmlab' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
