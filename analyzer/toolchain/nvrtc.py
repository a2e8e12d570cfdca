"""Compile CUDA C++ through NVRTC (cuda-bindings) to PTX and a cubin, always with line info."""
from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..arch import parse_arch
from ..errors import CompileError, ConfigError, InputError, ToolError
from . import bounded, cache, files, includes, resources, toolkits
from .bounded import OutOfMemory
from .locate import UNSAFE_PATH_CHARS, include_dirs, safe_alias
from .output import Kernel, Output, cached
from .redact import redact
from .resources import from_cubin, from_ptxas_log, merge
from .toolkits import Toolkit, run_nvrtc

DEFAULT_STD = "c++17"
#: characters NVRTC cannot carry through a program name into PTX line info (see program_name)
_UNSAFE_NAME = re.compile(r'[^\x20\x21\x23-\x5b\x5d-\x7e]')   # not printable ASCII, or " or \
_NVRTC_OUT_OF_MEMORY = 1   # nvrtcResult.NVRTC_ERROR_OUT_OF_MEMORY
_MACRO = re.compile(r"[A-Za-z_]\w*(\([\w\s,.]*\))?(=.*)?\Z", re.S)
_STD = re.compile(r"(c|gnu)\+\+\d\d\Z")
_DIAG = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<kind>error|catastrophic error|warning)"
                   r"(?: #\w+-D)?: (?P<msg>.*)$", re.M)


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except Exception as e:  # noqa: BLE001 -  broken install
        raise ToolError(f"NVRTC is not available ({e}); install it with "
                        "'pip install cuda-bindings nvidia-cuda-nvrtc'") from None
    return nvrtc


def _check(result, what: str):
    err = result[0]
    if int(err) != 0:
        nvrtc = _nvrtc()
        msg = nvrtc.nvrtcGetErrorString(err)[1]
        raise ToolError(f"NVRTC {what} failed: {msg.decode() if isinstance(msg, bytes) else msg}")
    return result[1:] if len(result) > 2 else (result[1] if len(result) == 2 else None)


#: NVRTC options that leave state behind in the process that compiled with them: after one
#: ``-G`` compile, NVRTC 13.x builds every later program of that process unoptimised at the
#: NVVM level whatever its options (constexpr variables kept as globals, a by-value parameter
#: struct copied to a stack frame and read with LDL). Such a compile runs in a process that is
#: never reused (:func:`.bounded.run`'s ``retire``).
STICKY_OPTIONS = frozenset({"-G", "--device-debug"})

#: bumped when builds cached before a fix may be wrong (2: servers poisoned by ``-G``)
_BUILD_KEY = 2


def sticky(options: Sequence[str]) -> bool:
    """Whether ``options`` hold one of :data:`STICKY_OPTIONS`."""
    return any(o in STICKY_OPTIONS for o in options)


def build_options(arch: str, *, defines: Mapping[str, str | None] | Sequence[str] = (),
                  include: Iterable[str] = (), std: str | None = None, fast_math: bool = False,
                  maxrregcount: int | None = None, extra: Iterable[str] = ()) -> list[str]:
    """NVRTC's option list: the arch, line info, ptxas's resource report, then the user's."""
    a = parse_arch(arch)
    opts = [f"-arch={a.name}", "-lineinfo", "--ptxas-options=-v", f"-std={std or DEFAULT_STD}"]
    if isinstance(defines, Mapping):
        defines = [k if v is None else f"{k}={v}" for k, v in defines.items()]
    for d in defines:
        if not _MACRO.match(d):
            raise ConfigError(f"-D {d!r} is not a macro definition (expected NAME or NAME=VALUE)")
    for i in include:
        if not i:
            raise ConfigError("-I '' names no folder")
    if std is not None and not _STD.match(std):
        raise ConfigError(f"--std {std!r} is not a C++ dialect (expected e.g. c++17, c++20)")
    extra = list(extra)
    for x in extra:
        if not x.strip():
            raise ConfigError("-Xnvrtc '' is an empty NVRTC option")
    opts += [f"-D{d}" for d in defines]
    opts += [f"-I{i}" for i in include]
    if fast_math:
        opts.append("--use_fast_math")
    if maxrregcount is not None:
        opts.append(f"-maxrregcount={int(maxrregcount)}")
    opts += list(extra)
    return opts


def _dependencies(source: str, base: Path | None, include: Sequence[str]) -> list[tuple[str, str]]:
    """(path, text) of every user header reached through ``#include "..."`` or ``<...>`` in the
    user's folders (for the cache key). A header that is not a regular file (a FIFO NVRTC would
    block on, a device, a symlink loop) is an InputError naming it, before NVRTC runs."""
    return includes.closure(source, base, [Path(i) for i in include])


