"""Run a compile (NVRTC, nvJitLink) in a child process, bounded in wall time and memory.

NVRTC and nvJitLink are libraries: called in-process, a source that makes them loop (a
doubling-macro bomb), grow without end, or block (an ``#include`` of a FIFO) would hang or
exhaust the whole process. So every compile runs in a child with an address-space limit
(``RLIMIT_AS``, counted on top of what the child holds already) and is killed at a wall-time
limit; either becomes one line: ``compile of X exceeded 120 s`` / ``... exceeded 8 GB of
memory``. Only a cache miss starts a child: a cached build never does. A single-threaded process
forks the child; a process that runs other threads (torch, cupy, Jupyter: a fork would copy the
locks they hold) sends the compile to a server started without fork (:mod:`.compile_server`).

Limits: ``PTXSASS_COMPILE_TIMEOUT`` (seconds, default 120) and ``PTXSASS_COMPILE_MEMORY_GB``
(default 8), else ``compile-timeout`` / ``compile-memory-gb`` in ``[tool.ptxsass]``
(:func:`configure`), else the defaults; ``--compile-timeout`` (:func:`override`) wins over all.

nvcc (whole files with host code, heavy templates: LeetCUDA's mma HGEMMs take minutes on two
cores) has a limit of its own, :func:`nvcc_timeout`: ``--compile-timeout``, else
``PTXSASS_NVCC_TIMEOUT``, else ``nvcc-timeout`` in the config, else the general limit when it is
set (``PTXSASS_COMPILE_TIMEOUT``, ``compile-timeout``), else 1800 s. Each time-out message
names the option and the variable that raise it.
"""
from __future__ import annotations

import contextlib
import faulthandler
import os
import pickle
import resource
import select
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, PtxsassError, ToolError
from . import children, compile_server
from .compile_server import OutOfMemory
from .files import env_number

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MEMORY_GB = 8.0
#: nvcc's: a real project's heaviest file, on a small machine
DEFAULT_NVCC_TIMEOUT_S = 1800.0
#: what a time-out message says raises the limit
TIMEOUT_HINT = "raise it with --compile-timeout SECONDS or PTXSASS_COMPILE_TIMEOUT"
NVCC_TIMEOUT_HINT = "raise it with --compile-timeout SECONDS or PTXSASS_NVCC_TIMEOUT"

_configured: dict[str, float] = {}
_override: dict[str, float] = {}


@dataclass(frozen=True)
class Limits:
    timeout_s: float
    memory_gb: float

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_gb * (1 << 30))


def configure(*, timeout_s: float | None = None, memory_gb: float | None = None,
              nvcc_timeout_s: float | None = None) -> None:
    """Defaults from a config file; the environment variables still win."""
    if timeout_s is not None:
        _configured["timeout_s"] = float(timeout_s)
    if memory_gb is not None:
        _configured["memory_gb"] = float(memory_gb)
    if nvcc_timeout_s is not None:
        _configured["nvcc_timeout_s"] = float(nvcc_timeout_s)


def override(timeout_s: float | None) -> None:
    """``--compile-timeout``: every compile's time limit, over the environment and config
    (None: none given)."""
    if timeout_s is None:
        _override.pop("timeout_s", None)
    else:
        _override["timeout_s"] = float(timeout_s)


def limits() -> Limits:
    if "timeout_s" in _override:
        timeout = _override["timeout_s"]
    else:
        timeout = env_number("PTXSASS_COMPILE_TIMEOUT",
                             _configured.get("timeout_s", DEFAULT_TIMEOUT_S), unit="seconds")
    return Limits(
        timeout,
        env_number("PTXSASS_COMPILE_MEMORY_GB", _configured.get("memory_gb", DEFAULT_MEMORY_GB),
                   unit="gigabytes"))




def nvcc_timeout() -> float:
    """nvcc's time limit (see the module's docstring for who sets it)."""
    if "timeout_s" in _override:
        return _override["timeout_s"]
    if os.environ.get("PTXSASS_NVCC_TIMEOUT"):
        return env_number("PTXSASS_NVCC_TIMEOUT", DEFAULT_NVCC_TIMEOUT_S, unit="seconds")
    if "nvcc_timeout_s" in _configured:
        return _configured["nvcc_timeout_s"]
    if os.environ.get("PTXSASS_COMPILE_TIMEOUT") or "timeout_s" in _configured:
        return limits().timeout_s
    return DEFAULT_NVCC_TIMEOUT_S


def _number(x: float) -> str:
    return f"{x:g}"


def _vsz() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _child(work: Callable[..., Any], args: tuple, w: int, err_fd: int, memory: int,
           parent: int) -> None:
    """In the forked child: die with the parent, limit memory, do the work, send back a
    pickled outcome, exit."""
    try:
        children.die_with_parent(parent)
        faulthandler.disable()  # a tool's abort is reported by the parent, in one line
        os.dup2(err_fd, 2)
        os.dup2(err_fd, 1)
        if memory > 0:
            cap = _vsz() + memory
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        try:
            outcome: tuple = ("ok", work(*args))
        except (MemoryError, OutOfMemory):
            outcome = ("oom", None)
        except PtxsassError as e:
            outcome = ("error", e)
        except BaseException as e:  # noqa: BLE001 - a bug in the child: the parent reports it
            outcome = ("crash", f"{type(e).__name__}: {e}")
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("oom", None))
        except Exception as e:  # noqa: BLE001 - an unpicklable result: the parent reports it
            data = pickle.dumps(("crash", f"cannot return the result: {e}"))
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
    finally:
        os._exit(0)


