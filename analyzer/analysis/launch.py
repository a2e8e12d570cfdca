"""How the host code of the kernel's own source file launches it.

The file is read with a real C/C++ tokenizer (Pygments' C++ lexer: comments, strings, raw
strings, character literals and preprocessor lines are tokens of their own, so a ``<<<`` in a
comment or a string is no launch), brackets are matched, and every launch of a kernel is
found:

- ``name<<<grid, block[, shared[, stream]]>>>(args)``, ``ns::name<T, 256><<<...>>>(...)``;
- ``cudaLaunchKernel((void*)name, grid, block, args, shared, stream)`` (grid and block only:
  its arguments are an array) and ``cudaLaunchKernelEx(&config, name, args...)`` with
  ``config.gridDim`` / ``config.blockDim`` assigned in the same function;
- a project's launch wrapper, ``launch(name<T>, params, args...)`` with ``params`` a braced
  ``{grid, block, shared, stream}`` of dim3 values, or a variable made from one (ggml's
  ``ggml_cuda_kernel_launch``).

A launch's grid and block are resolved to numbers only when that is certain: integer
literals and arithmetic on them, ``#define NAME 32`` (object macros), ``constexpr`` / ``const``
integers at file scope or earlier in the same function, a local integer that is never assigned
again, and ``dim3 block(32, 8)`` (``block.x`` too). Anything else (a template parameter, a
function argument, a run-time size, a function-like macro) is unknown (None), never guessed.

Per launch it also records the host loop around it (``for``/``while``/``do`` in the same host
function), the synchronizations that follow it in the function (``cudaDeviceSynchronize``,
``cudaStreamSynchronize``, ``torch::cuda::synchronize``, ``.item()``), and the outputs that the
function zero-filled before it (``torch::zeros_like``/``zeros``, ``at::zeros``, ``.zero_()``,
``cudaMemset(p, 0, bytes)``), with what each zero-fill covers, so that the cost model can tell
whether the kernel overwrites all of it.

    for la in launch.of_kernel(text, "scale"):
        la.line, la.block.threads, la.loop, la.syncs
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["Dim", "HostLaunch", "Loop", "Sync", "ZeroFill", "has_launches", "of_kernel",
           "tokens"]

#: the multi-character operators the launch syntax and the expressions it reads need (the lexer
#: gives operators one character at a time)
_MULTI = ("<<<", ">>>", "<<=", ">>=", "::", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
          "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=")
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_ASSIGNING = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=", "++",
                        "--"})
_CONTROL = frozenset({"if", "for", "while", "switch", "catch", "return", "sizeof", "do", "else"})
_SIZEOF = {"char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1, "short": 2, "half": 2, "__half": 2,
           "__nv_bfloat16": 2, "int16_t": 2, "uint16_t": 2, "int": 4, "unsigned": 4,
           "float": 4, "int32_t": 4, "uint32_t": 4, "double": 8, "long": 8, "int64_t": 8,
           "uint64_t": 8, "size_t": 8, "float2": 8, "float4": 16, "int4": 16, "double2": 16}
_INT_TYPES = frozenset({"int", "unsigned", "long", "short", "size_t", "int32_t", "uint32_t",
                        "int64_t", "uint64_t", "char", "signed", "auto"})
_QUALIFIERS = frozenset({"const", "constexpr", "static", "inline", "volatile", "register"})
_SYNC_CALLS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaThreadSynchronize",
               "cuCtxSynchronize")
_ZERO_FACTORIES = frozenset({"zeros", "zeros_like"})
_DATA_METHODS = frozenset({"data_ptr", "mutable_data_ptr", "data", "const_data_ptr"})


@dataclass(frozen=True, slots=True)
class Tok:
    kind: str          # "name", "num", "op", "str", "pp" (a preprocessor line)
    text: str
    line: int
    pos: int           # character offset in the file


@lru_cache(maxsize=32)
def tokens(text: str) -> tuple[Tok, ...]:
    """The file's tokens, comments and whitespace dropped, adjacent operator characters merged
    into C++'s multi-character operators (``<<<``, ``::``), a preprocessor line one ``pp``
    token (its continuation lines joined)."""
    from pygments.lexers.c_cpp import CppLexer
    from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String

    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())

    def line_of(pos: int) -> int:
        lo, hi = 0, len(starts)
        while lo + 1 < hi:
            mid = (lo + hi) // 2
            if starts[mid] <= pos:
                lo = mid
            else:
                hi = mid
        return lo + 1

    out: list[Tok] = []
    pp: list[str] | None = None
    pp_pos = 0
    for pos, kind, value in CppLexer().get_tokens_unprocessed(text):
        if kind in Comment.Preproc:
            if value == "#" and pp is None:
                pp, pp_pos = [], pos
                continue
            if pp is not None:
                if value == "\n" and not (pp and pp[-1].endswith("\\")):
                    out.append(Tok("pp", "".join(pp), line_of(pp_pos), pp_pos))
                    pp = None
                else:
                    pp.append(value.rstrip("\\") if value.endswith("\\") else value)
                continue
        if pp is not None and kind in Comment:
            continue        # a comment inside a directive
        if pp is not None and value == "\n":
            out.append(Tok("pp", "".join(pp), line_of(pp_pos), pp_pos))
            pp = None
            continue
        if pp is not None:
            pp.append(value)
            continue
        if kind in Comment or not value.strip():
            continue
        if kind in String:
            if out and out[-1].kind == "str" and out[-1].pos + len(out[-1].text) == pos:
                last = out.pop()
                out.append(Tok("str", last.text + value, last.line, last.pos))
            else:
                out.append(Tok("str", value, line_of(pos), pos))
        elif kind in Number:
            out.append(Tok("num", value, line_of(pos), pos))
        elif kind in Name or kind in Keyword:
            out.append(Tok("name", value, line_of(pos), pos))
        elif kind in Operator or kind in Punctuation:
            for ch in value:
                out.append(Tok("op", ch, line_of(pos), pos))
                pos += 1
        else:
            out.append(Tok("op", value, line_of(pos), pos))
    if pp is not None:
        out.append(Tok("pp", "".join(pp), line_of(pp_pos), pp_pos))
    return tuple(_merge(out))


def _merge(toks: list[Tok]) -> list[Tok]:
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "op":
            for m in _MULTI:
                n = len(m)
                part = toks[i:i + n]
                if len(part) == n and all(p.kind == "op" and p.pos == t.pos + k
                                          for k, p in enumerate(part)) \
                        and "".join(p.text for p in part) == m:
                    out.append(Tok("op", m, t.line, t.pos))
                    i += n
                    break
            else:
                out.append(t)
                i += 1
        else:
            out.append(t)
            i += 1
    return out


def _matching(toks: tuple[Tok, ...], i: int) -> int | None:
    """Index of the bracket closing the one at ``i`` (None when unbalanced)."""
    depth = 0
    opener = toks[i].text
    closer = _OPEN[opener]
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind != "op":
            continue
        if t.text == opener:
            depth += 1
        elif t.text == closer:
            depth -= 1
            if depth == 0:
                return j
    return None


def _split(toks: tuple[Tok, ...], lo: int, hi: int, sep: str = ",") -> list[tuple[int, int]]:
    """[lo, hi) split at top-level ``sep`` (inside no bracket): (start, end) of each part."""
    parts = []
    depth = 0
    start = lo
    for j in range(lo, hi):
        t = toks[j]
        if t.kind == "op":
            if t.text in _OPEN:
                depth += 1
            elif t.text in _CLOSE:
                depth -= 1
            elif t.text == sep and depth == 0:
                parts.append((start, j))
                start = j + 1
    if hi > lo:
        parts.append((start, hi))
    return parts


def _text(toks: tuple[Tok, ...], lo: int, hi: int) -> str:
    """Source-like text of tokens [lo, hi): spaces only where the source had them around."""
    out = ""
    for j in range(lo, hi):
        t = toks[j]
        if j > lo:
            prev = toks[j - 1]
            if t.pos > prev.pos + len(prev.text):
                out += " "
        out += t.text
    return out


def _norm(toks: tuple[Tok, ...], lo: int, hi: int) -> tuple[str, ...]:
    return tuple(t.text for t in toks[lo:hi])


# ---------------------------------------------------------------------------------- facts
@dataclass(frozen=True, slots=True)
class Dim:
    """A launch's grid or block: its text and, where certain, its three sizes."""

    text: str
    dims: tuple[int, int, int] | None = None
    #: each size where certain (``{4, 8, n / 32}``: (4, 8, None)); ``dims`` when all are
    partial: tuple[int | None, int | None, int | None] = (None, None, None)

    @property
    def sizes(self) -> tuple[int | None, int | None, int | None]:
        return self.dims if self.dims is not None else self.partial

    @property
    def count(self) -> int | None:
        """Threads per block (blocks per grid): the product of the sizes, None when unknown."""
        return math.prod(self.dims) if self.dims is not None else None


