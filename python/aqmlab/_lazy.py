"""Names a package imports on first use (PEP 562), so that importing the
package (and the command line, which registers every subcommand) stays
light: the heavy modules (SciPy, numpy, pyarrow) load when a name is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, where: Mapping[str, str], into: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``name`` comes
    from the module ``where[name]`` and is kept in the package's ``into``
    (its ``globals()``) once loaded."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        into[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*into.get("__all__", ()), *where})

    return getattr_, dir_
