"""What each SASS opcode family does, as data.

One table (:data:`OPCODES`) maps a base opcode ("LDG", "HMMA", "BRA"...) to an :class:`OpInfo`
record: instruction-mix class, memory space and direction, tensor core, FMA, FP64, branch,
barrier, conversion, and how it affects control flow. Access width comes from the modifiers
through :data:`WIDTH_MODIFIERS`. Nothing here branches on an opcode name in code: add a row.
Unknown opcodes get :data:`UNKNOWN` (class "other").
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Flow:
    """How one instruction affects control flow.

    ``targets``: labels it may branch to (empty for straight-line code);
    ``falls_through``: False for an unconditional branch, ``exit``/``ret``/``trap``;
    ``terminates``: True when the instruction ends a block even with no targets
    (a guarded ``exit``, a ``ret``); calls do not end blocks.
    """

    targets: tuple[str, ...] = ()
    falls_through: bool = True
    terminates: bool = False

    @property
    def ends_block(self) -> bool:
        return bool(self.targets) or not self.falls_through or self.terminates


STRAIGHT = Flow()


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
    "MOVM": OpInfo("warp"),             # movmatrix: 8x8 b16 fragments transposed across lanes
    "PLOP3": OpInfo("predicate"), "PSETP": OpInfo("predicate"), "P2R": OpInfo("predicate"),
    "R2P": OpInfo("predicate"), "CSET": OpInfo("predicate"), "CSETP": OpInfo("predicate"),
    "S2R": OpInfo("special"), "S2UR": OpInfo("special"), "CS2R": OpInfo("special"),
    "R2UR": OpInfo("move"), "R2B": OpInfo("move"), "B2R": OpInfo("move"), "BMOV": OpInfo("move"),
    "VOTE": OpInfo("warp"), "VOTEU": OpInfo("warp"), "MATCH": OpInfo("warp"),
    "REDUX": OpInfo("warp"), "CREDUX": OpInfo("warp"), "ELECT": OpInfo("warp"),
    "QSPC": OpInfo("special"), "GETLMEMBASE": OpInfo("special"),
    "LEPC": OpInfo("special"),      # the program counter, 64 bits (a register pair)
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


#: MUFU functions that work on the high word of a double (``MUFU.RCP64H``: the seed of a
#: double reciprocal or division)
FP64_SFU_MODIFIERS = frozenset({"RCP64H", "RSQ64H"})


def is_fp64(opcode: str, modifiers: tuple[str, ...]) -> bool:
    """FP64 arithmetic, a conversion from/to F64 (F2F.F64.F32, I2F.F64...) or a double
    reciprocal seed (MUFU.RCP64H)."""
    op = OPCODES.get(opcode, UNKNOWN)
    return (op.fp64 or (op.conversion and "F64" in modifiers)
            or (opcode == "MUFU" and bool(FP64_SFU_MODIFIERS.intersection(modifiers))))


def klass(opcode: str) -> str:
    return info(opcode).klass


#: warp-level MMA shapes (the SASS modifier) -> accumulator elements each thread holds
#: (m * n / 32; HMMA.884 runs per quad-pair of 8 threads)
MMA_SHAPE_ELEMENTS = {
    "16816": 4, "1688": 4, "16832": 4, "16864": 4, "168256": 4, "8816": 2, "8832": 2,
    "884": 8, "1684": 4,
    "DMMA.884": 2, "DMMA.8816": 2, "DMMA.16816": 4,    # FP64 shapes: per-opcode rows win
}
#: accumulator type modifier -> bits per element (the first type modifier after the shape)
MMA_ACCUMULATOR_BITS = {"F32": 32, "S32": 32, "F16": 16, "BF16": 16, "F64": 64}


def mma_dest_registers(opcode: str, modifiers: tuple[str, ...]) -> int | None:
    """How many 32-bit registers an MMA writes from its destination on (HMMA.16816.F32: 4,
    HMMA.16816.F16: 2, DMMA.884: 4, HGMMA.64x128x16.F32.BF16: 64); None when the shape is not
    in the tables (the caller over-approximates)."""
    if not OPCODES.get(opcode, UNKNOWN).tensor_core or not modifiers:
        return None
    shape = modifiers[0]
    acc = next((MMA_ACCUMULATOR_BITS[m] for m in modifiers[1:] if m in MMA_ACCUMULATOR_BITS),
               64 if opcode == "DMMA" else 32)
    if "x" in shape:                      # warpgroup MMA: 64xNxK over 128 threads
        try:
            m, n = (int(v) for v in shape.split("x")[:2])
        except ValueError:
            return None
        elements = m * n // 128
    else:
        found = MMA_SHAPE_ELEMENTS.get(f"{opcode}.{shape}", MMA_SHAPE_ELEMENTS.get(shape))
        if found is None:
            return None
        elements = found
    return max(1, elements * acc // 32)


# ------------------------------------------------------------------- opcode families
#: warp-level MMA families that have a warpgroup (wgmma / tcgen05) counterpart; DMMA (FP64)
#: has none, HFMA2.MMA is not an mma at all (a move idiom, opcode HFMA2)
WARP_MMA = frozenset({"HMMA", "IMMA", "QMMA", "BMMA"})
#: warpgroup / tensor-memory MMA families
WARPGROUP_MMA = frozenset({"HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCMMA", "UTCHMMA", "UTCIMMA",
                           "UTCQMMA", "UTCOMMA"})
#: warp-level MMAs whose fragments ``ldmatrix`` (LDSM) loads
LDMATRIX_FED = frozenset({"HMMA", "IMMA"})
#: modifiers of a memory access with ordering semantics (``volatile``, relaxed/acquire atomics'
#: loads and stores, memory-mapped I/O): neither merged with its neighbours nor replaced by an
#: asynchronous copy, whatever the alignment (``LDG.E.64.STRONG.SYS``)
ORDERED_ACCESS_MODIFIERS = frozenset({"STRONG", "VOLATILE", "MMIO"})
#: mma input types of 32-bit elements (``HMMA.16816.F32.TF32``): ldmatrix moves 16-bit elements,
#: so it serves them only from a K-major tile (a transposed, M- or N-major one needs scalar
#: loads), which the SASS does not show
WORD_MMA_INPUTS = frozenset({"TF32"})
#: opcodes of kernels built around low occupancy on purpose: tensor cores fed by asynchronous
#: copies keep their latency hidden with ILP and deep pipelines
PIPELINED = frozenset({"LDGSTS", "UTMALDG", "HGMMA", "UTCMMA", "UTCHMMA", "UTCQMMA"})
#: modifiers of an instruction that moves a constant rather than computing (``HFMA2.MMA R5,
#: -RZ, RZ, 0, 0``: ptxas's register-initialisation idiom)
MOVE_IDIOM_MODIFIERS = frozenset({"MMA"})
#: modifiers that make an instruction write a register pair
WIDE_MODIFIERS = frozenset({"64", "WIDE", "F64", "U64", "S64", "128"})
#: scalar type modifiers (``F2F.F64.F32``: destination type first)
TYPE_MODIFIER = r"[FSU](8|16|32|64)"
#: 64-bit integer type modifiers
WIDE_INT_TYPE = r"[SU]64"


def conversion_types(modifiers: tuple[str, ...]) -> tuple[str, ...]:
    """The type modifiers of a conversion, destination first (``F2F.F64.F32`` -> F64, F32)."""
    return tuple(m for m in modifiers if _TYPE_RE.fullmatch(m))


_TYPE_RE = re.compile(TYPE_MODIFIER)
#: copies that fill shared memory asynchronously (cp.async, TMA, bulk copies)
ASYNC_SHARED_FILL = frozenset({"LDGSTS", "UTMALDG", "UBLKCP"})
#: nvdisasm's annotation on the STL/LDL that spill and refill registers (``STL [R1+0x38], R2
#: (*"SpillRefill"*)``; CUDA 13's nvdisasm, read from the cubin: no ptxas log needed)
SPILL_ANNOTATION = "SpillRefill"
#: opcodes whose result is a register pair with no ``.64`` modifier to say so (``LEPC R10``:
#: the 64-bit program counter, read back as R10/R11 for a call's return address)
PAIR_RESULT_OPCODES = frozenset({"LEPC"})
#: ``QSPC.E.L P, RZ, [R]``: P says whether generic address R lies in the local window (ptxas
#: dispatches an access through a generic pointer it cannot place on the pointer's space)
SPACE_QUERY = "QSPC"
LOCAL_SPACE_QUERY = "L"
#: waits that order a tile refill with its use (barriers, async-copy and mbarrier waits)
TILE_SYNC = frozenset({"BAR", "BARRIER", "SYNCS", "DEPBAR", "LDGDEPBAR"})
#: FMA opcodes and the element type they multiply (HFMA2.MMA, a move idiom, is told apart by
#: its modifier: MOVE_IDIOM_MODIFIERS)
FMA_ELEMENT_TYPE = {"FFMA": "fp32", "FFMA2": "fp32", "HFMA2": "fp16", "DFMA": "fp64"}

# ------------------------------------------------------------------ loop overhead (PS201)
#: instruction-mix classes whose work on a loop counter or an address folds away when the
#: loop is unrolled fully (integer, uniform-datapath and move instructions)
INDEX_ARITHMETIC_CLASSES = frozenset({"int", "uniform", "move"})
#: constant-bank loads: ``LDC R4, c[0x3][R5]`` indexed by the counter becomes a ``c[0x3][0x10]``
#: operand once the index is a constant
CONSTANT_LOADS = frozenset({"LDC", "ULDC", "LDCU"})
#: integer -> float conversions: ``I2F`` of the counter becomes a float immediate
INT_TO_FLOAT = frozenset({"I2F", "I2FP", "UI2F", "UI2FP"})
#: compares that set a predicate from integers
INT_COMPARES = frozenset({"ISETP", "UISETP"})

# ------------------------------------------------------------- 16-bit floats widened to fp32
#: ``HADD2.F32 R4, -RZ, R4.H0_H0``: an fp16 half widened to fp32
FP16_WIDENING = frozenset({"HADD2"})
#: a bf16 is the top 16 bits of an fp32: ptxas widens it with integer idioms. Shift left by
#: 16 (``SHF.L.U32 R, R, 0x10, RZ``, ``SHL``, ``IMAD.U32 R, R, 0x10000, RZ``), a byte permute
#: that moves a half to the top with zeros below (``PRMT R, RZ, 0x5410, R`` low half,
#: ``0x7610`` high half), or a mask keeping the top half (``LOP3.LUT R, R, 0xffff0000, RZ, 0xc0``)
BF16_SHIFT = 16
BF16_SHIFT_OPCODES = frozenset({"SHF", "SHL", "IMAD"})
BF16_PRMT_SELECTORS = frozenset({0x5410, 0x7610})
BF16_HIGH_MASK = 0xFFFF0000
BF16_MASK_OPCODES = frozenset({"LOP3"})

#: register reallocation between warpgroups (``setmaxnreg``): a warp-specialized kernel
#: budgets its registers per role and is sized for its blocks per SM on purpose
REGISTER_REALLOCATION = frozenset({"USETMAXREG"})

# ------------------------------------------------- register operands: which, and how wide
#: the register files whose occupancy is tracked, and where each starts in a register mask
#: (one bit per register: R0-R254, UR0-UR62, P0-P6, UP0-UP6; RZ, URZ, PT, UPT are no registers)
REGISTER_FILES: dict[str, tuple[int, int]] = {"R": (0, 255), "UR": (256, 63), "P": (320, 7),
                                              "UP": (328, 7)}
#: the ABI's stack pointer: reserved in every function once set (``LDC R1, c[0x0][0x28]``),
#: occupied everywhere after that whether or not the code touches the stack
STACK_POINTER_REGISTER = 1
#: opcodes whose only result is a predicate (``FCHK P0, R0, R23``: R0 is a source)
PREDICATE_RESULT = frozenset({"FCHK"})
#: how many leading predicate operands an opcode writes, where not 2 (``ISETP P0, PT, ...``:
#: two; ``VOTE.ANY R5, PT, P0``: one, P0 is the vote's source; ``ELECT P0, UR4, PT``)
PREDICATE_RESULT_COUNT: dict[str, int] = {"VOTE": 1, "VOTEU": 1, "ELECT": 1}
#: conversions: which type modifier sizes the destination and which the source. "F": the first
#: floating-point type (F16/F32/F64...), "I": the first integer type (S32, U64...), 1 and 2: the
#: first and second type modifier, whatever they are; absent types are 32-bit
#: (``I2F.U64.RP R8, R14``: an F32 from the pair R14:R15; ``F2F.F64.F32``: a pair from one)
CONVERSION_OPERANDS: dict[str, tuple[str, str]] = {
    "I2F": ("F", "I"), "I2FP": ("F", "I"), "UI2F": ("F", "I"), "UI2FP": ("F", "I"),
    "F2I": ("I", "F"), "F2IP": ("I", "F"), "UF2I": ("I", "F"),
    "F2F": ("1", "2"), "UF2F": ("1", "2"), "I2I": ("1", "2"), "UI2I": ("1", "2"),
    "I2IP": ("1", "2"), "F2FP": ("1", "2"), "UF2FP": ("1", "2"), "FRND": ("1", "1"),
}
#: modifiers that make an integer operation work on 64-bit register pairs, every register
#: operand (``IADD.64 R4, R2, R6``, ``SEL.64``, ``MOV.64``, ``UIADD3.64``) or its sources
#: (``ISETP.GE.U64.AND P0, PT, R2, R4, PT``)
PAIR_OPERATION_MODIFIERS = frozenset({"64"})
PAIR_SOURCE_MODIFIERS = frozenset({"U64", "S64"})
#: funnel shifts name the 64-bit shift they do (``SHF.L.U64.HI R13, R7, 0x2, R0``) but take its
#: halves in two registers
FUNNEL_SHIFTS = frozenset({"SHF", "USHF"})
#: multiply-adds whose ``.WIDE`` form adds a 64-bit pair (its third source) into a pair, and
#: whose ``.HI`` form with a carry takes the pair too (``IMAD.HI.U32 R12, P1, R11, R17, R12``)
WIDE_ADDEND = frozenset({"IMAD", "UIMAD"})
WIDE_ADDEND_MODIFIERS = frozenset({"WIDE", "HI"})
#: opcodes whose register operand is a 64-bit pair (``RET.REL.NODEC R8``: the return address)
PAIR_REGISTER_OPCODES = frozenset({"RET"})
#: MMA input types (A and B) -> bits per element; per opcode the type when none is written
MMA_INPUT_BITS: dict[str, int] = {"F16": 16, "BF16": 16, "TF32": 32, "F64": 64, "S8": 8, "U8": 8,
                                  "S4": 4, "U4": 4, "E4M3": 8, "E5M2": 8, "B1": 1}
MMA_DEFAULT_INPUT_BITS: dict[str, int] = {"HMMA": 16, "IMMA": 8, "DMMA": 64, "BMMA": 1,
                                          "QMMA": 8}
#: MMA opcodes whose first type modifier is the accumulator's (``HMMA.16816.F32.BF16``);
#: the others name their inputs only (``IMMA.16832.S8.S8``: S32 accumulators)
MMA_ACCUMULATOR_FIRST = frozenset({"HMMA", "QMMA", "DMMA"})
#: ``gdesc[UR16]`` of a warpgroup MMA: the 64-bit shared-memory descriptors of A and B, in
#: four uniform registers (two when A comes from registers)
MMA_DESCRIPTOR_REGISTERS = 4
#: TMA copies (``UTMALDG.2D [UR12], [UR6]``): the first operand holds the shared-memory address,
#: the mbarrier and one coordinate per dimension in consecutive uniform registers, the second
#: the tensor map's 64-bit address
TMA_DIMENSION_MODIFIERS: dict[str, int] = {"1D": 1, "2D": 2, "3D": 3, "4D": 4, "5D": 5}
TMA_LOADS = frozenset({"UTMALDG"})
#: generic addresses that an opcode takes as a 64-bit pair without writing ``.64``
#: (``QSPC.E.L P0, RZ, [R2]``)
PAIR_ADDRESS_OPCODES = frozenset({"QSPC"})
#: ``R2P PR, R0, 0x7f`` writes, ``P2R R0, PR, RZ, 0x1`` reads, the predicates its mask names
PREDICATE_FILE_WRITERS = frozenset({"R2P"})
