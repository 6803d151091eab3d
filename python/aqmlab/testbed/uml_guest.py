"""The program a user-mode Linux guest runs: Linux's own queue disc on a dumbbell.

``python uml_guest.py SPEC.json`` (started by the guest's init script, which
:mod:`aqmlab.testbed.linux_qdisc` writes; standard library only, like
``host.py``). Inside the guest, whose kernel carries the queue discs and
congestion controls the host's may lack, it builds a dumbbell of network
namespaces joined by veth pairs, with the kernel forwarding every packet:

    l (10.1.0.2) --h0-- rl ==bn==> rr --h0-- r (10.2.0.2, 10.2.0.10)

- ``rl``'s ``bn`` egress is the bottleneck: HTB at the scenario's rate (its
  bucket ``burst_packets`` packets) with the queue disc under test as its
  only class's qdisc (handle ``10:``);
- ``rr``'s ``bn`` egress carries the whole base RTT as netem delay (the ACK
  path), so the data path's only queue is the one under test;
- segmentation and receive offloads are off on every veth, so the queue
  disc sees packets of the MTU as the simulator's link does.

``host.py`` drives the traffic in ``l`` and ``r`` as on the testbed. This
program samples the queue disc's length every ``sample_ns`` through a
netlink dump from inside ``rl``, reads ``tc -s -j`` when the measurement
begins and at the end, and writes ``result.json`` (or ``error.txt``) into
the spec's ``work`` folder, which host and guest share through hostfs.
"""

from __future__ import annotations

import ctypes
import json
import os
import socket
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

NETNS = Path("/run/netns")
CLONE_NEWNET = 0x40000000
# Netlink: RTM_GETQDISC dumps, their tcmsg and attributes (linux/rtnetlink.h,
# linux/pkt_sched.h).
RTM_NEWQDISC = 36
RTM_GETQDISC = 38
NLM_F_REQUEST = 0x1
NLM_F_DUMP = 0x300
NLMSG_DONE = 3
NLMSG_ERROR = 2
TCA_STATS = 3
#: The queue disc under test (``10:``) as the kernel writes a handle.
HANDLE = 0x10 << 16
#: Ethernet's header, which the veth's qdiscs count in every packet.
ETH_HEADER = 14


def sh(*args: str, ns: str | None = None, check: bool = True) -> str:
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r.stdout


