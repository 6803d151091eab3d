"""Load a page in headless Chromium and report what a reader would see go wrong.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: the
browser reads JSON commands, each ended by a NUL byte, on its fd 3 and writes answers and
events on its fd 4), with the standard library only. :func:`check_page` opens a file:// URL,
waits for the load event, and returns the console errors, uncaught exceptions, failed loads and
the images (each with its natural width: 0 means it was not shown). With ``width`` the page is
laid out in a window that wide (px), and the check also lists what scrolls sideways there: the
page itself, or a box (a table's scrolling frame) whose content is wider than the box; with
``screenshot`` it saves what the window shows as a PNG.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["PageCheck", "check_page", "chromium"]


def chromium() -> str | None:
    """The Chromium executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageCheck:
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, failed loads
    images: list[dict[str, Any]] = field(default_factory=list)  # alt, complete, width
    title: str = ""
    # What scrolls sideways at the window's width: "page", or a box's tag, class and widths.
    overflow: list[str] = field(default_factory=list)


class _Pipe:
    def __init__(self, exe: str, profile: str) -> None:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # The child needs them as fds 3 and 4; keep ours above that so dup2 cannot clash.
        to_r2 = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
        from_w2 = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_r)
        os.close(from_w)

        def child_fds() -> None:
            # dup2 makes 3 and 4 inheritable; every other fd of ours is close-on-exec.
            os.dup2(to_r2, 3)
            os.dup2(from_w2, 4)

        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,  # subprocess would close fds 3 and 4 after preexec_fn
            preexec_fn=child_fds,
        )
        os.close(to_r2)
        os.close(from_w2)
        self.w = to_w
        self.r = from_r
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> int:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        msg: dict[str, Any] = json.loads(raw)
        return msg

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str = "",
        timeout: float = 30,
    ) -> dict[str, Any]:
        mid = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self.read(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            self.events.append(msg)

    def wait_event(self, method: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        if any(e.get("method") == method for e in self.events):
            return
        while True:
            msg = self.read(deadline)
            self.events.append(msg)
            if msg.get("method") == method:
                return

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self.w)
            os.close(self.r)


_IMAGES = """JSON.stringify({title: document.title, images: Array.from(document.images).map(i => (
  {alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}))})"""


_OVERFLOW = """JSON.stringify((() => {
  const out = [];
  const root = document.scrollingElement;
  if (root.scrollWidth > root.clientWidth + 1)
    out.push(`page ${root.scrollWidth} > ${root.clientWidth}`);
  for (const el of document.querySelectorAll('body *')) {
    const s = getComputedStyle(el).overflowX;
    if ((s === 'auto' || s === 'scroll') && el.scrollWidth > el.clientWidth + 1)
      out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
  }
  return out;
})())"""


def check_page(
    path: Path, timeout: float = 60, width: int | None = None, screenshot: Path | None = None
) -> PageCheck:
    """Open ``path`` in headless Chromium and collect what went wrong (see the module's
    documentation for ``width`` and ``screenshot``)."""
    exe = chromium()
    if exe is None:
        raise FileNotFoundError("chromium is not installed")
    res = PageCheck()
    with tempfile.TemporaryDirectory(prefix="aqmlab-chromium-") as profile:
        pipe = _Pipe(exe, profile)
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"}, timeout=timeout)
            session = pipe.call(
                "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
            )["sessionId"]
            for domain in ("Runtime", "Log", "Page"):
                pipe.call(f"{domain}.enable", session=session)
            if width is not None:
                pipe.call(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                    session=session,
                )
            pipe.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
            pipe.wait_event("Page.loadEventFired", timeout)
            # Let late decodes and console messages arrive.
            pipe.call("Runtime.evaluate", {"expression": "1"}, session=session)
            value = pipe.call(
                "Runtime.evaluate",
                {"expression": _IMAGES, "returnByValue": True, "awaitPromise": False},
                session=session,
            )["result"]["value"]
            info = json.loads(value)
            res.title = info["title"]
            res.images = info["images"]
            if width is not None:
                res.overflow = json.loads(
                    pipe.call(
                        "Runtime.evaluate",
                        {"expression": _OVERFLOW, "returnByValue": True},
                        session=session,
                    )["result"]["value"]
                )
            if screenshot is not None:
                shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session=session)
                screenshot.write_bytes(base64.b64decode(shot["data"]))
        finally:
            pipe.close()
    for e in pipe.events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            res.errors.append(f"console.{p['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            res.errors.append(f"exception: {d.get('exception', {}).get('description') or d}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            entry = p["entry"]
            res.errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
    return res
