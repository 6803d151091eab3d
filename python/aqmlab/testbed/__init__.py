"""Testbed mode (issue 13): the same AQM code on real Linux TCP.

``aqmlab testbed SCENARIO.toml --out DIR`` builds a dumbbell of network
namespaces, routes every packet between its two sides through a user-space
router (``aqmlab-router``, crates/aqmlab-testbed) that runs the core crate's
AQMs, drives the kernel's own TCP with real traffic and writes the same
result folder as ``aqmlab run``. See docs/testbed.md.
"""

from aqmlab.testbed.netns import TestbedError, check_environment, cleanup, leftovers
from aqmlab.testbed.runner import run_testbed, unsupported

__all__ = [
    "TestbedError",
    "check_environment",
    "cleanup",
    "leftovers",
    "run_testbed",
    "unsupported",
]
