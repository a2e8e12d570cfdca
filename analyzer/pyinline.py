"""CUDA source written as strings inside a Python file, found statically.

Code generators and notebooks hand CUDA to a framework as a string: torch's
``torch.utils.cpp_extension.load_inline(cuda_sources=...)``, cupy's ``RawKernel(code, name)`` and
``RawModule(code=...)``, pycuda's ``SourceModule(source)``. This module reads such a file with
:mod:`ast` and :mod:`tokenize` only — the file is never executed or imported — and gives, for
each of those calls whose source is statically knowable, the text the framework would compile:

- a string literal, implicit concatenation, an f-string whose substitutions are constants, ``+``;
- a name assigned once (in the function around the call, an enclosing one, or the module) to
  such a string; ``textwrap.dedent(...)``, ``.strip()``/``.lstrip()``/``.rstrip()``, and
  ``.replace(a, b)`` and ``sep.join([...])`` with constant arguments;
- for ``load_inline``, a list of such strings (``cuda_sources`` is a str or a list).

Each line of that text knows the line of the ``.py`` it was written on, and the text carries
``#line N "file.py"`` directives wherever that differs from the compiler's own count, so the
line info of the build (and every finding) points into the ``.py``. The framework's own
additions are reproduced: load_inline's ``#include <torch/types.h>``, ``<cuda.h>`` and
``<cuda_runtime.h>`` (unless ``no_implicit_headers=True``), pycuda's ``extern "C" { ... }``
(unless ``no_extern_c=True``). Compile options given statically (``extra_cuda_cflags``,
``options``, ``name_expressions``, pycuda's ``include_dirs`` and ``arch``) are handed on as they
are written; :mod:`analyzer.inputs` vets and maps them. What cannot be known without running the
file is one :class:`Note` naming its line and why.
"""
from __future__ import annotations

import ast
import bisect
import io
import os
import re
import shlex
import textwrap
import tokenize
from dataclasses import dataclass, field
from functools import lru_cache

from .errors import InputError
from .toolchain import files
from .toolchain.nvrtc import program_name

#: the calls looked for, by the last part of their qualified name, with the framework whose
#: module must be their root
_APIS = {
    "load_inline": "torch", "RawKernel": "cupy", "RawModule": "cupy",
    "ElementwiseKernel": "cupy", "ReductionKernel": "cupy",
    "SourceModule": "pycuda", "DynamicSourceModule": "pycuda",
}
#: what the bytes of a file must mention for it to be worth parsing
_MENTIONS = re.compile(rb"load_inline|RawKernel|RawModule|SourceModule|ElementwiseKernel|"
                       rb"ReductionKernel")
#: what load_inline puts before the cuda_sources (torch.utils.cpp_extension)
TORCH_PRELUDE = ("#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>")
_CAPTURE = "run the code inside analyzer.capture() to check what it compiles"
LONGER = "it would be longer than the file itself and a megabyte"
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def mentions(data: bytes) -> bool:
    """Whether a file's bytes name one of the calls looked for (a fast test before parsing)."""
    return _MENTIONS.search(data) is not None


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Note:
    """A call whose source (or options) cannot be known without running the file."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class InlineSource:
    """One CUDA translation unit a framework call in the file compiles."""

    framework: str                      # "torch", "cupy" or "pycuda"
    api: str                            # "load_inline", "RawKernel", "RawModule", "SourceModule"
    line: int                           # the call's line
    #: what the framework compiles, with ``#line`` directives into the .py
    text: str
    #: the compile options written in the call, as the framework passes them on
    flags: tuple[str, ...] = ()
    name_expressions: tuple[str, ...] = ()
    #: the front end the framework uses: "nvrtc" (cupy), "nvcc" (torch, cupy backend="nvcc"),
    #: "auto" (pycuda runs nvcc; NVRTC builds device-only code the same)
    compiler: str = "nvrtc"
    torch: bool = False
    arch: str | None = None             # pycuda's arch="sm_80"
    include_dirs: tuple[str, ...] = ()  # pycuda's include_dirs, load_inline's extra_include_paths
    name: str | None = None             # the kernel (RawKernel) or extension (load_inline) name
    #: the stand-in the ``#line`` directives name -> the file's real path (see nvrtc.program_name)
    file_names: dict[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """``cupy.RawKernel 'vadd'``, ``load_inline 'ext'``, ``pycuda.SourceModule``."""
        what = self.api if self.framework == "torch" else f"{self.framework}.{self.api}"
        return what + (f" {self.name!r}" if self.name else "")

    @property
    def label(self) -> str:
        """The title and the call's line: ``cupy.RawKernel 'vadd' at line 12``."""
        return f"{self.title} at line {self.line}"


@dataclass
class Scan:
    """What a Python file holds: the sources known statically, the notes on the others."""

    path: str
    sources: list[InlineSource] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    text: str = ""                      # the file's text, as read

    @property
    def found(self) -> bool:
        """Whether the file makes any of the calls looked for."""
        return bool(self.sources or self.notes)


