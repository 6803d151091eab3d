"""The ``aqmlab sweep`` and ``aqmlab reproduce`` commands.

    aqmlab sweep FILE [FILE ...] [--quick] [--seeds K] [--jobs J] [--scheduler ADDR]
                 [--out DIR] [--resume] [--dry-run] [--timeout S] [--verbose]
                 [--set KEY=VALUE ...]
    aqmlab reproduce NAME [NAME ...] [same options]
    aqmlab reproduce --all [same options]
    aqmlab reproduce --list

Exit status: 0 when every point ran, 1 when some failed (they are listed),
2 for a mistake in the input (one ``error:`` line), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aqmlab._input import UserError

__all__ = ["add_parsers"]

EXIT_FAILED_POINTS = 1


def _positive_int(text: str) -> int:
    try:
        v = int(text, 10)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected a whole number >= 1")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = 0.0
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}: expected a number of seconds > 0"
        )
    return v


def _common(p: argparse.ArgumentParser, setarg: dict[str, Any]) -> None:
    p.add_argument(
        "--quick", action="store_true", help="the shortened form ([quick] of the experiment file)"
    )
    p.add_argument(
        "--seeds", type=_positive_int, metavar="K", help="run seeds 1..K instead of the file's"
    )
    p.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="J",
        help="local worker processes (default: every core)",
    )
    p.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="run the points on a Dask cluster, e.g. tcp://10.0.0.5:8786 (pip install "
        "'aqmlab[dask]')",
    )
    p.add_argument(
        "--out",
        "-o",
        metavar="DIR",
        help="output folder (default results/NAME, or results/NAME-quick with --quick; "
        "with several experiments, DIR/NAME...)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the complete points of an earlier sweep in DIR; run the rest",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the points, their count and an estimate of the time; run nothing",
    )
    p.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="S",
        help="stop a point after S wall seconds and record it as failed",
    )
    p.add_argument(
        "--no-report", action="store_true", help="do not build the report after the sweep"
    )
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also say where the time went: simulating, and what came on top of it (starting "
        "the workers, saving each run, waiting for the last one)",
    )
    p.add_argument("--set", dest="sets", **setarg)


def add_parsers(sub: Any, setarg: dict[str, Any]) -> None:
    """Add ``sweep`` and ``reproduce`` to the CLI's subparsers."""
    s = sub.add_parser(
        "sweep",
        help="run an experiment file: schemes x factors x seeds (see docs/experiments.md)",
    )
    s.add_argument("files", nargs="+", metavar="FILE", help="experiment file (TOML)")
    _common(s, setarg)
    s.set_defaults(func=cmd_sweep)

    r = sub.add_parser("reproduce", help="run a preset experiment of the seed papers")
    r.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="preset name (see --list), or a pattern such as 'thesis-5.*'",
    )
    r.add_argument("--list", action="store_true", help="list the presets and their sources")
    r.add_argument("--all", action="store_true", help="run every preset")
    _common(r, setarg)
    r.set_defaults(func=cmd_reproduce)


# ---------------------------------------------------------------------------


def cmd_reproduce(args: argparse.Namespace) -> int:
    from aqmlab.experiments.catalog import PRESETS_DIR, find_preset, match_presets, presets

    if args.list:
        if args.names or args.all:
            raise UserError("reproduce: --list takes no NAME or --all")
        return _print_list(presets())
    if args.all:
        if args.names:
            raise UserError("reproduce: give NAMEs or --all, not both")
        files = [p.path for p in presets() if p.problem is None]
        if not files:
            raise UserError(f"reproduce --all: no presets in {PRESETS_DIR}")
    else:
        if not args.names:
            raise UserError("reproduce: give a preset NAME (aqmlab reproduce --list shows them)")
        files = []
        for n in args.names:
            found = match_presets(n) if any(c in n for c in "*?[") else []
            p = find_preset(n)
            if p is not None:
                found = [p]
            if not found:
                known = ", ".join(x.name for x in presets()) or "none"
                raise UserError(f"reproduce: unknown preset {n!r}; known: {known}")
            for q in found:
                if q.problem:
                    raise UserError(f"{q.path}: {q.problem}")
                if q.path not in files:
                    files.append(q.path)
    return _run_files([str(f) for f in files], args)


