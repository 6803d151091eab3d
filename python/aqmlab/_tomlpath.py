"""Field paths inside TOML text, for errors that stop the parser itself.

``tomllib`` reports a syntax error (a lone surrogate escape, a bad number,
a duplicate key) by line and column only, and a value nested a thousand
levels deep makes it recurse until Python's limit. This module scans the
text the way a TOML lexer does (strings, comments, table headers, inline
tables and arrays) and answers two questions without recursion:

- :func:`path_at`: the key path of the value at a character offset
  (``schedule[2].at``), so that the error names the field;
- :func:`too_deep`: the first place where tables and arrays nest deeper
  than a limit, and its key path.

The scan is deliberately forgiving: on text it does not understand it
returns the path it has so far (possibly empty); it never raises.
"""

from __future__ import annotations

import re

__all__ = ["Located", "locate", "offset_of", "path_at", "too_deep"]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


class Located:
    """Where the scan stopped: the key path there and the line (1-based).
    (A plain class: ``dataclasses`` costs the command 8 ms of imports.)"""

    __slots__ = ("line", "steps")

    def __init__(self, steps: list[str | int] | None = None, line: int = 1) -> None:
        self.steps: list[str | int] = [] if steps is None else steps
        self.line = line

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Located):
            return NotImplemented
        return (self.steps, self.line) == (other.steps, other.line)

    def __repr__(self) -> str:
        return f"Located(steps={self.steps!r}, line={self.line})"


def offset_of(text: str, message: str) -> int | None:
    """The character offset of tomllib's ``(at line L, column C)`` or ``(at
    end of document)``, if any."""
    if "(at end of document)" in message:
        return len(text)
    m = _POS.search(message)
    if m is None:
        return None
    line, col = int(m.group(1)), int(m.group(2))
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return min(pos + col - 1, len(text))


def path_at(text: str, offset: int) -> Located:
    """The key path of the value being read at ``offset``."""
    return _Scanner(text).run(until=offset)


_KEY = r"(?:[A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*')"
_ASSIGN = re.compile(rf"(?m)(?:^|[{{,])[ \t]*({_KEY}(?:[ \t]*\.[ \t]*{_KEY})*)[ \t]*=")
_HEADER = re.compile(r"(?m)^[ \t]*\[\[?[^\]\n]*\]\]?")
# Beyond this size a file is not searched (each candidate is a scan from the start).
_LOCATE_MAX = 200_000


def format_steps(steps: list[str | int]) -> str:
    """``["traffic", 1, "flows"]`` -> ``traffic[1].flows`` (the engine's field paths)."""
    out = ""
    for s in steps:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else s)
    return out


def locate(text: str, path: str) -> tuple[int, int] | None:
    """Line and column (1-based) in ``text`` of the key that holds ``path``
    (``traffic[1].flows``), or of the deepest key or table header above it
    when the path ends inside a value; None when nothing in the text leads
    there (the field was set by ``--set`` or a default)."""
    if len(text) > _LOCATE_MAX or not path:
        return None
    best: tuple[int, int] | None = None
    best_len = -1
    for pattern, group in ((_ASSIGN, 1), (_HEADER, 0)):
        for m in pattern.finditer(text):
            found = format_steps(path_at(text, m.end()).steps)
            if not found or len(found) <= best_len:
                continue
            if path == found or path.startswith(found + ".") or path.startswith(found + "["):
                start = m.start(group)
                line = text.count("\n", 0, start) + 1
                col = start - (text.rfind("\n", 0, start) + 1) + 1
                best, best_len = (line, col), len(found)
    return best


def too_deep(text: str, limit: int) -> Located | None:
    """Where tables/arrays first nest more than ``limit`` levels, or None."""
    s = _Scanner(text)
    loc = s.run(max_depth=limit)
    return loc if s.exceeded else None


def _split_key(raw: str) -> list[str | int]:
    """``a."b.c".d`` -> ["a", "b.c", "d"] (quotes removed, no escapes)."""
    out: list[str | int] = []
    cur, quote = "", ""
    for c in raw:
        if quote:
            if c == quote:
                quote = ""
            else:
                cur += c
        elif c in "\"'":
            quote = c
        elif c == ".":
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    out.append(cur.strip())
    return [k for k in out if k != ""]


