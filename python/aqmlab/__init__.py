"""aqmlab: a laboratory for Active Queue Management.

A deterministic packet-level simulator (the Rust engine in ``aqmlab._core``)
driven from Python: scenario files, a CLI, run folders on disk and plots.

>>> import aqmlab
>>> r = aqmlab.run("scenarios/canonical.toml", seed=2)
>>> r.summary["bottleneck"]["queue_mean_pkts"]
"""

from aqmlab import web
from aqmlab._core import ENGINE_VERSION, ScenarioError
from aqmlab.api import RunResult, run
from aqmlab.api import _version as _aqmlab_version
from aqmlab.results import ResultsError, load_run
from aqmlab.scenario import apply_overrides, load, validate

__version__ = _aqmlab_version()

__all__ = [
    "ENGINE_VERSION",
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
