"""The ``aqmlab`` command.

    aqmlab validate FILE [FILE ...] [--set KEY=VALUE ...] [--truncate]
    aqmlab run FILE --out DIR [--seed N] [--set KEY=VALUE ...] [--truncate] [--quiet]
    aqmlab plot DIR [DIR ...] [-o PNG]
    aqmlab report DIR [DIR ...] [--index OUT.html]
    aqmlab demo [--out DIR]
    aqmlab sweep FILE [FILE ...] [--quick] [--jobs J] [--resume] [--dry-run] ...
    aqmlab reproduce NAME | --all | --list [...]   (see aqmlab.experiments.command)

A mistake in the input (a missing file, bad TOML, a bad scenario value, a bad
``--set`` or ``--seed``, an ``--out`` that is not a result folder) prints one
line ``error: ...`` on stderr and exits with status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from aqmlab import results, scenario
from aqmlab._core import ScenarioError

__all__ = ["EXIT_INTERRUPTED", "EXIT_USAGE", "UserError", "build_parser", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: Wall seconds a run must last before its progress bar appears.
PROGRESS_AFTER_S = 2.0


class UserError(Exception):
    """A mistake in the user's input: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}")


def _err(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr, flush=True)


def _seed(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid seed {text!r}: expected a whole number >= 0"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="aqmlab",
        description="A laboratory for Active Queue Management: run, check and plot scenarios.",
    )
    from aqmlab import __version__

    p.add_argument("--version", action="version", version=f"aqmlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    setarg: dict[str, Any] = {
        "action": "append",
        "default": [],
        "metavar": "KEY=VALUE",
        "help": "override a scenario key, e.g. aqm.max_p=0.05 or traffic[0].flows=50 (repeatable)",
    }

    unsetarg: dict[str, Any] = {
        "action": "append",
        "default": [],
        "metavar": "KEY",
        "help": "remove a key the scenario sets, e.g. aqm.a (repeatable; before any --set)",
    }

    truncarg: dict[str, Any] = {
        "action": "store_true",
        "help": "drop schedule entries and phases at or past the end of the run "
        "(to try a long scenario short with --set duration=...); each is noted on stderr",
    }

    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("files", nargs="+", metavar="FILE", help="scenario file (TOML)")
    v.add_argument("--set", dest="sets", **setarg)
    v.add_argument("--unset", dest="unsets", **unsetarg)
    v.add_argument("--truncate", **truncarg)
    v.set_defaults(func=cmd_validate)

    r = sub.add_parser("run", help="run a scenario and write its result folder")
    r.add_argument("file", metavar="FILE", help="scenario file (TOML)")
    r.add_argument("--out", "-o", required=True, metavar="DIR", help="result folder to write")
    r.add_argument("--seed", type=_seed, metavar="N", help="replace the scenario's seed")
    r.add_argument("--set", dest="sets", **setarg)
    r.add_argument("--unset", dest="unsets", **unsetarg)
    r.add_argument("--truncate", **truncarg)
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    r.set_defaults(func=cmd_run)

    pl = sub.add_parser("plot", help="plot the queue of one or more result folders")
    pl.add_argument("dirs", nargs="+", metavar="DIR", help="result folder")
    pl.add_argument("-o", "--output", metavar="PNG", help="image to write (default: DIR/queue.png)")
    pl.set_defaults(func=cmd_plot)

    rp = sub.add_parser("report", help="rebuild experiments' reports from their saved results")
    rp.add_argument("dirs", nargs="+", metavar="DIR", help="experiment output folder")
    rp.add_argument("--index", metavar="OUT.html", help="also write an index page over every DIR")
    rp.set_defaults(func=cmd_report)

    d = sub.add_parser(
        "demo", help="reproduce a thesis experiment in quick form (or --red-droptail)"
    )
    d.add_argument("--out", default="demo-out", metavar="DIR", help="where to write results")
    d.add_argument("--preset", default=None, metavar="NAME", help="the preset to reproduce")
    d.add_argument("--jobs", type=int, default=None, metavar="J", help="worker processes")
    d.add_argument("--red-droptail", action="store_true", help="RED vs DropTail instead")
    d.set_defaults(func=cmd_demo)

    from aqmlab.experiments.command import add_parsers as add_experiment_parsers

    add_experiment_parsers(sub, setarg)
    return p


def _name(file: str) -> str:
    return str(Path(file))


