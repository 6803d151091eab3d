"""The program each testbed host namespace runs: real kernel TCP traffic.

``python -m aqmlab.testbed.host SPEC.json`` (run by :mod:`aqmlab.testbed.runner`
inside a host namespace). One process per side of the dumbbell does all of
that side's work with plain sockets and one selector:

- *sends* its bulk flows: each opens a TCP connection at its start time (the
  kernel's congestion control named in the spec, set per socket with
  ``TCP_CONGESTION``), sends an 8-byte header (flow id, group; with ``MSG_MORE``, so
  that it leaves in the first full segment), then as much
  data as the kernel takes until the run ends or the flow's stop time;
- *receives* the flows of the other side: listens on its groups' addresses
  (advertising at most ``window_clamp`` bytes of window when given),
  counts the payload bytes of every flow, and notes the count when the
  measurement interval begins;
- sends its UDP flows (``cbr``, ``udp-onoff``): datagrams of the group's
  packet size paced at the flow's rate, ON/OFF periods exponential with the
  group's means (starting ON with probability on / (on + off), as in the
  simulator), rates changed at the schedule's ``udp`` actions; receives the
  other side's and counts them per flow;
- browses (``web``): each session follows its script (drawn by the core's
  web model: residual think, then per page its objects' sizes and the think
  after it), requesting objects from the other side's server one after
  another over a new connection per object (HTTP/1.0) or one per page
  (HTTP/1.1), and records each response (request to last byte); the other
  side serves: it reads a request of ``web_request_bytes`` whose first 8
  bytes give the size, and sends that many bytes;
- the left side sends an RTT probe every ``probe_interval_ns``: a 64-byte
  ICMP echo request to the right host, whose kernel answers it; the RTT is
  the kernel's receive timestamp of the reply less the send time;
- samples the ``TCP_INFO`` of the bulk flows it sends that ``series`` lists
  (cwnd, ssthresh, smoothed RTT, RTO, bytes acknowledged, pacing and
  delivery rates; BBR's bandwidth estimate and gains from ``TCP_CC_INFO``)
  every ``series.interval_ns`` from the run's start, while each is open.

Times are CLOCK_MONOTONIC nanoseconds (``time.monotonic_ns``), the router's
clock too: every process agrees on the run's start ``t0_ns``. At the end each
sender reads ``TCP_INFO`` (retransmissions, smoothed RTT, cwnd) and the
process writes its records as JSON to ``out``, with its network namespace's TCP
counters (``/proc/net/netstat`` and ``/proc/net/snmp``: timeouts, SACK
recoveries, loss probes, ...) as they stood when the measurement began and at
the end.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import selectors
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "parse_mib", "tcp_info", "tcp_mib"]

HEADER = struct.Struct("!II")
#: ``TCP_CC_INFO`` (``linux/tcp.h``), for BBR's ``struct tcp_bbr_info``.
TCP_CC_INFO = getattr(socket, "TCP_CC_INFO", 26)
CHUNK = memoryview(bytes(256 * 1024))
#: Socket option and message type of nanosecond receive timestamps (Linux).
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
DATA_PORT = 5001
UDP_PORT = 5002
WEB_PORT = 8080
#: Flow ``i`` of the scenario sends from port ``FLOW_PORT_BASE + i`` (for
#: ``i < FLOW_PORTS``, below the kernel's ephemeral range), so that the router
#: keys its flow queues by the flow's number as the simulator does.
FLOW_PORT_BASE = 10000
FLOW_PORTS = 22768
SIZE = struct.Struct("!Q")


def bind_flow_port(s: socket.socket, f: dict[str, Any]) -> None:
    """Send flow ``f`` from its own port (``f["port"]``); where that port is
    taken, from one the kernel picks (the router then hashes the 5-tuple)."""
    if f.get("port") is not None:
        with contextlib.suppress(OSError):
            s.bind(("", int(f["port"])))


def die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent dies (prctl
    PR_SET_PDEATHSIG), so a killed ``aqmlab testbed`` leaves no traffic."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def _inet_checksum(b: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``b``."""
    if len(b) % 2:
        b += b"\0"
    total: int = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def tcp_info(s: socket.socket) -> dict[str, float]:
    """The fields of Linux's ``struct tcp_info`` the results use (offsets of
    the UAPI layout; fields the kernel does not fill are left out)."""
    try:
        b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 232)
    except OSError:
        return {}

    def u32(off: int) -> int | None:
        return struct.unpack_from("=I", b, off)[0] if len(b) >= off + 4 else None

    def u64(off: int) -> int | None:
        return struct.unpack_from("=Q", b, off)[0] if len(b) >= off + 8 else None

    out: dict[str, float] = {}
    for name, v, scale in (
        ("ca_state", float(b[1]) if len(b) > 1 else None, 1.0),
        ("options", float(b[5]) if len(b) > 5 else None, 1.0),
        ("rto_s", u32(8), 1e-6),
        ("snd_mss", u32(16), 1.0),
        ("unacked", u32(24), 1.0),
        ("sacked", u32(28), 1.0),
        ("lost", u32(32), 1.0),
        ("retrans", u32(36), 1.0),
        ("rtt_s", u32(8 + 15 * 4), 1e-6),
        ("ssthresh", u32(8 + 17 * 4), 1.0),
        ("cwnd", u32(8 + 18 * 4), 1.0),
        ("total_retrans", u32(8 + 23 * 4), 1.0),
        ("pacing_rate_Bps", u64(104), 1.0),
        ("bytes_acked", u64(120), 1.0),
        ("min_rtt_s", u32(148), 1e-6),
        ("data_segs_out", u32(156), 1.0),
        ("delivery_rate_Bps", u64(160), 1.0),
        ("bytes_retrans", u64(208), 1.0),
    ):
        if v is not None:
            out[name] = v * scale
    return out


