"""``aqmlab compare``: the summaries of several result folders side by side.

One row per figure (the rows of :data:`aqmlab.report.terminal.ROWS`), one
column per run. A figure whose shown value is not the same in every run is
highlighted (bold yellow on a terminal, **bold** in Markdown, ``differs`` =
1 in CSV); rows the same everywhere are dimmed. Above the table, the
scenario keys whose values differ between the runs (``aqm.kind`` ...).

``aqmlab compare --responses A B`` compares two runs of one web workload
response by response instead (:func:`aqmlab.web.compare_responses`):
:class:`ResponsesTable`.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.report.terminal import ROWS
from aqmlab.results import ResultsError, is_run_dir, load_run

if TYPE_CHECKING:
    from rich.table import Table

    from aqmlab.api import RunResult
    from aqmlab.web import ResponseComparison

__all__ = ["FORMATS", "Comparison", "ResponsesTable", "compare", "differing_keys", "load_pairs"]

#: Output formats of ``aqmlab compare``.
FORMATS = ("table", "markdown", "csv")

#: Most differing scenario keys listed above the table.
MAX_KEYS = 6


class Comparison:
    """Runs' summaries side by side (see the module documentation)."""

    def __init__(self, runs: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]]) -> None:
        """``runs``: (label, summary, resolved scenario) of each run."""
        self.labels = [label for label, _, _ in runs]
        self.keys = differing_keys([sc for _, _, sc in runs])
        self.rows: list[tuple[str, str, list[Any], list[str], bool]] = []
        for label, section, key, fmt in ROWS:
            raw = [_get(s, section, key) for _, s, _ in runs]
            shown = ["-" if v is None else fmt(v) for v in raw]
            field = key if section is None else f"{section}.{key}"
            self.rows.append((label, field, raw, shown, len(set(shown)) > 1))

    def rich(self, title: str = "") -> Table:
        from rich.table import Table

        t = Table(title=title or None, title_justify="left")
        t.add_column("")
        for label in self.labels:
            t.add_column(label, justify="right")
        for label, _, _, shown, differs in self.rows:
            if differs:
                t.add_row(label, *[f"[bold yellow]{c}[/]" for c in shown])
            else:
                t.add_row(f"[dim]{label}[/]", *[f"[dim]{c}[/]" for c in shown])
        return t

    def markdown(self) -> str:
        esc = [lab.replace("|", "\\|") for lab in self.labels]
        out = ["| figure | " + " | ".join(esc) + " |"]
        out.append("|---|" + "---:|" * len(self.labels))
        for label, _, _, shown, differs in self.rows:
            cells = [f"**{c}**" if differs else c for c in shown]
            out.append(f"| {label} | " + " | ".join(cells) + " |")
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """Full-precision values; ``field`` is the summary key."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["figure", "field", *self.labels, "differs"])
        for label, field, raw, _, differs in self.rows:
            w.writerow([label, field, *["" if v is None else v for v in raw], int(differs)])
        return buf.getvalue()

    def keys_text(self) -> str:
        if not self.keys:
            return "the runs' scenarios are the same"
        shown = self.keys[:MAX_KEYS]
        more = f" (+{len(self.keys) - MAX_KEYS} more)" if len(self.keys) > MAX_KEYS else ""
        parts = [f"{k}: {' | '.join(_short(v) for v in vals)}" for k, vals in shown]
        return "scenario keys that differ: " + "; ".join(parts) + more


def _short(v: Any, n: int = 24) -> str:
    s = "-" if v is None else str(v)
    return s if len(s) <= n else s[: n - 3] + "..."


def _get(summary: Mapping[str, Any], section: str | None, key: str) -> Any:
    node = summary if section is None else summary.get(section) or {}
    return node.get(key)


def _flatten(v: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(v, Mapping):
        for k, x in v.items():
            _flatten(x, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(v, list) and any(isinstance(x, Mapping | list) for x in v):
        for i, x in enumerate(v):
            _flatten(x, f"{prefix}[{i}]", out)
    else:
        out[prefix] = v


def differing_keys(scenarios: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Any]]]:
    """The keys (dotted paths) whose values differ between ``scenarios``, with
    each scenario's value (None where it lacks the key), in first-seen order."""
    flat = []
    for sc in scenarios:
        d: dict[str, Any] = {}
        _flatten(sc, "", d)
        flat.append(d)
    keys: dict[str, None] = {}
    for d in flat:
        keys.update(dict.fromkeys(d))
    out = []
    for k in keys:
        vals = [d.get(k) for d in flat]
        if any(v != vals[0] for v in vals[1:]):
            out.append((k, vals))
    return out


def _labels(dirs: Sequence[Path]) -> list[str]:
    """Each folder's name; the whole path where names repeat."""
    names = [d.resolve().name or str(d) for d in dirs]
    if len(set(names)) == len(names):
        return names
    return [str(d) for d in dirs]


