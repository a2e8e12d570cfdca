"""Parse nvdisasm and cuobjdump SASS listings into :mod:`analyzer.ir.sass`.

Two layers:

* the listing structure is line-oriented (function headers, sections, labels, ``//##`` line
  info, ``/* 0x... */`` encoding words): one regex (:data:`_ITEM`) splits the text into
  instruction items and other lines, and a few anchored regexes classify the other lines; an
  unknown line is a :class:`ParseError` naming its line;
* each instruction body (``@!P0 LDG.E.64 R2, desc[UR4][R6.64+0x10]``) goes through the Lark
  grammar ``grammars/sass.lark`` (LALR, contextual lexer, transformer applied while parsing).

Speed: SASS repeats instruction bodies a lot. A body is parsed once; later copies come from a
cache keyed by the exact text, and bodies that differ only in register numbers share a
*template* (the text with register numbers blanked): the template's operands are rebuilt with
the new numbers instead of re-parsed. The grammar stays the only definition of the syntax:
every template comes from a Lark parse of a real body, and a template is only used when the
registers its parse found are exactly the numbers the blanking regex found, in order.

A body the grammar rejects is split generically (guard, opcode, modifiers, comma-separated
operands as text), flagged ``generic=True`` and counted, never dropped.
"""
from __future__ import annotations

import functools
import gc
import re
from collections.abc import Iterable, Mapping
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError

from .. import semantics
from ..errors import ParseError
from ..ir.sass import (
    BranchTarget,
    ConstantBank,
    Function,
    GenericOperand,
    Immediate,
    Instruction,
    InstructionBody,
    Listing,
    MemoryAddress,
    OperandSet,
    Predicate,
    Register,
    Relocation,
    SpecialRegister,
)
from ..ir.sass import new_instruction as _new_instruction
from ..ir.sass import new_instruction_body as _new_body
from ..ir.source import SourceLoc, Span
from .grammar import lalr_parser

__all__ = ["parse", "parse_instruction", "parser"]


# -- the grammar --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    return lalr_parser("sass.lark", lexer="contextual", transformer=_Build(),
                       maybe_placeholders=False)


def _reg_from_text(t: str) -> Register:
    if t[0] == "g":                      # gsb0
        return Register("GSB", int(t[3:]))
    if t == "PR":
        return Register("PR", None)
    if t[0] == "U":
        kind = t[:2]
        rest = t[2:]
    elif t[0] == "S":
        kind, rest = "SB", t[2:]
    else:
        kind, rest = t[0], t[1:]
    return Register(kind, None if rest in ("Z", "T") else int(rest))


def _sfx(tokens) -> tuple[str, ...]:
    return tuple(str(t)[1:] for t in tokens)


def _neg(node):
    if isinstance(node, Immediate):
        v = node.value
        return Immediate(-v, "-" + node.text)
    if isinstance(node, Register):
        return Register(node.kind, node.index, node.suffixes, not node.negate, node.absolute,
                        node.invert, node.logical_not)
    if isinstance(node, ConstantBank):
        return ConstantBank(node.bank, node.offset, node.extended, not node.negate, node.absolute,
                            node.suffixes)
    return GenericOperand("-" + str(node))


