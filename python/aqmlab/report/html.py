"""The experiment's report folder and its self-contained HTML page, and an index page.

``DIR/report/`` holds ``index.html`` (everything inline: CSS, tables, figures as base64 PNG; no
script, no external URL, so it opens offline and from a mail attachment), ``<figure>.png`` and
``.svg``, ``tables.md`` and ``summary.json`` (the ranking check's counts, read by the index).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab._atomic import write_text
from aqmlab.papers import cite_source
from aqmlab.report import relations as R
from aqmlab.report import tables as T
from aqmlab.report.data import Experiment, Output, ReportError, full_form_command, load_output
from aqmlab.report.figures import FigureError, draw
from aqmlab.report.metrics import evaluate_all

__all__ = ["Built", "build", "build_index", "build_report"]

REPORT = "report"
SUMMARY = "summary.json"

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;
max-width:1200px;margin:0 auto;padding:0 1.2em 3em}
h1{font-size:1.6em;margin:.8em 0 .1em}h2{font-size:1.25em;border-bottom:1px solid #ddd;
padding-bottom:.2em;margin-top:1.8em}h3{font-size:1.05em}
.sub{color:#555;margin:.2em 0 1em}.badge{display:inline-block;padding:0 .5em;border-radius:3px;
font-size:.85em;background:#eef;color:#335;margin-left:.4em}.badge.quick{background:#fec;color:#630}
pre,code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f5f5f5}
pre{padding:.6em .8em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
code{padding:0 .2em}table{border-collapse:collapse;margin:.6em 0 1.2em}
th,td{border:1px solid #d6d6d6;padding:.25em .55em;vertical-align:top}
thead th{background:#f3f3f3}caption{text-align:left;font-weight:600;padding:.3em 0}
table.paper td{text-align:right;white-space:nowrap}
table.paper .ours{font-weight:600}table.paper .paper{color:#555;font-size:.88em}
table.paper .diff{color:#555;font-size:.88em}.nopaper .paper{color:#aaa}
table.paper .spread{color:#555;font-size:.88em}
table.paper .ns2{color:#2a5d8f;font-size:.88em}td.notgiven{color:#777}
td.nodata{color:#999;text-align:center}.nan{color:#b60;font-size:.85em}
td.kept{color:#175;font-weight:600}td.partly{color:#a60;font-weight:600}td.notkept{color:#b11;font-weight:600}
figure{margin:1em 0 2em}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#444;font-size:.9em}.err{color:#b11}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}dl.meta dt{color:#555}
dl.meta dd{margin:0}.notes{background:#fafaf4;border-left:3px solid #cc9;padding:.3em 1em}
details{margin:.5em 0}.scroll{overflow-x:auto}summary{cursor:pointer;color:#444}
"""


def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _inline(s: str) -> str:
    """Inline markdown: `code`, **bold**, *emphasis* (text escaped first)."""
    s = _e(s)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", s)


