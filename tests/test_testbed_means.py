"""tools/testbed_means.py: the testbed grid's cells over seeds, each side's mean and the band on
the means, read from testbed_matrix.py's --json files (no testbed needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from file_modules import load


def _tool() -> ModuleType:
    return load("testbed_means", Path(__file__).parents[1] / "tools" / "testbed_means.py")


tm = _tool()


def _cell(aqm: str, sim: tuple[float, float, float], tb: tuple[float, float, float]) -> dict:
    def side(v: tuple[float, float, float]) -> dict[str, float]:
        return {"utilisation": v[0], "queue": v[1], "jain": v[2], "drops": 0.0}

    return {
        "cc": "bbr",
        "aqm": aqm,
        "flows": 5,
        "rate_mbps": 10.0,
        "ecn": False,
        "reference": "testbed",
        "sim": side(sim),
        "testbed": side(tb),
    }


def _write(tmp: Path, name: str, cells: list[dict]) -> Path:
    p = tmp / name
    p.write_text(json.dumps(cells))
    return p


def test_means_and_the_band_on_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Jain: single runs 0.70 / 0.80 and 0.80 / 0.72, both outside 0.03; the means 0.75 and
    # 0.76 are within it. The queue: 10 against 14 and 12 against 16 packets, outside the band
    # (15 % of 11 + 2 = 3.65 on the means, 4 apart) in the means and in each run.
    a = _write(tmp_path, "s1.json", [_cell("pie", (0.99, 10.0, 0.70), (0.98, 14.0, 0.80))])
    b = _write(tmp_path, "s2.json", [_cell("pie", (0.98, 12.0, 0.80), (0.99, 16.0, 0.72))])
    out = tmp_path / "means.csv"
    assert tm.main([str(a), str(b), "--csv", str(out)]) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("bbr"))
    assert " 2  0.985 0.985 " in row
    assert "11.0    15.0*" in row
    assert "0.750 0.760 " in row and "0.760*" not in row
    assert row.endswith("2/0/0 of 2")
    assert "jain: the means within the band in 1 of 1 cells; single runs in 0 of 2" in text
    assert "queue: the means within the band in 0 of 1 cells; single runs in 0 of 2" in text
    # t: Jain's means 0.750 and 0.760, variances 0.005 and 0.0032, so -0.01 / sqrt(0.0041) =
    # -0.16; the queue's -4 / sqrt(2 / 2 + 2 / 2) = -2.83; utilisation's difference 0; the drops
    # (0 in every run) without spread.
    second = [line for line in text.splitlines() if line.startswith("bbr")][1]
    assert "utilisation 0.985/0.985 (+0.0)" in second
    assert "queue 11.0/15.0 (-2.8)" in second and "jain 0.750/0.760 (-0.2)" in second
    assert second.endswith("drops 0/0 (-)") and "timeouts" not in second
    rows = out.read_text().splitlines()
    assert rows[0].startswith("cc,aqm,flows,rate_mbps,ecn,reference,n,utilisation_sim")
    assert rows[1].startswith("bbr,pie,5,10.0,False,testbed,2,0.985,0.985")


def test_one_seed_gives_the_runs_verdict(tmp_path: Path) -> None:
    a = _write(tmp_path, "s1.json", [_cell("pie", (0.99, 10.0, 0.70), (0.98, 14.0, 0.80))])
    s = tm.summarise(tm.load([a])[("bbr", "pie", 5, 10.0, False, "testbed")])
    assert s["n"] == 1 and s["jain"]["sim_sd"] is None
    assert not s["jain"]["within"] and s["jain"]["runs_within"] == 0
    assert s["utilisation"]["within"] and s["utilisation"]["runs_within"] == 1


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ("not json", "s2.json: not a testbed_matrix.py --json"),
        ('[{"cc": "bbr"}]', "s2.json: not a testbed_matrix.py --json"),
    ],
)
def test_bad_files_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], second: str, message: str
) -> None:
    a = _write(tmp_path, "s1.json", [_cell("pie", (1, 1, 1), (1, 1, 1))])
    b = tmp_path / "s2.json"
    b.write_text(second)
    assert tm.main([str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: FILE ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_a_seed_run_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "a.json", [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "seed": 3}])
    b = _write(tmp_path, "b.json", [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "seed": 3}])
    assert tm.main([str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "b.json: seed 3's run of cell ('bbr', 'pie', 5, 10.0, False, 'testbed'), as in" in err
    assert "a.json" in err


def test_more_seeds_of_some_cells(tmp_path: Path) -> None:
    # A grid's two seeds hold PIE and DropTail; a third file holds PIE alone, with the seed of
    # neither: PIE's mean is over three runs, DropTail's over two, in the order first seen.
    a = _write(
        tmp_path,
        "s1.json",
        [
            {**_cell("pie", (1, 10.0, 1), (1, 10.0, 1)), "seed": 1},
            {**_cell("droptail", (1, 50.0, 1), (1, 50.0, 1)), "seed": 1},
        ],
    )
    b = _write(
        tmp_path,
        "s2.json",
        [
            {**_cell("droptail", (1, 52.0, 1), (1, 50.0, 1)), "seed": 2},
            {**_cell("pie", (1, 12.0, 1), (1, 10.0, 1)), "seed": 2},
        ],
    )
    c = _write(tmp_path, "pie-s3.json", [{**_cell("pie", (1, 14.0, 1), (1, 10.0, 1)), "seed": 3}])
    cells = tm.load([a, b, c])
    assert [k[1] for k in cells] == ["pie", "droptail"]
    pie, droptail = (tm.summarise(r) for r in cells.values())
    assert pie["n"] == 3 and pie["queue"]["sim"] == 12.0
    assert droptail["n"] == 2 and droptail["queue"]["sim"] == 51.0


def test_a_file_named_twice_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path, "s1.json", [_cell("pie", (1, 1, 1), (1, 1, 1))])
    assert tm.main([str(a), str(a)]) == 2
    assert "named twice" in capsys.readouterr().err


def test_runs_of_different_settings_are_not_pooled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file from before the settings were recorded reads as none on either side, so it pools
    # with a run that records none; a run with SACK compression off on both sides does not.
    old = _write(tmp_path, "s1.json", [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "seed": 1}])
    none = {"testbed_set": [], "sim_set": []}
    same = _write(tmp_path, "s2.json", [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "seed": 2, **none}])
    assert tm.summarise(tm.load([old, same])[("bbr", "pie", 5, 10.0, False, "testbed")])["n"] == 2
    off = ["tcp.sack_compression=false"]
    other = _write(
        tmp_path,
        "s3.json",
        [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "seed": 3, "testbed_set": off, "sim_set": off}],
    )
    assert tm.main([str(old), str(same), str(other)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: FILE ") and "s3.json: cell ('bbr', 'pie'" in err
    assert "['tcp.sack_compression=false'] on the kernel" in err
    assert (
        "where " in err and "s1.json's ran with none on the kernel and none on the simulator" in err
    )
    # A field that is not a list names the file.
    bad = _write(tmp_path, "s4.json", [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "sim_set": "x=1"}])
    assert tm.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "s4.json: not a testbed_matrix.py --json (sim_set: 'x=1' is not a list" in err


def test_a_reader_that_stops_early_ends_it_quietly(tmp_path: Path) -> None:
    # Two thousand cells print about 200 KB, more than a pipe holds: the reader closes its end
    # at once, and the tool ends with status 1 and nothing on its standard error
    # (tools/pipe_exit.py, as `aqmlab` does), not with a traceback.
    cells = [{**_cell("pie", (1, 1, 1), (1, 1, 1)), "flows": n, "seed": 1} for n in range(1, 2001)]
    many = _write(tmp_path, "s1.json", cells)
    tool = Path(__file__).parents[1] / "tools" / "testbed_means.py"
    p = subprocess.Popen(
        [sys.executable, str(tool), str(many)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) == 1
    assert err == b""
