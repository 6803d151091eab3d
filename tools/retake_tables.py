#!/usr/bin/env python3
"""Take a docs page's tables again from a preset's new report, cell by cell.

The pages of docs/ (rfc7928.md, l4s.md) give a preset's full-form figures in tables of their
own layout: several report cells in one (``68.4 / 27.8``, ``1.36 -> 0.00``), rows of one scheme
from several report tables. When a change to the engine moves those figures, the preset runs
twice, with the old behaviour (``--set`` of the switch that changed) and with the new, and this
tool maps each figure of the page to the old report's cell that holds it, in a row of the same
scheme, then writes the new report's cell from the same place::

    tools/retake_tables.py docs/rfc7928.md \\
        'rfc7928-3\\.1=OLD/rfc7928-3.1:NEW/rfc7928-3.1' ... [--write]

Each ``HEADING=OLD:NEW[,OLD:NEW]`` names a regular expression of the page's ``## `` headings and
the report folders (each with ``report/tables.md``) whose tables the tables under it were taken
from. A page row matches a report row by its first label: the same scheme, or the scheme with a
setting after it (``RED x0.5``; never ``PI`` for ``PIE``). Where more than half of a page table's
rows find a page column's figures in one report column (a table's column, the same setting after
the scheme's name, the same setting of a relation's rows), every row takes that column: a figure
also found elsewhere in its row is a coincidence, and a figure that is not the old report's in
that column (the page left behind) is taken from there all the same, and told. Otherwise a figure
found in more than one cell takes the cell its column takes in the other rows. Printed: the rows
changed, each figure not found, which keeps its value (ranges, per-seed figures and the text are
the writer's to take again), and each figure the page had left behind. A page row that draws on
several reports' rows of one name at once (a table per rate, each with the same labels) can still
be mapped to the wrong one: check the result. Without ``--write`` nothing is written.

With one report as both OLD and NEW (``'rfc7928-8=R/rfc7928-8:R/rfc7928-8'``) the tool checks a
page against it: a row it would change holds a figure that is not that report's in the column
the page column's other rows take (printed as "was not the old report's ... in its column"),
and a figure it does not find, or a row of no report row, it has not checked.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

#: A figure in a cell.
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass
class Table:
    """One markdown table of a report: its header and its rows' cells."""

    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Place:
    """A report cell: table, column, and the row's labels."""

    table: int
    col: int
    labels: tuple[str, ...]


#: A report column as a page column reads it: its table, its column, the setting after the
#: page's scheme name in the report row's label (``" x0.5"``; ``""`` for the scheme itself) and
#: the labels after it (a relation table's setting).
Column = tuple[int, int, str, tuple[str, ...]]


#: An old report row of a page row's scheme: its table, its labels and its cells.
SchemeRow = tuple[int, tuple[str, ...], list[str]]


def column_of(p: Place, scheme: str) -> Column:
    """The report column of place ``p`` for a page row of ``scheme``."""
    return (p.table, p.col, p.labels[0][len(scheme) :], p.labels[1:])


