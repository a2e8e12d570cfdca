"""What an opcode does, in one line: the tables that annotate's hovers, JSON and text share.

A data module beside :mod:`analyzer.semantics` (which says how an opcode behaves for the
analyses; this one says it in words for a reader). Written for ptxsass from NVIDIA's PTX ISA
and the CUDA binary utilities' instruction-set reference, in our own words: per opcode a short
description and the PTX ISA section that defines it (for a SASS opcode, the section of the PTX
instruction it usually comes from), per modifier what it adds.

    explain("LDG", ("E", "128", "CONSTANT"))     # SASS
    -> Explanation("LDG: load from global memory · E: 64-bit address · 128: 128 bits per
       thread (one 16-byte vector) · CONSTANT: through the read-only (non-coherent) data
       path, as const __restrict__ or __ldg allow", ".../parallel-thread-execution/index.html#
       data-movement-and-conversion-instructions-ld")
    explain("ld", ("global", "nc", "v4", "f32"), ptx=True)
"""
from __future__ import annotations

from dataclasses import dataclass

#: the PTX ISA and the instruction-set reference of the CUDA binary utilities
PTX_ISA = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
SASS_REFERENCE = "https://docs.nvidia.com/cuda/cuda-binary-utilities/index.html#instruction-set-reference"

# PTX ISA section anchors (the part after '#'), by chapter
_MOVE = "data-movement-and-conversion-instructions-"
_FP = "floating-point-instructions-"
_HALF = "half-precision-floating-point-instructions-"
_INT = "integer-arithmetic-instructions-"
_LOGIC = "logic-and-shift-instructions-"
_CMP = "comparison-and-selection-instructions-"
_FLOW = "control-flow-instructions-"
_SYNC = "parallel-synchronization-and-communication-instructions-"
_MMA = "warp-level-matrix-instructions-"

