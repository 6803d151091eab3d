"""The ``aqmlab`` command end to end: run, plot, demo scenarios, Ctrl-C."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab import results

from conftest import ROOT, SMALL, aqmlab_cli, assert_clean_error


def test_run_writes_a_result_folder_and_prints_a_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # Block-buffered output into a pipe, as in a script: the command ends
    # without the interpreter's teardown, so its last line must have been
    # flushed before (aqmlab._entry._exit_now).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    p = aqmlab_cli("run", SMALL, "--out", out, "--seed", "3", "--set", "aqm.max_p=0.05", env=env)
    assert p.returncode == 0, p.stderr
    assert "utilization" in p.stdout and "Jain fairness" in p.stdout
    assert p.stdout.splitlines()[-1] == f"results in {out}"
    assert sorted(x.name for x in out.iterdir()) == sorted(results.FILES)
    man = json.loads((out / "manifest.json").read_text())
    assert man["seed"] == 3
    assert man["scenario"]["aqm"]["max_p"] == 0.05
    assert man["command"][:2] == ["aqmlab", "run"]
    assert "--set" in man["command"]
    # Running again over an earlier result replaces it.
    p = aqmlab_cli("run", SMALL, "--out", out, "--quiet")
    assert p.returncode == 0, p.stderr
    assert json.loads((out / "manifest.json").read_text())["seed"] == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == ["run"]


def test_profiler_output_survives_the_quick_exit(tmp_path: Path) -> None:
    """The command ends without the interpreter's teardown, but not under a
    profiler, which writes its output at the ordinary exit."""
    prof = tmp_path / "run.prof"
    cmd = [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "aqmlab", "run", str(SMALL)]
    p = subprocess.run(
        [*cmd, "--quiet", "--out", str(tmp_path / "run")], capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr
    assert prof.stat().st_size > 0


def test_plot(tmp_path: Path) -> None:
    text = SMALL.read_text()
    droptail = tmp_path / "droptail.toml"
    droptail.write_text(re.sub(r"\[aqm\]\n(.+\n)+", '[aqm]\nkind = "droptail"\n', text))
    for name, file in (("red", SMALL), ("droptail", droptail)):
        p = aqmlab_cli("run", file, "--out", tmp_path / name, "--quiet", "--set", "duration=8s")
        assert p.returncode == 0, p.stderr
    p = aqmlab_cli("plot", tmp_path / "red")
    assert p.returncode == 0, p.stderr
    png = tmp_path / "red" / "queue.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    both = tmp_path / "both.png"
    p = aqmlab_cli("plot", tmp_path / "red", tmp_path / "droptail", "-o", both)
    assert p.returncode == 0, p.stderr
    assert both.stat().st_size > 1000


def test_python_dash_m_and_version() -> None:
    p = aqmlab_cli("--version")
    assert p.returncode == 0
    assert p.stdout.startswith("aqmlab ")


def test_shipped_scenarios_validate() -> None:
    files = sorted((ROOT / "scenarios").glob("*.toml"))
    assert {"canonical.toml", "demo_red.toml", "demo_droptail.toml"} <= {f.name for f in files}
    p = aqmlab_cli("validate", *files)
    assert p.returncode == 0, p.stderr


def test_ctrl_c_stops_the_run_and_writes_nothing(tmp_path: Path) -> None:
    # A run far longer than the test: only Ctrl-C ends it.
    out = tmp_path / "long"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aqmlab",
            "run",
            str(SMALL),
            "--out",
            str(out),
            "--quiet",
            "--set",
            "duration=100000s",
            "--set",
            "metrics.sample_interval=100s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3.0)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_parser_imports_no_heavy_module() -> None:
    """Building the parser (every command's, or the run command's alone)
    imports neither numpy, pyarrow, SciPy nor matplotlib: `aqmlab
    run` loads those beside the engine."""
    code = (
        "import sys, aqmlab.cli as c\n"
        "c.build_parser('run'); c.build_parser()\n"
        "heavy = ('numpy', 'pyarrow', 'scipy', 'matplotlib')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]", out


def test_quick_demo_says_before_its_table_that_it_is_not_meant_to_match(tmp_path: Path) -> None:
    p = aqmlab_cli("demo", "--quick", "--jobs", "2", "-o", tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    # What is about to run, with the paper named (not its seed file).
    assert out.startswith("demo: thesis-5.5.3 (quick form)"), out[:300]
    assert "Chen 2010, section 5.5.3" in out.splitlines()[1]
    assert "003_b277268f444f7691" not in out
    note = out.index("note: this is the quick form")
    table = out.index("\nTable 5-3")  # the table's title line
    assert note < table
    said = out[note:table]
    assert "not meant to match the paper's" in said
    assert "`aqmlab reproduce thesis-5.5.3`" in said
    assert "40.6" in said and "39.4" in said
    # The demo's own note, not the report's generic one as well.
    assert out.count("note: this is the quick form") == 1
    assert (tmp_path / "thesis-5.5.3-quick" / "report" / "index.html").is_file()


def test_demo_runs_the_full_form_by_default_and_checks_its_flags(tmp_path: Path) -> None:
    from aqmlab import demo

    # The full form by default: its folder has no "-quick" and its scenario the full length.
    from aqmlab.experiments.catalog import find_preset
    from aqmlab.experiments.spec import load_experiment

    preset = find_preset(demo.DEMO_PRESET)
    assert preset is not None
    full = load_experiment(preset.path)
    assert not full.quick
    for bad, flag in (("0", "--jobs"), ("two", "--jobs")):
        p = aqmlab_cli("demo", flag, bad, "-o", tmp_path)
        assert_clean_error(p)
        assert "--jobs" in p.stderr and repr(bad) in p.stderr
    p = aqmlab_cli("demo", "--preset", "no-such-preset", "-o", tmp_path)
    assert_clean_error(p)
    assert "no-such-preset" in p.stderr and "reproduce --list" in p.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.crosscheck
def test_the_demos_full_form_gives_the_figure_its_quick_form_quotes() -> None:
    """The quick demo's note quotes the full form's PI-40 queue; this runs that point in full
    (2000 simulated seconds) and checks the quote."""
    import numpy as np

    import aqmlab
    from aqmlab import demo
    from aqmlab.experiments.catalog import find_preset
    from aqmlab.experiments.points import resolve_points
    from aqmlab.experiments.spec import load_experiment

    preset = find_preset(demo.DEMO_PRESET)
    assert preset is not None
    point = next(p for p in resolve_points(load_experiment(preset.path)) if p.scheme == "PI-40")
    assert point.scenario is not None
    r = aqmlab.run(point.scenario)
    # The metric of Table 5-3: the queue in 500-byte (mean-size) packets over the whole run.
    queue = float(np.mean(r.queue.column("queue_bytes").to_numpy())) / 500
    assert f"mean queue is {queue:.1f} packets" in demo.FULL_FORM_FIGURES, queue
