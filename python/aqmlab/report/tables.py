"""The paper's tables with our numbers beside the paper's (and ns-2.35's), and the ranking check.

Seeds combine per cell (scheme, factor values, phase) as the metric's ``stat`` says:

* ``"mean"``: the mean and a 95 % confidence interval from Student's t distribution,
  mean +- t(0.975, n - 1) s / sqrt(n) with s the sample standard deviation (none for one seed);
* ``"range"``: the minimum and maximum over the seeds (as the thesis' chapter 6 ranges).

Seeds whose value is NaN (a failed point, missing data) are left out and counted.

The ranking check compares, for every metric with ``better`` other than ``"none"``, every pair of
schemes in the same other-dimension cell (phase and factor values) where the paper gives both
numbers. Each side's order is "<", "=" or ">": the paper's "=" when the two numbers are equal at
the paper's precision (the metric's ``digits``, else the decimals the paper's numbers are written
with) or, for ranges, when the ranges overlap. Ours is found the same way from the same statistic:
for a ``stat = "range"`` metric our min-max ranges over the seeds (overlapping: "="), else our
means (equal at the paper's precision: "="). A pair is kept when the two orders are the same (a
tie in the paper is kept only by a tie of ours).

A paper range marked ``band`` is one band the paper gives for several cells (read off a figure or
its text for every point, as the REM paper's "between 62% and 91%" for every number of sources),
not the cell's own figure: it says where each of those cells lies, not how two of them compare.
Two overlapping ranges of which one is a band give no order: such a pair is "not given by the
paper" and is neither kept nor compared. Disjoint ranges order the pair, bands or not.

Where the experiment has an ``[[ns2]]`` entry for a cell (ns-2.35's figure for the same set-up,
from the cross-check), the cell shows it as a third value; it takes no part in the ranking.
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
from rich.table import Table

from aqmlab.report.data import ALL, Experiment, Metric, Output, Paper, selects

__all__ = [
    "NOT_GIVEN",
    "NS2",
    "Agg",
    "Cell",
    "Pair",
    "ReportTable",
    "Tables",
    "aggregate",
    "build_tables",
    "fit_width",
    "fmt_parts",
    "fmt_spread",
    "fmt_value",
    "ns2_sources",
    "ref_where",
    "t975",
]

# Student's t, 0.975 quantile, for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_T975_LARGE = ((40, 2.021), (60, 2.000), (120, 1.980))

#: A ranking pair whose order the paper does not give (overlapping ranges, one a band).
NOT_GIVEN = "not given by the paper"
#: How ns-2.35's figure is labelled in the tables.
NS2 = "ns-2.35"


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (table values; beyond
    30 the next tabulated df at or below, 1.960 beyond 120)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, not {df}")
    if df <= 30:
        return _T975[df - 1]
    best = _T975[-1]
    for d, v in _T975_LARGE:
        if df >= d:
            best = v
    return best if df < 1000 else 1.960


@dataclass(frozen=True)
class Agg:
    """Seeds combined: ``mean`` and [lo, hi] (the 95 % CI, or min-max for ``stat="range"``)."""

    n: int
    n_nan: int
    mean: float
    lo: float
    hi: float
    stat: str

    @property
    def ok(self) -> bool:
        return self.n > 0


def aggregate(values: Sequence[float], stat: str = "mean") -> Agg:
    """Combine the seeds' values (NaN left out)."""
    x = np.asarray([v for v in values if not math.isnan(v)], dtype=np.float64)
    n_nan = len(values) - len(x)
    if len(x) == 0:
        return Agg(0, n_nan, math.nan, math.nan, math.nan, stat)
    mean = float(np.mean(x))
    if stat == "range":
        return Agg(len(x), n_nan, mean, float(np.min(x)), float(np.max(x)), stat)
    if len(x) == 1:
        return Agg(1, n_nan, mean, math.nan, math.nan, stat)
    half = t975(len(x) - 1) * float(np.std(x, ddof=1)) / math.sqrt(len(x))
    return Agg(len(x), n_nan, mean, mean - half, mean + half, stat)


def fmt_value(v: float, digits: int | None) -> str:
    """A number at the metric's display digits (3 significant figures without them); large
    numbers in e-notation."""
    if v is None or math.isnan(v):
        return "NaN"
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-4):
        return f"{v:.{2 if digits is None else digits}e}"
    if digits is None:
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return f"{v:.{digits}f}"


def _quantum(v: float, digits: int | None) -> float:
    """The step of the last digit :func:`fmt_value` shows of ``v`` (NaN for 0 without
    ``digits``: 0 is written "0" at any precision)."""
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-4):
        return 10.0 ** (math.floor(math.log10(abs(v))) - (2 if digits is None else digits))
    if digits is not None:
        return 10.0**-digits
    if v == 0:
        return math.nan
    return 1.0 if abs(v) >= 1000 else 10.0 ** (math.floor(math.log10(abs(v))) - 2)