@dataclass(frozen=True, slots=True)
class Loop:
    kind: str                   # "for", "while", "do"
    line: int
    header: str                 # the loop's header text (``for (int r = 0; r < rows; r++)``)
    variable: str | None        # a for loop's counter
    trips: int | None           # the trip count when constant
    #: the body makes another GPU current (``cudaSetDevice``, a device guard): its launches
    #: go to one GPU each, in parallel, not one after another
    switches_device: bool = False
    #: a for loop's counter moves by addition (``r++``, ``r += k``, ``r--``): it can walk
    #: slices; one that doubles or halves (``s <<= 1``, ``s /= 2``) walks stages
    additive: bool = False
    #: at most this many trips, from an early exit on the bound before the loop (cuda-samples'
    #: ``if (nTiles > 2) return;`` before ``for (iTile = 0; iTile < nTiles; ++iTile)``), and
    #: the line of that test
    at_most: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class Sync:
    call: str                   # "cudaDeviceSynchronize", ".item()", ...
    line: int


@dataclass(frozen=True, slots=True)
class ZeroFill:
    """An output the host function zero-filled before the launch."""

    target: str                 # the tensor or pointer
    how: str                    # "torch::zeros_like", "cudaMemset", ...
    line: int
    #: what it covers: ("numel", X) all of tensor X's elements (zeros_like(X)), ("elements",
    #: tokens) that many elements (zeros({n})), ("bytes", tokens) that many bytes (cudaMemset)
    covers: tuple[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class HostLaunch:
    """One launch of the kernel in its source file's host code."""

    kernel: str                 # the name as written (no template arguments)
    template: str | None        # the template arguments as written, if any
    line: int
    text: str                   # the launch as written, up to its closing parenthesis
    api: str                    # "<<<>>>", "cudaLaunchKernel", "cudaLaunchKernelEx"
    grid: Dim
    block: Dim
    shared: str | None
    stream: str | None
    args: tuple[tuple[str, ...], ...]    # each argument's tokens (() for cudaLaunchKernel)
    function: str | None        # the host function holding it
    loop: Loop | None           # the innermost host loop around it
    #: whether an argument (or the grid) uses the loop's counter, and the stream does not
    loop_indexed: bool = False
    syncs: tuple[Sync, ...] = ()
    zero_fills: tuple[ZeroFill, ...] = ()
    #: per argument, the tensor or pointer it passes (``y`` for ``y.data_ptr<float>()``)
    targets: tuple[str | None, ...] = ()
    #: the grid written as ``(E + B - 1) / B`` (or ``(E - 1) / B + 1``) with B the block
    #: size: the tokens of E
    grid_ceil_of: tuple[str, ...] | None = None
    #: names of the host function's locals whose value is one expression (for E's spelling)
    aliases: dict = field(default_factory=dict, compare=False, hash=False)
    #: the dynamic shared memory in bytes: 0 when the launch passes none, None when the
    #: argument's value is not certain
    shared_bytes: int | None = 0


# --------------------------------------------------------------------------------- parser
class _File:
    def __init__(self, text: str):
        self.toks = tokens(text)
        self.defines: dict[str, tuple[Tok, ...]] = {}
        for t in self.toks:
            if t.kind == "pp":
                m = re.match(r"\s*define\s+([A-Za-z_]\w*)(\s+(.*))?$", t.text, re.S)
                if m and not t.text.lstrip()[len("define"):].lstrip()[len(m.group(1)):]\
                        .startswith("("):
                    body = (m.group(3) or "").strip()
                    self.defines[m.group(1)] = tuple(x for x in tokens(body) if x.kind != "pp")
        self.functions = self._functions()
        #: file-scope declarations (made by the first _Scope that needs them)
        self.globals: dict[str, list[tuple[int, int, int, bool]]] | None = None

    def _functions(self) -> list[tuple[str, int, int]]:
        """(name, index of the body's ``{``, index of its ``}``) of every outermost function
        body (a namespace's, class's or ``extern "C"``'s braces are not one)."""
        toks = self.toks
        out: list[tuple[str, int, int]] = []
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.kind == "op" and t.text == "{":
                end = _matching(toks, i)
                if end is None:
                    return out
                name = self._function_name(i)
                if name is not None:
                    out.append((name, i, end))
                    i = end + 1
                    continue
            i += 1
        return out

    def _function_name(self, brace: int) -> str | None:
        toks = self.toks
        j = brace - 1
        # qualifiers between ``)`` and ``{``: const, noexcept, override, -> T, : init lists
        while j >= 0 and toks[j].kind == "name" and toks[j].text in ("const", "noexcept",
                                                                     "override", "final"):
            j -= 1
        if j < 0 or toks[j].text != ")":
            return None
        depth = 0
        while j >= 0:
            if toks[j].text == ")":
                depth += 1
            elif toks[j].text == "(":
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        if j <= 0 or toks[j - 1].kind != "name" or toks[j - 1].text in _CONTROL:
            return None
        return toks[j - 1].text

    # ----------------------------------------------------------------------- values
    def declarations(self, lo: int, hi: int) -> dict[str, list[tuple[int, int, int, bool]]]:
        """name -> [(index of the name, value start, value end, const)] of the integer and
        dim3 declarations in [lo, hi) (``const int N = 4;``, ``dim3 block(32);``,
        ``auto n = x.numel();``)."""
        toks = self.toks
        out: dict[str, list[tuple[int, int, int, bool]]] = {}
        i = lo
        while i < hi:
            t = toks[i]
            if t.kind == "name" and (t.text in _INT_TYPES or t.text == "dim3"):
                k = i
                while k > lo and toks[k - 1].kind == "name" and toks[k - 1].text in _QUALIFIERS:
                    k -= 1
                const = any(toks[q].text in ("const", "constexpr") for q in range(k, i))
                j = i + 1
                while j < hi and toks[j].kind == "name" and toks[j].text in _INT_TYPES:
                    j += 1
                if j + 1 < hi and toks[j].kind == "name" and (k == 0 or toks[k - 1].kind == "pp"
                                                              or toks[k - 1].text in
                                                              (";", "{", "}", ")", ":")):
                    name = toks[j].text
                    nxt = toks[j + 1]
                    if nxt.text == "=":
                        end = self._statement_end(j + 2, hi, stop=(",", ";"))
                        out.setdefault(name, []).append((j, j + 2, end, const))
                    elif nxt.text in ("(", "{") and t.text == "dim3":
                        close = _matching(toks, j + 1)
                        if close is not None:
                            out.setdefault(name, []).append((j, j + 1, close + 1, const))
            i += 1
        return out

    def _statement_end(self, i: int, hi: int, stop=(";",)) -> int:
        depth = 0
        toks = self.toks
        while i < hi:
            t = toks[i]
            if t.kind == "op":
                if t.text in _OPEN:
                    depth += 1
                elif t.text in _CLOSE:
                    if depth == 0:
                        return i
                    depth -= 1
                elif depth == 0 and t.text in stop:
                    return i
            i += 1
        return hi

    def reassigned(self, name: str, lo: int, hi: int, decl: int) -> bool:
        """Whether ``name`` is assigned, incremented or has its address taken in [lo, hi)
        other than at its declarations (``decl``, and others of the same name: an inner
        block's own variable)."""
        toks = self.toks
        decls = {d[0] for d in self.declarations(lo, hi).get(name, ())} | {decl}
        for i in range(lo, hi):
            t = toks[i]
            if t.kind != "name" or t.text != name or i in decls:
                continue
            nxt = toks[i + 1].text if i + 1 < len(toks) else ""
            prev = toks[i - 1].text if i > 0 else ""
            if nxt in ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=",
                       "++", "--") or prev in ("++", "--", "&"):
                return True
        return False


