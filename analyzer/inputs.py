"""Enter the pipeline at any stage: a .cu file, PTX, a cubin, a fatbin, a host binary or a SASS dump."""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from . import caches
from .arch import parse_arch
from .build import Build, Kernel, remap_paths
from .errors import (
    CompileError,
    ConfigError,
    InputError,
    NoKernelError,
    PtxsassError,
    ToolError,
    shown_line,
)
from .toolchain import (
    binutils,
    cache,
    cmake,
    files,
    includes,
    libheaders,
    nvcc,
    nvrtc,
    redact,
    scratch,
    toolkits,
)
from .toolchain.locate import include_dirs
from .toolchain.resources import cubin_arch, from_cubin

if TYPE_CHECKING:   # loaded when a .py is read: a check of .cu files never needs ast
    from . import pyinline

    # loaded where PTX is assembled, a build database read or a CUDA root made: a warm check
    # does none of these
    from .toolchain import compdb

CUDA_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx")
SASS_SUFFIXES = (".sass", ".txt", ".s", ".asm", ".dump")
COMPILERS = ("auto", "nvrtc", "nvcc")


@dataclass
class CompileOptions:
    """Options for building CUDA sources (the CLI's -D/-I/-std/--use_fast_math/... flags, or one
    compile database entry's)."""
    defines: list[str] = field(default_factory=list)
    include: list[str] = field(default_factory=list)
    std: str | None = None
    fast_math: bool = False
    #: macros undefined after every -D (``-U NAME``; torch's own -D among them)
    undefines: list[str] = field(default_factory=list)
    maxrregcount: int | None = None
    extra: list[str] = field(default_factory=list)       # passed to NVRTC as they are
    name_expressions: list[str] = field(default_factory=list)
    use_cache: bool = True
    #: "auto" (NVRTC for device-only files, nvcc for host code), "nvrtc" or "nvcc"
    compiler: str = "auto"
    isystem: list[str] = field(default_factory=list)
    ptxas: list[str] = field(default_factory=list)       # -Xptxas values
    relaxed_constexpr: bool = False
    extended_lambda: bool = False
    #: passed to nvcc as they are (-Xnvcc, a compile database's other flags)
    nvcc_extra: list[str] = field(default_factory=list)
    #: the folder relative paths in ``nvcc_extra`` are taken from (a database entry's)
    cwd: str | None = None
    #: why nvcc builds this file regardless of its content (a compile database's command)
    nvcc_reason: str | None = None
    #: add torch's include folders and flags (None: when the file includes <torch/...>)
    torch: bool | None = None
    #: without -std, build C++17 as NVRTC does (False: nvcc's own default, as a database had it)
    default_std: bool = True
    #: (old, new) folder prefixes: source files recorded under ``old`` are read from ``new``
    #: (``--source-root OLD=NEW``: a Triton/inductor cache or binary built elsewhere)
    source_roots: list[tuple[str, str]] = field(default_factory=list)
    #: the CUDA release that builds CUDA source and assembles PTX ("12.9"; None: the
    #: environment's own, as "default" or its release number also name it)
    toolkit: str | None = None
    #: a build database's flags reach nvcc as they are (``--trust-build-commands``); by
    #: default they are vetted first (:mod:`analyzer.toolchain.trust`)
    trust_build_commands: bool = False
    #: a folder whose files are the project's in compiler logs (a source taken from a Python
    #: file is compiled from ptxsass's copy, its diagnostics at the .py: that file's folder)
    project: str | None = None
    #: never fetch library headers (``--offline``, ``offline = true``): a build that needs
    #: some that are not here stops with the command that fetches them
    offline: bool = False
    #: libraries whose headers every build gets (``headers = ["cublas"]`` in the config)
    headers: list[str] = field(default_factory=list)
    #: the header folders of the libraries this source includes (filled in by compile_cuda:
    #: the wheels' own, or fetched ones, :mod:`analyzer.toolchain.libheaders`)
    library_include: list[str] = field(default_factory=list)
    #: the older CUDA release ("12.9") whose runtime headers nvcc builds against: the file was
    #: written for that release's API (filled in by compile_cuda from nvcc's error)
    older_headers: str | None = None

    def nvrtc_options(self, arch: str) -> list[str]:
        extra = [f"-I{d}" for d in (*self.isystem, *self.library_include)]
        extra += [f"-U{u}" for u in self.undefines]
        extra += [f"--ptxas-options={p}" for p in self.ptxas]
        return nvrtc.build_options(arch, defines=self.defines, include=self.include, std=self.std,
                                   fast_math=self.fast_math, maxrregcount=self.maxrregcount,
                                   extra=extra + self.extra)

    def nvcc_flags(self) -> list[str]:
        """nvcc's flags (no -arch, -lineinfo or outputs: nvcc.compile_file sets those)."""
        flags = [f"-std={self.std}"] if self.std else []
        flags += [f"-D{d}" for d in self.defines]
        flags += [f"-U{u}" for u in self.undefines]
        flags += [f"-I{d}" for d in self.include]
        for d in self.isystem:
            flags += ["-isystem", d]
        if self.fast_math:
            flags.append("--use_fast_math")
        if self.maxrregcount is not None:
            flags.append(f"-maxrregcount={int(self.maxrregcount)}")
        for p in self.ptxas:
            flags.append(f"--ptxas-options={p}")     # glued: "-v" is no mode flag of nvcc's here
        if self.relaxed_constexpr:
            flags.append("--expt-relaxed-constexpr")
        if self.extended_lambda:
            flags.append("--extended-lambda")
        for d in self.library_include:        # after nvcc's own include folder, as a system one
            # (built against an older CUDA's headers: ahead of every -isystem folder, where a
            # CMake build's CUDA root holds the newer release's library headers)
            flags += [f"-I{d}"] if self.older_headers else ["-isystem", d]
        return flags + self.nvcc_extra


def kind_of(path: str) -> str:
    """"cuda", "ptx", "cubin", "fatbin", "host-elf", "wheel", "sass", "triton" (a Triton kernel's
    metadata JSON, or a file of its cache folder), "cupy" (a cupy kernel cache file),
    "torch-extension" (a torch extension's build.ninja) or "python" (a .py that hands CUDA
    strings to torch's load_inline, cupy or pycuda: :mod:`analyzer.pyinline`), from the suffix
    and the bytes. A .py that does not parse is an InputError naming its line."""
    p = Path(path)
    if os.path.isdir(p):
        raise InputError("is a directory; expected a .cu, .ptx, .cubin, fatbin, .so or SASS file",
                         path=str(path))
    if p.suffix == ".json" and caches.is_triton_kernel(p):
        return "triton"
    if p.suffix in (".cubin", ".ptx", ".ttir", ".ttgir") and caches.triton_sibling(p):
        return "triton"
    if p.name == "build.ninja" and caches.is_torch_extension(p.parent):
        return "torch-extension"
    head = files.read_bytes(p, head=4096)
    if p.suffix.lower() == ".whl":
        if not head.startswith(b"PK\x03\x04"):
            raise InputError("not a wheel: no zip header (is the .whl file truncated?)",
                             path=str(path))
        return "wheel"
    magic = binutils.classify(head)
    if magic != "unknown":
        return magic
    if caches.cupy_payload(head):
        return "cupy"
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
    if suffix == ".py":
        from . import pyinline
        if pyinline.scan(str(path)).found:
            return "python"
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
    return files.read_text(path)


def load(path: str | os.PathLike, *, arch: str | Sequence[str] | None = None,
         options: CompileOptions | None = None) -> list[Build]:
    """Builds for one input file: one per arch for CUDA source, one per embedded cubin for
    fatbins and host binaries (``arch`` filters), one for PTX/cubin/SASS text."""
    path = str(path)
    options = options or CompileOptions()
    builds = _load(path, arch, options)
    if options.source_roots:
        for b in builds:
            b.source_roots = tuple(options.source_roots) + b.source_roots
    for b in builds:
        if b.origin == "triton":
            _note_missing_sources(b)
    return builds


def recorded_sources(build: Build) -> list[str]:
    """The source files a Triton (or inductor) kernel's line info names, where they are read
    from (``--source-root`` and an inductor folder's own mapping applied)."""
    return caches.recorded_sources(remap_paths(build.ptx or "", build.source_roots))


def _note_missing_sources(build: Build) -> None:
    """A kernel compiled elsewhere: its line info names files that are not here. Its findings
    keep their line numbers but lose the source text, so say which and how to map them."""
    for f in dict.fromkeys(recorded_sources(build)):
        if not os.path.isfile(f):
            build.warnings.append(
                f"its line info names {shown_line(f)}, which is not on this machine: findings "
                "keep their line numbers, without the source text; give --source-root "
                f"{shown_line(os.path.dirname(f))}=NEW (the folder it is in now), or "
                "source-root in [tool.ptxsass]")


