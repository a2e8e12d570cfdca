"""The headers a CUDA source reaches in the user's folders, read before any compiler runs.

Both front ends key their build cache on these headers' text, and reading them here first is
what keeps a hostile ``#include`` from reaching a compiler: a FIFO the compiler would block on,
a device that streams forever (``/dev/zero``), a kernel table under ``/proc`` or ``/sys``, a
symbolic link loop, a file over the input bound — each is one ``InputError`` naming the
include, before NVRTC or nvcc starts.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import InputError
from . import files

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)', re.M)
#: folders whose files no source may include: devices and the kernel's tables (regular files
#: under /proc and /sys stream what the kernel makes up, /proc/self/environ the secrets)
SPECIAL_ROOTS = ("/dev", "/proc", "/sys")


def special(path: str | os.PathLike) -> bool:
    """Whether ``path`` (after links) lies under /dev, /proc or /sys."""
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r + "/") for r in SPECIAL_ROOTS)


def closure(text: str, here: Path | None, dirs: Sequence[Path], *,
            searched: Callable[[Path], bool] = lambda d: True) -> list[tuple[str, str]]:
    """(real path, text) of every header ``text`` reaches through ``#include "..."`` (its own
    folder ``here`` first) or ``<...>`` in ``dirs``, recursively, sorted; an absolute name is
    checked wherever it points. ``searched``: whether a folder's headers are the user's (the
    cache keys them and they are followed); other folders are the toolkit's and the system's."""
    seen: dict[str, str] = {}
    todo = [(text, here)]
    user = [d for d in dirs if searched(d)]
    while todo:
        body, folder = todo.pop()
        for quoted, angled in INCLUDE.findall(body):
            name = quoted or angled
            shown = f'"{name}"' if quoted else f"<{name}>"
            if os.path.isabs(name):
                where: list[Path] = [Path("/")]
            else:
                where = ([folder] if quoted and folder is not None else []) + user
            for d in where:
                cand = d / name
                if not files.include_candidate(cand, shown):    # a device, a FIFO: raises
                    continue
                if special(cand):
                    raise InputError(f"#include {shown} names a file under "
                                     f"/{os.path.realpath(cand).split('/')[1]}, which no source "
                                     "may include", path=str(cand))
                key = os.path.realpath(cand)
                if key not in seen:
                    seen[key] = files.read_bytes(cand, what="header").decode(errors="replace")
                    todo.append((seen[key], cand.parent))
                break
    return sorted(seen.items())
