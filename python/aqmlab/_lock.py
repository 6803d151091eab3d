"""One writer at a time for a results folder.

A command that writes a run folder or a sweep folder first holds the
folder's lock: the file ``.NAME.lock`` beside the folder (so that it
survives the folder being replaced by a rename), locked with ``flock`` and
holding a line that names its holder (process, host, command, since when).
A second writer is refused at once with :class:`FolderBusy`, which names
the holder. The kernel releases the lock when its holder dies, however it
dies (SIGKILL included), so a dead holder's lock is taken over by the next
writer without any clean-up; the holder removes the file when it is done.

A process may take the lock of a folder it already holds (the count is
kept per process), so a command and the library functions it calls can
each hold the folder they write.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["FolderBusy", "hold", "lock_path"]


class FolderBusy(Exception):
    """Another process is writing the folder."""


#: Locks this process holds: lock file -> (descriptor, depth).
_held: dict[Path, tuple[int, int]] = {}


def lock_path(folder: str | os.PathLike[str]) -> Path:
    """The lock file of ``folder``: ``.NAME.lock`` in its parent."""
    p = Path(os.path.abspath(folder))
    return p.parent / f".{p.name or 'root'}.lock"


def _holder_text(fd: int) -> str:
    try:
        raw = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        h = json.loads(raw)
        cmd = " ".join(h.get("command", [])) or "aqmlab"
        return f"process {h['pid']} on {h['host']} (`{cmd}`, since {h['since']})"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "another process"


def _acquire(path: Path, folder: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder_text(fd)
            os.close(fd)
            raise FolderBusy(
                f"{folder}: being written by {holder}; wait for it to finish or choose "
                "another folder"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The holder before us may have removed the file between our open
        # and our lock: then we locked a file nobody else can see. Try again.
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


@contextmanager
def hold(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``folder``'s lock while the block runs; :class:`FolderBusy` if
    another process holds it. The lock file's parent is created if need be."""
    path = lock_path(folder)
    if path in _held:
        fd, depth = _held[path]
        _held[path] = (fd, depth + 1)
    else:
        fd = _acquire(path, Path(folder))
        try:
            me = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "command": ["aqmlab", *sys.argv[1:]]
                if Path(sys.argv[0]).name in ("aqmlab", "__main__.py")
                else list(sys.argv),
                "since": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        except OSError:
            pass  # a full disk: the lock holds all the same, its holder unnamed
        _held[path] = (fd, 1)
    try:
        yield
    finally:
        fd, depth = _held[path]
        if depth > 1:
            _held[path] = (fd, depth - 1)
        else:
            del _held[path]
            with suppress(OSError):
                os.unlink(path)
            os.close(fd)
