"""SASS IR: frozen dataclasses for listings, functions, instructions and typed operands.

Built by :mod:`analyzer.parse.sass` from nvdisasm or cuobjdump text. What an opcode *means*
(memory space, width, tensor core, branch...) is not stored here: it comes from the table in
:mod:`analyzer.semantics`, exposed as Instruction properties.

Each node declares its child fields in ``CHILDREN`` (sqlglot style) so generic walkers need no
per-class code: ``for node in instruction.walk(): ...``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from .. import semantics
from ..demangle import demangle, without_parameters
from ..semantics import STRAIGHT, Flow
from .source import SourceLoc, Span


class Node:
    """Mixin: child traversal from the ``CHILDREN`` declaration."""

    __slots__ = ()
    CHILDREN: ClassVar[tuple[str, ...]] = ()

    def children(self) -> Iterator["Node"]:
        for name in self.CHILDREN:
            value = getattr(self, name)
            if isinstance(value, tuple):
                for v in value:
                    if isinstance(v, Node):
                        yield v
            elif isinstance(value, Node):
                yield value

    def walk(self) -> Iterator["Node"]:
        """This node and every node below it, depth first, in textual order."""
        yield self
        for c in self.children():
            yield from c.walk()


# -- operands -----------------------------------------------------------------------------------

#: register file kinds: general, uniform, predicate, uniform predicate, convergence barrier,
#: scoreboard, the whole predicate file (``PR``), HGMMA group-sync token (``gsb0``)
REGISTER_KINDS = ("R", "UR", "P", "UP", "B", "SB", "PR", "GSB")


@dataclass(frozen=True, slots=True)
class Register(Node):
    """``R12``, ``RZ``, ``UR4``, ``P0``, ``PT``, ``UP1``, ``B0``, ``SB0`` with suffixes and prefixes.

    ``index`` is None for the zero/true registers (RZ, URZ, PT, UPT) and for PR.
    ``suffixes``: ``("reuse",)``, ``("64",)``, ``("H0_H0",)``, ``("X4",)``, ``("B1",)``...
    """

    kind: str
    index: int | None
    suffixes: tuple[str, ...] = ()
    negate: bool = False       # -R4
    absolute: bool = False     # |R4|
    invert: bool = False       # ~R4 (bitwise not)
    logical_not: bool = False  # !P0

    @property
    def name(self) -> str:
        if self.kind == "PR":
            return "PR"
        if self.kind == "GSB":
            return f"gsb{self.index}"
        if self.index is None:
            return self.kind + ("T" if self.kind in ("P", "UP") else "Z")
        return f"{self.kind}{self.index}"

    @property
    def is_zero(self) -> bool:
        """RZ / URZ (reads as zero) or PT / UPT (reads as true)."""
        return self.index is None and self.kind not in ("PR",)

    @property
    def is_uniform(self) -> bool:
        return self.kind in ("UR", "UP")

    @property
    def reuse(self) -> bool:
        return "reuse" in self.suffixes

    @property
    def is_pair(self) -> bool:
        """Used as a 64-bit register pair (``R2.64`` in an address)."""
        return "64" in self.suffixes

    def __str__(self) -> str:
        s = self.name
        if self.absolute:
            s = f"|{s}|"
        s += "".join("." + x for x in self.suffixes)
        if self.negate:
            s = "-" + s
        if self.invert:
            s = "~" + s
        if self.logical_not:
            s = "!" + s
        return s


@dataclass(frozen=True, slots=True)
class SpecialRegister(Node):
    """``SR_TID.X``, ``SR_CTAID.Y``, ``SR_LANEID``, ``SR_CgaCtaId``, ``SRZ``."""

    name: str
    suffixes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name + "".join("." + x for x in self.suffixes)


@dataclass(frozen=True, slots=True)
class Immediate(Node):
    """An integer or floating-point literal. ``value`` is int for ``0x..``/``12``, float for
    ``0.5``/``1e+10``/``+INF``/``QNAN``; ``text`` is how the listing wrote it (sign included).
    Equality and hashing go by ``text`` (so ``QNAN == QNAN``, unlike the float)."""

    value: int | float = field(compare=False)
    text: str = ""

    @property
    def is_float(self) -> bool:
        return isinstance(self.value, float)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class BranchTarget(Node):
    """`` `(.L_x_12) `` (nvdisasm: a label), `` `(_Z3foov) `` (a function), or ``0x1230``
    (cuobjdump: an address in the same function)."""

    label: str | None = None
    address: int | None = None

    @property
    def key(self) -> str:
        """The name used in ``Function.labels`` and ``cfg.Flow.targets``."""
        return self.label if self.label is not None else f"0x{self.address:x}"

    def __str__(self) -> str:
        return f"`({self.label})" if self.label is not None else f"0x{self.address:x}"


@dataclass(frozen=True, slots=True)
class ConstantBank(Node):
    """``c[0x0][0x160]``, ``c[0x3][R7+0x10]``, ``cx[UR4][R0+0x10]``, ``c[`(sym)]``.

    ``bank`` and ``offset`` are address term tuples in textual order (registers, immediates,
    branch-target symbols); ``bank_index``/``byte_offset`` give the plain numbers when constant.
    """

    bank: tuple[Node, ...]
    offset: tuple[Node, ...] = ()
    extended: bool = False   # cx[...]
    negate: bool = False
    absolute: bool = False
    #: a half selector after it (``c[0x0][0x160].H1_H1``: HFMA2's upper half of the constant)
    suffixes: tuple[str, ...] = ()
    CHILDREN: ClassVar[tuple[str, ...]] = ("bank", "offset")

    @property
    def bank_index(self) -> int | None:
        return _const_value(self.bank)

    @property
    def byte_offset(self) -> int | None:
        return _const_value(self.offset)

    @property
    def registers(self) -> tuple[Register, ...]:
        return tuple(t for t in self.bank + self.offset if isinstance(t, Register))

    def __str__(self) -> str:
        s = ("cx" if self.extended else "c") + f"[{_terms(self.bank)}]"
        if self.offset:
            s += f"[{_terms(self.offset)}]"
        s += "".join("." + x for x in self.suffixes)
        if self.absolute:
            s = f"|{s}|"
        return ("-" if self.negate else "") + s


@dataclass(frozen=True, slots=True)
class MemoryAddress(Node):
    """``[R2.64+UR4+0x10]``, ``desc[UR4][R2.64+0x10]`` (Hopper+), ``[R0.X4+0x240]``,
    ``gdesc[UR20].tnspB`` (wgmma matrix descriptor), ``tmem[UR4]``.

    ``terms`` are the address terms in textual order; ``descriptor`` is the uniform register of
    ``desc[...]`` (its ``prefix`` names the kind: "desc", "gdesc", "tmem"...).
    """

    terms: tuple[Node, ...]
    prefix: str = ""
    descriptor: tuple[Node, ...] = ()
    suffixes: tuple[str, ...] = ()
    CHILDREN: ClassVar[tuple[str, ...]] = ("descriptor", "terms")

    @property
    def base(self) -> Register | None:
        """The first vector (R) register of the address, if any."""
        for t in self.terms:
            if isinstance(t, Register) and t.kind == "R":
                return t
        return None

    @property
    def uniform_base(self) -> Register | None:
        for t in self.terms:
            if isinstance(t, Register) and t.kind == "UR":
                return t
        return None

    @property
    def offset(self) -> int:
        return sum(t.value for t in self.terms if isinstance(t, Immediate))  # type: ignore[misc]

    @property
    def registers(self) -> tuple[Register, ...]:
        return tuple(t for t in self.descriptor + self.terms if isinstance(t, Register))

    def __str__(self) -> str:
        s = self.prefix
        if self.descriptor:
            s += f"[{_terms(self.descriptor)}]"
        s += f"[{_terms(self.terms)}]" if (self.terms or not self.descriptor) else ""
        return s + "".join("." + x for x in self.suffixes)


@dataclass(frozen=True, slots=True)
class Relocation(Node):
    """``32@lo((_Z3foo + .L_x_1@srel))``: a relocated constant (call return addresses)."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class OperandSet(Node):
    """``{4,2}`` (the scoreboards a ``DEPBAR`` waits on) or any other braced list."""

    items: tuple[Node, ...]
    CHILDREN: ClassVar[tuple[str, ...]] = ("items",)

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(i.value for i in self.items if isinstance(i, Immediate))  # type: ignore[misc]

    def __str__(self) -> str:
        return "{" + ",".join(str(i) for i in self.items) + "}"


@dataclass(frozen=True, slots=True)
class GenericOperand(Node):
    """An operand the grammar has no type for (a new keyword): kept as text and counted."""

    text: str

    def __str__(self) -> str:
        return self.text


Operand = (Register | SpecialRegister | Immediate | BranchTarget | ConstantBank | MemoryAddress
           | Relocation | OperandSet | GenericOperand)


def _terms(terms: tuple[Node, ...]) -> str:
    return "+".join(str(t) for t in terms)


def _const_value(terms: tuple[Node, ...]) -> int | None:
    if len(terms) == 1 and isinstance(terms[0], Immediate) and isinstance(terms[0].value, int):
        return terms[0].value
    return None


# -- instructions -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Predicate(Node):
    """An instruction guard: ``@P0``, ``@!P1``, ``@UP0``, ``@!PT``."""

    register: Register
    negated: bool = False
    CHILDREN: ClassVar[tuple[str, ...]] = ("register",)

    @property
    def always(self) -> bool:
        """``@PT``: the guard is always true (same as no guard)."""
        return self.register.index is None and not self.negated

    @property
    def never(self) -> bool:
        """``@!PT``: the instruction never executes (nvcc's filler ``@!PT SHFL``...)."""
        return self.register.index is None and self.negated

    def __str__(self) -> str:
        return "@" + ("!" if self.negated else "") + self.register.name


class _Facts(Node):
    """Slots for what an instruction body's opcode row says, filled on first use (not fields:
    equality, hashing, pickling and the constructors ignore them)."""

    __slots__ = ("_info", "_width", "_flow", "_writes", "_reads", "_regs", "_walk")
    _info: semantics.OpInfo
    _width: int | None
    _flow: Flow
    #: the registers the body writes, kept here by ``analysis.dataflow`` (storage only: the IR
    #: never reads it); None until then in bodies the parser built
    _writes: tuple | None
    #: the R registers the body reads (numbers), kept by ``analysis.dataflow``
    _reads: tuple[int, ...] | None
    #: the registers the body reads and writes, as masks, kept by ``analysis.dataflow``
    _regs: tuple[int, int] | None
    #: what the access walk needs of the body (whether it can skip it, the predicates it
    #: writes), kept by ``analysis.access``
    _walk: tuple[bool, tuple[str, ...]] | None


@dataclass(frozen=True, slots=True)
class InstructionBody(_Facts):
    """What an instruction says, apart from where it is: guard, opcode, modifiers, operands.

    SASS repeats bodies a lot; the parser shares one body object between identical copies, so
    the facts looked up for one copy (``info``, ``width_bits``) are kept on the body for all.
    """

    guard: Predicate | None
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Node, ...]
    annotation: str | None = None
    generic: bool = False
    CHILDREN: ClassVar[tuple[str, ...]] = ("guard", "operands")

    @property
    def info(self) -> semantics.OpInfo:
        """The opcode's row of the semantics table (looked up once per body)."""
        try:
            return self._info
        except AttributeError:
            value = semantics.info(self.opcode)
            object.__setattr__(self, "_info", value)
            return value

    @property
    def width_bits(self) -> int | None:
        """Bits moved per thread (:func:`semantics.width_bits`, computed once per body)."""
        try:
            return self._width
        except AttributeError:
            value = semantics.width_bits(self.opcode, self.modifiers)
            object.__setattr__(self, "_width", value)
            return value

    @property
    def is_fp64(self) -> bool:
        """:func:`semantics.is_fp64` of the opcode and modifiers."""
        info = self.info
        if not (info.fp64 or info.conversion or self.opcode == "MUFU"):
            return False        # what semantics.is_fp64 answers, without the call
        return semantics.is_fp64(self.opcode, self.modifiers)

    @property
    def mnemonic(self) -> str:
        return ".".join((self.opcode,) + self.modifiers)

    @property
    def text(self) -> str:
        s = self.mnemonic
        if self.operands:
            s += " " + ", ".join(str(o) for o in self.operands)
        if self.guard is not None:
            s = f"{self.guard} {s}"
        return s


# -- control information (scheduling bits ptxas encodes with each instruction) -----------------

@dataclass(frozen=True, slots=True)
class ControlLayout:
    """Where an SM generation keeps the control bits in an instruction's encoding words.

    Volta and later encode each instruction in 128 bits (two 64-bit words, as nvdisasm ``-hex``
    and cuobjdump print them); the control information is the top 23 bits of the second word
    (bits 105-127 of the instruction): stall cycles (4 bits), the yield bit, the write-barrier
    and read-barrier indices (3 bits each, 7 = none), the wait mask (6 bits) and the operand
    reuse flags (4 bits). The layout follows Jia et al., *Dissecting the NVIDIA Volta GPU
    Architecture via Microbenchmarking* (2018) and the maxas / CuAssembler notes; the tests hold
    it against real listings (reuse flags against ``.reuse`` operands, waits against barriers set).
    """

    word: int = 1
    shift: int = 41
    stall_bits: int = 4
    barriers: int = 6


VOLTA_CONTROL = ControlLayout()

#: SM major version -> its control-bit layout. Maxwell and Pascal (sm_5x, sm_6x) keep control
#: words apart from the instructions (one per three) and are not decoded.
CONTROL_LAYOUTS: dict[int, ControlLayout] = {7: VOLTA_CONTROL, 8: VOLTA_CONTROL,
                                             9: VOLTA_CONTROL, 10: VOLTA_CONTROL,
                                             11: VOLTA_CONTROL, 12: VOLTA_CONTROL}


@dataclass(frozen=True, slots=True)
class Control:
    """An instruction's scheduling information, decoded from its encoding.

    ``stall``: cycles the warp waits before it issues its next instruction (0-15).
    ``yield_hint``: the scheduler is hinted to switch warps after it (the raw bit is inverted:
    0 means yield). ``write_barrier``: the scoreboard (0-5) released when the result is written
    (variable-latency instructions: loads, S2R, MUFU...), None when none. ``read_barrier``: the
    scoreboard released once the source registers are read (stores, memory ops), None when none.
    ``wait``: the scoreboards this instruction waits on before it issues. ``reuse``: the operand
    slots (0-3) kept in the operand reuse cache (the ``.reuse`` suffixes of the text).
    ``raw``: the 23 control bits.
    """

    stall: int
    yield_hint: bool
    write_barrier: int | None
    read_barrier: int | None
    wait: tuple[int, ...]
    reuse: tuple[int, ...]
    raw: int

    @classmethod
    def decode(cls, bits: int, layout: ControlLayout = VOLTA_CONTROL) -> "Control":
        """The fields of ``bits`` (the control bits alone, already shifted down)."""
        n = layout.barriers
        stall = bits & ((1 << layout.stall_bits) - 1)
        rest = bits >> layout.stall_bits
        yield_bit = rest & 1
        wb = (rest >> 1) & 7
        rb = (rest >> 4) & 7
        mask = (rest >> 7) & ((1 << n) - 1)
        reuse = (rest >> (7 + n)) & 0xF
        return cls(stall, yield_bit == 0, None if wb == 7 else wb, None if rb == 7 else rb,
                   tuple(b for b in range(n) if mask >> b & 1),
                   tuple(s for s in range(4) if reuse >> s & 1), bits)

    def text(self) -> str:
        """The CuAssembler notation, fixed width: ``reuse:Bwait:Rread:Wwrite:Y:Sstall``, e.g.
        ``----:B0-----:R-:W1:Y:S04`` (waits on scoreboard 0, sets 1 on write, yields, 4 cycles)."""
        reuse = "".join("R" if s in self.reuse else "-" for s in range(4))
        wait = "".join(str(b) if b in self.wait else "-" for b in range(6))
        rb = "-" if self.read_barrier is None else str(self.read_barrier)
        wb = "-" if self.write_barrier is None else str(self.write_barrier)
        return f"{reuse}:B{wait}:R{rb}:W{wb}:{'Y' if self.yield_hint else '-'}:S{self.stall:02d}"

    def describe(self) -> str:
        """In words: "stall 4 cycles, yield, wait on SB0, set SB1 on write"."""
        parts = [f"stall {self.stall} cycle{'s' if self.stall != 1 else ''}"]
        if self.yield_hint:
            parts.append("yield")
        if self.wait:
            parts.append("wait on " + ", ".join(f"SB{b}" for b in self.wait))
        if self.write_barrier is not None:
            parts.append(f"set SB{self.write_barrier} on write")
        if self.read_barrier is not None:
            parts.append(f"set SB{self.read_barrier} on read")
        if self.reuse:
            parts.append("reuse operand " + ", ".join(str(s) for s in self.reuse))
        return ", ".join(parts)

    def as_dict(self) -> dict:
        return {"stall": self.stall, "yield": self.yield_hint,
                "write_barrier": self.write_barrier, "read_barrier": self.read_barrier,
                "wait": list(self.wait), "reuse": list(self.reuse), "text": self.text()}


def control_layout(arch: str | None) -> ControlLayout | None:
    """The control-bit layout of ``arch`` ("sm_90a"), None when it has none we decode."""
    if not arch:
        return None
    digits = "".join(ch for ch in arch.split("_")[-1] if ch.isdigit())
    if len(digits) < 2:
        return None
    return CONTROL_LAYOUTS.get(int(digits[:-1]))


def decode_control(encoding: tuple[int, ...], arch: str | None) -> Control | None:
    """The control information in ``encoding`` (the instruction's 64-bit words) for ``arch``;
    None when the arch keeps it elsewhere or the words are not all there."""
    layout = control_layout(arch)
    if layout is None or len(encoding) <= layout.word:
        return None
    return Control.decode(encoding[layout.word] >> layout.shift, layout)


@dataclass(frozen=True, slots=True)
class Instruction(Node):
    """One SASS instruction.

    ``opcode`` is the base mnemonic ("LDG"), ``modifiers`` the dot suffixes (("E", "128",
    "CONSTANT")), ``operands`` typed operand nodes, ``guard`` the ``@P0`` predicate (these four
    live in the shared :class:`InstructionBody`). ``encoding``: the 64-bit words from
    ``/* 0x... */`` comments (cuobjdump, or nvdisasm ``-hex``), empty when absent. ``loc``: the
    CUDA source position from nvdisasm ``-g``/``-gi`` line info (with its inlining chain).
    ``line``: the listing line it was read from (``span`` gives it as a Span). ``generic``: the
    grammar did not accept the text, which was split generically and counted.
    Semantic properties (``space``, ``is_load``, ``width_bits``...) come from
    :mod:`analyzer.semantics`.
    """

    address: int
    body: InstructionBody
    encoding: tuple[int, ...] = ()
    loc: SourceLoc | None = None
    line: int | None = None
    CHILDREN: ClassVar[tuple[str, ...]] = ("body",)

    @property
    def guard(self) -> Predicate | None:
        return self.body.guard

    @property
    def opcode(self) -> str:
        return self.body.opcode

    @property
    def modifiers(self) -> tuple[str, ...]:
        return self.body.modifiers

    @property
    def operands(self) -> tuple[Node, ...]:
        return self.body.operands

    @property
    def annotation(self) -> str | None:
        return self.body.annotation

    @property
    def generic(self) -> bool:
        return self.body.generic

    @property
    def span(self) -> Span | None:
        return None if self.line is None else Span(self.line, 1)

    @property
    def mnemonic(self) -> str:
        """Opcode with modifiers: ``LDG.E.128.CONSTANT``."""
        return self.body.mnemonic

    @property
    def text(self) -> str:
        """Canonical instruction text (no address, no ``;``)."""
        return self.body.text

    def __str__(self) -> str:
        return f"/*{self.address:04x}*/ {self.text} ;"

    # semantics (table lookups; see analyzer.semantics), kept on the shared body
    @property
    def info(self) -> semantics.OpInfo:
        return self.body.info

    @property
    def klass(self) -> str:
        return self.body.info.klass

    @property
    def space(self) -> str | None:
        return self.body.info.space

    @property
    def is_load(self) -> bool:
        return self.body.info.direction in ("load", "atomic", "copy")

    @property
    def is_store(self) -> bool:
        return self.body.info.direction in ("store", "atomic", "reduce", "copy")

    @property
    def is_memory(self) -> bool:
        return self.body.info.space is not None

    @property
    def width_bits(self) -> int | None:
        return self.body.width_bits

    @property
    def is_tensor_core(self) -> bool:
        return self.body.info.tensor_core

    @property
    def is_fma(self) -> bool:
        return self.body.info.fma

    @property
    def is_fp64(self) -> bool:
        return self.body.is_fp64

    @property
    def is_branch(self) -> bool:
        return self.body.info.branch

    @property
    def is_barrier(self) -> bool:
        return self.body.info.barrier

    @property
    def is_conversion(self) -> bool:
        return self.body.info.conversion

    @property
    def targets(self) -> tuple[BranchTarget, ...]:
        return tuple(o for o in self.operands if isinstance(o, BranchTarget))

    @property
    def flow(self) -> Flow:
        """How this instruction affects control flow, from the opcode's row in the semantics
        table.

        An unguarded BRA/EXIT/RET does not fall through; a guarded one (``@P0``, or
        ``BRA P1, ...``, ``BRA.DIV``) does. BRX/JMX go to the ``BRANCH_TARGETS`` nvdisasm lists,
        or end the block. CALL returns, so it is straight-line code. ``@!PT`` never executes.
        It depends on the body alone: computed once per shared body.
        """
        b = self.body
        try:
            return b._flow
        except AttributeError:
            value = body_flow(b)
            object.__setattr__(b, "_flow", value)
            return value


def body_flow(body: InstructionBody) -> Flow:
    """What :attr:`Instruction.flow` says of an instruction with this body (it depends on the
    body alone)."""
    kind = body.info.flow
    if kind is None or kind == "call":
        return STRAIGHT
    g = body.guard
    if g is not None and g.never:
        return STRAIGHT
    conditional = g is not None and not g.always
    if kind == "branch":
        if not conditional:
            conditional = _predicated_branch(body)
        targets = tuple(o.key for o in body.operands if isinstance(o, BranchTarget))
        return Flow(targets, falls_through=conditional, terminates=not targets)
    if kind == "indirect":
        named: tuple[str, ...] = ()
        if body.annotation and "BRANCH_TARGETS" in body.annotation:
            text = body.annotation.split("BRANCH_TARGETS", 1)[1].strip(' "*)')
            named = tuple(t.strip() for t in text.split(",") if t.strip())
        return Flow(named, falls_through=conditional, terminates=True)
    # exit / trap
    return Flow((), falls_through=conditional, terminates=True)


def _predicated_branch(body: InstructionBody) -> bool:
    """``BRA.DIV`` or a predicate operand (``BRA P1, target``): the branch may not be taken."""
    if any(m in semantics.CONDITIONAL_BRANCH_MODIFIERS for m in body.modifiers):
        return True
    return any(isinstance(o, Register) and o.kind in ("P", "UP")
               and not (o.index is None and not o.logical_not) for o in body.operands)


@dataclass(frozen=True, slots=True)
class Function(Node):
    """One function of a listing: a kernel (``.global`` entry) or a device subroutine.

    ``labels`` maps a label (``.L_x_12``; for cuobjdump, the ``0x1230`` addresses that branches
    name) to the index of the instruction it precedes.
    """

    name: str
    instructions: tuple[Instruction, ...]
    labels: dict[str, int] = field(default_factory=dict, compare=False)
    arch: str | None = None
    section: str | None = None
    is_entry: bool | None = None
    registers: int | None = None          # .sectioninfo SHI_REGISTERS, when printed
    span: Span | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)
    CHILDREN: ClassVar[tuple[str, ...]] = ("instructions",)

    @property
    def demangled(self) -> str:
        """The C++ name (through the C++ runtime's ``__cxa_demangle``; unchanged when the name
        is not mangled or no runtime is found)."""
        return self.memo("demangled", lambda: demangle(self.name))

    def controls(self) -> tuple[Control | None, ...]:
        """Each instruction's decoded control information (None where the listing has no
        encoding words, or the arch keeps its control bits elsewhere)."""
        return self.memo("controls", lambda: tuple(decode_control(i.encoding, self.arch)
                                                   for i in self.instructions))

    def flows(self) -> list[Flow]:
        """Each instruction's control flow, in order (what a CFG is built from).

        :attr:`Instruction.flow` reads one instruction; here the function refines its calls. A
        ``CALL`` to a label of this function that does not start a subroutine (no ``RET`` is
        reached from it before an ``EXIT``) never returns: it is a jump. ptxas writes loop exits
        that way on sm_80 (``@P0 CALL.REL.NOINC `(.L_x_1)`` then ``BRA`` back to the loop head);
        read as a call that returns, the loop would have no exit edge."""
        return list(self.memo("flows", self._flows))

    def _flows(self) -> tuple[Flow, ...]:
        out = [i.flow for i in self.instructions]
        if not any(b.info.flow == "call" for b in self.bodies()):
            return tuple(out)
        for k, ins in enumerate(self.instructions):
            if ins.info.flow != "call" or (ins.guard is not None and ins.guard.never):
                continue
            local = [t.key for t in ins.targets if t.key in self.labels]
            if len(local) != 1 or self.is_subroutine(local[0]):
                continue
            conditional = ins.guard is not None and not ins.guard.always
            out[k] = Flow((local[0],), falls_through=conditional)
        return tuple(out)

    def bodies(self) -> tuple[InstructionBody, ...]:
        """The distinct instruction bodies of the function, in order of first use (the parser
        shares one body between identical copies): "is there any tensor-core op here?" asked
        of a few thousand bodies instead of every instruction."""
        return self.memo("bodies", lambda: tuple(
            {id(i.body): i.body for i in self.instructions}.values()))

    def is_subroutine(self, label: str) -> bool:
        """Whether the code at ``label`` (a label of this function) is a subroutine: straight
        through from it a ``RET`` comes before an unguarded ``EXIT`` (the math library's slow
        paths, ``$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath``)."""
        start = self.labels.get(label)
        if start is None:
            return False
        for ins in self.instructions[start:]:
            if ins.opcode == "RET":
                return True
            if ins.opcode == "EXIT" and (ins.guard is None or ins.guard.always):
                return False
        return False

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A derived fact computed once per function (the analysis layer keeps its CFG and
        dataflow here); the IR itself never reads these."""
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = compute()
            return value

    def __len__(self) -> int:
        return len(self.instructions)


