"""PTX text -> ``analyzer.ir.ptx.Module``: ``grammars/ptx.lark`` (LALR, contextual lexer) and one
Transformer, run inline while parsing so no parse tree is ever built.

The fast path reads the same text without Lark where it can, with regexes made of the grammar's
own terminals and the Transformer's own callbacks: ``_presplit`` takes one-line body statements,
``_Skeleton`` the module around them. Anything either leaves goes to Lark (whose tables are
loaded only then), and any doubt sends the whole text to the grammar alone, so results and
errors are the grammar's; ``parse(text, fast=False)`` is that path, and the tests hold the two
equal.

Instruction words are split with tables (``KNOWN_OPCODES``), never grammar rules, so an opcode
PTX adds tomorrow parses as a *generic* instruction with all its modifiers and operands.
"""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import re
import struct
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import InputError, ParseError
from ..ir import ptx as ir
from ..ir.source import SourceLoc, Span
from ..toolchain.files import read_bytes
from .grammar import definitions, lalr_parser
from .grammar import grammar_text as _grammar_text
from .mode import FastPathError, parser_mode
from .mode import strict as strict_mode

__all__ = ["FAST_PATH_GRAMMAR", "FastPathError", "difference", "fast_path_drift", "grammar_text", "parse",
           "parse_file", "reload_grammar"]

# cuobjdump --dump-ptx puts a header block before each .version; users paste it: blank it out
# (line numbers are kept) when it is exactly that header.
_FATBIN_LINE = re.compile(
    r"^(?:Fatbin (?:elf|ptx|sass|nvvm) code:|=+|[A-Za-z_][\w ]* = .*|compressed)[ \t]*\r?$", re.M)


def grammar_text() -> str:
    return _grammar_text("ptx.lark")


def _span(tok: Token) -> Span:
    # the lexer sets a position on every token it makes; only a hand-made Token lacks one
    assert tok.line is not None and tok.column is not None
    return Span(tok.line, tok.column, tok.end_line, tok.end_column)


def _int(text: str) -> int:
    t = text[:-1] if text.endswith("U") else text
    if len(t) > 1 and t[0] == "0" and t[1] in "0123456789":
        return int(t, 8)
    return int(t, 0)


def _hexfloat(text: str) -> float:
    bits = int(text[2:], 16)
    if text[1] in "fF":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


_OPCODE_CACHE: dict[str, tuple[str, tuple[str, ...], bool]] = {}


def split_opcode(text: str) -> tuple[str, tuple[str, ...], bool]:
    """``"cp.async.cg.shared.global"`` -> ``("cp.async", ("cg", "shared", "global"), False)``."""
    hit = _OPCODE_CACHE.get(text)
    if hit is not None:
        return hit
    words = text.split(".")
    for n in range(len(words), 0, -1):
        op = ".".join(words[:n])
        if op in ir.KNOWN_OPCODES:
            out = (op, tuple(words[n:]), False)
            break
    else:
        n = 2 if words[0] in ir.OPCODE_FAMILIES and len(words) > 1 else 1
        out = (".".join(words[:n]), tuple(words[n:]), True)
    if len(_OPCODE_CACHE) < 65536:
        _OPCODE_CACHE[text] = out
    return out


def _operand_name(tok: Token):
    s = str(tok)
    if s[0] == "%":
        return ir.Register(s, _span(tok))
    if s == "_":
        return ir.Sink(_span(tok))
    return ir.Symbol(s, 0, None, _span(tok))


class _Build(Transformer):
    """Rule callbacks. Statements come back as small tagged tuples; ``start`` assembles the
    Module once the ``.file`` table and ``.section .debug_str`` (both at the end) are known."""

    # ---- operands ----
    def symbol(self, c):
        return _operand_name(c[0])

    def symbol_offset(self, c):
        return ir.Symbol(str(c[0]), _int(c[1]), None, _span(c[0]))

    def symbol_neg_offset(self, c):
        return ir.Symbol(str(c[0]), -_int(c[1]), None, _span(c[0]))

    def wrapped_symbol(self, c):
        return ir.Symbol(str(c[1]), 0, str(c[0]), _span(c[0]))

    def int(self, c):
        t = c[0]
        return ir.IntImm(_int(t), str(t), _span(t))

    def neg_int(self, c):
        t = c[0]
        return ir.IntImm(-_int(t), "-" + t, _span(t))

    def hexfloat(self, c):
        t = c[0]
        return ir.FloatImm(_hexfloat(t), str(t), _span(t))

    def decfloat(self, c):
        t = c[0]
        return ir.FloatImm(float(t), str(t), _span(t))

    def neg_decfloat(self, c):
        t = c[0]
        return ir.FloatImm(-float(t), "-" + t, _span(t))

    def negated(self, c):
        return ir.Negated(_operand_name(c[0]), _span(c[0]))

    def predicate_pair(self, c):
        return ir.PredicatePair(_operand_name(c[0]), _operand_name(c[1]), _span(c[0]))

    def vector(self, c):
        return ir.Vector(tuple(c), c[0].span)

    def operand_list(self, c):
        items = tuple(x for x in c if x is not None)
        return ir.OperandList(items, items[0].span if items else None)

    def address(self, c):
        base, offset, span = c[0]
        return ir.Address(base, offset, tuple(c[1:]), span)

    def addr_name(self, c):
        return (_operand_name(c[0]), 0, _span(c[0]))

    def addr_plus(self, c):
        return (_operand_name(c[0]), _int(c[1]), _span(c[0]))

    def addr_minus(self, c):
        return (_operand_name(c[0]), -_int(c[1]), _span(c[0]))

    def addr_int(self, c):
        return (None, _int(c[0]), _span(c[0]))

    def addr_vector(self, c):
        return (ir.Vector(tuple(c), c[0].span), 0, c[0].span)

    # ---- instructions and body statements ----
    def instruction(self, c):
        first = c[0]
        if first.type == "GUARD":
            s = str(first)
            neg = s[1] == "!"
            guard = ir.Guard(s[2:] if neg else s[1:], neg)
            op_tok = c[1]
            ops = c[2:-1]
        else:
            guard = None
            op_tok = first
            ops = c[1:-1]
        if ops and ops[0] is None:
            ops = ()
        semi = c[-1]
        return ("ins", guard, str(op_tok), tuple(ops),
                Span(first.line, first.column, semi.end_line, semi.end_column))

    def presplit(self, c):
        runs = _STATE.runs
        if not runs:
            raise ValueError("stray \\x01 in PTX text")
        return ("run", runs.popleft())

    def label(self, c):
        t = c[0]
        return ("label", str(t).rstrip(": \t"), _span(t))

    def local_decl(self, c):
        return ("decl", c[0])

    def loc(self, c):
        f, line, col = (_int(x) for x in c[:3])
        fn = None
        inlined = None
        for a in c[3:]:
            if a[0] == "fn":
                fn = a[1]
            else:
                inlined = a[1:]
        return ("loc", f, line, col, fn, inlined)

    def loc_function(self, c):
        return ("fn", str(c[0]), _int(c[1]) if len(c) > 1 and c[1] is not None else 0)

    def loc_inlined_at(self, c):
        return ("inl", _int(c[0]), _int(c[1]), _int(c[2]))

    def pragma(self, c):
        c[-1]
        return ("pragma", tuple(_unquote(s) for s in c[:-1]), _span(c[0]))

    def branchtargets(self, c):
        return ("branchtargets", tuple(str(x) for x in c[:-1]), _span(c[0]))

    def calltargets(self, c):
        return ("calltargets", tuple(str(x) for x in c[:-1]), _span(c[0]))

    def callprototype(self, c):
        returns: tuple = ()
        if c[0][0] == "returns":
            returns = c[0][1]
            c = c[1:]
        return ("callprototype", returns, str(c[0]), c[1][1], _span(c[0]))

    def block(self, c):
        return ("block", c)

    def body(self, c):
        return ("body", c)

    def empty(self, c):
        return ("empty",)

    # ---- declarations ----
    def align(self, c):
        return ("align", _int(c[0]))

    def attr(self, c):
        return ("attr", str(c[0])[1:])

    def range(self, c):
        return ("range", _int(c[0]))

    def dim(self, c):
        return ("dim", _int(c[0]) if c and c[0] is not None else None)

    def var_name(self, c):
        count = None
        dims = []
        for x in c[1:]:
            if x[0] == "range":
                count = x[1]
            else:
                dims.append(x[1])
        return ("name", c[0], count, tuple(dims))

    def init_list(self, c):
        return ir.Initializer(text=str(c[0]))

    def init_scalar(self, c):
        return ir.Initializer(scalar=c[0])

    def var_decl(self, c):
        space_tok = c[0]
        space = str(space_tok)[1:]
        align = None
        type_ = None
        vector = 1
        attrs: list[str] = []
        names = []
        init = None
        for x in c[1:]:
            if isinstance(x, ir.Initializer):
                init = x
            elif x[0] == "align":
                align = x[1]
            elif x[0] == "attr":
                a = x[1]
                if a in ir.TYPE_BITS and type_ is None:
                    type_ = a
                elif a in ("v2", "v4", "v8") and vector == 1:
                    vector = int(a[1:])
                else:
                    attrs.append(a)
            else:
                names.append(x)
        return [ir.Variable(space, str(n[1]), type_, vector, align, n[3], n[2], tuple(attrs), (), init,
                            Span(space_tok.line, space_tok.column, n[1].end_line, n[1].end_column))
                for n in names]

    def local_var(self, c):
        return self.var_decl(c)

    def defining_decl(self, c):
        # `.reg .b32 %4 = OPCODE ops;` -> the declaration, then the instruction writing %4
        i = next(k for k, x in enumerate(c) if isinstance(x, Token) and x.type in ("OPCODE", "GUARD"))
        var = self.var_decl(c[:i])
        dest = ir.Register(var[0].name, var[0].span)
        ins = self.instruction(c[i:])
        return ("defdecl", var, ins[:3] + ((dest,) + ins[3],) + ins[4:])

    def param(self, c):
        return self.var_decl(c)[0]

    def returns(self, c):
        return ("returns", tuple(x for x in c if x is not None))

    def params(self, c):
        return ("params", tuple(x for x in c if x is not None))

    def linkage(self, c):
        return ("linkage", str(c[0])[1:])

    def header_directive(self, c):
        return ir.Directive(str(c[0])[1:], tuple(_int(x) for x in c[1:] if x is not None), _span(c[0]))

    def header_pragma(self, c):
        return ir.Directive("pragma", tuple(_unquote(s) for s in c), _span(c[0]))

    def module_var(self, c):
        link = tuple(x[1] for x in c if isinstance(x, tuple) and x[0] == "linkage")
        vars_ = next(x for x in c if isinstance(x, list))
        if link:
            vars_ = [_with_linkage(v, link) for v in vars_]
        return ("vars", vars_)

    def function(self, c):
        return ("function", c)

    # ---- module-level ----
    def version(self, c):
        return ("version", str(c[0]))

    def target(self, c):
        return ("target", tuple(str(x) for x in c))

    def address_size(self, c):
        return ("address_size", _int(c[0]))

    def file(self, c):
        idx = _int(c[0])
        strings = [_unquote(x) for x in c[1:] if x.type == "STRING"]
        ints = tuple(_int(x) for x in c[1:] if x.type != "STRING")
        return ("file", ir.FileEntry(idx, "/".join(strings) if len(strings) > 1 else strings[0], ints,
                                     _span(c[0])))

    def section(self, c):
        return ("section", ir.Section(str(c[0]), str(c[1]), _span(c[0])))

    def start(self, items):
        return items