def fmt_spread(mean: float, half: float, digits: int | None) -> str:
    """The half-width of an interval as shown beside its mean: at the mean's precision (the
    step of its last digit shown; without ``digits`` at most two significant figures of the
    spread), "" when it rounds to nothing there (a spread of 4e-14 on a mean of 100.0 is no
    spread worth a digit)."""
    if math.isnan(half):
        return ""
    q = _quantum(mean, digits)
    if math.isnan(q):  # a mean of 0: the spread at its own 3 significant figures
        return "" if half == 0 else fmt_value(half, digits)
    if half < q / 2:
        return ""
    if not (abs(mean) >= 1e6 or abs(mean) < 1e-4):
        dec = max(0, -math.floor(math.log10(q) + 1e-9))
        if digits is None:  # no more than two significant figures of the spread
            dec = min(dec, max(0, 1 - math.floor(math.log10(half))))
        return f"{round(half / q) * q:.{dec}f}"
    return fmt_value(half, digits)


def fmt_parts(a: Agg, digits: int | None) -> tuple[str, str]:
    """Seeds combined as (value, spread): the mean and "± half-width" of its interval ("" when
    it rounds to nothing at the mean's precision, or for one seed), or for ``stat = "range"``
    the min-max range ("" spread; one value when both ends print the same)."""
    if not a.ok:
        return "NaN", ""
    if a.stat == "range":
        lo, hi = fmt_value(a.lo, digits), fmt_value(a.hi, digits)
        return (lo, "") if a.n == 1 or lo == hi else (f"{lo}-{hi}", "")
    if math.isnan(a.lo):
        return fmt_value(a.mean, digits), ""
    half = fmt_spread(a.mean, a.hi - a.mean, digits)
    return fmt_value(a.mean, digits), (f"± {half}" if half else "")


def fmt_agg(a: Agg, digits: int | None) -> str:
    main, spread = fmt_parts(a, digits)
    return f"{main} {spread}" if spread else main


def fmt_paper(p: Paper, digits: int | None) -> str:
    if p.range is not None:
        return f"{fmt_value(p.range[0], digits)}-{fmt_value(p.range[1], digits)}"
    assert p.value is not None
    return fmt_value(p.value, digits)


def _decimals(x: float) -> int:
    e = Decimal(repr(float(x))).normalize().as_tuple().exponent
    return max(0, -e) if isinstance(e, int) else 0


def precision(metric: Metric, papers: Sequence[Paper]) -> int:
    """Decimals at which the paper's numbers of ``metric`` are compared."""
    if metric.digits is not None:
        return metric.digits
    d = 0
    for p in papers:
        for x in (p.value,) if p.range is None else p.range:
            if x is not None:
                d = max(d, _decimals(x))
    return d


@dataclass
class Cell:
    """One cell: our value beside the paper's, and ns-2.35's where the experiment gives it."""

    scheme: str
    factors: tuple[int | None, ...]
    phase: str
    metric: Metric
    ours: Agg
    paper: Paper | None
    values: list[float]
    ns2: Paper | None = None

    def diff_to(self, ref: Paper | None) -> float:
        """Ours - ref; for a range the distance outside it (0 inside)."""
        if ref is None or not self.ours.ok:
            return math.nan
        if ref.range is not None:
            lo, hi = ref.range
            m = self.ours.mean
            return 0.0 if lo <= m <= hi else (m - lo if m < lo else m - hi)
        assert ref.value is not None
        return self.ours.mean - ref.value

    @property
    def diff(self) -> float:
        """Ours - paper; for a paper range the distance outside it (0 inside)."""
        return self.diff_to(self.paper)

    @property
    def rel(self) -> float:
        """The difference in % of the paper's number (NaN for 0)."""
        if self.paper is None or self.paper.center == 0:
            return math.nan
        return 100 * self.diff / abs(self.paper.center)

    def text_ours(self) -> str:
        return fmt_agg(self.ours, self.metric.digits)

    def text_parts(self) -> tuple[str, str]:
        """Ours as (value, spread): :func:`fmt_parts`."""
        return fmt_parts(self.ours, self.metric.digits)

    def text_paper(self) -> str:
        return "-" if self.paper is None else fmt_paper(self.paper, self.metric.digits)

    def text_diff(self) -> str:
        if self.paper is None:
            return ""
        return self._text_diff(self.paper, self.rel)

    def text_ns2(self) -> str:
        """ns-2.35's figure, "" when the experiment has none for this cell."""
        return "" if self.ns2 is None else fmt_paper(self.ns2, self.metric.digits)

    def text_ns2_diff(self) -> str:
        """Ours - ns-2.35's (no percentage: the figure is a check, not a target)."""
        return "" if self.ns2 is None else self._text_diff(self.ns2, math.nan)

    def _text_diff(self, ref: Paper, rel: float) -> str:
        d = self.diff_to(ref)
        if math.isnan(d):
            return "Δ ?"
        s = f"Δ {'+' if d >= 0 else '-'}{fmt_value(abs(d), self.metric.digits)}"
        if ref.range is not None:
            return "in range" if d == 0 else f"{s} {'above' if d > 0 else 'below'} the range"
        return s if math.isnan(rel) else f"{s} ({rel:+.0f} %)"


