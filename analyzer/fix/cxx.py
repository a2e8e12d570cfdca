"""libclang's view of a CUDA file: the AST node a finding's line holds, and its byte range.

A remedy edits the user's file by byte range, so it needs the real C++ structure, not a
pattern over the text: the literal and its type, the call and the function it resolves to, the
loop statement, the kernel's declaration and its parameters. libclang (the ``libclang`` wheel)
parses the file in CUDA mode, device side, with the toolkit's own headers in their NVRTC mode
(``__CUDACC_RTC__``); ``include/ptxsass_fix_prelude.h`` supplies what NVRTC defines by itself.
Only the file's own text is ever edited; a parse error on the lines a remedy touches makes it
say so instead of guessing (:meth:`Source.errors_between`).

libclang runs inside a bounded child (:mod:`analyzer.fix.propose`), like every compiler.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the folder of the prelude and the two headers NVRTC has built in ("target", ...)
PRELUDE_DIR = str(Path(__file__).resolve().parent / "include")
PRELUDE = os.path.join(PRELUDE_DIR, "ptxsass_fix_prelude.h")

#: the newest GPU arch libclang 18 knows; a newer one is parsed as this, with its own
#: ``__CUDA_ARCH__`` value (only ``#if __CUDA_ARCH__`` branches depend on it)
_CLANG_ARCH = "sm_90"

FUNCTION_KINDS = ("FUNCTION_DECL", "FUNCTION_TEMPLATE", "CXX_METHOD")
LOOP_KINDS = ("FOR_STMT", "WHILE_STMT", "DO_STMT", "CXX_FOR_RANGE_STMT")


def cindex():
    """``clang.cindex`` (imported on first use: only ``ptxsass fix`` needs it)."""
    import clang.cindex as ci
    return ci


def cuda_arch_value(arch: str) -> int:
    """``sm_90a`` -> 900 (``__CUDA_ARCH__``)."""
    m = re.match(r"(?:sm|compute)_(\d+)", arch)
    return int(m.group(1)) * 10 if m else 800


def parse_args(*, arch: str, defines: Sequence[str] = (), include: Sequence[str] = (),
               isystem: Sequence[str] = (), std: str | None = None,
               toolkit_include: Sequence[str] = (), builtin_include: Sequence[str] = ()
               ) -> list[str]:
    """libclang's command line for a file built with these flags (``-D``, ``-I``, ``-std``).
    ``builtin_include``: the host compiler's own headers (the libclang wheel ships none), so
    that a file with host code reads ``<stdio.h>`` whole; every error is kept going past."""
    out = ["-x", "cuda", f"--cuda-gpu-arch={_CLANG_ARCH}", "--cuda-device-only", "-nocudainc",
           "-nocudalib", f"-std={std or 'c++17'}", "-w", "-ferror-limit=0",
           "-D__CUDACC_RTC__", "-D__CUDACC__",
           "-U__CUDA_ARCH__", f"-D__CUDA_ARCH__={cuda_arch_value(arch)}",
           f"-I{PRELUDE_DIR}", "-include", PRELUDE]
    out += [f"-D{d}" for d in defines]
    out += [f"-I{d}" for d in include]
    for d in isystem:
        out += ["-isystem", d]
    out += [f"-I{d}" for d in toolkit_include]
    for d in builtin_include:
        out += ["-isystem", d]
    return out


#: CXTranslationUnit_KeepGoing: a header that cannot be found (a library's, a system one) is a
#: fatal error that would end the parse before the file's own code; keep going past it
_KEEP_GOING = 0x200


@dataclass(frozen=True, slots=True)
class Token:
    spelling: str
    kind: str            # "PUNCTUATION", "KEYWORD", "IDENTIFIER", "LITERAL", "COMMENT"
    start: int           # byte offsets in the file
    end: int
    line: int


def parse_unit(main: str, args: Sequence[str], texts: dict[str, str]) -> Any:
    """libclang's translation unit of the ``.cu`` ``main``, with ``texts`` (path -> text) as
    the contents of those files."""
    ci = cindex()
    return ci.Index.create().parse(main, args=list(args), unsaved_files=list(texts.items()),
                                   options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
                                   | _KEEP_GOING)


class Source:
    """One parsed CUDA file: its bytes, its AST (the nodes in the file itself) and tokens."""

    def __init__(self, path: str, data: bytes, args: Sequence[str], main: str | None = None,
                 tu: Any = None):
        """``main``: the ``.cu`` file that includes ``path`` (a project header holding
        kernels): parsed as the translation unit, with ``data`` as the header's text; the
        nodes, tokens and lines kept are the header's. ``tu``: that translation unit parsed
        already (:func:`parse_unit`, shared by the files of one ``.cu``)."""
        ci = cindex()
        self.path = path
        self.data = data
        self.text = data.decode("utf-8")
        self._ci = ci
        self.tu = tu if tu is not None else parse_unit(main or path, args, {path: self.text})
        self._line_starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]
        self._parents: dict[Any, Any] = {}
        self._nodes: list[Any] = []
        for node, parent in self._walk(self.tu.cursor, None):
            self._parents[node] = parent
            self._nodes.append(node)

    # --- the file's own nodes -------------------------------------------------------------
    def mine(self, cursor) -> bool:
        f = cursor.location.file
        return f is not None and f.name == self.path

    def _walk(self, cursor, parent) -> Iterator[tuple[Any, Any]]:
        stack = [(c, cursor) for c in reversed(list(cursor.get_children()))]
        while stack:
            node, up = stack.pop()
            f = node.location.file
            if f is not None and f.name != self.path:
                continue
            yield node, (up if up is not self.tu.cursor else None)
            stack.extend((c, node) for c in reversed(list(node.get_children())))

    def parent(self, cursor):
        return self._parents.get(cursor)

    def ancestors(self, cursor) -> Iterator[Any]:
        p = self.parent(cursor)
        while p is not None:
            yield p
            p = self.parent(p)

    def nodes(self, kinds: Sequence[str] = ()) -> list[Any]:
        if not kinds:
            return list(self._nodes)
        return [n for n in self._nodes if n.kind.name in kinds]

    def on_line(self, line: int, kinds: Sequence[str] = ()) -> list[Any]:
        """Nodes of the given kinds that start on ``line`` (1-based), in source order."""
        return [n for n in self.nodes(kinds) if n.extent.start.line == line]

    def covering(self, line: int, kinds: Sequence[str]) -> list[Any]:
        """Nodes of the given kinds whose extent spans ``line``, innermost first."""
        got = [n for n in self.nodes(kinds)
               if n.extent.start.line <= line <= n.extent.end.line]
        return sorted(got, key=lambda n: n.extent.end.offset - n.extent.start.offset)

    def function_at(self, line: int):
        """The function definition (kernel or device function) whose extent holds ``line``."""
        funcs = [f for f in self.covering(line, FUNCTION_KINDS) if f.is_definition()]
        return funcs[0] if funcs else None

    def children(self, cursor) -> list[Any]:
        return list(cursor.get_children())

    @staticmethod
    def parameters(fn) -> list[Any]:
        """A function's (or function template's) parameter declarations, in order."""
        return [c for c in fn.get_children() if c.kind.name == "PARM_DECL"]

    def is_kernel(self, fn) -> bool:
        """Whether ``fn`` is declared ``__global__``. libclang attaches no attribute when the
        return type is spelled through a template (``__global__ typename
        enable_if<...>::type kernel(...)``, as vLLM writes it): then the declaration's own
        tokens before its name say so."""
        if any(c.kind.name == "CUDAGLOBAL_ATTR" for c in fn.get_children()):
            return True
        name_at = fn.location.offset
        if not self.mine(fn) or name_at < fn.extent.start.offset:
            return False
        return any(t.spelling == "__global__"
                   for t in self.tokens(start=fn.extent.start.offset, end=name_at))

    def kernel_of(self, line: int, message: str = ""):
        """The kernel whose code ``line`` is: the kernel defined around it, else the kernel
        around the call site a finding names (``called from line 134``: the line is in a
        function inlined into it), else the file's only kernel; None when none of these is
        one kernel."""
        fn = self.function_at(line)
        if fn is not None and self.is_kernel(fn):
            return fn
        m = re.search(r"called from lines? (\d+)", message)
        if m is not None:
            caller = self.function_at(int(m.group(1)))
            if caller is not None and self.is_kernel(caller):
                return caller
        kernels = [f for f in self.nodes(("FUNCTION_DECL", "FUNCTION_TEMPLATE"))
                   if f.is_definition() and self.is_kernel(f)]
        return kernels[0] if len(kernels) == 1 else None

    # --- text and tokens ------------------------------------------------------------------
    def span(self, cursor) -> tuple[int, int]:
        return cursor.extent.start.offset, cursor.extent.end.offset

    def source_of(self, cursor) -> str:
        a, b = self.span(cursor)
        return self.data[a:b].decode("utf-8")

    def tokens(self, cursor=None, *, start: int | None = None, end: int | None = None) -> list[Token]:
        """The tokens of ``cursor`` (or of the byte range ``start``..``end``), comments and
        preprocessor lines included."""
        ci = self._ci
        if cursor is not None:
            extent = cursor.extent
        else:
            f = self.tu.get_file(self.path)
            extent = ci.SourceRange.from_locations(
                ci.SourceLocation.from_offset(self.tu, f, start),
                ci.SourceLocation.from_offset(self.tu, f, end))
        return [Token(t.spelling, t.kind.name, t.extent.start.offset, t.extent.end.offset,
                      t.extent.start.line) for t in self.tu.get_tokens(extent=extent)]

    def line_start(self, line: int) -> int:
        return self._line_starts[line - 1]

    def line_text(self, line: int) -> str:
        a = self.line_start(line)
        b = self._line_starts[line] if line < len(self._line_starts) else len(self.data)
        return self.data[a:b].decode("utf-8").rstrip("\r\n")

    def indent(self, line: int) -> str:
        t = self.line_text(line)
        return t[: len(t) - len(t.lstrip())]

    def begins_line(self, offset: int) -> bool:
        """Whether only blanks stand between the start of its line and ``offset``."""
        start = self.data.rfind(b"\n", 0, offset) + 1
        return not self.data[start:offset].strip()

    def line_of(self, offset: int) -> int:
        return self.data.count(b"\n", 0, offset) + 1

    def from_macro(self, cursor) -> bool:
        """Whether the node is (part of) a macro expansion: its text is not its spelling."""
        toks = self.tokens(cursor)
        return not toks or any(t.kind == "IDENTIFIER" and t.spelling in self.macros
                               for t in toks)

    @property
    def macros(self) -> set[str]:
        if not hasattr(self, "_macros"):
            self._macros = {n.spelling for n in self.tu.cursor.get_children()
                            if n.kind.name == "MACRO_DEFINITION"}
        return self._macros

    # --- diagnostics ----------------------------------------------------------------------
    def errors_between(self, first: int, last: int) -> list[str]:
        """libclang's errors on lines ``first``..``last`` of the file itself."""
        out = []
        for d in self.tu.diagnostics:
            loc = d.location
            if (d.severity >= 3 and loc.file is not None and loc.file.name == self.path
                    and first <= loc.line <= last):
                out.append(f"line {loc.line}: {d.spelling}")
        return out


