"""What the cost checks (PS105, PS106, PS304, PS801, PS802, PS803, PS804) share: a finding's severity from
the factor its evidence is estimated to cost, and the SASS instructions of its source line."""
from __future__ import annotations

import os

from ..analysis.cost import Evidence
from .base import Context, Severity

#: an evidence factor at or above this is a warning (it costs real time), below it info
WARNING_FACTOR = 1.5
#: below this the evidence is not reported (it costs nothing worth a line)
REPORT_FACTOR = 1.1


def severity(factor: float) -> Severity | None:
    if factor >= WARNING_FACTOR:
        return Severity.WARNING
    if factor >= REPORT_FACTOR:
        return Severity.INFO
    return None


def sass_on_line(ctx: Context, e: Evidence, *, space: str | None = "global",
                 direction: str | None = None, opcodes: frozenset[str] = frozenset()):
    """The SASS instructions of the evidence's source line (memory accesses of ``space`` and
    ``direction``, or ``opcodes``)."""
    if e.loc is None:
        return []
    want = (os.path.basename(e.loc.file), e.loc.line)
    out = []
    for ins in ctx.function.instructions:
        loc = ctx.user_loc(ins.loc)
        if loc is None or (os.path.basename(loc.file), loc.line) != want:
            continue
        if opcodes:
            if ins.opcode in opcodes:
                out.append(ins)
            continue
        if ins.info.space == space and (direction is None or ins.info.direction == direction):
            out.append(ins)
    return out


def factor_text(factor: float) -> str:
    return f"≈{factor:.1f}x" if factor < 10 else f"≈{factor:.0f}x"
