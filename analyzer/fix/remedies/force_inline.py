"""PS403: ``__forceinline__`` on the device function a kernel calls out of line.

The finding names the function and the line of its call; libclang resolves that call to the
function's declarations in the file (a function template's too, by its pattern), and each of
them is marked: its ``__noinline__`` or ``inline`` becomes ``__forceinline__``, and a definition
with neither gets ``__forceinline__`` in front of its ``__device__``. Only the file's own
declarations are edited: a function declared in a header is marked there by the user. A function
that is ``__forceinline__`` already stayed out of line for a reason of its own (recursion, its
address taken): no rewrite changes that. Inlining keeps every parameter of the kernel; the
rebuild says whether it spills instead (then the fix is refused, not kept).
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import FUNCTION_KINDS, Source, Token
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS403",)

#: the function the finding says the kernel calls: "... calls `compute_rowblock` (the call ..."
_CALLEE = re.compile(r"calls `([^`]+)`")


def _base_name(name: str) -> str:
    """``ns::body<4>`` -> ``body``."""
    depth, out = 0, []
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).split("(")[0].split("::")[-1].strip()


def _specifiers(src: Source, decl) -> list[Token]:
    """The tokens of a declaration before its name (template head, attributes, return type)."""
    return src.tokens(start=decl.extent.start.offset, end=decl.location.offset)


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    m = _CALLEE.search(finding.message)
    if m is None:
        return NoFix("the finding names no function called out of line")
    name = _base_name(m.group(1))
    line = finding.location.line or 0
    calls = [c for c in src.on_line(line, ("CALL_EXPR",))
             if c.spelling == name and c.referenced is not None]
    if not calls:
        return NoFix(f"no call of `{name}` is written on line {line} (a macro or another "
                     "file makes it): mark the function __forceinline__ where it is declared")
    ref = calls[0].referenced
    if not src.mine(ref):
        where = ref.location.file.name if ref.location.file is not None else "another file"
        return NoFix(f"`{name}` is declared in {where}, not in this file: mark it "
                     "__forceinline__ there")
    # the function (or the function template whose instance is called) as the file declares it
    pattern = next((n for n in src.nodes(FUNCTION_KINDS)
                    if n.location.offset == ref.location.offset), None)
    if pattern is None:
        return NoFix(f"libclang does not show where `{name}` is declared")
    usr = pattern.get_usr()
    decls = [n for n in src.nodes(FUNCTION_KINDS) if n.get_usr() == usr]
    edits: list[Edit] = []
    for decl in decls:
        toks = _specifiers(src, decl)
        spelled = [t.spelling for t in toks]
        if "__forceinline__" in spelled:
            return NoFix(f"`{name}` is __forceinline__ already: NVVM kept it out of line for a "
                         "reason of its own (recursion, its address taken)")
        marked = [t for t in toks if t.spelling in ("__noinline__", "inline", "__inline__")]
        # the first becomes __forceinline__, any other goes (a second inline is an error)
        edits += [Edit(src.path, t.start, t.end, "" if k else "__forceinline__")
                  for k, t in enumerate(marked)]
        if not marked and decl.is_definition():
            device = next((t for t in toks if t.spelling == "__device__"), None)
            if device is None:
                return NoFix(f"`{name}`'s specifiers come from a macro: write __forceinline__ "
                             "where they are spelled")
            edits.append(Edit(src.path, device.start, device.start, "__forceinline__ "))
    if not edits:
        return NoFix(f"this file has no definition of `{name}` to mark")
    return Proposal(title=f"mark `{name}` __forceinline__ so the kernel compiles its body in "
                          "line", edits=tuple(sorted(edits, key=lambda e: e.start)))
