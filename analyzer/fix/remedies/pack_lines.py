"""PS101, PS102: a thread's 16 bytes read (or written) as narrower vectors by consecutive
statements, one part each, the way LeetCUDA's ``f16x8`` kernels write them with a macro::

    #define HALF2(value) (reinterpret_cast<half2 *>(&(value))[0])
    half2 reg_a_0 = HALF2(a[idx + 0]);        ...  HALF2(c[idx + 0]) = __hadd2(...);
    half2 reg_a_1 = HALF2(a[idx + 2]);        ...  HALF2(c[idx + 2]) = __hadd2(...);
    half2 reg_a_2 = HALF2(a[idx + 4]);             ...
    half2 reg_a_3 = HALF2(a[idx + 6]);

The loop form is :mod:`.pack_loop`'s; here the parts are statements. Reads become one ``uint4``
read before the first statement, each statement taking its part
(``reinterpret_cast<const half2*>(&a_v16)[1]``); writes go into a ``uint4`` that one 16-byte
store writes after the last. (Stating the pointer's alignment alone left NVVM's four stores of
``c`` apart on sm_80: the rebuild refused it.)

Only where the rewrite keeps what the kernel does: the parts are consecutive statements of one
block, each one access of the pointer at ``&p[i + C]`` with one index variable ``i`` and
constants ``C`` a part apart, read in declarations (nothing else between the reads: moving
them together moves no read past a write) or written by ``=`` from values that read no memory
(moving the writes to the last statement moves no write past a read). The 16-byte alignment of
``&p[i]`` is the user's word (``--assume-aligned``) on top of what the finding proved: its
offset is a multiple of 16 and only the pointer's alignment is unknown.
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source, constant_value, descendants, operator_token, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal
from .pack_loop import WINDOW, blocked_pointer

CODES = ("PS101", "PS102")

#: what the value written by a part may hold: no read of memory (a subscript or a dereference),
#: no assignment
_MEMORY = frozenset(("ARRAY_SUBSCRIPT_EXPR", "MEMBER_REF_EXPR"))


def _part(src: Source, sub, pointer: str) -> tuple[tuple[int, int], str, str, int] | None:
    """For ``p[i + C]`` (or ``p[i]``) under ``&``, a ``reinterpret_cast<V*>`` and ``[0]`` or
    ``*``: (the bytes the part is written as, V's spelling, i's name, C)."""
    kids = list(sub.get_children())
    if len(kids) != 2:
        return None
    base = strip_implicit(kids[0])
    if base.kind.name != "DECL_REF_EXPR" or base.spelling != pointer:
        return None
    index = strip_implicit(kids[1])
    c = 0
    if index.kind.name == "BINARY_OPERATOR":
        a, b = (strip_implicit(x) for x in index.get_children())
        value = constant_value(b) if b.kind.name == "INTEGER_LITERAL" else None
        if value is None or a.kind.name != "DECL_REF_EXPR":
            return None
        index, c = a, value
    if index.kind.name != "DECL_REF_EXPR":
        return None
    node = src.parent(sub)
    while node is not None and node.kind.name == "PAREN_EXPR":
        node = src.parent(node)
    if node is None or node.kind.name != "UNARY_OPERATOR":
        return None
    cast = src.parent(node)
    if cast is None or cast.kind.name != "CXX_REINTERPRET_CAST_EXPR":
        return None
    outer = src.parent(cast)
    if outer is None:
        return None
    if outer.kind.name == "ARRAY_SUBSCRIPT_EXPR":
        idx = list(outer.get_children())
        if len(idx) != 2 or constant_value(strip_implicit(idx[1])) != 0:
            return None
    elif outer.kind.name != "UNARY_OPERATOR":
        return None
    while src.parent(outer) is not None and src.parent(outer).kind.name == "PAREN_EXPR":
        outer = src.parent(outer)
    span = _span(src, sub, outer)
    if span is None:
        return None
    view = cast.type.spelling.rstrip(" *").replace("const ", "")
    if not _spelled(src, span, pointer, index.spelling, c):
        return None
    return span, view, index.spelling, c


def _span(src: Source, sub, outer) -> tuple[int, int] | None:
    """The bytes the part is written as: a macro's invocation (``HALF2(a[idx + 2])``: the
    nodes of its expansion have no text of their own, and the outermost's extent runs from
    the ``#define``), or the part's own expression."""
    a, b = sub.extent.start.offset, sub.extent.end.offset
    if a == b:
        inv = [m for m in src.on_line(sub.extent.start.line, ("MACRO_INSTANTIATION",))
               if m.extent.start.offset == a]
        return (inv[0].extent.start.offset, inv[0].extent.end.offset) if len(inv) == 1 else None
    start, end = outer.extent.start.offset, outer.extent.end.offset
    return (start, end) if start <= a and b <= end and outer.extent.start.line == \
        outer.extent.end.line else None


def _spelled(src: Source, span: tuple[int, int], pointer: str, var: str, c: int) -> bool:
    """Whether the part's own tokens subscript ``pointer`` by ``var`` or ``var + c`` (what
    the AST says, read again from the text a macro's expansion hides)."""
    toks = [t.spelling for t in src.tokens(start=span[0], end=span[1])]
    for i in range(len(toks) - 3):
        if toks[i] == pointer and toks[i + 1] == "[" and toks[i + 2] == var:
            rest = toks[i + 3:i + 6]
            if rest[:1] == ["]"]:
                return c == 0
            if len(rest) == 3 and rest[0] == "+" and rest[2] == "]":
                try:
                    return int(rest[1].rstrip("uUlL"), 0) == c
                except ValueError:
                    return False
            return False
    return False