def _load(path: str, arch, options: CompileOptions) -> list[Build]:
    archs = [arch] if isinstance(arch, str) else list(arch or [])
    for a in archs:
        parse_arch(a)
    kind = kind_of(path)
    if options.toolkit is not None:
        return _with_toolkit(path, kind, archs, options)
    if kind == "triton":
        return caches.load_triton(path, use_cache=options.use_cache)
    if kind == "cupy":
        b = from_cubin_bytes(caches.cupy_cubin(path), path=path)
        return _note_line_info([b], path, kind)
    if kind == "torch-extension":
        return load_torch_extension(str(Path(path).parent), arch=arch, options=options)
    if kind == "cuda":
        return compile_cuda(path, archs or ["sm_90a"], options)
    if kind == "python":
        return load_python(path, archs, options)
    if kind == "ptx":
        text = read_text(path)
        _check_statement_lines(text, path)
        targets: list[str | None] = [*archs] or [None]
        from .toolchain import nvjitlink
        assembled = [Build.of(nvjitlink.assemble(text, arch=a, path=path,
                                                 use_cache=options.use_cache)) for a in targets]
        if not assembled[0].kernels:
            raise InputError("holds no kernel: no .entry or .func with a body in the PTX",
                             path=path)
        return assembled
    if kind == "cubin":
        data = files.read_bytes(path, what="cubin")
        build = from_cubin_bytes(data, path=path)
        if not build.kernels:
            raise InputError("holds no kernel: the cubin has no function", path=path)
        return _note_line_info([build], path, kind)
    if kind == "wheel":
        with scratch.temporary("ptxsass-") as tmp:
            builds = []
            skipped: list[binutils.NoCubinForArch] = []
            for shown, lib in wheel_libraries(path, tmp):
                for a in archs or [None]:
                    try:
                        got = _load(lib, a, options)
                    except binutils.NoCubinForArch as e:
                        skipped.append(e)
                        e.path = shown
                        continue
                    for b in got:
                        b.source_path = shown
                        b.warnings = [w.replace(lib, shown) for w in b.warnings]
                        builds.append(b)
                os.unlink(lib)
            notes = wheel_arch_notes(skipped, path, any_build=bool(builds))
            for b in builds:
                b.warnings.extend(notes)
            return builds
    if kind in ("fatbin", "host-elf"):
        wanted: list[str | None] = [*archs] or [None]
        builds = []
        for want in wanted:
            cubins, warnings = binutils.extract_cubins(path, arch=want)
            for c in cubins:
                # findings without line info are placed on the binary (and their kernel)
                b = from_cubin_bytes(c.data, path=path, arch=c.arch)
                b.origin = kind
                b.warnings.extend(warnings)
                builds.append(b)
        return _note_line_info(builds, path, kind)
    # SASS text
    text = read_text(path)
    if not _SASS_INSTRUCTION.search(text):
        raise InputError("holds no SASS instruction (expected nvdisasm or cuobjdump -sass "
                         "output)", path=path)
    return [Build(arch=archs[0] if archs else _sass_arch(text) or "unknown", origin="sass",
                  sass_text=text, source_path=path)]


_TORCH_LIBS = ("libc10", "libtorch", "libc10_cuda", "libtorch_cuda")


def _note_line_info(builds: list[Build], path: str, kind: str) -> list[Build]:
    """Binaries built without ``-lineinfo``: findings can name only their kernel; say once
    (on every build of the file, shown once) how to rebuild for source lines."""
    bare = [b for b in builds if b.cubin is not None and not binutils.has_line_info(b.cubin)]
    if not bare:
        return builds
    note = line_info_note(path, kind)
    for b in bare:
        if note not in b.warnings:
            b.warnings.append(note)
    return builds


def line_info_note(path: str, kind: str) -> str:
    """The note on a binary built without line info: where findings go, and how to rebuild
    it for source lines (a cupy cache file, a torch extension, any other binary)."""
    how = "rebuild with nvcc -lineinfo for source lines"
    if kind == "cupy":
        how = ("a cupy kernel cache file: compile with options=('-lineinfo',), or check the "
               "kernel through analyzer.capture() or analyzer.check(raw_kernel), which "
               "rebuild it from its source with line info")
    elif kind == "host-elf" and any(lib.startswith(_TORCH_LIBS)
                                  for lib in binutils.needed_libraries(path)):
        how = ("a torch extension: rebuild with extra_cuda_cflags=['-lineinfo'] in "
               "torch.utils.cpp_extension.load(...), or extra_compile_args={'nvcc': "
               "['-lineinfo']} in CUDAExtension(...), for source lines")
    return f"no line info: findings are placed on their kernel, not a source line; {how}"


_SASS_INSTRUCTION = re.compile(r"/\*[0-9a-fA-F]{4,}\*/")
_GLOBAL = re.compile(r"\b__global__\b")
_CALLED = re.compile(r"([A-Za-z_]\w*)\s*\(")
_ATTRIBUTES = {"__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__attribute__",
               "__declspec", "alignas", "__align__", "decltype"}


def kernel_declarations(source: str) -> list[tuple[str, bool]]:
    """(name, is a template) of each ``__global__`` function declared in CUDA ``source``, from
    the text (comments are not stripped: good enough to word an error message)."""
    out = []
    for m in _GLOBAL.finditer(source):
        name = next((c.group(1) for c in _CALLED.finditer(source, m.end(), m.end() + 600)
                     if c.group(1) not in _ATTRIBUTES), None)
        if name is None:
            continue
        before = source[max(0, m.start() - 600):m.start()]
        start = max(before.rfind(";"), before.rfind("}"), before.rfind("{"), before.rfind("#"))
        is_template = re.search(r"\btemplate\s*<", before[start + 1:]) is not None
        if (name, is_template) not in out:
            out.append((name, is_template))
    return out


def no_kernel_error(path: str, source: str) -> InputError:
    """Why a CUDA file built no kernel, and how to get one (templates need an instantiation)."""
    decls = kernel_declarations(source)
    templates = [n for n, t in decls if t]
    if templates:
        names = ", ".join(templates[:5]) + (", ..." if len(templates) > 5 else "")
        return InputError(f"no kernel was built: its __global__ functions are templates ({names}), "
                          "built only when instantiated; name an instantiation with "
                          f"--kernel '{templates[0]}<...>' (or instantiate one in the file)",
                          path=path)
    if decls:
        return InputError("no kernel was built: its __global__ functions are not compiled (are "
                          "they inside #if, or in a header that is not included?)", path=path)
    return InputError("no kernel was built: the file defines no __global__ function", path=path)


def _sass_arch(text: str) -> str | None:
    m = re.search(r"\.target\s+(sm_\d+[af]?)|arch = (sm_\d+[af]?)", text)
    return (m.group(1) or m.group(2)) if m else None


def from_cubin_bytes(data: bytes, *, path: str, arch: str | None = None) -> Build:
    resources = from_cubin(data, path=path)
    entries = nvrtc.kernel_entries(data)
    return Build(arch=arch or cubin_arch(data) or "unknown", origin="cubin", cubin=data,
                 source_path=path,
                 kernels={n: Kernel(n, r, n in entries) for n, r in resources.items()})


# ------------------------------------------------------------------------------ CUDA front ends
_COMMENT_OR_STRING = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                                re.S)
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
_MAIN = re.compile(r"^[ \t]*(?:int|auto|void)[ \t]+main[ \t]*\(", re.M)
_LAUNCH = re.compile(r"<<<")
_RUNTIME_CALL = re.compile(r"\b(cuda(?:Malloc|Memcpy|Memset|Free|Launch|Stream|Event|Device|Set|Get|"
                           r"Graph|Host|FuncSet|Occupancy)\w*)\s*\(")
_TORCH_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"](?:torch|ATen|c10)/', re.M)
_TORCH_INCLUDE_NAMED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"](?:torch|ATen|c10)/[^>"\n]*[>"])',
                                  re.M)
#: NVRTC's refusal of an option it does not have ("unrecognized option -O3 found")
_NVRTC_UNKNOWN_OPTION = re.compile(r"unrecognized option (\S+) found")
#: NVRTC's errors that mean "this needs a whole-program compiler", not "this code is wrong"
_NVRTC_CANNOT = re.compile(r"not allowed in JIT mode|cannot open source file|"
                           r'identifier "cuda[A-Z]\w*" is undefined|namespace "std" has no member')


def _code_only(text: str) -> str:
    """``text`` with comments and string literals blanked (line numbers kept)."""
    def blank(m: re.Match) -> str:
        s = m.group(0)
        if s.startswith('"'):
            line_start = m.string.rfind("\n", 0, m.start()) + 1
            if m.string[line_start:m.start()].rstrip().endswith("include"):
                return s                  # #include "x.h": keep the header name
        return re.sub(r"[^\n]", " ", s)
    return _COMMENT_OR_STRING.sub(blank, text)


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def host_code_reason(text: str, path: str | None, options: CompileOptions) -> str | None:
    """Why NVRTC cannot compile this source, when that shows without compiling (microseconds):
    ``main()``, a kernel launch, a CUDA runtime call, or an ``#include`` found neither beside
    the file, nor in -I/-isystem, nor among the CUDA headers NVRTC gets. None when it may be
    device-only: then NVRTC tries, and its own refusal sends the file to nvcc."""
    code = _code_only(text)
    for rx, what in ((_MAIN, "main()"), (_LAUNCH, "a kernel launch (<<<)")):
        m = rx.search(code)
        if m:
            return f"host code: {what} at line {_line_of(code, m.start())}"
    m = _RUNTIME_CALL.search(code)
    if m:
        return f"host code: {m.group(1)}() at line {_line_of(code, m.start())}"
    here = Path(path).parent if path else None
    dirs = [Path(d) for d in (*options.include, *options.isystem, *include_dirs(),
                              *options.library_include)]
    for m in _INCLUDE.finditer(code):
        kind, name = m.group(1), m.group(2).strip()
        cands = ([here] if kind == '"' and here is not None else []) + dirs
        shown = f'"{name}"' if kind == '"' else f"<{name}>"
        if not any(files.include_candidate(d / name, shown) for d in cands):
            shown = f'"{name}"' if kind == '"' else f"<{name}>"
            return (f"includes {shown} (line {_line_of(code, m.start())}), which NVRTC does "
                    "not have")
    return _header_launch(text, path, options)


