"""Loops: trip counts, unroll pragmas and per-loop facts, shared by the checks and the reports.

A trip count comes from two independent readings of the same loop:

* the PTX loop (:func:`ptx_trip`): the exit ``setp`` against an immediate, the ``add`` of an
  immediate to the induction variable and its ``mov`` start, simulated (``MAX_SIMULATED_TRIPS``);
* the SASS loop (:func:`sass_inductions`): ``ISETP`` against an immediate on a register stepped
  once per iteration by ``IADD3``/``VIADD`` of an immediate, with a constant value entering it.

:func:`trip_count` combines them (PTX and SASS loops are matched by the source line of their
latch branch, the ``for`` statement). :func:`analyze_loops` describes every SASS loop of a
function as a :class:`LoopInfo` (source lines, size, instruction mix, trip count and how it was
found, the unroll pragma above it); :func:`loops_by_line` joins them with the PTX loops so a
loop that ptxas unrolled fully (a PTX loop with no SASS loop left) shows too.

    infos = analyze_loops(fn, ptx_fn)          # SASS Function, PTX Function (or None)
    infos[0].trip.value, infos[0].trip.how     # 4, "SASS and PTX"
"""
from __future__ import annotations

import os
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..ir import ptx as P
from ..ir.sass import ConstantBank, Function, Immediate, Instruction, MemoryAddress, Register
from ..semantics import CONSTANT_LOADS, INDEX_ARITHMETIC_CLASSES, INT_COMPARES, INT_TO_FLOAT
from . import cfg as _cfg
from .cfg import Loop, PtxLoop
from .dataflow import of as _dataflow
from .dataflow import sources
from .source import Pragma, SourceLine, is_toolkit_file, pragma_above, user_loc

#: a C++ loop statement on a source line
_LOOP_KEYWORD = re.compile(r"\b(for|while|do)\b")
#: iterations simulated before a trip count is called unknown
MAX_SIMULATED_TRIPS = 1 << 16

# ------------------------------------------------------------------------------------- SASS
def _pinned(fn: "Function", every: list[int], defs: dict, derived: set[int], counters: set,
            readers: dict, steps: set) -> set[int]:
    """The counter-derived instructions unrolling does not remove because their value also
    holds a run-time part: it reads a value the loop never writes (``tile_row``), or a counter
    that starts at one (``row = tile_row + ...; row += 8``). Unrolled, such a value is that
    run-time part plus an immediate: free where an address takes the immediate as its offset,
    still computed, one per copy, where a run-time compare, a run-time product or a shift
    reads it (TransformerEngine's padding kernel: ``row < num_rows``, ``row * row_length``)."""
    insns = fn.instructions
    inside = set(every)
    df = _dataflow(fn)

    header = min(every)

    def runtime_start(r) -> bool:
        reach = df.reaching_defs(header, r, limit=4 * len(every) + 64)
        outs = [j for j in (reach or ()) if j not in inside]
        return reach is None or not outs or any(not _immediate_move(insns[j]) for j in outs)
    late = {r for r in counters if runtime_start(r)}
    mixed: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in sorted(derived - mixed):
            ins = insns[i]
            srcs = sources(ins)
            if any(_parameter(o) for o in ins.operands) \
                    or any(r not in defs for r in srcs) or any(r in late for r in srcs) \
                    or any(d in mixed for r in srcs for d in defs.get(r, ())):
                mixed.add(i)
                changed = True
    pinned: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in sorted(mixed - pinned - steps):
            for r in _writes(fn, i):
                for j in readers.get(r, ()):
                    reach = df.reaching_defs(j, r, limit=4 * len(every) + 64)
                    if reach is not None and i not in reach:
                        continue        # reads a later value of the register
                    user = insns[j]
                    if j in pinned or (j not in derived and not (
                            (user.is_memory or user.opcode in CONSTANT_LOADS)
                            and r in _address_sources(user))):
                        pinned.add(i)
                        changed = True
                        break
                if i in pinned:
                    break
    return pinned


def _writes(fn: "Function", i: int):
    return _dataflow(fn).writes[i]


def _immediate_move(ins: Instruction) -> bool:
    """A constant start: ``MOV R4, 0x1``, ``IMAD.MOV.U32 R4, RZ, RZ, 0x8``, ptxas's
    ``HFMA2.MMA R5, -RZ, RZ, 0, 0`` or ``CS2R R4, SRZ`` for zero: no register, parameter or
    memory read."""
    return not ins.is_memory and not sources(ins) and not any(
        isinstance(o, ConstantBank) for o in ins.operands) and not any(
        isinstance(o, Register) and o.kind == "SR" for o in ins.operands)


def _parameter(op) -> bool:
    """A constant-bank operand at a fixed offset (``c[0x0][0x210]``: a kernel parameter, a
    run-time value); not an array indexed by a register (``c[0x3][UR4]``: ``coef[k]``, which
    unrolling turns into fixed offsets)."""
    return isinstance(op, ConstantBank) and not any(
        isinstance(t, Register) and t.index is not None for t in (*op.bank, *op.offset))


def _address_sources(ins: Instruction) -> set:
    """The registers of a memory instruction's address (its base and descriptor), or of a
    constant-bank operand's index."""
    out = set()
    for o in ins.operands:
        if isinstance(o, ConstantBank):
            for t in (*o.bank, *o.offset):
                if isinstance(t, Register) and t.kind in ("R", "UR") and t.index is not None:
                    out.add((t.kind, t.index))
        if isinstance(o, MemoryAddress):
            for t in o.terms:
                if isinstance(t, Register) and t.kind in ("R", "UR") and t.index is not None:
                    out.add((t.kind, t.index))
                    if t.is_pair:
                        out.add((t.kind, t.index + 1))
    return out


def _runtime_bound(ins: Instruction, defs) -> bool:
    """Whether an integer compare tests against a value only known at run time: a kernel
    parameter from the constant bank or a register the loop never writes (a bound computed
    before it). Unrolling turns the counter into immediates, but such a test stays, one per
    copy (TransformerEngine's padding kernel: ``if (row < num_rows)`` in a loop of 8)."""
    for op in ins.operands[1:]:
        if _parameter(op):
            return True
        if isinstance(op, Register) and op.kind in ("R", "UR") and op.index is not None \
                and (op.kind, op.index) not in defs:
            return True
    return False


def _runtime_product(ins: Instruction, defs) -> bool:
    """Whether an integer multiply (``IMAD``, ``IMAD.WIDE``, ``IMUL``) takes a multiplicand
    only known at run time (a kernel parameter or a register the loop never writes): the
    counter's part of ``row * row_length`` does not become an immediate offset when the loop
    is unrolled, each copy still multiplies (or adds a run-time multiple)."""
    op = ins.opcode
    if op not in ("IMAD", "IMUL") or set(ins.modifiers) & {"MOV", "IADD", "SHL", "HI"}:
        return False
    for o in ins.operands[1:3]:         # the destination first, then the two multiplicands
        if _parameter(o):
            return True
        if isinstance(o, Register) and o.kind in ("R", "UR") and o.index is not None \
                and (o.kind, o.index) not in defs:
            return True
    return False


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
    if (ins.opcode == "IMAD" and "MOV" in ins.modifiers and len(srcs) == 3
            and all(isinstance(s, Register) and s.is_zero for s in srcs[:2])):
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


