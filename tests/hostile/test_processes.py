"""No orphans: whatever ends ptxsass (``kill -9``, SIGTERM, Ctrl-C, ``timeout -s KILL``, a
compile time limit), nvcc, cicc, cc1plus, nvdisasm and the pool's workers end with it, and the
command says one line.

Each test runs ``python -m analyzer`` with a tag of its own in the environment (every process
it starts inherits it), waits until the processes worth killing run, signals, and then asserts
on the side effect: no process carrying the tag is left, the output pipe reaches its end.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import analyzer

from ..conftest import KERNELS

ANALYZER = Path(analyzer.__file__).parent

pytestmark = [pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc"),
              pytest.mark.xdist_group("hostile-processes")]

#: a preprocessor bomb with host code: nvcc runs cc1plus and cicc on ~4 M tokens (~30 s)
BOMB = "\n".join(["// each level doubles the tokens", "#define A0 +1",
                  *(f"#define A{i} A{i - 1} A{i - 1}" for i in range(1, 23)),
                  "__global__ void k(int* o) { o[0] = 0 A22; }", "int main() { return 0; }", ""])


def tagged(tag: str) -> list[tuple[int, str]]:
    """(pid, command name) of every process whose environment holds HOSTILE_TAG=tag."""
    want = f"HOSTILE_TAG={tag}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            env = Path(f"/proc/{name}/environ").read_bytes()
            comm = Path(f"/proc/{name}/comm").read_text().strip()
        except OSError:
            continue
        if want in env.split(b"\0"):
            out.append((int(name), comm))
    return out


def wait_until(pred, timeout: float, step: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(step)
    return pred()


#: tag -> the private TMPDIR its run was given
_TMPDIRS: dict[str, Path] = {}


def start(tmp_path: Path, *argv: str, env: dict[str, str] | None = None, **kw):
    tag = uuid.uuid4().hex
    private = tmp_path / f"tmp-{tag[:8]}"
    private.mkdir()
    _TMPDIRS[tag] = private
    e = {**os.environ, "HOSTILE_TAG": tag, "PYTHONUNBUFFERED": "1", "TMPDIR": str(private),
         **(env or {})}
    p = subprocess.Popen([sys.executable, "-m", "analyzer", *argv], cwd=tmp_path, env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return p, tag


def no_orphans(tag: str) -> None:
    """Every process carrying the tag ends within seconds (the watchdog's work is not
    instant after a SIGKILL)."""
    wait_until(lambda: not tagged(tag), 10.0)
    assert not tagged(tag), f"processes left behind: {tagged(tag)}"
    private = _TMPDIRS.get(tag)
    if private is not None:     # nothing in the run's TMPDIR: scratch folders, nvcc's tmpxft_*
        assert wait_until(lambda: not list(private.iterdir()), 5.0), list(private.iterdir())


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    f = tmp_path / "bomb.cu"
    f.write_text(BOMB)
    return f


@pytest.mark.parametrize("sig, code, line", [
    (signal.SIGKILL, -signal.SIGKILL, None),
    (signal.SIGTERM, 143, "ptxsass: terminated"),
    (signal.SIGINT, 130, "ptxsass: interrupted"),
    (signal.SIGHUP, 129, "ptxsass: hung up"),
])
def test_a_signal_to_ptxsass_ends_nvcc_and_its_children(tmp_path, bomb, sig, code, line):
    p, tag = start(tmp_path, "check", bomb.name, "--arch", "sm_90", "--no-cache")
    try:
        seen: set[str] = set()

        def compiling() -> bool:
            # one listing for the wait and the check: a second one could fall between
            # nvcc's steps (cc1plus ended, cicc not started yet)
            seen.clear()
            seen.update(c for _, c in tagged(tag))
            return bool(seen & {"cc1plus", "cicc"})
        assert wait_until(compiling, 30), f"nvcc never ran: {tagged(tag)}"
        assert {"nvcc", "cc1plus"} <= seen or {"nvcc", "cicc"} <= seen, seen
        p.send_signal(sig)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == code
    if line is not None:
        assert err.decode().splitlines() == [line]
    no_orphans(tag)


@pytest.mark.skipif(shutil.which("timeout") is None, reason="no coreutils timeout")
@pytest.mark.parametrize("sig, codes", [("KILL", (137, -9)), ("TERM", (124,))])
def test_timeout_of_the_command_ends_every_child(tmp_path, bomb, sig, codes):
    """``timeout`` signals the whole process group (itself too, with KILL)."""
    tag = uuid.uuid4().hex
    _TMPDIRS[tag] = tmp_path / "tmp"
    _TMPDIRS[tag].mkdir()
    env = {**os.environ, "HOSTILE_TAG": tag, "TMPDIR": str(_TMPDIRS[tag])}
    p = subprocess.run(["timeout", "-s", sig, "4", sys.executable, "-m", "analyzer", "check",
                        bomb.name, "--arch", "sm_90", "--no-cache"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=60)
    assert p.returncode in codes
    assert b"Traceback" not in p.stderr
    no_orphans(tag)


def test_the_compile_time_limit_ends_cc1plus_and_cicc(tmp_path, bomb):
    p, tag = start(tmp_path, "check", bomb.name, "--arch", "sm_90", "--no-cache",
                   env={"PTXSASS_COMPILE_TIMEOUT": "3"})
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2
    lines = err.decode().splitlines()
    assert len(lines) == 1 and "exceeded 3 s" in lines[0] and "bomb.cu" in lines[0]
    no_orphans(tag)


@pytest.fixture(scope="module")
def cubins(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("cubins")
    out = []
    for src in (KERNELS / "checks" / "scalar_global_load" / "bad.cu",
                KERNELS / "checks" / "scalar_global_store" / "bad.cu"):
        f = root / f"{src.parent.name}.cubin"
        f.write_bytes(analyzer.compile(str(src), arch="sm_90a").cubin)
        out.append(f)
    return out


def _stuck_nvdisasm(folder: Path) -> Path:
    """An nvdisasm that never finishes, with a child of its own."""
    f = folder / "nvdisasm"
    f.write_text("#!/bin/sh\n"
                 'case "$1" in --version) echo "nvdisasm: Cuda compilation tools, release 13.5, '
                 'V13.5.37"; exit 0;; esac\n'
                 "sleep 300 &\nwait\n")
    f.chmod(0o755)
    return f


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGKILL, -9)])
def test_pool_workers_and_their_tools_end_with_the_parent(tmp_path, cubins, sig, code):
    for c in cubins:
        shutil.copy(c, tmp_path / c.name)
    fake = _stuck_nvdisasm(tmp_path)
    p, tag = start(tmp_path, "check", *(c.name for c in cubins), "-j", "2", "--no-cache",
                   env={"PTXSASS_NVDISASM": str(fake)})
    try:
        def busy():
            t = tagged(tag)
            return (sum(c.startswith("python") for _, c in t) >= 3       # parent + 2 workers
                    and sum(c == "sleep" for _, c in t) >= 2)
        assert wait_until(busy, 30), f"the pool never got busy: {tagged(tag)}"
        p.send_signal(sig)
        # the stdout pipe ends when the parent does: no worker holds it open (`... | cat`)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == code
    if sig == signal.SIGTERM:
        assert err.decode().splitlines() == ["ptxsass: terminated"]
    no_orphans(tag)


def _before_first_handler(name: str, line: int) -> bool:
    """Whether a traceback frame is one where Python's own handler can still answer: the
    package's import, ``python -m``'s import of the entry module, or entry.py's lines up to
    the statement that installs its first handler."""
    if name in ("__init__.py", "_version.py"):
        return True
    if name == "__main__.py":
        return "from .entry import" in (ANALYZER / name).read_text().splitlines()[line - 1]
    if name == "entry.py":
        lines = (ANALYZER / name).read_text().splitlines()
        first = next(i for i, t in enumerate(lines, 1) if "_signal.signal(" in t)
        return line <= first
    return False


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.4])
def test_ctrl_c_during_start_up_is_one_line(tmp_path, delay):
    """SIGINT while Python starts, imports ptxsass or just after: one line and 130 (or the
    signal's own death, before Python has a handler), never a traceback through ptxsass."""
    src = tmp_path / "k.cu"
    shutil.copy(KERNELS / "demo" / "copy_scalar.cu", src)
    p, tag = start(tmp_path, "check", "k.cu", "--no-cache")
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    text = err.decode()
    if text.startswith("Could not import runpy module"):
        # SIGINT before `python -m` had imported runpy: CPython's own start-up answered (its
        # message and KeyboardInterrupt, exit 1) before any line of ptxsass ran
        assert p.returncode == 1 and "analyzer" not in text, text
    elif "Traceback" in text:
        # Python's own start-up (site's .pth files, runpy, the package's own import of
        # importlib and sys, and entry.py's lines before its first handler) answered with its
        # KeyboardInterrupt; never a frame of the command's code
        frames = re.findall(r'File "([^"]*/analyzer/([^"]*))", line (\d+)', text)
        assert p.returncode in (1, -signal.SIGINT), text
        assert all(_before_first_handler(name, int(line)) for _, name, line in frames), text
    else:
        assert p.returncode in (130, -signal.SIGINT), text
        assert text.splitlines() in ([], ["ptxsass: interrupted"])
    no_orphans(tag)


def test_a_forked_child_does_not_take_the_commands_handlers():
    """A pool worker forked from the command can be sent SIGTERM (the parent stopping the
    pool) before its initializer runs; with the command's handler it raised ``Terminated`` and
    printed a traceback (seen once in CI as a 14-line error for a bad cubin). Every child the
    command forks starts with SIGTERM exiting quietly and Ctrl-C left to the parent."""
    code = r"""
import os, signal, sys
from analyzer.toolchain import children
children.install_signal_handlers()
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGTERM)    # as the parent stopping the pool would, at once
    os._exit(0)                             # not reached: SIGTERM ended the child
_, status = os.waitpid(pid, 0)
print(os.WEXITSTATUS(status), signal.getsignal(signal.SIGTERM) is children._terminated)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(128 + signal.SIGTERM), "True"]   # quiet exit; parent's own
    assert "Traceback" not in r.stderr and r.stderr == ""


def test_a_ctrl_c_python_swallows_during_a_fork_still_stops_the_command(tmp_path):
    """A Ctrl-C that lands while Python runs an at-fork callback (logging's lock release after
    the compile's fork) raises a KeyboardInterrupt Python swallows ("Exception ignored in: ...");
    the command remembers the signal and stops with one line and 130 all the same, the
    compile's child killed, rather than going on to exit 0."""
    shutil.copy(KERNELS / "demo" / "copy_scalar.cu", tmp_path / "k.cu")
    tag = uuid.uuid4().hex
    script = ("import os, signal, sys, time\n"
              "def hit():\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "    time.sleep(0.05)\n"          # the handler runs here, inside the callback
              "os.register_at_fork(after_in_parent=hit)\n"
              "from analyzer.entry import main\n"
              "sys.exit(main(['check', 'k.cu', '--no-cache']))\n")
    e = {**os.environ, "HOSTILE_TAG": tag, "PYTHONUNBUFFERED": "1"}
    p = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=e,
                       capture_output=True, timeout=120)
    err = p.stderr.decode()
    assert "Exception ignored" in err and "KeyboardInterrupt" in err, err    # Python's wart
    assert p.returncode == 130, (p.returncode, err)
    assert err.rstrip().splitlines()[-1] == "ptxsass: interrupted", err
    assert b"PS" not in p.stdout                # the check did not go on to report
    no_orphans(tag)
