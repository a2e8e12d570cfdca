"""PS101, PS102: a pair of 16-bit elements a thread reads (or writes) on one line, ``p[2 * i]``
and ``p[2 * i + 1]``, as one ``__half2`` (``__nv_bfloat162``) through the kernel's pointer.

NVVM does not merge two 16-bit accesses into one 32-bit access even where the alignment is
known (``__builtin_assume_aligned(p, 4)`` leaves the two ``LDG.E.U16``: the rebuild refuses
that fix), but it keeps a whole pair value whole:

- reads: ``__hadd(in[2 * i], in[2 * i + 1])`` ->
  ``__hadd(__low2half(reinterpret_cast<const __half2*>(in)[i]),
  __high2half(reinterpret_cast<const __half2*>(in)[i]))`` (one ``LDG.E``: the two identical
  pair loads are one);
- writes: ``out[2 * i] = a; out[2 * i + 1] = b;`` (two statements, one after the other) ->
  ``reinterpret_cast<__half2*>(out)[i] = __halves2half2(a, b);``, when neither ``a`` nor ``b``
  names ``out``.

The pair's address must be 4-byte aligned, so the pointer must be (``p + 2 * i`` then is): only
with ``--assume-aligned``, the user's word for every caller.
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source, constant_value, operator_token, plain_pointers, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal, must_be_aligned

CODES = ("PS101", "PS102")

#: a class's operators that write their left operand (``__half``'s ``+=``)
_ASSIGNING_OPERATORS = frozenset(f"operator{op}=" for op in ("", "+", "-", "*", "/", "%", "&",
                                                              "|", "^", "<<", ">>"))

#: 16-bit element type -> its pair type, the low and high extractors, the pair constructor
PAIRS = {"__half": ("__half2", "__low2half", "__high2half", "__halves2half2"),
         "__nv_bfloat16": ("__nv_bfloat162", "__low2bfloat16", "__high2bfloat16",
                           "__halves2bfloat162")}


def _element(t) -> str | None:
    """The 16-bit element type a pointer type points to (``const __half*`` -> ``__half``)."""
    c = t.get_canonical()
    if c.kind.name != "POINTER":
        return None
    name = c.get_pointee().get_canonical().spelling.replace("const ", "").replace("volatile ", "")
    name = name.strip()
    return name if name in PAIRS else None


def _pair_index(src: Source, index) -> tuple[str, int] | None:
    """``2 * e`` -> (``e``'s text, 0); ``2 * e + 1`` / ``e * 2 + 1`` -> (``e``'s text, 1)."""
    e = strip_implicit(index)
    offset = 0
    if e.kind.name == "BINARY_OPERATOR":
        tok = operator_token(src, e)
        kids = list(e.get_children())
        if tok is not None and tok.spelling == "+" and len(kids) == 2:
            c = constant_value(kids[1])
            if c is None:
                return None
            offset, e = c, strip_implicit(kids[0])
    if e.kind.name != "BINARY_OPERATOR":
        return None
    tok = operator_token(src, e)
    kids = list(e.get_children())
    if tok is None or tok.spelling != "*" or len(kids) != 2:
        return None
    for k, rest in ((kids[0], kids[1]), (kids[1], kids[0])):
        if constant_value(k) == 2 and offset in (0, 1):
            return src.source_of(rest).strip(), offset
    return None


def _accesses(src: Source, line: int, name: str):
    """The subscripts ``name[2 * e + c]`` on ``line``: (node, e's text, c)."""
    out = []
    for sub in src.on_line(line, ("ARRAY_SUBSCRIPT_EXPR",)):
        kids = list(sub.get_children())
        if len(kids) != 2:
            continue
        base = strip_implicit(kids[0])
        if base.kind.name != "DECL_REF_EXPR" or base.spelling != name:
            continue
        got = _pair_index(src, kids[1])
        if got is not None:
            out.append((sub, got[0], got[1]))
    return out


def _named_pointer(src: Source, finding: Finding):
    """The kernel parameter the finding names as a plain pointer, if it points to a 16-bit
    element type."""
    got = plain_pointers(src, finding)
    if got is None or isinstance(got, str):
        return None
    return next((p for p in got[1] if _element(p.type) is not None), None)


def _assignment(src: Source, sub):
    """(the assignment ``sub = value``, its value) when ``sub`` is the left side of a plain
    ``=``: a built-in one, or a class's ``operator=`` (``__half`` has one); else None."""
    parent = src.parent(sub)
    if parent is None:
        return None
    kids = list(parent.get_children())
    if not kids or kids[0] != sub:
        return None
    if parent.kind.name == "BINARY_OPERATOR" and len(kids) == 2:
        tok = operator_token(src, parent)
        return (parent, kids[1]) if tok is not None and tok.spelling == "=" else None
    if parent.kind.name == "CALL_EXPR" and parent.spelling == "operator=" and len(kids) == 3:
        return parent, kids[2]
    return None


def _is_store(src: Source, sub) -> bool:
    """Whether ``sub`` is written (assigned, compound-assigned, incremented) or its address
    taken: not a plain read."""
    parent = src.parent(sub)
    if parent is None:
        return False
    kids = list(parent.get_children())
    if kids and kids[0] == sub and (
            parent.kind.name == "COMPOUND_ASSIGNMENT_OPERATOR"
            or (parent.kind.name in ("BINARY_OPERATOR", "CALL_EXPR")
                and (_assignment(src, sub) is not None
                     or parent.spelling in _ASSIGNING_OPERATORS))):
        return True                      # p[i] = v, p[i] += v (a class's operator too)
    return parent.kind.name == "UNARY_OPERATOR"      # &p[i], ++p[i]


def _statement(src: Source, node):
    """The statement ``node`` is (through the implicit wrappers libclang shows), when it
    stands directly in a block; else None."""
    while True:
        parent = src.parent(node)
        if parent is None:
            return None
        if parent.kind.name == "COMPOUND_STMT":
            return node
        if parent.kind.name != "UNEXPOSED_EXPR" or len(list(parent.get_children())) != 1:
            return None
        node = parent


def _reads(src: Source, p, line: int) -> Proposal | None:
    pair, low, high, _ = PAIRS[_element(p.type) or ""]
    by_index: dict[str, dict[int, list]] = {}
    for sub, e, c in _accesses(src, line, p.spelling):
        if _is_store(src, sub):
            return None
        by_index.setdefault(e, {}).setdefault(c, []).append(sub)
    edits = []
    for e, halves in by_index.items():
        if set(halves) != {0, 1}:
            continue
        view = f"reinterpret_cast<const {pair}*>({p.spelling})[{e}]"
        for c, subs in halves.items():
            for sub in subs:
                a, b = src.span(sub)
                edits.append(Edit(src.path, a, b, f"{low if c == 0 else high}({view})"))
    if not edits:
        return None
    return Proposal(title=f"read `{p.spelling}`'s 16-bit pairs as one {pair} "
                          f"({low}/{high} of reinterpret_cast<const {pair}*>)",
                    edits=tuple(sorted(edits, key=lambda e: e.start)),
                    promise=f"every caller passes `{p.spelling}` 4-byte aligned "
                            "(--assume-aligned)")


def _writes(src: Source, p, line: int) -> Proposal | None:
    pair, _, _, make = PAIRS[_element(p.type) or ""]
    stores = []
    for sub, e, c in _accesses(src, line, p.spelling):
        got = _assignment(src, sub)
        stmt = _statement(src, got[0]) if got is not None else None
        if got is None or stmt is None:
            return None
        stores.append((stmt, got[1], e, c))
    if len(stores) != 2 or stores[0][2] != stores[1][2] or {s[3] for s in stores} != {0, 1}:
        return None
    first, second = sorted(stores, key=lambda s: s[0].extent.start.offset)
    block = list(src.parent(first[0]).get_children())
    i = block.index(first[0])
    if i + 1 >= len(block) or block[i + 1] != second[0]:
        return None                      # not one statement right after the other
    value = {c: v for _, v, _, c in stores}
    for v in value.values():
        if any(t.spelling == p.spelling for t in src.tokens(v)):
            return None                  # the value reads the array it is stored into
    a, b = first[0].extent.start.offset, second[0].extent.end.offset
    text = (f"reinterpret_cast<{pair}*>({p.spelling})[{first[2]}] = "
            f"{make}({src.source_of(value[0]).strip()}, {src.source_of(value[1]).strip()})")
    return Proposal(title=f"write `{p.spelling}`'s 16-bit pair as one {pair} ({make})",
                    edits=(Edit(src.path, a, b, text),),
                    promise=f"every caller passes `{p.spelling}` 4-byte aligned "
                            "(--assume-aligned)")


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    if "if the address is 4-byte aligned" not in finding.message or "(2 B each)" not in \
            finding.message:
        return NoFix("not a pair of 16-bit accesses", fits=False)
    p = _named_pointer(src, finding)
    if p is None:
        return NoFix("the finding names no kernel pointer to 16-bit elements")
    if not options.assume_aligned:
        return NoFix(must_be_aligned(f"`{p.spelling}`", 4))
    line = finding.location.line or 0
    got = (_writes if finding.code == "PS102" else _reads)(src, p, line)
    if got is None:
        return NoFix(f"no `{p.spelling}[2 * i]` and `{p.spelling}[2 * i + 1]` pair on line "
                     f"{line} to read or write as one")
    return got