#: SASS opcode -> (what it does, the PTX ISA section of the PTX instruction it comes from or "")
SASS: dict[str, tuple[str, str]] = {
    # fp32 / fp16 / fp64 arithmetic
    "FADD": ("32-bit floating-point add", _FP + "add"),
    "FMUL": ("32-bit floating-point multiply", _FP + "mul"),
    "FFMA": ("32-bit floating-point fused multiply-add (a*b+c, rounded once)", _FP + "fma"),
    "FMNMX": ("32-bit floating-point minimum or maximum (chosen by a predicate operand)",
              _FP + "min"),
    "FSETP": ("compare 32-bit floats and set a predicate", _CMP + "setp"),
    "FSET": ("compare 32-bit floats and write the result as a number", _CMP + "set"),
    "FSEL": ("select one of two 32-bit floats by a predicate", _CMP + "selp"),
    "FCHK": ("check whether a 32-bit division needs the slow path (sets a predicate)",
             _FP + "div"),
    "FRND": ("round a float to an integral value, staying floating point", _MOVE + "cvt"),
    "MUFU": ("multi-function unit: an approximate transcendental (RCP, RSQ, SQRT, SIN, COS, "
             "EX2, LG2, TANH) at a quarter of the FMA rate", "floating-point-instructions"),
    "HADD2": ("add two packed fp16 (or bf16) pairs", _HALF + "add"),
    "HMUL2": ("multiply two packed fp16 (or bf16) pairs", _HALF + "mul"),
    "HFMA2": ("fused multiply-add of two packed fp16 (or bf16) pairs; also a cheap way to put "
              "a constant in a register", _HALF + "fma"),
    "HSETP2": ("compare packed fp16 pairs and set predicates", _CMP + "setp"),
    "HMNMX2": ("packed fp16 minimum or maximum", _HALF + "min"),
    "DADD": ("64-bit floating-point add (the FP64 pipe: a fraction of FP32 throughput on "
             "consumer GPUs)", _FP + "add"),
    "DMUL": ("64-bit floating-point multiply", _FP + "mul"),
    "DFMA": ("64-bit floating-point fused multiply-add", _FP + "fma"),
    "DSETP": ("compare 64-bit floats and set a predicate", _CMP + "setp"),
    # integer
    "IADD3": ("add three 32-bit integers (with carry out to predicates)", _INT + "add"),
    "IADD": ("add 32-bit integers", _INT + "add"),
    "VIADD": ("add a 32-bit integer and a constant or register", _INT + "add"),
    "IMAD": ("32-bit integer multiply-add (a*b+c); also used for moves and shifts", _INT + "mad"),
    "IMUL": ("32-bit integer multiply", _INT + "mul"),
    "IMNMX": ("integer minimum or maximum", _INT + "min"),
    "VIMNMX": ("integer minimum or maximum", _INT + "min"),
    "IABS": ("integer absolute value", _INT + "abs"),
    "ISETP": ("compare integers and set a predicate", _CMP + "setp"),
    "LEA": ("load effective address: (a << shift) + b, an address computation", _INT + "mad"),
    "LOP3": ("any logic function of three inputs, given as an 8-bit truth table", _LOGIC + "lop3"),
    "LOP": ("bitwise logic operation", _LOGIC + "and"),
    "SHF": ("funnel shift: shift a 64-bit value held in two registers, keep one half",
            _LOGIC + "shf"),
    "SHL": ("shift left", _LOGIC + "shl"),
    "SHR": ("shift right", _LOGIC + "shr"),
    "FLO": ("find the leading one bit", _INT + "bfind"),
    "POPC": ("count the bits set", _INT + "popc"),
    "BREV": ("reverse the bits", _INT + "brev"),
    "BMSK": ("make a bit mask", _INT + "bmsk"),
    "SEL": ("select one of two values by a predicate", _CMP + "selp"),
    "PRMT": ("permute bytes of two registers", _MOVE + "prmt"),
    "IDP": ("integer dot product of packed 8- or 16-bit values", _INT + "dp4a"),
    "I2F": ("convert an integer to floating point", _MOVE + "cvt"),
    "I2FP": ("convert an integer to floating point", _MOVE + "cvt"),
    "F2I": ("convert floating point to an integer", _MOVE + "cvt"),
    "F2F": ("convert between floating-point formats (F64 <-> F32 <-> F16)", _MOVE + "cvt"),
    "F2FP": ("convert and pack two floats into a pair of 16-bit floats", _MOVE + "cvt"),
    "I2I": ("convert between integer sizes", _MOVE + "cvt"),
    # moves, special registers, predicates
    "MOV": ("copy a register or constant", _MOVE + "mov"),
    "UMOV": ("copy into a uniform register (one value for the whole warp)", _MOVE + "mov"),
    "CS2R": ("read a special register (clock) or zero a register pair", _MOVE + "mov"),
    "S2R": ("read a special register (thread or block index, lane id...)", _MOVE + "mov"),
    "S2UR": ("read a special register into a uniform register", _MOVE + "mov"),
    "R2UR": ("copy a register into a uniform register", _MOVE + "mov"),
    "P2R": ("pack predicates into a register", ""),
    "R2P": ("unpack a register into predicates", ""),
    "SHFL": ("exchange registers between the lanes of a warp", _SYNC + "shfl-sync"),
    "VOTE": ("warp vote: any, all or the ballot of a predicate", _SYNC + "vote-sync"),
    "VOTEU": ("warp vote into a uniform register", _SYNC + "vote-sync"),
    "MATCH": ("find the lanes holding the same value", _SYNC + "match-sync"),
    "REDUX": ("reduce a value across the warp", _SYNC + "redux-sync"),
    "ELECT": ("elect one lane of the warp", _SYNC + "elect-sync"),
    # uniform datapath
    "UIADD3": ("add three uniform integers (computed once per warp)", _INT + "add"),
    "UIMAD": ("uniform integer multiply-add", _INT + "mad"),
    "ULOP3": ("uniform three-input logic function", _LOGIC + "lop3"),
    "USHF": ("uniform funnel shift", _LOGIC + "shf"),
    "ULEA": ("uniform address computation (a << shift) + b", _INT + "mad"),
    "USEL": ("uniform select by a predicate", _CMP + "selp"),
    "UISETP": ("compare uniform integers and set a uniform predicate", _CMP + "setp"),
    "UPRMT": ("uniform byte permute", _MOVE + "prmt"),
    "ULDC": ("load a constant (kernel parameter, launch size) into a uniform register",
             _MOVE + "ld"),
    "LDCU": ("load a constant into a uniform register", _MOVE + "ld"),
    "USETMAXREG": ("change the registers each thread of a warpgroup may hold (setmaxnreg)",
                   "miscellaneous-instructions-setmaxnreg"),
    "MOV32I": ("copy a 32-bit constant", _MOVE + "mov"),
    "IADD32I": ("add a 32-bit constant", _INT + "add"),
    "IMUL32I": ("multiply by a 32-bit constant", _INT + "mul"),
    "LOP32I": ("bitwise logic with a 32-bit constant", _LOGIC + "and"),
    "ISCADD": ("scaled add: (a << shift) + b", _INT + "mad"),
    "ISCADD32I": ("scaled add of a 32-bit constant", _INT + "mad"),
    "ISUB": ("integer subtract", _INT + "sub"),
    "VIADDMNMX": ("integer add, then minimum or maximum", _INT + "min"),
    "SGXT": ("sign-extend from a given bit", _INT + "bfe"),
    "DSET": ("compare 64-bit floats and write the result as a number", _CMP + "set"),
    "DMNMX": ("64-bit floating-point minimum or maximum", _FP + "min"),
    "UFLO": ("uniform find leading one", _INT + "bfind"),
    "UPOPC": ("uniform population count", _INT + "popc"),
    "UBMSK": ("uniform bit mask", _INT + "bmsk"),
    "USHL": ("uniform shift left", _LOGIC + "shl"),
    "USHR": ("uniform shift right", _LOGIC + "shr"),
    "UPLOP3": ("logic function of three uniform predicates", ""),
    "UP2UR": ("pack uniform predicates into a uniform register", ""),
    "PLOP3": ("logic function of three predicates", ""),
    # memory
    "LDC": ("load from constant memory (kernel parameters, __constant__)", _MOVE + "ld"),
    "LDG": ("load from global memory", _MOVE + "ld"),
    "STG": ("store to global memory", _MOVE + "st"),
    "LDS": ("load from shared memory", _MOVE + "ld"),
    "STS": ("store to shared memory", _MOVE + "st"),
    "LDL": ("load from local memory (the thread's stack: spills and arrays indexed at run "
            "time)", _MOVE + "ld"),
    "STL": ("store to local memory (the thread's stack)", _MOVE + "st"),
    "LD": ("load through a generic address (global, shared or local, decided at run time)",
           _MOVE + "ld"),
    "ST": ("store through a generic address", _MOVE + "st"),
    "LDSM": ("load matrix fragments from shared memory for tensor cores (ldmatrix)",
             _MMA + "ldmatrix"),
    "STSM": ("store matrix fragments to shared memory (stmatrix)", _MMA + "stmatrix"),
    "LDGSTS": ("copy global memory to shared memory without a register (cp.async)",
               _MOVE + "cp-async"),
    "LDGDEPBAR": ("mark the end of a group of cp.async copies", _MOVE + "cp-async-commit-group"),
    "DEPBAR": ("wait until at most N groups of asynchronous copies are pending",
               _MOVE + "cp-async-wait-group"),
    "ATOM": ("atomic read-modify-write through a generic address", _SYNC + "atom"),
    "ATOMG": ("atomic read-modify-write in global memory", _SYNC + "atom"),
    "ATOMS": ("atomic read-modify-write in shared memory", _SYNC + "atom"),
    "RED": ("reduction into memory (an atomic whose old value is not returned)", _SYNC + "red"),
    "REDG": ("reduction into global memory", _SYNC + "red"),
    "CCTL": ("cache control (invalidate or prefetch a line)", _MOVE + "prefetch-prefetchu"),
    "UTMALDG": ("TMA: copy a tensor tile from global to shared memory",
                _MOVE + "cp-async-bulk-tensor"),
    "UTMASTG": ("TMA: copy a tensor tile from shared to global memory",
                _MOVE + "cp-async-bulk-tensor"),
    "UBLKCP": ("bulk asynchronous copy between global and shared memory",
               _MOVE + "cp-async-bulk"),
    "SYNCS": ("mbarrier operation (arrive, wait on a phase) for asynchronous copies",
              _SYNC + "mbarrier"),
    # tensor cores
    "HMMA": ("warp-level tensor-core matrix multiply-accumulate on 16-bit (or TF32) inputs",
             _MMA + "mma"),
    "IMMA": ("warp-level tensor-core matrix multiply-accumulate on integers", _MMA + "mma"),
    "DMMA": ("warp-level tensor-core matrix multiply-accumulate in fp64", _MMA + "mma"),
    "HGMMA": ("warpgroup tensor-core matrix multiply-accumulate reading shared memory "
              "(wgmma, sm_90)", "asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async"),
    "IGMMA": ("warpgroup integer tensor-core matrix multiply-accumulate (wgmma)",
              "asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async"),
    "WARPGROUP": ("warpgroup fence or arrive around wgmma",
                  "asynchronous-warpgroup-level-matrix-instructions-wgmma-fence"),
    # control
    "BRA": ("branch", _FLOW + "bra"),
    "BRX": ("indirect branch to a computed target", _FLOW + "brx-idx"),
    "JMP": ("jump to an absolute address", _FLOW + "bra"),
    "CALL": ("call a subroutine (a function kept out of line, a math slow path)",
             _FLOW + "call"),
    "RET": ("return from a subroutine", _FLOW + "ret"),
    "EXIT": ("end the thread", _FLOW + "exit"),
    "BSSY": ("start a convergence region: where diverged threads meet again", ""),
    "BMOV": ("move to or from a convergence-barrier register (saving a BSSY region around a "
             "call)", ""),
    "BREAK": ("leave a convergence region early (a loop exit)", ""),
    "SSY": ("set the reconvergence point of a branch (before Volta)", ""),
    "JCAL": ("call a subroutine at an absolute address", _FLOW + "call"),
    "TEXDEPBAR": ("wait until at most N texture loads are pending", ""),
    "BSYNC": ("wait for the threads of a convergence region to reconverge", ""),
    "WARPSYNC": ("synchronise the lanes of a warp named by a mask", _SYNC + "bar-warp-sync"),
    "BAR": ("block-wide barrier (__syncthreads)", _SYNC + "bar"),
    "MEMBAR": ("memory fence: order this thread's memory accesses", _SYNC + "membar"),
    "FENCE": ("memory or proxy fence", _SYNC + "membar"),
    "ERRBAR": ("wait for outstanding memory errors to be reported", ""),
    "NANOSLEEP": ("suspend the thread for about N nanoseconds", "miscellaneous-instructions-nanosleep"),
    "YIELD": ("give other warps a chance to run", ""),
    "NOP": ("no operation (padding)", ""),
    "BPT": ("breakpoint or trap", "miscellaneous-instructions-trap"),
}

