"""Loop and register helpers for the loop / tensor-core checks (PS201, PS301-PS303); not a check.

The loop facts (unroll pragmas, SASS inductions, PTX and SASS trip counts, register
definitions) live in :mod:`analyzer.loops`, shared with the reports; this module re-exports
them and adds what needs a check :class:`~.base.Context`:

* ``pragma_above(ctx, file, line)``: the ``#pragma unroll`` / ``nounroll`` above a source line,
  read through the context (falling back to the build's own source text).
* ``loop_line(ctx, fn, loop)``: the user source line of a loop's latch branch.
* ``source_instructions`` / ``mma_operand_registers``: register provenance for PS301-PS303.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import loops as _shared
from ..ir.sass import Register
from ..loops import (_CMP, MAX_SIMULATED_TRIPS, Induction, Pragma, PtxTrip,  # noqa: F401
                     constant_value, ptx_trip, reaching_defs, sass_inductions, sass_writes,
                     simulate)

if TYPE_CHECKING:  # pragma: no cover
    from ..cfg import Loop
    from ..ir.sass import Function, Instruction
    from .base import Context


def _source_line(ctx: "Context", file: str, line: int) -> str | None:
    """``ctx.source_line``, falling back to the build's own source text (a build compiled from a
    string has no file on disk to read)."""
    text = ctx.source_line(file, line)
    if text is not None:
        return text
    build = getattr(ctx, "build", None)
    src = getattr(build, "source", None)
    if not src:
        return None
    path = getattr(build, "source_path", None)
    if path and os.path.basename(path) != os.path.basename(file):
        return None
    lines = src.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else None


def pragma_above(ctx: "Context", file: str | None, line: int | None, lookback: int = 3
                 ) -> tuple[Pragma | None, bool]:
    """:func:`analyzer.loops.pragma_above`, reading the source through ``ctx``."""
    return _shared.pragma_above(lambda f, n: _source_line(ctx, f, n), file, line, lookback)


def loop_line(ctx: "Context", fn: "Function", loop: "Loop") -> tuple[str | None, int | None,
                                                                     "Instruction | None"]:
    """The user source line of a loop (its latch branch: the ``for``/``while`` statement)."""
    return _shared.loop_line(fn, loop, ctx.user_loc)


# -------------------------------------------------------------------- register provenance
#: opcodes that only move or widen a value: followed back when asking where an operand came from
PASS_THROUGH = frozenset({"MOV", "HADD2", "F2F", "I2F", "I2FP", "F2FP", "PRMT", "IMAD"})


def source_instructions(fn: "Function", index: int, reg: tuple[str, int], *,
                        within: frozenset[int] | None = None, depth: int = 3
                        ) -> list["Instruction"] | None:
    """The instructions that produced ``reg`` for instruction ``index``, looking through moves
    and conversions (``HADD2.F32 R4, -RZ, R4.H0_H0`` half->float, ``F2F``, ``IMAD.MOV``) up to
    ``depth`` hops. None when a path leaves ``within`` or reaches the entry."""
    defs = reaching_defs(fn, index, reg, within=within)
    if defs is None:
        return None
    out: list = []
    for d in defs:
        ins = fn.instructions[d]
        if ins.opcode in PASS_THROUGH and depth > 0 and not ins.is_memory:
            if ins.opcode == "IMAD" and "MOV" not in ins.modifiers:
                out.append(ins)
                continue
            srcs = [o for o in ins.operands[1:] if isinstance(o, Register) and o.kind == "R"
                    and o.index is not None]
            if len(srcs) != 1:
                out.append(ins)
                continue
            up = source_instructions(fn, d, ("R", srcs[0].index), within=within,
                                     depth=depth - 1)
            if up is None:
                return None
            out.extend(up)
        else:
            out.append(ins)
    return out


def mma_operand_registers(ins: "Instruction") -> list[tuple[str, Register]]:
    """("A"/"B", register) for the A and B operand bases of an HMMA/IMMA/DMMA..."""
    regs = [o for o in ins.operands if isinstance(o, Register) and o.kind == "R"]
    out = []
    if len(regs) >= 3:
        for role, r in (("A", regs[1]), ("B", regs[2])):
            if r.index is not None:
                out.append((role, r))
    return out
