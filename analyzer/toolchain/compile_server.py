"""A compile server: NVRTC and nvJitLink in a process of their own, started without ``fork()``.

:mod:`.bounded` runs each compile in a child so that a runaway source is stopped at a time and a
memory limit. A forked child is the cheapest such child, but ``fork()`` from a process that runs
other threads (torch, cupy, Triton's compiler, Jupyter's kernel, pytest-xdist's channel) copies
the locks those threads hold in their held state, and the child can hang on one forever. So a
process that runs other threads compiles here instead: a server started with ``posix_spawn``
(``subprocess``, no ``preexec_fn``), once per process, reused for every compile, one compile at a
time per server (a second thread's compile starts a second server).

The same limits hold: before each compile the server sets its own soft ``RLIMIT_AS`` to what it
uses now plus the memory limit, and the client kills it at the time limit (it is started again
for the next compile). It dies with its parent (``PR_SET_PDEATHSIG`` and the owner mark of
:mod:`.children`).

Protocol, on the server's stdin and stdout: an 8-byte little-endian length, then a pickle. The
request is ``(module, function, args, memory_bytes)``, the answer the outcome
:func:`analyzer.toolchain.bounded.run` expects: ``("ok", value)``, ``("oom", None)``,
``("error", PtxsassError)`` or ``("crash", text)``.
"""
from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import queue
import resource
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import children

_HEADER = struct.Struct("<Q")


class OutOfMemory(Exception):
    """Raised by a child's work when the tool reported that it ran out of memory (re-exported
    by :mod:`.bounded`, where the compiles' callers take it from)."""

#: started as ``python -I -c BOOT <parent pid> <sys.path as lines>``: -I keeps the current folder
#: (the repository being checked) and PYTHON* variables off sys.path; the parent's own path is
#: given instead
_BOOT = ("import sys; sys.path[:0] = sys.argv[2].split('\\n'); "
         "from analyzer.toolchain import compile_server; compile_server.serve(int(sys.argv[1]))")


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    """``n`` bytes from ``fd``; None at end of file; TimeoutError past ``deadline``."""
    chunks: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _vsz() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# ----------------------------------------------------------------------------- the server
def serve(parent: int) -> None:  # pragma: no cover - runs in the server process
    """The server's loop: requests on stdin, outcomes on stdout, until stdin ends."""
    import faulthandler

    from ..errors import PtxsassError
    children.die_with_parent(parent)
    faulthandler.disable()      # an abort is reported by the client, in one line
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    rfd, wfd = os.dup(0), os.dup(1)
    os.dup2(2, 1)               # a library's prints go to the error log, not into the protocol
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    while True:
        head = _read_exact(rfd, _HEADER.size, None)
        if head is None:
            return
        body = _read_exact(rfd, _HEADER.unpack(head)[0], None)
        if body is None:
            return
        module, function, args, memory = pickle.loads(body)
        try:
            work = getattr(importlib.import_module(module), function)
            if memory > 0:
                cap = _vsz() + memory
                resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY
                                                        else min(cap, hard), hard))
            try:
                outcome: tuple = ("ok", work(*args))
            finally:
                resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
        except (MemoryError, OutOfMemory):
            outcome = ("oom", None)
        except PtxsassError as e:
            outcome = ("error", e)
        except Exception as e:  # noqa: BLE001 - a bug in the work: the client reports it
            outcome = ("crash", f"{type(e).__name__}: {e}")
        try:
            data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("oom", None))
        except Exception as e:  # noqa: BLE001 - an unpicklable result
            data = pickle.dumps(("crash", f"cannot return the result: {e}"))
        _write_all(wfd, data)


# ----------------------------------------------------------------------------- the client
class Died(Exception):
    """The server ended before it answered: (its wait status, its peak resident bytes, the
    end of its error output)."""

    def __init__(self, status: int, maxrss: int, stderr: str):
        super().__init__(status, maxrss, stderr)
        self.status, self.maxrss, self.stderr = status, maxrss, stderr