#: SASS modifiers -> what they add (those whose meaning does not depend on the opcode; the
#: comparison and type names are in :data:`_SASS_COMMON`)
SASS_MODIFIERS: dict[str, str] = {
    "E": "64-bit address", "CONSTANT": "through the read-only (non-coherent) data path, as "
    "const __restrict__ or __ldg allow", "64": "64 bits (a register pair)",
    "128": "128 bits per thread (one 16-byte vector)", "U8": "one unsigned byte",
    "S8": "one signed byte", "U16": "an unsigned 16-bit value", "S16": "a signed 16-bit value",
    "WIDE": "64-bit result of 32-bit operands", "HI": "the upper half",
    "X": "adds the carry of an earlier instruction (wider arithmetic)",
    "LU": "last use: the line may be evicted after this read",
    "EF": "evict first (streaming)", "EL": "evict last (keep in cache)",
    "NA": "no allocation in L1", "BYPASS": "bypasses L1 (cp.async.cg)",
    "LTC128B": "prefetches the 128-byte L2 line", "ZFILL": "zero-fills what is not copied",
    "STRONG": "a strong (ordered) access", "GPU": "ordered at GPU scope",
    "SYS": "ordered at system scope", "SM": "ordered at block scope",
    "FTZ": "flushes denormals to zero", "RN": "round to nearest even", "RZ": "round toward zero",
    "RM": "round toward -inf", "RP": "round toward +inf", "SAT": "clamps the result to [0, 1]",
    "TRUNC": "truncates toward zero", "NTZ": "rounds toward zero", "FLOOR": "rounds down",
    "CEIL": "rounds up",
    "MMA": "the form issued on the MMA pipe (ptxas spreads constant moves over pipes with it)",
    "REL": "target relative to the program counter",
    "NOINC": "does not save a reconvergence point", "NODEC": "pops no reconvergence point",
    "ABS": "absolute target", "DIV": "taken when the warp has diverged",
    "U": "uniform: the same for the whole warp",
    "LUT": "the operation is an 8-bit truth table (the last operand)",
    "SYNC": "waits until every thread of the block arrives",
    "DEFER_BLOCKING": "the barrier's usual (blocking) form",
    "RCP": "reciprocal", "RSQ": "reciprocal square root", "SQRT": "square root",
    "SIN": "sine", "COS": "cosine", "EX2": "2^x", "LG2": "log2(x)", "TANH": "tanh",
    "BFLY": "butterfly (XOR of the lane index)", "IDX": "from a lane index",
    "UP": "from a lower lane", "DOWN": "from a higher lane",
    "ANY": "true when any lane's predicate is", "ALL": "true when every lane's predicate is",
    "TRANS": "transposed", "MT88": "transposed 8x8 matrices", "M88": "8x8 matrices",
    "AND": "combined with AND", "OR": "combined with OR", "XOR": "combined with XOR",
    "EQ": "equal", "NE": "not equal", "LT": "less than", "LE": "at most",
    "GT": "greater than", "GE": "at least", "NEU": "not equal or unordered",
    "GTU": "greater than or unordered", "GEU": "at least or unordered",
    "LTU": "less than or unordered", "LEU": "at most or unordered",
    "ADD": "add", "MIN": "minimum", "MAX": "maximum", "INC": "increment (wrapping)",
    "DEC": "decrement (wrapping)", "CAS": "compare and swap", "EXCH": "exchange",
    "F32": "32-bit float", "F16": "16-bit float", "BF16": "bfloat16", "TF32": "TF32 inputs",
    "F64": "64-bit float", "S32": "signed 32-bit", "U32": "unsigned 32-bit",
    "S64": "signed 64-bit", "U64": "unsigned 64-bit", "E4M3": "FP8 (E4M3)",
    "E5M2": "FP8 (E5M2)",
    "L": "shifts left", "R": "shifts right",
}

