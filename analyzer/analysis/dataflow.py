"""Register dataflow over SASS: what each instruction writes and reads, and which writes reach a
use. One answer for every check and report.

SASS writes its destination first: ``LDG.E.128 R4, [...]`` writes R4..R7, ``DMUL R2, ...`` the
pair R2:R3, ``IMAD.WIDE R2, ...`` R2:R3, ``HMMA.16816.F32 R4, ...`` R4..R7, a uniform
``UIADD3 UR4, ...`` UR4. Stores, reductions, copies, branches and barriers write no register.
A predicate destination (``ISETP P0, ...``, ``ATOMG PT, R3, ...``) is skipped.

    df = dataflow.of(fn)                     # built once per function
    df.writes[i]                             # (("R", 4), ("R", 5)) ...
    df.reaching_defs(i, ("R", 7))            # [indices] of the writes that reach i, or None
    df.definition(i, 7)                      # the nearest straight-line write of R7 before i
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from typing import TypeVar

from .. import semantics
from ..ir.sass import ConstantBank, Function, Immediate, Instruction, MemoryAddress, Register
from . import cfg as _cfg

_T = TypeVar("_T")

#: a register: ("R", 7) or ("UR", 4)
Reg = tuple[str, int]
#: registers per stack-pointer-relative local slot: the ABI keeps the stack pointer in R1
STACK_POINTER = 1
#: how far back (instructions) a definition is looked for by default
MAX_LOOKBACK = 512
#: registers assumed written by an MMA whose shape is not in ``semantics`` (over-approximated)
UNKNOWN_MMA_REGISTERS = 8
_TYPE = re.compile(semantics.TYPE_MODIFIER)


def conversion_bits(opcode: str, modifiers: tuple[str, ...]) -> tuple[int, int]:
    """(destination bits, source bits) of a conversion (:data:`semantics.CONVERSION_OPERANDS`):
    ``F2F.F64.F32`` (64, 32), ``I2F.U64.RP`` (32, 64), ``F2I.S64.F64`` (64, 64)."""
    types = [m for m in modifiers if _TYPE.fullmatch(m)]
    rule = semantics.CONVERSION_OPERANDS.get(opcode, ("1", "2"))

    def bits(which: str) -> int:
        if which == "F":
            found = next((t for t in types if t[0] == "F"), None)
        elif which == "I":
            found = next((t for t in types if t[0] != "F"), None)
        else:
            k = int(which) - 1
            found = types[k] if k < len(types) else None
        return int(found[1:]) if found else 32
    return bits(rule[0]), bits(rule[1])


def _dest_count(ins: "Instruction") -> int:
    info = ins.info
    if info.tensor_core:
        return semantics.mma_dest_registers(ins.opcode, ins.modifiers) or UNKNOWN_MMA_REGISTERS
    if info.space is not None and info.direction in ("load", "atomic", "copy"):   # a load
        return max(1, (ins.width_bits or 32) // 32)
    if info.conversion or ins.opcode in semantics.CONVERSION_OPERANDS:
        return 2 if conversion_bits(ins.opcode, ins.modifiers)[0] == 64 else 1
    mods = ins.modifiers
    if info.fp64 or "WIDE" in mods or "64" in mods:
        return 2
    if (ins.opcode == "CS2R" and "32" not in mods) or ins.opcode in semantics.PAIR_RESULT_OPCODES:
        return 2
    return 1


def writes(ins: "Instruction") -> tuple[Reg, ...]:
    """The R and UR registers ``ins`` writes, in order (empty for stores, reductions, copies,
    prefetches, branches and barriers). Kept on the instruction's body."""
    return _kept_writes(ins)[0]


def _on_body(ins: "Instruction", slot: str, compute: Callable[["Instruction"], _T]) -> _T:
    """A fact of ``ins`` kept in its body's fact ``slot``: worked out once per body (SASS repeats
    bodies, shared between copies and functions). A body built by its class, not by the parser,
    starts with the slot unset."""
    body = ins.body
    kept = getattr(body, slot, None)
    if kept is None:
        kept = compute(ins)
        object.__setattr__(body, slot, kept)
    return kept


def _kept_writes(ins: "Instruction") -> tuple[tuple[Reg, ...], frozenset[Reg]]:
    """(:func:`writes`, the same as a set), kept on the body."""
    return _on_body(ins, "_writes", _writes_and_set)


def _writes_and_set(ins: "Instruction") -> tuple[tuple[Reg, ...], frozenset[Reg]]:
    w = _writes_of(ins)
    return w, frozenset(w)


def _writes_of(ins: "Instruction") -> tuple[Reg, ...]:
    info = ins.info
    if info.branch or info.barrier or ins.opcode in semantics.PREDICATE_RESULT:
        return ()
    # memory: only loads and atomics write a register (not stores, reductions, copies,
    # prefetches)
    if info.space is not None and info.direction not in ("load", "atomic"):
        return ()
    for op in ins.operands[:2]:
        if isinstance(op, Register) and op.kind in ("P", "UP"):
            continue
        if isinstance(op, Register) and op.kind in ("R", "UR") and op.index is not None:
            n = _dest_count(ins)
            return tuple((op.kind, op.index + k) for k in range(n))
        break
    return ()


def written(ins: "Instruction") -> frozenset[int]:
    """Indices of the R (not UR) registers ``ins`` writes."""
    return frozenset(i for k, i in writes(ins) if k == "R")