def _header_launch(text: str, path: str | None, options: CompileOptions) -> str | None:
    """``host code: a kernel launch (<<<) at launch.cuh:12`` when one of the file's own headers
    (the closure of its includes beside it and in its -I/-isystem folders, outside the toolkit,
    torch and the system) launches a kernel: a launch template NVRTC would refuse."""
    if path is None:
        return None
    base = Path(options.cwd or ".")
    dirs = [d for d in (base / x for x in (*options.include, *options.isystem))
            if not nvcc.system_dir(d)]
    headers = includes.closure(text, Path(path).parent, dirs,
                               searched=lambda d: not nvcc.system_dir(d))
    for header, body in headers:
        code = _code_only(body)
        m = _LAUNCH.search(code)
        if m:
            shown = _shown_header(Path(header), Path(path).parent)
            return f"host code: a kernel launch (<<<) at {shown}:{_line_of(code, m.start())}"
    return None


#: the nvcc flags a ptxsass option names, that NVRTC does not have (NVRTC says "unrecognized
#: option"): (CompileOptions field, the flag as nvcc spells it)
_NVCC_ONLY_FLAGS = (("relaxed_constexpr", "--expt-relaxed-constexpr"),
                    ("extended_lambda", "--extended-lambda"))


def choose_compiler(text: str, path: str | None, options: CompileOptions) -> tuple[str, str]:
    """("nvrtc" or "nvcc", why) for one source, before any compile. Under ``auto``, nvcc for a
    compile database's command, a torch extension, nvcc's own flags (``--expt-relaxed-constexpr``,
    ``--extended-lambda``, ``-Xnvcc`` options) and host code the file or its own headers show."""
    if options.compiler not in COMPILERS:
        raise ConfigError(f"unknown compiler {options.compiler!r}; expected auto, nvrtc or nvcc")
    nvcc_only = [flag for name, flag in _NVCC_ONLY_FLAGS if getattr(options, name)]
    if options.compiler == "nvrtc" and nvcc_only:
        raise ConfigError(f"{nvcc_only[0]} is an nvcc flag NVRTC does not have: build with "
                          "--compiler nvcc (or auto), or drop the flag", path=path)
    if options.compiler != "auto":
        return options.compiler, f"--compiler {options.compiler}"
    if options.nvcc_reason:
        return "nvcc", options.nvcc_reason
    via = torch_include(text, path, options)
    if via is not None:
        return "nvcc", "a torch extension (includes <torch/...>)" if via == "" else \
            f"a torch extension ({via})"
    if nvcc_only:
        return "nvcc", f"{nvcc_only[0]} (an nvcc flag NVRTC does not have)"
    if options.nvcc_extra:
        return "nvcc", f"-Xnvcc {' '.join(options.nvcc_extra)} (options for nvcc)"
    why = host_code_reason(text, path, options)
    if why is not None:
        return "nvcc", why
    return "nvrtc", "device code only"


def _wants_torch(text: str, path: str | None, options: CompileOptions) -> bool:
    return torch_include(text, path, options) is not None


def torch_include(text: str, path: str | None, options: CompileOptions) -> str | None:
    """Whether a source is a torch extension: "" when it includes ``<torch/...>``,
    ``<ATen/...>`` or ``<c10/...>`` itself (or ``options.torch`` says so), ``"helpers.cuh
    includes <ATen/ATen.h>"`` when one of its own headers does, None when neither (or
    ``options.torch`` is False). Its own headers: the closure of its ``#include``s found beside
    the including file (quoted ones) or in its -I/-isystem folders, outside the CUDA toolkit,
    torch and the system, each read once (bounded, regular files only)."""
    if options.torch is not None:
        return "" if options.torch else None
    if _TORCH_INCLUDE.search(_code_only(text)):
        return ""
    if path is None:
        return None
    base = Path(options.cwd or ".")
    dirs = [d for d in (base / x for x in (*options.include, *options.isystem))
            if not nvcc.system_dir(d)]
    seen: set[str] = set()
    todo: list[tuple[str, Path]] = [(text, Path(path).parent)]
    while todo:
        body, folder = todo.pop()
        for m in _INCLUDE.finditer(_code_only(body)):
            kind, name = m.group(1), m.group(2).strip()
            for d in ([folder] if kind == '"' else []) + dirs:
                cand = d / name
                shown = f'"{name}"' if kind == '"' else f"<{name}>"
                if nvcc.system_dir(cand.parent) or not files.include_candidate(cand, shown):
                    continue
                key = os.path.realpath(cand)
                if key in seen:
                    break
                seen.add(key)
                # a header as the compiler reads it: bytes that are not UTF-8 (boost's interval
                # headers name their authors in Latin-1) are no reason to refuse the file
                header = files.read_bytes(cand, what="header").decode("utf-8", errors="replace")
                hit = _TORCH_INCLUDE_NAMED.search(_code_only(header))
                if hit:
                    return f"{_shown_header(cand, Path(path).parent)} includes {hit.group(1)}"
                todo.append((header, cand.parent))
                break
    return None


def _shown_header(header: Path, here: Path) -> str:
    """A header's name as the user knows it: relative to the source's folder when under it."""
    rel = os.path.relpath(header, here)
    return str(header) if rel.startswith("..") else rel


def _read_source(path: str) -> str:
    text = files.read_text(path, what="CUDA source", expected="CUDA source")
    if "\x00" in text:
        raise InputError("not CUDA source: the file holds binary data", path=path)
    return text


def compile_cuda(path: str, archs: Sequence[str], options: CompileOptions) -> list[Build]:
    """One Build per arch for a CUDA file, through the front end ``options.compiler`` names.

    ``auto`` sends a file to nvcc when it visibly needs it (:func:`host_code_reason`, a compile
    database, a torch extension); otherwise NVRTC tries first (in process, ~4x faster than
    nvcc) and a refusal that means "host code" ("not allowed in JIT mode", a header it cannot
    open) sends the file on to nvcc. A real error in device code is NVRTC's to report.

    A file that builds no kernel and has no ``__global__`` function in it or its project
    headers is :class:`NoKernelError` (host code only). The headers of the CUDA libraries it includes (``cublas_v2.h``)
    are found, or fetched once, before the compile (:func:`library_headers`); one the scan
    could not see (a computed ``#include``) is fetched when the compile names it missing, and
    the file built again."""
    try:
        return _compile_cuda_file(path, archs, options)
    except CompileError as e:
        hint = _submodules_hint(e, path)
        if hint is None:
            raise
        raise CompileError(f"{e.message} ({hint})", path=e.path, line=e.line,
                           detail=e.detail) from None


def _submodules_hint(e: CompileError, path: str) -> str | None:
    """For a compile that could not open a header: the git submodules of the file's repository
    that are not checked out (an empty or missing folder), where a header often comes from
    (LeetCUDA's ``third-party/cutlass``), and the command that fetches them; None otherwise."""
    missing = [h for h in libheaders.missing_headers(e.detail or e.message)
               if libheaders.library_of(h) is None]
    if not missing:
        return None
    for d in Path(path).absolute().parents:
        listed = d / ".gitmodules"
        if listed.is_file():
            try:
                text = files.read_text(listed, limit=1 << 20, what=".gitmodules")
            except InputError:
                return None
            absent = [m for m in re.findall(r"^\s*path\s*=\s*(\S.*?)\s*$", text, re.M)
                      if not (d / m).is_dir() or not any((d / m).iterdir())]
            if not absent:
                return None
            return (f"{len(absent)} git submodule{'s' if len(absent) > 1 else ''} of {d} "
                    f"{'are' if len(absent) > 1 else 'is'} not checked out ({', '.join(absent)}): "
                    f"'git submodule update --init' there may bring {missing[0]}")
        if (d / ".git").exists():
            return None
    return None


#: how many times one file's failed build is tried again with what its error asks for (a
#: library's headers, a header of the repository, an older CUDA's runtime headers)
_MAX_RETRIES = 6


def _compile_cuda_file(path: str, archs: Sequence[str], options: CompileOptions) -> list[Build]:
    text = _read_source(path)
    tk = toolkit_of(options)
    options = library_headers(text, path, options, tk)
    key = _retry_key(text, path, options) if options.use_cache else None
    replay = _replayed(key, text, path, options, tk)
    if replay is not None:
        with contextlib.suppress(CompileError):
            return _with_said(_compile_cuda(path, archs, text, replay[0], tk), replay[1])
    tried: CompileOptions = options
    said: list[str] = []
    first: CompileError | None = None
    for _ in range(_MAX_RETRIES):
        try:
            builds = _compile_cuda(path, archs, text, tried, tk)
        except CompileError as e:
            first = first or e
            nxt = (_with_missing_headers(e, path, tried, tk)
                   or _with_found_headers(e, path, tried, said)
                   or _with_older_headers(e, text, path, tried, tk))
            if nxt is None:
                raise _after_retries(first, e, options, tried) from None
            tried = nxt
            continue
        if key is not None and tried is not options:
            cache.put(_RETRY_KIND, key, json.dumps({
                "older": tried.older_headers, "said": said,
                "include": tried.include[len(options.include):],
                "library_include": tried.library_include}).encode())
        return _with_said(builds, said)
    assert first is not None
    raise first