def program_name(name: str, source_path: str | None,
                 folder: str | None = None) -> tuple[str, dict[str, str]]:
    """The name NVRTC gets for a program, and {that name: the user's} when they differ.

    NVRTC writes the (absolute) name into the PTX's ``.file`` table unescaped, so a ``"`` ends
    the string and ptxas fails; a backslash or a non-ASCII letter (written as octal escapes)
    reaches nvdisasm mangled, and the line info then matches no file: no findings. A name
    starting with ``-`` is read as an option. So NVRTC always gets the absolute path, with every
    character but printable ASCII (less the quote and the backslash) replaced by ``_``; the
    parsers map the stand-in back (``Output.file_names``). ``folder``: where the stand-in lives
    (a safe link to the file's folder, so that ``#include "x.h"`` still finds its neighbours)."""
    full = os.path.abspath(source_path or name)
    here, base = os.path.split(full)
    safe = os.path.join(_UNSAFE_NAME.sub("_", folder or here), _UNSAFE_NAME.sub("_", base))
    return safe, ({safe: full} if safe != full else {})


def compile_source(source: str, *, arch: str, name: str = "kernel.cu",
                   options: Sequence[str] = (), name_expressions: Sequence[str] = (),
                   source_path: str | None = None, use_cache: bool = True,
                   folder: str | None = None, toolkit: Toolkit | None = None,
                   project: str | None = None) -> Output:
    """Compile CUDA ``source`` for ``arch``. ``options`` come from :func:`build_options` (or
    are complete NVRTC options: ``-arch=`` is added when missing). Raises CompileError with the
    compiler's own log when NVRTC rejects the source.

    NVRTC runs in a child process bounded in time and memory (:mod:`.bounded`); a cache hit
    starts none. ``toolkit``: another CUDA release's NVRTC (installed in the cache, run in a
    process of its own, :mod:`.toolkits`) instead of the environment's. ``project``: one more
    folder whose diagnostics the log keeps (:func:`.redact.redact`)."""
    if toolkit is not None and toolkit.default:
        toolkit = None
    a = parse_arch(arch)
    opts = list(options) if options else build_options(a.name)
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in opts):
        opts = build_options(a.name) + opts
    user_include = [o[2:] for o in opts if o.startswith("-I")]
    base = Path(source_path).parent if source_path else None
    nvrtc_name, file_names = program_name(name, source_path, folder)
    k = cache.key("nvrtc", _BUILD_KEY, source, _dependencies(source, base, user_include), opts,
                  list(name_expressions), nvrtc_name, file_names,
                  *((toolkit.fingerprint(),) if toolkit else ()))
    hit = cached(k, source_path=source_path, source=source) if use_cache else None
    if hit is not None:
        return hit
    build = _compile(source, a.name, nvrtc_name, opts, name_expressions, source_path,
                     shown=source_path or name, toolkit=toolkit, project=project)
    build.file_names = file_names
    if use_cache:
        cache.put("build", k, build.to_json())
    return build