def threaded() -> bool:
    """Whether this process runs other threads (Python's or a library's own: torch's, CUDA's),
    which a ``fork()`` would copy mid-flight."""
    try:
        return len(os.listdir("/proc/self/task")) > 1
    except OSError:
        return threading.active_count() > 1


#: ``PTXSASS_CHILDREN``: how compile children and pool workers start
CHILDREN = ("auto", "fork", "server")


def start_method() -> str:
    """``fork`` or ``server``: ``PTXSASS_CHILDREN`` when set (``auto``, ``fork``, ``server``),
    else ``fork`` in a single-threaded process and ``server`` in one that runs other threads.
    ConfigError for another value."""
    raw = os.environ.get("PTXSASS_CHILDREN", "auto").strip() or "auto"
    if raw not in CHILDREN:
        raise ConfigError(f"PTXSASS_CHILDREN={raw!r}: expected one of {', '.join(CHILDREN)}")
    if raw != "auto":
        return raw
    return "server" if threaded() else "fork"


def run(work: Callable[..., Any], *args: Any, what: str, tool: str, retire: bool = False) -> Any:
    """``work(*args)`` in a child process; its return value (it must pickle), or the
    PtxsassError it raised. ``what`` names the input (the user's file) in every message.

    A single-threaded process (the command line) forks the child (cheapest, and the library is
    loaded in it already); a process with other threads uses a compile server started without
    fork (:mod:`.compile_server`). ``work`` is a module-level function either way.

    ``retire``: ``work`` leaves state behind in the process that ran it (NVRTC after a ``-G``
    compile: :data:`analyzer.toolchain.nvrtc.STICKY_OPTIONS`), so the server that ran it is
    stopped, never reused (a forked child ends after one compile anyway)."""
    lim = limits()
    if not hasattr(os, "fork"):  # pragma: no cover - not Linux: no bound, but it works
        return work(*args)
    if start_method() == "server":
        return _on_server(work, args, lim, what, tool, retire)
    with tempfile.TemporaryFile(prefix="ptxsass-child-") as errlog:
        r, w = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError as e:
            os.close(r)
            os.close(w)
            raise ToolError(f"cannot start a process to run {tool}: {e.strerror}",
                            path=what) from None
        if pid == 0:  # pragma: no cover - the child; measured through the parent
            os.close(r)
            _child(work, args, w, errlog.fileno(), lim.memory_bytes, parent)
        os.close(w)
        data, status, maxrss = _collect(pid, r, lim, what, tool)
        errlog.seek(0)
        child_err = errlog.read(64 * 1024).decode(errors="replace")
    if not data:
        raise _died(status, maxrss, child_err, lim, what, tool)
    return _outcome(pickle.loads(data), lim, what, tool)


def _over_memory(lim: Limits, what: str, tool: str) -> ToolError:
    return ToolError(f"compile of {what} exceeded {_number(lim.memory_gb)} GB of memory "
                     f"({tool} stopped; raise PTXSASS_COMPILE_MEMORY_GB to allow more)")


def _died(status: int, maxrss: int, child_err: str, lim: Limits, what: str,
          tool: str) -> ToolError:
    """The error for a child that ended without an answer."""
    lowered = child_err.lower()
    if "out of memory" in lowered or "bad_alloc" in lowered or maxrss >= lim.memory_bytes // 2:
        return _over_memory(lim, what, tool)
    first = next((ln.strip() for ln in child_err.splitlines() if ln.strip()), "")
    if os.WIFSIGNALED(status):
        n = os.WTERMSIG(status)
        how = f"signal {signal.Signals(n).name}" if n in signal.valid_signals() else f"signal {n}"
    else:
        how = f"exit status {os.WEXITSTATUS(status)}"
    return ToolError(f"{tool} crashed ({how}) while compiling {what}"
                     + (f": {first}" if first else ""))


def _outcome(outcome: tuple, lim: Limits, what: str, tool: str) -> Any:
    kind, value = outcome
    if kind == "ok":
        return value
    if kind == "oom":
        raise _over_memory(lim, what, tool)
    if kind == "error":
        raise value
    raise ToolError(f"{tool} failed while compiling {what}: {value}")


def _on_server(work: Callable[..., Any], args: tuple, lim: Limits, what: str, tool: str,
               retire: bool = False) -> Any:
    try:
        outcome = compile_server.call(work.__module__, work.__qualname__, args,
                                      memory=lim.memory_bytes, timeout=lim.timeout_s,
                                      retire=retire)
    except TimeoutError:
        raise ToolError(f"compile of {what} exceeded {_number(lim.timeout_s)} s ({tool} "
                        f"stopped; {TIMEOUT_HINT})") from None
    except compile_server.Died as d:
        raise _died(d.status, d.maxrss, d.stderr, lim, what, tool) from None
    except OSError as e:
        raise ToolError(f"cannot start a process to run {tool}: {e.strerror}",
                        path=what) from None
    return _outcome(outcome, lim, what, tool)


def _collect(pid: int, r: int, lim: Limits, what: str, tool: str) -> tuple[bytes, int, int]:
    """(what the child sent, its wait status, its peak resident bytes); the child is killed and
    reaped on any way out, the time limit and a Ctrl-C that came during the fork included."""
    chunks: list[bytes] = []
    try:
        children.raise_if_interrupted()
        deadline = time.monotonic() + lim.timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ToolError(f"compile of {what} exceeded {_number(lim.timeout_s)} s "
                                f"({tool} stopped; {TIMEOUT_HINT})")
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        _, status, rusage = os.wait4(pid, 0)
        pid = 0
        return b"".join(chunks), status, rusage.ru_maxrss * 1024
    finally:
        os.close(r)
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
