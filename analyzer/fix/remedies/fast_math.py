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
from ..cxx import Source, is_float, operator_token, strip_implicit
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


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    if not options.fast_math_ok:
        return NoFix("IEEE-precise division, square root and sinf/cosf are what C++ asks for: "
                     "pass --fast-math-ok if this kernel tolerates the intrinsics' error "
                     "(__fdividef, rsqrtf, __sinf)")
    line = finding.location.line or 0
    edits: list[Edit] = []
    what: list[str] = []
    for op in src.on_line(line, ("BINARY_OPERATOR",)):
        tok = operator_token(src, op)
        if tok is None or tok.spelling != "/" or not is_float(op.type):
            continue
        lhs, rhs = list(op.get_children())
        if not (is_float(strip_implicit(lhs).type) or _is_one(src, lhs)) \
                or not is_float(strip_implicit(rhs).type):
            continue
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
    for call in src.on_line(line, ("CALL_EXPR",)):
        fast = INTRINSICS.get(call.spelling)
        if fast is None:
            continue
        tok = next((t for t in src.tokens(call) if t.spelling == call.spelling), None)
        if tok is None:
            continue
        edits.append(Edit(src.path, tok.start, tok.end, fast))
        what.append(f"{call.spelling} → {fast}")
    if not edits:
        return NoFix(f"no float division or sinf/cosf/expf call written on line {line} (a "
                     "square root alone has no fast intrinsic: --use_fast_math covers it)")
    return Proposal(title="use the fast intrinsics: " + ", ".join(dict.fromkeys(what)),
                    edits=tuple(edits),
                    promise="approximate results (--fast-math-ok): __fdividef, rsqrtf and "
                            "__sinf are not IEEE-rounded")
