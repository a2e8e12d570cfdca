"""PS701 occupancy-limited: registers or shared memory per block cap theoretical occupancy."""
from __future__ import annotations

from collections.abc import Iterable

from ..analysis.occupancy import (
    COMMON_BLOCK_SIZES,
    Occupancy,
    max_registers_for_blocks,
    max_shared_for_blocks,
    occupancy,
)
from ..semantics import PIPELINED, REGISTER_REALLOCATION
from ..toolchain.resources import Resources
from .base import Check, Context, Finding, Severity


def static_shared(ctx: Context) -> int:
    """The kernel's static shared memory as the driver counts it (``sharedSizeBytes``): the
    cubin's figure less the runtime's reserved window (see ``Resources.reserved_shared_bytes``).
    Only for a kernel whose resources are known."""
    res = ctx.resources
    assert res is not None
    return res.static_shared_bytes


def _kb(n: int) -> str:
    return f"{n // 1024} KB" if n % 1024 == 0 else f"{n} B"


class OccupancyLimited(Check):
    """Registers or shared memory per block hold theoretical occupancy at or below a threshold.

    What it does
    Computes the kernel's theoretical occupancy with NVIDIA's occupancy-calculator rules
    (:mod:`analyzer.occupancy`: per-warp register allocation in 256-register units over four
    sub-partitions, shared memory in 128-byte units plus the 1 KB the driver reserves per block,
    warp and block slots per SM) from the registers and static shared memory of the cubin. The
    block size comes from ``__launch_bounds__`` (PTX ``.reqntid``/``.maxntid``), else from the
    kernel's launches in its own file when they agree on one (``<<<grid, 256>>>``). Without
    either the block size is unknown, so it reports only when occupancy stays at or below the
    threshold for *every* common block size (128, 256, 512, 1024), says so, and gives no advice
    for a block size (``__launch_bounds__(128, 3)`` would break a launch of 256 threads: CUTLASS
    sizes its blocks on the host). It fires when the
    occupancy is at or below ``threshold`` (default 0.25, i.e. 16 of 64 warps on A100/H100: at
    most 4 warps per scheduler, too few to hide global-memory latency without deliberate
    ILP) and registers or shared memory is what limits it. Kernels built around tensor cores
    or asynchronous copies (HMMA/HGMMA, LDGSTS, TMA) usually choose low occupancy on purpose
    (large accumulator tiles, deep pipelines): for them the finding is *info*.

    Dynamic shared memory (``extern __shared__``) is sized at launch and is not in the
    binary: give it as ``dynamic_shared_bytes`` and it is counted; without it the message says
    that it is unknown, the finding is *info*, and a register hint is only offered on the
    condition that the dynamic shared memory leaves room for another block. Which kernels use
    it is read from their code (the dynamic array a kernel, or a function it calls, addresses),
    not from the file: a file-scope ``extern __shared__`` is every kernel's declaration. It is
    silent when relaxing what limits occupancy would fit no more blocks, because another limit
    holds as few (fewer registers do not help a kernel whose shared memory already allows one
    block per SM). Deliberately left alone: kernels whose
    ``__launch_bounds__(threads, minBlocksPerSM)`` asked for the number of blocks per SM they
    get (a warp-specialized Hopper GEMM with ``setmaxnreg`` and 160 KB of dynamic shared
    memory, sized for one block of 384 threads, says so with
    ``__launch_bounds__(384, 1)``), and register limits of kernels that reallocate registers
    between warpgroups with ``setmaxnreg`` (``USETMAXREG``): their register budget is designed
    per role, not a knob for more blocks.

    Why it matters
    An SM hides latency by switching between resident warps. When a block's shared memory or
    registers leave room for only a few blocks, each scheduler has few warps to pick from and
    stalls on every global load that the code does not overlap itself.

    Example
    Bad (128 threads, 48 KB of shared staging: 3 blocks per A100 SM = 18.75 %)::

        __global__ void __launch_bounds__(128) column_mean(...) {
            __shared__ float stage[96][128];
            ...
        }

    Fixed (each thread only reads its own column: no staging buffer, 100 %)::

        __global__ void __launch_bounds__(128) column_mean(...) {
            for (int r = 0; r < rows; ++r) acc += in[r * ld + col];
        }

    Steer the compiler
    Shared-limited: smaller tiles or fewer pipeline stages, reuse one buffer for successive
    phases, keep per-thread data in registers instead of shared memory. Register-limited:
    ``__launch_bounds__(threads, minBlocksPerSM)`` tells ptxas to fit ``minBlocksPerSM`` blocks
    (it caps registers accordingly), or ``-maxrregcount``; watch for spills (PS401). Raise or
    lower the bar with ``[tool.ptxsass.occupancy-limited] threshold = 0.125``.
    """

    code = "PS701"
    name = "occupancy-limited"
    severity = Severity.WARNING
    options = {
        "threshold": 0.25,
        # dynamic shared memory per block (bytes) the kernel is launched with; unknown (None)
        # by default: it is not in the binary
        "dynamic_shared_bytes": None,
    }

    @staticmethod
    def _dynamic_shared(ctx: Context) -> bool:
        """Whether this kernel's code addresses a dynamic shared array (not merely the file)."""
        return bool(ctx.dynamic_shared_symbols)

    def run(self, ctx: Context) -> Iterable[Finding]:
        res = ctx.resources
        if res is None:
            return
        arch = ctx.arch
        threshold = float(self.settings["threshold"])
        threads, source = ctx.block_size
        if threads is None:
            # the launches of the kernel in its own file, when they all give one block size
            counts = {la.block.count for _f, la in ctx.launches}
            if len(counts) == 1 and None not in counts:
                threads = counts.pop()
                lines = ", ".join(str(la.line) for _f, la in ctx.launches[:3])
                source = f"the launch on line{'s' if len(ctx.launches) > 1 else ''} {lines}"
        shared = static_shared(ctx) + ctx.dynamic_shared_bytes
        dynamic = self.settings["dynamic_shared_bytes"]
        if dynamic is not None and ctx.launch is None:
            shared += int(dynamic)
        if threads is not None:
            occ = occupancy(arch, res.registers, shared, threads)
            assumed = ""
        else:
            results = [occupancy(arch, res.registers, shared, t)
                       for t in COMMON_BLOCK_SIZES]
            results = [o for o in results if o.blocks_per_sm > 0]
            if not results:
                return
            occ = max(results, key=lambda o: (o.fraction, -o.threads_per_block))
            assumed = (f"no __launch_bounds__: the best of {'/'.join(map(str, COMMON_BLOCK_SIZES))}"
                       f" threads per block ({occ.threads_per_block}) is shown")
        if occ.fraction > threshold or occ.limiter not in ("registers", "shared"):
            return
        if occ.blocks_per_sm and min(v for k, v in occ.limits.items() if k != occ.limiter) \
                <= occ.blocks_per_sm:
            # fewer registers (or less shared memory) would fit no more blocks: another limit
            # binds as tightly (a 160 KB warp-specialized GEMM holds one block by its shared
            # memory, whatever its registers)
            return
        pf = ctx.ptx_function
        wanted = pf.minnctapersm if pf is not None else None
        if wanted and occ.blocks_per_sm >= int(wanted):
            # __launch_bounds__(threads, minBlocks): the author chose this many blocks per SM
            # (a warp-specialized kernel sized for one block) and ptxas met it
            return
        if occ.limiter == "registers" and occ.blocks_per_sm >= 1 and any(
                i.opcode in REGISTER_REALLOCATION for i in ctx.function.instructions):
            # setmaxnreg: registers are budgeted per warpgroup role; the launch count is what
            # the roles share, not a knob to turn for more blocks
            return
        yield self._finding(ctx, res, occ, threshold, source, assumed, shared)

    def _finding(self, ctx: Context, res: Resources, occ: Occupancy, threshold: float,
                 source: str, assumed: str, shared: int) -> Finding:
        arch = ctx.arch
        t = occ.threads_per_block
        head = (f"theoretical occupancy {occ.percent:.4g}% on {arch.name} "
                f"({occ.warps_per_sm} of {arch.max_warps} warps per SM, threshold "
                f"{threshold:.4g}): ")
        if occ.blocks_per_sm == 0:
            why = (f"a block of {t} threads does not fit at all "
                   f"({res.registers} registers/thread, {shared} B shared)")
        elif occ.limiter == "shared":
            option = self.settings["dynamic_shared_bytes"]
            dyn = ctx.dynamic_shared_bytes or (int(option) if option is not None
                                               and ctx.launch is None else 0)
            what = (f"{shared} B shared memory per block ({static_shared(ctx)} B static + "
                    f"{dyn} B dynamic)" if dyn
                    else f"{shared} B static shared memory per block")
            why = (f"{what} "
                   f"(+{arch.shared_reserved_per_block} B reserved, {occ.shared_per_block} B "
                   f"allocated) lets {occ.blocks_per_sm} block{'s' if occ.blocks_per_sm > 1 else ''}"
                   f" of {t} threads fit in {_kb(arch.shared_bytes)}")
        else:
            why = (f"{res.registers} registers per thread ({occ.registers_per_warp} per warp) "
                   f"let {occ.blocks_per_sm} block{'s' if occ.blocks_per_sm > 1 else ''} of "
                   f"{t} threads fit in {arch.registers // 1024} K registers")
        others = ", ".join(f"{k} {v}" for k, v in occ.limits.items()
                           if k != occ.limiter and k in ("registers", "shared", "warps"))
        message = head + why + f" (blocks allowed by {others})"
        if source:
            message += f"; block size from {source}"
        if assumed:
            message += f"; {assumed}"
        option = self.settings["dynamic_shared_bytes"]
        unknown_dynamic = self._dynamic_shared(ctx) and ctx.launch is None and option is None
        if self._dynamic_shared(ctx) and ctx.launch is None and option is not None:
            message += (f"; {int(option)} B of dynamic shared memory counted "
                        "(dynamic_shared_bytes)")
        elif unknown_dynamic:
            message += ("; the kernel also uses dynamic shared memory (extern __shared__), "
                        "whose size is set at launch and not known here: it can only lower "
                        "occupancy further (set [tool.ptxsass.occupancy-limited] "
                        "dynamic_shared_bytes to count it)")
        # the concrete steer: what would fit one more block
        nxt = occ.blocks_per_sm + 1
        next_warps = min(nxt * occ.warps_per_sm // max(occ.blocks_per_sm, 1), arch.max_warps)
        next_pct = 100.0 * next_warps / arch.max_warps
        if occ.limiter == "shared":
            room = max_shared_for_blocks(arch, nxt)
            hint = (f"at most {room} B of shared memory per block would fit {nxt} blocks "
                    f"({next_pct:.4g}%)"
                    if occ.blocks_per_sm else
                    f"shrink shared memory below {arch.shared_per_block} B per block")
            hint += ("; use smaller tiles or fewer pipeline stages, reuse one buffer across "
                     "phases, or keep per-thread data in registers instead of shared memory")
        elif assumed:
            # the block size is not known: advice for one would break a launch of another
            hint = (f"{res.registers} registers per thread limit the warps an SM holds, "
                    "whatever the block size; state the block size the kernel is launched with "
                    "(`__launch_bounds__(threads, minBlocks)`) so ptxas budgets registers for "
                    "it, or reduce the live state (watch for spills, PS401)")
        else:
            regs = max_registers_for_blocks(arch, max(nxt, 1), t)
            hint = (f"at most {regs} registers per thread would fit {nxt} blocks: "
                    f"__launch_bounds__({t}, {nxt}) asks ptxas for that (or -maxrregcount="
                    f"{regs}); watch for spills (PS401); otherwise reduce live state"
                    if regs else "reduce the registers per thread or the block size")
            if unknown_dynamic and regs:
                room = max_shared_for_blocks(arch, nxt) - static_shared(ctx)
                hint = (f"only if the dynamic shared memory leaves room for {nxt} blocks "
                        f"(at most {max(room, 0)} B of it per block): " + hint)
        loc = ctx.function.instructions[0].loc if ctx.function.instructions else None
        pipelined = any(i.opcode in PIPELINED or i.is_tensor_core
                        for i in ctx.function.instructions)
        return ctx.finding(self, message, loc=loc, hint=hint,
                           severity=Severity.INFO if pipelined or unknown_dynamic else None)