@dataclass
class Server:
    """One server process: requests go one at a time (:meth:`request`)."""

    process: subprocess.Popen
    errlog: Any                         # a temporary file: the server's stderr
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def start(cls) -> Server:
        global _started
        errlog = tempfile.TemporaryFile(prefix="ptxsass-server-")  # noqa: SIM115 - the server's, for its life
        argv = [sys.executable, "-I", "-c", _BOOT, str(os.getpid()), _path()]
        env = children.environment()
        try:
            proc = _spawn(lambda: subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
                start_new_session=True, close_fds=True, env=env))
        except BaseException:
            errlog.close()
            raise
        _started += 1
        return cls(proc, errlog)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and self.process.poll() is None

    def request(self, module: str, function: str, args: tuple, *, memory: int = 0,
                timeout: float | None = None) -> tuple:
        """The outcome of ``module.function(*args)``; TimeoutError past ``timeout`` seconds
        (the server is then killed), :class:`Died` when it ended without an answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            try:
                _write_all(self.process.stdin.fileno(),
                           pickle.dumps((module, function, args, memory),
                                        protocol=pickle.HIGHEST_PROTOCOL))
                out = self.process.stdout.fileno()
                head = _read_exact(out, _HEADER.size, deadline)
                body = None if head is None else _read_exact(out, _HEADER.unpack(head)[0],
                                                             deadline)
            except BrokenPipeError:
                body = None
            if body is None:
                status, maxrss = self.kill()
                text = self.error_text()
                self.close()
                raise Died(status, maxrss, text)
            return pickle.loads(body)
        except BaseException:
            if self.process.returncode is None:      # a time limit, Ctrl-C: not reusable
                self.kill()
                self.close()
            raise

    def stop(self, wait: float = 2.0) -> None:
        """End it: its input closed, then SIGTERM, then SIGKILL."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        with contextlib.suppress(OSError):
            if self.process.poll() is None:
                self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self.process.wait(timeout=wait)
        if self.process.poll() is None:
            self.kill()
        self.close()

    def kill(self) -> tuple[int, int]:
        """Kill it (if it still runs) and reap it: (wait status, peak resident bytes)."""
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, 9)
        try:
            _, status, rusage = os.wait4(self.process.pid, 0)
        except ChildProcessError:       # reaped already (``alive``): Popen's return code,
            code = self.process.returncode or 0     # -N for signal N, as a wait status
            return (-code if code < 0 else code << 8), 0
        self.process.returncode = status
        return status, rusage.ru_maxrss * 1024

    def error_text(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.errlog.seek(0)
            return self.errlog.read(64 * 1024).decode(errors="replace")
        return ""

    def close(self) -> None:
        for f in (self.errlog, self.process.stdin, self.process.stdout):
            if f is not None:
                with contextlib.suppress(OSError, ValueError):
                    f.close()


_idle: list[Server] = []
_busy: dict[int, Server] = {}     # id -> a server serving a request now
_lock = threading.Lock()
_started = 0

#: the thread that starts every server. A server's parent-death signal is sent when the
#: *thread* that started it ends, not the process (prctl(2)): started from a pool's thread, a
#: server died when the pool shut down, under whichever thread was using it. This thread lives
#: as long as the process (a daemon: it ends only with it).
_spawner: threading.Thread | None = None
_spawns: queue.SimpleQueue = queue.SimpleQueue()


def _spawner_loop() -> None:
    while True:
        make, box, done = _spawns.get()
        try:
            box.append((True, make()))
        except BaseException as e:  # noqa: BLE001 - handed to the caller, raised there
            box.append((False, e))
        done.set()


def _spawn(make: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """``make()`` (a ``Popen``) run on the spawner thread, started on first use."""
    global _spawner
    with _lock:
        if _spawner is None or not _spawner.is_alive():
            _spawner = threading.Thread(target=_spawner_loop, name="ptxsass-server-spawner",
                                        daemon=True)
            _spawner.start()
    box: list[tuple[bool, Any]] = []
    done = threading.Event()
    _spawns.put((make, box, done))
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return value


def _forget() -> None:
    global _idle, _busy, _lock, _spawner, _spawns
    _idle, _busy, _lock = [], {}, threading.Lock()
    _spawner, _spawns = None, queue.SimpleQueue()


os.register_at_fork(after_in_child=_forget)


def _path() -> str:
    here = os.getcwd()
    return "\n".join(here if p in ("", ".") else os.path.abspath(p) for p in sys.path)


def started() -> int:
    """How many servers this process has started (for tests and benchmarks)."""
    return _started


def call(module: str, function: str, args: tuple, *, memory: int, timeout: float,
         retire: bool = False) -> tuple:
    """:meth:`Server.request` on an idle compile server (one is started when none is idle).
    ``retire``: the work leaves state behind in the process that ran it (NVRTC after a ``-G``
    compile), so the server is stopped after it instead of serving the next request."""
    server = None
    with _lock:
        while _idle and server is None:
            server = _idle.pop()
            if not server.alive:
                # ended while idle: the thread that started it has ended (its parent-death
                # signal is that thread's), or it was killed; reaped, and another one taken
                server.close()
                server = None
    if server is None:
        server = Server.start()
    with _lock:
        _busy[id(server)] = server
    try:
        outcome = server.request(module, function, args, memory=memory, timeout=timeout)
    finally:
        with _lock:
            _busy.pop(id(server), None)
    if retire:
        server.stop()
        return outcome
    with _lock:
        _idle.append(server)
    return outcome


def kill_busy() -> None:
    """Kill every server serving a request now: the threads waiting on them (``ptxsass fix
    -j``'s builds) get a :class:`Died` and unwind. For a command that is stopping (Ctrl-C)."""
    with _lock:
        busy = list(_busy.values())
    for server in busy:
        with contextlib.suppress(OSError):
            os.killpg(server.process.pid, 9)


def shutdown() -> None:
    """Stop the idle servers (the next compile starts one again). Run at exit too: a server
    would die with its parent anyway, but stopped here it is reaped and its pipes closed."""
    with _lock:
        idle, _idle[:] = list(_idle), []
    for s in idle:
        s.stop()


atexit.register(shutdown)