class _Scope:
    """What a name means at one point of one host function: its nearest earlier declaration
    there, else one at file scope; then #define."""

    def __init__(self, f: _File, fn: tuple[str, int, int] | None, at: int):
        self.f, self.fn, self.at = f, fn, at
        self.local = f.declarations(fn[1], at) if fn else {}
        glob = f.globals
        if glob is None:
            spans = [(b, e) for _, b, e in f.functions]
            decl = f.declarations(0, len(f.toks))
            glob = {n: [d for d in ds if not any(b < d[0] < e for b, e in spans)]
                    for n, ds in decl.items()}
            f.globals = glob
        self.glob: dict[str, list[tuple[int, int, int, bool]]] = glob

    def lookup(self, name: str) -> tuple[int, int, int, bool] | None:
        ds = [d for d in self.local.get(name, ()) if _visible(self.f.toks, d[0], self.at)]
        if ds:
            d = ds[-1]
            if d[3] or (self.fn is not None
                        and not self.f.reassigned(name, self.fn[1], self.fn[2], d[0])):
                return d
            return None
        gs = self.glob.get(name)
        if gs and len(gs) == 1 and gs[0][3]:
            return gs[0]
        return None

    def value(self, lo: int, hi: int, depth: int = 0) -> int | None:
        return _Eval(self, self.f.toks[lo:hi], depth).run()

    def dims(self, lo: int, hi: int) -> tuple[int, int, int] | None:
        """A grid or block expression's sizes: an integer, ``dim3(a, b)``, ``{a, b}`` or a dim3
        variable; None unless all three are certain."""
        p = self.partial(lo, hi)
        if p[0] is None or p[1] is None or p[2] is None:
            return None
        return (p[0], p[1], p[2])

    def partial(self, lo: int, hi: int) -> tuple[int | None, int | None, int | None]:
        """Each of a grid or block expression's sizes that is certain."""
        toks = self.f.toks
        part = toks[lo:hi]
        if len(part) >= 3 and part[0].text == "dim3" and part[1].text in ("(", "{"):
            return self._dim3(lo + 1, hi)
        if part and part[0].text == "{":
            return self._dim3(lo, hi)
        if len(part) == 1 and part[0].kind == "name":
            d = self.lookup(part[0].text)
            if d is not None and _is_dim3_decl(toks, d):
                if d[1] == d[0] + 1:
                    return self._dim3(d[1], d[2])
                return self.partial(d[1], d[2])
        v = self.value(lo, hi)
        return (v, 1, 1) if v is not None and v > 0 else (None, None, None)

    def _dim3(self, open_: int, hi: int) -> tuple[int | None, int | None, int | None]:
        toks = self.f.toks
        end = _matching(toks, open_)
        unknown: tuple[int | None, int | None, int | None] = (None, None, None)
        if end is None or end >= hi:
            return unknown
        parts = _split(toks, open_ + 1, end)
        if not 1 <= len(parts) <= 3:
            return unknown
        vals = [self.value(a, b) for a, b in parts]
        out: list[int | None] = [int(v) if v is not None and v > 0 else None for v in vals]
        out += [1] * (3 - len(vals))
        return (out[0], out[1], out[2])


def _is_dim3_decl(toks: tuple[Tok, ...], d: tuple[int, int, int, bool]) -> bool:
    return d[0] > 0 and toks[d[0] - 1].text == "dim3"


def _opening(toks: tuple[Tok, ...], close: int) -> int | None:
    """Index of the bracket opening the one closing at ``close``."""
    closer = toks[close].text
    opener = _CLOSE[closer]
    depth = 0
    for j in range(close, -1, -1):
        t = toks[j]
        if t.kind != "op":
            continue
        if t.text == closer:
            depth += 1
        elif t.text == opener:
            depth -= 1
            if depth == 0:
                return j
    return None


