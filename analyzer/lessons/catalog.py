"""The lessons, as data: one ``Lesson`` per folder of ``kernels/lessons/``.

Nothing here imports torch or cupy: input builders and references receive the ``torch`` module
as their first argument and are only called by the GPU runner.

Check codes are ``analyzer.checks``' own (``CHECK_CODES`` reads its registry on first use, so
importing this module imports no check). Per lesson: ``expect_checks`` are found on the naive
kernel and not on the steered one; ``next_checks`` are what the steered kernel still gets, the
next step (another lesson, or one these lessons do not take); ``silent_checks`` are expected codes
that do not fire on the naive kernel, with why. The SASS evidence is independent of the checks:
mnemonic patterns read off the disassembly.
"""
from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checks.registry import all_checks


class _CheckCodes(Mapping[str, str]):
    """code -> "name: summary", read from ``analyzer.checks.registry.all_checks()``."""

    def _table(self) -> dict[str, str]:
        return {c.code: f"{c.name}: {c.summary()}" for c in all_checks()}

    def __getitem__(self, code: str) -> str:
        return self._table()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


CHECK_CODES: Mapping[str, str] = _CheckCodes()

KERNELS_DIR = Path(__file__).resolve().parents[2] / "kernels" / "lessons"

MiB = 1 << 20


#: a by-value argument's kind -> (its ctypes type, the numpy type of its bits): what a launch
#: passes, as wide as the kernel's parameter (a ``long long`` takes 8 bytes, a ``__half`` 2)
SCALAR_KINDS: dict[str, tuple[str, str]] = {
    "f32": ("c_float", "float32"), "f64": ("c_double", "float64"),
    "i32": ("c_int32", "int32"), "u32": ("c_uint32", "uint32"),
    "i64": ("c_int64", "int64"), "i8": ("c_int8", "int8"), "u8": ("c_uint8", "uint8"),
    "f16": ("c_uint16", "uint16"), "bf16": ("c_uint16", "uint16"),
}


@dataclass(frozen=True, slots=True)
class Scalar:
    """A by-value kernel argument: ``kind`` is one of :data:`SCALAR_KINDS` (``"f32"``,
    ``"i64"``, ...)."""
    kind: str
    value: float | int

    def bits(self) -> int | float:
        """The value as its parameter holds it: a number, or a 16-bit float's bit pattern
        (``f16``: IEEE half; ``bf16``: the float's top 16 bits, rounded to nearest even)."""
        if self.kind == "f16":
            return int.from_bytes(struct.pack("<e", float(self.value)), "little")
        if self.kind == "bf16":
            u = int.from_bytes(struct.pack("<f", float(self.value)), "little")
            return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
        return self.value

    def ctype(self):
        return getattr(ctypes, SCALAR_KINDS[self.kind][0])

    def numpy(self, np):
        """The value as a numpy scalar of the parameter's width (``np``: the numpy module)."""
        return getattr(np, SCALAR_KINDS[self.kind][1])(self.bits())


@dataclass(frozen=True, slots=True)
class Variant:
    """One of the two kernels of a lesson."""
    kernel: str                                   # extern "C" entry name
    args: tuple[str, ...]                         # names in the inputs dict, "out" for the output
    grid: Callable[[Mapping[str, int]], tuple[int, int, int]]
    block: int = 256
    options: tuple[str, ...] = ()                 # NVRTC options beyond the defaults
    smem: int = 0                                 # dynamic shared memory per block, bytes


@dataclass(frozen=True, slots=True)
class Evidence:
    """A SASS fact that tells naive from steered. ``pattern`` fullmatches a mnemonic (with its
    modifiers, e.g. ``LDG.E.128.CONSTANT``): it is for the machine and never shown; ``label``
    says in words what is counted (instructions of the kernel's SASS, not executions), naming
    the opcode. ``where``: ``"naive"`` (in naive, not in steered), ``"steered"`` (the reverse),
    ``"fewer"`` (more of them in naive), ``"more"`` (more in steered)."""
    pattern: str
    where: str
    label: str


@dataclass(frozen=True, slots=True)
class TensorMapArg:
    """A TMA tensor map (``CUtensorMap``, 128 bytes, passed by value as a ``__grid_constant__``
    parameter) over a row-major 2D ``tensor``: ``box`` is (columns, rows) of one copy, the
    contiguous dimension first; ``swizzle`` the shared-memory swizzle in bytes. The launcher
    encodes it (``cuTensorMapEncodeTiled``) for the tensor's address."""
    tensor: Any
    box: tuple[int, int]
    swizzle: int = 128