@dataclass
class Pair:
    """The ranking check of two schemes in one cell of the other dimensions."""

    metric: str
    phase: str
    factors: str
    a: str
    b: str
    paper: str  # "<", "=", ">"; "?" when not given
    ours: str  # "<", "=", ">" or "?" (no data)
    kept: bool | None  # None: no data of ours, or the paper gives no order
    paper_values: tuple[str, str] = ("", "")  # the paper's numbers of a and b, as shown
    our_values: tuple[str, str] = ("", "")  # ours
    given: bool = True  # False: overlapping ranges, one a band: the paper gives no order

    @property
    def verdict(self) -> str:
        """ "kept", "not kept", "no data" or :data:`NOT_GIVEN`."""
        if not self.given:
            return NOT_GIVEN
        if self.kept is None:
            return "no data"
        return "kept" if self.kept else "not kept"


class NotMeasured:
    """A table cell whose metric is not measured in its factor setting (``[[metric]]``'s
    ``factors``): shown as "-", apart from "no data" (a point that failed or is missing)."""

    TEXT = "-"


#: The one :class:`NotMeasured` cell.
NOT_MEASURED = NotMeasured()


@dataclass
class ReportTable:
    """A table laid out as the paper's: header rows, row labels and cells."""

    name: str
    slice: str  # "" or e.g. "flows = 30" for a factor not in the layout
    col_headers: list[list[str]]  # one list per header level, one entry per column
    row_labels: list[list[str]]  # one entry per row: one label per row dimension
    row_dims: list[str]
    cells: list[list[Cell | NotMeasured | None]]
    #: Whether the experiment gives the paper's (or ns-2.35's) numbers: without any, a cell
    #: shows ours alone, the spread below the value, and no "paper -" line.
    with_paper: bool = True

    #: "1 of 2" when the table was cut into parts to fit the page (:func:`fit_width`).
    part: str = ""

    @property
    def title(self) -> str:
        base = f"{self.name} ({self.slice})" if self.slice else self.name
        return f"{base}, part {self.part}" if self.part else base


@dataclass
class Tables:
    tables: list[ReportTable]
    pairs: list[Pair]
    cells: dict[tuple[str, tuple[int | None, ...], str, str], Cell] = field(default_factory=dict)
    #: Whether the experiment gives any number of the paper's (``[[paper]]``): without one,
    #: the report has no paper column and no ranking check (an experiment of one's own).
    with_paper: bool = True

    def ranking_summary(self) -> list[tuple[str, int, int, int]]:
        """Per metric: (metric, kept, compared, without data). Pairs the paper gives no order
        for are in none of these (:meth:`not_given`)."""
        out: dict[str, list[int]] = {}
        for p in self.pairs:
            c = out.setdefault(p.metric, [0, 0, 0])
            if not p.given:
                continue
            if p.kept is None:
                c[2] += 1
            else:
                c[1] += 1
                c[0] += int(p.kept)
        return [(m, k, n, u) for m, (k, n, u) in out.items()]

    def not_given(self) -> dict[str, int]:
        """Per metric: the pairs whose order the paper does not give (metrics without one
        left out)."""
        out: dict[str, int] = {}
        for p in self.pairs:
            if not p.given:
                out[p.metric] = out.get(p.metric, 0) + 1
        return out

    @property
    def kept(self) -> tuple[int, int]:
        """(pairs kept, pairs compared) over every metric."""
        k = sum(1 for p in self.pairs if p.kept)
        n = sum(1 for p in self.pairs if p.kept is not None)
        return k, n


def _entry_for(
    exp: Experiment,
    entries: Sequence[Paper],
    scheme: str,
    fkey: tuple[int | None, ...],
    phase: str,
    metric: str,
) -> Paper | None:
    """The first of ``entries`` (the paper's or ns-2.35's) that selects this cell."""
    for p in entries:
        if p.scheme != scheme or p.metric != metric or p.phase != phase:
            continue
        if selects(exp.factors, fkey, {k: [v] for k, v in p.factors.items()}):
            return p
    return None


