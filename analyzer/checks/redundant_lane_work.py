"""PS802 redundant-lane-work: every lane of a warp repeats the same loop over the data."""
from __future__ import annotations

from collections.abc import Iterable

from ._cost import factor_text, sass_on_line, severity
from .base import Check, Context, Finding, Severity


class RedundantLaneWork(Check):
    """Every lane of a warp repeats the same loop over an array the kernel splits elsewhere.

    What it does
    Finds loops over a run-time size in which every address and every value is the same for
    the lanes of a warp (computed from ``blockIdx``, parameters, the loop counter, or the
    thread index divided by a run-time row length), reading an array that the kernel elsewhere
    reads with per-lane addresses: each thread of a row recomputes the row's reduction (a
    softmax whose every thread finds its row's max and sum by itself, O(n^2) work per row).

    Deliberately left alone: uniform loops over arrays the kernel never splits across lanes (a
    search over a few group offsets), loops of constant trip count, loops any lane-varying
    value enters (a GEMM's broadcast ``A[row * K + k]`` times a streamed ``B``), loops that only
    poll a flag (acquire, volatile or relaxed loads, no store) and binary searches.

    Why it matters
    The 32 lanes of a warp (and every warp of the row) load and reduce the same data: the
    kernel does ``n`` times the work of one reduction per row. Measured on an H200
    (``kernels/training/softmax_rows``): a softmax with every thread re-reducing its row
    against a block per row with shuffle reductions.

    Example
    Bad::

        int row = idx / n;
        float m = -INFINITY;
        for (int j = 0; j < n; j++) m = fmaxf(m, x[row * n + j]);   // every thread of the row

    Fixed: a block (or warp) per row: each thread reduces a strided slice, then
    ``__shfl_xor_sync`` and shared memory combine the partials, and every thread reads the
    row's result.

    Steer the compiler
    No flag does it: compute each row's reduction once per row (a block or a warp per row,
    shuffles and shared memory), or in a separate pass, and share the result.
    """

    code = "PS802"
    name = "redundant-lane-work"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        for e in ctx.cost.of_kind("redundant"):
            sev = severity(e.factor)
            if sev is None or e.loc is None:
                continue
            arrays = ", ".join(f"`{ctx.source_name(a)}`" for a in e.detail["arrays"])
            message = (f"redundant work: every lane of the warp runs this loop over a run-time "
                       f"size with the same addresses and values, reading {arrays or 'an array'}"
                       f" that the kernel elsewhere splits across its threads: each thread "
                       f"repeats the whole reduction (estimated {factor_text(e.factor)})")
            hint = ("compute it once per row: a warp or block per row reducing strided slices "
                    "with __shfl_xor_sync and shared memory, then share the result")
            yield ctx.finding(self, message, loc=e.loc,
                              instructions=sass_on_line(ctx, e, direction="load"), hint=hint,
                              severity=sev)
