"""Digests of every figure aqmlab computes, to show that a change to the engine changes none.

Runs every scenario file under ``scenarios/`` and every preset in its quick form, and writes
one digest per run: the summary (timing fields aside) and each table, hashed from their
values. A refactor is checked by taking a digest before and after and comparing the two::

    python tools/figures_digest.py take before.json          # on the old tree
    python tools/figures_digest.py take after.json           # on the new tree
    python tools/figures_digest.py diff before.json after.json

``diff`` prints every run whose summary or table differs and exits 1 if any does. Usage from
the project root with aqmlab installed (``make build``).

A change that adds figures (a summary key, a table column, a table) and should change no other
compares with ``take --drop NAME`` (repeatable): NAME is left out of every summary, at any depth,
and of every table, and a table of that name (its file's stem) is left out whole, so the digest
taken after the change matches the one taken before it::

    python tools/figures_digest.py take after.json --drop sack_recoveries --drop tlp_probes
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

#: Summary keys that measure the machine, not the model.
TIMING_KEYS = ("wall_time_s", "events_per_s", "sim_s_per_s")


#: Keys and columns left out of the digests (``take --drop``).
DROPPED: set[str] = set()


def _strip(d: Any) -> Any:
    if isinstance(d, dict):
        return {
            k: _strip(v) for k, v in sorted(d.items()) if k not in TIMING_KEYS and k not in DROPPED
        }
    if isinstance(d, list):
        return [_strip(v) for v in d]
    return d


def _hash(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, default=repr, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def digest_folder(d: Path) -> dict[str, str]:
    """The digest of one run folder: its summary and each parquet table."""
    out = {"summary": _hash(_strip(json.loads((d / "summary.json").read_text())))}
    for f in sorted(d.glob("*.parquet")):
        if f.stem in DROPPED:
            continue
        table = pq.read_table(f).to_pydict()
        out[f.stem] = _hash({k: v for k, v in table.items() if k not in DROPPED})
    return out


def _run_scenario(path: str, dropped: frozenset[str] = frozenset()) -> tuple[str, dict[str, str]]:
    import aqmlab

    DROPPED.update(dropped)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        aqmlab.run(path, out=Path(tmp) / "run")
        return path, digest_folder(Path(tmp) / "run")


def _point_key(p: Path) -> str:
    """A preset point named by what it runs (scheme, factor values, seed), not by its folder's
    id, which hashes the resolved scenario and so changes when a default is added to it."""
    point = json.loads((p / "point.json").read_text())
    factors = _hash(point.get("factors", {}))
    return f"{point.get('scheme')} {factors} seed {point.get('seed')}"


def take(out: Path, jobs: int, presets: bool, dropped: frozenset[str] = frozenset()) -> None:
    DROPPED.update(dropped)
    files = sorted(str(p) for p in Path("scenarios").rglob("*.toml"))
    digests: dict[str, Any] = {}
    with ProcessPoolExecutor(jobs) as pool:
        for path, d in pool.map(_run_scenario, files, [dropped] * len(files)):
            digests[path] = d
            print(f"{path}: {d['summary']}", flush=True)
    if presets:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "aqmlab", "reproduce", "--all", "--quick"]
            cmd += ["--jobs", str(jobs), "--no-report", "--out", tmp]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"the quick presets failed:\n{r.stdout[-2000:]}{r.stderr[-4000:]}")
            for p in sorted(Path(tmp).glob("*/points/*")):
                if (p / "summary.json").is_file():
                    digests[f"preset {p.parent.parent.name} {_point_key(p)}"] = digest_folder(p)
    out.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"{len(digests)} runs digested into {out}")


def diff(a: Mapping[str, Mapping[str, str]], b: Mapping[str, Mapping[str, str]]) -> int:
    bad = 0
    for run in sorted(set(a) | set(b)):
        if run not in a or run not in b:
            print(f"{run}: only in {'the first' if run in a else 'the second'}")
            bad += 1
            continue
        parts = [k for k in sorted(set(a[run]) | set(b[run])) if a[run].get(k) != b[run].get(k)]
        if parts:
            print(f"{run}: {', '.join(parts)} differ")
            bad += 1
    print(f"{len(set(a) | set(b))} runs, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("take", help="run everything and write the digests")
    t.add_argument("out", type=Path)
    t.add_argument("--jobs", type=int, default=2)
    t.add_argument("--no-presets", action="store_true", help="scenario files only")
    t.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="NAME",
        help="leave this summary key or table column out (repeatable)",
    )
    d = sub.add_parser("diff", help="compare two digest files")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "take":
        take(args.out, args.jobs, not args.no_presets, frozenset(args.drop))
        return 0
    return diff(json.loads(args.a.read_text()), json.loads(args.b.read_text()))


if __name__ == "__main__":
    from pipe_exit import run

    sys.exit(run(main))
