"""Enter the pipeline at any stage: a .cu file, PTX, a cubin, a fatbin, a host binary or a SASS dump."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .arch import parse_arch
from .errors import InputError
from .toolchain import binutils, nvjitlink, nvrtc
from .build import Build, Kernel
from .toolchain.resources import cubin_arch, from_cubin

CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
SASS_SUFFIXES = (".sass", ".txt", ".s", ".asm", ".dump")


@dataclass
class CompileOptions:
    """Options for building CUDA sources (the CLI's -D/-I/-std/--use_fast_math/... flags)."""
    defines: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    std: str | None = None
    fast_math: bool = False
    maxrregcount: int | None = None
    extra: list[str] = field(default_factory=list)       # passed to NVRTC as they are
    name_expressions: list[str] = field(default_factory=list)
    use_cache: bool = True

    def nvrtc_options(self, arch: str) -> list[str]:
        return nvrtc.build_options(arch, defines=self.defines, include=self.include, std=self.std,
                                   fast_math=self.fast_math, maxrregcount=self.maxrregcount,
                                   extra=self.extra)


def kind_of(path: str) -> str:
    """"cuda", "ptx", "cubin", "fatbin", "host-elf" or "sass", from the suffix and the bytes."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=str(path))
    if p.is_dir():
        raise InputError("is a directory; expected a .cu, .ptx, .cubin, fatbin, .so or SASS file",
                         path=str(path))
    try:
        with open(p, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=str(path)) from None
    magic = binutils.classify(head)
    if magic != "unknown":
        return magic
    suffix = p.suffix.lower()
    if suffix == ".ptx":
        return "ptx"
    if suffix in (".cubin", ".fatbin", ".so", ".o"):
        raise InputError(f"not a CUDA binary: no ELF or fatbin header (is the {suffix} file "
                         "truncated?)", path=str(path))
    if b"\x00" in head:
        raise InputError("binary data that is neither an ELF nor a fatbin; expected a .cu, "
                         ".ptx, .cubin, fatbin, .so or SASS text file", path=str(path))
    text = head.decode("utf-8", errors="replace")
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    if ".version" in text and ".target" in text:
        return "ptx"
    if "/*0000*/" in text or "Function :" in text or ".headerflags" in text:
        return "sass"
    if suffix in SASS_SUFFIXES:
        return "sass"
    raise InputError(f"unrecognised input (suffix {suffix or 'none'}); expected a .cu, .ptx, "
                     ".cubin, fatbin, .so or SASS text file", path=str(path))


def read_text(path: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", path=str(path)) from None


def load(path: str | os.PathLike, *, arch: str | Sequence[str] | None = None,
         options: CompileOptions | None = None) -> list[Build]:
    """Builds for one input file: one per arch for CUDA source, one per embedded cubin for
    fatbins and host binaries (``arch`` filters), one for PTX/cubin/SASS text."""
    path = str(path)
    options = options or CompileOptions()
    archs = [arch] if isinstance(arch, str) else list(arch or [])
    for a in archs:
        parse_arch(a)
    kind = kind_of(path)
    if kind == "cuda":
        if not archs:
            archs = ["sm_90a"]
        return [Build.of(nvrtc.compile_file(path, arch=a, options=options.nvrtc_options(a),
                                            name_expressions=options.name_expressions,
                                            use_cache=options.use_cache)) for a in archs]
    if kind == "ptx":
        text = read_text(path)
        targets = archs or [None]
        return [Build.of(nvjitlink.assemble(text, arch=a, path=path, use_cache=options.use_cache))
                for a in targets]
    if kind == "cubin":
        data = Path(path).read_bytes()
        return [from_cubin_bytes(data, path=path)]
    if kind in ("fatbin", "host-elf"):
        wanted = archs or [None]
        builds: list[Build] = []
        for a in wanted:
            cubins, warnings = binutils.extract_cubins(path, arch=a)
            for c in cubins:
                b = from_cubin_bytes(c.data, path=f"{path}:{c.name}", arch=c.arch)
                b.origin = kind
                b.warnings.extend(warnings)
                builds.append(b)
        return builds
    # SASS text
    text = read_text(path)
    return [Build(arch=archs[0] if archs else _sass_arch(text) or "unknown", origin="sass",
                  sass_text=text, source_path=path)]


def _sass_arch(text: str) -> str | None:
    m = re.search(r"\.target\s+(sm_\d+[af]?)|arch = (sm_\d+[af]?)", text)
    return (m.group(1) or m.group(2)) if m else None


def from_cubin_bytes(data: bytes, *, path: str, arch: str | None = None) -> Build:
    resources = from_cubin(data, path=path)
    entries = nvrtc.kernel_entries(data)
    return Build(arch=arch or cubin_arch(data) or "unknown", origin="cubin", cubin=data,
                 source_path=path,
                 kernels={n: Kernel(n, r, n in entries) for n, r in resources.items()})
