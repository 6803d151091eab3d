"""Type stubs of the compiled engine bindings (crates/aqmlab-py)."""

from collections.abc import Callable
from typing import Any, TypedDict

ENGINE_VERSION: str

class ScenarioError(ValueError):
    """A scenario that does not parse or does not validate.

    ``path`` names the field (``traffic[1].flows``; empty for the whole
    document); ``msg`` says what is wrong and what is allowed; ``str()`` is
    ``"path: msg"``.
    """

    path: str
    msg: str
    def __init__(self, path: str, msg: str) -> None: ...

class RawRun(TypedDict):
    scenario: str
    summary: str
    queue: dict[str, list[Any]]
    flows: dict[str, list[Any]]
    params: dict[str, list[Any]]
    responses: dict[str, list[Any]]
    delay: dict[str, list[Any]]
    flow_series: dict[str, list[Any]]
    events: dict[str, list[Any]]
    peak_packets: int
    version: str

def validate(json: str) -> str:
    """Validate a scenario (JSON text); return the resolved scenario as JSON."""

def run(json: str, progress: Callable[[float], bool | None] | None = None) -> RawRun:
    """Run a scenario (JSON text). ``progress(simulated_seconds)`` returning
    ``False`` stops the run with ``KeyboardInterrupt``."""

def estimate(json: str) -> dict[str, float]:
    """What a scenario (JSON text) will store: ``bytes``, ``limit``, ``warn``
    and the rows by part."""
