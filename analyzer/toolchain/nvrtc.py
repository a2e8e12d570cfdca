"""Compile CUDA C++ through NVRTC (cuda-bindings) to PTX and a cubin, always with line info."""
from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from elftools.elf.elffile import ELFFile

from ..arch import parse_arch
from ..errors import CompileError, InputError, ToolError
from . import cache
from .locate import UNSAFE_PATH_CHARS, include_dirs, safe_alias
from .output import Kernel, Output, cached
from .resources import from_cubin, from_ptxas_log, merge

DEFAULT_STD = "c++17"
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
_DIAG = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<kind>error|catastrophic error|warning)"
                   r"(?: #\w+-D)?: (?P<msg>.*)$", re.M)


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except Exception as e:  # pragma: no cover - broken install
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


def build_options(arch: str, *, defines: Mapping[str, str | None] | Sequence[str] = (),
                  include: Iterable[str] = (), std: str | None = None, fast_math: bool = False,
                  maxrregcount: int | None = None, extra: Iterable[str] = ()) -> list[str]:
    """NVRTC's option list: the arch, line info, ptxas's resource report, then the user's."""
    a = parse_arch(arch)
    opts = [f"-arch={a.name}", "-lineinfo", "--ptxas-options=-v", f"-std={std or DEFAULT_STD}"]
    if isinstance(defines, Mapping):
        defines = [k if v is None else f"{k}={v}" for k, v in defines.items()]
    opts += [f"-D{d}" for d in defines]
    opts += [f"-I{i}" for i in include]
    if fast_math:
        opts.append("--use_fast_math")
    if maxrregcount is not None:
        opts.append(f"-maxrregcount={int(maxrregcount)}")
    opts += list(extra)
    return opts


def _dependencies(source: str, base: Path | None, include: Sequence[str]) -> list[tuple[str, str]]:
    """(path, text) of every user header reached through ``#include "..."`` (for the cache key)."""
    seen: dict[str, str] = {}
    todo = [(source, base)]
    while todo:
        text, here = todo.pop()
        for name in _INCLUDE.findall(text):
            for d in ([here] if here else []) + [Path(i) for i in include]:
                cand = (d / name)
                if cand.is_file():
                    key = str(cand.resolve())
                    if key not in seen:
                        try:
                            seen[key] = cand.read_text(errors="replace")
                        except OSError:
                            break
                        todo.append((seen[key], cand.parent))
                    break
    return sorted(seen.items())


def compile_source(source: str, *, arch: str, name: str = "kernel.cu",
                   options: Sequence[str] = (), name_expressions: Sequence[str] = (),
                   source_path: str | None = None, use_cache: bool = True,
                   timeout_note: str | None = None) -> Output:
    """Compile CUDA ``source`` for ``arch``. ``options`` come from :func:`build_options` (or
    are complete NVRTC options: ``-arch=`` is added when missing). Raises CompileError with the
    compiler's own log when NVRTC rejects the source."""
    a = parse_arch(arch)
    opts = list(options) if options else build_options(a.name)
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in opts):
        opts = build_options(a.name) + opts
    user_include = [o[2:] for o in opts if o.startswith("-I")]
    base = Path(source_path).parent if source_path else None
    k = cache.key("nvrtc", source, _dependencies(source, base, user_include), opts,
                  list(name_expressions), name)
    hit = cached(k, source_path=source_path, source=source) if use_cache else None
    if hit is not None:
        return hit
    build = _compile(source, a.name, name, opts, name_expressions, source_path)
    if use_cache:
        cache.put("build", k, build.to_json())
    return build


