"""Running points on a Dask distributed cluster (``--scheduler tcp://HOST:PORT``).

Points travel as plain data (the resolved scenario, its seed inside, and
the timeout); a worker runs :func:`run_task` in memory and sends back the
result's parts (the summary, the manifest's facts, and each table as Arrow
IPC bytes). Only the client writes the output folder. A worker that dies
has its points rescheduled by Dask on the others (up to the scheduler's
``distributed.scheduler.allowed-failures``, 3 by default; after that the
point fails with ``KilledWorker``); since a run depends only on its
scenario and seed, where it ran does not change its result.

Needs ``distributed`` (``pip install 'aqmlab[dask]'``), and on every worker
the same aqmlab as on the client.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from aqmlab.experiments.pool import Listener, Task

__all__ = ["ClusterError", "run_dask", "run_task"]

#: Seconds to wait for the scheduler to answer and for a first worker.
CONNECT_TIMEOUT_S = 20.0


class ClusterError(Exception):
    """The cluster cannot be used (no distributed, no scheduler, no worker)."""


def _distributed() -> Any:
    """The ``distributed`` module (imported here, typed loosely: it is an
    optional dependency without complete type hints)."""
    import importlib

    return importlib.import_module("distributed")


def _ipc(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return bytes(sink.getvalue().to_pybytes())


def _from_ipc(b: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(b)).read_all()


def run_task(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one point on a worker; return plain data (never raises for a
    point's own failure, so Dask does not retry a deterministic error)."""
    from aqmlab.api import TABLES
    from aqmlab.experiments.execute import PointFailure, execute

    t0 = time.monotonic()
    try:
        r = execute(task["scenario"], task.get("timeout"))
    except PointFailure as e:
        return {"ok": False, "error": str(e), "worker": socket.gethostname()}
    tables = {name: _ipc(getattr(r, name)) for name in TABLES}
    return {
        "ok": True,
        "scenario": r.scenario,
        "summary": r.summary,
        "peak_packets": r.peak_packets,
        "engine_version": r.engine_version,
        "aqmlab_version": r.aqmlab_version,
        "created_at": r.created_at,
        "tables": tables,
        "worker": socket.gethostname(),
        "busy_s": time.monotonic() - t0,
    }


def _versions() -> dict[str, str]:
    """Run on each worker by the preflight check."""
    from aqmlab import _core
    from aqmlab._engine import _version

    return {"engine": _core.ENGINE_VERSION, "aqmlab": _version()}


def result_from_data(d: Mapping[str, Any]) -> Any:
    """A :class:`aqmlab.RunResult` from what :func:`run_task` returned."""
    from aqmlab.api import TABLES, RunResult

    tables = {k: _from_ipc(v) for k, v in d["tables"].items()}
    missing = [name for name in TABLES if name not in tables]
    if missing:
        raise ValueError(f"the worker sent no {', '.join(missing)} table (another aqmlab?)")
    return RunResult(
        scenario=dict(d["scenario"]),
        summary=dict(d["summary"]),
        **{name: tables[name] for name in TABLES},
        peak_packets=int(d["peak_packets"]),
        engine_version=str(d["engine_version"]),
        aqmlab_version=str(d["aqmlab_version"]),
        created_at=str(d["created_at"]),
    )


def _quiet_logs() -> None:
    """Silence distributed's own logs (each of its loggers has a level of
    its own): aqmlab reports a lost scheduler or worker itself, in one line
    per point, and a reconnecting client's tracebacks would bury that."""
    for name in [n for n in logging.root.manager.loggerDict if n.startswith("distributed")]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)


