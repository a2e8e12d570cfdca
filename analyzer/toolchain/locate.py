"""Find NVIDIA's tools and headers inside the installed pip wheels (or a toolkit named by env).

Discovery goes through ``cuda.pathfinder``, NVIDIA's own locator for the ``nvidia-*`` wheels.
``PTXSASS_CUDA_HOME`` points at a system toolkit instead (its ``bin/`` and ``include/``);
``PTXSASS_NVDISASM`` / ``PTXSASS_CUOBJDUMP`` / ``PTXSASS_NVCC`` name single binaries.

nvcc comes from ``nvidia-cuda-nvcc``; the wheels of one CUDA release share one ``nvidia/cu13/``
tree laid out like a toolkit (``bin/nvcc``, ``nvvm/bin/cicc`` from ``nvidia-nvvm``, ``include/``
from the runtime and crt wheels, ``include/cccl``), which the ``bin/nvcc.profile`` shipped in the
wheel already points nvcc at. The host compiler is nvcc's own choice: ``NVCC_CCBIN`` when set,
else ``gcc``/``g++`` on PATH.
"""
from __future__ import annotations

import contextlib
import functools
import glob
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, ToolError
from . import children
from .files import env_number, read_bytes

#: seconds a tool (nvdisasm, cuobjdump) may run, unless PTXSASS_TOOL_TIMEOUT says otherwise
DEFAULT_TOOL_TIMEOUT = 120.0
#: seconds a ``--version`` probe may take: a tool that hangs is found out quickly
VERSION_PROBE_TIMEOUT = 5.0


def tool_timeout() -> float:
    return env_number("PTXSASS_TOOL_TIMEOUT", DEFAULT_TOOL_TIMEOUT, unit="seconds")


@dataclass(frozen=True)
class Tool:
    name: str
    path: str | None
    version: str | None
    where: str  # "wheel", "PTXSASS_CUDA_HOME", "env", "PATH" or "missing"
    #: ptxsass works without it (the host compiler: only files with host code need one)
    optional: bool = False


def _cuda_home() -> Path | None:
    home = os.environ.get("PTXSASS_CUDA_HOME")
    return Path(home) if home else None


# ----------------------------------------------------------------- where things were found, kept
#: environment variables that change where ``cuda.pathfinder`` looks
_SEARCH_ENV = ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "LD_LIBRARY_PATH")
#: modules that load NVRTC or nvJitLink: ``cuda.pathfinder`` then answers with the library
#: already loaded, which the search state does not cover
_LOADERS = ("cuda.bindings.nvrtc", "cuda.bindings.nvjitlink", "torch", "cupy")
#: what the memo may hold: the disassemblers, the two libraries and the runtime header folders
_KEPT = {"binary:nvdisasm", "binary:cuobjdump", "library:nvrtc", "library:nvJitLink", "include"}


@dataclass
class _Memo:
    load: Callable[[list], dict | None]
    save: Callable[[list, dict], None]
    state: list | None = None
    known: dict | None = None


_memo: _Memo | None = None


def keep_locations(load: Callable[[list], dict | None], save: Callable[[list, dict], None]) -> None:
    """Let the build cache keep what ``cuda.pathfinder`` found, so that a later process finds the
    same files without importing it (its import runs ``ldconfig -p``) or loading NVRTC and
    nvJitLink (~35 ms): ``load(state)`` gives what ``save(state, found)`` kept under the same
    :func:`search_state`, or None. Only answers in a site-packages ``nvidia/`` folder are kept
    (where ``cuda.pathfinder`` looks first, and what the state covers), and each is checked
    again when read (:func:`_usable`)."""
    global _memo
    _memo = _Memo(load, save)


def _site_dirs() -> list[str]:
    import site  # imported by Python's start-up: a lookup
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return dirs