def enter(ns: str) -> None:
    """Move this process into the namespace ``ns`` (setns(2))."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(NETNS / ns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {ns}")
    finally:
        os.close(fd)


def dumbbell(spec: dict[str, Any]) -> None:
    mtu = str(spec["mtu"])
    # Both ends run the congestion control (DCTCP's receiver keeps its own CE state). A
    # namespace takes its default from the initial one when it is made, and may not choose a
    # restricted one itself.
    sh("sysctl", "-qw", f"net.ipv4.tcp_allowed_congestion_control=reno cubic {spec['cc']}")
    sh("sysctl", "-qw", f"net.ipv4.tcp_congestion_control={spec['cc']}")
    for n in ("l", "rl", "rr", "r"):
        sh("ip", "netns", "add", n)
        sh("ip", "link", "set", "lo", "up", ns=n)
    for a, na, b, nb in (
        ("h0", "l", "h0", "rl"),
        ("bn", "rl", "bn", "rr"),
        ("h0", "r", "h0", "rr"),
    ):
        veth = f"link add {a} netns {na} mtu {mtu} type veth peer name {b} netns {nb} mtu {mtu}"
        sh("ip", *veth.split())
        for dev, ns in ((a, na), (b, nb)):
            sh("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off", ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
    for ns, dev, addr in (
        ("l", "h0", "10.1.0.2/24"),
        ("rl", "h0", "10.1.0.1/24"),
        ("rl", "bn", "10.3.0.1/30"),
        ("rr", "bn", "10.3.0.2/30"),
        ("rr", "h0", "10.2.0.1/24"),
        ("r", "h0", "10.2.0.2/24"),
        ("r", "h0", "10.2.0.10/32"),
    ):
        sh("ip", "addr", "add", addr, "dev", dev, ns=ns)
    sh("ip", "route", "add", "default", "via", "10.1.0.1", ns="l")
    sh("ip", "route", "add", "default", "via", "10.2.0.1", ns="r")
    sh("ip", "route", "add", "10.2.0.0/24", "via", "10.3.0.2", ns="rl")
    sh("ip", "route", "add", "10.1.0.0/24", "via", "10.3.0.1", ns="rr")
    ecn = ["features", "ecn"] if spec["ecn"] else []
    sh("ip", "route", "add", "10.2.0.10/32", "via", "10.1.0.1", *ecn, ns="l")
    for ns in ("rl", "rr"):
        sh("sysctl", "-qw", "net.ipv4.ip_forward=1", ns=ns)
    for ns in ("l", "r"):
        # Accept ECN when asked (asking is per route: features ecn).
        sh("sysctl", "-qw", "net.ipv4.tcp_ecn=2", ns=ns)
        got = Path("/proc/sys/net/ipv4/tcp_congestion_control")
        if sh("cat", str(got), ns=ns).strip() != spec["cc"]:
            raise RuntimeError(f"namespace {ns} did not take {spec['cc']} as its default")
    # HTB's rate counts the Ethernet header: scaled so that a packet of the MTU
    # leaves in MTU x 8 / rate, as on the simulator's link.
    wire = int(spec["rate_bps"] * (spec["mtu"] + ETH_HEADER) / spec["mtu"])
    # The token bucket holds a few packets, so that a late wake-up of the guest's timer (its
    # one CPU runs the hosts' programs too) is made up for at once rather than lost to the link.
    burst = str(int(spec.get("burst_packets", 1)) * (spec["mtu"] + ETH_HEADER))
    sh("tc", "qdisc", "add", "dev", "bn", "root", "handle", "1:", "htb", "default", "1", ns="rl")
    sh(
        "tc",
        "class",
        "add",
        "dev",
        "bn",
        "parent",
        "1:",
        "classid",
        "1:1",
        "htb",
        "rate",
        f"{wire}bit",
        "ceil",
        f"{wire}bit",
        "burst",
        burst,
        "cburst",
        burst,
        ns="rl",
    )
    sh("tc", "qdisc", "add", "dev", "bn", "parent", "1:1", "handle", "10:", *spec["qdisc"], ns="rl")
    sh(
        "tc",
        "qdisc",
        "add",
        "dev",
        "bn",
        "root",
        "netem",
        "delay",
        f"{spec['rtt_ns'] // 1000}us",
        "limit",
        "1000000",
        ns="rr",
    )


def qdisc_stats() -> dict[str, Any]:
    """``tc -s -j``'s record of the queue disc under test (we are in ``rl``)."""
    rows = json.loads(sh("tc", "-s", "-j", "qdisc", "show", "dev", "bn"))
    return next(r for r in rows if r.get("handle") == "10:")


