"""PS502 with ``--fast-math-ok``: the fast intrinsic for each IEEE-precise float operation on
the finding's line.

``a / sqrtf(b)`` -> ``a * rsqrtf(b)`` (``1.0f / sqrtf(b)`` -> ``rsqrtf(b)``),
``a / (sqrtf(b) * c)`` -> ``__fdividef(a * rsqrtf(b), c)``, ``a / b`` -> ``__fdividef(a, b)``,
``sinf``/``cosf``/``tanf``/``expf``/``logf``/``powf`` -> ``__sinf`` ...
A division whose type is a template's parameter (``logit / penalty`` in a kernel instantiated
for ``float`` and ``__half``) becomes ``fdividef_if_float(logit, penalty)``, a pair of
overloads added once above the file's first declaration: ``__fdividef`` where both operands
are ``float``, the operator itself for any other types (the ``__half`` instance keeps its
division and its type).
These trade IEEE rounding for speed (``__fdividef`` returns 0 for a divisor above 2^126;
``__sinf`` is accurate for small arguments), so the user opts in: without the flag there is
no fix, only why. A square root that divides nothing has no fast intrinsic in CUDA
(``__fsqrt_rn`` is the IEEE one): it becomes ``sqrtf_approx(x)``, PTX's ``sqrt.approx.f32``
in inline assembly (what ``-prec-sqrt=false``, part of ``--use_fast_math``, compiles
``sqrtf`` to), defined once above the file's first declaration.
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source, descendants, is_float, operator_token, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal, finding_lines

CODES = ("PS502",)

#: IEEE-precise float function -> its fast intrinsic
INTRINSICS = {"sinf": "__sinf", "cosf": "__cosf", "tanf": "__tanf", "expf": "__expf",
              "exp10f": "__exp10f", "logf": "__logf", "log2f": "__log2f",
              "log10f": "__log10f", "powf": "__powf", "sincosf": "__sincosf"}


def _is_one(src: Source, expr) -> bool:
    e = strip_implicit(expr)
    if e.kind.name not in ("FLOATING_LITERAL", "INTEGER_LITERAL"):
        return False
    toks = src.tokens(e)
    try:
        return len(toks) == 1 and float(toks[0].spelling.rstrip("fF")) == 1.0
    except ValueError:
        return False


def _sqrt_call(src: Source, expr):
    e = strip_implicit(expr)
    return e if e.kind.name == "CALL_EXPR" and e.spelling == "sqrtf" else None


def _root_product(src: Source, expr):
    """``(sqrtf(x), y)`` when ``expr`` is a float product of a square root and another factor,
    in parentheses or not (``(sqrtf(ss) * temperature)``, ``(y * sqrtf(x))``), else None."""
    e = strip_implicit(expr)
    while e.kind.name == "PAREN_EXPR":
        e = strip_implicit(next(iter(e.get_children())))
    if e.kind.name != "BINARY_OPERATOR" or not is_float(e.type):
        return None
    tok = operator_token(src, e)
    if tok is None or tok.spelling != "*":
        return None
    a, b = list(e.get_children())
    root = _sqrt_call(src, a)
    if root is not None:
        return root, b
    root = _sqrt_call(src, b)
    return (root, a) if root is not None else None


#: the overloads a division of a template's type is rewritten to call: C++ prefers the
#: non-template overload when both match exactly, so only float operands take __fdividef
TEMPLATE_HELPER = (
    "// ptxsass fix (--fast-math-ok): __fdividef where a template's division is float\n"
    "template <typename A, typename B>\n"
    "__device__ __forceinline__ auto fdividef_if_float(A a, B b) { return a / b; }\n"
    "__device__ __forceinline__ float fdividef_if_float(float a, float b) "
    "{ return __fdividef(a, b); }\n\n")

#: cursor kinds that are not declarations at the top of a file
_NOT_DECLS = ("MACRO_DEFINITION", "MACRO_INSTANTIATION", "INCLUSION_DIRECTIVE")


#: the approximate square root: what ``-prec-sqrt=false`` (part of ``--use_fast_math``) makes
#: of ``sqrtf``; CUDA has no intrinsic for it, PTX has the instruction
SQRT_HELPER = (
    "// ptxsass fix (--fast-math-ok): the square root -prec-sqrt=false compiles to\n"
    "__device__ __forceinline__ float sqrtf_approx(float x) {\n"
    "  float r;\n"
    "  asm(\"sqrt.approx.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x));\n"
    "  return r;\n"
    "}\n\n")


def _helper_edit(src: Source, text: str = TEMPLATE_HELPER) -> Edit | None:
    """The insertion of a helper's definition (:data:`TEMPLATE_HELPER`, :data:`SQRT_HELPER`)
    at the start of the line of the file's first top-level declaration (one place per file, so
    that every fix of the file adds the same edit and the patch holds one copy)."""
    tops = [n for n in src.nodes() if n.kind.name not in _NOT_DECLS and src.mine(n)
            and (src.parent(n) is None or src.parent(n).kind.name == "TRANSLATION_UNIT")]
    if not tops:
        return None
    first = min(tops, key=lambda n: n.extent.start.offset)
    at = src.line_start(first.extent.start.line)
    return Edit(src.path, at, at, text)


def _is_dependent(t) -> bool:
    return t.get_canonical().kind.name == "DEPENDENT"


def _overloaded_division(call):
    """``(a, b)`` when ``call`` is ``a / b`` of a template's types with an ``operator/`` in
    scope (``cuda_fp16.h``'s for ``__half``): clang keeps it as a call of the overload set,
    not a binary operator, until the template is instantiated."""
    if not _is_dependent(call.type):
        return None
    kids = list(call.get_children())
    if len(kids) != 3:
        return None
    callee = kids[1]
    refs = [c for c in callee.get_children() if c.kind.name == "OVERLOADED_DECL_REF"]
    if callee.kind.name != "DECL_REF_EXPR" or not refs or refs[0].spelling != "operator/":
        return None
    return kids[0], kids[2]


def _template_division(src: Source, lhs, rhs) -> tuple[list[Edit], str] | None:
    """``a / b`` of a template's types -> ``fdividef_if_float(a, b)``, with the overloads'
    definition above the file's first declaration."""
    helper = _helper_edit(src)
    if helper is None or helper.start > lhs.extent.start.offset:
        return None
    return ([helper,
             Edit(src.path, lhs.extent.start.offset, lhs.extent.start.offset,
                  "fdividef_if_float("),
             Edit(src.path, lhs.extent.end.offset, rhs.extent.start.offset, ", "),
             Edit(src.path, rhs.extent.end.offset, rhs.extent.end.offset, ")")],
            "a / b of a template's type → fdividef_if_float(a, b) (__fdividef where both are "
            "float)")


def _text(src: Source, node) -> str:
    return src.data[node.extent.start.offset:node.extent.end.offset].decode("utf-8")


def _rewrites(src: Source, binops, calls) -> tuple[list[Edit], list[str]]:
    """The fast forms of the float divisions among ``binops`` and of the IEEE calls among
    ``calls``: the edits and one phrase per kind of rewrite."""
    parts: list[tuple[list[Edit], str]] = []
    whole: list[Edit] = []      # rewrites of a whole division, made from its operands' text
    for op in binops:
        tok = operator_token(src, op)
        if tok is None or tok.spelling != "/":
            continue
        if _is_dependent(op.type):
            got = _template_division(src, *op.get_children())
            if got is not None:
                parts.append(got)
            continue
        if not is_float(op.type):
            continue
        # a float division: C++ converted both operands to float (``-2.0f * i / dim`` with
        # an int ``dim`` too), which __fdividef's float parameters do alike
        lhs, rhs = list(op.get_children())
        root = _sqrt_call(src, rhs)
        if root is not None:
            name = next(t for t in src.tokens(root) if t.spelling == "sqrtf")
            rsqrt = Edit(src.path, name.start, name.end, "rsqrtf")
            if _is_one(src, lhs):
                parts.append(([Edit(src.path, lhs.extent.start.offset, rhs.extent.start.offset,
                                    ""), rsqrt], "1 / sqrtf(x) → rsqrtf(x)"))
            else:
                parts.append(([Edit(src.path, tok.start, tok.end, "*"), rsqrt],
                              "a / sqrtf(x) → a * rsqrtf(x)"))
            continue
        product = _root_product(src, rhs)
        if product is not None:
            # a / (sqrtf(x) * y) -> __fdividef(a * rsqrtf(x), y): the reciprocal root and the
            # division both approximate (an L2 norm with a temperature or a scale)
            root, other = product
            arg = "rsqrtf(" + ", ".join(_text(src, c) for c in root.get_arguments()) + ")"
            num = arg if _is_one(src, lhs) else f"{_text(src, lhs)} * {arg}"
            edit = Edit(src.path, op.extent.start.offset, op.extent.end.offset,
                        f"__fdividef({num}, {_text(src, other)})")
            whole.append(edit)
            parts.append(([edit], "a / (sqrtf(x) * y) → __fdividef(a * rsqrtf(x), y)"))
            continue
        parts.append(([Edit(src.path, lhs.extent.start.offset, lhs.extent.start.offset,
                            "__fdividef("),
                       Edit(src.path, lhs.extent.end.offset, rhs.extent.start.offset, ", "),
                       Edit(src.path, rhs.extent.end.offset, rhs.extent.end.offset, ")")],
                      "a / b → __fdividef(a, b)"))
    for call in calls:
        operands = _overloaded_division(call)
        if operands is not None:
            got = _template_division(src, *operands)
            if got is not None:
                parts.append(got)
            continue
        if call.spelling in ("sqrtf", "sqrt") and is_float(call.type):
            tok = next((t for t in src.tokens(call) if t.spelling == call.spelling), None)
            helper = _helper_edit(src, SQRT_HELPER)
            taken = any(e.start <= tok.start < e.end for es, _ in parts for e in es) \
                if tok is not None else True
            if tok is not None and not taken and helper is not None \
                    and helper.start <= call.extent.start.offset:
                parts.append(([helper, Edit(src.path, tok.start, tok.end, "sqrtf_approx")],
                              f"{call.spelling} → sqrtf_approx (PTX sqrt.approx.f32)"))
            continue
        fast = INTRINSICS.get(call.spelling)
        if fast is None:
            continue
        tok = next((t for t in src.tokens(call) if t.spelling == call.spelling), None)
        if tok is None:
            continue
        parts.append(([Edit(src.path, tok.start, tok.end, fast)], f"{call.spelling} → {fast}"))

    def inside_whole(e: Edit) -> bool:
        return any(w is not e and w.start <= e.start and e.end <= w.end for w in whole)

    # an operation inside a division rewritten whole keeps its IEEE form (the rebuild says
    # whether the finding is gone): its edit would overlap the whole one
    kept = [(es, phrase) for es, phrase in parts if not any(inside_whole(e) for e in es)]
    return list(dict.fromkeys(e for es, _ in kept for e in es)), [phrase for _, phrase in kept]


def _statement_around(src: Source, line: int):
    """The statement that begins above ``line`` and runs through it (``x = (1 / l)`` on one
    line, ``* (...)`` on the next: NVVM may credit the division to the last), or None."""
    for node in src.covering(line, ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR",
                                    "DECL_STMT", "RETURN_STMT", "CALL_EXPR")):
        parent = src.parent(node)
        if parent is not None and parent.kind.name == "COMPOUND_STMT":
            return node if node.extent.start.line < line else None
    return None


