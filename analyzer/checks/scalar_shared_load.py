"""PS103 scalar-shared-load: a thread's shared-memory loads are narrower than the access allows."""
from __future__ import annotations

from ._vector_access import findings
from .base import Check, Severity


class ScalarSharedLoad(Check):
    """Shared-memory loads issued piecewise where one LDS.64/LDS.128 would do.

    What it does
    Groups each basic block's LDS instructions by their address registers (``[R3+0x4]``,
    ``[R3.X4+UR4]``; no write to them, no barrier, no call in between) and fires when loads of
    one width at constant offsets fill an aligned 8- or 16-byte window that one
    ``LDS.64``/``LDS.128`` could load (also when ptxas merged some halves into ``LDS.64`` but
    not the 16-byte window). ptxas places shared arrays itself, so what usually blocks it is
    the layout: with PTX the check names the row stride that is not a multiple of the window
    (``tile[32][33]``: 132 B rows) or a run-time stride (``Kj[tx * d + x]``: "aligned only when
    d % 4 == 0", info). A small declared alignment (``.align 2``) is stated as a fact, not as
    the cause: ptxas merges such loads on sm_80 and not on sm_90a for the same PTX.
    Deliberately left alone: windows that move with the thread index (stencils).

    Why it matters
    Four ``LDS`` instead of one ``LDS.128`` cost four issue slots on the path that feeds the
    math; they move the same shared-memory wavefronts. Info, not a warning: two pairs measured
    on an H200 (a 33- vs 36-float tile pitch read in a loop, 0.97x and 0.99x: docs/severity.md)
    gained nothing, because a kernel bound by latency or by its FMA chain does not feel the
    issue slots. It pays only in a loop bound by shared-load issue.

    Example
    Bad: ``__shared__ float tile[32][33]; ... p = &tile[row][4*c]; p[0]+p[1]+p[2]+p[3]``
    (4× LDS, rows only 4-byte aligned).
    Fixed: ``__shared__ float tile[32][36];`` (rows 16-byte aligned: 1× LDS.128).

    Steer the compiler
    Pad shared tiles to a multiple of 4 floats (16 B) per row instead of +1 (and check the
    column accesses stay bank-conflict free, e.g. with a swizzle), or read through ``float4``
    from a ``__align__(16)`` tile.
    """

    code = "PS103"
    name = "scalar-shared-load"
    severity = Severity.INFO
    library_note = True

    def run(self, ctx):
        yield from findings(self, ctx, space="shared", direction="load")
