"""``aqmlab report DIR [DIR ...] [--index OUT.html]``: rebuild reports from saved results."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from aqmlab.papers import cite_source
from aqmlab.report import relations as R
from aqmlab.report import tables as T
from aqmlab.report.data import Experiment, ReportError, full_form_command, load_output
from aqmlab.report.html import Built, build, build_index
from aqmlab.results import ResultsError, hold_folder

__all__ = ["full_form_note", "print_built", "report_command", "terminal_console"]


def full_form_note(exp: Experiment) -> str:
    """Why a quick form's numbers differ from the paper's, and the command of the full form."""
    if not exp.papers:
        return (
            "note: this is the quick form, shortened (see the experiment's notes); the full "
            f"form: {full_form_command(exp)}"
        )
    return (
        "note: this is the quick form, shortened (see the experiment's notes), so its figures "
        f"are not meant to match the paper's; the full form: {full_form_command(exp)}"
    )


def terminal_console() -> Console:
    """The console the tables go to: rich's own on a terminal; piped or logged, 180 columns,
    wide enough for the paper's tables (rich would use 80)."""
    console = Console()
    return console if console.is_terminal else Console(width=180)


def print_built(b: Built, console: Console | None = None, quick_note: bool = True) -> None:
    """A built report on the terminal: its paper, named, the quick form's note (unless
    ``quick_note`` is false), the tables, the ranking check (where the paper gives numbers),
    and what could not be drawn or computed."""
    console = console or terminal_console()
    exp = b.out.experiment
    console.rule(f"[bold]{exp.name}[/bold]: {exp.title}" + (" (quick)" if exp.quick else ""))
    if exp.source:
        console.print(f"source: {cite_source(exp.source)}", highlight=False, markup=False)
    if exp.quick and quick_note:
        console.print(full_form_note(exp), highlight=False, markup=False)
    for t in b.tables.tables:
        console.print(T.to_rich(t))
    if b.tables.pairs:
        console.print(T.ranking_rich(b.tables))
    if b.relations:
        k, n, u = R.summary(b.checks)
        console.print(
            f"relations: kept {k} of {n} checks"
            + (f" ({u} without data)" if u else "")
            + " (each listed in the report)",
            highlight=False,
            markup=False,
        )
        missed = [c for c in b.checks if c.kept is False]
        for c in missed[:6]:
            if c.kept is False:
                r = b.relations[c.relation]
                where = f" ({c.setting})" if c.setting else ""
                console.print(
                    f"  not kept: {r.claim}: {c.scheme}{where}: {c.ours:.4g} vs {c.reference:.4g}",
                    highlight=False,
                    markup=False,
                )
        if len(missed) > 6:
            console.print(
                f"  ... and {len(missed) - 6} more not kept", highlight=False, markup=False
            )
    for name, _, err in b.figures:
        if err:
            console.print(f"[yellow]figure {name} not drawn:[/yellow] {err}")
    if b.out.failures:
        console.print(f"[red]{len(b.out.failures)} points failed[/red] (listed in the report)")
    if b.out.warnings:
        console.print(f"{len(b.out.warnings)} values could not be computed (listed in the report)")


def report_command(dirs: list[Path], index: str | None = None, quick_note: bool = True) -> int:
    """Build each folder's report, print its tables and ranking check, and the index page if
    asked. Every folder is checked before anything is written. Each report opens with its
    paper, named (:func:`aqmlab.papers.cite_source`), and, for a quick form, with
    :func:`full_form_note` unless ``quick_note`` is false (the demo prints its own)."""
    for d in dirs:
        if not d.is_dir():
            raise ReportError(f"{d}: no such directory")
        load_output(d)  # raises ReportError for a folder that is not an experiment's
    console = terminal_console()
    for d in dirs:
        # One writer at a time: not while a sweep is writing the folder.
        try:
            with hold_folder(d):
                b = build(d)
        except ResultsError as e:
            raise ReportError(str(e)) from None
        print_built(b, console, quick_note)
        print(f"report in {b.index}")
    if index is not None:
        print(f"index in {build_index(dirs, Path(index))}")
    return 0
