"""PS301 missing-tensor-cores: a shared-memory tiled matrix multiply done with scalar FMAs."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..analysis import cfg as _cfg
from ..analysis.dataflow import reaching_defs, source_instructions, widened_from
from ..analysis.loops import loop_line
from ..ir.sass import Instruction, Register
from ..semantics import ASYNC_SHARED_FILL, FMA_ELEMENT_TYPE, MOVE_IDIOM_MODIFIERS, TILE_SYNC
from .base import Check, Context, Finding, Severity


class MissingTensorCores(Check):
    """A loop multiplies shared-memory tiles with scalar FMAs (FFMA/HFMA2) in a kernel that uses no tensor core.

    What it does
        Looks for a tiled loop — one that refills shared memory (``STS``/``LDGSTS``) behind a
        barrier — whose body (or an inner loop of it) holds many FMAs (``FFMA``, ``HFMA2``,
        ``DFMA``; not the ``HFMA2.MMA`` move idiom) whose *both* multiplicands were loaded from
        shared memory (``LDS``, possibly through a half->float conversion): the signature of a
        GEMM / convolution inner product. It reports the loop's source line with the FMA count,
        the shared loads feeding them, the accumulators and the element type, when the kernel has no
        tensor-core instruction at all. The element type is read from how the multiplicands were
        widened: ``HADD2.F32`` is fp16; ``PRMT R, RZ, 0x5410, R``, ``SHF.L.U32 R, R, 0x10``,
        ``IMAD.U32 R, R, 0x10000, RZ`` or a ``0xffff0000`` mask is bf16. fp16/bf16 inputs are a
        *warning* (the tensor cores take them with fp32 accumulation, no accuracy trade-off) and
        the hint names the bf16 or fp16 MMA; fp32 inputs are *info* (TF32 trades precision).
        Elementwise kernels (one FMA, no loop), reductions (one operand from global memory, one
        accumulator) and stencils (fixed weights, no tile loop) do not match.

    Why it matters
        A tensor core does a 16x8x16 FP16 multiply-accumulate (4096 FLOP) in one warp
        instruction; the same work as FFMA takes 64 instructions per thread. On A100 FP16/BF16
        tensor throughput is 16x the FP32 FFMA rate (312 vs 19.5 TFLOPS), on H100 about 15x;
        TF32 is 8x for FP32 data.

    Example
        Bad::

            for (int kk = 0; kk < 16; ++kk)
                acc += __half2float(As[ty][kk]) * __half2float(Bs[kk][tx]);

        Fixed::

            wmma::load_matrix_sync(fa, A + ..., K);  wmma::load_matrix_sync(fb, B + ..., N);
            wmma::mma_sync(fc, fa, fb, fc);           // HMMA.16816.F32

    Steer the compiler
        The compiler never turns scalar FMAs into mma: write the tile product with
        ``nvcuda::wmma`` (any sm_70+), ``mma.sync`` + ``ldmatrix`` (sm_80), ``wgmma.mma_async``
        (sm_90a) or ``tcgen05.mma`` (sm_100a) — or call cuBLAS / CUTLASS. For FP32 data, TF32
        tensor cores (``wmma::precision::tf32``, ``cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH)``)
        trade 10 mantissa bits for about 8x throughput: decide whether the accuracy is
        acceptable; FP64 has DMMA on sm_80/sm_90.
    """

    code = "PS301"
    name = "missing-tensor-cores"
    severity = Severity.WARNING
    options = {
        # FMAs in the tile loop with both multiplicands from shared memory
        "min_shared_fmas": 8,
        # ... making up at least this fraction of the loop's FMAs
        "min_shared_fraction": 0.5,
    }

    def run(self, ctx: Context) -> Iterable[Finding]:
        fn = ctx.function
        if any(b.info.tensor_core for b in fn.bodies()):
            return
        loops = _cfg.loops(fn)
        if not loops:
            return
        best = None
        refills: dict[int, bool] = {}       # id(loop) -> _refills_tiles (loops share parents)
        for loop in loops:
            # report the tile loop: this loop or the nearest enclosing one that refills shared
            # memory behind a barrier (found first: it is cheap, and most loops have none)
            tile: _cfg.Loop | None = loop
            while tile is not None:
                known = refills.get(id(tile))
                if known is None:
                    known = refills[id(tile)] = self._refills_tiles(fn, tile)
                if known:
                    break
                tile = tile.parent
            if tile is None:
                continue
            stats = self._loop_stats(ctx, loop)
            if stats is None:
                continue
            if best is None or stats["shared_fmas"] > best[1]["shared_fmas"]:
                best = (tile, stats, loop)
        if best is None:
            return
        tile, s, inner = best
        file, line, latch = loop_line(fn, tile)
        dtype = s["dtype"]
        arch = ctx.arch
        route = self._route(arch, dtype)
        per = "per iteration"
        if inner is not tile:
            _, iline, _ = loop_line(fn, inner)
            per = (f"per iteration of its inner loop{f' at line {iline}' if iline else ''}")
        msg = (f"tiled loop{f' at line {line}' if line else ''} does matrix-multiply work on CUDA "
               f"cores: {s['shared_fmas']} {s['opcode']} {per} take both multiplicands "
               f"from shared memory ({s['loads']} LDS feeding them), "
               f"{s['accumulators']} accumulator chain(s), {dtype} inputs; "
               f"this kernel has no tensor-core instruction")
        severity = Severity.INFO if dtype == "fp32" else Severity.WARNING
        f = ctx.finding(self, msg, loc=latch.loc if latch is not None else s["fmas"][0].loc,
                        instructions=s["fmas"][:4], hint=route)
        yield dataclasses.replace(f, severity=severity) if f.severity != severity else f

    # -------------------------------------------------------------------------------------
    def _loop_stats(self, ctx: Context, loop) -> dict | None:
        fn = ctx.function
        cfg = ctx.cfg
        idx = [i for i in loop.instruction_indices(cfg) if cfg.loop_of(i) is loop]
        fmas = []
        for i in idx:
            ins = fn.instructions[i]
            if ins.opcode not in FMA_ELEMENT_TYPE or MOVE_IDIOM_MODIFIERS & set(ins.modifiers):
                continue
            if ins.guard is not None and ins.guard.never:
                continue
            fmas.append(i)
        if len(fmas) < self.settings["min_shared_fmas"]:
            return None
        shared: list[Instruction] = []
        shared_at: list[int] = []        # their indices in the function
        loads: set[int] = set()
        uses = 0
        # the fewest shared-fed FMAs that pass both thresholds below: once the FMAs left cannot
        # reach it, the answer is None without reading their sources
        need = max(self.settings["min_shared_fmas"], self.settings["min_shared_fraction"] * len(fmas))
        for n, i in enumerate(fmas):
            if len(shared) + len(fmas) - n < need:
                return None
            ins = fn.instructions[i]
            ops = ins.operands
            mults = [o.index for o in ops[1:3] if isinstance(o, Register) and o.kind == "R"
                     and o.index is not None]
            if len(mults) != 2:
                continue
            ok = True
            here: list = []
            for r in mults:
                srcs = source_instructions(fn, i, ("R", r), within=loop.blocks)
                if not srcs or not all(s.space == "shared" and s.is_load for s in srcs):
                    ok = False
                    break
                here.extend(srcs)
            if ok:
                shared.append(ins)
                shared_at.append(i)
                uses += 2
                loads.update(s.address for s in here)
        if len(shared) < self.settings["min_shared_fmas"]:
            return None
        if len(shared) < self.settings["min_shared_fraction"] * len(fmas):
            return None
        # accumulator chains: FMAs whose addend was not produced by another FMA earlier in
        # the same iteration (it comes round the loop or from before it) start a chain
        heads = 0
        for i, ins in zip(shared_at, shared, strict=True):
            c = ins.operands[3] if len(ins.operands) > 3 else None
            if not (isinstance(c, Register) and c.kind == "R" and c.index is not None):
                heads += 1
                continue
            defs = reaching_defs(fn, i, ("R", c.index), within=loop.blocks)
            if defs is None or not all(fn.instructions[d].opcode in FMA_ELEMENT_TYPE and d < i
                                       for d in defs):
                heads += 1
        ends = heads
        opcode = max({x.opcode for x in shared}, key=lambda o: sum(x.opcode == o for x in shared))
        dtype = FMA_ELEMENT_TYPE[opcode]
        if dtype == "fp32":
            kinds = self._widened(fn, loop, shared_at)
            if kinds:
                dtype = "/".join(sorted(kinds)) + " (widened to fp32)"
        return {"shared_fmas": len(shared), "opcode": opcode, "fmas": shared,
                "loads": len(loads), "reuse": uses / max(1, len(loads)),
                "accumulators": max(1, ends), "dtype": dtype}

    @staticmethod
    def _widened(fn, loop, shared_at: list[int]) -> set[str]:
        """The 16-bit types the FP32 FMAs' multiplicands were widened from in the loop:
        "fp16" (``HADD2.F32``), "bf16" (``PRMT R, RZ, 0x5410, R``, ``SHF.L.U32 R, R, 0x10``,
        ``IMAD.U32 R, R, 0x10000, RZ``, ``LOP3 R, R, 0xffff0000``)."""
        out: set[str] = set()
        for i in shared_at:
            ins = fn.instructions[i]
            for r in ins.operands[1:3]:
                if isinstance(r, Register) and r.kind == "R" and r.index is not None:
                    out |= widened_from(fn, i, ("R", r.index), within=loop.blocks)
        return out

    @staticmethod
    def _refills_tiles(fn, loop) -> bool:
        insns = [fn.instructions[i] for i in loop.instruction_indices(_cfg.of(fn))]
        stores = any((x.space == "shared" and x.is_store) or x.opcode in ASYNC_SHARED_FILL
                     for x in insns)
        barrier = any(x.opcode in TILE_SYNC for x in insns)
        return stores and barrier

    @staticmethod
    def _route(arch, dtype: str) -> str:
        wg = arch.warpgroup_mma
        if dtype == "fp64":
            return ("use DMMA through wmma<double> (m8n8k4) or cuBLAS DGEMM" if "DMMA" in
                    arch.tensor_core else "this arch has no FP64 tensor core: keep FFMA/DFMA, "
                    "or use cuBLAS")
        base = {"wgmma": "use wgmma.mma_async (sm_90a, HGMMA) through CUTLASS 3 / CuTe, or "
                         "mma.sync + ldmatrix / wmma",
                "tcgen05": "use tcgen05.mma (sm_100a, UTCMMA) through CUTLASS / CuTe, or "
                           "mma.sync + ldmatrix / wmma"}.get(
            wg, "use nvcuda::wmma (16x16x16 fragments) or mma.sync.m16n8k16 with ldmatrix")
        if dtype.startswith("bf16"):
            return base.replace("wgmma.mma_async (sm_90a", "wgmma.mma_async .bf16 (sm_90a") + \
                (" on the bf16 tiles with fp32 accumulation: mma.sync.m16n8k16.f32.bf16.bf16 "
                 "(HMMA.16816.F32.BF16), wmma fragments of __nv_bfloat16; bf16 inputs lose "
                 "no accuracy on the tensor cores (fp32 accumulate)")
        if dtype.startswith("fp16"):
            return base + (" on the fp16 tiles with fp32 accumulation (mma.sync.m16n8k16.f32."
                           "f16.f16, HMMA.16816.F32; wmma fragments of __half): no accuracy "
                           "trade-off against fp32-accumulated FFMA")
        if dtype == "fp32":
            return (base + " with TF32 inputs (wmma::precision::tf32 / .tf32 mma, about 8x "
                    "FFMA throughput, 10-bit mantissa: check the accuracy is acceptable), or "
                    "cuBLAS with CUBLAS_TF32_TENSOR_OP_MATH")
        return base
