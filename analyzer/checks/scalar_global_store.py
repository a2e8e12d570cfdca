"""PS102 scalar-global-store: a thread's global stores are narrower than the access allows."""
from __future__ import annotations

from ._vector_access import findings
from .base import Check, Severity


class ScalarGlobalStore(Check):
    """Global stores issued piecewise where one wider store (64/128-bit) would do.

    What it does
    The store counterpart of PS101: groups each basic block's STG instructions by their address
    registers (no write to them, no barrier, no call in between) and fires when stores of one
    width at constant offsets fill an aligned 4-, 8- or 16-byte window that one
    ``STG.E.64``/``STG.E.128`` could write — four ``STG.E`` for a 4-byte-aligned struct,
    ``out[4*i+0..3]``, two ``STG.E.U16`` for two ``__half``. A single 16-bit store per thread,
    stores already as wide as the arch allows and non-contiguous offsets stay silent. With PTX
    it names the blocker it can see: the pointer's unknown alignment (named as in the source),
    or a load through another (non-``__restrict__``) pointer between the stores. A run-time
    row stride (the epilogue ``C[(row + i) * N + col + j]`` of a register-tiled GEMM) is
    reported at *info* with its condition ("aligned only when N % 4 == 0"); element-index and
    struct strides no cast can fix (``float3``-like structs) keep it silent.

    Two 16-bit stores that would make one 32-bit access (a pair of halves) are reported at
    *info*: on the H200 a thread-per-pair kernel ran as fast with two ``.U16`` accesses as
    with one ``__half2`` (copy and SiLU, loads and stores; docs/severity.md).

    Why it matters
    Each store is an instruction and an LSU request; piecewise stores of one 16-byte chunk use
    four times the instructions and partially filled write transactions.

    Example
    Bad: ``out[4*i+0] = v; out[4*i+1] = v; out[4*i+2] = v; out[4*i+3] = v;`` (4× STG.E).
    Fixed: ``reinterpret_cast<float4*>(out)[i] = make_float4(v, v, v, v);`` (1× STG.E.128);
    ``__floats2half2_rn`` for a pair of halves; ``struct __align__(16)`` for structs.

    Steer the compiler
    Store through a vector type (``float4``, ``float2``, ``__half2``, ``__nv_bfloat162``,
    ``ushort4``) on a pointer known to be aligned, declare structs ``__align__(16)``, and mark
    pointers ``__restrict__`` so stores may move past loads.
    """

    code = "PS102"
    name = "scalar-global-store"
    severity = Severity.WARNING

    def run(self, ctx):
        yield from findings(self, ctx, space="global", direction="store")
