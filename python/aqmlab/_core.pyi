"""Type stubs of the compiled engine bindings (crates/aqmlab-py)."""

from collections.abc import Callable
from typing import TypedDict

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

#: A result column: ``(type, rows, data, offsets)``, the Arrow buffers of its
#: values (``crates/aqmlab-py/src/columns.rs``).
RawColumn = tuple[str, int, bytes, bytes | None]

class RawRun(TypedDict):
    scenario: str
    summary: str
    queue: dict[str, RawColumn]
    flows: dict[str, RawColumn]
    params: dict[str, RawColumn]
    responses: dict[str, RawColumn]
    pings: dict[str, RawColumn]
    delay: dict[str, RawColumn]
    flow_series: dict[str, RawColumn]
    events: dict[str, RawColumn]
    pcap: bytes
    peak_packets: int
    version: str

def validate(json: str) -> str:
    """Validate a scenario (JSON text); return the resolved scenario as JSON."""

def run(
    json: str,
    progress: Callable[[float, int], bool | None] | None = None,
    available: int | None = None,
    every_s: float = 0.0,
) -> RawRun:
    """Run a scenario (JSON text). ``progress(simulated_seconds, events)``
    returning ``False`` stops the run with ``KeyboardInterrupt``; with
    ``every_s`` > 0 it is called at most once per ``every_s`` wall seconds. A run whose
    results would not fit in ``available`` bytes (and
    ``metrics.memory_limit``) is refused with ``ScenarioError``; results
    that do not fit when handed over raise ``MemoryError``."""

def estimate(json: str) -> dict[str, float]:
    """What a scenario (JSON text) will store: ``bytes``, ``limit``, ``warn``
    and the rows by part."""
