"""The example notebook runs: each code cell of ``docs/examples/first-run.ipynb`` in order, in
one namespace, as Jupyter would (no Jupyter needed: the notebook's JSON is read with the standard
library, matplotlib draws with Agg), and what a cell's last expression shows is checked."""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

NOTEBOOK = ROOT / "docs" / "examples" / "first-run.ipynb"


def shown(value: Any) -> str | bytes | None:
    """What Jupyter shows for a cell's value: its HTML, else its PNG or SVG (None: its repr)."""
    for name in ("_repr_html_", "_repr_png_", "_repr_svg_"):
        method = getattr(value, name, None)
        if method is not None:
            out = method()
            if out is not None:
                return out  # type: ignore[no-any-return]
    return None


def run_notebook(path: Path) -> list[Any]:
    """Run every code cell of the notebook ``path`` in one namespace; the value of each cell's
    last expression (None for a cell that ends in a statement), as Jupyter would show it."""
    import matplotlib

    matplotlib.use("Agg")
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    ns: dict[str, Any] = {"__name__": "__main__"}
    values: list[Any] = []
    for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
        src = "".join(cell["source"])
        assert not cell.get("outputs"), f"cell {i}: the notebook is stored without outputs"
        tree = ast.parse(src, filename=f"{path.name}[{i}]")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, f"{path.name}[{i}]", "exec"), ns)
        values.append(eval(compile(last, f"{path.name}[{i}]", "eval"), ns) if last else None)
    return values


def test_the_example_notebook_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import aqmlab
    from aqmlab.plot import Picture

    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    values = run_notebook(NOTEBOOK)
    took = time.perf_counter() - start
    # The run shows itself: its table and its queue.
    runs = [v for v in values if isinstance(v, aqmlab.RunResult)]
    assert len(runs) == 1
    page = shown(runs[0])
    assert isinstance(page, str)
    assert '<table class="aqmlab-links">' in page and "<img " in page
    # The five-row preview of the flows table.
    rows = next(v for v in values if isinstance(v, list))
    assert len(rows) == 5 and set(rows[0]) == {"flow", "base_rtt_s", "goodput_bps"}
    # Four pictures, each a PNG the notebook shows inline.
    pictures = [v for v in values if isinstance(v, Picture)]
    names = [p.path.name for p in pictures]
    assert names == ["queue.png", "flow-throughput.png", "queues.png", "goodput-rtt.png"]
    for p in pictures:
        png = shown(p)
        assert isinstance(png, bytes) and png[:4] == b"\x89PNG"
        assert (tmp_path / "first-run-out" / p.path.name).is_file()
    # Tiny: a few seconds on a loaded machine.
    assert took < 30, took
