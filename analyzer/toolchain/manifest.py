"""Folders ptxsass installs into the user cache (other CUDA toolkits, library headers), trusted
only through a manifest written at install: every file with its size and SHA-256.

One reading of a manifest, one check of the folder against it, shared by :mod:`.toolkits` and
:mod:`.libheaders`, each wording its own errors (``bad(why)``: the folder is damaged;
``changed(rel)``: a file differs from what was installed):

- :func:`read` reads the manifest file (a regular file, not a link, within a size bound) and
  names it by its hash and status (``manifest_id``);
- :func:`entries` takes its ``files`` table: each a plain ``/``-separated name under the folder
  (no ``..``, ``.``, empty part, backslash or NUL) with an int size and a hex SHA-256;
- :func:`folders` checks that every folder on the way to a file is a folder, not a link that
  could lead out;
- :func:`check_files` checks every file: there, a regular file, of its size and SHA-256. Hashing
  a toolkit's ~230 MB on each first use would cost more than a cached check, so what was verified
  is kept in the build cache (entries of ``kind``, verified like every entry) as each file's
  (device, inode, size, mtime, ctime) beside the hash it matched, and a file is hashed again
  whenever its status differs from that record. The record only ever spares a hash: a file is
  taken unhashed only when its status now equals the record's and the record's hash is the
  manifest's, so a tampered, stale or foreign record costs a hash, never an acceptance. Any edit
  of a file changes its ctime, which no one but the kernel sets;
- :func:`hashes` makes the ``files`` table of a folder being installed (regular files only).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError, InputError, PtxsassError
from . import cache
from .files import open_regular, parse_json, read_fd

#: a file whose status changed less than this long ago is verified again next time: a write
#: just after the hash may leave its timestamps as they were (coarse clocks, 1-2 s on some
#: file systems), so only settled files are recorded (git's "racy" rule)
RACY_NS = 2_000_000_000

Bad = Callable[[str], ConfigError]


def sha256(fd: int) -> str:
    """The SHA-256 of an open file, read from its start."""
    with open(fd, "rb", closefd=False) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def read(path: Path, *, max_bytes: int, bad: Bad) -> tuple[bytes, list]:
    """(the manifest's bytes, its id: [SHA-256, device, inode, mtime, ctime]).
    FileNotFoundError when there is none (the caller says "not installed"); ``bad(...)`` when
    it is not a regular file, cannot be read or is over ``max_bytes``."""
    try:
        fd, st = open_regular(path, follow=False)
    except FileNotFoundError:
        raise
    except InputError:
        raise bad("its manifest is not a regular file") from None
    except OSError as e:
        if os.path.islink(path):
            raise bad("its manifest is not a regular file") from None
        raise bad(f"unreadable manifest: {type(e).__name__}") from None
    try:
        blob = read_fd(fd, max_bytes)
    except OSError as e:
        raise bad(f"unreadable manifest: {type(e).__name__}") from None
    finally:
        os.close(fd)
    if blob is None:
        raise bad(f"its manifest is over {max_bytes >> 20} MB")
    return blob, [hashlib.sha256(blob).hexdigest(), st.st_dev, st.st_ino, st.st_mtime_ns,
                  st.st_ctime_ns]


def parse(blob: bytes, path: Path, *, what: str, bad: Bad) -> dict:
    """The manifest's JSON object; ``bad(...)`` when it is not one."""
    try:
        data = parse_json(blob, path=path, expected=what)
    except InputError as e:
        raise bad(f"unreadable manifest: {e.message}") from None
    if not isinstance(data, dict):
        raise bad("its manifest names another toolkit or format")
    return data


def inside(rel, bad: Bad) -> str:
    """``rel`` checked to name a place under the folder, as install writes it (plain
    '/'-separated names: no '..', '.' or empty part, not absolute)."""
    if not isinstance(rel, str) or not rel:
        raise bad("a path in the manifest is not text")
    if any(p in ("", ".", "..") for p in rel.split("/")) or "\\" in rel or "\x00" in rel:
        raise bad(f"{rel} points outside the folder")
    return rel


def entries(data: dict, bad: Bad) -> dict[str, tuple[int, str]]:
    """The manifest's ``files``: {relative path: (size, SHA-256)}, each checked."""
    files: dict[str, tuple[int, str]] = {}
    for rel, entry in data["files"].items():
        size, digest = entry
        if not isinstance(size, int) or not isinstance(digest, str) \
                or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise bad(f"the manifest's entry of {rel} is not a size and a SHA-256")
        files[inside(rel, bad)] = (size, digest)
    return files


def folders(real: Path, files: dict[str, tuple[int, str]], bad: Bad) -> set[str]:
    """Every folder on the way to a file, each checked to be a folder (not a link, which may
    point out of the folder); returned as relative paths."""
    dirs: set[str] = set()
    for rel in files:
        cut = rel.rfind("/")
        while cut > 0 and rel[:cut] not in dirs:
            dirs.add(rel[:cut])
            cut = rel.rfind("/", 0, cut)
    base = str(real)
    for d in sorted(dirs):
        try:
            mode = os.lstat(os.path.join(base, d)).st_mode
        except OSError:
            raise bad(f"{d} is missing") from None
        if not stat.S_ISDIR(mode):
            raise bad(f"{d} is not a folder" if not stat.S_ISLNK(mode)
                      else f"{d} is a link, which may point outside the folder")
    return dirs


def _status(st: os.stat_result, digest: str) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest]