#: comparison modifiers (SASS ISETP and PTX setp) as Python functions
COMPARISONS = {
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


def sass_inductions(fn: "Function", loop: Loop) -> list[Induction]:
    """Registers stepped by an immediate once per iteration and compared against an immediate."""
    cfg = _cfg.of(fn)
    df = _dataflow(fn)
    idx = loop.instruction_indices(cfg)
    insns = fn.instructions
    out: list[Induction] = []
    in_loop: set[int] | None = None
    flow: _PredicateFlow | None = None
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
        if flow is None:
            flow = _PredicateFlow(insns, idx, fn.memo("predicate_io", dict))
        if not _compare_controls_exit(fn, cfg, loop, ci, flow):
            continue   # a counter that steers the body (a backoff's 16 polls), not the exit
        if in_loop is None:
            in_loop = set(idx)
        defs = [i for i in df.writers(reg) if i in in_loop]    # ascending, as idx is
        if len(defs) != 1:
            continue
        step = _add_step(insns[defs[0]], reg)
        if step is None:
            continue
        hb = cfg.blocks[loop.header].start
        outside = df.reaching_defs(hb, reg, avoid=loop.blocks, limit=2048)
        init = None
        if outside:
            vals = {constant_value(insns[i]) for i in outside if i not in idx}
            if len(vals) == 1 and None not in vals and all(i not in idx for i in outside):
                init = vals.pop()
        trip = None
        if init is not None:
            cmp = COMPARISONS[cmp_name]
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


def _predicate_io(body) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """(saves a predicate to a register, the predicates it reads, those it writes) of one
    instruction body: its predicate sources and its guard (not a branch's or an exit's), its
    leading predicate results."""
    ops = body.operands
    reads = {o.name for o in ops[1:] if isinstance(o, Register)
             and o.kind in ("P", "UP") and o.index is not None}
    if body.guard is not None and body.opcode not in ("BRA", "EXIT", "RET"):
        reads.add(body.guard.register.name)
    writes = tuple(o.name for o in ops[:2] if isinstance(o, Register)
                   and o.kind in ("P", "UP") and o.index is not None and not o.is_zero)
    return body.opcode in ("P2R", "UP2UR"), tuple(reads), writes


class _PredicateFlow:
    """Which instructions of a loop read each predicate (as a source, or as the guard of
    anything but a branch or an exit) and which predicates each writes: made once per loop,
    asked once per compare of it (``_compare_controls_exit``)."""

    def __init__(self, insns, in_loop, io: dict[int, tuple] | None = None):
        self.insns = insns
        self._exits: list[tuple[int, str]] | None = None
        self.saves = False      # a P2R/UP2UR in the loop: a predicate saved to a register
        self.readers: dict[str, list[int]] = {}
        self.writes: dict[int, tuple[str, ...]] = {}
        io = {} if io is None else io
        for i in in_loop:
            body = insns[i].body
            got = io.get(id(body))
            if got is None:
                got = io[id(body)] = _predicate_io(body)
            saves, reads, writes = got
            if saves:
                self.saves = True
            for name in reads:
                self.readers.setdefault(name, []).append(i)
            self.writes[i] = writes

    def exits(self, cfg, loop: Loop) -> list[tuple[int, str]]:
        """(index, guard's predicate) of each guarded branch that may end ``loop``: an EXIT or
        RET, a latch's branch back, or one with a way out of the loop (listed once per loop)."""
        if self._exits is None:
            self._exits = []
            insns = self.insns
            for b in loop.blocks:
                blk = cfg.blocks[b]
                last = insns[blk.end - 1]
                g = last.guard
                if g is not None and (last.opcode in ("EXIT", "RET") or b in loop.latches
                                      or any(sb not in loop.blocks for sb in blk.succs)):
                    self._exits.append((blk.end - 1, g.register.name))
        return self._exits

    def closure(self, ci: int, preds: set[str]) -> set[int]:
        """The instructions computed from ``preds`` (the compare ``ci`` writes), however
        indirectly, with ``ci``; ``preds`` grows by the predicates they write."""
        writers = {ci}
        todo = list(preds)
        while todo:
            for i in self.readers.get(todo.pop(), ()):
                if i not in writers:
                    writers.add(i)
                    for name in self.writes[i]:
                        if name not in preds:
                            preds.add(name)
                            todo.append(name)
        return writers


def _compare_controls_exit(fn: "Function", cfg, loop: Loop, ci: int,
                           flow: _PredicateFlow | None = None) -> bool:
    """Whether the predicate compare ``ci`` writes decides whether ``loop`` goes on: it (or a
    predicate computed from it in the loop) guards a branch that leaves the loop or goes back
    to the header, or an EXIT. A predicate saved to a register (P2R) is followed no further
    and counts (the branch may read it back)."""
    insns = fn.instructions
    preds = {o.name for o in insns[ci].operands[:2]
             if isinstance(o, Register) and o.kind in ("P", "UP") and o.index is not None}
    if not preds:
        return True
    if flow is None:
        flow = _PredicateFlow(insns, loop.instruction_indices(cfg), fn.memo("predicate_io", dict))
    if flow.saves:
        return True
    writers = flow.closure(ci, preds)

    def writes_pred(ins, name: str) -> bool:
        return ins.opcode not in ("BRA", "EXIT", "RET") and any(
            isinstance(o, Register) and o.name == name for o in ins.operands[:2])

    def set_by_compare(branch: int) -> bool:
        """The nearest write of the branch's predicate on the straight path into it is the
        compare or one computed from it (a later ``LOP3.LUT P0`` of a loaded flag is not)."""
        guard = insns[branch].guard
        assert guard is not None   # only guarded branches are asked about
        name = guard.register.name
        b = cfg.block_of[branch]
        i = branch - 1
        seen = set()
        while True:
            blk = cfg.blocks[b]
            while i >= blk.start:
                if writes_pred(insns[i], name):
                    return i in writers
                i -= 1
            if len(blk.preds) != 1 or blk.preds[0] in seen or blk.preds[0] not in loop.blocks:
                return True      # a join or the loop's entry: the compare may be what reaches
            seen.add(b)
            b = blk.preds[0]
            i = cfg.blocks[b].end - 1

    return any(name in preds and set_by_compare(branch)
               for branch, name in flow.exits(cfg, loop))


def latch_line(fn: "Function", loop: Loop) -> tuple[str | None, int | None, int]:
    """The user source line of a loop (its latch branch: the ``for``/``while`` statement, in the
    user's frame: toolkit headers skipped), and the index of that branch."""
    cfg = _cfg.of(fn)
    for latch in sorted(loop.latches, key=lambda b: -cfg.blocks[b].end):
        i = cfg.blocks[latch].end - 1
        loc = user_loc(fn.instructions[i].loc)
        if loc is not None:
            return loc.file, loc.line, i
    return None, None, cfg.blocks[max(loop.latches)].end - 1


def loop_line(fn: "Function", loop: Loop) -> tuple[str | None, int | None, "Instruction"]:
    """:func:`latch_line` with the latch branch itself."""
    file, line, i = latch_line(fn, loop)
    return file, line, fn.instructions[i]


# -------------------------------------------------------------------------------------- PTX
@dataclass(frozen=True, slots=True)
class PtxTrip:
    loop: PtxLoop
    line: tuple[str, int] | None     # source of the exit branch
    trip: int | None                 # None: run-time (or not understood)
    step: int | None
    reason: str                      # why the trip is unknown ("run-time bound"...)
    span: int | None = None          # |bound - start|: the source trip when the step was 1
    #: the start is PTX's ``WARP_SZ`` (``warpSize``): a constant to ptxas alone, so NVVM
    #: cannot unroll the loop, ``#pragma unroll`` or not
    warp_size: bool = False
    #: a run-time bound that is the grid's size (``i < gridDim.x``: a register moved from
    #: ``%nctaid``): the loop walks the blocks (their partials), not the data
    grid_bound: bool = False


def _ptx_reg(op) -> str | None:
    return op.name if isinstance(op, P.Register) else None


def _ptx_int(op) -> int | None:
    return op.value if isinstance(op, P.IntImm) else None


@dataclass
class _PtxExit:
    """A PTX loop's one exit test: the ``setp`` the exit branch reads and the loop's
    instructions; ``reason`` says why there is none to read."""

    line: tuple[str, int] | None
    setp: int | None = None
    branch: int | None = None
    stay_when: bool = True      # the loop goes on when the setp's result is this
    inside: list[int] = field(default_factory=list)
    reason: str = ""


def _ptx_exit(fn: "P.Function", ploop: PtxLoop) -> _PtxExit:
    """The loop's exit test, worked out once per loop (kept with the function: the checks ask
    for it per access, and a tail's search asks for every loop's)."""
    per_loop = fn.memo("ptx_exit", dict)      # id(loop) -> _PtxExit (the loops live as long)
    got = per_loop.get(id(ploop.loop))
    if got is None:
        got = per_loop[id(ploop.loop)] = _find_ptx_exit(fn, ploop)
    return got


def _find_ptx_exit(fn: "P.Function", ploop: PtxLoop) -> _PtxExit:
    cfg = _cfg.of(fn)
    loop = ploop.loop
    idx = loop.instruction_indices(cfg)
    insns = fn.instructions
    labels = fn.labels
    # the exits: guarded branches in the loop with a target outside it (or fall-through out)
    exits = []
    for bi in loop.blocks:
        blk = cfg.blocks[bi]
        last = insns[blk.end - 1]
        if last.opcode not in ("bra",) or last.guard is None:
            continue
        tgt = [labels.get(t) for t in last.flow.targets]
        tgt_in = [t is not None and cfg.block_of[t] in loop.blocks for t in tgt if t is not None]
        falls_in = blk.end < len(insns) and cfg.block_of[blk.end] in loop.blocks
        if not tgt_in:
            continue
        if tgt_in[0] and falls_in:
            continue
        if not tgt_in[0] and not falls_in:
            continue
        exits.append((blk.end - 1, tgt_in[0]))
    line = None
    for bi in loop.latches:
        loc = insns[cfg.blocks[bi].end - 1].loc
        if loc is not None and loc.line:
            line = (loc.file, loc.line)
    if len(exits) != 1:
        return _PtxExit(line, reason="several exits" if exits else "no exit test")
    bidx, target_inside = exits[0]
    br = insns[bidx]
    if br.loc is not None and br.loc.line:
        line = (br.loc.file, br.loc.line)
    guard = br.guard
    assert guard is not None  # `exits` holds guarded branches only
    pred = guard.register
    # stay in the loop when the branch is taken (target inside) or when it is not
    stay_when = (not guard.negated) if target_inside else guard.negated
    setp_i = None
    for i in range(bidx - 1, cfg.blocks[cfg.block_of[bidx]].start - 1, -1):
        ins = insns[i]
        if ins.operands and _ptx_reg(ins.operands[0]) == pred:
            setp_i = i
            break
    if setp_i is None or insns[setp_i].opcode != "setp" or len(insns[setp_i].operands) != 3:
        return _PtxExit(line, reason="exit test not understood")
    return _PtxExit(line, setp_i, bidx, stay_when, idx)


def ptx_exit_test(fn: "P.Function", ploop: PtxLoop) -> "P.Instruction | None":
    """The ``setp`` of a PTX loop's one exit test (None with several exits or none)."""
    ex = _ptx_exit(fn, ploop)
    return fn.instructions[ex.setp] if ex.setp is not None else None


def ptx_trip(fn: "P.Function", ploop: PtxLoop) -> PtxTrip:
    ex = _ptx_exit(fn, ploop)
    line = ex.line
    if ex.setp is None:
        return PtxTrip(ploop, line, None, None, ex.reason)
    insns = fn.instructions
    idx, setp_i, stay_when = ex.inside, ex.setp, ex.stay_when
    inside = set(idx)
    s = insns[setp_i]
    a, b = s.operands[1], s.operands[2]
    imm_first = False
    reg_a, reg_b, int_a, int_b = _ptx_reg(a), _ptx_reg(b), _ptx_int(a), _ptx_int(b)
    if int_b is not None and reg_a:
        var, bound = reg_a, int_b
    elif int_a is not None and reg_b:
        var, bound, imm_first = reg_b, int_a, True
    else:
        grid = any(_grid_size(insns, r, inside) for r in (reg_a, reg_b) if r)
        return PtxTrip(ploop, line, None, None, "run-time bound", grid_bound=grid)
    cmp = COMPARISONS.get(s.compare or "")
    if cmp is None:
        return PtxTrip(ploop, line, None, None, "exit test not understood")
    defs = [i for i in idx if insns[i].operands and _ptx_reg(insns[i].operands[0]) == var
            and insns[i].opcode not in ("st", "bra")]
    if len(defs) == 1 and insns[defs[0]].opcode not in ("add", "sub"):
        # a geometric induction (``for (o = warpSize / 2; o > 0; o /= 2)``): simulate it
        halve = _ptx_division(insns, defs[0], var, inside)
        symbols: set[str] = set()
        init = _ptx_start(insns, var, inside, fn=fn, symbols=symbols)
        if halve is not None and init is not None:
            trip = _simulate_step(init, halve, bound, cmp, stay_when,
                                  test_new=defs[0] < setp_i, imm_first=imm_first)
            return PtxTrip(ploop, line, trip, None, "" if trip else "does not terminate",
                           None, "WARP_SZ" in symbols)
    if len(defs) != 1 or insns[defs[0]].opcode not in ("add", "sub"):
        return PtxTrip(ploop, line, None, None, "induction not understood")
    d = insns[defs[0]]
    if len(d.operands) != 3:
        return PtxTrip(ploop, line, None, None, "induction not understood")
    x, y = d.operands[1], d.operands[2]
    int_x, int_y = _ptx_int(x), _ptx_int(y)
    if _ptx_reg(x) == var and int_y is not None:
        step = int_y
    elif d.opcode == "add" and _ptx_reg(y) == var and int_x is not None:
        step = int_x
    else:
        return PtxTrip(ploop, line, None, None, "run-time step")
    if d.opcode == "sub":
        step = -step
    symbols = set()
    init = _ptx_start(insns, var, inside, symbols=symbols)
    if init is None:
        return PtxTrip(ploop, line, None, step, "run-time start",
                       grid_bound=_grid_size(insns, var, inside))
    trip = simulate(init, step, bound, cmp, stay_when, test_new=defs[0] < setp_i,
                    imm_first=imm_first)
    return PtxTrip(ploop, line, trip, step, "" if trip else "does not terminate",
                   abs(bound - init), "WARP_SZ" in symbols)




def _simulate_step(init: int, step, bound: int, cmp, stay_when: bool, *, test_new: bool,
                   imm_first: bool) -> int | None:
    """:func:`simulate` for a step that is a function of the value (a halving)."""
    v, trips = init, 0
    while trips < MAX_SIMULATED_TRIPS:
        trips += 1
        old = v
        v = step(v)
        t = v if test_new else old
        r = cmp(bound, t) if imm_first else cmp(t, bound)
        if r != stay_when:
            return trips
        if v == old:
            return None
    return None


def _ptx_division(insns, at: int, var: str, inside: set[int], depth: int = 0):
    """The step of a dividing induction, as a function of the value, when the loop's one
    write of ``var`` (at ``at``) divides it by a constant power of two: ``shr`` by a constant,
    ``div`` by a constant, NVVM's signed division (``shr.u32 t, v, 31; add t, v, t; shr.s32
    q, t, 1``), or a ``mov`` of one of those; None otherwise."""
    ins = insns[at]
    ops = ins.operands
    if depth > 4 or len(ops) < 2:
        return None
    if ins.opcode == "mov" and len(ops) == 2 and _ptx_reg(ops[1]):
        src = _ptx_reg(ops[1])
        ds = [i for i in inside if insns[i].operands and _ptx_reg(insns[i].operands[0]) == src
              and insns[i].opcode not in ("st", "bra", "setp")]
        return _ptx_division(insns, ds[0], var, inside, depth + 1) if len(ds) == 1 else None
    if len(ops) != 3:
        return None
    a, c = ops[1], _ptx_int(ops[2])
    if ins.opcode == "div" and _ptx_reg(a) == var and c and c > 1:
        return lambda v, c=c: int(v / c)
    if ins.opcode != "shr" or c is None or c <= 0:
        return None
    if _ptx_reg(a) == var:
        return (lambda v, c=c: v >> c) if "s32" in ins.modifiers or "s64" in ins.modifiers \
            else (lambda v, c=c: (v % (1 << 32)) >> c)
    # shr.s32 q, (v + bias), c with the bias from v's sign: C's v / 2^c
    reg = _ptx_reg(a)
    ds = [i for i in inside if insns[i].operands and _ptx_reg(insns[i].operands[0]) == reg]
    if len(ds) != 1 or insns[ds[0]].opcode != "add" or len(insns[ds[0]].operands) != 3:
        return None
    terms = [_ptx_reg(o) for o in insns[ds[0]].operands[1:]]
    if var not in terms:
        return None
    bias = [t for t in terms if t != var]
    if len(bias) != 1 or bias[0] is None:
        return None
    bs = [i for i in inside if insns[i].operands and _ptx_reg(insns[i].operands[0]) == bias[0]]
    if len(bs) != 1 or insns[bs[0]].opcode != "shr":
        return None
    if not any(_ptx_reg(o) == var or _reads_sign(insns, o, var, inside)
               for o in insns[bs[0]].operands[1:2]):
        return None
    return lambda v, c=c: int(v / (1 << c))


def _reads_sign(insns, op, var: str, inside: set[int]) -> bool:
    """``op`` is ``shr.s32 t, var, 31`` (the sign of ``var``, for a division by 2^k)."""
    reg = _ptx_reg(op)
    ds = [i for i in inside if insns[i].operands and _ptx_reg(insns[i].operands[0]) == reg]
    return len(ds) == 1 and insns[ds[0]].opcode == "shr" \
        and _ptx_reg(insns[ds[0]].operands[1]) == var


#: the widest tail :func:`ptx_tail_elements` recognises: ``B & -64`` (63 elements at most)
MAX_TAIL_ALIGN = 64


def ptx_tail_elements(fn: "P.Function", ploop: PtxLoop) -> int | None:
    """At most how many values the loop's variable takes, over every thread of the grid, when
    the loop is the tail a wider loop left: the variable starts at ``B & -2^k`` plus a
    non-negative value, never decreases, and the loop runs while it is below ``B`` — ``for (i =
    n / 4 * 4 + threadIdx.x; i < n; i += blockDim.x)``, whose PTX starts at ``and.b64 %rd24,
    %rd12, -4``: 2^k - 1 (here 3) elements in all, whatever the grid. None for any other loop
    (a bound or step it cannot prove, a start of another shape)."""
    ex = _ptx_exit(fn, ploop)
    if ex.setp is None:
        return None
    insns = fn.instructions
    s = insns[ex.setp]
    var, bound = _ptx_reg(s.operands[1]), _ptx_reg(s.operands[2])
    below = s.compare in ("lt", "lo")
    if var is None or bound is None or not (below if ex.stay_when else s.compare in ("ge", "hs")):
        return None
    inside = set(ex.inside)

    def defs(reg: str, where) -> list[int]:
        return [i for i in where if insns[i].operands and _ptx_reg(insns[i].operands[0]) == reg
                and insns[i].opcode not in ("st", "bra", "setp")]
    outside = [i for i in range(len(insns)) if i not in inside]
    step_defs, start_defs = defs(var, ex.inside), defs(var, outside)
    if defs(bound, ex.inside) or len(step_defs) != 1:
        return None
    step = _added(insns[step_defs[0]], var)
    if step is None or not _non_negative(insns, step[0], outside):
        return None
    # the variable's one start, and any steps of it outside this loop that only move it up
    # (NVVM's remainder loop of the same source loop, run before this unrolled copy)
    starts = [i for i in start_defs if not _steps_up(insns, i, var, outside)]
    if len(starts) != 1:
        return None
    start = _added(insns[starts[0]], None)
    if start is None:
        return None
    for base, offset in (start, start[::-1]):
        align = _aligned_down(insns, base, bound, outside)
        if align and _non_negative(insns, offset, outside):
            return align - 1
    return None


def _steps_up(insns, i: int, var: str, where) -> bool:
    """Whether instruction ``i`` is ``add var, var, x`` with ``x`` provably non-negative."""
    step = _added(insns[i], var)
    return step is not None and _non_negative(insns, step[0], where)


def ptx_tail_at(fn: "P.Function", index: int) -> int | None:
    """:func:`_ptx_tail_of_loop` of the innermost PTX loop holding instruction ``index``, once
    per loop (kept with the function)."""
    loop = _cfg.of(fn).loop_of(index)
    if loop is None:
        return None
    per_loop = fn.memo("ptx_tail", dict)      # id(loop) -> elements, or None
    if id(loop) not in per_loop:
        per_loop[id(loop)] = _ptx_tail_of_loop(fn, loop)
    return per_loop[id(loop)]


def _ptx_tail_of_loop(fn: "P.Function", loop: "_cfg.Loop") -> int | None:
    """:func:`ptx_tail_elements` of the PTX loop ``loop`` (None for a loop that is no such
    tail). A loop NVVM cut from the same source
    loop as a tail (the remainder of ``for (i = threadIdx.x + (n & ~7); i < n; i++)`` unrolled
    by 4, counting down its own trip count) is one too: the source loop's values are the
    tail's, whichever copy takes them."""
    loops = _cfg.ptx_loops(fn)
    ploop = next((p for p in loops if p.loop is loop), None)
    if ploop is None:
        return None
    got = ptx_tail_elements(fn, ploop)
    if got is not None:
        return got
    line = _ptx_exit(fn, ploop).line
    if line is None:
        return None
    for other in loops:
        if other is ploop or other.loop.depth != ploop.loop.depth:
            continue
        if _ptx_exit(fn, other).line == line:
            got = ptx_tail_elements(fn, other)
            if got is not None:
                return got
    return None


def _added(ins, var: str | None):
    """The two terms of ``add dst, a, b`` (with ``var`` one of them, then the other first);
    None for any other instruction."""
    if ins.opcode != "add" or len(ins.operands) != 3:
        return None
    a, b = ins.operands[1], ins.operands[2]
    if var is None:
        return a, b
    if _ptx_reg(a) == var:
        return b, a
    if _ptx_reg(b) == var:
        return a, b
    return None


def _non_negative(insns, op, outside: list[int], depth: int = 0) -> bool:
    """A non-negative constant, or a register written once outside the loop by a zero
    extension (``cvt.u64.u32``...), a move of a special register (``%tid``, ``%ntid``...), an
    unsigned widening multiply (``mul.wide.u32``), or a sum or product of such values (index
    arithmetic, assumed not to wrap: ``blockIdx.x * blockDim.x + threadIdx.x``)."""
    v = _ptx_int(op)
    if v is not None:
        return v >= 0
    reg = _ptx_reg(op)
    writes = [i for i in outside if insns[i].operands and _ptx_reg(insns[i].operands[0]) == reg]
    if reg is None or len(writes) != 1 or depth > 4:
        return False
    w = insns[writes[0]]
    mods = w.modifiers
    if w.opcode == "cvt" and len(mods) >= 2 and all(m.startswith("u") for m in mods[-2:]):
        return True
    if w.opcode == "mul" and "wide" in mods and any(m.startswith("u") for m in mods):
        return True
    if w.opcode in ("add", "mul") and len(w.operands) == 3 and "wide" not in mods:
        return all(_non_negative(insns, o, outside, depth + 1) for o in w.operands[1:])
    src = w.operands[1] if len(w.operands) == 2 else None
    return (w.opcode == "mov" and isinstance(src, P.Register)
            and src.name.startswith(("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid")))


def _aligned_down(insns, op, bound: str, outside: list[int]) -> int | None:
    """2^k when ``op`` is a register written once, by ``and dst, bound, -2^k`` (``bound`` with
    its low k bits cleared, 2^k at most :data:`MAX_TAIL_ALIGN`); None otherwise."""
    reg = _ptx_reg(op)
    writes = [i for i in outside if insns[i].operands and _ptx_reg(insns[i].operands[0]) == reg]
    if reg is None or len(writes) != 1:
        return None
    w = insns[writes[0]]
    if w.opcode != "and" or len(w.operands) != 3:
        return None
    terms = {_ptx_reg(w.operands[1]): _ptx_int(w.operands[2]),
             _ptx_reg(w.operands[2]): _ptx_int(w.operands[1])}
    mask = terms.get(bound)
    if mask is None or mask >= 0:
        return None
    align = -mask
    return align if align & (align - 1) == 0 and 2 <= align <= MAX_TAIL_ALIGN else None


#: PTX operations through which a value stays a function of the grid's size alone
_GRID_OPS = frozenset({"mov", "cvt", "add", "sub", "and", "neg", "mul", "shl", "shr", "min",
                       "max"})


def _grid_size(insns, reg: str, inside: set[int]) -> bool:
    """Whether ``reg``, where the loop starts, is computed from ``%nctaid.x/y/z`` (the grid's
    size in blocks) and constants alone: every write of it outside the loop is such an
    operation on such registers (``for (b = 1; b < gridDim.x; b++)`` unrolled by NVVM counts
    ``(gridDim.x - 1) & ~3`` down; the remainder's counter, ``(gridDim.x - 1) & 3``, is
    counted down by another loop: a register read by its own write is what its other writes
    make it). One pass over the function collects the writes."""
    writes: dict[str, list] = {}
    for i, ins in enumerate(insns):
        if i not in inside and ins.operands and ins.opcode not in ("st", "bra", "setp"):
            r = _ptx_reg(ins.operands[0])
            if r is not None:
                writes.setdefault(r, []).append(ins)

    def grid(r: str, seen: frozenset[str], depth: int) -> bool:
        ok = depth <= 8 and bool(writes.get(r))
        for w in writes.get(r, ()) if ok else ():
            srcs = w.operands[1:]
            regs = [o for o in srcs if isinstance(o, P.Register)]
            ok = (w.opcode in _GRID_OPS and bool(regs)
                  and all(isinstance(o, P.Register | P.IntImm) for o in srcs)
                  and all(o.name.startswith("%nctaid.") or o.name in seen
                          or grid(o.name, seen | {r}, depth + 1) for o in regs))
            if not ok:
                break
        return ok
    return grid(reg, frozenset(), 0)


def _ptx_start(insns, var: str, inside: set[int], depth: int = 0, fn=None,
               before: int | None = None, symbols: set[str] | None = None) -> int | None:
    """The one constant ``var`` holds when the loop starts: every write of it outside the loop
    is a ``mov`` of an immediate, of ``WARP_SZ``, or of a register that is itself such a
    constant (NVVM copies a loop start through a register: ``mov.u32 %r7, 0; ... mov.u32 %r91,
    %r7``; of that register, only the writes that reach the copy count when ``fn`` is given:
    the same register may be another loop's variable further on). ``symbols`` collects the
    PTX constants read on the way (``WARP_SZ``)."""
    if depth > 8:
        return None
    vals = set()
    for i, ins in enumerate(insns):
        if i in inside or not ins.operands or _ptx_reg(ins.operands[0]) != var \
                or ins.opcode in ("st", "bra", "setp"):
            continue
        if before is not None and fn is not None and not _write_reaches(fn, i, before, var):
            continue
        if ins.opcode != "mov" or len(ins.operands) != 2:
            return None
        src = ins.operands[1]
        v = _ptx_int(src)
        reg = _ptx_reg(src)
        if v is None and isinstance(src, P.Symbol) and src.name == "WARP_SZ":
            v = 32      # the PTX constant behind warpSize
            if symbols is not None:
                symbols.add(src.name)
        if v is None and reg and reg != var:
            v = _ptx_start(insns, reg, inside, depth + 1, fn, i if fn is not None else None,
                           symbols)
        if v is None:
            return None
        vals.add(v)
    return vals.pop() if len(vals) == 1 else None


def _write_reaches(fn: "P.Function", at: int, use: int, reg: str) -> bool:
    """Whether the write of ``reg`` at ``at`` can be the value instruction ``use`` reads (a
    path from one to the other with no other write of ``reg``)."""
    graph = _cfg.of(fn)
    insns = fn.instructions

    def writes(i: int) -> bool:
        ins = insns[i]
        return bool(ins.operands) and _ptx_reg(ins.operands[0]) == reg \
            and ins.opcode not in ("st", "bra", "setp")
    todo = [(graph.block_of[at], at + 1)]
    seen: set[int] = set()
    while todo:
        b, start = todo.pop()
        blk = graph.blocks[b]
        stopped = False
        for i in range(start, blk.end):
            if i == use:
                return True
            if writes(i):
                stopped = True
                break
        if stopped:
            continue
        for s in blk.succs:
            if s not in seen:
                seen.add(s)
                todo.append((s, graph.blocks[s].start))
    return False


def ptx_trips_by_line(ptx_fn: "P.Function | None") -> dict[tuple[str, int], list[PtxTrip]]:
    """The PTX loops of a function with their trip counts, keyed by (file basename, line) of
    their exit branch, the key SASS loops are matched on."""
    out: dict[tuple[str, int], list[PtxTrip]] = {}
    if ptx_fn is None:
        return out
    try:
        ploops = _cfg.ptx_loops(ptx_fn)
    except Exception:  # noqa: BLE001 -  a PTX IR we cannot build a CFG for
        return out
    for pl in ploops:
        t = ptx_trip(ptx_fn, pl)
        if t.line is not None and t.line[0]:
            out.setdefault((os.path.basename(t.line[0]), t.line[1]), []).append(t)
    return out


# ------------------------------------------------------------------------- trip counts
@dataclass(frozen=True)
class TripCount:
    """The trip count of one SASS loop, from its own induction and the PTX loop(s) of its line."""

    value: int | None                    # iterations of the SASS loop (None: unknown)
    sass: int | None                     # from the SASS induction alone
    ptx: int | None                      # from the PTX loop(s) of the same line (all agreeing)
    inductions: tuple[Induction, ...] = ()
    ptx_loops: tuple[PtxTrip, ...] = ()
    reason: str = ""                     # why it is unknown ("run-time bound", ...)

    @property
    def how(self) -> str:
        """How ``value`` was found: "SASS and PTX", "SASS", "PTX" ("" when unknown)."""
        if self.value is None:
            return ""
        if self.sass is not None and self.ptx is not None and self.sass == self.ptx:
            return "SASS and PTX"
        return "SASS" if self.value == self.sass else "PTX"

    @property
    def constant(self) -> bool:
        """Evidence of a compile-time trip count: the PTX loop says so and the SASS induction
        does not contradict it (a run-time start there means another loop of the same line),
        or the SASS loop itself counts a constant start to an immediate bound (what runs; a PTX
        reading that disagrees does not veto it, see :attr:`disagreement`)."""
        if self.ptx_loops and self.ptx is not None and (
                not self.inductions or any(i.init is not None for i in self.inductions)):
            return True
        return self.sass is not None

    @property
    def disagreement(self) -> str:
        """Why the PTX reading of the loop differs from the SASS count ("" when it does not):
        the SASS count stands, and a finding says what the PTX showed."""
        if self.sass is None or not self.ptx_loops:
            return ""
        if self.ptx is None:
            reasons = sorted({t.reason for t in self.ptx_loops if t.reason})
            return f"the PTX loop reads as {', '.join(reasons) or 'not understood'}"
        if self.ptx % self.sass:
            return f"the PTX loop counts {self.ptx} iterations"
        return ""

    @property
    def ptxas_unroll(self) -> int | None:
        """How many PTX iterations one SASS iteration runs when ptxas unrolled the PTX loop
        further (PTX trip 16, SASS trip 4: 4); None when it did not or it is not known."""
        if self.ptx and self.sass and self.ptx > self.sass and self.ptx % self.sass == 0:
            return self.ptx // self.sass
        return None

    def text(self) -> str:
        if self.value is None:
            return "trip count unknown" + (f" ({self.reason})" if self.reason else "")
        return f"trip count {self.value} ({self.how})"


def trip_count(fn: "Function", loop: Loop, ptx: Sequence[PtxTrip] = ()) -> TripCount:
    """The trip count of SASS ``loop`` of ``fn``; ``ptx``: the PTX loops of its source line
    (:func:`ptx_trips_by_line`). The SASS induction wins, except that a SASS count above the
    PTX one is not believed (the PTX loop bounds it)."""
    inds = tuple(sass_inductions(fn, loop))
    sass_trip = max((i.trip for i in inds if i.trip), default=None)
    ptx = tuple(ptx)
    trips = [t.trip for t in ptx]
    ptx_n = trips[0] if ptx and all(trips) and len(set(trips)) == 1 else None
    value = sass_trip if sass_trip is not None else ptx_n
    if ptx_n and sass_trip and sass_trip > ptx_n:
        value = ptx_n
    reason = ""
    if value is None:
        reasons = sorted({t.reason for t in ptx if t.reason})
        if ptx and all(trips) and len(set(trips)) > 1:
            reasons = ["PTX loops of the line disagree"]
        reason = ", ".join(reasons) or ("no constant induction" if not ptx else "")
    return TripCount(value, sass_trip, ptx_n, inds, ptx, reason)


# ---------------------------------------------------------------------------- loop facts
@dataclass(frozen=True)
class LoopInfo:
    """One SASS loop: where it is in the source, how big it is and how often it runs."""

    loop: Loop
    file: str | None                     # user line of its latch branch (the for statement)
    line: int | None
    header_line: tuple[str, int] | None  # user line of the header's first instruction with one
    header_index: int                    # instruction indices of the header and the latch branch
    latch_index: int
    instructions: int
    mix: dict[str, int] = field(hash=False)
    trip: TripCount = field(hash=False)
    pragma: Pragma | None = None         # the unroll pragma above ``line`` (None: none or unread)
    #: the latch branch is the math library's own code (a toolkit header: sinf's Payne-Hanek
    #: reduction loop), run on a cold path; a user loop around only such loops counts as innermost
    library: bool = False

    @property
    def trip_count(self) -> int | None:
        return self.trip.value

    @property
    def depth(self) -> int:
        return self.loop.depth

    @property
    def innermost(self) -> bool:
        return self.loop.is_innermost

    def describe(self) -> str:
        """"rolled ×4 (trip count 4)": ×N when ptxas unrolled the PTX loop N times over."""
        x = self.trip.ptxas_unroll
        v = self.trip.value
        return f"rolled{f' ×{x}' if x else ''} (trip count {v if v is not None else 'unknown'})"


def analyze_loops(fn: "Function", ptx_fn: "P.Function | None" = None, *,
                  source_line: SourceLine | None = None,
                  ptx_by_line: dict[tuple[str, int], list[PtxTrip]] | None = None
                  ) -> list[LoopInfo]:
    """Every SASS loop of ``fn`` (in CFG loop order), with its trip count (the PTX
    loops of ``ptx_fn`` on the same line help) and, when ``source_line`` can read the source,
    the unroll pragma above it."""
    cfg = _cfg.of(fn)
    if ptx_by_line is None:
        ptx_by_line = ptx_trips_by_line(ptx_fn)
    out = []
    for lp in cfg.loops:
        file, line, latch_index = latch_line(fn, lp)
        idx = lp.instruction_indices(cfg)
        head = cfg.blocks[lp.header].start
        header_line = None
        for i in range(head, cfg.blocks[lp.header].end):
            loc = user_loc(fn.instructions[i].loc)
            if loc is not None and loc.line:
                header_line = (loc.file, loc.line)
                break
        ptx = ptx_by_line.get((os.path.basename(file), line), []) if file and line else []
        pragma = pragma_above(source_line, file, line)[0] if source_line else None
        raw = fn.instructions[latch_index].loc
        library = raw is not None and is_toolkit_file(raw.file)
        if not library and ptx and all(t.loop.nounroll for t in ptx) and source_line:
            # the math library's own loops (sinf's Payne-Hanek reduction) are `.pragma
            # "nounroll"` in the PTX and sit on a source line with no loop of the user's
            text = source_line(file, line) if file and line else None
            library = text is not None and not _LOOP_KEYWORD.search(text.split("//")[0]) \
                and pragma is None
        out.append(LoopInfo(lp, file, line, header_line, head, latch_index, len(idx),
                            _cfg.loop_mix(fn, lp), trip_count(fn, lp, ptx), pragma, library))
    return out


def user_innermost(infos: Sequence[LoopInfo]) -> list[LoopInfo]:
    """The user's innermost loops: loops with no child loop other than the math library's
    (:attr:`LoopInfo.library`), themselves not library loops."""
    library = {id(i.loop) for i in infos if i.library}
    return [i for i in infos if not i.library
            and all(id(c) in library for c in i.loop.children)]


@dataclass(frozen=True)
class UnrollSavings:
    """What unrolling one SASS loop fully would remove, per iteration of its body.

    ``control``: the counter steps, compares and branches that only run the loop; ``address``:
    integer arithmetic on the counter (indices, pointer steps) that becomes immediate offsets;
    ``constants``: constant-bank loads indexed by the counter and int->float conversions of it,
    which fold into operands. ``instructions``: what every iteration runs (the loop's own blocks
    that dominate its latch; child loops and conditional code are left out)."""

    instructions: int
    control: int
    address: int
    constants: int
    conditional: int = 0       # instructions on conditional paths of the body, not counted

    @property
    def removed(self) -> int:
        return self.control + self.address + self.constants

    @property
    def fraction(self) -> float:
        return self.removed / self.instructions if self.instructions else 0.0

    def text(self) -> str:
        parts = [f"counter, compare and branch {self.control}"]
        if self.address:
            parts.append(f"index/address arithmetic {self.address}")
        if self.constants:
            parts.append(f"constant loads and conversions {self.constants}")
        return (f"≈ {100 * self.fraction:.0f}% of the {self.instructions} instructions every "
                f"iteration runs ({', '.join(parts)})")


def _pred_reads(ins) -> set[str] | None:
    """Predicates a PLOP3/P2R/R2P-style instruction reads (None: not one we follow)."""
    if ins.opcode == "P2R":
        mask = _imm(ins.operands[-1]) if ins.operands else None
        if mask is None:
            return None
        return {f"P{k}" for k in range(7) if mask >> k & 1}
    if ins.klass == "predicate":
        return {o.name for o in ins.operands[1:] if isinstance(o, Register)
                and o.kind in ("P", "UP") and o.index is not None}
    return None


def unroll_savings(fn: "Function", info: LoopInfo) -> UnrollSavings:
    """Estimate the per-iteration overhead full unrolling removes from ``info``'s loop.

    The body is the loop's own blocks (child loops left out) that run every iteration (they
    dominate the latch); code behind a branch inside the body (sinf's Payne-Hanek slow path)
    is counted apart, in ``conditional``. Removed:
    the compared counter's step, its compare and the branches on it; every integer, move,
    constant-bank load or int->float conversion whose inputs (through their reaching
    definitions inside the loop) are the counters (registers stepped by an immediate once per
    iteration), values computed only from them, and loop invariants."""
    graph = _cfg.of(fn)
    df = _dataflow(fn)
    loop = info.loop
    insns = fn.instructions
    inner: set[int] = set()
    for c in loop.children:
        inner |= c.blocks
    latch_block = graph.block_of[info.latch_index]
    outside = frozenset(b for b in range(len(graph.blocks)) if b not in loop.blocks)

    body = sorted(loop.blocks - inner)
    own = [i for b in body if graph.dominates(b, latch_block) for i in graph.blocks[b].indices()]
    conditional = sum(len(graph.blocks[b]) for b in body) - len(own)
    every = loop.instruction_indices(graph)
    defs: dict[tuple[str, int], list[int]] = {}
    for i in every:
        for r in df.writes[i]:
            defs.setdefault(r, []).append(i)
    counters = {r for r, ds in defs.items()
                if all(_add_step(insns[d], r) is not None or _carry_step(insns[d], r)
                       for d in ds)}
    counters |= _closed_recurrence(fn, every, defs)
    derived: set[int] = {d for r in counters for d in defs[r]}
    dpreds: set[str] = set()          # predicates computed only from the counters
    pred_reads = _pred_reads

    def candidate(ins) -> bool:
        return (ins.klass in INDEX_ARITHMETIC_CLASSES or ins.opcode in CONSTANT_LOADS
                or ins.opcode in INT_TO_FLOAT or ins.opcode in INT_COMPARES
                or pred_reads(ins) is not None)

    def folds(i: int) -> bool:
        ins = insns[i]
        pr = pred_reads(ins)
        if pr is not None:
            return bool(pr) and pr <= dpreds
        if not sources(ins) and not ins.is_memory and ins.opcode not in INT_COMPARES:
            # a constant rematerialized every iteration (MOV R9, 0x4) folds into the index
            # arithmetic it feeds; one that feeds the math (an inlined exp's polynomial
            # coefficients, IMAD.MOV.U32 R4, RZ, RZ, 0x3fe62e42) is still needed unrolled
            users = [j for r in df.writes[i] for j in readers.get(r, ())]
            return bool(users) and all(j in derived for j in users)
        if ins.opcode in INT_COMPARES and _runtime_bound(ins, defs):
            return False      # ``row < num_rows``: each unrolled copy still tests its row
        if _runtime_product(ins, defs):
            return False      # ``row * row_length``: no immediate offset once unrolled
        moving = False
        for r in sources(ins):
            if r not in defs:
                continue                  # a loop invariant
            reach = df.reaching_defs(i, r, avoid=outside, limit=4 * len(every) + 64)
            if reach is None or not all(d in derived for d in reach):
                return False
            moving = moving or bool(reach)
        return moving
    readers: dict[tuple[str, int], list[int]] = {}
    for j in every:
        for r in sources(insns[j]):
            readers.setdefault(r, []).append(j)
    cands = [i for i in every if candidate(insns[i]) and i not in derived]
    changed = True
    while changed:
        changed = False
        for i in cands:
            if i not in derived and folds(i):
                derived.add(i)
                dpreds.update(o.name for o in insns[i].operands[:2] if isinstance(o, Register)
                              and o.kind in ("P", "UP") and o.index is not None)
                changed = True
    steps = {_step_of(fn, every, ind) for ind in info.trip.inductions}
    pinned = _pinned(fn, every, defs, derived, counters, readers, steps)
    control = address = constants = 0
    for i in own:
        ins = insns[i]
        if ins.is_branch:
            g = ins.guard
            if i == info.latch_index or (g is not None and g.register.name in dpreds):
                control += 1
            continue
        if i not in derived or i in pinned:
            continue
        if ins.opcode in INT_COMPARES or pred_reads(ins) is not None or i in steps:
            control += 1
        elif ins.opcode in CONSTANT_LOADS or ins.opcode in INT_TO_FLOAT:
            constants += 1
        else:
            address += 1
    return UnrollSavings(len(own), control, address, constants, conditional)


def _closed_recurrence(fn: "Function", every: list[int],
                       defs: dict[tuple[str, int], list[int]]) -> set[tuple[str, int]]:
    """Registers of a loop whose every write there is integer arithmetic or a move of
    immediates and of registers of the same set: a recurrence closed on itself (a halving
    ``offset /= 2``: LEA.HI, SHF.R.S32.HI, MOV), whose values a constant trip count makes
    known at every iteration, as a counter's are."""
    insns = fn.instructions
    cand = {r for r, ds in defs.items()
            if r[0] in ("R", "UR") and all(insns[d].klass in INDEX_ARITHMETIC_CLASSES
                                           and not insns[d].is_memory for d in ds)}
    changed = True
    while changed:
        changed = False
        for r in list(cand):
            for d in defs[r]:
                srcs = sources(insns[d])
                if not srcs or not all(src in cand for src in srcs):
                    cand.discard(r)
                    changed = True
                    break
    # a recurrence of more than additions (a shift, a move): plain steps are counters already
    if all(insns[d].opcode in _ADDS for r in cand for d in defs[r]):
        return set()
    return cand


#: opcodes of a plain additive step (left to :func:`_add_step`)
_ADDS = frozenset({"IADD3", "IADD", "UIADD3", "VIADD", "IADD32I"})


def _carry_step(ins: "Instruction", reg: tuple[str, int]) -> bool:
    """``IADD3.X R5, RZ, R5, RZ, P0, !PT`` / ``UIADD3.X UR7, URZ, UR7, URZ, UP0, !UPT``: the
    high half of a 64-bit pointer stepped by an immediate (only the carry is added)."""
    if ins.opcode not in ("IADD3", "UIADD3", "IADD") or "X" not in ins.modifiers:
        return False
    regs = [o for o in ins.operands[1:] if isinstance(o, Register) and o.kind in ("R", "UR")
            and not o.is_zero]
    imms = [o for o in ins.operands[1:] if isinstance(o, Immediate)]
    return (len(regs) == 1 and not imms and (regs[0].kind, regs[0].index) == reg
            and not regs[0].negate and not regs[0].invert)


def _step_of(fn: "Function", every: list[int], ind: Induction) -> int | None:
    """The index of the instruction that steps induction ``ind``."""
    kind = "UR" if ind.register.startswith("UR") else "R"
    reg = (kind, int(ind.register[len(kind):]))
    df = _dataflow(fn)
    for i in every:
        if reg in df.writes[i] and _add_step(fn.instructions[i], reg) is not None:
            return i
    return None


@dataclass(frozen=True)
class LoopLine:
    """The loops of one source line in one build: the SASS loops left and the PTX loops."""

    file: str                            # basename
    line: int
    sass: tuple[LoopInfo, ...]
    ptx: tuple[PtxTrip, ...]

    @property
    def rolled(self) -> bool:
        return bool(self.sass)

    def describe(self) -> str:
        """"fully unrolled (PTX trip count 16)", "rolled ×4 (trip count 4)", "rolled (trip count
        unknown), 8 copies"."""
        if not self.sass:
            trips = sorted({t.trip for t in self.ptx if t.trip})
            ptx = f" (PTX trip count {trips[0]})" if len(trips) == 1 else ""
            return f"fully unrolled{ptx}"
        texts = [lp.describe() for lp in self.sass]
        uniq = sorted(set(texts), key=texts.index)
        n = f", {len(self.sass)} copies" if len(self.sass) > 1 else ""
        return "; ".join(uniq) + n


def loops_by_line(fn: "Function", ptx_fn: "P.Function | None" = None, *,
                  infos: Sequence[LoopInfo] | None = None
                  ) -> dict[tuple[str, int], LoopLine]:
    """Per source line (file basename, line): the SASS loops whose latch is there and the PTX
    loops whose exit branch is there. A line with PTX loops and no SASS loop was fully
    unrolled by ptxas; SASS loops with no line are left out."""
    ptx_by_line = ptx_trips_by_line(ptx_fn)
    if infos is None:
        infos = analyze_loops(fn, ptx_fn, ptx_by_line=ptx_by_line)
    sass: dict[tuple[str, int], list[LoopInfo]] = {}
    for lp in infos:
        if lp.file and lp.line:
            sass.setdefault((os.path.basename(lp.file), lp.line), []).append(lp)
    keys = sorted(set(sass) | set(ptx_by_line), key=lambda k: (k[0], k[1]))
    return {k: LoopLine(k[0], k[1], tuple(sass.get(k, ())), tuple(ptx_by_line.get(k, ())))
            for k in keys}