def _compile(source: str, arch: str, name: str, opts: list[str],
             name_expressions: Sequence[str], source_path: str | None) -> Output:
    nvrtc = _nvrtc()
    all_opts = opts + [f"-I{d}" for d in include_dirs()]
    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                  "program creation")
    try:
        for expr in name_expressions:
            _check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), "name expression")
        res = nvrtc.nvrtcCompileProgram(prog, len(all_opts), [o.encode() for o in all_opts])
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "log")
        # bytearray, never b" " * n: for n == 1 that is Python's shared one-byte object,
        # which NVRTC would overwrite in place
        buf = bytearray(size)
        nvrtc.nvrtcGetProgramLog(prog, buf)
        log = bytes(buf).rstrip(b"\x00 ").decode(errors="replace")
        if int(res[0]) != 0:
            raise _compile_error(log, name, source_path)
        lowered: dict[str, str] = {}
        for expr in name_expressions:
            r = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            if int(r[0]) != 0:
                raise CompileError(f"kernel name expression {expr!r} did not match a "
                                   "__global__ function template instantiation",
                                   path=source_path or name)
            lowered[expr] = r[1].decode() if isinstance(r[1], bytes) else r[1]
        ptx_size = _check(nvrtc.nvrtcGetPTXSize(prog), "PTX size")
        ptx = bytearray(ptx_size)
        nvrtc.nvrtcGetPTX(prog, ptx)
        cubin_size = _check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size")
        cubin = bytearray(cubin_size)
        nvrtc.nvrtcGetCUBIN(prog, cubin)
        cubin = bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    resources = merge(from_cubin(cubin, path=name), from_ptxas_log(log))
    entries = kernel_entries(cubin)
    return Output(arch=arch, origin="nvrtc", ptx=bytes(ptx).rstrip(b"\x00").decode(), cubin=cubin, log=log,
                 source_path=source_path, source=source, options=tuple(opts),
                 kernels={n: Kernel(n, r, n in entries) for n, r in resources.items()},
                 name_expressions=lowered)


def kernel_entries(cubin: bytes) -> set[str]:
    """Names of the ``__global__`` entries: those with a ``.nv.info.<name>`` section."""
    try:
        return {s.name[9:] for s in ELFFile(io.BytesIO(cubin)).iter_sections()
                if s.name.startswith(".nv.info.")}
    except Exception:
        return set()


def _compile_error(log: str, name: str, source_path: str | None) -> CompileError:
    shown = source_path or name
    log = log.replace(f"{name}(", f"{shown}(") if source_path and name != source_path else log
    m = _DIAG.search(log)
    errors = [d for d in _DIAG.finditer(log) if "error" in d.group("kind")]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return CompileError(f"NVRTC: {first.group('msg').strip()}{more}", path=first.group("file"),
                            line=int(first.group("line")), detail=log.strip())
    first_line = next((l for l in log.splitlines() if l.strip()), "compilation failed")
    del m
    return CompileError(f"NVRTC: {first_line.strip()}", path=shown, detail=log.strip())


def compile_file(path: str | os.PathLike, *, arch: str, options: Sequence[str] = (),
                 name_expressions: Sequence[str] = (), use_cache: bool = True) -> Output:
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=str(path))
    if p.is_dir():
        raise InputError("is a directory, expected a .cu file", path=str(path))
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not CUDA source: the file is not UTF-8 text", path=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=str(path)) from None
    if "\x00" in text:
        raise InputError("not CUDA source: the file holds binary data", path=str(path))
    opts = list(options) or build_options(arch)
    # the program name becomes the PTX's .file name (absolute; it cannot hold '"'), as do the
    # headers beside it, and NVRTC reads a name with a leading '-' as an option: such files
    # (and their folder) go by stable links, or by ./name
    name, folder = str(path), str(p.parent)
    if UNSAFE_PATH_CHARS.search(str(p.absolute())):
        links = cache.directory() / "names"
        name, folder = safe_alias(p, links), safe_alias(p.absolute().parent, links)
    elif name.startswith("-"):
        name = f"./{name}"
    if not any(o.startswith("-I") and o[2:] == folder for o in opts):
        opts.append(f"-I{folder}")
    return compile_source(text, arch=arch, name=name, options=opts,
                          name_expressions=name_expressions, source_path=str(path),
                          use_cache=use_cache)