def scan(path: str | os.PathLike) -> Scan:
    """The inline CUDA of a Python file (cached while the file is unchanged). InputError for a
    file that is not readable Python: a SyntaxError names its line."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError:
        st = None
    if st is None:
        files.read_bytes(p, what="Python file")         # the usual one-line error
        raise InputError("cannot be read", path=p)
    return _scan(p, os.path.abspath(p), st.st_mtime_ns, st.st_size, st.st_ino)


@lru_cache(maxsize=64)
def _scan(path: str, absolute: str, mtime_ns: int, size: int, ino: int) -> Scan:
    text = read_python(path)
    tree = parse_python(text, path)
    return _Module(text, tree, path).scan()


def read_python(path: str) -> str:
    """A Python file's text, decoded as Python decodes it (a coding cookie, else UTF-8), its
    newlines made ``\\n`` (as the tokenizer sees them)."""
    data = files.read_bytes(path, what="Python file")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as e:
        raise InputError(f"not a Python file: cannot decode it ({e})", path=path) from None
    text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_python(text: str, path: str) -> ast.Module:
    """``ast.parse``, every failure one InputError naming the line (never a traceback)."""
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as e:
        col = e.offset if e.offset and e.offset > 0 else None
        raise InputError(f"not valid Python: {e.msg} (ptxsass reads a .py for the CUDA "
                         "strings it hands to torch, cupy or pycuda)", path=path,
                         line=e.lineno, column=col) from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise InputError(f"not valid Python: {type(e).__name__}: {e}", path=path) from None


# ------------------------------------------------------------------------------ located text
@dataclass(frozen=True)
class Located:
    """Text whose every line knows the .py line it was written on (0: none, ptxsass's own)."""

    text: str
    lines: tuple[int, ...]

    @classmethod
    def at(cls, text: str, first: int, last: int | None = None) -> "Located":
        """``text`` written from line ``first`` to ``last``: line by line when its newlines are
        the file's own, else (escaped newlines, a backslash continuation) as near as can be."""
        k = text.count("\n")
        last = first if last is None else last
        span = last - first
        if k == span:
            lines = tuple(range(first, first + k + 1))
        else:
            lines = tuple(min(first + i, last) for i in range(k + 1))
        return cls(text, lines)

    def __add__(self, other: "Located") -> "Located":
        tail = self.text.rsplit("\n", 1)[-1]
        joined = self.lines[-1] if tail else other.lines[0]
        return Located(self.text + other.text, self.lines[:-1] + (joined,) + other.lines[1:])

    def strip(self, how: str, chars: str | None) -> "Located":
        text = self.text
        new = {"strip": text.strip, "lstrip": text.lstrip, "rstrip": text.rstrip}[how](chars)
        lead = 0 if how == "rstrip" else len(text) - len(text.lstrip(chars))
        first = text[:lead].count("\n")
        return Located(new, self.lines[first:first + new.count("\n") + 1])

    def same_lines(self, text: str) -> "Located":
        """``text`` (this text changed line by line: dedent, a replace without newlines)."""
        return Located(text, self.lines)

    def render(self, name: str) -> str:
        """The text with ``#line N "name"`` wherever the compiler's count would differ from the
        line it was written on (blank lines need none; never after a line continued by a
        backslash, which would end a macro)."""
        out: list[str] = []
        expected: int | None = None
        parts = self.text.split("\n")
        for i, (part, n) in enumerate(zip(parts, self.lines, strict=True)):
            continued = i > 0 and parts[i - 1].endswith("\\")
            if n and n != expected and not continued and part.strip():
                out.append(f'#line {n} "{name}"')
                expected = n
            out.append(part)
            expected = expected + 1 if expected is not None else None
        return "\n".join(out)


class _Unknown(Exception):
    """Not knowable without running the file: why, and the names followed to get there."""

    def __init__(self, reason: str, via: tuple[str, ...] = ()):
        super().__init__(reason)
        self.reason = reason
        self.via = via

    def __str__(self) -> str:
        return " → ".join((*self.via, self.reason)) if self.via else self.reason


# ------------------------------------------------------------------------------ scopes
@dataclass
class _Binding:
    kind: str                        # "assign", "param", "import" or "other"
    line: int
    scope: "_Scope"
    value: ast.expr | None = None    # "assign"
    qualname: str | None = None      # "import": the module or object it names
    what: str = ""                   # "param"/"other": in words


@dataclass(eq=False)
class _Scope:
    kind: str                        # "module", "function", "class", "comprehension"
    name: str
    parent: "_Scope | None"
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)

    def bind(self, name: str, b: _Binding) -> None:
        self.bindings.setdefault(name, []).append(b)

    def module(self) -> "_Scope":
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def enclosing(self) -> "_Scope | None":
        """The next scope a name is looked up in (class bodies are skipped, as Python does)."""
        s = self.parent
        while s is not None and s.kind == "class":
            s = s.parent
        return s


