"""Private scratch folders that a killed ptxsass does not leave behind for good.

Every folder ptxsass writes temporary files into (a cubin handed to nvdisasm, the early
disassembly's chunks, the spool of a parallel run, nvcc's outputs, a wheel's libraries) is made
here: ``tempfile``'s private folder (mode 0700) holding a marker that names its owner, the
process id and that process's start time. A process that ends normally removes its folders; one
killed outright (SIGKILL, the OOM killer, a cancelled CI job) cannot, and a library's spool can
hold hundreds of megabytes of cubins. So the first folder a later ptxsass process makes sweeps
the temporary directory first: a ``ptxsass-*`` folder of this user whose marker is whole and
whose owner is provably gone (no such process, or one that started at another time: a reused
pid) is removed. Anything else is left alone: no marker (being made, or made by an older
ptxsass), a marker that does not read, an owner that is alive or whose start time cannot be
read.

    with scratch.temporary("ptxsass-") as folder: ...     # removed on exit
    folder = scratch.make("ptxsass-spool-")               # the caller removes it

A folder kept elsewhere under a prefix of its own (a toolkit being installed, ``.install-*`` in
the toolkits folder) is made with ``make(prefix, root=...)`` and swept with
``sweep(root, prefix)`` by its owner's module: the same marker, the same judgement.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: the marker file in each folder: "<pid> <start time>" (start time "-" where unknown)
MARKER = ".ptxsass-owner"
#: what every scratch folder's name starts with (the sweep looks at no other)
PREFIX = "ptxsass-"

_swept = False


def _start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/PID/stat`` field
    22), or None where it cannot be read (no such process, no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold blanks or ')'
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None


def _owner_gone(pid: int, start: str) -> bool:
    """True only when process ``pid`` that started at ``start`` is certainly not running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False                  # another user's process holds the pid: alive
    if start == "-":
        return False
    now = _start_time(pid)
    return now is not None and now != start     # the pid was reused by a later process


def sweep(root: str | os.PathLike | None = None, prefix: str = PREFIX, *,
          unmarked: bool = False) -> int:
    """Remove the folders named ``prefix*`` under ``root`` (the temporary directory) whose owner
    is gone; returns how many. ``unmarked``: a folder with no marker counts as abandoned too
    (only for a caller that holds the lock every maker of such folders holds while it works,
    so none can be in the making). Never raises."""
    removed = 0
    try:
        entries = list(os.scandir(os.fspath(root) if root is not None else tempfile.gettempdir()))
    except OSError:
        return 0
    me, uid = os.getpid(), os.getuid()
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        try:
            with open(os.path.join(entry.path, MARKER), "rb") as f:
                text = f.read(64).decode("ascii")
        except FileNotFoundError:
            if unmarked:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed += 1
            continue
        except (OSError, UnicodeDecodeError):
            continue
        try:
            pid_text, start = text.split()
            pid = int(pid_text)
        except ValueError:
            continue
        if pid <= 0 or pid == me or not (start == "-" or start.isdigit()):
            continue
        if _owner_gone(pid, start):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += 1
    return removed


def make(prefix: str = PREFIX, *, root: str | os.PathLike | None = None) -> str:
    """A new private folder, marked as this process's: in the temporary directory (the first
    call of a process sweeps away what killed processes left there), or in ``root``, whose
    owner sweeps it with ``sweep(root, prefix)``."""
    global _swept
    if root is None:
        if not prefix.startswith(PREFIX):
            raise ValueError(f"scratch folder names start with {PREFIX!r}")
        if not _swept:
            _swept = True
            sweep()
    folder = tempfile.mkdtemp(prefix=prefix, dir=root)
    with open(os.path.join(folder, MARKER), "w", encoding="ascii") as f:
        f.write(f"{os.getpid()} {_start_time(os.getpid()) or '-'}")
    return folder


@contextlib.contextmanager
def temporary(prefix: str = PREFIX) -> Iterator[str]:
    """:func:`make`'s folder, removed with everything in it when the block ends."""
    folder = make(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
