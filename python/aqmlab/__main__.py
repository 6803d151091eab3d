"""``python -m aqmlab``: the command line."""

from aqmlab.cli import main

raise SystemExit(main())