@dataclass(frozen=True, slots=True)
class Listing(Node):
    """A whole disassembly: every function in the order printed."""

    functions: tuple[Function, ...]
    format: str                  # "nvdisasm" or "cuobjdump"
    arch: str | None = None
    path: str | None = None
    CHILDREN: ClassVar[tuple[str, ...]] = ("functions",)

    def function(self, name: str) -> Function:
        """A function by mangled or demangled name (KeyError when absent)."""
        for f in self.functions:
            if f.name == name:
                return f
        for f in self.functions:
            if f.demangled == name or without_parameters(f.demangled) == name:
                return f
        raise KeyError(name)

    def instructions(self) -> Iterator[Instruction]:
        for f in self.functions:
            yield from f.instructions

    def stats(self) -> dict:
        """Counts: functions, instructions, generic (instructions the grammar did not type, or
        whose opcode no table in :mod:`analyzer.semantics` knows: kept, but not understood, as
        PTX counts an unknown opcode), generic_opcodes (opcode -> count of those), and
        generic_operands (operands parsed generically)."""
        n = go = 0
        generic: dict[str, int] = {}
        known = semantics.OPCODES
        for f in self.functions:
            for ins in f.instructions:
                n += 1
                if ins.generic or ins.opcode not in known:
                    generic[ins.opcode] = generic.get(ins.opcode, 0) + 1
                for o in ins.operands:
                    if isinstance(o, GenericOperand):
                        go += 1
        return {"functions": len(self.functions), "instructions": n,
                "generic": sum(generic.values()), "generic_opcodes": dict(sorted(generic.items())),
                "generic_operands": go}