def collect_cells(
    out: Output, values: dict[tuple[str, str], dict[str, float]]
) -> dict[tuple[str, tuple[int | None, ...], str, str], Cell]:
    """Every (scheme, factor positions, phase, metric) with its seeds' values combined."""
    exp = out.experiment
    seeds: dict[tuple[str, tuple[int | None, ...], str], list[str]] = {}
    for r in out.rows:
        seeds.setdefault((r.scheme, out.factor_key(r), r.phase), []).append(r.id)
    cells = {}
    for (scheme, fkey, phase), ids in seeds.items():
        for m in exp.metrics.values():
            if not m.applies(exp.factors, fkey, scheme):
                continue
            vals = [values.get((i, phase), {}).get(m.name, math.nan) for i in ids]
            cells[(scheme, fkey, phase, m.name)] = Cell(
                scheme,
                fkey,
                phase,
                m,
                aggregate(vals, m.stat),
                _entry_for(exp, exp.papers, scheme, fkey, phase, m.name),
                vals,
                _entry_for(exp, exp.ns2, scheme, fkey, phase, m.name),
            )
    return cells


def _dim_values(
    exp: Experiment,
    dim: str,
    metrics: list[str],
    phases: list[str] | None = None,
    shown: dict[str, list[int]] | None = None,
) -> list[tuple[Any, str]]:
    """(value, label) of each value of a layout dimension (``phases``: the phases a table
    selects; ``shown``: the values it selects of its factors, by index)."""
    if dim == "scheme":
        return [(s, s) for s in exp.schemes]
    if dim == "metric":
        return [(m, exp.metrics[m].label) for m in metrics if m in exp.metrics]
    if dim == "phase":
        if phases:
            return [(p, p) for p in phases]
        named = [p for p in exp.phases if p != ALL]
        with_all = any(p.phase == ALL and p.metric in metrics for p in [*exp.papers, *exp.ns2])
        ph = ([ALL] if with_all or not named else []) + named
        return [(p, p) for p in ph]
    f = exp.factor(dim)
    if f is None:
        return []
    picked = (shown or {}).get(dim)
    return [(i, f.label(i)) for i in (range(len(f.values)) if picked is None else picked)]


def _rel(a: float, b: float, d: int) -> str:
    ra, rb = round(a, d), round(b, d)
    return "=" if ra == rb else ("<" if ra < rb else ">")


def _paper_rel(pa: Paper, pb: Paper, d: int) -> str:
    """The paper's order of two cells: "<", "=", ">", or "?" when it gives none (two
    overlapping ranges, one of them a band for several cells)."""
    if pa.range is None and pb.range is None:
        assert pa.value is not None and pb.value is not None
        return _rel(pa.value, pb.value, d)
    a = pa.range if pa.range is not None else (pa.center, pa.center)
    b = pb.range if pb.range is not None else (pb.center, pb.center)
    rel = _range_rel(a, b, d)
    return "?" if rel == "=" and (pa.band or pb.band) else rel


def _range_rel(a: tuple[float, float], b: tuple[float, float], d: int) -> str:
    """ "<" if range a lies wholly below range b at ``d`` decimals, ">" if above, else "="."""
    (alo, ahi), (blo, bhi) = a, b
    if round(ahi, d) < round(blo, d):
        return "<"
    if round(alo, d) > round(bhi, d):
        return ">"
    return "="


def _factor_text(exp: Experiment, fkey: tuple[int | None, ...]) -> str:
    parts = []
    for f, i in zip(exp.factors, fkey, strict=True):
        parts.append(f"{f.name} = {'?' if i is None else f.label(i)}")
    return ", ".join(parts)


def ranking_pairs(exp: Experiment, cells: dict[Any, Cell]) -> list[Pair]:
    """The pair-by-pair ranking check (see the module docstring)."""
    pairs = []
    groups: dict[tuple[str, tuple[int | None, ...], str], list[Cell]] = {}
    for (_, fkey, phase, mname), c in cells.items():
        if c.paper is not None and exp.metrics[mname].better != "none":
            groups.setdefault((mname, fkey, phase), []).append(c)
    order = {s: i for i, s in enumerate(exp.schemes)}
    for (mname, fkey, phase), cs in groups.items():
        m = exp.metrics[mname]
        cs.sort(key=lambda c: order.get(c.scheme, len(order)))
        d = precision(m, [c.paper for c in cs if c.paper is not None])
        for ca, cb in itertools.combinations(cs, 2):
            assert ca.paper is not None and cb.paper is not None
            prel = _paper_rel(ca.paper, cb.paper, d)
            kept: bool | None = None
            if ca.ours.ok and cb.ours.ok and m.stat == "range":
                # Ranges against ranges, as the paper's: overlapping is a tie.
                orel = _range_rel((ca.ours.lo, ca.ours.hi), (cb.ours.lo, cb.ours.hi), d)
                kept = orel == prel
            elif ca.ours.ok and cb.ours.ok:
                orel = _rel(ca.ours.mean, cb.ours.mean, d)
                kept = orel == prel
            else:
                orel = "?"
            if prel == "?":
                kept = None
            pairs.append(
                Pair(
                    mname,
                    phase,
                    _factor_text(exp, fkey),
                    ca.scheme,
                    cb.scheme,
                    prel,
                    orel,
                    kept,
                    (ca.text_paper(), cb.text_paper()),
                    (fmt_value(ca.ours.mean, m.digits), fmt_value(cb.ours.mean, m.digits)),
                    given=prel != "?",
                )
            )
    return pairs