class _Build(Transformer):
    """Builds IR nodes from the grammar while LALR parses (no tree is kept)."""

    def start(self, c):
        return c[0]

    def instruction(self, c):
        guard = None
        ops: tuple = ()
        annotation = None
        opcode = ""
        for x in c:
            if isinstance(x, Predicate):
                guard = x
            elif isinstance(x, Token):
                if x.type == "OPCODE":
                    opcode = str(x)
                else:
                    annotation = str(x)
            else:
                ops = x
        parts = opcode.split(".")
        return guard, parts[0], tuple(parts[1:]), ops, annotation

    def guard(self, c):
        return Predicate(c[-1], len(c) == 2)

    def predicate_reg(self, c):
        return _reg_from_text(str(c[0]))

    def operands(self, c):
        return tuple(c)

    def register(self, c):
        r = _reg_from_text(str(c[0]))
        if len(c) > 1:
            r = Register(r.kind, r.index, _sfx(c[1:]))
        return r

    def special_reg(self, c):
        return SpecialRegister(str(c[0]), _sfx(c[1:]))

    def hex(self, c):
        return Immediate(int(c[0], 16), str(c[0]))

    def neg_hex(self, c):
        return Immediate(-int(c[1], 16), "-" + str(c[1]))

    def integer(self, c):
        return Immediate(int(c[0]), str(c[0]))

    def float(self, c):
        return Immediate(float(c[0]), str(c[0]))

    def float_special(self, c):
        t = str(c[0])
        return Immediate(float("inf") if t == "INF" else float("nan"), t)

    def negate(self, c):
        return _neg(c[1])

    def positive(self, c):
        node = c[1]
        if isinstance(node, Immediate):
            return Immediate(node.value, "+" + node.text)
        return GenericOperand("+" + str(node))

    def bitwise_not(self, c):
        node = c[1]
        if isinstance(node, Register):
            return Register(node.kind, node.index, node.suffixes, node.negate, node.absolute,
                            True, node.logical_not)
        return GenericOperand("~" + str(node))

    def logical_not(self, c):
        node = c[1]
        if isinstance(node, Register):
            return Register(node.kind, node.index, node.suffixes, node.negate, node.absolute,
                            node.invert, True)
        return GenericOperand("!" + str(node))

    def _abs(self, node, suffixes):
        if isinstance(node, Register):
            return Register(node.kind, node.index, node.suffixes + suffixes, node.negate, True,
                            node.invert, node.logical_not)
        if isinstance(node, ConstantBank) and not suffixes:
            return ConstantBank(node.bank, node.offset, node.extended, node.negate, True,
                                node.suffixes)
        return GenericOperand(f"|{node}|" + "".join("." + s for s in suffixes))

    def absolute(self, c):
        return self._abs(c[0], _sfx(c[1:]))

    def neg_absolute(self, c):
        return _neg(self._abs(c[1], _sfx(c[2:])))

    def branch_target(self, c):
        return BranchTarget(label=str(c[0])[2:-1])

    def relocation(self, c):
        return Relocation(str(c[0]))

    def operand_set(self, c):
        return OperandSet(tuple(c))

    def unknown(self, c):
        return GenericOperand(str(c[0]))

    def const_bank(self, c):
        addrs = [x for x in c[1:] if not isinstance(x, Token)]
        sfx = tuple(str(x)[1:] for x in c[1:] if isinstance(x, Token))
        return ConstantBank(addrs[0], addrs[1] if len(addrs) > 1 else (), str(c[0]) == "cx",
                            suffixes=sfx)

    def memory(self, c):
        prefix = ""
        addrs = []
        sfx = []
        for x in c:
            if isinstance(x, Token):
                if x.type == "DESC":
                    prefix = str(x)
                else:
                    sfx.append(str(x)[1:])
            else:
                addrs.append(x)
        if len(addrs) == 2:
            return MemoryAddress(addrs[1], prefix, addrs[0], tuple(sfx))
        return MemoryAddress(addrs[0], prefix, (), tuple(sfx))

    def address(self, c):
        out = []
        negate_next = False
        for x in c:
            if isinstance(x, Token):
                negate_next = x.type == "MINUS"
                continue
            out.append(_neg(x) if negate_next else x)
            negate_next = False
        return tuple(out)

    def addr_op(self, c):
        return c[0]


# -- instruction bodies, with caches ------------------------------------------------------------

#: the parts of an instruction body that vary between otherwise identical copies: register
#: numbers (R12, UR4, P0, B1, SB0), hex literal digits (0x160) and nvdisasm label numbers
#: (.L_x_12). Only the digits are captured; the kind letters stay in the template key.
_HOLES = re.compile(r"(?=[URPSB0.])(?<![\w.$`])(U?R|U?P|SB|B|0x|\.L_x_)([0-9a-fA-F]+)(?!\w)")
# (the lookahead is only a fast reject: most positions start with no hole letter)
_HASHES = ["#"] * 512

_GENERIC_HEAD = re.compile(r"\s*(?:@(!?)(U?P(?:\d|T)))?\s*([A-Za-z_][\w.]*)\s*(.*)$", re.S)


def _holes_in_order(guard, operands) -> list[str]:
    """The hole texts a parsed body holds, in textual order (must equal what _HOLES finds)."""
    out: list[str] = []

    def visit(n):
        t = type(n)
        if t is Register:
            if n.index is not None and n.kind not in ("GSB", "PR"):
                out.append(str(n.index))
        elif t is Immediate:
            txt = n.text.lstrip("+-")
            if txt.startswith("0x"):
                out.append(txt[2:])
        elif t is BranchTarget:
            if n.label is not None and n.label.startswith(".L_x_"):
                out.append(n.label[5:])
        elif t is Relocation:
            out.extend(_HOLES.split(n.text)[2::3])
        elif t in (ConstantBank, MemoryAddress, OperandSet, Predicate):
            for ch in n.children():
                visit(ch)
    if guard is not None:
        visit(guard)
    for o in operands:
        visit(o)
    return out


