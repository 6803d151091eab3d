"""The simulator's copy of a scenario run on the testbed: the path the testbed's hosts have.

The testbed emulates the bottleneck (rate, delays, buffer, the AQM) on its router, but its access
links are veth pairs without a rate: a host's burst reaches the router at the speed the kernel
moves packets between namespaces. Captured at the router's TUN device (20 BBR flows at 50 Mbit/s,
docs/testbed.md, "Access links"), a flow's first ten 1500-byte packets arrive within 45 us, about
2.4 Gbit/s. A scenario's own ``topology.access_rate`` (100 Mbit/s by default) would spread such a
burst over a millisecond in the simulator and so decide, against a full queue, how much of it
survives. :func:`simulator_counterpart` gives the simulator the testbed's access links.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["ACCESS_RATE", "simulator_counterpart"]

#: The access links' rate in the simulator's copy: the 2.4 Gbit/s captured at the router, rounded.
ACCESS_RATE = "2.5Gbps"


def simulator_counterpart(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the scenario document ``doc`` as the simulator runs it beside the testbed: its
    access links at :data:`ACCESS_RATE` whatever the file writes (the testbed does not emulate
    ``topology.access_rate``), everything else as written."""
    out = copy.deepcopy(dict(doc))
    out.setdefault("topology", {})["access_rate"] = ACCESS_RATE
    return out