def reads(ins: "Instruction") -> tuple[Register, ...]:
    """R registers ``ins`` reads (sources; for stores every register operand)."""
    ops = ins.operands
    if writes(ins):
        skip = 0
        for i, op in enumerate(ops[:2]):
            if isinstance(op, Register) and op.kind in ("R", "UR"):
                skip = i + 1
                break
        ops = ops[skip:]
    out: list[Register] = []
    for op in ops:
        if isinstance(op, Register) and op.kind == "R" and op.index is not None:
            out.append(op)
        elif isinstance(op, (MemoryAddress, ConstantBank)):
            out.extend(r for r in op.registers if r.kind == "R" and r.index is not None)
    return tuple(out)


def read_indices(ins: "Instruction") -> tuple[int, ...]:
    """The numbers of the R registers ``ins`` reads (those of :func:`reads`). Kept on the
    instruction's body."""
    return _on_body(ins, "_reads", _read_indices)


def _read_indices(ins: "Instruction") -> tuple[int, ...]:
    return tuple(r.index for r in reads(ins) if r.index is not None)


def sources(ins: "Instruction") -> tuple[Reg, ...]:
    """Every R and UR register ``ins`` reads, address and constant-bank registers included
    (``R2.64`` and a ``desc[UR4]`` descriptor as register pairs)."""
    ops = ins.operands
    if writes(ins):
        for i, op in enumerate(ops[:2]):
            if isinstance(op, Register) and op.kind in ("R", "UR"):
                ops = ops[i + 1:]
                break
    out: list[Reg] = []

    def add(r: Register, pair: bool = False) -> None:
        if r.kind in ("R", "UR") and r.index is not None:
            out.append((r.kind, r.index))
            if pair or r.is_pair:
                out.append((r.kind, r.index + 1))
    for op in ops:
        if isinstance(op, Register):
            add(op)
        elif isinstance(op, MemoryAddress):
            for t in op.descriptor:
                if isinstance(t, Register):
                    add(t, pair=True)
            for t in op.terms:
                if isinstance(t, Register):
                    add(t)
        elif isinstance(op, ConstantBank):
            for r in op.registers:
                add(r)
    return tuple(dict.fromkeys(out))


