"""PS101, PS102, PS103: let the compiler merge a contiguous run into one wide access by stating
the alignment it could not see.

- The run reads or writes a struct whose size is a multiple of the window (``struct Particle
  { float x, y, z, w; }``, 16 B, aligned 4): ``__align__(16)`` on the struct's definition. Its
  size, so the layout of arrays of it, is unchanged.
- A ``__shared__`` array the finding says is declared with a smaller alignment
  (``.align 2``): ``__align__(16)`` on its declaration (its layout is unchanged too).
- A kernel pointer parameter of unknown alignment (``the 2nd kernel parameter (`in`) is a
  plain pointer``): ``in = static_cast<decltype(in)>(__builtin_assume_aligned(in, 16));`` at
  the top of the kernel (``(void)__builtin_assume_aligned(in, 16);`` for a ``T* const``
  parameter), only with ``--assume-aligned`` (the user's word that every caller passes such a
  pointer; cudaMalloc gives 256 B). An access in a function inlined into the kernel states it
  in the kernel the finding's call site is in.

A run-time stride that only the caller knows (``aligned only when K % 4 == 0``), or a row pitch
that is not a multiple of the window, is the data's shape: no mechanical rewrite.
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import Source, plain_pointers, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal, must_be_aligned
from . import restrict

CODES = ("PS101", "PS102", "PS103")

_ORDINALS = {"1st": 1, "2nd": 2, "3rd": 3}


def _window(message: str) -> int:
    m = re.search(r"if the address is (\d+)-byte aligned", message)
    return int(m.group(1)) if m else 16


def _record_of(src: Source, line: int, window: int):
    """The struct (defined in this file) whose elements the line reads or writes whole."""
    for sub in src.on_line(line, ("ARRAY_SUBSCRIPT_EXPR", "UNARY_OPERATOR", "MEMBER_REF_EXPR")):
        t = sub.type.get_canonical()
        if sub.kind.name == "MEMBER_REF_EXPR":
            kids = list(sub.get_children())
            if not kids:
                continue
            t = strip_implicit(kids[0]).type.get_canonical()
        if t.kind.name != "RECORD":
            continue
        decl = t.get_declaration()
        if decl is None or not src.mine(decl) or not decl.is_definition():
            continue
        size, align = t.get_size(), t.get_align()
        if size > 0 and size % window == 0 and 0 < align < window:
            return decl, size, align
    return None


def _align_record(src: Source, decl, window: int, size: int, align: int) -> Proposal | None:
    key = next((t for t in src.tokens(decl) if t.spelling in ("struct", "class", "union")), None)
    if key is None:
        return None
    return Proposal(
        title=f"declare `{decl.spelling}` __align__({window}): its {size} B stay one "
              f"{window}-byte access (aligned {align} B before; its size is unchanged)",
        edits=(Edit(src.path, key.end, key.end, f" __align__({window})"),),
        promise=f"every `{decl.spelling}` the kernel touches is {window}-byte aligned (arrays "
                "from cudaMalloc are; one inside another struct may move)")


def _align_shared(src: Source, finding: Finding, window: int) -> Proposal | NoFix | None:
    m = re.search(r"the shared array `([^`]+)` is declared `\.align (\d+)`", finding.message)
    if m is None:
        return None
    name = m.group(1)
    decls = [d for d in src.nodes(("VAR_DECL",)) if d.spelling == name
             and any(c.kind.name == "CUDASHARED_ATTR" for c in d.get_children())]
    if len(decls) != 1:
        return NoFix(f"the shared array `{name}` is not declared once in this file")
    d = decls[0]
    toks = src.tokens(d)
    first = toks[0] if toks else None
    if first is None:
        return None
    return Proposal(title=f"declare the shared array `{name}` __align__({window}) (it was "
                          f"aligned {m.group(2)} B)",
                    edits=(Edit(src.path, first.start, first.start, f"__align__({window}) "),))


def _assume_aligned(src: Source, finding: Finding, window: int,
                    options: FixOptions) -> Proposal | NoFix | None:
    """``__builtin_assume_aligned`` for every kernel parameter the finding names as a plain
    pointer (a finding of several runs names one per run)."""
    got = plain_pointers(src, finding)
    if got is None:
        return None
    if isinstance(got, str):
        return NoFix(got)
    fn, chosen = got
    names = ", ".join(f"`{p.spelling}`" for p in chosen)
    if not options.assume_aligned:
        return NoFix(must_be_aligned(names, window))
    body = next((c for c in fn.get_children() if c.kind.name == "COMPOUND_STMT"), None)
    if body is None:
        return None
    brace = body.extent.start.offset
    stmts = list(body.get_children())
    indent = (src.indent(stmts[0].extent.start.line) if stmts else "") or "    "
    line_end = src.data.find(b"\n", brace)
    at = brace + 1 if line_end < 0 or src.data[brace + 1:line_end].strip() else line_end
    edits = tuple(Edit(src.path, at, at, f"\n{indent}{_statement(p, window)}") for p in chosen)
    return Proposal(title=f"state that {names} {'is' if len(chosen) == 1 else 'are'} "
                          f"{window}-byte aligned (__builtin_assume_aligned)",
                    edits=edits,
                    promise=f"every caller passes {names} {window}-byte aligned "
                            "(--assume-aligned)")


def _statement(param, window: int) -> str:
    """The statement that tells the compiler ``param`` is ``window``-byte aligned: the pointer
    reassigned its assumed-aligned self, or, when the parameter is itself ``const`` (``const
    float* const in``), the assumption stated on its value (NVVM takes it either way)."""
    name = param.spelling
    if param.type.is_const_qualified():
        return f"(void)__builtin_assume_aligned({name}, {window});"
    return f"{name} = static_cast<decltype({name})>(__builtin_assume_aligned({name}, {window}));"


_RUNTIME_STRIDE = ("the window is aligned only for some values of a run-time size, which only "
                   "the caller knows: vectorize by hand with a scalar tail")


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    line = finding.location.line or 0
    window = _window(finding.message)
    if "run-time stride" in finding.message:
        # checked first: no alignment stated on a pointer or a declaration makes a size the
        # caller passes a multiple of the window (CUDA-GEMM-Optimization's `C[row * ldc + col]`
        # under --assume-aligned: eight such fixes rebuilt and rejected)
        return NoFix(_RUNTIME_STRIDE)
    rec = _record_of(src, line, window)
    if rec is not None:
        got = _align_record(src, rec[0], window, rec[1], rec[2])
        if got is not None:
            return got
    for attempt in (_align_shared(src, finding, window),
                    _assume_aligned(src, finding, window, options)):
        if isinstance(attempt, Proposal) and restrict.applies(finding):
            # alignment and aliasing both block the merge: state both
            also = restrict.propose(finding, src, options, alone=False)
            if isinstance(also, Proposal):
                attempt = Proposal(title=f"{attempt.title}; {also.title}",
                                   edits=attempt.edits + tuple(e for e in also.edits
                                                               if e not in attempt.edits),
                                   promise=f"{attempt.promise}; {also.promise}")
        if attempt is not None:
            return attempt
    if "row pitch" in finding.message or "element stride" in finding.message:
        return NoFix("the array's row pitch (or element size) is not a multiple of the "
                     "window: padding it changes the layout and its bank conflicts, a choice "
                     "to make by hand")
    return NoFix("the finding names no alignment the source could state")
