"""Reports: terminal tables of one run, and the report of an experiment.

``summary_table`` and ``ROWS`` (one run's figures as a rich table) come from
:mod:`aqmlab.report.terminal`. An experiment's output folder (see
``docs/experiments.md``) becomes a report with :func:`build_report`: the paper's
tables with our numbers beside the paper's (:mod:`~aqmlab.report.tables`), the
figures (:mod:`~aqmlab.report.figures`) and one self-contained HTML page
(:mod:`~aqmlab.report.html`). The report reads saved results only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aqmlab.report.terminal import ROWS, summary_table

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

__all__ = ["ROWS", "build_index", "build_report", "summary_table"]


def build_report(out_dir: str | os.PathLike[str]) -> Path:
    """Write ``out_dir/report/`` (index.html, figures, tables.md) from the
    experiment's saved results and return the path of its index.html."""
    from aqmlab.report.html import build_report as _build

    return _build(Path(out_dir))


def build_index(dirs: Sequence[str | os.PathLike[str]], out_html: str | os.PathLike[str]) -> Path:
    """Write one HTML page over several experiment folders (each one's
    report is built first if missing) and return its path."""
    from aqmlab.report.html import build_index as _build

    return _build([Path(d) for d in dirs], Path(out_html))
