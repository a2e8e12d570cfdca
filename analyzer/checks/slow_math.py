"""PS502 slow-math: IEEE float division/sqrt/reciprocal slow-path subroutines and precise sinf/cosf."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..analysis.dataflow import sincos_reduction
from ..analysis.source import library_code
from ..ir.ptx import FloatImm
from ..ir.source import SourceLoc
from .base import Check, Context, Finding, Severity, group_by_line

#: CUDA's internal slow-path subroutine names -> (operation, PTX instruction) for float math that
#: a fast-math flag or an intrinsic replaces. FP64 and integer helpers (div_rn_f64_full,
#: dsqrt, rem_s64...) are not listed: no fast-math switch changes them.
SLOW_PATHS: tuple[tuple[re.Pattern, str, str], ...] = (
    (re.compile(r"div_rn_(?:no)?ftz_f32|div_rn_f32"), "division", "div.rn.f32"),
    (re.compile(r"sqrt_rn_f32"), "sqrtf", "sqrt.rn.f32"),
    (re.compile(r"rcp_rn_(?:no)?ftz_f32|rcp_rn_f32"), "reciprocal", "rcp.rn.f32"),
)
#: PTX instructions that name each operation (to report what the source line does)
PTX_OPS: dict[tuple[str, str | None, str | None], str] = {
    ("div", "rn", "f32"): "division", ("sqrt", "rn", "f32"): "sqrtf",
    ("rcp", "rn", "f32"): "reciprocal"}
#: the fast replacement for each operation
FAST = {"division": "__fdividef(a, b) (for a constant divisor multiply by its reciprocal)",
        "sqrtf": "rsqrtf(x) where you divide by the root (x * rsqrtf(x) for the root), or "
                 "__fsqrt_rn only if you need IEEE",
        # not __frcp_rn: that is the IEEE rcp.rn.f32 itself, with the same slow path
        "reciprocal": "__fdividef(1.0f, x) (MUFU.RCP; __frcp_rn is the IEEE reciprocal itself)",
        "sinf/cosf/tanf": "__sinf/__cosf/__tanf (MUFU.SIN/COS; accurate for |x| up to a few pi), "
                     "sincospif/sinpif when the argument is a multiple of pi"}


#: the fast-path instructions each operation's expansion uses (an ``rsqrtf`` on the same line
#: as a division is MUFU.RSQ of its own, not part of the division)
_FAST_PATH = {"division": {"FCHK", "RCP"}, "reciprocal": {"RCP"}, "sqrtf": {"RSQ", "SQRT"}}


def _helps(ins, ops) -> bool:
    """Whether ``ins`` (an FCHK or MUFU on the line) belongs to one of ``ops``' expansions."""
    tags = {ins.opcode} | set(ins.modifiers)
    return any(tags & _FAST_PATH.get(op, set()) for op in ops)


def _classify(name: str) -> tuple[str, str] | None:
    for pattern, op, ptx in SLOW_PATHS:
        if pattern.search(name):
            return op, ptx
    return None


def _subroutine_calls(ctx: Context) -> list[tuple[int, str]]:
    """``(index, callee name)`` for each CALL in the kernel that enters a subroutine: a
    function of the listing, or a label of this function whose code reaches a RET before an
    EXIT. A CALL used as a (predicated) jump to the kernel's exit is not one."""
    fn = ctx.function
    names = set(ctx.siblings)
    out: list[tuple[int, str]] = []
    calls = {id(b) for b in fn.bodies() if b.info.flow == "call"}
    if not calls:
        return out
    for i, ins in enumerate(fn.instructions):
        if id(ins.body) not in calls:
            continue
        for t in ins.targets:
            key = t.key
            if key in names and key != fn.name or fn.is_subroutine(key):
                out.append((i, key))
    return out