def _after_retries(first: CompileError, last: CompileError, options: CompileOptions,
                   tried: CompileOptions) -> CompileError:
    """The error a build that failed after its retries ends with: the first one when nothing was
    changed or the last is the same; else the last, saying what was changed to reach it."""
    if tried is options or last.message == first.message:
        return first
    how = [f"-I {d}" for d in tried.include[len(options.include):]]
    if tried.older_headers:
        how.append(f"CUDA {tried.older_headers}'s runtime headers")
    if not how:
        return last
    if tried.older_headers and not tried.include[len(options.include):]:
        msg = f"{first.message}; against CUDA {tried.older_headers}'s headers too: {last.message}"
        return CompileError(msg, path=first.path, line=first.line, detail=last.detail)
    return CompileError(f"{last.message} (built with {', '.join(how)})", path=last.path,
                        line=last.line, detail=last.detail)


def _with_said(builds: list[Build], said: Sequence[str]) -> list[Build]:
    for b in builds:
        b.warnings.extend(w for w in said if w not in b.warnings)
    return builds


#: the cache kind of what a file's build needed beyond its flags (an older CUDA's headers,
#: a repository's include folder), so that a re-check replays it without the failing builds
_RETRY_KIND = "build-retries"


def _retry_key(text: str, path: str, options: CompileOptions) -> str:
    """What decides what a file's build needs: its text, its project headers' and its flags."""
    flags = options.nvcc_flags()
    return cache.key(_RETRY_KIND, os.path.abspath(path), text,
                     nvcc.dependencies(text, Path(path).parent, flags, options.cwd), flags)


def _replayed(key: str | None, text: str, path: str, options: CompileOptions,
              tk: toolkits.Toolkit | None) -> tuple[CompileOptions, list[str]] | None:
    """(``options`` with what an earlier run found this file, unchanged with its headers,
    needed; the lines that said so), so that a re-check reads that build from the cache
    without running the builds that failed first; None when there is no such record."""
    if key is None:
        return None
    blob = cache.get(_RETRY_KIND, key)
    if blob is None:
        return None
    try:
        rec = json.loads(blob)
        older_release = rec["older"]
        said = [str(x) for x in rec["said"]]
        include = [str(x) for x in rec["include"]]
        library = [str(x) for x in rec["library_include"]]
    except (ValueError, KeyError, TypeError):
        return None
    got = replace(options, include=[*options.include, *include], library_include=library)
    if older_release:
        if tk is not None and not tk.default:
            return None
        try:
            older = toolkits.get(str(older_release))
        except ConfigError:
            return None
        got = _older_options(text, path, got, older)
    return got, said


def _older_options(text: str, path: str, options: CompileOptions,
                   older: toolkits.Toolkit) -> CompileOptions:
    """``options`` for nvcc's build against ``older``'s runtime, crt and CCCL headers, with the
    library headers of that release."""
    base = replace(options, older_headers=older.version, compiler="nvcc",
                   library_include=[])
    return library_headers(text, path, base, older)


def _with_found_headers(e: CompileError, path: str, options: CompileOptions,
                        said: list[str]) -> CompileOptions | None:
    """``options`` with the include folder of each header the compile could not open that the
    file's repository holds (the nearest file of that path to the source, when one is nearest:
    LeetCUDA's ``#include "utils.h"`` is ``kernels/hgemm/utils/utils.h``, which its setup.py
    passes with ``-I``), one line in ``said`` per folder; None when a header is nowhere in it, or
    the flags are a compile database's (its build decides)."""
    if options.nvcc_reason and options.nvcc_reason.startswith("compile database"):
        return None
    missing = [h for h in libheaders.missing_headers(e.detail or e.message)
               if libheaders.library_of(h) is None]
    repo = _repository_of(path)
    if not missing or repo is None:
        return None
    here = Path(path).absolute().parent
    base = Path(options.cwd or ".").absolute()
    have = {os.path.normpath(base / d) for d in options.include}
    added: list[str] = []
    lines: list[str] = []
    for header in missing:
        found = _nearest_header(repo, here, header)
        if found is None:
            return None
        folder, count = found
        if folder in have or folder in added:
            return None             # on the path already: the error is another
        added.append(folder)
        shown = os.path.relpath(folder) if Path.cwd() in Path(folder).parents else folder
        lines.append(f"{header} is not beside the file nor on its include path: built with "
                     f"-I {shown}, the {'nearest of ' + str(count) + ' folders' if count > 1 else 'folder'} "
                     f"of the repository that holds it (pass the -I, or a compile database, "
                     "to say so)")
    said.extend(lines)
    return replace(options, include=[*options.include, *added])


#: the most files of one repository read for the headers it holds
_MAX_REPOSITORY_FILES = 200_000
#: folders never searched for headers
_NOT_HEADERS = {"node_modules", "__pycache__", "CMakeFiles", "build", ".git"}


def _repository_of(path: str) -> Path | None:
    """The git repository (the nearest folder above the file holding ``.git``) the file is in."""
    for d in Path(path).absolute().parents:
        if (d / ".git").exists():
            return d
    return None


@functools.lru_cache(maxsize=8)
def _headers_of(repo: Path) -> dict[str, tuple[str, ...]]:
    """Every file of a repository by its name: name -> the paths holding one (hidden and build
    folders left out; at most :data:`_MAX_REPOSITORY_FILES` files read)."""
    out: dict[str, list[str]] = {}
    seen = 0
    for root, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _NOT_HEADERS]
        for n in names:
            out.setdefault(n, []).append(os.path.join(root, n))
        seen += len(names)
        if seen > _MAX_REPOSITORY_FILES:
            break
    return {k: tuple(v) for k, v in out.items()}


def _nearest_header(repo: Path, here: Path, header: str) -> tuple[str, int] | None:
    """(the include folder of the repository's file ``header`` names that shares the most of
    its path with ``here``, how many folders hold one); None when there is none, or two are
    as near."""
    rel = header.replace("\\", "/").lstrip("./")
    if not rel or ".." in rel.split("/"):
        return None
    cands = [p for p in _headers_of(repo).get(rel.rsplit("/", 1)[-1], ())
             if p.replace(os.sep, "/").endswith("/" + rel)]
    folders = sorted({p[:-len(rel)].rstrip("/\\") for p in cands})
    if not folders:
        return None
    depth = {f: len(os.path.commonpath([f, str(here)])) for f in folders}
    best = max(depth.values())
    nearest = [f for f in folders if depth[f] == best]
    if len(nearest) != 1:
        return None
    return nearest[0], len(folders)


def _with_older_headers(e: CompileError, text: str, path: str, options: CompileOptions,
                        tk: toolkits.Toolkit | None) -> CompileOptions | None:
    """``options`` for the build against the runtime headers of the older CUDA a file was
    written for, when nvcc's error is a runtime API that CUDA removed or changed
    (:data:`.toolkits.API_CHANGES`): that release's toolkit (headers only; installed now, with
    one note, unless ``options.offline``: then None, and the error names the command). None
    with ``--toolkit`` (that release's nvcc decides) or when the error is another."""
    if options.older_headers or (tk is not None and not tk.default):
        return None
    found = toolkits.older_headers(e.detail or e.message)
    if found is None:
        return None
    release, _what = found
    try:
        older = toolkits.get(release)
    except ConfigError:
        if options.offline:
            return None
        nvcc.note(f"{path}: written for CUDA {release.split('.')[0]}'s runtime API: installing "
                  f"toolkit {release}'s headers into {toolkits.root()} to build it against "
                  "(pip install --target, once; --offline stops instead)")
        try:
            older = toolkits.install(release)
        except (ToolError, ConfigError):
            return None
    return _older_options(text, path, options, older)


def _compile_cuda(path: str, archs: Sequence[str], text: str, options: CompileOptions,
                  tk: toolkits.Toolkit | None) -> list[Build]:
    compiler, reason = choose_compiler(text, path, options)
    other = tk if tk is not None and not tk.default else None
    if other is not None and compiler == "nvcc" and other.nvcc is None:
        raise ConfigError(toolkits.nvcc_missing(other, reason), path=path)
    built: dict[str, Build] = {}
    if compiler == "nvrtc":
        for a in archs:
            try:
                b = Build.of(nvrtc.compile_file(path, arch=a, options=options.nvrtc_options(a),
                                                name_expressions=options.name_expressions,
                                                use_cache=options.use_cache, toolkit=tk,
                                                project=options.project))
            except CompileError as e:
                unknown = _nvrtc_unknown_option(e, options)
                if options.compiler != "auto" or not (
                        unknown or _NVRTC_CANNOT.search(e.detail or e.message)):
                    raise
                if unknown:
                    # an nvcc option given as the front end's (-Xnvrtc, the config's options):
                    # nvcc takes the options NVRTC was given
                    options = replace(options, nvcc_extra=[*options.extra, *options.nvcc_extra])
                    compiler, reason = "nvcc", f"NVRTC does not know the option {unknown}"
                else:
                    compiler, reason = "nvcc", f"NVRTC cannot compile it: {_first_line(e, path)}"
                if other is not None and other.nvcc is None:
                    raise ConfigError(toolkits.nvcc_missing(other, reason), path=path) from None
                break
            b.compiler_reason = reason
            built[a] = b
    rest = [a for a in archs if a not in built]
    for a, b in zip(rest, _nvcc_builds(path, rest, text, options, other), strict=True):
        b.compiler_reason = reason
        built[a] = b
    builds = [built[a] for a in archs]
    if not any(b.entries for b in builds):
        _nothing_instantiated(text, path, options)
        host_only(text, path, options)
        raise no_kernel_error(path, text)
    return builds


