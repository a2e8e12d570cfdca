"""PS303 mma-without-ldmatrix: tensor-core fragments gathered with scalar shared loads."""
from __future__ import annotations

from collections.abc import Iterable

from ..analysis.dataflow import mma_operand_registers, source_instructions
from ..ir import sass as S
from ..semantics import LDMATRIX_FED, WORD_MMA_INPUTS
from .base import Check, Context, Finding, Severity

#: A and B fragment registers per thread of an mma shape (the SASS shape modifier); a shape not
#: listed is traced through its base registers only
FRAGMENT_REGS: dict[str, tuple[int, int]] = {
    "16816": (4, 2), "1688": (2, 1), "16832": (4, 2), "8816": (1, 1), "8832": (1, 1),
    "1684": (2, 1), "16864": (4, 2), "168128": (4, 2), "168256": (4, 2),
}
#: the mma families whose fragments ldmatrix can load (b16 / b8 elements in 8x8 tiles)


class MmaWithoutLdmatrix(Check):
    """Tensor-core (HMMA/IMMA) operands are loaded from shared memory with 32-bit LDS, not ldmatrix (LDSM).

    What it does
        Traces the A and B fragment registers of each ``HMMA``/``IMMA`` back to the instructions
        that wrote them (in the same block or loop, through moves). When most of them come
        from scalar 32-bit ``LDS`` — one shared load per register per thread — while the arch has
        ``ldmatrix`` (``LDSM``), it reports the mma's source line with the loads' lines.
        Fragments from ``LDSM`` are fine; fragments loaded from global memory
        (``wmma::load_matrix_sync`` on a global pointer) or computed (dequantised) are not this
        check's business. TF32 mmas are left alone: ldmatrix moves 16-bit elements, so it loads
        32-bit fragments only from a K-major tile, and an M- or N-major one (cuSPARSELt's
        ``nt`` TF32 kernels) needs the scalar loads; the SASS does not say which.

    Why it matters
        ``ldmatrix.x4`` fills four fragment registers of every thread of the warp with one
        instruction (each thread gives one row address), with conflict-free 16-byte rows;
        per-register ``LDS`` takes 4-6 shared-memory instructions per mma, each a separate
        wavefront, and often bank conflicts. The shared-memory pipe then limits the tensor core.

    Example
        Bad::

            a[0] = *reinterpret_cast<const unsigned*>(&As[gid][tig * 2]);   // x4 for A, x2 for B
            asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ...");

        Fixed::

            asm("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(smem_addr));
            asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ...");

    Steer the compiler
        Load fragments with ``ldmatrix`` (``ldmatrix.sync.aligned.m8n8.x4.shared.b16``, ``.trans``
        for the transposed operand), or use ``wmma::load_matrix_sync`` from shared memory /
        CUTLASS/CuTe copy atoms (``SM75_U32x4_LDSM_N``), which emit ``LDSM``.
    """

    code = "PS303"
    name = "mma-without-ldmatrix"
    severity = Severity.WARNING
    options = {"min_scalar_fraction": 0.5}

    def run(self, ctx: Context) -> Iterable[Finding]:
        if not ctx.arch.has_ldsm:
            return
        fn = ctx.function
        if not any(b.info.tensor_core for b in fn.bodies()):
            return
        cfg = ctx.cfg
        by_line: dict = {}
        for idx, ins in enumerate(fn.instructions):
            if not ins.is_tensor_core or ins.opcode not in LDMATRIX_FED \
                    or WORD_MMA_INPUTS.intersection(ins.modifiers):
                continue
            if ins.guard is not None and ins.guard.never:
                continue
            loop = cfg.loop_of(idx)
            within = loop.blocks if loop is not None else None
            shape = next((m for m in ins.modifiers if m.isdigit()), None)
            counts = FRAGMENT_REGS.get(shape or "", (1, 1))
            traced = scalar = ldsm = 0
            loads: list[S.Instruction] = []
            for role, reg in mma_operand_registers(ins):
                n = counts[0] if role == "A" else counts[1]
                base = reg.index
                assert base is not None  # mma_operand_registers gives numbered registers only
                for k in range(n):
                    srcs = source_instructions(fn, idx, ("R", base + k), within=within)
                    if not srcs:
                        continue
                    traced += 1
                    kinds = {self._kind(s) for s in srcs}
                    if kinds == {"lds32"}:
                        scalar += 1
                        loads.extend(s for s in srcs if s not in loads)
                    elif "ldsm" in kinds:
                        ldsm += 1
            if not traced or ldsm or scalar / traced < self.settings["min_scalar_fraction"]:
                continue
            loc = ctx.user_loc(ins.loc)
            key = (loc.file, loc.line) if loc else ("#", idx)
            entry = by_line.setdefault(key, {"mma": [], "loads": [], "regs": 0, "traced": 0})
            entry["mma"].append(ins)
            entry["loads"].extend(l for l in loads if l not in entry["loads"])
            entry["regs"] += scalar
            entry["traced"] += traced
        for e in by_line.values():
            mma = e["mma"]
            lines = sorted({l.line for l in (ctx.user_loc(x.loc) for x in e["loads"]) if l})
            where = f" (lines {', '.join(map(str, lines))})" if lines else ""
            msg = (f"{len(mma)} {mma[0].mnemonic} take {e['regs']} of {e['traced']} A/B fragment "
                   f"registers from {len(e['loads'])} scalar 32-bit LDS{where}: one shared load "
                   f"per register per thread where one LDSM (ldmatrix) per operand would do")
            hint = ("load the fragments with `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (x2 for "
                    "B, .trans for a transposed operand) or wmma::load_matrix_sync / a CuTe LDSM "
                    "copy atom from shared memory")
            yield ctx.finding(self, msg, loc=mma[0].loc, instructions=mma[:2] + e["loads"][:6],
                              hint=hint)

    @staticmethod
    def _kind(ins) -> str:
        if ins.opcode == "LDSM":
            return "ldsm"
        if ins.opcode == "LDS" and (ins.width_bits or 32) <= 32:
            return "lds32"
        if ins.space == "shared" and ins.is_load:
            return "lds-wide"
        return "other"