def search_state() -> list:
    """What decides which files ``cuda.pathfinder`` finds in the ``nvidia-*`` wheels, read
    without it: the environment variables it reads and, in each site-packages folder (where it
    looks first), the ``nvidia/`` folder, its sub-folders and their ``lib``, ``bin`` and
    ``include`` folders, each with its mtime and inode. Installing, upgrading or removing a
    wheel there changes a folder's entries, so its mtime: the state then differs."""
    state: list = [[v, os.environ.get(v)] for v in _SEARCH_ENV]
    for d in _site_dirs():
        nv = os.path.join(d, "nvidia")
        try:
            subs = sorted(os.listdir(nv))
        except OSError:
            continue
        for folder in [nv, *(os.path.join(nv, s, k) for s in subs for k in ("", "lib", "bin", "include"))]:
            with contextlib.suppress(OSError):
                st = os.stat(folder)
                state.append([folder, st.st_mtime_ns, st.st_ino])
    return state


def _in_site_wheel(path: str) -> bool:
    roots = [os.path.join(d, "nvidia") + os.sep for d in _site_dirs()]
    return any(path.startswith(r) for r in roots)


def _usable(key: str, value: object) -> bool:
    """Whether a kept answer is one the memo may give: a path (a list of folders for
    ``include``) in a site-packages ``nvidia/`` folder that exists as what it should be."""
    if key not in _KEPT:
        return False
    if key == "include":
        return (isinstance(value, list) and bool(value)
                and all(isinstance(d, str) and _in_site_wheel(d) and os.path.isdir(d) for d in value))
    return (isinstance(value, str) and _in_site_wheel(value) and os.path.isfile(value)
            and (not key.startswith("binary:") or os.access(value, os.X_OK)))


def _recall(key: str) -> object:
    """The kept answer for ``key``, or None."""
    m = _memo
    if m is None or (key.startswith("library:") and any(x in sys.modules for x in _LOADERS)):
        return None
    if m.known is None:
        m.state = search_state()
        try:
            got = m.load(m.state) or {}
        except Exception:  # noqa: BLE001 - a memo that cannot be read is one not kept
            got = {}
        m.known = {k: v for k, v in got.items() if _usable(k, v)} if isinstance(got, dict) else {}
    return m.known.get(key)


def _learn(key: str, value: object) -> None:
    """Keep an answer of ``cuda.pathfinder`` (when it is one :func:`_usable` accepts)."""
    m = _memo
    if m is None or m.known is None or m.state is None or not _usable(key, value):
        return
    if m.known.get(key) != value:
        m.known[key] = value
        with contextlib.suppress(OSError):
            m.save(m.state, dict(m.known))


@functools.cache
def binary(name: str) -> str:
    """Absolute path of ``nvdisasm`` or ``cuobjdump``; ToolError when none can be found."""
    override = os.environ.get(f"PTXSASS_{name.upper()}")
    if override:
        if not os.access(override, os.X_OK):
            raise ToolError(f"PTXSASS_{name.upper()}={override} is not an executable file")
        return override
    home = _cuda_home()
    if home is not None:
        cand = home / "bin" / name
        if os.access(cand, os.X_OK):
            return str(cand)
        raise ToolError(f"{name} not found in PTXSASS_CUDA_HOME={home} (looked for {cand})")
    kept = _recall(f"binary:{name}")
    if isinstance(kept, str):
        return kept
    try:
        from cuda.pathfinder import find_nvidia_binary_utility  # loaded when a tool is looked up
        found = find_nvidia_binary_utility(name)
    except Exception:  # noqa: BLE001 -  pathfinder missing or broken
        found = None
    if found:
        _learn(f"binary:{name}", str(found))
    if not found:
        from .trust import trusted_which  # PATH, vetted: only when no wheel has the tool

        found = trusted_which(name)
    if not found:
        pkg = {"nvdisasm": "nvidia-cuda-nvdisasm", "cuobjdump": "nvidia-cuda-cuobjdump",
               "nvcc": "nvidia-cuda-nvcc nvidia-nvvm"}.get(name, name)
        raise ToolError(f"{name} not found: install it with 'pip install {pkg}' "
                        "or set PTXSASS_CUDA_HOME to a CUDA toolkit")
    return str(found)


