"""Figures of the design tools, drawn from their data (PNG or SVG by the
file's suffix)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aqmlab._atomic import probe, save_figure
from aqmlab.design.fluid import FluidResult
from aqmlab.design.linear import Loop, Margins
from aqmlab.design.model import DesignError

__all__ = ["check_figure_path", "plot_fluid_vs_packets", "plot_grid", "plot_loops"]

_SUFFIXES = (".png", ".svg", ".pdf")
#: Loops drawn on one figure at most.
MAX_LOOPS = 6


def check_figure_path(path: str | os.PathLike[str], arg: str = "-o") -> Path:
    """A figure path with a known suffix whose folder exists."""
    p = Path(path)
    if p.suffix.lower() not in _SUFFIXES:
        raise DesignError(arg, f"{str(p)!r}: give a file ending in .png, .svg or .pdf")
    if not p.parent.is_dir():
        what = "is not a folder" if p.parent.exists() else "does not exist"
        raise DesignError(arg, f"{str(p)!r}: {str(p.parent)!r} {what}")
    try:
        probe(p)
    except OSError as e:
        raise DesignError(arg, f"{str(p)!r}: cannot write there: {e.strerror or e}") from None
    return p


def _fig(rows: int, cols: int, size: tuple[float, float]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=size, squeeze=False)


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    import matplotlib.pyplot as plt

    p = check_figure_path(path)
    fig.tight_layout()
    save_figure(fig, p, dpi=110)
    plt.close(fig)
    return p


def plot_loops(
    loops: Sequence[tuple[str, Loop, Margins | None]], path: str | os.PathLike[str], title: str = ""
) -> Path:
    """Bode magnitude and phase (left, one over the other) and Nyquist plot
    (right, as tall as both) of each loop, with the crossover and margins marked,
    and the margins as text below. At most ``MAX_LOOPS`` loops are
    drawn (evenly chosen; the title says so)."""
    if len(loops) > MAX_LOOPS:
        idx = sorted({round(i * (len(loops) - 1) / (MAX_LOOPS - 1)) for i in range(MAX_LOOPS)})
        title = f"{title} ({len(idx)} of {len(loops)} phases shown)".strip()
        loops = [loops[i] for i in idx]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Magnitude over phase at the left, the Nyquist plot over both rows at the right (square, as
    # its axes are equal), the margins as lines of text under them: no quarter left empty.
    fig = plt.figure(figsize=(12, 6.2 + 0.18 * len(loops)), layout="constrained")
    axd = fig.subplot_mosaic(
        [["mag", "ny"], ["ph", "ny"]], width_ratios=[1.25, 1], gridspec_kw={"hspace": 0.02}
    )
    mag_ax, ph_ax, ny_ax = axd["mag"], axd["ph"], axd["ny"]
    mag_ax.sharex(ph_ax)
    mag_ax.tick_params(labelbottom=False)
    text = []
    for label, lp, m in loops:
        w = lp.grid(2000)
        h = lp.response(w)
        ph = lp.phase(w)
        (line,) = mag_ax.semilogx(w, 20 * np.log10(np.abs(h)), label=label)
        ph_ax.semilogx(w, ph, color=line.get_color())
        keep = np.abs(h) < 50
        ny_ax.plot(h.real[keep], h.imag[keep], color=line.get_color(), label=label)
        if m is not None and m.wg is not None:
            mag_ax.axvline(m.wg, color=line.get_color(), ls=":", lw=0.8)
            ph_ax.plot([m.wg], [m.pm - 180], "o", color=line.get_color())
        if m is not None:
            text.append(
                f"{label}: crossover {m.wg or float('nan'):.3g} rad/s, "
                f"phase margin {m.pm:.1f} deg, "
                f"gain margin {m.gm:.3g}, delay margin {m.dm:.3g} s -> "
                f"{'stable' if m.stable else 'UNSTABLE'}"
            )
    mag_ax.axhline(0, color="k", lw=0.6)
    ph_ax.axhline(-180, color="k", lw=0.6)
    mag_ax.set_ylabel("|L(jw)| (dB)")
    ph_ax.set_ylabel("phase (deg)")
    ph_ax.set_xlabel("w (rad/s)")
    ph_ax.set_ylim(max(ph_ax.get_ylim()[0], -720), 0)
    mag_ax.legend(fontsize=8)
    mag_ax.set_title("Bode")
    ny_ax.plot([-1], [0], "r+", ms=12)
    ny_ax.add_patch(__import__("matplotlib.patches").patches.Circle((0, 0), 1, fill=False, ls=":"))
    ny_ax.set_xlim(-3, 3)
    ny_ax.set_ylim(-3, 3)
    ny_ax.set_aspect("equal")
    ny_ax.set_title("Nyquist (|L| < 50 shown; -1 marked)")
    ny_ax.grid(True, lw=0.3)
    if text:
        fig.supxlabel("\n".join(text), fontsize=8, x=0.01, ha="left")
    if title:
        fig.suptitle(title)
    p = check_figure_path(path)
    save_figure(fig, p, dpi=110)
    plt.close(fig)
    return p


def plot_fluid_vs_packets(
    fl: FluidResult,
    packets: tuple[Any, Any] | None,
    path: str | os.PathLike[str],
    title: str = "",
    start: float | None = None,
    stats: str = "",
) -> Path:
    """The fluid queue over the packet-level queue of the same scenario."""
    fig, ax = _fig(1, 1, (11, 4.5))
    a = ax[0][0]
    if packets is not None:
        a.plot(packets[0], packets[1], lw=0.5, color="0.6", label="packets (engine)")
    a.plot(fl.t, fl.q, lw=1.4, color="C0", label="fluid model (eq. 4.1)")
    for ph in fl.phases[1:]:
        a.axvline(ph.start, color="C3", ls="--", lw=0.8)
    if start is not None:
        a.axvspan(0, start, color="0.93", zorder=-1)
    a.set_xlabel("time (s)")
    a.set_ylabel("queue (packets)")
    a.legend(loc="upper right", fontsize=8)
    a.set_title(title + (f"\n{stats}" if stats else ""), fontsize=9)
    return _save(fig, path)


def plot_grid(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Engine queue std against the proposition's lhs / rhs, by verdict."""
    fig, ax = _fig(1, 2, (12, 4.5))
    a, b = ax[0][0], ax[0][1]
    for verdict, color in ((True, "C2"), (False, "C3")):
        sel = [r for r in rows if r["prop_holds"] == verdict]
        a.scatter(
            [r["prop_ratio"] for r in sel],
            [r["std"] for r in sel],
            c=color,
            label=f"eq. 4.9 says {'stable' if verdict else 'unstable'}",
        )
        sel = [r for r in rows if r["linear_stable"] == verdict]
        b.scatter(
            [r["phase_margin_deg"] for r in sel],
            [r["std"] for r in sel],
            c=color,
            label=f"loop says {'stable' if verdict else 'unstable'}",
        )
    for r in rows:
        if r["oscillates"] == r["prop_holds"]:
            a.scatter([r["prop_ratio"]], [r["std"]], facecolors="none", edgecolors="k", s=120)
    a.set_xscale("log")
    a.axvline(1, color="k", lw=0.6)
    a.set_xlabel("L_red w_q / bound of eq. 4.9")
    a.set_ylabel("engine queue std (packets)")
    a.legend(fontsize=8)
    a.set_title("proposition vs engine (circled: disagreement)", fontsize=9)
    b.axvline(0, color="k", lw=0.6)
    b.set_xlabel("phase margin of the loop (deg)")
    b.legend(fontsize=8)
    b.set_title("exact loop (eq. 4.10) vs engine", fontsize=9)
    return _save(fig, path)