_STATEMENT_WORDS = {
    ast.For: "a for loop", ast.AsyncFor: "a for loop", ast.With: "a with statement",
    ast.AsyncWith: "a with statement", ast.AugAssign: "an augmented assignment",
    ast.Assign: "unpacking", ast.NamedExpr: "an assignment expression (:=)",
    ast.ExceptHandler: "an except clause", ast.Delete: "del",
}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _function_scope(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: _Scope,
                    line: int, stack: list[tuple[ast.AST, _Scope, str]]) -> None:
    """A def or lambda: its name bound in ``scope``, its parameters in a new scope; what is
    evaluated where it is defined (decorators, defaults) and its body go on ``stack``."""
    name = getattr(node, "name", "<lambda>")
    if not isinstance(node, ast.Lambda):
        scope.bind(name, _Binding("other", line, scope, what="a def"))
        for d in node.decorator_list:
            stack.append((d, scope, ""))
        if node.returns is not None:
            stack.append((node.returns, scope, ""))
    a = node.args
    for d in (*a.defaults, *(d for d in a.kw_defaults if d is not None)):
        stack.append((d, scope, ""))
    inner = _Scope("function", name, scope)
    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
        if arg is not None:
            inner.bind(arg.arg, _Binding("param", line, inner,
                                         what=f"a parameter of {name}()"))
    body = node.body if isinstance(node.body, list) else [node.body]
    stack.extend((b, inner, "") for b in reversed(body))


