"""The example scenarios that ship inside the package (``aqmlab examples``).

In the source tree ``python/aqmlab/scenarios`` is a link to the top-level
``scenarios/`` folder; a wheel holds a copy of it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from aqmlab._atomic import tmp_name

__all__ = ["copy_examples", "examples_dir", "list_examples"]


def examples_dir() -> Path:
    """The folder of the example scenarios inside the installed package."""
    return Path(__file__).resolve().parent / "scenarios"


def _describe(path: Path) -> str:
    """The first comment line of a scenario file (its one-line description)."""
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line.startswith("#"):
                text = line.lstrip("#").strip()
                return text if len(text) <= 90 else text[:87] + "..."
            if line:
                break
    except OSError:
        pass
    return ""


def _files() -> list[Path]:
    d = examples_dir()
    return sorted(p for p in d.rglob("*.toml") if p.is_file())


def list_examples() -> list[tuple[str, str]]:
    """(path relative to the examples folder, description) of every example."""
    d = examples_dir()
    return [(p.relative_to(d).as_posix(), _describe(p)) for p in _files()]


def copy_examples(out: str | os.PathLike[str]) -> list[Path]:
    """Copy every example into ``out`` (keeping sub-folders); never
    overwrites a file that exists. Returns the files written.

    The files are copied into a hidden folder beside ``out`` first and
    moved into place only once all are copied, so a full disk leaves no
    short or missing example behind (:mod:`aqmlab._atomic`)."""
    d = examples_dir()
    dest = Path(out)
    todo = [p for p in _files() if not (dest / p.relative_to(d)).exists()]
    stage = tmp_name(dest)
    written = []
    try:
        for p in todo:
            t = stage / p.relative_to(d)
            t.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, t)
        for p in todo:
            target = dest / p.relative_to(d)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / p.relative_to(d), target)
            written.append(target)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return written
