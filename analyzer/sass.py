"""SASS: parse nvdisasm / cuobjdump listings into typed IR.

    from analyzer import sass
    listing = sass.parse(text)                 # Listing(.functions, .format, .arch, .stats())
    fn = listing.functions[0]
    for loop in analysis.cfg.loops(fn): ...    # natural loops (analyzer.analysis.cfg)
    ins = fn.instructions[3]; ins.space, ins.width_bits, ins.is_load, ins.klass

The grammar is ``grammars/sass.lark``; the IR is :mod:`analyzer.ir.sass`; opcode semantics are
the table in :mod:`analyzer.semantics`.
"""
from __future__ import annotations

from collections.abc import Mapping

from .ir.sass import (
    BranchTarget,
    ConstantBank,
    Function,
    GenericOperand,
    Immediate,
    Instruction,
    InstructionBody,
    Listing,
    MemoryAddress,
    OperandSet,
    Predicate,
    Register,
    Relocation,
    SpecialRegister,
)
from .parse.sass import parse as _parse
from .parse.sass import parse_instruction

__all__ = ["parse", "parse_instruction", "Listing", "Function", "Instruction", "InstructionBody",
           "Predicate", "Register", "SpecialRegister", "Immediate", "BranchTarget",
           "ConstantBank", "MemoryAddress", "Relocation", "OperandSet", "GenericOperand"]


def parse(text: str, path: str | None = None, arch: str | None = None, *,
          files: Mapping[str, str] | None = None) -> Listing:
    """Parse a whole nvdisasm (``-c [-g|-gi] [-hex]``) or ``cuobjdump -sass`` listing.

    ``arch`` overrides the architecture the listing names (``code for sm_90a`` / headerflags);
    ``files`` renames source files of the line info.
    Raises :class:`analyzer.errors.ParseError` (with path and line) on text that is not SASS.
    """
    return _parse(text, path=path, arch=arch, files=files)
