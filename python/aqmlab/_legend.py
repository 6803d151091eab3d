"""Where a figure's legend goes: never over the data.

A legend inside the axes covers the traces of a time series (a queue fills the whole panel), so
:func:`legend_outside` puts it outside the axes: above them at the right, in one row, when its
entries are few and short (the panel's title stays at the left); else to the right of the axes,
in a column (the figure's constrained layout makes room for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["legend_outside"]

#: Most entries, and most characters of their labels together, of a legend above the axes.
ABOVE_ENTRIES = 4
ABOVE_CHARS = 60


def legend_outside(
    ax: Any, handles: Sequence[Any] | None = None, fontsize: float | None = None
) -> Any:
    """Draw ``ax``'s legend (of ``handles``, by default every labelled artist) outside the
    axes, and return it (None when nothing is labelled)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    else:
        labels = [h.get_label() for h in handles]
    if not handles:
        return None
    kw: dict[str, Any] = {"frameon": False}
    if fontsize is not None:
        kw["fontsize"] = fontsize
    if len(handles) <= ABOVE_ENTRIES and sum(len(lab) for lab in labels) <= ABOVE_CHARS:
        return ax.legend(
            handles,
            labels,
            loc="lower right",
            bbox_to_anchor=(1.0, 1.0),
            ncols=len(handles),
            borderaxespad=0.1,
            columnspacing=1.0,
            handlelength=1.6,
            **kw,
        )
    return ax.legend(
        handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw
    )
