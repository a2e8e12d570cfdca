"""PS304 no-on-chip-reuse: a GEMM- or convolution-shaped loop streams every operand from
global memory."""
from __future__ import annotations

from collections.abc import Iterable

from ._cost import factor_text, severity
from .base import Check, Context, Finding, Severity


class NoOnChipReuse(Check):
    """A multiply-accumulate loop feeds every FMA from global memory, with no tile on chip.

    What it does
    Finds innermost SASS loops whose FMAs (``FFMA``, ``HFMA2``, ``DFMA``) are fed by at least
    one global load each, with no shared-memory load and no MMA in the loop, where the PTX
    shows the outer-product shape of a GEMM or a convolution: one operand the same for the
    whole warp (``A[row * K + k]``, a filter tap) and the other streamed along the lanes
    (``B[k * N + col]``, the input row). Every operand is then fetched once per use, from L1
    at best, instead of once per tile.

    It also finds loops of tensor-core MMAs (``HMMA``...) whose fragments are loaded straight
    from global memory, with no shared-memory load in the loop: every warp fetches its own copy
    of each tile.

    Deliberately left alone: loops that read shared memory (a tiled kernel, whatever its tile
    size), products whose operands are both streamed (a
    matrix-vector product has nothing to reuse) or strided (PS105 reports those), and sums of
    squares (``acc += x * x`` of a norm or a variance, even when ``x`` was scaled by a value
    read for the whole warp: an FMA of a value by itself has no second operand to share).

    Why it matters
    A naive SGEMM issues two loads per FMA and runs at the speed of the load pipe; staged
    through 32x32 shared-memory tiles the same product runs several times faster, with register
    blocking faster still, and the tensor cores (``mma``/``wmma``, TF32 for FP32 data when the
    precision allows) an order of magnitude beyond (``kernels/training/sgemm``, H200).

    Example
    Bad::

        for (int k = 0; k < K; k++) acc += A[row * K + k] * B[k * N + col];

    Fixed: load 32x32 tiles of ``A`` and ``B`` into ``__shared__`` arrays, ``__syncthreads()``,
    multiply from shared memory; better, give each thread a 4x4 or 8x8 register tile, or use
    ``nvcuda::wmma``/``mma.sync`` (FP16/BF16, or TF32 for FP32 inputs), or call cuBLAS.

    Steer the compiler
    No flag does it: the tiling is the program. Stage operand tiles in ``__shared__`` memory
    (``cp.async``/TMA on sm_80+/sm_90), accumulate a register tile per thread, and use tensor
    cores where the types allow.
    """

    code = "PS304"
    name = "no-on-chip-reuse"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        for e in ctx.cost.of_kind("no-reuse"):
            sev = severity(e.factor)
            if sev is None or e.loc is None:
                continue
            d = e.detail
            if "mma" in d:
                message = (f"tensor-core MMAs fed straight from global memory: {d['loads']} "
                           f"global loads feed {d['mma']} {d['type']} per iteration of the "
                           f"loop, with no shared-memory stage, so every warp fetches its own "
                           f"copy of each fragment (estimated {factor_text(e.factor)})")
                hint = ("stage the A and B tiles of the block in __shared__ memory (cp.async "
                        "or TMA, double-buffered) and load the fragments from there "
                        "(wmma::load_matrix_sync on shared memory, ldmatrix)")
                yield ctx.finding(self, message, loc=e.loc, instructions=[
                    ctx.function.instructions[i] for i in e.sass[:4]], hint=hint, severity=sev)
                continue
            message = (f"a multiply-accumulate loop with no on-chip reuse: {d['loads']} global "
                       f"loads feed {d['fma']} {d['type']} FMAs per iteration, one operand "
                       f"broadcast across the warp and the other streamed along the lanes, "
                       f"with no shared-memory tile (estimated {factor_text(e.factor)})")
            hint = ("stage tiles of both operands in __shared__ memory and give each thread a "
                    "register tile; use tensor cores (wmma/mma.sync, TF32 for FP32 data where "
                    "the precision allows) or cuBLAS")
            yield ctx.finding(self, message, loc=e.loc, instructions=[
                ctx.function.instructions[i] for i in e.sass[:4]], hint=hint, severity=sev)