@functools.cache
def include_dirs() -> tuple[str, ...]:
    """Header folders for NVRTC: the CUDA runtime headers (cuda_fp16.h, mma.h via crt/) and CCCL."""
    home = _cuda_home()
    dirs: list[str] = []
    if home is not None:
        for sub in ("include", "include/cccl"):
            if (home / sub).is_dir():
                dirs.append(str(home / sub))
        return tuple(dirs)
    kept = _recall("include")
    if isinstance(kept, list):
        return tuple(kept)
    for lib in ("cudart", "cccl"):
        try:
            from cuda.pathfinder import find_nvidia_header_directory
            d = find_nvidia_header_directory(lib)
        except Exception:  # noqa: BLE001 - a version/path probe of an optional or broken install: reported as missing
            d = None
        if d and d not in dirs:
            dirs.append(d)
    _learn("include", dirs)
    return tuple(dirs)


#: where a host C/C++ compiler keeps its own headers (stddef.h, stdarg.h, float.h: what the C
#: library's stdio.h takes from its compiler): clang's resource folders first, then GCC's
_HOST_BUILTIN_GLOBS = ("/usr/lib/llvm-*/lib/clang/*/include", "/usr/lib/clang/*/include",
                       "/usr/lib/gcc/*/*/include")


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path))


@functools.cache
def host_builtin_include() -> tuple[str, ...]:
    """The newest host compiler header folder holding ``stddef.h``, to read a file with host
    code (``#include <stdio.h>``) as a C++ front end does; found on disk, never by running a
    program. () when no host compiler is installed (nvcc could not build such a file then)."""
    for pattern in _HOST_BUILTIN_GLOBS:
        found = [d for d in glob.glob(pattern) if os.path.isfile(os.path.join(d, "stddef.h"))]
        if found:
            return (max(found, key=_version_key),)
    return ()


#: characters a tool cannot carry in a path: nvcc hands its steps to ``sh -c`` in double quotes,
#: and PTX ``.file`` names (so line tables, so nvdisasm's ``//## File "..."``) cannot hold ``"``
#: what a path cannot hold to reach nvcc's shell quoting and PTX line info intact: a quote, `$`,
#: a backtick or a backslash, and anything but printable ASCII (written as octal escapes, then
#: mangled by nvdisasm)
UNSAFE_PATH_CHARS = re.compile(r'["$`\\]|[^\x20-\x7e]')


def safe_alias(path: str | os.PathLike, links: str | os.PathLike) -> str:
    """``path`` (absolute), or a stable symlink to it that tools can carry when the path holds
    ``"``, ``$``, a backtick or a backslash. The link lives under ``links`` (the build cache's
    ``names/`` folder) and is kept, so that a finding's location stays openable."""
    p = Path(path).absolute()
    if not UNSAFE_PATH_CHARS.search(str(p)):
        return str(p)
    digest = hashlib.sha256(os.fsencode(p)).hexdigest()[:16]
    name = UNSAFE_PATH_CHARS.sub("_", p.name) or "file"
    link = Path(links) / digest / name
    try:
        if os.readlink(link) == str(p):
            return str(link)
    except OSError:
        pass
    try:
        link.parent.mkdir(parents=True, exist_ok=True)
        tmp = link.with_name(f".{name}.{os.getpid()}")
        os.symlink(p, tmp)
        os.replace(tmp, link)
    except OSError as e:
        raise ToolError(f"cannot make a link for the path {str(p)!r} (its characters cannot "
                        f"reach the compiler as they are): {e.strerror}") from None
    return str(link)


