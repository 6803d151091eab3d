"""The ``aqmlab`` command's entry point: Ctrl-C at any moment, even while
the modules load, exits with status 130 and one line, never a traceback."""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from aqmlab.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:
        print("aqmlab: interrupted", file=sys.stderr)
        return 130