class Sampler:
    """The queue disc's length and backlog from one netlink dump (struct tc_stats)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        self.sock.bind((0, 0))
        self.ifindex = socket.if_nametoindex("bn")
        self.seq = 0

    def sample(self) -> tuple[int, int, int, int]:
        """Packets and bytes queued, and bytes and packets sent so far."""
        self.seq += 1
        tcm = struct.pack("=BxxxiIII", socket.AF_UNSPEC, 0, 0, 0, 0)
        hdr = struct.pack(
            "=IHHII", 16 + len(tcm), RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, self.seq, 0
        )
        self.sock.send(hdr + tcm)
        found = (0, 0, 0, 0)
        while True:
            data = self.sock.recv(65536)
            off = 0
            while off + 16 <= len(data):
                length, kind, _, _, _ = struct.unpack_from("=IHHII", data, off)
                if kind == NLMSG_DONE:
                    return found
                if kind == NLMSG_ERROR:
                    raise OSError("netlink: qdisc dump refused")
                if kind == RTM_NEWQDISC:
                    _, ifindex, handle, _, _ = struct.unpack_from("=BxxxiIII", data, off + 16)
                    if ifindex == self.ifindex and handle == HANDLE:
                        a = off + 16 + 20
                        while a + 4 <= off + length:
                            alen, atype = struct.unpack_from("=HH", data, a)
                            if alen < 4:
                                break
                            if atype == TCA_STATS:
                                # bytes, packets, drops, overlimits, bps, pps, qlen, backlog
                                st = struct.unpack_from("=QIIIIIII", data, a + 4)
                                found = (st[6], st[7], st[0], st[1])
                            a += (alen + 3) & ~3
                off += (length + 3) & ~3


def run(spec: dict[str, Any]) -> dict[str, Any]:
    work = Path(spec["work"])
    for m in spec["modules"]:
        sh("modprobe", "-d", spec["modules_root"], m)
    ccs = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    if spec["cc"] not in ccs:
        raise RuntimeError(f"congestion control {spec['cc']!r} not in the guest ({' '.join(ccs)})")
    dumbbell(spec)
    t0 = time.monotonic_ns() + 2_000_000_000
    common = {
        "t0_ns": t0,
        "duration_ns": spec["duration_ns"],
        "measure_start_ns": spec["measure_start_ns"],
        "cc": spec["cc"],
        "probe_interval_ns": 100_000_000,
        "probe_to": None,
        "listen_udp": [],
        "web_servers": [],
        "web_sessions": [],
        "udp_rates": [],
        "series": {"flows": [], "interval_ns": 10_000_000},
    }
    flows = [
        {"id": i, "group": 0, "dst": "10.2.0.10", "start_ns": s, "stop_ns": None, "udp": None}
        for i, s in enumerate(spec["starts_ns"])
    ]
    sides = {
        "l": dict(common, out=str(work / "host-l.out.json"), listen=[], flows=flows),
        "r": dict(common, out=str(work / "host-r.out.json"), listen=["10.2.0.10"], flows=[]),
    }
    procs = []
    for side in ("r", "l"):
        (work / f"host-{side}.json").write_text(json.dumps(sides[side]))
        procs.append(
            subprocess.Popen(
                [
                    "ip",
                    "netns",
                    "exec",
                    side,
                    sys.executable,
                    spec["host_py"],
                    str(work / f"host-{side}.json"),
                ],
                stderr=subprocess.PIPE,
            )
        )
    enter("rl")
    sampler = Sampler()
    every = int(spec["sample_ns"])
    mstart, end = t0 + int(spec["measure_start_ns"]), t0 + int(spec["duration_ns"])
    samples: list[list[int]] = []
    at_start: dict[str, Any] | None = None
    nxt = mstart
    while True:
        now = time.monotonic_ns()
        if now >= end:
            break
        if now >= nxt:
            if at_start is None:
                at_start = qdisc_stats()
            qlen, backlog, sent_bytes, sent_pkts = sampler.sample()
            samples.append([time.monotonic_ns() - t0, qlen, backlog, sent_bytes, sent_pkts])
            nxt += every * max(1, (now - nxt) // every + 1)
        time.sleep(max(0.0, min(nxt, end) - time.monotonic_ns()) * 1e-9)
    at_end = qdisc_stats()
    for p in procs:
        _, err = p.communicate(timeout=60)
        if p.returncode != 0:
            raise RuntimeError(f"host.py failed ({p.returncode}): {err.decode(errors='replace')}")
    return {
        "kernel": os.uname().release,
        "qdisc_at_start": at_start,
        "qdisc_at_end": at_end,
        "samples": samples,
        "hosts": {s: json.loads((work / f"host-{s}.out.json").read_text()) for s in ("l", "r")},
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = json.loads(Path(args[0]).read_text())
    work = Path(spec["work"])
    try:
        res = run(spec)
    except Exception:  # reported to the host, which raises it
        (work / "error.txt").write_text(traceback.format_exc())
        return 1
    (work / "result.json.tmp").write_text(json.dumps(res))
    (work / "result.json.tmp").rename(work / "result.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