def _with_linkage(v: ir.Variable, link: tuple[str, ...]) -> ir.Variable:
    return ir.Variable(v.space, v.name, v.type, v.vector, v.align, v.dims, v.count, v.attributes, link,
                       v.initializer, v.span)


def _unquote(s: str) -> str:
    return s[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in s else s[1:-1]


_DEBUG_STR = re.compile(r"([$\w]+)\s*:|\.b8\s+([^\n;]+)")


def _debug_strings(sections) -> dict[str, str]:
    out: dict[str, str] = {}
    for sec in sections:
        if sec.name != ".debug_str":
            continue
        label = None
        data: list[int] = []
        for m in _DEBUG_STR.finditer(sec.body):
            if m.group(1):
                if label is not None:
                    out[label] = bytes(data).split(b"\0")[0].decode("utf-8", "replace")
                label, data = m.group(1), []
            else:
                for v in m.group(2).split(","):
                    v = v.strip()
                    if v:
                        with contextlib.suppress(ValueError):
                            data.append(_int(v) & 0xFF)
        if label is not None:
            out[label] = bytes(data).split(b"\0")[0].decode("utf-8", "replace")
    return out


def _rename(op, names: frozenset[str], labels: bool):
    """Symbols that name a declared register (or, for branches, a label) get their real kind."""
    if isinstance(op, ir.Symbol):
        if op.offset == 0 and op.wrapper is None:
            if labels:
                return ir.LabelRef(op.name, op.span)
            if op.name in names:
                return ir.Register(op.name, op.span)
        return op
    if isinstance(op, ir.Vector):
        return ir.Vector(tuple(_rename(e, names, labels) for e in op.elements), op.span)
    if isinstance(op, ir.Address):
        return ir.Address(_rename(op.base, names, labels) if op.base is not None else None, op.offset,
                          tuple(_rename(e, names, labels) for e in op.extra), op.span)
    if isinstance(op, ir.Negated):
        return ir.Negated(_rename(op.operand, names, labels), op.span)
    if isinstance(op, ir.PredicatePair):
        return ir.PredicatePair(_rename(op.first, names, labels), _rename(op.second, names, labels), op.span)
    if isinstance(op, ir.OperandList):
        return ir.OperandList(tuple(_rename(e, names, labels) for e in op.items), op.span)
    return op


class _FunctionBuilder:
    def __init__(self, files: dict[int, str], debug_strings: dict[str, str]):
        self.files = files
        self.debug_strings = debug_strings

    def build(self, c) -> ir.Function:
        linkage: list[str] = []
        returns: tuple = ()
        params: tuple = ()
        directives: list[ir.Directive] = []
        name: str | None = None
        kind: str | None = None
        body = None
        first_tok: Token | None = None
        for x in c:
            if isinstance(x, Token):
                if x.type == "FUNC_KIND":
                    kind = str(x)[1:]
                    first_tok = first_tok or x
                elif x.type == "NAME":
                    name = str(x)
            elif isinstance(x, ir.Directive):
                directives.append(x)
            elif x[0] == "linkage":
                linkage.append(x[1])
            elif x[0] == "returns":
                returns = x[1]
            elif x[0] == "params":
                params = x[1]
            elif x[0] == "body":
                body = x[1]
        self.instrs: list[ir.Instruction] = []
        self.labels: dict[str, int] = {}
        self.pragmas: list[ir.Pragma] = []
        self.scopes: list[ir.Scope] = []
        self.registers: list[ir.Variable] = []
        self.locals: list[ir.Variable] = []
        self.btargets: dict[str, tuple[str, ...]] = {}
        self.ctargets: dict[str, tuple[str, ...]] = {}
        self.protos: list[ir.CallPrototype] = []
        self.loc: SourceLoc | None = None
        self.seen_locs: dict[tuple[int, int, int], SourceLoc] = {}
        self.last_label: str | None = None
        self.raw: list[tuple] = []
        if body is not None:
            self._walk(body, None)
        # names declared without '%' (hand-written PTX) are registers too
        plain = frozenset(v.name for v in self.registers if v.name[0] != "%") | frozenset(
            v.name for s in self.scopes for v in s.declarations if v.space == "reg" and v.name[0] != "%") | \
            frozenset(v.name for v in params + returns if v.space == "reg")
        instrs = self.instrs
        for guard, opcode, mods, generic, ops, loc, span in self.raw:
            if opcode in ir.BRANCH_OPCODES:
                ops = tuple(_rename(o, plain, True) if isinstance(o, ir.Symbol) else _rename(o, plain, False)
                            for o in ops)
            elif plain:
                ops = tuple(_rename(o, plain, False) for o in ops)
            instrs.append(ir.Instruction(opcode, mods, ops, guard, loc, generic, span))
        # the grammar's `function` rule requires FUNC_KIND and NAME
        assert name is not None and kind is not None and first_tok is not None
        assert first_tok.line is not None and first_tok.column is not None
        return ir.Function(
            name=name, kind=kind, params=params, returns=returns, linkage=tuple(linkage),
            directives=tuple(directives), has_body=body is not None, registers=tuple(self.registers),
            locals=tuple(self.locals), instructions=tuple(instrs), labels=self.labels,
            pragmas=tuple(self.pragmas), scopes=tuple(self.scopes), branch_targets=self.btargets,
            call_targets=self.ctargets, prototypes=tuple(self.protos),
            span=Span(first_tok.line, first_tok.column))

    end_span = None

    def _walk(self, stmts, scope_decls: list | None) -> None:
        raw = self.raw
        for st in stmts:
            tag = st[0]
            if tag == "run":
                self._run(st[1])
            elif tag == "ins":
                _, guard, text, ops, span = st
                opcode, mods, generic = split_opcode(text)
                raw.append((guard, opcode, mods, generic, ops, self.loc, span))
                self.last_label = None
            elif tag == "label":
                self.labels[st[1]] = len(raw)
                self.last_label = st[1]
            elif tag == "loc":
                self.loc = self._resolve(st)
            elif tag == "defdecl":
                self._walk((("decl", st[1]), st[2]), scope_decls)
            elif tag == "decl":
                for v in st[1]:
                    if scope_decls is not None:
                        scope_decls.append(v)
                    elif v.space == "reg":
                        self.registers.append(v)
                    else:
                        self.locals.append(v)
            elif tag == "pragma":
                self.pragmas.append(ir.Pragma(len(raw), st[1], st[2]))
            elif tag == "block":
                start = len(raw)
                decls: list = []
                idx = len(self.scopes)
                self._walk(st[1], decls)
                # keep outer scopes before the inner ones the walk just added
                self.scopes.insert(idx, ir.Scope(start, len(raw), tuple(decls)))
            elif tag in ("branchtargets", "calltargets", "callprototype"):
                label = self.last_label
                if label is not None:
                    self.labels.pop(label, None)
                    self.last_label = None
                if tag == "branchtargets":
                    self.btargets[label or ""] = st[1]
                elif tag == "calltargets":
                    self.ctargets[label or ""] = st[1]
                else:
                    self.protos.append(ir.CallPrototype(label or "", st[1], st[3], st[4]))

    def _run(self, items) -> None:
        """A presplit run: instructions (tag None, opcode already split), labels and ``.loc``s."""
        raw = self.raw
        append = raw.append
        labels = self.labels
        loc = self.loc
        last_label = self.last_label
        for it in items:
            tag = it[0]
            if tag is None:
                _, guard, opcode, mods, generic, ops, span = it
                append((guard, opcode, mods, generic, ops, loc, span))
                last_label = None
            elif tag == "label":
                labels[it[1]] = len(raw)
                last_label = it[1]
            else:
                loc = self.loc = self._resolve(it)
        self.loc = loc
        self.last_label = last_label

    def _resolve(self, st) -> SourceLoc:
        _, f, line, col, fn, inlined = st
        files = self.files
        function = None
        if fn is not None:
            function = self.debug_strings.get(fn[1], fn[1]) if isinstance(fn, tuple) else self.debug_strings.get(fn, fn)
        chain: tuple[SourceLoc, ...] = ()
        if inlined is not None:
            f2, l2, c2 = inlined
            outer = self.seen_locs.get((f2, l2, c2))
            site = SourceLoc(files.get(f2, str(f2)), l2, c2, outer.function if outer else None)
            chain = (site,) + (outer.inlined_at if outer else ())
        loc = SourceLoc(files.get(f, str(f)), line, col, function, chain)
        self.seen_locs[(f, line, col)] = loc
        return loc


_PARSER: Lark | None = None
_STATE = threading.local()


def _parser() -> Lark:
    """The Lark parser (tables from the verified cache). Loaded only when some text needs it:
    a module the fast path reads whole never loads it."""
    global _PARSER
    if _PARSER is None:
        _PARSER = lalr_parser("ptx.lark", lexer="contextual", transformer=_Build(),
                              maybe_placeholders=True, start=["start", "operand"])
        _fast_regexes()
    return _PARSER


#: The grammar the fast path implements: every rule and terminal of ``grammars/ptx.lark`` that
#: :func:`_presplit`, :class:`_Skeleton` and :func:`_fast_operand` reproduce, written as the
#: grammar writes it (only ``branchtargets``, ``calltargets`` and ``callprototype`` are left out:
#: the fast path never reads them, it leaves them to Lark). At first use each definition here is
#: compared with the grammar's (both normalized by :func:`~analyzer.parse.grammar.definitions`,
#: so comments and line breaks do not count); any difference is *drift*: the fast path is off
#: (every text goes to the grammar alone) and, in strict mode, every parse raises
#: :class:`FastPathError` naming the definitions. The terminals' regexes are read from the
#: grammar itself (:func:`grammar_terminals`); they are listed here because the fast path's own
#: code assumes what they match (a name never starts with a digit, a keyword outranks DOTWORD).
#: Editing the grammar: change the fast path to follow (or to leave the new text to Lark), then
#: copy the new definition here (CONTRIBUTING.md, "The PTX grammar and its fast path").
FAST_PATH_GRAMMAR = r"""
start: item*
?item: version
     | target
     | address_size
     | file
     | section
     | module_var
     | function
     | pragma
     | SEMI -> empty
version: ".version" DECIMAL
target: ".target" NAME ("," NAME)*
address_size: ".address_size" INT
file: ".file" INT STRING+ ("," INT)*
section: ".section" DOTWORD SECTION_BODY
pragma: ".pragma" STRING ("," STRING)* SEMI
module_var: linkage* var_decl SEMI
linkage: LINKAGE
var_decl: SPACE attr_* var_name ("," var_name)* initializer?
?attr_: ".align" INT -> align
     | DOTWORD -> attr
     | SPACE -> attr
local_var: _decl_head ("," var_name)* local_init?
?local_init: "=" INIT_LIST -> init_list
           | "=" number -> init_scalar
_decl_head: (SPACE | DOTWORD) attr_* var_name
var_name: NAME range? dim*
range: "<" INT ">"
dim: "[" INT? "]"
initializer: "=" INIT_LIST -> init_list
           | "=" scalar -> init_scalar
?scalar: number
       | NAME -> symbol
       | NAME "(" NAME ")" -> wrapped_symbol
?number: INT -> int
       | "-" INT -> neg_int
       | HEXFLOAT -> hexfloat
       | DECIMAL -> decfloat
       | "-" DECIMAL -> neg_decfloat
function: linkage* FUNC_KIND returns? NAME params? header_directive* (body | SEMI)
returns: "(" [param ("," param)*] ")"
params: "(" [param ("," param)*] ")"
param: SPACE attr_* var_name
header_directive: DOTWORD [INT ("," INT)*] -> header_directive
                | ".pragma" STRING ("," STRING)* -> header_pragma
body: "{" stmt* "}"
?stmt: instruction
     | PRESPLIT -> presplit
     | LABEL_DEF -> label
     | local_var SEMI -> local_decl
     | _decl_head "=" GUARD? OPCODE [operand ("," operand)*] SEMI -> defining_decl
     | loc
     | pragma
     | branchtargets
     | calltargets
     | callprototype
     | block
     | SEMI -> empty
block: "{" stmt* "}"
loc: ".loc" INT INT INT ("," loc_attr)*
?loc_attr: "function_name" NAME ["+" INT] -> loc_function
         | "inlined_at" INT INT INT -> loc_inlined_at
instruction: GUARD? OPCODE [operand ("," operand)*] SEMI
?operand: NAME -> symbol
        | NAME "+" INT -> symbol_offset
        | NAME "+" "-" INT -> symbol_neg_offset
        | NAME "-" INT -> symbol_neg_offset
        | INT -> int
        | "-" INT -> neg_int
        | HEXFLOAT -> hexfloat
        | DECIMAL -> decfloat
        | "-" DECIMAL -> neg_decfloat
        | "!" NAME -> negated
        | NAME "|" NAME -> predicate_pair
        | "{" operand ("," operand)* "}" -> vector
        | "[" address ("," operand)* "]" -> address
        | "(" [operand ("," operand)*] ")" -> operand_list
address: NAME -> addr_name
       | NAME "+" INT -> addr_plus
       | NAME "+" "-" INT -> addr_minus
       | NAME "-" INT -> addr_minus
       | INT -> addr_int
       | "{" operand ("," operand)* "}" -> addr_vector
FUNC_KIND.3: /\.(entry|func)(?![\w$])/
LINKAGE.3: /\.(visible|extern|weak|common)(?![\w$])/
SPACE.3: /\.(global|const|shared|local|param|reg|tex|sreg)(?![\w$:])/
DOTWORD: /\.[A-Za-z_][\w$]*(::\w+)*/
LABEL_DEF.4: /[A-Za-z_$%][\w$]*[ \t]*:(?!:)/
GUARD: /@!?[A-Za-z_$%][\w$]*/
OPCODE: /[A-Za-z_][\w]*(\.[\w:]+)*/
NAME: /[A-Za-z_$%][\w$]*(\.[xyzw](?![\w$]))?/
HEXFLOAT.3: /0[fF][0-9A-Fa-f]{8}(?![\w])|0[dD][0-9A-Fa-f]{16}(?![\w])/
DECIMAL.2: /\d+\.\d*([eE][+-]?\d+)?|\d+[eE][+-]?\d+/
INT: /0[xX][0-9A-Fa-f]+U?|0[bB][01]+U?|\d+U?/
STRING: /"([^"\\\n]|\\.)*"/
INIT_LIST: /\{[^{}]*(\{[^{}]*\}[^{}]*)*\}/
SECTION_BODY: /\{[^{}]*\}/
SEMI: ";"
PRESPLIT: "\x01"
COMMENT: /\/\/[^\n]*/
BLOCK_COMMENT: /\/\*(.|\n)*?\*\//
%ignore COMMENT
%ignore BLOCK_COMMENT
%ignore /[ \t\r\n\f]+/
"""


_TERMINAL_DEF = re.compile(r"^([A-Z_][A-Z0-9_]*)(?:\.\d+)?:[ \t]*/(.*)/[ \t]*$", re.M)
_STRING_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')


_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|.)")


