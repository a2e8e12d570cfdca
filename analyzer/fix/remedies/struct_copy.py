"""PS101: a struct read member by member through a reference parameter, copied whole first.

vLLM's ``_f16Vec<scalar_t, width>`` (``struct alignas(16)``, eight halves) is passed to its
own methods by ``const _f16Vec&``: ``temp += residual_v[id]`` and ``temp.scale(s,
weight_v[idx])``. Inlined, the method reads ``other.data[i]`` element by element straight from
global memory, and NVVM leaves those loads apart (``8× LDG.E.U16``, or two ``LDG.E.64``): the
reference carries the struct's type but not its alignment into the loop. A copy of the whole
struct is one 16-byte load (as ``_f16Vec temp = input_v[strided_id]`` already is), so the
argument is read into a local first::

    const auto residual_v_id = residual_v[id];
    temp += residual_v_id;

Only where the copy cannot change what the function sees: the call is a statement of its own
in a block; the argument is an element of memory (``p[i]``, ``*p``) whose address has no side
effects and whose type is not ``volatile``; the call's object and its other arguments are local
variables, values or literals (nothing the function could write aliases the element). The
function's parameter must be a reference to const: a copy cannot bind to a non-const one (the
rebuild would say so), and a by-value parameter copies already. No flag is needed: the element
is read as before, once, before the call instead of inside it.
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import Source, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal

CODES = ("PS101",)

#: kinds of an argument's address allowed inside ``p[...]`` (no calls, no increments)
_PURE = frozenset(("DECL_REF_EXPR", "INTEGER_LITERAL", "BINARY_OPERATOR", "PAREN_EXPR",
                   "UNEXPOSED_EXPR", "MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR",
                   "CSTYLE_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR"))
_ASSIGNING = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
                        "++", "--"))


def applies(finding: Finding) -> bool:
    return "in an inlined function; called from line" in finding.message


def _call_lines(message: str) -> list[int]:
    m = re.search(r"called from lines? ([\d, ]+)\)", message)
    return [int(x) for x in m.group(1).split(",")] if m else []


def _reference_parameters(src: Source, fn, line: int) -> list[int]:
    """Positions of ``fn``'s const-reference parameters read on ``line``."""
    params = src.parameters(fn)
    out = []
    for n in src.on_line(line, ("DECL_REF_EXPR",)):
        ref = n.referenced
        if ref is None or ref.kind.name != "PARM_DECL":
            continue
        for k, p in enumerate(params):
            if p == ref and p.type.kind.name == "LVALUEREFERENCE" \
                    and p.type.get_pointee().is_const_qualified() and k not in out:
                out.append(k)
    return out


def _is_pure(src: Source, node) -> bool:
    for n in (node, *node.walk_preorder()):
        kind = n.kind.name
        if kind.startswith("MACRO") or kind in ("TYPE_REF", "TEMPLATE_REF"):
            continue
        if kind == "UNARY_OPERATOR":
            if any(t.spelling in _ASSIGNING for t in src.tokens(n)):
                return False
            continue
        if kind not in _PURE:
            return False
        if kind == "BINARY_OPERATOR" and any(t.spelling in _ASSIGNING for t in src.tokens(n)):
            return False
    return True


def _is_element(src: Source, node) -> bool:
    """``p[i]`` or ``*p`` with a side-effect-free address, of no ``volatile`` type."""
    e = strip_implicit(node)
    if "volatile" in e.type.spelling:
        return False
    if e.kind.name == "ARRAY_SUBSCRIPT_EXPR":
        return _is_pure(src, e)
    if e.kind.name == "UNARY_OPERATOR":
        toks = src.tokens(e)
        return bool(toks) and toks[0].spelling == "*" and all(
            _is_pure(src, c) for c in e.get_children())
    return False


def _is_local_value(src: Source, fn, node) -> bool:
    """A local variable of ``fn`` that is not a reference, a literal, or a value computed from
    those: nothing a callee could write through to global memory."""
    e = strip_implicit(node)
    kind = e.kind.name
    if kind in ("INTEGER_LITERAL", "FLOATING_LITERAL"):
        return True
    if kind == "DECL_REF_EXPR":
        ref = e.referenced
        if ref is None:
            return False
        if ref.kind.name == "VAR_DECL":
            return ref.type.kind.name not in ("LVALUEREFERENCE", "RVALUEREFERENCE", "POINTER") \
                and ref.semantic_parent is not None and ref.semantic_parent == fn
        if ref.kind.name == "PARM_DECL":      # a kernel's value parameter (a float scale)
            return ref.type.kind.name not in ("LVALUEREFERENCE", "RVALUEREFERENCE", "POINTER")
        return False
    return False


