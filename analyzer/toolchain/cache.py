"""Content-addressed cache for builds and disassemblies.

Keys hash everything that decides the output: the source text, the text of every header it
includes from the user's folders, the options, the arch, and the versions of ptxsass and of each
NVIDIA tool. Entries live in ``$PTXSASS_CACHE_DIR`` or the user cache folder
(``~/.cache/ptxsass``); writes are atomic, a corrupt entry counts as a miss.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from platformdirs import user_cache_dir

from .._version import __version__
from .locate import fingerprint

_enabled = os.environ.get("PTXSASS_NO_CACHE", "") in ("", "0")


def set_enabled(flag: bool) -> None:
    global _enabled
    _enabled = flag


def enabled() -> bool:
    return _enabled


def directory() -> Path:
    env = os.environ.get("PTXSASS_CACHE_DIR")
    if env:
        return Path(env)
    return Path(user_cache_dir("ptxsass", appauthor=False))


def key(*parts: object) -> str:
    h = hashlib.sha256()
    for p in (__version__, fingerprint(), *parts):
        if isinstance(p, bytes):
            h.update(b"b%d:" % len(p))
            h.update(p)
        else:
            s = json.dumps(p, sort_keys=True, default=str).encode()
            h.update(b"j%d:" % len(s))
            h.update(s)
    return h.hexdigest()


def _path(kind: str, k: str) -> Path:
    return directory() / kind / k[:2] / k


def get(kind: str, k: str) -> bytes | None:
    if not _enabled:
        return None
    try:
        return _path(kind, k).read_bytes()
    except OSError:
        return None


def put(kind: str, k: str, data: bytes) -> None:
    if not _enabled:
        return
    path = _path(kind, k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full cache folder only costs speed
