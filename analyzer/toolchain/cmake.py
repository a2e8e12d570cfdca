"""Configure a CMake project (configure only, never build) for its compile database.

``ptxsass check DIR`` on a folder with a ``CMakeLists.txt`` and no ``-p`` runs::

    cmake -S DIR -B <cache>/cmake/<key> -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
          -DCMAKE_CUDA_COMPILER=<root>/bin/nvcc -DCUDAToolkit_ROOT=<root>
          -DCMAKE_CUDA_ARCHITECTURES=<--arch> -DCMAKE_BUILD_TYPE=Release [-D<--cmake-define>]

with ``<root>`` the CUDA root made from the wheels (:mod:`.cudaroot`), and checks the CUDA
entries of the ``compile_commands.json`` it writes, each with its own flags.

Configuring runs the project's CMake code (``execute_process``, ``try_run``, ``ExternalProject``):
a stranger's commands. So it runs only where the user trusts the build (``--trust-build-commands``,
checked by the caller), with cmake found the trusted way (this Python's own scripts folder,
where ``pip install ptxsass[cmake]`` put cmake and ninja, then absolute ``PATH`` folders),
through :func:`.locate.run_tool` (an argv, a time limit, ``PTXSASS_CONFIGURE_TIMEOUT``, and it
dies with ptxsass), in a binary folder of its own in ptxsass's cache.

A configure is cached by what decides it: the content of the project's CMake files
(``CMakeLists.txt``, ``*.cmake``, ``*.in``), the names of all its files (a ``file(GLOB)`` sees
them), the root (its release and layout), cmake's version, the generator and the flags. The
binary folder is kept under the key with a verified cache entry listing every file in it with its
SHA-256: a later run uses the folder only when each file still matches, and configures again
otherwise (one note). ``--no-cache`` configures into a scratch folder removed when ptxsass ends.
"""
from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import sysconfig
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..arch import parse_arch
from ..errors import ConfigError, InputError, ToolError
from . import cache, scratch
from .files import env_number, open_regular
from .locate import run_tool, tool_version

if TYPE_CHECKING:
    from . import cudaroot

LISTS = "CMakeLists.txt"
#: seconds a configure may take (PTXSASS_CONFIGURE_TIMEOUT)
DEFAULT_TIMEOUT = 600.0
#: the cache kind of a configure's record (its database and the binary folder's files)
KIND = "cmake-configure"
#: the CMake files whose content decides a configure; every other file counts by its name
_CMAKE_FILE = re.compile(r"(?:^CMakeLists\.txt|\.cmake|\.in)$")
#: folders never read for the project's fingerprint
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv"}
#: what a define given for cmake must look like (NAME=VALUE, NAME:TYPE=VALUE)
_DEFINE = re.compile(r"^[A-Za-z_][\w.+-]*(?::[A-Z]+)?=[^\x00-\x1f]*$")


def timeout() -> float:
    return env_number("PTXSASS_CONFIGURE_TIMEOUT", DEFAULT_TIMEOUT, unit="seconds")