class _Frame:
    """An open inline table (``key`` is its current key) or array (``index``)."""

    __slots__ = ("expect_key", "index", "is_array", "key")

    def __init__(self, is_array: bool) -> None:
        self.is_array = is_array
        self.index = 0
        self.key: list[str | int] = []
        self.expect_key = not is_array


class _Scanner:
    def __init__(self, text: str) -> None:
        self.t = text
        self.header: list[str | int] = []
        self.top_key: list[str | int] = []
        self.arrays: dict[tuple[str | int, ...], int] = {}
        self.frames: list[_Frame] = []
        self.line = 1
        self.exceeded = False

    def steps(self) -> list[str | int]:
        out = [*self.header, *self.top_key]
        for f in self.frames:
            if f.is_array:
                out.append(f.index)
            else:
                out.extend(f.key)
        return out

    def located(self) -> Located:
        return Located(self.steps(), self.line)

    def run(self, until: int | None = None, max_depth: int | None = None) -> Located:
        t, n = self.t, len(self.t)
        stop = n if until is None else min(until, n)
        i = 0
        line_start = True
        while i < stop:
            c = t[i]
            if c == "\n":
                self.line += 1
                if not self.frames:
                    self.top_key = []
                    line_start = True
                i += 1
                continue
            if c in " \t\r":
                i += 1
                continue
            if c == "#":
                nl = t.find("\n", i)
                i = n if nl < 0 else nl
                continue
            if line_start and not self.frames:
                line_start = False
                if c == "[":
                    i = self._header(i)
                    continue
                i = self._key(i, stop, None)
                continue
            top = self.frames[-1] if self.frames else None
            if top is not None and not top.is_array and top.expect_key and c not in "}":
                i = self._key(i, stop, top)
                continue
            if c in "\"'":
                i = self._string(i, stop)
                continue
            if c in "[{":
                self.frames.append(_Frame(c == "["))
                if max_depth is not None and len(self.frames) > max_depth:
                    self.exceeded = True
                    return self.located()
                i += 1
                continue
            if c in "]}":
                if self.frames:
                    self.frames.pop()
                i += 1
                continue
            if c == "," and top is not None:
                if top.is_array:
                    top.index += 1
                else:
                    top.key = []
                    top.expect_key = True
                i += 1
                continue
            i += 1
        return self.located()

    def _header(self, i: int) -> int:
        """A ``[table]`` or ``[[array]]`` header line."""
        t = self.t
        nl = t.find("\n", i)
        end = len(t) if nl < 0 else nl
        raw = t[i:end]
        double = raw.startswith("[[")
        close = raw.find("]]" if double else "]")
        body = raw[2 if double else 1 : close if close > 0 else len(raw)]
        keys = _split_key(body)
        if double:
            k = tuple(keys)
            self.arrays[k] = self.arrays.get(k, -1) + 1
            # Nested arrays of tables index the innermost one.
            self.header = [*keys, self.arrays[k]]
        else:
            self.header = list(keys)
        self.top_key = []
        return end

    def _key(self, i: int, stop: int, frame: _Frame | None) -> int:
        """A key up to its ``=``; quoted parts may hold ``=`` and ``.``."""
        t, n = self.t, len(self.t)
        j, quote = i, ""
        while j < n and j < stop:
            c = t[j]
            if quote:
                if c == quote:
                    quote = ""
                elif c == "\n":
                    break
            elif c in "\"'":
                quote = c
            elif c in "=\n}":
                break
            j += 1
        keys = _split_key(t[i:j])
        if frame is None:
            self.top_key = keys
        else:
            frame.key = keys
            frame.expect_key = False
        if j < n and t[j] == "=":
            j += 1
        return j

    def _string(self, i: int, stop: int) -> int:
        t, n = self.t, len(self.t)
        q = t[i]
        if t.startswith(q * 3, i):
            j = i + 3
            while j < n:
                if q == '"' and t[j] == "\\":
                    j += 2
                    continue
                if t.startswith(q * 3, j):
                    self.line += t.count("\n", i, j)
                    return j + 3
                j += 1
            self.line += t.count("\n", i, n)
            return n
        j = i + 1
        while j < n and t[j] != "\n":
            if q == '"' and t[j] == "\\":
                j += 2
                continue
            if t[j] == q:
                return j + 1
            j += 1
        return j