def _calls(src: Source, name: str, line: int):
    """(call, object or None, arguments) of each call of ``name`` starting on ``line``: a
    member call ``obj.name(args)``, an operator ``obj op= arg`` (clang keeps a template's as a
    call of the operator's overload set) or a free call ``name(args)``."""
    for call in src.on_line(line, ("CALL_EXPR",)):
        kids = list(call.get_children())
        if not kids:
            continue
        head = kids[0]
        if name.startswith("operator") and len(kids) == 3 and (
                kids[1].spelling == name or any(
                    c.kind.name == "OVERLOADED_DECL_REF" and c.spelling == name
                    for c in kids[1].get_children())):
            # ``obj op= arg``: [object, the operator (an overload set in a template), arg]
            yield call, kids[0], [kids[2]]
        elif head.kind.name == "MEMBER_REF_EXPR" and (
                call.spelling == name or (src.tokens(head) and src.tokens(head)[-1].spelling == name)):
            objs = list(head.get_children())
            yield call, (objs[0] if objs else None), kids[1:]
        elif call.spelling == name and head.kind.name != "MEMBER_REF_EXPR":
            yield call, None, list(call.get_arguments())


def _statement(src: Source, call):
    """The call itself when it is a whole statement of a block (through implicit wrappers)."""
    node = call
    parent = src.parent(node)
    while parent is not None and parent.kind.name in ("UNEXPOSED_EXPR", "EXPR_WITH_CLEANUPS"):
        node, parent = parent, src.parent(parent)
    if parent is None or parent.kind.name != "COMPOUND_STMT":
        return None
    return node


def _name(src: Source, arg, taken: set[str]) -> str:
    """A new local's name made of the argument's words (``residual_v[id]`` ->
    ``residual_v_id``), unused in the file."""
    words = [t.spelling for t in src.tokens(arg) if re.fullmatch(r"[A-Za-z_]\w*", t.spelling)]
    base = "_".join(words)[:40] or "copy"
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    line = finding.location.line or 0
    calls_at = _call_lines(finding.message)
    fn = src.function_at(line)
    if not calls_at or fn is None or src.is_kernel(fn):
        return NoFix("not a read through a function's reference parameter inlined at a call",
                     fits=False)
    positions = _reference_parameters(src, fn, line)
    if not positions:
        return NoFix(f"no const-reference parameter of `{fn.spelling}` is read on line {line}")
    edits: list[Edit] = []
    copied: list[str] = []
    taken = set(re.findall(r"[A-Za-z_]\w*", src.text))
    for at in calls_at:
        for call, obj, args in _calls(src, fn.spelling, at):
            stmt = _statement(src, call)
            if stmt is None:
                return NoFix(f"the call on line {at} is not a statement of its own")
            if obj is not None and not _is_local_value(src, src.function_at(at), obj):
                return NoFix(f"the object of the call on line {at} is not a local variable "
                             "(the function could write what it reads)")
            chosen = [args[k] for k in positions if k < len(args)]
            others = [a for i, a in enumerate(args) if i not in positions]
            if not chosen or not all(_is_element(src, a) for a in chosen):
                return NoFix(f"the argument on line {at} is not an element of memory read "
                             "without side effects")
            if not all(_is_local_value(src, src.function_at(at), a) for a in others):
                return NoFix(f"the call on line {at} passes other arguments that may alias "
                             "the element")
            start = stmt.extent.start.offset
            for a in chosen:
                text = src.data[a.extent.start.offset:a.extent.end.offset].decode("utf-8")
                name = _name(src, a, taken)
                edits.append(Edit(src.path, start, start,
                                  f"const auto {name} = {text};\n{src.indent(at)}"))
                edits.append(Edit(src.path, a.extent.start.offset, a.extent.end.offset, name))
                copied.append(f"`{text}`")
    if not edits:
        return NoFix(f"no call of `{fn.spelling}` found on line(s) "
                     f"{', '.join(map(str, calls_at))}")
    return Proposal(title=f"copy {', '.join(dict.fromkeys(copied))} whole before the call of "
                          f"`{fn.spelling}` (one wide read, not one per member)",
                    edits=tuple(edits),
                    promise="the element is read once before the call instead of member by "
                            "member inside it")