def _reachable(address: str) -> None:
    """Refuse at once an address Dask cannot use, and a TCP scheduler that
    does not answer, before a ``Client`` exists (a client that failed to
    connect hangs the interpreter's exit for its own 40 s close timeout)."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends

    try:
        scheme, loc = parse_address(address)
    except ValueError as e:
        raise ClusterError(f"--scheduler {address!r}: {e}") from None
    if scheme not in backends:
        known = ", ".join(f"{b}://" for b in sorted(backends))
        raise ClusterError(
            f"--scheduler {address!r}: unknown address scheme {scheme!r}; one of {known} "
            "(for example tcp://127.0.0.1:8786)"
        )
    if scheme != "tcp":
        return
    try:
        host, port = parse_host_port(loc)
    except ValueError as e:
        raise ClusterError(f"--scheduler {address!r}: {e}") from None
    if port is None:
        raise ClusterError(f"--scheduler {address!r}: give the port (tcp://HOST:PORT)")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise ClusterError(
            f"cannot connect to the Dask scheduler at {address}: {e.strerror or e}"
        ) from None


def connect(address: str) -> Any:
    """A ``distributed.Client`` for ``address`` with at least one worker
    that runs this aqmlab engine; :class:`ClusterError` otherwise."""
    try:
        dist = _distributed()
    except ImportError:
        raise ClusterError(
            "--scheduler needs Dask's distributed: pip install 'aqmlab[dask]'"
        ) from None
    _reachable(address)
    _quiet_logs()
    try:
        client = dist.Client(address, timeout=f"{CONNECT_TIMEOUT_S:g}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise ClusterError(f"cannot connect to the Dask scheduler at {address}: {e}") from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except (TimeoutError, OSError) as e:
        client.close()
        raise ClusterError(
            f"the Dask scheduler at {address} has no worker ({e}); start some with "
            f"`dask worker {address}`"
        ) from None
    try:
        found = client.run(_versions)
    except Exception as e:
        client.close()
        raise ClusterError(
            f"the workers of {address} cannot run aqmlab ({type(e).__name__}: {e}); "
            "install the same aqmlab on every worker"
        ) from None
    from aqmlab import _core

    other = {w: v for w, v in found.items() if v.get("engine") != _core.ENGINE_VERSION}
    if other:
        client.close()
        listed = ", ".join(f"{w} ({v.get('engine')})" for w, v in sorted(other.items()))
        raise ClusterError(
            f"workers run another aqmlab engine than this client ({_core.ENGINE_VERSION}): "
            f"{listed}; results would not be comparable"
        )
    return client


def run_dask(
    tasks: Sequence[Task],
    client: Any,
    timeout: float | None,
    listener: Listener,
    command: list[str] | None = None,
) -> None:
    """Run ``tasks`` on the Dask cluster of ``client`` (from :func:`connect`;
    closed at the end); the client writes each point's folder as its result
    arrives."""
    from aqmlab.experiments.store import write_point

    if not tasks:
        client.close()
        return
    by_key: dict[str, Task] = {}
    futures = []
    try:
        for i, t in enumerate(sorted(tasks, key=lambda t: -t.est_events)):
            key = f"aqmlab-point-{t.id}-{i}"
            by_key[key] = t
            payload = {"id": t.id, "scenario": t.scenario, "timeout": timeout}
            futures.append(
                client.submit(run_task, payload, key=key, pure=False, priority=int(t.est_events))
            )
        ac = _distributed().as_completed(futures, loop=client.loop)
        running: dict[str, float] = {}
        last_poll = 0.0
        while not ac.is_empty():
            batch = ac.next_batch(block=False)
            if not batch:
                now = time.monotonic()
                if now - last_poll >= 1.0:
                    last_poll = now
                    _poll_running(client, by_key, running, listener)
                listener.tick()
                time.sleep(0.1)
                continue
            for fut in batch:
                t = by_key[fut.key]
                if t.key not in running:
                    listener.started(t)
                running.pop(t.key, None)
                try:
                    data = fut.result()
                except Exception as e:
                    listener.failed(t.key, _why(e, client))
                    fut.release()
                    continue
                fut.release()
                if not data.get("ok"):
                    listener.failed(t.key, str(data.get("error")))
                    continue
                t1 = time.monotonic()
                try:
                    write_point(Path(t.out), t.info, result_from_data(data), command)
                except OSError as e:
                    listener.failed(t.key, f"cannot write the point's folder: {e}")
                    continue
                except ValueError as e:
                    listener.failed(t.key, str(e))
                    continue
                busy = float(data.get("busy_s", 0.0)) + time.monotonic() - t1
                listener.done(t.key, float(data["summary"].get("wall_time_s", 0.0)), busy)
            listener.tick()
    except BaseException:
        for f in futures:
            if not f.done():
                f.cancel()
        raise
    finally:
        client.close()


def _why(e: Exception, client: Any) -> str:
    """One line on why a point's future failed."""
    text = " ".join(str(e).split())
    if "scheduler-connection-lost" in text or type(e).__name__ == "CommClosedError":
        return (
            f"the Dask scheduler {client.scheduler.address} was lost before the point came back; "
            "run the sweep again with --resume"
        )
    return f"{type(e).__name__}: {text}"


def _poll_running(
    client: Any, by_key: Mapping[str, Task], running: dict[str, float], listener: Listener
) -> None:
    """Tell the listener which points the workers hold now (at most one per
    worker thread)."""
    try:
        processing = client.processing()
        nthreads = client.nthreads()
    except Exception:
        return
    now_running: set[str] = set()
    for w, keys in processing.items():
        for k in list(keys)[: int(nthreads.get(w, 1))]:
            t = by_key.get(str(k))
            if t is not None:
                now_running.add(t.key)
                if t.key not in running:
                    running[t.key] = time.monotonic()
                    listener.started(t)
    for pid in [p for p in running if p not in now_running]:
        running.pop(pid)
        listener.requeued(pid)