def _print_list(found: Sequence[Any]) -> int:
    if not found:
        print("no presets")
        return 0
    from aqmlab.experiments.catalog import PRESETS_DIR
    from aqmlab.papers import split_source

    width = max(len(p.name) for p in found)
    for p in found:
        rel = p.path.relative_to(PRESETS_DIR) if p.path.is_relative_to(PRESETS_DIR) else p.path
        print(f"{p.name:<{width}}  {p.title}")
        paper, where = split_source(p.source)
        if paper is not None:
            print(f"{'':<{width}}  paper:  {paper.citation}")
            if where:
                print(f"{'':<{width}}  where:  {where}")
        elif p.source:
            print(f"{'':<{width}}  source: {p.source}")
        print(f"{'':<{width}}  file:   presets/{rel}")
        if p.problem:
            print(f"{'':<{width}}  problem: {p.problem}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    return _run_files(list(args.files), args)


def _load(file: str, args: argparse.Namespace) -> Any:
    from aqmlab.experiments.spec import ExperimentError, load_experiment

    try:
        return load_experiment(file, quick=args.quick, seeds=args.seeds, extra_set=args.sets)
    except ExperimentError as e:
        raise UserError(f"{file}: {e}") from None
    except UnicodeDecodeError:
        raise UserError(f"{file}: not a UTF-8 text file") from None
    except OSError as e:
        raise UserError(f"{file}: cannot read: {e.strerror or e}") from None


def _out_dir(exp: Any, args: argparse.Namespace, several: bool) -> Path:
    stem = f"{exp.name}-quick" if exp.quick else exp.name
    if args.out:
        return Path(args.out) / stem if several else Path(args.out)
    return Path("results") / stem


def _run_files(files: list[str], args: argparse.Namespace) -> int:
    from aqmlab.experiments.points import resolve_points
    from aqmlab.experiments.spec import ExperimentError

    if args.scheduler and args.jobs:
        raise UserError("--jobs is for the local pool; with --scheduler the cluster decides")
    # Everything is loaded and resolved before anything runs.
    loaded = []
    names: dict[str, str] = {}
    for f in files:
        exp = _load(f, args)
        if exp.name in names:
            raise UserError(f"{f}: experiment name {exp.name!r} is also that of {names[exp.name]}")
        names[exp.name] = f
        try:
            points = resolve_points(exp)
        except ExperimentError as e:
            raise UserError(f"{f}: {e}") from None
        loaded.append((f, exp, points))
    several = len(loaded) > 1
    if args.dry_run:
        status = 0
        todo: list[Any] = []
        for f, exp, pts in loaded:
            s, t = _dry_run(f, exp, pts, _out_dir(exp, args, several), args, not several)
            status = max(status, s)
            todo += t
        if several and todo:
            _print_estimate(f"all {len(loaded)} experiments", todo, args)
        return status
    return _sweep_all(loaded, args, several)


def _sweep_all(loaded: list[Any], args: argparse.Namespace, several: bool) -> int:
    from aqmlab.experiments.runner import SweepError, default_jobs, sweep_many

    command = ["aqmlab", *args.argv]
    items = [(exp, points, _out_dir(exp, args, several)) for _, exp, points in loaded]
    try:
        outcomes = sweep_many(
            items,
            jobs=args.jobs,
            scheduler=args.scheduler,
            resume=args.resume,
            timeout=args.timeout,
            command=command,
        )
    except SweepError as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        where = ", ".join(str(out) for _, _, out in items)
        print(
            f"interrupted; the complete points are kept in {where}: "
            "add --resume to the same command to run the rest",
            file=sys.stderr,
        )
        raise
    status = 0
    # The reports are built side by side, as the points ran, and printed in order below.
    if args.no_report:
        built: list[tuple[Any, str]] = [(None, "")] * len(outcomes)
    else:
        built = _build_reports([o.out for o in outcomes], args.jobs or default_jobs())
    for (exp, points, _), outcome, (b, why) in zip(items, outcomes, built, strict=True):
        ok = outcome.total - len(outcome.failures)
        extra = f", {outcome.skipped} already complete" if outcome.skipped else ""
        print(
            f"{exp.name}: {outcome.total} point(s), {ok} ok, {len(outcome.failures)} failed "
            f"({outcome.ran} run{extra})"
        )
        if outcome.removed_stale:
            print(
                f"  removed {outcome.removed_stale} point(s) of an earlier version of the "
                "experiment"
            )
        if args.verbose and outcome.engine_s > 0:
            per_point = (outcome.busy_s - outcome.engine_s) / outcome.engine_s
            print(
                f"  time:    simulating {outcome.engine_s:.1f} s (summed over the runs); "
                f"saving each run's results added {100 * per_point:.1f} % to that"
            )
        report = None
        if not args.no_report:
            # The tables first (as `aqmlab report` prints them), then where everything is.
            st, report = _print_report(outcome.out, b, why)
            status = max(status, st)
        print(f"  results: {outcome.out}")
        print(f"  table:   {outcome.summary_path}")
        if report is not None:
            print(f"  report:  {report}")
        if outcome.failures:
            labels = {p.id: p.label for p in points}
            n = len(outcome.failures)
            print(f"error: {n} point(s) of {exp.name} failed:", file=sys.stderr)
            for pid, err in outcome.failures.items():
                print(f"  {pid} ({labels.get(pid, '?')}): {err}", file=sys.stderr)
            print(
                f"  (records in {outcome.out / 'failed'}; run again with --resume to retry them)",
                file=sys.stderr,
            )
            status = EXIT_FAILED_POINTS
    if outcomes:
        print(_time_line(outcomes, args.verbose))
    return status


def _time_line(outcomes: Sequence[Any], verbose: bool) -> str:
    """``sweep: 5 runs in 15.3 s on 2 workers``; with ``verbose``, where the workers' time
    went: simulating, and the share on top of it (starting the workers, turning each run's
    results into tables and writing its folder, workers waiting for the last run)."""
    from aqmlab.experiments.progress import format_duration

    first = outcomes[0]
    ran = sum(o.ran for o in outcomes)
    line = f"sweep: {ran} run(s) in {format_duration(first.wall_s)}"
    if first.workers:
        line += f" on {first.workers} worker(s)"
    engine = sum(o.engine_s for o in outcomes)
    capacity = first.run_s * first.workers
    if verbose and engine > 0 and capacity > 0:
        other = max(0.0, capacity - engine) / capacity
        line += (
            f"; simulating took {engine:.1f} s of the workers' {capacity:.1f} s "
            f"({first.workers} x {first.run_s:.1f} s), the other {100 * other:.1f} % went to "
            "starting them, saving each run's results and waiting for the last run"
        )
    return line


def _fmt_value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _dry_run(
    file: str,
    exp: Any,
    points: Sequence[Any],
    out: Path,
    args: argparse.Namespace,
    explain: bool = True,
) -> tuple[int, list[Any]]:
    """Print the points of one experiment; return (status, points to run)."""
    from aqmlab.experiments import store
    from aqmlab.experiments.points import distinct

    groups = distinct(points)
    fnames = [f.name for f in exp.factors]
    header = ["id", "scheme", *fnames, "seed", "sim s", "est. events", "status"]
    rows: list[list[str]] = []
    to_run = []
    bad = 0
    for p in points:
        first = groups[p.id][0] is p
        if p.scenario is None:
            status = f"fails: {p.error}"
            bad += 1
        elif not first:
            status = f"same scenario as {groups[p.id][0].label}"
        elif args.resume and store.is_sweep_dir(out) and store.is_complete(out, p.id):
            status = "complete"
        else:
            status = "to run"
            to_run.append(p)
        rows.append(
            [
                p.id,
                p.scheme,
                *[_fmt_value(p.factors[n]) for n in fnames],
                str(p.seed),
                f"{p.duration_s:g}",
                f"{p.est_events:.2e}",
                status,
            ]
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    kind = "quick form" if exp.quick else "full form"
    print(f"{exp.name} ({kind}): {exp.title}")
    print(f"  file {file}, scenario {exp.scenario_path}, output {out}")
    print("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for r in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    n_sc = len({(p.scheme, p.factor_index) for p in points})
    print(
        f"{len(points)} points ({len(exp.schemes)} scheme(s) x "
        f"{n_sc // max(len(exp.schemes), 1)} factor combination(s) x {len(exp.seeds)} seed(s))"
        f", {len(to_run)} to run, {bad} that do not resolve"
    )
    if to_run:
        _print_estimate("estimate", to_run, args, explain)
    if bad:
        first = next(p for p in points if p.scenario is None)
        print(
            f"error: {exp.name}: {bad} of {len(points)} point(s) do not resolve "
            f"(the first, {first.label}: {first.error})",
            file=sys.stderr,
        )
    return (1 if bad else 0), to_run


def _print_estimate(
    what: str, to_run: Sequence[Any], args: argparse.Namespace, explain: bool = True
) -> None:
    from aqmlab.experiments.points import (
        EVENTS_PER_PACKET,
        EVENTS_PER_PACKET_WEB,
        REVERSE_FACTOR,
    )
    from aqmlab.experiments.progress import format_duration
    from aqmlab.experiments.runner import default_jobs, engine_speed, estimate_wall

    jobs = args.jobs or default_jobs()
    eps, overhead = engine_speed()
    wall, cpu = estimate_wall(to_run, jobs)
    sim = sum(p.duration_s for p in to_run)
    events = sum(p.est_events for p in to_run)
    where = (
        f"{format_duration(cpu)} of worker time on the cluster at {args.scheduler}"
        if args.scheduler
        else f"about {format_duration(wall)} on {jobs} local worker(s) "
        f"({format_duration(cpu)} of CPU)"
    )
    print(f"{what}: {sim:g} simulated seconds, about {events:.2e} events: {where}")
    if not explain:
        return
    print(
        f"  (events = {EVENTS_PER_PACKET:g} per packet the bottleneck can carry, "
        f"{REVERSE_FACTOR:g} times that with reverse-path flows, "
        f"{EVENTS_PER_PACKET_WEB:g} with web traffic, x simulated seconds; engine speed "
        f"{eps:.3g} events/s measured just now on a built-in 60 s run; "
        f"{overhead:.2f} s per point to store its folder; expect the real time within a "
        "factor of about two)"
    )


def _build_one(out: Path) -> tuple[Any, str]:
    """The report of ``out`` built (its :class:`~aqmlab.report.html.Built`), or None and why
    not."""
    from aqmlab.report.html import build

    try:
        return build(out), ""
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"


def _build_reports(outs: list[Path], jobs: int) -> list[tuple[Any, str]]:
    """:func:`_build_one` for each folder, on up to ``jobs`` processes when there are several
    (each report is written by one of them; the parent prints them in order)."""
    if jobs <= 1 or len(outs) <= 1:
        return [_build_one(o) for o in outs]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(outs)), mp_context=ctx) as ex:
        return list(ex.map(_build_one, outs))


def _print_report(out: Path, b: Any, why: str) -> tuple[int, Path | None]:
    """Print a built report's tables (and ranking check, where the paper gives numbers) as
    ``aqmlab report`` does, or why it could not be built: (status, the report's page or
    None)."""
    from aqmlab.report.cli import print_built

    if b is None:
        print(f"error: the report of {out} failed: {why}", file=sys.stderr)
        return EXIT_FAILED_POINTS, None
    sys.stdout.flush()
    print_built(b)
    return 0, b.index