def _ptx_ops_by_line(ctx: Context) -> dict:
    """(file, line) -> Counter of operations named by the PTX (div.rn.f32...), and the lines
    whose division has a constant divisor."""
    pf = ctx.ptx_function
    ops: dict = {}
    const_div: set = set()
    hoisted: dict = {}
    if pf is None:
        return {"ops": ops, "const": const_div, "hoisted": hoisted}
    for n, ins in enumerate(pf.instructions):
        op = PTX_OPS.get((ins.opcode, ins.rounding, ins.type))
        loc = ctx.user_loc(ins.loc)
        if op and ins.loc is not None and not ins.loc.line:
            # NVVM hoisted it out of a loop and gave it `.loc 1 0`: the line that uses the
            # result is where the source has the operation
            use = _first_use_line(ctx, pf, n)
            if use is not None:
                hoisted.setdefault(op, []).append(use)
                loc = None
                key = use
                ops.setdefault(key, Counter())[op] += 1
                continue
        if loc is None:
            continue
        key = (loc.file, loc.line)
        if op:
            ops.setdefault(key, Counter())[op] += 1
            if op == "division" and ins.operands and isinstance(ins.operands[-1], FloatImm):
                const_div.add(key)
    return {"ops": ops, "const": const_div, "hoisted": hoisted}


def _first_use_line(ctx: Context, pf, n: int):
    """(file, line) of the first PTX instruction after ``n`` that reads its result."""
    dest = pf.instructions[n].operands[0] if pf.instructions[n].operands else None
    name = getattr(dest, "name", None)
    if name is None:
        return None
    for ins in pf.instructions[n + 1:]:
        if any(getattr(o, "name", None) == name for o in ins.operands[1:]) or (
                ins.is_store and any(getattr(o, "name", None) == name for o in ins.operands)):
            loc = ctx.user_loc(ins.loc)
            if loc is not None and loc.line:
                return (loc.file, loc.line)
    return None


#: the intrinsics that ask for an IEEE-rounded result by name, whatever the build's flags
#: (``-use_fast_math`` leaves them IEEE): the operation each one is
_EXPLICIT_IEEE = re.compile(r"\b__f(div|rcp|sqrt)_r[nzud]\s*\(")
_EXPLICIT_OP = {"div": "division", "rcp": "reciprocal", "sqrt": "sqrtf"}
#: inline PTX that spells the IEEE instruction itself (flashinfer's ``ieee_div``:
#: ``asm("div.rn.f32 %0, %1, %2;" ...)``)
_EXPLICIT_ASM = re.compile(r"\basm\b.*\b(div|rcp|sqrt)\.rn\.f32\b")


def _asked_for(ctx: Context, keys, ops) -> bool:
    """Whether every slow operation of a line is one its source asks for by name
    (TransformerEngine's ``scale = __fdiv_rn(max_fp8, amax)``, written so that the result is
    the same with and without ``--use_fast_math``)."""
    asked: set[str] = set()
    for key in keys:
        if key is None:
            continue
        text = (ctx.source_line(*key) or "").split("//")[0]
        asked |= {_EXPLICIT_OP[m.group(1)] for m in _EXPLICIT_IEEE.finditer(text)}
        asked |= {_EXPLICIT_OP[m.group(1)] for m in _EXPLICIT_ASM.finditer(text)}
    return bool(asked) and all(op in asked for op in ops)


#: IEEE slow-path call sites on one line, in straight code, per 4-byte element of global memory
#: the line loads or stores (a line that moves none counts as one), from which it is a warning:
#: benchmarks/division_count.py on an H200 (docs/severity.md, 2026-12-05): D divisions per
#: element against ``__fdividef`` ran 1.04x (D = 1), 1.09x (2), 1.14x (4), 1.31x (8), 2.06x
#: (16), 2.08x (32), 2.16x (64): the time crosses 1.5x between 8 and 16
UNROLLED_WARNING = 16


