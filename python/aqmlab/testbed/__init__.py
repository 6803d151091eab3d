"""Testbed mode: the same AQM code on real Linux TCP.

``aqmlab testbed SCENARIO.toml --out DIR`` builds a dumbbell of network
namespaces, routes every packet between its two sides through a user-space
router (``aqmlab-router``, crates/aqmlab-testbed) that runs the core crate's
AQMs, drives the kernel's own TCP with real traffic and writes the same
result folder as ``aqmlab run``. See docs/testbed.md.
"""

from typing import TYPE_CHECKING

from aqmlab._lazy import lazy_names

if TYPE_CHECKING:
    from aqmlab.testbed.counterpart import ACCESS_RATE, simulator_counterpart
    from aqmlab.testbed.netns import TestbedError, check_environment, cleanup, leftovers
    from aqmlab.testbed.runner import run_testbed, unsupported

#: Where each name lives: loaded on first use, so that registering the
#: ``aqmlab testbed`` command does not import the runner (and pyarrow).
_WHERE = {
    "ACCESS_RATE": "aqmlab.testbed.counterpart",
    "TestbedError": "aqmlab.testbed.netns",
    "check_environment": "aqmlab.testbed.netns",
    "cleanup": "aqmlab.testbed.netns",
    "leftovers": "aqmlab.testbed.netns",
    "run_testbed": "aqmlab.testbed.runner",
    "simulator_counterpart": "aqmlab.testbed.counterpart",
    "unsupported": "aqmlab.testbed.runner",
}


__all__ = [
    "ACCESS_RATE",
    "TestbedError",
    "check_environment",
    "cleanup",
    "leftovers",
    "run_testbed",
    "simulator_counterpart",
    "unsupported",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
