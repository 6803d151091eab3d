"""The ``aqmlab`` command.

    aqmlab validate FILE [FILE ...] [--set KEY=VALUE ...] [--unset KEY ...] [--truncate]
    aqmlab run FILE|DIR -o DIR [--seed N] [--set KEY=VALUE ...] [--unset KEY ...] [--truncate]
    aqmlab plot DIR [DIR ...] [--where NAME=VALUE ...] [--what queue|queue-bytes|delay|...] [-o PNG]
    aqmlab compare DIR [DIR ...] [--where NAME=VALUE ...] [--per-run] [--format ...] [-o FILE]
    aqmlab compare --responses A B [A2 B2 ...] [--within S[,S...]] [--from S] [--format ...]
    aqmlab examples [-o DIR]
    aqmlab report DIR [DIR ...] [--index OUT.html]
    aqmlab demo [--quick] [--out DIR]
    aqmlab sweep FILE [FILE ...] [--quick] [--jobs J] [--resume] [--dry-run] ...
    aqmlab reproduce NAME | --all | --list [...]   (see aqmlab.experiments.command)
    aqmlab design red|pi|rem|ap-red|check|fluid|grid ...   (see aqmlab.design.cli)
    aqmlab testbed FILE --out DIR [--cc reno|cubic|bbr] | --cleanup   (see docs/testbed.md)

A mistake in the input (a missing file, bad TOML, a bad scenario value, a bad
``--set`` or ``--seed``, an ``--out`` that is not a result folder or cannot
be written) prints one line ``error: ...`` on stderr and exits with status 2;
Ctrl-C exits with 130. ``-o`` is what the command writes, in every command.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aqmlab import results, scenario
from aqmlab._atomic import write_text
from aqmlab._core import ScenarioError
from aqmlab._input import (
    SET_ARGUMENT,
    Parser,
    UserError,
    apply_changes,
    bound_quotes,
    check_scenario,
    display_name,
    load_file,
    print_error,
)

__all__ = ["EXIT_INTERRUPTED", "EXIT_USAGE", "UserError", "build_parser", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: Wall seconds a run must last before its progress bar appears.
PROGRESS_AFTER_S = 2.0
#: Wall seconds between progress lines when stderr is not a terminal.
PROGRESS_LOG_S = 5.0
#: Least wall seconds between two calls of the engine into Python during
#: `aqmlab run` (each takes the interpreter's lock, which the thread loading
#: numpy and pyarrow holds; Ctrl-C is noticed at the calls).
PROGRESS_CALL_S = 0.1


def _seed(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid seed {text!r}: expected a whole number >= 0"
        ) from None


def _group_index(text: str) -> int:
    try:
        g = int(text, 10)
    except ValueError:
        g = -1
    if g < 0:
        raise argparse.ArgumentTypeError(
            f"invalid traffic group {text!r}: expected a [[traffic]] index, a whole number >= 0"
        )
    return g


class _Version(argparse.Action):
    """``--version``: the version is looked up (importlib.metadata) only
    when asked for, not each time the parser is built."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit", **kw)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any, **__: Any) -> None:
        from aqmlab._engine import _version

        print(f"aqmlab {_version()}")
        parser.exit()


#: ``--where NAME=VALUE``: the points of sweep folders that ``plot`` and ``compare`` show.
WHERE_ARGUMENT: dict[str, Any] = {
    "action": "extend",
    "nargs": "+",
    "default": [],
    "metavar": "NAME=VALUE",
    "help": "with a sweep folder: only its points whose scheme, factor or seed has this value "
    "(e.g. --where scheme=PI buffer=200; one name given twice: either value)",
}


