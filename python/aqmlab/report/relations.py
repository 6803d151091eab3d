"""An experiment's ``[[relation]]`` entries: claims about the schemes, checked on the results.

A relation says how a metric of some schemes compares with a reference, written from the
source's expectations ("an AQM keeps the queue delay below DropTail's", RFC 7928 section 2.7),
and the report says for each scheme and setting whether our results keep it. A relation that
does not hold is shown as "not kept", never left out.

    [[relation]]
    claim = "an AQM keeps the mean queue delay below DropTail's"
    source = "RFC 7928 section 2.7"
    metric = "delay"
    schemes = ["RED", "PIE"]        # default: every scheme but ``than``
    op = "<"                        # "<", "<=", ">", ">=", "within"
    than = "DropTail"               # the reference: a scheme's value in the same cell ...
    value = 10.0                    # ... or a number (display units); exactly one of the two
    ratio = 1.0                     # the reference is multiplied by it (">= 0.95 x DropTail's")
    tolerance = 0.05                # "within": |ours / reference - 1| <= tolerance
    phase = "all"
    factors = { flows = 30 }        # fixes factor values; a factor left out: each value

Each (scheme, factor setting) is one check on the seeds' means (the table's cell value):
kept, not kept, or no data (a NaN on either side).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aqmlab.report.data import ALL, Experiment, selects
from aqmlab.report.tables import Cell, fmt_value

__all__ = ["OPS", "Check", "Relation", "check_relations", "parse_relations"]

#: The comparisons a relation may state.
OPS = ("<", "<=", ">", ">=", "within")


@dataclass(frozen=True)
class Relation:
    claim: str
    source: str
    metric: str
    schemes: tuple[str, ...]
    op: str
    than: str | None
    value: float | None
    ratio: float
    tolerance: float
    phase: str
    factors: dict[str, Any]

    def reference_text(self) -> str:
        base = self.than if self.than is not None else fmt_value(self.value or 0.0, None)
        if self.ratio != 1.0:
            base = f"{self.ratio:g} x {base}"
        if self.op == "within":
            return f"within {100 * self.tolerance:g} % of {base}"
        return f"{self.op} {base}"


@dataclass(frozen=True)
class Check:
    relation: int
    scheme: str
    setting: str
    ours: float
    reference: float
    kept: bool | None  # None: no data

    @property
    def verdict(self) -> str:
        return "no data" if self.kept is None else ("kept" if self.kept else "not kept")


def parse_relations(exp: Experiment) -> list[Relation]:
    """The ``[[relation]]`` entries of experiment.json (validated when the sweep began)."""
    out = []
    raw = exp.raw.get("relation") or []
    for r in raw if isinstance(raw, list) else []:
        than = r.get("than")
        schemes = r.get("schemes") or [s for s in exp.schemes if s != than]
        out.append(
            Relation(
                claim=str(r.get("claim", "")),
                source=str(r.get("source", "")),
                metric=str(r["metric"]),
                schemes=tuple(str(s) for s in schemes),
                op=str(r.get("op", "<")),
                than=None if than is None else str(than),
                value=None if r.get("value") is None else float(r["value"]),
                ratio=float(r.get("ratio", 1.0)),
                tolerance=float(r.get("tolerance", 0.05)),
                phase=str(r.get("phase", ALL)),
                factors=dict(r.get("factors") or {}),
            )
        )
    return out


def holds(op: str, ours: float, ref: float, tolerance: float) -> bool:
    """Whether ``ours op ref`` (``within``: |ours / ref - 1| <= tolerance; for a reference of 0,
    ours = 0)."""
    if op == "<":
        return ours < ref
    if op == "<=":
        return ours <= ref
    if op == ">":
        return ours > ref
    if op == ">=":
        return ours >= ref
    if ref == 0:
        return ours == 0
    return abs(ours / ref - 1) <= tolerance


def _setting(exp: Experiment, fkey: tuple[int | None, ...]) -> str:
    return ", ".join(
        f"{f.name} = {f.label(i)}" for f, i in zip(exp.factors, fkey, strict=True) if i is not None
    )


def check_relations(
    exp: Experiment,
    cells: Mapping[tuple[str, tuple[int | None, ...], str, str], Cell],
    relations: Sequence[Relation] | None = None,
) -> list[Check]:
    """Every relation checked for each of its schemes in each factor setting it selects."""
    rels = parse_relations(exp) if relations is None else relations
    fkeys = sorted({k[1] for k in cells}, key=lambda k: tuple(-1 if i is None else i for i in k))
    out: list[Check] = []
    for ri, r in enumerate(rels):
        for fkey in fkeys:
            if not selects(exp.factors, fkey, {k: [v] for k, v in r.factors.items()}):
                continue
            ref = math.nan
            if r.than is not None:
                c = cells.get((r.than, fkey, r.phase, r.metric))
                if c is not None and c.ours.ok:
                    ref = c.ours.mean * r.ratio
            elif r.value is not None:
                ref = r.value * r.ratio
            for s in r.schemes:
                c = cells.get((s, fkey, r.phase, r.metric))
                if c is None:
                    continue
                ours = c.ours.mean if c.ours.ok else math.nan
                kept = None
                if not (math.isnan(ours) or math.isnan(ref)):
                    kept = holds(r.op, ours, ref, r.tolerance)
                out.append(Check(ri, s, _setting(exp, fkey), ours, ref, kept))
    return out


def summary(checks: Sequence[Check]) -> tuple[int, int, int]:
    """(kept, checked, without data)."""
    k = sum(1 for c in checks if c.kept)
    n = sum(1 for c in checks if c.kept is not None)
    return k, n, sum(1 for c in checks if c.kept is None)


def _group(checks: Sequence[Check]) -> dict[int, list[Check]]:
    by: dict[int, list[Check]] = {}
    for c in checks:
        by.setdefault(c.relation, []).append(c)
    return by


def to_markdown(exp: Experiment, rels: Sequence[Relation], checks: Sequence[Check]) -> str:
    if not rels:
        return ""
    k, n, u = summary(checks)
    lines = [
        "## Relations",
        "",
        f"Kept {k} of {n} checks" + (f" ({u} without data)" if u else "") + ".",
        "",
    ]
    by = _group(checks)
    for i, r in enumerate(rels):
        d = exp.metrics[r.metric].digits if r.metric in exp.metrics else None
        cs = by.get(i, [])
        kk = sum(1 for c in cs if c.kept)
        nn = sum(1 for c in cs if c.kept is not None)
        lines.append(f"### {i + 1}. {r.claim} ({kk}/{nn} kept)")
        lines.append("")
        lines.append(f"{r.source}. `{r.metric}` {r.reference_text()}, phase {r.phase}.")
        lines.append("")
        lines.append("| scheme | setting | ours | reference | verdict |")
        lines.append("|---|---|---|---|---|")
        for c in cs:
            lines.append(
                f"| {c.scheme} | {c.setting or '-'} | {fmt_value(c.ours, d)} | "
                f"{fmt_value(c.reference, d)} | {c.verdict} |"
            )
        lines.append("")
    return "\n".join(lines)


def _e(s: Any) -> str:
    import html

    return html.escape(str(s))


def to_html(exp: Experiment, rels: Sequence[Relation], checks: Sequence[Check]) -> str:
    k, n, u = summary(checks)
    parts = [
        "<p>Each relation is a claim of the source about the schemes, checked on the seeds' "
        "means of our results for every scheme and setting it names: kept, or not kept (shown, "
        f"not removed). Kept {k} of {n} checks" + (f" ({u} without data)" if u else "") + ".</p>"
    ]
    by = _group(checks)
    for i, r in enumerate(rels):
        d = exp.metrics[r.metric].digits if r.metric in exp.metrics else None
        cs = by.get(i, [])
        kk = sum(1 for c in cs if c.kept)
        nn = sum(1 for c in cs if c.kept is not None)
        parts.append(
            f'<h3>{i + 1}. {_e(r.claim)} <span class="sub">({kk}/{nn} kept)</span></h3>'
            f'<p class="sub">{_e(r.source)}: <code>{_e(r.metric)}</code> '
            f"{_e(r.reference_text())}, phase {_e(r.phase)}</p>"
        )
        parts.append(
            '<div class="scroll"><table><thead><tr><th>scheme</th><th>setting</th><th>ours</th>'
            "<th>reference</th><th>verdict</th></tr></thead><tbody>"
        )
        for c in cs:
            cls = "kept" if c.kept else ("nodata" if c.kept is None else "notkept")
            parts.append(
                f"<tr><td>{_e(c.scheme)}</td><td>{_e(c.setting or '-')}</td>"
                f"<td>{_e(fmt_value(c.ours, d))}</td><td>{_e(fmt_value(c.reference, d))}</td>"
                f'<td class="{cls}">{_e(c.verdict)}</td></tr>'
            )
        parts.append("</tbody></table></div>")
    return "\n".join(parts)