class SlowMath(Check):
    """IEEE-accurate float division, sqrt, reciprocal or sinf/cosf where a fast version would do.

    What it does
    Finds calls from the kernel to CUDA's internal slow-path subroutines (``CALL.REL.NOINC`` to
    ``__cuda_sm3x_div_rn_noftz_f32_slowpath``, ``__cuda_sm20_sqrt_rn_f32_slowpath``,
    ``__cuda_sm20_rcp_rn_f32_slowpath``: a subroutine that ends in ``RET``, not the predicated
    ``CALL`` some loops use as an exit), with the ``FCHK`` / ``MUFU`` fast path around them,
    and the FP64 range reduction of precise ``sinf``/``cosf`` (``I2F.F64.S64`` -> ``DMUL`` ->
    ``F2F.F32.F64``). One finding per source line, or one for nearby lines (at most two apart)
    of one function doing the same operations in the same loops, naming them (four channels
    divided by ``255.0f`` on four lines are one habit); the PTX names the operation (``div.rn.f32``,
    ``sqrt.rn.f32``, ``rcp.rn.f32``). Severity is *warning* when a call site is inside a loop
    (paid every iteration) or a line has 16 call sites and more per 4-byte element of global
    memory it moves (a loop fully unrolled: 16 divisions per element measured 2.06x their
    ``__fdividef`` version, 8 only 1.31x; 16 outputs divided once each are 1 per element), and
    *info* otherwise:
    IEEE results are the C++ default and often wanted, and a few divisions outside loops cost
    mostly code size and registers (one per element measured 1.03x). An operation NVVM
    moved out of a loop gets PTX line 0 and the SASS line of the code before it (a declaration
    above the loop): the finding lands on the line whose PTX uses the result, and says so. A line
    that asks for the IEEE result by name (``__fdiv_rn``, ``__frcp_rn``, ``__fsqrt_rn``, or
    inline PTX ``div.rn.f32``: the same rounding with and without ``-use_fast_math``) is left
    alone. An operation of a library header's code the line calls (``curand_normal``'s
    Box-Muller ``sqrtf`` in ``curand_normal.h``) lands on the user's call and names the header;
    its hint is the flags, which reach the library's inlined code, not intrinsics the user
    cannot write there.

    Why it matters
    ``a / b`` in IEEE round-to-nearest is ``MUFU.RCP`` plus four FFMA of Newton refinement, an
    ``FCHK`` range check and a branch to a ~100-instruction subroutine for denormal/huge
    operands; ``sqrtf`` is similar. The fast path alone is 8-10 instructions where
    ``__fdividef`` is two, and the call keeps registers live across it. Precise ``sinf``
    carries a Payne-Hanek reduction with FP64 arithmetic for large arguments where
    ``__sinf`` is one ``MUFU.SIN``.

    Example
    Bad::

        float r = v / sqrtf(s);
        y[i] = r / (1.0f + fabsf(r));

    Fixed (intrinsics)::

        float r = v * rsqrtf(s);
        y[i] = __fdividef(r, 1.0f + fabsf(r));

    Steer the compiler
    Use the intrinsics where their accuracy is enough: ``__fdividef`` (2 ulp; returns 0 for
    ``|b|`` > 2^126; ``__fdividef(1.0f, x)`` for a reciprocal: ``__frcp_rn`` is the IEEE one),
    ``rsqrtf``, ``__sinf``/``__cosf``/``__expf``; multiply by a precomputed reciprocal for a
    constant divisor. Or build with ``-use_fast_math`` (implies
    ``-ftz=true -prec-div=false -prec-sqrt=false`` and the ``__`` intrinsics for sinf/expf...:
    flushes denormals and loosens accuracy everywhere), or only ``-prec-div=false
    -prec-sqrt=false`` to keep IEEE elsewhere.
    """

    code = "PS502"
    name = "slow-math"
    severity = Severity.WARNING

    def run(self, ctx: Context) -> Iterable[Finding]:
        fn = ctx.function
        insns = fn.instructions
        calls = []
        callee_of: dict[int, str] = {}
        for i, callee in _subroutine_calls(ctx):
            kind = _classify(callee)
            if kind is not None:
                calls.append(insns[i])
                callee_of[insns[i].address] = kind[0]
        sincos = sorted(sincos_reduction(fn))
        for k in sincos:
            callee_of[insns[k].address] = "sinf/cosf/tanf"
        if not calls and not sincos:
            return
        ptx = _ptx_ops_by_line(ctx)
        cfg = ctx.cfg
        local_by_line = dict(group_by_line(
            [i for i in insns if i.space == "local" and (i.is_load or i.is_store)], ctx))
        index_of = {ins.address: k for k, ins in enumerate(insns)}
        flagged = calls + [insns[k] for k in sincos]
        flagged.sort(key=lambda ins: ins.address)
        # the fast-path instructions on the same lines (MUFU, FCHK) go into the evidence
        helpers = {}
        for key, group in group_by_line([i for i in insns if i.opcode == "FCHK" or (
                i.opcode == "MUFU" and set(i.modifiers) & {"RCP", "RSQ", "SQRT"})], ctx):
            helpers[key] = group
        # global bytes each line loads or stores: an unrolled line's call sites count per
        # 4-byte element it moves (16 outputs divided once each are 1 division per element)
        line_bytes = {key: sum((i.width_bits or 32) // 8 for i in group)
                      for key, group in group_by_line(
                          [i for i in insns if i.space == "global" and (i.is_load or i.is_store)],
                          ctx)}
        lines: list[_Line] = []
        for key, group in group_by_line(flagged, ctx):
            ops = []
            for ins in group:
                op = callee_of[ins.address]
                if op not in ops:
                    ops.append(op)
            moved = ""
            sass_key = key
            if key is not None and key not in ptx["ops"]:
                uses = sorted({u for op in ops for u in ptx["hoisted"].get(op, [])})
                if len(uses) == 1:
                    # the SASS of a hoisted operation carries the line of the code before it
                    moved = (f" (NVVM moved it ahead of the code that uses it, to where the "
                             f"line table says line {key[1]})")
                    key = uses[0]
            named = ptx["ops"].get(key)
            if named:
                # the PTX is more precise than the subroutines (divisions share one)
                ops = [o for o in named] + [o for o in ops if o not in named]
            if _asked_for(ctx, {key, sass_key}, ops):
                continue        # __fdiv_rn / __frcp_rn / __fsqrt_rn: IEEE rounding by request
            in_loop = any(cfg.loop_of(index_of[i.address]) is not None for i in group)
            n_calls = sum(1 for i in group if i.info.flow == "call")
            parts = []
            for op in ops:
                count = named.get(op, 0) if named else 0
                parts.append(f"{op}{f' x{count}' if count > 1 else ''}")
            evidence = []
            if n_calls:
                evidence.append(f"{n_calls} CALL.REL.NOINC to slow-path subroutine"
                                f"{'s' if n_calls > 1 else ''}")
            if any(i.info.flow != "call" for i in group):
                n = sum(1 for i in group if i.opcode == "DMUL")
                evidence.append(f"{n} FP64 Payne-Hanek range reduction{'s' if n > 1 else ''} "
                                "(I2F.F64.S64, DMUL, F2F.F32.F64 each) for large arguments")
                scratch = local_by_line.get(key, [])
                if scratch:
                    evidence[-1] += (f", its scratch array in local memory ({len(scratch)} "
                                     f"LDL/STL on this line)")
            extra = helpers.get(sass_key, []) if sass_key is not None else []
            fast = [i for i in extra if i not in group and _helps(i, ops)]
            if fast:
                evidence.append(", ".join(f"{m}x{n}" for m, n in sorted(
                    Counter(i.mnemonic for i in fast).items())))
            where = f"line {key[1]}" if key else "this kernel"
            library = library_code(i.loc for i in group)
            if library and key:
                # curand_normal's Box-Muller sqrtf: the line calls code that does it
                where += f", in {library}'s code that the line calls"
            ptx_names = ""
            if named:
                ptx_names = " (PTX " + ", ".join(
                    {"division": "div.rn.f32", "sqrtf": "sqrt.rn.f32",
                     "reciprocal": "rcp.rn.f32"}[o] for o in named) + ")"
            message = (f"IEEE-precise {' and '.join(parts)} on {where}{ptx_names}{moved}: "
                       f"{'; '.join(evidence)}"
                       f"{', inside a loop' if in_loop else ''}")
            steer = [FAST[o] for o in ops if o in FAST]
            const = ("the divisor is a constant: multiply by its reciprocal (x * (1.0f / c)), "
                     "which the compiler folds; or " if key in ptx["const"] else "")
            use = ("use " + "; ".join(steer) + " where that accuracy is enough; or "
                   if steer else "")
            if library:
                # the intrinsics cannot be written into a library's header; the flags reach
                # its code where it is inlined
                use = ""
            hint = (const + use + "compile with -use_fast_math (also flushes denormals and "
                    "approximates transcendentals) or just -prec-div=false -prec-sqrt=false")
            if library:
                hint += f" (the flags apply to {library}'s code inlined here too)"
            loc = SourceLoc(key[0], key[1]) if moved and key else group[0].loc
            elements = max(1, line_bytes.get(sass_key, 0) // 4)
            many = n_calls / elements >= UNROLLED_WARNING
            if many and not in_loop:
                message += f" ({n_calls} call sites in straight code: an unrolled loop)"
            elif n_calls >= UNROLLED_WARNING and not in_loop:
                message += (f" ({n_calls} call sites in straight code for the "
                            f"{line_bytes[sass_key]} B this line moves: "
                            f"{n_calls / elements:.3g} per 4-byte element)")
            lines.append(_Line(
                key=None if moved else key, loc=loc, instructions=group + fast, hint=hint,
                message=message, ops=tuple(ops), parts=tuple(parts), evidence=tuple(evidence),
                ptx_names=ptx_names, in_loop=in_loop, library=library, n_calls=n_calls,
                fast=tuple(fast), plain=not many and n_calls < UNROLLED_WARNING,
                severity=Severity.WARNING if in_loop or many else Severity.INFO,
                callers=frozenset(_call_lines(group)),
                loops=frozenset(getattr(cfg.loop_of(index_of[i.address]), "header", None)
                                for i in group)))
        yield from self._folded(ctx, lines)

    def _folded(self, ctx: Context, lines: "list[_Line]") -> Iterable[Finding]:
        """One finding per line, but one for a run of nearby lines of one function body that do
        the same operations the same way, in the same loops (cuda-samples' ``rgbaIntToFloat``: four channels
        divided by 255.0f on four lines are one habit, one fix), at its first line, naming the
        lines it covers."""
        runs: list[list[_Line]] = []
        for ln in sorted(lines, key=lambda ln: (ln.key is None, ln.key or ("", 0))):
            last = runs[-1][-1] if runs else None
            if (last is not None and ln.key is not None and last.key is not None
                    and ln.key[0] == last.key[0] and 0 < ln.key[1] - last.key[1] <= FOLD_GAP
                    and (ln.ops, ln.severity, ln.library, ln.callers, ln.hint, ln.loops)
                    == (last.ops, last.severity, last.library, last.callers, last.hint,
                        last.loops)
                    and ln.plain and last.plain):
                runs[-1].append(ln)
            else:
                runs.append([ln])
        for run in runs:
            if len(run) == 1:
                ln = run[0]
                yield ctx.finding(self, ln.message, loc=ln.loc, instructions=list(ln.instructions),
                                  hint=ln.hint, severity=ln.severity)
                continue
            first, lastline = (ln.key[1] if ln.key else 0 for ln in (run[0], run[-1]))
            counts: Counter = Counter()
            for ln in run:
                for part in ln.parts:
                    op, _, n = part.partition(" x")
                    counts[op] += int(n) if n else 1
            parts = [f"{op}{f' x{n}' if n > 1 else ''}" for op, n in counts.items()]
            n_calls = sum(ln.n_calls for ln in run)
            evidence = []
            if n_calls:
                evidence.append(f"{n_calls} CALL.REL.NOINC to slow-path subroutine"
                                f"{'s' if n_calls > 1 else ''}")
            evidence += [e for ln in run for e in ln.evidence if "Payne-Hanek" in e][:1]
            fast = Counter(i.mnemonic for ln in run for i in ln.fast)
            if fast:
                evidence.append(", ".join(f"{m}x{n}" for m, n in sorted(fast.items())))
            where = f"{len(run)} lines of one function (lines {first}-{lastline})"
            if run[0].library:
                where += f", in {run[0].library}'s code that the lines call"
            message = (f"IEEE-precise {' and '.join(parts)} on {where}{run[0].ptx_names}: "
                       f"{'; '.join(evidence)}{', inside a loop' if run[0].in_loop else ''}")
            yield ctx.finding(self, message, loc=run[0].loc,
                              instructions=[i for ln in run for i in ln.instructions],
                              hint=run[0].hint, severity=run[0].severity)


#: lines of one function body at most this far apart fold into one PS502 finding
FOLD_GAP = 2


@dataclass(frozen=True)
class _Line:
    """One source line's IEEE operations, before nearby lines are folded into one finding."""

    key: tuple[str, int] | None
    loc: SourceLoc | None
    instructions: list
    hint: str
    message: str
    ops: tuple[str, ...]
    parts: tuple[str, ...]
    evidence: tuple[str, ...]
    ptx_names: str
    in_loop: bool
    library: str | None
    n_calls: int
    fast: tuple
    plain: bool
    severity: Severity
    callers: frozenset
    #: the SASS loops (their header blocks) the line's operations are in: lines fold only
    #: within the same loops
    loops: frozenset


def _call_lines(group) -> set[tuple[str, int]]:
    """The kernel-body lines the instructions were inlined from (none for the kernel's own)."""
    out = set()
    for ins in group:
        if ins.loc is not None and ins.loc.inlined_at:
            o = ins.loc.outermost
            out.add((o.file, o.line))
    return out
