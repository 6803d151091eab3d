"""tools/drop_shares.py: where a full queue's drops fall, counted from a run's flow series and
drop trace (no testbed needed)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from file_modules import load


def _tool() -> ModuleType:
    return load("drop_shares", Path(__file__).parents[1] / "tools" / "drop_shares.py")


ds = _tool()


def test_drop_shares_by_window_class() -> None:
    # Four flows, windows 10, 10, 10 and 50 from 2 s (mean 20: three at half the mean, one at
    # 2.5 times), then one event at 5 s dropping one packet of flow 0 and one of flow 3, and a
    # SYN dropped at 0.5 s.
    fs = {
        "time_s": [2.0, 2.0, 2.0, 2.0],
        "flow": [0, 1, 2, 3],
        "cwnd": [10.0, 10.0, 10.0, 50.0],
        "srtt_s": [0.1, 0.1, 0.1, 0.2],
    }
    ev = {
        "time_s": [0.5, 5.0, 5.1],
        "flow": [2, 0, 3],
        "event": ["drop-overflow"] * 3,
        "packet": ["syn", "data", "data"],
    }
    side = ds.Side()
    ds.add_run(side, {"flows": {"jain_fairness": 0.9}}, fs, ev, 4, (3.0, 13.0))
    assert side.events == 1 and side.drops == 2 and side.hit == 2 and side.syn_drops == 1
    # Half the mean lies in the class from 0.5; 2.5 times in the class from 2.
    low, high = 1, 4
    assert side.drop_share[low] == pytest.approx(0.5)
    assert side.window_share[low] == pytest.approx(30 / 80)
    assert side.drop_share[high] == pytest.approx(0.5)
    assert side.window_share[high] == pytest.approx(50 / 80)
    assert (side.flows_hit[low], side.flows_seen[low]) == (1, 3)
    assert (side.flows_hit[high], side.flows_seen[high]) == (1, 1)
    # Jain's index of the windows: (80)^2 / (4 * 2800).
    assert side.window_jain[3.0] == [pytest.approx(6400 / 11200)]
    # The rates over 2-5 s: 100, 100, 100 and 250 segments/s (mean 137.5); no later stretch has
    # a sample.
    assert list(side.rate_jain) == [(2.0, 5.0)]
    assert side.rate_jain[(2.0, 5.0)] == [pytest.approx(550**2 / (4 * 92500))]
    assert side.rate_top[(2.0, 5.0)] == [pytest.approx(250 / 137.5)]


def test_seeds_are_ranges_or_lists() -> None:
    assert ds.seeds_of("1-3,7") == [1, 2, 3, 7]
