"""How the testbed's router and its hosts' programs are scheduled (``aqmlab testbed
--router-priority``).

Kept apart from the runner so that the command line can name the choices without importing it.
"""

from __future__ import annotations

__all__ = ["HOST_FIFO", "ROUTER_FIFO", "ROUTER_NICE", "ROUTER_PRIORITIES", "ROUTER_PRIORITY"]

#: The router's nice value (higher priority than the rest of the machine), under either choice.
ROUTER_NICE = -10
#: The choices: ``"nice"``, at :data:`ROUTER_NICE` in the ordinary class, or ``"fifo"``, the
#: real-time class (``SCHED_FIFO``) at :data:`ROUTER_FIFO`, which wakes it ahead of every
#: ordinary process, the hosts' programs included.
ROUTER_PRIORITIES = ("nice", "fifo")
#: The default where the processes share the CPUs (``--cpus shared``): the real-time class, which
#: keeps the router on the link's time where the hosts' programs keep the CPUs busy
#: (docs/testbed.md, "Set-up and tear-down"); ``"nice"`` for a machine that refuses it. With
#: ``--cpus pinned`` the router polls without sleeping and runs at nice -10
#: (:func:`aqmlab.testbed.cpus.router_priority`).
ROUTER_PRIORITY = "fifo"
#: The router's real-time priority under ``"fifo"`` (that of the user-mode guest's ``chrt -f``).
ROUTER_FIFO = 50
#: The hosts' programs' real-time priority where the router is in the real-time class: below the
#: router's, ahead of every ordinary process. A sending program that the kernel takes off its CPU
#: while it writes holds its socket, and the ACKs that arrive meanwhile wait in the socket's
#: backlog until it runs again: on a machine whose CPUs other work keeps busy, the kernel's round
#: trips then read long by however long that was (docs/testbed.md, "Set-up and tear-down").
HOST_FIFO = 40
