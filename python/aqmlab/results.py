"""Run folders on disk.

One folder per run::

    DIR/
      manifest.json    resolved scenario, seed, versions, wall time, creation time, command
      summary.json     every scalar figure (keys sorted)
      queue.parquet    the bottleneck's queue time series
      flows.parquet    one row per flow
      params.parquet   the bottleneck AQM's adapted parameters (time_s, name, value)
      responses.parquet  one row per completed web request/response (empty without web traffic)
      pings.parquet    one row per latency probe of the ``ping`` groups (empty without them)
      packets.pcap     the first packets through the monitored link (``metrics.pcap``; else absent)

A folder is written under the temporary sibling name ``DIR.tmp-<pid>`` and
renamed to ``DIR`` once complete, so an interrupted run never leaves a
complete-looking folder. An existing ``DIR`` is replaced only if it is an
earlier run folder (it has ``manifest.json``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab import _lock

if TYPE_CHECKING:
    from aqmlab.api import RunResult

__all__ = [
    "FILES",
    "MANIFEST",
    "ResultsError",
    "check_target",
    "hold_folder",
    "is_run_dir",
    "load_run",
    "summary_json",
    "write_run",
]

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
QUEUE = "queue.parquet"
FLOWS = "flows.parquet"
PARAMS = "params.parquet"
RESPONSES = "responses.parquet"
DELAY = "delay.parquet"
FLOW_SERIES = "flow_series.parquet"
EVENTS = "events.parquet"
PINGS = "pings.parquet"
#: The packet capture of ``metrics.pcap`` (only when it captured packets).
PCAP = "packets.pcap"
#: The per-group delay histograms of ``metrics.group_delays`` (only with it).
GROUP_DELAY = "group_delay.parquet"
#: The optional tables: (attribute of RunResult, file).
EXTRA_TABLES = (
    ("delay", DELAY),
    ("flow_series", FLOW_SERIES),
    ("events", EVENTS),
    ("pings", PINGS),
)
FILES = (MANIFEST, SUMMARY, QUEUE, FLOWS, PARAMS, RESPONSES, DELAY, FLOW_SERIES, EVENTS, PINGS)
#: Version of the folder layout, recorded in the manifest.
FORMAT = 1


class ResultsError(Exception):
    """A results folder cannot be written or read."""


def is_run_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a run folder (a directory holding ``manifest.json``)."""
    p = Path(path)
    return p.is_dir() and (p / MANIFEST).is_file()


def check_target(out: str | os.PathLike[str], probe: bool = False) -> Path:
    """Check that ``out`` may be written: it does not exist, or it is an
    earlier run folder. With ``probe``, also create (and remove) the
    temporary folder the run will write, so that a folder that cannot be
    written is found before a run rather than after it. Raises
    :class:`ResultsError` otherwise."""
    p = Path(out)
    if p.exists() and not is_run_dir(p):
        what = "a directory" if p.is_dir() else "a file"
        raise ResultsError(
            f"{p}: exists and is {what} that is not an aqmlab result folder "
            f"(no {MANIFEST}); refusing to overwrite it"
        )
    if probe:
        tmp = p.with_name(f"{p.name}.tmp-{os.getpid()}")
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp.mkdir()
            tmp.rmdir()
        except OSError as e:
            raise ResultsError(f"{p}: cannot write there: {e.strerror or e}") from None
    return p


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def clean_leftovers(target: Path) -> list[Path]:
    """Remove ``TARGET.tmp-<pid>`` and ``TARGET.old-<pid>`` folders left by
    runs that were killed (their process no longer exists). Returns them."""
    removed: list[Path] = []
    if not target.parent.is_dir():
        return removed
    for kind in ("tmp", "old"):
        for d in target.parent.glob(f"{glob_escape(target.name)}.{kind}-*"):
            pid = d.name.rsplit("-", 1)[-1]
            if pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
    return removed


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters taken literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def summary_json(summary: dict[str, Any]) -> str:
    """The text of ``summary.json``: keys sorted, two-space indent, newline."""
    return json.dumps(summary, sort_keys=True, indent=2, allow_nan=False) + "\n"


def manifest(result: RunResult) -> dict[str, Any]:
    """The content of ``manifest.json``."""
    return {
        "format": FORMAT,
        "aqmlab_version": result.aqmlab_version,
        "engine_version": result.engine_version,
        "seed": result.seed,
        "created_at": result.created_at,
        "wall_time_s": result.wall_time_s,
        "peak_packets": result.peak_packets,
        "command": result.command,
        "python": sys.version.split()[0],
        "files": [SUMMARY, QUEUE, FLOWS, PARAMS, RESPONSES, DELAY, FLOW_SERIES, EVENTS]
        + ([PCAP] if result.pcap else []),
        "scenario": result.scenario,
    }