def load_file(
    file: str, sets: Sequence[str] = (), truncate: bool = False, unset: Sequence[str] = ()
) -> dict[str, Any]:
    """Load a scenario file, remove the ``unset`` keys and apply the
    overrides (noting each AQM kind switch on stderr; then, with
    ``truncate``, drop what lies past the end, noting each change); input
    errors become UserError."""
    name = _name(file)
    try:
        doc = scenario.load(Path(file))
        for note in scenario.apply_overrides_noted(doc, sets, unset):
            print(f"note: {name}: {note}", file=sys.stderr)
        if truncate:
            for note in scenario.truncate(doc):
                print(f"note: {name}: {note}", file=sys.stderr)
    except ScenarioError as e:
        text = str(e)
        raise UserError(text if text.startswith(f"{name}:") else f"{name}: {text}") from None
    except UnicodeDecodeError:
        raise UserError(f"{name}: not a UTF-8 text file") from None
    except OSError as e:
        raise UserError(f"{name}: cannot read: {e.strerror or e}") from None
    return doc


def _validate(file: str, doc: dict[str, Any]) -> dict[str, Any]:
    try:
        return scenario.validate(doc)
    except ScenarioError as e:
        raise UserError(f"{_name(file)}: {e}") from None


def cmd_validate(args: argparse.Namespace) -> int:
    status = 0
    for f in args.files:
        try:
            resolved = _validate(f, load_file(f, args.sets, args.truncate, args.unsets))
        except UserError as e:
            _err(str(e))
            status = EXIT_USAGE
            continue
        print(f"{_name(f)}: ok ({scenario.describe(resolved)})")
    return status


class _LazyProgress:
    """A progress callback whose rich bar appears only once the run has lasted
    ``PROGRESS_AFTER_S`` wall seconds, and only on a terminal."""

    def __init__(self, total_s: float, enabled: bool) -> None:
        from rich.console import Console

        self.total_s = total_s
        self.console = Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self.t0 = time.monotonic()
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, sim_s: float) -> bool:
        if not self.enabled:
            return True
        if self.progress is None:
            if time.monotonic() - self.t0 < PROGRESS_AFTER_S:
                return True
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.completed:.0f}/{task.total:.0f} s"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("run", total=self.total_s)
        self.progress.update(self.task, completed=sim_s)
        return True

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def _seconds(t: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for u in ("ns", "us", "ms", "s"):
        if t.endswith(u):
            try:
                return float(t[: -len(u)]) * units[u]
            except ValueError:
                break
    return 0.0


def cmd_run(args: argparse.Namespace) -> int:
    from aqmlab import api
    from aqmlab.report import summary_table

    doc = load_file(args.file, args.sets, args.truncate, args.unsets)
    if args.seed is not None:
        doc["seed"] = args.seed
    resolved = _validate(args.file, doc)
    try:
        results.check_target(args.out)
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    progress = _LazyProgress(_seconds(str(resolved.get("duration", "0s"))), not args.quiet)
    try:
        result = api.run(doc, progress=progress)
    except ScenarioError as e:
        raise UserError(f"{_name(args.file)}: {e}") from None
    finally:
        progress.close()
    try:
        out = result.save(args.out, command=["aqmlab", *args.argv])
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{args.out}: cannot write: {e.strerror or e}") from None
    if not args.quiet:
        from rich.console import Console

        Console().print(summary_table([(Path(args.file).name, result.summary)]))
        print(f"results in {out}")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from aqmlab.plot import plot_queue

    dirs = [Path(d) for d in args.dirs]
    for d in dirs:
        if not results.is_run_dir(d):
            raise UserError(f"{d}: not an aqmlab result folder (no {results.MANIFEST})")
    output = args.output or (dirs[0] / "queue.png" if len(dirs) == 1 else "queue.png")
    try:
        path = plot_queue([(d.name or str(d), d) for d in dirs], output)
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{output}: cannot write: {e.strerror or e}") from None
    print(f"wrote {path}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from aqmlab import demo

    argv = ["--out", args.out]
    if args.preset is not None:
        argv += ["--preset", args.preset]
    if args.jobs is not None:
        argv += ["--jobs", str(args.jobs)]
    if args.red_droptail:
        argv.append("--red-droptail")
    return demo.main(argv)


def cmd_report(args: argparse.Namespace) -> int:
    from aqmlab.report.cli import report_command
    from aqmlab.report.data import ReportError

    try:
        return report_command([Path(d) for d in args.dirs], args.index)
    except ReportError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{e.filename or 'report'}: cannot write: {e.strerror or e}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        args.argv = argv
        return int(args.func(args))
    except UserError as e:
        _err(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("aqmlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into a command that stopped reading (| head).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as e:
        if os.environ.get("AQMLAB_TRACEBACK"):
            raise
        _err(
            f"internal error: {type(e).__name__}: {e} "
            "(run with AQMLAB_TRACEBACK=1 to see the traceback)"
        )
        return 1