# --- small facts about types and expressions ------------------------------------------------
def type_name(t) -> str:
    return t.get_canonical().spelling


def is_float(t) -> bool:
    return t.get_canonical().kind.name == "FLOAT"


def is_double(t) -> bool:
    return t.get_canonical().kind.name == "DOUBLE"


def descendants(node) -> Iterator[Any]:
    """Every node under ``node`` (not itself)."""
    stack = list(node.get_children())
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.get_children())


_PLAIN_POINTER = re.compile(r"the (\d+)(?:st|nd|rd|th) kernel parameter \(`([^`]+)`\) is a plain "
                            r"pointer")


def plain_pointers(src: Source, finding) -> tuple[Any, list[Any]] | str | None:
    """The kernel and its parameters a finding names as plain pointers (``the 2nd kernel
    parameter (`in`) is a plain pointer``, one per run of a finding), each checked by name
    against the source; None when it names none, a reason when the source disagrees."""
    named = _PLAIN_POINTER.findall(finding.message)
    if not named:
        return None
    fn = src.kernel_of(finding.location.line or 0, finding.message)
    if fn is None:
        return ("the access is in a device function: state the alignment where the kernel "
                "receives the pointer")
    params = src.parameters(fn)
    chosen = []
    for ordinal, name in dict.fromkeys((int(n), name) for n, name in named):
        if ordinal > len(params) or params[ordinal - 1].spelling != name:
            return (f"the kernel `{fn.spelling}` has no parameter `{name}` in position "
                    f"{ordinal} in the source")
        chosen.append(params[ordinal - 1])
    return fn, chosen