def build_tables(out: Output, values: dict[tuple[str, str], dict[str, float]]) -> Tables:
    """Lay out every ``[table]`` of the experiment and run the ranking check."""
    exp = out.experiment
    cells = collect_cells(out, values)
    result = Tables([], ranking_pairs(exp, cells), cells, with_paper=bool(exp.papers))
    for spec in exp.tables:
        metrics = [m for m in spec.metrics if m in exp.metrics]
        for m in spec.metrics:
            if m not in exp.metrics:
                out.warn(f"{spec.name}: metric {m!r} is not one of the experiment's metrics")
        rows = list(spec.rows)
        cols = list(spec.columns)
        if "metric" not in rows and "metric" not in cols:
            cols = ["metric", *cols]
        layout = set(rows) | set(cols)
        # Factor values the table fixes (`factors`); one the run lacks (a quick form that
        # leaves it out) leaves the table out. A list picks the values a layout factor
        # shows: those the run lacks are left out, and the table with them all.
        pinned: dict[str, Any] = {}
        shown: dict[str, list[int]] = {}
        for fname, v in spec.factors.items():
            f = exp.factor(fname)
            if isinstance(v, list):
                picked = [] if f is None else [f.index(x) for x in v]
                shown[fname] = [i for i in picked if i is not None]
                if not shown[fname]:
                    break
                continue
            idx = None if f is None else f.index(v)
            if idx is None:
                break
            pinned[fname] = idx
        else:
            slice_dims = [f.name for f in exp.factors if f.name not in layout | set(pinned)]
            if "scheme" not in layout:
                slice_dims.insert(0, "scheme")
            slice_vals = [_dim_values(exp, d, metrics) for d in slice_dims]
            for combo in itertools.product(*slice_vals):
                fixed = dict(pinned)
                fixed.update(zip(slice_dims, [v for v, _ in combo], strict=True))
                label = ", ".join(
                    f"{d} = {lab}" for d, (_, lab) in zip(slice_dims, combo, strict=True)
                )
                result.tables.append(
                    _layout(
                        exp, spec.name, label, rows, cols, fixed, metrics, cells, spec.phases, shown
                    )
                )
    return result


def _layout(
    exp: Experiment,
    name: str,
    slice_label: str,
    rows: list[str],
    cols: list[str],
    fixed: dict[str, Any],
    metrics: list[str],
    cells: dict[Any, Cell],
    phases: list[str] | None = None,
    shown: dict[str, list[int]] | None = None,
) -> ReportTable:
    rvals = list(itertools.product(*[_dim_values(exp, d, metrics, phases, shown) for d in rows]))
    cvals = list(itertools.product(*[_dim_values(exp, d, metrics, phases, shown) for d in cols]))
    # A factor's columns are headed with its name and value ("buffer = 50"): a bare 50 says
    # nothing of what was varied.
    col_headers = [
        [
            f"{cols[level]} = {c[level][1]}" if exp.factor(cols[level]) else c[level][1]
            for c in cvals
        ]
        for level in range(len(cols))
    ]
    grid: list[list[Cell | NotMeasured | None]] = []
    for rv in rvals:
        line: list[Cell | NotMeasured | None] = []
        for cv in cvals:
            at = dict(fixed)
            at.update(zip(rows, [v for v, _ in rv], strict=True))
            at.update(zip(cols, [v for v, _ in cv], strict=True))
            fkey = tuple(at.get(f.name) for f in exp.factors)
            key = (at.get("scheme"), fkey, at.get("phase", ALL), at.get("metric"))
            m = exp.metrics.get(str(at.get("metric")))
            measured = m is None or m.applies(exp.factors, fkey, at.get("scheme"))
            line.append(cells.get(key) if measured else NOT_MEASURED)
        grid.append(line)
    return ReportTable(
        name=name,
        slice=slice_label,
        col_headers=col_headers,
        row_labels=[[lab for _, lab in rv] for rv in rvals],
        row_dims=rows,
        cells=grid,
        with_paper=bool(exp.papers or exp.ns2),
    )


# ---- rendering ---------------------------------------------------------------------------


