"""The presets: experiment files shipped in ``aqmlab/experiments/presets/``.

Every ``*.toml`` file there (in subfolders too) that has an
``[experiment]`` table is a preset, named by its ``experiment.name``; the
other TOML files there are the presets' scenario files.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["PRESETS_DIR", "Preset", "find_preset", "match_presets", "presets"]

PRESETS_DIR = Path(__file__).resolve().parent / "presets"


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    source: str
    path: Path
    problem: str | None = None


def presets(root: Path = PRESETS_DIR) -> list[Preset]:
    """Every preset under ``root``, sorted by name with its numbers read as numbers
    (``rfc7928-9.2`` before ``rfc7928-10``). A file that does not parse is listed with its
    problem (and its file stem as the name)."""
    out: list[Preset] = []
    if not root.is_dir():
        return out
    for f in sorted(root.rglob("*.toml")):
        try:
            doc = tomllib.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            out.append(Preset(f.stem, "", "", f, f"cannot read: {e}"))
            continue
        head = doc.get("experiment")
        if not isinstance(head, dict):
            continue  # a scenario file
        name = head.get("name")
        out.append(
            Preset(
                name if isinstance(name, str) and name else f.stem,
                str(head.get("title", "")),
                str(head.get("source", "")),
                f,
            )
        )
    out.sort(key=lambda p: (_natural(p.name), str(p.path)))
    return out


def _natural(name: str) -> tuple[tuple[int, str], ...]:
    """A sort key that orders the runs of digits in ``name`` by value: each part of the name
    is (0, text) or (1, its digits zero-padded to 12), so parts always compare like with
    like."""
    return tuple(
        (1, part.zfill(12)) if part.isdigit() else (0, part)
        for part in re.split(r"(\d+)", name)
        if part
    )


def find_preset(name: str, root: Path = PRESETS_DIR) -> Preset | None:
    for p in presets(root):
        if p.name == name:
            return p
    return None


def match_presets(pattern: str, root: Path = PRESETS_DIR) -> list[Preset]:
    """The presets whose name matches the shell pattern (``thesis-5.*``)."""
    import fnmatch

    return [p for p in presets(root) if fnmatch.fnmatchcase(p.name, pattern)]
