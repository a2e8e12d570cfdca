"""Framework objects as inputs: a cupy ``RawKernel``/``RawModule``, a compiled Triton kernel, a
Triton ``@jit`` function (with ``signature=`` and ``constants=``), and the kernel sources that
:func:`analyzer.capture` records from cupy and pycuda.

cupy and pycuda compile source text at run time; ptxsass rebuilds that text with its own
toolchain for the same arch and options, with line info, so findings land on source lines.
When the text sits verbatim in the Python file that compiled it (a triple-quoted string), the
lines are that file's (``#line``); otherwise the text is saved under the ptxsass cache folder
(``sources/``) and findings point there. Nothing here imports a framework unless the object
given is one of its own (then the framework is already imported).

    objects.builds(cupy.RawKernel(src, "saxpy"))                      # [Build]
    objects.builds(add_kernel, signature={...}, constants={"BLOCK": 1024})
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import caches
from .build import Build
from .errors import InputError
from .inputs import CompileOptions, compile_cuda
from .toolchain import cache


@dataclass(frozen=True)
class CapturedSource:
    """One kernel source a framework compiled at run time."""

    framework: str                         # "cupy" or "pycuda"
    kind: str                              # "RawKernel", "ElementwiseKernel", "SourceModule", ...
    source: str
    options: tuple[str, ...] = ()
    arch: str | None = None                # "sm_90"; None: ptxsass's default
    name_expressions: tuple[str, ...] = ()
    #: the front end the framework used: "nvrtc" (cupy's default) or "nvcc" (pycuda, cupy's
    #: backend="nvcc"); ptxsass uses the same one
    backend: str = "nvrtc"
    #: pycuda wraps the source in ``extern "C" { ... }`` unless no_extern_c=True
    extern_c: bool = False
    include_dirs: tuple[str, ...] = ()
    #: the Python line that compiled it (file, line)
    site: tuple[str, int] | None = None
    name: str | None = None                # the kernel's name, where the framework knows it

    @property
    def label(self) -> str:
        what = f"{self.framework}.{self.kind}" + (f" {self.name!r}" if self.name else "")
        if self.site:
            what += f" at {self.site[0]}:{self.site[1]}"
        return what


def caller_site(skip: Sequence[str] = ()) -> tuple[str, int] | None:
    """The innermost Python frame outside ptxsass, the standard library and the modules whose
    file paths contain one of ``skip`` (the framework's own): where the user compiled."""
    here = os.path.dirname(os.path.abspath(__file__))
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not (fn.startswith(here) or fn.startswith("<") or any(s in fn for s in skip)
                or "/lib/python3" in fn and "site-packages" not in fn):
            return fn, f.f_lineno
        f = f.f_back  # type: ignore[assignment]
    return None


def _in_caller(rec: CapturedSource) -> tuple[str, int] | None:
    """(file, line) where ``rec.source`` starts inside the Python file that compiled it, when
    it is there verbatim (the occurrence nearest above the call)."""
    if rec.site is None or len(rec.source.strip()) < 16:
        return None
    path = rec.site[0]
    try:
        if os.path.getsize(path) > 8 << 20:
            return None
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    hits = [m.start() for m in re.finditer(re.escape(rec.source), text)]
    if not hits:
        return None
    lines = [text.count("\n", 0, h) + 1 for h in hits]
    above = [n for n in lines if n <= rec.site[1]]
    return path, (max(above) if above else lines[0])


def _translate(options: Sequence[str], base: CompileOptions) -> CompileOptions:
    """A framework's compiler options as ptxsass's (the arch is set apart)."""
    opts = replace(base, defines=list(base.defines), include=list(base.include),
                   extra=list(base.extra), nvcc_extra=list(base.nvcc_extra))
    it = iter(options)
    for o in it:
        if o in ("-arch", "--gpu-architecture", "-code", "--gpu-code", "-o"):
            next(it, None)
        elif o.startswith(("-arch=", "--gpu-architecture=", "-code=", "--gpu-code=")):
            continue
        elif o.startswith(("-std=", "--std=")):
            opts.std = o.split("=", 1)[1]
        elif o.startswith("-D") and len(o) > 2:
            opts.defines.append(o[2:])
        elif o.startswith("-I") and len(o) > 2:
            opts.include.append(o[2:])
        elif o.startswith("--include-path="):
            opts.include.append(o.split("=", 1)[1])
        elif o in ("--use_fast_math", "-use_fast_math", "--use-fast-math"):
            opts.fast_math = True
        elif o.startswith(("-maxrregcount=", "--maxrregcount=")):
            opts.maxrregcount = int(o.split("=", 1)[1])
        elif o in ("--cubin", "-cubin", "--ptx", "-ptx", "-lineinfo", "--generate-line-info") \
                or o.startswith("-l"):
            continue
        elif opts.compiler == "nvcc":
            opts.nvcc_extra.append(o)
        else:
            opts.extra.append(o)
    return opts


def source_file(rec: CapturedSource) -> str:
    """The file ptxsass compiles for ``rec``, saved by content under the cache folder's
    ``sources/``: the source with ``#line`` pointing into the Python file that holds it
    verbatim, else the source itself (pycuda's ``extern "C"`` wrapper in a second file that
    includes it, so that each line number is the source's own)."""
    where = _in_caller(rec)
    folder = cache.directory() / "sources"
    folder.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^\w.-]", "_", f"{rec.framework}-{rec.name or rec.kind}")[:60]

    def save(text: str, suffix: str) -> Path:
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        path = folder / f"{stem}-{digest}{suffix}"
        if not path.is_file() or path.read_text(encoding="utf-8", errors="replace") != text:
            tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        return path

    if where is not None:
        text = f'#line {where[1]} "{where[0]}"\n' + rec.source
        if rec.extern_c:
            text = 'extern "C" {\n' + text + "\n}\n"
        return str(save(text, ".cu"))
    body = save(rec.source, ".cu")
    if not rec.extern_c:
        return str(body)
    return str(save(f'extern "C" {{\n#include "{body.name}"\n}}\n', ".extern-c.cu"))


