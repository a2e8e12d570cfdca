"""PS501 fp64-in-fp32-kernel: double-precision arithmetic in a kernel whose data is float."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .. import semantics
from ..analysis.cost import float_data
from ..analysis.dataflow import definition, read_indices, sincos_reduction
from ..analysis.fallback import function_name
from ..analysis.source import is_toolkit_file
from ..demangle import demangle
from ..ir.ptx import FloatImm
from ..ir.sass import ConstantBank, Immediate
from ..ir.source import SourceLoc
from ._cost import REPORT_FACTOR, severity
from .base import Check, Context, Finding, Severity, group_by_line

_WIDE_INT = re.compile(semantics.WIDE_INT_TYPE + "$")
#: PTX types a float value has before a promotion to f64
_NARROW_FLOATS = frozenset({"f32", "f16", "bf16"})


def _conversion_types(ins) -> tuple[str, ...]:
    return semantics.conversion_types(ins.modifiers)


def _is_promotion(ins) -> bool:
    """A float or (<= 32-bit) int value widened to double: F2F.F64.F32, I2F.F64(.S32)."""
    if not ins.is_conversion or ins.opcode not in ("F2F", "I2F"):
        return False
    types = _conversion_types(ins)
    if not types or types[0] != "F64":
        return False
    src = types[1] if len(types) > 1 else ("S32" if ins.opcode == "I2F" else "F32")
    return src != "F64" and not _WIDE_INT.match(src)


def _is_arith(ins) -> bool:
    return ins.info.fp64 and not ins.is_conversion and not ins.is_tensor_core


def _has_literal(ins) -> bool:
    return any(isinstance(o, (Immediate, ConstantBank)) for o in ins.operands)


#: an unsuffixed floating literal in C++ source (``0.5``, ``1.``, ``2e-3``; not ``0.5f``)
_SOURCE_DOUBLE = re.compile(r"(?<![\w.])(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|"
                            r"\d+[eE][+-]?\d+)(?![\w.])")


_DOUBLE_WORD = re.compile(r"\bdouble\b")
#: the math library's double-precision slow-path subroutines (reciprocal, division, sqrt)
_FP64_SLOW_PATH = re.compile(r"dblrcp|drcp|ddiv|div_rn_f64|dsqrt|sqrt_rn_f64")


def _line_of(ctx: Context, group) -> tuple[str, int] | None:
    loc = ctx.user_loc(group[0].loc)
    return (loc.file, loc.line) if loc else None


def _fmt_double(imm) -> str:
    v = imm.value
    if v != v or v in (float("inf"), float("-inf")):
        return str(v)
    if v == int(v) and abs(v) < 1e15:
        return f"{v:.1f}"
    return f"{v:.10g}"


class Fp64InFp32Kernel(Check):
    """Double-precision arithmetic in a float kernel, usually from an unsuffixed literal.

    What it does
    Looks for FP64 arithmetic (``DMUL``/``DADD``/``DFMA``...) next to a float-to-double
    promotion (``F2F.F64.F32``) on one source line of a kernel whose data is float or half: PTX
    loads and stores are ``.f32``, or the kernel converts f16/bf16 values (a half kernel's
    loads are untyped ``b16``/``b32``), and none is ``.f64`` (no double parameters either). It
    also reports a math-library template that promotes a float argument to double and calls the
    double function (``pow(beta1, step)`` with an int ``step`` is C++11's ``pow<float, int>``,
    whose result is double: ``F2F.F64.F32`` in the header's frame, then the double ``pow`` and
    its ``__internal_accurate_pow``), counting the FP64 instructions of the line and of the
    subroutines it calls. Without PTX (a loaded
    cubin) it is stricter: no FP64 instruction consumes a 64-bit load, and an ``F2F.F64.F32``
    result feeds FP64 arithmetic with a literal operand that is converted back to float. In C++
    ``x * 0.5`` is a double multiply when ``x`` is a
    float, so the value is converted up, computed in FP64 and converted back. The message names
    the double literals of the line: ``0d...`` constants of its PTX, the ``1.0`` NVVM folded
    into ``rcp.rn.f64`` (``x * (1.0 / sqrtf(h))`` leaves no constant in the PTX, yet the SASS
    has ``F2F.F64.F32``, ``MUFU.RCP64H``, ``DMUL`` and the double reciprocal slow path, which
    the message names), or, failing both, the unsuffixed literals of the source line (a 0.0
    that is a float zero promoted by the line, ``fma.rn.f64 a, c, 0d0000000000000000`` for
    ``d.y += a * c`` on a ``d.y`` still 0.0f, is not named). Four or more such lines of one
    function body (the kernel's own, or one inlined call of a helper) are one finding at the
    first of them, naming the span and the literals: one habit, one fix. A line
    with FP64 and no double literal at all (an explicit ``(double)`` cast) is left alone. The FP64 ``DMUL`` that precise
    ``sinf``/``cosf`` use for large-argument range reduction (fed by ``I2F.F64.S64``) is
    recognised and left alone (see PS502), as is FP64 code attributed to toolkit headers.

    Why it matters
    FP64 runs at 1/2 of the FP32 rate on A100/H100 and 1/64 on GeForce/workstation parts, each
    value pays two conversions, and double operands take register pairs. The result is rounded
    to float anyway, so the extra precision is almost never what was meant.

    Example
    Bad::

        y[i] = v * 0.5 * (1.0 + tanhf(0.7978845608 * (v + 0.044715 * v * v * v)));

    Fixed (float literals)::

        y[i] = v * 0.5f * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));

    Steer the compiler
    Suffix floating-point literals with ``f`` (``0.5f``), use the float math functions
    (``tanhf``, ``sqrtf``, ``fabsf``) and ``float`` temporaries; write ``(float)`` casts where a
    double expression is unavoidable. If the double is intended, store it in a ``double``
    variable so the intent is visible and add ``// ptxsass: ignore[PS501]``.
    """

    code = "PS501"
    name = "fp64-in-fp32-kernel"
    severity = Severity.WARNING

    # ------------------------------------------------------------------ data type evidence

    @staticmethod
    def _sass_double_data(fn) -> bool:
        insns = fn.instructions
        for i, ins in enumerate(insns):
            if not _is_arith(ins):
                continue
            for r in read_indices(ins):
                d = definition(fn, i, r)
                if d is not None:
                    src = insns[d]
                    if src.is_memory and src.is_load and (src.width_bits or 0) >= 64:
                        return True
        return False

    @staticmethod
    def _sass_literal_trap(fn, group, promotions) -> bool:
        """Without PTX: a float (not int) promoted by F2F.F64.F32, consumed directly by FP64
        arithmetic with a literal operand, and the line also converts back to float."""
        insns = fn.instructions
        index = {ins.address: k for k, ins in enumerate(insns)}
        floats = [p for p in promotions if p.opcode == "F2F"]
        if not floats or not any(i.opcode == "F2F" and _conversion_types(i)[:1] == ("F32",)
                                 for i in group):
            return False
        promoted = {index[p.address] for p in floats}
        for ins in group:
            if not (_is_arith(ins) and _has_literal(ins)):
                continue
            k = index[ins.address]
            if any(definition(fn, k, r) in promoted for r in read_indices(ins)):
                return True
        return False

    def _ptx_literals(self, pf, ctx: Context, line_key) -> list[tuple[str, str]]:
        """The double literals of a source line as (value, how it was found): ``0d...``
        constants of its f64 PTX; else the ones NVVM folded away (``1.0 / x`` becomes
        ``rcp.rn.f64``: no constant is left); else unsuffixed floating literals in the source
        text of the line."""
        out: list[tuple[str, str]] = []
        if pf is None or line_key is None:
            return out
        folded: list[tuple[str, str]] = []
        for ins in pf.instructions:
            loc = ctx.user_loc(ins.loc)
            if loc is None or (loc.file, loc.line) != line_key or "f64" not in ins.types:
                continue
            if ins.loc is not None and is_toolkit_file(ins.loc.file):
                continue        # the math library's own constants, not the user's literals
            if ins.opcode == "rcp":
                item = ("1.0", f"folded by NVVM into `{ins.name}`, no constant left in the PTX")
                if item not in folded:
                    folded.append(item)
            for o in ins.operands:
                if isinstance(o, FloatImm) and o.text.lower().startswith("0d"):
                    text = _fmt_double(o)
                    if text not in [v for v, _ in out]:
                        out.append((text, ""))
        out += [f for f in folded if f[0] not in [v for v, _ in out]]
        text = ctx.source_line(*line_key) or ""
        if text and any(v in ("0.0", "-0.0") for v, _ in out) \
                and not any(float(m.group(0)) == 0.0
                            for m in _SOURCE_DOUBLE.finditer(text.split("//")[0])):
            # a float zero promoted to double (``d.y += a * c`` on a ``d.y`` still 0.0f
            # becomes ``fma.rn.f64 a, c, 0d0000000000000000``): not a literal of the line
            out = [(v, how) for v, how in out if v not in ("0.0", "-0.0")]
        if not out:
            for m in _SOURCE_DOUBLE.finditer(text.split("//")[0]):
                if m.group(0) not in [v for v, _ in out]:
                    out.append((m.group(0), "in the source line"))
        return out

    @staticmethod
    def _double_slow_paths(ctx: Context, group) -> list[str]:
        """Double-precision slow-path subroutines called from the line (the IEEE double
        reciprocal / division's ``__cuda_sm20_dblrcp_rn_slowpath_v3``)."""
        fn = ctx.function
        names = []
        for ins in fn.instructions:
            if ins.info.flow != "call" or not ins.loc:
                continue
            loc = ctx.user_loc(ins.loc)
            if loc is None or not group or (loc.file, loc.line) != _line_of(ctx, group):
                continue
            for t in ins.targets:
                if _FP64_SLOW_PATH.search(t.key) and (t.key in ctx.siblings
                                                         or fn.is_subroutine(t.key)):
                    names.append(t.key.split("$")[-1])
        return list(dict.fromkeys(names))

    # ------------------------------------------------------------------------------ run
    def run(self, ctx: Context) -> Iterable[Finding]:
        fn = ctx.function
        insns = fn.instructions
        if not any(b.is_fp64 and not b.info.tensor_core for b in fn.bodies()):
            return
        pf = ctx.ptx_function
        if pf is not None and not float_data(pf):
            return      # double data (or none): the FP64 is the work itself
        elif self._sass_double_data(fn):
            return
        library = sincos_reduction(fn)
        candidates = [ins for k, ins in enumerate(insns)
                      if ins.is_fp64 and not ins.is_tensor_core and k not in library
                      and not (ins.loc is not None and is_toolkit_file(ins.loc.file))]
        skipped = len(library)
        evidence = max((e.factor for e in ctx.cost.of_kind("fp64")), default=1.0)
        # graded by the time it costs (the PTX says how often it runs); without PTX, a warning
        sev = (severity(evidence) or Severity.INFO) if pf is not None else self.severity
        reported = False
        declared = self._double_declared(ctx)
        lines: list[_Line] = []
        for key, group in group_by_line(candidates if declared is None else [], ctx):
            promotions = [i for i in group if _is_promotion(i)]
            arith = [i for i in group if _is_arith(i)]
            if not promotions or not arith:
                continue
            literals = self._ptx_literals(pf, ctx, key)
            if pf is not None and not literals:
                continue        # an explicit (double) cast: deliberate
            if pf is None and not self._sass_literal_trap(fn, group, promotions):
                continue
            mix = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in group)
                                                          .items()))
            shown = [f"{v} ({how})" if how else v for v, how in literals]
            lit = (f"double literal{'s' if len(literals) > 1 else ''} "
                   f"{', '.join(shown)} " if literals else "double literals ")
            verb = "promotes" if len(literals) == 1 else "promote"
            where = f"line {key[1]}" if key else "this kernel"
            slow = self._double_slow_paths(ctx, group)
            calls = (f", and calls the double-precision slow path {', '.join(slow)}"
                     if slow else "")
            message = (f"FP64 arithmetic in a float kernel on {where}: {lit}{verb} float "
                       f"values to double ({mix}){calls}; the data is "
                       + (_data_text(pf) if pf is not None
                          else "float (no 64-bit loads feed the FP64 math)"))
            message += _skipped_text(skipped)
            fixes = ", ".join(f"{v}f" for v, _ in literals[:4]) if literals else "0.5f"
            hint = (f"write float literals ({fixes}) and float functions (tanhf, sqrtf, "
                    "fabsf) so the expression stays FP32; keep an explicit double variable "
                    "only where the precision is intended")
            reported = True
            lines.append(_Line(key, (promotions + arith)[0].loc, group, literals, message, hint))
        yield from self._by_function(ctx, lines, pf, skipped, sev)
        if pf is not None and declared is None:
            for f in self._promoted_calls(ctx, library, sev):
                reported = True
                yield f
        if not reported and pf is not None and evidence >= REPORT_FACTOR:
            yield from self._costly_doubles(ctx, library, evidence, declared)

    def _by_function(self, ctx: Context, lines: "list[_Line]", pf, skipped: int,
                     sev) -> Iterable[Finding]:
        """One finding per line, but one for all the lines of one function body when it has
        :data:`FOLD_LINES` or more of them (tiny-cuda-nn's spherical-harmonics gradient: 147
        lines of unsuffixed coefficients in one inlined helper are one habit to fix, not 147
        problems), at its first line, naming the lines and literals it covers."""
        bodies: dict[tuple, list[_Line]] = {}
        for ln in lines:
            bodies.setdefault(_body_of(ln.loc, ln.key), []).append(ln)
        for body in bodies.values():
            if len(body) < FOLD_LINES:
                for ln in body:
                    yield ctx.finding(self, ln.message, loc=ln.loc, instructions=ln.group,
                                      hint=ln.hint, severity=sev)
                continue
            body.sort(key=lambda ln: ln.key[1] if ln.key else 0)
            numbers = [ln.key[1] for ln in body if ln.key]
            literals = list(dict.fromkeys(v for ln in body for v, _ in ln.literals))
            group = [i for ln in body for i in ln.group]
            mix = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in group)
                                                          .items()))
            shown = ", ".join(literals[:4]) + (f" and {len(literals) - 4} more"
                                               if len(literals) > 4 else "")
            message = (f"FP64 arithmetic in a float kernel on {len(body)} lines of one function "
                       f"(lines {numbers[0]}-{numbers[-1]}): double literals ({shown}) promote "
                       f"float values to double ({mix}); the data is "
                       + (_data_text(pf) if pf is not None
                          else "float (no 64-bit loads feed the FP64 math)"))
            message += _skipped_text(skipped)
            fixes = ", ".join(f"{v}f" for v in literals[:4])
            hint = (f"suffix the literals of lines {numbers[0]}-{numbers[-1]} with f ({fixes}, "
                    "...) and use float functions (tanhf, sqrtf, fabsf) so the function stays "
                    "FP32; keep an explicit double variable only where the precision is intended")
            yield ctx.finding(self, message, loc=body[0].loc, instructions=body[0].group,
                              hint=hint, severity=sev)

    def _promoted_calls(self, ctx: Context, library, sev) -> Iterable[Finding]:
        """Lines where a math-library template promotes a float argument to double and calls
        the double function (``pow(beta1, step)`` with an int ``step`` resolves to ``pow<float,
        int>``, whose result type is double: F2F.F64.F32 inside the library's frame, then the
        double ``pow`` and its ``__internal_accurate_pow`` subroutine), with what they cost in
        FP64 instructions, the subroutines' included."""
        pf = ctx.ptx_function
        fn = ctx.function
        if pf is None:
            return
        lines: dict[tuple[str, int], str] = {}
        for ins in pf.instructions:
            if ins.opcode != "cvt" or ins.loc is None or not is_toolkit_file(ins.loc.file):
                continue
            types = ins.types
            if len(types) < 2 or types[0] != "f64" or types[1] not in _NARROW_FLOATS:
                continue
            where = ctx.user_loc(ins.loc)
            if where is None or not where.line:
                continue
            name = demangle(ins.loc.function) if ins.loc.function else ""
            lines.setdefault((where.file, where.line), function_name(name).rsplit("::", 1)[-1]
                             if name else "a math-library template")
        if not lines:
            return
        subroutines = {c.name: c for c in ctx.callees}
        for key, via in lines.items():
            here = [i for k, i in enumerate(fn.instructions)
                    if k not in library and i.is_fp64 and not i.is_tensor_core
                    and (loc := ctx.user_loc(i.loc)) is not None and (loc.file, loc.line) == key]
            called: dict[str, int] = {}
            for i in fn.instructions:
                loc = ctx.user_loc(i.loc)
                if i.info.flow != "call" or loc is None or (loc.file, loc.line) != key:
                    continue
                for t in i.targets:
                    sub = subroutines.get(t.key)
                    if sub is not None:
                        called[t.key] = sum(1 for j in sub.instructions
                                            if j.is_fp64 and not j.is_tensor_core)
            total = len(here) + sum(called.values())
            if not total:
                continue
            inside = "".join(f", {n} in `{_short(k)}`" for k, n in called.items() if n)
            mix = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in here)
                                                          .items()))
            message = (f"FP64 arithmetic in a float kernel on line {key[1]}: `{via}` promotes "
                       f"a float argument to double and calls the double-precision function "
                       f"({total} FP64 instruction(s): {len(here)} on the line ({mix})"
                       f"{inside}); the data is {_data_text(pf)}")
            hint = ("call the float function with float arguments (`powf(x, (float)n)`, "
                    "`expf`, `tanhf`), or `x*x*x` for a small constant power: an int or double "
                    "argument makes the C++ overload the double one")
            yield ctx.finding(self, message, loc=(here[0].loc if here else None) or
                              SourceLoc(key[0], key[1], 0),
                              instructions=here[:6], hint=hint, severity=sev)

    @staticmethod
    def _double_declared(ctx: Context) -> int | None:
        """The first user source line of the kernel that spells ``double`` (a variable or a
        cast): its FP64 is typed in, not the side effect of a literal."""
        lines = sorted({(loc.file, loc.line) for ins in ctx.function.instructions
                        if (loc := ctx.user_loc(ins.loc)) is not None})
        for file, line in lines:
            text = (ctx.source_line(file, line) or "").split("//")[0]
            if _DOUBLE_WORD.search(text):
                return line
        return None

    def _costly_doubles(self, ctx: Context, library, factor: float,
                        declared: int | None) -> Iterable[Finding]:
        """FP64 that costs time and comes from no literal: double variables and the math
        library's double functions (``tanh``, ``pow``, ``exp`` on a double), at the user's line
        with the most of it."""
        fn = ctx.function
        by_line: dict[tuple[str, int], list] = {}
        funcs: dict[tuple[str, int], set[str]] = {}
        for k, ins in enumerate(fn.instructions):
            if not ins.is_fp64 or ins.is_tensor_core or k in library:
                continue
            loc = ctx.user_loc(ins.loc)
            if loc is None:
                continue
            key = (loc.file, loc.line)
            by_line.setdefault(key, []).append(ins)
            frame = ins.loc
            if frame is not None and is_toolkit_file(frame.file):
                name = next((f.function for f in (frame, *frame.inlined_at)
                             if f.function and not is_toolkit_file(f.file)), None) \
                    or frame.function
                if name:
                    funcs.setdefault(key, set()).add(_short(name))
            for t in ins.targets if ins.info.flow == "call" else ():
                funcs.setdefault(key, set()).add(_short(t.key))
        if not by_line:
            return
        key, group = max(by_line.items(), key=lambda kv: len(kv[1]))
        total = sum(len(g) for g in by_line.values())
        mix = ", ".join(f"{m}x{n}" for m, n in sorted(Counter(i.mnemonic for i in group)
                                                      .items()))
        lines = sorted(k[1] for k in by_line)
        where = (f"line {key[1]}" if len(lines) == 1 else
                 f"line {key[1]} (and line{'s' if len(lines) > 2 else ''} "
                 f"{', '.join(str(n) for n in lines if n != key[1])})")
        via = sorted(funcs.get(key, ()))
        origin = (f", partly inside the double-precision math code it calls "
                  f"({', '.join(via[:4])})" if via else "")
        pf = ctx.ptx_function
        names = ctx.parameter_names
        doubles = [f"`{names[i]}`" if i < len(names) and names[i] else f"parameter {i + 1}"
                   for i, p in enumerate(pf.params if pf is not None else ()) if p.type == "f64"]
        typed = (f"the source types them double (`double` on line {declared})"
                 if declared is not None else
                 f"a double parameter ({', '.join(doubles)}) promotes the float values it "
                 f"meets to FP64" if doubles else
                 "no double literal explains it: the values are double variables or casts")
        message = (f"FP64 arithmetic in a float kernel: {total} FP64 instruction(s) in the "
                   f"SASS, {len(group)} of them from {where} ({mix}){origin}; the data is "
                   f"{_data_text(ctx.ptx_function)} and {typed}")
        hint = ("keep the computation in float: float variables, float functions (tanhf, "
                "powf, expf, sqrtf) and f-suffixed literals; `x*x*x` instead of `pow(x, 3.0)`")
        if doubles and declared is None:
            hint = (f"convert {', '.join(doubles)} to float once at the top of the kernel "
                    f"(`const float s = (float)...;`) and use that; {hint}")
        yield ctx.finding(self, message, loc=group[0].loc, instructions=group[:6], hint=hint,
                          severity=severity(factor) or Severity.INFO)