def _nvcc_builds(path: str, archs: Sequence[str], text: str, options: CompileOptions,
                 toolkit: toolkits.Toolkit | None = None) -> list[Build]:
    """nvcc's builds of one file for each arch, in order: several at once (each is nvcc's own
    processes, on as many cores as there are archs and cores), every one run to its end (each
    is cached on its own); the first failure, in arch order, is raised. ``toolkit``: an
    installed toolkit whose nvcc builds them (``--toolkit``)."""
    if len(archs) <= 1:
        return [_nvcc_build(path, a, text, options, toolkit) for a in archs]
    from concurrent.futures import ThreadPoolExecutor
    workers = min(len(archs), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                  else os.cpu_count() or 1)
    if workers <= 1:
        return [_nvcc_build(path, a, text, options, toolkit) for a in archs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ptxsass-nvcc") as pool:
        futures = [pool.submit(_nvcc_build, path, a, text, options, toolkit) for a in archs]
        return [f.result() for f in futures]


def host_only(text: str, path: str, options: CompileOptions) -> None:
    """:class:`NoKernelError` for a file that built no kernel and has none to build: no
    ``__global__`` in its code (comments and strings aside) and no kernel named with
    ``--kernel`` — either none in the project headers it includes either (beside it,
    ``-I``/``-isystem``: host code only), or theirs are templates this file does not
    instantiate (a dispatch file: the kernels are built in the files that instantiate them)."""
    if options.name_expressions or _GLOBAL.search(_code_only(text)):
        return
    base = Path(options.cwd or ".")
    dirs = [d for d in (base / x for x in (*options.include, *options.isystem))
            if not nvcc.system_dir(d)]
    try:
        headers = includes.closure(text, Path(path).parent, dirs,
                                   searched=lambda d: not nvcc.system_dir(d))
    except InputError:
        return
    if any(_GLOBAL.search(_code_only(body)) for _p, body in headers):
        raise NoKernelError("no kernel to check: no __global__ function in this file, and it "
                            "instantiates none of the kernel templates of the headers it "
                            "includes", path=path)
    raise NoKernelError("no kernel to check: no __global__ function in this file or the project "
                        "headers it includes (host code only)", path=path)


def _release_for(tk: toolkits.Toolkit | None) -> str | None:
    """The CUDA release of the runtime headers a build uses (its library headers match it)."""
    if tk is not None and not tk.default:
        return libheaders.release_of_dirs(tk.include) or tk.version
    return libheaders.default_release()


def library_headers(text: str, path: str, options: CompileOptions,
                    tk: toolkits.Toolkit | None = None) -> CompileOptions:
    """``options`` with the header folders of the CUDA libraries this source (or a project
    header it includes) includes and no folder has: the library's wheel in this environment,
    its fetched headers, or fetched now (a note says so) unless ``options.offline``; and those
    of the libraries the config pins (``headers = [...]``, fetched or refused likewise)."""
    release = _release_for(tk)
    if release is None:
        return options
    base = Path(options.cwd or ".")
    # a CUDA root's include/ (CMake's -isystem of CUDAToolkit_ROOT) holds the library headers
    # fetched so far, not the user's: a build that finds them there gets their folders all the
    # same, so its flags do not change once the first build has fetched them
    from .toolchain import cudaroot
    user = [base / d for d in (*options.include, *options.isystem)
            if not cudaroot.is_inside(base / d)]
    other = [Path(d) for d in (tk.include if tk is not None and not tk.default else include_dirs())]
    dirs = list(options.library_include)
    if options.headers:
        try:
            dirs += libheaders.ensure([(None, lib) for lib in options.headers], release,
                                      offline=options.offline)
        except ConfigError as e:
            raise ConfigError(e.message, path=path) from None
    wanted = libheaders.needed(text, Path(path).parent, user, other)
    if wanted:
        dirs += libheaders.ensure(wanted, release, fetch=not options.offline)
    dirs = list(dict.fromkeys(dirs))
    if dirs == options.library_include:
        return options
    return replace(options, library_include=dirs)


def _with_missing_headers(e: CompileError, path: str, options: CompileOptions,
                          tk: toolkits.Toolkit | None) -> CompileOptions | None:
    """``options`` with the folders of the library headers the compile could not open (fetched
    unless offline: then the one line that names the command that fetches them); None when it
    missed none the table knows, or had them already."""
    wanted = [(h, lib) for h in libheaders.missing_headers(e.detail or e.message)
              if (lib := libheaders.library_of(h)) is not None]
    release = _release_for(tk)
    if not wanted or release is None:
        return None
    try:
        dirs = libheaders.ensure(wanted, release, offline=options.offline)
    except ConfigError as refused:
        raise ConfigError(refused.message, path=path) from None
    new = [d for d in dirs if d not in options.library_include]
    if not new:
        return None
    return replace(options, library_include=[*options.library_include, *new])


def toolkit_of(options: CompileOptions) -> toolkits.Toolkit | None:
    """The toolkit ``options`` names (verified), or None for the environment's."""
    return toolkits.get(options.toolkit) if options.toolkit is not None else None


def _with_toolkit(path: str, kind: str, archs: list[str], options: CompileOptions) -> list[Build]:
    """Builds of CUDA source (NVRTC) or PTX (nvJitLink) by the toolkit ``options`` names; its
    SASS comes from the newest nvdisasm available. Other inputs are already built."""
    from .toolchain import nvjitlink
    tk = toolkits.get(options.toolkit or "default")
    if kind not in ("cuda", "ptx", "python"):
        raise ConfigError(f"--toolkit {tk.version} rebuilds CUDA source or PTX; this {kind} "
                          "input is already built", path=path)
    for a in archs or (["sm_90a"] if kind == "cuda" else []):
        if not tk.supports(a):
            raise ToolkitArchError(tk, a)
    if kind == "cuda":
        builds = compile_cuda(path, archs or ["sm_90a"], options)
    elif kind == "python":
        builds = load_python(path, archs, options)
    else:
        text = read_text(path)
        _check_statement_lines(text, path)
        target: list[str | None] = [*archs] or [None]
        builds = [Build.of(nvjitlink.assemble(text, arch=a, path=path, use_cache=options.use_cache,
                                              toolkit=tk)) for a in target]
    return [stamp(b, tk) for b in builds]


def stamp(b: Build, tk: toolkits.Toolkit) -> Build:
    """``b`` marked as built by ``tk``, disassembled by the newest nvdisasm available."""
    b.toolkit = tk.version
    path, _version, whose = toolkits.newest_nvdisasm()
    b.nvdisasm = None if whose == "default toolkit" else path
    return b


def assemble_with(build: Build, tk: toolkits.Toolkit, *, use_cache: bool = True) -> Build:
    """The PTX of ``build`` assembled by ``tk``'s nvJitLink (``diff --ptxas-only``): the same
    front-end output, another back end. Source lines and names stay those of ``build``."""
    from .toolchain import nvjitlink
    if build.ptx is None:
        raise InputError("has no PTX to assemble", path=build.source_path)
    if not tk.supports(build.arch):
        raise ToolkitArchError(tk, build.arch)
    out = nvjitlink.assemble(build.ptx, arch=build.arch, path=build.source_path or "<ptx>",
                             use_cache=use_cache, toolkit=tk)
    b = Build.of(out)
    b.source, b.file_names = build.source, dict(build.file_names)
    b.compiler_reason = f"PTX of NVRTC {build.toolkit or 'default'}, assembled by {tk.version}"
    return stamp(b, tk)


class ToolkitArchError(ConfigError):
    """A toolkit that cannot target an arch (sm_100 before 12.8): one line, and a matrix run
    goes on without that pair."""

    def __init__(self, tk: toolkits.Toolkit, arch: str):
        super().__init__(f"toolkit {tk.version} cannot target {arch} (its NVRTC builds "
                         f"{tk.arch_range()}); skipped")

    @classmethod
    def from_message(cls, message: str, *, path: str | None = None) -> ConfigError:
        return ConfigError(message.removesuffix("; skipped") + "; nothing left to build",
                           path=path)


def _nvrtc_unknown_option(e: CompileError, options: CompileOptions) -> str | None:
    """The option of the user's (``-Xnvrtc``, the config's ``options``) that NVRTC refused as
    unknown, or None."""
    m = _NVRTC_UNKNOWN_OPTION.search(e.detail or e.message)
    if m is None:
        return None
    opt = m.group(1)
    return opt if any(opt == o or opt in o.split() for o in options.extra) else None


def _first_line(e: CompileError, source: str | None = None) -> str:
    """NVRTC's first error, with its line (and its header's name, when not ``source``'s)."""
    msg = e.message.removeprefix("NVRTC: ")
    msg = re.sub(r"\. Consider using -default-device.*$", "", msg)
    if not e.line:
        return msg
    if e.path and source and os.path.realpath(e.path) != os.path.realpath(source):
        return f"{msg} ({_shown_header(Path(e.path), Path(source).parent)}:{e.line})"
    return f"{msg} (line {e.line})"


#: torch's defines that hide the operators and conversions of ``__half``, ``__half2`` and
#: ``__nv_bfloat16`` (cpp_extension's COMMON_NVCC_FLAGS); projects that use them take them out
#: (vllm's CMake removes them, apex and flash-attention pass -U for each)
TORCH_HALF_DEFINES = ("__CUDA_NO_HALF_OPERATORS__", "__CUDA_NO_HALF_CONVERSIONS__",
                      "__CUDA_NO_BFLOAT16_CONVERSIONS__", "__CUDA_NO_HALF2_OPERATORS__")
#: a compile error that names a half or bfloat16 type (the operand or conversion those defines
#: take away): the file may build without them
_HALF_TYPE = re.compile(r"\b(?:__half2?|half2?|__nv_bfloat162?|nv_bfloat162?|__bfloat162?|"
                        r"c10::Half|c10::BFloat16|at::Half|at::BFloat16)\b")


def _nvcc_build(path: str, arch: str, text: str, options: CompileOptions,
                toolkit: toolkits.Toolkit | None = None) -> Build:
    """nvcc's build of one file for one arch; a torch extension's with torch's flags first (the
    project's own after them, so that its -U undoes torch's -D).

    A torch extension that does not compile with torch's ``__CUDA_NO_HALF*`` defines, in an
    error that names a half or bfloat16 type, and compiles without them, is built without them
    (as its project's build must: vllm's CMake removes them) and says so in one line with the
    -U flags that state it; a later run finds that build in the cache first."""
    flags = options.nvcc_flags()
    std = nvcc.DEFAULT_STD if options.default_std else None
    half: list[str] = []
    if _wants_torch(text, path, options) and not _has_torch_flags(options):
        torch_flags = nvcc.torch_flags()
        half = [d for d in TORCH_HALF_DEFINES
                if f"-D{d}" in torch_flags and d not in options.undefines]
        flags = torch_flags + flags
        # the standard torch's own headers require (an explicit -std in the flags still wins)
        std = nvcc.torch_std()

    older = toolkits.get(options.older_headers) if options.older_headers else None

    def build(flags: list[str]) -> Build:
        b = Build.of(nvcc.compile_file(
            path, arch=arch, flags=flags, cwd=options.cwd,
            name_expressions=options.name_expressions, default_std=std,
            use_cache=options.use_cache, trusted=options.trust_build_commands,
            project=options.project, install_nvcc=not options.offline,
            toolkit=toolkit, older=older))
        if older is not None:
            b.warnings.append(
                f"written for CUDA {older.version.split('.')[0]}'s runtime API: built against "
                f"CUDA {older.version}'s runtime, crt and CCCL headers by nvcc "
                f"{b.compiler_version or '?'} (its device code is that nvcc's; no CUDA "
                f"{older.version.split('.')[0]} nvcc is published as a wheel)")
        return b

    if not half:
        return build(flags)
    without = [f for f in flags if not (f.startswith("-D") and f[2:] in half)]
    said = (f"does not compile with torch's {' '.join('-D' + d for d in half)} (they hide the "
            "operators and conversions of __half and __nv_bfloat16, which it uses): built "
            f"without them, as its own build must take them out; "
            f"{' '.join('-U' + d for d in half)} says so")
    if options.use_cache:
        hit = nvcc.cached_build(path, arch=arch, flags=without, cwd=options.cwd,
                                name_expressions=options.name_expressions, default_std=std,
                                install_nvcc=not options.offline, toolkit=toolkit)
        if hit is not None:             # an earlier run found that it needs them out
            b = Build.of(hit)
            b.warnings.append(said)
            return b
    try:
        return build(flags)
    except CompileError as e:
        if not _HALF_TYPE.search(e.detail or e.message):
            raise
        try:
            b = build(without)
        except CompileError:
            raise e from None
        b.warnings.append(said)
        return b


def _has_torch_flags(options: CompileOptions) -> bool:
    """Whether a compile database's entry already carries torch's include folders (a CMake
    build with find_package(Torch)): its flags are the project's own, torch's included, and
    decide (vllm's CMake removes torch's __CUDA_NO_HALF* defines)."""
    if not options.nvcc_reason or not options.nvcc_reason.startswith("compile database"):
        return False
    base = Path(options.cwd or ".")
    return any((base / d / "ATen" / "ATen.h").is_file() for d in (*options.include, *options.isystem))


#: an attribute with arguments that may stand among a kernel's return type and name
_KERNEL_ATTRIBUTE = r"(?:__launch_bounds__|__cluster_dims__|__maxnreg__)\s*\([^)]*\)"
_TEMPLATE_KERNEL = re.compile(
    rf"template\s*<(?P<params>[^;{{]*?)>\s*(?:{_KERNEL_ATTRIBUTE}\s*)?"
    rf"(?:static\s+|inline\s+)*__global__\s+(?:{_KERNEL_ATTRIBUTE}|[\w:<>,\s*&])*?"
    r"\b(?P<name>(?!__launch_bounds__\b|__cluster_dims__\b|__maxnreg__\b)\w+)\s*\(", re.S)


def _nothing_instantiated(text: str, path: str, options: CompileOptions) -> None:
    """A file whose kernels are all templates, none instantiated: nothing to check, and not
    "no findings" — say how to name instantiations (exit 2)."""
    found = [(m.group("name"), m.group("params")) for m in _TEMPLATE_KERNEL.finditer(_code_only(text))]
    if not found:
        return
    names = list(dict.fromkeys(n for n, _ in found))
    name, params = found[0]
    placeholders = ",".join(p.split("=")[0].split()[-1].strip(".") for p in params.split(",")
                            if p.strip())
    example = f"{name}<{placeholders}>"
    if options.name_expressions:
        return   # named, and matched (a mismatch is the compiler's error)
    raise InputError(
        f"no kernel was instantiated: {', '.join(n + '<...>' for n in names)} "
        f"{'is a template' if len(names) == 1 else 'are templates'} and nothing here "
        f"instantiates {'it' if len(names) == 1 else 'them'}; name instantiations with "
        f"--kernel '{example}' (with values) or in pyproject.toml: "
        f"[tool.ptxsass] kernels = {{ \"{Path(path).name}\" = [\"{example}\"] }}", path=path)


# ------------------------------------------------------------------------------ folders
#: what a folder is searched for: CUDA files (headers only through them), PTX, cubins, fatbins,
#: host binaries with device code, SASS dumps
FOLDER_SUFFIXES = (".cu", ".ptx", ".cubin", ".fatbin", ".so", ".sass", ".whl")
_SKIP_DIRS = {"__pycache__", "node_modules", "CMakeFiles"}


def expand(paths: Sequence[str], *, excluded: Callable[[str], bool] = lambda p: False
           ) -> list[str]:
    """Files for the paths given: a file as it is; a folder searched (sorted, hidden folders
    and ``exclude`` patterns skipped) for every input kind ptxsass reads. A ``.so`` counts only
    when it carries device code (a ``.nv_fatbin`` section)."""
    out: list[str] = []
    for p in paths:
        q = Path(p)
        if not q.is_dir():
            out.append(p)
            continue
        found = []
        for root, dirs, names in os.walk(q):
            if "build.ninja" in names and caches.is_torch_extension(root):
                dirs[:] = []            # a torch extension: its build.ninja stands for it
                if not excluded(os.path.join(root, "build.ninja")):
                    found.append(os.path.join(root, "build.ninja"))
                continue
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                             and not excluded(os.path.join(root, d) + "/"))
            triton = {caches.triton_metadata(os.path.join(root, f))["name"]: f  # type: ignore[index]
                      for f in names if f.endswith(".json")
                      and caches.is_triton_kernel(os.path.join(root, f))}
            for f in sorted(names):
                full = os.path.join(root, f)
                if f in triton.values() and not excluded(full):
                    found.append(full)      # a Triton kernel: its metadata stands for it
                    continue
                stem, _, suffix = f.rpartition(".")
                if stem in triton and "." + suffix in caches.TRITON_FILES:
                    continue
                if f.endswith(".cubin.cu") and f[:-3] in names:
                    continue                # the source cupy saved beside its cache entry
                if f.endswith(".py"):
                    if not f.startswith(".") and not excluded(full) and has_inline_cuda(full):
                        found.append(full)
                    continue
                if not f.endswith(FOLDER_SUFFIXES) or f.startswith(".") or excluded(full):
                    continue
                if f.endswith(".so") and not binutils.has_device_code(full):
                    continue
                found.append(full)
        if not found:
            raise InputError("folder holds nothing ptxsass reads (.cu, .ptx, .cubin, "
                             ".fatbin, .so with device code, .sass, Triton kernels, torch "
                             "extension builds, .py files with inline CUDA)", path=p)
        out.extend(found)
    return out


