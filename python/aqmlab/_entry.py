"""The ``aqmlab`` command's entry point: Ctrl-C at any moment, even while
the modules load, exits with status 130 and one line, never a traceback.

While the modules load there is nothing to clean up, and the first
handler installed here ends the process at once with that line: a
``KeyboardInterrupt`` raised then can land in a compiled module's
initialisation (numpy, pyarrow: ``ImportError: initialization failed``) or
in one of the import machinery's callbacks, where Python prints it as an
ignored exception with its traceback and goes on. Once they are loaded the
second raises ``KeyboardInterrupt``, so that a command removes what it
had begun to write, and records every interrupt, so that an error it
causes is reported as the interrupt it was.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

#: Set once a SIGINT arrived (see :func:`interrupted`).
_INTERRUPTED = [False]


def _on_sigint_loading(signum: int, frame: FrameType | None) -> None:
    # A write to the descriptor, not print(): the handler may run while the
    # main code is inside a write to stderr.
    os.write(2, b"aqmlab: interrupted\n")
    os._exit(130)


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _INTERRUPTED[0] = True
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether the user pressed Ctrl-C during this command."""
    return _INTERRUPTED[0]


def _exit_now(status: int) -> int:
    """End the process at once with ``status``, its output flushed, as a
    command that asked for it (``aqmlab.cli.EXIT_NOW``) has finished: every
    file it wrote is closed and renamed into place, and no thread or child
    is left. The interpreter's teardown (modules, numpy's and pyarrow's
    allocators and thread pools: 20-45 ms with both loaded;
    0.1-0.2 s more with matplotlib) is skipped. Not under a profiler or a
    tracer (``python -m cProfile -m aqmlab ...``, coverage), which write
    their output at the ordinary exit; nor if the output cannot be flushed
    (a closed pipe), which the ordinary exit reports."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return status
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12's tools
    if monitoring is not None and any(monitoring.get_tool(i) for i in range(6)):
        return status
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        return status
    os._exit(status)


def main() -> int:
    signal.signal(signal.SIGINT, _on_sigint_loading)
    try:
        from aqmlab import cli

        signal.signal(signal.SIGINT, _on_sigint)
        status = cli.main()
        if cli.EXIT_NOW[0]:
            return _exit_now(status)
        return status
    except KeyboardInterrupt:
        pass
    except BaseException:
        if not interrupted():
            raise
    print("aqmlab: interrupted", file=sys.stderr)
    return 130