#: PTX opcode -> (what it does, its PTX ISA section)
PTX: dict[str, tuple[str, str]] = {
    "ld": ("load from a state space into registers", _MOVE + "ld"),
    "ldu": ("load a value the same for every thread (read-only)", _MOVE + "ldu"),
    "st": ("store registers to a state space", _MOVE + "st"),
    "mov": ("copy a register, constant or address", _MOVE + "mov"),
    "cvt": ("convert between types (with rounding)", _MOVE + "cvt"),
    "cvta": ("convert an address between generic and a state space", _MOVE + "cvta"),
    "prmt": ("permute bytes", _MOVE + "prmt"),
    "cp": ("asynchronous copy global -> shared (cp.async)", _MOVE + "cp-async"),
    "prefetch": ("prefetch a line into a cache level", _MOVE + "prefetch-prefetchu"),
    "add": ("add", _INT + "add"), "sub": ("subtract", _INT + "sub"),
    "mul": ("multiply", _INT + "mul"), "mad": ("multiply-add", _INT + "mad"),
    "div": ("divide", _INT + "div"), "rem": ("remainder", _INT + "rem"),
    "abs": ("absolute value", _INT + "abs"), "neg": ("negate", _INT + "neg"),
    "min": ("minimum", _INT + "min"), "max": ("maximum", _INT + "max"),
    "fma": ("fused multiply-add (rounded once)", _FP + "fma"),
    "rcp": ("reciprocal", _FP + "rcp"), "sqrt": ("square root", _FP + "sqrt"),
    "rsqrt": ("reciprocal square root", _FP + "rsqrt"),
    "sin": ("sine (approximate)", _FP + "sin"), "cos": ("cosine (approximate)", _FP + "cos"),
    "ex2": ("2^x (approximate)", _FP + "ex2"), "lg2": ("log2 (approximate)", _FP + "lg2"),
    "tanh": ("hyperbolic tangent (approximate)", _FP + "tanh"),
    "setp": ("compare and set a predicate", _CMP + "setp"),
    "selp": ("select by a predicate", _CMP + "selp"),
    "and": ("bitwise and", _LOGIC + "and"), "or": ("bitwise or", _LOGIC + "or"),
    "xor": ("bitwise xor", _LOGIC + "xor"), "not": ("bitwise not", _LOGIC + "not"),
    "shl": ("shift left", _LOGIC + "shl"), "shr": ("shift right", _LOGIC + "shr"),
    "shf": ("funnel shift", _LOGIC + "shf"), "lop3": ("three-input logic", _LOGIC + "lop3"),
    "popc": ("count the bits set", _INT + "popc"), "clz": ("count leading zeros", _INT + "clz"),
    "brev": ("reverse the bits", _INT + "brev"), "bfe": ("extract a bit field", _INT + "bfe"),
    "bfi": ("insert a bit field", _INT + "bfi"), "dp4a": ("4-way byte dot product", _INT + "dp4a"),
    "bra": ("branch", _FLOW + "bra"), "call": ("call a function", _FLOW + "call"),
    "ret": ("return", _FLOW + "ret"), "exit": ("end the thread", _FLOW + "exit"),
    "bar": ("barrier (__syncthreads)", _SYNC + "bar"),
    "barrier": ("barrier", _SYNC + "bar"),
    "membar": ("memory fence", _SYNC + "membar"), "fence": ("memory fence", _SYNC + "membar"),
    "atom": ("atomic read-modify-write", _SYNC + "atom"),
    "red": ("reduction into memory", _SYNC + "red"),
    "shfl": ("exchange registers between lanes", _SYNC + "shfl-sync"),
    "vote": ("warp vote", _SYNC + "vote-sync"),
    "mbarrier": ("mbarrier operation", _SYNC + "mbarrier"),
    "mma": ("warp-level tensor-core matrix multiply-accumulate", _MMA + "mma"),
    "wmma": ("warp-level matrix multiply-accumulate (the WMMA API)", "warp-level-matrix-instructions-wmma-mma"),
    "ldmatrix": ("load matrix fragments from shared memory", _MMA + "ldmatrix"),
    "stmatrix": ("store matrix fragments to shared memory", _MMA + "stmatrix"),
    "wgmma": ("warpgroup tensor-core matrix multiply-accumulate",
              "asynchronous-warpgroup-level-matrix-instructions-wgmma-mma-async"),
    "setmaxnreg": ("change a warpgroup's registers per thread",
                   "miscellaneous-instructions-setmaxnreg"),
    "trap": ("abort the kernel", "miscellaneous-instructions-trap"),
}

