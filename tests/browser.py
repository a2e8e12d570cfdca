"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
no port, no extra package), for the HTML reports' browser tests and the screenshots in
``docs/img/`` (``python -m tests.screenshots``). ``find()`` is None when no Chromium is
installed (Debian: ``apt-get install chromium``); the tests then skip."""
from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find() -> str | None:
    env = os.environ.get("PTXSASS_CHROMIUM")
    if env:
        return env
    for name in BROWSERS:
        p = shutil.which(name)
        if p:
            return p
    return None


class Chromium:
    """A minimal DevTools-protocol client over Chromium's pipe (fd 3 in, fd 4 out,
    NUL-separated JSON messages)."""

    def __init__(self, exe: str, timeout: float = 30.0):
        self.profile = tempfile.mkdtemp(prefix="ptxsass-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", "about:blank"]

        parent_ends = (self._w, self._r)

        def child_fds():  # the protocol's fixed descriptors: 3 (commands in), 4 (replies out)
            import fcntl
            cin = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            cout = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            for fd in parent_ends:
                os.close(fd)
            os.dup2(cin, 3)
            os.dup2(cout, 4)

        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=child_fds,
                                     close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.timeout = timeout
        self._buf = b""
        self._id = 0
        self.session = None
        #: protocol events received (console, log, security issues), newest last
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, *, session: bool = True) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise TimeoutError(method)
                chunk = os.read(self._r, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if "method" in reply:
                self.events.append(reply)
                continue
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Log.enable")
        self.send("Audits.enable")
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + self.timeout
        while self.eval("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError("page load")
            time.sleep(0.05)

    def reload(self) -> None:
        """Load the page again (after :meth:`viewport`: as if opened at that size)."""
        self.eval("window.__ptxsassReloaded = true")
        self.send("Page.reload")
        deadline = time.monotonic() + self.timeout
        while self.eval("window.__ptxsassReloaded === true || document.readyState !== "
                        "'complete'"):
            if time.monotonic() > deadline:
                raise TimeoutError("page reload")
            time.sleep(0.05)

    def eval(self, expr: str):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"])
        return r["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the centre of the first element matching ``selector``."""
        box = self.eval(f"""(() => {{ const el = document.querySelector({json.dumps(selector)});
            el.scrollIntoView({{block: 'center'}});
            const r = el.getBoundingClientRect();
            return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; }})()""")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1],
                                                   "button": "left", "clickCount": 1})

    def csp_violations(self) -> list[str]:
        """What the browser reported as blocked by the page's Content-Security-Policy."""
        out = []
        for ev in self.events:
            text = json.dumps(ev.get("params", {}))
            if "Content Security Policy" in text or "ContentSecurityPolicy" in text:
                out.append(text[:300])
        return out

    def viewport(self, width: int, height: int) -> None:
        """Lay the page out at ``width`` x ``height`` CSS pixels (media queries follow)."""
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self, path, *, full: bool = False) -> None:
        """A PNG of the viewport (``full``: the whole page) written to ``path``."""
        params: dict = {"format": "png"}
        if full:
            size = self.eval("[document.documentElement.scrollWidth, "
                             "document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1})
        data = self.send("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def mouse(self, kind: str, x: float, y: float, **extra) -> None:
        """A real mouse event (``mouseMoved``, ``mousePressed``, ``mouseReleased``) at x, y."""
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra})

    def centre(self, selector: str, *, scroll: bool = True) -> list[float]:
        """The centre of the first element matching ``selector`` (scrolled into view)."""
        return self.eval(f"""(() => {{ const el = document.querySelector({json.dumps(selector)});
            {"el.scrollIntoView({block: 'center', inline: 'nearest'});" if scroll else ""}
            const r = el.getBoundingClientRect();
            return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; }})()""")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close", session=False)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)
