"""Experiments: schemes x factors x seeds of a scenario, run as one sweep.

>>> from aqmlab.experiments import load_experiment, resolve_points, sweep
>>> exp = load_experiment("my-experiment.toml", quick=True)
>>> points = resolve_points(exp)          # every point resolved, nothing run yet
>>> outcome = sweep(exp, points, Path("results/my-experiment-quick"), jobs=2)

The file format, the output folder and the commands (``aqmlab sweep``,
``aqmlab reproduce``) are described in ``docs/experiments.md``.
"""

from aqmlab.experiments.catalog import PRESETS_DIR, Preset, find_preset, presets
from aqmlab.experiments.points import Point, point_id, resolve_points
from aqmlab.experiments.runner import SweepError, SweepOutcome, sweep
from aqmlab.experiments.spec import Experiment, ExperimentError, load_experiment, parse_experiment
from aqmlab.experiments.store import build_summary

__all__ = [
    "PRESETS_DIR",
    "Experiment",
    "ExperimentError",
    "Point",
    "Preset",
    "SweepError",
    "SweepOutcome",
    "build_summary",
    "find_preset",
    "load_experiment",
    "parse_experiment",
    "point_id",
    "presets",
    "resolve_points",
    "sweep",
]
