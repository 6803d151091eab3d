"""The testbed's dumbbell of network namespaces: set-up, checks and tear-down.

Four namespaces per testbed, named ``aqtb-<pid>-<role>`` after the process
that made them::

    left hosts (l) --veth-- router side (rl) =TUN= aqmlab-router =TUN= (rr) --veth-- right hosts (r)
    10.1.0.2/24      10.1.0.1       tb0                       tb0   10.2.0.1       10.2.0.2/24

The router sides forward between their veth and their TUN device; the
user-space router (``aqmlab-router``) reads each TUN device and writes the
other, so every packet between the two host namespaces crosses it. Traffic
group ``g`` uses its own receiver address (``10.2.0.<10+g>`` for forward
groups, ``10.1.0.<10+g>`` for reverse ones) so that its route can carry
ECN (``features ecn``) independently of the others.

Everything is removed by deleting the namespaces once the processes in them
are gone (the veth and TUN devices live and die with their namespaces).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "PREFIX",
    "Dumbbell",
    "TestbedError",
    "check_environment",
    "cleanup",
    "leftovers",
]

PREFIX = "aqtb-"
NETNS_DIR = Path("/var/run/netns")
#: A testbed run's work folder in the system's temporary folder:
#: ``aqmlab-testbed-<pid>-<random>``, the pid its owner's.
WORK_PREFIX = "aqmlab-testbed-"
ROLES = ("l", "rl", "rr", "r")


class TestbedError(Exception):
    """The testbed cannot be set up or run (a one-line message for the user)."""


def _ip(*args: str, ns: str | None = None, check: bool = True) -> str:
    cmd = ["ip", *(["-n", ns] if ns else []), *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise TestbedError(f"`{' '.join(cmd)}` failed: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


def _sysctl(ns: str, key: str, value: str) -> None:
    path = "/proc/sys/" + key.replace(".", "/")
    p = subprocess.run(
        ["ip", "netns", "exec", ns, "sh", "-c", f"echo {value} > {path}"],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        raise TestbedError(f"cannot set {key} = {value} in {ns}: {p.stderr.strip()}")


def check_environment() -> None:
    """Raise :class:`TestbedError` saying what is missing: root, ``ip``,
    TUN, network namespaces."""
    if os.geteuid() != 0:
        raise TestbedError(
            "the testbed needs root (it creates network namespaces and TUN devices); "
            "run it as root or with sudo"
        )
    from shutil import which

    if which("ip") is None:
        raise TestbedError("the `ip` command (iproute2) is missing; install iproute2")
    if not os.path.exists("/dev/net/tun"):
        raise TestbedError(
            "/dev/net/tun is missing: the kernel's TUN driver is not available "
            "(modprobe tun, or give the container the device)"
        )
    if not os.path.exists("/proc/self/ns/net"):
        raise TestbedError("this kernel has no network namespaces (CONFIG_NET_NS)")


def kernel_ccs() -> list[str]:
    """The kernel's available TCP congestion controls."""
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text()
    except OSError:
        return []
    return text.split()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftovers(only_dead_owners: bool = False) -> list[str]:
    """Testbed namespaces that exist now (optionally only those whose
    creating process has died)."""
    out = []
    try:
        names = sorted(p.name for p in NETNS_DIR.iterdir())
    except OSError:
        names = []
    for n in names:
        m = re.fullmatch(rf"{PREFIX}(\d+)-\w+", n)
        if not m:
            continue
        if only_dead_owners and _pid_alive(int(m.group(1))):
            continue
        out.append(n)
    return out


def _ns_pids(ns: str) -> list[int]:
    out = _ip("netns", "pids", ns, check=False)
    return [int(x) for x in out.split() if x.isdigit()]


def _kill_in(names: list[str]) -> None:
    """SIGKILL every process in the namespaces ``names``, and wait for them."""
    for sig_round in range(50):
        pids = [p for n in names for p in _ns_pids(n) if p != os.getpid()]
        if not pids:
            return
        for p in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
        time.sleep(0.02 if sig_round < 10 else 0.1)


def cleanup(names: list[str] | None = None) -> list[str]:
    """Kill the processes of testbed namespaces and delete them (all
    testbed namespaces whose owner is gone when ``names`` is None).
    Returns the names removed."""
    if names is None:
        names = leftovers(only_dead_owners=True)
    names = [n for n in names if (NETNS_DIR / n).exists()]
    _kill_in(names)
    for n in names:
        _ip("netns", "del", n, check=False)
    return names


def work_dir_prefix() -> str:
    """The prefix of this process's work folders (see :func:`cleanup_work_dirs`)."""
    return f"{WORK_PREFIX}{os.getpid()}-"