#: Commands whose parser is built alone when they are the one run (the
#: others' registration imports their packages): ``aqmlab run`` starts fast.
_ALONE = ("validate", "run")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with ``command`` one of :data:`_ALONE`,
    only the core commands are registered."""
    p = Parser(
        prog="aqmlab",
        description="A laboratory for Active Queue Management: run, check and plot scenarios.",
    )
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    setarg = dict(SET_ARGUMENT)

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

    r = sub.add_parser(
        "run", help="run a scenario (or re-run a result folder) and write its result folder"
    )
    r.add_argument(
        "file",
        metavar="FILE",
        help="scenario file (TOML), or a result folder to re-run from its manifest",
    )
    r.add_argument("--out", "-o", required=True, metavar="DIR", help="result folder to write")
    r.add_argument("--seed", type=_seed, metavar="N", help="replace the scenario's seed")
    r.add_argument("--set", dest="sets", **setarg)
    r.add_argument("--unset", dest="unsets", **unsetarg)
    r.add_argument("--truncate", **truncarg)
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")
    r.set_defaults(func=cmd_run)

    pl = sub.add_parser("plot", help="plot queues, delays, parameters or flows of result folders")
    pl.add_argument(
        "dirs", nargs="+", metavar="DIR", help="result folder, sweep point or whole sweep folder"
    )
    pl.add_argument("--where", **WHERE_ARGUMENT)
    pl.add_argument(
        "-o",
        "--out",
        "--output",
        dest="output",
        metavar="PNG",
        help="image to write (default: DIR/WHAT.png for one folder, WHAT.png for several)",
    )
    add_plot_arguments(pl)
    pl.set_defaults(func=cmd_plot)

    rp = sub.add_parser("report", help="rebuild experiments' reports from their saved results")
    rp.add_argument("dirs", nargs="+", metavar="DIR", help="experiment output folder")
    rp.add_argument("--index", metavar="OUT.html", help="also write an index page over every DIR")
    rp.set_defaults(func=cmd_report)

    d = sub.add_parser(
        "demo", help="reproduce a thesis experiment beside the paper's table (or --red-droptail)"
    )
    d.add_argument("--out", "-o", default="demo-out", metavar="DIR", help="where to write results")
    d.add_argument("--preset", default=None, metavar="NAME", help="the preset to reproduce")
    d.add_argument(
        "--quick",
        action="store_true",
        help="the shortened form: seconds instead of half a minute, not meant to match the paper",
    )
    d.add_argument("--jobs", default=None, metavar="J", help="worker processes")
    d.add_argument("--red-droptail", action="store_true", help="RED vs DropTail instead")
    d.set_defaults(func=cmd_demo)

    if command in _ALONE:
        return p

    from aqmlab.experiments.command import add_parsers as add_experiment_parsers

    add_experiment_parsers(sub, setarg)

    from aqmlab.design.cli import add_parser as add_design_parser

    add_design_parser(sub)

    from aqmlab.testbed.command import add_parser as add_testbed_parser

    add_testbed_parser(sub, setarg)

    add_everyday_parsers(sub)
    return p


def _ecn_notes(file: str, resolved: dict[str, Any]) -> list[str]:
    """The ECN notes of a resolved scenario (:func:`aqmlab.ecn.ecn_notes`) as ``note:`` lines."""
    from aqmlab.ecn import ecn_notes

    return [f"note: {display_name(file)}: {n}" for n in ecn_notes(resolved)]


def cmd_validate(args: argparse.Namespace) -> int:
    status = 0
    for f in args.files:
        try:
            notes: list[str] = []
            doc = load_file(f, args.sets, args.truncate, args.unsets, notes)
            resolved = check_scenario(f, doc, [*args.sets, *args.unsets])
            _print_notes([*notes, *_ecn_notes(f, resolved)])
        except UserError as e:
            print_error(str(e))
            status = EXIT_USAGE
            continue
        print(f"{display_name(f)}: ok ({scenario.describe(resolved)})")
    return status


def _stderr_is_terminal() -> bool:
    """Whether rich's console on stderr counts as a terminal (its rules:
    ``TTY_COMPATIBLE`` 0 or 1, then a non-empty ``FORCE_COLOR``, then
    ``isatty``), found without importing rich."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _LazyProgress:
    """A progress callback whose rich bar appears only once the run has lasted
    ``PROGRESS_AFTER_S`` wall seconds, on a terminal; elsewhere (logs, CI) a
    line every ``PROGRESS_LOG_S`` wall seconds: simulated time, speed, ETA.
    Elapsed times count from the start of the run."""

    def __init__(self, total_s: float, enabled: bool) -> None:
        self.total_s = total_s
        # rich (about 40 ms to import) loads only when the bar is shown.
        self.console: Any = None
        terminal = _stderr_is_terminal()
        self.log = enabled and not terminal
        self.enabled = enabled and terminal
        self.t0 = time.monotonic()
        self.next_log = self.t0 + PROGRESS_LOG_S
        self.progress: Any = None
        self.task: Any = None

    def __call__(self, sim_s: float, events: int = 0) -> bool:
        if self.log:
            now = time.monotonic()
            if now >= self.next_log:
                self.next_log = now + PROGRESS_LOG_S
                line = progress_line(sim_s, self.total_s, now - self.t0, events)
                print(line, file=sys.stderr)
            return True
        if not self.enabled:
            return True
        if self.progress is None:
            if time.monotonic() - self.t0 < PROGRESS_AFTER_S:
                return True
            from rich.console import Console
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
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task("run", total=self.total_s, rate="")
            # The elapsed column counts from the start of the run.
            self.progress.tasks[-1].start_time = self.t0
        rate = events_rate(events, time.monotonic() - self.t0)
        self.progress.update(self.task, completed=sim_s, rate=rate)
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


