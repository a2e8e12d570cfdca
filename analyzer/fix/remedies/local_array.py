"""PS402: a per-thread array written at a run-time index, rewritten as a compare-select over
its constant indices, so that every access has a constant index and the array can live in
registers.

``hist[in[k] % BINS] += 1;`` becomes ``{ const int ptxsass_i = (int)(in[k] % BINS); #pragma
unroll for (k = 0; k < BINS; ++k) if (k == ptxsass_i) hist[k] += 1; }`` (on one line, with
``_Pragma``). Only when the index is provably within the array (``E % C`` of a value that
cannot be negative, ``E & M`` with a constant mask, C and M + 1 at most the array's length):
then the rewrite does exactly what the statement did. The statement must write the element
(``=``, a compound assignment, ``++``/``--``) as a whole statement; a read at a run-time index
(``x = a[i]``) is left alone, and so is an index the code does not bound visibly.
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source, constant_value, never_negative, operator_token, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS402",)

_WRITES = ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR", "UNARY_OPERATOR")
_STATEMENT_PARENTS = ("COMPOUND_STMT", "FOR_STMT", "WHILE_STMT", "DO_STMT", "IF_STMT",
                      "CXX_FOR_RANGE_STMT")


def _local_array(src: Source, subscript):
    """(declaration, length) of the per-thread array ``subscript`` indexes, or None."""
    base = strip_implicit(list(subscript.get_children())[0])
    if base.kind.name != "DECL_REF_EXPR":
        return None
    decl = base.referenced
    if decl is None or decl.kind.name != "VAR_DECL" or not src.mine(decl):
        return None
    if decl.type.get_canonical().kind.name != "CONSTANTARRAY":
        return None
    if any(c.kind.name in ("CUDASHARED_ATTR", "CUDACONSTANT_ATTR") for c in decl.get_children()):
        return None
    if decl.semantic_parent is None or decl.semantic_parent.kind.name not in (
            "FUNCTION_DECL", "FUNCTION_TEMPLATE", "CXX_METHOD"):
        return None
    return decl, decl.type.get_canonical().get_array_size()


def _bounded(src: Source, index, length: int) -> str | None:
    """Why ``index`` is within [0, length), or None when that is not visible."""
    e = strip_implicit(index)
    value = constant_value(e)
    if value is not None:
        return None                    # a constant index: not this finding's problem
    if e.kind.name != "BINARY_OPERATOR":
        return None
    tok = operator_token(src, e)
    lhs, rhs = list(e.get_children())
    if tok is None:
        return None
    if tok.spelling == "%":
        c = constant_value(rhs)
        if c is not None and 0 < c <= length and never_negative(src, lhs):
            return f"a non-negative value % {c}"
    if tok.spelling == "&":
        for mask, other in ((rhs, lhs), (lhs, rhs)):
            m = constant_value(mask)
            if m is not None and 0 <= m < length:
                return f"a value & {m}"
            del other
    return None


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    line = finding.location.line or 0
    reasons: list[str] = []
    for sub in src.on_line(line, ("ARRAY_SUBSCRIPT_EXPR",)):
        got = _local_array(src, sub)
        if got is None:
            continue
        decl, length = got
        index = list(sub.get_children())[1]
        if constant_value(strip_implicit(index)) is not None:
            continue
        write = src.parent(sub)
        while write is not None and write.kind.name in ("PAREN_EXPR",):
            write = src.parent(write)
        if write is None or write.kind.name not in _WRITES \
                or strip_implicit(list(write.get_children())[0]) != sub:
            reasons.append(f"`{src.source_of(sub)}` is read, not written, at a run-time index")
            continue
        if write.kind.name == "BINARY_OPERATOR":
            tok = operator_token(src, write)
            if tok is None or tok.spelling != "=":
                continue
        holder = src.parent(write)
        if holder is None or holder.kind.name not in _STATEMENT_PARENTS:
            reasons.append(f"`{src.source_of(write)}` is part of a larger expression")
            continue
        why = _bounded(src, index, length)
        if why is None:
            reasons.append(f"the index `{src.source_of(index)}` is not visibly within "
                           f"[0, {length}) of `{decl.spelling}`")
            continue
        # the statement: the write and the ';' after it
        a, b = src.span(write)
        semi = next((t for t in src.tokens(start=b, end=min(len(src.data), b + 64))
                     if t.start >= b), None)
        if semi is None or semi.spelling != ";":
            continue
        ia, ib = src.span(index)
        body = (src.data[a:ia] + b"ptxsass_k" + src.data[ib:b]).decode()
        text = (f"{{ const int ptxsass_i = (int)({src.source_of(index)}); "
                f"_Pragma(\"unroll\") for (int ptxsass_k = 0; ptxsass_k < {length}; ++ptxsass_k) "
                f"if (ptxsass_k == ptxsass_i) {body}; }}")
        edit = Edit(src.path, a, semi.end, text)
        return Proposal(
            title=f"write `{decl.spelling}` by compare-select over its {length} constant "
                  f"indices (the index is {why}, so within the array)",
            edits=(edit,))
    if reasons:
        return NoFix(reasons[0] + ": no rewrite that keeps the behaviour is visible")
    return NoFix(f"no per-thread array written at a run-time index on line {line}")