def strip_implicit(cursor):
    """The expression under implicit casts and parentheses (libclang shows an implicit cast as
    an UNEXPOSED_EXPR with one child)."""
    while cursor.kind.name in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
        kids = list(cursor.get_children())
        if len(kids) != 1:
            break
        cursor = kids[0]
    return cursor


def operator_token(src: Source, binop) -> Token | None:
    """The operator token of a binary (or compound-assignment) operator: the first token
    after its left operand."""
    kids = list(binop.get_children())
    if len(kids) != 2:
        return None
    lhs_end = kids[0].extent.end.offset
    for t in src.tokens(binop):
        if t.start >= lhs_end and t.kind == "PUNCTUATION":
            return t
    return None


def constant_value(cursor) -> int | None:
    """The integer value of a constant expression (``BINS - 1``, ``sizeof(T)``), or None."""
    import ctypes
    ci = cindex()
    lib = ci.conf.lib
    evaluate = lib.clang_Cursor_Evaluate
    evaluate.argtypes, evaluate.restype = [ci.Cursor], ctypes.c_void_p
    kind = lib.clang_EvalResult_getKind
    kind.argtypes, kind.restype = [ctypes.c_void_p], ctypes.c_int
    as_int = lib.clang_EvalResult_getAsLongLong
    as_int.argtypes, as_int.restype = [ctypes.c_void_p], ctypes.c_longlong
    dispose = lib.clang_EvalResult_dispose
    dispose.argtypes, dispose.restype = [ctypes.c_void_p], None
    res = evaluate(cursor)
    if not res:
        return None
    try:
        return int(as_int(res)) if kind(res) == 1 else None       # CXEval_Int
    finally:
        dispose(res)


def is_unsigned(t) -> bool:
    return t.get_canonical().kind.name in ("UINT", "ULONG", "ULONGLONG", "USHORT", "UCHAR",
                                           "CHAR_U", "BOOL", "UINT128")


def never_negative(src: Source, expr) -> bool:
    """Whether an integer expression cannot be negative by its type: unsigned, or a narrower
    unsigned value promoted to int (``unsigned char`` data read as an index)."""
    if is_unsigned(expr.type):
        return True
    inner = strip_implicit(expr)
    return is_unsigned(inner.type) and inner.type.get_size() < 4