def to_rich(t: ReportTable) -> Table:
    """A rich table: in each cell ours, and below it the paper's number and the difference, and
    ns-2.35's where the experiment gives it; without the paper's numbers, ours alone (the
    spread below the value)."""
    rt = Table(title=t.title, title_justify="left", show_lines=True)
    for d in t.row_dims:
        rt.add_column(d, style="bold")
    ncols = len(t.col_headers[0]) if t.col_headers else 0
    for j in range(ncols):
        rt.add_column("\n".join(level[j] for level in t.col_headers), justify="right")
    for labels, line in zip(t.row_labels, t.cells, strict=True):
        texts = []
        for c in line:
            if isinstance(c, NotMeasured):
                texts.append(f"[dim]{c.TEXT}[/dim]")
                continue
            if c is None:
                texts.append("[dim]no data[/dim]")
                continue
            if not t.with_paper:
                main, spread = c.text_parts()
                texts.append(f"{main}\n[dim]{spread}[/dim]" if spread else main)
                continue
            sub = f"paper {c.text_paper()}" + (f"  {c.text_diff()}" if c.paper else "")
            if c.ns2 is not None:
                sub += f"\n{NS2} {c.text_ns2()}  {c.text_ns2_diff()}"
            texts.append(f"{c.text_ours()}\n[dim]{sub}[/dim]")
        rt.add_row(*labels, *texts)
    return rt


def ranking_rich(tables: Tables, show: int = 6) -> Table:
    """Pairs kept per metric, and the first ``show`` pairs not kept of each."""
    rt = Table(title="Ranking of the schemes (pairs kept / compared)", title_justify="left")
    rt.add_column("metric", style="bold")
    rt.add_column("kept", justify="right")
    rt.add_column("not kept")
    not_given = tables.not_given()
    for m, k, n, u in tables.ranking_summary():
        bad = [
            f"paper {_paper_order(p)}, ours {_order(p, p.ours, p.our_values)}"
            + (f" ({_where(p)})" if _where(p) else "")
            for p in tables.pairs
            if p.metric == m and p.kept is False
        ]
        if len(bad) > show:
            bad = [*bad[:show], f"... and {len(bad) - show} more (all in the report)"]
        extra = f" ({u} without data)" if u else ""
        if not_given.get(m):
            extra += f" ({not_given[m]} {NOT_GIVEN})"
        rt.add_row(m, f"{k}/{n}{extra}", "\n".join(bad) or "-")
    return rt


def _order(p: Pair, rel: str, values: tuple[str, str]) -> str:
    """E.g. "RED > ARED (90.0 vs 80.0)"."""
    return f"{p.a} {rel} {p.b} ({values[0]} vs {values[1]})"


def _paper_order(p: Pair) -> str:
    """The paper's side of a pair: its order, or why it gives none."""
    if p.given:
        return _order(p, p.paper, p.paper_values)
    return (
        f"no order: {p.a} {p.paper_values[0]}, {p.b} {p.paper_values[1]} "
        "(overlapping, one a band for several cells)"
    )


def ns2_entries(tables: Tables) -> list[tuple[Cell, Paper]]:
    """The ns-2.35 figures shown in the tables, one cell each (in the order of the cells)."""
    seen: set[int] = set()
    out = []
    for c in tables.cells.values():
        if c.ns2 is not None and id(c.ns2) not in seen:
            seen.add(id(c.ns2))
            out.append((c, c.ns2))
    return out


def ns2_sources(tables: Tables) -> list[tuple[str, str]]:
    """The ns-2.35 figures shown, grouped by their note: (the figures as text, the note). A
    figure reads "ARED, phase 1: d 100 ms, utilisation 97.90"."""
    groups: dict[str, list[str]] = {}
    for c, ref in ns2_entries(tables):
        text = f"{ref_where(ref)}, {c.metric.name} {fmt_paper(ref, c.metric.digits)}"
        groups.setdefault(ref.note, []).append(text)
    return [("; ".join(texts), note) for note, texts in groups.items()]


def ref_where(ref: Paper) -> str:
    """The cell an entry selects, as text: "ARED, phase 1: d 100 ms, flows = 30"."""
    parts = [ref.scheme, f"phase {ref.phase}" if ref.phase != ALL else ""]
    parts += [f"{k} = {v}" for k, v in ref.factors.items()]
    return ", ".join(x for x in parts if x)


def _where(p: Pair) -> str:
    return ", ".join(x for x in (f"phase {p.phase}" if p.phase != ALL else "", p.factors) if x)


