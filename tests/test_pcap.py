"""``metrics.pcap``: the capture of the monitored link as ``packets.pcap`` in the result
folder, read back with Debian's tshark (``make tshark`` installs it as root; without it the
tshark test is skipped, saying why), and the path ``RunResult`` knows."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import aqmlab
from aqmlab.results import PCAP

from conftest import ROOT, SMALL, aqmlab_cli

TSHARK = shutil.which("tshark")


def _tshark(path: Path, *args: str) -> list[str]:
    p = subprocess.run(
        [str(TSHARK), "-n", "-r", str(path), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return p.stdout.splitlines()


@pytest.mark.skipif(
    TSHARK is None,
    reason="tshark is not installed: run `make tshark` as root (apt-get install tshark)",
)
def test_canonical_capture_reads_back_in_tshark(tmp_path: Path) -> None:
    """The canonical scenario with ECN at RED, 20 s measured from 0: tshark counts every
    packet that left the bottleneck's two queues and the CE marks the run counted."""
    out = tmp_path / "canonical"
    sets = [
        "duration=20s",
        "metrics.start=0s",
        "metrics.pcap=1000000",
        "tcp.ecn=true",
        "aqm.ecn=true",
    ]
    args = [a for s in sets for a in ("--set", s)]
    p = aqmlab_cli("run", "scenarios/canonical.toml", "--out", out, "--quiet", *args, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    r = aqmlab.load_run(out)
    assert r.pcap_path == out / PCAP
    assert PCAP in json.loads((out / "manifest.json").read_text())["files"]
    links = r.summary["links"]
    assert [lk["name"] for lk in links] == ["bottleneck", "bottleneck-rev"]
    departures = sum(lk["departures"] for lk in links)
    marks = sum(lk["marks"] for lk in links)
    waiting = sum(
        lk["arrivals"]
        - lk["departures"]
        - lk["drops_early"]
        - lk["drops_forced"]
        - lk["drops_overflow"]
        for lk in links
    )
    rows = _tshark(r.pcap_path, "-T", "fields", "-e", "ip.dsfield.ecn", "-e", "ip.proto")
    assert len(rows) == departures > 100_000
    ce = sum(1 for row in rows if row.split("\t")[0] == "3")
    # RED marks at admission: a marked packet still queued at the end is not captured.
    assert marks - waiting <= ce <= marks and marks > 1000, (ce, marks, waiting)
    assert all(row.split("\t")[1] == "6" for row in rows)
    # Nothing tshark calls malformed; a forward flow's data in bytes: 460-byte payloads
    # (500-byte packets) from sequence number 1, acknowledged in bytes.
    assert _tshark(r.pcap_path, "-Y", "_ws.malformed") == []
    first = _tshark(
        r.pcap_path,
        "-Y",
        "ip.src == 10.0.0.1 && tcp.len > 0",
        "-T",
        "fields",
        "-e",
        "tcp.seq",
        "-e",
        "tcp.len",
        "-e",
        "ip.dsfield.ecn",
    )
    assert first[:3] == ["1\t460\t2", "461\t460\t2", "921\t460\t2"]
    acks = _tshark(r.pcap_path, "-Y", "ip.src == 10.128.0.1", "-T", "fields", "-e", "tcp.ack")
    assert acks[0] == "461"


def test_run_result_knows_the_capture(tmp_path: Path) -> None:
    r = aqmlab.run(SMALL, overrides=["metrics.pcap=100"])
    # 24 bytes of file header, then 16 + 40 per TCP packet.
    assert len(r.pcap) == 24 + 100 * 56 and r.pcap[:4] == bytes.fromhex("4d3cb2a1")
    assert r.pcap_path is None
    path = r.save(tmp_path / "run")
    assert r.pcap_path == path / PCAP and r.pcap_path.read_bytes() == r.pcap
    again = aqmlab.load_run(path)
    assert again.pcap == r.pcap and again.pcap_path == path / PCAP
    # Off by default: no file, no path, the manifest's files as before.
    plain = aqmlab.run(SMALL)
    assert plain.pcap == b""
    path = plain.save(tmp_path / "plain")
    assert plain.pcap_path is None and not (path / PCAP).exists()
    assert PCAP not in json.loads((path / "manifest.json").read_text())["files"]
    assert "pcap" not in plain.scenario["metrics"]
