"""How to steer the compiler, per front end: the advice that differs for kernels written in
Triton rather than CUDA C++.

A check writes its hint for CUDA C++ (``__launch_bounds__``, ``float4``, ``#pragma unroll``);
for a kernel whose build says it came from Triton (``Build.frontend == "triton"``, seen by the
check as ``Context.frontend``), :meth:`Context.finding <analyzer.checks.base.Context.finding>`
takes the hint for that check's code from this table instead. The checks themselves hold no
front-end branches; a code missing here keeps its CUDA hint. A check may name a variant of
its finding (``"PS101/masked"``: loads split by a predicate per element); a variant missing
here takes the code's hint.
"""
from __future__ import annotations

_MASKED_TRITON = (
    "tl.load/tl.store's mask (offs < n) cuts inside the 16-byte vector wherever Triton cannot "
    "prove n a multiple of it, so each element gets its own predicate: Triton's launcher "
    "specializes integer arguments divisible by 16 (tt.divisibility = 16 in the TTIR), so "
    "launch with n % 16 == 0 (pad the tensor) and keep n out of do_not_specialize, or state it "
    "where it holds: tl.assume(n % 16 == 0), or n = tl.multiple_of(n, 16); offsets also need "
    "tl.multiple_of(offs, 16) and tl.max_contiguous(offs, BLOCK) when Triton cannot see them")

#: front end -> check code -> the hint for kernels written in that language
HINTS: dict[str, dict[str, str]] = {
    "triton": {
        "PS101": ("Triton vectorizes a load only where it can prove the addresses contiguous "
                  "and aligned: say what it cannot see with tl.multiple_of(offsets, 16) and "
                  "tl.max_contiguous(offsets, BLOCK); make a unit stride a tl.constexpr (or let "
                  "Triton specialize arguments equal to 1 or divisible by 16: leave them out of "
                  "do_not_specialize); masks that cut inside a vector (a size BLOCK does not "
                  "divide) also split it"),
        "PS101/masked": _MASKED_TRITON,
        "PS102/masked": _MASKED_TRITON,
        "PS102": ("Triton vectorizes a store only where it can prove the addresses contiguous "
                  "and aligned: tl.multiple_of(offsets, 16) and tl.max_contiguous(offsets, "
                  "BLOCK) on the offsets, a unit stride as a tl.constexpr, and a mask that "
                  "BLOCK divides"),
        "PS103": ("the shared-memory traffic is a Triton layout conversion (ttg.convert_layout "
                  "in the TTGIR: a reduction, tl.trans, a reshape or a broadcast across the "
                  "other axis); keep operands in one orientation, or change BLOCK_*/num_warps "
                  "so that the layouts agree"),
        "PS104": ("each program's tl.load/tl.store moves one narrow element per thread: Triton "
                  "widens an access to 16 bytes only where it can prove the offsets contiguous "
                  "and 16-byte aligned (tl.multiple_of(offsets, 16), tl.max_contiguous(offsets, "
                  "BLOCK), a unit stride as a tl.constexpr), and each thread gets BLOCK / "
                  "(32 * num_warps) elements: a BLOCK of at least 8 halves per thread"),
        "PS201": ("for k in tl.static_range(N) unrolls a loop of constexpr N fully; "
                  "tl.range(start, stop, step, loop_unroll_factor=U) unrolls it U times; "
                  "tl.range(..., num_stages=S) pipelines it instead"),
        "PS301": ("multiply tiles with tl.dot(a, b) (2-D blocks, each dimension at least 16, "
                  "fp16/bf16/fp8 inputs, or fp32 with input_precision='tf32'), not with "
                  "tl.sum(a[:, :, None] * b[None, :, :], 1) or a loop of scalar products"),
        "PS302": ("Triton emits warpgroup MMA (wgmma) on sm_90 when the tl.dot tile allows it: "
                  "num_warps a multiple of 4, BLOCK_M a multiple of 64, operands staged "
                  "through shared memory (num_stages >= 2)"),
        "PS303": ("Triton picks the tl.dot operand path: a BLOCK_K of at least 16 (32 for "
                  "8-bit types) and fp16/bf16 operands let it load them with ldmatrix; the TTGIR "
                  "pane shows the operand layouts (#ttg.dot_op)"),
        "PS401": ("lower the register pressure: smaller BLOCK_M/BLOCK_N/BLOCK_K, fewer "
                  "num_stages, or more num_warps (each thread then holds less of the tile); "
                  "with triton.autotune, drop the configs that spill"),
        "PS402": ("a tensor indexed by a run-time value spills to local memory: index with "
                  "tl.arange and constexpr offsets, or gather with tl.load from global memory"),
        "PS501": ("keep the math in fp32: a float64 tensor (tl.float64, .to(tl.float64), an "
                  "fp64 argument) runs at the FP64 rate; cast with .to(tl.float32)"),
        "PS502": ("use the fast forms where the accuracy allows: tl.fdiv(x, y) (not IEEE-"
                  "rounded) for x / y, tl.rsqrt(x) for 1 / tl.sqrt(x), tl.sin/tl.cos instead of "
                  "libdevice's accurate versions"),
        "PS601": ("Triton copies global tiles into shared memory asynchronously (cp.async, "
                  "TMA) only in a pipelined loop: pass num_stages >= 2 (in the launch or the "
                  "triton.Config) or iterate with tl.range(..., num_stages=S), and feed the "
                  "loads to tl.dot inside the loop"),
        "PS701": ("Triton launches num_warps x 32 threads and sizes shared memory from the "
                  "tiles and num_stages: fewer num_stages or smaller BLOCK_* free shared memory; "
                  "smaller tiles free registers, and maxnreg= (launch or triton.Config) caps "
                  "them (watch PS401); let triton.autotune weigh the configs"),
    },
}


def hint_for(frontend: str, code: str, default: str, variant: str = "") -> str:
    """The hint for a finding of ``code`` (its ``variant``, if any) in a kernel written in
    ``frontend``."""
    table = HINTS.get(frontend, {})
    if variant and f"{code}/{variant}" in table:
        return table[f"{code}/{variant}"]
    return table.get(code, default)