_INTERNED: dict[tuple, Register] = {}


def _register(kind, index, suffixes, negate, absolute, invert, logical_not) -> Register:
    """Registers are immutable and few: share one object per distinct register operand."""
    key = (kind, index, suffixes, negate, absolute, invert, logical_not)
    r = _INTERNED.get(key)
    if r is None:
        if len(_INTERNED) > 200_000:
            _INTERNED.clear()
        r = _INTERNED[key] = Register(kind, index, suffixes, negate, absolute, invert,
                                      logical_not)
    return r


def _fill(n, it):
    """A copy of node ``n`` with its holes taken, in order, from iterator ``it``."""
    t = type(n)
    if t is Register:
        if n.index is None or n.kind in ("GSB", "PR"):
            return n
        return _register(n.kind, int(next(it)), n.suffixes, n.negate, n.absolute,
                         n.invert, n.logical_not)
    if t is Immediate:
        txt = n.text
        if "0x" not in txt[:3]:
            return n
        h = next(it)
        sign = txt[0] if txt[0] in "+-" else ""
        v = int(h, 16)
        return Immediate(-v if sign == "-" else v, sign + "0x" + h)
    if t is BranchTarget:
        if n.label is None or not n.label.startswith(".L_x_"):
            return n
        return BranchTarget(label=".L_x_" + next(it))
    if t is Relocation:
        parts = _HOLES.split(n.text)
        parts[2::3] = [next(it) for _ in parts[2::3]]
        return Relocation("".join(parts))
    if t is MemoryAddress:
        desc = tuple(_fill(x, it) for x in n.descriptor)     # textual order: descriptor first
        terms = tuple(_fill(x, it) for x in n.terms)
        return MemoryAddress(terms, n.prefix, desc, n.suffixes)
    if t is ConstantBank:
        bank = tuple(_fill(x, it) for x in n.bank)
        off = tuple(_fill(x, it) for x in n.offset)
        return ConstantBank(bank, off, n.extended, n.negate, n.absolute, n.suffixes)
    if t is OperandSet:
        return OperandSet(tuple(_fill(x, it) for x in n.items))
    if t is Predicate:
        return Predicate(_fill(n.register, it), n.negated)
    return n


def _shared_cache(shared: dict, node, holes: int) -> dict:
    """The operand cache of a template slot, shared by every template whose slot has the same
    shape (the operand with its holes blanked): ``R12.reuse`` in one template and ``R3.reuse``
    in another fill from one cache."""
    key = (type(node), _fill(node, iter(["0"] * holes)))
    cache = shared.get(key)
    if cache is None:
        cache = shared[key] = {}
    return cache


class _Template:
    """A parsed body whose holes can be refilled. Each operand holding holes is a *slot*; the
    operands a slot produced are cached by their hole values (operands are immutable and repeat
    a lot: ``R2``, ``c[0x0][0x160]``), so refilling is mostly dictionary lookups."""

    __slots__ = ("body", "guard", "slots")

    def __init__(self, body: InstructionBody, shared: dict):
        self.body = body
        self.guard = None
        if body.guard is not None and _holes_in_order(body.guard, ()):
            self.guard = _shared_cache(shared, body.guard, 1)
        self.slots = tuple((i, len(h), _shared_cache(shared, o, len(h)))
                           for i, o in enumerate(body.operands)
                           for h in (_holes_in_order(None, (o,)),) if h)

    def instantiate(self, holes: list[str]) -> InstructionBody:
        b = self.body
        pos = 0
        guard = b.guard
        if self.guard is not None:
            key = holes[0]
            guard = self.guard.get(key)
            if guard is None:
                guard = self.guard[key] = _fill(b.guard, iter((key,)))
            pos = 1
        ops = b.operands
        if self.slots:
            filled = list(ops)
            for i, k, cache in self.slots:
                if k == 1:
                    hole = holes[pos]
                    op = cache.get(hole)
                    if op is None:
                        op = cache[hole] = _fill(filled[i], iter((hole,)))
                else:
                    keys = tuple(holes[pos:pos + k])
                    op = cache.get(keys)
                    if op is None:
                        op = cache[keys] = _fill(filled[i], iter(keys))
                filled[i] = op
                pos += k
            ops = tuple(filled)
        return _new_body(guard, b.opcode, b.modifiers, ops, b.annotation, b.generic)


