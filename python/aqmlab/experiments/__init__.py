"""Experiments: schemes x factors x seeds of a scenario, run as one sweep.

>>> from aqmlab.experiments import load_experiment, resolve_points, sweep
>>> exp = load_experiment("my-experiment.toml", quick=True)
>>> points = resolve_points(exp)          # every point resolved, nothing run yet
>>> outcome = sweep(exp, points, Path("results/my-experiment-quick"), jobs=2)

The file format, the output folder and the commands (``aqmlab sweep``,
``aqmlab reproduce``) are described in ``docs/experiments.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aqmlab._lazy import lazy_names

if TYPE_CHECKING:
    from aqmlab.experiments.catalog import PRESETS_DIR, Preset, find_preset, presets
    from aqmlab.experiments.points import Point, point_id, resolve_points
    from aqmlab.experiments.runner import SweepError, SweepOutcome, sweep
    from aqmlab.experiments.spec import (
        Experiment,
        ExperimentError,
        load_experiment,
        parse_experiment,
    )
    from aqmlab.experiments.store import build_summary

# The names are imported on first use (PEP 562), so that the CLI, which
# registers the experiment commands at every start, does not load the
# runner, the pool and the results store for `aqmlab run`.
_LAZY = {
    "Experiment": "aqmlab.experiments.spec",
    "ExperimentError": "aqmlab.experiments.spec",
    "PRESETS_DIR": "aqmlab.experiments.catalog",
    "Point": "aqmlab.experiments.points",
    "Preset": "aqmlab.experiments.catalog",
    "SweepError": "aqmlab.experiments.runner",
    "SweepOutcome": "aqmlab.experiments.runner",
    "build_summary": "aqmlab.experiments.store",
    "find_preset": "aqmlab.experiments.catalog",
    "load_experiment": "aqmlab.experiments.spec",
    "parse_experiment": "aqmlab.experiments.spec",
    "point_id": "aqmlab.experiments.points",
    "presets": "aqmlab.experiments.catalog",
    "resolve_points": "aqmlab.experiments.points",
    "sweep": "aqmlab.experiments.runner",
}

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


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