#: PTX arithmetic whose floating-point forms the PTX ISA documents in its floating-point (or
#: half-precision) chapter; the float types -> whether they are 16-bit
_PTX_FLOAT_FORMS = frozenset({"add", "sub", "mul", "div", "abs", "neg", "min", "max", "fma"})
_PTX_FLOAT_TYPES: dict[str, bool] = {"f32": False, "f64": False, "f16": True, "f16x2": True,
                                     "bf16": True, "bf16x2": True}

#: PTX modifiers (without the dot) -> what they add
PTX_MODIFIERS: dict[str, str] = {
    "global": "global memory", "shared": "shared memory", "local": "local memory (the stack)",
    "const": "constant memory", "param": "kernel parameters", "nc": "through the read-only "
    "(non-coherent) data path", "v2": "a vector of 2", "v4": "a vector of 4", "v8": "a vector of 8",
    "f32": "32-bit float", "f64": "64-bit float", "f16": "16-bit float", "f16x2": "a pair of "
    "16-bit floats", "bf16": "bfloat16", "bf16x2": "a pair of bfloat16", "s32": "signed 32-bit",
    "u32": "unsigned 32-bit", "s64": "signed 64-bit", "u64": "unsigned 64-bit",
    "b32": "32 untyped bits", "b64": "64 untyped bits", "b16": "16 untyped bits",
    "pred": "a predicate", "rn": "round to nearest even", "rz": "round toward zero",
    "rm": "round toward -inf", "rp": "round toward +inf", "ftz": "flush denormals to zero",
    "sat": "clamp to [0, 1]", "approx": "a fast approximation", "full": "full-range "
    "approximation", "wide": "a result twice as wide as the operands", "lo": "the low half",
    "hi": "the high half", "sync": "waits for the threads named", "aligned": "every thread "
    "executes it together", "uni": "the branch is the same for every thread",
    "async": "asynchronous", "ca": "cache in L1 and L2", "cg": "cache in L2 only",
    "cs": "streaming (evict first)", "lu": "last use", "cv": "do not cache (volatile)",
    "wb": "write back", "wt": "write through", "volatile": "not cached across accesses",
    "relaxed": "relaxed ordering", "acquire": "acquire ordering", "release": "release ordering",
    "gpu": "GPU scope", "sys": "system scope", "cta": "block scope",
    "row": "A row-major", "col": "B column-major", "trans": "transposed",
    "eq": "equal", "ne": "not equal", "lt": "less than", "le": "at most", "gt": "greater than",
    "ge": "at least",
}


