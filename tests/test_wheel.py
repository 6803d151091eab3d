"""The built wheel in a fresh venv: ``pip install`` it, then
``aqmlab examples``, ``aqmlab demo`` and (as root) ``aqmlab testbed`` from a folder outside the
source tree.

Takes the wheel ``AQMLAB_WHEEL`` names (``make test`` builds it with ``make wheel`` from the
engine ``make build`` made), or builds one with maturin; then installs it with its
dependencies (from pip's cache or the index: about 30 s). Skipped when maturin is missing or
pip cannot reach the packages; ``AQMLAB_SKIP_WHEEL=1`` skips it on purpose.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def _run(*args: str | Path, cwd: Path | None = None, timeout: float = 600):
    # Nothing points the installed package at this checkout's router.
    env = {k: v for k, v in os.environ.items() if k != "AQMLAB_ROUTER"}
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env
    )


def _testbed_why_not() -> str | None:
    from aqmlab import testbed

    try:
        testbed.check_environment()
    except testbed.TestbedError as e:
        return str(e)
    return None


@pytest.mark.crosscheck
@pytest.mark.skipif(bool(os.environ.get("AQMLAB_SKIP_WHEEL")), reason="AQMLAB_SKIP_WHEEL set")
def test_wheel_installs_and_runs_outside_the_source_tree(tmp_path: Path) -> None:
    built = os.environ.get("AQMLAB_WHEEL")
    if built:
        # The wheel `make wheel` built from the engine `make build` made (make test).
        wheel = Path(built)
        assert wheel.is_file(), f"AQMLAB_WHEEL={built}: no such file"
    else:
        maturin = Path(sys.executable).parent / "maturin"
        if not maturin.exists():
            pytest.skip("maturin is not installed in this venv")
        dist = tmp_path / "dist"
        p = _run(maturin, "build", "--release", "--quiet", "-o", dist, cwd=ROOT)
        assert p.returncode == 0, p.stderr[-3000:]
        (wheel,) = dist.glob("aqmlab-*.whl")
    venv = tmp_path / "venv"
    assert _run(sys.executable, "-m", "venv", venv).returncode == 0
    pip = _run(venv / "bin" / "pip", "install", "--quiet", f"{wheel}[pandas]")
    if pip.returncode != 0:
        pytest.skip(f"pip could not install the wheel's dependencies: {pip.stderr[-500:]}")
    aqmlab = venv / "bin" / "aqmlab"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The examples ship in the package.
    p = _run(aqmlab, "examples", cwd=elsewhere)
    assert p.returncode == 0, p.stderr
    assert "canonical.toml" in p.stdout and "aqm/codel.toml" in p.stdout
    p = _run(aqmlab, "examples", "-o", "ex", cwd=elsewhere)
    assert p.returncode == 0, p.stderr
    assert (elsewhere / "ex" / "canonical.toml").is_file()
    # The installed package, not the source tree.
    p = _run(venv / "bin" / "python", "-c", "import aqmlab; print(aqmlab.__file__)", cwd=elsewhere)
    assert str(venv) in p.stdout, p.stdout
    # Both demos, from a folder that is not the source tree.
    p = _run(aqmlab, "demo", "--quick", "--jobs", "1", "-o", "demo", cwd=elsewhere)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (elsewhere / "demo" / "thesis-5.5.3-quick" / "report" / "index.html").is_file()
    p = _run(aqmlab, "demo", "--red-droptail", "-o", "rd", cwd=elsewhere)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (elsewhere / "rd" / "queue.png").is_file()
    # The README's pandas example works after the documented install.
    code = (
        "import aqmlab; r = aqmlab.run('ex/canonical.toml', "
        "overrides=['duration=2s', 'metrics.start=0s', 'metrics.window=1s']); "
        "print(len(r.to_pandas('queue')))"
    )
    p = _run(venv / "bin" / "python", "-c", code, cwd=elsewhere)
    assert p.returncode == 0, p.stderr[-2000:]
    assert int(p.stdout) == 201
    # The testbed's router ships in the package and is found there.
    code = "from aqmlab.testbed.runner import find_router; print(find_router())"
    p = _run(venv / "bin" / "python", "-c", code, cwd=elsewhere)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip().startswith(str(venv)), p.stdout
    why_not = _testbed_why_not()
    if why_not is None:
        # A short run on real TCP, all from the installed package.
        p = _run(
            aqmlab, "testbed", "ex/testbed/link-accuracy.toml", "--set", "duration=4s",
            "--set", "metrics.start=3s", "-o", "tb", "-q", cwd=elsewhere,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]
        assert (elsewhere / "tb" / "summary.json").is_file()
    else:
        print(f"the testbed run from the wheel is left out: {why_not}")
    shutil.rmtree(venv, ignore_errors=True)