def cleanup_work_dirs() -> list[Path]:
    """Remove the work folders of testbed runs whose process has died (a
    killed run cannot remove its own); return them."""
    import shutil
    import tempfile

    gone = []
    for d in sorted(Path(tempfile.gettempdir()).glob(f"{WORK_PREFIX}*")):
        m = re.fullmatch(rf"{WORK_PREFIX}(\d+)-.*", d.name)
        if m and d.is_dir() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone


@dataclass
class Dumbbell:
    """One testbed's namespaces (see the module's doc)."""

    mtu: int
    ecn_groups: dict[int, bool] = field(default_factory=dict)
    forward_groups: list[int] = field(default_factory=list)
    reverse_groups: list[int] = field(default_factory=list)
    #: Sysctls set in both hosts' namespaces (``runner.host_sysctls``).
    host_sysctls: dict[str, str] = field(default_factory=dict)
    tag: str = field(default_factory=lambda: f"{PREFIX}{os.getpid()}")
    created: list[str] = field(default_factory=list)

    def ns(self, role: str) -> str:
        return f"{self.tag}-{role}"

    def netns_path(self, role: str) -> str:
        return str(NETNS_DIR / self.ns(role))

    @staticmethod
    def receiver_addr(group: int, forward: bool) -> str:
        return f"10.{2 if forward else 1}.0.{10 + group}"

    def up(self) -> None:
        """Create everything; on failure, remove what was made and raise."""
        try:
            self._up()
        except BaseException:
            self.down()
            raise

    def _up(self) -> None:
        if any(NETNS_DIR.joinpath(self.ns(r)).exists() for r in ROLES):
            cleanup([self.ns(r) for r in ROLES])
        for r in ROLES:
            _ip("netns", "add", self.ns(r))
            self.created.append(self.ns(r))
            _ip("link", "set", "lo", "up", ns=self.ns(r))
            _sysctl(self.ns(r), "net.ipv6.conf.all.disable_ipv6", "1")
            _sysctl(self.ns(r), "net.ipv6.conf.default.disable_ipv6", "1")
        mtu = str(self.mtu)
        for host, rside, net in (("l", "rl", "1"), ("r", "rr", "2")):
            h, s = self.ns(host), self.ns(rside)
            _ip(
                "link",
                "add",
                "h0",
                "netns",
                h,
                "mtu",
                mtu,
                "type",
                "veth",
                "peer",
                "name",
                "h0",
                "netns",
                s,
                "mtu",
                mtu,
            )
            _ip("addr", "add", f"10.{net}.0.2/24", "dev", "h0", ns=h)
            _ip("addr", "add", f"10.{net}.0.1/24", "dev", "h0", ns=s)
            _ip("link", "set", "h0", "up", ns=h)
            _ip("link", "set", "h0", "up", ns=s)
            _ip("route", "add", "default", "via", f"10.{net}.0.1", ns=h)
            # The persistent TUN device the router attaches to.
            _ip("tuntap", "add", "dev", "tb0", "mode", "tun", ns=s)
            _ip("link", "set", "tb0", "mtu", mtu, "txqueuelen", "10000", "up", ns=s)
            other = "2" if net == "1" else "1"
            _ip("route", "add", f"10.{other}.0.0/24", "dev", "tb0", ns=s)
            _sysctl(s, "net.ipv4.ip_forward", "1")
            for k in ("all", "default", "h0", "tb0"):
                _sysctl(s, f"net.ipv4.conf.{k}.rp_filter", "0")
            # No kernel AQM between the hosts and the router: a plain FIFO
            # that never fills before the router reads it.
            subprocess.run(
                [
                    "tc",
                    "-n",
                    s,
                    "qdisc",
                    "replace",
                    "dev",
                    "tb0",
                    "root",
                    "pfifo",
                    "limit",
                    "10000",
                ],
                capture_output=True,
            )
            # Accept ECN when asked (2); asking is per route (features ecn).
            _sysctl(h, "net.ipv4.tcp_ecn", "2")
            for k, v in self.host_sysctls.items():
                _sysctl(h, k, v)
        # One receiver address per traffic group, its route with or without ECN.
        for groups, fwd in ((self.forward_groups, True), (self.reverse_groups, False)):
            for g in groups:
                addr = self.receiver_addr(g, fwd)
                rx, tx = ("r", "l") if fwd else ("l", "r")
                _ip("addr", "add", f"{addr}/32", "dev", "h0", ns=self.ns(rx))
                gw = "10.1.0.1" if tx == "l" else "10.2.0.1"
                extra = ["features", "ecn"] if self.ecn_groups.get(g) else []
                _ip("route", "add", f"{addr}/32", "via", gw, *extra, ns=self.ns(tx))

    def down(self) -> None:
        """Remove this testbed's namespaces and the processes in them."""
        cleanup([self.ns(r) for r in ROLES])
        self.created.clear()