def bbr_info(s: socket.socket) -> tuple[float, int, int] | None:
    """BBR's bandwidth estimate (bytes/s) and its pacing and window gains (in 1/256) from
    ``TCP_CC_INFO`` (``struct tcp_bbr_info``); None when the socket's congestion control
    gives none."""
    try:
        b = s.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20)
    except OSError:
        return None
    if len(b) < 20:
        return None
    lo, hi, _min_rtt, pacing_gain, cwnd_gain = struct.unpack_from("=5I", b)
    return float(hi << 32 | lo), pacing_gain, cwnd_gain


def parse_mib(text: str) -> dict[str, int]:
    """The counters of a ``/proc/net/netstat`` or ``/proc/net/snmp`` text: pairs of lines
    ``Prefix: name name ...`` and ``Prefix: value value ...``, each counter named
    ``Prefix`` + name (``TcpExtTCPTimeouts``, ``TcpRetransSegs``), as ``nstat`` names them."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for head, vals in zip(lines[::2], lines[1::2], strict=False):
        prefix, _, names = head.partition(":")
        vprefix, _, values = vals.partition(":")
        if prefix != vprefix:
            continue
        for n, v in zip(names.split(), values.split(), strict=False):
            with contextlib.suppress(ValueError):
                out[prefix + n] = int(v)
    return out


def tcp_mib() -> dict[str, int]:
    """This network namespace's TCP counters (``Tcp`` and ``TcpExt``); empty where the files
    cannot be read."""
    out: dict[str, int] = {}
    for f in ("/proc/net/snmp", "/proc/net/netstat"):
        with contextlib.suppress(OSError):
            out.update(
                {k: v for k, v in parse_mib(Path(f).read_text()).items() if k.startswith("Tcp")}
            )
    return out


class Host:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.sel = selectors.DefaultSelector()
        self.buf = bytearray(1 << 20)
        # Receiving side: per flow id.
        self.rx: dict[int, dict[str, Any]] = {}
        self.snap_done = False
        self.mib_at_start: dict[str, int] = {}
        # Sending side.
        self.pending = sorted(spec.get("flows", []), key=lambda f: int(f["start_ns"]))
        self.tx: dict[int, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.probes: list[tuple[float, float]] = []
        self.probe_seq = 0
        self.probe_sent: dict[int, tuple[int, int]] = {}
        self.udp: list[dict[str, Any]] = []
        self.responses: list[list[float | int]] = []
        self.probe_id = os.getpid() & 0xFFFF
        self.listening = False
        series = spec.get("series") or {}
        self.series_ids = sorted({int(f) for f in series.get("flows", [])})
        self.series_every = max(1, int(series.get("interval_ns", 10_000_000)))
        self.series: list[list[float]] = []
        self.set_t0(int(spec.get("t0_ns", 0)))

    def set_t0(self, t0: int) -> None:
        """Fix the run's start (CLOCK_MONOTONIC ns) and every time after it."""
        spec = self.spec
        self.t0 = t0
        self.end = t0 + int(spec["duration_ns"])
        self.mstart = t0 + int(spec["measure_start_ns"])
        self.next_probe = t0 + int(spec.get("probe_start_ns", 100_000_000))
        self.next_series = t0
        # Web: sessions this side browses (client).
        self.sessions: list[dict[str, Any]] = [
            {**w, "state": "wait", "wake": t0 + int(w["begin_ns"]), "page": 0, "obj": 0}
            for w in spec.get("web_sessions", [])
        ]
        self.rate_changes = sorted(
            (t0 + int(c["at_ns"]), int(c["group"]), float(c["rate_bps"]))
            for c in spec.get("udp_rates", [])
        )

    def now(self) -> int:
        return time.monotonic_ns()

    # -- receiving ------------------------------------------------------
    def listen(self) -> None:
        self.listening = True
        for addr in self.spec.get("listen", []):
            ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            clamp = int(self.spec.get("window_clamp", 0))
            if clamp > 0:
                # tcp.rwnd: the largest window the receiver advertises, bytes
                # (inherited by the accepted connections).
                ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, clamp)
            ls.bind((addr, DATA_PORT))
            ls.listen(1024)
            ls.setblocking(False)
            self.sel.register(ls, selectors.EVENT_READ, ("accept", None))
        for addr, req_bytes in self.spec.get("web_servers", []):
            ws = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ws.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ws.bind((addr, WEB_PORT))
            ws.listen(4096)
            ws.setblocking(False)
            self.sel.register(ws, selectors.EVENT_READ, ("web-accept", int(req_bytes)))
        for addr in self.spec.get("listen_udp", []):
            us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            us.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            us.bind((addr, UDP_PORT))
            us.setblocking(False)
            self.sel.register(us, selectors.EVENT_READ, ("udp-rx", None))
        self.probe_to = self.spec.get("probe_to")
        if self.probe_to:
            ps = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            # The kernel's receive time of each reply (CLOCK_REALTIME).
            ps.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            ps.setblocking(False)
            self.probe_sock = ps
            self.sel.register(ps, selectors.EVENT_READ, ("probe", None))

    def on_accept(self, ls: socket.socket) -> None:
        while True:
            try:
                c, _ = ls.accept()
            except BlockingIOError:
                return
            c.setblocking(False)
            self.sel.register(c, selectors.EVENT_READ, ("rx", {"hdr": b"", "flow": None}))

    def on_rx(self, c: socket.socket, st: dict[str, Any]) -> None:
        for _ in range(16):
            try:
                n = c.recv_into(self.buf)
            except BlockingIOError:
                return
            except OSError:
                n = 0
            if n == 0:
                self.sel.unregister(c)
                c.close()
                return
            data = 0
            if st["flow"] is None:
                need = HEADER.size - len(st["hdr"])
                st["hdr"] += bytes(self.buf[: min(need, n)])
                data = n - min(need, n)
                if len(st["hdr"]) == HEADER.size:
                    fid, grp = HEADER.unpack(st["hdr"])
                    st["flow"] = fid
                    self.rx[fid] = {
                        "group": grp,
                        "bytes": 0,
                        "bytes_at_start": None,
                        "first_ns": self.now(),
                    }
            else:
                data = n
            if st["flow"] is not None:
                r = self.rx[st["flow"]]
                r["bytes"] += data
                if self.snap_done and r["bytes_at_start"] is None:
                    # A flow that began after the measurement started.
                    r["bytes_at_start"] = 0

    def snapshot(self) -> None:
        for r in self.rx.values():
            r["bytes_at_start"] = r["bytes"]
            r["packets_at_start"] = r.get("packets", 0)
        for st in self.udp:
            st["sent_at_start"] = st["sent"]
        for st in self.tx.values():
            # The senders' counts when the measurement began, so that the
            # results count what was sent within it, as the simulator does.
            s = st["sock"]
            i = tcp_info(s) if s.fileno() >= 0 else st.get("info", {})
            st["info_at_start"] = {k: i.get(k, 0.0) for k in ("total_retrans", "data_segs_out")}
        self.mib_at_start = tcp_mib()
        self.snap_done = True

    # -- probes -----------------------------------------------------------
    def send_probe(self) -> None:
        """One ICMP echo request of 64 bytes (IP) to ``probe_to``; the
        kernel there answers it, so no program's scheduling adds to the RTT."""
        self.probe_seq = (self.probe_seq + 1) & 0xFFFF
        payload = bytes(64 - 20 - 8)
        head = struct.pack("!BBHHH", 8, 0, 0, self.probe_id, self.probe_seq)
        csum = _inet_checksum(head + payload)
        msg = struct.pack("!BBHHH", 8, 0, csum, self.probe_id, self.probe_seq) + payload
        self.probe_sent[self.probe_seq] = (time.monotonic_ns(), time.time_ns())
        with contextlib.suppress(OSError):
            self.probe_sock.sendto(msg, (self.probe_to, 0))

    def on_probe(self, ps: socket.socket) -> None:
        while True:
            try:
                d, anc, _, _ = ps.recvmsg(2048, 256)
            except BlockingIOError:
                return
            rx_real = time.time_ns()
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS and len(data) >= 16:
                    sec, nsec = struct.unpack_from("=qq", data)
                    rx_real = sec * 1_000_000_000 + nsec
            ihl = (d[0] & 0x0F) * 4
            if len(d) < ihl + 8:
                continue
            typ, _, _, ident, seq = struct.unpack_from("!BBHHH", d, ihl)
            if typ != 0 or ident != self.probe_id:
                continue
            sent = self.probe_sent.pop(seq, None)
            if sent is not None:
                self.probes.append(((sent[0] - self.t0) * 1e-9, (rx_real - sent[1]) * 1e-9))

    def on_udp_rx(self, us: socket.socket) -> None:
        for _ in range(256):
            try:
                n = us.recv_into(self.buf)
            except BlockingIOError:
                return
            if n < HEADER.size:
                continue
            fid, grp = HEADER.unpack_from(self.buf)
            r = self.rx.get(fid)
            if r is None:
                r = self.rx[fid] = {
                    "group": grp,
                    "bytes": 0,
                    "bytes_at_start": 0 if self.snap_done else None,
                    "first_ns": self.now(),
                    "packets": 0,
                    "packets_at_start": 0,
                }
            r["bytes"] += n
            r["packets"] = r.get("packets", 0) + 1

    def start_udp(self, f: dict[str, Any]) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        bind_flow_port(s, f)
        s.connect((f["dst"], UDP_PORT))
        s.setblocking(False)
        u = f["udp"]
        size = int(u["packet_size"]) - 28  # IP and UDP headers
        now = self.now()
        st: dict[str, Any] = {
            "flow": f,
            "sock": s,
            "msg": HEADER.pack(int(f["id"]), int(f["group"])) + bytes(max(0, size - HEADER.size)),
            "interval_ns": int(u["packet_size"]) * 8 * 1_000_000_000 / float(u["rate_bps"]),
            "next": float(now),
            "sent": 0,
            "sent_at_start": None,
            "send_errors": 0,
            "started_ns": now,
            "info": {},
            "on": True,
            "toggle": None,
            "rng": random.Random(int(u["seed"])),
        }
        if u.get("on_ns"):
            a, b = float(u["on_ns"]), float(u["off_ns"])
            st["on"] = st["rng"].random() < a / (a + b)
            st["toggle"] = now + st["rng"].expovariate(1.0 / (a if st["on"] else b))
        self.udp.append(st)
        self.tx[int(f["id"])] = st

    def udp_due(self, now: int) -> float:
        """Send what the UDP sources owe by ``now``; return the next instant."""
        nxt = float("inf")
        for st in self.udp:
            if st["sock"].fileno() < 0:
                continue
            u = st["flow"]["udp"]
            while st["toggle"] is not None and now >= st["toggle"]:
                t = st["toggle"]
                st["on"] = not st["on"]
                mean = float(u["on_ns"] if st["on"] else u["off_ns"])
                st["toggle"] = t + st["rng"].expovariate(1.0 / mean)
                if st["on"]:
                    st["next"] = t
            if st["on"]:
                while st["next"] <= now:
                    try:
                        st["sock"].send(st["msg"])
                        st["sent"] += 1
                    except OSError:
                        st["send_errors"] += 1
                    st["next"] += st["interval_ns"]
                nxt = min(nxt, st["next"])
            if st["toggle"] is not None:
                nxt = min(nxt, st["toggle"])
        return nxt

    def set_udp_rate(self, group: int, rate_bps: float) -> None:
        for st in self.udp:
            if int(st["flow"]["group"]) == group:
                st["interval_ns"] = int(st["flow"]["udp"]["packet_size"]) * 8e9 / rate_bps

    # -- web: the server ----------------------------------------------------
    def on_web_accept(self, ws: socket.socket, req_bytes: int) -> None:
        while True:
            try:
                c, _ = ws.accept()
            except BlockingIOError:
                return
            c.setblocking(False)
            st = {"req": b"", "need": max(SIZE.size, req_bytes), "left": 0}
            self.sel.register(c, selectors.EVENT_READ, ("web-srv", st))

    def on_web_srv(self, c: socket.socket, st: dict[str, Any], writable: bool) -> None:
        """Read a request (its first 8 bytes: the object size), then send
        that many bytes; the client closes when it has had enough."""
        try:
            if st["left"] == 0:
                d = c.recv(65536)
                if not d:
                    self.sel.unregister(c)
                    c.close()
                    return
                st["req"] += d
                if len(st["req"]) < st["need"]:
                    return
                st["left"] = SIZE.unpack_from(st["req"])[0]
                st["req"] = st["req"][st["need"] :]
                self.sel.modify(c, selectors.EVENT_WRITE, ("web-srv", st))
            while st["left"] > 0:
                n = c.send(CHUNK[: min(len(CHUNK), st["left"])])
                st["left"] -= n
            self.sel.modify(c, selectors.EVENT_READ, ("web-srv", st))
        except BlockingIOError:
            return
        except OSError:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(c)
            c.close()

    # -- web: the client ----------------------------------------------------
    def web_due(self, now: int) -> float:
        """Start what the sessions owe by ``now``; return the next instant."""
        nxt = float("inf")
        for w in self.sessions:
            if w["state"] == "wait" and w["wake"] <= now:
                if w["page"] >= len(w["pages"]):
                    w["state"] = "done"
                    continue
                w["obj"] = 0
                w["conn"] = None
                self.web_request(w)
            if w["state"] == "wait":
                nxt = min(nxt, w["wake"])
        return nxt

    def web_request(self, w: dict[str, Any]) -> None:
        """Request the session's next object: over a new connection (HTTP/1.0,
        or the first of a page in 1.1) or the page's open one."""
        size = max(1, int(w["pages"][w["page"]][0][w["obj"]]))
        w["size"], w["got"], w["started"] = size, 0, self.now()
        w["state"] = "fetch"
        req = SIZE.pack(size) + bytes(max(0, int(w["request_bytes"]) - SIZE.size))
        c = w.get("conn")
        if c is None:
            c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, str(self.spec["cc"]).encode())
            c.setblocking(False)
            err = c.connect_ex((w["server"], WEB_PORT))
            if err not in (0, 115):
                self.errors.append(f"web session {w['session']}: connect: {os.strerror(err)}")
                c.close()
                w["state"] = "done"
                return
            w["conn"] = c
            w["out"] = req
            self.sel.register(c, selectors.EVENT_WRITE, ("web-cli", w))
        else:
            w["out"] = req
            self.sel.modify(c, selectors.EVENT_WRITE, ("web-cli", w))

    def on_web_cli(self, c: socket.socket, w: dict[str, Any]) -> None:
        try:
            if w["out"]:
                n = c.send(w["out"])
                w["out"] = w["out"][n:]
                if not w["out"]:
                    self.sel.modify(c, selectors.EVENT_READ, ("web-cli", w))
                return
            n = c.recv_into(self.buf)
        except BlockingIOError:
            return
        except OSError as e:
            self.errors.append(f"web session {w['session']}: {e}")
            n = 0
        if n == 0:
            self.sel.unregister(c)
            c.close()
            w["conn"], w["state"] = None, "done"
            return
        w["got"] += n
        if w["got"] < w["size"]:
            return
        end = self.now()
        self.responses.append(
            [w["session"], w["group"], w["page"], w["obj"], w["size"],
             (w["started"] - self.t0) * 1e-9, (end - self.t0) * 1e-9,
             (end - w["started"]) * 1e-9]
        )  # fmt: skip
        pages = w["pages"][w["page"]][0]
        w["obj"] += 1
        if w["http"] == "1.0" or w["obj"] >= len(pages):
            self.sel.unregister(c)
            c.close()
            w["conn"] = None
        if w["obj"] < len(pages):
            self.web_request(w)
            return
        w["wake"] = end + int(float(w["pages"][w["page"]][1]) * 1e9)
        w["page"] += 1
        w["state"] = "wait"

    # -- sending ----------------------------------------------------------
    def start_flow(self, f: dict[str, Any]) -> None:
        if f.get("udp"):
            self.start_udp(f)
            return
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        cc = str(self.spec["cc"])
        try:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        except OSError as e:
            self.errors.append(f"flow {f['id']}: TCP_CONGESTION {cc}: {e}")
        bind_flow_port(s, f)
        s.setblocking(False)
        err = s.connect_ex((f["dst"], DATA_PORT))
        if err not in (0, 115):  # EINPROGRESS
            self.errors.append(f"flow {f['id']}: connect: {os.strerror(err)}")
            s.close()
            return
        st = {
            "flow": f,
            "sock": s,
            "head": memoryview(HEADER.pack(int(f["id"]), int(f["group"]))),
            "sent": 0,
            "started_ns": self.now(),
            "info": {},
        }
        self.tx[int(f["id"])] = st
        self.sel.register(s, selectors.EVENT_WRITE, ("tx", st))

    def on_tx(self, s: socket.socket, st: dict[str, Any]) -> None:
        try:
            if len(st["head"]):
                # MSG_MORE: the header waits for the data behind it, so the
                # flow's first packet is a full segment, as the simulator's.
                n = s.send(st["head"], socket.MSG_MORE)
                st["head"] = st["head"][n:]
                if len(st["head"]):
                    return
            for _ in range(4):
                n = s.send(CHUNK)
                st["sent"] += n
                if n < len(CHUNK):
                    return
        except BlockingIOError:
            return
        except OSError as e:
            self.errors.append(f"flow {st['flow']['id']}: send: {e}")
            self.stop_flow(st)

    def sample_series(self, now: int) -> None:
        """One row per listed open flow: time (s from the start), flow, cwnd, ssthresh (the
        kernel's 2^31 - 1 when infinite), srtt (s), RTO (s), bytes acknowledged, pacing and
        delivery rates (bytes/s), BBR's bandwidth (bytes/s; NaN for other controls), its
        pacing and window gains (0 for others), the kernel's ``tcpi_ca_state``, the data
        segments sent (``tcpi_data_segs_out``), the MSS and the segments in flight
        (``tcpi_unacked - tcpi_sacked - tcpi_lost + tcpi_retrans``, the kernel's
        ``tcp_packets_in_flight``)."""
        t = (now - self.t0) * 1e-9
        for fid in self.series_ids:
            st = self.tx.get(fid)
            if st is None or st["flow"].get("udp") or st["sock"].fileno() < 0:
                continue
            i = tcp_info(st["sock"])
            if "cwnd" not in i:
                continue
            bbr = bbr_info(st["sock"]) if self.spec.get("cc") == "bbr" else None
            nan = float("nan")
            bw, pg, cg = bbr if bbr is not None else (nan, 0, 0)
            self.series.append(
                [
                    t,
                    fid,
                    i["cwnd"],
                    i.get("ssthresh", nan),
                    i.get("rtt_s", nan),
                    i.get("rto_s", nan),
                    i.get("bytes_acked", nan),
                    i.get("pacing_rate_Bps", nan),
                    i.get("delivery_rate_Bps", nan),
                    bw,
                    pg,
                    cg,
                    i.get("ca_state", -1.0),
                    i.get("data_segs_out", nan),
                    i.get("snd_mss", nan),
                    i.get("unacked", nan)
                    - i.get("sacked", nan)
                    - i.get("lost", nan)
                    + i.get("retrans", nan),
                ]
            )

    def stop_flow(self, st: dict[str, Any]) -> None:
        s = st["sock"]
        if s.fileno() < 0:
            return
        st["stopped_ns"] = self.now()
        if st["flow"].get("udp"):
            st["info"] = {"datagrams": st["sent"], "send_errors": st["send_errors"]}
        else:
            st["info"] = tcp_info(s)
            self.sel.unregister(s)
        s.close()

    # -- the loop ---------------------------------------------------------
    def run(self) -> dict[str, Any]:
        if not self.listening:
            self.listen()
        ready = self.now()
        stops = sorted(
            (int(f["stop_ns"]) + self.t0, int(f["id"]))
            for f in self.pending
            if f.get("stop_ns") is not None
        )
        while True:
            now = self.now()
            if now >= self.end:
                break
            if not self.snap_done and now >= self.mstart:
                self.snapshot()
            while self.pending and self.t0 + int(self.pending[0]["start_ns"]) <= now:
                self.start_flow(self.pending.pop(0))
            while stops and stops[0][0] <= now:
                _, fid = stops.pop(0)
                if fid in self.tx:
                    self.stop_flow(self.tx[fid])
            while self.rate_changes and self.rate_changes[0][0] <= now:
                _, g, r = self.rate_changes.pop(0)
                self.set_udp_rate(g, r)
            udp_next = self.udp_due(now) if self.udp else float("inf")
            if self.sessions:
                udp_next = min(udp_next, self.web_due(now))
            if self.probe_to and now >= self.next_probe:
                self.send_probe()
                self.next_probe += int(self.spec["probe_interval_ns"])
            if self.series_ids and now >= self.next_series:
                self.sample_series(now)
                while self.next_series <= now:
                    self.next_series += self.series_every
            wake = [self.end]
            if not self.snap_done:
                wake.append(self.mstart)
            if self.pending:
                wake.append(self.t0 + int(self.pending[0]["start_ns"]))
            if stops:
                wake.append(stops[0][0])
            if self.probe_to:
                wake.append(self.next_probe)
            if self.rate_changes:
                wake.append(self.rate_changes[0][0])
            if self.series_ids:
                wake.append(self.next_series)
            wake.append(int(min(udp_next, self.end)))
            timeout = max(0.0, (min(wake) - self.now()) * 1e-9)
            for key, _ in self.sel.select(timeout):
                kind, st = key.data
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if kind == "accept":
                    self.on_accept(sock)
                elif kind == "rx":
                    self.on_rx(sock, st)
                elif kind == "tx":
                    self.on_tx(sock, st)
                elif kind == "probe":
                    self.on_probe(sock)
                elif kind == "udp-rx":
                    self.on_udp_rx(sock)
                elif kind == "web-accept":
                    self.on_web_accept(sock, st)
                elif kind == "web-srv":
                    self.on_web_srv(sock, st, False)
                elif kind == "web-cli":
                    self.on_web_cli(sock, st)
        if not self.snap_done:
            self.snapshot()
        for st in self.tx.values():
            self.stop_flow(st)
        return {
            "ready_lag_s": (ready - self.t0) * 1e-9,
            "rx": {str(k): v for k, v in self.rx.items()},
            "tx": {
                str(k): {
                    "sent": v["sent"],
                    "sent_at_start": v.get("sent_at_start"),
                    "info": v["info"],
                    "info_at_start": v.get("info_at_start", {}),
                    "started_s": (v["started_ns"] - self.t0) * 1e-9,
                }
                for k, v in self.tx.items()
            },
            "probes": self.probes,
            "series": self.series,
            "responses": self.responses,
            "errors": self.errors,
            # The class this program ran in (the runner's choice, as the kernel took it).
            "fifo": os.sched_getscheduler(0) == os.SCHED_FIFO,
            "mib": {"start": self.mib_at_start, "end": tcp_mib()},
        }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    die_with_parent()
    spec = json.loads(Path(args[0]).read_text())
    host = Host(spec)
    host.listen()
    if not spec.get("t0_ns"):
        # Ready: the sockets listen. The run's start comes back on stdin.
        print("ready", flush=True)
        line = sys.stdin.readline()
        if not line.strip():
            return 1
        host.set_t0(int(line))
    res = host.run()
    out = Path(spec["out"])
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(res))
    tmp.rename(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
