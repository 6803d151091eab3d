"""Where the testbed's processes run (``aqmlab testbed --cpus``).

``"shared"`` (the default): every process where the kernel puts it, and no CPU kept awake.
``"pinned"`` (on a machine of two CPUs or more): the router alone on the last CPU this process
may use, polling without sleeping, the hosts' programs and the runner itself on the others, and
those others kept from halting by ``aqmlab-router --keep-awake`` (one spinning thread per CPU in
the kernel's idle class, which yields at once to any task that wakes there). In a virtual machine
an idle CPU halts, and a task woken there waits until the hypervisor runs it again: on the 2-CPU
guest the testbed was built on, up to tens of ms under a run, long enough for a receiver's data
to lie unread, for Linux to hold its ACKs back and for its sender to fall silent and then burst;
and with the other CPU busy, now and then 100 ms (docs/testbed.md, "Set-up and tear-down", which
says where each helps). A router that never sleeps cannot be in the real-time class, which the
kernel holds off its CPU for 50 ms of every second (``kernel.sched_rt_runtime_us``): with
``"pinned"`` it runs at nice -10.

Kept apart from the runner so that the command line can name the choices without importing it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from aqmlab.testbed.priority import ROUTER_PRIORITY

__all__ = ["CPUS", "CPU_CHOICES", "Placement", "placement", "router_priority", "steal_s"]

#: The choices of ``--cpus``.
CPU_CHOICES = ("pinned", "shared")
#: The default (docs/testbed.md: ``"pinned"`` brings one CUBIC flow at 100 Mbit/s near the
#: simulator, and the grid of 10 and 50 Mbit/s no nearer).
CPUS = "shared"


@dataclass(frozen=True)
class Placement:
    """The router's CPU and the hosts' CPUs (which are kept awake)."""

    router: int
    hosts: tuple[int, ...]


def placement(cpus: str, available: set[int] | None = None) -> Placement | None:
    """The placement ``cpus`` asks for on the CPUs ``available`` (this process's affinity when
    not given): ``None`` for ``"shared"``, or where fewer than two CPUs are available."""
    if cpus != "pinned":
        return None
    avail = sorted(os.sched_getaffinity(0) if available is None else available)
    if len(avail) < 2:
        return None
    return Placement(router=avail[-1], hosts=tuple(avail[:-1]))


def router_priority(choice: str | None, place: Placement | None) -> str:
    """The router's class: ``choice``, or by default ``"nice"`` with a placement (the router then
    polls without sleeping) and :data:`~aqmlab.testbed.priority.ROUTER_PRIORITY` without.
    Raises ``ValueError`` naming the two flags for ``"fifo"`` with a placement."""
    if place is None:
        return choice or ROUTER_PRIORITY
    if choice == "fifo":
        raise ValueError(
            "--router-priority fifo: not with --cpus pinned, where the router polls without "
            "sleeping and the kernel holds a real-time task that never sleeps off its CPU for "
            "50 ms of every second (kernel.sched_rt_runtime_us); give nice, the default there"
        )
    return "nice"


def steal_s() -> float:
    """CPU time the hypervisor has taken from this machine's CPUs since boot, seconds (the
    ``steal`` column of ``/proc/stat``; 0 where the kernel does not count it)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return 0.0
    if len(fields) < 9 or fields[0] != "cpu":
        return 0.0
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")
