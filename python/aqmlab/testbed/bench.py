"""``python -m aqmlab.testbed.bench``: how fast the testbed router forwards
real packets (``make bench-testbed``).

Runs kernel TCP (cubic, 1500-byte packets, 2 ms base RTT, a 1000-packet
DropTail queue) through the router at link rates from 100 Mbit/s to
10 Gbit/s and prints, per point, the rate the router delivered, the share of
the configured rate, the router's CPU use (1.0 = one core busy) and its
write lateness. Where the delivered rate falls short of the configured one
while the router's CPU is near 1.0, the router is the limit; the in-memory
figure of ``aqmlab-router --bench`` shows how much of that the AQM costs.
Needs root; prints a note and exits 0 otherwise.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from aqmlab.testbed.netns import TestbedError, check_environment

SCENARIO = """
duration = "{dur}"
seed = 1
[topology]
kind = "dumbbell"
bottleneck_rate = "{rate}"
bottleneck_delay = "1ms"
buffer = 1000
access_delay = "0s"
[aqm]
kind = "{aqm}"
[tcp]
packet_size = 1500
[[traffic]]
kind = "bulk"
flows = {flows}
[metrics]
start = "1s"
"""


def main() -> int:
    try:
        check_environment()
    except TestbedError as e:
        print(f"bench-testbed skipped: {e}")
        return 0
    from aqmlab import scenario
    from aqmlab.testbed.runner import run_testbed

    points = [
        ("100Mbps", "droptail", 1),
        ("1Gbps", "droptail", 1),
        ("2Gbps", "droptail", 1),
        ("10Gbps", "droptail", 1),
        ("10Gbps", "droptail", 4),
    ]
    print(
        f"{'rate':>8} {'aqm':>9} {'flows':>5} {'delivered Mb/s':>15} {'share':>6} "
        f"{'router CPU':>10} {'late p99 ms':>11}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for i, (rate, aqm, flows) in enumerate(points):
            doc = scenario.load(SCENARIO.format(dur="4s", rate=rate, aqm=aqm, flows=flows))
            # At nice -10: a router that needs a whole core is held to 0.95 of it in the
            # real-time class, and stalls (docs/testbed.md, "Set-up and tear-down").
            r = run_testbed(doc, Path(tmp) / f"p{i}", cc="cubic", router_priority="nice")
            s, tb = r.summary, r.summary["testbed"]
            b = s["bottleneck"]
            cpu = (tb["router_cpu_user_s"] + tb["router_cpu_sys_s"]) / s["duration_s"]
            print(
                f"{rate:>8} {aqm:>9} {flows:>5} {b['throughput_bps'] / 1e6:>15.1f} "
                f"{b['utilization']:>6.3f} {cpu:>10.2f} {tb['router_late_p99_s'] * 1e3:>11.3f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
