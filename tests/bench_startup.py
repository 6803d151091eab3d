"""What `aqmlab run` spends beyond the engine's own time, on the canonical scenario.

Alternates N runs of the whole command (``aqmlab run FILE -o DIR --quiet``, the console script
beside the interpreter, a fresh process each time: interpreter start, imports, input checks, the
run, Parquet writing) with N runs of the engine alone (a fresh process that has already imported
everything, timing ``_core.run`` with the command's progress settings). Prints both
distributions, the difference of their medians and of their minima, and the median of the
differences of each pair (a command run and the engine run after it, which cancels a drift of
the machine's speed over the series). Bytecode is written and used (an installed wheel has it),
whatever ``PYTHONDONTWRITEBYTECODE`` says. Usage: ``python tests/bench_startup.py [FILE] [N]``
(``make bench-startup``). A figure, not a test: it depends on the machine and its load.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ENGINE = """
import time, sys
from aqmlab._engine import run_raw
from aqmlab.cli import PROGRESS_CALL_S, load_file
doc = load_file(sys.argv[1], [], False, [], [])
import aqmlab.api, aqmlab.report, pyarrow.parquet
t = time.perf_counter()
run_raw(doc, lambda s, e: True, every_s=PROGRESS_CALL_S)
print(time.perf_counter() - t)
"""


def main() -> int:
    scenario = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "scenarios" / "canonical.toml"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    py = sys.executable
    command: list[float] = []
    engine: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(py).parent / "aqmlab"  # the console script users run
        head = [str(script)] if script.is_file() else [py, "-m", "aqmlab"]
        run = [*head, "run", str(scenario), "--quiet", "-o"]
        subprocess.run([*run, f"{tmp}/warm"], env=env, check=True)  # bytecode, page cache
        for i in range(n):
            t = time.perf_counter()
            subprocess.run([*run, f"{tmp}/run{i}"], env=env, check=True)
            command.append(time.perf_counter() - t)
            out = subprocess.run(
                [py, "-c", ENGINE, str(scenario)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            engine.append(float(out.split()[-1]))

    def row(name: str, xs: list[float]) -> str:
        q = statistics.quantiles(xs, n=4)
        return f"{name:<10} min {min(xs):.3f}  q1 {q[0]:.3f}  median {q[1]:.3f}  q3 {q[2]:.3f} s"

    print(f"{scenario.name}: {n} runs each, alternating")
    print(row("command", command))
    print(row("engine", engine))
    over = statistics.median(command) - statistics.median(engine)
    # Each command run beside the engine run after it: a drift of the machine's speed over the
    # series cancels in their difference.
    paired = statistics.median(c - e for c, e in zip(command, engine, strict=True))
    print(
        f"beyond the engine: {over:.3f} s (medians), {min(command) - min(engine):.3f} s (minima),"
        f" {paired:.3f} s (median of the {n} paired differences); the goal: under 0.15 s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
