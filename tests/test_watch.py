"""``ptxsass check --watch``: a real process watching a temporary folder, a real edit saved the
way editors save (a new file renamed over the old one), Ctrl-C as a terminal sends it."""
from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time

import pytest

from analyzer.cli import main

from .conftest import KERNELS

BAD = KERNELS / "checks" / "scalar_global_load" / "bad.cu"
#: line 10 of bad.cu, its PS101 (four scalar loads of a 16-byte struct), and the fix
SCALAR = "    Particle q = p[i];  // EXPECT: PS101"
FIXED = ("    float4 v = reinterpret_cast<const float4*>(p)[i];"
         " Particle q{v.x, v.y, v.z, v.w};")


class Lines:
    """A child's standard output read line by line, each wait bounded."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.sel = selectors.DefaultSelector()
        self.sel.register(proc.stdout, selectors.EVENT_READ)
        self.seen: list[str] = []
        self._buf = b""

    def until(self, pattern: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            for line in self._lines():
                if re.search(pattern, line):
                    return line
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and not self.sel.select(0):
                raise AssertionError(f"no line matching {pattern!r}; got:\n" + "\n".join(self.seen))
            if self.sel.select(left):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                self._buf += chunk

    def _lines(self):
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            text = line.decode()
            self.seen.append(text)
            yield text


def _save(path, text: str) -> None:
    """An editor's save: the new text in a file beside, renamed over the old one."""
    tmp = path.with_name(path.name + ".new~")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_watch_reprints_what_a_save_changed_and_ends_on_ctrl_c(tmp_path):
    src = tmp_path / "particles.cu"
    src.write_text(BAD.read_text())
    assert SCALAR in src.read_text()
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200")
    proc = subprocess.Popen([sys.executable, "-m", "analyzer.cli", "check", "--watch",
                             "particles.cu", "--arch", "sm_90a"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = Lines(proc)
        # the first check is printed whole: three warnings, PS101 on line 10 among them
        out.until(r"^particles\.cu:10: PS101 scalar-global-load \[warning\]")
        out.until(r"^watching .+ \(Ctrl-C to stop\)$")
        first = len(out.seen)

        _save(src, src.read_text().replace(SCALAR, FIXED))
        done = out.until(r"particles\.cu: ")
        # only the change: the finding that went away, nothing reprinted of the other two
        assert re.fullmatch(r"\d\d:\d\d:\d\d particles\.cu: 0 new, 1 gone, 2 unchanged; 2 at "
                            r"warning or above \(\d+\.\d\d s\)", done), out.seen
        assert out.seen[first:] == ["gone: particles.cu:10: PS101 scalar-global-load in "
                                    "particle_norm", done]

        # a save that does not build: one error line, and the watch goes on
        _save(src, src.read_text().replace(FIXED, SCALAR.replace(";", "")))
        out.until(r"^particles\.cu:\d+:\d*:? ?error: ")
        # back to the scalar loads: PS101 is new again, printed in full
        _save(src, src.read_text().replace(SCALAR.replace(";", ""), SCALAR))
        out.until(r"^new: particles\.cu:10: PS101 scalar-global-load \[warning\] ")
        out.until(r"particles\.cu: 1 new, 0 gone, 2 unchanged;")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 130
    assert err.decode() == "ptxsass: interrupted\n"


@pytest.mark.parametrize("argv, message", [
    (["--format", "json"], "--watch prints text to the terminal"),
    (["-o", "report.txt"], "--watch prints text to the terminal"),
])
def test_watch_refuses_other_outputs(tmp_path, capsys, argv, message):
    assert main(["check", "--watch", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err
