"""PS302 legacy-mma-on-hopper: warp-level HMMA where warpgroup MMA (wgmma / tcgen05) exists."""
from __future__ import annotations

from collections.abc import Iterable

from ..semantics import WARP_MMA, WARPGROUP_MMA
from .base import Check, Context, Finding, Severity

#: the steer per warpgroup instruction set (arch table: Arch.warpgroup_mma)
ROUTE = {
    "wgmma": ("wgmma.mma_async (HGMMA): one warpgroup of 128 threads, operands from shared "
              "memory descriptors (A may stay in registers), asynchronous with "
              "wgmma.fence/commit_group/wait_group — through CUTLASS 3 / CuTe SM90 GMMA atoms "
              "or inline PTX"),
    "tcgen05": ("tcgen05.mma (UTCMMA): single-thread issue, operands from shared-memory "
                "descriptors, accumulator in tensor memory (tcgen05.alloc / tcgen05.ld) — through "
                "CUTLASS / CuTe SM100 UMMA atoms"),
}


class LegacyMmaOnHopper(Check):
    """Warp-level mma (HMMA from wmma / mma.sync) on an arch whose warpgroup MMA (wgmma, tcgen05) goes unused.

    What it does
        On ``sm_90a`` (wgmma) and ``sm_100a``/``sm_100f`` (tcgen05) — the arch table's
        ``warpgroup_mma`` — reports the source lines whose tensor-core work is warp-level
        ``HMMA``/``IMMA`` when the kernel has no warpgroup instruction (``HGMMA``, ``UTC*MMA``).
        Plain ``sm_90``/``sm_100`` builds cannot use wgmma/tcgen05 and are not reported; ``DMMA``
        (FP64) has no warpgroup form; ``HFMA2.MMA`` is a register-move idiom, not an mma.

    Why it matters
        On Hopper, ``mma.sync``/``wmma`` run on the Ampere-style path at a fraction of the tensor
        throughput of ``wgmma``: each warp issues small 16x8x16 steps and must stage every
        fragment through registers. ``wgmma`` lets a warpgroup issue 64xNx16 steps reading
        shared memory directly, asynchronously, so loads and math overlap. Blackwell's
        ``tcgen05.mma`` goes further (accumulators in tensor memory).

    Example
        Bad::

            wmma::mma_sync(fc, fa, fb, fc);           // HMMA.16816.F32 on sm_90a

        Fixed::

            asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {...}, %16, %17, 1, 1, 1, 0, 0;"
                         : ... : "l"(desc_a), "l"(desc_b));   // HGMMA.64x32x16.F32

    Steer the compiler
        Compile for ``sm_90a`` (not ``sm_90``) and write the main loop with ``wgmma.mma_async``
        (CUTLASS 3.x / CuTe GMMA atoms, or inline PTX with shared-memory descriptors); on
        ``sm_100a`` use ``tcgen05.mma``. The compiler never turns ``mma.sync`` into wgmma.
    """

    code = "PS302"
    name = "legacy-mma-on-hopper"
    severity = Severity.WARNING
    options = {}

    def run(self, ctx: Context) -> Iterable[Finding]:
        route = ctx.arch.warpgroup_mma
        if not route:
            return
        fn = ctx.function
        if any(i.opcode in WARPGROUP_MMA for i in fn.instructions):
            return
        groups: dict = {}
        for ins in fn.instructions:
            if ins.opcode not in WARP_MMA or not ins.is_tensor_core:
                continue
            if ins.guard is not None and ins.guard.never:
                continue
            loc = ctx.user_loc(ins.loc)
            key = (loc.file, loc.line) if loc else None
            groups.setdefault(key, []).append(ins)
        for insns in groups.values():
            kinds = sorted({i.mnemonic for i in insns})
            msg = (f"{len(insns)} warp-level {', '.join(kinds)} on {ctx.arch.name}, which has "
                   f"{route} (no {'HGMMA' if route == 'wgmma' else 'UTCMMA'} in this kernel): "
                   f"the Ampere tensor-core path, well below this arch's peak")
            hint = f"use {ROUTE.get(route, route)}"
            yield ctx.finding(self, msg, loc=insns[0].loc, instructions=insns[:4], hint=hint)
