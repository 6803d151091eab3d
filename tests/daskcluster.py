"""A Dask cluster on 127.0.0.1 for the tests: a scheduler and workers started as the `dask`
command starts them, each in its own process group, torn down at the end."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)


def _start(cmd: list[str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=log.open("wb"), start_new_session=True
    )


def dask_command() -> str:
    """The `dask` command beside this interpreter; skips the test without it."""
    pytest.importorskip("distributed", reason="needs Dask's distributed (pip install aqmlab[dask])")
    dask = shutil.which("dask", path=str(Path(sys.executable).parent)) or shutil.which("dask")
    if dask is None:
        pytest.skip("the `dask` command is not installed")
    return dask


def _scheduler_address(sched_file: Path, deadline: float) -> str:
    """The address the scheduler writes to ``sched_file``, once the file is whole: it
    appears before its contents (an empty or partial file is read again until the
    deadline)."""
    while True:
        try:
            return str(json.loads(sched_file.read_text())["address"])
        except (OSError, ValueError, KeyError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


@contextmanager
def dask_cluster(tmp: Path, workers: int = 2) -> Iterator[Cluster]:
    """A scheduler on 127.0.0.1 (a free port) and ``workers`` workers of one
    thread each, named w0, w1, ...; every process is ended on the way out."""
    dask = dask_command()
    sched_file = tmp / "scheduler.json"
    cmd = [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"]
    sched = _start([*cmd, "--scheduler-file", str(sched_file)], tmp / "scheduler.log")
    cluster = Cluster("", sched)
    try:
        cluster.address = _scheduler_address(sched_file, time.monotonic() + 60)
        assert cluster.address.startswith("tcp://127.0.0.1:")
        for i in range(workers):
            args = ["--nthreads", "1", "--no-nanny", "--no-dashboard", "--name", f"w{i}"]
            cluster.workers.append(
                _start([dask, "worker", cluster.address, *args], tmp / f"worker{i}.log")
            )
        yield cluster
    finally:
        procs = [*cluster.workers, sched]
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