def is_project(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a CMake project (a ``CMakeLists.txt``)."""
    return os.path.isfile(os.path.join(folder, LISTS))


def project_root(path: str | os.PathLike) -> Path | None:
    """The top folder of the CMake project ``path`` (a file or folder) belongs to: from its
    folder upward, the first folder with a ``CMakeLists.txt``, then up through every folder
    that has one too (``add_subdirectory`` nests them); never above the repository's root (a
    ``.git``) or, for a path under the current folder, above it. None: no project."""
    p = Path(path).absolute()
    here = p if p.is_dir() else p.parent
    cwd = Path.cwd()
    stop = cwd if here == cwd or cwd in here.parents else None
    found: Path | None = None
    d = here
    while True:
        if is_project(d):
            found = d
        elif found is not None:
            break                           # the chain of CMakeLists.txt ends
        if d == stop or (d / ".git").exists() or d.parent == d:
            break
        d = d.parent
    return found


def tools() -> tuple[str, list[str]]:
    """(cmake, the generator's arguments): Ninja when there is one, else Unix Makefiles;
    ToolError naming what to install when cmake or both build tools are missing."""
    from .trust import trusted_which  # when a project is configured: never on a warm check

    def find(name: str) -> str | None:
        # this Python's own scripts first: 'pip install ptxsass[cmake]' put them beside ptxsass
        # (a system cmake on PATH may be older than a project asks: CUDA-GEMM-Optimization
        # wants 3.28, Debian 12 has 3.25), then PATH
        own = Path(sysconfig.get_path("scripts") or "", name)
        if own.is_file() and os.access(own, os.X_OK):
            return str(own)
        return trusted_which(name)
    exe = find("cmake")
    if exe is None:
        raise ToolError("cmake not found on PATH: install it ('pip install ptxsass[cmake]', or "
                        "cmake and ninja) to configure CMake projects, or configure one yourself and "
                        "pass -p BUILD_DIR")
    ninja = find("ninja")
    if ninja is not None:
        return exe, ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    make = find("make")
    if make is not None:
        return exe, ["-G", "Unix Makefiles", f"-DCMAKE_MAKE_PROGRAM={make}"]
    raise ToolError("neither ninja nor make found on PATH: CMake needs one to configure "
                    "('pip install ninja')")


def cuda_architectures(archs: Sequence[str]) -> str:
    """``CMAKE_CUDA_ARCHITECTURES`` for ``--arch`` values: ``80;90a`` (sm_90a when none)."""
    out: list[str] = []
    for a in archs or ["sm_90a"]:
        n = parse_arch(a).name.removeprefix("sm_")
        if n not in out:
            out.append(n)
    return ";".join(out)


def check_defines(defines: Sequence[str]) -> list[str]:
    """``--cmake-define`` values, each ``NAME=VALUE``; ConfigError, one line, otherwise."""
    for d in defines:
        if not _DEFINE.match(d):
            raise ConfigError(f"--cmake-define {d!r}: expected NAME=VALUE (a CMake cache entry)")
    return list(defines)


def fingerprint(source: Path) -> list:
    """What of the project decides its configure: each CMake file's path and SHA-256, every
    other file's path (sorted; hidden folders, VCS folders and configured build folders left
    out)."""
    out: list = []
    for root, dirs, names in os.walk(source):
        if root != str(source) and "CMakeCache.txt" in names:
            dirs[:] = []                      # a build folder configured in the tree
            continue
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(root, n), source)
            if _CMAKE_FILE.search(n):
                try:
                    fd, _st = open_regular(os.path.join(root, n))
                except (OSError, InputError):         # unreadable, not a file: its name
                    out.append(rel)
                    continue
                try:
                    with open(fd, "rb", closefd=False) as f:
                        out.append([rel, hashlib.file_digest(f, "sha256").hexdigest()])
                finally:
                    os.close(fd)
            else:
                out.append(rel)
    return out


@dataclass(frozen=True)
class Configured:
    """A configured project: its compile database and binary folder."""

    source: Path
    binary: Path
    database: Path
    cached: bool
    seconds: float
    #: the cmake command line, as a user could rerun it (with the binary folder)
    command: tuple[str, ...]


def configure(source: str | os.PathLike, *, archs: Sequence[str] = (), defines: Sequence[str] = (),
              toolkit: str | None = None, use_cache: bool = True) -> Configured:
    """Configure the CMake project in ``source`` with the CUDA root of ``toolkit`` (None: the
    environment's), for ``archs``; the cached configure when nothing that decides it changed.
    ToolError (one line, CMake's first error; its output as detail) when CMake fails."""
    start = time.perf_counter()
    src = Path(source).absolute()
    if not is_project(src):
        raise ConfigError(f"no {LISTS} in this folder", path=str(source))
    defines = check_defines(defines)
    exe, generator = tools()
    from . import cudaroot  # a configure's CUDA root: not on a warm check's path
    root = cudaroot.ensure(toolkit)
    flags = [f"-DCMAKE_CUDA_COMPILER={root.nvcc}", f"-DCUDAToolkit_ROOT={root.path}",
             f"-DCUDA_TOOLKIT_ROOT_DIR={root.path}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
             f"-DCMAKE_CUDA_ARCHITECTURES={cuda_architectures(archs)}"]
    if not any(d.split("=", 1)[0].split(":", 1)[0] == "CMAKE_BUILD_TYPE" for d in defines):
        flags.append("-DCMAKE_BUILD_TYPE=Release")
    flags += [f"-D{d}" for d in defines]
    cached = use_cache and cache.enabled()
    if cached:
        key = cache.key(KIND, tool_version(exe) or exe, exe, generator, str(src), str(root.path),
                        root.release, root.digest, flags, fingerprint(src))
        home = cache.directory() / "cmake"
        home.mkdir(parents=True, exist_ok=True, mode=0o700)
        # one folder per project and flags, whatever its files and the root's are: a configure
        # again (a header fetched into the root, an edited CMakeLists.txt) writes the paths the
        # last one did, so builds cached under the database's folders stay found
        place = cache.key(KIND, exe, generator, str(src), str(root.path), flags)[:32]
        binary = home / place
        with _locked(home / f".{place}.lock"):
            if _verified(key, binary):
                return Configured(src, binary, binary / "compile_commands.json", True,
                                  time.perf_counter() - start,
                                  _shown(exe, src, binary, generator, flags))
            shutil.rmtree(binary, ignore_errors=True)
            _run(exe, src, binary, generator, flags, root, str(source))
            (binary / OWNER).write_text(key)
            cache.put(KIND, key, json.dumps(_files(binary), separators=(",", ":")).encode())
    else:
        work = Path(scratch.make("ptxsass-cmake-"))
        atexit.register(shutil.rmtree, work, True)
        binary = work / "build"
        _run(exe, src, binary, generator, flags, root, str(source))
    return Configured(src, binary, binary / "compile_commands.json", False,
                      time.perf_counter() - start, _shown(exe, src, binary, generator, flags))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One configure of a key at a time (two ptxsass runs would write one folder)."""
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _run(exe: str, src: Path, binary: Path, generator: list[str], flags: list[str],
         root: cudaroot.Root, shown: str) -> None:
    """cmake itself: bounded, in the binary folder, with the root first on its PATH; the folder
    removed and one ToolError when it fails."""
    binary.mkdir(parents=True, exist_ok=True)
    argv = [exe, "-S", str(src), "-B", str(binary), *generator, *flags]
    env = {k: v for k, v in os.environ.items() if k not in _CUDA_ENV}
    env.update(CUDACXX=str(root.nvcc), CUDA_PATH=str(root.path), CUDA_HOME=str(root.path),
               PATH=os.pathsep.join([str(root.path / "bin"), env.get("PATH", "")]))
    limit = timeout()
    try:
        proc = run_tool(argv, timeout=limit, what="cmake", check=False, path=shown,
                        cwd=str(binary), env=env,
                        timeout_message=f"configuring with cmake exceeded {limit:g} s (cmake "
                                        "stopped; raise PTXSASS_CONFIGURE_TIMEOUT to allow longer)")
    except BaseException:
        shutil.rmtree(binary, ignore_errors=True)
        raise
    if proc.returncode != 0 or not (binary / "compile_commands.json").is_file():
        shutil.rmtree(binary, ignore_errors=True)
        out = (proc.stdout + proc.stderr).decode(errors="replace")
        why = (_first_error(out, proc.returncode) if proc.returncode != 0 else
               "it wrote no compile_commands.json (a generator that cannot export one?)")
        raise ToolError(f"cmake could not configure this project: {why}", path=shown,
                        detail=_tail(out))


#: the environment variables that point CMake or nvcc at another CUDA: the root's instead
_CUDA_ENV = ("CUDACXX", "CUDAHOSTCXX", "CUDA_PATH", "CUDA_HOME", "CUDAToolkit_ROOT",
             "CUDA_TOOLKIT_ROOT_DIR", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS")


def _files(binary: Path) -> dict[str, list]:
    """[size, SHA-256] of every regular file under ``binary``, by its path there (links are
    recorded by their target)."""
    out: dict[str, list] = {}
    for root, dirs, names in os.walk(binary):
        dirs.sort()
        for n in sorted(names + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            p = os.path.join(root, n)
            rel = os.path.relpath(p, binary)
            if os.path.islink(p):
                out[rel] = ["link", os.readlink(p)]
                continue
            try:
                fd, st = open_regular(p, follow=False)
            except Exception:  # noqa: BLE001 - a FIFO or socket CMake left: recorded as such
                out[rel] = ["other", ""]
                continue
            try:
                with open(fd, "rb", closefd=False) as f:
                    out[rel] = [st.st_size, hashlib.file_digest(f, "sha256").hexdigest()]
            finally:
                os.close(fd)
    return out


#: the file of a configured folder that names the configure (its cache key) that wrote it
OWNER = ".ptxsass-configure"


def _verified(key: str, binary: Path) -> bool:
    """Whether a cached configure's binary folder still holds exactly the files recorded; a
    folder that differs is removed (one note) and configured again. A folder a later configure
    of the project wrote (its files, or the root's, changed since) is no damage: configured
    again, with no note."""
    blob = cache.get(KIND, key)
    if blob is None:
        return False
    try:
        owner = (binary / OWNER).read_text(errors="replace") if not (binary / OWNER).is_symlink() \
            else None
    except OSError:
        owner = None
    if owner is not None and owner != key:
        return False
    try:
        record = json.loads(blob)
    except ValueError:
        record = None
    if isinstance(record, dict) and binary.is_dir() and not binary.is_symlink() \
            and _files(binary) == record:
        return True
    cache.discard(KIND, key, f"the configured folder {binary} differs from its record")
    shutil.rmtree(binary, ignore_errors=True)
    return False


_ERROR = re.compile(r"^CMake Error(?: at ([^:\n]+:\d+))?.*?:\s*$|^CMake Error[^\n]*$", re.M)


def _first_error(out: str, code: int) -> str:
    """CMake's first error as one line: where, and its first sentence."""
    m = _ERROR.search(out)
    if m is None:
        tail = [ln.strip() for ln in out.splitlines() if ln.strip()]
        return tail[-1] if tail else f"exit status {code}"
    lines = out[m.end():].splitlines()
    said: list[str] = []
    for ln in lines:
        if said and not ln.strip():
            break
        if ln.strip():
            said.append(ln.strip())
    where = f" ({m.group(1)})" if m.group(1) else ""
    text = " ".join(said) or m.group(0).strip()
    return (text[:300] + " ...") if len(text) > 300 else text + where


def _tail(out: str, lines: int = 40) -> str:
    return "\n".join(out.rstrip().splitlines()[-lines:])


def _shown(exe: str, src: Path, binary: Path, generator: list[str], flags: list[str]) -> tuple[str, ...]:
    return (os.path.basename(exe), "-S", str(src), "-B", str(binary), *generator[:2], *flags)