def write_run(result: RunResult, out: str | os.PathLike[str], lock: bool = True) -> Path:
    """Write ``result`` into the run folder ``out`` and return its path.

    Everything goes into ``out.tmp-<pid>`` first; only a complete folder is
    renamed to ``out``. On any error the temporary folder is removed and
    ``out`` is left as it was. With ``lock`` the folder's lock is held
    meanwhile (:mod:`aqmlab._lock`): a folder another process is writing
    raises :class:`ResultsError` naming that process.
    """
    if not lock:
        return _write_run(result, out)
    with hold_folder(out):
        return _write_run(result, out)


@contextlib.contextmanager
def hold_folder(out: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the lock of the result folder ``out`` (see :mod:`aqmlab._lock`);
    :class:`ResultsError` if another process holds it."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(_lock.hold(out))
        except _lock.FolderBusy as e:
            raise ResultsError(str(e)) from None
        except OSError as e:
            raise ResultsError(f"{out}: cannot write there: {e.strerror or e}") from None
        yield


def _write_run(result: RunResult, out: str | os.PathLike[str]) -> Path:
    target = check_target(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(target)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        tmp.mkdir()
        _write_files(result, tmp)
        _replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _write_files(result: RunResult, d: Path) -> None:
    import pyarrow.parquet as pq  # on first use: `import aqmlab.results` stays light

    (d / SUMMARY).write_text(summary_json(result.summary), encoding="utf-8")
    pq.write_table(result.queue, d / QUEUE)
    pq.write_table(result.flows, d / FLOWS)
    pq.write_table(result.params, d / PARAMS)
    pq.write_table(result.responses, d / RESPONSES)
    for attr, name in EXTRA_TABLES:
        pq.write_table(getattr(result, attr), d / name)
    if result.group_delay.num_rows > 0:
        pq.write_table(result.group_delay, d / GROUP_DELAY)
    if result.pcap:
        (d / PCAP).write_bytes(result.pcap)
    # The manifest last: a folder with a manifest has everything else.
    text = json.dumps(manifest(result), indent=2, allow_nan=False) + "\n"
    (d / MANIFEST).write_text(text, encoding="utf-8")


def _replace(tmp: Path, target: Path) -> None:
    """Rename ``tmp`` to ``target``, moving an earlier run folder aside first."""
    if not target.exists():
        tmp.rename(target)
        return
    check_target(target)
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    if old.exists():
        shutil.rmtree(old)
    target.rename(old)
    try:
        tmp.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def load_run(path: str | os.PathLike[str]) -> RunResult:
    """Read a run folder back into a :class:`~aqmlab.api.RunResult`."""
    import pyarrow.parquet as pq

    from aqmlab.api import RunResult

    d = Path(path)
    if not is_run_dir(d):
        raise ResultsError(f"{d}: not an aqmlab result folder (no {MANIFEST})")
    try:
        man = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
        summary = json.loads((d / SUMMARY).read_text(encoding="utf-8"))
        queue = pq.read_table(d / QUEUE)
        flows = pq.read_table(d / FLOWS)
        params = pq.read_table(d / PARAMS) if (d / PARAMS).is_file() else None
        responses = pq.read_table(d / RESPONSES) if (d / RESPONSES).is_file() else None
        # Folders written before these tables existed have none of them.
        extra = {a: pq.read_table(d / f) for a, f in EXTRA_TABLES if (d / f).is_file()}
        if (d / GROUP_DELAY).is_file():
            extra["group_delay"] = pq.read_table(d / GROUP_DELAY)
        pcap = (d / PCAP).read_bytes() if (d / PCAP).is_file() else b""
    except (OSError, ValueError) as e:
        raise ResultsError(f"{d}: cannot read the result folder: {e}") from e
    return RunResult(
        scenario=man["scenario"],
        summary=summary,
        queue=queue,
        flows=flows,
        **({"params": params} if params is not None else {}),
        **({"responses": responses} if responses is not None else {}),
        **extra,
        pcap=pcap,
        peak_packets=int(man.get("peak_packets", 0)),
        engine_version=str(man.get("engine_version", "")),
        aqmlab_version=str(man.get("aqmlab_version", "")),
        created_at=str(man.get("created_at", "")),
        command=man.get("command"),
        folder=d,
    )