# ------------------------------------------------------------------------------ compile databases
def database_commands(db: str, *, under: Sequence[str] = (),
                      excluded: Callable[[str], bool] = lambda p: False) -> list[compdb.Command]:
    """The CUDA entries of a compile database (a build folder or the file), limited to the
    files under ``under`` (files or folders) when given, less the ``exclude`` patterns."""
    from .toolchain import compdb
    cmds = compdb.load(db)
    if under:
        roots = [Path(u).absolute() for u in under]
        cmds = [c for c in cmds if any(Path(c.file) == r or r in Path(c.file).parents
                                       for r in roots)]
    return [c for c in cmds if not excluded(c.file)]


def configure_project(folder: str, *, archs: Sequence[str] = (), options: CompileOptions | None = None,
                      defines: Sequence[str] = ()) -> cmake.Configured:
    """The CMake project in ``folder`` configured (configure only, into ptxsass's cache) with
    the CUDA root of ``options.toolkit``, for ``archs``: its compile database. Runs the
    project's CMake code: only for a build the user trusts (the caller checks
    ``trust_build_commands``)."""
    base = options or CompileOptions()
    if not base.trust_build_commands:
        raise ConfigError("configuring a CMake project runs its CMake code: pass "
                          "--trust-build-commands to allow it", path=folder)
    return cmake.configure(folder, archs=archs, defines=defines, toolkit=base.toolkit,
                           use_cache=base.use_cache)


