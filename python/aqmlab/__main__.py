"""``python -m aqmlab``: the command line."""

from aqmlab._entry import main

raise SystemExit(main())