def cells_of(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_report(path: Path) -> list[Table]:
    """The tables of a report's ``tables.md``, each cell's figure without its bold or interval."""
    tables: list[Table] = []
    current: Table | None = None
    for line in path.read_text().splitlines():
        if not line.startswith("|"):
            current = None
            continue
        cells = [c.replace("**", "").split(" ± ")[0].strip() for c in cells_of(line)]
        if current is None:
            current = Table(cells, [])
            tables.append(current)
        elif not set("".join(cells)) <= set("-: "):
            current.rows.append(cells)
    return tables


def is_figure(cell: str) -> bool:
    return cell == "-" or NUMBER.fullmatch(cell) is not None


def labels_of(cells: list[str]) -> tuple[str, ...]:
    """A report row's leading cells before its first figure."""
    out: list[str] = []
    for c in cells:
        if is_figure(c):
            break
        out.append(c)
    return tuple(out)


def same_scheme(report_label: str, page_labels: list[str]) -> bool:
    return any(report_label == p or report_label.startswith(p + " x") for p in page_labels)


class Retaker:
    """The old and the new report of a page's section, and the page rows taken again."""

    def __init__(self, old: list[Table], new: list[Table]) -> None:
        self.old_rows = [
            (t, labels_of(row), row) for t, table in enumerate(old) for row in table.rows
        ]
        self.labels = {label for _, labels, _ in self.old_rows for label in labels}
        self.new_rows = {
            (t, labels_of(row)): row for t, table in enumerate(new) for row in table.rows
        }
        self.unmapped: list[str] = []

    def figures(self, cells: list[str]) -> list[tuple[int, int, re.Match[str]]]:
        """(cell, order in the cell, match) of every figure outside the row's labels."""
        out = []
        for ci, c in enumerate(cells):
            if c in self.labels:
                continue
            for k, m in enumerate(NUMBER.finditer(c)):
                out.append((ci, k, m))
        return out

    def rows_of(self, cells: list[str]) -> list[tuple[int, tuple[str, ...], list[str]]]:
        """The old report's rows of this page row's scheme."""
        page_labels = [c for c in cells if not NUMBER.search(c) or c in self.labels]
        return [
            (t, labels, row)
            for t, labels, row in self.old_rows
            if labels and same_scheme(labels[0], page_labels)
        ]

    @staticmethod
    def places(rows: list[tuple[int, tuple[str, ...], list[str]]], value: str) -> list[Place]:
        return [
            Place(t, col, labels)
            for t, labels, row in rows
            for col, x in enumerate(row)
            if col >= len(labels) and x == value
        ]

    def new_value(self, p: Place) -> str | None:
        row = self.new_rows.get((p.table, p.labels))
        return row[p.col] if row is not None and p.col < len(row) else None

    def block(self, lines: list[str]) -> int:
        """Takes one page table (its lines, header included) again; the rows changed."""
        rows = [cells_of(line) for line in lines]
        votes: dict[tuple[int, int], dict[tuple[int, int], float]] = defaultdict(
            lambda: defaultdict(float)
        )
        # How many rows' figures each report column holds, per page column.
        hits: dict[tuple[int, int], dict[Column, int]] = defaultdict(lambda: defaultdict(int))
        found: list[list[tuple[int, int, re.Match[str], list[Place], list[SchemeRow]]]] = []
        for n, cells in enumerate(rows):
            figs = []
            # The header and the rule under it hold no figures.
            if n == 0 or set("".join(cells)) <= set("-: "):
                pass
            elif not (scheme_rows := self.rows_of(cells)):
                if any(c not in self.labels and NUMBER.search(c) for c in cells[1:]):
                    self.unmapped.append(f"no report row of {lines[n].strip()[:60]!r}")
            else:
                for ci, k, m in self.figures(cells):
                    ps = self.places(scheme_rows, m.group())
                    for p in ps:
                        votes[(ci, k)][(p.table, p.col)] += 1.0 / len(ps)
                        hits[(ci, k)][column_of(p, cells[0])] += 1
                    figs.append((ci, k, m, ps, scheme_rows))
            found.append(figs)
        # The column each figure's place takes in most rows, where most rows agree on one.
        n_rows = sum(1 for figs in found if figs)
        columns = {key: self.column(v, n_rows) for key, v in hits.items()}
        changed = 0
        for i, figs in enumerate(found):
            edits: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
            scheme = rows[i][0]
            for ci, k, m, ps, scheme_rows in figs:
                pick = self.pick(ps, votes[(ci, k)], columns.get((ci, k)), scheme_rows, scheme)
                if pick is not None and pick not in ps:
                    # The page's figure was not the old report's in its column.
                    self.unmapped.append(
                        f"{m.group()!r} in {lines[i].strip()[:60]!r} was not the old report's "
                        f"{self.old_value(pick)!r} in its column: taken from there"
                    )
                if pick is None:
                    # Figures only of rows whose scheme the report has.
                    self.unmapped.append(f"{m.group()!r} in {lines[i].strip()[:60]!r}")
                    continue
                v = self.new_value(pick)
                if v is not None and v != m.group():
                    edits[ci].append((m.start(), m.end(), v))
            if edits:
                parts = lines[i].strip().strip("|").split("|")
                for ci, spans in edits.items():
                    text = parts[ci]
                    lead = text[: len(text) - len(text.lstrip())]
                    body = text.strip()
                    for a, b, v in sorted(spans, reverse=True):
                        body = body[:a] + v + body[b:]
                    parts[ci] = lead + body + text[len(text.rstrip()) :]
                lines[i] = "|" + "|".join(parts) + "|"
                changed += 1
        return changed

    @staticmethod
    def column(votes: dict[Column, int], rows: int) -> Column | None:
        """The report column the figures of one page column take in more than half of the
        page table's rows, if one does."""
        if not votes:
            return None
        best = max(votes, key=lambda k: votes[k])
        return best if votes[best] > rows / 2 else None

    def pick(
        self,
        ps: list[Place],
        votes: dict[tuple[int, int], float],
        column: Column | None,
        scheme_rows: list[SchemeRow],
        scheme: str,
    ) -> Place | None:
        """The old report's cell of a page figure found at ``ps``: the page column's own cell
        where its rows agree on one (a figure found once elsewhere in the row is a coincidence),
        else the one place, or the place whose new figure all places share, or the column the
        votes favour."""
        if column is not None:
            t, col, setting, extra = column
            for p in ps:
                if column_of(p, scheme) == column:
                    return p
            # A figure that was not the old report's in its column (a page left behind):
            # the column's cell in the scheme's one row of that table.
            mine = [
                labels
                for tt, labels, _ in scheme_rows
                if tt == t and labels[0] == scheme + setting and labels[1:] == extra
            ]
            if len(mine) == 1:
                return Place(t, col, mine[0])
        if not ps:
            return None
        values = {self.new_value(p) for p in ps}
        if len(ps) == 1 or (len(values) == 1 and None not in values):
            return ps[0]
        if votes:
            t, col = max(votes, key=lambda k: votes[k])
            for p in ps:
                if (p.table, p.col) == (t, col):
                    return p
        return None

    def old_value(self, p: Place) -> str | None:
        for t, labels, row in self.old_rows:
            if (t, labels) == (p.table, p.labels):
                return row[p.col] if p.col < len(row) else None
        return None


def retake(page: list[str], heading: str, old: list[Table], new: list[Table]) -> list[str]:
    """Takes the tables under the headings matching ``heading`` again, in place; a report."""
    heads = [i for i, line in enumerate(page) if line.startswith("## ")] + [len(page)]
    report = []
    for a, b in itertools.pairwise(heads):
        if not re.search(heading, page[a]):
            continue
        r = Retaker(old, new)
        changed = 0
        i = a
        while i < b:
            if not page[i].startswith("|"):
                i += 1
                continue
            j = i
            while j < b and page[j].startswith("|"):
                j += 1
            block = page[i:j]
            changed += r.block(block)
            page[i:j] = block
            i = j
        # Told on the section's own line, not only among the figures not found: a page row
        # of its own layout (a label the report does not have) keeps every figure it had.
        alone = sum(u.startswith("no report row of ") for u in r.unmapped)
        report.append(
            f"{page[a].strip()[:70]}: {changed} rows changed"
            + (f"; {alone} of no report row, left as they were" if alone else "")
        )
        report += [f"  not found: {u}" for u in r.unmapped]
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page", type=Path, help="the docs page")
    ap.add_argument("sections", nargs="+", help="HEADING_REGEX=OLD:NEW[,OLD:NEW]")
    ap.add_argument("--write", action="store_true", help="write the page")
    a = ap.parse_args(argv)
    page = a.page.read_text().split("\n")
    for spec in a.sections:
        heading, sep, dirs = spec.partition("=")
        if not sep or not dirs:
            print(f"error: {spec!r}: expected HEADING_REGEX=OLD:NEW[,OLD:NEW]", file=sys.stderr)
            return 2
        old: list[Table] = []
        new: list[Table] = []
        for pair in dirs.split(","):
            o, sep, n = pair.partition(":")
            if not sep:
                print(f"error: {pair!r}: expected OLD:NEW report folders", file=sys.stderr)
                return 2
            for folder, into in ((o, old), (n, new)):
                path = Path(folder) / "report" / "tables.md"
                if not path.is_file():
                    print(f"error: {path}: no such report table", file=sys.stderr)
                    return 2
                into += read_report(path)
        print("\n".join(retake(page, heading, old, new)))
    if a.write:
        a.page.write_text("\n".join(page))
    return 0


if __name__ == "__main__":
    from pipe_exit import run

    sys.exit(run(main))