#: Set by a command that has finished everything it does (files written,
#: closed and in place, threads joined) and whose process may end without
#: the interpreter's teardown (see :func:`aqmlab._entry._exit_now`); only
#: the console script acts on it, never :func:`main` called in-process.
EXIT_NOW = [False]


def _preload(*modules: str) -> threading.Thread:
    """Import ``modules`` on another thread, now: while the engine runs (it
    releases the interpreter's lock) numpy and pyarrow load beside it
    instead of before it. An import that fails here fails again, with its
    message, where the module is used."""

    # numpy's OpenBLAS would start a thread per core at import, which
    # competes with the engine for the machine (and the command does no
    # linear algebra): one thread, unless the user chose otherwise.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    def load() -> None:
        import importlib

        from aqmlab._engine import _version

        try:
            for m in modules:
                importlib.import_module(m)
            _version()  # importlib.metadata, for the manifest
        except BaseException:
            return

    t = threading.Thread(target=load, name="aqmlab-preload")
    t.start()
    return t


def cmd_run(args: argparse.Namespace) -> int:
    notes: list[str] = []
    if results.is_run_dir(args.file):
        doc = load_manifest(args.file, args.sets, args.truncate, args.unsets, notes)
    else:
        doc = load_file(args.file, args.sets, args.truncate, args.unsets, notes)
    if args.seed is not None:
        doc["seed"] = args.seed
    seed = ["seed"] if args.seed is not None else []
    resolved = check_scenario(args.file, doc, [*args.sets, *args.unsets, *seed])
    _print_notes([*notes, *_ecn_notes(args.file, resolved)])
    try:
        with results.hold_folder(args.out):
            out, result = _run_into(args, doc, resolved)
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    if not args.quiet:
        from aqmlab.report.terminal import print_run

        print_run(Path(args.file).name, result)
        print(f"results in {out}")
    EXIT_NOW[0] = True
    return 0


def _run_into(
    args: argparse.Namespace, doc: dict[str, Any], resolved: dict[str, Any]
) -> tuple[Path, Any]:
    """Run ``doc`` and write its folder ``args.out`` (whose lock the caller
    holds); return the folder and the result."""
    from aqmlab._engine import available_memory, run_raw

    try:
        results.check_target(args.out, probe=True)
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    # One figure for the warning and the check: it changes as numpy and
    # pyarrow load beside the engine.
    free = available_memory()
    warn_estimate(args.file, doc, free)
    progress = _LazyProgress(_seconds(str(resolved.get("duration", "0s"))), not args.quiet)
    # Started only now, so that reading and checking the input do not wait
    # for the interpreter's lock the loading thread holds.
    # The summary table's module (rich) only where it is printed.
    preload = _preload("aqmlab.api", "pyarrow.parquet", *(() if args.quiet else ("aqmlab.report",)))
    try:
        raw = run_raw(doc, progress, free, every_s=PROGRESS_CALL_S)
    except ScenarioError as e:
        raise UserError(f"{display_name(args.file)}: {e}") from None
    finally:
        progress.close()
    preload.join()
    from aqmlab import api

    result = api.from_core(raw)
    try:
        out = result.save(args.out, command=["aqmlab", *args.argv])
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{args.out}: cannot write: {e.strerror or e}") from None
    return out, result