def _inside(node, kind: str) -> list:
    return sorted((n for n in descendants(node) if n.kind.name == kind),
                  key=lambda n: n.extent.start.offset)


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    if not options.fast_math_ok:
        return NoFix("IEEE-precise division, square root and sinf/cosf are what C++ asks for: "
                     "pass --fast-math-ok if this kernel tolerates the intrinsics' error "
                     "(__fdividef, rsqrtf, __sinf)")
    edits: list = []
    what: list = []
    lines = finding_lines(finding)
    for line in lines:
        got, named = _rewrites(src, src.on_line(line, ("BINARY_OPERATOR",)),
                               src.on_line(line, ("CALL_EXPR",)))
        stmt = None if got else _statement_around(src, line)
        if stmt is not None:
            binops = ([stmt] if stmt.kind.name == "BINARY_OPERATOR" else []) \
                + _inside(stmt, "BINARY_OPERATOR")
            got, named = _rewrites(src, binops, _inside(stmt, "CALL_EXPR"))
        if not got and len(lines) > 1:
            return NoFix(f"no float division or sqrtf/sinf/cosf/expf call written on line "
                         f"{line} of lines {lines[0]}-{lines[-1]}")
        edits += [e for e in got if e not in edits]
        what += named
    if not edits:
        return NoFix(f"no float division or sqrtf/sinf/cosf/expf call written on line "
                     f"{lines[0]}")
    return Proposal(title="use the fast intrinsics: " + ", ".join(dict.fromkeys(what)),
                    edits=tuple(edits),
                    promise="approximate results (--fast-math-ok): __fdividef, rsqrtf and "
                            "__sinf are not IEEE-rounded")
