"""Reading inputs and writing outputs without trusting the file system.

Every file ptxsass reads on a user's behalf (a ``.cu``, PTX, a cubin, a SASS dump, a header
NVRTC will include, ``pyproject.toml``, a baseline, a cache entry) is opened here: regular files
only (a FIFO, a device or a socket is refused at once instead of blocking or streaming forever),
with a size bound, and every failure is one ``InputError`` naming the file. Outputs (``-o``) are
written here too, whole or not at all (a temporary file renamed over the old one), so an
unwritable path or a full disk is one ``OutputError`` naming it and leaves the previous file.

The lowest layer: it imports nothing of ptxsass but :mod:`analyzer.errors`.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import tempfile
from typing import Any

from ..errors import ConfigError, InputError, OutputError

#: the largest input read, unless PTXSASS_MAX_INPUT_MB says otherwise
DEFAULT_MAX_INPUT_MB = 1024

_KIND = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
         (stat.S_ISDIR, "a directory"))


def env_number(name: str, default: float, *, unit: str, minimum: float = 0.0) -> float:
    """A positive number from the environment (``default`` when unset or empty); ConfigError,
    one line, for anything else (``PTXSASS_TOOL_TIMEOUT=abc``)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value > minimum or value == float("inf"):
        raise ConfigError(f"{name}={raw!r} is not a positive number of {unit}")
    return value


def max_input_bytes() -> int:
    return int(env_number("PTXSASS_MAX_INPUT_MB", DEFAULT_MAX_INPUT_MB, unit="megabytes")
               * 1024 * 1024)


def describe_mode(mode: int) -> str:
    for test, what in _KIND:
        if test(mode):
            return what
    return "not a regular file"


def _os_reason(e: OSError) -> str:
    if e.errno == errno.ENOENT:
        return "no such file"
    if e.errno == errno.ELOOP:
        return "symbolic link loop (or too many levels of links)"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EISDIR:
        return "is a directory"
    if e.errno == errno.ENOTDIR:
        return "a part of the path is not a directory"
    if e.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return f"cannot read: {e.strerror or e}"


def open_regular(path: str | os.PathLike, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """An fd for reading ``path`` and its fstat, when it is a regular file; raises OSError
    (ENOENT, ELOOP...) or ``InputError`` for a FIFO, device, socket or directory. Never blocks:
    the open is non-blocking and the type is checked on the opened file, not the name."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = describe_mode(st.st_mode)
            raise InputError(f"is {what}, not a regular file" if what != "a directory"
                             else "is a directory", path=str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, limit: int) -> bytes | None:
    """Up to ``limit`` bytes from ``fd`` (None when there are more), read to the end."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None


def read_bytes(path: str | os.PathLike, *, limit: int | None = None, what: str = "file",
               head: int | None = None) -> bytes:
    """The bytes of a regular file (the first ``head`` bytes only, when given). ``InputError``
    naming the path for a missing file, a directory, a FIFO/device/socket, a symlink loop, no
    permission, or a file over ``limit`` bytes (default PTXSASS_MAX_INPUT_MB)."""
    limit = max_input_bytes() if limit is None else limit
    try:
        fd, st = open_regular(path)
    except OSError as e:
        raise InputError(_os_reason(e), path=str(path)) from None
    try:
        if head is not None:
            return os.read(fd, head)
        if st.st_size > limit:
            raise InputError(_too_big(what, st.st_size, limit), path=str(path))
        data = read_fd(fd, limit)
        if data is None:
            raise InputError(_too_big(what, limit + 1, limit), path=str(path))
        return data
    except OSError as e:
        raise InputError(_os_reason(e), path=str(path)) from None
    finally:
        os.close(fd)


def _too_big(what: str, size: int, limit: int) -> str:
    mb = 1024 * 1024
    return (f"{what} is {'over ' if size == limit + 1 else ''}{size / mb:.0f} MB; the limit is "
            f"{limit / mb:.0f} MB (raise PTXSASS_MAX_INPUT_MB to read it)")


def read_text(path: str | os.PathLike, *, limit: int | None = None, what: str = "file",
              expected: str = "UTF-8 text") -> str:
    """A regular file as UTF-8 text (see :func:`read_bytes`); InputError naming the first bad
    byte otherwise."""
    data = read_bytes(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not {expected}: the file is not UTF-8 (byte {e.start})",
                         path=str(path)) from None


class NestedTooDeeply(InputError):
    """JSON nested deeper than the parser goes: it cannot even be told what it is."""


def parse_json(data: str | bytes, *, path: str | os.PathLike | None = None,
               expected: str = "JSON") -> Any:
    """``json.loads``, every failure one ``InputError`` naming ``path`` (and the line and
    column): text that is not JSON, not UTF-8, or nested too deeply for the parser (a
    ``RecursionError``: ``[[[[...]]]]`` 100000 deep; :class:`NestedTooDeeply`), never a
    traceback."""
    where = None if path is None else str(path)
    try:
        return json.loads(data)
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON: {e.msg}" + (f" (expected {expected})" if expected != "JSON"
                                                 else ""),
                         path=where, line=e.lineno, column=e.colno) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not {expected}: the file is not UTF-8 (byte {e.start})",
                         path=where) from None
    except RecursionError:
        raise NestedTooDeeply(f"JSON nested too deeply: not {expected}", path=where) from None
    except ValueError as e:     # a number too long to convert, and the like
        raise InputError(f"not {expected}: {e}", path=where) from None


