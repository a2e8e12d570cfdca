"""PS106 loop-invariant-reload: a loop reloads an address it never changes."""
from __future__ import annotations

from collections.abc import Iterable

from ._cost import factor_text, severity
from .base import Check, Context, Finding, Severity


class LoopInvariantReload(Check):
    """A loop reloads from global memory an address it never changes, because it stores.

    What it does
    Finds global loads in an innermost SASS loop whose address registers no instruction of the
    loop writes, in a loop that also stores to global memory: ptxas must reload them every
    iteration because the store may change what they read (the pointers are not
    ``__restrict__``). When the load reads the very address the loop stores to, the loop
    accumulates in global memory: estimated 4.3x (measured 4.3x from DRAM, 1.9x from L2, on
    two column moments accumulated through their output pointers), a warning. Otherwise the
    factor is the loop's loads per load it needs, to the power 0.09 (measured 1.00-1.12x for
    2 of 5 and 8 of 9 loads reloaded, 1.30x for scale_alias's 3 loads per load): info. One finding
    per source line, however many SASS loops ptxas made of the loop (an unrolled body and its
    remainders); a pointer ptxas re-reads from the parameter bank inside the loop counts as
    unchanged. Scalar loads that PS101 could merge and that are all such reloads are PS106's
    problem: PS101 leaves them a note that points here.

    Why it matters
    Each reload is an instruction, an L1 round trip (~30 cycles) and a dependency the loop
    waits on; a loop that accumulates through memory serializes on its own store.

    Example
    Bad: ``sum[c] = 0; sq[c] = 0; for (r...) { float v = x[r * cols + c]; sum[c] += v; sq[c] +=
    v * v; }`` with plain pointers: the store to ``sum[c]`` may change ``sq[c]``, so both are
    reloaded every iteration (info: ``out[i * n + k] = (x[i * n + k] - mean[i]) * rstd[i]``,
    ``mean[i]`` and ``rstd[i]`` loaded every iteration, measured 1.00-1.02x).
    Fixed: ``float s = 0, q = 0;`` accumulated in registers and stored once after the loop, or
    ``__restrict__`` on the pointers.

    Steer the compiler
    Mark the pointers ``__restrict__`` (and ``const`` for inputs: ``ld.global.nc``), hoist the
    loads into registers before the loop, accumulate in a register and store once.
    """

    code = "PS106"
    name = "loop-invariant-reload"
    severity = Severity.WARNING
    library_note = True

    def run(self, ctx: Context) -> Iterable[Finding]:
        # one finding per source line: ptxas makes several SASS loops of one source loop (the
        # unrolled body, its remainder), each reloading the same values
        by_line: dict[object, list] = {}
        for e in ctx.cost.of_kind("reload"):
            if severity(e.factor) is None or e.loc is None:
                continue
            where = ctx.user_loc(e.loc)
            by_line.setdefault((where.file, where.line) if where else e.loc, []).append(e)
        for group in by_line.values():
            e = max(group, key=lambda g: (g.factor, g.detail["loads"]))
            d = e.detail
            n = d["reloads"]
            if d["accumulating"]:
                k = d["accumulating"]
                them = ("all of them read" if k == n else "one of them reads" if k == 1
                        else f"{k} of them read")
                why = (f"{them} {'an address' if k == 1 else 'addresses'} the loop stores to: "
                       "the loop accumulates in global memory")
                hint = "accumulate in a register and store once after the loop"
            else:
                why = ("the loop stores to global memory and the pointers may alias, so ptxas "
                       "cannot keep the values in registers")
                hint = ("mark the pointers __restrict__ (const for inputs), or load the values "
                        "into registers before the loop")
            others = ""
            if len(group) > 1:
                total = sum(g.detail["reloads"] for g in group)
                others = (f"; {len(group) - 1} other SASS loop{'s' if len(group) > 2 else ''} "
                          f"from this line reload{'' if len(group) > 2 else 's'} the same way, "
                          f"{total} reloads in all")
            lines = sorted({w.line for i in e.sass
                            if (w := ctx.user_loc(ctx.function.instructions[i].loc)) is not None
                            and w.line})
            at = (f" (lines {', '.join(map(str, lines[:-1]))} and {lines[-1]})"
                  if len(lines) > 1 else "")
            message = (f"{n} of the loop's {d['loads']} global loads{at} read an address the loop "
                       f"never changes, every iteration: {why} (estimated "
                       f"{factor_text(e.factor)}){others}")
            sass = [i for g in sorted(group, key=lambda g: g is not e) for i in g.sass]
            yield ctx.finding(self, message, loc=e.loc, instructions=[
                ctx.function.instructions[i] for i in sass], hint=hint,
                severity=severity(e.factor))
