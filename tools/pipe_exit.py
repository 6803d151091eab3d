"""How the tools end when the command reading their output stops early (``| head``): quietly,
with exit status 1, as ``aqmlab`` does, rather than with a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable


def run(main: Callable[[], int]) -> int:
    """``main()``'s exit status, or 1 when its output's reader has gone (the rest of the output
    is dropped: standard output goes to the null device, so that Python's own flush at exit
    does not fail again)."""
    try:
        rc = main()
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
