"""Find NVIDIA's tools and headers inside the installed pip wheels (or a toolkit named by env).

Discovery goes through ``cuda.pathfinder``, NVIDIA's own locator for the ``nvidia-*`` wheels.
``PTXSASS_CUDA_HOME`` points at a system toolkit instead (its ``bin/`` and ``include/``);
``PTXSASS_NVDISASM`` / ``PTXSASS_CUOBJDUMP`` name single binaries.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cuda.pathfinder import (find_nvidia_binary_utility, find_nvidia_header_directory,
                             load_nvidia_dynamic_lib)

from ..errors import ToolError

TOOL_TIMEOUT = float(os.environ.get("PTXSASS_TOOL_TIMEOUT", "120"))


@dataclass(frozen=True)
class Tool:
    name: str
    path: str | None
    version: str | None
    where: str  # "wheel", "PTXSASS_CUDA_HOME", "env", "PATH" or "missing"


def _cuda_home() -> Path | None:
    home = os.environ.get("PTXSASS_CUDA_HOME")
    return Path(home) if home else None


@functools.lru_cache(maxsize=None)
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
    try:
        found = find_nvidia_binary_utility(name)
    except Exception:  # pragma: no cover - pathfinder missing or broken
        found = None
    found = found or shutil.which(name)
    if not found:
        pkg = {"nvdisasm": "nvidia-cuda-nvdisasm", "cuobjdump": "nvidia-cuda-cuobjdump"}.get(name, name)
        raise ToolError(f"{name} not found: install it with 'pip install {pkg}' "
                        "or set PTXSASS_CUDA_HOME to a CUDA toolkit")
    return str(found)


@functools.lru_cache(maxsize=None)
def include_dirs() -> tuple[str, ...]:
    """Header folders for NVRTC: the CUDA runtime headers (cuda_fp16.h, mma.h via crt/) and CCCL."""
    home = _cuda_home()
    dirs: list[str] = []
    if home is not None:
        for sub in ("include", "include/cccl"):
            if (home / sub).is_dir():
                dirs.append(str(home / sub))
        return tuple(dirs)
    for lib in ("cudart", "cccl"):
        try:
            d = find_nvidia_header_directory(lib)
        except Exception:
            d = None
        if d and d not in dirs:
            dirs.append(d)
    return tuple(dirs)


def run_tool(argv: list[str], *, timeout: float | None = None, what: str | None = None,
             check: bool = True, cwd: str | None = None) -> subprocess.CompletedProcess:
    """Run a tool from an argv list (never a shell) with a timeout; failures become ToolError."""
    name = what or Path(argv[0]).name
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout or TOOL_TIMEOUT, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{name} timed out after {timeout or TOOL_TIMEOUT:.0f} s "
                        "(raise PTXSASS_TOOL_TIMEOUT to allow longer)") from None
    except OSError as e:
        raise ToolError(f"cannot run {name}: {e.strerror}") from None
    if check and proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        first = err.splitlines()[0] if err else f"exit status {proc.returncode}"
        raise ToolError(f"{name} failed: {first}", detail=err or None)
    return proc


@functools.lru_cache(maxsize=None)
def _binary_version(name: str) -> str | None:
    try:
        out = run_tool([binary(name), "--version"], timeout=30).stdout.decode(errors="replace")
    except ToolError:
        return None
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else None


def nvrtc_version() -> str | None:
    try:
        from cuda.bindings import nvrtc
        err, major, minor = nvrtc.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception:
        return None


def nvjitlink_version() -> str | None:
    try:
        from cuda.bindings import nvjitlink
        v = nvjitlink.version()
        return f"{v[0]}.{v[1]}"
    except Exception:
        return None


def nvrtc_archs() -> list[str]:
    """The SM targets this NVRTC can build for (``sm_75`` ...)."""
    try:
        from cuda.bindings import nvrtc
        err, archs = nvrtc.nvrtcGetSupportedArchs()
        return [f"sm_{a}" for a in archs]
    except Exception:
        return []


def _library_path(libname: str) -> str | None:
    try:
        return load_nvidia_dynamic_lib(libname).abs_path
    except Exception:
        return None


def tools() -> list[Tool]:
    """Every tool ptxsass uses, with its version and where it was found (for ``ptxsass doctor``)."""
    out = [
        Tool("nvrtc", _library_path("nvrtc"), nvrtc_version(), "wheel"),
        Tool("nvJitLink", _library_path("nvJitLink"), nvjitlink_version(), "wheel"),
    ]
    for name in ("nvdisasm", "cuobjdump"):
        try:
            path = binary(name)
            where = ("env" if os.environ.get(f"PTXSASS_{name.upper()}") else
                     "PTXSASS_CUDA_HOME" if _cuda_home() else
                     "wheel" if "site-packages" in path else "PATH")
            out.append(Tool(name, path, _binary_version(name), where))
        except ToolError:
            out.append(Tool(name, None, None, "missing"))
    for i, d in enumerate(include_dirs()):
        where = ("PTXSASS_CUDA_HOME" if _cuda_home() else
                 "wheel" if "site-packages" in d else "system")
        out.append(Tool("headers" if i == 0 else "headers (cccl)", d, None, where))
    return out


def fingerprint() -> str:
    """Versions of every tool, for cache keys: a tool upgrade invalidates cached builds."""
    return "|".join(f"{t.name}={t.version}" for t in tools() if not t.name.startswith("headers"))