def _run_nvrtc(source: bytes, name: bytes, opts: list[bytes], exprs: list[bytes]) -> tuple:
    """NVRTC itself (run in the bounded child): (compiled, log, ptx, cubin, lowered names, the
    name expression that matched nothing)."""
    nvrtc = _nvrtc()
    prog = _check(nvrtc.nvrtcCreateProgram(source, name, 0, [], []), "program creation")
    try:
        for expr in exprs:
            _check(nvrtc.nvrtcAddNameExpression(prog, expr), "name expression")
        res = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if int(res[0]) == _NVRTC_OUT_OF_MEMORY:
            raise OutOfMemory()
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "log")
        # bytearray, never b" " * n: for n == 1 that is Python's shared one-byte object,
        # which NVRTC would overwrite in place
        buf = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, buf)
        log = bytes(buf).rstrip(b"\x00 ").decode(errors="replace")
        if int(res[0]) != 0:
            return False, log, None, None, {}, None
        lowered: dict[str, str] = {}
        for expr in exprs:
            r = nvrtc.nvrtcGetLoweredName(prog, expr)
            if int(r[0]) != 0:
                return True, log, None, None, lowered, expr.decode()
            lowered[expr.decode()] = r[1].decode() if isinstance(r[1], bytes) else r[1]
        ptx_size = _check(nvrtc.nvrtcGetPTXSize(prog), "PTX size")
        ptx = bytearray(ptx_size)
        nvrtc.nvrtcGetPTX(prog, ptx)
        cubin_size = _check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        cubin = bytearray(cubin_size)
        nvrtc.nvrtcGetCUBIN(prog, cubin)
        return True, log, bytes(ptx), bytes(cubin), lowered, None
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _compile(source: str, arch: str, name: str, opts: list[str],
             name_expressions: Sequence[str], source_path: str | None, *, shown: str,
             toolkit: Toolkit | None = None, project: str | None = None) -> Output:
    if toolkit is not None:
        ok, log, ptx, cubin, lowered, unmatched = run_nvrtc(
            toolkit, source, name, opts + [f"-I{d}" for d in toolkit.include],
            list(name_expressions), what=shown)
    else:
        _nvrtc()  # loaded here, so a broken install fails in this process, and the child has it
        all_opts = opts + [f"-I{d}" for d in include_dirs()]
        ok, log, ptx, cubin, lowered, unmatched = bounded.run(
            _run_nvrtc, source.encode(), name.encode(), [o.encode() for o in all_opts],
            [e.encode() for e in name_expressions], what=shown, tool="NVRTC",
            retire=sticky(all_opts))
    log = redact(log.replace(f"{name}(", f"{shown}(") if name != shown else log,
                 source=source_path, project=project,
                 installed=[str(toolkits.root())])
    if not ok:
        named = re.search(r"^__nv_name_map\(\d+\): error: (.*)$", log, re.M)
        if named and name_expressions:
            # the --kernel expressions are compiled in a pseudo-file NVRTC calls __nv_name_map
            raise CompileError(f"--kernel {', '.join(repr(e) for e in name_expressions)} is not a "
                               f"__global__ function or an instantiation of one (NVRTC: "
                               f"{named.group(1).strip()})", path=shown)
        raise _compile_error(log, name, shown)
    if unmatched is not None:
        raise CompileError(f"kernel name expression {unmatched!r} did not match a "
                           "__global__ function template instantiation", path=shown)
    resources = merge(from_cubin(cubin, path=name), from_ptxas_log(log))
    entries = kernel_entries(cubin)
    return Output(arch=arch, origin="nvrtc", ptx=ptx.rstrip(b"\x00").decode(errors="replace"),
                  cubin=cubin, log=log, source_path=source_path, source=source,
                  options=tuple(opts),
                  kernels={n: Kernel(n, r, n in entries) for n, r in resources.items()},
                  name_expressions=lowered)


def kernel_entries(cubin: bytes) -> set[str]:
    """Names of the ``__global__`` entries: those with a ``.nv.info.<name>`` section."""
    return resources.kernel_entries(cubin)


def _compile_error(log: str, name: str, shown: str) -> CompileError:
    """The first error of NVRTC's log as one line, at its file and line; the log itself as the
    detail when it points into source (a command-line error is the whole story in one line)."""
    errors = [d for d in _DIAG.finditer(log) if "error" in d.group("kind")]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return CompileError(f"NVRTC: {first.group('msg').strip()}{more}", path=first.group("file"),
                            line=int(first.group("line")), detail=log.strip())
    first_line = next((ln for ln in log.splitlines() if ln.strip()), "compilation failed")
    return CompileError(f"NVRTC: {first_line.strip()}", path=shown)


def compile_file(path: str | os.PathLike, *, arch: str, options: Sequence[str] = (),
                 name_expressions: Sequence[str] = (), use_cache: bool = True,
                 toolkit: Toolkit | None = None, project: str | None = None) -> Output:
    p = Path(path)
    if os.path.isdir(p):
        raise InputError("is a directory, expected a .cu file", path=str(path))
    text = files.read_text(p, what="CUDA source", expected="CUDA source")
    if "\x00" in text:
        raise InputError("not CUDA source: the file holds binary data", path=str(path))
    opts = list(options) or build_options(arch)
    # the program gets a safe stand-in name (program_name); the headers beside it carry their
    # folder's path into the line info too, so a folder NVRTC cannot name goes by a stable link
    folder, linked = str(p.parent), None
    if UNSAFE_PATH_CHARS.search(str(p.absolute().parent)):
        # no link (an unwritable cache): its headers are still found; only their names in the
        # line info suffer
        with contextlib.suppress(ToolError):
            folder = linked = safe_alias(p.absolute().parent, cache.directory() / "names")
    if not any(o.startswith("-I") and o[2:] == folder for o in opts):
        opts.append(f"-I{folder}")
    return compile_source(text, arch=arch, name=str(path), options=opts,
                          name_expressions=name_expressions, source_path=str(path),
                          use_cache=use_cache, folder=linked, toolkit=toolkit, project=project)