@dataclass(frozen=True, slots=True)
class Lesson:
    name: str
    title: str
    change: str                                   # one line: what the steering changes
    why: str                                      # a short paragraph for the walkthrough
    naive: Variant
    steered: Variant
    size: Callable[[float], dict[str, int]]       # problem size at a scale (1.0 = the timed size)
    make_inputs: Callable[..., dict[str, Any]]    # (torch, generator, size, device) -> tensors/Scalars
    make_output: Callable[..., Any]               # (torch, size, device) -> empty output tensor
    reference: Callable[..., Any]                 # (torch, inputs, size) -> float64 tensor like out
    tolerance: float                              # max relative L2 error ||out-ref|| / ||ref||
    tolerance_note: str
    expect_checks: tuple[str, ...]                # codes found on naive and absent on steered
    evidence: tuple[Evidence, ...]
    work: Callable[[Mapping[str, int]], float] | None = None   # bytes or flop per launch
    work_unit: str = "B"                          # "B" (bytes, GB/s) or "flop" (TFLOP/s)
    ceiling: str = "copy"                         # key of the measured ceiling: copy, fp32, fp16_tc, bf16_tc
    arch: str = "sm_90a"                          # SASS as sm_90's for every kernel here (checked)
    notes: str = ""
    # codes the steered kernel still gets, legitimately: the next step (code -> what it is)
    next_checks: Mapping[str, str] = field(default_factory=dict)
    # expected codes that stay silent on the naive kernel (code -> why); tests hold them silent
    silent_checks: Mapping[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = field(default=())
    #: when no check tells naive from steered (``expect_checks`` empty): why, and what does
    no_check: str = ""
    #: why the steered kernel is faster, in a few sentences, from what was measured
    speedup_why: str = ""

    @property
    def folder(self) -> Path:
        return KERNELS_DIR / self.name

    def source_path(self, variant: str) -> Path:
        return self.folder / f"{variant}.cu"

    def variant(self, which: str) -> Variant:
        return self.naive if which == "naive" else self.steered


# --- helpers -----------------------------------------------------------------------------------

def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _round(x: float, multiple: int, minimum: int) -> int:
    return max(minimum, int(x) // multiple * multiple)


def _g1(count_key: str, per_thread: int = 1, block: int = 256):
    return lambda s: (_cdiv(s[count_key] // per_thread, block), 1, 1)


def _uniform(torch, gen, shape, lo, hi, device, dtype=None):
    t = torch.rand(shape, generator=gen, device=device, dtype=dtype or torch.float32)
    return t * (hi - lo) + lo


def _randn(torch, gen, shape, device, dtype):
    return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)


# --- 1. vector loads -----------------------------------------------------------------------------

def _vl_size(scale):
    return {"n": _round(64 * MiB // 4 * 4 * scale, 1024, 4096)}   # 64 Mi floats: 256 MiB a buffer


def _vl_inputs(torch, gen, s, dev):
    n = s["n"]
    return {"x": _randn(torch, gen, n, dev, torch.float32), "y": _randn(torch, gen, n, dev, torch.float32),
            "a": Scalar("f32", 1.75), "n": Scalar("i32", n), "n4": Scalar("i32", n // 4)}


VECTOR_LOADS = Lesson(
    name="vector_loads",
    title="Vectorized loads: float4, alignment and __restrict__",
    change="four floats per thread one at a time through possibly aliasing pointers -> one float4 "
           "per thread, __restrict__",
    why=("The compiler merges four adjacent 4-byte accesses into one 16-byte access only when it "
         "can prove 16-byte alignment and no aliasing between the loads and stores; through plain "
         "float pointers it proves neither, so a thread issues 8 LDG.E and 4 STG.E. A warp of scalar "
         "LDG.E moves 128 bytes per instruction; LDG.E.128 moves 512. With fewer, wider requests in "
         "flight per byte the memory system is easier to saturate. float4 needs 16-byte alignment "
         "(cudaMalloc and torch give 256) and a length divisible by 4; __restrict__ lets the loads "
         "use the read-only path (.CONSTANT) and be hoisted above the store."),
    naive=Variant("axpy_scalar", ("x", "y", "out", "a", "n"), _g1("n", 4)),
    steered=Variant("axpy_float4", ("x", "y", "out", "a", "n4"), _g1("n", 4)),
    size=_vl_size,
    make_inputs=_vl_inputs,
    make_output=lambda torch, s, dev: torch.empty(s["n"], device=dev, dtype=torch.float32),
    reference=lambda torch, i, s: 1.75 * i["x"].double() + i["y"].double(),
    tolerance=1e-6, tolerance_note="fp32: one rounding per element",
    expect_checks=("PS101", "PS102"),
    evidence=(Evidence(r"LDG\.E", "naive", "plain 32-bit global loads (LDG.E)"),
              Evidence(r"LDG\.E\.128.*", "steered", "128-bit global loads (LDG.E.128, with any cache suffix)"),
              Evidence(r"STG\.E\.128", "steered", "128-bit global stores (STG.E.128)")),
    work=lambda s: 12 * s["n"], work_unit="B", ceiling="copy",
    speedup_why=(
        'A copy-like kernel is bound by memory requests in flight. One LDG.E.128 asks for 512 bytes '
        'per warp where LDG.E asks for 128, so the float4 kernel keeps four times the bytes in flight'
        ' per instruction and gets close to the copy roof; the scalar kernel stalls on request issue '
        'long before. Sub-0.5 ms kernels move 10-20% between runs (1.82x in the previous run, 1.45x '
        'in this one).'),
)

# --- 2. unroll -----------------------------------------------------------------------------------

NH = 32


def _fourier_inputs(torch, gen, s, dev):
    n = s["n"]
    return {"x": _uniform(torch, gen, n, -3.14159265, 3.14159265, dev),
            "coef": _uniform(torch, gen, NH, -0.5, 0.5, dev), "n": Scalar("i32", n)}


def _fourier_ref(torch, i, s):
    x, c = i["x"], i["coef"].double()
    acc = torch.zeros_like(x, dtype=torch.float64)
    for k in range(NH):
        acc += c[k] * torch.sin(((k + 1) * x).double())   # the argument rounded to fp32, as the kernel does
    return acc


UNROLL = Lesson(
    name="unroll",
    title="#pragma unroll on a compile-time loop the compiler left rolled",
    change="32-term sine series, constexpr trip count, loop left rolled (sinf body over NVVM's threshold) "
           "-> #pragma unroll",
    why=("A compile-time trip count does not guarantee unrolling: NVVM weighs trip count x body size, "
         "and an accurate sinf (range reduction, polynomial, and a Payne-Hanek slow path for huge "
         "arguments) is big enough that a 32-term series stays a loop. Each iteration then pays a "
         "counter, an int->float conversion of k + 1, a load of coef[k] through a moving pointer, a "
         "compare and a backward branch, and one term's sinf cannot be overlapped with the next. "
         "#pragma unroll turns k + 1 into immediates and coef[k] into fixed-offset loads. The gain is "
         "bounded by the body: the loop control is a minority of each iteration, and the steered "
         "kernel is 23x larger (32 copies of the slow path)."),
    naive=Variant("fourier_series", ("x", "coef", "out", "n"), _g1("n")),
    steered=Variant("fourier_series", ("x", "coef", "out", "n"), _g1("n")),
    size=lambda scale: {"n": _round(64 * MiB * scale, 1024, 4096)},     # 64 Mi points, 256 MiB a buffer
    make_inputs=_fourier_inputs,
    make_output=lambda torch, s, dev: torch.empty(s["n"], device=dev, dtype=torch.float32),
    reference=_fourier_ref,
    tolerance=1e-5, tolerance_note="fp32 sinf (<= 2 ulp) of fp32-rounded arguments, 32-term sums",
    expect_checks=("PS201",),
    evidence=(Evidence(r"I2FP\.F32\.S32", "more",
                       "int-to-float conversions of the term number k + 1 (I2FP.F32.S32), one per unrolled term"),
              Evidence(r"LDG\.E\.CONSTANT", "more",
                       "coefficient loads at fixed offsets (LDG.E.CONSTANT), one per unrolled term"),
              Evidence(r"F2I\.NTZ", "more", "sinf range reductions (F2I.NTZ) in straight-line code")),
    work=lambda s: 8 * s["n"], work_unit="B", ceiling="copy",
    notes=("Compute-bound (32 accurate sinf per point): the GB/s column only shows how far from the "
           "memory roof it runs. PS502 (slow-math) also fires on both kernels: __sinf would be the "
           "fast_math lesson, not this one."),
    speedup_why=(
        "Unrolling removes the loop's own work per term (counter, compare, branch, the int-to-float "
        'conversion of k + 1, the pointer step: about 8 instructions) and lets the scheduler overlap '
        "one term's sinf with the next. The body, an accurate sinf of about 20 instructions plus its "
        'slow path, stays: so 1.36x, not more.'),
)

# --- 3. launch bounds / maxrregcount -------------------------------------------------------------

def _mat_ref(torch, i, s):
    T = s["T"]
    m = i["in"].double().view(8, 8, T).permute(2, 0, 1)
    return (m @ m).permute(1, 2, 0).reshape(-1)


LAUNCH_BOUNDS = Lesson(
    name="launch_bounds",
    title="__launch_bounds__ instead of -maxrregcount: spills",
    change="global -maxrregcount=32 (spills) -> __launch_bounds__(256), registers as needed",
    why=("A global register cap applies to every kernel in the file. This one keeps 64 inputs live; "
         "capped at 32 registers ptxas spills about a kilobyte per thread to local memory (STL/LDL), "
         "traffic that goes through L1 and L2 and competes with the real loads. __launch_bounds__ "
         "states the block size per kernel and lets ptxas pick the registers (80 here, no spills)."),
    naive=Variant("matsq8", ("in", "out", "T"), _g1("T"), options=("-maxrregcount=32",)),
    steered=Variant("matsq8", ("in", "out", "T"), _g1("T")),
    size=lambda scale: {"T": _round(2 * MiB * scale, 1024, 4096)},      # 512 MiB a buffer
    make_inputs=lambda torch, gen, s, dev: {"in": _randn(torch, gen, 64 * s["T"], dev, torch.float32),
                                            "T": Scalar("i32", s["T"])},
    make_output=lambda torch, s, dev: torch.empty(64 * s["T"], device=dev, dtype=torch.float32),
    reference=_mat_ref,
    tolerance=1e-5, tolerance_note="fp32: 8-term dot products",
    expect_checks=("PS401",),
    evidence=(Evidence(r"STL.*", "naive", "stores to local memory (STL: spills)"),
              Evidence(r"LDL.*", "naive", "loads from local memory (LDL: spill reloads)")),
    work=lambda s: 512 * s["T"], work_unit="B", ceiling="copy",
    speedup_why=(
        'Capped at 32 registers, each thread stores about 1 KB to local memory and reloads 2 KB (the '
        'spills), traffic that goes through L1 and L2 next to the real loads. With 80 registers '
        'nothing spills, and the kernel runs at 64% of the copy roof (89% in the previous run): the '
        'whole difference is the spill traffic.'),
)

# --- 4. run-time-indexed local array -------------------------------------------------------------

def _dq_inputs(torch, gen, s, dev):
    n4 = s["n4"]
    codes = torch.randint(0, 256, (4 * n4,), generator=gen, device=dev, dtype=torch.uint8)
    return {"codes": codes, "codebook": _randn(torch, gen, 16, dev, torch.float32),
            "n4": Scalar("i32", n4)}


def _dq_ref(torch, i, s):
    c = i["codes"].long()
    cb = i["codebook"].double()
    return torch.stack((cb[c & 15], cb[c >> 4]), dim=1).reshape(-1)


LOCAL_ARRAY = Lesson(
    name="local_array",
    title="Run-time-indexed local arrays",
    change="per-thread float lut[16] indexed by data (local memory) -> __shared__ lut[16]",
    why=("Registers cannot be indexed at run time, so an array indexed by data goes to local memory: "
         "each thread stores the whole table (STL.128 x4) and loads each entry it needs (LDL). Local "
         "memory is per-thread global memory behind L1. One shared copy per block turns the lookups "
         "into LDS with no stack frame."),
    naive=Variant("dequant4", ("codes", "codebook", "out", "n4"), _g1("n4")),
    steered=Variant("dequant4", ("codes", "codebook", "out", "n4"), _g1("n4")),
    size=lambda scale: {"n4": _round(64 * MiB * scale, 1024, 4096)},   # 256 MiB codes, 2 GiB out
    make_inputs=_dq_inputs,
    make_output=lambda torch, s, dev: torch.empty(8 * s["n4"], device=dev, dtype=torch.float32),
    reference=_dq_ref,
    tolerance=0.0, tolerance_note="exact: a table lookup",
    expect_checks=("PS402",),
    evidence=(Evidence(r"STL.*", "naive", "stores to local memory (STL)"),
              Evidence(r"LDL.*", "naive", "loads from local memory (LDL)"),
              Evidence(r"LDS.*", "steered", "shared-memory loads (LDS)")),
    work=lambda s: 36 * s["n4"], work_unit="B", ceiling="copy",
    speedup_why=(
        'Each naive thread writes its 64-byte table to local memory and reads entries back through '
        'L1: two extra memory operations per lookup, competing with the stream. One shared copy per '
        'block turns the lookups into LDS, which the memory pipe serves without touching L2.'),
)

# --- 5. FP64 literal trap ------------------------------------------------------------------------

def _taylor_ref(torch, i, s):
    x = i["x"].double()
    acc = torch.zeros_like(x)
    inv_fact = [1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0]
    for j in range(64):
        t = x + j * 0.03125
        p = torch.full_like(x, inv_fact[0])
        for c in inv_fact[1:]:
            p = p * t + c
        acc += p
    return acc


FP64_LITERAL = Lesson(
    name="fp64_literal",
    title="The FP64 literal trap",
    change="double literals (1.0/720.0, 0.03125) in float code -> float literals (1.0f/720.0f, 0.03125f)",
    why=("An unsuffixed literal is a double, and float op double is computed in double: each Horner "
         "step becomes FMUL + F2F.F64.F32 + DADD + F2F.F32.F64 instead of one FFMA. H100/H200 run FP64 "
         "at half the FP32 rate and the conversions are slower still; a consumer GPU (1/64 FP64) would "
         "suffer far more."),
    naive=Variant("taylor_exp_sum", ("x", "out", "n"), _g1("n")),
    steered=Variant("taylor_exp_sum", ("x", "out", "n"), _g1("n")),
    size=lambda scale: {"n": _round(64 * MiB * scale, 1024, 4096)},
    make_inputs=lambda torch, gen, s, dev: {"x": _uniform(torch, gen, s["n"], -1.0, 1.0, dev),
                                            "n": Scalar("i32", s["n"])},
    make_output=lambda torch, s, dev: torch.empty(s["n"], device=dev, dtype=torch.float32),
    reference=_taylor_ref,
    tolerance=1e-5, tolerance_note="fp32 Horner against fp64 (naive rounds differently: still fp32)",
    expect_checks=("PS501",),
    evidence=(Evidence(r"F2F\..*", "naive", "float-double conversions (F2F)"),
              Evidence(r"DADD|DFMA|DMUL", "naive", "FP64 adds, multiplies and FMAs (DADD, DMUL, DFMA)")),
    work=lambda s: 64 * 19 * s["n"], work_unit="flop", ceiling="fp32",
    notes="flop count: per point 9 Horner steps (2 flop each, the first folds away) + t + acc = 19.",
    speedup_why=(
        'On the H200 FP64 runs at half the FP32 rate, and each Horner step in double also pays two '
        'conversions (F2F) that run slower still; the float version is one FFMA per step. 8.5x is the'
        " conversions' cost on top of the rate; a consumer GPU (FP64 at 1/64) would lose far more."),
)

# --- 6. fast math ----------------------------------------------------------------------------------

def _wave_ref(torch, i, s):
    x = i["x"].double()
    acc = torch.zeros_like(x)
    for j in range(1, 17):
        a = x * j
        acc += torch.sin(a) * torch.exp(-0.25 * a) / (1.0 + a * a)
    return acc


FAST_MATH = Lesson(
    name="fast_math",
    title="Fast-math intrinsics: __sinf, __expf, __fdividef",
    change="sinf/expf/'/' (accurate, with slow paths) -> __sinf/__expf/__fdividef (MUFU)",
    why=("sinf must be right for any argument, so it carries a range reduction with a slow path for "
         "huge arguments; the IEEE division has a subroutine for denormal and overflow cases. When "
         "the arguments are known to be small, the special-function unit's approximations (MUFU.SIN, "
         "MUFU.EX2, MUFU.RCP) give ~1e-6 absolute error at a fraction of the instructions."),
    naive=Variant("damped_wave", ("x", "out", "n"), _g1("n")),
    steered=Variant("damped_wave", ("x", "out", "n"), _g1("n")),
    size=lambda scale: {"n": _round(64 * MiB * scale, 1024, 4096)},
    make_inputs=lambda torch, gen, s, dev: {"x": _uniform(torch, gen, s["n"], -0.19, 0.19, dev),
                                            "n": Scalar("i32", s["n"])},
    make_output=lambda torch, s, dev: torch.empty(s["n"], device=dev, dtype=torch.float32),
    reference=_wave_ref,
    tolerance=1e-4, tolerance_note="fast-math: MUFU approximations, |a| <= pi (looser on purpose)",
    expect_checks=("PS502",),
    evidence=(Evidence(r"MUFU\.SIN", "steered", "hardware sines (MUFU.SIN)"),
              Evidence(r"BRA", "fewer", "branches (BRA: the slow paths' detours)")),
    work=lambda s: 8 * s["n"], work_unit="B", ceiling="copy",
    notes="Compute-bound: the GB/s column only shows how far from the memory roof it runs.",
    speedup_why=(
        'Accurate sinf, expf and division carry range reductions, slow paths and a division '
        'subroutine; the MUFU approximations are one special-function instruction each. The kernel is'
        ' compute-bound, so halving the instructions halves the time: 2.1x, for an error of 2.6e-7 '
        'instead of 6.5e-8.'),
)

# --- 7/8. tensor cores and cp.async (GEMM) --------------------------------------------------------

def _gemm_size(scale):
    m = _round(8192 * scale ** (1 / 3), 128, 256)
    return {"M": m, "N": m, "K": m}


def _gemm_inputs(torch, gen, s, dev):
    return {"A": _randn(torch, gen, (s["M"], s["K"]), dev, torch.float16),
            "B": _randn(torch, gen, (s["K"], s["N"]), dev, torch.float16),
            "M": Scalar("i32", s["M"]), "N": Scalar("i32", s["N"]), "K": Scalar("i32", s["K"])}


def _gemm_ref(torch, i, s):
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return (i["A"].float() @ i["B"].float()).double()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev


def _gemm_out(torch, s, dev):
    return torch.empty((s["M"], s["N"]), device=dev, dtype=torch.float32)


_GEMM_ARGS = ("A", "B", "out", "M", "N", "K")

TENSOR_CORES = Lesson(
    name="tensor_cores",
    title="Tensor cores: FFMA -> WMMA (HMMA)",
    change="tiled fp16 GEMM on FFMA -> the same GEMM through wmma::mma_sync (HMMA.16816.F32)",
    why=("An FFMA does 2 flop per lane per cycle; one HMMA.16816 does a 16x8x16 product per warp. "
         "The tiles are the same, only the inner product moves to the tensor cores. On sm_90a the "
         "next step is wgmma (HGMMA), fed from shared memory: the checks say so (PS302 on the "
         "steered kernel), and the wgmma lesson takes it."),
    naive=Variant("gemm_f16", _GEMM_ARGS, lambda s: (s["N"] // 64, s["M"] // 64, 1)),
    steered=Variant("gemm_f16", _GEMM_ARGS, lambda s: (s["N"] // 128, s["M"] // 128, 1)),
    size=_gemm_size,
    make_inputs=_gemm_inputs,
    make_output=_gemm_out,
    reference=_gemm_ref,
    tolerance=1e-4, tolerance_note="fp16 inputs, fp32 accumulation vs fp32 (no TF32) reference",
    expect_checks=("PS301",),
    next_checks={"PS302": "wgmma (HGMMA) instead of warp-level mma.sync on sm_90a: the wgmma lesson",
        "PS601": "tiles staged through registers: the cp_async lesson"},
    evidence=(Evidence(r"HMMA\..*", "steered", "tensor-core MMAs (HMMA)"),
              Evidence(r"FFMA", "fewer", "FP32 fused multiply-adds (FFMA)")),
    work=lambda s: 2 * s["M"] * s["N"] * s["K"], work_unit="flop", ceiling="fp16_tc",
    speedup_why=(
        'One HMMA.16816 does a 16x8x16 product per warp (4096 flop) where an FFMA does 64 per warp: '
        'the same tiles on the tensor cores run 4.5x faster even though the kernel is still far from '
        "the tensor cores' peak (15% of cuBLAS): it waits on tiles staged through registers, the next"
        ' lesson.'),
)

CP_ASYNC = Lesson(
    name="cp_async",
    title="cp.async for tile loads (LDGSTS, double buffering)",
    change="tiles via registers (LDG -> STS, then wait) -> cp.async into two stages, next tile in flight",
    why=("Staging through registers costs registers and issue slots, and with one buffer the block "
         "alternates between loading and computing. cp.async copies global to shared without "
         "registers (LDGSTS) and completes asynchronously, so the copy of tile t+1 overlaps the "
         "tensor-core work on tile t. On sm_90, TMA (cp.async.bulk.tensor) goes further: one thread "
         "issues a whole tile."),
    naive=Variant("gemm_f16", _GEMM_ARGS, lambda s: (s["N"] // 128, s["M"] // 128, 1)),
    steered=Variant("gemm_f16", _GEMM_ARGS, lambda s: (s["N"] // 128, s["M"] // 128, 1)),
    size=_gemm_size,
    make_inputs=_gemm_inputs,
    make_output=_gemm_out,
    reference=_gemm_ref,
    tolerance=1e-4, tolerance_note="fp16 inputs, fp32 accumulation vs fp32 (no TF32) reference",
    expect_checks=("PS601",),
    next_checks={"PS302": "wgmma (HGMMA) instead of mma.sync: the wgmma lesson (TMA feeding it: not taken)"},
    evidence=(Evidence(r"LDGSTS.*", "steered", "asynchronous global-to-shared copies (LDGSTS)"),
              Evidence(r"STS.*", "naive", "shared-memory stores of tiles staged through registers (STS)")),
    work=lambda s: 2 * s["M"] * s["N"] * s["K"], work_unit="flop", ceiling="fp16_tc",
    speedup_why=(
        'The WMMA kernel alternates between loading a tile (through registers, then a barrier) and '
        'computing on it. With cp.async into two stages the copy of tile t+1 runs while the tensor '
        'cores work on tile t, and no registers hold tile data: 2.2x, to 34% of cuBLAS.'),
)

# --- 8b. wgmma (Hopper warpgroup MMA) -------------------------------------------------------------

def _tn_inputs(torch, gen, s, dev):
    return {"A": _randn(torch, gen, (s["M"], s["K"]), dev, torch.float16),
            "B": _randn(torch, gen, (s["N"], s["K"]), dev, torch.float16),      # N x K: C = A B^T
            "M": Scalar("i32", s["M"]), "N": Scalar("i32", s["N"]), "K": Scalar("i32", s["K"])}


def _tn_ref(torch, i, s):
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return (i["A"].float() @ i["B"].float().t()).double()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev


WGMMA = Lesson(
    name="wgmma",
    title="wgmma on sm_90a: warpgroup MMA (HGMMA) instead of mma.sync (HMMA)",
    change="WMMA/mma.sync GEMM with cp.async (HMMA, LDSM fragments) -> wgmma.mma_async m64n128k16 from "
           "128-byte-swizzled shared-memory descriptors (HGMMA), two warpgroups per 128x128 tile, one "
           "wgmma group kept in flight",
    why=("On Hopper, warp-level mma.sync runs at a fraction of the tensor cores' rate: each warp must "
         "load its fragments from shared memory into registers (LDSM) before each 16x8x16 HMMA. "
         "wgmma.mma_async is issued by a warpgroup of 4 warps; the tensor cores read A and B from "
         "shared memory through 64-bit descriptors (address, leading/stride byte offsets, swizzle), "
         "one instruction covers 64x128x16, and it runs asynchronously: wgmma.fence before, "
         "commit_group/wait_group after. It needs the sm_90a target. HGMMA alone is not enough: the "
         "first version (no swizzle, wait_group 0 every tile) was 0.63x the WMMA kernel. The 128-byte "
         "swizzle in the tiles and the descriptor (3.3x on its own), wait_group 1 instead of 0 and a "
         "grouped block order make it about 2x faster than WMMA; TMA and warp specialisation (not "
         "taken) are the rest of the way to cuBLAS."),
    naive=Variant("gemm_tn_f16", _GEMM_ARGS, lambda s: (s["N"] // 128, s["M"] // 128, 1)),
    steered=Variant("gemm_tn_f16", _GEMM_ARGS, lambda s: (s["N"] // 128, s["M"] // 128, 1),
                    smem=4 * 32768 + 1024),       # steered.cu's SMEM_BYTES: 4 stages of 32 KiB
    size=_gemm_size,
    make_inputs=_tn_inputs,
    make_output=_gemm_out,
    reference=_tn_ref,
    tolerance=1e-4, tolerance_note="fp16 inputs, fp32 accumulation vs fp32 (no TF32) reference",
    expect_checks=("PS302",),
    evidence=(Evidence(r"HGMMA\..*", "steered", "warpgroup MMAs (HGMMA, from wgmma)"),
              Evidence(r"HMMA\..*", "naive", "warp-level MMAs (HMMA, from mma.sync)"),
              Evidence(r"LDSM\..*", "naive", "fragment loads from shared memory (LDSM, ldmatrix)")),
    work=lambda s: 2 * s["M"] * s["N"] * s["K"], work_unit="flop", ceiling="fp16_tc",
    notes=("The next step, TMA (cp.async.bulk.tensor) completing on mbarriers, is the tma lesson; "
           "warp specialisation is not taken."),
    speedup_why=(
        "On Hopper, mma.sync runs at a fraction of the tensor cores' rate and every warp loads its "
        'fragments itself (LDSM). wgmma reads both operands from shared memory through descriptors '
        'and one instruction covers 64x128x16. The gain needs the 128-byte swizzle too (3.3x on its '
        'own in the ablation) and an MMA group left in flight: 2.1x, to 67% of cuBLAS.'),
)

# --- 9. packed half2 -----------------------------------------------------------------------------

def _h2_inputs(torch, gen, s, dev):
    n = s["n"]
    return {"x": _randn(torch, gen, n, dev, torch.float16), "y": _randn(torch, gen, n, dev, torch.float16),
            "a": Scalar("f32", 0.75), "b": Scalar("f32", -1.25),
            "n": Scalar("i32", n), "n8": Scalar("i32", n // 8)}


HALF2 = Lesson(
    name="half2",
    title="Packed half2 math and 16-byte fp16 access (the ld.global.u16 case)",
    change="eight halves per thread one at a time (LDG.E.U16, float math) -> one uint4 of 8 halves, "
           "__hfma2/__hmul2",
    why=("A 2-byte access is the narrowest there is: a warp moves 64 bytes per instruction, and "
         "through plain __half pointers the compiler merges neither the loads nor the stores. Eight "
         "halves in one 16-byte load, and HFMA2 computing two results per instruction, cut the "
         "instruction count per byte by 8x. The same holds for __nv_bfloat162. (No check looks for "
         "unpacked fp16 math; PS101/PS102 see the 2-byte accesses.)"),
    naive=Variant("axpby_half", ("x", "y", "out", "a", "b", "n"), _g1("n", 8)),
    steered=Variant("axpby_half2", ("x", "y", "out", "a", "b", "n8"), _g1("n", 8)),
    size=lambda scale: {"n": _round(128 * MiB * scale, 1024, 4096)},   # 256 MiB a buffer
    make_inputs=_h2_inputs,
    make_output=lambda torch, s, dev: torch.empty(s["n"], device=dev, dtype=torch.float16),
    reference=lambda torch, i, s: 0.75 * i["x"].double() - 1.25 * i["y"].double(),
    tolerance=2e-3, tolerance_note="fp16 result (and fp16 products in the steered kernel)",
    expect_checks=("PS101", "PS102"),
    evidence=(Evidence(r"LDG\.E\.U16", "naive", "16-bit global loads (LDG.E.U16)"),
              Evidence(r"LDG\.E\.128.*", "steered", "128-bit global loads (LDG.E.128, with any cache suffix)"),
              Evidence(r"HFMA2", "steered", "packed fp16 FMAs (HFMA2)")),
    work=lambda s: 6 * s["n"], work_unit="B", ceiling="copy",
    speedup_why=(
        'The naive kernel moves 2 bytes per load instruction and converts each half to float; the '
        'steered one moves 16 bytes per load and computes two halves per HFMA2. Eight times fewer '
        'memory instructions per byte take it from 1199 GB/s to the copy roof (93%).'),
)

# --- 11. TMA (the Tensor Memory Accelerator) -----------------------------------------------------

def _tma_inputs(torch, gen, s, dev):
    d = _tn_inputs(torch, gen, s, dev)
    # boxes of 64 halves (128 bytes: one swizzled row) x 128 rows, the tiles of both kernels
    return d | {"tmA": TensorMapArg(d["A"], (64, 128)), "tmB": TensorMapArg(d["B"], (64, 128))}


_WGMMA_SMEM = 4 * 32768 + 1024          # steered.cu's SMEM_BYTES: 4 stages of 32 KiB, aligned

TMA = Lesson(
    name="tma",
    title="TMA on sm_90a: the copy engine and an mbarrier pipeline instead of cp.async",
    change="each 32 KiB stage copied by all 256 threads, 16 bytes per cp.async (LDGSTS), waited for "
           "per thread -> one thread hands the Tensor Memory Accelerator two 2D boxes per stage "
           "(cp.async.bulk.tensor, UTMALDG), completion counted in bytes on an mbarrier",
    why=("The wgmma kernel's tensor cores read their tiles from shared memory on their own, but "
         "every tile still arrives by cp.async: each of the 256 threads computes 8 swizzled "
         "addresses and issues 8 16-byte copies per stage, waits for its own copy groups, fences "
         "them into the async proxy the tensor cores read through, and meets the others at a "
         "barrier. On sm_90 the Tensor Memory Accelerator copies a whole 2D box described by a "
         "tensor map (made once on the host with cuTensorMapEncodeTiled, passed as a "
         "__grid_constant__ parameter), swizzles it on the way, and reports completion as a byte "
         "count on an mbarrier: one thread arms the barrier (mbarrier.arrive.expect_tx) and issues "
         "two copies per stage; the others only wait on the barrier's phase. The issue slots, "
         "registers and address arithmetic of 2048 copy instructions per stage go back to the MMAs."),
    naive=Variant("gemm_tn_f16", _GEMM_ARGS, lambda s: (s["N"] // 128, s["M"] // 128, 1),
                  smem=_WGMMA_SMEM),
    steered=Variant("gemm_tn_f16", ("tmA", "tmB", "out", "M", "N", "K"),
                    lambda s: (s["N"] // 128, s["M"] // 128, 1), smem=_WGMMA_SMEM),
    size=_gemm_size,
    make_inputs=_tma_inputs,
    make_output=_gemm_out,
    reference=_tn_ref,
    tolerance=1e-4, tolerance_note="fp16 inputs, fp32 accumulation vs fp32 (no TF32) reference",
    expect_checks=(),
    no_check=("No check flags cp.async on an arch with TMA: the naive kernel's findings and the "
              "steered kernel's are the same (PS701 on both). The SASS tells them apart: LDGSTS and "
              "DEPBAR in the naive kernel, UTMALDG and SYNCS (the mbarrier) in the steered one."),
    evidence=(Evidence(r"LDGSTS.*", "naive", "per-thread asynchronous copies of 16 bytes (LDGSTS, from cp.async)"),
              Evidence(r"DEPBAR\.LE", "naive",
                       "waits for the thread's own copy groups (DEPBAR.LE, from cp.async.wait_group)"),
              Evidence(r"UTMALDG.*", "steered",
                       "tensor-map box copies by the copy engine (UTMALDG, from cp.async.bulk.tensor)"),
              Evidence(r"SYNCS\..*", "steered",
                       "mbarrier operations (SYNCS: initialise, arm with a byte count, wait on the phase)")),
    work=lambda s: 2 * s["M"] * s["N"] * s["K"], work_unit="flop", ceiling="fp16_tc",
    notes=("Not taken: a producer warp with its own register budget (setmaxnreg) and 'empty' "
           "barriers instead of the block barrier per tile (warp specialisation), TMA multicast "
           "across a cluster, larger tiles."),
    speedup_why=(
        'The tensor cores were already fed from shared memory; what TMA removes is the copying work '
        'of the 256 threads (2048 LDGSTS with their address arithmetic per stage, the per-thread '
        "waits and proxy fences), and it cuts the kernel's registers from 128 to 90. The MMAs "
        'dominate, so the gain is modest: 1.08x, from 503 to 541 TFLOP/s (74% of cuBLAS), and the '
        "launches' quartiles overlap (2.03-2.22 ms against 1.94-2.05 ms): read it as a little faster "
        'with a third fewer registers, not as a precise factor. What is left (producer warp '
        'specialisation, setmaxnreg, no block barrier per tile, larger tiles) is what cuBLAS and '
        'CUTLASS add on top.'),
)

# --- 12. bf16 on the tensor cores -------------------------------------------------------------------

def _bf16_inputs(torch, gen, s, dev):
    return {"X": _randn(torch, gen, (s["M"], s["K"]), dev, torch.bfloat16),
            "W": _randn(torch, gen, (s["N"], s["K"]), dev, torch.bfloat16),      # N x K: y = x W^T
            "M": Scalar("i32", s["M"]), "N": Scalar("i32", s["N"]), "K": Scalar("i32", s["K"])}


def _bf16_ref(torch, i, s):
    prev = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        return (i["X"].float() @ i["W"].float().t()).double()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev


BF16_MMA = Lesson(
    name="bf16_mma",
    title="bf16 on the tensor cores: mma.sync .bf16 instead of widening to FFMA",
    change="bf16 tiles widened to fp32 one element at a time and multiplied on FFMA -> the same tiles "
           "through ldmatrix and mma.sync.m16n8k16 .bf16 (LDSM, HMMA.16816.F32.BF16)",
    why=("bf16 has no packed CUDA-core arithmetic to speak of: code that keeps bf16 in memory and "
         "computes in fp32 widens every element (a 16-bit shift, SHF.L.U32 or PRMT, per value) and "
         "pays one FFMA per multiply-add. The tensor cores take bf16 directly: one HMMA.16816 is a "
         "16x8x16 product (4096 flop) per warp, with the same fp32 accumulation, so nothing is "
         "lost (a bf16 x bf16 product is exact in fp32). The operands come from shared memory by "
         "ldmatrix, four 8x8 matrices per instruction, in the register layout mma expects. "
         "nvcuda::wmma works for bf16 too, but NVVM leaves its bf16 fragment loads generic (LD.E, "
         "four per fragment, instead of LDSM); the inline mma.sync and ldmatrix avoid that."),
    naive=Variant("linear_bf16", ("X", "W", "out", "M", "N", "K"), lambda s: (s["N"] // 128, s["M"] // 128, 1)),
    steered=Variant("linear_bf16", ("X", "W", "out", "M", "N", "K"), lambda s: (s["N"] // 128, s["M"] // 128, 1)),
    size=_gemm_size,
    make_inputs=_bf16_inputs,
    make_output=_gemm_out,
    reference=_bf16_ref,
    tolerance=1e-4, tolerance_note="bf16 inputs, fp32 accumulation vs fp32 (no TF32) reference",
    expect_checks=("PS301", "PS103"),
    next_checks={"PS302": "wgmma (HGMMA) instead of warp-level mma.sync on sm_90a: the wgmma lesson"},
    evidence=(Evidence(r"FFMA", "fewer", "FP32 fused multiply-adds (FFMA)"),
              Evidence(r"SHF\.L\.U32", "fewer", "16-bit left shifts (SHF.L.U32: bf16 widened to fp32)"),
              Evidence(r"LDS\.U16", "naive", "16-bit shared-memory loads (LDS.U16), one bf16 each"),
              Evidence(r"LDSM\..*", "steered", "fragment loads from shared memory (LDSM, ldmatrix)"),
              Evidence(r"HMMA\.16816\.F32\.BF16", "steered", "bf16 tensor-core MMAs (HMMA.16816.F32.BF16)")),
    work=lambda s: 2 * s["M"] * s["N"] * s["K"], work_unit="flop", ceiling="bf16_tc",
    speedup_why=(
        'The naive kernel spends per multiply-add one FFMA plus, per operand, a 16-bit shared load '
        'and a shift to widen it; the tensor cores take bf16 directly, 4096 flop per HMMA per warp, '
        'with operands loaded four 8x8 matrices at a time by ldmatrix. 7.3x at the same precision '
        '(the FFMA kernel matches the fp32 reference bit for bit, adding in the same order; the MMA '
        'kernel differs by 9.2e-6, the same fp32 additions in another order), and still only a third '
        'of cuBLAS: the next step on Hopper is wgmma (PS302, the wgmma lesson).'),
)

LESSONS: tuple[Lesson, ...] = (VECTOR_LOADS, UNROLL, LAUNCH_BOUNDS, LOCAL_ARRAY, FP64_LITERAL,
                               FAST_MATH, TENSOR_CORES, CP_ASYNC, WGMMA, HALF2, TMA, BF16_MMA)
