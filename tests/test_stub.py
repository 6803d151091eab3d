"""The type stub of the compiled module matches the module."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from aqmlab import _core

STUB = Path(_core.__file__).with_name("_core.pyi")
#: Names only the stub has (typing helpers).
STUB_ONLY = {"RawRun"}


def stub_names() -> dict[str, ast.AST]:
    tree = ast.parse(STUB.read_text())
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def test_stub_lists_every_public_name() -> None:
    public = {n for n in dir(_core) if not n.startswith("_")}
    assert set(stub_names()) - STUB_ONLY == public


def test_stub_signatures_match() -> None:
    for name, node in stub_names().items():
        if not isinstance(node, ast.FunctionDef):
            continue
        sig = inspect.signature(getattr(_core, name))
        stub_params = [a.arg for a in node.args.args]
        assert stub_params == list(sig.parameters), name
        n_defaults = len(node.args.defaults)
        runtime_defaults = [
            p.name for p in sig.parameters.values() if p.default is not inspect.Parameter.empty
        ]
        assert runtime_defaults == stub_params[len(stub_params) - n_defaults :], name