def to_markdown(tables: Tables) -> str:
    """Every table and the ranking check as markdown (GitHub tables; ``<br>`` in cells); no
    ranking check for an experiment without the paper's numbers."""
    lines: list[str] = []
    for t in tables.tables:
        lines += [f"### {t.title}", ""]
        ncols = len(t.col_headers[0]) if t.col_headers else 0
        head = [*t.row_dims] + [
            "<br>".join(level[j] for level in t.col_headers) for j in range(ncols)
        ]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(t.row_dims) + "---:|" * ncols)
        for labels, line in zip(t.row_labels, t.cells, strict=True):
            texts = []
            for c in line:
                if isinstance(c, NotMeasured):
                    texts.append(c.TEXT)
                    continue
                if c is None:
                    texts.append("no data")
                    continue
                if not t.with_paper:
                    main, spread = c.text_parts()
                    texts.append(f"**{main}**" + (f" {spread}" if spread else ""))
                    continue
                text = f"**{c.text_ours()}**<br>paper {c.text_paper()}"
                if c.paper is not None:
                    text += f", {c.text_diff()}"
                if c.ns2 is not None:
                    text += f"<br>{NS2} {c.text_ns2()}, {c.text_ns2_diff()}"
                texts.append(text)
            lines.append("| " + " | ".join([*labels, *texts]) + " |")
        lines.append("")
    sources = ns2_sources(tables)
    if sources:
        lines += [f"### {NS2}'s figures", ""]
        lines += [f"- {figures}{'. ' + note if note else ''}" for figures, note in sources]
        lines.append("")
    if not tables.with_paper:
        return "\n".join(lines)
    lines += ["### Ranking of the schemes", ""]
    if not tables.pairs:
        lines += ["No pair of schemes with both numbers in the paper.", ""]
    else:
        lines += ["| metric | where | pair | paper | ours | kept |", "|---|---|---|---|---|---|"]
        for p in tables.pairs:
            kept = {"kept": "yes", "not kept": "**no**", "no data": "?"}.get(p.verdict, p.verdict)
            lines.append(
                f"| {p.metric} | {_where(p) or 'all'} | {p.a} vs {p.b} "
                f"| {_paper_order(p)} | {_order(p, p.ours, p.our_values)} "
                f"| {kept} |"
            )
        k, n = tables.kept
        lines += ["", f"Kept: {k} of {n} pairs."]
        ng = sum(tables.not_given().values())
        if ng:
            lines[-1] += (
                f" {ng} pairs {NOT_GIVEN} (overlapping ranges, one a band the paper gives for"
                " several cells), left out."
            )
        lines.append("")
    return "\n".join(lines)


def _e(s: str) -> str:
    return html.escape(s, quote=True)


def to_html(t: ReportTable) -> str:
    """A table as HTML (header levels with colspans; ours, the paper's and Δ in each cell; ours
    alone, its spread below it, without the paper's numbers)."""
    out = [f'<table class="paper"><caption>{_e(t.title)}</caption><thead>']
    nrd = len(t.row_dims)
    for li, level in enumerate(t.col_headers):
        out.append("<tr>")
        if li == 0:
            for d in t.row_dims:
                out.append(f'<th rowspan="{len(t.col_headers)}">{_e(d)}</th>')
        j = 0
        while j < len(level):
            # Merge equal neighbours that also share every higher level.
            k = j + 1
            while (
                k < len(level)
                and level[k] == level[j]
                and all(t.col_headers[u][k] == t.col_headers[u][j] for u in range(li))
                and li < len(t.col_headers) - 1
            ):
                k += 1
            out.append(f'<th colspan="{k - j}">{_e(level[j])}</th>')
            j = k
        out.append("</tr>")
    if not t.col_headers:
        out.append("<tr>" + "".join(f"<th>{_e(d)}</th>" for d in t.row_dims) + "</tr>")
    out.append("</thead><tbody>")
    for labels, line in zip(t.row_labels, t.cells, strict=True):
        out.append("<tr>" + "".join(f"<th>{_e(x)}</th>" for x in labels[:nrd]))
        for c in line:
            if isinstance(c, NotMeasured):
                out.append(f'<td class="nodata">{c.TEXT}</td>')
                continue
            if c is None:
                out.append('<td class="nodata">no data</td>')
                continue
            nan = (
                f' <span class="nan">({c.ours.n}/{c.ours.n + c.ours.n_nan} seeds)</span>'
                if c.ours.n_nan
                else ""
            )
            title = f"seeds: {', '.join(fmt_value(v, c.metric.digits) for v in c.values)}"
            if not t.with_paper:
                main, spread = c.text_parts()
                out.append(
                    f'<td class="cell" title="{_e(title)}"><span class="ours">{_e(main)}</span>'
                    + nan
                    + (f'<br><span class="spread">{_e(spread)}</span>' if spread else "")
                    + "</td>"
                )
                continue
            cls = "cell" if c.paper is not None else "cell nopaper"
            ns2 = ""
            if c.ns2 is not None:
                title += f"\n{NS2}: {c.ns2.note}" if c.ns2.note else ""
                ns2 = (
                    f'<br><span class="ns2">{NS2} {_e(c.text_ns2())}</span>'
                    f' <span class="diff">{_e(c.text_ns2_diff())}</span>'
                )
            out.append(
                f'<td class="{cls}" title="{_e(title)}"><span class="ours">{_e(c.text_ours())}'
                f"</span>{nan}<br>"
                f'<span class="paper">paper {_e(c.text_paper())}</span>'
                + (f' <span class="diff">{_e(c.text_diff())}</span>' if c.paper else "")
                + ns2
                + "</td>"
            )
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


