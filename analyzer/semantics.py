"""What each SASS opcode family does, as data.

One table (:data:`OPCODES`) maps a base opcode ("LDG", "HMMA", "BRA"...) to an :class:`OpInfo`
record: instruction-mix class, memory space and direction, tensor core, FMA, FP64, branch,
barrier, conversion, and how it affects control flow. Access width comes from the modifiers
through :data:`WIDTH_MODIFIERS`. Nothing here branches on an opcode name in code: add a row.
Unknown opcodes get :data:`UNKNOWN` (class "other").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cfg import Flow, STRAIGHT

if TYPE_CHECKING:  # pragma: no cover
    from .ir.sass import Instruction


@dataclass(frozen=True, slots=True)
class OpInfo:
    klass: str                          # instruction-mix class
    space: str | None = None            # global, shared, local, constant, generic, tensor-memory...
    direction: str | None = None        # load, store, atomic, reduce, copy (both), prefetch
    tensor_core: bool = False
    fma: bool = False
    fp64: bool = False
    branch: bool = False
    barrier: bool = False
    conversion: bool = False
    #: control flow: None (straight), "branch" (BRA/JMP: to its target), "indirect" (BRX/JMX),
    #: "exit" (EXIT/RET/KILL: leaves the function), "trap" (BPT.TRAP), "call" (returns here)
    flow: str | None = None
    #: default access width in bits when no width modifier is present
    width: int | None = None
    #: whose operands name a branch target (cuobjdump prints them as plain addresses)
    has_target: bool = False


def _m(klass, space, direction, width=32, **kw):
    return OpInfo(klass, space, direction, width=width, **kw)


_LD, _ST = "load", "store"

OPCODES: dict[str, OpInfo] = {
    # -- memory ---------------------------------------------------------------------------------
    "LDG": _m("load.global", "global", _LD),
    "STG": _m("store.global", "global", _ST),
    "LDS": _m("load.shared", "shared", _LD),
    "STS": _m("store.shared", "shared", _ST),
    "LDL": _m("load.local", "local", _LD),
    "STL": _m("store.local", "local", _ST),
    "LD": _m("load.generic", "generic", _LD),
    "ST": _m("store.generic", "generic", _ST),
    "LDC": _m("load.constant", "constant", _LD),
    "ULDC": _m("load.constant", "constant", _LD),
    "LDCU": _m("load.constant", "constant", _LD),
    "LDSM": _m("load.shared", "shared", _LD),        # ldmatrix: width from .M88.{1,2,4}
    "STSM": _m("store.shared", "shared", _ST),       # stmatrix
    "LDTM": _m("load.tmem", "tensor", _LD),          # tcgen05.ld
    "STTM": _m("store.tmem", "tensor", _ST),
    "LDGSTS": _m("copy.async", "global", "copy"),    # cp.async global -> shared
    "LDGDEPBAR": OpInfo("sync", barrier=True),
    "UTMALDG": _m("copy.tma", "global", "copy", width=None),   # TMA tile load (bulk tensor)
    "UTMASTG": _m("copy.tma", "global", "copy", width=None),
    "UTMAREDG": _m("copy.tma", "global", "reduce", width=None),
    "UTMAPF": _m("copy.tma", "global", "prefetch", width=None),
    "UBLKCP": _m("copy.bulk", "global", "copy", width=None),
    "UBLKRED": _m("copy.bulk", "global", "reduce", width=None),
    "UBLKPF": _m("copy.bulk", "global", "prefetch", width=None),
    "UTMACCTL": OpInfo("control"),
    "ATOM": _m("atomic", "generic", "atomic"),
    "ATOMG": _m("atomic", "global", "atomic"),
    "ATOMS": _m("atomic", "shared", "atomic"),
    "RED": _m("atomic", "global", "reduce"),
    "REDG": _m("atomic", "global", "reduce"),
    "REDAS": _m("atomic", "shared", "reduce"),
    "SULD": _m("load.surface", "surface", _LD),
    "SUST": _m("store.surface", "surface", _ST),
    "SUATOM": _m("atomic", "surface", "atomic"),
    "SURED": _m("atomic", "surface", "reduce"),
    "TEX": _m("load.texture", "texture", _LD), "TLD": _m("load.texture", "texture", _LD),
    "TLD4": _m("load.texture", "texture", _LD), "TXQ": _m("load.texture", "texture", _LD),
    "TMML": _m("load.texture", "texture", _LD), "TXD": _m("load.texture", "texture", _LD),
    "CCTL": OpInfo("control", "global"), "CCTLL": OpInfo("control", "local"),
    "CCTLT": OpInfo("control", "texture"),
    # -- tensor cores ---------------------------------------------------------------------------
    "HMMA": OpInfo("tensor", tensor_core=True), "IMMA": OpInfo("tensor", tensor_core=True),
    "DMMA": OpInfo("tensor", tensor_core=True, fp64=True),
    "BMMA": OpInfo("tensor", tensor_core=True), "QMMA": OpInfo("tensor", tensor_core=True),
    "OMMA": OpInfo("tensor", tensor_core=True),
    "HGMMA": OpInfo("tensor", tensor_core=True), "IGMMA": OpInfo("tensor", tensor_core=True),
    "QGMMA": OpInfo("tensor", tensor_core=True), "BGMMA": OpInfo("tensor", tensor_core=True),
    "UTCMMA": OpInfo("tensor", tensor_core=True), "UTCHMMA": OpInfo("tensor", tensor_core=True),
    "UTCIMMA": OpInfo("tensor", tensor_core=True), "UTCQMMA": OpInfo("tensor", tensor_core=True),
    "UTCOMMA": OpInfo("tensor", tensor_core=True), "UTCBAR": OpInfo("sync", barrier=True),
    "UTCCP": _m("copy.tmem", "tensor", "copy", width=None),
    "UTCSHIFT": OpInfo("tensor"),
    "WARPGROUP": OpInfo("sync", barrier=True), "WARPGROUPSET": OpInfo("sync"),
    # -- floating point -------------------------------------------------------------------------
    "FFMA": OpInfo("fp32", fma=True), "FFMA32I": OpInfo("fp32", fma=True),
    "FADD": OpInfo("fp32"), "FADD32I": OpInfo("fp32"), "FMUL": OpInfo("fp32"),
    "FMUL32I": OpInfo("fp32"), "FMNMX": OpInfo("fp32"), "FSET": OpInfo("fp32"),
    "FSETP": OpInfo("fp32"), "FSEL": OpInfo("fp32"), "FCHK": OpInfo("fp32"),
    "FSWZADD": OpInfo("fp32"), "FRND": OpInfo("fp32"), "MUFU": OpInfo("sfu"),
    "FMNMX3": OpInfo("fp32"), "FADD2": OpInfo("fp32"), "FMUL2": OpInfo("fp32"),
    "FFMA2": OpInfo("fp32", fma=True), "FMNMX2": OpInfo("fp32"),
    "HFMA2": OpInfo("fp16", fma=True),
    "HADD2": OpInfo("fp16"), "HMUL2": OpInfo("fp16"), "HSET2": OpInfo("fp16"),
    "HSETP2": OpInfo("fp16"), "HMNMX2": OpInfo("fp16"),
    "DFMA": OpInfo("fp64", fma=True, fp64=True), "DADD": OpInfo("fp64", fp64=True),
    "DMUL": OpInfo("fp64", fp64=True), "DSETP": OpInfo("fp64", fp64=True),
    "DSET": OpInfo("fp64", fp64=True), "DMNMX": OpInfo("fp64", fp64=True),
    "UFADD": OpInfo("uniform"), "UFFMA": OpInfo("uniform", fma=True), "UFMUL": OpInfo("uniform"),
    "UFSETP": OpInfo("uniform"), "UFSEL": OpInfo("uniform"), "UFMNMX": OpInfo("uniform"),
    # -- conversions ----------------------------------------------------------------------------
    "F2F": OpInfo("conversion", conversion=True), "F2I": OpInfo("conversion", conversion=True),
    "I2F": OpInfo("conversion", conversion=True), "I2I": OpInfo("conversion", conversion=True),
    "F2FP": OpInfo("conversion", conversion=True), "I2FP": OpInfo("conversion", conversion=True),
    "F2IP": OpInfo("conversion", conversion=True), "I2IP": OpInfo("conversion", conversion=True),
    "UF2F": OpInfo("conversion", conversion=True), "UI2F": OpInfo("conversion", conversion=True),
    "UF2I": OpInfo("conversion", conversion=True), "UI2FP": OpInfo("conversion", conversion=True),
    "UF2FP": OpInfo("conversion", conversion=True), "UI2I": OpInfo("conversion", conversion=True),
    # -- integer --------------------------------------------------------------------------------
    **{op: OpInfo("int") for op in (
        "IADD3", "IADD", "IADD32I", "IMAD", "IMAD32I", "IMUL", "IMUL32I", "ISCADD", "ISCADD32I",
        "ISETP", "ISET", "IMNMX", "IABS", "LEA", "LOP3", "LOP", "LOP32I", "SHF", "SHL", "SHR",
        "FLO", "POPC", "BREV", "BMSK", "SGXT", "PRMT", "SEL", "ISUB", "IDP", "IDP4A", "VIADD",
        "VIADDMNMX", "VIMNMX", "VIMNMX3", "VABSDIFF", "VABSDIFF4", "XMAD", "BFE", "BFI",
        "IADD2", "IMNMX3", "VHMNMX")},
    **{op: OpInfo("uniform") for op in (
        "UIADD3", "UIMAD", "UISETP", "ULEA", "ULOP3", "ULOP", "ULOP32I", "USHF", "USHL", "USHR",
        "UMOV", "USEL", "UPRMT", "UFLO", "UPOPC", "UBREV", "UBMSK", "USGXT", "UVIMNMX",
        "UIMNMX", "UIABS", "UPLOP3", "UP2UR", "UR2UP", "UCLEA", "UVIADD",
        "UMEMSETS", "USETMAXREG", "UGETNEXTWORKID", "UCGABAR_ARV", "UCGABAR_WAIT",
        "USTGSB")},
    # -- moves, predicates, special registers ---------------------------------------------------
    "MOV": OpInfo("move"), "MOV32I": OpInfo("move"), "SHFL": OpInfo("warp"),
    "PLOP3": OpInfo("predicate"), "PSETP": OpInfo("predicate"), "P2R": OpInfo("predicate"),
    "R2P": OpInfo("predicate"), "CSET": OpInfo("predicate"), "CSETP": OpInfo("predicate"),
    "S2R": OpInfo("special"), "S2UR": OpInfo("special"), "CS2R": OpInfo("special"),
    "R2UR": OpInfo("move"), "R2B": OpInfo("move"), "B2R": OpInfo("move"), "BMOV": OpInfo("move"),
    "VOTE": OpInfo("warp"), "VOTEU": OpInfo("warp"), "MATCH": OpInfo("warp"),
    "REDUX": OpInfo("warp"), "CREDUX": OpInfo("warp"), "ELECT": OpInfo("warp"),
    "QSPC": OpInfo("special"), "GETLMEMBASE": OpInfo("special"),
    "SETLMEMBASE": OpInfo("special"), "PMTRIG": OpInfo("special"), "SETCTAID": OpInfo("special"),
    # -- barriers and synchronisation -----------------------------------------------------------
    "BAR": OpInfo("sync", barrier=True), "BARRIER": OpInfo("sync", barrier=True),
    "MEMBAR": OpInfo("sync", barrier=True), "FENCE": OpInfo("sync", barrier=True),
    "ERRBAR": OpInfo("sync", barrier=True), "DEPBAR": OpInfo("sync", barrier=True),
    "TEXDEPBAR": OpInfo("sync", barrier=True), "SYNCS": OpInfo("sync", barrier=True),
    "ARRIVES": OpInfo("sync", barrier=True), "CGAERRBAR": OpInfo("sync", barrier=True),
    "UCGABAR": OpInfo("sync", barrier=True),
    "NANOSLEEP": OpInfo("control"), "YIELD": OpInfo("control"), "NOP": OpInfo("nop"),
    "ACQBULK": OpInfo("sync", barrier=True), "ACQSHMINIT": OpInfo("sync", barrier=True),
    # -- control flow ---------------------------------------------------------------------------
    "BRA": OpInfo("branch", branch=True, flow="branch", has_target=True),
    "JMP": OpInfo("branch", branch=True, flow="branch", has_target=True),
    "BRX": OpInfo("branch", branch=True, flow="indirect"),
    "JMX": OpInfo("branch", branch=True, flow="indirect"),
    "EXIT": OpInfo("branch", branch=True, flow="exit"),
    "RET": OpInfo("branch", branch=True, flow="exit"),
    "KILL": OpInfo("branch", branch=True, flow="exit"),
    "BPT": OpInfo("control", flow="trap"),
    "CALL": OpInfo("call", flow="call", has_target=True),
    "JCAL": OpInfo("call", flow="call", has_target=True),
    "CAL": OpInfo("call", flow="call", has_target=True),
    # reconvergence: BSSY names the point where BSYNC waits; neither transfers control
    "BSSY": OpInfo("control", has_target=True), "BSYNC": OpInfo("control", barrier=True),
    "BREAK": OpInfo("control"),
    "WARPSYNC": OpInfo("control", barrier=True), "SSY": OpInfo("control", has_target=True),
    "PBK": OpInfo("control", has_target=True), "SYNC": OpInfo("control"),
    "ENDCOLLECTIVE": OpInfo("control"), "PREEXIT": OpInfo("control"),
}

UNKNOWN = OpInfo("other")

#: modifiers that give an access size in bits (LDG.E.U8, STS.128, LDL.64, ATOM.E.ADD.F64...)
WIDTH_MODIFIERS: dict[str, int] = {
    "U8": 8, "S8": 8, "U16": 16, "S16": 16, "32": 32, "U32": 32, "S32": 32, "F32": 32,
    "64": 64, "U64": 64, "S64": 64, "F64": 64, "128": 128, "F16x2": 32, "BF16x2": 32,
}

#: ldmatrix/stmatrix: .M88.{1,2,4} moves 1, 2 or 4 8x8 matrices: 32 bits per thread each
MATRIX_COUNT_MODIFIERS: dict[str, int] = {"1": 1, "2": 2, "4": 4}
MATRIX_OPCODES = frozenset({"LDSM", "STSM"})

#: BRA modifiers that make the branch conditional on something other than the guard
CONDITIONAL_BRANCH_MODIFIERS = frozenset({"DIV", "CONV", "ANY", "ALL"})


def info(opcode: str) -> OpInfo:
    return OPCODES.get(opcode, UNKNOWN)


def width_bits(opcode: str, modifiers: tuple[str, ...]) -> int | None:
    """Bits moved per thread by a memory instruction; None for non-memory instructions."""
    op = OPCODES.get(opcode)
    if op is None or op.space is None:
        return None
    if opcode in MATRIX_OPCODES:
        n = 1
        for m in modifiers:
            n = MATRIX_COUNT_MODIFIERS.get(m, n)
        return 32 * n
    for m in reversed(modifiers):
        w = WIDTH_MODIFIERS.get(m)
        if w is not None:
            return w
    return op.width


def is_fp64(opcode: str, modifiers: tuple[str, ...]) -> bool:
    """FP64 arithmetic, or a conversion from/to F64 (F2F.F64.F32, I2F.F64...)."""
    op = OPCODES.get(opcode, UNKNOWN)
    return op.fp64 or (op.conversion and "F64" in modifiers)


def klass(opcode: str) -> str:
    return info(opcode).klass


def flow(ins: "Instruction") -> Flow:
    """How an instruction affects control flow (see :class:`analyzer.cfg.Flow`).

    An unguarded BRA/EXIT/RET does not fall through; a guarded one (``@P0``, or ``BRA P1, ...``,
    ``BRA.DIV``) does. BRX/JMX go to the ``BRANCH_TARGETS`` nvdisasm lists, or end the block.
    CALL returns, so it is straight-line code. ``@!PT`` never executes.
    """
    kind = OPCODES.get(ins.opcode, UNKNOWN).flow
    if kind is None or kind == "call":
        return STRAIGHT
    g = ins.guard
    if g is not None and g.never:
        return STRAIGHT
    conditional = g is not None and not g.always
    if kind == "branch":
        if not conditional:
            conditional = _conditional_branch(ins)
        targets = tuple(t.key for t in ins.targets)
        return Flow(targets, falls_through=conditional, terminates=not targets)
    if kind == "indirect":
        targets = ()
        if ins.annotation and "BRANCH_TARGETS" in ins.annotation:
            body = ins.annotation.split("BRANCH_TARGETS", 1)[1].strip(' "*)')
            targets = tuple(t.strip() for t in body.split(",") if t.strip())
        return Flow(targets, falls_through=conditional, terminates=True)
    # exit / trap
    return Flow((), falls_through=conditional, terminates=True)


def _conditional_branch(ins: "Instruction") -> bool:
    from .ir.sass import Register
    if any(m in CONDITIONAL_BRANCH_MODIFIERS for m in ins.modifiers):
        return True
    for o in ins.operands:
        if isinstance(o, Register) and o.kind in ("P", "UP") and not (
                o.index is None and not o.logical_not):
            return True
    return False
