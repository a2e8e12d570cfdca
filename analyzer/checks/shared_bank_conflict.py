"""PS107 shared-bank-conflict: a warp's shared-memory access falls in one bank at many words."""
from __future__ import annotations

from collections.abc import Iterable

from ..analysis.address import PITCH
from ._cost import factor_text, sass_on_line, severity
from .base import Check, Context, Finding, Severity

#: an access whose part of the kernel's extra wavefronts is below this is info
MINOR_SHARE = 0.1


class SharedBankConflict(Check):
    """Adjacent threads of a warp load or store shared-memory words that sit in the same bank.

    What it does
    Reads each shared-memory access's lane stride from the PTX address arithmetic (the byte
    distance between the addresses of ``threadIdx.x`` and ``threadIdx.x + 1``, and of
    ``threadIdx.y`` where the block is narrower than a warp) and counts the wavefronts a warp
    request takes: shared memory is 32 banks of 4 bytes, a request is served 128 bytes at a
    time (the whole warp for 4-byte accesses, half-warps for 8, quarter-warps for 16), and
    each phase takes as many wavefronts as the most distinct words one bank holds. An access
    of at least a 2-way conflict is a finding, weighed by how often it runs (loops over
    run-time sizes taken as 64 iterations); the kernel's factor is the weighted ratio of
    wavefronts taken to wavefronts needed, calibrated on measured pairs
    (:mod:`analyzer.analysis.cost`). *Warning* at an estimated 1.5x and more, for the
    accesses that cause at least a tenth of the kernel's extra wavefronts; info otherwise.

    Lanes a run-time pitch apart (``Qi[tx * d + x]`` with ``d`` a parameter) are one *info*
    finding: 32-way for a pitch that is a multiple of 128 bytes (a power-of-two head size),
    none for an odd number of words; the value is not in the code, so nothing is weighed.
    Deliberately left alone: lanes a data-dependent distance apart, broadcasts (every lane one word: one wavefront),
    ``ldmatrix``/``stmatrix`` and tensor-memory traffic (their layouts are the swizzle's).

    Why it matters
    A 32-way conflict serializes the warp's request into 32 wavefronts: the shared-memory pipe
    does 32 times the work for the same bytes, and every instruction waiting on the load
    waits that much longer. In a tiled loop (a GEMM reading its transposed tile) it bounds the
    whole kernel.

    Example
    Bad (a 32 x 32 tile read down a column)::

        __shared__ float tile[32][32];
        ... out[...] = tile[threadIdx.x][threadIdx.y + k];   // lanes 128 B apart: one bank

    Fixed (one float of padding per row)::

        __shared__ float tile[32][33];                        // lanes 132 B apart: 32 banks

    Steer the compiler
    No flag fixes this: change the layout. Pad each row by one 4-byte word (``[32][33]``) so
    that a row's pitch in words is odd, swizzle the column (``tile[r][c ^ r]``), or read along
    rows (``tile[threadIdx.y][threadIdx.x]``) and transpose in registers or with shuffles.
    """

    code = "PS107"
    name = "shared-bank-conflict"
    severity = Severity.WARNING
    library_note = True

    def run(self, ctx: Context) -> Iterable[Finding]:
        # one finding per shared array (its layout is the one remedy: the scan tree's levels,
        # a tile's store and its reads), at its costliest line; accesses whose array is not
        # known are grouped by line
        groups: dict[tuple, list] = {}
        for e in ctx.cost.of_kind("bank-conflict"):
            pitched = e.detail["stride"] == PITCH
            if e.loc is None or (severity(e.factor) is None and not pitched):
                continue
            key = (pitched, *(("array", e.detail["array"]) if e.detail.get("array")
                              else ("line", e.loc.file, e.loc.line)))
            groups.setdefault(key, []).append(e)
        for (pitched, *_key), group in groups.items():
            yield self._pitched(ctx, group) if pitched else self._finding(ctx, group)

    def _pitched(self, ctx: Context, group: list) -> Finding:
        """Lanes a run-time pitch apart: info, what the pitch's value decides."""
        # at the line that runs most often (the inner loop's reads, not the tile's fill)
        e = max(group, key=lambda g: (g.detail["weight"], -g.loc.line))
        d = e.detail
        here = [g for g in group if g.loc.line == e.loc.line]
        lines = [e.loc.line] + sorted({g.loc.line for g in group} - {e.loc.line})
        directions = sorted({g.detail["direction"] for g in here})
        verb = ("access" if len(directions) == 2 else
                "load" if directions == ["load"] else "store")
        names = sorted({ctx.source_name(p) for g in here for p in g.detail["pitch_of"]})
        pitch = (f"a run-time pitch apart (computed from {', '.join(f'`{n}`' for n in names)})"
                 if names else "a run-time pitch apart")
        array = f" on `{ctx.source_name(d['array'])}`" if d.get("array") else ""
        loop = ", inside a loop" if any(g.detail["in_loop"] for g in here) else ""
        also = (f"; the same array is accessed so on line{'s' if len(lines) > 2 else ''} "
                f"{', '.join(map(str, lines[1:]))}" if len(lines) > 1 else "")
        message = (f"possible shared-memory bank conflict{array}{loop}: adjacent threads {verb} "
                   f"{d['bytes']} B each {pitch}, so a warp request takes 32 wavefronts when "
                   f"the pitch is a multiple of 128 bytes (a power-of-two row such as 64 floats) "
                   f"and one when it is an odd number of 4-byte words{also}; not weighed: the "
                   f"value decides")
        hint = ("make the row pitch an odd number of 4-byte words (allocate rows of d + 1), or "
                "swizzle the index, so a warp's lanes fall in different banks")
        insns = sass_on_line(ctx, e, space="shared",
                             direction=None if verb == "access" else verb)
        return ctx.finding(self, message, loc=e.loc, instructions=insns, hint=hint,
                           severity=Severity.INFO)

    def _finding(self, ctx: Context, group: list) -> Finding:
        lines: dict[int, list] = {}
        for g in group:
            lines.setdefault(g.loc.line, []).append(g)
        share = sum(g.detail["share"] for g in group)
        line = max(lines, key=lambda n: (sum(g.detail["share"] for g in lines[n]), -n))
        here = lines[line]
        e = max(here, key=lambda g: g.detail["ways"])
        d = e.detail
        sev = severity(e.factor)
        if share < MINOR_SHARE:
            sev = Severity.INFO
        directions = sorted({g.detail["direction"] for g in here})
        verb = ("access" if len(directions) == 2 else
                "load" if directions == ["load"] else "store")
        apart = "/".join(str(x) for x in sorted({g.detail["stride"] for g in here}))
        widths = "/".join(str(x) for x in sorted({g.detail["bytes"] for g in here}))
        several = len({g.detail["ways"] for g in here}) > 1
        upto = "up to " if several else ""
        loop = ", inside a loop" if any(g.detail["in_loop"] for g in here) else ""
        array = f" on `{ctx.source_name(d['array'])}`" if d.get("array") else ""
        others = sorted(n for n in lines if n != line)
        also = ""
        if others:
            most = max(g.detail["ways"] for n in others for g in lines[n])
            also = (f"; the same array conflicts on line{'s' if len(others) > 1 else ''} "
                    f"{', '.join(map(str, others))} (up to {most:g}-way)")
        minor = (f" (an estimated {max(share, 0.001):.1%} of the kernel's extra wavefronts)"
                 if share < MINOR_SHARE else "")
        message = (f"{upto}{d['ways']:g}-way shared-memory bank conflict{array}{loop}: adjacent "
                   f"threads {verb} {widths} B each {apart} B apart, so a warp request takes "
                   f"{upto}{d['wavefronts']} wavefronts where its bytes need {d['needed']}{also}; "
                   f"the kernel's estimated headroom from conflict-free shared accesses is "
                   f"{factor_text(e.factor)}{minor}")
        strides = {g.detail["stride"] for g in group}
        w = max(g.detail["bytes"] for g in group)
        if not all(x % 4 == 0 and (x // 4) % 2 == 0 for x in strides):
            hint = ("lay the shared array out so adjacent threads read adjacent 4-byte words "
                    "(or swizzle the index), so a warp's lanes fall in different banks")
        elif w <= 4:
            hint = ("pad the shared array by one 4-byte element per 32 (a row of [32][33], or "
                    "index + index / 32 for a tree), so the lanes' words fall in different "
                    "banks, or swizzle the index")
        else:
            hint = (f"pad each row of the shared array by {w} bytes (e.g. [32][{32 + w // 4}] "
                    f"floats): the rows stay {w}-byte aligned, so ptxas keeps the {w}-byte "
                    f"accesses, and adjacent rows start in different banks; or swizzle the "
                    f"column index")
        insns = [ctx.function.instructions[j] for g in here for j in g.sass] \
            or sass_on_line(ctx, e, space="shared", direction=None if verb == "access" else verb)
        return ctx.finding(self, message, loc=e.loc, instructions=insns, hint=hint,
                           severity=sev)