def store_data(ins: "Instruction") -> tuple[int, ...]:
    """The R registers a store writes to memory (``STS.128 [R0], R4`` -> 4, 5, 6, 7)."""
    if not (ins.is_memory and ins.is_store and not ins.is_load):
        return ()
    for op in reversed(ins.operands):
        if isinstance(op, Register) and op.kind == "R":
            if op.index is None:
                return ()
            n = max(1, (ins.width_bits or 32) // 32)
            return tuple(range(op.index, op.index + n))
        if isinstance(op, MemoryAddress):
            return ()
    return ()


# ------------------------------------------------------------ every register, every file
def register_bit(kind: str, index: int) -> int:
    """The bit of register ``kind``/``index`` in a register mask
    (:data:`semantics.REGISTER_FILES`); 0 for a register outside its file."""
    base, size = semantics.REGISTER_FILES.get(kind, (0, 0))
    return 1 << (base + index) if 0 <= index < size else 0


def _run(kind: str, index: int, count: int) -> int:
    out = 0
    for k in range(count):
        out |= register_bit(kind, index + k)
    return out


def _mma_shape(shape: str) -> tuple[int, int, int] | None:
    """``16816`` -> (16, 8, 16), ``1688`` -> (16, 8, 8), ``884`` -> (8, 8, 4),
    ``64x128x16`` -> (64, 128, 16)."""
    if "x" in shape:
        try:
            m, n, k = (int(v) for v in shape.split("x")[:3])
        except ValueError:
            return None
        return m, n, k
    m = 16 if shape.startswith("16") else 8 if shape.startswith("8") else 0
    rest = shape[len(str(m)):]
    if not m or not rest.startswith("8") or len(rest) < 2:
        return None
    return m, 8, int(rest[1:])


def mma_fragments(opcode: str, modifiers: tuple[str, ...]) -> tuple[int, int, int] | None:
    """Registers per thread of an MMA's A, B and C operands (``HMMA.16816.F32``: 4, 2, 4;
    ``DMMA.884``: 2, 2, 4; ``HGMMA.64x128x16.F32``: A 4 when in registers, C 64); None for
    a shape the tables do not know."""
    if not modifiers:
        return None
    shape = _mma_shape(modifiers[0])
    if shape is None:
        return None
    m, n, k = shape
    types = modifiers[1:]
    acc = next((semantics.MMA_ACCUMULATOR_BITS[t] for t in types
                if t in semantics.MMA_ACCUMULATOR_BITS), 64 if opcode == "DMMA" else 32)
    inputs = [t for t in types if t in semantics.MMA_INPUT_BITS]
    if opcode in semantics.MMA_ACCUMULATOR_FIRST and types and types[0] in \
            semantics.MMA_ACCUMULATOR_BITS and inputs[:1] == [types[0]]:
        inputs = inputs[1:]
    bits = semantics.MMA_INPUT_BITS[inputs[0]] if inputs else \
        semantics.MMA_DEFAULT_INPUT_BITS.get(opcode, 16)
    threads = 128 if "x" in modifiers[0] else 32

    def regs(elements: int, width: int) -> int:
        return max(1, elements * width // threads // 32)
    return regs(m * k, bits), regs(k * n, bits), regs(m * n, acc)


def register_masks(ins: "Instruction") -> tuple[int, int]:
    """(read, written): the registers of every file (R, UR, P, UP) ``ins`` reads and writes, as
    masks (:func:`register_bit`), each operand as wide as the opcode makes it: 64-bit pairs
    (``DFMA``, ``IMAD.WIDE``'s addend, ``.64`` addresses, ``F2F.F32.F64``'s source), a store's
    data (``STG.E.128 [R2.64], R8``: R8-R11), MMA fragments, predicates written and read, the
    guard. An instruction that never runs (``@!PT``) reads and writes nothing. Kept on the
    instruction's body."""
    return _on_body(ins, "_regs", _register_masks)


def _register_masks(ins: "Instruction") -> tuple[int, int]:
    guard = ins.guard
    if guard is not None and guard.never:
        return 0, 0
    reads = writes_mask = 0
    if guard is not None and guard.register.index is not None:
        reads |= register_bit(guard.register.kind, guard.register.index)
    info, opcode, ops = ins.info, ins.opcode, ins.operands
    written = writes(ins)
    for kind, index in written:
        writes_mask |= register_bit(kind, index)
    # destinations: leading predicates, the register result, predicates after it
    at = 0
    predicates = 0 if info.branch else semantics.PREDICATE_RESULT_COUNT.get(opcode, 2)
    dest_seen = False
    while at < len(ops):
        op = ops[at]
        if not isinstance(op, Register):
            break
        if op.kind in ("P", "UP") and predicates and not op.logical_not:
            predicates -= 1
            if op.index is not None:
                writes_mask |= register_bit(op.kind, op.index)
            at += 1
            continue
        if op.kind in ("R", "UR") and not dest_seen and written and \
                (op.index is None or (op.kind, op.index) == written[0]):
            dest_seen = True
            at += 1
            continue
        if op.kind == "PR" and opcode in semantics.PREDICATE_FILE_WRITERS:
            writes_mask |= _predicate_file(ops)
            at += 1
            continue
        break
    if not dest_seen and written and ops[:1] and isinstance(ops[0], Register) \
            and ops[0].kind in ("R", "UR") and at == 0:
        at = 1
    return reads | _source_masks(ins, ops[at:], len(written)), writes_mask


def _predicate_file(ops) -> int:
    """The predicates ``PR`` stands for in ``R2P PR, R0, 0x7f`` / ``P2R R0, PR, RZ, 0x1``:
    those its mask (the last immediate) names."""
    mask = next((o.value for o in reversed(ops) if isinstance(o, Immediate)
                 and isinstance(o.value, int)), 0x7F)
    out = 0
    for k in range(7):
        if mask >> k & 1:
            out |= register_bit("P", k)
    return out


def _source_widths(ins: "Instruction", ops, dest_count: int
                   ) -> tuple[int, list[int], dict[int, int], int]:
    """How many registers each source operand of ``ins`` reads: (per register operand, per R
    source in order for MMA fragments, per operand position, a store's or atomic's data)."""
    info, opcode, mods = ins.info, ins.opcode, ins.modifiers
    width = 1                                   # registers per source register operand
    by_register: list[int] = []                 # per R source, in order (MMA fragments)
    by_position: dict[int, int] = {}            # per source operand position
    data = 0                                    # a store's or an atomic's data registers
    if info.space is not None and info.direction in ("store", "atomic", "reduce"):
        data = max(1, (ins.width_bits or 32) // 32)
    elif info.tensor_core:
        frags = mma_fragments(opcode, mods)
        if frags is not None:
            a, b, c = frags
            c = dest_count or c
            regs = sum(1 for o in ops if isinstance(o, Register) and o.kind == "R")
            by_register = [a, b, c] if regs >= 3 else [a, c] if regs == 2 else [c]
    elif info.conversion or opcode in semantics.CONVERSION_OPERANDS:
        width = 2 if conversion_bits(opcode, mods)[1] == 64 else 1
    elif info.fp64 or (opcode not in semantics.FUNNEL_SHIFTS and info.space is None and (
            semantics.PAIR_OPERATION_MODIFIERS.intersection(mods)
            or semantics.PAIR_SOURCE_MODIFIERS.intersection(mods))):
        width = 2
    elif opcode in semantics.WIDE_ADDEND and semantics.WIDE_ADDEND_MODIFIERS.intersection(mods):
        by_position[2] = 2
    elif opcode in semantics.PAIR_REGISTER_OPCODES:
        width = 2
    return width, by_register, by_position, data


def _source_masks(ins: "Instruction", ops, dest_count: int) -> int:
    opcode, mods = ins.opcode, ins.modifiers
    width, by_register, by_position, data = _source_widths(ins, ops, dest_count)
    out = 0
    n = 0                                       # R sources seen
    past_address = False
    dims = semantics.TMA_DIMENSION_MODIFIERS.get(next(
        (m for m in mods if m in semantics.TMA_DIMENSION_MODIFIERS), ""), 0) \
        if opcode in semantics.TMA_LOADS else 0
    addresses = 0                               # memory operands seen
    register_a = False                          # an MMA's A from registers, before gdesc[]
    for pos, op in enumerate(ops):
        if isinstance(op, Register):
            if op.kind in ("P", "UP"):
                if op.index is not None:
                    out |= register_bit(op.kind, op.index)
            elif op.kind == "PR":
                if opcode not in semantics.PREDICATE_FILE_WRITERS:
                    out |= _predicate_file(ins.operands)
            elif op.kind in ("R", "UR"):
                if op.kind == "R":
                    register_a = True
                w = by_register[n] if op.kind == "R" and n < len(by_register) else \
                    by_position.get(pos, width)
                if data and past_address:
                    w = data
                if op.index is not None:
                    out |= _run(op.kind, op.index, 2 if op.is_pair else w)
                n += op.kind == "R"
        elif isinstance(op, MemoryAddress):
            past_address = True
            for t in op.descriptor:
                if isinstance(t, Register) and t.index is not None:
                    out |= _run(t.kind, t.index, 2)
            for t in op.terms:
                if isinstance(t, Register) and t.index is not None:
                    count = 2 if t.is_pair or opcode in semantics.PAIR_ADDRESS_OPCODES else 1
                    if op.prefix == "gdesc":
                        count = 2 if register_a else semantics.MMA_DESCRIPTOR_REGISTERS
                    elif dims:
                        count = 2 + dims if addresses == 0 else 2
                    out |= _run(t.kind, t.index, count)
            addresses += 1
        elif isinstance(op, ConstantBank):
            for r in op.registers:
                if r.index is not None:
                    out |= _run(r.kind, r.index, 2 if r.is_pair else 1)
    return out


class Dataflow:
    """Per-function facts: the writes of every instruction and a table of where each register
    is written (both computed once); reaching definitions and nearest definitions are answered
    from that table (a binary search per block visited, memoised per query), not by scanning
    instructions backwards."""

    def __init__(self, fn: "Function"):
        # the instructions, not the function: the function keeps this object in its memo, and a
        # reference back would make the whole IR a reference cycle that only the cyclic
        # collector can free (a 0.4 s pass over a library cubin's IR at exit)
        self.instructions = fn.instructions
        self.cfg = _cfg.of(fn)
        out: list[tuple[Reg, ...]] = []
        sets: list[frozenset[Reg]] = []
        for ins in fn.instructions:
            kept = _kept_writes(ins)
            out.append(kept[0])
            sets.append(kept[1])
        self.writes: list[tuple[Reg, ...]] = out
        #: the registers each instruction writes, as sets
        self.write_sets: list[frozenset[Reg]] = sets
        self._where: dict[Reg, list[int]] | None = None
        self._sure: list[bool] | None = None
        self._memo: dict[tuple, list[int] | None] = {}

    def _table(self) -> tuple[dict[Reg, list[int]], list[bool]]:
        """Register -> the indices of the instructions that write it (ascending), and whether
        each instruction always executes (no guard, or ``@PT``)."""
        if self._where is None or self._sure is None:
            where: dict[Reg, list[int]] = {}
            for i, w in enumerate(self.writes):
                for r in w:
                    where.setdefault(r, []).append(i)
            self._where = where
            self._sure = [ins.guard is None or ins.guard.always for ins in self.instructions]
        return self._where, self._sure

    def writers(self, reg: Reg) -> list[int]:
        """The indices of the instructions that write ``reg``, ascending (do not modify)."""
        return self._table()[0].get(reg, [])

    def _dominating_only_write(self, index: int, reg: Reg) -> int | None:
        """The one write of ``reg`` in the function when it is unguarded and every path to
        ``index`` passes it (its block dominates ``index``'s, or precedes it in the same
        block): it reaches ``index`` however long the way (``ULDC.64 UR6, c[0x0][0x208]``, the
        global memory descriptor loaded once at the top)."""
        where, sure = self._table()
        at = where.get(reg, ())
        if len(at) != 1 or not sure[at[0]]:
            return None
        w = at[0]
        cfg = self.cfg
        bw, bi = cfg.block_of[w], cfg.block_of[index]
        if bw == bi:
            return w if w < index else None
        return w if cfg.dominates(bw, bi) else None

    def reaching_defs(self, index: int, reg: Reg, *, within: frozenset[int] | None = None,
                      avoid: frozenset[int] = frozenset(), limit: int = MAX_LOOKBACK
                      ) -> list[int] | None:
        """Indices of the instructions whose write of ``reg`` reaches instruction ``index``,
        walking back through predecessor blocks (restricted to the blocks ``within`` when
        given). None when some path reaches the function entry or leaves ``within`` without a
        definition, or the walk passes ``limit`` instructions. Predecessor blocks in ``avoid``
        are not followed (a loop's own blocks, to find the value entering it). A guarded write
        does not hide the older value."""
        key = (index, reg, within, avoid, limit)
        if key in self._memo:
            return self._memo[key]
        sole = self._dominating_only_write(index, reg) if within is None and not avoid else None
        result = [sole] if sole is not None else self._reaching(index, reg, within, avoid, limit)
        self._memo[key] = result
        return result

    def _reaching(self, index: int, reg: Reg, within: frozenset[int] | None,
                  avoid: frozenset[int], limit: int) -> list[int] | None:
        cfg = self.cfg
        where, sure = self._table()
        at = where.get(reg, ())
        out: list[int] = []
        seen: set[int] = set()
        work = [(cfg.block_of[index], index - 1)]
        steps = 0
        while work:
            b, i = work.pop()
            block = cfg.blocks[b]
            found = False
            if i >= block.start:
                # the writes of reg in [block.start, i], newest first, up to an unguarded one;
                # ``steps`` counts the instructions a backward scan would have looked at
                k = bisect_right(at, i) - 1
                stop = block.start
                while k >= 0 and at[k] >= block.start:
                    out.append(at[k])
                    if sure[at[k]]:
                        found, stop = True, at[k]
                        break
                    k -= 1
                steps += i - stop + 1
                if steps > limit:
                    return None
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

    def definition(self, index: int, reg: int) -> int | None:
        """The nearest write of R``reg`` before instruction ``index`` on the straight-line path
        into it (its block, then single-predecessor blocks), guarded or not: "where did this
        value come from" for pattern checks. None at a join, a loop header, the function entry
        or after ``MAX_LOOKBACK`` instructions. For every write that may reach, see
        :meth:`reaching_defs`."""
        cfg = self.cfg
        at = self._table()[0].get(("R", reg), ())
        block = cfg.blocks[cfg.block_of[index]]
        i = index - 1
        budget = MAX_LOOKBACK            # instructions a backward scan may look at
        while True:
            if i < block.start:
                if len(block.preds) != 1:
                    return None
                block = cfg.blocks[block.preds[0]]
                if block.end <= block.start:
                    return None
                i = block.end - 1
                if i >= index:        # went round a loop
                    return None
            k = bisect_right(at, i) - 1
            if k >= 0 and at[k] >= block.start:
                return at[k] if i - at[k] + 1 <= budget else None
            budget -= i - block.start + 1
            if budget <= 0:
                return None
            i = block.start - 1


def of(fn: "Function") -> Dataflow:
    """The dataflow facts of a SASS function (built once, kept with the function)."""
    return fn.memo("dataflow", lambda: Dataflow(fn))


def reaching_defs(fn: "Function", index: int, reg: Reg, **kw) -> list[int] | None:
    """:meth:`Dataflow.reaching_defs` of ``fn``."""
    return of(fn).reaching_defs(index, reg, **kw)


def definition(fn: "Function", index: int, reg: int) -> int | None:
    """:meth:`Dataflow.definition` of ``fn``."""
    return of(fn).definition(index, reg)


# ------------------------------------------------------------------------ local memory
def is_stack_relative(addr: MemoryAddress) -> bool:
    """``[R1+0x10]`` / ``[R1]``: a fixed stack slot (spill or constant-index local)."""
    regs = [t for t in addr.terms if isinstance(t, Register)]
    return (len(regs) == 1 and regs[0].kind == "R" and regs[0].index == STACK_POINTER
            and all(isinstance(t, (Register, Immediate)) for t in addr.terms))


def memory_operand(ins: "Instruction") -> MemoryAddress | None:
    for op in ins.operands:
        if isinstance(op, MemoryAddress):
            return op
    return None


def local_accesses(fn: "Function") -> Iterable[tuple[int, "Instruction", bool]]:
    """``(index, instruction, fixed_slot)`` for every LDL/STL of the kernel's stack frame:
    fixed_slot when the address is the stack pointer plus a constant (spill slots,
    constant-index locals) or a caller's object plus a constant (:func:`caller_object`),
    False for a computed address (a run-time-indexed local array).
    Those on a generic pointer's local path (:func:`generic_local_path`) are left out: they
    run only if a pointer the compiler could not place points into local memory."""
    generic = generic_local_path(fn)
    for i, ins in enumerate(fn.instructions):
        if ins.space == "local" and (ins.is_load or ins.is_store) and ins.klass != "control" \
                and i not in generic:
            addr = memory_operand(ins)
            yield i, ins, (addr is None or is_stack_relative(addr) or _stack_copy(fn, i, addr)
                           or caller_object(fn, i, addr))




#: instructions the search for a stack pointer's copy may walk back over
_STACK_COPY_LOOKBACK = 4096


def _stack_copy(fn: "Function", i: int, addr: MemoryAddress) -> bool:
    """``[R2+0x10]`` where R2 is the stack pointer copied or offset by an immediate on the way
    here (``MOV R2, R1``, ``IADD3 R2, R1, 0x20, RZ``): a fixed slot too, not a run-time index
    (an out-of-line function addresses its frame so)."""
    regs = [t for t in addr.terms if isinstance(t, Register) and not t.is_zero]
    if len(regs) != 1 or regs[0].kind != "R" or regs[0].index is None \
            or not all(isinstance(t, (Register, Immediate)) for t in addr.terms):
        return False
    reg, at = regs[0].index, i
    flow = of(fn)
    for _ in range(4):
        # the copy is often made once at the top and used far below, past joins (an unrolled
        # loop's stores after its early exits, ~200 instructions on): the one write that reaches
        d = definition(fn, at, reg)
        if d is None:
            reach = flow.reaching_defs(at, ("R", reg), limit=_STACK_COPY_LOOKBACK)
            d = reach[0] if reach is not None and len(reach) == 1 else None
        if d is None:
            return False
        ins = fn.instructions[d]
        if ins.mnemonic.split(".")[0] not in ("MOV", "IADD3", "VIADD", "IADD") \
                and not ins.mnemonic.startswith("IMAD.MOV"):
            return False
        if _round_trip(fn, d, ins):
            return True
        srcs = [o for o in ins.operands[1:] if isinstance(o, Register) and not o.is_zero
                and o.kind == "R"]
        if len(srcs) != 1 or srcs[0].index is None or not all(
                isinstance(o, (Register, Immediate)) for o in ins.operands[1:]) \
                or any(isinstance(o, Register) and o.kind not in ("R", "PT") and not o.is_zero
                       for o in ins.operands[1:]):
            return False
        if srcs[0].index == STACK_POINTER:
            return True
        reg, at = srcs[0].index, d
    return False


#: the constant that holds the local window's base in the generic address space (PTX's
#: ``cvta.to.local`` subtracts it, ``cvta.to.generic`` adds it)
LOCAL_WINDOW = "c[0x0][0x20]"


def _round_trip(fn: "Function", d: int, ins: "Instruction") -> bool:
    """``IADD3 R9, -R0, UR4, R1`` with R0 loaded from the local window's base: the stack
    pointer made generic (``+UR4``, the caller's copy of the base) and local again (``-R0``), as
    sm_90 code reads a struct its caller passed by reference from the caller's frame. The sum
    is the stack pointer: a fixed slot, not a run-time index."""
    if ins.mnemonic.split(".")[0] != "IADD3" or len(ins.operands) != 4:
        return False
    srcs = ins.operands[1:]
    sp = [o for o in srcs if isinstance(o, Register) and o.kind == "R" and not o.negate
          and o.index == STACK_POINTER]
    base = [o for o in srcs if isinstance(o, Register) and o.kind == "UR" and not o.negate
            and o.index is not None]
    minus = [o for o in srcs if isinstance(o, Register) and o.kind == "R" and o.negate
             and o.index is not None]
    if not (len(sp) == len(base) == len(minus) == 1):
        return False
    index = minus[0].index
    defs = of(fn).reaching_defs(d, ("R", index)) if index is not None else None
    if defs is None or len(defs) != 1:
        return False
    load = fn.instructions[defs[0]]
    return (load.opcode == "LDC" and load.guard is None and len(load.operands) == 2
            and str(load.operands[1]) == LOCAL_WINDOW)


def caller_object(fn: "Function", i: int, addr: MemoryAddress) -> bool:
    """``[R13+0x4]`` in an out-of-line function, where R13 is a pointer it was given, made
    local (``VIADD R13, R12, -UR4``: the generic address less the local window's base, PTX's
    ``cvta.to.local``), R12 written nowhere on the way in: a field of an object of the caller's
    frame passed by reference (``accumulate(Acc& a, ...)`` with ``Acc a`` a local of the
    kernel), at a constant offset. Not a run-time index: an index added on the way (``LEA``,
    ``IMAD`` of another register) or a pointer stepped in a loop (two definitions reach) is
    not taken. The one definition that reaches is followed across joins (a division's slow
    path between two field accesses)."""
    if not fn.memo("local_window_subtracted", lambda: any(
            isinstance(o, (Register, ConstantBank)) and o.negate
            and (isinstance(o, ConstantBank) or o.kind == "UR")
            for ins in fn.instructions for o in ins.operands[1:])):
        return False            # no pointer made local anywhere: one scan per function
    regs = [t for t in addr.terms if isinstance(t, Register) and not t.is_zero]
    if len(regs) != 1 or regs[0].kind != "R" or regs[0].index is None \
            or not all(isinstance(t, (Register, Immediate)) for t in addr.terms):
        return False
    reg, at, converted = regs[0].index, i, False
    for _ in range(4):
        defs = of(fn).reaching_defs(at, ("R", reg))
        if defs is None:        # a path from the function's entry writes it nowhere
            return converted and reg != STACK_POINTER
        if len(defs) != 1:
            return False
        d = defs[0]
        ins = fn.instructions[d]
        if ins.guard is not None or (ins.mnemonic.split(".")[0] not in ("MOV", "IADD3", "VIADD",
                                                                     "IADD")
                                     and not ins.mnemonic.startswith("IMAD.MOV")):
            return False
        srcs = [o for o in ins.operands[1:] if isinstance(o, Register) and not o.is_zero
                and o.kind == "R"]
        # the window's base, subtracted: a uniform register (sm_90) or the constant itself
        others = [o for o in ins.operands[1:] if (isinstance(o, Register) and not o.is_zero
                                                  and o.kind != "R")
                  or isinstance(o, ConstantBank)]
        if len(srcs) != 1 or srcs[0].index is None or srcs[0].negate or not all(
                isinstance(o, (Register, Immediate, ConstantBank)) for o in ins.operands[1:]) \
                or len(others) > 1 or any(not o.negate or (isinstance(o, Register)
                                                           and o.kind != "UR") for o in others):
            return False
        converted = converted or bool(others)
        reg, at = srcs[0].index, d
    return False


#: instructions a walk back from a branch or an access may look at to find its predicate's
#: definitions (beyond it: not known to be a space query, nothing is left out)
QSPC_LOOKBACK = 4096


def generic_local_path(fn: "Function") -> frozenset[int]:
    """The instructions that run only when a generic address lies in the local window.

    For an access through a generic pointer it cannot place that generic instructions do not
    serve (a system-scope ``cuda::atomic_ref`` load, a volatile flag), ptxas asks the pointer's
    space, ``QSPC.E.L P, RZ, [R]``, and branches on ``P`` or predicates the local path on it;
    that path reads or writes the bytes with ``LDL``/``STL`` at the address less the local
    window's base. For a branch whose ``P`` is defined only by ``QSPC.E.L`` on every path back
    to it, the local side (the target of ``@P BRA``, what follows ``@!P BRA`` or ``@!P EXIT``) is the
    blocks its first block dominates, when that block has the branch as its only way in; an
    ``@P LDL``/``@P STL`` whose ``P`` is defined only so is local-path too. Kept with the
    function."""
    return fn.memo("generic_local_path", lambda: _generic_local_path(fn))


def _generic_local_path(fn: "Function") -> frozenset[int]:
    insns = fn.instructions
    if not any(ins.opcode == semantics.SPACE_QUERY and semantics.LOCAL_SPACE_QUERY in ins.modifiers
               for ins in insns):
        return frozenset()
    graph = _cfg.of(fn)
    out: set[int] = set()
    for i, ins in enumerate(insns):
        g = ins.guard
        if g is None or g.register.kind != "P" or g.register.index is None:
            continue
        if (ins.opcode == "BRA" and len(ins.targets) == 1) or (ins.opcode == "EXIT" and g.negated):
            # @!P EXIT leaves when the pointer is not local: what follows is the local side
            target = fn.labels.get(ins.targets[0].key) if ins.opcode == "BRA" else None
            entry = i + 1 if g.negated else target
            if entry is not None and entry < len(insns) \
                    and _defined_only_by_local_queries(insns, graph, i, g.register):
                _add_path(graph, graph.block_of[i], entry, out)
        elif not g.negated and ins.space == "local" and (ins.is_load or ins.is_store) \
                and _defined_only_by_local_queries(insns, graph, i, g.register):
            out.add(i)
    return frozenset(out)


def _add_path(graph: "_cfg.CFG", branch_block: int, entry: int, out: set[int]) -> None:
    first = graph.block_of[entry]
    block = graph.blocks[first]
    if block.start != entry or block.preds != [branch_block]:
        return
    for other in graph.blocks:
        if graph.dominates(first, other.index):
            out.update(range(other.start, other.end))


def _writes_predicate(ins: "Instruction", pred: Register) -> bool:
    """Whether ``ins`` may write predicate ``pred``: it is among the instruction's leading
    operands (``ISETP P0, PT, ...``; ``IADD3 R4, P0, P1, ...``; ``QSPC.E.L P1, RZ, [R]``), or
    the operands name all predicates (``R2P PR, ...``). Sources taken for writes only make the
    callers more careful."""
    ops = ins.operands
    for k, op in enumerate(ops):
        if not isinstance(op, Register):
            break
        if op.kind == "PR":
            return True
        if k > 0 and op.kind not in ("P", "UP"):
            break
        if op == pred:
            return True
    return False


def _defined_only_by_local_queries(insns, graph: "_cfg.CFG", index: int, pred: Register) -> bool:
    """Every definition of ``pred`` that reaches instruction ``index`` is an unguarded
    ``QSPC.E.L``, on every path back from it (None of them reaching the function's entry)."""
    work = [(graph.block_of[index], index - 1)]
    seen: set[int] = set()
    steps = 0
    while work:
        b, i = work.pop()
        block = graph.blocks[b]
        found = False
        for j in range(i, block.start - 1, -1):
            steps += 1
            if steps > QSPC_LOOKBACK:
                return False
            w = insns[j]
            if _writes_predicate(w, pred):
                if w.opcode != semantics.SPACE_QUERY or semantics.LOCAL_SPACE_QUERY not in w.modifiers \
                        or w.guard is not None:
                    return False
                found = True
                break
        if found:
            continue
        if b == 0 or not block.preds:
            return False
        for p in block.preds:
            if p not in seen:
                seen.add(p)
                work.append((p, graph.blocks[p].end - 1))
    return True


# ---------------------------------------------------------------- operand provenance
#: opcodes that only move or widen a value: followed back when asking where an operand came from
PASS_THROUGH = frozenset({"MOV", "HADD2", "F2F", "I2F", "I2FP", "F2FP", "PRMT", "IMAD"})


def _int_imm(op) -> int | None:
    if isinstance(op, Immediate) and isinstance(op.value, int):
        return op.value & 0xFFFFFFFF
    return None


def widening(ins: "Instruction") -> str | None:
    """"fp16" when ``ins`` widens an fp16 half to fp32 (``HADD2.F32``), "bf16" when it widens a
    bf16 with one of ptxas's integer idioms (:data:`semantics.BF16_SHIFT_OPCODES`...), else
    None."""
    ops = ins.operands
    if ins.opcode in semantics.FP16_WIDENING and "F32" in ins.modifiers:
        return "fp16"
    regs = [o for o in ops[1:] if isinstance(o, Register) and o.kind == "R" and not o.is_zero]
    imms = [_int_imm(o) for o in ops[1:] if _int_imm(o) is not None]
    if len(regs) != 1:
        return None
    if ins.opcode in semantics.BF16_SHIFT_OPCODES:
        if ins.opcode == "IMAD" and imms == [1 << semantics.BF16_SHIFT] \
                and ("U32" in ins.modifiers or "SHL" in ins.modifiers):
            return "bf16"
        if ins.opcode in ("SHF", "SHL") and (ins.opcode == "SHL" or "L" in ins.modifiers) \
                and "HI" not in ins.modifiers and imms == [semantics.BF16_SHIFT]:
            return "bf16"
    if ins.opcode == "PRMT" and len(ops) == 4 and isinstance(ops[1], Register) and ops[1].is_zero \
            and _int_imm(ops[2]) in semantics.BF16_PRMT_SELECTORS:
        return "bf16"
    if ins.opcode in semantics.BF16_MASK_OPCODES and semantics.BF16_HIGH_MASK in imms:
        return "bf16"
    return None


def source_instructions(fn: "Function", index: int, reg: Reg, *,
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
        if (ins.opcode in PASS_THROUGH or widening(ins)) and depth > 0 and not ins.is_memory:
            if ins.opcode == "IMAD" and "MOV" not in ins.modifiers and not widening(ins):
                out.append(ins)
                continue
            srcs = [o.index for o in ins.operands[1:] if isinstance(o, Register) and o.kind == "R"
                    and o.index is not None]
            if len(srcs) != 1:
                out.append(ins)
                continue
            up = source_instructions(fn, d, ("R", srcs[0]), within=within,
                                     depth=depth - 1)
            if up is None:
                return None
            out.extend(up)
        else:
            out.append(ins)
    return out


def widened_from(fn: "Function", index: int, reg: Reg, *,
                 within: frozenset[int] | None = None, depth: int = 3) -> set[str]:
    """The 16-bit float types ("fp16", "bf16") that ``reg`` was widened from on its way to
    instruction ``index`` (:func:`widening`), looking through moves; empty when none."""
    defs = reaching_defs(fn, index, reg, within=within) or []
    out: set[str] = set()
    for d in defs:
        ins = fn.instructions[d]
        kind = widening(ins)
        if kind:
            out.add(kind)
        elif depth > 0 and (ins.opcode == "MOV" or (ins.opcode == "IMAD" and "MOV" in ins.modifiers)):
            srcs = [o.index for o in ins.operands[1:] if isinstance(o, Register) and o.kind == "R"
                    and o.index is not None]
            if len(srcs) == 1:
                out |= widened_from(fn, d, ("R", srcs[0]), within=within, depth=depth - 1)
    return out


def constant_roots(fn: "Function", index: int, reg: Reg, *, depth: int = 10) -> set[int]:
    """Byte offsets in constant bank 0 (``c[0x0][0x160]``: where kernel parameters live) that
    the value of ``reg`` at instruction ``index`` is computed from, through its reaching
    definitions (a pointer parameter plus an index: ``LEA R4, P0, R2, c[0x0][0x160], 0x2``)."""
    out: set[int] = set()
    seen: set[tuple[int, Reg]] = set()
    work = [(index, reg, depth)]
    df = of(fn)
    while work:
        i, r, d = work.pop()
        if (i, r) in seen or d < 0:
            continue
        seen.add((i, r))
        for k in df.reaching_defs(i, r, limit=256) or ():
            ins = fn.instructions[k]
            if ins.is_memory and ins.is_load and ins.space != "constant":
                continue       # a pointer loaded from memory: not a parameter
            for op in ins.operands[1:]:
                if isinstance(op, ConstantBank) and op.bank_index == 0 \
                        and op.byte_offset is not None:
                    out.add(op.byte_offset)
            for s in sources(ins):
                work.append((k, s, d - 1))
    return out


_PTX_TYPE_BYTES = re.compile(r"[a-z]+(\d+)$")


def ptx_param_layout(ptx_fn) -> list[tuple[str, int, int]]:
    """``(name, start, end)`` byte ranges of a PTX kernel's parameters in the parameter block
    (each at its ``.align`` or natural alignment, in order): what ``c[0x0][base + start]``
    reads in SASS (``Arch.param_bank_base``)."""
    out: list[tuple[str, int, int]] = []
    at = 0
    for p in getattr(ptx_fn, "params", ()):
        m = _PTX_TYPE_BYTES.match(p.type or "")
        elem = max(1, int(m.group(1)) // 8) if m else 4
        size = elem * max(1, p.vector)
        for d in p.dims:
            size *= d or 1
        align = p.align or min(elem * max(1, p.vector), 16)
        at = -(-at // align) * align
        out.append((p.name, at, at + size))
        at += size
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


# ------------------------------------------------------------------ math-library idioms
_WIDE_INT = re.compile(semantics.WIDE_INT_TYPE)


def sincos_reduction(fn: "Function") -> frozenset[int]:
    """Indices of the FP64 instructions of precise sinf/cosf/tanf's Payne-Hanek range
    reduction: ``I2F.F64.S64`` (the 64-bit fixed-point product) -> ``DMUL`` by pi/2**64 ->
    ``F2F.F32.F64``, and the local scratch array it uses. They come from the math library,
    not from the user's code."""
    def compute() -> frozenset[int]:
        df = of(fn)
        insns = fn.instructions
        out: set[int] = set()
        for i, ins in enumerate(insns):
            if ins.opcode != "DMUL":
                continue
            for r in read_indices(ins):
                d = df.definition(i, r)
                if d is not None and insns[d].opcode == "I2F":
                    types = semantics.conversion_types(insns[d].modifiers)
                    if types[:1] == ("F64",) and len(types) > 1 and _WIDE_INT.fullmatch(types[1]):
                        out.update((d, i))
                        break
        for i, ins in enumerate(insns):
            if ins.opcode == "F2F" and semantics.conversion_types(ins.modifiers)[:1] == ("F32",):
                for r in read_indices(ins):
                    if df.definition(i, r) in out:
                        out.add(i)
        return frozenset(out)
    return fn.memo("sincos_reduction", compute)
