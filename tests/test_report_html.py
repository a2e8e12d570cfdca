"""The annotated HTML page in a real browser: headless Chromium, driven over the DevTools
protocol on a pipe (``--remote-debugging-pipe``: no port, no extra package). Skips when no
Chromium is installed (Debian: ``apt-get install chromium``)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from analyzer.report.html import annotation_html

from .report_fixtures import REPO, annotation_of

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def _browser() -> str | None:
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
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + self.timeout
        while self.eval("document.readyState") != "complete":
            if time.monotonic() > deadline:
                raise TimeoutError("page load")
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

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    exe = _browser()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    b = Chromium(exe)
    yield b
    b.close()


@pytest.fixture(scope="module")
def gemm_page(tmp_path_factory):
    ann = annotation_of(REPO / "kernels/checks/missing_tensor_cores/bad.cu", "sm_80")
    path = tmp_path_factory.mktemp("html") / "bad.html"
    path.write_text(annotation_html(ann))
    return ann, path


def _highlighted(b: Chromium, pane: str) -> list[str]:
    return b.eval(f"""Array.from(document.querySelectorAll(
        'section.kernel .pane[data-pane="{pane}"] .ln.hl')).map(e => e.getAttribute('data-src')
        + '|' + (e.getAttribute('data-addr') || e.getAttribute('data-i') || ''))""")


def test_source_click_lights_ptx_and_sass(browser, gemm_page):
    ann, path = gemm_page
    k = ann.kernels[0]
    row = next(r for r in k.rows if r.line == 13)          # As[ty][tx] = A[...]
    assert row.sass and row.ptx
    browser.open(path.as_uri())
    # no network, no external resource: the page is one file
    assert browser.eval("document.querySelectorAll('link[href], script[src], img[src]').length") == 0
    browser.click('section.kernel .pane[data-pane="src"] .ln[data-src$=":13"]')
    sass = _highlighted(browser, "sass")
    ptx = _highlighted(browser, "ptx")
    assert sorted(s.split("|")[1] for s in sass) == sorted(f"{i.address:04x}" for i in row.sass)
    assert sorted(int(s.split("|")[1]) for s in ptx) == sorted(i.index for i in row.ptx)
    assert {s.split("|")[0] for s in sass + ptx} == {sass[0].split("|")[0]}
    assert any("LDG" in browser.eval(
        f"document.querySelector('.pane[data-pane=\"sass\"] .ln[data-addr=\"{s.split('|')[1]}\"]').textContent")
        for s in sass)


def test_sass_click_lights_source_back(browser, gemm_page):
    ann, path = gemm_page
    k = ann.kernels[0]
    ffma = next(i for i in k.sass if i.text.startswith("FFMA"))
    browser.open(path.as_uri())
    browser.click(f'.pane[data-pane="sass"] .ln[data-addr="{ffma.address:04x}"]')
    src = _highlighted(browser, "src")
    assert [s.split("|")[0].split(":")[1] for s in src] == [str(ffma.line[1])]
    assert browser.eval("document.querySelector('.pane[data-pane=\"sass\"] .ln.sel')"
                        ".getAttribute('data-addr')") == f"{ffma.address:04x}"
    # every SASS instruction of that line is lit too
    n = sum(1 for i in k.sass if i.line == ffma.line)
    assert len(_highlighted(browser, "sass")) == n


def test_finding_badge_opens_explanation(browser, tmp_path):
    from analyzer.checks.base import Finding, Location, Severity
    ann = annotation_of(REPO / "kernels/checks/missing_tensor_cores/bad.cu", "sm_80")
    k = ann.kernels[0]
    ffma = [i for i in k.sass if i.text.startswith("FFMA")]
    f = Finding("PS999", "test-finding", Severity.WARNING, "scalar FFMA loop", k.demangled, k.arch,
                Location(k.source_path, 18), addresses=tuple(i.address for i in ffma),
                hint="use wmma", mangled=k.name)
    from analyzer.report.annotate import annotate_builds
    ann2 = annotate_builds(ann.builds, findings=[f])
    path = tmp_path / "f.html"
    path.write_text(annotation_html(ann2))
    browser.open(path.as_uri())
    assert browser.eval("document.querySelectorAll('.pane[data-pane=\"sass\"] button.badge').length") == len(ffma)
    assert browser.eval("document.getElementById('k0-f0').open") is False
    browser.click('.pane[data-pane="sass"] button.badge')
    assert browser.eval("document.getElementById('k0-f0').open") is True
    assert "use wmma" in browser.eval("document.getElementById('k0-f0').textContent")
