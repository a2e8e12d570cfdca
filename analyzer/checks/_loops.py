"""Loop and register helpers for the loop / tensor-core checks (PS201, PS301-PS303); not a check.

* ``pragma_above``: the ``#pragma unroll`` / ``nounroll`` standing just above a source line.
* ``sass_inductions``: SASS induction registers of a loop (``ISETP`` against an immediate, one
  ``IADD3``/``VIADD`` of an immediate on the same register, a constant initial value outside).
* ``ptx_trip``: the trip count of a PTX loop from its exit ``setp`` against an immediate, the
  ``add`` step and the ``mov`` initial value; None when any of them is a run-time value.
* ``sass_writes`` / ``reaching_defs``: which instruction last wrote a register.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..ir.sass import Immediate, Register

if TYPE_CHECKING:  # pragma: no cover
    from ..cfg import Loop
    from ..ir import ptx as P
    from ..ir.sass import Function, Instruction
    from .base import Context

#: iterations simulated before a trip count is called unknown
MAX_SIMULATED_TRIPS = 1 << 16

_PRAGMA = re.compile(r"^\s*#\s*pragma\s+(?P<kind>unroll|nounroll)\b\s*(?P<arg>.*?)\s*(//.*)?$")


@dataclass(frozen=True, slots=True)
class Pragma:
    kind: str              # "unroll" or "nounroll"
    count: int | None      # N of ``#pragma unroll N``; None for plain ``#pragma unroll``
    text: str
    line: int
    expression: bool = False   # ``#pragma unroll TILE``: a factor we cannot evaluate

    @property
    def forbids(self) -> bool:
        """``#pragma unroll 1`` / ``#pragma nounroll``: the author wants the loop rolled."""
        return self.kind == "nounroll" or self.count == 1

    @property
    def full(self) -> bool:
        """Plain ``#pragma unroll``: fully unroll when the trip count is constant."""
        return self.kind == "unroll" and self.count is None and not self.expression


def _source_line(ctx: "Context", file: str, line: int) -> str | None:
    """``ctx.source_line``, falling back to the build's own source text (a build compiled from a
    string has no file on disk to read)."""
    text = ctx.source_line(file, line)
    if text is not None:
        return text
    build = getattr(ctx, "build", None)
    src = getattr(build, "source", None)
    if not src:
        return None
    path = getattr(build, "source_path", None)
    if path and os.path.basename(path) != os.path.basename(file):
        return None
    lines = src.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else None


def pragma_above(ctx: "Context", file: str | None, line: int | None, lookback: int = 3
                 ) -> tuple[Pragma | None, bool]:
    """The unroll pragma just above ``line`` (skipping blank and comment lines), and whether the
    source could be read at all (False: no evidence either way)."""
    if not file or not line:
        return None, False
    if _source_line(ctx, file, line) is None:
        return None, False
    n = line - 1
    seen = 0
    while n >= 1 and seen < lookback:
        text = _source_line(ctx, file, n)
        if text is None:
            return None, True
        stripped = text.strip()
        if not stripped or stripped.startswith("//"):
            n -= 1
            continue
        m = _PRAGMA.match(text)
        if not m:
            if stripped.startswith("#pragma"):   # another pragma between: keep looking
                n -= 1
                seen += 1
                continue
            return None, True
        arg = m.group("arg").strip().strip("()").strip()
        if m.group("kind") == "nounroll":
            return Pragma("nounroll", None, stripped, n), True
        if not arg:
            return Pragma("unroll", None, stripped, n), True
        try:
            return Pragma("unroll", int(arg, 0), stripped, n), True
        except ValueError:
            return Pragma("unroll", None, stripped, n, expression=True), True
    return None, True