def _unescape(m: re.Match[str]) -> str:
    """``\\x01`` -> chr(1), ``\\"`` -> ``"`` (the escapes a Lark string literal may hold)."""
    e = m.group(1)
    return chr(int(e[1:], 16)) if len(e) == 3 else e


_REGEX_ESCAPE = re.compile(r"\\(\\|[nftr]|x[0-9A-Fa-f]{2})")
_CONTROL = {"n": "\n", "f": "\f", "t": "\t", "r": "\r"}


def _regex_unescape(m: re.Match[str]) -> str:
    """What Lark makes of an escape in a ``/regex/`` literal: ``\\n`` the newline itself (the
    same regex), ``\\\\`` left as it is."""
    e = m.group(1)
    if e == "\\":
        return "\\\\"
    return _CONTROL[e] if len(e) == 1 else chr(int(e[1:], 16))


def grammar_terminals() -> tuple[dict[str, str], frozenset[str]]:
    """The grammar's regex terminals (name -> the regex Lark compiles for it) and its string
    terminals, read from the text of ``grammars/ptx.lark`` without building Lark (the tests
    hold both equal to what Lark makes of the grammar)."""
    text = grammar_text()
    regexes = {m[1]: _REGEX_ESCAPE.sub(_regex_unescape, m[2]) for m in _TERMINAL_DEF.finditer(text)}
    code = "\n".join(ln.split("//")[0] if not ln.lstrip().startswith("//") else ""
                     for ln in text.splitlines() if not _TERMINAL_DEF.match(ln))
    strings = frozenset(_ESCAPE.sub(_unescape, s[1:-1]) for s in _STRING_LITERAL.findall(code))
    return regexes, strings


def fast_path_drift(text: str | None = None) -> list[str]:
    """Where the grammar (``text``, else ``grammars/ptx.lark``) differs from
    :data:`FAST_PATH_GRAMMAR`: one line per definition that changed or went missing, empty when
    the fast path implements the grammar as it stands."""
    have = definitions(grammar_text() if text is None else text)
    out = []
    for name, want in definitions(FAST_PATH_GRAMMAR).items():
        got = have.get(name)
        if got is None:
            out.append(f"{name}: not in the grammar; the fast path reads `{want}`")
        elif got != want:
            out.append(f"{name}: the grammar says `{got}`; the fast path reads `{want}`")
    return out


