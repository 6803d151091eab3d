"""``aqmlab compare``: the summaries of several result folders side by side, like with like.

One column per run, or per scenario where the inputs hold several seeds of one scenario (a
sweep folder, or result folders whose scenarios differ only in the seed; copies of one run, of
the same seed, stay apart): that column gives
each figure's mean over the seeds ± the half-width of its 95 % confidence interval (Student's
t, t(0.975, n - 1) s / sqrt(n), from scipy), and ``seed`` says which seeds it holds.
``per_run`` (``--per-run``) keeps one column per run.

The table opens with the set-up: what differs between the columns that matters to their
figures, each a row (highlighted where it differs):

- ``engine``: the simulator, or the testbed (real Linux TCP through the router);
- ``TCP``: the simulator's congestion control and its switches (``CUBIC, SACK, RACK, PRR,
  delayed ACKs, IW 10``; a traffic group's own variant too), or the testbed's kernel
  congestion control (``cubic (Linux 6.1)``): the same scenario file run in both is not the
  same TCP;
- ``AQM``: ``aqm.kind`` (its parameters belong to the kind, so they are not listed when the
  kinds differ);
- ``measured``: the measurement interval, metrics.start to the end of the run;
- ``seed``;
- the other scenario keys whose values differ (at most :data:`MAX_KEYS` rows, the rest
  counted; ``--format csv`` lists every one).

Then the figures (:func:`aqmlab.report.terminal.shown_rows`, without ``events`` and ``wall time``,
which say what a run cost, not what it measured: they close the table, dimmed, never
highlighted). A figure is highlighted (bold yellow on a terminal, **bold** in Markdown,
``differs`` = 1 in CSV) when two columns' values differ as shown and, for columns of several
seeds, their confidence intervals do not overlap. A cell is not compared when it cannot be:

- *absent*: the run has no such figure (the testbed measures no delay percentiles and counts
  no timeouts);
- *not comparable*: the runs count it over different spans. The testbed counts
  retransmissions over the whole run (the kernel's ``tcpi_total_retrans``), the simulator
  over the measurement interval; and a count (arrivals, drops, marks, retransmissions) over
  measurement intervals of different lengths says nothing about the network. Such a row
  shows the values, marked, and is never highlighted.

``aqmlab compare --responses A B`` compares two runs of one web workload response by response
instead (:func:`aqmlab.web.compare_responses`): :class:`ResponsesTable`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aqmlab.report.terminal import VARIANTS, shown_rows
from aqmlab.results import ResultsError, is_run_dir, load_run

if TYPE_CHECKING:
    from rich.table import Table

    from aqmlab.api import RunResult
    from aqmlab.web import ResponseComparison

__all__ = [
    "FORMATS",
    "Comparison",
    "ResponsesTable",
    "compare",
    "differing_keys",
    "load_pairs",
    "student_half_width",
]

#: Output formats of ``aqmlab compare``.
FORMATS = ("table", "markdown", "csv")

#: Most differing scenario keys listed as rows of their own (the rest are counted).
MAX_KEYS = 6

#: Rows that say what a run cost, not what it measured: shown last, never highlighted.
COST_FIELDS = ("events", "wall_time_s")
#: Rows the set-up rows replace (duration and measurement start: ``measured``; the seed).
SETUP_FIELDS = ("duration_s", "measure_start_s", "seed")
#: Figures that are counts over the measurement interval: not comparable between intervals of
#: different lengths.
COUNT_FIELDS = (
    "bottleneck.arrivals",
    "bottleneck.drops_early",
    "bottleneck.drops_forced",
    "bottleneck.drops_overflow",
    "bottleneck.marks",
    "flows.retransmits",
    "flows.timeouts",
    "flows.sack_recoveries",
    "flows.rack_detections",
    "flows.tlp_probes",
    "flows.timeouts_undone",
    "flows.dsacks",
    "flows.dsack_undos",
    "flows.reorderings",
)
#: Figures the testbed counts over the whole run (the simulator: the measurement interval).
TESTBED_WHOLE_RUN = ("flows.retransmits",)

#: ``tcp.*`` switches the TCP row names (their keys are then not listed apart).
TCP_SWITCHES = (
    ("sack", "SACK"),
    ("rack", "RACK"),
    ("prr", "PRR"),
    ("ecn", "ECN"),
    ("delayed_ack", "delayed ACKs"),
    ("pacing", "pacing"),
)
TCP_KEYS = ("variant", "initial_cwnd", *(k for k, _ in TCP_SWITCHES))

#: Marks of the cells that are not compared.
ABSENT = "absent"
WHOLE_RUN = "whole run"


def student_half_width(values: Sequence[float]) -> float:
    """The half-width of the 95 % confidence interval of the mean of ``values``:
    t(0.975, n - 1) s / sqrt(n) (Student's t from scipy, s the sample standard deviation);
    NaN for fewer than two values."""
    n = len(values)
    if n < 2:
        return math.nan
    from scipy.stats import t as student_t  # on first use: it takes a while to load

    mean = sum(values) / n
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return float(student_t.ppf(0.975, n - 1)) * s / math.sqrt(n)


@dataclass
class _Run:
    label: str
    summary: Mapping[str, Any]
    scenario: Mapping[str, Any]

    @property
    def testbed(self) -> Mapping[str, Any] | None:
        tb = self.summary.get("testbed")
        return tb if isinstance(tb, Mapping) else None

    @property
    def engine(self) -> str:
        return "testbed" if self.testbed is not None else "simulator"

    @property
    def tcp(self) -> str:
        tb = self.testbed
        if tb is not None:
            cc = str(tb.get("congestion_control", "?"))
            kernel = str(tb.get("kernel", "")).split("-")[0]
            return f"{cc} (Linux{' ' + kernel if kernel else ''})"
        return tcp_text(self.scenario)

    @property
    def window(self) -> tuple[float, float]:
        start = float(self.summary.get("measure_start_s") or 0.0)
        end = float(self.summary.get("duration_s") or math.nan)
        return start, end


def tcp_text(scenario: Mapping[str, Any]) -> str:
    """The simulator's TCP in a few words: the variant and its switches that are on
    (``CUBIC, SACK, RACK, PRR, delayed ACKs, IW 10``), with the variants of traffic groups
    that have their own (``NewReno; group 1 CUBIC``)."""
    tcp = scenario.get("tcp") or {}
    v = str(tcp.get("variant", "newreno"))
    parts = [VARIANTS.get(v, v)]
    parts += [name for key, name in TCP_SWITCHES if tcp.get(key) is True]
    iw = tcp.get("initial_cwnd")
    if isinstance(iw, int) and iw != 1:
        parts.append(f"IW {iw}")
    text = ", ".join(parts)
    groups = [
        f"group {i} {VARIANTS.get(str(g['variant']), str(g['variant']))}"
        for i, g in enumerate(scenario.get("traffic") or [])
        if isinstance(g, Mapping) and g.get("variant") not in (None, v)
    ]
    return "; ".join([text, *groups])


def _flat(sc: Mapping[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    _flatten(sc, "", d)
    return d


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), default=str)


def _same_but_seed(r: _Run) -> str:
    """What runs of one scenario share: the scenario without its seed, the engine and TCP."""
    flat = {k: v for k, v in _flat(r.scenario).items() if k != "seed"}
    return _canon([flat, r.engine, r.tcp])


_SEED_TAIL = re.compile(r", seed \d+$")


@dataclass
class Column:
    """One column: a run, or several seeds of one scenario."""

    label: str
    runs: list[_Run]

    @property
    def first(self) -> _Run:
        return self.runs[0]

    @property
    def seeds(self) -> list[int]:
        return [int(r.summary.get("seed") or r.scenario.get("seed") or 0) for r in self.runs]

    def values(self, section: str | None, key: str) -> list[float] | None:
        """The figure of every run (None when a run lacks it)."""
        out = []
        for r in self.runs:
            v = _get(r.summary, section, key)
            if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
                return None
            out.append(float(v))
        return out


@dataclass
class Row:
    """One row of the comparison."""

    label: str
    field: str
    section: str  # "set-up", "figures" or "run"
    shown: list[str]
    raw: list[Any]
    differs: bool
    ci: list[float] = dataclasses.field(
        default_factory=list
    )  # half-widths (NaN: none), figures only
    note: str = ""  # why the row is not compared, "" when it is

    @property
    def compared(self) -> bool:
        return not self.note


def _seed_text(seeds: Sequence[int]) -> str:
    s = sorted(seeds)
    if len(s) == 1:
        return str(s[0])
    if s == list(range(s[0], s[-1] + 1)):
        return f"{s[0]}-{s[-1]} ({len(s)} seeds)"
    return f"{', '.join(map(str, s))} ({len(s)} seeds)"


def _window_text(w: tuple[float, float]) -> str:
    return f"{w[0]:g}-{w[1]:g} s"


def _group(runs: Sequence[_Run], per_run: bool) -> list[Column]:
    if per_run:
        return [Column(r.label, [r]) for r in runs]
    groups: dict[str, list[_Run]] = {}
    for r in runs:
        groups.setdefault(_same_but_seed(r), []).append(r)

    def seeds_apart(g: list[_Run]) -> bool:
        """Whether the runs are seeds of their scenario: copies of one run (the same seed)
        are not, and stay apart."""
        seeds = [Column("", [r]).seeds[0] for r in g]
        return len(set(seeds)) == len(seeds)

    if all(len(g) == 1 or not seeds_apart(g) for g in groups.values()):
        return [Column(r.label, [r]) for r in runs]
    cols = []
    for g in groups.values():
        if not seeds_apart(g):
            cols += [Column(r.label, [r]) for r in g]
            continue
        if len(g) == 1:
            cols.append(Column(g[0].label, g))
            continue
        stripped = {_SEED_TAIL.sub("", r.label) for r in g}
        label = stripped.pop() if len(stripped) == 1 else _joined([r.label for r in g])
        cols.append(Column(label, g))
    return cols


class Comparison:
    """Runs' summaries side by side, like with like (see the module documentation)."""

    def __init__(
        self,
        runs: Sequence[tuple[str, Mapping[str, Any], Mapping[str, Any]]],
        per_run: bool = False,
    ) -> None:
        """``runs``: (label, summary, resolved scenario) of each run; ``per_run``: one column
        per run even where runs are seeds of one scenario."""
        self.columns = _group([_Run(a, b, c) for a, b, c in runs], per_run)
        self.labels = [c.label for c in self.columns]
        firsts = [c.first for c in self.columns]
        self.keys = differing_keys([r.scenario for r in firsts])
        self.rows: list[Row] = []
        self._setup(firsts)
        self._figures()

    # ---- set-up -------------------------------------------------------------------------

    def _add_setup(self, label: str, fld: str, values: list[str]) -> None:
        self.rows.append(Row(label, fld, "set-up", values, list(values), len(set(values)) > 1))

    def _setup(self, firsts: list[_Run]) -> None:
        self._add_setup("engine", "engine", [r.engine for r in firsts])
        self._add_setup("TCP", "tcp", [r.tcp for r in firsts])
        kinds = [str((r.scenario.get("aqm") or {}).get("kind", "?")) for r in firsts]
        self._add_setup("AQM", "aqm.kind", kinds)
        self._add_setup("measured", "window", [_window_text(r.window) for r in firsts])
        self._add_setup("seed", "seed", [_seed_text(c.seeds) for c in self.columns])
        covered = {"seed", "duration", "metrics.start", "aqm.kind"}
        covered |= {f"tcp.{k}" for k in TCP_KEYS}
        # A table whose kind differs (aqm, reverse_aqm...): its parameters belong to the kind.
        by_kind = {k[: -len(".kind")] for k, _ in self.keys if k.endswith(".kind")}
        if len(set(kinds)) > 1:
            # The reverse path's queue follows the forward one's unless set apart.
            rev = dict(self.keys).get("reverse_aqm.kind")
            if rev is not None and [str(v) for v in rev] == kinds:
                covered.add("reverse_aqm.kind")
        self.other_keys = [
            (k, vals)
            for k, vals in self.keys
            if k not in covered
            and not any(k.startswith(f"{t}.") and k != f"{t}.kind" for t in by_kind)
            and not re.fullmatch(r"traffic\[\d+\]\.variant", k)
        ]
        shown = (
            self.other_keys if len(self.other_keys) <= MAX_KEYS else self.other_keys[: MAX_KEYS - 1]
        )
        for k, vals in shown:
            self._add_setup(k, f"scenario.{k}", [_short(v) for v in vals])
        self.rest_keys = self.other_keys[len(shown) :]
        if self.rest_keys:
            names = [k for k, _ in self.rest_keys]
            listed = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            n = len(self.columns)
            note = f"{listed} (--format csv lists them with their values)"
            self.rows.append(
                Row(f"+{len(names)} more keys", "scenario.*", "set-up", [""] * n, [""] * n, True,
                    note=note)
            )  # fmt: skip

    # ---- figures ------------------------------------------------------------------------

    def _figures(self) -> None:
        lengths = {round(c.first.window[1] - c.first.window[0], 9) for c in self.columns}
        engines = {c.first.engine for c in self.columns}
        cost = []
        summaries = [x.summary for c in self.columns for x in c.runs]
        for label, section, key, fmt in shown_rows(summaries):
            fld = key if section is None else f"{section}.{key}"
            if fld in SETUP_FIELDS:
                continue
            row = self._figure(label, fld, section, key, fmt)
            if fld in COST_FIELDS:
                row.section, row.differs = "run", False
                cost.append(row)
                continue
            if fld in TESTBED_WHOLE_RUN and "testbed" in engines:
                marks = []
                for c, text in zip(self.columns, row.shown, strict=True):
                    whole = c.first.engine == "testbed" and text != ABSENT
                    marks.append(f"{text} ({WHOLE_RUN})" if whole else text)
                row.shown = marks
                if len(engines) > 1:
                    row.note = (
                        "not comparable: the testbed counts it over the whole run, the "
                        "simulator over the measurement interval"
                    )
                    row.differs = False
            if fld in COUNT_FIELDS and len(lengths) > 1 and not row.note:
                row.note = "not comparable: counts over measurement intervals of different lengths"
                row.differs = False
            self.rows.append(row)
        self.rows += cost

    def _figure(
        self, label: str, fld: str, section: str | None, key: str, fmt: Callable[[Any], str]
    ) -> Row:
        shown: list[str] = []
        raw: list[float | None] = []
        ci: list[float] = []
        spans: list[tuple[float, float, str] | None] = []
        integral = fmt(1234.0) == "1,234"
        for c in self.columns:
            vals = c.values(section, key)
            if vals is None:
                shown.append(ABSENT)
                raw.append(None)
                ci.append(math.nan)
                spans.append(None)
                continue
            mean = sum(vals) / len(vals)
            half = student_half_width(vals)
            text = fmt(round(mean) if integral else mean)
            if not math.isnan(half):
                h = fmt(round(half) if integral else half)
                if re.search(r"[1-9]", h):  # a spread that rounds to nothing is not shown
                    text = f"{text} ± {h}"
            shown.append(text)
            raw.append(mean)
            ci.append(half)
            lo, hi = (mean, mean) if math.isnan(half) else (mean - half, mean + half)
            spans.append((lo, hi, fmt(round(mean) if integral else mean)))
        present = [x for x in spans if x is not None]
        differs = any(
            a[2] != b[2] and (a[1] < b[0] or b[1] < a[0])
            for i, a in enumerate(present)
            for b in present[i + 1 :]
        )
        return Row(label, fld, "figures", shown, raw, differs, ci)

    # ---- text ---------------------------------------------------------------------------

    @property
    def several_seeds(self) -> bool:
        return any(len(c.runs) > 1 for c in self.columns)

    def headline(self) -> str:
        """One line above the table: what differs between the columns that matters."""
        differ = [r.label for r in self.rows if r.section == "set-up" and r.differs]
        differ = [d for d in differ if d != "seed"] + (["seed"] if "seed" in differ else [])
        n = len(self.columns)
        if n == 1:
            head = "one column"
        elif not differ:
            head = "the columns are the same scenario, engine and TCP"
        elif differ == ["seed"]:
            head = "the columns differ in their seeds only"
        else:
            head = "the columns differ in: " + ", ".join(
                "other scenario keys" if d.startswith("+") else d for d in differ
            )
        if self.several_seeds:
            head += "; a column of several seeds gives the mean ± the 95 % confidence interval"
        return head

    def keys_text(self) -> str:
        """The headline (kept under its earlier name)."""
        return self.headline()

    def notes(self) -> list[str]:
        """Why rows are not compared, one line each."""
        out = [f"{r.label}: {r.note}" for r in self.rows if r.note]
        if any(ABSENT in r.shown for r in self.rows):
            out.append(f"{ABSENT}: the run has no such figure (not a difference)")
        return out

    def rich(self, title: str = "") -> Table:
        from rich.table import Table

        t = Table(title=title or None, title_justify="left")
        t.add_column("")
        for label in self.labels:
            t.add_column(label, justify="right")
        section = ""
        for r in self.rows:
            if r.section != section:
                if section:
                    t.add_section()
                section = r.section
                t.add_row(f"[dim]{section}[/dim]", *[""] * len(self.labels))
            label = r.label + (" [dim](not compared)[/dim]" if r.note and r.section != "set-up"
                               else "")  # fmt: skip
            if r.differs:
                t.add_row(label, *[f"[bold yellow]{c}[/]" for c in r.shown])
            else:
                t.add_row(f"[dim]{label}[/]", *[f"[dim]{c}[/]" for c in r.shown])
        return t

    def markdown(self) -> str:
        esc = [lab.replace("|", "\\|") for lab in self.labels]
        out = [self.headline() + ".", "", "| figure | " + " | ".join(esc) + " |"]
        out.append("|---|" + "---:|" * len(self.labels))
        for r in self.rows:
            cells = [f"**{c}**" if r.differs else c for c in r.shown]
            label = r.label + (" (not compared)" if r.note and r.section != "set-up" else "")
            out.append(f"| {label} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        notes = self.notes()
        if notes:
            out += [""] + [f"- {n}" for n in notes]
        return "\n".join(out) + "\n"

    def csv(self) -> str:
        """Full-precision values (a column of several seeds: their mean, and in ``LABEL ci95``
        the half-width of its 95 % interval); ``field`` is the summary key (``scenario.KEY``
        for a scenario key, ``scenario.*`` for none: every differing key is a row of its own
        here); ``comparable`` 0 for a row not compared."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        many = [i for i, c in enumerate(self.columns) if len(c.runs) > 1]
        w.writerow(
            ["figure", "field", *self.labels, *[f"{self.labels[i]} ci95" for i in many],
             "comparable", "differs"]
        )  # fmt: skip
        for r in self.rows:
            if r.field == "scenario.*":
                for k, vals in self.rest_keys:
                    texts = ["" if v is None else v if isinstance(v, str) else _canon(v)
                             for v in vals]  # fmt: skip
                    w.writerow([k, f"scenario.{k}", *texts, *[""] * len(many), 1, 1])
                continue
            raw = ["" if v is None else v for v in r.raw]
            cis = [("" if math.isnan(r.ci[i]) else r.ci[i]) if r.ci else "" for i in many]
            w.writerow([r.label, r.field, *raw, *cis, int(r.compared), int(r.differs)])
        return buf.getvalue()


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
    flat = [_flat(sc) for sc in scenarios]
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
    dirs: Sequence[str | os.PathLike[str]],
    labels: Sequence[str] | None = None,
    per_run: bool = False,
) -> Comparison:
    """Load the result folders ``dirs`` and compare them (ResultsError when
    one is not a result folder). ``labels`` names the columns (default: the
    folders' names; ``aqmlab compare`` gives a sweep's points their scheme and
    factors, :func:`aqmlab.folders.expand`). Runs that are seeds of one
    scenario make one column (mean ± 95 % interval) unless ``per_run``."""
    paths = [Path(d) for d in dirs]
    if labels is not None and len(labels) != len(paths):
        raise ValueError(f"{len(labels)} labels for {len(paths)} folders")
    runs = []
    for d, label in zip(paths, list(labels) if labels is not None else _labels(paths), strict=True):
        if not is_run_dir(d):
            raise ResultsError(f"{d}: not an aqmlab result folder (no manifest.json)")
        r = load_run(d)
        runs.append((label, r.summary, r.scenario))
    return Comparison(runs, per_run=per_run)


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