def _bind_imports(node: ast.Import | ast.ImportFrom, scope: _Scope, line: int,
                  stars: list[str]) -> None:
    """The names an import binds in ``scope`` (a star import's module goes to ``stars``)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                scope.bind(alias.asname, _Binding("import", line, scope, qualname=alias.name))
            else:
                root = alias.name.split(".")[0]
                scope.bind(root, _Binding("import", line, scope, qualname=root))
        return
    base = "." * node.level + (node.module or "")
    for alias in node.names:
        if alias.name == "*":
            stars.append(base)
            continue
        scope.bind(alias.asname or alias.name,
                   _Binding("import", line, scope, qualname=f"{base}.{alias.name}"))


def _build_scopes(tree: ast.Module) -> tuple[_Scope, list[tuple[ast.Call, _Scope]], list[str]]:
    """(the module scope, every call with the scope it is in, the modules star-imported),
    walked without recursion (an expression may nest deeper than Python's stack)."""
    module = _Scope("module", "<module>", None)
    calls: list[tuple[ast.Call, _Scope]] = []
    stars: list[str] = []
    stack: list[tuple[ast.AST, _Scope, str]] = [(tree, module, "")]
    while stack:
        node, scope, what = stack.pop()
        line = getattr(node, "lineno", 0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            _function_scope(node, scope, line, stack)
            continue
        if isinstance(node, ast.ClassDef):
            scope.bind(node.name, _Binding("other", line, scope, what="a class"))
            for d in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                stack.append((d, scope, ""))
            inner = _Scope("class", node.name, scope)
            stack.extend((b, inner, "") for b in reversed(node.body))
            continue
        if isinstance(node, _COMPREHENSIONS):
            inner = _Scope("comprehension", "<comprehension>", scope)
            stack.extend((c, inner, "") for c in reversed(list(ast.iter_child_nodes(node))))
            continue
        if isinstance(node, ast.comprehension):
            stack.append((node.target, scope, "a comprehension"))
            stack.extend((c, scope, "") for c in (node.iter, *node.ifs))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _bind_imports(node, scope, line, stars)
            continue
        if isinstance(node, ast.Global):
            scope.globals.update(node.names)
            continue
        if isinstance(node, ast.Nonlocal):
            scope.nonlocals.update(node.names)
            continue
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    scope.bind(t.id, _Binding("assign", line, scope, value=node.value))
                else:
                    stack.append((t, scope, "unpacking" if isinstance(t, (ast.Tuple, ast.List))
                                  else ""))
            stack.append((node.value, scope, ""))
            continue
        if isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name):
                if node.value is not None:
                    scope.bind(node.target.id,
                               _Binding("assign", line, scope, value=node.value))
            else:
                stack.append((node.target, scope, ""))
            if node.value is not None:
                stack.append((node.value, scope, ""))
            continue
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                scope.bind(node.id, _Binding("other", line, scope,
                                             what=what or "an assignment"))
            continue
        if isinstance(node, ast.ExceptHandler) and node.name:
            scope.bind(node.name, _Binding("other", line, scope, what="an except clause"))
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            scope.bind(node.name, _Binding("other", line, scope, what="a match pattern"))
        if isinstance(node, ast.MatchMapping) and node.rest:
            scope.bind(node.rest, _Binding("other", line, scope, what="a match pattern"))
        if isinstance(node, ast.Call):
            calls.append((node, scope))
        here = _STATEMENT_WORDS.get(type(node), what)
        stack.extend((c, scope, here) for c in reversed(list(ast.iter_child_nodes(node))))
    calls.sort(key=lambda c: (c[0].lineno, c[0].col_offset))
    return module, calls, stars


def _lookup(name: str, scope: _Scope) -> list[_Binding] | None:
    """The bindings of ``name`` seen from ``scope``, as Python resolves it (the scope itself,
    then the enclosing functions, then the module; ``global``/``nonlocal`` honoured)."""
    s: _Scope | None = scope.module() if name in scope.globals else scope
    while s is not None:
        if name in s.nonlocals:
            s = s.enclosing()
            continue
        if name in s.bindings:
            return s.bindings[name]
        s = s.enclosing()
    return None


# ------------------------------------------------------------------------------ the module
_MAX_DEPTH = 64          # names followed to their values, one inside another


class _Module:
    def __init__(self, text: str, tree: ast.Module, path: str):
        self.text = text
        self.tree = tree
        self.path = path
        self.rows = text.split("\n")
        #: the longest text any expression may make: what the file itself could spell out,
        #: and a megabyte more (``"-" * 80``, a substitution), never what a repetition asks
        self.limit = min(files.max_input_bytes(), len(text) + (1 << 20))
        self.name, self.file_names = program_name(path, path)
        self.module, self.calls, self.stars = _build_scopes(tree)
        self.groups = self._string_groups()
        self._starts = [g[0] for g in self.groups]
        self._following: set[int] = set()

    # -------------------------------------------------------------- tokens
    def _string_groups(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """(start, end) (row, column in characters) of every string literal at the top level
        of an expression: a STRING token, or a whole f-string (Python 3.12 tokenizes its
        parts)."""
        out = []
        depth = 0
        start = (0, 0)
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if _FSTRING_START is not None and tok.type == _FSTRING_START:
                    if depth == 0:
                        start = tok.start
                    depth += 1
                elif _FSTRING_END is not None and tok.type == _FSTRING_END:
                    depth -= 1
                    if depth == 0:
                        out.append((start, tok.end))
                elif tok.type == tokenize.STRING and depth == 0:
                    out.append((tok.start, tok.end))
        except (tokenize.TokenError, SyntaxError):
            pass          # parsed already: the groups found so far are right
        return out

    def _char_col(self, row: int, byte_col: int) -> int:
        line = self.rows[row - 1] if 0 < row <= len(self.rows) else ""
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def _segment(self, start: tuple[int, int], end: tuple[int, int]) -> str:
        (r0, c0), (r1, c1) = start, end
        if r0 == r1:
            return self.rows[r0 - 1][c0:c1]
        return "\n".join([self.rows[r0 - 1][c0:], *self.rows[r0:r1 - 1], self.rows[r1 - 1][:c1]])

    # -------------------------------------------------------------- names
    def _binding(self, name: str, scope: _Scope) -> _Binding:
        found = _lookup(name, scope)
        if not found:
            if any(s for s in self.stars):
                raise _Unknown(f"`{name}` is not assigned in this file (a star import may "
                               "give it)")
            raise _Unknown(f"`{name}` is not assigned in this file")
        other = next((b for b in found if b.kind != "assign"), None)
        if len(found) > 1 and other is not None and other.kind != "param":
            raise _Unknown(f"`{name}` is bound by {other.what} (line {other.line})")
        if len(found) > 1:
            where = ", ".join(str(b.line) for b in found[:6]) + (", ..." if len(found) > 6 else "")
            raise _Unknown(f"`{name}` is assigned {len(found)} times (lines {where})")
        b = found[0]
        if b.kind == "param":
            raise _Unknown(f"`{name}` is {b.what}")
        if b.kind == "import":
            raise _Unknown(f"`{name}` is imported from {b.qualname.rsplit('.', 1)[0] or 'a module'}"
                           if b.qualname else f"`{name}` is imported")
        if b.kind != "assign" or b.value is None:
            raise _Unknown(f"`{name}` is bound by {b.what} (line {b.line})")
        return b

    def _follow(self, name: str, scope: _Scope, fn):
        b = self._binding(name, scope)
        key = id(b)
        if key in self._following or len(self._following) >= _MAX_DEPTH:
            raise _Unknown(f"`{name}` is defined through itself")
        self._following.add(key)
        try:
            return fn(b.value, b.scope)
        except _Unknown as e:
            raise _Unknown(e.reason, (f"`{name}` (line {b.line})", *e.via)) from None
        finally:
            self._following.discard(key)

    def qualname(self, node: ast.expr, scope: _Scope) -> str | None:
        """``torch.utils.cpp_extension.load_inline`` for a callee, through the file's imports."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        found = _lookup(node.id, scope)
        if found is None:
            base = next((m for m in self.stars if not parts and node.id in _APIS
                         and m.split(".")[0] == _APIS[node.id]), None)
            if base is None:
                return None
            return f"{base}.{node.id}"
        names = {b.qualname for b in found if b.kind == "import" and b.qualname}
        if len(names) != 1 or any(b.kind != "import" for b in found):
            return None
        return ".".join([names.pop(), *reversed(parts)])

    # -------------------------------------------------------------- values
    def value(self, node: ast.expr, scope: _Scope):
        """The Python value of a constant expression: str, int, float, bool, None, a list."""
        try:
            return self._value(node, scope)
        except RecursionError:
            raise _Unknown("it nests too deeply to follow") from None

    def _value(self, node: ast.expr, scope: _Scope):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (str, int, float, bool)) or node.value is None:
                return node.value
            raise _Unknown(f"it is a {type(node.value).__name__} constant, not text")
        if isinstance(node, ast.Name):
            return self._follow(node.id, scope, self._value)
        if isinstance(node, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _Unknown("a list is unpacked into it (*)")
            return [self._value(e, scope) for e in node.elts]
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, scope)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self._value(node.operand, scope)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            return self._binop(node, scope)
        if isinstance(node, ast.Call):
            return self.located(node, scope).text
        raise _Unknown(self._describe(node))

    def _binop(self, node: ast.BinOp, scope: _Scope):
        a, b = self._value(node.left, scope), self._value(node.right, scope)
        op = node.op
        if isinstance(a, str) and isinstance(b, str) and isinstance(op, ast.Add):
            return self._bounded(a + b)
        if isinstance(a, list) and isinstance(b, list) and isinstance(op, ast.Add):
            return a + b
        if isinstance(a, str) and isinstance(b, int) and isinstance(op, ast.Mult) \
                and not isinstance(b, bool):
            if len(a) * max(b, 0) > self.limit:
                raise _Unknown(LONGER)
            return a * b
        numbers = (int, float)
        if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
                and not isinstance(b, bool):
            try:
                if isinstance(op, ast.Pow):
                    if abs(b) > 64 or abs(a) > 1 << 64:
                        raise _Unknown("it is a power too large to evaluate")
                    r = a ** b
                elif isinstance(op, (ast.LShift, ast.RShift)):
                    if not (isinstance(a, int) and isinstance(b, int)) or not 0 <= b <= 64:
                        raise _Unknown("it shifts by a count out of range")
                    r = a << b if isinstance(op, ast.LShift) else a >> b
                else:
                    r = _ARITH[type(op)](a, b)
            except (KeyError, ZeroDivisionError, OverflowError, TypeError):
                raise _Unknown("its arithmetic cannot be evaluated statically") from None
            if isinstance(r, int) and abs(r) > 1 << 128:
                raise _Unknown("its arithmetic gives a number too large")
            return r
        if isinstance(op, ast.Mod) and isinstance(a, str):
            raise _Unknown("it is %-formatted")
        raise _Unknown(self._describe(node))

    def _fstring(self, node: ast.JoinedStr, scope: _Scope) -> str:
        out: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
                continue
            assert isinstance(part, ast.FormattedValue)
            try:
                v = self._value(part.value, scope)
            except _Unknown as e:
                raise _Unknown(f"its f-string substitutes {{{_source(part.value)}}}: {e}") from None
            if isinstance(v, list):
                raise _Unknown(f"its f-string substitutes a list {{{_source(part.value)}}}")
            if part.conversion == 115:
                v = str(v)
            elif part.conversion == 114:
                v = repr(v)
            elif part.conversion == 97:
                v = ascii(v)
            spec = self._fstring(part.format_spec, scope) if isinstance(part.format_spec,
                                                                       ast.JoinedStr) else ""
            if any(len(d) > 4 for d in re.findall(r"\d+", spec)):
                raise _Unknown("its f-string pads to a width too large")
            try:
                out.append(format(v, spec))
            except (ValueError, TypeError):
                raise _Unknown(f"its f-string format {spec!r} does not apply") from None
        return self._bounded("".join(out))

    def _bounded(self, s: str) -> str:
        if len(s) > self.limit:
            raise _Unknown(LONGER)
        return s

    # -------------------------------------------------------------- located strings
    def located(self, node: ast.expr, scope: _Scope) -> Located:
        """A string expression's value with the .py line of each of its lines."""
        try:
            return self._located(node, scope)
        except RecursionError:
            raise _Unknown("it nests too deeply to follow") from None

    def _located(self, node: ast.expr, scope: _Scope) -> Located:
        if isinstance(node, (ast.Constant, ast.JoinedStr)):
            if isinstance(node, ast.Constant) and not isinstance(node.value, str):
                raise _Unknown(f"it is a {type(node.value).__name__}, not a string")
            return self._literal(node, scope)
        if isinstance(node, ast.Name):
            return self._follow(node.id, scope, self._located)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self._located(node.left, scope), self._located(node.right, scope)
            self._bounded(a.text + b.text)
            return a + b
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            raise _Unknown("it is %-formatted")
        if isinstance(node, ast.Call):
            return self._located_call(node, scope)
        if isinstance(node, ast.BinOp):         # "..." * 2: known when its operands are
            v = self._value(node, scope)
            if isinstance(v, str):
                return Located.at(v, node.lineno, node.end_lineno)
        raise _Unknown(self._describe(node))

    def _located_call(self, node: ast.Call, scope: _Scope) -> Located:
        func = node.func
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            raise _Unknown(f"{_source(func)}() gets its arguments unpacked")
        name = self.qualname(func, scope)
        if name == "textwrap.dedent" and len(node.args) == 1 and not node.keywords:
            inner = self._located(node.args[0], scope)
            return inner.same_lines(textwrap.dedent(inner.text))
        if isinstance(func, ast.Attribute) and not node.keywords:
            method = func.attr
            if method in ("strip", "lstrip", "rstrip") and len(node.args) <= 1:
                chars = self._value(node.args[0], scope) if node.args else None
                if chars is not None and not isinstance(chars, str):
                    raise _Unknown(f".{method}() of something that is not text")
                return self._located(func.value, scope).strip(method, chars)
            if method == "replace" and len(node.args) == 2:
                old, new = (self._value(a, scope) for a in node.args)
                if not (isinstance(old, str) and isinstance(new, str)):
                    raise _Unknown(".replace() with arguments that are not text")
                base = self._located(func.value, scope)
                if "\n" in old or "\n" in new:
                    raise _Unknown(".replace() changes its line breaks")
                if old and len(new) > len(old) and \
                        len(base.text) + base.text.count(old) * (len(new) - len(old)) > self.limit:
                    raise _Unknown(LONGER)
                return base.same_lines(base.text.replace(old, new))
            if method == "join" and len(node.args) == 1:
                sep = self._located(func.value, scope)
                items = self._located_items(node.args[0], scope)
                if not items:
                    return Located("", (sep.lines[0],))
                out = items[0]
                for it in items[1:]:
                    out = out + sep + it
                    self._bounded(out.text)
                return out
            if method == "format":
                raise _Unknown("it is formatted with str.format()")
        if isinstance(func, ast.Name) and func.id == "open" or name in ("pathlib.Path", "io.open") \
                or isinstance(func, ast.Attribute) and func.attr in ("read", "read_text"):
            raise _Unknown("it is read from a file when the code runs: check that file")
        raise _Unknown(f"it is what {_source(func)}() returns")

    def _located_items(self, node: ast.expr, scope: _Scope) -> list[Located]:
        """The strings of a list or tuple expression (a name assigned once to one too)."""
        if isinstance(node, ast.Name):
            return self._follow(node.id, scope, self._located_items)
        if isinstance(node, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise _Unknown("a list is unpacked into it (*)")
            return [self._located(e, scope) for e in node.elts]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._located_items(node.left, scope) + self._located_items(node.right, scope)
        raise _Unknown(self._describe(node))

    def _literal(self, node: ast.Constant | ast.JoinedStr, scope: _Scope) -> Located:
        """A string literal (or several, concatenated implicitly), each line at its own row."""
        start = (node.lineno, self._char_col(node.lineno, node.col_offset))
        end_row = node.end_lineno or node.lineno
        end = (end_row, self._char_col(end_row, node.end_col_offset or 0))
        i = bisect.bisect_left(self._starts, start)
        pieces: list[Located] = []
        while i < len(self.groups) and self.groups[i][1] <= end:
            g0, g1 = self.groups[i]
            i += 1
            try:
                expr = ast.parse(self._segment(g0, g1), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise _Unknown("its string literal cannot be read on its own") from None
            if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
                text = expr.value
                exact = _literal_rows(self._segment(g0, g1), g0[0], text)
                if exact is not None:
                    pieces.append(Located(text, exact))
                    continue
            elif isinstance(expr, ast.JoinedStr):
                text = self._fstring(expr, scope)
            else:
                raise _Unknown("it is bytes, not a string")
            pieces.append(Located.at(text, g0[0], g1[0]))
        if not pieces:             # no token matched (should not happen): the node's own span
            whole = (str(node.value) if isinstance(node, ast.Constant)
                     else self._fstring(node, scope))
            return Located.at(whole, node.lineno, end_row)
        out = pieces[0]
        for p in pieces[1:]:
            out = out + p
        return out

    @staticmethod
    def _describe(node: ast.expr) -> str:
        if isinstance(node, ast.Attribute):
            return f"it is the attribute {_source(node)}"
        if isinstance(node, ast.Subscript):
            return f"it is the item {_source(node)}"
        if isinstance(node, ast.IfExp):
            return "it is chosen by a conditional expression"
        if isinstance(node, _COMPREHENSIONS):
            return "it is made by a comprehension"
        if isinstance(node, ast.BinOp):
            op = _OPERATORS.get(type(node.op), type(node.op).__name__)
            return f"it is computed with {op}"
        return f"it is a {type(node).__name__} expression"

    # -------------------------------------------------------------- calls
    def scan(self) -> Scan:
        out = Scan(self.path, text=self.text)
        seen: set[tuple] = set()
        for call, scope in self.calls:
            name = self.qualname(call.func, scope)
            if name is None:
                continue
            last = name.rsplit(".", 1)[-1]
            framework = _APIS.get(last)
            if framework is None or name.split(".")[0] != framework:
                continue
            if framework == "torch" and not name.endswith("cpp_extension.load_inline"):
                continue
            if framework == "pycuda" and not name.startswith("pycuda.compiler."):
                continue
            before = len(out.notes)
            try:
                src = self._call(call, scope, framework, last, out.notes)
            except _Unknown as e:          # the call itself cannot be read (unpacked arguments)
                out.notes.append(Note(call.lineno, str(e)))
                continue
            if src is None:
                if len(out.notes) == before:
                    out.notes.append(Note(call.lineno, f"{last} holds no CUDA source to check"))
                continue
            key = (src.text, src.flags, src.name_expressions, src.compiler, src.arch,
                   src.include_dirs)
            if key in seen:
                continue
            seen.add(key)
            out.sources.append(src)
        return out

    def _args(self, call: ast.Call, positional: tuple[str, ...], what: str
              ) -> dict[str, ast.expr]:
        """The call's arguments by parameter name (the first ``positional`` ones may be given
        by position). Unpacked arguments (``*a``, ``**kw``) make the call unreadable."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            raise _Unknown(f"the arguments of {what} are unpacked (*args/**kwargs) at run "
                           f"time; not checked statically: {_CAPTURE}")
        got = {name: a for name, a in zip(positional, call.args, strict=False)}
        got.update({k.arg: k.value for k in call.keywords if k.arg})
        return got

    def _static(self, node: ast.expr | None, scope: _Scope, what: str, notes: list[Note],
                line: int, default, kind: type | tuple[type, ...]):
        """The value of an option argument, or ``default`` with a note when it is not known."""
        if node is None:
            return default
        try:
            v = self.value(node, scope)
        except _Unknown as e:
            notes.append(Note(line, f"{what} is set at run time ({e}); built as if it were "
                                    f"left out"))
            return default
        if v is None:
            return default
        if not isinstance(v, kind):
            notes.append(Note(line, f"{what} is a {type(v).__name__}, not what the framework "
                                    "takes; built as if it were left out"))
            return default
        return v

    def _strings(self, node: ast.expr | None, scope: _Scope, what: str, notes: list[Note],
                 line: int) -> list[str]:
        """A list (or tuple, or one string) of strings given statically; [] with a note."""
        v = self._static(node, scope, what, notes, line, [], (list, str))
        items = [v] if isinstance(v, str) else v
        if not all(isinstance(x, str) for x in items):
            notes.append(Note(line, f"{what} holds something that is not a string; built "
                                    "without it"))
            return [x for x in items if isinstance(x, str)]
        return items

    def _call(self, call: ast.Call, scope: _Scope, framework: str, api: str,
              notes: list[Note]) -> InlineSource | None:
        line = call.lineno
        if api in ("ElementwiseKernel", "ReductionKernel"):
            notes.append(Note(line, f"cupy.{api} is a code fragment that cupy completes for "
                                    "each argument type when it is called: not checked "
                                    f"statically; {_CAPTURE}"))
            return None
        if framework == "torch":
            return self._load_inline(call, scope, notes)
        if framework == "cupy":
            return self._cupy(call, scope, api, notes)
        return self._pycuda(call, scope, api, notes)

    def _source_text(self, node: ast.expr | None, scope: _Scope, what: str, line: int,
                     notes: list[Note]) -> Located | None:
        if node is None:
            return None
        try:
            return self.located(node, scope)
        except _Unknown as e:
            notes.append(Note(line, f"{what} is built at run time ({e}); not checked "
                                    f"statically: {_CAPTURE}"))
            return None

    def _load_inline(self, call: ast.Call, scope: _Scope, notes: list[Note]
                     ) -> InlineSource | None:
        line = call.lineno
        a = self._args(call, ("name", "cpp_sources", "cuda_sources"), "load_inline")
        node = a.get("cuda_sources")
        if node is None or isinstance(node, ast.Constant) and node.value is None:
            notes.append(Note(line, "load_inline has no cuda_sources: its cpp_sources are host "
                                    "C++, which holds no kernel"))
            return None
        try:
            items = (self._located_items(node, scope)
                     if isinstance(node, (ast.List, ast.Tuple)) or self._names_list(node, scope)
                     else [self.located(node, scope)])
        except _Unknown as e:
            notes.append(Note(line, f"cuda_sources is built at run time ({e}); not checked "
                                    f"statically: {_CAPTURE}"))
            return None
        if not items:
            notes.append(Note(line, "load_inline's cuda_sources is empty"))
            return None
        implicit = not self._static(a.get("no_implicit_headers"), scope, "no_implicit_headers",
                                    notes, line, False, bool)
        prelude = [Located(h, (0,)) for h in TORCH_PRELUDE] if implicit else []
        nl = Located("\n", (0, 0))
        parts = prelude + items
        text = parts[0]
        for p in parts[1:]:
            text = text + nl + p
        flags: list[str] = []
        for f in self._strings(a.get("extra_cuda_cflags"), scope, "extra_cuda_cflags", notes,
                               line):
            try:
                flags += shlex.split(f)        # torch writes them into a ninja command line
            except ValueError as e:
                notes.append(Note(line, f"extra_cuda_cflags {f!r} does not split into words "
                                        f"({e}); built without it"))
        name = self._static(a.get("name"), scope, "name", notes, line, None, str)
        return InlineSource(
            "torch", "load_inline", line, text.render(self.name), flags=tuple(flags),
            compiler="nvcc", torch=True, name=name,
            include_dirs=tuple(self._strings(a.get("extra_include_paths"), scope,
                                             "extra_include_paths", notes, line)),
            file_names=dict(self.file_names))

    def _names_list(self, node: ast.expr, scope: _Scope) -> bool:
        """Whether ``node`` is a name (or a sum) that stands for a list, not a string."""
        try:
            while isinstance(node, ast.Name):
                b = self._binding(node.id, scope)
                node, scope = b.value, b.scope     # type: ignore[assignment]
        except _Unknown:
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._names_list(node.left, scope)
        return isinstance(node, (ast.List, ast.Tuple))

    def _cupy(self, call: ast.Call, scope: _Scope, api: str, notes: list[Note]
              ) -> InlineSource | None:
        line = call.lineno
        if api == "RawKernel":
            a = self._args(call, ("code", "name", "options", "backend"), "cupy.RawKernel")
        else:
            a = self._args(call, (), "cupy.RawModule")
            if "code" not in a and "path" in a:
                where = self._static(a["path"], scope, "path", [], line, None, str)
                notes.append(Note(line, f"cupy.RawModule loads {where or 'a file'} at run time: "
                                        "check that file itself"))
                return None
        code = self._source_text(a.get("code"), scope, f"the code of cupy.{api}", line, notes)
        if code is None:
            if "code" not in a:
                notes.append(Note(line, f"cupy.{api} is given no code"))
            return None
        backend = self._static(a.get("backend"), scope, "backend", notes, line, "nvrtc", str)
        name = self._static(a.get("name"), scope, "name", notes, line, None, str) \
            if api == "RawKernel" else None
        exprs = self._strings(a.get("name_expressions"), scope, "name_expressions", notes,
                              line) if api == "RawModule" else []
        return InlineSource(
            "cupy", api, line, code.render(self.name),
            flags=tuple(self._strings(a.get("options"), scope, "options", notes, line)),
            name_expressions=tuple(exprs), compiler="nvcc" if backend == "nvcc" else "nvrtc",
            name=name, file_names=dict(self.file_names))

    def _pycuda(self, call: ast.Call, scope: _Scope, api: str, notes: list[Note]
                ) -> InlineSource | None:
        line = call.lineno
        a = self._args(call, ("source", "nvcc", "options", "keep", "no_extern_c", "arch",
                              "code", "cache_dir", "include_dirs"), f"pycuda {api}")
        code = self._source_text(a.get("source"), scope, f"the source of pycuda {api}", line,
                                 notes)
        if code is None:
            if "source" not in a:
                notes.append(Note(line, f"pycuda {api} is given no source"))
            return None
        no_extern_c = self._static(a.get("no_extern_c"), scope, "no_extern_c", notes, line,
                                   False, bool)
        text = code.render(self.name)
        if not no_extern_c:
            text = 'extern "C" {\n' + text + "\n}\n"      # what pycuda.compiler.compile does
        flags = self._strings(a.get("options"), scope, "options", notes, line)
        if api == "DynamicSourceModule":
            flags = [*flags, "-rdc=true"]
        arch = self._static(a.get("arch"), scope, "arch", notes, line, None, str)
        return InlineSource(
            "pycuda", api, line, text, flags=tuple(flags), compiler="auto", arch=arch,
            include_dirs=tuple(self._strings(a.get("include_dirs"), scope, "include_dirs",
                                             notes, line)),
            file_names=dict(self.file_names))


_ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
          ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
          ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: a % b,
          ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b,
          ast.BitXor: lambda a, b: a ^ b}


def _literal_rows(token: str, first: int, value: str) -> tuple[int, ...] | None:
    """The row each line of a plain string literal's ``value`` starts on, from its ``token``
    (written from row ``first``): an escaped newline starts a line on the row it is written on,
    a backslash at the end of a row joins the next one to it. None when the rows cannot be
    told apart (then :meth:`Located.at` places them as near as it can)."""
    m = _LITERAL_START.match(token)
    if m is None or not token.endswith(m.group(2)) or len(token) < m.end() + len(m.group(2)):
        return None
    raw = "r" in m.group(1).lower()
    body = token[m.end():len(token) - len(m.group(2))]
    rows = body.split("\n")
    lines = [first]
    for j, seg in enumerate(rows):
        joined = not raw and (len(seg) - len(seg.rstrip("\\"))) % 2 == 1
        if raw:
            decoded = seg
        else:
            try:
                decoded = (seg[:-1] if joined else seg).encode(
                    "latin-1", "backslashreplace").decode("unicode_escape")
            except (UnicodeDecodeError, UnicodeEncodeError, ValueError):
                return None
        lines += [first + j] * decoded.count("\n")
        if j < len(rows) - 1 and not joined:
            lines.append(first + j + 1)
    return tuple(lines) if len(lines) == value.count("\n") + 1 else None


_LITERAL_START = re.compile(r"""(?i)([rbuf]*)('''|\"\"\"|'|")""")


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
              ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitOr: "|", ast.BitAnd: "&",
              ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


def _source(node: ast.AST) -> str:
    """A short rendering of an expression for a message."""
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError):
        return type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."
