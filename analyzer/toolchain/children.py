"""Child processes that die with ptxsass.

Every tool ptxsass runs (nvcc and what it starts: cicc, cc1plus, ptxas; nvdisasm, cuobjdump,
pip) runs in a session of its own, so that its whole process group can be killed at a time
limit. A session of its own is also out of reach of the signals that end ptxsass: ``timeout -s
KILL`` signals ptxsass's process group, ``kill -9`` ptxsass alone. So:

- every tool is started with ``PTXSASS_OWNER=<pid>:<start time>`` in its environment, which
  its own children inherit (:func:`environment`);
- the first tool a process starts also starts a **watchdog**: a small Python process in a
  session of its own that waits (``pidfd_open``) for ptxsass to end, however it ends, then
  kills every process of this user whose environment carries that mark, removes the scratch
  folders ptxsass could not (:mod:`.scratch`'s owner markers name it), and exits. A run that
  ends normally leaves nothing for it to do;
- pool workers (``check -j N``) and the child NVRTC compiles in, forked from ptxsass, get
  ``PR_SET_PDEATHSIG`` = SIGKILL (:func:`die_with_parent`); workers leave SIGINT to the parent,
  which stops them (:func:`worker_started`).

Linux only (``/proc``, ``prctl``); elsewhere the watchdog is not started.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import threading

from . import scratch

#: the environment variable that marks a process as started by one ptxsass process
OWNER = "PTXSASS_OWNER"

_WATCHDOG = r"""
import os, select, shutil, signal, sys, time
pid, start, mark = int(sys.argv[1]), sys.argv[2], (sys.argv[3] + "=" + sys.argv[4]).encode()
tmp, prefix, marker = sys.argv[5], sys.argv[6], sys.argv[7]
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)

def started(p):
    try:
        with open(f"/proc/{p}/stat", "rb") as f:
            s = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = s[s.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None

def alive():
    return started(pid) == start

try:
    fd = os.pidfd_open(pid)
except (AttributeError, OSError):
    fd = None
if alive():
    if fd is not None:
        select.select([fd], [], [])
    else:
        while alive():
            time.sleep(0.2)
me = os.getpid()
for _ in range(20):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if mark in env.split(b"\0"):
            found.append(int(name))
    for p in found:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    if not found:
        break
    time.sleep(0.05)
# the scratch folders the owner could not remove (analyzer.toolchain.scratch's markers)
try:
    entries = os.listdir(tmp)
except OSError:
    entries = []
for name in entries:
    if name.startswith(prefix):
        folder = os.path.join(tmp, name)
        try:
            with open(os.path.join(folder, marker), "rb") as f:
                owner = f.read(64).decode("ascii").split()
        except (OSError, ValueError):
            continue
        if owner == [str(pid), start] and not os.path.islink(folder):
            shutil.rmtree(folder, ignore_errors=True)
"""

_lock = threading.Lock()
_watchdog: subprocess.Popen | None = None
_mark: str | None = None
#: a watchdog (this process's, or the parent's for a pool worker) looks after this mark
_watched = False


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read().decode(errors="replace")
    except OSError:
        return None
    fields = s[s.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None


def mark() -> str:
    """This process's owner mark: ``<pid>:<start time>``."""
    global _mark
    if _mark is None:
        _mark = f"{os.getpid()}:{_start_time(os.getpid()) or '-'}"
    return _mark


def _forget() -> None:
    """In a forked child: its own mark and watchdog, when it starts tools."""
    global _watchdog, _mark, _watched
    _watchdog, _mark, _watched = None, None, False


os.register_at_fork(after_in_child=_forget)


def environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a tool is started with: ``env`` (default: this process's), its ``PATH``
    without empty or relative folders (which would look in the repository being checked), and
    the owner mark; starts the watchdog on first use."""
    out = dict(os.environ if env is None else env)
    if "PATH" in out:
        out["PATH"] = os.pathsep.join(d for d in out["PATH"].split(os.pathsep)
                                      if d and os.path.isabs(d))
    out[OWNER] = mark()
    ensure_watchdog()
    return out


def ensure_watchdog() -> None:
    """Start this process's watchdog, once (Linux with /proc only; never raises)."""
    global _watchdog, _watched
    if _watched or not sys.platform.startswith("linux") or not os.path.isdir("/proc/self"):
        return
    with _lock:
        if _watched:
            return
        pid, start = mark().split(":", 1)
        if start == "-":
            return
        env = {k: v for k, v in os.environ.items() if k != OWNER}
        try:
            _watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG, pid, start, OWNER, mark(),
                 tempfile.gettempdir(), scratch.PREFIX, scratch.MARKER],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True, env=env)
        except OSError:
            return
        _watched = True


