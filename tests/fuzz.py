"""A seeded mutation fuzzer over the example scenarios.

Each case takes one example scenario (``scenarios/*.toml`` and
``scenarios/aqm/*.toml``), applies one to three seeded mutations, and checks
the contract of bad input: validation either succeeds or raises
``ScenarioError`` naming a field, never another exception. Cases are plain
data (``Case``), reproducible from ``(seed, index)`` alone, so a failure
report names the one case to replay: ``python tests/fuzz.py SEED INDEX``.

Mutations work on the parsed document (type swaps; huge, negative, NaN and
infinite numbers; deep nesting; unicode and lone surrogates; key deletion,
renaming and duplication; list/table swaps; bad units; schedule and phase
edits) or on the TOML text (line deletion and duplication, cut text, a stray
character), so that both the TOML front and the engine's decoder are hit.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import math
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted([*ROOT.glob("scenarios/*.toml"), *ROOT.glob("scenarios/aqm/*.toml")])

Doc = dict[str, Any]
Step = str | int


@dataclass
class Case:
    """One fuzz case: a mutated document, or mutated TOML text."""

    seed: int
    index: int
    source: Path
    mutations: list[str]
    doc: Doc | None = None
    text: str | None = None

    def name(self) -> str:
        return f"{self.seed}:{self.index} {self.source.name} [{'; '.join(self.mutations)}]"


_DOCS: dict[Path, tuple[str, Doc]] = {}


def corpus() -> dict[Path, tuple[str, Doc]]:
    """Text and parsed document of every example scenario (cached)."""
    if not _DOCS:
        from aqmlab import scenario

        for p in CORPUS:
            text = p.read_text()
            _DOCS[p] = (text, scenario.load(text))
    return _DOCS


# -- where to mutate ---------------------------------------------------------


def _paths(doc: Any, max_depth: int = 10) -> Iterator[tuple[Step, ...]]:
    """Every path of a table key or array element down to ``max_depth``
    (depth-first, without recursion: earlier mutations may nest deeply)."""
    stack: list[tuple[Any, tuple[Step, ...]]] = [(doc, ())]
    while stack:
        node, prefix = stack.pop()
        if len(prefix) >= max_depth:
            continue
        items = (
            list(node.items())
            if isinstance(node, dict)
            else list(enumerate(node))
            if isinstance(node, list)
            else []
        )
        for k, v in reversed(items):
            stack.append((v, (*prefix, k)))
            yield (*prefix, k)


def _get(doc: Any, path: tuple[Step, ...]) -> Any:
    for s in path:
        doc = doc[s]
    return doc


def _parent(doc: Any, path: tuple[Step, ...]) -> Any:
    return _get(doc, path[:-1])


def _fmt(path: tuple[Step, ...]) -> str:
    out = ""
    for s in path:
        out += f"[{s}]" if isinstance(s, int) else (f".{s}" if out else str(s))
    return out


# -- values ------------------------------------------------------------------

HUGE_NUMBERS: list[Any] = [
    2**63,
    2**64,
    -(2**63) - 1,
    10**400,
    -1,
    0,
    -0.0,
    1e308,
    -1e308,
    5e-324,
    math.nan,
    math.inf,
    -math.inf,
    0.5,
    1e15,
    4294967296,
    65536,
    -1.5,
]

STRINGS: list[str] = [
    "",
    " ",
    "\ud800",
    "a\udc80b",
    "\x00",
    "é",
    "🚀",
    "\u202e10ms",
    "x" * 10_000,
    "true",
    "1e400",
    "NaN",
    "null",
    "[1, 2]",
]

BAD_TIMES = [
    "1ns",
    "0s",
    "0ns",
    "-1s",
    "1e30s",
    "1e400s",
    "NaNs",
    "infms",
    "10",
    "10 min",
    "1.5",
    "s",
    "9999999999s",
    "1e-9ns",
    "1us",
    "0.000000001s",
]
BAD_RATES = [
    "1bps",
    "0bps",
    "-10Mbps",
    "10 Mbps",
    "10mbps",
    "1e400Gbps",
    "1000000Gbps",
    "1e16bps",
    "NaNMbps",
    "10",
    "0.4bps",
    "10Mbit/s",
]
BAD_SIZES = ["0B", "1B", "-1KB", "1e30MB", "1e400B", "10", "12KiB", "NaNB", "1GB"]


def _copy(v: Any) -> Any:
    try:
        return copy.deepcopy(v)
    except RecursionError:
        return v


def _deep(depth: int, leaf: Any, rng: random.Random) -> Any:
    v = leaf
    for _ in range(depth):
        v = {"a": v} if rng.random() < 0.5 else [v]
    return v


def _random_value(rng: random.Random, near: Any = None) -> Any:
    k = rng.randrange(10)
    if k == 0:
        return rng.choice(HUGE_NUMBERS)
    if k == 1:
        return rng.choice(STRINGS)
    if k == 2:
        return rng.choice(BAD_TIMES)
    if k == 3:
        return rng.choice(BAD_RATES)
    if k == 4:
        return rng.choice([True, False])
    if k == 5:
        return rng.choice([[], {}, [1, 2], {"x": 1}, [near], {"uniform": [near, near]}])
    if k == 6:
        return rng.choice([dt.date(2020, 1, 1), dt.time(1, 2, 3), dt.datetime(2020, 1, 1, 1)])
    if k == 7:
        return _deep(rng.choice([33, 40, 129, 200, 1000]), 1, rng)
    if k == 8:
        return rng.choice(BAD_SIZES)
    return rng.uniform(-1e6, 1e6) if rng.random() < 0.5 else rng.randrange(-100, 10**6)


# -- document mutations ------------------------------------------------------


def _m_swap_value(doc: Doc, rng: random.Random) -> str:
    paths = list(_paths(doc))
    p = rng.choice(paths)
    new = _random_value(rng, _get(doc, p))
    _parent(doc, p)[p[-1]] = new
    return f"set {_fmt(p)}={_short(new)}"


def _m_number(doc: Doc, rng: random.Random) -> str:
    paths = [
        p
        for p in _paths(doc)
        if isinstance(_get(doc, p), int | float) and not isinstance(_get(doc, p), bool)
    ]
    if not paths:
        return _m_swap_value(doc, rng)
    p = rng.choice(paths)
    new = rng.choice(HUGE_NUMBERS)
    _parent(doc, p)[p[-1]] = new
    return f"number {_fmt(p)}={_short(new)}"


def _m_units(doc: Doc, rng: random.Random) -> str:
    paths = [p for p in _paths(doc) if isinstance(_get(doc, p), str)]
    if not paths:
        return _m_swap_value(doc, rng)
    p = rng.choice(paths)
    old = _get(doc, p)
    if old.endswith("bps"):
        new = rng.choice(BAD_RATES)
    elif old.endswith("B"):
        new = rng.choice(BAD_SIZES)
    else:
        new = rng.choice(BAD_TIMES + STRINGS[:6])
    _parent(doc, p)[p[-1]] = new
    return f"units {_fmt(p)}={_short(new)}"


def _m_delete(doc: Doc, rng: random.Random) -> str:
    p = rng.choice(list(_paths(doc)))
    del _parent(doc, p)[p[-1]]
    return f"delete {_fmt(p)}"


def _m_rename(doc: Doc, rng: random.Random) -> str:
    paths = [p for p in _paths(doc) if isinstance(p[-1], str)]
    p = rng.choice(paths)
    parent = _parent(doc, p)
    new = rng.choice([p[-1] + "x", p[-1].upper(), "", " " + p[-1], "é", "\ud800", "kind"])
    parent[new] = parent.pop(p[-1])
    return f"rename {_fmt(p)}->{_short(new)}"


def _m_duplicate(doc: Doc, rng: random.Random) -> str:
    """Copy a key's value under another key of the same table, or repeat an
    array element (a TOML duplicate key cannot live in a dict; see the text
    mutations for that)."""
    p = rng.choice(list(_paths(doc)))
    parent = _parent(doc, p)
    v = _copy(_get(doc, p))
    if isinstance(parent, list):
        parent.insert(int(p[-1]), v)
        return f"repeat {_fmt(p)}"
    other = rng.choice([k for k in _paths(doc) if isinstance(k[-1], str)])
    parent[other[-1]] = v
    return f"copy {_fmt(p)} to key {other[-1]}"


def _m_shape(doc: Doc, rng: random.Random) -> str:
    """Table <-> array, scalar -> one-element array or table."""
    p = rng.choice(list(_paths(doc)))
    v = _get(doc, p)
    if isinstance(v, dict):
        new: Any = [v] if rng.random() < 0.5 else list(v.values())
    elif isinstance(v, list):
        new = {str(i): x for i, x in enumerate(v)} if rng.random() < 0.5 else (v[0] if v else {})
    else:
        new = [v] if rng.random() < 0.5 else {"value": v}
    _parent(doc, p)[p[-1]] = new
    return f"shape {_fmt(p)}"


def _m_deep(doc: Doc, rng: random.Random) -> str:
    p = rng.choice(list(_paths(doc)))
    depth = rng.choice([31, 32, 33, 64, 127, 129, 200, 1000, 3000])
    _parent(doc, p)[p[-1]] = _deep(depth, _get(doc, p), rng)
    return f"nest {_fmt(p)} {depth} deep"


def _m_unicode(doc: Doc, rng: random.Random) -> str:
    paths = [p for p in _paths(doc) if isinstance(_get(doc, p), str)]
    if not paths:
        return _m_swap_value(doc, rng)
    p = rng.choice(paths)
    s = _get(doc, p)
    junk = rng.choice(["\ud800", "\udfff", "\x00", "\u200b", "🚀", "\u0301", "\ufeff"])
    at = rng.randrange(len(s) + 1)
    _parent(doc, p)[p[-1]] = s[:at] + junk + s[at:]
    return f"unicode {_fmt(p)} +{junk!r}@{at}"


def _m_schedule(doc: Doc, rng: random.Random) -> str:
    sched = doc.setdefault("schedule", [])
    if not isinstance(sched, list):
        return "schedule (not a list)"
    k = rng.randrange(6)
    if k == 0 or not sched:
        entry: dict[str, Any] = {
            "at": rng.choice(["0s", "1s", "5s", "1e9s", "-1s", 10, doc.get("duration", "1s")]),
            "action": rng.choice(["link", "flows", "aqm", "udp", "web", "bogus"]),
        }
        for key in rng.sample(
            [
                "link",
                "rate",
                "delay",
                "group",
                "start",
                "stop",
                "spread",
                "set",
                "density",
                "add_sessions",
            ],
            rng.randrange(1, 4),
        ):
            entry[key] = rng.choice(
                [
                    0,
                    1,
                    3,
                    10**6,
                    2**40,
                    -1,
                    "bottleneck",
                    "access",
                    "link0-fwd",
                    "x",
                    "10Mbps",
                    "1ns",
                    "50ms",
                    {"uniform": ["1ms", "2ms"]},
                    {"max_p": 0.5},
                    {"interval": "1ns"},
                    {"w_q": 2},
                    0.5,
                ]
            )
        sched.append(entry)
        return f"schedule add {_short(entry)}"
    i = rng.randrange(len(sched))
    if k == 1:
        e = sched[i]
        if isinstance(e, dict):
            e["at"] = rng.choice(["0s", "1ns", doc.get("duration", "1s"), "1e8s", 1, None])
            if e["at"] is None:
                del e["at"]
        return f"schedule[{i}].at"
    if k == 2:
        rng.shuffle(sched)
        return "schedule shuffled"
    if k == 3:
        sched[i] = rng.choice([{}, [], "x", 1, {"at": "1s"}])
        return f"schedule[{i}] replaced"
    if k == 4:
        e = sched[i]
        if isinstance(e, dict) and "group" in e:
            e["group"] = rng.choice([99, -1, 2**31, 0.5, "0"])
        return f"schedule[{i}].group"
    sched.extend(_copy(sched) * rng.randrange(1, 4))
    return "schedule repeated"


def _m_phases(doc: Doc, rng: random.Random) -> str:
    m = doc.setdefault("metrics", {})
    if not isinstance(m, dict):
        return "phases (metrics not a table)"
    m["phases"] = rng.choice(
        [
            [],
            [[0, 1]],
            [[1, 0]],
            [[0, 10**9]],
            [["0s", doc.get("duration", "1s")]],
            [[0.5, 0.5]],
            [[-1, 2]],
            [[math.nan, 1]],
            [[0, 1, 2]],
            [0, 1],
            [["1ns", "2ns"]] * 50,
            "0-1",
            [[2**63, 2**64]],
        ]
    )
    return f"phases={_short(m['phases'])}"


def _m_metrics(doc: Doc, rng: random.Random) -> str:
    m = doc.setdefault("metrics", {})
    if not isinstance(m, dict):
        return "metrics (not a table)"
    key = rng.choice(["sample_interval", "window", "start", "memory_limit"])
    m[key] = rng.choice(["1ns", "1us", "1ms", "0s", "1e8s", 0, 1, "1GB", "1B", "-1s", 2**70])
    return f"metrics.{key}={_short(m[key])}"


DOC_MUTATIONS: list[tuple[Callable[[Doc, random.Random], str], int]] = [
    (_m_swap_value, 6),
    (_m_number, 5),
    (_m_units, 5),
    (_m_delete, 4),
    (_m_rename, 3),
    (_m_duplicate, 2),
    (_m_shape, 3),
    (_m_deep, 2),
    (_m_unicode, 2),
    (_m_schedule, 4),
    (_m_phases, 2),
    (_m_metrics, 2),
]


# -- text mutations ----------------------------------------------------------


def _mutate_text(text: str, rng: random.Random) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    k = rng.randrange(7)
    i = rng.randrange(len(lines))
    if k == 0:
        return "".join(lines[:i] + lines[i + 1 :]), f"delete line {i + 1}"
    if k == 1:
        return "".join(lines[: i + 1] + lines[i:]), f"duplicate line {i + 1}"
    if k == 2:
        cut = rng.randrange(len(text))
        return text[:cut], f"cut at {cut}"
    if k == 3:
        at = rng.randrange(len(text))
        c = rng.choice(['"', "'", "[", "]", "{", "=", "\\", "\n", "#", ",", "\\uD800"])
        return text[:at] + c + text[at:], f"insert {c!r} at {at}"
    if k == 4:
        # A value too deep for tomllib's recursion.
        key = rng.choice(["x", "max_p", "flows"])
        v = "{a = " * 1000 + "1" + "}" * 1000
        return text + f"\n[aqm]\n{key} = {v}\n", "deep inline table"
    if k == 5:
        v = rng.choice(["9223372036854775808", "1" + "0" * 400, "1" + "0" * 5000, '"\\uD800"'])
        return text.replace("seed = 1", f"seed = {v}", 1), f"seed = {v[:12]}..."
    return text + "\n[" + ".".join(["t"] * rng.choice([33, 200])) + "]\nx = 1\n", "deep header"


# -- cases -------------------------------------------------------------------


def make_case(seed: int, index: int) -> Case:
    """Case ``index`` of the corpus with seed ``seed`` (pure: same in, same out)."""
    rng = random.Random(seed * 1_000_003 + index)
    docs = corpus()
    source = rng.choice(CORPUS)
    text, doc = docs[source]
    if rng.random() < 0.12:
        new, what = _mutate_text(text, rng)
        return Case(seed, index, source, [what], text=new)
    doc = copy.deepcopy(doc)
    mutations = []
    funcs = [f for f, _ in DOC_MUTATIONS]
    weights = [w for _, w in DOC_MUTATIONS]
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        f = rng.choices(funcs, weights)[0]
        try:
            mutations.append(f(doc, rng))
        except (IndexError, KeyError, ValueError, TypeError):
            mutations.append(f"{f.__name__} (no place)")
    return Case(seed, index, source, mutations, doc=doc)


def _short(v: Any) -> str:
    try:
        r = repr(v)
    except RecursionError:
        return "<deeply nested>"
    return r if len(r) <= 40 else r[:37] + "..."


@dataclass
class Outcome:
    """``ok`` (valid), ``error`` (a ScenarioError with a field or a line),
    or ``bad`` (anything else: the contract is broken)."""

    kind: str
    detail: str = ""


def check(case: Case) -> Outcome:
    """Validate one case and classify the result."""
    from aqmlab import scenario

    try:
        # Text goes through what loading a file does with its contents.
        doc = (
            scenario._parse_toml(case.text, case.source.name) if case.text is not None else case.doc
        )
        assert doc is not None
        scenario.validate(doc)
    except scenario.ScenarioError as e:
        if e.path or (case.text is not None and "line" in e.msg):
            return Outcome("error", str(e))
        return Outcome("bad", f"ScenarioError without a field path: {e}")
    except BaseException as e:
        return Outcome("bad", f"{type(e).__name__}: {e}"[:500])
    return Outcome("ok")


#: Simulated length of the fuzz runs (schedule entries past it are dropped).
RUN_DURATION = "0.3s"


def run_cases(seed: int, indices: list[int]) -> None:
    """Run each case for :data:`RUN_DURATION` (in this process), printing one
    line per case as it ends: ``INDEX ok``, ``INDEX error MSG`` (a clean
    ScenarioError) or ``INDEX bad MSG``. A parent process watches for a
    crash or a hang (see ``test_fuzz.py``)."""
    import warnings

    import aqmlab
    from aqmlab import scenario

    warnings.simplefilter("ignore", scenario.TruncationNote)
    for i in indices:
        print(f"{i} start", flush=True)
        c = make_case(seed, i)
        try:
            doc = scenario._parse_toml(c.text, "<fuzz>") if c.text is not None else c.doc
            assert doc is not None
            doc["duration"] = RUN_DURATION
            aqmlab.run(doc, truncate=True)
        except scenario.ScenarioError as e:
            print(f"{i} {'error' if e.path else 'bad'} {e}".replace("\n", " ")[:300], flush=True)
            continue
        except BaseException as e:
            print(f"{i} bad {type(e).__name__}: {e}".replace("\n", " ")[:300], flush=True)
            continue
        print(f"{i} ok", flush=True)


def main(argv: list[str]) -> int:
    """``python tests/fuzz.py SEED INDEX``: show and check one case;
    ``python tests/fuzz.py SEED N --all``: check N cases, print the bad ones;
    ``python tests/fuzz.py SEED --run I J ...``: run cases (see run_cases)."""
    ap = argparse.ArgumentParser(
        prog="tests/fuzz.py", description=__doc__.split("\n\n")[0].replace("\n", " ")
    )
    ap.add_argument("seed", type=int, help="the fuzzer's seed")
    ap.add_argument("n", type=int, nargs="?", help="a case's index, or with --all how many")
    ap.add_argument("--all", action="store_true", help="check cases 0 .. N-1")
    ap.add_argument("--run", type=int, nargs="+", metavar="I", help="run these cases")
    args = ap.parse_args(argv)
    if args.run is not None:
        run_cases(args.seed, args.run)
        return 0
    if args.n is None:
        ap.error("give a case's INDEX, N with --all, or --run I ...")
    if args.all:
        bad = 0
        for i in range(args.n):
            c = make_case(args.seed, i)
            o = check(c)
            if o.kind == "bad":
                bad += 1
                print(c.name(), "->", o.detail)
        print(f"{args.n} cases, {bad} bad")
        return 1 if bad else 0
    c = make_case(args.seed, args.n)
    print(c.name())
    print(check(c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
