"""The user's input, read and checked: the floor every command's room stands on.

:class:`UserError` is a mistake in the user's input (a missing file, bad TOML, a bad value or
``--set``), reported by the command line in one line ``error: ...`` with exit status 2. The
functions here load a scenario file with its overrides and validate it, turning every input
error into a :class:`UserError` that names the file (and the line of the key, when the file
holds it). ``aqmlab.cli`` and each command's own module (experiments, design, testbed) use them;
none of them imports ``aqmlab.cli``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from aqmlab import scenario
from aqmlab._core import ScenarioError

__all__ = [
    "MESSAGE_MAX",
    "QUOTE_MAX",
    "SET_ARGUMENT",
    "Parser",
    "UserError",
    "apply_changes",
    "bound_quotes",
    "check_scenario",
    "display_name",
    "load_file",
    "print_error",
    "scenario_where",
]


#: The ``--set KEY=VALUE`` option of every command that takes a scenario.
SET_ARGUMENT: dict[str, Any] = {
    "action": "append",
    "default": [],
    "metavar": "KEY=VALUE",
    "help": "override a scenario key, e.g. aqm.max_p=0.05 or traffic[0].flows=50 (repeatable)",
}


class UserError(Exception):
    """A mistake in the user's input: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are :class:`UserError`, and which reads a word that
    starts with a minus and a digit (``-1ms``, ``-.5``, ``-3``) as a value, so that
    ``--rtt -1ms`` meets the option's own check, which names the value."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse reads only plain numbers ("-1", "-0.5") as values and any other word after
        # a minus as an option ("--rtt -1ms": "expected one argument"); no option of aqmlab's
        # starts with a digit.
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:
        raise UserError(f"{self.prog}: {message}")


#: Longest quoted value an error message shows whole, and longest message.
QUOTE_MAX = 60
MESSAGE_MAX = 2000

# Every quoted value, short or long, in turn from the left: a quote opens one
# only where no letter or digit stands before it (not the apostrophe of
# "Linux's", nor the closing quote of a value already read).
_QUOTED = re.compile(r"(?<!\w)(\"|')((?:(?!\1).)*)\1", re.S)


def bound_quotes(msg: str) -> str:
    """``msg`` with every quoted value longer than :data:`QUOTE_MAX` shown as
    its head and tail with its length, and the whole at most
    :data:`MESSAGE_MAX` characters: a 5000-character ``--set`` value is not
    echoed back whole."""

    def cut(m: re.Match[str]) -> str:
        q, v = m.group(1), m.group(2)
        if len(v) <= QUOTE_MAX:
            return m.group(0)
        return f"{q}{v[:40]}...{v[-12:]}{q} ({len(v)} characters)"

    out = _QUOTED.sub(cut, msg)
    if len(out) > MESSAGE_MAX:
        out = out[: MESSAGE_MAX - 30] + f"... ({len(out)} characters)"
    return out


def print_error(msg: str) -> None:
    print(f"error: {bound_quotes(msg)}", file=sys.stderr, flush=True)


def display_name(file: str) -> str:
    return str(Path(file))


def apply_changes(
    doc: dict[str, Any],
    name: str,
    sets: Sequence[str],
    truncate: bool,
    unset: Sequence[str],
    notes: list[str] | None,
) -> None:
    """Remove the ``unset`` keys of ``doc`` (read from ``name``) and apply the
    overrides, each AQM kind switch noted in ``notes``; then, with
    ``truncate``, drop what lies past the end, noting each change on stderr.
    Raises ``ScenarioError``."""
    for note in scenario.apply_overrides_noted(doc, sets, unset):
        if notes is not None:
            notes.append(f"note: {name}: {note}")
    if truncate:
        for note in scenario.truncate(doc):
            print(f"note: {name}: {note}", file=sys.stderr)


def load_file(
    file: str,
    sets: Sequence[str] = (),
    truncate: bool = False,
    unset: Sequence[str] = (),
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """Load a scenario file, remove the ``unset`` keys and apply the
    overrides (each AQM kind switch is noted in ``notes``, for the caller to
    print once the scenario validates; then, with ``truncate``, drop what
    lies past the end, noting each change on stderr); input errors become
    UserError."""
    name = display_name(file)
    try:
        doc = scenario.load(Path(file))
        apply_changes(doc, name, sets, truncate, unset, notes)
    except ScenarioError as e:
        text = str(e)
        raise UserError(text if text.startswith(f"{name}:") else f"{name}: {text}") from None
    except UnicodeDecodeError:
        raise UserError(f"{name}: not a UTF-8 text file") from None
    except OSError as e:
        raise UserError(f"{name}: cannot read: {e.strerror or e}") from None
    return doc


def scenario_where(file: str, e: ScenarioError, changed: Iterable[str] = ()) -> str:
    """``FILE:LINE:COL`` of the key an error names, when the user's file holds it (not
    when ``--set``/``--unset`` changed it, or a default supplied it); else ``FILE``."""
    name = display_name(file)
    field = str(e.args[0]) if e.args else ""
    if not field or Path(file).is_dir():
        return name
    for key in changed:
        k = key.split("=", 1)[0].strip()
        if field == k or field.startswith((k + ".", k + "[")) or k.startswith(field):
            return name
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return name
    from aqmlab._tomlpath import locate

    at = locate(text, field)
    return f"{name}:{at[0]}:{at[1]}" if at else name


def check_scenario(file: str, doc: dict[str, Any], changed: Iterable[str] = ()) -> dict[str, Any]:
    """The resolved scenario of ``doc`` (read from ``file``); a bad value is a
    :class:`UserError` at the key's place in the file (see :func:`scenario_where`)."""
    try:
        return scenario.validate(doc)
    except ScenarioError as e:
        raise UserError(f"{scenario_where(file, e, changed)}: {e}") from None