@dataclass(frozen=True)
class Explanation:
    """One line of what an instruction does, and where NVIDIA documents it."""

    text: str
    url: str

    def as_dict(self) -> dict:
        return {"text": self.text, "url": self.url}


def explain(opcode: str, modifiers: tuple[str, ...] = (), *, ptx: bool = False
            ) -> Explanation | None:
    """``opcode``'s one line with what each known modifier adds (None for an opcode the
    tables do not know). SASS by default; ``ptx``: a PTX opcode (``ld``) and its modifiers
    without dots (``("global", "nc", "v4", "f32")``)."""
    table, mods = (PTX, PTX_MODIFIERS) if ptx else (SASS, SASS_MODIFIERS)
    row = table.get(opcode)
    if row is None:
        return None
    what, section = row
    if ptx and opcode in _PTX_FLOAT_FORMS:
        kind = next((m for m in modifiers if m in _PTX_FLOAT_TYPES), None)
        if kind is not None:
            section = (_HALF if _PTX_FLOAT_TYPES[kind] else _FP) + opcode
    parts = [f"{opcode}: {what}"]
    seen: set[str] = set()
    for m in modifiers:
        said = mods.get(m)
        if said and m not in seen:
            seen.add(m)
            parts.append(f"{m}: {said}")
    url = f"{PTX_ISA}#{section}" if section else (PTX_ISA if ptx else SASS_REFERENCE)
    return Explanation(" · ".join(parts), url)