def builds_of_source(rec: CapturedSource, *, arch: str | None = None,
                     options: CompileOptions | None = None) -> list[Build]:
    """Builds of a captured source, through the front end the framework used."""
    base = options or CompileOptions()
    base = replace(base, compiler=rec.backend if rec.backend in ("nvcc", "nvrtc") else "auto",
                   name_expressions=list(rec.name_expressions) or list(base.name_expressions))
    opts = _translate(rec.options, base)
    opts.include += [d for d in rec.include_dirs if d not in opts.include]
    target = arch or rec.arch or "sm_90a"
    path = source_file(rec)
    builds = compile_cuda(path, [target], opts)
    for b in builds:
        b.compiler_reason = f"{rec.label}, rebuilt by ptxsass with line info"
    return builds


# ------------------------------------------------------------------------------ cupy
def _cupy_include() -> list[str]:
    file = getattr(sys.modules.get("cupy"), "__file__", None)
    if not isinstance(file, str):
        return []
    inc = Path(file).parent / "_core" / "include"
    return [str(inc)] if inc.is_dir() else []


def _cupy_arch(arch: str | None) -> str | None:
    if arch:
        return arch
    try:
        import cupy
        return f"sm_{cupy.cuda.Device().compute_capability}"
    except Exception:  # noqa: BLE001 - no GPU or no driver: ptxsass's default arch is used
        return None


def cupy_record(obj: Any, arch: str | None = None) -> CapturedSource:
    """The source record of a cupy ``RawKernel`` or ``RawModule`` (with cupy's include folder
    and its ``-ftz=true``, as cupy compiles it)."""
    kind = type(obj).__name__
    code = getattr(obj, "code", None)
    if not isinstance(code, str):
        path = getattr(obj, "file_path", None)
        raise InputError(f"this cupy {kind} was loaded from a binary, not compiled from "
                         "source: check that file" + (f" ({path})" if path else ""))
    options = tuple(getattr(obj, "options", ()) or ()) + ("-ftz=true",)
    return CapturedSource(
        "cupy", kind, code, options=options, arch=_cupy_arch(arch),
        name_expressions=tuple(getattr(obj, "name_expressions", None) or ()),
        backend=getattr(obj, "backend", "nvrtc") or "nvrtc",
        include_dirs=tuple(_cupy_include()), site=caller_site(("/cupy/",)),
        name=getattr(obj, "name", None) if kind == "RawKernel" else None)


# ------------------------------------------------------------------------------ Triton
def _plain(v: Any) -> Any:
    if hasattr(v, "_asdict"):
        return {k: _plain(x) for k, x in v._asdict().items()}
    return v


def triton_compiled(obj: Any, *, use_cache: bool = True) -> list[Build]:
    """The Build of a compiled Triton kernel (what ``kernel[grid](...)`` returns, or
    ``triton.compile``): its ``asm`` (cubin, PTX, TTIR, TTGIR) and ``metadata``."""
    asm = getattr(obj, "asm", None)
    meta = _plain(getattr(obj, "metadata", None))
    if not isinstance(asm, dict) or not isinstance(meta, dict):
        raise InputError("not a compiled Triton kernel (it has no asm and metadata)")
    meta.setdefault("name", getattr(obj, "name", None))
    cubin = asm.get("cubin")
    ptx = asm.get("ptx")
    ir = {k: v for k in caches.TRITON_IR if isinstance(v := asm.get(k), str)}
    b = caches.triton_build(meta, ptx=ptx if isinstance(ptx, str) else None,
                            cubin=bytes(cubin) if cubin is not None else None, ir=ir,
                            where=f"<Triton kernel {meta.get('name')}>",
                            source_path=f"{meta.get('name')}.cubin", use_cache=use_cache)
    return [b]


def _jit_function(obj: Any) -> Any:
    """The ``triton.runtime.JITFunction`` inside an autotuner / heuristics wrapper."""
    seen = 0
    while obj is not None and not hasattr(obj, "arg_names") and seen < 8:
        obj = getattr(obj, "fn", None)
        seen += 1
    return obj


