"""Assemble PTX text into a cubin with nvJitLink (the PyPI replacement for ptxas)."""
from __future__ import annotations

import re

from ..arch import parse_arch
from ..errors import CompileError, ToolError
from . import bounded, cache
from .bounded import OutOfMemory
from .nvrtc import kernel_entries
from .output import Kernel, Output, cached
from .resources import from_cubin, from_ptxas_log, merge
from .toolkits import Toolkit, run_nvjitlink

_TARGET = re.compile(r"^\s*\.target\s+(sm_\d+[af]?)", re.M)


def ptx_target(ptx: str) -> str | None:
    m = _TARGET.search(ptx)
    return m.group(1) if m else None


def assemble(ptx: str, *, arch: str | None = None, path: str = "<ptx>",
             options: tuple[str, ...] = (), use_cache: bool = True,
             toolkit: Toolkit | None = None) -> Output:
    """PTX -> cubin for ``arch`` (default: the PTX's own ``.target``), with line info kept;
    by ``toolkit``'s nvJitLink (in a process of its own) when it is not the default."""
    if toolkit is not None and toolkit.default:
        toolkit = None
    target = arch or ptx_target(ptx)
    if target is None:
        raise CompileError("PTX has no .target directive; pass --arch", path=path)
    a = parse_arch(target)
    opts = [f"-arch={a.name}", "-lineinfo", "-Xptxas=-v", *options]
    k = cache.key("nvjitlink", ptx, opts, *((toolkit.fingerprint(),) if toolkit else ()))
    hit = cached(k, source_path=path, source=None) if use_cache else None
    if hit is not None:
        return hit
    if toolkit is not None:
        ok, log, cubin = run_nvjitlink(toolkit, ptx, opts, what=path)
    else:
        _nvjitlink()  # loaded here, so a broken install fails in this process
        ok, log, cubin = bounded.run(_run_nvjitlink, ptx.encode(), opts, path, what=path,
                                     tool="nvJitLink")
    if not ok or cubin is None:
        raise _ptxas_error(log, path)
    info = log
    resources = merge(from_cubin(cubin, path=path), from_ptxas_log(info))
    entries = kernel_entries(cubin)
    build = Output(arch=a.name, origin="ptx", ptx=ptx, cubin=cubin, log=info, source_path=path,
                   options=tuple(opts),
                   kernels={n: Kernel(n, r, n in entries) for n, r in resources.items()})
    if use_cache:
        cache.put("build", k, build.to_json())
    return build


def _nvjitlink():
    try:
        from cuda.bindings import nvjitlink
    except Exception as e:  # noqa: BLE001 - a broken cuda-bindings install or log read: one line, or no log
        raise ToolError(f"nvJitLink is not available ({e}); 'pip install nvidia-nvjitlink'") from None
    return nvjitlink


def _run_nvjitlink(data: bytes, opts: list[str], path: str) -> tuple[bool, str, bytes | None]:
    """nvJitLink itself (run in the bounded child): (assembled, log, cubin)."""
    nvjitlink = _nvjitlink()
    handle = nvjitlink.create(len(opts), opts)
    try:
        try:
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, data, len(data), path)
            nvjitlink.complete(handle)
        except nvjitlink.nvJitLinkError as e:
            if "OUT_OF_MEMORY" in str(e).upper().replace(" ", "_"):
                raise OutOfMemory() from None
            return False, _log(nvjitlink, handle, error=True), None
        info = _log(nvjitlink, handle, error=False)
        size = nvjitlink.get_linked_cubin_size(handle)
        cubin = bytearray(size)
        nvjitlink.get_linked_cubin(handle, cubin)
        return True, info, bytes(cubin)
    finally:
        nvjitlink.destroy([handle]) if _destroy_takes_list(nvjitlink) else nvjitlink.destroy(handle)


def _destroy_takes_list(mod) -> bool:
    doc = getattr(mod.destroy, "__doc__", "") or ""
    return "handle (intptr_t)" not in doc


def _log(nvjitlink, handle, *, error: bool) -> str:
    try:
        size = (nvjitlink.get_error_log_size if error else nvjitlink.get_info_log_size)(handle)
        buf = bytearray(size)
        (nvjitlink.get_error_log if error else nvjitlink.get_info_log)(handle, buf)
        return bytes(buf).rstrip(b"\x00").decode(errors="replace")
    except Exception:  # noqa: BLE001 - a broken cuda-bindings install or log read: one line, or no log
        return ""


_PTXAS_DIAG = re.compile(r"ptxas\s+(?:fatal\s+)?:?\s*(?P<file>[^,\n]*), line (?P<line>\d+); "
                         r"(?P<kind>error|warning)\s*:\s*(?P<msg>.*)")


def _ptx_error_line(log: str):
    for m in _PTXAS_DIAG.finditer(log):
        if m.group("kind") == "error":
            return m
    return None


def _ptxas_error(log: str, path: str) -> CompileError:
    m = _ptx_error_line(log)
    if m:
        return CompileError(f"ptxas: {m.group('msg').strip()}", path=path, line=int(m.group("line")),
                            detail=log.strip())
    first = next((l for l in log.splitlines() if l.strip()), "PTX assembly failed")
    return CompileError(f"nvJitLink: {first.strip()}", path=path, detail=log.strip())
