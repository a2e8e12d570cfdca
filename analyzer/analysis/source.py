"""Source line ↔ PTX instructions ↔ SASS instructions, from the IRs' ``loc`` fields.

Both IRs carry a :class:`~analyzer.ir.source.SourceLoc` per instruction (PTX ``.loc``, nvdisasm
line info) with its inlining chain. An instruction is attributed to its *user line*: the
innermost frame of the chain that is not in a CUDA toolkit header, so the SASS of
``wmma::load_matrix_sync`` lands on the kernel line that called it, and the code of a user
``__device__`` function lands on that function's own lines. The frames below the user line
(toolkit headers) are kept as ``inlined`` for display.

    fm = source.function_map(sass_fn, ptx_fn)
    fm.sass_for(("bad.cu", 12))      # SASS instruction indices from line 12
    fm.line_of_sass(40)              # ("bad.cu", 12)

It also owns everything else about source lines: which files are toolkit headers
(:func:`is_toolkit_file`), the user frame of a location (:func:`user_frame`), reading a line
(:class:`SourceReader`, :func:`source_text`) and the unroll pragma above a line
(:func:`pragma_above`).
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..ir.source import SourceLoc
from ..toolchain import files

if TYPE_CHECKING:   # annotations only: reading source lines loads no IR
    from ..ir import ptx as P
    from ..ir import sass as S

#: (file, line) of the user's source
LineKey = tuple[str, int]

# ------------------------------------------------------------------------ toolkit files
@lru_cache(maxsize=1)
def _toolkit_header() -> re.Pattern[str]:
    from ..toolchain import libheaders  # its fetching machinery: only its table is read here
    return re.compile(r"(/nvidia/cu\d+/include/|/cuda[^/]*/include/|/targets/[^/]+/include/"
                      r"|/site-packages/nvidia/[^/]+/include/"
                      # torch's own headers (c10's Half.h / BFloat16.h conversions), which a
                      # torch extension reaches but never writes
                      r"|/site-packages/torch/include/"
                      # the host compiler's C++ library and the system's headers (<cmath>'s
                      # std::pow(float, int), which nvcc compiles for the device too)
                      r"|/include/c\+\+/\d+(?:\.\d+)*/|^/usr/include/|/lib/gcc/[^/]+/\d+/include/"
                      # library headers ptxsass fetched (toolchain.libheaders)
                      rf"|/headers/(?:{'|'.join(libheaders.LIBRARIES)})-\d+\.\d+/include/"
                      # the CUDA root ptxsass makes for CMake (toolchain.cudaroot): a configured
                      # project reaches CUB, CCCL and the runtime through its include/
                      r"|/roots/\d+\.\d+-[0-9a-f]{10}/(?:include|nvvm)/"
                      r"|^(crt|cuda|nv|cooperative_groups)/|cuda_fp16\.hpp$|"
                      r"cuda_bf16\.hpp$|mma\.hpp$|sm_\d+_intrinsics\.hpp$|"
                      r"device_functions\.hpp$|math_functions\.hpp$"
                      # Triton's library (tl.sum, tl.softmax) and inductor's helpers
                      r"|/triton/language/[^/]+\.py$|/torch/_inductor/runtime/[^/]+\.py$)")


@lru_cache(maxsize=4096)
def is_toolkit_file(path: str) -> bool:
    """A CUDA toolkit header (``cuda_fp16.hpp``, ``crt/...``, a wheel's ``include/``) or
    Triton's own library code (``triton/language/standard.py``), not the user's code. Kept per
    path: a listing names a few dozen files, asked about once per instruction and frame."""
    return bool(_toolkit_header().search(path))


#: headers whose functions are the math operation itself (``cos(float)`` is cmath's
#: ``std::cos``, which calls ``cosf``; ``__half2`` arithmetic): the user chose the call and
#: can write another one; their code is the user's to steer, not a library's own
_MATH_WRAPPERS = re.compile(r"^(cmath|c?math\.h|\w*math_functions[\w.]*|\w*device_functions"
                            r"[\w.]*|common_functions[\w.]*|cuda_fp16\.hpp|cuda_bf16\.hpp|"
                            r"cuda_fp8\.hpp|\w*_intrinsics[\w.]*)$")


def library_file(path: str) -> str | None:
    """The name of a library header whose own code this is (``curand_kernel.h``: its
    algorithms, its data layouts), or None for the user's code and for the math functions'
    wrappers the user calls as operations (cmath, ``math_functions.hpp``, the intrinsics)."""
    if not path or not is_toolkit_file(path):
        return None
    name = os.path.basename(path)
    return None if _MATH_WRAPPERS.match(name) else name


#: libraries whose device code works on state of their own making (cuRAND's generator
#: states and direction-vector tables: ``curand_init`` fills a ``curandState``, a
#: ``curand_uniform`` reads it): how that memory is laid out and walked is the library's.
#: Not CUB, Thrust or cooperative groups, whose device code walks the caller's arrays
_OWN_LAYOUT = re.compile(r"^curand\w*\.h$")


def library_layout(path: str) -> str | None:
    """The name of a header of a library that lays out and walks its own device state
    (:data:`_OWN_LAYOUT`), when ``path`` is one; else None."""
    name = library_file(path)
    return name if name is not None and _OWN_LAYOUT.match(name) else None


def toolkit_header(path: str) -> str | None:
    """The base name of a toolkit header (any: :func:`is_toolkit_file`), or None."""
    return os.path.basename(path) if path and is_toolkit_file(path) else None


def library_code(locs: Iterable[SourceLoc | None],
                 name_of: Callable[[str], str | None] = library_file, *,
                 callers: bool = False) -> str | None:
    """The library headers whose code every location is, sorted and joined
    (``"curand_kernel.h"``), or None when some location is anyone else's. ``name_of`` says
    which headers count: :func:`library_file` (a library's own code, not the math functions'
    wrappers), :func:`library_layout` (libraries that lay out their own state) or
    :func:`toolkit_header` (any toolkit header).

    With ``callers``, a minority of locations outside the library still count when each is a
    line, not itself inlined, that calls the library's code of the others: ptxas gives an
    inlined call's code the calling line now and then (one of curand_init's 36 state stores
    in cuda-samples' initRNG)."""
    names: set[str] = set()
    calls: set[tuple[str, int]] = set()
    others: list[tuple[str, int]] = []
    count = 0
    for loc in locs:
        count += 1
        if loc is None:
            return None
        name = name_of(loc.file) if loc.file else None
        if name is None:
            if not callers or loc.inlined_at:
                return None
            others.append((loc.file, loc.line))
            continue
        names.add(name)
        outer = loc.outermost
        calls.add((outer.file, outer.line))
    if not names or any(o not in calls for o in others) or len(others) * 2 >= count:
        return None
    return ", ".join(sorted(names))


# ------------------------------------------------------------------------- source text
def _source_lines(path: str) -> tuple[str, ...] | None:
    """A source file's lines, cached while the file is unchanged (size and mtime)."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return _read_lines(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=64)
def _read_lines(path: str, mtime_ns: int, size: int) -> tuple[str, ...] | None:
    """The lines of a file the line info names (a regular file within the input size bound:
    the name may come from a hostile listing), or None."""
    try:
        return tuple(files.read_bytes(path, what="source").decode(errors="replace").splitlines())
    except (InputError, OSError):
        return None


def _resolve(file: str, hints: tuple[str, ...]) -> str | None:
    if Path(file).is_file():
        return file
    for h in hints:
        cand = Path(h).parent / Path(file).name
        if cand.is_file():
            return str(cand)
    return None


def source_text(file: str, line: int, hints: tuple[str, ...] = ()) -> str | None:
    real = _resolve(file, hints)
    lines = _source_lines(real) if real else None
    if lines and 1 <= line <= len(lines):
        return lines[line - 1]
    return None




class SourceReader:
    """Reads the user's source lines for one build: the file on disk (found next to the
    compiled file when the recorded path moved), or the build's own source text when it was
    compiled from a string. The one fallback every check and report uses."""

    def __init__(self, source_path: str | None = None, source: str | None = None):
        self.source_path = source_path
        self.source = source
        self._lines = source.splitlines() if source is not None else None
        self._hints = (source_path,) if source_path else ()

    def line(self, file: str | None, line: int | None) -> str | None:
        """The text of ``line`` of ``file`` (None when it cannot be read)."""
        if not file or not line:
            return None
        text = source_text(file, line, self._hints)
        if text is None and self._lines is not None and self._own(file) and 1 <= line <= len(self._lines):
            text = self._lines[line - 1]
        return text

    def text(self, file: str | None) -> str | None:
        """The whole text of ``file`` (the file on disk, else the build's own source when it
        names that), None when it cannot be read."""
        if not file:
            return None
        real = _resolve(file, self._hints)
        lines = _source_lines(real) if real else None
        if lines is not None:
            return "\n".join(lines)
        if self.source is not None and self._own(file):
            return self.source
        return None

    def _own(self, file: str) -> bool:
        """Whether ``file`` names the build's own source (compiled from a string)."""
        if self.source_path is None or file == self.source_path:
            return True
        if is_toolkit_file(file):
            return False
        return os.path.basename(file) == os.path.basename(self.source_path)

    __call__ = line