def markdown(text: str) -> str:
    """A small markdown subset for the notes: paragraphs, "- " lists, headings, inline code,
    bold and emphasis. Everything else is shown as written (escaped)."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        if all(re.match(r"\s*[-*] ", ln) or ln.startswith("  ") for ln in lines):
            items: list[str] = []
            for ln in lines:
                if re.match(r"\s*[-*] ", ln):
                    items.append(re.sub(r"^\s*[-*] ", "", ln))
                elif items:
                    items[-1] += " " + ln.strip()
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
        elif lines[0].startswith("#"):
            level = min(len(lines[0]) - len(lines[0].lstrip("#")) + 2, 6)
            out.append(f"<h{level}>{_inline(lines[0].lstrip('#').strip())}</h{level}>")
            if lines[1:]:
                out.append(f"<p>{_inline(' '.join(lines[1:]))}</p>")
        else:
            out.append(f"<p>{_inline(' '.join(ln.strip() for ln in lines))}</p>")
    return "\n".join(out)


def _stem(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "figure"


@dataclass
class Built:
    """What :func:`build` made: the output read, its tables, figures and their errors."""

    out: Output
    tables: T.Tables
    figures: list[tuple[str, list[Path], str]]  # (name, files, error)
    index: Path
    relations: list[R.Relation] = field(default_factory=list)
    checks: list[R.Check] = field(default_factory=list)


def _command(cmd: Any) -> str:
    if isinstance(cmd, list):
        import shlex

        return shlex.join(str(c) for c in cmd)
    return str(cmd or "")


def _meta(exp: Experiment, out: Output) -> str:
    n_points = len({r.id for r in out.rows})
    n_failed = len(out.failures)
    rows = [
        ("name", f"<code>{_e(exp.name)}</code>"),
        ("source", _e(cite_source(exp.source))),
        ("scenario", f"<code>{_e(exp.scenario)}</code>"),
        ("command", f"<pre>{_e(_command(exp.command))}</pre>"),
        ("created", _e(exp.created)),
        ("versions", _e(", ".join(f"{k} {v}" for k, v in exp.versions.items()))),
        ("seeds", _e(", ".join(str(s) for s in exp.seeds))),
        ("points", f"{n_points - n_failed} ok, {n_failed} failed"),
    ]
    sets = exp.raw.get("experiment", exp.raw).get("set") if isinstance(exp.raw, dict) else None
    if sets:
        rows.append(("set (every point)", "<br>".join(f"<code>{_e(s)}</code>" for s in sets)))
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    schemes = "".join(
        f"<tr><th>{_e(s)}</th><td>"
        + ("<br>".join(f"<code>{_e(x)}</code>" for x in exp.scheme_sets.get(s, [])) or "-")
        + "</td></tr>"
        for s in exp.schemes
    )
    factors = "".join(
        f"<tr><th>{_e(f.name)}</th><td>{_e(', '.join(f.labels))}</td></tr>" for f in exp.factors
    )
    metrics = "".join(
        f"<tr><th>{_e(m.name)}</th><td>{_e(m.unit)}</td><td><code>"
        + _e(m.summary if m.summary else f"{m.derived} {json.dumps(m.args) if m.args else ''}")
        + f"</code></td><td>{_e(m.stat)}</td><td>{_e(m.better)}</td></tr>"
        for m in exp.metrics.values()
    )
    html_ = f'<dl class="meta">{body}</dl>'
    html_ += f"<h3>Schemes</h3><table><tbody>{schemes}</tbody></table>"
    if factors:
        html_ += f"<h3>Factors</h3><table><tbody>{factors}</tbody></table>"
    if metrics:
        html_ += (
            "<h3>Metrics</h3><table><thead><tr><th>metric</th><th>unit</th><th>from</th>"
            f"<th>seeds</th><th>better</th></tr></thead><tbody>{metrics}</tbody></table>"
        )
    return html_


def _figure_html(name: str, title: str, ref: str, files: list[Path], err: str) -> str:
    cap = _e(title or name) + (f" (paper: {_e(ref)})" if ref else "")
    if err:
        return (
            f'<figure><figcaption>{cap}</figcaption><p class="err">not drawn: {_e(err)}</p>'
            "</figure>"
        )
    png = next(p for p in files if p.suffix == ".png")
    data = base64.b64encode(png.read_bytes()).decode("ascii")
    links = " ".join(f'<a href="{_e(p.name)}">{p.suffix[1:].upper()}</a>' for p in files)
    return (
        f'<figure id="fig-{_e(name)}"><img src="data:image/png;base64,{data}" alt="{cap}">'
        f"<figcaption>{cap}. Files: {links}</figcaption></figure>"
    )


def _ranking_html(tables: T.Tables) -> str:
    k, n = tables.kept
    lines = [
        f"<p><strong>{k} of {n}</strong> pairs of schemes keep the paper's order.</p>"
        if n
        else "<p>The paper gives no pair of schemes to rank.</p>"
    ]
    not_given = tables.not_given()
    if not_given:
        lines.append(
            f"<p>{sum(not_given.values())} pairs are {T.NOT_GIVEN}: their two ranges overlap and "
            "one is a band the paper gives for several cells (read off a figure or its text for "
            "every point), which says where each cell lies, not how two compare. They are left "
            "out of the counts.</p>"
        )
    summ = tables.ranking_summary()
    if summ:
        lines.append(
            "<table><thead><tr><th>metric</th><th>kept / compared</th></tr></thead><tbody>"
        )
        for m, kk, nn, u in summ:
            extra = f" ({u} without data)" if u else ""
            if not_given.get(m):
                extra += f" ({not_given[m]} {T.NOT_GIVEN})"
            lines.append(f"<tr><th>{_e(m)}</th><td>{kk} / {nn}{extra}</td></tr>")
        lines.append("</tbody></table>")
    lines.append(f"<details><summary>Every pair</summary>{T.ranking_html(tables)}</details>")
    return "".join(lines)


def _quick_html(exp: Experiment) -> str:
    """For a quick form: why its numbers differ from the paper's (or from the full form's,
    for an experiment without the paper's numbers), and the full form's command."""
    if not exp.quick:
        return ""
    differ = "figures are not meant to match the paper's" if exp.papers else "runs are shorter"
    return (
        '<p class="notes">This is the <b>quick form</b>, shortened (see the notes below), so its '
        f"{differ}. The full form: <code>{_e(full_form_command(exp))}</code></p>"
    )


def page(b: Built) -> str:
    exp = b.out.experiment
    title = exp.title or exp.name
    badge = '<span class="badge quick">quick</span>' if exp.quick else ""
    ns2 = T.ns2_entries(b.tables)
    source = cite_source(exp.source)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(exp.name)}: {_e(title)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{_e(title)}{badge}</h1>",
        f'<p class="sub">{_e(exp.name)}' + (f" · {_e(source)}" if source else "") + "</p>",
        _quick_html(exp),
    ]
    if b.tables.with_paper:
        parts += ["<h2>Ranking of the schemes</h2>", _ranking_html(b.tables)]
    if b.relations:
        parts += ["<h2>Relations</h2>", R.to_html(exp, b.relations, b.checks)]
    parts += ["<h2>Tables</h2>"]
    if not b.tables.with_paper:
        parts.append(
            "<p>In each cell: the mean over the seeds and below it ± the half-width of its 95 % "
            "confidence interval (Student's t; none for one seed, or where it rounds to nothing "
            "at the value's precision), or the min-max range. Hover a cell for every seed's "
            "value.</p>"
        )
    else:
        parts.append(
            "<p>In each cell: ours (mean ± 95 % confidence interval over the seeds, or min-max "
            "range), below it the paper's number and the difference ours - paper (Δ, and in % "
            "of the paper's)"
            + (
                f", and where the ns-2 cross-check ran the same set-up, {T.NS2}'s figure and ours "
                f"- {T.NS2}'s"
                if ns2
                else ""
            )
            + ". Hover a cell for every seed's value.</p>"
        )
    parts += [
        f'<div class="scroll">{T.to_html(part)}</div>'
        for t in b.tables.tables
        for part in T.fit_width(t)
    ] or ["<p>No table.</p>"]
    if ns2:
        parts.append(f"<h3>{T.NS2}'s figures</h3><ul>")
        for figures, note in T.ns2_sources(b.tables):
            parts.append(f"<li>{_e(figures)}" + (f". {_inline(note)}" if note else "") + "</li>")
        parts.append("</ul>")
    parts.append("<h2>Figures</h2>")
    figs = {f.name: f for f in exp.figures}
    for name, files, err in b.figures:
        spec = figs[name]
        parts.append(_figure_html(name, spec.title, spec.paper_ref, files, err))
    if not b.figures:
        parts.append("<p>No figure.</p>")
    parts.append("<h2>Choices made where the paper is silent</h2>")
    parts.append(
        f'<div class="notes">{markdown(exp.notes)}</div>' if exp.notes.strip() else "<p>None.</p>"
    )
    parts.append("<h2>How it was run</h2>")
    parts.append(_meta(exp, b.out))
    parts.append(f"<h2>Failures ({len(b.out.failures)})</h2>")
    if b.out.failures:
        parts.append("<table><thead><tr><th>point</th><th>scheme</th><th>factors</th>"
                     "<th>seed</th><th>error</th></tr></thead><tbody>")  # fmt: skip
        for f in b.out.failures:
            fac = ", ".join(f"{k} = {v}" for k, v in (f.get("factors") or {}).items())
            parts.append(
                f"<tr><td><code>{_e(f.get('id', ''))}</code></td><td>{_e(f.get('scheme', ''))}"
                f"</td><td>{_e(fac)}</td><td>{_e(f.get('seed', ''))}</td>"
                f"<td><pre>{_e(f.get('error', ''))}</pre></td></tr>"
            )
        parts.append("</tbody></table>")
    else:
        parts.append("<p>None: every point completed.</p>")
    if b.out.warnings:
        parts.append(
            f"<details><summary>{len(b.out.warnings)} values could not be computed (NaN)"
            "</summary><ul>"
            + "".join(f"<li>{_e(w)}</li>" for w in b.out.warnings)
            + "</ul></details>"
        )
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    parts.append(f'<p class="sub">Report built {_e(now)} from {_e(b.out.dir.resolve())}.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def build(out_dir: Path) -> Built:
    """Read ``out_dir``, compute every metric, table and figure, and write ``out_dir/report/``."""
    out = load_output(out_dir)
    values = evaluate_all(out)
    tables = T.build_tables(out, values)
    folder = out.dir / REPORT
    tmp = out.dir / f"{REPORT}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        figures: list[tuple[str, list[Path], str]] = []
        for f in out.experiment.figures:
            try:
                files = draw(out, f.__class__(_stem(f.name), f.title, f.kind, f.raw, f.paper_ref),
                             tmp, tables.cells)  # fmt: skip
                figures.append((f.name, files, ""))
            except FigureError as e:
                figures.append((f.name, [], str(e)))
                out.warn(f"figure {f.name}: {e}")
            except (OSError, ValueError, KeyError, TypeError) as e:
                figures.append((f.name, [], f"{type(e).__name__}: {e}"))
                out.warn(f"figure {f.name}: {type(e).__name__}: {e}")
        rels = R.parse_relations(out.experiment)
        checks = R.check_relations(out.experiment, tables.cells, rels)
        md = [f"# {out.experiment.title or out.experiment.name}", "", T.to_markdown(tables)]
        if rels:
            md += ["", R.to_markdown(out.experiment, rels, checks)]
        (tmp / "tables.md").write_text("\n".join(md), encoding="utf-8")
        built = Built(out, tables, figures, folder / "index.html", rels, checks)
        (tmp / "index.html").write_text(page(built), encoding="utf-8")
        k, n = tables.kept
        summary = {
            "name": out.experiment.name,
            "title": out.experiment.title,
            "source": cite_source(out.experiment.source),
            "quick": out.experiment.quick,
            "with_paper": tables.with_paper,
            "points": len({r.id for r in out.rows}),
            "failed": len(out.failures),
            "kept": k,
            "compared": n,
            "not_given": sum(tables.not_given().values()),
            "metrics": [
                {
                    "metric": m,
                    "kept": kk,
                    "compared": nn,
                    "no_data": u,
                    "not_given": tables.not_given().get(m, 0),
                }
                for m, kk, nn, u in tables.ranking_summary()
            ],
            "relations": {
                "kept": R.summary(checks)[0],
                "checked": R.summary(checks)[1],
                "no_data": R.summary(checks)[2],
            },
            "figures_failed": [name for name, _, err in figures if err],
            "warnings": len(out.warnings),
        }
        (tmp / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        # Only a complete report replaces the old one.
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    built.figures = [(n, [folder / p.name for p in files], e) for n, files, e in figures]
    return built


def build_report(out_dir: Path) -> Path:
    return build(out_dir).index


def build_index(dirs: list[Path], out_html: Path) -> Path:
    """One page over several experiment folders: per experiment its points, failures, and the
    pairs of schemes that keep the paper's order, with a link to its report (built if it has
    none yet)."""
    rows = []
    out_html = Path(out_html)
    base = out_html.parent.resolve()
    for d in dirs:
        rep = d / REPORT / "index.html"
        sj = d / REPORT / SUMMARY
        if not rep.is_file() or not sj.is_file():
            build_report(d)
        try:
            s = json.loads(sj.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ReportError(f"{sj}: cannot read: {e}") from e
        href = os.path.relpath(rep.resolve(), base)
        rows.append((s, href))
    total_k = sum(s["kept"] for s, _ in rows)
    total_n = sum(s["compared"] for s, _ in rows)
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>aqmlab experiments</title><style>{CSS}</style></head><body>",
        "<h1>aqmlab experiments</h1>",
        f'<p class="sub">{len(rows)} experiments; {total_k} of {total_n} pairs of schemes keep '
        "the paper's order.</p>",
        "<table><thead><tr><th>experiment</th><th>source</th><th>points</th><th>failed</th>"
        "<th>ranking kept</th><th>per metric</th><th>verdict</th></tr></thead><tbody>",
    ]
    for s, href in rows:
        k, n = s["kept"], s["compared"]
        if not s.get("with_paper", True):
            verdict, cls = "no paper values", "nodata"
        elif n == 0:
            verdict, cls = "no pair", "nodata"
        elif k == n:
            verdict, cls = "kept", "kept"
        elif k == 0:
            verdict, cls = "not kept", "notkept"
        else:
            verdict, cls = f"partly kept ({100 * k / n:.0f} %)", "partly"
        per = "<br>".join(
            f"{_e(m['metric'])}: {m['kept']}/{m['compared']}" for m in s.get("metrics", [])
        )
        quick = '<span class="badge quick">quick</span>' if s.get("quick") else ""
        ng = f" ({s['not_given']} {T.NOT_GIVEN})" if s.get("not_given") else ""
        body.append(
            f'<tr><td><a href="{_e(href)}">{_e(s["name"])}</a>{quick}<br>'
            f'<span class="sub">{_e(s.get("title", ""))}</span></td>'
            f"<td>{_e(cite_source(str(s.get('source', ''))))}</td>"
            f"<td>{s['points']}</td><td>{s['failed']}</td><td>{k} / {n}{ng}</td>"
            f"<td>{per or '-'}</td>"
            f'<td class="{cls}">{verdict}</td></tr>'
        )
    body += ["</tbody></table>", "</body></html>"]
    out_html.parent.mkdir(parents=True, exist_ok=True)
    return write_text(out_html, "\n".join(body) + "\n")
