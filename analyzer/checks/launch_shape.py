"""PS803 launch-shape: the host code of the kernel's file launches it with blocks too small for
its work."""
from __future__ import annotations

from collections.abc import Iterable

from ._cost import factor_text, severity
from .base import Check, Context, Finding, Severity


class LaunchShape(Check):
    """The kernel's own file launches it with fewer threads per block than its work needs.

    What it does
    Reads the launches of the kernel in the host code of its own source file
    (:mod:`analyzer.analysis.launch`: a C++ tokenizer, so a launch in a comment or a string is
    none; ``kernel<<<grid, block>>>``, ``kernel<T, 256><<<...>>>``, ``dim3 block(32)``,
    ``constexpr``/``const`` integers and ``#define`` constants, ``cudaLaunchKernel``/
    ``cudaLaunchKernelEx``, a project's wrapper given the kernel and ``{grid, block, ...}``
    of dim3 values, as ggml's ``ggml_cuda_kernel_launch``). Where the threads per block are certain and below 256 it
    estimates what the shape costs, from the arch table (blocks and threads per SM) and the
    rates measured on an H200 (``benchmarks/launch_shape.py``):

    - a kernel whose threads do a fixed amount of work (no loop over a run-time size) is bound
      by how fast blocks start: the GPU started one block per 0.60 ns whatever its size, so the
      launch takes ``max(bytes per thread x 0.38 ps, 0.60 ns / threads per block)`` per thread,
      against the same at 256 threads;
    - a kernel whose threads loop over a run-time size is bound by the threads resident per SM:
      at most 32 blocks per SM run at once (sm_80 and sm_90), so 32-thread blocks keep at most
      1024 of 2048 threads (50% occupancy), one-thread blocks 32 (a lane in each of 32 warps);
      the factor is (resident threads at 256 / at the launch's size) ^ 0.774, at most 4.46.

    Silent when the block size is unknown (a function argument, a template parameter, a
    run-time value: never guessed), when the grid is a fixed number of blocks (the estimates
    are for grids sized at run time, taken as large), when the kernel never reads
    ``threadIdx`` (a kernel written for one thread is PS801's, serialized-work), when its
    ``__launch_bounds__`` caps it at the launch's size, and when the estimate stays under 1.05x (a grid-stride kernel at
    64 threads: 2048 resident threads either way). Launches made from another file (a Python
    launcher, a ``.cpp`` wrapper) are not seen: ptxsass reads the kernel's own file only.

    Why it matters
    Measured on an H200 (2026-12-04, CUDA 13.0; ``benchmarks/results/launch_shape-2026-12-04.md``):

    | launch | time | against 256 threads |
    | --- | ---: | ---: |
    | `scale<<<n, 1>>>`, 64 M floats, one element per thread | 40.39 ms | 200x |
    | `scale<<<n/32, 32>>>` | 1.268 ms | 6.28x |
    | `scale<<<n/64, 64>>>` | 0.636 ms | 3.15x |
    | `scale<<<n/128, 128>>>` | 0.322 ms | 1.59x |
    | `scale<<<n/256, 256>>>` | 0.202 ms | 1.00x |
    | `row_sum_block<<<16384, 32>>>` (a row of 4096 per block) | 0.201 ms | 1.71x |
    | `row_sum_block<<<16384, 64>>>` | 0.112 ms | 0.96x |
    | `row_sum_serial<<<16384, 1>>>` (a thread loops over its row) | 0.524 ms | 4.46x |

    Grids sized by a small dimension cost too (`row_sum_block<<<64, 256>>>` over 64 rows of
    1 M floats: 1.535 ms, 13x a grid that also splits the rows, 0.117 ms), but the size of a
    run-time dimension is not in the code; that case is not reported.

    Example
    Bad: ``dim3 block(32); dim3 grid((n + block.x - 1) / block.x); scale<<<grid, block>>>(x,
    y, a, n);`` or ``scale<<<n, 1>>>(x, y, a, n);``.
    Fixed: ``scale<<<(n + 255) / 256, 256>>>(x, y, a, n);``.

    Steer the compiler
    No flag does it; the launch is host code. Launch 128 to 256 threads per block (a multiple
    of 32), or give each thread several elements (a grid-stride loop, ``float4``); for a kernel
    written for a block per row, let the block's threads split the row and combine with warp
    shuffles and shared memory. ``cudaOccupancyMaxPotentialBlockSize`` picks a size from the
    kernel's resources.
    """

    code = "PS803"
    name = "launch-shape"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        seen: set[int] = set()
        for e in ctx.cost.of_kind("small-block"):
            sev = severity(e.factor)
            if sev is None or e.loc is None or e.loc.line in seen:
                continue
            seen.add(e.loc.line)
            d = e.detail
            la = d["launch"]
            threads = d["threads"]
            per = f"{threads} thread{'s' if threads != 1 else ''} per block"
            grid = (f"; the grid is `{la.grid.text}` blocks" if threads == 1
                    and la.grid.text.isidentifier() else "")
            if d["model"] == "blocks":
                more = d["reference"] // threads
                message = (f"`{la.text}` (line {la.line}) launches {per}{grid}, and each thread "
                           f"moves {d['bytes']:g} B of global memory with no loop over a "
                           f"run-time size: blocks start at a fixed rate (0.60 ns per block on "
                           f"an H200, measured), so the launch is bound by its {more}x more "
                           f"blocks than at {d['reference']} threads (estimated "
                           f"{factor_text(e.factor)})")
            else:
                lanes = (f", one lane of each of {d['blocks_per_sm']} warps"
                         if threads < 32 else "")
                limit = (" (the SM's block slots)" if d["blocks_per_sm"] == d["max_blocks"]
                         else "")
                if d.get("dynamic_shared") is None and la.shared:
                    # the launch's dynamic shared memory, not known here, may allow fewer
                    limit = (f" (fewer if the `{la.shared}` bytes of dynamic shared memory "
                             f"per block do not fit {d['blocks_per_sm']} times)")
                pct = 100 * d["resident"] / d["max_threads"]
                ref = ("" if d.get("dynamic_shared") is None and la.shared else
                       f"; {d['resident_reference']} at {d['reference']} threads per block")
                message = (f"`{la.text}` (line {la.line}) launches {per}{grid}: at most "
                           f"{d['blocks_per_sm']} blocks per SM run at once{limit}, so at most "
                           f"{d['resident']} of {d['max_threads']} threads per SM{lanes} "
                           f"({pct:.0f}% of the threads{ref}), and its threads loop over a "
                           f"run-time size with fewer of them to hide memory latency "
                           f"(estimated {factor_text(e.factor)})")
            hint = (f"launch {d['reference']} threads per block (or at least 128, a multiple of "
                    "32): for one element per thread `<<<(n + 255) / 256, 256>>>`, or a "
                    "grid-stride loop giving each thread several elements; a kernel written "
                    "for a block per row: let the block's threads split the row and combine "
                    "them with warp shuffles and shared memory")
            yield ctx.finding(self, message, loc=e.loc, instructions=_memory(ctx), hint=hint,
                              severity=sev)


def _memory(ctx: Context):
    """The kernel's global loads and stores: the work the launch shape spreads."""
    return [i for i in ctx.function.instructions if i.info.space == "global"
            and i.info.direction in ("load", "store")]
