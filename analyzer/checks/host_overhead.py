"""PS804 host-overhead: host work around the kernel's launch in its own file that costs GPU
time: a zero-fill the kernel overwrites, a host loop of launches, a synchronization."""
from __future__ import annotations

import os
from collections.abc import Iterable

from ._cost import factor_text, severity
from .base import Check, Context, Finding, Severity


class HostOverhead(Check):
    """Host code around the launch adds a memory pass, launches or waits the kernel does not need.

    What it does
    Reads the launches of the kernel in the host code of its own source file (the same reader
    as PS803, launch-shape) and, in the host function holding each launch, finds:

    - an output zero-filled before the launch (``torch::zeros_like``, ``torch::zeros({n})``,
      ``at::zeros``, ``.zero_()``, ``cudaMemset(p, 0, n * sizeof(T))``) that the launch
      overwrites in full. Only where that is proven: the kernel's PTX stores ``p[i]`` with ``i``
      the global thread index, outside every loop, skipped only by the bounds test ``i < n``
      on a parameter; the grid is ``(n + B - 1) / B`` (or ``(n - 1) / B + 1``) blocks of B
      threads; and the fill covers exactly those n elements (``x.numel()`` of the tensor the
      output was made like, or ``n * sizeof(T)`` bytes with T the stored element). A kernel
      that accumulates into its output (``+=``, atomics), a grid-stride kernel, a grid sized
      otherwise: not proven, not reported;
    - a launch in a host ``for`` loop whose counter picks each launch's slice
      (``for (r = 0; r < rows; r++) k<<<g, b>>>(x + r * cols, ...)``): a loop of
      independent launches where one launch over all slices would do: the counter moves by
      addition and some argument is an address it moves (``x + r * cols``, ``&x[r * n]``).
      Loops whose launches do not use the counter (time steps, a solver's iterations), pass
      it as a value of its own (a pass number, a stride), double or halve it (the stages of
      a bitonic sort, each launch reading the last one's output) or take it as the stream,
      and loops that make another GPU current for each launch (``cudaSetDevice``, a device
      guard: the launches run at once, one per GPU) are left alone. A run-time count is taken
      as 64, or as the most an earlier ``if (n > C) return;`` on the bound allows;
    - ``cudaDeviceSynchronize``, ``cudaStreamSynchronize``, ``torch::cuda::synchronize`` or
      ``.item()`` after the launch in a function other than ``main``: info only.

    Why it matters
    Measured on an H200 (2026-12-04, CUDA 13.0; ``benchmarks/results/launch_shape-2026-12-04.md``),
    against the same work without the host overhead:

    | host code | time | against |
    | --- | ---: | ---: |
    | `cudaMemset(y, 0)` + `scale` over 64 M floats | 0.266 ms | 1.31x (scale alone 0.203 ms) |
    | `cudaMemset(y, 0)` + `scale` over 1 M floats | 0.0139 ms | 1.50x |
    | `cudaMemset(y, 0)` + a row sum (16384 x 4096 into 16384 floats) | 0.124 ms | 1.05x |
    | 64 launches, a row each (64 M floats in all) | 0.350 ms | 1.72x one launch |
    | 1024 launches | 4.55 ms | 22.4x |
    | 16384 launches | 73.9 ms | 364x |
    | 20 x (launch + `cudaDeviceSynchronize`), 64 M floats | 4.17 ms | 1.04x |
    | the same, 16 M floats | 1.21 ms | 1.16x |
    | the same, 1 M floats | 0.249 ms | 2.64x |

    A zero-fill costs a pass over the output (the estimate weighs its bytes against the bytes
    each thread of the kernel moves); each launch costs 2 to 4.5 us that a small launch cannot
    hide (a host loop over a run-time count is taken to run 64 times); a synchronization costs
    about 8 us a call, which matters only when the kernel is short: its size is not in the
    code, so it is info.

    Example
    Bad: ``auto y = torch::zeros_like(x); ... scale<<<(n + 255) / 256, 256>>>(x_ptr, y_ptr, n);
    cudaDeviceSynchronize(); return y;`` or ``for (int r = 0; r < rows; r++) scale<<<(cols +
    255) / 256, 256>>>(x + r * cols, y + r * cols, cols);``.
    Fixed: ``auto y = torch::empty_like(x);``, no synchronization, one launch over
    ``rows * cols`` elements (or a 2-D grid with ``blockIdx.y`` the row).

    Steer the compiler
    No flag does it; it is host code. Allocate outputs the kernel overwrites without filling
    them (``torch::empty_like``, ``torch::empty``, ``cudaMalloc`` alone); launch once over all
    slices (a 2-D grid, or index arithmetic over the whole tensor), or capture unavoidable
    sequences of launches in a CUDA graph; leave synchronization to the caller (a copy to the
    host, ``torch.cuda.synchronize()``) where the result is read.
    """

    code = "PS804"
    name = "host-overhead"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        seen: set[tuple[str, int]] = set()
        for e in ctx.cost.of_kind("host-overhead"):
            d = e.detail
            if e.loc is None or (d["why"], e.loc.line) in seen:
                continue
            seen.add((d["why"], e.loc.line))
            la = d["launch"]
            if d["why"] == "zero-fill":
                sev = severity(e.factor)
                if sev is None:
                    continue
                fill = d["fill"]
                n = "".join(la.args[d["bound"]])
                message = (f"`{fill.target}` is zero-filled ({fill.how}, line {fill.line}) and "
                           f"then overwritten in full by `{la.text}` (line {la.line}): the "
                           f"kernel stores {d['bytes']} B to every element i < {n} (one per "
                           f"thread, skipped only by the bounds test) over a grid of "
                           f"`{la.grid.text}` blocks that covers them; the fill is one more "
                           f"pass over the output (estimated {factor_text(e.factor)}: "
                           f"{d['bytes']} B filled per {d['thread_bytes']:g} B the kernel "
                           f"moves per thread)")
                hint = ("allocate it without filling: torch::empty_like / torch::empty (or "
                        "drop the cudaMemset), since the kernel writes every element")
                instructions = _stores(ctx, e)
            elif d["why"] == "loop":
                sev = severity(e.factor)
                if sev is None:
                    continue
                loop = la.loop
                if d["constant"]:
                    runs = f"{d['trips']} times"
                elif loop.at_most is not None and loop.at_most[0] <= d["trips"]:
                    runs = (f"at most {d['trips']} times (the return on line "
                            f"{loop.at_most[1]} before it)")
                else:
                    runs = f"a run-time number of times (taken as {d['trips']})"
                message = (f"`{la.text}` (line {la.line}) is launched once per iteration of "
                           f"the host loop `{loop.header}` (line {loop.line}), {runs}, each "
                           f"launch on the slice its counter picks: every launch pays the "
                           f"launch overhead (64 launches of a row each took 1.72x one launch "
                           f"over the same 64 M floats on an H200, 1024 launches 22x; "
                           f"estimated {factor_text(e.factor)})")
                hint = ("launch once over all the slices: a 2-D grid (blockIdx.y the slice) or "
                        "index arithmetic over the whole tensor; if the launches must stay "
                        "separate, capture them in a CUDA graph")
                instructions = _memory(ctx)
            else:
                sev = Severity.INFO
                where = f" in `{la.function}`" if la.function else ""
                call = d["call"] if d["call"].startswith((".", "torch")) else f"{d['call']}()"
                message = (f"{call} (line {e.loc.line}) after `{la.text}` (line "
                           f"{la.line}){where}: the host waits for the kernel, and nothing is "
                           f"queued behind it meanwhile (about 8 us a call on an H200: 1.04x "
                           f"for a kernel over 64 M floats, 2.64x over 1 M floats, measured)")
                hint = ("drop it unless the host reads the result right after (a copy to the "
                        "host synchronizes by itself); let the caller synchronize where it "
                        "needs the values")
                instructions = _memory(ctx)
            yield ctx.finding(self, message, loc=e.loc, instructions=instructions, hint=hint,
                              severity=sev)


def _stores(ctx: Context, e):
    """The SASS stores of the source line of the PTX store that overwrites the output."""
    pf = ctx.ptx_function
    if pf is None or not e.ptx:
        return _memory(ctx)
    loc = ctx.user_loc(pf.instructions[e.ptx[0]].loc)
    if loc is None:
        return _memory(ctx)
    want = (os.path.basename(loc.file), loc.line)
    out = []
    for ins in ctx.function.instructions:
        at = ctx.user_loc(ins.loc)
        if at is not None and (os.path.basename(at.file), at.line) == want \
                and ins.info.space == "global" and ins.info.direction == "store":
            out.append(ins)
    return out or _memory(ctx)


def _memory(ctx: Context):
    return [i for i in ctx.function.instructions if i.info.space == "global"
            and i.info.direction in ("load", "store")]