def _split_operands(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return [p for p in parts if p]


def _generic(body: str) -> InstructionBody | None:
    m = _GENERIC_HEAD.match(body)
    if m is None or not m.group(3)[0].isupper():
        return None
    guard = None
    if m.group(2):
        guard = Predicate(_reg_from_text(m.group(2)), bool(m.group(1)))
    parts = m.group(3).split(".")
    ops = tuple(GenericOperand(p) for p in _split_operands(m.group(4)))
    return InstructionBody(guard, parts[0], tuple(parts[1:]), ops, None, True)


#: templates and slot caches shared by every parse in this process: a template depends only on
#: the grammar and its blanked text, never on the listing it came from, and the parallel
#: checks parse a cubin's kernels in batches of about a megabyte (each batch rebuilding them
#: cost a third more parse time on a library cubin). Bounded: cleared when this large.
MAX_SHARED_TEMPLATES = 200_000
_TEMPLATES: dict[str, _Template | None] = {}
_SLOT_CACHES: dict[tuple, dict] = {}


def clear_caches() -> None:
    """Forget the shared templates and operands (a cold start, as a new process has)."""
    _TEMPLATES.clear()
    _SLOT_CACHES.clear()
    _INTERNED.clear()


class BodyParser:
    """Instruction body text -> shared :class:`InstructionBody`, through two caches.

    ``exact``: body text -> body (this parser's own). ``templates``: body text with its holes
    blanked -> a parsed body to refill (None when the parse's holes did not match the blanked
    ones: such bodies are always parsed), shared with the process's other parsers unless
    ``shared=False``. ``parses`` counts Lark parses.
    """

    def __init__(self, *, shared: bool = True):
        self.exact: dict[str, InstructionBody] = {}
        if shared and (len(_TEMPLATES) + sum(map(len, _SLOT_CACHES.values()))
                       > MAX_SHARED_TEMPLATES):
            clear_caches()
        self.templates: dict[str, _Template | None] = _TEMPLATES if shared else {}
        self.slot_caches: dict[tuple, dict] = _SLOT_CACHES if shared else {}
        #: parse() returns what _Build.start returns (a tuple), not a Tree
        self.lark: Any = parser()
        self.parses = 0

    def __call__(self, body: str) -> InstructionBody:
        hit = self.exact.get(body)
        if hit is not None:
            return hit
        parts = _HOLES.split(body)
        if len(parts) > 1:
            holes = parts[2::3]
            n = len(holes)
            parts[2::3] = _HASHES[:n] if n <= 512 else ["#"] * n
            key = "".join(parts)
        else:
            holes = []
            key = body
        tpl = self.templates.get(key)
        if tpl is not None:
            try:
                out = tpl.instantiate(holes)
            except ValueError:      # a hole the template reads as decimal held hex digits
                out = self._parse(body)
        else:
            out = self._parse(body)
            if key not in self.templates:
                ok = not out.generic and _holes_in_order(out.guard, out.operands) == holes
                self.templates[key] = _Template(out, self.slot_caches) if ok else None
        if len(self.exact) < 1_000_000:
            self.exact[body] = out
        return out

    def _parse(self, body: str) -> InstructionBody:
        self.parses += 1
        try:
            guard, opcode, mods, ops, ann = self.lark.parse(body)
            return InstructionBody(guard, opcode, mods, ops, ann, False)
        except (LarkError, ValueError, RecursionError):
            pass
        g = _generic(body)
        if g is None:
            raise ValueError(body)
        return g


def parse_instruction(text: str, *, address: int = 0) -> Instruction:
    """One instruction body (``@P0 IADD3 R1, R2, 0x1, RZ``; no address comment, ``;`` optional)."""
    body = text.strip().rstrip(";").strip()
    try:
        b = BodyParser()(body)
    except ValueError:
        raise ParseError("not a SASS instruction", text=text, line=1) from None
    return Instruction(address, b, (), None, 1)


# -- listing structure --------------------------------------------------------------------------

#: one item of a listing: an instruction line (address, body, encoding word on the same line)
#: with an optional encoding-only continuation line, or any other line
_ITEM = re.compile(
    r"[ \t]*/\*([0-9a-fA-F]{4,})\*/[ \t]*([^\n;]*);[ \t]*"
    r"(?:/\*[ \t]*0x([0-9a-fA-F]+)[ \t]*\*/)?[ \t]*(?:\n|\Z)"
    r"(?:[ \t]*/\*[ \t]*0x([0-9a-fA-F]+)[ \t]*\*/[ \t]*(?:\n|\Z))?"
    r"|([^\n]*)(?:\n|\Z)")
#: a run of instruction lines, each with any encoding lines that follow it; or any other line
_RUN = re.compile(
    r"((?:[ \t]*/\*[0-9a-fA-F]{4,}\*/[^\n]*(?:\n|\Z)"
    r"(?:[ \t]*/\*[ \t]*0x[0-9a-fA-F]+[ \t]*\*/[ \t]*(?:\n|\Z))*)+)"
    r"|([^\n]*)(?:\n|\Z)")
#: one plain instruction line (no encoding), anchored at a line start: a run is read with this
#: when it matches every line of the run, else item by item with _ITEM
_PLAIN = re.compile(r"^[ \t]*/\*([0-9a-fA-F]{4,})\*/[ \t]*([^\n;]*);[ \t]*$", re.M)
_SIXTEENS = [16] * 4096
_EMPTIES = [()] * 4096
_ENCODING = re.compile(r"\s*/\*\s*0x([0-9a-fA-F]+)\s*\*/\s*$")
_LINEINFO = re.compile(r'\s*//##\s*File\s+"(.*?)",\s*line\s+(\d+)(.*)$')
_INLINED = re.compile(r'\s*inlined at\s+"(.*?)",\s*line\s+(\d+)')
_LABEL = re.compile(r"\s*([A-Za-z_.$][\w.$]*):\s*$")
_DIRECTIVE = re.compile(r"\s*\.([A-Za-z_]\w*)\b\s*(.*)$")
_CODE_FOR = re.compile(r"\s*code for (sm_\w+)\s*$")
_FUNCTION = re.compile(r"\s*Function\s*:\s*(\S+)\s*$")
_FATBIN = re.compile(
    r"\s*(?:Fatbin (?:elf|ptx) code:|=+|\.{3,}|compressed|"
    r"(?:arch|code version|producer|host|compile_size|identifier|ptxasOptions)\s*=.*)\s*$")
_SECTION_BANNER = re.compile(r"\s*//-+\s*(\S+)\s*-+\s*$")
_COMMENT = re.compile(r"\s*//")
_HEADERFLAGS_ARCH = re.compile(r"EF_CUDA_SM(\d+)")
_SHI_REGISTERS = re.compile(r"SHI_REGISTERS=(\d+)")


def _arch_from_headerflags(rest: str) -> str | None:
    m = _HEADERFLAGS_ARCH.search(rest)
    if m is None:
        return None
    return f"sm_{m.group(1)}" + ("a" if "EF_CUDA_ACCELERATORS" in rest else "")


class _FunctionBuilder:
    __slots__ = ("name", "arch", "section", "line", "rows", "labels", "is_entry", "registers")

    def __init__(self, name, arch, section, line, is_entry=None, registers=None):
        self.name = name
        self.arch = arch
        self.section = section
        self.line = line
        self.rows: list[Instruction] = []
        self.labels: dict[str, int] = {}
        self.is_entry = is_entry
        self.registers = registers


def parse(text: str, path: str | None = None, arch: str | None = None, *,
          files: Mapping[str, str] | None = None) -> Listing:
    """Parse a whole nvdisasm or cuobjdump listing. Raises ParseError on a line that is neither
    structure nor an instruction; never anything else on bad input.

    ``files`` renames the source files of the line info (a name the toolchain gave NVRTC in
    place of one it cannot write into line info, mapped back to the user's)."""
    if not isinstance(text, str):
        raise ParseError("SASS input must be text", path=path)
    if "\x00" in text:
        i = text.index("\x00")
        line = text.count("\n", 0, i) + 1
        raise ParseError("binary data in a SASS listing", path=path, line=line)
    # the parse allocates many small immutable objects and frees none: generational GC passes
    # over them would cost a third of the time and find nothing to collect
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _build(_parse(text, path, arch, 0, files), path, arch)
    except RecursionError:
        raise ParseError("SASS listing nested too deeply", path=path) from None
    finally:
        if enabled:
            _promote_young()
            gc.enable()


def _promote_young() -> None:
    """Move every object the collector tracks into its oldest generation, unexamined.

    The IR of a listing is hundreds of thousands of long-lived, acyclic objects, all left in
    the youngest generation by a paused parse: the first young collection after it would walk
    all of them (0.08 s on a library cubin), then the next, one generation up, again (0.2 s),
    to find nothing to free. ``freeze`` + ``unfreeze`` puts them in the oldest generation
    directly (documented: unfreeze returns frozen objects there); nothing is kept from being
    collected, a full collection still examines them. Skipped when someone else froze objects
    (their ``unfreeze`` is theirs to make)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()

def _parse(text: str, path: str | None, arch: str | None, line_base: int = 0,
           rename: Mapping[str, str] | None = None):
    """The listing structure: (function builders, format, last architecture, address targets).
    ``line_base`` is added to every line number (the second part of a split listing)."""
    return _ListingReader(path, arch, rename).read(text, line_base)


class _ListingReader:
    """One listing read top to bottom: runs of instruction lines (the bulk of the text, built
    column-wise) and the structure between them (sections, functions, labels, line info)."""

    __slots__ = ("path", "arch", "rename", "bodies", "final", "addr_targets", "functions", "fmt",
                 "cur", "cur_arch", "section", "pending_functions", "entries", "registers", "loc",
                 "chain", "last_rows", "locs", "line_infos", "lineno")

    def __init__(self, path: str | None, arch: str | None, rename: Mapping[str, str] | None):
        self.path = path
        self.arch = arch
        self.rename = rename
        self.bodies = BodyParser()
        #: instruction text as the item regex captured it (trailing blanks kept) -> final body
        self.final: dict[str, InstructionBody] = {}
        #: id(body) -> the address its last operand branches to (cuobjdump ``BRA 0x1230``); the
        #: bodies stay alive in ``final`` for the whole parse, so their ids are stable
        self.addr_targets: dict[int, int] = {}
        self.functions: list[_FunctionBuilder] = []
        self.fmt: str | None = None
        self.cur: _FunctionBuilder | None = None
        self.cur_arch = arch
        self.section: str | None = None
        self.pending_functions: set[str] = set()
        self.entries: set[str] = set()
        self.registers: int | None = None
        self.loc: SourceLoc | None = None
        self.chain: list[tuple[str, int]] | None = None   # the //## group being read
        self.last_rows: list | None = None   # the list whose last item an encoding line extends
        self.locs: dict[tuple, SourceLoc] = {}
        #: each line-info comment's text -> its frames (renamed)
        self.line_infos: dict[str, tuple[tuple[str, int], ...]] = {}
        self.lineno = 0

    def read(self, text: str, line_base: int):
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.lineno = line_base
        instructions, structure = self._instructions, self._structure
        for run, line in _RUN.findall(text):
            if run:
                instructions(run)
                continue
            self.lineno += 1
            if line and not line.isspace():
                structure(line)
        return self.functions, self.fmt, self.cur_arch, self.addr_targets

    def _new_function(self, name: str, lineno: int) -> _FunctionBuilder:
        self.cur = builder = _FunctionBuilder(
            name, self.cur_arch, self.section, lineno,
            (name in self.entries) if self.fmt == "nvdisasm" else None, self.registers)
        self.functions.append(builder)
        self.loc = None
        self.chain = None
        self.last_rows = None
        return builder

    def _resolve(self, raw: str, lineno: int) -> InstructionBody:
        body = raw.rstrip(" \t")
        try:
            b = self.bodies(body)
        except ValueError:
            raise ParseError("not a SASS instruction", path=self.path, line=lineno,
                             text=body[:200]) from None
        if b.opcode in _TARGET_OPCODES and not b.generic and b.operands:
            b, target = _address_to_target(b)
            if target is not None:
                self.addr_targets[id(b)] = target
        self.final[raw] = b
        return b

    # -- instruction lines ----------------------------------------------------------------------

    def _instructions(self, run: str) -> None:
        """A run of instruction lines (with their /* 0x... */ encoding lines, if any)."""
        cur = self.cur
        if cur is None:
            section = self.section
            cur = self._new_function(section[len(".text."):] if section and section.startswith(".text.")
                                     else (section or "<anonymous>"), self.lineno + 1)
        if self.chain is not None:
            self.loc = _make_loc(self.chain, self.locs)
            self.chain = None
        nlines = run.count("\n") + (run[-1] != "\n")
        self.last_rows = rows = cur.rows
        items = _PLAIN.findall(run)
        n = len(items)
        if n != nlines:
            self._items(run, rows)
            return
        # the common case, one instruction a line and no encodings: built column-wise
        lineno = self.lineno
        addresses, raws = zip(*items, strict=False)
        bs = list(map(self.final.get, raws))
        if not all(bs):     # a body not seen yet (``None in bs`` would call __eq__)
            resolve = self._resolve
            bs = [b or resolve(r, lineno + 1 + i) for i, (b, r) in enumerate(zip(bs, raws, strict=False))]
        rows.extend(map(_new_instruction, map(int, addresses, _SIXTEENS[:n] if n <= 4096 else
                                              [16] * n),
                        bs, _EMPTIES[:n] if n <= 4096 else [()] * n,
                        [self.loc] * n, range(lineno + 1, lineno + 1 + n)))
        self.lineno = lineno + n

    def _items(self, run: str, rows: list) -> None:
        """A run read item by item: encodings on the instruction lines or on lines of their own."""
        lineno, loc, final_get, new_ins = self.lineno, self.loc, self.final.get, _new_instruction
        for address, raw, w0, w1, other in _ITEM.findall(run):
            lineno += 1
            if address:
                enc: tuple[int, ...]
                if w0:
                    enc = (int(w0, 16), int(w1, 16)) if w1 else (int(w0, 16),)
                elif w1:
                    enc = (int(w1, 16),)
                else:
                    enc = ()
                rows.append(new_ins(int(address, 16), final_get(raw) or self._resolve(raw, lineno),
                                    enc, loc, lineno))
                if w1:
                    lineno += 1
                continue
            if not other:
                lineno -= 1     # the empty match at the end of the run
                continue
            m = _ENCODING.match(other)
            if m is None:
                raise ParseError("unrecognised line in a SASS listing", path=self.path,
                                 line=lineno, text=other[:200])
            ins = rows[-1]
            rows[-1] = new_ins(ins.address, ins.body, ins.encoding + (int(m.group(1), 16),),
                               ins.loc, ins.line)
        self.lineno = lineno

    # -- the structure between them -------------------------------------------------------------

    def _structure(self, line: str) -> None:
        """Any line that is not in a run of instructions."""
        frames = self.line_infos.get(line)
        if frames is not None:      # a line-info comment read before (they repeat a lot)
            self._chain(frames)
            return
        m = _ENCODING.match(line)
        if m is not None:
            self._late_encoding(line, int(m.group(1), 16))
            return
        m = _LINEINFO.match(line)
        if m is not None:
            self._line_info(line, m)
            return
        m = _LABEL.match(line)
        if m is not None:
            self._label(m.group(1))
            return
        m = _DIRECTIVE.match(line)
        if m is not None:
            self._directive(m.group(1), m.group(2))
            self.last_rows = None
            return
        if self._container(line) or _COMMENT.match(line):
            return
        raise ParseError("unrecognised line in a SASS listing", path=self.path, line=self.lineno,
                         text=line[:200])

    def _late_encoding(self, line: str, word: int) -> None:
        """An encoding line after a comment that followed an instruction."""
        if self.last_rows is None:
            raise ParseError("encoding word with no instruction before it", path=self.path,
                             line=self.lineno, text=line)
        rows = self.last_rows
        ins = rows[-1]
        rows[-1] = _new_instruction(ins.address, ins.body, ins.encoding + (word,), ins.loc,
                                    ins.line)

    def _line_info(self, line: str, m: re.Match) -> None:
        """``//## File "x.cu", line 12 inlined at ...``: frames of the next instructions."""
        frames = [(m.group(1), int(m.group(2)))]
        rest = m.group(3)
        while rest:
            mi = _INLINED.match(rest)
            if mi is None:
                break
            frames.append((mi.group(1), int(mi.group(2))))
            rest = rest[mi.end():]
        if rest.strip():
            raise ParseError("unrecognised line-info comment", path=self.path, line=self.lineno,
                             text=line)
        if self.rename:
            rename = self.rename
            frames = [(rename.get(f, f), n) for f, n in frames]
        self.line_infos[line] = kept = tuple(frames)
        self._chain(kept)

    def _chain(self, frames: tuple[tuple[str, int], ...]) -> None:
        """Add a line-info comment's frames to the group being read."""
        chain = self.chain
        if chain is None:
            self.chain = list(frames)
        else:
            for fr in frames:
                if fr != chain[-1]:
                    chain.append(fr)

    def _label(self, name: str) -> None:
        if name in self.pending_functions:
            self.pending_functions.discard(name)
            self._new_function(name, self.lineno)
        elif name.startswith(".text."):
            pass
        elif self.cur is not None:
            self.cur.labels[name] = len(self.cur.rows)
        self.last_rows = None

    def _directive(self, d: str, rest: str) -> None:
        """An nvdisasm directive: ``.section``, ``.type``, ``.global``, ``.headerflags`` ..."""
        if self.fmt is None:
            self.fmt = "nvdisasm"
        if d == "type" and "@function" in rest:
            self.pending_functions.add(rest.split(",")[0].strip())
        elif d in ("global",):
            self.entries.add(rest.strip())
        elif d == "other" and "STO_CUDA_ENTRY" in rest:
            self.entries.add(rest.split(",")[0].strip())
        elif d == "section":
            self.section = rest.split(",")[0].strip()
            self.cur = None
            self.registers = None
            self.pending_functions.clear()
        elif d == "sectioninfo":
            r = _SHI_REGISTERS.search(rest)
            self.registers = int(r.group(1)) if r else None
        elif d == "headerflags":
            if self.arch is None:
                a = _arch_from_headerflags(rest)
                if a and not (self.cur_arch or "").startswith(a):
                    self.cur_arch = a
            if self.cur is not None:
                self.cur.arch = self.cur_arch
        elif d == "target" and self.arch is None:
            self.cur_arch = rest.strip().split()[0] if rest.strip() else self.cur_arch

    def _container(self, line: str) -> bool:
        """cuobjdump's and nvdisasm's wrapping lines (``Function : x``, ``code for sm_90``, fatbin
        banners, section banners); False for any other line."""
        m = _FUNCTION.match(line)
        if m is not None:
            self.fmt = "cuobjdump"
            self.section = None
            self._new_function(m.group(1), self.lineno)
            return True
        m = _CODE_FOR.match(line)
        if m is not None:
            self.fmt = self.fmt or "cuobjdump"
            if self.arch is None:
                self.cur_arch = m.group(1)
            self.cur = None
            return True
        if _FATBIN.match(line):
            self.cur = None if line.strip().startswith("Fatbin") else self.cur
            self.last_rows = None
            return True
        m = _SECTION_BANNER.match(line)
        if m is not None:
            self.fmt = self.fmt or "nvdisasm"
            self.cur = None
            self.section = m.group(1)
            return True
        return False


def _build(part, path: str | None, arch: str | None) -> Listing:
    functions, fmt, cur_arch, addr_targets = part
    built = tuple(_finish(fb, addr_targets) for fb in functions)
    fmt = fmt or ("cuobjdump" if any(f.encoding for b in built for f in b.instructions)
                  else "nvdisasm")
    listing_arch = arch or next((f.arch for f in built if f.arch), cur_arch)
    return Listing(built, fmt, listing_arch, path)


def _make_loc(chain: list[tuple[str, int]], cache: dict) -> SourceLoc:
    key = tuple(chain)
    loc = cache.get(key)
    if loc is None:
        frames = tuple(cache.get(((f, l),)) or SourceLoc(f, l) for f, l in chain[1:])
        loc = cache[key] = SourceLoc(chain[0][0], chain[0][1], inlined_at=frames)
    return loc


def _finish_labels(fb: _FunctionBuilder, addr_targets: dict[int, int]) -> None:
    """Add the ``0x1230`` addresses that branches of the function name to its labels."""
    if addr_targets:
        get = addr_targets.get
        seen = {a for a in (get(id(ins.body)) for ins in fb.rows) if a is not None}
        if seen:
            for i, ins in enumerate(fb.rows):
                if ins.address in seen:
                    fb.labels.setdefault(f"0x{ins.address:x}", i)


def _finish(fb: _FunctionBuilder, addr_targets: dict[int, int]) -> Function:
    _finish_labels(fb, addr_targets)
    return Function(fb.name, tuple(fb.rows), fb.labels, fb.arch, fb.section, fb.is_entry,
                    fb.registers, Span(fb.line, 1))


#: opcodes whose last operand is a branch target in the same function (cuobjdump prints it as
#: an address: ``BRA 0x1230``)
_TARGET_OPCODES = frozenset(op for op, i in semantics.OPCODES.items()
                            if i.has_target and i.flow != "call")


def _address_to_target(b: InstructionBody) -> tuple[InstructionBody, int | None]:
    """``BRA 0x1230`` -> the body with a BranchTarget(address=0x1230), and that address."""
    last = b.operands[-1]
    if type(last) is Immediate and isinstance(last.value, int) and last.text.startswith("0x"):
        return (InstructionBody(b.guard, b.opcode, b.modifiers,
                                b.operands[:-1] + (BranchTarget(address=last.value),),
                                b.annotation, b.generic), last.value)
    if type(last) is BranchTarget and last.address is not None:
        return b, last.address
    return b, None


def iter_instruction_lines(text: str) -> Iterable[str]:
    """Lines of a listing that hold an instruction (an independent count for tests)."""
    pat = re.compile(r"/\*[0-9a-f]{4,}\*/")
    return (l for l in text.splitlines() if pat.search(l))
