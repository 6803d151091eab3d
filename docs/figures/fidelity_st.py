"""Figures and figures' numbers of docs/fidelity.md, items 4 (ST-RED) and 5 (ST-PI).

Run from the repository root after `make build`:
    nice .venv/bin/python docs/figures/fidelity_st.py [item4|item5|all]
Writes docs/figures/fidelity-4-*.png, fidelity-5-*.png and prints the tables' numbers.
About 3 minutes of simulation on one core (the 1800 s runs of section 5.5.1 dominate).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import aqmlab

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "figures"
SC = ROOT / "scenarios" / "aqm"

REVERSE = [
    "traffic=[{kind='bulk', flows=100, start={uniform=['0s','10s']}},"
    " {kind='bulk', flows=20, direction='reverse', start={uniform=['0s','10s']}}]"
]


def series(r: aqmlab.RunResult, name: str) -> tuple[np.ndarray, np.ndarray]:
    p = r.params
    t = np.asarray(p.column("time_s"))
    n = np.asarray(p.column("name"))
    v = np.asarray(p.column("value"))
    m = n == name
    return t[m], v[m]


def binned_queue(r: aqmlab.RunResult, width: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(r.queue.column("time_s"))
    q = np.asarray(r.queue.column("queue_pkts"), dtype=float)
    edges = np.arange(0.0, t.max() + width, width)
    idx = np.digitize(t, edges) - 1
    mids, means = [], []
    for i in range(len(edges) - 1):
        sel = q[idx == i]
        if sel.size:
            mids.append(edges[i] + width / 2)
            means.append(sel.mean())
    return np.array(mids), np.array(means)


def return_text(reading: str) -> str:
    """The scenario of test st_red_thresholds_return_with_section_5_5_h_s."""
    return f"""
duration = "700s"
seed = 1
[topology]
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
access_delay = "15ms"
buffer = 500
[aqm]
kind = "st-red"
w_q = 2e-4
variance_queue = "{reading}"
[tcp]
packet_size = 500
[[traffic]]
kind = "bulk"
flows = 100
start = {{ uniform = ["0s", "5s"] }}
[metrics]
start = "0s"
[[schedule]]
at = "50s"
action = "link"
link = "bottleneck"
delay = "120ms"
[[schedule]]
at = "300s"
action = "link"
link = "bottleneck"
delay = "20ms"
"""


def table_5_1(label: str, r: aqmlab.RunResult) -> None:
    b = r.summary["bottleneck"]
    devs = [ph["bottleneck"]["queue_std_pkts"] for ph in r.summary["phases"]]
    _, qref = series(r, "q_ref")
    print(
        f"{label:34s} util {b['utilization']:.4f} loss {b['loss_rate']:.4f} "
        f"queue {b['queue_mean_pkts']:.1f} dev(200 s) {np.mean(devs):.1f} "
        f"q_ref max {qref.max():.1f} end {qref[-1]:.1f}"
    )


def item4() -> None:
    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for reading, style in [("average", "-"), ("instantaneous", "--")]:
        r = aqmlab.run(return_text(reading))
        t, v = series(r, "q_ref")
        axes[0].step(t, v, style, where="post", label=f"q_ref, {reading}")
        t, q = binned_queue(r, 10.0)
        axes[1].plot(t, q, style, label=f"queue (10 s means), {reading}")
    for ax in axes:
        ax.axvspan(50, 300, color="0.9")
        ax.legend(fontsize=8)
        ax.set_ylabel("packets")
    axes[0].set_title("ST-RED, h_s = 0.03/sqrt(3): RTT 100 ms -> 300 ms (grey) -> 100 ms")
    axes[1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(OUT / "fidelity-4-return.png", dpi=80)
    plt.close(fig)

    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for reading, style in [("average", "-"), ("instantaneous", "--")]:
        for rev, extra in [("", []), (" + 20 reverse", REVERSE)]:
            r = aqmlab.run(
                SC / "st-red-rtt.toml", overrides=[f"aqm.variance_queue={reading}", *extra]
            )
            table_5_1(f"5.5.1 {reading}{rev}", r)
            if rev:
                continue
            t, v = series(r, "q_ref")
            axes[0].step(t, v, style, where="post", label=f"q_ref, {reading}")
            t, q = binned_queue(r, 20.0)
            axes[1].plot(t, q, style, label=f"queue (20 s means), {reading}")
    for ax in axes:
        ax.legend(fontsize=8)
        ax.set_ylabel("packets")
        for x in range(200, 1800, 200):
            ax.axvline(x, color="0.85", lw=0.8)
    axes[0].set_title("Section 5.5.1: RTT 100, 300, 500, 700, 900 ms and back (every 200 s)")
    axes[1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(OUT / "fidelity-4-section-5-5-1.png", dpi=80)
    plt.close(fig)


def item5() -> None:
    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    text = (SC / "st-pi-capacity.toml").read_text()
    pi_text = text.replace('variance_centre = "q_ref"\n', "").replace(
        'kind = "st-pi"', 'kind = "pi"\na = 7.288e-5\nb = 7.264e-5\nq_ref = 150'
    )
    runs = [
        ("pi", pi_text, ":"),
        ("st-pi, q_ref (fig. 6.1)", text, "--"),
        ("st-pi, mean", text.replace('"q_ref"', '"mean"'), "-"),
        ("st-pi, adaptive", text.replace('"q_ref"', '"adaptive"'), "-."),
    ]
    for label, spec, style in runs:
        r = aqmlab.run(spec)
        b = r.summary
        ph = [
            f"{p['bottleneck']['queue_mean_pkts']:.1f}/{p['bottleneck']['queue_std_pkts']:.1f}"
            for p in b["phases"]
        ]
        _, qref = series(r, "q_ref")
        print(f"6.4.3 {label:26s} queue mean/sd per phase {ph} q_ref end {qref[-1]:.1f}")
        t, v = series(r, "q_ref")
        axes[0].step(t, v, style, where="post", label=label)
        t, q = binned_queue(r, 5.0)
        axes[1].plot(t, q, style, label=label)
    for ax in axes:
        ax.axvspan(150, 300, color="0.9")
        ax.legend(fontsize=8)
        ax.set_ylabel("packets")
    axes[0].set_title("Section 6.4.3, shortened: 15 Mbps, 5 Mbps (grey), 15 Mbps; q_ref")
    axes[1].set_title("queue (5 s means)")
    axes[1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(OUT / "fidelity-5-capacity.png", dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("item4", "all"):
        item4()
    if what in ("item5", "all"):
        item5()