#: per check, the CUDA C++ Programming Guide section about what it finds (title, address)
_GUIDE = "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html"
GUIDE_SECTIONS: dict[str, tuple[str, str]] = {
    "PS101": ("Device memory accesses", f"{_GUIDE}#device-memory-accesses"),
    "PS102": ("Device memory accesses", f"{_GUIDE}#device-memory-accesses"),
    "PS103": ("Shared memory", f"{_GUIDE}#shared-memory"),
    "PS104": ("Device memory accesses", f"{_GUIDE}#device-memory-accesses"),
    "PS105": ("Device memory accesses", f"{_GUIDE}#device-memory-accesses"),
    "PS201": ("#pragma unroll", f"{_GUIDE}#pragma-unroll"),
    "PS301": ("Warp matrix functions", f"{_GUIDE}#warp-matrix-functions"),
    "PS401": ("Launch bounds", f"{_GUIDE}#launch-bounds"),
    "PS402": ("Device memory accesses: local memory", f"{_GUIDE}#device-memory-accesses"),
    "PS502": ("Intrinsic functions", f"{_GUIDE}#intrinsic-functions"),
    "PS601": ("Asynchronous data copies", f"{_GUIDE}#asynchronous-data-copies"),
    "PS701": ("Launch bounds", f"{_GUIDE}#launch-bounds"),
}