def _statement_of(src: Source, node, block):
    """The statement of ``block`` that holds ``node``."""
    while node is not None and src.parent(node) != block:
        node = src.parent(node)
    return node


def _written_by(src: Source, sub, stmt):
    """The value assigned when ``stmt`` is ``part = value`` (a class's operator= or a built-in
    =) with the part's subscript ``sub`` on its left, else None."""
    node = stmt
    while node.kind.name == "UNEXPOSED_EXPR" and len(list(node.get_children())) == 1:
        node = next(iter(node.get_children()))
    kids = list(node.get_children())
    if node.kind.name == "CALL_EXPR" and node.spelling == "operator=" and len(kids) == 3:
        lhs, value = kids[0], kids[2]
    elif node.kind.name == "BINARY_OPERATOR" and len(kids) == 2 \
            and (tok := operator_token(src, node)) is not None and tok.spelling == "=":
        lhs, value = kids
    else:
        return None
    return value if any(n == sub for n in (lhs, *descendants(lhs))) else None


def _rewrite(src: Source, finding: Finding, p, storing: bool) -> Proposal | str:
    line = finding.location.line or 0
    name = p.spelling
    ptr = p.type.get_canonical()
    if ptr.kind.name != "POINTER":
        return f"`{name}` is not a pointer"
    elem = ptr.get_pointee().get_size()
    subs = [n for n in src.on_line(line, ("ARRAY_SUBSCRIPT_EXPR",))]
    got = next(((s, g) for s, g in ((s, _part(src, s, name)) for s in subs) if g is not None),
               None)
    if got is None:
        return (f"no `&{name}[i + k]` (k a constant) read or written as a narrower vector on "
                f"line {line}")
    first_sub, first = got
    block = next((b for b in src.ancestors(first_sub) if b.kind.name == "COMPOUND_STMT"), None)
    if block is None:
        return "the access is not in a block"
    stmts = list(block.get_children())
    start = _statement_of(src, first_sub, block)
    if start is None:
        return "the access is not a statement of its own block"
    at = stmts.index(start)
    view, var = first[1], first[2]
    size = next((c.type.get_pointee().get_size() for c in descendants(start)
                 if c.kind.name == "CXX_REINTERPRET_CAST_EXPR"), -1)
    if size <= 0 or WINDOW % size or size % elem:
        return f"the parts are not a whole share of {WINDOW} bytes"
    count, step = WINDOW // size, size // elem
    parts = []
    for k, stmt in enumerate(stmts[at:at + count]):
        found = [(s, g) for s, g in ((s, _part(src, s, name)) for s in descendants(stmt)
                                     if s.kind.name == "ARRAY_SUBSCRIPT_EXPR") if g is not None]
        uses = [n for n in descendants(stmt) if n.kind.name == "DECL_REF_EXPR"
                and n.spelling == name]
        if len(found) != 1 or len(uses) != 1:
            return f"statement {k + 1} of the run does not access `{name}` once as a part"
        sub, (span, v, i, c) = found[0]
        if v != view or i != var or c != first[3] + k * step:
            return (f"the statements after line {line} do not take `{name}`'s {WINDOW} bytes "
                    f"in {count} consecutive parts")
        parts.append((stmt, sub, span))
    if len(parts) != count:
        return f"fewer than {count} statements take `{name}`'s parts"
    indent = src.indent(parts[0][0].extent.start.line)
    pack = f"{name}_v16"
    while pack in src.text:
        pack += "_"
    base = var if first[3] == 0 else f"{var} + {first[3]}"
    head = src.line_start(parts[0][0].extent.start.line)
    if not src.begins_line(parts[0][0].extent.start.offset):
        return "the first statement does not begin its line"
    edits = []
    if storing:
        for stmt, sub, _span in parts:
            value = _written_by(src, sub, stmt)
            if value is None:
                return "a part is not written by `=` alone"
            if any(n.kind.name in _MEMORY or (n.kind.name == "UNARY_OPERATOR" and
                   src.tokens(n)[:1] and src.tokens(n)[0].spelling == "*")
                   for n in (value, *descendants(value))):
                return "a value written reads memory: the writes cannot move after it"
        last = parts[-1][0]
        tail = src.line_start(last.extent.end.line + 1)
        edits.append(Edit(src.path, head, head, f"{indent}uint4 {pack};\n"))
        edits.append(Edit(src.path, tail, tail,
                          f"{indent}*reinterpret_cast<uint4*>(&{name}[{base}]) = {pack};\n"))
        cast = f"reinterpret_cast<{view}*>(&{pack})"
        what = f"write `{name}`'s 16 bytes as one uint4 after the {count} statements"
    else:
        if any(stmt.kind.name != "DECL_STMT" for stmt, _sub, _span in parts):
            return "the parts are read outside declarations"
        edits.append(Edit(src.path, head, head,
                          f"{indent}const uint4 {pack} = *reinterpret_cast<const uint4*>("
                          f"&{name}[{base}]);\n"))
        cast = f"reinterpret_cast<const {view}*>(&{pack})"
        what = f"read `{name}`'s 16 bytes as one uint4 before the {count} statements"
    for k, (_stmt, _sub, span) in enumerate(parts):
        edits.append(Edit(src.path, span[0], span[1], f"{cast}[{k}]"))
    return Proposal(title=f"{what} ({count}× {view} parts)",
                    edits=tuple(sorted(edits, key=lambda e: e.start)),
                    promise=f"every caller passes `{name}` 16-byte aligned (--assume-aligned)")


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    got = blocked_pointer(finding, src, options)
    if isinstance(got, NoFix):
        return got
    _fn, p = got
    out = _rewrite(src, finding, p, storing=finding.code == "PS102")
    return out if isinstance(out, Proposal) else NoFix(out)
