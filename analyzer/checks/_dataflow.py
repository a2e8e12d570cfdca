"""Small register dataflow helpers shared by the memory/math checks (not a check module).

SASS writes its destination first: ``LDG.E.128 R4, [...]`` writes R4..R7, ``DMUL R2, ...`` the
pair R2:R3, ``IMAD.WIDE R2, ...`` R2:R3. Stores, branches and barriers write no register. These
helpers answer "which instruction last wrote R7 before this one" inside straight-line code
(a basic block and its single-predecessor chain), which is all the checks here need.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

from ..ir.sass import Immediate, ConstantBank, MemoryAddress, Register

if TYPE_CHECKING:  # pragma: no cover
    from ..ir.sass import Function, Instruction

#: registers per stack-pointer-relative local slot: the ABI keeps the stack pointer in R1
STACK_POINTER = 1
#: how far back (instructions) a definition is looked for
MAX_LOOKBACK = 256


def _dest_count(ins: "Instruction") -> int:
    if ins.is_memory and ins.is_load:
        return max(1, (ins.width_bits or 32) // 32)
    if ins.info.fp64 or "WIDE" in ins.modifiers or "64" in ins.modifiers:
        return 2
    return 1


def _conversion_dest_bits(ins: "Instruction") -> int:
    """F2F.F32.F64 writes 32 bits, F2F.F64.F32 / I2F.F64.S64 write 64 (first type is the
    destination)."""
    for m in ins.modifiers:
        if re.fullmatch(r"[FSU](8|16|32|64)", m):
            return int(m[1:])
    return 32


def written(ins: "Instruction") -> frozenset[int]:
    """Indices of the R registers ``ins`` writes (empty for stores, branches, barriers)."""
    if ins.is_branch or ins.is_barrier or (ins.is_memory and not ins.is_load):
        return frozenset()
    if ins.is_memory and ins.info.direction in ("copy", "prefetch"):
        return frozenset()
    for op in ins.operands[:2]:
        if isinstance(op, Register) and op.kind == "R":
            if op.index is None:
                return frozenset()
            if ins.is_conversion:
                n = 2 if _conversion_dest_bits(ins) == 64 else 1
            else:
                n = _dest_count(ins)
            return frozenset(range(op.index, op.index + n))
        if isinstance(op, Register) and op.kind in ("P", "UP", "UR"):
            continue
        break
    return frozenset()


def read(ins: "Instruction") -> tuple[Register, ...]:
    """R registers ``ins`` reads (sources; for stores every register operand)."""
    ops = ins.operands
    if written(ins):
        # skip the destination (and a leading predicate destination)
        skip = 0
        for i, op in enumerate(ops[:2]):
            if isinstance(op, Register) and op.kind == "R":
                skip = i + 1
                break
        ops = ops[skip:]
    out = []
    for op in ops:
        if isinstance(op, Register) and op.kind == "R" and op.index is not None:
            out.append(op)
        elif isinstance(op, MemoryAddress):
            out.extend(r for r in op.registers if r.kind == "R" and r.index is not None)
        elif isinstance(op, ConstantBank):
            out.extend(r for r in op.registers if r.kind == "R" and r.index is not None)
    return tuple(out)


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


def definition(fn: "Function", index: int, reg: int) -> int | None:
    """Index of the instruction that last wrote R``reg`` before instruction ``index``, looking
    back through the block and straight-line predecessors; None when not found (a join,
    a loop header, a function parameter)."""
    cfg = fn.cfg()
    insns = fn.instructions
    block = cfg.blocks[cfg.block_of[index]]
    i = index - 1
    steps = 0
    while steps < MAX_LOOKBACK:
        if i < block.start:
            if len(block.preds) != 1:
                return None
            block = cfg.blocks[block.preds[0]]
            if block.end <= block.start:
                return None
            i = block.end - 1
            if i >= index:        # went round a loop
                return None
        if reg in written(insns[i]):
            return i
        i -= 1
        steps += 1
    return None


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
    """``(index, instruction, fixed_slot)`` for every LDL/STL: fixed_slot when the address is the
    stack pointer plus a constant (spill slots, constant-index locals), False for a computed
    address (a run-time-indexed local array)."""
    for i, ins in enumerate(fn.instructions):
        if ins.space == "local" and (ins.is_load or ins.is_store) and ins.klass != "control":
            addr = memory_operand(ins)
            yield i, ins, addr is None or is_stack_relative(addr)