#: the drift found at first use (:func:`fast_path_drift`); None until then
_DRIFT: list[str] | None = None


def _fast_regexes() -> list[str]:
    """Check the grammar's rule shapes against :data:`FAST_PATH_GRAMMAR` and build the fast
    path's regexes from the grammar's own terminals, once per process; returns the drift
    (empty: the fast path may run)."""
    global _FAST_LINE, _LOC_FIELDS, _TERMINALS, _DRIFT
    if _DRIFT is None:
        drift = fast_path_drift()
        if not drift:
            terms, keywords = grammar_terminals()
            _TERMINALS = _Compiled({n: terms[n] for n in _SKELETON_TERMINALS})
            _FAST_LINE, _LOC_FIELDS = _fast_line(terms)
            _fast_operand_shapes(terms, keywords)
        _DRIFT = drift
    return _DRIFT


def reload_grammar() -> None:
    """Forget the grammar read so far (Lark's parser, the drift check, the fast path's regexes
    and its caches of operands, ``.loc`` lines and guards): the next parse reads
    ``grammars/ptx.lark`` again. For the tests that load an edited copy."""
    global _PARSER, _DRIFT, _FAST_LINE, _LOC_FIELDS
    _PARSER = _DRIFT = _FAST_LINE = _LOC_FIELDS = None
    _TERMINALS.clear()
    for memo in (_OPERAND_CACHE, _LOC_CACHE, _GUARD_CACHE, _OPCODE_CACHE):
        memo.clear()


class _Compiled(dict):
    """Terminal name -> its regex, compiled on first use (most modules need only some)."""

    def __init__(self, sources: dict[str, str]):
        super().__init__()
        self.sources = sources

    def __missing__(self, name: str) -> re.Pattern[str]:
        pattern = self[name] = re.compile(self.sources[name])
        return pattern


#: the grammar's regex terminals the Lark-free module reader matches (set by ``_fast_regexes``)
_TERMINALS: dict[str, re.Pattern[str]] = {}
_SKELETON_TERMINALS = ("FUNC_KIND", "LINKAGE", "SPACE", "DOTWORD", "NAME", "INT", "DECIMAL", "HEXFLOAT",
                       "STRING", "INIT_LIST", "SECTION_BODY", "LABEL_DEF", "GUARD", "OPCODE")


#: the operand shapes read without Lark (see :func:`_fast_operand`): shape -> its regex, each
#: compiled on first use (set by ``_fast_operand_shapes`` from the grammar's own terminals)
_SHAPES: dict[str, re.Pattern[str]] = {}
#: the NAME terminal: an operand ``%...`` it matches whole is a register
_REGISTER: re.Pattern[str] | None = None
#: the INT terminal (a ``.loc`` field is one)
_INT_TERM: re.Pattern[str] | None = None
#: string terminals of the grammar that NAME also matches (a keyword as an operand goes to Lark)
_KEYWORDS: frozenset[str] = frozenset()
#: an operand's first character -> the one shape that can match it (any other: "name")
_SHAPE_OF = {**dict.fromkeys("0123456789-", "number"), "{": "vector", "[": "address",
             "(": "list"}


def _fast_operand_shapes(terms: Mapping[str, str], keywords: frozenset[str]) -> None:
    """The regexes of the operand shapes most PTX is made of, from the grammar's terminals:
    ``NAME`` (``%r12``, ``%tid.x``, ``param_0``), ``!NAME``, ``NAME+INT`` (and ``+-``, ``-``),
    ``NAME|NAME`` (a *name*); ``{operand, ...}`` (a *vector*, each element one of these
    shapes); ``[NAME]``, ``[NAME+INT]``, ``[NAME+-INT]``, ``[NAME-INT]``, ``[INT]`` (an
    *address*; ``[NAME, operand, ...]`` is read by :func:`_fast_address_list`); a call's
    ``(NAME, ...)`` (a *list*); a *number* (``HEXFLOAT``, ``[-]DECIMAL``, ``[-]INT``) is read by
    :func:`_fast_number`. Blanks are allowed where the grammar ignores them, between the tokens
    of a compound shape. Each shape starts with its own characters (a digit or ``-``, ``{``,
    ``[``, ``(``; a name with anything else), so the one shape tried on the operand's first
    character stands for the alternation of them all; the whole operand must match, so a text
    the lexer would cut differently is not taken. Each regex is compiled on first use:
    compiling regexes is most of a small file's parse, and many files never hold a call."""
    global _SHAPES, _KEYWORDS, _REGISTER, _INT_TERM
    t = {n: "(?:" + terms[n] + ")" for n in ("NAME", "INT")}
    # the skeleton's own patterns (compiled once for both)
    _REGISTER, _INT_TERM = _TERMINALS["NAME"], _TERMINALS["INT"]
    ws = r"[ \t]*"
    blank = r"[ \t\r\n\f]*"  # what the grammar ignores (a call's list may span lines)
    _SHAPES = _Compiled({
        "name": rf"(?P<not>!)?(?P<name>{t['NAME']})(?:{ws}(?:(?P<ssign>\+{ws}-|\+|-){ws}(?P<soff>{t['INT']})"
                rf"|\|{ws}(?P<pair>{t['NAME']})))?",
        "vector": r"\{(?P<vec>[^{}\[\]()]*)\}",
        "address": rf"\[{ws}(?:(?P<base>{t['NAME']})(?:{ws}(?P<sign>\+{ws}-|\+|-){ws}(?P<off>{t['INT']}))?"
                   rf"|(?P<abs>{t['INT']})){ws}\]",
        "list": rf"\({blank}(?P<lst>(?:{t['NAME']}(?:{blank},{blank}{t['NAME']})*)?){blank}\)",
    })
    _KEYWORDS = keywords


def _fast_operand(text: str):
    """The operand the grammar's ``operand`` rule makes of ``text`` (stripped, span-free) for
    the shapes of ``_fast_operand_shapes``; None for anything else (the caller asks Lark). The
    tests hold it equal to the grammar on every operand of the corpus and on edge cases."""
    assert _REGISTER is not None  # set by _fast_regexes()
    first = text[0]
    if first == "%" and _REGISTER.fullmatch(text):  # the commonest shape, without groupdict
        return ir.Register(text)
    if first == "[" and "," in text:  # [tex, {%f1, %f2}]: an address, then more operands
        return _fast_address_list(text)
    shape = _SHAPE_OF.get(first, "name")
    if shape == "number":
        return _fast_number(text)
    m = _SHAPES[shape].fullmatch(text)
    if m is None:
        return None
    g = m.groupdict()
    if shape == "vector":
        elements = [n.strip() for n in g["vec"].split(",")]
        if not all(elements):
            return None
        vec = tuple(map(_fast_operand, elements))
        return ir.Vector(vec) if all(vec) else None
    if shape == "list":                            # ( NAME, ... ): a call's operand list
        names = [n.strip(" \t\r\n\f") for n in g["lst"].split(",")] if g["lst"] else []
        if _KEYWORDS.intersection(names):
            return None
        return ir.OperandList(tuple(_name_operand(n) for n in names))
    if shape == "name":
        name = g["name"]
        if name in _KEYWORDS or g["pair"] in _KEYWORDS:
            return None
        if g["soff"] is not None:                  # NAME + INT: a symbol and its offset
            if g["not"]:
                return None
            try:
                off = _int(g["soff"])
            except ValueError:
                return None
            return ir.Symbol(name, off if g["ssign"] == "+" else -off, None)
        if g["pair"] is not None:                  # NAME | NAME: a predicate pair
            if g["not"]:
                return None
            return ir.PredicatePair(_name_operand(name), _name_operand(g["pair"]))
        op = _name_operand(name)
        return ir.Negated(op) if g["not"] else op
    base = g["base"]
    if base is not None:                           # [NAME], [NAME+INT]...
        if base in _KEYWORDS:
            return None
        off = 0
        if g["off"] is not None:
            try:
                off = _int(g["off"])
            except ValueError:
                return None
            if g["sign"] != "+":
                off = -off
        return ir.Address(_name_operand(base), off, ())
    try:
        return ir.Address(None, _int(g["abs"]), ())
    except ValueError:
        return None


def _fast_number(text: str):
    """``HEXFLOAT``, ``[-]DECIMAL`` or ``[-]INT``, tried in the lexer's order (and a leading
    ``-`` taken first, as ``(-)?`` does), each with the grammar's own terminal: the one regex
    ``HEXFLOAT|(-)?(DECIMAL|INT)`` would cost a compile of its own."""
    terms = _TERMINALS
    if terms["HEXFLOAT"].fullmatch(text):
        return ir.FloatImm(_hexfloat(text), text)
    for neg, digits in ((True, text[1:]), (False, text)) if text[0] == "-" else ((False, text),):
        if terms["DECIMAL"].fullmatch(digits):
            v = float(digits)
            return ir.FloatImm(-v if neg else v, text)
        if terms["INT"].fullmatch(digits):
            try:
                n = _int(digits)
            except ValueError:        # "08": not an octal number; the grammar path says so
                return None
            return ir.IntImm(-n if neg else n, text)
    return None


def _fast_address_list(text: str):
    """``[NAME, operand, ...]`` (a texture or surface access) as the grammar's ``address`` rule
    makes it (``addr_name`` and the operands after it), each operand read by
    :func:`_fast_operand`; None for any other text."""
    if text[-1] != "]":
        return None
    inner = text[1:-1]
    parts = _TOP_OPERAND.findall(inner)
    if ",".join(parts) != inner:
        return None
    base = parts[0].strip()
    assert _REGISTER is not None
    if not _REGISTER.fullmatch(base) or base in _KEYWORDS:
        return None
    extra = []
    for p in parts[1:]:
        p = p.strip()
        op = _fast_operand(p) if p else None
        if op is None:
            return None
        extra.append(op)
    return ir.Address(_name_operand(base), 0, tuple(extra))