def compare(
    dirs: Sequence[str | os.PathLike[str]], labels: Sequence[str] | None = None
) -> Comparison:
    """Load the result folders ``dirs`` and compare them (ResultsError when
    one is not a result folder). ``labels`` names the columns (default: the
    folders' names; ``aqmlab compare`` gives a sweep's points their scheme and
    factors, :func:`aqmlab.folders.expand`)."""
    paths = [Path(d) for d in dirs]
    if labels is not None and len(labels) != len(paths):
        raise ValueError(f"{len(labels)} labels for {len(paths)} folders")
    runs = []
    for d, label in zip(paths, list(labels) if labels is not None else _labels(paths), strict=True):
        if not is_run_dir(d):
            raise ResultsError(f"{d}: not an aqmlab result folder (no manifest.json)")
        r = load_run(d)
        runs.append((label, r.summary, r.scenario))
    return Comparison(runs)


def load_pairs(
    dirs: Sequence[str | os.PathLike[str]], labels: Sequence[str] | None = None
) -> tuple[list[str], list[RunResult], list[RunResult]]:
    """The labels (a, b) and runs of result folders of web runs given in pairs, a then b (one
    pair per seed; ``labels``: each folder's name, by default the folder's). ResultsError when
    the count is odd or under two, or when a folder is not a result folder or has no web
    responses."""
    paths = [Path(d) for d in dirs]
    if len(paths) < 2 or len(paths) % 2:
        raise ResultsError(
            f"got {len(paths)} result folders; give them in pairs, a then b "
            "(A B, or A1 B1 A2 B2 ... for one pair per seed)"
        )
    runs = []
    for d in paths:
        if not is_run_dir(d):
            raise ResultsError(f"{d}: not an aqmlab result folder (no manifest.json)")
        r = load_run(d)
        if r.responses.num_rows == 0:
            raise ResultsError(f"{d}: the run has no web responses (responses.parquet is empty)")
        runs.append(r)
    names = list(labels) if labels is not None else _labels(paths)
    return [_joined(names[0::2]), _joined(names[1::2])], runs[0::2], runs[1::2]


def _joined(names: Sequence[str], most: int = 3) -> str:
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[: most - 1])} ... {names[-1]} ({len(names)})"


class ResponsesTable:
    """A :class:`~aqmlab.web.ResponseComparison` as a table: one row per figure, a column per
    run and one for b - a (``±``: the half-width of a 95 % interval)."""

    def __init__(self, labels: Sequence[str], cmp: ResponseComparison) -> None:
        self.labels = list(labels)
        self.cmp = cmp
        self.rows = cmp.rows()

    def _header(self) -> list[str]:
        a, b = self.labels
        return ["", f"a: {a}", f"b: {b}", "b - a"]

    def _note(self) -> str:
        return self.cmp.note()

    def rich(self) -> Table:
        from rich.table import Table

        h = self._header()
        t = Table(title=self._note(), title_justify="left")
        t.add_column(h[0])
        for col in h[1:]:
            t.add_column(col, justify="right")
        for row in self.rows:
            t.add_row(*row)
        return t

    def markdown(self) -> str:
        h = [c.replace("|", "\\|") for c in self._header()]
        out = [self._note() + ".", "", "| figure | " + " | ".join(h[1:]) + " |"]
        out.append("|---|---:|---:|---:|")
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in self.rows]
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """Full-precision values: one row per figure, ``a``, ``b``, ``diff`` and ``ci`` (the
        half-width of the 95 % interval of the difference; empty where there is none)."""
        c = self.cmp
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["figure", "unit", "a", "b", "diff", "ci"])
        w.writerow(["completed", "responses", *c.completed, c.completed[1] - c.completed[0], ""])
        w.writerow(["paired", "responses", c.paired, c.paired, "", ""])
        w.writerow(["only", "responses", *c.only, "", ""])
        w.writerow(["sessions", "sessions", c.sessions, c.sessions, "", ""])
        w.writerow(["runs", "pairs of runs", c.runs, c.runs, "", ""])
        w.writerow(["end", "s", c.end_s, c.end_s, "", ""])
        for s in c.within:
            w.writerow([f"within {s.t_s:g} s", "share", s.a, s.b, s.diff, s.ci])
            w.writerow([f"within {s.t_s:g} s, responses", "responses", s.n, s.n, "", ""])
        w.writerow(["median response time", "s", *c.median_s, c.median_diff_s, ""])
        w.writerow(["mean response time", "s", *c.mean_s, c.mean_diff_s, c.mean_diff_ci_s])
        w.writerow(["b faster", "share", "", "", c.b_faster, ""])
        w.writerow(["as fast", "share", "", "", c.same, ""])
        w.writerow(["b slower", "share", "", "", c.b_slower, ""])
        return buf.getvalue()
