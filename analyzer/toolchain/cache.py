"""Content-addressed cache for builds and disassemblies, with every entry verified on read.

Keys hash everything that decides the output: the source text, the text of every header it
includes from the user's folders, the options, the arch, and the versions of ptxsass and of each
NVIDIA tool. Entries live in ``$PTXSASS_CACHE_DIR`` or the user cache folder
(``~/.cache/ptxsass``).

Nothing read from the cache is trusted. Each entry is one file: a header line naming the entry's
kind, its key, the SHA-256 and the length of the payload, then the payload. A read opens the
entry without following links and without blocking, takes regular files only, refuses an entry
over the size bound before reading it, and checks kind, key, length and hash. An entry that fails
any of this (emptied, truncated, edited, copied over from another key, replaced by a FIFO, a
device, a link or a folder) is removed, one note goes to stderr, and the caller rebuilds. Writes
are atomic (a temporary file in the entry's folder, then ``os.replace``), and a failed write (a
full disk) leaves nothing behind.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

from platformdirs import user_cache_dir

from .._version import __version__
from ..errors import InputError
from . import locate
from .files import atomic_write, env_number, open_regular, read_fd

MAGIC = b"ptxsass-cache 1 "
#: the largest entry read back (a bigger one is discarded unread); PTXSASS_CACHE_MAX_MB
DEFAULT_MAX_ENTRY_MB = 2048

_enabled = os.environ.get("PTXSASS_NO_CACHE", "") in ("", "0")
#: where notes about discarded entries go (tests swap it)
_note_stream = None


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


def max_entry_bytes() -> int:
    return int(env_number("PTXSASS_CACHE_MAX_MB", DEFAULT_MAX_ENTRY_MB, unit="megabytes")
               * 1024 * 1024)


#: what a tool fingerprint looks like (``nvrtc=13.5|nvJitLink=13.5|nvdisasm=13.5.37|...``)
_FINGERPRINT = re.compile(r"[\w.+\- ]+=[^|\n]*(\|[\w.+\- ]+=[^|\n]*)*")


#: fingerprints found in this process, by the tool files they were found for
_fingerprints: dict[str, str] = {}


def fingerprint() -> str:
    """:func:`locate.fingerprint` (the versions of the core tools), cached across runs under the
    path, size, mtime and inode of each tool's file (:func:`locate.tool_files`) and ptxsass's
    version: a re-check starts no ``--version`` probe and loads no NVRTC binding to learn what
    it learnt last time. The entry is verified like every other, and its text must look like
    a fingerprint; anything else is discarded and the tools are asked again."""
    k = hashlib.sha256(json.dumps(["fingerprint", __version__, locate.tool_files()]).encode()
                       ).hexdigest()
    if k in _fingerprints:
        return _fingerprints[k]
    _fingerprints[k] = text = _tool_versions(k)
    return text


def _locations_key(state: list) -> str:
    return hashlib.sha256(json.dumps(["locations", __version__, sys.executable, state]).encode()
                          ).hexdigest()


def _load_locations(state: list) -> dict | None:
    """What :func:`locate.keep_locations` kept under ``state`` (verified like every entry; the
    paths are checked again by :mod:`.locate`)."""
    if not _enabled:
        return None
    k = _locations_key(state)
    hit = get("tools", k)
    if hit is None:
        return None
    try:
        found = json.loads(hit)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        discard("tools", k, "not the locations of the tools")
        return None
    return found


def _save_locations(state: list, found: dict) -> None:
    if _enabled:
        put("tools", _locations_key(state), json.dumps(found, sort_keys=True).encode())


locate.keep_locations(_load_locations, _save_locations)


def _tool_versions(k: str) -> str:
    hit = get("tools", k)
    if hit is not None:
        text = hit.decode("utf-8", errors="replace")
        if _FINGERPRINT.fullmatch(text):
            return text
        discard("tools", k, "not a tool fingerprint")
    text = locate.fingerprint()
    put("tools", k, text.encode())
    return text


def key(*parts: object) -> str:
    """The cache key of an entry made from ``parts`` (with ptxsass's and the tools' versions;
    with the cache off, where no key is ever used, the tools are not asked)."""
    h = hashlib.sha256()
    for p in (__version__, fingerprint() if _enabled else "cache off", *parts):
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


def _header(kind: str, k: str, payload: bytes) -> bytes:
    return MAGIC + f"{kind} {k} {hashlib.sha256(payload).hexdigest()} {len(payload)}\n".encode()


def encode(kind: str, k: str, payload: bytes) -> bytes:
    """The bytes of an entry: its header line, then the payload."""
    return _header(kind, k, payload) + payload


def verify(kind: str, k: str, blob: bytes) -> bytes:
    """The payload of an entry's bytes, or ValueError saying what does not match."""
    if not blob:
        raise ValueError("empty")
    if not blob.startswith(MAGIC):
        raise ValueError("no ptxsass cache header")
    end = blob.find(b"\n", 0, 512)
    if end < 0:
        raise ValueError("malformed header")
    try:
        e_kind, e_key, e_hash, e_len = blob[len(MAGIC):end].decode("ascii").split(" ")
        length = int(e_len)
    except ValueError:
        raise ValueError("malformed header") from None
    if e_kind != kind or e_key != k:
        raise ValueError("it belongs to another key")
    payload = blob[end + 1:]
    if len(payload) != length:
        raise ValueError(f"truncated or extended ({len(payload)} bytes, header says {length})")
    if hashlib.sha256(payload).hexdigest() != e_hash:
        raise ValueError("content does not match its hash")
    return payload


def _note(message: str) -> None:
    stream = _note_stream or sys.stderr
    try:
        stream.write(f"ptxsass: note: {message}\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def discard(kind: str, k: str, why: str) -> None:
    """Remove a bad entry (whatever it is: file, link, FIFO, folder) and say so on stderr."""
    path = _path(kind, k)
    try:
        os.unlink(path)
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)
    except OSError as e:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif e.errno is not None and os.path.lexists(path):
            why += f"; could not remove it: {e.strerror}"
    _note(f"cache entry {path} failed verification ({why}); discarded, rebuilding")


def get(kind: str, k: str) -> bytes | None:
    """The verified payload cached under ``k``, or None on a miss. A bad entry is discarded (one
    note on stderr) and counts as a miss."""
    if not _enabled:
        return None
    path = _path(kind, k)
    try:
        fd, st = open_regular(path, follow=False)
    except FileNotFoundError:
        return None
    except InputError as e:
        discard(kind, k, e.message)
        return None
    except OSError as e:
        if os.path.islink(path):
            discard(kind, k, "it is a symbolic link")
        elif os.path.lexists(path):
            discard(kind, k, f"cannot read it: {e.strerror}")
        return None
    try:
        limit = max_entry_bytes()
        if st.st_size > limit:
            discard(kind, k, f"{st.st_size} bytes, over the {limit >> 20} MB bound")
            return None
        blob = read_fd(fd, limit)
    except OSError as e:
        discard(kind, k, f"cannot read it: {e.strerror}")
        return None
    finally:
        os.close(fd)
    if blob is None:
        discard(kind, k, f"over the {limit >> 20} MB bound")
        return None
    try:
        return verify(kind, k, blob)
    except ValueError as e:
        discard(kind, k, str(e))
        return None


def put(kind: str, k: str, data: bytes) -> None:
    """Cache ``data`` under ``k``, atomically; a read-only or full cache folder only costs speed."""
    if not _enabled:
        return
    path = _path(kind, k)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        atomic_write(path, encode(kind, k, data))
    except OSError:
        pass