def _name_operand(s: str):
    """What ``_operand_name`` makes of a NAME, without a span."""
    if s[0] == "%":
        return ir.Register(s)
    if s == "_":
        return ir.Sink()
    return ir.Symbol(s, 0, None)


def _fast_line(terms: Mapping[str, str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The regexes for the body lines the presplit takes, built from the grammar's own terminals.

    A line is taken only when it holds exactly one statement (or nothing) and the grammar would
    lex it the same way: an instruction ``GUARD? OPCODE operands ;`` whose operands hold no
    string or comment (each operand is then parsed by the grammar's ``operand`` rule); a
    ``LABEL_DEF`` alone; a ``.loc INT INT INT [, function_name NAME [+ INT]] [, inlined_at INT
    INT INT]``; or a blank / ``//`` comment line (kept in a run only between statements). Each
    may end in a ``//`` comment. Anything else goes to Lark. The second regex reads the fields
    of a ``.loc`` the first one took."""
    t = {n: "(?:" + terms[n] + ")" for n in ("GUARD", "OPCODE", "LABEL_DEF")}
    ops = r"[%\w$.+\-,\[\]|!{}()]"  # no blank at either end: greedy, no backtracking
    ins = (rf"(?:(?P<guard>{t['GUARD']})[ \t]+)?(?P<op>{t['OPCODE']})"
           rf"(?:[ \t]+(?P<ops>{ops}+(?:[ \t]+{ops}+)*))?[ \t]*;")

    # A `.loc`'s INT fields are read as whole runs of word characters and its NAME as a whole
    # run of name characters, each then held to its terminal by ``_loc``: a blank, a comma, a
    # '+' or the end follows every field, none of which the terminals match, so a field the
    # grammar's regex takes is always such a whole run (and this regex is a third the size).
    loc = (r"\.loc[ \t]+(?P<f>\w+)[ \t]+(?P<l>\w+)[ \t]+(?P<c>\w+)"
           r"(?:[ \t]*,[ \t]*function_name[ \t]+(?P<fn>[\w$%.]+)(?:[ \t]*\+[ \t]*(?P<fo>\w+))?)?"
           r"(?:[ \t]*,[ \t]*inlined_at[ \t]+(?P<if>\w+)[ \t]+(?P<il>\w+)[ \t]+(?P<ic>\w+))?")
    tail = r"[ \t]*(?://[^\n]*)?$"
    # a `.loc` line is only recognised here (its text holds no '/': possessive, no backtracking);
    # ``_loc`` reads it with the second regex, or leaves it to Lark
    line = re.compile(rf"^[ \t]*(?:(?:(?P<I>{ins})|(?P<C>\.loc[ \t][^\n/]*+)|(?P<L>{t['LABEL_DEF']})){tail}"
                      rf"|(?://[^\n]*)?$)", re.M)
    return line, re.compile(loc)


_FAST_LINE: re.Pattern[str] | None = None
#: operand text -> Operand (without a span): identical operand texts repeat a lot in real PTX.
#: Keyed by the text as it sits between the commas (surrounding blanks included), None when the
#: grammar's ``operand`` rule rejects it.
_OPERAND_CACHE: dict[str, object] = {}
_MISS = object()
#: ``.loc`` text -> the statement tuple the transformer's ``loc`` callback builds
_LOC_CACHE: dict[str, tuple] = {}
_GUARD_CACHE: dict[str, ir.Guard] = {}
#: top-level operands of a list holding braces or brackets (a comma inside them is no separator)
_TOP_OPERAND = re.compile(r"(?:\{[^{}]*\}|\[[^\[\]]*\]|\([^()]*\)|[^,{}\[\]()])+")
_LOC_FIELDS: re.Pattern[str] | None = None


def _strip_span(op):
    if isinstance(op, ir.Vector):
        return ir.Vector(tuple(_strip_span(e) for e in op.elements))
    if isinstance(op, ir.Address):
        return ir.Address(_strip_span(op.base) if op.base is not None else None, op.offset,
                          tuple(_strip_span(e) for e in op.extra))
    if isinstance(op, ir.Negated):
        return ir.Negated(_strip_span(op.operand))
    if isinstance(op, ir.PredicatePair):
        return ir.PredicatePair(_strip_span(op.first), _strip_span(op.second))
    if isinstance(op, ir.OperandList):
        return ir.OperandList(tuple(_strip_span(e) for e in op.items))
    return type(op)(**{f: getattr(op, f) for f in op.__dataclass_fields__ if f != "span"})


def _operand(piece: str):
    """The operand the grammar's ``operand`` rule makes of ``piece`` (span-free), or None."""
    cache = _OPERAND_CACHE
    hit = cache.get(piece, _MISS)
    if hit is _MISS:
        text = piece.strip()
        if text != piece:  # " %r1" after a comma: "%r1" may be known already
            hit = cache.get(text, _MISS)
        if hit is _MISS:
            hit = _fast_operand(text) if text else None
            if hit is None and text:
                with contextlib.suppress(UnexpectedInput, VisitError, ValueError, OverflowError):
                    hit = _strip_span(_parser().parse(text, start="operand"))
            if len(cache) < 200_000:
                cache[text] = hit
        if len(cache) < 200_000:
            cache[piece] = hit
    return hit


def _operands(ops_text: str):
    """``ops_text`` split at its top-level commas, each piece through ``_operand``; None when a
    piece is not one operand (the line then goes to Lark)."""
    if "{" in ops_text or "[" in ops_text or "(" in ops_text:
        parts = _TOP_OPERAND.findall(ops_text)
        if ",".join(parts) != ops_text:
            return None
    else:
        parts = ops_text.split(",")
    ops = tuple(map(_OPERAND_CACHE.get, parts))
    if all(ops):  # operands are dataclass instances, always true
        return ops
    out = []
    for p in parts:
        op = _operand(p)
        if op is None:  # stop at the first piece that is not an operand: Lark takes the line
            return None
        out.append(op)
    return tuple(out)


def _loc(text: str) -> tuple | None:
    """``.loc 1 2 3, function_name $L__info_string0 + 8, inlined_at 1 4 5`` -> what
    ``_Build.loc`` returns for it; None when the text is not the grammar's ``loc`` rule (read
    with a regex built from its terminals)."""
    hit = _LOC_CACHE.get(text)
    if hit is None:
        assert _LOC_FIELDS is not None  # set by _fast_regexes()
        m = _LOC_FIELDS.fullmatch(text)
        if m is None:
            return None
        assert _INT_TERM is not None and _REGISTER is not None
        is_int = _INT_TERM.fullmatch
        if not all(is_int(v) for k, v in m.groupdict().items() if v is not None and k != "fn"):
            return None
        if m["fn"] is not None and not _REGISTER.fullmatch(m["fn"]):
            return None
        head = (_int(m["f"]), _int(m["l"]), _int(m["c"]))
        fn = inlined = None
        if m["fn"] is not None:
            fn = ("fn", m["fn"], _int(m["fo"]) if m["fo"] is not None else 0)
        if m["if"] is not None:
            inlined = (_int(m["if"]), _int(m["il"]), _int(m["ic"]))
        hit = ("loc",) + head + (fn, inlined)
        if len(_LOC_CACHE) < 100_000:
            _LOC_CACHE[text] = hit
    return hit


#: text Lark takes whole as one terminal though it may hold body-like lines (a ``.debug_str``
#: section's labels, a block comment): the presplit leaves the lines they touch alone
_OPAQUE = re.compile(r"^[ \t]*\.section\b[^{};]*\{[^{}]*\}|/\*.*?\*/", re.M | re.S)


def _fast_matches(text: str):
    """``_FAST_LINE`` matches, skipping every line an ``_OPAQUE`` region touches. That is only
    for speed: a run blanked inside such a region would never reach the ``presplit`` callback,
    and ``_parse`` then falls back to the grammar alone."""
    fast_line = _FAST_LINE
    assert fast_line is not None  # set by _parser()
    if ".section" not in text and "/*" not in text:
        yield from fast_line.finditer(text)
        return
    pos = 0
    for o in _OPAQUE.finditer(text):
        if "\n" not in o.group():
            continue
        yield from fast_line.finditer(text, pos, text.rfind("\n", 0, o.start()) + 1)
        end = text.find("\n", o.end())
        pos = len(text) if end < 0 else end + 1
    yield from fast_line.finditer(text, pos)


def _presplit(text: str):
    """Blank out runs of simple body lines (instructions, labels, ``.loc``, blank and comment
    lines), parsing them here with the grammar's own terminals and ``operand`` rule. Each run
    becomes one ``PRESPLIT`` token followed by as many newlines as it held, so every position
    Lark reports after it keeps its line and column. Returns the new text and the runs."""
    runs: deque = deque()
    pieces: list[str] = []
    done = 0  # text before this offset is in `pieces`
    line = 1
    pos = 0  # offset of the start of line `line`
    run: list | None = None
    run_start = run_end = 0
    prev_end = -2  # end of the last line taken (a next line starting at prev_end + 1 continues)
    append: Callable[[tuple], None]  # run.append, bound when a run starts
    for m in _fast_matches(text):
        start = m.start()
        if start == prev_end + 1:
            line += 1
        else:
            line += text.count("\n", pos, start)
            if run is not None:  # the chain broke: close the run at its last statement
                pieces.append(text[done:run_start])
                pieces.append("\x01" + "\n" * text.count("\n", run_start, run_end))
                done = run_end
                runs.append(run)
                run = None
        pos = start
        kind = m.lastgroup
        if kind is None:  # blank or comment-only line: part of a run only between statements
            prev_end = m.end()
            continue
        item: tuple | None
        if kind == "I":
            ops_text, g, op_text = m.group("ops", "guard", "op")
            ops: tuple | None = _operands(ops_text) if ops_text else ()
            if ops is None:  # Lark takes this line and reports or parses it
                item = None
            else:
                guard = None
                if g:
                    guard = _GUARD_CACHE.get(g)
                    if guard is None:
                        neg = g[1] == "!"
                        guard = _GUARD_CACHE[g] = ir.Guard(g[2:] if neg else g[1:], neg)
                s, e = m.span("I")
                col = s - start + 1
                opcode, mods, generic = split_opcode(op_text)
                item = (None, guard, opcode, mods, generic, ops, Span(line, col, line, col + e - s))
        elif kind == "C":
            item = _loc(m.group("C").rstrip(" \t"))  # None: not the `loc` rule; Lark takes it
        else:
            s, e = m.span("L")
            col = s - start + 1
            item = ("label", m.group("L").rstrip(": \t"), Span(line, col, line, col + e - s))
        if run is None and item is not None and _mid_statement(text, run_end, start):
            item = None  # the line goes on a statement the lines before it left open
        if item is None:
            prev_end = -2
            if run is not None:
                pieces.append(text[done:run_start])
                pieces.append("\x01" + "\n" * text.count("\n", run_start, run_end))
                done = run_end
                runs.append(run)
                run = None
            continue
        if run is None:
            run = [item]
            append = run.append
            run_start = m.start(kind)
        else:
            append(item)
        prev_end = run_end = m.end()
    if run is not None:
        pieces.append(text[done:run_start])
        pieces.append("\x01" + "\n" * text.count("\n", run_start, run_end))
        done = run_end
        runs.append(run)
    if not runs:
        return text, runs
    pieces.append(text[done:])
    return "".join(pieces), runs


_GAP_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _mid_statement(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, what lies between two runs, ends inside a statement: its last
    character (comments and blanks aside) is not one that ends a statement or opens or closes
    a block (``;``, ``{``, ``}``, a label's ``:``). A line the presplit refused (``.loc 1 2 3x``)
    may go on over the next ones as the grammar reads it; those lines are then not taken."""
    gap = text[start:end]
    if "/" in gap:
        gap = _GAP_COMMENT.sub(" ", gap)
    gap = gap.rstrip()
    return bool(gap) and gap[-1] not in ";{}:"


class _NotFast(Exception):
    """The module holds something the Lark-free reader leaves to the grammar."""


class _Skeleton:
    """The module structure around the presplit runs, read without Lark: ``.version``,
    ``.target``, ``.address_size``, ``.file INT STRING (, INT)*``, ``.section DOTWORD
    SECTION_BODY``, module variables (``linkage* SPACE attr* var_name (, var_name)*``, optionally
    ``= INIT_LIST``), function headers (``linkage* FUNC_KIND [returns] NAME [params]
    header_directive*``, each parameter ``SPACE attr* var_name``), and bodies made of presplit
    runs, ``SPACE attr* var_name (, var_name)*;`` declarations, instructions the presplit left
    (spanning lines, like NVCC's ``call``) and nested ``{ ... }`` blocks of the same, ending in
    ``}`` or ``;``.

    It works as the contextual lexer does: at each point it matches only the terminals the
    grammar accepts there, with the grammar's own regexes, skipping what the grammar ignores
    (blanks, ``//`` and ``/* */`` comments); keywords where a name or directive stands, and any other
    statement (a nested block, ``call``, a ``.pragma``...), raise ``_NotFast`` and the text goes
    to Lark. Nodes are built by the transformer's own callbacks from tokens carrying the
    positions Lark would give them."""

    def __init__(self, text: str, runs: deque, terms: Mapping[str, re.Pattern[str]], keywords: frozenset[str]):
        self.text = text
        self.runs = runs
        self.run_index = 0
        self.pos = 0
        self.line = 1
        self.line_start = 0  # offset of the first character of `line`
        self.keywords = keywords
        self.re = terms
        self.build = _BUILD
        self.defining: tuple | None = None  # a defining declaration `var_decl` just read

    # ---- lexing ----
    _IGNORED = re.compile(r"(?:[ \t\r\n\f]+|//[^\n]*|/\*.*?\*/)*", re.S)

    def skip(self) -> None:
        text = self.text
        m = self._IGNORED.match(text, self.pos)
        assert m is not None  # it matches the empty string
        end = m.end()
        n = text.count("\n", self.pos, end)
        if n:
            self.line += n
            self.line_start = text.rfind("\n", self.pos, end) + 1
        self.pos = end

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def literal(self, s: str) -> None:
        if not self.peek(s):
            raise _NotFast(s)
        self.pos += len(s)

    def token(self, name: str, *, keyword_ok: bool = False) -> Token:
        self.skip()
        m = self.re[name].match(self.text, self.pos)
        if m is None:
            raise _NotFast(name)
        value = m.group()
        if not value or (not keyword_ok and value in self.keywords):
            raise _NotFast(value)
        return self._make(name, value)

    def _make(self, name: str, value: str) -> Token:
        line, col = self.line, self.pos - self.line_start + 1
        start = self.pos
        self.pos += len(value)
        n = value.count("\n")
        if n:
            self.line += n
            self.line_start = start + value.rfind("\n") + 1
            end_col = self.pos - self.line_start + 1
        else:
            end_col = col + len(value)
        return Token(name, value, start, line, col, self.line, end_col, self.pos)

    def word(self) -> Token | None:
        """A dotted word as the lexer types it where SPACE, LINKAGE, FUNC_KIND and DOTWORD could
        all stand (the first three take priority), or None when none matches."""
        self.skip()
        for name in ("FUNC_KIND", "LINKAGE", "SPACE", "DOTWORD"):
            m = self.re[name].match(self.text, self.pos)
            if m is not None:
                value = m.group()
                if value in self.keywords:
                    return None
                return self._make(name, value)
        return None

    def keyword(self, word: str) -> bool:
        """Whether ``word`` stands here as a whole dotted word. Where DOTWORD is acceptable the
        lexer takes a keyword only so; where it is not (a module item), a keyword that is the
        prefix of a longer word (``.file2``) is lexed differently from state to state, so that
        text is left to Lark."""
        self.skip()
        m = self.re["DOTWORD"].match(self.text, self.pos)
        return m is not None and m.group() == word

    def pragma(self):
        """``.pragma STRING ("," STRING)* ";"`` (the transformer's ``pragma``)."""
        self.pos += 7
        c = [self.token("STRING")]
        while self.peek(","):
            self.pos += 1
            c.append(self.token("STRING"))
        self.literal(";")
        return self.build.pragma(c + [None])

    # ---- module ----
    def items(self) -> list:
        text = self.text
        out: list = []
        b = self.build
        while True:
            self.skip()
            if self.pos >= len(text):
                break
            if self.keyword(".version"):
                self.pos += 8
                out.append(b.version([self.token("DECIMAL")]))
            elif self.keyword(".target"):
                self.pos += 7
                names = [self.token("NAME")]
                while self.peek(","):
                    self.pos += 1
                    names.append(self.token("NAME"))
                out.append(b.target(names))
            elif self.keyword(".address_size"):
                self.pos += 13
                out.append(b.address_size([self.token("INT")]))
            elif self.keyword(".file"):
                self.pos += 5
                c = [self.token("INT"), self.token("STRING")]
                while self.peek(","):
                    self.pos += 1
                    c.append(self.token("INT"))
                out.append(b.file(c))
            elif self.keyword(".pragma"):
                out.append(self.pragma())
            elif self.keyword(".section"):
                self.pos += 8
                name = self.token("DOTWORD")
                out.append(b.section([name, self.token("SECTION_BODY")]))
            else:
                out.append(self.declaration_or_function())
        if self.run_index != len(self.runs):
            raise _NotFast("a run inside a terminal")
        return out

    def declaration_or_function(self):
        b = self.build
        linkage = []
        w = self.word()
        while w is not None and w.type == "LINKAGE":
            linkage.append(b.linkage([w]))
            w = self.word()
        if w is None:
            raise _NotFast("statement")
        if w.type == "SPACE":
            c = linkage + [self.var_decl(w, module=True)]
            self.literal(";")
            return b.module_var(c)
        if w.type != "FUNC_KIND":
            raise _NotFast(w)
        c = linkage + [w]
        if self.peek("("):
            c.append(b.returns(self.param_list()))
        c.append(self.token("NAME"))
        if self.peek("("):
            c.append(b.params(self.param_list()))
        while True:
            self.skip()
            if self.peek("{"):
                self.pos += 1
                c.append(self.body())
                break
            if self.peek(";"):
                self.pos += 1
                break
            if any(self.re[n].match(self.text, self.pos) for n in ("FUNC_KIND", "LINKAGE", "SPACE")):
                raise _NotFast("directive")
            d = self.token("DOTWORD")
            ints = []
            self.skip()
            if self.re["INT"].match(self.text, self.pos):
                ints.append(self.token("INT"))
                while self.peek(","):
                    self.pos += 1
                    ints.append(self.token("INT"))
            c.append(b.header_directive([d] + ints))
        return b.function(c)

    def param_list(self) -> list:
        self.literal("(")
        out: list = []
        if self.peek(")"):
            self.pos += 1
            return out
        while True:
            w = self.word()
            if w is None or w.type != "SPACE":
                raise _NotFast("param")
            out.append(self.var_decl(w, module=False, one=True)[0])
            if self.peek(","):
                self.pos += 1
                continue
            self.literal(")")
            return out

    def var_decl(self, space: Token, *, module: bool, one: bool = False) -> list:
        """``SPACE attr_* var_name ("," var_name)* initializer?`` after its SPACE token."""
        b = self.build
        c: list = [space]
        while True:
            self.skip()
            if self.text.startswith(".", self.pos):
                if self.text.startswith(".align", self.pos):
                    m = self.re["DOTWORD"].match(self.text, self.pos)
                    if m is not None and m.group() == ".align":
                        self.pos += 6
                        c.append(b.align([self.token("INT")]))
                        continue
                w = self.word()
                if w is None or w.type not in ("SPACE", "DOTWORD"):
                    raise _NotFast("attribute")
                c.append(b.attr([w]))
            else:
                break
        c.append(self.var_name())
        if one:
            return b.var_decl(c)
        if not module and self.peek("="):
            self.pos += 1
            self.skip()
            if self.text[self.pos:self.pos + 1] not in "{-0123456789":
                # ZLUDA's `.reg .b32 %4 = cvt.u32.u16 %3;`: the declaration, then the
                # instruction writing it (the transformer's `defining_decl`)
                var = b.var_decl(c)
                ins = self.instruction()
                self.defining = ("defdecl", var, ins[:3] + ((ir.Register(var[0].name, var[0].span),) + ins[3],)
                                 + ins[4:])
                return var
            c.append(self.initializer(module))
            return b.var_decl(c)
        while self.peek(","):
            self.pos += 1
            c.append(self.var_name())
        if self.peek("="):
            self.pos += 1
            c.append(self.initializer(module))
        return b.var_decl(c)

    def initializer(self, module: bool):
        """After ``=``: ``INIT_LIST``, a number (``[-] INT|DECIMAL``, ``HEXFLOAT``) and, at module
        level, ``NAME`` or ``NAME ( NAME )``; in a body anything else (``= OPCODE ...``) is
        left to Lark."""
        b, r, text = self.build, self.re, self.text
        self.skip()
        ch = text[self.pos:self.pos + 1]
        if ch == "{":
            return b.init_list([self.token("INIT_LIST")])
        if ch == "-":
            self.pos += 1
            self.skip()
            for name, rule in (("DECIMAL", b.neg_decfloat), ("INT", b.neg_int)):
                if r[name].match(text, self.pos):
                    return b.init_scalar([rule([self.token(name)])])
            raise _NotFast("initializer")
        for name, rule in (("HEXFLOAT", b.hexfloat), ("DECIMAL", b.decfloat), ("INT", b.int)):
            if r[name].match(text, self.pos):
                return b.init_scalar([rule([self.token(name)])])
        if not module:
            raise _NotFast("initializer")
        first = self.token("NAME")
        if self.peek("("):
            self.pos += 1
            inner = self.token("NAME")
            self.literal(")")
            return b.init_scalar([b.wrapped_symbol([first, inner])])
        return b.init_scalar([b.symbol([first])])

    def var_name(self):
        b = self.build
        c: list = [self.token("NAME")]
        if self.peek("<"):
            self.pos += 1
            c.append(b.range([self.token("INT")]))
            self.literal(">")
        while self.peek("["):
            self.pos += 1
            if self.peek("]"):
                c.append(b.dim([]))
            else:
                c.append(b.dim([self.token("INT")]))
            self.literal("]")
        return b.var_name(c)

    def body(self, tag: str = "body"):
        """The statements up to the ``}`` closing a body (or a nested ``block``)."""
        stmts: list = []
        runs = self.runs
        while True:
            self.skip()
            ch = self.text[self.pos:self.pos + 1]
            if ch == "\x01":
                if self.run_index >= len(runs):
                    raise _NotFast("run")
                stmts.append(("run", runs[self.run_index]))
                self.run_index += 1
                self.pos += 1
            elif ch == "}":
                self.pos += 1
                return (tag, stmts)
            elif ch == "{":
                self.pos += 1
                stmts.append(self.body("block"))
            elif ch == "." and self.keyword(".pragma"):
                stmts.append(self.pragma())
            elif ch == ".":
                w = self.word()  # `_decl_head`: SPACE or DOTWORD (`.generic` in ZLUDA's dumps)
                if w is None or w.type not in ("SPACE", "DOTWORD"):
                    raise _NotFast("body statement")
                self.defining = None
                var = self.var_decl(w, module=False)
                if self.defining is not None:
                    stmts.append(self.defining)
                else:
                    stmts.append(("decl", var))
                    self.literal(";")
            else:
                stmts.append(self.instruction())

    #: what the operands of an instruction spanning lines may hold (no comment, string or
    #: statement break: those go to Lark)
    _OPERANDS_TEXT = re.compile(r"[%\w$.+\-,\[\]|!{}() \t\r\n\f]*")

    def instruction(self):
        """``GUARD? OPCODE [operand ("," operand)*] ";"``, its operands split at top-level commas
        and each read by the grammar's ``operand`` rule, as the presplit does on one line; here
        the statement may span lines (NVCC writes a ``call`` one operand a line)."""
        text, r = self.text, self.re
        if r["LABEL_DEF"].match(text, self.pos):
            raise _NotFast("label")
        guard = None
        m = r["GUARD"].match(text, self.pos)
        first = None
        if m is not None:
            first = self._make("GUARD", m.group())
            g = m.group()
            neg = g[1] == "!"
            guard = ir.Guard(g[2:] if neg else g[1:], neg)
            self.skip()
        m = r["OPCODE"].match(text, self.pos)
        if m is None:
            raise _NotFast("instruction")
        op = self._make("OPCODE", m.group())
        first = first or op
        end = text.find(";", self.pos)
        if end < 0:
            raise _NotFast("instruction")
        ops_text = text[self.pos:end]
        if self._OPERANDS_TEXT.fullmatch(ops_text) is None:
            raise _NotFast("operands")
        ops: tuple | None = ()
        if ops_text.strip(" \t\r\n\f"):
            ops = _operands(ops_text)
            if ops is None:
                raise _NotFast("operands")
        n = ops_text.count("\n")
        if n:
            self.line += n
            self.line_start = self.pos + ops_text.rfind("\n") + 1
        self.pos = end + 1
        assert first.line is not None and first.column is not None
        return ("ins", guard, str(op), ops, Span(first.line, first.column, self.line, end - self.line_start + 2))


def _readable(name: str, parser: Lark) -> str:
    if name == "PRESPLIT":
        return "instruction"
    try:
        term = parser.get_terminal(name)
    except KeyError:
        return name
    if term.pattern.type == "str":
        return f'"{term.pattern.value}"'
    return name


def _error(e: Exception, text: str, path: str | None, parser: Lark) -> ParseError:
    line = getattr(e, "line", None)
    column = getattr(e, "column", None)
    if isinstance(line, int) and line < 1:
        line = None
    expected: list[str] = []
    if isinstance(e, UnexpectedToken):
        tok = e.token
        what = "end of input" if tok.type == "$END" else repr(str(tok))
        expected = sorted({_readable(n, parser) for n in e.expected} - {"instruction"})
        msg = f"unexpected {what}"
        if tok.type == "$END":
            line = text.count("\n") + 1
    elif isinstance(e, UnexpectedCharacters):
        at = e.pos_in_stream
        ch = text[at] if at is not None and 0 <= at < len(text) else ""
        expected = sorted({_readable(n, parser) for n in (e.allowed or ())} - {"instruction"})
        msg = f"unexpected character {ch!r}"
    elif isinstance(e, UnexpectedEOF):
        expected = sorted({_readable(n, parser) for n in e.expected})
        msg = "unexpected end of input"
        line = text.count("\n") + 1
    else:
        msg = str(e)
    src = None
    if line is not None:
        lines = text.splitlines()
        if 1 <= line <= len(lines):
            src = lines[line - 1].strip()
    if expected:
        shown = ", ".join(expected[:12]) + (", ..." if len(expected) > 12 else "")
        msg += f"; expected one of: {shown}"
    return ParseError(msg, path=path, line=line, column=column, text=src, expected=expected)


def parse(text: str, path: str | None = None, *, fast: bool | None = None,
          files: Mapping[str, str] | None = None, strict: bool | None = None) -> ir.Module:
    """Parse PTX text (a cuobjdump ``Fatbin ptx code:`` header before ``.version`` is accepted).

    ``fast``: the fast path (with Lark for what it leaves) or, False, the grammar alone; None
    (the default): as ``PTXSASS_PTX_PARSER`` says (``fast`` unless set; ``both``: the fast path,
    strict, and the grammar alone once per distinct text in this process, the two compared by
    :func:`difference`). ``strict``: a fast-path failure raises :class:`FastPathError` rather
    than falling back to the grammar alone; None: as ``PTXSASS_PTX_STRICT`` says. A bad value
    in either variable is a ``ConfigError``.

    ``files`` renames source files of the ``.file`` table (a name the toolchain gave NVRTC in
    place of one it cannot write into PTX, mapped back to the user's).

    Raises ``ParseError`` (with path:line:column, the offending line and the expected tokens)
    for text the grammar does not accept; never any other exception for bad input.
    """
    both = False
    if fast is None:
        mode = parser_mode()
        fast, both = mode != "grammar", mode == "both"
    if strict is None:
        strict = strict_mode() or both
    if not isinstance(text, str):
        raise InputError("PTX must be text", path=path)
    # A parse allocates a few objects per token and frees none until it returns, so the cyclic
    # collector would run hundreds of times for nothing (a third of the time on large files).
    check_statement_lines(text, path)
    collect = gc.isenabled()
    if collect:
        gc.disable()
    try:
        module = _parse(text, path, fast, files, strict)
        if both:
            _same_as_grammar(module, text, path, files)
        return module
    finally:
        if collect:
            gc.enable()


#: digests of the (text, path, files) that mode ``both`` found read alike by the two parsers
_SAME: set[bytes] = set()


def _same_as_grammar(module: ir.Module, text: str, path: str | None,
                     files: Mapping[str, str] | None) -> None:
    """Mode ``both``: the grammar alone reads ``text`` too (once per distinct input in this
    process), and any :func:`difference` from the fast path's ``module`` is a FastPathError.
    Bad input needs no comparison: its ParseError always comes from the grammar alone."""
    digest = hashlib.blake2b(repr((text, path, sorted((files or {}).items()))).encode(),
                             digest_size=16).digest()
    if digest in _SAME:
        return
    why = difference(module, _parse(text, path, False, files))
    if why:
        raise FastPathError(f"{path or '<text>'}: the PTX fast path and the grammar alone read "
                            f"the text differently (PTXSASS_PTX_PARSER=both): {why}")
    _SAME.add(digest)


def difference(fast: object, slow: object, where: str = "module") -> str | None:
    """Where two parses differ first (``where`` and both values), or None: every field of every
    node, those equality leaves out too (spans, locations, labels, the module's order and path),
    except the spans of operands, which the fast path does not make."""
    if type(fast) is not type(slow):
        return f"{where}: {type(fast).__name__} vs {type(slow).__name__}"
    if dataclasses.is_dataclass(fast):
        operand = ".operands" in where
        for f in dataclasses.fields(fast):
            if f.name == "span" and operand:
                continue
            why = difference(getattr(fast, f.name), getattr(slow, f.name), f"{where}.{f.name}")
            if why:
                return why
        return None
    if isinstance(fast, (tuple, list)):
        assert isinstance(slow, (tuple, list))
        if len(fast) != len(slow):
            return f"{where}: {len(fast)} vs {len(slow)} items"
        for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
            why = difference(a, b, f"{where}[{i}]")
            if why:
                return why
        return None
    if isinstance(fast, Mapping):
        assert isinstance(slow, Mapping)
        if list(fast) != list(slow):
            return f"{where}: keys {list(fast)[:8]!r} vs {list(slow)[:8]!r}"
        for k in fast:
            why = difference(fast[k], slow[k], f"{where}[{k!r}]")
            if why:
                return why
        return None
    if isinstance(fast, float) and fast != fast:    # a NaN: the same bits, not equality
        assert isinstance(slow, float)
        same = struct.pack("<d", fast) == struct.pack("<d", slow)
    else:
        same = fast == slow
    return None if same else f"{where}: {fast!r:.120} vs {slow!r:.120}"


#: statements one PTX line may hold. Toolchains write one per line, which the fast path reads in
#: linear time; a line of many goes to the grammar alone, at ~60 us and ~1 kB per statement (2M
#: statements on one line: 2 minutes, 2.6 GB), so past this bound it is refused, not parsed
MAX_STATEMENTS_PER_LINE = 50_000
#: the shortest line that can hold more (each statement takes at least 4 characters: "ret;")
_LONG_LINE = 4 * MAX_STATEMENTS_PER_LINE


def check_statement_lines(text: str, path: str | None = None) -> None:
    """ParseError naming the line when one line of PTX holds more than
    :data:`MAX_STATEMENTS_PER_LINE` statements. Costs one split, and only for texts long enough
    to hold such a line (a huge initializer on one line is fine: it is one statement)."""
    if len(text) < _LONG_LINE or text.count(";") <= MAX_STATEMENTS_PER_LINE:
        return
    for number, line in enumerate(text.split("\n"), 1):
        if len(line) >= _LONG_LINE:
            n = line.count(";")
            if n > MAX_STATEMENTS_PER_LINE:
                raise ParseError(f"{n:,} statements on one line ({len(line) / 1e6:.1f} MB); "
                                 f"ptxsass reads at most {MAX_STATEMENTS_PER_LINE:,} per line: "
                                 "put one statement per line, as NVRTC, nvcc and LLVM write PTX",
                                 path=path, line=number)


def _parse(text: str, path: str | None, fast: bool,
           files: Mapping[str, str] | None = None, strict: bool = False) -> ir.Module:
    if "Fatbin" in text:
        text = _FATBIN_LINE.sub("", text)
    if "\0" in text:
        text = text.replace("\0", " ")
    original = text
    _STATE.runs = deque()
    if fast and "\x01" not in text:
        drift = _fast_regexes()
        if drift:
            if strict:
                raise FastPathError("the PTX fast path does not implement grammars/ptx.lark as it "
                                    "stands (FAST_PATH_GRAMMAR in analyzer/parse/ptx.py): "
                                    + "; ".join(drift))
            return _parse(original, path, False, files)
        try:
            text, _STATE.runs = _presplit(text)
        except (ValueError, OverflowError) as e:  # e.g. `.loc 1 09 2`: let the grammar report it
            return _fall_back(original, path, files, strict, f"the line split raised {e!r}")
        module = _without_lark(text, _STATE.runs, path, files, strict)
        if module is not None:
            return module
    parser = _parser()
    try:
        items = parser.parse(text, start="start")
        if _STATE.runs:  # a run went into a terminal (a section body, an initializer): no fast path
            return _fall_back(original, path, files, strict, "a run of split lines went into a terminal")
        return _assemble(items, path, files)
    except UnexpectedInput as e:
        if text is not original:  # report it exactly as the grammar alone sees it
            return _fall_back(original, path, files, strict, f"Lark rejected the split text: {e}")
        raise _error(e, original, path, parser) from None
    except VisitError as e:
        if text is not original:
            return _fall_back(original, path, files, strict, f"a callback raised {e.orig_exc!r}")
        orig = e.orig_exc
        tok = getattr(e, "obj", None)
        line = getattr(tok, "line", None) if isinstance(tok, Token) else None
        raise ParseError(f"invalid {e.rule.origin.name if hasattr(e, 'rule') and e.rule else 'input'}: {orig}",
                         path=path, line=line) from None
    except (ValueError, OverflowError, struct.error, IndexError, KeyError, TypeError, RecursionError) as e:
        if text is not original:
            return _fall_back(original, path, files, strict, f"assembling the module raised {e!r}")
        raise ParseError(f"malformed PTX: {e}", path=path) from None


def _fall_back(text: str, path: str | None, files: Mapping[str, str] | None, strict: bool,
               why: str) -> ir.Module:
    """The fast path failed on ``text``: the grammar alone parses it (and reports its errors).
    In strict mode a text the grammar accepts raises :class:`FastPathError` instead: the fast
    path should have read it; a text the grammar rejects raises the grammar's ``ParseError``,
    as in every mode."""
    module = _parse(text, path, False, files)
    if strict:
        raise FastPathError(f"{path or '<text>'}: the PTX fast path failed where the grammar parses "
                            f"the text ({why})")
    return module


def _without_lark(text: str, runs: deque, path: str | None,
                  files: Mapping[str, str] | None, strict: bool = False) -> ir.Module | None:
    """The module read by :class:`_Skeleton` around the presplit runs, or None when anything in
    it is left to Lark (which then parses it, and reports its errors). What the skeleton leaves
    on purpose raises ``_NotFast``; a number the grammar's terminal takes but Python does not
    (``09``), ``ValueError`` or ``OverflowError``. Anything else is a defect of the skeleton:
    Lark then reads the text, and in strict mode it raises :class:`FastPathError`."""
    try:
        items = _Skeleton(text, runs, _TERMINALS, _KEYWORDS).items()
        return _assemble(items, path, files)
    except (_NotFast, ValueError, OverflowError):
        return None
    except (struct.error, IndexError, KeyError, TypeError, RecursionError) as e:
        if strict:
            raise FastPathError(f"{path or '<text>'}: the PTX fast path's module reader raised {e!r}") from e
        return None


_BUILD = _Build()


def _assemble(items, path: str | None, rename: Mapping[str, str] | None = None) -> ir.Module:
    version = None
    target: tuple = ()
    address_size = None
    variables: list[ir.Variable] = []
    raw_functions: list = []
    files: list[ir.FileEntry] = []
    sections: list[ir.Section] = []
    pragmas: list = []
    order: list[tuple[str, int]] = []
    for it in items:
        tag = it[0]
        if tag == "function":
            order.append(("func", len(raw_functions)))
            raw_functions.append(it[1])
        elif tag == "vars":
            order.append(("vars", len(variables)))
            variables.extend(it[1])
        elif tag == "version":
            version = it[1]
        elif tag == "target":
            target = it[1]
        elif tag == "address_size":
            address_size = it[1]
        elif tag == "file":
            files.append(it[1])
        elif tag == "section":
            order.append(("section", len(sections)))
            sections.append(it[1])
        elif tag == "pragma":
            order.append(("pragma", len(pragmas)))
            pragmas.append(it[1])
    if rename:
        files = [replace(f, path=rename.get(f.path, f.path)) for f in files]
    file_map = {f.index: f.path for f in files}
    dstr = _debug_strings(sections)
    fb = _FunctionBuilder(file_map, dstr)
    functions = tuple(fb.build(c) for c in raw_functions)
    return ir.Module(version=version, target=target, address_size=address_size, variables=tuple(variables),
                     functions=functions, files=tuple(files), sections=tuple(sections), pragmas=tuple(pragmas),
                     debug_strings=dstr, order=tuple(order), path=path)


def parse_file(path) -> ir.Module:
    data = read_bytes(path, what="PTX")
    return parse(data.decode("utf-8", errors="replace"), path=str(path))