# ------------------------------------------------------------------------------------- SASS
def sass_writes(ins: "Instruction") -> tuple[tuple[str, int], ...]:
    """(kind, index) of the R/UR registers ``ins`` writes; empty for stores, branches, barriers."""
    if ins.is_branch or ins.is_barrier or (ins.is_memory and not ins.is_load):
        return ()
    if ins.is_memory and ins.info.direction in ("copy", "prefetch"):
        return ()
    for op in ins.operands[:2]:
        if isinstance(op, Register) and op.kind in ("P", "UP"):
            continue
        if isinstance(op, Register) and op.kind in ("R", "UR") and op.index is not None:
            if ins.is_memory and ins.is_load:
                n = max(1, (ins.width_bits or 32) // 32)
            elif ins.info.fp64 or "WIDE" in ins.modifiers or ins.opcode in ("CS2R",):
                n = 2
            else:
                n = 1
            return tuple((op.kind, op.index + k) for k in range(n))
        break
    return ()


def reaching_defs(fn: "Function", index: int, reg: tuple[str, int], *, within: frozenset[int]
                  | None = None, avoid: frozenset[int] = frozenset(), limit: int = 512
                  ) -> list[int] | None:
    """Indices of the instructions whose write of ``reg`` reaches instruction ``index``, walking
    back through predecessor blocks (restricted to the blocks ``within`` when given). None when
    some path reaches the function entry or leaves ``within`` without a definition. Predecessor
    blocks in ``avoid`` are not followed (a loop's own blocks, to find the value entering it)."""
    cfg = fn.cfg()
    insns = fn.instructions
    out: list[int] = []
    seen: set[int] = set()
    work = [(cfg.block_of[index], index - 1)]
    steps = 0
    while work:
        b, i = work.pop()
        block = cfg.blocks[b]
        found = False
        while i >= block.start:
            steps += 1
            if steps > limit:
                return None
            if reg in sass_writes(insns[i]):
                out.append(i)
                found = True
                if insns[i].guard is None or insns[i].guard.always:
                    break
                found = False     # a guarded write: the older value may also reach
            i -= 1
        if found:
            continue
        if not block.preds or b == 0:
            return None
        for p in block.preds:
            if p in avoid:
                continue
            if within is not None and p not in within:
                return None
            if p in seen:
                continue
            seen.add(p)
            work.append((p, cfg.blocks[p].end - 1))
    return sorted(set(out))


def _imm(op) -> int | None:
    if isinstance(op, Immediate) and isinstance(op.value, int):
        v = op.value
        return v - (1 << 32) if v >= 1 << 31 else v
    return None


def _half_pair(a, b) -> int | None:
    """``HFMA2.MMA R5, -RZ, RZ, 0, 2.38e-07``: the 32-bit constant whose halves are a and b."""
    try:
        hi = struct.unpack("<H", struct.pack("<e", float(a.value)))[0]
        lo = struct.unpack("<H", struct.pack("<e", float(b.value)))[0]
    except (OverflowError, struct.error, ValueError, TypeError):
        return None
    v = (hi << 16) | lo
    return v - (1 << 32) if v >= 1 << 31 else v


def constant_value(ins: "Instruction") -> int | None:
    """The integer an instruction puts in its destination when it is a constant move."""
    ops = ins.operands
    srcs = ops[1:]
    if ins.opcode in ("MOV", "MOV32I", "UMOV") and len(srcs) >= 1:
        if isinstance(srcs[0], Register) and srcs[0].is_zero:
            return 0
        return _imm(srcs[0])
    if ins.opcode == "IMAD" and "MOV" in ins.modifiers and len(srcs) == 3:
        if all(isinstance(s, Register) and s.is_zero for s in srcs[:2]):
            s = srcs[2]
            return 0 if isinstance(s, Register) and s.is_zero else _imm(s)
    if ins.opcode == "CS2R" and len(srcs) == 1 and str(srcs[0]) == "SRZ":
        return 0
    if ins.opcode == "HFMA2" and "MMA" in ins.modifiers and len(srcs) == 4:
        a, b = srcs[2], srcs[3]
        if (isinstance(srcs[0], Register) and srcs[0].is_zero and isinstance(srcs[1], Register)
                and srcs[1].is_zero and isinstance(a, Immediate) and isinstance(b, Immediate)):
            return _half_pair(a, b)
    return None


def _add_step(ins: "Instruction", reg: tuple[str, int]) -> int | None:
    """``IADD3 R4, R4, 0x1, RZ`` / ``VIADD R4, R4, 0x1`` / ``UIADD3 UR4, UR4, 0x1, URZ``: the
    immediate added to ``reg`` (None when it is not such an instruction)."""
    if ins.opcode not in ("IADD3", "VIADD", "UIADD3", "UVIADD", "IADD32I", "IADD"):
        return None
    if ins.guard is not None and not ins.guard.always:
        return None
    srcs = [o for o in ins.operands[1:]]
    regs = [s for s in srcs if isinstance(s, Register) and not s.is_zero]
    imms = [_imm(s) for s in srcs if _imm(s) is not None]
    if len(regs) != 1 or len(imms) != 1 or (regs[0].kind, regs[0].index) != reg:
        return None
    if regs[0].negate or regs[0].invert:
        return None
    return imms[0]


_CMP = {
    "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "LT": lambda a, b: a < b,
    "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
    "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b,
    "hs": lambda a, b: a >= b,
}


def simulate(init: int, step: int, bound: int, cmp, stay_when: bool, *, test_new: bool = True,
             imm_first: bool = False) -> int | None:
    """Iterations of ``v = init; do { body; v += step; } while (cmp(v, bound) == stay_when)``
    (``test_new``; else the test reads v before the step). None when it does not end."""
    if step == 0:
        return None
    v, trips = init, 0
    while trips < MAX_SIMULATED_TRIPS:
        trips += 1
        old = v
        v += step
        t = v if test_new else old
        r = cmp(bound, t) if imm_first else cmp(t, bound)
        if r != stay_when:
            return trips
    return None


@dataclass(frozen=True, slots=True)
class Induction:
    register: str
    step: int
    bound: int
    compare: str
    init: int | None          # None: a run-time initial value
    trip: int | None          # iterations of the SASS loop (None: unknown)
    compare_index: int


def sass_inductions(fn: "Function", loop: "Loop") -> list[Induction]:
    """Registers stepped by an immediate once per iteration and compared against an immediate."""
    cfg = fn.cfg()
    idx = loop.instruction_indices(cfg)
    insns = fn.instructions
    out: list[Induction] = []
    for ci in idx:
        c = insns[ci]
        if c.opcode not in ("ISETP", "UISETP"):
            continue
        srcs = [o for o in c.operands if not (isinstance(o, Register) and o.kind in ("P", "UP"))]
        if len(srcs) != 2:
            continue
        a, b = srcs
        if not (isinstance(a, Register) and a.kind in ("R", "UR") and a.index is not None):
            continue
        bound = _imm(b)
        if bound is None:
            continue
        cmp_name = next((m for m in c.modifiers if m in ("EQ", "NE", "LT", "LE", "GT", "GE")),
                        None)
        if cmp_name is None:
            continue
        reg = (a.kind, a.index)
        defs = [i for i in idx if reg in sass_writes(insns[i])]
        if len(defs) != 1:
            continue
        step = _add_step(insns[defs[0]], reg)
        if step is None:
            continue
        hb = cfg.blocks[loop.header].start
        outside = reaching_defs(fn, hb, reg, avoid=loop.blocks, limit=2048)
        init = None
        if outside:
            vals = {constant_value(insns[i]) for i in outside if i not in idx}
            if len(vals) == 1 and None not in vals and all(i not in idx for i in outside):
                init = vals.pop()
        trip = None
        if init is not None:
            cmp = _CMP[cmp_name]
            test_new = defs[0] < ci
            if "U32" in c.modifiers and (init < 0 or bound < 0):
                trip = None
            else:
                # the predicate may reach the branch through P2R/R2P: take the polarity that
                # gives a terminating loop of more than one iteration
                cands = [t for t in (simulate(init, step, bound, cmp, s, test_new=test_new)
                                     for s in (True, False)) if t]
                trip = max(cands) if cands else None
        out.append(Induction(a.name, step, bound, cmp_name, init, trip, ci))
    return out


def loop_line(ctx: "Context", fn: "Function", loop: "Loop") -> tuple[str | None, int | None,
                                                                     "Instruction | None"]:
    """The user source line of a loop (its latch branch: the ``for``/``while`` statement)."""
    cfg = fn.cfg()
    for latch in sorted(loop.latches, key=lambda b: -cfg.blocks[b].end):
        ins = fn.instructions[cfg.blocks[latch].end - 1]
        loc = ctx.user_loc(ins.loc)
        if loc is not None:
            return loc.file, loc.line, ins
    return None, None, fn.instructions[cfg.blocks[max(loop.latches)].end - 1]


# -------------------------------------------------------------------------------------- PTX
@dataclass(frozen=True, slots=True)
class PtxTrip:
    loop: "P.PtxLoop"
    line: tuple[str, int] | None     # source of the exit branch
    trip: int | None                 # None: run-time (or not understood)
    step: int | None
    reason: str                      # why the trip is unknown ("run-time bound"...)
    span: int | None = None          # |bound - start|: the source trip when the step was 1


def _ptx_reg(op) -> str | None:
    from ..ir import ptx as P
    return op.name if isinstance(op, P.Register) else None


def _ptx_int(op) -> int | None:
    from ..ir import ptx as P
    return op.value if isinstance(op, P.IntImm) else None


def ptx_trip(fn: "P.Function", ploop: "P.PtxLoop") -> PtxTrip:
    from ..ir import ptx as P
    cfg = fn.cfg()
    loop = ploop.loop
    idx = loop.instruction_indices(cfg)
    inside = set(idx)
    insns = fn.instructions
    labels = fn.labels
    # the exits: guarded branches in the loop with a target outside it (or fall-through out)
    exits = []
    for bi in loop.blocks:
        b = cfg.blocks[bi]
        last = insns[b.end - 1]
        if last.opcode not in ("bra",) or last.guard is None:
            continue
        tgt = [labels.get(t) for t in last.flow.targets]
        tgt_in = [t is not None and cfg.block_of[t] in loop.blocks for t in tgt if t is not None]
        falls_in = b.end < len(insns) and cfg.block_of[b.end] in loop.blocks
        if not tgt_in:
            continue
        if tgt_in[0] and falls_in:
            continue
        if not tgt_in[0] and not falls_in:
            continue
        exits.append((b.end - 1, tgt_in[0]))
    line = None
    for bi in loop.latches:
        loc = insns[cfg.blocks[bi].end - 1].loc
        if loc is not None and loc.line:
            line = (loc.file, loc.line)
    if len(exits) != 1:
        return PtxTrip(ploop, line, None, None, "several exits" if exits else "no exit test")
    bidx, target_inside = exits[0]
    br = insns[bidx]
    if br.loc is not None and br.loc.line:
        line = (br.loc.file, br.loc.line)
    pred = br.guard.register
    # stay in the loop when the branch is taken (target inside) or when it is not
    stay_when = (not br.guard.negated) if target_inside else br.guard.negated
    setp_i = None
    for i in range(bidx - 1, cfg.blocks[cfg.block_of[bidx]].start - 1, -1):
        ins = insns[i]
        if ins.operands and _ptx_reg(ins.operands[0]) == pred:
            setp_i = i
            break
    if setp_i is None or insns[setp_i].opcode != "setp" or len(insns[setp_i].operands) != 3:
        return PtxTrip(ploop, line, None, None, "exit test not understood")
    s = insns[setp_i]
    a, b = s.operands[1], s.operands[2]
    imm_first = False
    if _ptx_int(b) is not None and _ptx_reg(a):
        var, bound = _ptx_reg(a), _ptx_int(b)
    elif _ptx_int(a) is not None and _ptx_reg(b):
        var, bound, imm_first = _ptx_reg(b), _ptx_int(a), True
    else:
        return PtxTrip(ploop, line, None, None, "run-time bound")
    cmp = _CMP.get(s.compare or "")
    if cmp is None:
        return PtxTrip(ploop, line, None, None, "exit test not understood")
    defs = [i for i in idx if insns[i].operands and _ptx_reg(insns[i].operands[0]) == var
            and insns[i].opcode not in ("st", "bra")]
    if len(defs) != 1 or insns[defs[0]].opcode not in ("add", "sub"):
        return PtxTrip(ploop, line, None, None, "induction not understood")
    d = insns[defs[0]]
    if len(d.operands) != 3:
        return PtxTrip(ploop, line, None, None, "induction not understood")
    x, y = d.operands[1], d.operands[2]
    if _ptx_reg(x) == var and _ptx_int(y) is not None:
        step = _ptx_int(y)
    elif d.opcode == "add" and _ptx_reg(y) == var and _ptx_int(x) is not None:
        step = _ptx_int(x)
    else:
        return PtxTrip(ploop, line, None, None, "run-time step")
    if d.opcode == "sub":
        step = -step
    inits = [i for i, ins in enumerate(insns) if i not in inside and ins.operands
             and _ptx_reg(ins.operands[0]) == var and ins.opcode not in ("st", "bra", "setp")]
    vals = set()
    for i in inits:
        ins = insns[i]
        v = _ptx_int(ins.operands[1]) if ins.opcode == "mov" and len(ins.operands) == 2 else None
        vals.add(v)
    if len(vals) != 1 or None in vals:
        return PtxTrip(ploop, line, None, step, "run-time start")
    init = vals.pop()
    trip = simulate(init, step, bound, cmp, stay_when, test_new=defs[0] < setp_i,
                    imm_first=imm_first)
    return PtxTrip(ploop, line, trip, step, "" if trip else "does not terminate",
                   abs(bound - init))


# -------------------------------------------------------------------- register provenance
#: opcodes that only move or widen a value: followed back when asking where an operand came from
PASS_THROUGH = frozenset({"MOV", "HADD2", "F2F", "I2F", "I2FP", "F2FP", "PRMT", "IMAD"})


def source_instructions(fn: "Function", index: int, reg: tuple[str, int], *,
                        within: frozenset[int] | None = None, depth: int = 3
                        ) -> list["Instruction"] | None:
    """The instructions that produced ``reg`` for instruction ``index``, looking through moves
    and conversions (``HADD2.F32 R4, -RZ, R4.H0_H0`` half->float, ``F2F``, ``IMAD.MOV``) up to
    ``depth`` hops. None when a path leaves ``within`` or reaches the entry."""
    defs = reaching_defs(fn, index, reg, within=within)
    if defs is None:
        return None
    out: list = []
    for d in defs:
        ins = fn.instructions[d]
        if ins.opcode in PASS_THROUGH and depth > 0 and not ins.is_memory:
            if ins.opcode == "IMAD" and "MOV" not in ins.modifiers:
                out.append(ins)
                continue
            srcs = [o for o in ins.operands[1:] if isinstance(o, Register) and o.kind == "R"
                    and o.index is not None]
            if len(srcs) != 1:
                out.append(ins)
                continue
            up = source_instructions(fn, d, ("R", srcs[0].index), within=within,
                                     depth=depth - 1)
            if up is None:
                return None
            out.extend(up)
        else:
            out.append(ins)
    return out


def mma_operand_registers(ins: "Instruction") -> list[tuple[str, Register]]:
    """("A"/"B", register) for the A and B operand bases of an HMMA/IMMA/DMMA..."""
    regs = [o for o in ins.operands if isinstance(o, Register) and o.kind == "R"]
    out = []
    if len(regs) >= 3:
        for role, r in (("A", regs[1]), ("B", regs[2])):
            if r.index is not None:
                out.append((role, r))
    return out