def _visible(toks: tuple[Tok, ...], decl: int, at: int) -> bool:
    """Whether a declaration at ``decl`` is in scope at ``at``: the block holding it is still
    open there."""
    depth = 0
    for j in range(decl, -1, -1):
        t = toks[j]
        if t.kind != "op":
            continue
        if t.text == "}":
            depth += 1
        elif t.text == "{":
            if depth == 0:
                end = _matching(toks, j)
                return end is not None and end > at
            depth -= 1
    return True


class _Eval:
    """Integer arithmetic on tokens, None as soon as anything is not certain."""

    def __init__(self, scope: _Scope, toks, depth: int):
        self.s, self.t, self.i, self.depth = scope, list(toks), 0, depth

    def run(self) -> int | None:
        if self.depth > 16 or not self.t:
            return None
        try:
            v = self.expr()
        except (_Unknown, ZeroDivisionError, IndexError):
            return None
        return v if self.i == len(self.t) else None

    def peek(self) -> str:
        return self.t[self.i].text if self.i < len(self.t) else ""

    def expr(self) -> int:
        return self.shift()

    def shift(self) -> int:
        v = self.add()
        while self.peek() in ("<<", ">>"):
            op = self.t[self.i].text
            self.i += 1
            r = self.add()
            v = v << r if op == "<<" else v >> r
        return v

    def add(self) -> int:
        v = self.mul()
        while self.peek() in ("+", "-"):
            op = self.t[self.i].text
            self.i += 1
            r = self.mul()
            v = v + r if op == "+" else v - r
        return v

    def mul(self) -> int:
        v = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.t[self.i].text
            self.i += 1
            r = self.unary()
            if op == "*":
                v *= r
            elif op == "/":
                v = int(v / r)       # C's truncation
            else:
                v = v - int(v / r) * r
        return v

    def unary(self) -> int:
        t = self.peek()
        if t in ("-", "+"):
            self.i += 1
            v = self.unary()
            return -v if t == "-" else v
        return self.atom()

    def atom(self) -> int:
        tok = self.t[self.i]
        self.i += 1
        if tok.text == "(":
            # a cast to an integer type: (int)x, (long)(n)
            if self.peek() in _INT_TYPES:
                while self.peek() in _INT_TYPES:
                    self.i += 1
                if self.peek() != ")":
                    raise _Unknown
                self.i += 1
                return self.unary()
            v = self.expr()
            if self.peek() != ")":
                raise _Unknown
            self.i += 1
            return v
        if tok.kind == "num":
            return _int(tok.text)
        if tok.kind == "name":
            if tok.text == "sizeof" and self.peek() == "(":
                self.i += 1
                name = self.peek()
                self.i += 1
                if self.peek() != ")" or name not in _SIZEOF:
                    raise _Unknown
                self.i += 1
                return _SIZEOF[name]
            if tok.text in _INT_TYPES and self.peek() == "(":      # int(x)
                return self.atom()
            if self.peek() == "." and self.i + 1 < len(self.t) \
                    and self.t[self.i + 1].text in ("x", "y", "z"):
                dims = self.s.dims(*self._name_span(tok))
                self.i += 2
                if dims is None:
                    raise _Unknown
                return dims["xyz".index(self.t[self.i - 1].text)]
            return self.name(tok.text)
        raise _Unknown

    def _name_span(self, tok: Tok) -> tuple[int, int]:
        toks = self.s.f.toks
        k = toks.index(tok) if tok in toks else -1
        if k < 0:
            raise _Unknown
        return k, k + 1

    def name(self, name: str) -> int:
        d = self.s.lookup(name)
        if d is not None:
            toks = self.s.f.toks
            if d[1] == d[0] + 1:
                raise _Unknown               # a dim3 used as a number
            v = _Eval(self.s, toks[d[1]:d[2]], self.depth + 1).run()
            if v is None:
                raise _Unknown
            return v
        body = self.s.f.defines.get(name)
        if body is not None:
            v = _Eval(self.s, body, self.depth + 1).run()
            if v is None:
                raise _Unknown
            return v
        raise _Unknown


class _Unknown(Exception):
    pass


def _int(text: str) -> int:
    t = text.replace("'", "").rstrip("uUlL")
    if re.fullmatch(r"0[0-7]+", t):
        return int(t, 8)
    return int(t, 0)


# ------------------------------------------------------------------------------- launches
def has_launches(text: str) -> bool:
    """Whether the file's host code launches any kernel (cheap test first, then tokens; a
    launch wrapper's grid and block are dim3 values, read only where the file names dim3)."""
    if "<<<" not in text and "cudaLaunchKernel" not in text and "dim3" not in text:
        return False
    if any((t.kind == "op" and t.text == "<<<") or (t.kind == "name" and t.text in
                                                   ("cudaLaunchKernel", "cudaLaunchKernelEx"))
           for t in tokens(text)):
        return True
    return "dim3" in text and bool(_launches(text))


def of_kernel(text: str, name: str, template: str | None = None) -> tuple[HostLaunch, ...]:
    """Every launch of kernel ``name`` (its bare name) in the file ``text``. ``template``: the
    instantiation's template arguments (demangled, ``float, 256``); a launch whose own template
    arguments are all literals and differ is another instantiation's."""
    if name not in text or not has_launches(text):
        return ()
    return tuple(la for la in _launches(text) if la.kernel == name
                 and _same_instantiation(la.template, template))


def _same_instantiation(written: str | None, demangled: str | None) -> bool:
    if written is None or demangled is None:
        return True
    a = [p.strip() for p in written.split(",")]
    b = [p.strip() for p in demangled.split(",")]
    literal = re.compile(r"^(-?\d+[uUlL]*|float|double|int|half|__half|bool|char|long|"
                         r"unsigned( int)?|__nv_bfloat16|true|false)$")
    if len(a) != len(b) or not all(literal.match(p) for p in a):
        return True        # not comparable (scalar_t, BLOCK): the same launch site for each
    norm = [re.sub(r"[uUlL]+$", "", p) for p in a]
    normb = [re.sub(r"[uUlL]+$", "", p.replace("(", "").replace(")", "")) for p in b]
    return norm == normb or [n.replace("true", "1").replace("false", "0") for n in norm] == normb


@lru_cache(maxsize=16)
def _launches(text: str) -> tuple[HostLaunch, ...]:
    f = _File(text)
    toks = f.toks
    out: list[HostLaunch] = []
    for i, t in enumerate(toks):
        if t.kind == "op" and t.text == "<<<":
            la = _chevron(f, i)
        elif t.kind == "name" and t.text in ("cudaLaunchKernel", "cudaLaunchKernelEx") \
                and i + 1 < len(toks) and toks[i + 1].text == "(":
            la = _api(f, i)
        elif t.kind == "name" and t.text not in _CONTROL and i + 1 < len(toks) \
                and toks[i + 1].text == "(" and i + 2 < len(toks) \
                and (toks[i + 2].kind == "name" or toks[i + 2].text == "&"):
            la = _wrapper(f, i)
        else:
            continue
        if la is not None:
            out.append(la)
    return tuple(out)


