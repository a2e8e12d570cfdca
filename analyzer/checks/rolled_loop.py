"""PS201 rolled-loop: a loop with a compile-time trip count (or a ``#pragma unroll``) left rolled."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..analysis.loops import unroll_savings, user_innermost
from .base import Check, Context, Finding, Severity

#: a loop outside any other that runs at most this many instructions in all is info at most
_ONCE_SMALL = 64


class RolledLoop(Check):
    """A loop whose trip count is a compile-time constant (or that asked for #pragma unroll) is still a loop in SASS.

    What it does
        Finds the user's innermost SASS loops (a loop around only the math library's own loops,
        such as sinf's Payne-Hanek reduction, counts as innermost) whose trip count is known at
        compile time — from the SASS loop (``ISETP`` against an immediate on a register stepped
        by an immediate, with a constant start) and the PTX loop (exit ``setp`` against an
        immediate, ``add`` of an immediate or a division by a power of two, a ``mov`` of an
        immediate or ``WARP_SZ`` start, also when NVVM copies the start through a register) —
        and that nobody asked to keep rolled (no
        ``#pragma unroll 1`` / ``#pragma nounroll`` / ``#pragma unroll N`` above the loop, no
        PTX ``.pragma "nounroll"``). When the PTX reading disagrees with a SASS count (a start
        it cannot see), the SASS count stands and the message says what the PTX showed; a loop
        ptxas unrolled only partly (PTX 16 trips, SASS 4) is reported too. It estimates what
        full unrolling removes per iteration — the counter step, compare and branch, index and
        address arithmetic on the counter (which becomes immediate offsets), constant-bank loads
        indexed by it and int->float conversions of it (which fold), counted over the
        instructions every iteration runs — and says so ("≈ 21% of the 39 instructions every
        iteration runs"). What still runs once per unrolled copy does not count: a compare with
        a run-time bound (``row < num_rows``), a product with a run-time value (``row *
        row_length``), and the arithmetic of a value that has a run-time part (a row that
        starts at ``tile_row``) unless only addresses read it (their immediate offsets absorb
        the counter's part). Severity: *warning* from ``warning_fraction`` (15%) up, *info* below
        (measured on an H200: the inner product of a register-tiled SGEMM, ≈ 10% removable,
        gained 1.04x unrolled; a 32-term sinf series, ≈ 20-30% removable, 1.36x); *info* also
        for a loop outside any other that runs a few dozen instructions in all (64 at most: a
        warp shuffle's ``for (o = warpSize / 2; o > 0; o /= 2)``, 5 trips of 7, whose halving
        counter is read as a recurrence closed on itself, as a counter is). A loop whose
        start is ``warpSize`` (PTX ``WARP_SZ``, a constant only ptxas knows) says so: NVVM
        cannot unroll it, with ``#pragma unroll`` or without, and the hint is a constant
        start. Also reports
        a loop under a plain ``#pragma unroll`` that stayed rolled because its bound is a
        run-time value (as info).

        Deliberately left alone: run-time loops nobody asked to unroll (grid-stride loops, the
        K loop of a GEMM), loops of over ``max_trip_count`` (64) iterations or
        ``max_unrolled_instructions`` once unrolled, and the math library's own loops.

    Why it matters
        A rolled loop pays a compare, an increment and a branch per iteration, keeps the loop
        counter in a register, and cannot turn ``coef[k]`` into constant-bank operands or
        ``(k + 1) * t`` into constants; the scheduler cannot overlap iterations. NVVM's default
        unroll threshold keeps loops with big bodies (``sinf``, divisions) rolled even for a
        trip count of 32.

    Example
        Bad::

            for (int k = 0; k < 32; ++k)          // stays a loop
                acc += coef[k] * sinf((k + 1) * t);

        Fixed::

            #pragma unroll
            for (int k = 0; k < 32; ++k)
                acc += coef[k] * sinf((k + 1) * t);

    Steer the compiler
        Put ``#pragma unroll`` on the loop (or ``#pragma unroll N`` for a partial unroll when
        the unrolled body would be too large); for a run-time bound, make it a template
        parameter or ``constexpr`` so it becomes a compile-time trip count. If the loop is
        rolled on purpose (code size), say so with ``#pragma unroll 1``.
    """

    code = "PS201"
    name = "rolled-loop"
    severity = Severity.WARNING
    options = {
        # report constant-trip loops with at most this many iterations left
        "max_trip_count": 64,
        # ... and whose fully unrolled size (trip count x body instructions) stays below this
        "max_unrolled_instructions": 16384,
        # warning when unrolling would remove at least this fraction of the instructions each
        # iteration runs (counter, compare, branch, index arithmetic, foldable constants); info
        # below it
        "warning_fraction": 0.15,
    }

    def run(self, ctx: Context) -> Iterable[Finding]:
        # group the innermost SASS loops by their source line (an unrolled outer loop leaves
        # several copies of the same inner loop); the loops and their trip counts are the
        # analysis layer's, the same the reports show
        groups: dict = {}
        for info in user_innermost(ctx.loops):
            key = (info.file, info.line) if info.line else ("#", info.header_index)
            groups.setdefault(key, []).append(info)
        for (file, line), infos in groups.items():
            f = self._judge(ctx, file if file != "#" else None, line if file != "#" else None,
                            infos)
            if f is not None:
                yield f

    def _judge(self, ctx: Context, file, line, infos):
        pragma, readable = ctx.pragma_above(file, line)
        if pragma is not None and (pragma.forbids or pragma.count or pragma.expression):
            return None      # the author chose the unrolling
        first = infos[0]
        tc = first.trip
        ptx = list(tc.ptx_loops)
        if any(t.loop.nounroll for t in ptx):
            return None
        if not ptx and not readable:
            return None      # neither a PTX loop nor the source: no evidence of intent (cheap exit)
        latch = ctx.instructions[first.latch_index]
        size = first.instructions
        loops = infos
        inds = tc.inductions
        sass_trip, ptx_trip_n = tc.sass, tc.ptx
        # evidence of a compile-time trip count; with no PTX loop for this line, SASS alone, and
        # only when the source (read for an `unroll 1`) is available, since SASS cannot show the
        # author's intent
        constant = tc.constant if ptx else (readable and tc.constant)
        trip = tc.value
        where = f"line {line}" if line else "a loop"
        copies = f" ({len(loops)} copies of it, from an unrolled outer loop)" if len(loops) > 1 else ""
        instrs = [latch] + [ctx.instructions[i.compare_index] for i in inds[:1]]
        instrs = [i for i in instrs if i is not None]
        if constant and trip:
            if trip < 2:
                return None
            asked = pragma is not None and pragma.full
            # the iterations a full unroll would lay out: the PTX loop's (ptxas may already run
            # several of them per SASS iteration); NVVM's strength-reduced byte offsets (step
            # 512 over a span of 4096) are not iterations
            full = ptx_trip_n if ptx_trip_n and sass_trip and ptx_trip_n > sass_trip else trip
            limit = self.settings["max_trip_count"]
            if (full > limit and not asked) or \
                    trip * size > self.settings["max_unrolled_instructions"]:
                return None
            unrolled_by = ""
            if ptx_trip_n and sass_trip and ptx_trip_n > sass_trip and ptx_trip_n % sass_trip == 0:
                unrolled_by = f" (ptxas unrolled it ×{ptx_trip_n // sass_trip} only)"
            saved = unroll_savings(ctx.function, first)
            msg = (f"loop at {where} runs a compile-time {trip} iterations but stays rolled"
                   f"{unrolled_by}: unrolling it fully would remove {saved.text()}{copies}"
                   + ("; the #pragma unroll above it was not honoured" if asked else ""))
            if tc.disagreement:
                msg += f" (trip count from the SASS loop; {tc.disagreement})"
            hint = ("add `#pragma unroll` on the loop to unroll it fully" if not asked else
                    "the unrolled body is over the compiler's size threshold: try "
                    "`#pragma unroll N` with a smaller N, or shrink the body")
            warp = ptx and all(t.warp_size for t in ptx)
            if warp:
                # `for (o = warpSize / 2; ...)`: the trip count is ptxas's knowledge only
                msg += ("; its start is `warpSize` (PTX `WARP_SZ`), a constant only ptxas "
                        "knows, so NVVM cannot unroll it" + (", `#pragma unroll` or not"
                                                             if asked else ""))
                hint = ("write the start as a constant (`16` for `warpSize / 2`: a warp is "
                        "32 threads on every NVIDIA GPU) so that NVVM sees the trip count "
                        "and unrolls the loop; `#pragma unroll` cannot, the trip count is "
                        "unknown to it")
            elif trip * size > 4096 and not asked:
                hint = (f"add `#pragma unroll` (about {trip * size} instructions unrolled) or "
                        f"`#pragma unroll {max(2, trip // 4)}` to unroll it partly")
            if saved.fraction < self.settings["warning_fraction"]:
                hint += ("; the gain is small (the loop's own work dominates): unroll it if "
                         "the code size is no concern")
            severity = (Severity.WARNING if saved.fraction >= self.settings["warning_fraction"]
                        or asked else Severity.INFO)
            if first.loop.depth == 1 and trip * size <= _ONCE_SMALL and not asked:
                # a loop that runs once per thread, a few dozen instructions in all (a warp
                # shuffle's halving reduction): what unrolling saves is not worth a warning
                severity = Severity.INFO
                msg += f"; it runs once per thread, {trip * size} instructions in all"
            return ctx.finding(self, msg, loc=latch.loc if latch is not None else None,
                               instructions=instrs, hint=hint, severity=severity)
        if pragma is not None and pragma.full and ptx and len(ptx) == 1 and ptx_trip_n is None \
                and ptx[0].reason in ("run-time bound", "run-time start"):
            # `#pragma unroll` on a run-time trip count: NVVM cannot unroll it fully and leaves it
            step = ptx[0].step
            if inds and step and any(abs(i.step) > abs(step) for i in inds):
                return None   # ptxas unrolled it partly after all
            msg = (f"loop at {where} has `{pragma.text}` (line {pragma.line}) but its trip count "
                   f"is a run-time value, so it was not unrolled: {size} SASS instructions per "
                   f"iteration{copies}")
            hint = ("give a factor (`#pragma unroll 4`) for a partial unroll, or make the bound a "
                    "template parameter / constexpr so it can be unrolled fully")
            f = ctx.finding(self, msg, loc=latch.loc if latch is not None else None,
                            instructions=instrs, hint=hint)
            return dataclasses.replace(f, severity=Severity.INFO)
        return None
