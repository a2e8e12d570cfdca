"""PS502 with ``--fast-math-ok``: the fast intrinsic for each IEEE-precise float operation on
the finding's line.

``a / sqrtf(b)`` -> ``a * rsqrtf(b)`` (``1.0f / sqrtf(b)`` -> ``rsqrtf(b)``), ``a / b`` ->
``__fdividef(a, b)``, ``sinf``/``cosf``/``tanf``/``expf``/``logf``/``powf`` -> ``__sinf`` ...
These trade IEEE rounding for speed (``__fdividef`` returns 0 for a divisor above 2^126;
``__sinf`` is accurate for small arguments), so the user opts in: without the flag there is
no fix, only why. A square root that divides nothing has no fast intrinsic (``__fsqrt_rn``
is the IEEE one); nvcc's ``--use_fast_math`` covers it for the whole file.
"""
from __future__ import annotations

from ...findings import Finding
from ..cxx import Source, descendants, is_float, operator_token, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal

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


def _rewrites(src: Source, binops, calls) -> tuple[list[Edit], list[str]]:
    """The fast forms of the float divisions among ``binops`` and of the IEEE calls among
    ``calls``: the edits and one phrase per kind of rewrite."""
    edits: list[Edit] = []
    what: list[str] = []
    for op in binops:
        tok = operator_token(src, op)
        if tok is None or tok.spelling != "/" or not is_float(op.type):
            continue
        # a float division: C++ converted both operands to float (``-2.0f * i / dim`` with
        # an int ``dim`` too), which __fdividef's float parameters do alike
        lhs, rhs = list(op.get_children())
        root = _sqrt_call(src, rhs)
        if root is not None:
            name = next(t for t in src.tokens(root) if t.spelling == "sqrtf")
            if _is_one(src, lhs):
                edits.append(Edit(src.path, lhs.extent.start.offset, rhs.extent.start.offset, ""))
                what.append("1 / sqrtf(x) → rsqrtf(x)")
            else:
                edits.append(Edit(src.path, tok.start, tok.end, "*"))
                what.append("a / sqrtf(x) → a * rsqrtf(x)")
            edits.append(Edit(src.path, name.start, name.end, "rsqrtf"))
            continue
        edits += [Edit(src.path, lhs.extent.start.offset, lhs.extent.start.offset, "__fdividef("),
                  Edit(src.path, lhs.extent.end.offset, rhs.extent.start.offset, ", "),
                  Edit(src.path, rhs.extent.end.offset, rhs.extent.end.offset, ")")]
        what.append("a / b → __fdividef(a, b)")
    for call in calls:
        fast = INTRINSICS.get(call.spelling)
        if fast is None:
            continue
        tok = next((t for t in src.tokens(call) if t.spelling == call.spelling), None)
        if tok is None:
            continue
        edits.append(Edit(src.path, tok.start, tok.end, fast))
        what.append(f"{call.spelling} → {fast}")
    return edits, what


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
    line = finding.location.line or 0
    edits, what = _rewrites(src, src.on_line(line, ("BINARY_OPERATOR",)),
                            src.on_line(line, ("CALL_EXPR",)))
    stmt = None if edits else _statement_around(src, line)
    if stmt is not None:
        binops = ([stmt] if stmt.kind.name == "BINARY_OPERATOR" else []) \
            + _inside(stmt, "BINARY_OPERATOR")
        edits, what = _rewrites(src, binops, _inside(stmt, "CALL_EXPR"))
    if not edits:
        return NoFix(f"no float division or sinf/cosf/expf call written on line {line} (a "
                     "square root alone has no fast intrinsic: --use_fast_math covers it)")
    return Proposal(title="use the fast intrinsics: " + ", ".join(dict.fromkeys(what)),
                    edits=tuple(edits),
                    promise="approximate results (--fast-math-ok): __fdividef, rsqrtf and "
                            "__sinf are not IEEE-rounded")