#: Width the report's page gives a table (its body is 1200 px wide), px.
PAGE_WIDTH_PX = 1150
# What a character takes in the page's font (14 px; the widest common sans, DejaVu Sans, has
# digits of 0.64 em), px: plain, bold (the value of ours), small (0.88 em: paper, spread).
_CH, _CH_BOLD, _CH_SMALL = 9.0, 9.8, 8.0
#: A cell's padding and border, px.
_PAD = 17.0


def _words(text: str) -> float:
    """The width of the longest word (a header wraps between words), px, bold."""
    return max((len(w) for w in text.split()), default=0) * _CH_BOLD + _PAD


def _cell_px(t: ReportTable, c: Cell | NotMeasured | None) -> float:
    """The width of a cell on one line per line (table cells do not wrap), px."""
    if isinstance(c, NotMeasured):
        return len(c.TEXT) * _CH + _PAD
    if c is None:
        return 7 * _CH + _PAD
    nan = len(f" ({c.ours.n}/{c.ours.n + c.ours.n_nan} seeds)") * _CH_SMALL if c.ours.n_nan else 0
    if not t.with_paper:
        main, spread = c.text_parts()
        return max(len(main) * _CH_BOLD + nan, len(spread) * _CH_SMALL) + _PAD
    lines = [len(c.text_ours()) * _CH_BOLD + nan]
    lines.append(len(f"paper {c.text_paper()} {c.text_diff()}") * _CH_SMALL)
    if c.ns2 is not None:
        lines.append(len(f"{NS2} {c.text_ns2()} {c.text_ns2_diff()}") * _CH_SMALL)
    return max(lines) + _PAD


def column_widths(t: ReportTable) -> tuple[float, list[float]]:
    """An estimate of the narrowest the table's columns can be drawn: (the row labels'
    columns together, each data column), px."""
    labels = sum(
        max([_words(d)] + [_words(lab[i]) for lab in t.row_labels])
        for i, d in enumerate(t.row_dims)
    )
    ncols = len(t.col_headers[0]) if t.col_headers else 0
    cols = []
    for j in range(ncols):
        head = _words(t.col_headers[-1][j])
        cols.append(max([head] + [_cell_px(t, line[j]) for line in t.cells]))
    return labels, cols


def fit_width(t: ReportTable, width_px: float = PAGE_WIDTH_PX) -> list[ReportTable]:
    """The table as it fits the page: whole when it does, else cut into parts between the
    groups of its outermost column level (a metric's columns stay together while they fit), each
    part repeating the row labels and titled "part i of n"."""
    labels, cols = column_widths(t)
    if labels + sum(cols) <= width_px or len(cols) < 2:
        return [t]
    room = max(width_px - labels, 1.0)
    groups: list[list[int]] = []
    for j in range(len(cols)):
        if groups and t.col_headers[0][j] == t.col_headers[0][groups[-1][-1]]:
            groups[-1].append(j)
        else:
            groups.append([j])
    parts: list[list[int]] = [[]]
    for g in groups:
        if parts[-1] and sum(cols[j] for j in parts[-1] + g) > room:
            parts.append([])
        if sum(cols[j] for j in g) <= room or not g:
            parts[-1] += g
            continue
        for j in g:  # one group wider than the page: its columns as they fit
            if parts[-1] and sum(cols[k] for k in parts[-1]) + cols[j] > room:
                parts.append([])
            parts[-1].append(j)
    parts = [p for p in parts if p]
    if len(parts) == 1:
        return [t]
    return [
        ReportTable(
            name=t.name,
            slice=t.slice,
            col_headers=[[level[j] for j in p] for level in t.col_headers],
            row_labels=t.row_labels,
            row_dims=t.row_dims,
            cells=[[line[j] for j in p] for line in t.cells],
            with_paper=t.with_paper,
            part=f"{i + 1} of {len(parts)}",
        )
        for i, p in enumerate(parts)
    ]


def ranking_html(tables: Tables) -> str:
    if not tables.pairs:
        return "<p>No pair of schemes with both numbers in the paper: nothing to rank.</p>"
    out = ['<table class="ranking"><thead><tr><th>metric</th><th>where</th><th>pair</th>'
           "<th>paper</th><th>ours</th><th>kept</th></tr></thead><tbody>"]  # fmt: skip
    for p in tables.pairs:
        cls = {"kept": "kept", "not kept": "notkept", "no data": "nodata"}.get(
            p.verdict, "notgiven"
        )
        out.append(
            f"<tr><td>{_e(p.metric)}</td><td>{_e(_where(p) or 'all')}</td>"
            f"<td>{_e(p.a)} vs {_e(p.b)}</td><td>{_e(_paper_order(p))}</td>"
            f'<td>{_e(_order(p, p.ours, p.our_values))}</td><td class="{cls}">{p.verdict}</td>'
            "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)