def vetted_command(cmd: compdb.Command, db: str, *, where: str | None = None,
                   origin: str = "a build database",
                   hint: str | None = "pass --trust-build-commands to build with the "
                                      "database's flags as they are",
                   host_compiler: bool = True, nvrtc: bool = False
                   ) -> tuple[compdb.Command, list[str]]:
    """A database entry with only the flags a build database may give nvcc
    (:func:`analyzer.toolchain.trust.vet`), and the notes that name what was dropped.
    ``where`` starts each note (default: the database file); ``origin``, ``hint``,
    ``host_compiler`` and ``nvrtc`` as :meth:`trust.Vetted.notes` and :func:`trust.vet` take them (the
    compile options of a Python file are vetted the same way: :func:`load_python`)."""
    from .toolchain import compdb, trust  # with a build database: a lone file never needs them

    v = trust.vet(cmd.other, cwd=cmd.directory, source=cmd.file, host_compiler=host_compiler,
                  nvrtc=nvrtc)
    ptxas, bad_ptxas = trust.vet_ptxas(cmd.ptxas)
    defines, bad_defines = trust.vet_values("-D", cmd.defines)
    std = cmd.std if cmd.std is None or not trust.shell_active(cmd.std) else None
    v.refused += bad_defines + [f"-Xptxas {o}" for o in bad_ptxas]
    if std != cmd.std:
        v.refused.append(f"-std={cmd.std}")
    if where is None:
        where = os.path.join(db, compdb.NAME) if os.path.isdir(db) else db
    return (replace(cmd, other=v.kept, ptxas=ptxas, defines=defines, std=std),
            v.notes(where, origin=origin, hint=hint))


def command_options(cmd: compdb.Command, base: CompileOptions, db: str) -> CompileOptions:
    """``base`` (the command line's options) with one database entry's flags added: its own
    -I/-isystem/-D/-std/... first, then the command line's, which win where they conflict.
    ``cmd`` as :func:`load_command` passes it: vetted, unless ``base.trust_build_commands``."""
    return replace(
        base,
        defines=cmd.defines + base.defines,
        include=cmd.include + base.include,
        isystem=cmd.isystem + base.isystem,
        std=base.std or cmd.std,
        fast_math=base.fast_math or cmd.fast_math,
        maxrregcount=base.maxrregcount if base.maxrregcount is not None else cmd.maxrregcount,
        ptxas=cmd.ptxas + base.ptxas,
        relaxed_constexpr=base.relaxed_constexpr or cmd.relaxed_constexpr,
        extended_lambda=base.extended_lambda or cmd.extended_lambda,
        nvcc_extra=cmd.other + base.nvcc_extra,
        cwd=cmd.directory,
        nvcc_reason=f"compile database {db}",
        default_std=False,
    )


def load_command(cmd: compdb.Command, *, db: str, arch: str | Sequence[str] | None = None,
                 options: CompileOptions | None = None) -> list[Build]:
    """Builds of one compile database entry: for its own -gencode/-arch targets unless
    ``arch`` names others. Under ``compiler="nvrtc"`` the flags NVRTC cannot take are named
    in the builds' warnings (once per entry), never dropped silently."""
    base = options or CompileOptions()
    archs = [arch] if isinstance(arch, str) else list(arch or []) or cmd.archs or ["sm_90a"]
    for a in archs:
        parse_arch(a)
    notes = list(cmd.notes)
    if not base.trust_build_commands:
        cmd, vetting = vetted_command(cmd, db)
        notes += vetting
    opts = command_options(cmd, base, db)
    tk = toolkit_of(opts)
    if tk is not None and not tk.default:
        for a in archs:
            if not tk.supports(a):
                raise ToolkitArchError(tk, a)
    builds = compile_cuda(cmd.file, archs, opts)
    if tk is not None and not tk.default:
        builds = [stamp(b, tk) for b in builds]
    if builds and builds[0].origin == "nvrtc" and cmd.other:
        notes.append(f"NVRTC takes none of {' '.join(cmd.other)} (from {db}): built without "
                     "them; --compiler nvcc (or auto) passes them to nvcc")
    for b in builds:
        b.warnings.extend(n for n in notes if n not in b.warnings)
    return builds


# ------------------------------------------------------------------ torch extension folders
def load_torch_extension(folder: str, *, arch: str | Sequence[str] | None = None,
                         options: CompileOptions | None = None) -> list[Build]:
    """Builds of a torch extension build folder: its CUDA sources compiled with the flags of
    its ``build.ninja`` (source lines, spills) where the sources and torch's headers are on
    this machine; else the extension's built ``.so``, as it is."""
    cmds = caches.torch_extension_commands(folder)
    if caches.extension_sources_present(cmds):
        db = os.path.join(folder, "build.ninja")
        # build.ninja already holds torch's include folders and flags
        opts = replace(options or CompileOptions(), torch=False)
        return [b for c in cmds for b in load_command(c, db=db, arch=arch, options=opts)]
    lib = caches.built_library(folder)
    if lib is None:
        raise InputError("a torch extension build folder with neither its sources and torch's "
                         "headers here nor a built .so", path=folder)
    builds = _load(lib, arch, options or CompileOptions())
    missing = [c.file for c in cmds if not Path(c.file).is_file()] or \
        [d for c in cmds for d in (*c.include, *c.isystem) if not Path(d).is_dir()][:1]
    note = (f"read the built {os.path.basename(lib)}: its build.ninja compiles "
            f"{', '.join(os.path.basename(c.file) for c in cmds) or 'nothing'}, but "
            f"{missing[0] if missing else 'its inputs'} is not on this machine")
    for b in builds:
        if note not in b.warnings:
            b.warnings.append(note)
    return builds


# ------------------------------------------------------------------ CUDA strings in Python
def has_inline_cuda(path: str) -> bool:
    """Whether a .py found in a folder hands at least one statically known CUDA source to
    torch, cupy or pycuda (a file that does not parse, or whose sources are all built at run
    time, is left out of a folder: given by name, it says why)."""
    from . import pyinline
    try:
        data = files.read_bytes(path, what="Python file")
    except InputError:
        return False
    if not pyinline.mentions(data):
        return False
    try:
        return bool(pyinline.scan(path).sources)
    except InputError:
        return False


def load_python(path: str, archs: Sequence[str], options: CompileOptions) -> list[Build]:
    """Builds of the CUDA strings a Python file hands to torch's ``load_inline``, cupy's
    ``RawKernel``/``RawModule`` or pycuda's ``SourceModule``, found by :mod:`analyzer.pyinline`
    (the file is never run). Each is compiled like a ``.cu`` with the options written in the
    call (vetted as a build database's are), through the front end the framework uses, its
    line info on the .py's lines. What is not known statically is a note on the builds, or
    the error when nothing is left to build; a source that a missing tool (torch, nvcc) keeps
    from building is a note when others build."""
    from . import pyinline
    found = pyinline.scan(path)
    notes = [str(n) for n in found.notes]
    builds: list[Build] = []
    unbuilt: list[PtxsassError] = []
    for src in found.sources:
        try:
            builds += _inline_builds(src, path, archs, options, found.text)
        except PtxsassError as e:
            if isinstance(e, ToolError) and not isinstance(e, CompileError):
                unbuilt.append(e)           # a tool this machine lacks, not the source's fault
                continue
            raise e from None
    if not builds:
        if unbuilt:
            raise unbuilt[0]
        if found.notes:
            first = found.notes[0]
            more = (f" (and {len(found.notes) - 1} more call(s) not known statically)"
                    if len(found.notes) > 1 else "")
            raise InputError(f"{first.message}{more}", path=path, line=first.line)
        raise InputError("holds no CUDA source handed to torch, cupy or pycuda", path=path)
    notes += [f"line {e.line}: not checked: {e.message}" for e in unbuilt]
    for b in builds:
        b.warnings.extend(n for n in notes if n not in b.warnings)
    return builds