#: Most runs one plot draws (a panel each, or a curve each for ``--what cdf``).
MAX_PLOTTED = 24


def _selected(args: argparse.Namespace) -> list[Any]:
    """The folders the arguments name: run folders, sweep points, whole sweeps narrowed by
    ``--where`` (:func:`aqmlab.folders.expand`); notes (points left out) on stderr."""
    from aqmlab.folders import SelectionError, expand

    try:
        chosen, notes = expand(args.dirs, args.where)
    except SelectionError as e:
        raise UserError(str(e)) from None
    for n in notes:
        print(f"note: {n}", file=sys.stderr)
    return chosen


_WINDOW = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us)?\s*$")
_WINDOW_UNIT = {"s": 1.0, "ms": 1e-3, "us": 1e-6, None: 1.0}


def _window_arg(text: str) -> float:
    """``--smooth``'s window in seconds: "1s", "200ms", "0.5" (seconds), "0" (none)."""
    m = _WINDOW.match(text)
    v = float(m.group(1)) * _WINDOW_UNIT[m.group(2)] if m else math.nan
    if not math.isfinite(v) or v < 0:
        raise UserError(
            f"--smooth {text!r}: not a time window; give e.g. 1s, 200ms or 0.5 (seconds), or 0 "
            "for the raw samples"
        )
    return v


def cmd_plot(args: argparse.Namespace) -> int:
    from aqmlab.plot import SMOOTHABLE, plot_series

    chosen = _selected(args)
    if len(chosen) > MAX_PLOTTED:
        raise UserError(
            f"{len(chosen)} runs to plot, more than one figure shows ({MAX_PLOTTED}); choose "
            "fewer points with --where (scheme=NAME, a factor's NAME=VALUE, seed=N)"
        )
    smooth = None if args.smooth is None else _window_arg(args.smooth)
    if smooth and args.what not in SMOOTHABLE:
        raise UserError(
            f"--smooth {args.smooth}: smoothing is for --what {', '.join(SMOOTHABLE)}, not "
            f"{args.what}"
        )
    if args.log_x and args.what != "cdf":
        raise UserError(f"--log-x is for --what cdf, not {args.what} (time axes stay linear)")
    if args.group and args.what != "cdf":
        raise UserError(
            f"--group is for --what cdf (a traffic group's queueing delay), not {args.what}"
        )
    name = f"{args.what}.png"
    one = len(args.dirs) == 1 and len(chosen) == 1 and Path(args.dirs[0]) == chosen[0].path
    output = args.output or (chosen[0].path / name if one else name)
    try:
        path = plot_series(
            [(s.label, s.path) for s in chosen],
            output,
            what=args.what,
            link=args.link,
            params=args.param,
            flows=args.flow,
            series=args.series,
            smooth=smooth,
            log_x=args.log_x,
            groups=args.group,
        )
    except (results.ResultsError, ValueError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{output}: cannot write: {e.strerror or e}") from None
    print(f"wrote {path}")
    EXIT_NOW[0] = True  # matplotlib's teardown alone takes 0.1-0.2 s
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from aqmlab import demo

    argv = ["--out", args.out]
    if args.preset is not None:
        argv += ["--preset", args.preset]
    if args.jobs is not None:
        argv += ["--jobs", str(args.jobs)]
    if args.quick:
        argv.append("--quick")
    if args.red_droptail:
        argv.append("--red-droptail")
    return demo.main(argv)


def cmd_report(args: argparse.Namespace) -> int:
    from aqmlab.report.cli import report_command
    from aqmlab.report.data import ReportError

    try:
        status = report_command([Path(d) for d in args.dirs], args.index)
        EXIT_NOW[0] = True  # files written and closed; no thread or child left
        return status
    except ReportError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"{e.filename or 'report'}: cannot write: {e.strerror or e}") from None