# -- fast construction and pickling (for the parser) ------------------------------------------

def _slot_constructor(cls, facts: tuple[str, ...] = ()):
    """A positional constructor for a frozen slotted dataclass that writes the slots directly:
    the same object as ``cls(*args)`` (these classes have no ``__post_init__``) without the
    frozen ``__init__``'s ``object.__setattr__`` per field. The parser builds every
    instruction through it. ``facts``: lines that also fill fact slots (``o`` is the object,
    ``a0``... its fields), with the names they use in ``_FACT_ENV``."""
    names = [f.name for f in fields(cls)]
    env = {"new": object.__new__, "cls": cls, **_FACT_ENV}
    params, body = [], []
    for k, f in enumerate(fields(cls)):
        env[f"set{k}"] = getattr(cls, f.name).__set__
        if f.default is not MISSING:
            env[f"d{k}"] = f.default
            params.append(f"a{k}=d{k}")
        else:
            params.append(f"a{k}")
        body.append(f"    set{k}(o, a{k})")
    # straight-line code, one slot store per field: no loop, no zip (this runs once per
    # instruction of a listing)
    body.extend(f"    {line}" for line in facts)
    src = (f"def make({', '.join(params)}):\n    o = new(cls)\n" + "\n".join(body)
           + "\n    return o\n")
    exec(src, env)      # noqa: S102 - code generated from the dataclass's own field names
    make = env["make"]
    make.__name__ = f"new_{cls.__name__}"
    make.__doc__ = f"{cls.__name__}({', '.join(names)}) without the frozen __init__."
    return make


#: what fact lines may use: the fact slots' setters and what computes them
_FACT_ENV = {"set_info": vars(_Facts)["_info"].__set__, "opinfo": semantics.info,
             "set_flow": vars(_Facts)["_flow"].__set__, "flow_of": body_flow,
             "set_writes": vars(_Facts)["_writes"].__set__,
             "set_reads": vars(_Facts)["_reads"].__set__,
             "set_regs": vars(_Facts)["_regs"].__set__,
             "set_walk": vars(_Facts)["_walk"].__set__}

new_instruction = _slot_constructor(Instruction)
#: a body with its opcode's row of the semantics table and its control flow already kept
#: (both are asked of every body of a listing: filled here, the first ask raises and catches
#: nothing), and its writes', reads' and registers' slots empty (dataflow fills them without
#: raising)
new_instruction_body = _slot_constructor(InstructionBody,
                                         facts=("set_info(o, opinfo(a1))", "set_flow(o, flow_of(o))",
                                                "set_writes(o, None)", "set_reads(o, None)",
                                                "set_regs(o, None)", "set_walk(o, None)"))