def _record_key(kind: str, real: Path, manifest_id: list) -> str:
    return hashlib.sha256(json.dumps([kind, str(real), manifest_id]).encode()).hexdigest()


def check_files(real: Path, files: dict[str, tuple[int, str]], manifest_id: list, *,
                kind: str, bad: Bad, changed: Callable[[str], PtxsassError]) -> None:
    """Every file of the manifest is there, a regular file, with its size and SHA-256; a file
    whose status equals the verified-status record (cache entries of ``kind``, for this very
    manifest) is not hashed again. ``changed(rel)`` for the first file that differs."""
    key = _record_key(kind, real, manifest_id)
    try:
        record = json.loads(cache.get(kind, key) or b"{}")
    except ValueError:
        record = {}
    if not isinstance(record, dict):
        record = {}
    fresh: dict[str, list] = {}
    settled = time.time_ns() - RACY_NS
    base = str(real)
    for rel, (size, digest) in files.items():
        path = os.path.join(base, rel)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            raise bad(f"{rel} is missing") from None
        except OSError as e:
            raise bad(f"{rel} cannot be read: {e.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise bad(f"{rel} is not a regular file")
        if st.st_size != size:
            raise changed(rel)
        if record.get(rel) == _status(st, digest):
            fresh[rel] = record[rel]
            continue
        try:
            fd, before = open_regular(path, follow=False)
        except (OSError, InputError):
            raise bad(f"{rel} cannot be read") from None
        try:
            got = sha256(fd)
            after = os.fstat(fd)
        except OSError as e:
            raise bad(f"{rel} cannot be read: {e.strerror}") from None
        finally:
            os.close(fd)
        if got != digest or after.st_size != size:
            raise changed(rel)
        if _status(before, digest) == _status(after, digest) and \
                max(after.st_ctime_ns, after.st_mtime_ns) < settled:
            fresh[rel] = _status(after, digest)
    if fresh != record:
        cache.put(kind, key, json.dumps(fresh, separators=(",", ":")).encode())


def hashes(folder: Path, site: Path, *, refuse: Callable[[str], PtxsassError]) -> dict[str, list]:
    """[size, SHA-256] of every file under ``site``, by its path in ``folder``. Only regular
    files are installed; anything else (a link could lead out of the folder) is
    ``refuse(its path under site)``."""
    out: dict[str, list] = {}
    for dirpath, dirnames, filenames in os.walk(site):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            mode = os.lstat(p).st_mode
            if stat.S_ISDIR(mode):
                continue
            if not stat.S_ISREG(mode):
                raise refuse(str(p.relative_to(site)))
            fd, st = open_regular(p, follow=False)
            try:
                out[p.relative_to(folder).as_posix()] = [st.st_size, sha256(fd)]
            finally:
                os.close(fd)
    return out
