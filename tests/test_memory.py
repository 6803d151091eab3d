"""Runs that do not fit in memory stop with one line.

- Before a run: the estimate of what it will store is checked against the
  memory the machine has free (``MemAvailable``, ``ulimit -v``), not only
  ``metrics.memory_limit``.
- While the results are handed to Python: every buffer is allocated with a
  check, so a result that does not fit raises ``MemoryError`` (never a
  PyO3 panic, an abort or a hang), and the CLI prints one line.
- The handover itself: columns arrive as Arrow buffers, typed as in Rust.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from aqmlab import api, cli

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = ROOT / "scenarios" / "canonical.toml"
SMALL = ROOT / "tests" / "data" / "small.toml"

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists(), reason="needs Linux /proc for ulimit -v sizes"
)

# Lowers the soft address-space limit step by step (the hard limit stays
# unlimited, so it can be raised again) until handing the results over
# fails; prints one line per step.
SWEEP = r"""
import resource, sys
from aqmlab import _core
from aqmlab.api import from_core, prepare
from aqmlab.scenario import to_json

text = to_json(prepare(sys.argv[1], overrides=[
    "metrics.sample_interval=20us", "metrics.start=0s", "duration=30s"]))
free = from_core(_core.run(text))
rows = free.queue.num_rows

def vmsize():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmSize:"))

inf = resource.RLIM_INFINITY
base = vmsize()
for mb in range(400, 100, -10):
    resource.setrlimit(resource.RLIMIT_AS, (base + mb * 2**20, inf))
    raw = None
    try:
        raw = _core.run(text)
        r = from_core(raw)
        same = {**r.summary, "wall_time_s": 0} == {**free.summary, "wall_time_s": 0}
        out = "ok" if r.queue.equals(free.queue) and same else "DIFFERENT"
    except MemoryError as e:
        out = "MemoryError " + str(e)
    finally:
        raw = r = None
        resource.setrlimit(resource.RLIMIT_AS, (inf, inf))
    print(mb, rows, out, flush=True)
    if out != "ok":
        break
"""


def test_results_that_do_not_fit_raise_memory_error() -> None:
    p = subprocess.run(
        [sys.executable, "-c", SWEEP, str(CANONICAL)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "RUST_BACKTRACE": "1"},
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "panicked" not in p.stderr and "Traceback" not in p.stderr, p.stderr[-2000:]
    lines = p.stdout.split("\n")[:-1]
    assert len(lines) >= 2, p.stdout
    # 1.5e6 queue rows of 8 columns: the run fits with 400 MB to spare, and
    # comes back complete and identical until the handover no longer fits.
    assert int(lines[0].split()[1]) == 1_500_001
    assert all(line.split()[2] == "ok" for line in lines[:-1]), p.stdout
    last = lines[-1].split(maxsplit=2)[2]
    assert last.startswith("MemoryError out of memory: "), p.stdout
    assert "of the results" in last


def test_cli_out_of_memory_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_room(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("out of memory: 12000016 more bytes for column link of the results")

    import aqmlab._engine

    monkeypatch.setattr(aqmlab._engine, "run_raw", no_room)
    status = cli.main(["run", str(SMALL), "-o", str(tmp_path / "r"), "-q"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1, err
    assert err.startswith(
        "error: out of memory (12000016 more bytes for column link of the results); store less"
    )
    assert "metrics.sample_interval" in err
    assert not (tmp_path / "r").exists()


def _limit_address_space(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))


def test_run_refused_when_the_machine_has_less_than_it_needs(tmp_path: Path) -> None:
    # About 2 GB of queue samples: under metrics.memory_limit (4 GB), over
    # what a 1.5 GiB address space leaves. Refused before the run, exit 2.
    p = subprocess.run(
        [
            *(sys.executable, "-m", "aqmlab", "run", str(SMALL), "-o", str(tmp_path / "r"), "-q"),
            *("--set", "metrics.sample_interval=2us", "--set", "metrics.start=0s"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limit_address_space(3 * 2**29),
    )
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip().splitlines()
    assert len(err) == 1, p.stderr
    assert "metrics.sample_interval: 2us would store 1.0e7 queue samples" in err[0]
    assert "free for it (free memory, ulimit -v)" in err[0]
    assert "a sample interval of at least" in err[0]
    assert not (tmp_path / "r").exists()


def test_available_memory_sees_ulimit() -> None:
    code = "import resource; from aqmlab._engine import available_memory; print(available_memory())"
    free = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    limited = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: _limit_address_space(3 * 2**30),
    ).stdout
    assert int(free) > 0
    assert 0 < int(limited) < 3 * 2**30 and int(limited) <= int(free)


def test_columns_arrive_as_arrow_buffers_of_their_rust_type() -> None:
    r = api.run(SMALL, overrides=["metrics.trace=true", "metrics.flow_series=[0, 1]"])
    assert r.queue.schema.field("link").type == pa.string()
    assert r.queue.schema.field("queue_pkts").type == pa.uint32()
    assert r.queue.schema.field("queue_bytes").type == pa.uint64()
    assert r.queue.schema.field("time_s").type == pa.float64()
    assert r.flows.schema.field("kind").type == pa.string()
    assert r.flows.column("kind").to_pylist() == ["bulk"] * 20
    assert r.flows.column("flow").to_pylist() == list(range(20))
    assert r.events.num_rows > 0
    assert r.events.schema.field("flow").type == pa.uint32()
    assert set(r.events.column("link").to_pylist()) <= {"bottleneck", "bottleneck-rev"}
    assert r.flow_series.column("flow").unique().to_pylist() == [0, 1]
    # A column's buffers: each type, strings with offsets, empty columns.
    q = api.column_array(("str", 3, b"abxyzc", _offsets([2, 5, 6])))
    assert q.to_pylist() == ["ab", "xyz", "c"]
    big = api.column_array(("large_str", 2, b"abc", _offsets([1, 3], width=8)))
    assert big.type == pa.large_string() and big.to_pylist() == ["a", "bc"]
    assert api.column_array(("bool", 3, bytes([1, 0, 1]), None)).to_pylist() == [True, False, True]
    assert api.column_array(("null", 0, b"", None)).type == pa.float64()
    assert api.column_array(("null", 0, b"", None), pa.uint32()).type == pa.uint32()
    import struct

    f = api.column_array(("f64", 2, struct.pack("=dd", 1.5, float("nan")), None))
    assert f.type == pa.float64() and f[0].as_py() == 1.5 and f[1].as_py() != f[1].as_py()
    assert api.column_array([1, 2], pa.uint64()).type == pa.uint64()


def _offsets(ends: list[int], width: int = 4) -> bytes:
    return b"".join(v.to_bytes(width, sys.byteorder, signed=True) for v in [0, *ends])
