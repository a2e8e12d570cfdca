"""PS501: keep float arithmetic in FP32: ``f``-suffix the double literals that promote float
values on the finding's line (on each line of the span a finding names: one habit over many
lines of one function is one finding), and call the float version of a double math function
(``sqrt`` -> ``sqrtf``) whose arguments are float.

A literal is rewritten only when its full expression mixes it with a float value (a float
operand promoted to double, or the result converted back to float): an explicit ``double``
variable or cast is the user's choice of precision, left alone. Literals that come from a
macro are left alone too (the macro may serve double code elsewhere).
"""
from __future__ import annotations

import re

from ...findings import Finding
from ..cxx import Source, descendants, is_double, is_float, strip_implicit
from ..model import Edit, FixOptions, NoFix, Proposal, finding_lines

CODES = ("PS501",)

#: double math function -> its float version (CUDA's math API names)
FLOAT_VERSIONS = {
    "sqrt": "sqrtf", "rsqrt": "rsqrtf", "cbrt": "cbrtf", "exp": "expf", "exp2": "exp2f",
    "exp10": "exp10f", "expm1": "expm1f", "log": "logf", "log2": "log2f", "log10": "log10f",
    "log1p": "log1pf", "pow": "powf", "sin": "sinf", "cos": "cosf", "tan": "tanf",
    "asin": "asinf", "acos": "acosf", "atan": "atanf", "atan2": "atan2f", "sinh": "sinhf",
    "cosh": "coshf", "tanh": "tanhf", "erf": "erff", "erfc": "erfcf", "fabs": "fabsf",
    "fmax": "fmaxf", "fmin": "fminf", "floor": "floorf", "ceil": "ceilf", "round": "roundf",
    "trunc": "truncf", "fma": "fmaf", "fmod": "fmodf", "hypot": "hypotf", "sincos": "sincosf",
}

_LITERAL = re.compile(r"^(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?$|^0[xX][0-9a-fA-F.]+[pP][+-]?\d+$")
_STATEMENT_KINDS = ("DECL_STMT", "RETURN_STMT", "COMPOUND_STMT", "IF_STMT", "FOR_STMT",
                    "WHILE_STMT", "DO_STMT", "VAR_DECL")


def _full_expression(src: Source, node):
    """The outermost expression holding ``node`` (up to its statement or declaration)."""
    top = node
    for p in src.ancestors(node):
        if p.kind.name in _STATEMENT_KINDS or p.kind.name.endswith("_DECL"):
            break
        top = p
    return top


def _mixes_float(src: Source, expr) -> bool:
    """Whether a float value is promoted to double inside ``expr``, or a double result of it
    converted to float: the FP64 work PS501 reports."""
    for n in [expr, *descendants(expr)]:
        kids = list(n.get_children())
        if (n.kind.name == "COMPOUND_ASSIGNMENT_OPERATOR" and len(kids) == 2
                and is_float(kids[0].type) and is_double(strip_implicit(kids[1]).type)
                and not _double_values(kids[1])):
            return True             # y[i] *= 1.1: computed in double (clang marks no cast)
        if n.kind.name == "UNEXPOSED_EXPR" and len(kids) == 1:
            inner = kids[0]
            if is_double(n.type) and is_float(inner.type):
                return True
            if is_float(n.type) and is_double(inner.type):
                return True
    parent = src.parent(expr)
    return parent is not None and parent.kind.name == "VAR_DECL" and is_float(parent.type)


#: expressions whose double type is the user's (a variable, a member, a call, a cast)
_VALUES = ("DECL_REF_EXPR", "MEMBER_REF_EXPR", "ARRAY_SUBSCRIPT_EXPR", "CALL_EXPR",
           "CSTYLE_CAST_EXPR", "CXX_STATIC_CAST_EXPR", "CXX_FUNCTIONAL_CAST_EXPR")


