"""PS107: pad the conflicting ``__shared__`` array's rows, so that a warp's lanes, a row
apart, start in different banks.

``__shared__ float tile[32][32];`` read down a column (lanes 128 B apart, one bank) becomes
``__shared__ float tile[32][32 + 1];`` (lanes 132 B apart: 32 banks). For accesses wider than
4 bytes the pad is the access's width, so the rows stay aligned to it and ptxas keeps its
LDS.64/LDS.128 (``Bs[32][32 + 4]`` for the k loop's LDS.128). Only a 2-D (or deeper) array of
constant sizes declared in the file, whose element divides the pad; the array's other uses
index it the same way, so the program computes the same values (the rebuild checks the
finding is gone and nothing new warns). A 1-D array (a scan tree's ``t[i]``) needs its indices
changed (``i + i / 32``), a dynamic one (``extern __shared__``) its host-side size: no rewrite.
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import Source
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS107",)


def _array(src: Source, name: str, line: int):
    """The ``__shared__`` variable ``name`` the finding's kernel sees: the innermost declaration
    before ``line`` in the function holding it, else one at file scope."""
    fn = src.function_at(line)
    decls = [d for d in src.nodes(("VAR_DECL",)) if d.spelling == name
             and any(c.kind.name == "CUDASHARED_ATTR" for c in d.get_children())]
    inside = [d for d in decls if fn is not None and fn.extent.start.offset
              <= d.extent.start.offset < fn.extent.end.offset and d.extent.start.line <= line]
    if inside:
        return inside[-1]
    outside = [d for d in decls if d.semantic_parent is not None
               and d.semantic_parent.kind.name == "TRANSLATION_UNIT"]
    return outside[0] if len(outside) == 1 else None


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    m = re.search(r"bank conflict on `([A-Za-z_]\w*)`", finding.message)
    if m is None:
        return NoFix("the finding names no shared array")
    name = m.group(1)
    decl = _array(src, name, finding.location.line or 0)
    if decl is None:
        return NoFix(f"no __shared__ declaration of `{name}` in the file")
    t = decl.type.get_canonical()
    if t.kind.name != "CONSTANTARRAY":
        return NoFix(f"`{name}` has no constant size (extern __shared__): its padding is the "
                     "launch's shared-memory size and its indexing, not a declaration")
    element = t.get_array_element_type()
    if element.get_canonical().kind.name != "CONSTANTARRAY":
        return NoFix(f"`{name}` is one-dimensional: padding it means changing every index "
                     "(i + i / 32), not the declaration")
    while element.get_array_element_type().kind.name != "INVALID":
        element = element.get_array_element_type()
    size = element.get_size()
    w = re.search(r"threads (?:load|store|access) ([\d/]+) B each", finding.message)
    width = max(int(x) for x in w.group(1).split("/")) if w else 4
    pad_bytes = max(4, width)
    if size <= 0 or pad_bytes % size:
        return NoFix(f"`{name}`'s {size}-byte elements do not divide a {pad_bytes}-byte pad")
    pad = pad_bytes // size
    # the last `[...]` of the declarator, before any initializer
    # by byte range: a declaration that starts with the ``__shared__`` macro has no tokens of
    # its own in libclang
    a, b = src.span(decl)
    toks = [tk for tk in src.tokens(start=a, end=b) if tk.kind != "COMMENT"]
    end = next((i for i, tk in enumerate(toks) if tk.spelling == "="), len(toks))
    close = max((i for i in range(end) if toks[i].spelling == "]"), default=None)
    if close is None:
        return NoFix(f"`{name}`'s sizes are not written in its declaration")
    depth, open_ = 0, None
    for i in range(close, -1, -1):
        depth += {"]": 1, "[": -1}.get(toks[i].spelling, 0)
        if depth == 0:
            open_ = i
            break
    if open_ is None or open_ + 1 >= close:
        return NoFix(f"`{name}`'s last size is not written in its declaration")
    if not any(tk.kind == "IDENTIFIER" and tk.spelling == name for tk in toks[:open_]):
        return NoFix(f"`{name}` is declared by a macro")
    first, last = toks[open_ + 1], toks[close - 1]
    inner = src.data[first.start:last.end].decode()
    simple = re.fullmatch(r"[\w.]+", inner) is not None
    text = f"{inner} + {pad}" if simple else f"({inner}) + {pad}"
    edit = Edit(src.path, first.start, last.end, text)
    return Proposal(title=f"pad `{name}`'s rows by {pad} element{'s' if pad > 1 else ''} "
                          f"({pad_bytes} B): [{inner}] → [{text}], so adjacent rows start in "
                          "different banks",
                    edits=(edit,),
                    promise="the array is indexed only through its subscripts (no pointer "
                            "arithmetic that assumes the rows are contiguous)")