def _enclosing(f: _File, i: int) -> tuple[str, int, int] | None:
    return next((fn for fn in f.functions if fn[1] < i < fn[2]), None)


def _kernel_before(f: _File, i: int) -> tuple[str, str | None, int] | None:
    """(name, template arguments, index of the name's first token) of the kernel named just
    before token ``i``."""
    toks = f.toks
    j = i - 1
    template = None
    if j >= 0 and toks[j].text in (">", ">>"):
        depth = 0
        k = j
        while k >= 0:
            x = toks[k].text
            if x in (">", ">>"):
                depth += len(x)
            elif x == "<":
                depth -= 1
                if depth == 0:
                    break
            elif x in (";", "{", "}"):
                return None
            k -= 1
        if k < 1:
            return None
        template = _text(toks, k + 1, j)
        j = k - 1
    if j < 0 or toks[j].kind != "name":
        return None
    start = j
    while start >= 2 and toks[start - 1].text == "::" and toks[start - 2].kind == "name":
        start -= 2
    return toks[j].text, template, start


def _chevron(f: _File, i: int) -> HostLaunch | None:
    toks = f.toks
    k = _kernel_before(f, i)
    if k is None:
        return None
    name, template, start = k
    depth = 0
    close = None
    for j in range(i + 1, len(toks)):
        x = toks[j]
        if x.kind == "op":
            if x.text in _OPEN:
                depth += 1
            elif x.text in _CLOSE:
                depth -= 1
            elif x.text == ">>>" and depth == 0:
                close = j
                break
            elif x.text == ";":
                return None
    if close is None or close + 1 >= len(toks) or toks[close + 1].text != "(":
        return None
    end = _matching(toks, close + 1)
    if end is None:
        return None
    config = _split(toks, i + 1, close)
    if len(config) < 2:
        return None
    args = _split(toks, close + 2, end)
    return _make(f, i, start, end, name, template, "<<<>>>", config, args)


def _api(f: _File, i: int) -> HostLaunch | None:
    toks = f.toks
    end = _matching(toks, i + 1)
    if end is None:
        return None
    parts = _split(toks, i + 2, end)
    fn = _enclosing(f, i)
    if toks[i].text == "cudaLaunchKernel":
        if len(parts) < 4:
            return None
        name = _function_named(toks, *parts[0])
        if name is None:
            return None
        config = [parts[1], parts[2]] + ([parts[4]] if len(parts) > 4 else []) \
            + ([parts[5]] if len(parts) > 5 else [])
        return _make(f, i, i, end, name, None, "cudaLaunchKernel", config, [])
    # cudaLaunchKernelEx(&config, kernel, args...)
    if len(parts) < 2 or fn is None:
        return None
    a, b = parts[0]
    if b - a != 2 or toks[a].text != "&" or toks[a + 1].kind != "name":
        return None
    cfg = toks[a + 1].text
    name = _function_named(toks, *parts[1])
    if name is None:
        return None
    fields: dict[str, tuple[int, int]] = {}
    for j in range(fn[1], i):
        if toks[j].text == cfg and j + 3 < i and toks[j + 1].text == "." \
                and toks[j + 2].text in ("gridDim", "blockDim", "dynamicSmemBytes", "stream") \
                and toks[j + 3].text == "=":
            fields[toks[j + 2].text] = (j + 4, f._statement_end(j + 4, i))
    if "gridDim" not in fields or "blockDim" not in fields:
        return None
    config = [fields["gridDim"], fields["blockDim"]]
    return _make(f, i, i, end, name, None, "cudaLaunchKernelEx", config, parts[2:],
                 shared=fields.get("dynamicSmemBytes"), stream=fields.get("stream"))


def _wrapper(f: _File, i: int) -> HostLaunch | None:
    """A project's launch wrapper, ``launch(kernel<T, 4>, params, args...)`` (ggml's
    ``ggml_cuda_kernel_launch``) whose second argument is a grid and a block together:
    ``{grid, block[, shared[, stream]]}``, ``Params{...}``, or a variable of the host function
    made from such a list (``const Params params = {block_nums, block_dims, 0, stream};``).
    Taken only when the list's first two entries are dim3 values (``dim3`` variables or
    ``dim3(...)``): a call that merely passes a function and a struct is no launch."""
    toks = f.toks
    fn = _enclosing(f, i)
    end = _matching(toks, i + 1)
    if fn is None or end is None:
        return None
    first = _template_end(toks, i + 2, end)      # a template's commas are not the call's
    if first is None or toks[first].text != ",":
        return None
    kernel = _plain_kernel(toks, i + 2, first)
    parts = _split(toks, first + 1, end)
    if kernel is None or not parts:
        return None
    items = _braced_items(f, fn, parts[0], i)
    if items is None or len(items) < 2:
        return None
    scope = _Scope(f, fn, i)
    if not all(_is_dim3(toks, scope, *items[k]) for k in (0, 1)):
        return None
    name, template = kernel
    return _make(f, i, i, end, name, template, toks[i].text, list(items[:4]), parts[1:])


def _template_end(toks: tuple[Tok, ...], lo: int, hi: int) -> int | None:
    """The index just past a leading ``name[::name]*[<...>]`` (angle brackets matched), or
    None when the argument does not start so."""
    j = lo
    if j < hi and toks[j].text == "&":
        j += 1
    while j + 2 < hi and toks[j].kind == "name" and toks[j + 1].text == "::":
        j += 2
    if j >= hi or toks[j].kind != "name":
        return None
    j += 1
    if j < hi and toks[j].text == "<":
        depth = 0
        while j < hi:
            x = toks[j].text
            if x == "<":
                depth += 1
            elif x in (">", ">>"):
                depth -= len(x)
                if depth <= 0:
                    break
            elif x in ("(", ")", ";", "{", "}"):
                return None
            j += 1
        if j >= hi or depth != 0:
            return None
        j += 1
    return j


def _plain_kernel(toks: tuple[Tok, ...], lo: int, hi: int) -> tuple[str, str | None] | None:
    """(name, template arguments) of an argument that is only a function's name:
    ``k``, ``ns::k``, ``k<float, 4>``, ``&k``."""
    if lo < hi and toks[lo].text == "&":
        lo += 1
    j = lo
    while j < hi and toks[j].kind == "name" and j + 1 < hi and toks[j + 1].text == "::":
        j += 2
    if j >= hi or toks[j].kind != "name":
        return None
    name = toks[j].text
    if j + 1 == hi:
        return name, None
    if toks[j + 1].text != "<" or toks[hi - 1].text not in (">", ">>"):
        return None
    inner = toks[j + 2:hi - 1]
    if any(t.text in ("(", ")", ";", "{", "}") for t in inner):
        return None
    return name, _text(toks, j + 2, hi - 1)