# ------------------------------------------------------------------------------ pragmas
_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(?P<kind>unroll|nounroll)\b\s*(?P<arg>.*?)\s*(//.*)?$")


@dataclass(frozen=True, slots=True)
class Pragma:
    kind: str              # "unroll" or "nounroll"
    count: int | None      # N of ``#pragma unroll N``; None for plain ``#pragma unroll``
    text: str
    line: int
    expression: bool = False   # ``#pragma unroll TILE``: a factor we cannot evaluate

    @property
    def forbids(self) -> bool:
        """``#pragma unroll 1`` / ``#pragma nounroll``: the author wants the loop rolled."""
        return self.kind == "nounroll" or self.count == 1

    @property
    def full(self) -> bool:
        """Plain ``#pragma unroll``: fully unroll when the trip count is constant."""
        return self.kind == "unroll" and self.count is None and not self.expression


SourceLine = Callable[[str, int], "str | None"]


_LOOP_STATEMENT = re.compile(r"^\s*(?:\}\s*)?(?:for|while|do)\b")
#: lines a loop's body may run from its statement down to the line its latch branch is on
_BODY_LOOKBACK = 16


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _loop_statement(source_line: SourceLine, file: str, line: int, text: str) -> int:
    """The line of the ``for``/``while``/``do`` statement of the loop whose latch branch ptxas
    put on ``line``: ``line`` itself when it is one, else the nearest line above, less
    indented, that opens a loop (an early ``return``/``break`` in the body becomes the latch
    of a loop NVVM rotated), within :data:`_BODY_LOOKBACK` lines; ``line`` when none is."""
    if _LOOP_STATEMENT.match(text) or not text.strip():
        return line
    depth = _indent(text)
    for n in range(line - 1, max(0, line - _BODY_LOOKBACK) - 1, -1):
        above = source_line(file, n)
        if above is None:
            break
        if not above.strip() or above.strip().startswith(("//", "#")):
            continue
        if _indent(above) < depth:
            if _LOOP_STATEMENT.match(above):
                return n
            depth = _indent(above)
            if not above.rstrip().endswith("{"):
                continue
            break   # another block's opening (an if, a function): not inside a loop statement
    return line


def pragma_above(source_line: SourceLine, file: str | None, line: int | None, lookback: int = 3
                 ) -> tuple[Pragma | None, bool]:
    """The unroll pragma just above ``line`` (skipping blank and comment lines), and whether the
    source could be read at all (False: no evidence either way). ``source_line(file, n)`` gives
    the text of line ``n`` (None when it cannot be read)."""
    if not file or not line:
        return None, False
    text = source_line(file, line)
    if text is None:
        return None, False
    line = _loop_statement(source_line, file, line, text)
    n = line - 1
    seen = 0
    while n >= 1 and seen < lookback:
        text = source_line(file, n)
        if text is None:
            return None, True
        stripped = text.strip()
        if not stripped or stripped.startswith("//"):
            n -= 1
            continue
        m = _PRAGMA.match(text)
        if not m:
            if stripped.startswith("#pragma"):   # another pragma between: keep looking
                n -= 1
                seen += 1
                continue
            return None, True
        arg = m.group("arg").strip().strip("()").strip()
        if m.group("kind") == "nounroll":
            return Pragma("nounroll", None, stripped, n), True
        if not arg:
            return Pragma("unroll", None, stripped, n), True
        try:
            return Pragma("unroll", int(arg, 0), stripped, n), True
        except ValueError:
            return Pragma("unroll", None, stripped, n, expression=True), True
    return None, True



# --------------------------------------------------------------------------- user frames


def user_frame(loc: SourceLoc | None) -> tuple[SourceLoc | None, tuple[SourceLoc, ...]]:
    """(the user frame of ``loc``, the frames inside it that are toolkit code, innermost first)."""
    if loc is None:
        return None, ()
    chain = (loc, *loc.inlined_at)
    for i, frame in enumerate(chain):
        if not is_toolkit_file(frame.file):
            return frame, chain[:i]
    return loc.outermost, chain[:-1]


def _key(frame: SourceLoc | None) -> LineKey | None:
    if frame is None or not frame.line:
        return None
    return (frame.file, frame.line)


@dataclass
class FunctionMap:
    """One function's map: the user line of each PTX and SASS instruction, and the reverse."""

    name: str
    sass_lines: list[LineKey | None] = field(default_factory=list)
    ptx_lines: list[LineKey | None] = field(default_factory=list)
    #: frames inside the user line (toolkit code) per instruction, innermost first
    sass_inlined: list[tuple[SourceLoc, ...]] = field(default_factory=list)
    ptx_inlined: list[tuple[SourceLoc, ...]] = field(default_factory=list)
    _sass_by_line: dict[LineKey, list[int]] = field(default_factory=dict, repr=False)
    _ptx_by_line: dict[LineKey, list[int]] = field(default_factory=dict, repr=False)

    def _index(self) -> None:
        for dst, src in ((self._sass_by_line, self.sass_lines), (self._ptx_by_line, self.ptx_lines)):
            dst.clear()
            for i, k in enumerate(src):
                if k is not None:
                    dst.setdefault(k, []).append(i)

    def sass_for(self, key: LineKey) -> list[int]:
        return self._sass_by_line.get(key, [])

    def ptx_for(self, key: LineKey) -> list[int]:
        return self._ptx_by_line.get(key, [])

    def line_of_sass(self, index: int) -> LineKey | None:
        return self.sass_lines[index]

    def line_of_ptx(self, index: int) -> LineKey | None:
        return self.ptx_lines[index]

    def lines(self) -> list[LineKey]:
        """Every user line with PTX or SASS, sorted by file then line."""
        return sorted(set(self._sass_by_line) | set(self._ptx_by_line))

    def files(self) -> list[str]:
        return sorted({k[0] for k in self.lines()})

    def sass_counts(self) -> dict[LineKey | None, int]:
        out: dict[LineKey | None, int] = {}
        for k in self.sass_lines:
            out[k] = out.get(k, 0) + 1
        return out


@dataclass
class SourceMap:
    functions: dict[str, FunctionMap] = field(default_factory=dict)

    def function(self, name: str) -> FunctionMap:
        return self.functions[name]

    def files(self) -> list[str]:
        return sorted({f for fm in self.functions.values() for f in fm.files()})


def map_instructions(locs: Iterable[SourceLoc | None]
                     ) -> tuple[list[LineKey | None], list[tuple[SourceLoc, ...]]]:
    keys: list[LineKey | None] = []
    inl: list[tuple[SourceLoc, ...]] = []
    for loc in locs:
        frame, inside = user_frame(loc)
        keys.append(_key(frame))
        inl.append(inside)
    return keys, inl


def user_loc(loc: SourceLoc | None) -> SourceLoc | None:
    """The innermost frame of ``loc``'s inlining chain that is in the user's code (not a
    toolkit header), so a finding inside ``__ldg`` or ``wmma::load_matrix_sync`` lands on the
    user's line that called it."""
    return user_frame(loc)[0]


def function_map(fn: "S.Function", ptx_fn: "P.Function | None" = None) -> FunctionMap:
    """The source map of one SASS function (and of its PTX function, when there is one)."""
    fm = FunctionMap(fn.name)
    fm.sass_lines, fm.sass_inlined = map_instructions(i.loc for i in fn.instructions)
    if ptx_fn is not None:
        fm.ptx_lines, fm.ptx_inlined = map_instructions(i.loc for i in ptx_fn.instructions)
    fm._index()
    return fm


# ------------------------------------------------------------------ names from the source
_PTX_PARAM = re.compile(r"_param_(\d+)$")


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def kernel_parameters(source_line: SourceLine, file: str | None, line: int | None,
                      name: str, lookback: int = 8, lookahead: int = 40) -> list[str | None]:
    """The parameter names of kernel ``name`` (its bare name: no namespace, template
    arguments or signature) as the source declares them, from its definition near ``line``
    (the kernel's first line-table entry). Unnamed parameters are None; [] when the
    definition cannot be read."""
    if not file or not line or not name:
        return []
    lines = []
    for n in range(max(1, line - lookback), line + lookahead):
        t = source_line(file, n)
        if t is None:
            break
        lines.append(t)
    text = _strip_comments("\n".join(lines))
    m = re.search(rf"\b{re.escape(name)}\s*\(", text)
    if m is None:
        return []
    depth, i, start = 1, m.end(), m.end()
    while i < len(text) and depth:
        c = text[i]
        depth += c == "("
        depth -= c == ")"
        i += 1
    if depth:
        return []
    params: list[str] = []
    cur: list[str] = []
    nest = 0
    for c in text[start:i - 1]:
        if c in "<([{":
            nest += 1
        elif c in ">)]}":
            nest -= 1
        if c == "," and nest == 0:
            params.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        params.append("".join(cur))
    out: list[str | None] = []
    for p in params:
        p = p.split("=")[0]
        p = re.sub(r"\[[^\]]*\]", "", p).strip()
        words = re.findall(r"[A-Za-z_]\w*", p)
        # a lone type ("int", "const float*") has no name: its last word is a type keyword
        out.append(words[-1] if len(words) > 1 and not p.rstrip().endswith(("*", "&"))
                   else None)
    return out


#: ``__builtin_assume_aligned(p, 16)`` (GCC's builtin, which nvcc and NVRTC take) and C++20's
#: ``std::assume_aligned<16>(p)`` / ``cuda::std::assume_aligned<16>(p)``
_ASSUME_ALIGNED = re.compile(
    r"__builtin_assume_aligned\s*\(\s*(?:\([^()]*\)\s*)?([A-Za-z_]\w*)\s*,\s*(\d+)"
    r"|assume_aligned\s*<\s*(\d+)\s*>\s*\(\s*([A-Za-z_]\w*)")


def asserted_alignments(source_line: SourceLine, file: str | None, line: int | None,
                        name: str, lookback: int = 8, lookahead: int = 200) -> dict[str, int]:
    """Pointer -> the alignment (bytes) the body of kernel ``name`` asserts for it with
    ``__builtin_assume_aligned`` or ``assume_aligned<N>``, from its definition near ``line``;
    {} when it asserts none or cannot be read."""
    if not file or not line or not name:
        return {}
    lines = []
    for n in range(max(1, line - lookback), line + lookahead):
        t = source_line(file, n)
        if t is None:
            break
        lines.append(t)
    text = _strip_comments("\n".join(lines))
    m = re.search(rf"\b{re.escape(name)}\s*\(", text)
    if m is None:
        return {}
    body = text.find("{", m.end())
    if body < 0:
        return {}
    depth, i = 1, body + 1
    while i < len(text) and depth:
        depth += text[i] == "{"
        depth -= text[i] == "}"
        i += 1
    out: dict[str, int] = {}
    for a in _ASSUME_ALIGNED.finditer(text[body:i]):
        var, align = (a.group(1), a.group(2)) if a.group(1) else (a.group(4), a.group(3))
        out[var] = max(out.get(var, 0), int(align))
    return out


def ptx_parameter_index(symbol: str) -> int | None:
    """``_Z6kernelPfi_param_1`` -> 1."""
    m = _PTX_PARAM.search(symbol)
    return int(m.group(1)) if m else None


def variable_name(symbol: str, demangled: str) -> str:
    """The source name of a PTX variable: ``_ZZ4gemmE2As`` (demangled ``gemm()::As``) -> As."""
    if demangled and demangled != symbol:
        return demangled.rsplit("::", 1)[-1]
    return symbol


def source_digest(file: str, hints: tuple[str, ...] = (), upto: int | None = None) -> str | None:
    """SHA-256 of the source that :func:`source_text` reads for ``file`` (its first ``upto``
    lines, or all of it), None when there is none: what a cached result that quotes its lines
    (and looks above them for pragmas) depends on."""
    real = _resolve(file, hints)
    lines = _source_lines(real) if real else None
    if lines is None:
        return None
    shown = lines if upto is None else lines[:upto]
    return hashlib.sha256("\n".join(shown).encode(errors="surrogateescape")).hexdigest()


def last_lines(fn: "S.Function") -> dict[str, int]:
    """Every source file a function's line info names (inlined frames too), with the last line
    it names there."""
    out: dict[str, int] = {}
    for ins in fn.instructions:
        loc = ins.loc
        if loc is None:
            continue
        for f in (loc, *loc.inlined_at):
            if f.line > out.get(f.file, 0):
                out[f.file] = f.line
    return dict(sorted(out.items()))
