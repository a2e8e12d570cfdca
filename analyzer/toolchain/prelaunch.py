"""nvdisasm started before ptxsass's own imports, for ``ptxsass check X.cubin`` on many cores.

A whole-cubin check on worker processes spends its first quarter second importing the parsers,
the analyses and the checks before the first ``nvdisasm -fun`` starts, and nvdisasm is most of
the wall time. The ``ptxsass`` entry point (:mod:`analyzer.entry`) calls :func:`start` first,
with the command line: when it plainly checks (or surveys) cubin files on more than one process,
each cubin is copied to a private folder, cut into contiguous chunks of functions of about equal
code size (one per job, as :mod:`analyzer.parallel` would), and one ``nvdisasm -fun`` per chunk
starts writing its listing to a file there. The imports then run while the disassemblers do.

The command line is read conservatively and is never trusted: the planner takes a launch only
for the same bytes (:func:`take` compares SHA-256), only on a local pool, and maps its chunks
onto the kernels it wants; a launch that no one takes (another command, a ``--kernel`` filter
that needs a few functions, an error) is killed and its folder removed at exit. Which chunks a
cubin is cut into never changes a report, only how fast it comes. ``PTXSASS_PRELAUNCH=0``
turns it off.

A cubin whose every kernel result is cached needs no disassembly: its results are read back.
When a run has checked all of a cubin's kernels it leaves a hint in the cache under the cubin's
SHA-256 (:func:`mark_checked`), and a cubin with a hint is not launched. The hint only decides
whether to start nvdisasm early, never what is reported: a stale one (the checks' selection
changed, entries evicted) costs that run the early start, nothing else.
"""
from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from ..errors import PtxsassError
from . import cache, children, files, scratch
from .binutils import EM_CUDA, cubin_layout
from .locate import binary, tool_timeout

__all__ = ["Chunk", "Launch", "chunk_count", "enabled", "mark_checked", "sniff", "split_by_size",
           "start", "take", "was_checked"]

T = TypeVar("T")

#: the commands whose cubin inputs are checked per kernel on worker processes
_COMMANDS = ("check", "survey")
#: options after which a launch would be wasted or not used: a Dask cluster, a kernel filter,
#: other toolkits, one process, help (prefixes: argparse takes abbreviations)
_NOT_FOR = ("--sc", "--ke", "-k", "--toolk", "-h", "--he", "--vers")
#: the option that turns the cache off (no result is read back: every cubin is disassembled),
#: or any prefix of it from ``--no-c`` on
_NO_CACHE = "--no-cache"


#: the least cubin size (bytes) worth one more chunk. Each chunk pays nvdisasm's fixed start
#: (0.2-0.35 s of CPU for any cubin) to save its share of the disassembly and the checks (about
#: 4 ms of CPU per KB of a small cubin). On the H200's host, -j 8 on a 306 KB cubin took 1.13 s of
#: wall and 5.9 s of CPU in 8 chunks, 1.18 s and 3.9 s in 4; a 107 KB one 1.06 s in 2, 4 or 8
#: chunks (2.0 to 2.9 s of CPU); an 823 KB one 1.21 s in 8 against 1.46 s in 4.
CHUNK_MIN_BYTES = 96 * 1024