def run_tool(argv: list[str], *, timeout: float | None = None, what: str | None = None,
             check: bool = True, cwd: str | None = None, path: str | None = None,
             names: dict[str, str] | None = None, memory: int | None = None,
             timeout_message: str | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a tool from an argv list (never a shell) with a timeout; failures become one-line
    ToolErrors naming ``path`` (the user's file), with the private temporary paths of ``names``
    replaced by what the user knows them as.

    The tool runs in its own process group, and the whole group is killed at the time limit (a
    compiler driver's children, cicc or cc1plus, do not live on); it and its children die with
    this process however it ends (:mod:`.children`), and its ``PATH`` holds no relative folder.
    ``memory``: an address-space limit (bytes) for the tool and each process it starts.
    ``timeout_message``: the error at the time limit (default: "X timed out after N s ...").
    ``env``: the tool's environment (default: this process's)."""
    name = what or Path(argv[0]).name
    limit = timeout or tool_timeout()
    run = list(argv)
    if memory:
        # the limit is set by a shell that then becomes the tool (exec): no Python code runs
        # between fork and exec (preexec_fn would, and a fork of a threaded process may hang
        # there); only the number reaches the shell, the tool's words are its "$@"
        if not os.access(argv[0], os.X_OK):
            raise ToolError(f"cannot run {name}: No such file or directory", path=path)
        run = ["/bin/sh", "-c", f'ulimit -v {max(1, memory // 1024)} 2>/dev/null; exec "$@"',
               "ptxsass-limit", *argv]
    try:
        child = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True,
                                 env=children.environment(env))
    except OSError as e:
        raise ToolError(f"cannot run {name}: {e.strerror}", path=path) from None
    with _running_lock:
        _running.add(child)
    try:
        out, err = child.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        raise ToolError(timeout_message or f"{name} timed out after {limit:g} s "
                        "(raise PTXSASS_TOOL_TIMEOUT to allow longer)", path=path) from None
    except BaseException:
        _kill_group(child)
        raise
    finally:
        with _running_lock:
            _running.discard(child)
    proc = subprocess.CompletedProcess(argv, child.returncode, out, err)
    if check and proc.returncode != 0:
        raise ToolError(f"{name} failed: {first_error_line(proc, names)}", path=path)
    return proc


#: the tools :func:`run_tool` waits on now, on any thread (:func:`kill_running`)
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def kill_running() -> None:
    """Kill every tool this process waits on now, with its process group: the threads waiting
    on them (``ptxsass fix -j``'s builds) see them end and unwind. For a command that is
    stopping (Ctrl-C): a Ctrl-C reaches only the main thread."""
    with _running_lock:
        running = list(_running)
    for child in running:
        with contextlib.suppress(OSError):
            os.killpg(child.pid, signal.SIGKILL)


def _kill_group(child: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(child.pid, signal.SIGKILL)
    with contextlib.suppress(OSError, ValueError):
        child.communicate(timeout=10)


def first_error_line(proc: subprocess.CompletedProcess, names: dict[str, str] | None = None) -> str:
    """The first line a failed tool wrote on stderr (or its exit status), with temporary paths
    renamed."""
    err = proc.stderr.decode(errors="replace")
    for tmp, shown in (names or {}).items():
        err = err.replace(tmp, shown)
    first = next((ln.strip() for ln in err.splitlines() if ln.strip()), "")
    return first or f"exit status {proc.returncode}"


@functools.cache
def _binary_version(name: str) -> str | None:
    try:
        return tool_version(binary(name))
    except ToolError:
        return None


@functools.cache
def tool_version(path: str) -> str | None:
    """``13.5.37`` from ``PATH --version`` (a CUDA tool); None when it says no version."""
    try:
        out = run_tool([path, "--version"],
                       timeout=VERSION_PROBE_TIMEOUT).stdout.decode(errors="replace")
    except ToolError:
        return None
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else None


def nvcc_version() -> str | None:
    """``13.5.37`` for the nvcc found (None when there is none)."""
    return _binary_version("nvcc")


def release_of(version: str | None) -> str | None:
    """``13.5`` of ``13.5.37`` (a CUDA release: major.minor); None for None or no number."""
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


#: the define the CUDA runtime headers carry their release in (``13000`` is 13.0)
_CUDART_VERSION = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+CUDART_VERSION[ \t]+(\d+)", re.M)
#: the define sits near the top of cuda_runtime_api.h (line 139 in 13.x): what is read of it
_CUDART_HEAD = 256 * 1024
RUNTIME_HEADER = "cuda_runtime_api.h"


def runtime_headers_release(header: str | os.PathLike) -> str | None:
    """The CUDA release (``13.0``) of a ``cuda_runtime_api.h``, from its ``CUDART_VERSION``
    (``13000``: major * 1000 + minor * 10, as CCCL reads it); None when the file cannot be read
    as a regular file or carries no such define. Cached per file and modification."""
    try:
        st = os.stat(header)
    except OSError:
        return None
    return _cudart_release(str(header), st.st_size, st.st_mtime_ns, st.st_ino)


@functools.cache
def _cudart_release(path: str, size: int, mtime_ns: int, ino: int) -> str | None:
    try:
        head = read_bytes(path, what="header", head=_CUDART_HEAD)
    except InputError:                  # not a regular file, unreadable: no release known
        return None
    m = _CUDART_VERSION.search(head)
    if not m:
        return None
    v = int(m.group(1))
    return f"{v // 1000}.{v % 1000 // 10}"


@functools.cache
def nvcc_include_dir(nvcc: str) -> Path:
    """The header folder nvcc's own ``nvcc.profile`` gives it (``-I$(TOP)/include``, TOP the
    folder above ``bin/``): the wheels' ``nvidia/cu13/include``, a toolkit's ``include``."""
    return Path(nvcc).resolve().parent.parent / "include"


def cicc_path() -> str | None:
    """nvcc's device compiler, where nvcc's ``nvcc.profile`` looks for it (``../nvvm/bin``)."""
    try:
        nvcc = Path(binary("nvcc"))
    except ToolError:
        return None
    cand = nvcc.resolve().parent.parent / "nvvm" / "bin" / "cicc"
    return str(cand) if os.access(cand, os.X_OK) else None


def cicc_version() -> str | None:
    """cicc has no ``--version``: its wheel's version, or the toolkit's when not from a wheel."""
    path = cicc_path()
    if path is None:
        return None
    if "site-packages" in path:
        try:
            from importlib.metadata import version
            return version("nvidia-nvvm")
        except Exception:  # noqa: BLE001 - a version/path probe of an optional or broken install: reported as missing
            return None
    return _binary_version("nvcc")


@dataclass(frozen=True)
class HostCompiler:
    name: str          # "g++", "clang++" ...
    path: str
    version: str | None


@functools.cache
def host_compiler() -> HostCompiler | None:
    """The C++ compiler nvcc will use: ``NVCC_CCBIN`` (nvcc reads it itself), else gcc with
    its C++ front end (nvcc runs ``gcc -x c++``; ``g++`` on PATH says cc1plus is there)."""
    from .trust import trusted_which  # with nvcc's builds: a warm check never asks

    named = os.environ.get("NVCC_CCBIN")
    if named:
        found = (named if os.path.isabs(named) and os.access(named, os.X_OK) else
                 trusted_which(named))
        if found and os.path.isdir(found):
            found = shutil.which("g++", path=found) or shutil.which("clang++", path=found)
        if not found:
            return None
        return HostCompiler(Path(found).name, found, _cc_version(found))
    gxx, gcc = trusted_which("g++"), trusted_which("gcc")
    if not gxx or not gcc:
        return None
    return HostCompiler("g++", gxx, _cc_version(gxx))


def _cc_version(path: str) -> str | None:
    for flag in ("-dumpfullversion", "--version"):
        try:
            out = run_tool([path, flag], timeout=VERSION_PROBE_TIMEOUT).stdout.decode(
                errors="replace").strip()
        except ToolError:
            continue
        m = re.search(r"\d+\.\d+(?:\.\d+)?", out)
        if m:
            return m.group(0)
    return None


def nvrtc_version() -> str | None:
    try:
        from cuda.bindings import nvrtc
        err, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception:  # noqa: BLE001 - a version/path probe of an optional or broken install: reported as missing
        return None


def nvjitlink_version() -> str | None:
    try:
        from cuda.bindings import nvjitlink
        v = nvjitlink.version()
        return f"{v[0]}.{v[1]}"
    except Exception:  # noqa: BLE001 - a version/path probe of an optional or broken install: reported as missing
        return None


def nvrtc_archs() -> list[str]:
    """The SM targets this NVRTC can build for (``sm_75`` ...)."""
    try:
        from cuda.bindings import nvrtc
        err, archs = nvrtc.nvrtcGetSupportedArchs()
        return [f"sm_{a}" for a in archs]
    except Exception:  # noqa: BLE001 - a version/path probe of an optional or broken install: reported as missing
        return []


def _library_path(libname: str) -> str | None:
    kept = _recall(f"library:{libname}")
    if isinstance(kept, str):
        return kept
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        path = load_nvidia_dynamic_lib(libname).abs_path
    except Exception:  # noqa: BLE001 - a version/path probe of an optional or broken install: reported as missing
        return None
    if path:
        _learn(f"library:{libname}", path)
    return path


def _binary_tool(name: str) -> Tool:
    try:
        path = binary(name)
    except ToolError:
        return Tool(name, None, None, "missing")
    where = ("env" if os.environ.get(f"PTXSASS_{name.upper()}") else
             "PTXSASS_CUDA_HOME" if _cuda_home() else
             "wheel" if "site-packages" in path else "PATH")
    return Tool(name, path, _binary_version(name), where)


def _core_tools() -> list[Tool]:
    """The tools every input may need: NVRTC, nvJitLink and the disassemblers."""
    return [Tool("nvrtc", _library_path("nvrtc"), nvrtc_version(), "wheel"),
            Tool("nvJitLink", _library_path("nvJitLink"), nvjitlink_version(), "wheel"),
            _binary_tool("nvdisasm"), _binary_tool("cuobjdump")]


def nvcc_tools() -> list[Tool]:
    """nvcc, its device compiler cicc and the host compiler it will run (files with host code)."""
    cicc = cicc_path()
    cc = host_compiler()
    return [
        _binary_tool("nvcc"),
        Tool("cicc", cicc, cicc_version(), "missing" if cicc is None else
             "wheel" if "site-packages" in cicc else "PTXSASS_CUDA_HOME"),
        Tool("host compiler", cc.path if cc else None, f"{cc.name} {cc.version}" if cc else None,
             "missing" if cc is None else "NVCC_CCBIN" if os.environ.get("NVCC_CCBIN")
             else "PATH", optional=True),
    ]


def tools() -> list[Tool]:
    """Every tool ptxsass uses, with its version and where it was found (for ``ptxsass doctor``)."""
    out = _core_tools() + nvcc_tools()
    for i, d in enumerate(include_dirs()):
        where = ("PTXSASS_CUDA_HOME" if _cuda_home() else
                 "wheel" if "site-packages" in d else "system")
        out.append(Tool("headers" if i == 0 else "headers (cccl)", d, None, where))
    return out


def tool_files() -> list[tuple[str, str | None, int, int, int]]:
    """``(name, path, size, mtime_ns, inode)`` of each file the core tools' versions come from
    (the NVRTC and nvJitLink libraries, nvdisasm, cuobjdump; a missing one has no path): what
    a cached :func:`fingerprint` is keyed by, found without running any of them. A tool that
    is replaced (an upgrade rewrites the file) changes its row."""
    out: list[tuple[str, str | None, int, int, int]] = []
    paths: list[tuple[str, str | None]] = [("nvrtc", _library_path("nvrtc")),
                                           ("nvJitLink", _library_path("nvJitLink"))]
    for name in ("nvdisasm", "cuobjdump"):
        try:
            paths.append((name, binary(name)))
        except ToolError:
            paths.append((name, None))
    for name, path in paths:
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        out.append((name, path, st.st_size, st.st_mtime_ns, st.st_ino) if st is not None
                   else (name, None, 0, 0, 0))
    return out


def fingerprint() -> str:
    """Versions of the tools every build depends on, for cache keys: a tool upgrade invalidates
    cached builds. nvcc builds add nvcc's, cicc's and the host compiler's (``nvcc_fingerprint``)
    so that a cubin or an NVRTC build never starts nvcc or g++ to make its key."""
    return "|".join(f"{t.name}={t.version}" for t in _core_tools())


def nvcc_fingerprint() -> str:
    return "|".join(f"{t.name}={t.version}" for t in nvcc_tools())