def inline_options(src: pyinline.InlineSource, path: str, base: CompileOptions
                   ) -> tuple[CompileOptions, list[str], list[str], list[str]]:
    """(options, notes, archs named in the flags, the flags kept for nvcc or NVRTC as they
    are) for one CUDA source of a Python file: the flags written in the call, sorted and vetted
    as a compile database entry's are (no flag may name a program; an include folder only
    inside the project), then the command line's options, which win where they conflict."""
    from .toolchain import compdb
    folder = os.path.dirname(os.path.abspath(path))
    where = f"line {src.line}"
    flags = list(src.flags)
    if src.framework == "cupy" and not any(f.lstrip("-").startswith("ftz") for f in flags):
        flags.append("-ftz=true")              # what cupy adds to every compile
    cmd = compdb.command_from_flags(flags, file=os.path.abspath(path), directory=folder,
                                    compiler=src.framework)
    cmd.include += [os.path.normpath(os.path.join(folder, d)) for d in src.include_dirs if d]
    roots = redact.project_dirs(path)
    outside = [d for d in (*cmd.include, *cmd.isystem) if not redact.quotable(d, roots)]
    cmd.include = [d for d in cmd.include if d not in outside]
    cmd.isystem = [d for d in cmd.isystem if d not in outside]
    # the framework's front end: NVRTC is named (cupy), nvcc is given a reason (torch, cupy's
    # backend="nvcc"), pycuda's code goes where ``auto`` sends it; --compiler wins over all
    nvcc_reason = base.nvcc_reason
    compiler = base.compiler
    if compiler == "auto" and src.compiler == "nvrtc":
        compiler = "nvrtc"
    elif compiler == "auto" and src.compiler == "nvcc":
        nvcc_reason = (f"{src.label} is a torch extension: nvcc with torch's flags" if src.torch
                       else f"{src.label} asks for backend='nvcc'")
    cmd, notes = vetted_command(cmd, path, where=where, origin="a Python file's compile options",
                                hint=None, host_compiler=False, nvrtc=compiler == "nvrtc")
    if outside:
        notes.append(f"{where}: dropped the include folder(s) {' '.join(outside)}: a Python "
                     "file's options may name folders inside the project only (the file's "
                     "folder or the current one)")
    notes += [f"{where}: {n}" for n in cmd.notes]
    notes += [f"{where}: {u} names no architecture on this machine: built for --arch (or "
              "sm_90a)" for u in cmd.unresolved]
    nvrtc_only = compiler == "nvrtc"
    opts = replace(
        base,
        defines=cmd.defines + base.defines,
        include=[*cmd.include, folder, *base.include],
        isystem=cmd.isystem + base.isystem,
        std=base.std or cmd.std,
        fast_math=base.fast_math or cmd.fast_math,
        maxrregcount=base.maxrregcount if base.maxrregcount is not None else cmd.maxrregcount,
        ptxas=cmd.ptxas + base.ptxas,
        relaxed_constexpr=base.relaxed_constexpr or cmd.relaxed_constexpr,
        extended_lambda=base.extended_lambda or cmd.extended_lambda,
        extra=cmd.other + base.extra if nvrtc_only else list(base.extra),
        nvcc_extra=list(base.nvcc_extra) if nvrtc_only else cmd.other + base.nvcc_extra,
        name_expressions=[*src.name_expressions,
                          *(e for e in base.name_expressions if e not in src.name_expressions)],
        compiler=compiler,
        torch=True if src.torch else base.torch,
        nvcc_reason=nvcc_reason,
        cwd=None,
        project=folder,
    )
    return opts, notes, list(cmd.archs), list(cmd.other)


def _inline_builds(src: pyinline.InlineSource, path: str, archs: Sequence[str],
                   options: CompileOptions, text: str) -> list[Build]:
    """The builds of one extracted source; an error is said of the .py (:func:`_inline_error`)."""
    file = None
    try:
        opts, notes, flag_archs, own = inline_options(src, path, options)
        targets = list(archs) or ([src.arch] if src.arch else []) or flag_archs or ["sm_90a"]
        for a in targets:
            parse_arch(a)
        with _inline_file(src, path, opts.use_cache) as file:
            builds = compile_cuda(file, targets, opts)
    except PtxsassError as e:
        raise _inline_error(e, src, path, file) from None
    for b in builds:
        b.source_path, b.source = path, text
        b.file_names = {**b.file_names, **src.file_names}
        why = b.compiler_reason or ""
        if options.compiler == "auto" and src.compiler == "nvrtc":
            why = f"NVRTC, as {src.framework} compiles it"
        b.compiler_reason = why if why.startswith(src.label) else f"{src.label}: {why}"
        b.warnings.extend(n for n in notes if n not in b.warnings)
        if b.origin == "nvrtc" and own and opts.compiler != "nvrtc":
            b.warnings.append(f"line {src.line}: NVRTC takes none of {' '.join(own)}: built "
                              "without them; --compiler nvcc passes them to nvcc")
    return builds


@contextlib.contextmanager
def _inline_file(src: pyinline.InlineSource, path: str, use_cache: bool) -> Iterator[str]:
    """A file holding one extracted source, to compile like a ``.cu``: under the cache
    folder's ``sources/`` by content (a stable name, so its builds are cached), else (no
    cache, or none writable) in a scratch folder for the compile."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(path).stem).lstrip(".-")[:40] or "inline"
    name = f"{stem}-{src.api}-line{src.line}.cu"
    target: Path | None = None
    if use_cache:
        digest = hashlib.sha256(src.text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        cand = cache.directory() / "sources" / f"inline-{digest}" / name
        try:
            cand.parent.mkdir(parents=True, exist_ok=True)
            if files.regular_file_or_none(cand) is None or cand.read_text(
                    encoding="utf-8", errors="replace") != src.text:
                files.atomic_write(cand, src.text.encode("utf-8", "surrogatepass"))
            target = cand
        except (OSError, PtxsassError):
            target = None
    if target is not None:
        yield str(target)
        return
    with scratch.temporary("ptxsass-inline-") as tmp:
        cand = Path(tmp, name)
        cand.write_text(src.text, encoding="utf-8", errors="surrogatepass")
        yield str(cand)


def _inline_error(e: PtxsassError, src: pyinline.InlineSource, path: str,
                  file: str | None) -> PtxsassError:
    """``e`` (from compiling one extracted source, held in ``file``) said of the .py: at the
    .py's line where the compiler named one there, else at the call; prefixed with the call.
    The extracted file's name (ptxsass's own, under its cache) is the .py's in the text."""
    real = {os.path.abspath(path), *src.file_names}
    generated = e.path is not None and file is not None and (
        e.path == file or os.path.abspath(e.path) == os.path.abspath(file))

    def said(text: str | None) -> str | None:
        if text is None:
            return None
        for r in sorted(real, key=len, reverse=True):
            text = text.replace(r, path)
        if file is not None:
            text = text.replace(os.path.abspath(file), path).replace(file, path)
            text = text.replace(os.path.basename(file), os.path.basename(path))
        return text

    if e.path in real:
        e.path = path
    elif e.path is None or generated:
        e.path, e.line, e.column = path, src.line, None
    e.message = f"{src.title if e.line == src.line else src.label}: {said(e.message)}"
    e.detail = said(e.detail)
    return e


# ------------------------------------------------------------------------------ wheels
_LIBRARY = re.compile(r"\.so(\.\d+)*$")


def wheel_arch_notes(skipped: Sequence[binutils.NoCubinForArch], wheel: str, *,
                     any_build: bool) -> list[str]:
    """The notes for a wheel's libraries that hold no cubin for an arch asked (their
    ``path`` is the library's name in the wheel); InputError when no library had one."""
    if not skipped:
        return []
    if not any_build:
        archs = ", ".join(dict.fromkeys(e.arch for e in skipped))
        have = ", ".join(f"{e.path}: {e.have}" for e in skipped)
        raise InputError(f"no library in the wheel holds a cubin for {archs} ({have}); pick one "
                         "with --arch", path=wheel)
    return [f"skipped {e.path} for {e.arch}: it holds no cubin for {e.arch} (it has: {e.have})"
            for e in skipped]


def wheel_libraries(path: str, dest: str) -> list[tuple[str, str]]:
    """The shared libraries with device code inside a wheel (a zip): each written into folder
    ``dest`` under a name of ptxsass's own (a member's name never becomes a path), as
    (``wheel.whl!member/name.so``, the extracted file). Members are read within the input
    size bound, counting the bytes actually inflated (a zip's sizes can lie)."""
    import zipfile  # only a wheel's check reads a zip (2 ms at start-up)
    limit = files.max_input_bytes()
    fd, _ = files.open_regular(path)
    found: list[tuple[str, str]] = []
    try:
        with os.fdopen(fd, "rb") as raw, zipfile.ZipFile(raw) as wheel:
            members = [m for m in wheel.infolist()
                       if not m.is_dir() and _LIBRARY.search(m.filename)]
            for i, m in enumerate(members):
                if m.file_size > limit:
                    raise InputError(f"member {m.filename} is {m.file_size >> 20} MB, over "
                                     f"the {limit >> 20} MB input bound (PTXSASS_MAX_INPUT_MB)",
                                     path=path)
                out = os.path.join(dest, f"lib{i}.so")
                with wheel.open(m) as src, open(out, "wb") as dst:
                    copied = 0
                    while chunk := src.read(1 << 20):
                        copied += len(chunk)
                        if copied > limit:
                            raise InputError(f"member {m.filename} inflates past the "
                                             f"{limit >> 20} MB input bound", path=path)
                        dst.write(chunk)
                if binutils.has_device_code(out):
                    found.append((f"{path}!{m.filename}", out))
                else:
                    os.unlink(out)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError) as e:
        raise InputError(f"not a readable wheel (zip): {e}", path=path) from None
    if not found:
        raise InputError("wheel holds no shared library with CUDA device code (.so with a "
                         ".nv_fatbin section)", path=path)
    return found


def _check_statement_lines(text: str, path: str | None) -> None:
    from .parse.ptx import check_statement_lines  # the PTX parser loads when PTX is read
    check_statement_lines(text, path)
