"""``aqmlab testbed``: the subcommand (registered by aqmlab.cli)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from aqmlab.testbed.cpus import CPU_CHOICES, CPUS
from aqmlab.testbed.priority import ROUTER_PRIORITIES

__all__ = ["add_parser", "cmd_testbed"]


def add_parser(sub: Any, setarg: dict[str, Any]) -> None:
    t = sub.add_parser(
        "testbed",
        help="run a scenario on real Linux TCP through the AQM router (root; see docs/testbed.md)",
    )
    t.add_argument("file", nargs="?", metavar="FILE", help="scenario file (TOML)")
    t.add_argument("--out", "-o", metavar="DIR", help="result folder to write")
    t.add_argument("--seed", type=int, metavar="N", help="replace the scenario's seed")
    t.add_argument("--set", dest="sets", **setarg)
    t.add_argument(
        "--cc",
        default="reno",
        metavar="NAME",
        help="the kernel's TCP congestion control for every flow (default reno; "
        "see /proc/sys/net/ipv4/tcp_available_congestion_control)",
    )
    t.add_argument(
        "--router-priority",
        default=None,
        choices=ROUTER_PRIORITIES,
        help="how the router is scheduled: fifo, the real-time class (the default with shared "
        "CPUs), which keeps it on the link's time when the machine is busy, the hosts' programs "
        "in it below the router, or nice -10, the hosts' programs in the ordinary class, for a "
        "machine that refuses the real-time class and the only choice with --cpus pinned (see "
        "docs/testbed.md)",
    )
    t.add_argument(
        "--cpus",
        default=CPUS,
        choices=CPU_CHOICES,
        help="where the processes run: shared, wherever the kernel puts them (default), or "
        "pinned, the router alone on one CPU, polling, and the hosts' CPUs kept from halting "
        "(a halted CPU of a virtual machine wakes its tasks late; see docs/testbed.md)",
    )
    t.add_argument(
        "--cleanup",
        action="store_true",
        help="remove the namespaces and processes of testbeds whose aqmlab process is gone",
    )
    t.add_argument("--quiet", "-q", action="store_true", help="no progress lines or summary")
    t.set_defaults(func=cmd_testbed)


def cmd_testbed(args: argparse.Namespace) -> int:
    from aqmlab import results
    from aqmlab._core import ScenarioError
    from aqmlab._input import UserError, load_file
    from aqmlab.testbed import TestbedError, cleanup, run_testbed

    if args.cleanup:
        if args.file or args.out:
            raise UserError("aqmlab testbed --cleanup takes no FILE or --out")
        try:
            from aqmlab.testbed.netns import check_environment

            check_environment()
        except TestbedError as e:
            raise UserError(str(e)) from None
        from aqmlab.testbed.netns import cleanup_work_dirs

        gone = cleanup()
        dirs = cleanup_work_dirs()
        if not args.quiet:
            print(f"removed {len(gone)} namespace(s)" + (f": {' '.join(gone)}" if gone else ""))
            print(f"removed {len(dirs)} work folder(s) of killed runs")
        return 0
    if not args.file or not args.out:
        raise UserError("aqmlab testbed: give FILE and --out DIR (or --cleanup)")
    doc = load_file(args.file, args.sets)
    if args.seed is not None:
        doc["seed"] = args.seed

    def log(s: str) -> None:
        if not args.quiet:
            print(f"testbed: {s}", file=sys.stderr, flush=True)

    try:
        result = run_testbed(
            doc,
            args.out,
            cc=args.cc,
            command=["aqmlab", *args.argv],
            log=log,
            router_priority=args.router_priority,
            cpus=args.cpus,
        )
    except ScenarioError as e:
        raise UserError(f"{Path(args.file)}: {e}") from None
    except TestbedError as e:
        raise UserError(f"{Path(args.file)}: {e}") from None
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    if not args.quiet:
        from aqmlab.report.terminal import print_run

        print_run(Path(args.file).name + " (testbed)", result, sender=f"{args.cc} (kernel)")
        print(f"results in {args.out}")
    return 0
