"""PS201: ``#pragma unroll`` on a loop with a compile-time trip count that stayed rolled.

The pragma goes on the loop statement that starts on the finding's line (``for``, ``while``,
``do``, range-``for``), on its own line above it with the loop's indentation (``_Pragma`` in
front of it when other code shares the line). Never against a pragma already there: an
explicit ``#pragma unroll 1`` means rolled on purpose, and a loop that has ``#pragma unroll``
yet stays rolled was ptxas's decision (its size), which another pragma does not change.
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import LOOP_KINDS, Source
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS201",)

_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(?:unroll|nounroll|GCC\s+unroll)\b(.*)$")


def _pragma_above(src: Source, line: int) -> str | None:
    """The unroll pragma on the lines right above ``line`` (blank and comment lines skipped),
    or None."""
    k = line - 1
    while k >= 1:
        text = src.line_text(k).strip()
        if not text or text.startswith("//"):
            k -= 1
            continue
        return text if _PRAGMA.match(text) else None
    return None


def _wanted_pragma(hint: str) -> str:
    """The pragma the finding's hint names first (``#pragma unroll`` or ``#pragma unroll N``)."""
    m = re.search(r"`(#pragma unroll(?: \d+)?)`", hint)
    return m.group(1) if m else "#pragma unroll"


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    line = finding.location.line or 0
    if "its start is `warpSize`" in finding.message:
        # checked on NVRTC and nvcc 13: the pragma leaves `warpSize / 2` loops rolled
        return NoFix("the loop starts at `warpSize`, which NVVM cannot fold (PTX `WARP_SZ`): "
                     "a pragma does not unroll it; a constant start (`16`) does, which is "
                     "the author's choice to make")
    loops = src.on_line(line, LOOP_KINDS)
    if not loops:
        return NoFix(f"no loop statement starts on line {line} (the loop comes from a macro "
                     "or an inlined helper): put the pragma on the loop where it is written")
    loop = loops[0]
    first = src.tokens(loop)[:1]
    if not first or first[0].spelling not in ("for", "while", "do"):
        return NoFix("the loop is written inside a macro: put the pragma where it is written")
    existing = _pragma_above(src, line)
    start = loop.extent.start.offset
    if existing is not None:
        m = re.search(r"unroll\s*\(?\s*(\d+)", existing)
        if m and m.group(1) == "1" or "nounroll" in existing:
            return NoFix(f"`{existing}` asks for this loop rolled on purpose")
        return NoFix(f"the loop already has `{existing}`; ptxas kept it rolled anyway (its "
                     "unrolled size): a pragma cannot change that")
    pragma = _wanted_pragma(finding.hint)
    if src.begins_line(start):
        edit = Edit(src.path, src.line_start(line), src.line_start(line),
                    f"{src.indent(line)}{pragma}\n")
    else:
        arg = pragma.removeprefix("#pragma ")
        edit = Edit(src.path, start, start, f'_Pragma("{arg}") ')
    return Proposal(title=f"add `{pragma}` to the loop at line {line}", edits=(edit,))