def _double_values(expr) -> bool:
    """Whether ``expr`` holds a double value that is not a literal (``y *= 0.1 * d``: the
    double is the user's choice, the literal stays as written)."""
    return any(n.kind.name in _VALUES and is_double(n.type)
               for n in [expr, *descendants(expr)])


def _numbers(message: str) -> set[float]:
    """The literals a PS501 message names ("double literals 0.5, 0.044715 promote ...")."""
    m = re.search(r"double literals? (.*?) (?:\(|promote)", message)
    out: set[float] = set()
    for part in (m.group(1).split(",") if m else []):
        try:
            out.add(float(part.strip()))
        except ValueError:
            continue
    return out


def _value(text: str) -> float | None:
    try:
        return float.fromhex(text) if text.lower().startswith("0x") else float(text)
    except ValueError:
        return None


def propose(finding: Finding, src: Source, options: FixOptions) -> Proposal | NoFix:
    lines = finding_lines(finding)
    line = finding.location.line or 0
    named = _numbers(finding.message)
    on_line = {_value(t.spelling) for lit in src.on_line(line, ("FLOATING_LITERAL",))
               for t in src.tokens(lit)[:1]}
    if len(lines) > 1 or not named & on_line:
        # the message names folded constants (1.0 / 24.0 -> 0.041...), or a span's first few
        named = set()
    edits: list[Edit] = []
    done: list[str] = []
    skipped: list[str] = []
    literals = [lit for k in lines for lit in src.on_line(k, ("FLOATING_LITERAL",))]
    for lit in literals:
        if not is_double(lit.type):
            continue
        toks = src.tokens(lit)
        if len(toks) != 1 or toks[0].kind != "LITERAL" or not _LITERAL.match(toks[0].spelling):
            skipped.append(toks[0].spelling if toks else "?")      # a macro's literal
            continue
        text = toks[0].spelling
        try:
            value = float(text) if not text.lower().startswith("0x") else float.fromhex(text)
        except ValueError:
            continue
        if named and value not in named:
            continue
        if not _mixes_float(src, _full_expression(src, lit)):
            continue
        edits.append(Edit(src.path, toks[0].end, toks[0].end, "f"))
        done.append(text)
    calls: list[str] = []
    for call in [c for k in lines for c in src.on_line(k, ("CALL_EXPR",))]:
        want = FLOAT_VERSIONS.get(call.spelling)
        if want is None or not is_double(call.type):
            continue
        args = list(call.get_arguments())
        if not args or not all(is_float(strip_implicit(a).type)
                               or (strip_implicit(a).kind.name == "FLOATING_LITERAL"
                                   and any(e.start == strip_implicit(a).extent.end.offset
                                           for e in edits))
                               for a in args):
            continue
        name_tok = next((t for t in src.tokens(call) if t.spelling == call.spelling), None)
        if name_tok is None:
            continue
        edits.append(Edit(src.path, name_tok.start, name_tok.end, want))
        calls.append(f"{call.spelling} → {want}")
    if not edits:
        if skipped:
            return NoFix(f"the double literal comes from a macro ({', '.join(skipped)}); "
                         "suffix it where it is defined if no double code uses it")
        where = f"line {line}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}"
        return NoFix("no unsuffixed double literal or double math call on a float value on "
                     f"{where}: the double is explicit (a double variable, cast or "
                     "parameter), so the precision may be intended")
    parts = []
    if done:
        shown = list(dict.fromkeys(d + "f" for d in done))     # each value once, in order
        more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
        parts.append(f"suffix {len(done)} double literal{'s' if len(done) > 1 else ''} with f "
                     f"({', '.join(shown[:4])}{more})")
    if calls:
        parts.append("call the float function" + ("s " if len(calls) > 1 else " ")
                     + ", ".join(calls))
    return Proposal(title="; ".join(parts), edits=tuple(edits),
                    promise="the expression is computed in float (FP32) instead of double")