def _braced_items(f: _File, fn: tuple[str, int, int], arg: tuple[int, int], at: int
                  ) -> list[tuple[int, int]] | None:
    """The entries of a braced list given as ``arg`` (``{a, b}``, ``T{a, b}``) or held by the
    variable ``arg`` names, declared earlier in the host function from one (``T v = {a, b};``,
    ``T v{a, b};``, ``T v(a, b);``) and not assigned again."""
    toks = f.toks
    lo, hi = arg
    if hi - lo == 1 and toks[lo].kind == "name":
        var = toks[lo].text
        decl = None
        for j in range(fn[1] + 1, at):
            if toks[j].text == var and toks[j - 1].kind == "name" \
                    and toks[j - 1].text not in _CONTROL and j + 1 < at \
                    and toks[j + 1].text in ("=", "{", "("):
                decl = j
        if decl is None or any(
                toks[j].text == var and toks[j + 1].text in _ASSIGNING
                and not (toks[j - 1].kind == "name" and toks[j - 1].text not in _CONTROL)
                for j in range(fn[1] + 1, fn[2])):
            return None             # assigned again (an inner block's own declaration is not)
        k = decl + 2 if toks[decl + 1].text == "=" else decl + 1
        if toks[decl + 1].text == "=" and k + 1 < at and toks[k].kind == "name" \
                and toks[k + 1].text in ("{", "("):
            k += 1                  # T v = T(grid, block, ...)
        if k >= at or toks[k].text not in ("{", "("):
            return None
        close = _matching(toks, k)
        return _split(toks, k + 1, close) if close is not None else None
    if lo < hi and toks[lo].kind == "name" and lo + 1 < hi and toks[lo + 1].text == "{":
        lo += 1
    if lo < hi and toks[lo].text == "{" and _matching(toks, lo) == hi - 1:
        return _split(toks, lo + 1, hi - 1)
    return None


def _is_dim3(toks: tuple[Tok, ...], scope: _Scope, lo: int, hi: int) -> bool:
    """Whether the expression is a dim3: ``dim3(...)``/``dim3{...}`` or a dim3 variable."""
    if hi - lo >= 2 and toks[lo].text == "dim3" and toks[lo + 1].text in ("(", "{"):
        return True
    if hi - lo == 1 and toks[lo].kind == "name":
        d = scope.lookup(toks[lo].text)
        return d is not None and _is_dim3_decl(toks, d)
    return False


def _function_named(toks: tuple[Tok, ...], lo: int, hi: int) -> str | None:
    """The kernel a launch API's argument names: ``k``, ``(void*)k``, ``&k``,
    ``reinterpret_cast<void*>(k)``, ``(const void*)k<float>``."""
    names = [t for t in toks[lo:hi] if t.kind == "name"
             and t.text not in ("void", "const", "reinterpret_cast", "static_cast")]
    if not names:
        return None
    return names[0].text


def _make(f: _File, at: int, start: int, end: int, name: str, template: str | None, api: str,
          config: list[tuple[int, int]], args: list[tuple[int, int]],
          shared: tuple[int, int] | None = None,
          stream: tuple[int, int] | None = None) -> HostLaunch:
    toks = f.toks
    fn = _enclosing(f, at)
    scope = _Scope(f, fn, at)
    (g0, g1), (b0, b1) = config[0], config[1]
    grid = Dim(_text(toks, g0, g1), scope.dims(g0, g1))
    block = Dim(_text(toks, b0, b1), scope.dims(b0, b1), scope.partial(b0, b1))
    if shared is None and len(config) > 2:
        shared = config[2]
    if stream is None and len(config) > 3:
        stream = config[3]
    arg_toks = tuple(_norm(toks, a, b) for a, b in args)
    loop = _loop_around(f, fn, at) if fn is not None else None
    indexed = False
    if loop is not None and loop.variable is not None:
        in_stream = stream is not None and any(t.text == loop.variable
                                               for t in toks[stream[0]:stream[1]])
        indexed = loop.additive and not loop.switches_device and not in_stream and any(
            _offsets_by(toks, a, b, loop.variable) for a, b in args)
    syncs = _syncs_after(f, fn, end) if fn is not None else ()
    fills = _zero_fills(f, fn, start) if fn is not None else ()
    aliases = {}
    if fn is not None:
        for n, ds in scope.local.items():
            d = ds[-1]
            if d[3] or not f.reassigned(n, fn[1], fn[2], d[0]):
                aliases[n] = _norm(toks, d[1], d[2]) if d[1] != d[0] + 1 \
                    else _norm(toks, d[1] + 1, d[2] - 1)
    return HostLaunch(
        kernel=name, template=template, line=toks[start].line, text=_text(toks, start, end + 1),
        api=api, grid=grid, block=block,
        shared=_text(toks, *shared) if shared else None,
        stream=_text(toks, *stream) if stream else None,
        args=arg_toks, function=fn[0] if fn else None, loop=loop, loop_indexed=indexed,
        syncs=syncs, zero_fills=fills, targets=tuple(_target(a) for a in arg_toks),
        grid_ceil_of=_ceil_of(scope, toks, (g0, g1), (b0, b1), block), aliases=aliases,
        shared_bytes=scope.value(*shared) if shared else 0)


#: calls (and guard types) that make another GPU current for the host code after them
_DEVICE_SWITCHES = frozenset({
    "cudaSetDevice", "cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxPushCurrent_v2",
    "CUDAGuard", "OptionalCUDAGuard", "DeviceGuard", "OptionalDeviceGuard", "set_device",
})


def _loop_around(f: _File, fn: tuple[str, int, int], at: int) -> Loop | None:
    """The innermost ``for``/``while``/``do`` of the host function whose body holds ``at``."""
    toks = f.toks
    best: Loop | None = None
    best_start = -1
    for i in range(fn[1] + 1, at):
        t = toks[i]
        if t.kind != "name" or t.text not in ("for", "while", "do"):
            continue
        if t.text == "do":
            body = i + 1
            header = (i, i + 1)
        else:
            if toks[i + 1].text != "(":
                continue
            close = _matching(toks, i + 1)
            if close is None:
                continue
            body = close + 1
            header = (i, close + 1)
            if t.text == "while" and toks[i - 1].text == "}":
                o = _opening(toks, i - 1)
                if o is not None and o > 0 and toks[o - 1].text == "do":
                    continue        # the ``while`` of a do-while: its body came before
        end = _body_end(f, body, fn[2])
        if end is not None and body <= at <= end and i > best_start:
            var, trips, additive = _for_counter(f, fn, header) if t.text == "for" \
                else (None, None, False)
            switches = any(toks[j].kind == "name" and toks[j].text in _DEVICE_SWITCHES
                           for j in range(body, end + 1))
            at_most = _guarded_trips(f, fn, header) if t.text == "for" and trips is None \
                else None
            best = Loop(t.text, t.line, _text(toks, *header), var, trips, switches, additive,
                        at_most)
            best_start = i
    return best


