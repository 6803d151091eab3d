"""Files written whole or not at all.

Every file a command writes for the user (a figure, a table, a copied
scenario, a sweep's JSON) goes first to a hidden temporary sibling
``.NAME.tmp-PID`` and is renamed over ``NAME`` only once complete, so a
full disk, a Ctrl-C or a kill leaves either the earlier file or none, never
a short one. On failure the temporary file is removed and the error raised.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

__all__ = ["probe", "save_figure", "tmp_name", "write_bytes", "write_text", "write_via"]


def tmp_name(path: str | os.PathLike[str]) -> Path:
    """The temporary sibling a write of ``path`` goes through."""
    p = Path(path)
    return p.with_name(f".{p.name}.tmp-{os.getpid()}")


def write_via(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` to write the temporary sibling of ``path``, then
    rename it over ``path``; on any error remove it and raise."""
    p = Path(path)
    tmp = tmp_name(p)
    try:
        write(tmp)
        os.replace(tmp, p)
    except BaseException as e:
        with suppress(OSError):
            tmp.unlink()
        if isinstance(e, OSError) and e.errno is not None:
            # Named by the file the user asked for, not the temporary one.
            raise OSError(e.errno, e.strerror, str(p)) from e
        raise
    return p


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary sibling."""

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    return write_via(path, write)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary sibling."""
    return write_bytes(path, text.encode("utf-8"))


def probe(path: str | os.PathLike[str]) -> None:
    """Raise the ``OSError`` a write of ``path`` would meet (no folder, no
    permission), before the work that makes its content; writes nothing."""
    tmp = tmp_name(path)
    with open(tmp, "wb"):
        pass
    tmp.unlink()


def save_figure(fig: Any, path: str | os.PathLike[str], **kw: Any) -> Path:
    """``fig.savefig`` into memory, then :func:`write_bytes`; the format is
    the suffix's."""
    p = Path(path)
    buf = io.BytesIO()
    fig.savefig(buf, format=p.suffix.lstrip(".").lower() or "png", **kw)
    return write_bytes(p, buf.getvalue())