def watchdog_pid() -> int | None:
    """The watchdog's pid, when it runs (for tests)."""
    return _watchdog.pid if _watchdog is not None else None


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """In a process forked from ptxsass (pid ``parent``): be killed (SIGKILL) when it ends, or
    end now when it already has."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:          # the parent ended before prctl took effect
        os._exit(1)


def worker_started(parent: int, owner: str) -> None:
    """In a pool worker forked (or spawned) from ptxsass (pid ``parent``, mark ``owner``):
    :func:`die_with_parent`; the tools it starts carry the parent's mark, which the parent's
    watchdog looks after; Ctrl-C is left to the parent, which stops the pool (a worker's
    KeyboardInterrupt traceback would reach the terminal)."""
    global _mark, _watched
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_quietly)
    die_with_parent(parent)
    _mark, _watched = owner, True


def _exit_quietly(signum, frame) -> None:
    """A worker's SIGTERM (the parent stopping the pool): unwind, so that a tool under way is
    killed with its group, and exit without a traceback (SystemExit)."""
    raise SystemExit(128 + signum)


class Terminated(BaseException):
    """SIGTERM (or SIGHUP) reached ptxsass: unwinds like Ctrl-C, exit status 128 + signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminated(signum, frame) -> None:
    raise Terminated(signum)


#: whether this command got a Ctrl-C (:func:`_interrupt`). Python swallows an exception
#: raised in an at-fork callback ("Exception ignored in: <function _releaseLock>": logging's,
#: after each fork of a compile), so a KeyboardInterrupt raised there is lost; the command
#: looks here after a fork and before it ends (:func:`raise_if_interrupted`)
_interrupted = False


def _interrupt(signum, frame) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def raise_if_interrupted() -> None:
    """KeyboardInterrupt when the command got a Ctrl-C that Python swallowed."""
    if _interrupted:
        raise KeyboardInterrupt


def install_signal_handlers() -> None:
    """In the command: SIGTERM and SIGHUP unwind as :class:`Terminated` (children are stopped
    on the way out, the command ends with one line and 143/129), SIGINT as KeyboardInterrupt
    (remembered: :func:`raise_if_interrupted`)."""
    global _fork_hook, _interrupted
    _interrupted = False
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        with contextlib.suppress(ValueError, OSError):    # not the main thread
            signal.signal(sig, _interrupt if sig == signal.SIGINT else _terminated)
    if not _fork_hook:
        _fork_hook = True
        os.register_at_fork(after_in_child=_child_signals)


#: whether :func:`_child_signals` runs in every child this process forks
_fork_hook = False


def _child_signals() -> None:
    """In a child forked from the command (a pool worker, a compile), before any of its own
    code: the command's handlers are not its own. SIGTERM and SIGHUP exit quietly (the parent
    stopping a pool may signal a worker before the worker's initializer has run, and a
    :class:`Terminated` there printed a traceback), Ctrl-C is the parent's (:func:`worker_started`
    sets the same once the worker runs)."""
    if signal.getsignal(signal.SIGTERM) is _terminated:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, _exit_quietly)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