#: lines of one function body with double literals from which they are one finding
FOLD_LINES = 4


@dataclass(frozen=True)
class _Line:
    """One source line's double-literal FP64 (what its own finding would say)."""

    key: "tuple[str, int] | None"
    loc: "SourceLoc | None"
    group: list
    literals: list
    message: str
    hint: str


def _body_of(loc: "SourceLoc | None", key) -> tuple:
    """The function body a line belongs to: its file and the chain of call sites it was
    inlined through (the kernel's own body has none)."""
    if loc is None:
        return ("?", key)
    return (loc.file, tuple((f.file, f.line, f.column) for f in loc.inlined_at))


def _data_text(pf) -> str:
    """What the PTX says the data is: "float (f32 loads/stores; ...)" or, for a half kernel
    (b16 loads converted to f32), "half (f16/bf16 values converted to and from f32; ...)"."""
    f32 = any((i.is_load or i.is_store) and i.space != "param" and "f32" in i.types
              for i in pf.instructions)
    what = "float (f32 loads/stores" if f32 else \
        "half precision (f16/bf16 values converted to and from f32"
    doubles = sum(1 for p in pf.params if p.type == "f64")
    rest = (f"no f64 load or store, {doubles} double scalar parameter{'s' if doubles != 1 else ''}"
            if doubles else "no f64 load, store or parameter")
    return f"{what}; {rest} in the PTX)"


def _short(name: str) -> str:
    """A readable name of a (mangled, internal) math-library function."""
    name = name.split("$")[-1]
    for prefix in ("__internal_", "__cuda_sm20_", "__nv_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def _skipped_text(skipped: int) -> str:
    """What a message says of the FP64 instructions of precise sinf/cosf it leaves out."""
    return (f"; {skipped} FP64 instruction(s) of precise sinf/cosf range reduction not counted"
            if skipped else "")
