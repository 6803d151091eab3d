"""The ``aqmlab`` command's entry point: Ctrl-C at any moment, even while
the modules load, exits with status 130 and one line, never a traceback.

A Ctrl-C that lands inside a compiled module's initialisation (numpy,
pyarrow) comes out as ``ImportError: initialization failed``, not as
``KeyboardInterrupt``; the SIGINT handler installed here records every
interrupt, so that such an error is reported as the interrupt it was.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

#: Set once a SIGINT arrived (see :func:`interrupted`).
_INTERRUPTED = [False]


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _INTERRUPTED[0] = True
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether the user pressed Ctrl-C during this command."""
    return _INTERRUPTED[0]


def main() -> int:
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        from aqmlab.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        pass
    except BaseException:
        if not interrupted():
            raise
    print("aqmlab: interrupted", file=sys.stderr)
    return 130