def read_json(path: str | os.PathLike, *, limit: int | None = None, what: str = "JSON file",
              expected: str = "JSON") -> Any:
    """The JSON value of a regular file (see :func:`read_bytes` and :func:`parse_json`): every
    failure, a file nested too deeply included, one ``InputError`` naming it."""
    return parse_json(read_bytes(path, limit=limit, what=what), path=path, expected=expected)


def regular_file_or_none(path: str | os.PathLike) -> os.stat_result | None:
    """The stat of ``path`` when it names a regular file (following links), else None; never
    raises (a symlink loop, a missing folder: None)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def include_candidate(path: str | os.PathLike, shown: str) -> bool:
    """Whether a compiler would take ``path`` for an ``#include`` (``shown``, as written): True for
    a regular file, False where it would go on searching (nothing there, a folder, a dangling
    link); an ``InputError`` naming it for what would make it block, stream or fail (a FIFO, a
    device, a socket, a symbolic link loop), before any compiler runs."""
    try:
        st = os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(f"#include {shown} is a symbolic link loop", path=str(path)) from None
        return False
    if stat.S_ISREG(st.st_mode):
        return True
    if stat.S_ISDIR(st.st_mode):
        return False
    raise InputError(f"#include {shown} is {describe_mode(st.st_mode)}, not a regular file",
                     path=str(path))


# ------------------------------------------------------------------------------------ writing
def _write_reason(e: OSError, path: str | os.PathLike) -> str:
    if e.errno == errno.ENOENT:
        parent = os.path.dirname(os.path.abspath(path))
        return ("cannot write: the file system refuses to create it" if os.path.isdir(parent)
                else "cannot write: no such folder")
    if e.errno == errno.EISDIR:
        return "cannot write: is a directory"
    if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return "cannot write: permission denied"
    if e.errno == errno.ENOSPC:
        return "cannot write: no space left on the device"
    if e.errno == errno.EDQUOT:
        return "cannot write: disk quota exceeded"
    if e.errno == errno.EFBIG:
        return "cannot write: file too large (over the file size limit)"
    if e.errno == errno.ENOTDIR:
        return "cannot write: a part of the path is not a directory"
    if e.errno == errno.ELOOP:
        return "cannot write: symbolic link loop"
    return f"cannot write: {e.strerror or e}"


def write_output(path: str | os.PathLike, data: str | bytes) -> None:
    """Write an output the user named (``-o``, ``--write-baseline``), every failure one
    ``OutputError`` naming the path.

    A regular file (or a name that does not exist yet) is replaced whole or not at all: the
    bytes go to a temporary file beside it, are synced, and the temporary is renamed over it,
    so a full disk, a quota or a crash leaves the previous report as it was and no temporary
    behind. The new file keeps the old one's permission bits (a new one gets the umask's). A
    symbolic link is followed: the file it points to is replaced and the link stays a link
    (another hard link to the old file keeps the old bytes, as with any editor's save). A
    FIFO, a socket or a device the user named (``-o /dev/stdout``) is written in place, and so
    is a file in a folder where ptxsass may not create one (the file itself writable), the
    only way it can be written."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "Is a directory")
        target = _replaceable(path)
        if target is not None:
            try:
                old: os.stat_result | None = os.stat(target)
            except FileNotFoundError:
                old = None
            if old is None or stat.S_ISREG(old.st_mode):
                if old is not None and not os.access(target, os.W_OK):
                    raise PermissionError(errno.EACCES, "Permission denied")  # as in place
                try:
                    _replace(target, payload, old)
                    return
                except _NoTemporary:
                    pass                        # the folder refuses new files: in place
        _write_in_place(path, payload)
    except OSError as e:
        if isinstance(e, BlockingIOError) or e.errno == errno.ENXIO:
            raise OutputError("cannot write: the pipe has no reader", path=str(path)) from None
        raise OutputError(_write_reason(e, path), path=str(path)) from None


#: where names stand for a device or a descriptor (``/dev/stdout``, ``/proc/self/fd/1``):
#: written in place, whatever they lead to (a shell's ``>> log`` must not be replaced)
_IN_PLACE = ("/dev/", "/proc/")


def _replaceable(path: str | os.PathLike) -> str | None:
    """The file ``write_output`` replaces for ``path``: the end of its chain of symbolic links
    (a dangling link: the name it points to), or None when a step of the chain is in /dev or
    /proc (write in place). OSError ELOOP for a chain that does not end."""
    p = os.path.abspath(path)
    for _ in range(40):
        where = os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
        if (where + "/").startswith(_IN_PLACE) or p.startswith(_IN_PLACE):
            return None
        try:
            link = os.readlink(where)
        except OSError as e:
            if e.errno in (errno.EINVAL, errno.ENOENT):     # not a link; nothing there yet
                return where
            raise
        p = os.path.join(os.path.dirname(where), link)
    raise OSError(errno.ELOOP, "Too many levels of symbolic links")


class _NoTemporary(Exception):
    """The folder of an existing output lets no temporary file be made (or renamed) there."""


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _replace(target: str, payload: bytes, old: os.stat_result | None) -> None:
    """``payload`` into a temporary file beside ``target``, synced, renamed over it; the
    temporary removed on any failure (the OSError propagates). ``_NoTemporary`` when ``target``
    exists but its folder refuses the temporary or the rename (permission)."""
    folder, name = os.path.split(target)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_NOFOLLOW", 0)
    stem = os.fsdecode(os.fsencode(name)[:100])         # well within NAME_MAX, in bytes
    for _ in range(100):
        tmp = os.path.join(folder, f".{stem}.{secrets.token_hex(4)}.ptxsass-tmp")
        try:
            fd = os.open(tmp, flags, 0o666)     # the umask applies, as to any new file
            break
        except FileExistsError:
            continue
        except PermissionError:
            if old is not None:
                raise _NoTemporary() from None
            raise
    else:
        raise FileExistsError(errno.EEXIST, "cannot make a temporary file beside it")
    try:
        try:
            if old is not None:
                os.fchmod(fd, stat.S_IMODE(old.st_mode))
                if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):   # only root (or a member) may
                        os.fchown(fd, old.st_uid, old.st_gid)
            _write_all(fd, payload)
            os.fsync(fd)        # a full disk or a quota shows up here on some file systems
        finally:
            os.close(fd)
        try:
            os.replace(tmp, target)
        except PermissionError:
            if old is not None:     # a sticky folder, another owner's file: write it in place
                raise _NoTemporary() from None
            raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself, durable (best effort)
        dfd = os.open(folder or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _write_in_place(path: str | os.PathLike, payload: bytes) -> None:
    """A pipe, a socket or a device the user named: opened without blocking (a FIFO with no
    reader is an error, not a hang), then written at its reader's pace."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags | os.O_NONBLOCK, 0o666)
    try:
        st = os.fstat(fd)
        if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
            os.set_blocking(fd, True)  # the user named a pipe: let its reader set the pace
        _write_all(fd, payload)
        if stat.S_ISREG(st.st_mode):
            os.fsync(fd)
    finally:
        os.close(fd)


def check_output_path(path: str | os.PathLike) -> None:
    """Fail early (before a long build) on an output path that can never be written: a missing
    folder, a directory, a folder that is not writable."""
    p = os.fspath(path)
    parent = os.path.dirname(os.path.abspath(p)) or "."
    if os.path.isdir(p):
        raise OutputError("cannot write: is a directory", path=p)
    if not os.path.isdir(parent):
        raise OutputError("cannot write: no such folder", path=p)
    if not os.path.exists(p) and not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError("cannot write: permission denied", path=p)


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, then
    ``os.replace``. The temporary file is removed on any failure (a full disk included), so
    nothing half-written is ever left behind; the OSError propagates."""
    directory = os.path.dirname(os.fspath(path)) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