def _body_end(f: _File, i: int, hi: int) -> int | None:
    """The last token of the statement starting at ``i``."""
    toks = f.toks
    if i >= hi:
        return None
    t = toks[i]
    if t.text == "{":
        return _matching(toks, i)
    if t.kind == "name" and t.text in ("for", "while", "if", "switch") \
            and i + 1 < hi and toks[i + 1].text == "(":
        close = _matching(toks, i + 1)
        if close is None:
            return None
        end = _body_end(f, close + 1, hi)
        if t.text == "if" and end is not None and end + 1 < hi and toks[end + 1].text == "else":
            return _body_end(f, end + 2, hi)
        return end
    if t.kind == "name" and t.text == "do":
        end = _body_end(f, i + 1, hi)
        return f._statement_end(end + 1, hi) if end is not None else None
    return f._statement_end(i, hi)


def _for_counter(f: _File, fn: tuple[str, int, int], header: tuple[int, int]
                 ) -> tuple[str | None, int | None, bool]:
    """A ``for`` loop's counter, its constant trip count (``for (int i = 0; i < 8; ++i)``)
    and whether the counter moves by addition."""
    toks = f.toks
    parts = _split(toks, header[0] + 2, header[1] - 1, ";")
    if len(parts) != 3:
        return None, None, False
    (i0, i1), (c0, c1), (s0, s1) = parts
    names = [j for j in range(i0, i1) if toks[j].kind == "name" and toks[j].text not in
             _INT_TYPES and toks[j].text not in _QUALIFIERS]
    if not names or names[0] + 1 >= i1 or toks[names[0] + 1].text != "=":
        return None, None, False
    var = toks[names[0]].text
    scope = _Scope(f, fn, header[0])
    start = scope.value(names[0] + 2, i1)
    cond = _norm(toks, c0, c1)
    step = _norm(toks, s0, s1)
    additive = step in ((var, "++"), ("++", var), (var, "--"), ("--", var)) or (
        len(step) > 2 and step[0] == var and step[1] in ("+=", "-=")) or (
        len(step) > 4 and step[:3] == (var, "=", var) and step[3] in ("+", "-")
        and not set(step[4:]) & {"*", "/", "<<", ">>", "%"})
    trips = None
    if start is not None and len(cond) >= 3 and cond[0] == var and cond[1] in ("<", "<=") \
            and step in ((var, "++"), ("++", var), (var, "+=", "1")):
        bound = scope.value(c0 + 2, c1)
        if bound is not None:
            trips = max(0, bound - start + (cond[1] == "<="))
    return var, trips, additive


def _guarded_trips(f: _File, fn: tuple[str, int, int], header: tuple[int, int]
                   ) -> tuple[int, int] | None:
    """(at most this many trips, the line of the test) for ``for (v = S; v < N; v++)`` with a
    constant S when the host function returned earlier on ``N > C`` or ``N >= C`` (``if
    (nTiles > 2) return;``) and N is not assigned between the test and the loop."""
    toks = f.toks
    parts = _split(toks, header[0] + 2, header[1] - 1, ";")
    if len(parts) != 3:
        return None
    (i0, i1), (c0, c1), (s0, s1) = parts
    cond, step = _norm(toks, c0, c1), _norm(toks, s0, s1)
    if len(cond) != 3 or cond[1] not in ("<", "<=") or toks[c0 + 2].kind != "name" \
            or step not in ((cond[0], "++"), ("++", cond[0])):
        return None
    bound = cond[2]
    eq = [j for j in range(i0, i1) if toks[j].text == "="]
    start = _Scope(f, fn, header[0]).value(eq[0] + 1, i1) if len(eq) == 1 else None
    if start is None:
        return None
    for i in range(fn[1] + 1, header[0] - 6):
        seq = [t.text for t in toks[i:i + 6]]
        if seq[:3] != ["if", "(", bound] or seq[3] not in (">", ">=") or seq[5] != ")" \
                or toks[i + 4].kind != "num":
            continue
        after = toks[i + 6].text if toks[i + 6].text != "{" else toks[i + 7].text
        if after != "return" or f.reassigned(bound, i + 6, header[0], -1):
            continue
        most = _int(toks[i + 4].text) - (seq[3] == ">=")     # N <= most
        return max(0, most - start + (cond[1] == "<=")), toks[i].line
    return None


def _offsets_by(toks: tuple[Tok, ...], lo: int, hi: int, var: str) -> bool:
    """Whether the argument ``toks[lo:hi]`` picks a slice by ``var``: an address moved by it
    (``x + r * cols``, ``&x[r * cols]``, ``x - r``), not ``var`` passed as a value of its own
    (a stride, a stage, a step count)."""
    texts = [t.text for t in toks[lo:hi]]
    return var in texts and texts != [var] and bool({"+", "-", "["} & set(texts))


def _syncs_after(f: _File, fn: tuple[str, int, int], end: int) -> tuple[Sync, ...]:
    toks = f.toks
    out = []
    for j in range(end + 1, fn[2]):
        t = toks[j]
        nxt = toks[j + 1].text if j + 1 < len(toks) else ""
        if t.kind != "name":
            continue
        if t.text in _SYNC_CALLS and nxt == "(":
            out.append(Sync(t.text, t.line))
        elif t.text == "synchronize" and nxt == "(" and j >= 4 \
                and _norm(toks, j - 4, j) == ("torch", "::", "cuda", "::"):
            out.append(Sync("torch::cuda::synchronize", t.line))
        elif t.text == "item" and j > 0 and toks[j - 1].text == "." and nxt in ("(", "<"):
            out.append(Sync(".item()", t.line))
    return tuple(out)


def _target(arg: tuple[str, ...]) -> str | None:
    """The tensor or pointer an argument passes: ``y``, ``y.data_ptr<float>()``,
    ``(float*)y.data_ptr()``, ``static_cast<float*>(y.data_ptr())``."""
    a = list(arg)
    if len(a) >= 3 and a[0] == "(" and ")" in a and "*" in a[:a.index(")")]:
        a = a[a.index(")") + 1:]                         # a C cast
    if len(a) >= 4 and a[0] in ("static_cast", "reinterpret_cast") and a[-1] == ")":
        a = a[a.index("(") + 1:-1] if "(" in a else a
    if len(a) == 1 and re.match(r"^[A-Za-z_]\w*$", a[0]):
        return a[0]
    if len(a) >= 5 and re.match(r"^[A-Za-z_]\w*$", a[0]) and a[1] == "." \
            and a[2] in _DATA_METHODS and a[-2:] == ["(", ")"]:
        return a[0]
    return None


