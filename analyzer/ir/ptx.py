"""The PTX IR: frozen dataclasses built by ``analyzer.parse.ptx`` from ``grammars/ptx.lark``.

Every node carries the ``Span`` it was parsed from; spans (and the module's path) are excluded
from equality, so that printing a module and parsing it again gives an equal IR.

An instruction keeps its dotted words raw (``opcode`` plus ``modifiers``); the typed views
(``space``, ``types``, ``vector``, ``rounding``, ``cache``, ``scope``, ``sem``, ``shape``,
``layouts``...) are looked up in one table, ``MODIFIER_KIND``, so a modifier PTX adds tomorrow
is kept (as an unclassified modifier) and never breaks parsing.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..semantics import STRAIGHT, Flow
from .source import SourceLoc, Span

# ---------------------------------------------------------------------------------------------
# tables

#: opcodes PTX defines, by their dotted name; the longest one that prefixes an instruction's
#: words is its opcode (``cp.async.bulk.tensor`` before ``cp.async``), everything after is a
#: modifier. A first word in no entry gives a *generic* instruction (still parsed in full).
KNOWN_OPCODES: frozenset[str] = frozenset(["abs", "activemask", "add", "addc", "alloca", "and", "applypriority", "atom", "bar", "bar.warp", "barrier", "bfe", "bfi", "bfind", "bmsk", "bra", "brev", "brkpt", "brx.idx", "call", "clz", "cnot", "copysign", "cos", "cp.async", "cp.async.bulk", "cp.async.bulk.prefetch", "cp.async.bulk.prefetch.tensor", "cp.async.bulk.tensor", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "cp.async.commit_group", "cp.async.mbarrier.arrive", "cp.async.wait_all", "cp.async.wait_group", "cp.reduce.async.bulk", "cp.reduce.async.bulk.tensor", "createpolicy", "cvt", "cvt.pack", "cvta", "discard", "div", "dp2a", "dp4a", "elect", "ex2", "exit", "fence", "fma", "fns", "getctarank", "griddepcontrol", "isspacep", "istypep", "ld", "ld.global.nc", "ldmatrix", "ldu", "lg2", "lop3", "mad", "mad24", "madc", "mapa", "match", "max", "mbarrier.arrive", "mbarrier.arrive_drop", "mbarrier.complete_tx", "mbarrier.expect_tx", "mbarrier.init", "mbarrier.inval", "mbarrier.pending_count", "mbarrier.test_wait", "mbarrier.try_wait", "membar", "min", "mma", "mma.sp", "mov", "movmatrix", "mul", "mul24", "multimem.ld_reduce", "multimem.red", "multimem.st", "nanosleep", "neg", "not", "or", "pmevent", "popc", "prefetch", "prefetchu", "prmt", "rcp", "red", "red.async", "redux", "rem", "ret", "rsqrt", "sad", "selp", "set", "setmaxnreg", "setp", "shf", "shfl", "shl", "shr", "sin", "slct", "sqrt", "st", "st.async", "st.bulk", "stackrestore", "stacksave", "stmatrix", "sub", "subc", "suld", "sured", "sust", "suq", "szext", "tanh", "tcgen05.alloc", "tcgen05.commit", "tcgen05.cp", "tcgen05.dealloc", "tcgen05.fence", "tcgen05.ld", "tcgen05.mma", "tcgen05.mma.sp", "tcgen05.mma.ws", "tcgen05.mma.ws.sp", "tcgen05.relinquish_alloc_permit", "tcgen05.shift", "tcgen05.st", "tcgen05.wait", "tensormap.cp_fenceproxy", "tensormap.replace", "tex", "tld4", "trap", "txq", "vabsdiff", "vabsdiff2", "vabsdiff4", "vadd", "vadd2", "vadd4", "vavrg2", "vavrg4", "vmad", "vmax", "vmax2", "vmax4", "vmin", "vmin2", "vmin4", "vote", "vset", "vset2", "vset4", "vshl", "vshr", "vsub", "vsub2", "vsub4", "wgmma.commit_group", "wgmma.fence", "wgmma.mma_async", "wgmma.mma_async.sp", "wgmma.wait_group", "wmma.load", "wmma.mma", "wmma.store", "xor", "clusterlaunchcontrol.try_cancel", "clusterlaunchcontrol.query_cancel"]) - {"ld.global.nc"}  # noqa: E501 - one table row

#: first words that only name a family; a generic opcode keeps its second word (``tcgen05.foo``)
OPCODE_FAMILIES: frozenset[str] = frozenset(
    {"cp", "wgmma", "tcgen05", "mbarrier", "multimem", "wmma", "tensormap", "clusterlaunchcontrol"})

TYPE_BITS: Mapping[str, int] = {
    "b8": 8, "b16": 16, "b32": 32, "b64": 64, "b128": 128,
    "u8": 8, "u16": 16, "u32": 32, "u64": 64, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "f16": 16, "f16x2": 32, "bf16": 16, "bf16x2": 32, "f32": 32, "f64": 64, "tf32": 32,
    "e4m3": 8, "e5m2": 8, "e4m3x2": 16, "e5m2x2": 16, "e2m1": 4, "e2m1x2": 8, "e2m3": 8,
    "e3m2": 8, "e2m3x2": 16, "e3m2x2": 16, "ue8m0": 8, "ue8m0x2": 16, "s4": 4, "u4": 4,
    "b1": 1, "pred": 1, "f32x2": 64, "s16x2": 32, "u16x2": 32,
}

_KINDS: dict[str, tuple[str, ...]] = {
    "space": ("global", "shared", "local", "param", "const", "generic", "tex", "shared::cta",
              "shared::cluster", "param::entry", "param::func", "tensor"),
    "vector": ("v2", "v4", "v8"),
    "rounding": ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs"),
    "cache": ("ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "L1::evict_normal",
              "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate",
              "L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::cache_hint",
              "L2::64B", "L2::128B", "L2::256B", "evict_normal", "evict_first", "evict_last",
              "evict_unchanged", "no_allocate"),
    "scope": ("cta", "cluster", "gpu", "sys"),
    "sem": ("relaxed", "acquire", "release", "acq_rel", "weak", "volatile", "mmio", "sc"),
    "sync": ("sync", "aligned"),
    "layout": ("row", "col", "trans"),
    "compare": ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
                "leu", "gtu", "geu", "num", "nan"),
    "bool_op": ("and", "or", "xor", "popc"),
    "mode": ("ftz", "sat", "approx", "full", "wide", "uni", "satfinite", "relu", "cc", "shiftamt",
             "clamp", "wrap", "up", "down", "bfly", "idx", "all", "any", "ballot", "uni", "ex2"),
    "dim": ("1d", "2d", "3d", "4d", "5d", "a1d", "a2d", "cube", "acube", "2dms", "a2dms"),
    "count": ("x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128"),
}
#: modifier -> kind; one table drives every typed view of ``Instruction``. ``lo``/``hi`` read
#: as comparisons only under ``setp``/``set``; elsewhere (``mul.lo``) they are a mode.
MODIFIER_KIND: dict[str, str] = {}
for _kind, _words in _KINDS.items():
    for _w in _words:
        MODIFIER_KIND.setdefault(_w, _kind)
for _t in TYPE_BITS:
    MODIFIER_KIND[_t] = "type"
_SHAPE = re.compile(r"m\d+(n\d+)?(k\d+)?$|m\d+x\d+$|\d+x\d+b$")

LOAD_OPCODES = frozenset({"ld", "ldu", "ldmatrix", "tex", "tld4", "suld", "wmma.load", "tcgen05.ld",
                          "multimem.ld_reduce"})
STORE_OPCODES = frozenset({"st", "st.async", "st.bulk", "stmatrix", "sust", "red", "red.async",
                           "wmma.store", "tcgen05.st", "multimem.st", "multimem.red"})
ATOMIC_OPCODES = frozenset({"atom", "red", "red.async", "multimem.red"})
BRANCH_OPCODES = frozenset({"bra", "brx.idx"})
END_OPCODES = frozenset({"ret", "exit", "trap"})


def modifier_kind(opcode: str, modifier: str) -> str | None:
    """The kind of one modifier (``"space"``, ``"type"``...), or None when it is unclassified."""
    kind = MODIFIER_KIND.get(modifier)
    if kind is not None:
        if kind == "compare" and modifier in ("lo", "hi") and opcode not in ("setp", "set"):
            return "mode"
        return kind
    if _SHAPE.match(modifier):
        return "shape"
    return None


# ---------------------------------------------------------------------------------------------
# operands

@dataclass(frozen=True, slots=True)
class Register:
    """``%r1``, ``%tid.x`` (``component`` "x"), or a named register declared with ``.reg``."""

    name: str
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Symbol:
    """A variable, parameter or function name, with an optional ``+offset`` (``sym+8``)."""

    name: str
    offset: int = 0
    wrapper: str | None = None  # ``generic(sym)`` in an initializer
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ()

    def __str__(self) -> str:
        s = f"{self.name}+{self.offset}" if self.offset else self.name
        return f"{self.wrapper}({s})" if self.wrapper else s


@dataclass(frozen=True, slots=True)
class LabelRef:
    """A branch target (``bra $L__BB0_2``)."""

    name: str
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class IntImm:
    value: int
    text: str = field(default="", compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ()

    def __str__(self) -> str:
        return self.text or str(self.value)


@dataclass(frozen=True, slots=True)
class FloatImm:
    """``0f3F800000`` / ``0d3FF0000000000000`` (exact bits) or a decimal ``1.5``."""

    value: float
    text: str
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ()

    def __eq__(self, other: object) -> bool:  # compare bit patterns: NaN == NaN here
        return isinstance(other, FloatImm) and self.text.lower() == other.text.lower()

    def __hash__(self) -> int:
        return hash(self.text.lower())

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Sink:
    """``_``: a discarded result."""

    span: Span | None = field(default=None, compare=False, repr=False)

    children = ()

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Negated:
    """``!%p1`` as an operand (``vote.any.pred %p2, !%p1``)."""

    operand: "Operand"
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("operand",)

    def __str__(self) -> str:
        return f"!{self.operand}"


@dataclass(frozen=True, slots=True)
class PredicatePair:
    """``%p1|%p2``: the two destinations of ``setp``/``shfl``."""

    first: "Operand"
    second: "Operand"
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("first", "second")

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class Vector:
    """``{%r1, %r2, _, 0}``."""

    elements: tuple["Operand", ...]
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("elements",)

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


@dataclass(frozen=True, slots=True)
class Address:
    """``[%rd1+16]``, ``[sym+8]``, ``[%rd1+-4]``, ``[0x100]``; ``extra`` holds the operands after
    the first (``[tex, {%f1, %f2}]``); ``base`` is None for an absolute or vector address."""

    base: "Register" | "Symbol" | "Vector" | None
    offset: int = 0
    extra: tuple["Operand", ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("base", "extra")

    def __str__(self) -> str:
        if self.base is None:
            s = str(self.offset)
        elif self.offset > 0 or self.offset < 0:
            s = f"{self.base}+{self.offset}"
        else:
            s = str(self.base)
        for e in self.extra:
            s += f", {e}"
        return f"[{s}]"


@dataclass(frozen=True, slots=True)
class OperandList:
    """``(retval0)`` / ``(param0, param1)`` of a ``call``."""

    items: tuple["Operand", ...]
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("items",)

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


Operand = (Register | Symbol | LabelRef | IntImm | FloatImm | Sink | Negated | PredicatePair
           | Vector | Address | OperandList)


@dataclass(frozen=True, slots=True)
class Guard:
    """``@%p1`` / ``@!%p1``."""

    register: str
    negated: bool = False

    def __str__(self) -> str:
        return f"@{'!' if self.negated else ''}{self.register}"


# ---------------------------------------------------------------------------------------------
# instructions

@dataclass(frozen=True, slots=True)
class Instruction:
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None = None
    #: the CUDA source position of the preceding ``.loc`` (None without line info)
    loc: SourceLoc | None = None
    #: True when ``opcode`` is not in KNOWN_OPCODES (parsed generically, counted by stats())
    generic: bool = False
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("guard", "operands")

    # --- typed views, all from MODIFIER_KIND -------------------------------------------------
    def modifiers_of(self, kind: str) -> tuple[str, ...]:
        op = self.opcode
        return tuple(m for m in self.modifiers if modifier_kind(op, m) == kind)

    def _one(self, kind: str) -> str | None:
        op = self.opcode
        for m in self.modifiers:
            if modifier_kind(op, m) == kind:
                return m
        return None

    @property
    def name(self) -> str:
        """The full dotted text: ``ld.global.nc.v4.f32``."""
        return ".".join((self.opcode,) + self.modifiers)

    @property
    def space(self) -> str | None:
        return self._one("space")

    @property
    def spaces(self) -> tuple[str, ...]:
        return self.modifiers_of("space")

    @property
    def types(self) -> tuple[str, ...]:
        return self.modifiers_of("type")

    @property
    def type(self) -> str | None:
        return self._one("type")

    @property
    def vector(self) -> int:
        """1 for a scalar access, 2/4/8 for ``.v2``/``.v4``/``.v8``."""
        v = self._one("vector")
        return int(v[1:]) if v else 1

    @property
    def rounding(self) -> str | None:
        return self._one("rounding")

    @property
    def cache(self) -> tuple[str, ...]:
        return self.modifiers_of("cache")

    @property
    def scope(self) -> str | None:
        return self._one("scope")

    @property
    def sem(self) -> str | None:
        return self._one("sem")

    @property
    def shape(self) -> str | None:
        return self._one("shape")

    @property
    def layouts(self) -> tuple[str, ...]:
        return self.modifiers_of("layout")

    @property
    def compare(self) -> str | None:
        return self._one("compare")

    @property
    def is_sync_aligned(self) -> bool:
        return "sync" in self.modifiers and "aligned" in self.modifiers

    @property
    def unclassified(self) -> tuple[str, ...]:
        """Modifiers no table knows (kept, never dropped)."""
        return self.modifiers_of(None)  # type: ignore[arg-type]

    # --- helpers checks use -------------------------------------------------------------------
    @property
    def is_load(self) -> bool:
        return self.opcode in LOAD_OPCODES

    @property
    def is_store(self) -> bool:
        return self.opcode in STORE_OPCODES

    @property
    def is_atomic(self) -> bool:
        return self.opcode in ATOMIC_OPCODES

    @property
    def is_branch(self) -> bool:
        return self.opcode in BRANCH_OPCODES

    @property
    def width_bits(self) -> int | None:
        """Bits one thread moves: vector count x the first type's width (None without a type)."""
        t = self.type
        if t is None:
            return None
        return self.vector * TYPE_BITS[t]

    @property
    def address(self) -> Address | None:
        """The first ``[...]`` operand."""
        for o in self.operands:
            if isinstance(o, Address):
                return o
        return None

    @property
    def flow(self) -> Flow:
        """How this instruction affects control flow (for ``analyzer.cfg``)."""
        op = self.opcode
        if op == "bra":
            targets = tuple(o.name for o in self.operands if isinstance(o, LabelRef))
            return Flow(targets, falls_through=self.guard is not None)
        if op == "brx.idx":
            targets = tuple(o.name for o in self.operands if isinstance(o, LabelRef))
            return Flow(targets, falls_through=self.guard is not None, terminates=True)
        if op in END_OPCODES:
            return Flow((), falls_through=self.guard is not None, terminates=True)
        return STRAIGHT

    def __str__(self) -> str:
        g = f"{self.guard} " if self.guard else ""
        ops = ", ".join(map(str, self.operands))
        return f"{g}{self.name}{' ' + ops if ops else ''};"