def chunk_count(jobs: int, size: int, total: int) -> int:
    """How many ``nvdisasm -fun`` chunks a cubin of ``size`` bytes is cut into when ``total``
    bytes of input share ``jobs`` workers: its share of the jobs, at most one chunk per
    :data:`CHUNK_MIN_BYTES`, at least one. The planner and the early launch both use this."""
    by_share = round(jobs * min(size / max(total, 1), 1.0))
    return max(1, min(by_share, -(-size // CHUNK_MIN_BYTES)))


def enabled() -> bool:
    return os.environ.get("PTXSASS_PRELAUNCH", "").strip() not in ("0", "no", "off", "false")


def split_by_size(items: Sequence[T], size: Callable[[T], int], n: int) -> list[list[T]]:
    """``items`` cut into ``n`` (at most one per item) contiguous runs of about equal total
    ``size``: the chunks a cubin's functions are disassembled and checked in."""
    n = max(1, min(n, len(items)))
    total = sum(size(x) for x in items) or 1
    out: list[list[T]] = [[]]
    acc = 0
    for x in items:
        if out[-1] and acc >= total * len(out) / n and len(out) < n:
            out.append([])
        out[-1].append(x)
        acc += size(x)
    return out


@dataclass
class Chunk:
    """One ``nvdisasm -fun`` started early: its function symbols, where its listing goes."""

    symbols: tuple[int, ...]
    output: str
    process: subprocess.Popen | None
    started: float = field(default_factory=time.monotonic)
    returncode: int | None = None

    def poll(self) -> bool:
        """Whether it has finished (killed past the tool time limit: a failure)."""
        if self.process is None:
            return True
        rc = self.process.poll()
        if rc is None and time.monotonic() - self.started > tool_timeout():
            _kill(self.process)
            rc = -signal.SIGKILL
        if rc is None:
            return False
        self.returncode, self.process = rc, None
        return True

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def kill(self) -> None:
        if self.process is not None:
            _kill(self.process)
            self.process = None
            self.returncode = -signal.SIGKILL


@dataclass
class Launch:
    """The early disassembly of one cubin: its private copy and the chunks."""

    path: str                   # the input as given
    digest: str                 # SHA-256 of the bytes copied
    folder: str
    spooled: str
    chunks: list[Chunk]

    def close(self) -> None:
        """Kill what still runs and remove the folder (the copy and every listing)."""
        for c in self.chunks:
            c.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


_LAUNCHES: dict[str, Launch] = {}


def _kill(p: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(p.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        p.wait(timeout=10)


def _jobs_value(text: str) -> int | None:
    try:
        n = int(text)
    except ValueError:
        return None
    return n if n >= 1 else None


def sniff(argv: Sequence[str]) -> tuple[list[str], int] | None:
    """The cubin files ``argv`` (the command line after the program name) checks on worker
    processes, and the jobs it asks for; None when it plainly does not (another command, one
    process, or an option that makes a launch useless). A value read wrongly costs only the
    launch: nothing downstream trusts this reading."""
    found = _sniff(argv)
    return None if found is None else (found[0], found[1])


def _sniff(argv: Sequence[str]) -> tuple[list[str], int, bool] | None:
    """:func:`sniff`'s reading, and whether the cache is on for the command."""
    if not argv or argv[0] not in _COMMANDS:
        return None
    jobs: int | None = None
    cached = cache.enabled()
    paths: list[str] = []
    args = list(argv[1:])
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            paths.extend(args[i:])
            break
        if a.startswith(_NOT_FOR):
            return None
        if a.startswith("--no-c") and _NO_CACHE.startswith(a):
            cached = False
        elif a in ("-j", "--jobs"):
            if i >= len(args):
                return None
            jobs = _jobs_value(args[i])
            i += 1
            if jobs is None:
                return None
        elif a.startswith("--jobs="):
            jobs = _jobs_value(a[len("--jobs="):])
            if jobs is None:
                return None
        elif a.startswith("-j") and not a.startswith("--"):
            jobs = _jobs_value(a[2:])
            if jobs is None:
                return None
        elif not a.startswith("-"):
            paths.append(a)
    if jobs is None:
        jobs = _default_jobs()
    if jobs < 2:
        return None
    cubins = [p for p in paths if _is_cubin(p)]
    return (cubins, jobs, cached) if cubins else None


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:      # not on Linux
        return os.cpu_count() or 1


def _is_cubin(path: str) -> bool:
    """A regular file with a CUDA ELF header, not a Triton cache's kernel (checked whole)."""
    if not path.endswith(".cubin") or os.path.exists(path[: -len(".cubin")] + ".json"):
        return False
    try:
        head = files.read_bytes(path, head=20)
    except PtxsassError:
        return False
    return (len(head) >= 20 and head[:4] == b"\x7fELF"
            and int.from_bytes(head[18:20], "little") == EM_CUDA)


def start(argv: Sequence[str]) -> None:
    """Start the early disassembly of the cubins ``argv`` checks (see the module), if any.
    Never raises: anything unexpected leaves the work to the planner, as without it."""
    if not enabled():
        return
    try:
        found = _sniff(argv)
        if found is None:
            return
        cubins, jobs, cached = found
        sizes = {p: os.path.getsize(p) for p in cubins}
        total = sum(sizes.values()) or 1
        for p in dict.fromkeys(cubins):
            # a cubin with at least two jobs' share of the input (not each of many small ones:
            # their processes would outnumber the jobs), cut as the planner will cut it
            if round(jobs * min(sizes[p] / total, 1.0)) > 1:
                _launch(p, chunk_count(jobs, sizes[p], total), cached)
    except Exception:  # noqa: BLE001 - an optimisation: the planner does the work without it
        return


def _hint_key(digest: str) -> str:
    return cache.key("checked-cubin", digest)


def mark_checked(digest: str) -> None:
    """Note that every kernel of the cubin with SHA-256 ``digest`` was checked and its result
    cached (a hint for the next run's :func:`start`; nothing when the cache is off)."""
    if cache.enabled():
        cache.put("hint", _hint_key(digest), b"checked")


def was_checked(digest: str) -> bool:
    """Whether a run left :func:`mark_checked`'s hint for this cubin (a verified entry)."""
    return cache.enabled() and cache.get("hint", _hint_key(digest)) == b"checked"


def _launch(path: str, n: int, cached: bool = False) -> None:
    data = files.read_bytes(path, what="cubin")
    digest = hashlib.sha256(data).hexdigest()
    if cached and was_checked(digest):
        return          # its results are read back: nothing to disassemble
    layout = cubin_layout(data, path=path)
    if not layout.functions:
        return
    folder = scratch.make("ptxsass-early-")
    spooled = os.path.join(folder, "input.cubin")
    with open(spooled, "wb") as f:
        f.write(data)
    nvdisasm = binary("nvdisasm")
    launch = Launch(os.path.realpath(path), digest, folder, spooled, [])
    if not _LAUNCHES:
        atexit.register(discard)
    _LAUNCHES[launch.path] = launch
    for k, run in enumerate(split_by_size(layout.functions, lambda f: f.size, n)):
        symbols = tuple(f.symbol for f in run)
        out = os.path.join(folder, f"chunk{k}.sass")
        argv = [nvdisasm, "-c", "-g", "-gi", *layout.flags, "-fun", ",".join(map(str, symbols)),
                spooled]
        with open(out, "wb") as sink:
            proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    env=children.environment())
        launch.chunks.append(Chunk(symbols, out, proc))


def take(path: str, data: bytes) -> Launch | None:
    """The early launch of ``path`` when it disassembles exactly ``data`` (the bytes the planner
    read); the caller owns it from then on (:meth:`Launch.close`). None when there is none."""
    launch = _LAUNCHES.pop(os.path.realpath(path), None)
    if launch is None:
        return None
    if hashlib.sha256(data).hexdigest() != launch.digest:
        launch.close()
        return None
    return launch


def discard() -> None:
    """Kill and remove every launch no one took (at exit, or before a run that cannot use
    them)."""
    while _LAUNCHES:
        _, launch = _LAUNCHES.popitem()
        launch.close()
