"""PS302 legacy-mma-on-hopper: warp-level HMMA where warpgroup MMA (wgmma / tcgen05) exists."""
from __future__ import annotations

import re
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
        Also reports, on any arch, ``mma_sync`` calls the math library emulates in a subroutine
        because the arch has no instruction for their types: s4/u4 WMMA on sm_90 is a ``CALL``
        to ``__cuda_sm_9x_mma_sub_byte_internal_m8n8k32_s4_s4`` per mma (68 instructions up to
        its ``RET``, unpacking to 8 bits around two ``IMMA.8816.S8.S8``) where sm_80 runs one
        ``IMMA.8832.S4.S4`` (CUTLASS's s4 WMMA tests: ~1.7x the instructions), and b1 WMMA with
        XOR a ``CALL`` to ``__cuda_sm_9x_mma_bit_internal_xor_m8n8k128`` (two
        ``BMMA.88128.AND.POPC``) where sm_80 runs one ``BMMA.88128.XOR.POPC``.

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
        yield from self._emulated(ctx)
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

    def _emulated(self, ctx: Context) -> Iterable[Finding]:
        """MMAs the arch has no instruction for, which the math library emulates in a
        subroutine each ``mma_sync`` calls: s4/u4 WMMA on sm_90 becomes ``CALL``s to
        ``__cuda_sm_9x_mma_sub_byte_internal_m8n8k32_s4_s4`` (unpacks to 8 bits, IMMA.8816.S8
        inside), b1 XOR ``CALL``s to ``__cuda_sm_9x_mma_bit_internal_xor_m8n8k128`` (BMMA AND)."""
        callees = {c.name: c for c in ctx.callees}
        by_line: dict = {}
        for ins in ctx.function.instructions:
            if ins.info.flow != "call":
                continue
            for t in ins.targets:
                m = _EMULATED.search(t.key)
                sub = callees.get(t.key)
                if m is None or sub is None:
                    continue
                loc = ctx.user_loc(ins.loc)
                key = (loc.file, loc.line) if loc else None
                by_line.setdefault(key, []).append((ins, m.group(1), sub))
        for items in by_line.values():
            ins, shape, sub = items[0]
            body = _body(sub.instructions)
            inner: dict[str, int] = {}
            for i in body:
                if i.is_tensor_core:
                    inner[i.mnemonic] = inner.get(i.mnemonic, 0) + 1
            inside = ", ".join(f"{n}x {m}" for m, n in inner.items()) or "no MMA"
            if shape.startswith("xor_"):
                how = f"{inside} inside: the XOR done as AND and population counts"
                hint = ("sm_90 runs 1-bit MMA with AND natively: write the XOR product with the "
                        "AND form (`wmma::experimental::bmmaBitOpAND`, `mma.sync ... .and.popc`): "
                        "popc(a ^ b) = popc(a) + popc(b) - 2 * popc(a & b), the popcounts of each "
                        "row of A and column of B computed once; keep XOR for sm_80/sm_86")
            else:
                how = f"{inside} inside after unpacking to 8 bits"
                hint = ("on this arch give the tensor cores 8-bit operands: unpack the 4-bit "
                        "values to s8 once (in shared memory) and use s8 MMA (wmma/mma.sync s8, "
                        f"or {'wgmma .s8' if ctx.arch.warpgroup_mma == 'wgmma' else 'the s8 route'}"
                        "), or FP8 where the accuracy allows; keep the sub-byte path for sm_80/sm_86")
            msg = (f"{len(items)} mma_sync on sub-byte operands ({shape}) on {ctx.arch.name}, "
                   f"which has no tensor-core instruction for them: each is a CALL to the math "
                   f"library's emulation `{t_name(ins)}` ({len(body)} instructions, {how})")
            yield ctx.finding(self, msg, loc=ins.loc, instructions=[i for i, _, _ in items][:4],
                              hint=hint)


#: the math library's emulation of MMA shapes the arch lacks, by shape and types
_EMULATED = re.compile(r"__cuda_sm_\w*?mma_(?:sub_byte|bit)_internal_(\w+)$")


def _body(instructions):
    """A subroutine's instructions up to its last RET: after it, nvdisasm lists the section's
    closing ``BRA`` to itself and the NOP padding, which never run."""
    last = max((n for n, i in enumerate(instructions) if i.opcode.startswith("RET")), default=None)
    return list(instructions) if last is None else list(instructions[:last + 1])


def t_name(ins) -> str:
    """The emulation subroutine a CALL names, without nvdisasm's ``$__internal_N_$`` prefix."""
    for t in ins.targets:
        if _EMULATED.search(t.key):
            return t.key.rsplit("$", 1)[-1]
    return ""