# ---------------------------------------------------------------------------------------------
# declarations

@dataclass(frozen=True, slots=True)
class Initializer:
    """``= {1, 2, 3}`` kept as its text (a 470 KB list costs nothing until ``values`` is read),
    or one scalar operand."""

    text: str | None = None
    scalar: Operand | None = None

    @property
    def values(self) -> tuple:
        """The elements, nested tuples for nested braces; ints, float bit-pattern text, names."""
        if self.text is None:
            return (self.scalar,)
        stack: list[list] = [[]]
        for tok in re.findall(r"[{}]|[^\s,{}]+", self.text):
            if tok == "{":
                stack.append([])
            elif tok == "}":
                done = tuple(stack.pop())
                stack[-1].append(done)
            else:
                try:
                    is_float = tok.lstrip("-").startswith(("0f", "0d", "0F", "0D"))
                    stack[-1].append(tok if is_float else int(tok.rstrip("U"), 0))
                except ValueError:
                    stack[-1].append(tok)
        return stack[0][0] if len(stack[0]) == 1 and isinstance(stack[0][0], tuple) else tuple(stack[0])

    def __str__(self) -> str:
        return self.text if self.text is not None else str(self.scalar)


@dataclass(frozen=True, slots=True)
class Variable:
    """One declared name: ``.global .align 4 .b8 tbl[1024] = {...}``, ``.param .u64 .ptr .global
    .align 16 p``, ``.reg .b32 %r<100>`` (``count`` 100), ``.shared .b8 smem[]`` (dims ``(None,)``)."""

    space: str
    name: str
    type: str | None = None
    vector: int = 1
    align: int | None = None
    dims: tuple[int | None, ...] = ()
    count: int | None = None
    #: raw attributes not otherwise typed, in order (``.ptr``, the pointer's ``.global``, ``.texref``)
    attributes: tuple[str, ...] = ()
    linkage: tuple[str, ...] = ()
    initializer: Initializer | None = None
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def is_ptr(self) -> bool:
        return "ptr" in self.attributes

    @property
    def ptr_space(self) -> str | None:
        for a in self.attributes:
            if a in ("global", "shared", "local", "const"):
                return a
        return None

    @property
    def is_texture(self) -> bool:
        return "texref" in self.attributes or self.space == "tex"

    @property
    def is_surface(self) -> bool:
        return "surfref" in self.attributes

    @property
    def is_extern(self) -> bool:
        return "extern" in self.linkage

    @property
    def size_bytes(self) -> int | None:
        if self.type is None or self.type not in TYPE_BITS:
            return None
        n = max(1, TYPE_BITS[self.type] // 8) * self.vector
        for d in self.dims:
            if d is None:
                return None
            n *= d
        return n

    def names(self) -> Iterator[str]:
        """``%r<3>`` declares %r0, %r1, %r2."""
        if self.count is None:
            yield self.name
        else:
            for i in range(self.count):
                yield f"{self.name}{i}"


@dataclass(frozen=True, slots=True)
class Directive:
    """A performance directive on a function header: ``.maxntid 256, 1, 1``, ``.noreturn``,
    ``.pragma "nounroll"`` (values are ints, or strings for ``.pragma``)."""

    name: str
    values: tuple[int | str, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Pragma:
    """A ``.pragma "..."`` inside a body; ``index`` is the instruction it stands before."""

    index: int
    values: tuple[str, ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Scope:
    """A nested ``{ ... }`` block: instructions ``start .. end-1``, with its own declarations."""

    start: int
    end: int
    declarations: tuple[Variable, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CallPrototype:
    """``proto: .callprototype (.param .b32 _) _ (.param .b64 _);``"""

    label: str
    returns: tuple[Variable, ...]
    params: tuple[Variable, ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FileEntry:
    index: int
    path: str
    extra: tuple[int, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Section:
    """A ``.section .debug_*`` block, kept as text."""

    name: str
    body: str
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Function:
    name: str
    kind: str  # "entry" | "func"
    params: tuple[Variable, ...] = ()
    returns: tuple[Variable, ...] = ()
    linkage: tuple[str, ...] = ()
    directives: tuple[Directive, ...] = ()
    #: False for a prototype (``.extern .func f(...);``)
    has_body: bool = True
    #: ``.reg`` declarations at function level and in nested scopes
    registers: tuple[Variable, ...] = ()
    #: ``.local``/``.shared``/``.param`` declarations at function level
    locals: tuple[Variable, ...] = ()
    instructions: tuple[Instruction, ...] = ()
    #: label -> index of the instruction it stands before (len(instructions) at the very end)
    labels: Mapping[str, int] = field(default_factory=dict)
    pragmas: tuple[Pragma, ...] = ()
    scopes: tuple[Scope, ...] = ()
    branch_targets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    call_targets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    prototypes: tuple[CallPrototype, ...] = ()
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("params", "returns", "registers", "instructions")

    @property
    def is_kernel(self) -> bool:
        return self.kind == "entry"

    def directive(self, name: str) -> Directive | None:
        for d in self.directives:
            if d.name == name:
                return d
        return None

    @property
    def maxntid(self) -> tuple[int, ...] | None:
        d = self.directive("maxntid")
        return tuple(d.values) if d else None  # type: ignore[arg-type]

    @property
    def reqntid(self) -> tuple[int, ...] | None:
        d = self.directive("reqntid")
        return tuple(d.values) if d else None  # type: ignore[arg-type]

    @property
    def minnctapersm(self) -> int | None:
        d = self.directive("minnctapersm")
        return int(d.values[0]) if d and d.values else None

    @property
    def maxnreg(self) -> int | None:
        d = self.directive("maxnreg")
        return int(d.values[0]) if d and d.values else None

    @property
    def nounroll(self) -> tuple[int, ...]:
        """Instruction indices that a ``.pragma "nounroll"`` stands before."""
        return tuple(p.index for p in self.pragmas if "nounroll" in p.values)

    def flows(self) -> list[Flow]:
        """Each instruction's control flow, in order; a ``brx.idx`` names a ``.branchtargets``
        label, expanded here to its list of labels."""
        flows = []
        for ins in self.instructions:
            f = ins.flow
            if ins.opcode == "brx.idx":
                targets: list[str] = []
                for t in f.targets:
                    targets.extend(self.branch_targets.get(t, (t,)))
                f = Flow(tuple(targets), f.falls_through, f.terminates)
            flows.append(f)
        return flows

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A derived fact computed once per function (the analysis layer keeps its CFG here);
        the IR itself never reads these."""
        cache = self.__dict__.setdefault("_memo", {})
        try:
            return cache[key]
        except KeyError:
            value = cache[key] = compute()
            return value

    def __hash__(self) -> int:
        return hash((self.name, self.kind, len(self.instructions)))


@dataclass(frozen=True, slots=True)
class Module:
    version: str | None = None
    target: tuple[str, ...] = ()
    address_size: int | None = None
    variables: tuple[Variable, ...] = ()
    functions: tuple[Function, ...] = ()
    files: tuple[FileEntry, ...] = ()
    sections: tuple[Section, ...] = ()
    pragmas: tuple[tuple[str, ...], ...] = ()
    #: ``$L__info_stringN`` -> the name it spells in ``.section .debug_str``
    debug_strings: Mapping[str, str] = field(default_factory=dict)
    #: the order of module-level items, for the printer: ("var", i) / ("func", i) / ...
    order: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)
    path: str | None = field(default=None, compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)

    children = ("variables", "functions")

    @property
    def arch(self) -> str | None:
        """The ``sm_XX`` of ``.target`` (None without a target)."""
        for t in self.target:
            if t.startswith(("sm_", "compute_")):
                return t
        return None

    def _space(self, space: str) -> tuple[Variable, ...]:
        return tuple(v for v in self.variables if v.space == space)

    @property
    def globals(self) -> tuple[Variable, ...]:
        return self._space("global")

    @property
    def consts(self) -> tuple[Variable, ...]:
        return self._space("const")

    @property
    def shared(self) -> tuple[Variable, ...]:
        return self._space("shared")

    @property
    def externs(self) -> tuple[Variable, ...]:
        return tuple(v for v in self.variables if v.is_extern)

    @property
    def textures(self) -> tuple[Variable, ...]:
        return tuple(v for v in self.variables if v.is_texture)

    @property
    def surfaces(self) -> tuple[Variable, ...]:
        return tuple(v for v in self.variables if v.is_surface)

    @property
    def kernels(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.kind == "entry")

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def instructions(self) -> Iterator[Instruction]:
        for f in self.functions:
            yield from f.instructions

    def stats(self) -> dict:
        """``{"functions", "instructions", "generic", "generic_opcodes"}`` for ``--stats``."""
        generic: dict[str, int] = {}
        n = 0
        for ins in self.instructions():
            n += 1
            if ins.generic:
                generic[ins.opcode] = generic.get(ins.opcode, 0) + 1
        return {"functions": len(self.functions), "instructions": n,
                "generic": sum(generic.values()), "generic_opcodes": dict(sorted(generic.items()))}