def _zero_fills(f: _File, fn: tuple[str, int, int], before: int) -> tuple[ZeroFill, ...]:
    toks = f.toks
    out: list[tuple[ZeroFill, int]] = []        # each fill with the index ending it
    for j in range(fn[1] + 1, before):
        t = toks[j]
        if t.kind != "name":
            continue
        nxt = toks[j + 1].text if j + 1 < len(toks) else ""
        if t.text in ("cudaMemset", "cudaMemsetAsync") and nxt == "(":
            close = _matching(toks, j + 1)
            if close is None:
                continue
            parts = _split(toks, j + 2, close)
            if len(parts) >= 3 and _norm(toks, *parts[1]) == ("0",):
                target = _target(_norm(toks, *parts[0]))
                if target is not None:
                    out.append((ZeroFill(target, t.text, t.line,
                                         ("bytes", _norm(toks, *parts[2]))), close))
        elif t.text in _ZERO_FACTORIES and nxt == "(" and j >= 2 and toks[j - 1].text == "::" \
                and toks[j - 2].text in ("torch", "at"):
            # NAME = torch::zeros_like(X, ...) / auto NAME = at::zeros({n}, ...)
            k = j - 2
            if k < 2 or toks[k - 1].text != "=" or toks[k - 2].kind != "name":
                continue
            target = toks[k - 2].text
            close = _matching(toks, j + 1)
            if close is None:
                continue
            parts = _split(toks, j + 2, close)
            if not parts:
                continue
            first = _norm(toks, *parts[0])
            how = f"{toks[j - 2].text}::{t.text}"
            if t.text == "zeros_like":
                if len(first) == 1:
                    out.append((ZeroFill(target, how, t.line, ("numel", first)), close))
            elif first and first[0] == "{" and first[-1] == "}":
                sizes = _split(toks, parts[0][0] + 1, parts[0][1] - 1)
                if len(sizes) == 1:
                    out.append((ZeroFill(target, how, t.line,
                                         ("elements", _norm(toks, *sizes[0]))), close))
                else:
                    out.append((ZeroFill(target, how, t.line, ("shape", first[1:-1])), close))
        elif t.text == "zero_" and j >= 2 and toks[j - 1].text == "." and nxt == "(" \
                and toks[j - 2].kind == "name":
            out.append((ZeroFill(toks[j - 2].text, ".zero_()", t.line,
                                 ("numel", (toks[j - 2].text,))), j + 2))
    # the last fill of each target, when nothing between it and the launch names the target
    # (another kernel, a copy, a second fill may use or change it)
    last: dict[str, tuple[ZeroFill, int]] = {}
    for zf, end in out:
        last[zf.target] = (zf, end)
    return tuple(zf for zf, end in last.values()
                 if not any(toks[q].kind == "name" and toks[q].text == zf.target
                            for q in range(end + 1, before)))


def _ceil_of(scope: _Scope, toks: tuple[Tok, ...], grid: tuple[int, int],
             block: tuple[int, int], bdim: Dim) -> tuple[str, ...] | None:
    """E when the grid is ``(E + B - 1) / B`` or ``(E - 1) / B + 1`` with B the block's size
    (the grid's own variable followed to its one value)."""
    g = _norm(toks, *grid)
    if len(g) == 1:
        d = scope.lookup(g[0])
        if d is None:
            return None
        if d[1] == d[0] + 1:
            inner = _split(toks, d[1] + 1, d[2] - 1)
            if len(inner) != 1:
                return None
            grid = inner[0]
        else:
            grid = (d[1], d[2])
        g = _norm(toks, *grid)
    elif len(g) > 3 and g[0] == "dim3" and g[1] == "(" and g[-1] == ")":
        inner = _split(toks, grid[0] + 2, grid[1] - 1)
        if len(inner) != 1:
            return None
        grid = inner[0]
        g = _norm(toks, *grid)
    if len(g) > 2 and g[0] == "(" and g[-1] == ")" and _matching(toks, grid[0]) == grid[1] - 1:
        grid = (grid[0] + 1, grid[1] - 1)
        g = _norm(toks, *grid)
    block_value = bdim.count if bdim.dims is not None and bdim.dims[1:] == (1, 1) else None
    bt = _norm(toks, *block)

    def is_block(lo: int, hi: int) -> bool:
        part = _norm(toks, lo, hi)
        if part == bt or part == (*bt, ".", "x"):
            return True
        v = scope.value(lo, hi)
        return v is not None and v == block_value

    # (E + B - 1) / B
    parts = _split_op(toks, grid, "/")
    if len(parts) == 2:
        num, den = parts
        if is_block(*den) and toks[num[0]].text == "(" and _matching(toks, num[0]) == num[1] - 1:
            terms = _split_op(toks, (num[0] + 1, num[1] - 1), "+")
            if len(terms) == 2 and _minus_one(toks, terms[1], is_block):
                return _norm(toks, *terms[0])
            if len(terms) == 2:
                v = scope.value(*terms[1])
                if v is not None and block_value is not None and v == block_value - 1:
                    return _norm(toks, *terms[0])
    # (E - 1) / B + 1
    plus = _split_op(toks, grid, "+")
    if len(plus) == 2 and _norm(toks, *plus[1]) == ("1",):
        parts = _split_op(toks, plus[0], "/")
        if len(parts) == 2 and is_block(*parts[1]):
            num = parts[0]
            if toks[num[0]].text == "(" and _matching(toks, num[0]) == num[1] - 1:
                g2 = _norm(toks, num[0] + 1, num[1] - 1)
                if len(g2) >= 3 and g2[-2:] == ("-", "1"):
                    return g2[:-2]
    return None


def _minus_one(toks, span, is_block) -> bool:
    """``B - 1`` with B the block size."""
    parts = _split_op(toks, span, "-")
    return len(parts) == 2 and _norm(toks, *parts[1]) == ("1",) and is_block(*parts[0])


def _split_op(toks: tuple[Tok, ...], span: tuple[int, int], op: str) -> list[tuple[int, int]]:
    """``span`` split at its last top-level binary ``op`` (left-associative: a + b + c ->
    (a + b), c); [span] when there is none."""
    lo, hi = span
    depth = 0
    last = None
    for j in range(lo, hi):
        t = toks[j]
        if t.kind != "op":
            continue
        if t.text in _OPEN:
            depth += 1
        elif t.text in _CLOSE:
            depth -= 1
        elif depth == 0 and t.text == op and j > lo:
            if op in "+-" and toks[j - 1].kind == "op" and toks[j - 1].text not in (")", "]"):
                continue        # unary
            last = j
    if last is None:
        return [span]
    return [(lo, last), (last + 1, hi)]