def _notes_as_lines() -> None:
    """Show aqmlab's own warnings (:class:`aqmlab.ecn.ECNNote`, the overrides' and the
    truncation's notes) raised inside a command as one ``note:`` line each, not as Python's
    two-line warning with a file and a line of code."""
    import warnings

    default = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if category.__module__.startswith("aqmlab"):
            print(f"note: {message}", file=sys.stderr)
        else:
            default(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    _notes_as_lines()
    try:
        for a in argv:
            try:
                a.encode("utf-8")
            except UnicodeEncodeError:
                shown = a.encode("utf-8", "backslashreplace").decode("utf-8")
                msg = f"{bound_quotes(repr(shown))}: an argument that is not UTF-8 text"
                raise UserError(msg) from None
        args = build_parser(argv[0] if argv else None).parse_args(argv)
        args.argv = argv
        return int(args.func(args))
    except UserError as e:
        print_error(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("aqmlab: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Output piped into a command that stopped reading (| head).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as e:
        # A file the command reads or writes (a full disk, no permission):
        # the commands name the ones they expect; this names the rest.
        where = f"{e.filename}: " if e.filename else ""
        print_error(f"{where}{e.strerror or e}")
        return 1
    except MemoryError as e:
        detail = str(e).removeprefix("out of memory: ")
        print_error(
            f"out of memory{f' ({detail})' if detail else ''}; "
            "store less (raise metrics.sample_interval, trace fewer flows, "
            "lower metrics.trace_limit) or run on a machine with more memory"
        )
        return 1
    except Exception as e:
        from aqmlab._entry import interrupted

        if interrupted():
            # Ctrl-C inside a compiled module's start (ImportError) and the like.
            print("aqmlab: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        if os.environ.get("AQMLAB_TRACEBACK"):
            raise
        print_error(
            f"internal error: {type(e).__name__}: {e} "
            "(run with AQMLAB_TRACEBACK=1 to see the traceback)"
        )
        return 1
    except BaseException as e:
        # A Rust panic arrives as pyo3's PanicException (a BaseException).
        if type(e).__name__ != "PanicException" or os.environ.get("AQMLAB_TRACEBACK"):
            raise
        print_error(f"internal error: engine panic: {' '.join(str(e).split())[:300]}")
        return 1


# --- Everyday use: compare, examples, re-runs, plots, estimates ---


def _print_notes(notes: Sequence[str]) -> None:
    for n in notes:
        print(n, file=sys.stderr)


def events_rate(events: int, wall_s: float) -> str:
    """``8.2 M events/s``: the engine's events per wall second."""
    rate = events / wall_s if wall_s > 0 else 0.0
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if rate >= scale:
            return f"{rate / scale:.3g} {unit} events/s"
    return f"{rate:.3g} events/s"


def progress_line(sim_s: float, total_s: float, wall_s: float, events: int = 0) -> str:
    """``progress: 12.0/200 s simulated (6 %), 4.1 sim-s per s, 8.2 M events/s,
    8 s elapsed, ETA 46 s`` (events: processed so far)."""
    speed = sim_s / wall_s if wall_s > 0 else 0.0
    pct = 100 * sim_s / total_s if total_s > 0 else 0.0
    eta = f"ETA {(total_s - sim_s) / speed:.0f} s" if speed > 0 else "ETA unknown"
    return (
        f"progress: {sim_s:.1f}/{total_s:g} s simulated ({pct:.0f} %), "
        f"{speed:.3g} sim-s per s, {events_rate(events, wall_s)}, "
        f"{wall_s:.0f} s elapsed, {eta}"
    )


def load_manifest(
    folder: str,
    sets: Sequence[str] = (),
    truncate: bool = False,
    unset: Sequence[str] = (),
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """The resolved scenario a result folder was run with, ready to re-run
    (with overrides applied as for a file)."""
    import json

    name = display_name(folder)
    try:
        man = json.loads((Path(folder) / results.MANIFEST).read_text(encoding="utf-8"))
        doc = man["scenario"]
        if not isinstance(doc, dict):
            raise TypeError("scenario is not a table")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserError(f"{name}: cannot read the scenario of its manifest: {e}") from None
    try:
        apply_changes(doc, name, sets, truncate, unset, notes)
    except ScenarioError as e:
        raise UserError(f"{name}: {e}") from None
    return doc


def warn_estimate(file: str, doc: dict[str, Any], free: int | None) -> None:
    """Warn on stderr when the run will store more than the warning threshold
    (and not when it will be refused for want of the ``free`` bytes)."""
    from aqmlab._core import estimate
    from aqmlab.scenario import to_json

    try:
        e = estimate(to_json(doc))
    except ScenarioError:
        return
    if free is not None and e["bytes"] > min(free, e["limit"]):
        return  # the run is refused with the figures
    if e["bytes"] > e["warn"]:
        print(
            f"warning: {display_name(file)}: this run will store about "
            f"{e['bytes'] / 1e9:.1f} GB of results (queue samples, series, flows; "
            f"metrics.memory_limit is {e['limit'] / 1e9:.1f} GB); "
            "raise metrics.sample_interval to store less",
            file=sys.stderr,
        )


def add_plot_arguments(pl: argparse.ArgumentParser) -> None:
    from aqmlab.plotkinds import KINDS

    pl.add_argument(
        "--what",
        choices=KINDS,
        default="queue",
        help="queue (packets, default), queue-bytes, delay (drain time), throughput, "
        "cdf (queueing delay CDF), params (the AQM's adapted parameters), "
        "flows (the flow series), flow-throughput (each traced flow's throughput over time), "
        "goodput-rtt (each flow's goodput against its base RTT, coloured by traffic group), "
        "ping (the latency probes' round trips over time)",
    )
    pl.add_argument("--link", metavar="NAME", help="monitored link (default: the first)")
    pl.add_argument(
        "--smooth",
        default=None,
        metavar="WINDOW",
        help="draw each curve's mean over a moving time window, e.g. 1s or 200ms (0: the raw "
        "samples); for queue, queue-bytes, delay, throughput, flows and flow-throughput; "
        "default 1s for throughput and flow-throughput (a twentieth of a run shorter than "
        "20 s), none for the others",
    )
    pl.add_argument(
        "--log-x",
        action="store_true",
        help="with --what cdf: a logarithmic delay axis",
    )
    pl.add_argument(
        "--group",
        action="append",
        default=[],
        type=_group_index,
        metavar="G",
        help="with --what cdf: a curve of traffic group G's packets alone (its [[traffic]] "
        "index; repeatable; the run needs metrics.group_delays = true)",
    )
    pl.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME",
        help="with --what params: parameter to draw (repeatable; default all)",
    )
    pl.add_argument(
        "--flow",
        action="append",
        default=[],
        type=int,
        metavar="N",
        help="with --what flows, flow-throughput or ping: flow to draw (repeatable; default every "
        "traced flow)",
    )
    pl.add_argument(
        "--series",
        default="cwnd",
        metavar="NAME",
        help="with --what flows: cwnd (default), ssthresh, srtt_s, rto_s, delivery_rate_bps, "
        "send_rate_bps, in_flight, alpha (DCTCP), pacing_rate_bps, rate_sample_bps or bbr_bw_bps",
    )


def add_everyday_parsers(sub: Any) -> None:
    from aqmlab.compare import FORMATS

    c = sub.add_parser("compare", help="the summaries of result folders side by side")
    c.add_argument(
        "dirs", nargs="+", metavar="DIR", help="result folder, sweep point or whole sweep folder"
    )
    c.add_argument("--where", **WHERE_ARGUMENT)
    c.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="table (terminal, default), markdown or csv; with -o, from its extension",
    )
    c.add_argument("-o", "--out", metavar="FILE", help="write the table to FILE (.md or .csv)")
    c.add_argument(
        "--per-run",
        action="store_true",
        help="one column per run, also where runs are seeds of one scenario (by default such "
        "runs make one column: the mean and its 95 %% confidence interval over the seeds)",
    )
    c.add_argument(
        "--responses",
        action="store_true",
        help="DIRs A B (or A1 B1 A2 B2 ..., one pair per seed, pooled): runs of one web "
        "workload (one scenario and seed, another network) response by response: shares "
        "within --within, response times, paired differences b - a with 95 %% intervals "
        "(docs/results.md)",
    )
    c.add_argument(
        "--within",
        default="0.5,1,2",
        metavar="S[,S...]",
        help="with --responses: response times to give shares within, seconds (default 0.5,1,2)",
    )
    c.add_argument(
        "--from",
        dest="from_s",
        default=None,
        metavar="S",
        help="with --responses: count responses begun at or after S seconds "
        "(default: the latest measurement start, metrics.start)",
    )
    c.set_defaults(func=cmd_compare)

    e = sub.add_parser(
        "examples", help="list the example scenarios shipped with aqmlab, or copy them"
    )
    e.add_argument("-o", "--out", metavar="DIR", help="copy every example into DIR")
    e.set_defaults(func=cmd_examples)


def cmd_compare(args: argparse.Namespace) -> int:
    from aqmlab.compare import compare

    fmt = args.format
    if fmt is None and args.out:
        ext = Path(args.out).suffix.lower()
        fmt = {".md": "markdown", ".csv": "csv"}.get(ext)
        if fmt is None:
            raise UserError(
                f"{args.out}: cannot tell the format from {ext or 'no extension'!r}; "
                "give --format markdown or --format csv"
            )
    fmt = fmt or "table"
    if fmt == "table" and args.out:
        raise UserError("--format table is for the terminal; write markdown or csv with -o")
    if args.responses:
        return _compare_responses(args, fmt)
    if args.within != "0.5,1,2" or args.from_s is not None:
        raise UserError("--within and --from go with --responses")
    chosen = _selected(args)
    try:
        cmp = compare([s.path for s in chosen], [s.label for s in chosen], per_run=args.per_run)
    except results.ResultsError as e:
        raise UserError(str(e)) from None
    if fmt == "table":
        from rich.console import Console

        con = Console()
        con.print(cmp.headline(), highlight=False)
        con.print(cmp.rich())
        for note in cmp.notes():
            con.print(f"[dim]{note}[/dim]", highlight=False)
        return 0
    text = cmp.markdown() if fmt == "markdown" else cmp.csv()
    return _write_text(text, args.out)


def _seconds_arg(flag: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not (math.isfinite(v) and v >= 0):
        raise UserError(f"{flag} {text!r}: not a number of seconds (0 or more)")
    return v


def _compare_responses(args: argparse.Namespace, fmt: str) -> int:
    from aqmlab.compare import ResponsesTable, load_pairs

    within = [_seconds_arg("--within", t.strip()) for t in args.within.split(",")]
    if any(t == 0 for t in within):
        raise UserError(f"--within {args.within!r}: each time must be more than 0 s")
    start = None if args.from_s is None else _seconds_arg("--from", args.from_s)
    chosen = _selected(args)
    try:
        labels, a, b = load_pairs([s.path for s in chosen], [s.label for s in chosen])
    except results.ResultsError as e:
        raise UserError(f"--responses: {e}") from None
    from aqmlab.web import compare_responses

    try:
        table = ResponsesTable(labels, compare_responses(a, b, within, start))
    except ValueError as e:
        raise UserError(f"{' '.join(map(str, args.dirs))}: {e}") from None
    if fmt == "table":
        from rich.console import Console

        Console().print(table.rich())
        return 0
    return _write_text(table.markdown() if fmt == "markdown" else table.csv(), args.out)


def _write_text(text: str, out: str | None) -> int:
    if not out:
        sys.stdout.write(text)
        return 0
    try:
        write_text(out, text)
    except OSError as e:
        raise UserError(f"{out}: cannot write: {e.strerror or e}") from None
    print(f"wrote {out}")
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    from aqmlab.examples import copy_examples, list_examples

    if args.out:
        try:
            files = copy_examples(args.out)
        except OSError as e:
            raise UserError(f"{args.out}: cannot write: {e.strerror or e}") from None
        print(f"copied {len(files)} example scenarios into {args.out}")
        return 0
    for name, desc in list_examples():
        print(f"{name:32s} {desc}")
    return 0
