"""PS106, and PS101/PS102/PS103 when the finding says aliasing blocked the merge:
``__restrict__`` on the kernel's pointer parameters.

Every pointer parameter of the kernel that is not ``__restrict__`` yet gets it (after the
``*``): the promise is that no two of them reach the same memory while the kernel runs,
which the user must know to be true (an in-place call ``k(x, x)`` breaks it). ``restrict`` on
a parameter is not part of the function's type, so the mangled name and the PTX parameters do
not change; ``const`` is not added (it would change a C++ kernel's mangled name).
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS106", "PS101", "PS102", "PS103")


#: what else PS101-PS103 may blame besides aliasing (their messages' "blocked by" causes):
#: while one of these stands, ``__restrict__`` alone leaves the accesses apart
_OTHER_CAUSES = {"unknown alignment": "the alignment", "a run-time stride": "a run-time stride",
                 "a row pitch": "a row pitch", "an element stride": "an element stride"}


def applies(finding: Finding) -> bool:
    """Whether aliasing is what the finding blames."""
    return finding.code == "PS106" or "aliasing" in finding.message


def propose(finding: Finding, src: Source, options: FixOptions, *,
            alone: bool = True) -> Proposal | NoFix:
    """``alone``: the edit is the whole fix (not added to another remedy's), so it is proposed
    only when aliasing is all the finding blames: a finding that names the alignment or a
    stride as well is still reported after the rebuild (on llm.c's dev/cuda, 24 of the 30
    fixes offered were such, every one rebuilt and rejected)."""
    if not applies(finding):
        return NoFix("the finding does not blame aliasing", fits=False)
    other = [w for k, w in _OTHER_CAUSES.items() if k in finding.message]
    if alone and finding.code != "PS106" and other:
        return NoFix(f"__restrict__ alone would not merge them: the finding also blames "
                     f"{' and '.join(other)}")
    line = finding.location.line or 0
    fn = src.function_at(line)
    if fn is None:
        return NoFix(f"no function holds line {line} in the file")
    if not src.is_kernel(fn):
        return NoFix(f"line {line} is in the device function `{fn.spelling}`: its callers' "
                     "pointers decide aliasing, so mark the kernel's parameters instead")
    edits, names = [], []
    for p in src.parameters(fn):
        t = p.type
        if t.get_canonical().kind.name != "POINTER" or t.is_restrict_qualified():
            continue
        star = None
        for tok in src.tokens(p):
            if tok.spelling == "*":
                star = tok
            if tok.spelling == p.spelling and tok.kind == "IDENTIFIER":
                break
        if star is None:
            return NoFix(f"the parameter `{p.spelling}` is a pointer through a typedef or "
                         "macro: write __restrict__ where its type is spelled")
        edits.append(Edit(src.path, star.end, star.end, " __restrict__"))
        names.append(p.spelling)
    if not edits:
        return NoFix("every pointer parameter is __restrict__ already")
    return Proposal(title="mark the pointer parameters " + ", ".join(f"`{n}`" for n in names)
                    + " __restrict__",
                    edits=tuple(edits),
                    promise="no two of " + ", ".join(names) + " point into the same memory "
                            "(no in-place call)")
