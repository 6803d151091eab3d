"""What a sweep and a run promise about their folders (docs/experiments.md, "What a sweep
promises"): a point run on Dask is the same folder as one run locally; a lost scheduler fails
its points in one line each and --resume completes them; one writer per folder, a dead
writer's lock taken over; plans and phases that cannot be run refused before they start;
a full disk leaves no short file; bad paths answered in one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import aqmlab
from aqmlab._core import estimate
from daskcluster import dask_cluster

from conftest import ROOT, SMALL, aqmlab_cli, assert_clean_error

DATA = ROOT / "tests" / "data" / "experiments"
ALL_TABLES = DATA / "all-tables.toml"
SWEEP = DATA / "tiny-sweep.toml"
WEB = ROOT / "scenarios" / "web.toml"
#: Fields of a run folder's JSON files that time the run rather than describe it.
AQMLAB = [sys.executable, "-m", "aqmlab"]
TIMING = {"wall_time_s", "created_at", "command", "busy_s"}


def _untimed(d: object) -> object:
    if isinstance(d, dict):
        return {k: _untimed(v) for k, v in d.items() if k not in TIMING}
    if isinstance(d, list):
        return [_untimed(v) for v in d]
    return d


def _points(out: Path) -> dict[str, Path]:
    return {p.name: p for p in (out / "points").iterdir()}


def assert_same_points(a: Path, b: Path) -> int:
    """Every file of every point of sweep ``a`` equals ``b``'s: Parquet tables byte for byte,
    JSON files but for their timing fields. Returns the number of files compared."""
    pa_, pb = _points(a), _points(b)
    assert sorted(pa_) == sorted(pb)
    n = 0
    for pid, da in pa_.items():
        db = pb[pid]
        assert sorted(f.name for f in da.iterdir()) == sorted(f.name for f in db.iterdir()), pid
        for f in sorted(da.iterdir()):
            g = db / f.name
            if f.suffix == ".json":
                assert _untimed(json.loads(f.read_text())) == _untimed(json.loads(g.read_text())), (
                    pid,
                    f.name,
                )
            else:
                assert f.read_bytes() == g.read_bytes(), (pid, f.name)
            n += 1
    return n


def _sweep(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return aqmlab_cli("sweep", *args, "--no-report", timeout=timeout)


# ---------------------------------------------------------------------------
# Dask


def test_a_point_run_on_dask_is_the_same_folder_as_one_run_locally(tmp_path: Path) -> None:
    with dask_cluster(tmp_path) as c:
        p = _sweep(ALL_TABLES, "--out", tmp_path / "dask", "--scheduler", c.address)
    assert p.returncode == 0, p.stderr
    p = _sweep(ALL_TABLES, "--out", tmp_path / "local", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    n = assert_same_points(tmp_path / "dask", tmp_path / "local")
    # 4 points x (9 tables, summary, manifest, point.json); every table has rows.
    assert n == 4 * 12
    import pyarrow.parquet as pq

    some = next(iter(_points(tmp_path / "dask").values()))
    for name in aqmlab.api.TABLES:
        assert pq.read_table(some / f"{name}.parquet").num_rows > 0, name


def test_a_lost_scheduler_fails_its_points_in_one_line_each_and_resume_completes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "o"
    with dask_cluster(tmp_path) as c:
        proc = subprocess.Popen(
            [
                *AQMLAB,
                "sweep",
                str(SWEEP),
                "--out",
                str(out),
                "--no-report",
                "--set",
                "duration=200s",
                "--scheduler",
                c.address,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "points").is_dir() and list((out / "points").glob("*/point.json")):
                break
            time.sleep(0.02)
        c.scheduler.kill()
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    lost = [line for line in err.splitlines() if "was lost before the point came back" in line]
    done = len(list((out / "points").glob("*/point.json")))
    assert done >= 1 and len(lost) >= 1
    assert not [d for d in (out / "points").iterdir() if ".tmp-" in d.name]
    p = _sweep(SWEEP, "--out", out, "--resume", "--set", "duration=200s", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    assert len(list((out / "points").glob("*/point.json"))) == 8
    assert not list((out / "failed").glob("*.json"))


def test_an_address_dask_cannot_use_is_refused_at_once(tmp_path: Path) -> None:
    for address in ("garbage://x:y", "tcp://127.0.0.1", "tcp://127.0.0.1:1"):
        t0 = time.monotonic()
        p = _sweep(SWEEP, "--quick", "--out", tmp_path / "o", "--scheduler", address)
        assert time.monotonic() - t0 < 15, address
        assert_clean_error(p)
        assert "Dask scheduler" in p.stderr or "--scheduler" in p.stderr
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------
# One writer per folder


def _start_sweep(out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *AQMLAB,
            "sweep",
            str(SWEEP),
            "--out",
            str(out),
            "--no-report",
            "--set",
            "duration=300s",
            "--jobs",
            "1",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_lock(out: Path, proc: subprocess.Popen[str]) -> None:
    lock = out.parent / f".{out.name}.lock"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if lock.is_file() and lock.read_text().strip():
            return
        time.sleep(0.02)
    raise AssertionError("the sweep never took its folder's lock")


def test_a_second_sweep_into_one_folder_is_refused_and_the_first_completes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "D"
    first = _start_sweep(out)
    _wait_for_lock(out, first)
    second = _sweep(SWEEP, "--seeds", "3", "--out", out)
    assert_clean_error(second)
    assert f"{out}: being written by process {first.pid}" in second.stderr
    assert "aqmlab sweep" in second.stderr
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    exp = json.loads((out / "experiment.json").read_text())
    assert exp["experiment"]["seeds"] == [1, 2]
    assert sorted(_points(out)) == sorted({p["id"] for p in exp["points"]})
    assert len(_points(out)) == 8
    assert not (out.parent / ".D.lock").exists()


def test_a_report_is_not_built_while_a_sweep_writes_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "D"
    assert _sweep(SWEEP, "--quick", "--out", out).returncode == 0
    first = _start_sweep(out, "--resume")
    _wait_for_lock(out, first)
    p = aqmlab_cli("report", out)
    assert_clean_error(p)
    assert f"being written by process {first.pid}" in p.stderr
    first.kill()
    first.wait()


def test_a_second_run_into_one_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "r"
    first = subprocess.Popen(
        [*AQMLAB, "run", str(SMALL), "--out", str(out), "--quiet", "--set", "duration=3000s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_lock(out, first)
    second = aqmlab_cli("run", SMALL, "--out", out, "--quiet")
    assert_clean_error(second)
    assert f"being written by process {first.pid}" in second.stderr
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert aqmlab.load_run(out).summary["duration_s"] == 3000.0


def test_a_killed_writers_lock_is_taken_over(tmp_path: Path) -> None:
    out = tmp_path / "D"
    first = _start_sweep(out)
    _wait_for_lock(out, first)
    first.send_signal(signal.SIGKILL)
    first.wait()
    # The lock file stays behind, but nobody holds it.
    assert (tmp_path / ".D.lock").is_file()
    p = _sweep(SWEEP, "--out", out, "--resume", "--set", "duration=300s", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    assert len(_points(out)) == 8
    assert not (tmp_path / ".D.lock").exists()


# ---------------------------------------------------------------------------
# What cannot be run is refused before it starts


def _peak_of(args: list[str]) -> tuple[int, float, int, str]:
    """Run ``aqmlab ARGS`` from a fresh interpreter and return (exit status, wall seconds,
    peak memory of that run alone in bytes, stderr)."""
    code = (
        "import json, os, resource, subprocess, sys, time\n"
        "t0 = time.monotonic()\n"
        "p = subprocess.run([sys.executable, '-m', 'aqmlab', *sys.argv[1:]], "
        "capture_output=True, text=True)\n"
        "wall = time.monotonic() - t0\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
        "print(json.dumps([p.returncode, wall, peak, p.stderr]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600
    )
    status, wall, peak, err = json.loads(r.stdout)
    return int(status), float(wall), int(peak), str(err)


@pytest.mark.parametrize(
    ("text", "args", "field"),
    [
        ("seeds = 1000000000000", [], "experiment.seeds"),
        ("seeds = 1", ["--seeds", "99999999999"], "--seeds"),
    ],
)
def test_an_unbounded_plan_is_refused_in_a_second_and_little_memory(
    tmp_path: Path, text: str, args: list[str], field: str
) -> None:
    exp = tmp_path / "big.toml"
    exp.write_text(
        f'[experiment]\nname = "big"\nscenario = "{SMALL}"\n{text}\n[[scheme]]\nname = "A"\n'
    )
    status, wall, peak, err = _peak_of(["sweep", str(exp), "--dry-run", *args])
    assert status == 2, err
    assert err.startswith(f"error: {exp}: {field}: ") and "at most 100000 points" in err, err
    assert len(err.strip().splitlines()) == 1
    assert wall < 1.0 + 2.0  # the interpreter's start-up on a busy machine aside
    assert peak < 100e6, peak


def test_a_plan_of_many_factor_values_names_the_largest_part(tmp_path: Path) -> None:
    exp = tmp_path / "wide.toml"
    values = ", ".join(str(v) for v in range(1, 102))
    exp.write_text(
        f'[experiment]\nname = "wide"\nscenario = "{SMALL}"\nseeds = 500\n'
        '[[scheme]]\nname = "A"\n[[scheme]]\nname = "B"\n'
        f'[[factor]]\nname = "flows"\nkey = "traffic[0].flows"\nvalues = [{values}]\n'
    )
    p = _sweep(exp, "--dry-run", "--out", tmp_path / "o")
    assert_clean_error(p)
    assert "experiment.seeds: 500 entries make 101000 points" in p.stderr
    assert "(2 scheme x 101 factor.flows.values x 500 experiment.seeds)" in p.stderr


def _web_with_phases(path: Path, spans: list[tuple[float, float]], duration: str) -> Path:
    text = WEB.read_text().split("[metrics]")[0]
    listed = ", ".join(f"[{a:.4f}, {b:.4f}]" for a, b in spans)
    path.write_text(
        f'{text}[metrics]\nstart = "10s"\nphases = [{listed}]\n'.replace(
            'duration = "60s"', f'duration = "{duration}"'
        )
    )
    return path


def test_ten_thousand_phases_are_refused_or_run_within_the_estimate(tmp_path: Path) -> None:
    # 10 000 phases over one span: each keeps every flow's counters while open.
    f = _web_with_phases(tmp_path / "over.toml", [(10.0, 60.0)] * 10_000, "60s")
    status, _, _, err = _peak_of(["run", str(f), "--out", str(tmp_path / "a"), "--quiet"])
    assert status == 2, err
    assert "metrics.phases: 10000 phases (10001 measurement intervals open at once" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "a").exists()
    # 10 000 phases one after another: run, within the estimate.
    spans = [(10 + 10 * i / 10_000, 10 + 10 * (i + 1) / 10_000) for i in range(10_000)]
    f = _web_with_phases(tmp_path / "after.toml", spans, "20s")
    status, _, peak, err = _peak_of(["run", str(f), "--out", str(tmp_path / "b"), "--quiet"])
    assert status == 0, err
    est = estimate(json.dumps(aqmlab.load(f)))
    assert est["phases"] == 10_000
    base = _web_with_phases(tmp_path / "none.toml", [(10.0, 20.0)], "20s")
    _, _, base_peak, _ = _peak_of(["run", str(base), "--out", str(tmp_path / "c"), "--quiet"])
    assert peak - base_peak <= est["bytes"], (peak, base_peak, est["bytes"])
    assert len(json.loads((tmp_path / "b" / "summary.json").read_text())["phases"]) == 10_000


# ---------------------------------------------------------------------------
# Accepted where it should not be; paths that cannot be written


def test_more_phase_names_than_phases_fail_the_points_by_name(tmp_path: Path) -> None:
    exp = tmp_path / "three.toml"
    exp.write_text(
        f'[experiment]\nname = "three"\nscenario = "{SMALL}"\n'
        'set = [\'duration="6s"\', \'metrics.start="2s"\', "metrics.phases=[[2,4],[4,6]]"]\n'
        '[[scheme]]\nname = "RED"\n'
        '[[phase]]\nname = "a"\n[[phase]]\nname = "b"\n[[phase]]\nname = "c"\n'
    )
    p = _sweep(exp, "--out", tmp_path / "o")
    assert p.returncode == 1
    assert "phase: the experiment names 3 phase(s) but this point's scenario has 2" in p.stderr
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "o" / "summary.parquet").to_pylist()
    assert {r["status"] for r in rows} == {"failed"}


def test_a_report_over_an_unreadable_summary_names_the_file(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert _sweep(SWEEP, "--quick", "--out", out).returncode == 0
    (out / "summary.parquet").write_text("garbage")
    p = aqmlab_cli("report", out)
    assert_clean_error(p)
    assert f"{out / 'summary.parquet'}: cannot read:" in p.stderr
    assert "--resume" in p.stderr


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    f = tmp_path / "afile"
    f.write_text("x")
    return f


@pytest.mark.parametrize("where", ["/proc/1/x", "AFILE/sub"])
@pytest.mark.parametrize(
    "command",
    [
        ["sweep", str(SWEEP), "--quick", "--no-report", "--out"],
        ["reproduce", "example-schemes", "--quick", "--no-report", "--out"],
        ["run", str(SMALL), "--out"],
        ["examples", "-o"],
        ["design", "red", "--rate", "10Mbps", "--rtt", "100ms", "--flows", "20", "-o"],
    ],
)
def test_an_output_that_cannot_be_written_is_one_line(
    command: list[str], where: str, a_file: Path
) -> None:
    target = where.replace("AFILE", str(a_file))
    if command[0] == "design":
        target += ".png"
    p = aqmlab_cli(*command, target)
    assert p.returncode in (1, 2), p.stderr
    assert p.stderr.startswith("error: "), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    assert ("afile" if "afile" in target else "/proc/1") in p.stderr


# ---------------------------------------------------------------------------
# A full disk


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs at ``tmp_path/disk`` (needs root)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("a full disk is made with a small tmpfs, which needs root")
    d = tmp_path / "disk"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(d)])
    if r.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", str(d)], check=False)


def _fill(d: Path) -> None:
    """Fill the disk ``d`` to its last byte."""
    for name, size in (("filler", 65536), ("filler2", 1)):
        try:
            with open(d / name, "wb", buffering=0) as f:
                while True:
                    f.write(b"\0" * size)
        except OSError:
            pass


def _short_files(d: Path) -> list[Path]:
    return [
        p
        for p in d.rglob("*")
        if ".tmp-" in p.name or (p.is_file() and p.stat().st_size == 0 and "filler" not in p.name)
    ]


def test_a_full_disk_leaves_no_short_file(full_disk: Path, tmp_path: Path) -> None:
    out = full_disk / "sweep"
    assert _sweep(SWEEP, "--quick", "--out", out).returncode == 0
    run = tmp_path / "run"
    assert aqmlab_cli("run", SMALL, "--out", run, "--quiet", "--set", "duration=6s").returncode == 0
    points_before = sorted(_points(out))
    _fill(full_disk)
    commands = [
        ["sweep", str(SWEEP), "--quick", "--no-report", "--resume", "--out", str(out)],
        ["sweep", str(SWEEP), "--no-report", "--resume", "--out", str(out)],
        ["plot", str(run), "-o", str(full_disk / "q.png")],
        ["compare", str(run), str(run), "--format", "csv", "-o", str(full_disk / "c.csv")],
        ["examples", "-o", str(full_disk / "ex")],
        ["run", str(SMALL), "--out", str(full_disk / "r"), "--set", "duration=6s"],
    ]
    for c in commands:
        p = aqmlab_cli(*c)
        assert p.returncode != 0, (c, p.stdout)
        last = p.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ") and "No space left on device" in p.stderr, (c, p.stderr)
        assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
        assert not _short_files(full_disk), (c, _short_files(full_disk))
    assert not (full_disk / "ex").exists() and not (full_disk / "r").exists()
    # The sweep's points are as they were; with room again, --resume completes it.
    assert sorted(_points(out)) == points_before
    (full_disk / "filler").unlink()
    (full_disk / "filler2").unlink(missing_ok=True)
    p = _sweep(SWEEP, "--quick", "--resume", "--out", out)
    assert p.returncode == 0, p.stderr


def test_a_writer_killed_before_its_experiment_json_leaves_a_folder_a_sweep_takes(
    tmp_path: Path,
) -> None:
    # Killed while experiment.json was still its temporary sibling: the folder holds only that.
    out = tmp_path / "D"
    out.mkdir()
    (out / ".experiment.json.tmp-4242").write_text("{")
    p = _sweep(SWEEP, "--out", out, "--resume", "--set", "duration=300s", "--jobs", "2")
    assert p.returncode == 0, p.stderr
    assert len(_points(out)) == 8
    assert not (out / ".experiment.json.tmp-4242").exists()