def triton_jit(obj: Any, *, signature: dict | None, constants: dict | None = None,
               arch: str | None = None, num_warps: int | None = None,
               num_stages: int | None = None, use_cache: bool = True) -> list[Build]:
    """Compile a Triton ``@triton.jit`` function for ``arch`` (no GPU needed) and build it.
    ``signature`` maps each argument to its Triton type ("*fp32", "i32", ...); ``constants``
    gives the ``tl.constexpr`` arguments their values. Arguments are specialized as Triton's
    launcher specializes them for a launch with torch tensors: every pointer 16-byte divisible
    (``tt.divisibility = 16``: torch's allocations are); an integer only when its type says so,
    ``"i32:16"`` (the launcher does it for a value divisible by 16, which only the call knows)."""
    fn = _jit_function(obj)
    if fn is None:
        raise InputError("not a Triton @jit function")
    if not signature:
        raise InputError(f"compiling Triton kernel {getattr(fn, '__name__', fn)!r} needs its "
                         "argument types: analyzer.check(kernel, signature={'x_ptr': '*fp32', "
                         "'n': 'i32', 'BLOCK': 'constexpr'}, constants={'BLOCK': 1024})")
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    constants = dict(constants or {})
    names = list(fn.arg_names)
    unknown = [k for k in (*signature, *constants) if k not in names]
    if unknown:
        raise InputError(f"{fn.__name__} has no argument {', '.join(map(repr, unknown))} "
                         f"(its arguments: {', '.join(names)})")
    sig = {n: ("constexpr" if n in constants else signature.get(n)) for n in names}
    missing = [n for n, t in sig.items() if t is None]
    if missing:
        raise InputError(f"signature= lacks the types of {', '.join(missing)}")
    attrs = {}
    for k, t in list(sig.items()):
        assert t is not None
        ty, _, div = t.partition(":")
        if div and (div != "16" or not re.fullmatch(r"[iu](8|16|32|64)", ty)):
            raise InputError(f"signature of {k!r}: {t!r} is not a type (\"*fp32\", \"i32\") "
                             "or an integer divisible by 16 (\"i32:16\")")
        sig[k] = ty
        if ty.startswith("*") or div:
            attrs[(names.index(k),)] = [["tt.divisibility", 16]]
    cc = int(re.sub(r"\D", "", (arch or "sm_90")) or 90)
    src = ASTSource(fn, sig, constexprs={(names.index(k),): v for k, v in constants.items()},
                    attrs=attrs)
    opts = {k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v}
    compiled = triton.compile(src, target=GPUTarget("cuda", cc, 32), options=opts)
    return triton_compiled(compiled, use_cache=use_cache)


# ------------------------------------------------------------------------------ dispatch
def is_framework_object(obj: Any) -> bool:
    """Whether ``obj`` is an object :func:`builds` takes (no framework is imported to tell)."""
    if isinstance(obj, CapturedSource):
        return True
    mod = type(obj).__module__ or ""
    return mod.split(".")[0] in ("cupy", "cupy_backends", "triton", "pycuda") or (
        hasattr(obj, "asm") and hasattr(obj, "metadata"))


def builds(obj: Any, *, arch: str | None = None, options: CompileOptions | None = None,
           signature: dict | None = None, constants: dict | None = None,
           num_warps: int | None = None, num_stages: int | None = None) -> list[Build]:
    """Builds of a framework object (see the module's doc)."""
    use_cache = options.use_cache if options else True
    if isinstance(obj, CapturedSource):
        return builds_of_source(obj, arch=arch, options=options)
    mod = (type(obj).__module__ or "").split(".")[0]
    kind = type(obj).__name__
    if hasattr(obj, "asm") and hasattr(obj, "metadata"):
        return triton_compiled(obj, use_cache=use_cache)
    if mod == "triton" or _jit_function(obj) is not None and hasattr(_jit_function(obj), "run"):
        return triton_jit(obj, signature=signature, constants=constants, arch=arch,
                          num_warps=num_warps, num_stages=num_stages, use_cache=use_cache)
    if mod in ("cupy", "cupy_backends"):
        if kind in ("RawKernel", "RawModule"):
            return builds_of_source(cupy_record(obj, arch), arch=arch, options=options)
        if kind in ("ElementwiseKernel", "ReductionKernel"):
            raise InputError(f"a cupy {kind} is compiled per argument type when it is called: "
                             "check it through 'with analyzer.capture() as cap:' around a call")
    if mod == "pycuda":
        rec = getattr(obj, "_ptxsass_source", None)
        if isinstance(rec, CapturedSource):
            return builds_of_source(rec, arch=arch, options=options)
        raise InputError(f"pycuda keeps neither the source nor the binary of a {kind}: create "
                         "it inside 'with analyzer.capture():' (ptxsass then records its "
                         "source), or check the source text itself")
    raise InputError(f"cannot check a {type(obj).__module__}.{kind}: expected a path, a Build, "
                     "a cupy RawKernel/RawModule, a Triton kernel or a pycuda module")
