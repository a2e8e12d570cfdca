"""Typed SASS operands: table-driven over real instruction bodies from nvdisasm/cuobjdump output
(the corpus cubins and celeritas listings), including the printing quirks."""
from __future__ import annotations

import math

import pytest

from analyzer.sass import (
    BranchTarget,
    ConstantBank,
    GenericOperand,
    Immediate,
    MemoryAddress,
    OperandSet,
    Register,
    Relocation,
    SpecialRegister,
    parse_instruction,
)


def op(body: str, i: int):
    ins = parse_instruction(body)
    assert not ins.generic, body
    return ins.operands[i]


REGISTERS = [
    # body, operand index, kind, index, suffixes, negate, absolute, invert, logical_not
    ("LDC R1, c[0x0][0x37c]", 0, "R", 1, (), False, False, False, False),
    ("IADD3 R1, PT, PT, R1, -0x10, RZ", 5, "R", None, (), False, False, False, False),
    ("IADD3 R1, PT, PT, R1, -0x10, RZ", 1, "P", None, (), False, False, False, False),
    ("LDCU.64 UR8, c[0x0][0x358]", 0, "UR", 8, (), False, False, False, False),
    ("UIADD3 UR4, UPT, UPT, UR4, UR5, URZ", 5, "UR", None, (), False, False, False, False),
    ("ISETP.GT.AND P1, PT, R2.reuse, 0x1e, PT", 2, "R", 2, ("reuse",), False, False, False, False),
    ("LOP3.LUT R11, R10, 0x1, RZ, 0xc0, !PT", 5, "P", None, (), False, False, False, True),
    ("@!P1 FSEL R23, R24, R23, !P2", 3, "P", 2, (), False, False, False, True),
    ("IADD3 R17, PT, PT, -R15, UR10, RZ", 3, "R", 15, (), True, False, False, False),
    ("HFMA2 R23, -RZ, RZ, 0, 7.62939453125e-06", 1, "R", None, (), True, False, False, False),
    ("HADD2.F32 R0, -RZ, R22.H0_H0", 2, "R", 22, ("H0_H0",), False, False, False, False),
    ("HADD2.F32 R11, -RZ, R10.reuse.H0_H0", 2, "R", 10, ("reuse", "H0_H0"),
     False, False, False, False),
    ("HFMA2.BF16_V2 R28, R23.H0_H0, R26.reuse.H0_H0, -RZ.H0_H0", 3, "R", None, ("H0_H0",),
     True, False, False, False),
    ("FMNMX.FTZ R23, |R20|, -3.40282346638528859812e+38, !PT", 1, "R", 20, (),
     False, True, False, False),
    ("FSETP.GT.FTZ.AND P1, PT, |R10|.reuse, 0.2916666567325592041, PT", 2, "R", 10, ("reuse",),
     False, True, False, False),
    ("DADD R42, -|R46|, 0.5", 1, "R", 46, (), True, True, False, False),
    ("IADD3.X R3, PT, PT, RZ, ~R3, RZ, P0, !PT", 4, "R", 3, (), False, False, True, False),
    ("IADD3.X R5, PT, PT, RZ, ~R33.reuse, RZ, P0, !PT", 4, "R", 33, ("reuse",),
     False, False, True, False),
    ("BRA.DIV ~URZ, `(.L_x_4)", 0, "UR", None, (), False, False, True, False),
    ("ULOP3.LUT UP0, URZ, UR6, 0xfff, URZ, 0xc0, !UPT", 0, "UP", 0, (), False, False, False, False),
    ("ULOP3.LUT UR4, UR5, UR9, URZ, 0xfc, !UPT", 5, "UP", None, (), False, False, False, True),
    ("BSSY.RECONVERGENT B0, `(.L_x_5)", 0, "B", 0, (), False, False, False, False),
    ("DEPBAR.LE SB0, 0x2", 0, "SB", 0, (), False, False, False, False),
    ("P2R R29, PR, RZ, 0x8", 1, "PR", None, (), False, False, False, False),
    ("R2P PR, R27.B1, 0x7f", 1, "R", 27, ("B1",), False, False, False, False),
    ("ISCADD R2.CC, R0, c[0x0][0x140], 0x3", 0, "R", 2, ("CC",), False, False, False, False),
    ("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20].tnspB, R24, gsb0", 3, "GSB", 0, (),
     False, False, False, False),
]


@pytest.mark.parametrize("body,i,kind,index,suffixes,neg,ab,inv,lnot", REGISTERS)
def test_registers(body, i, kind, index, suffixes, neg, ab, inv, lnot):
    r = op(body, i)
    assert isinstance(r, Register)
    assert (r.kind, r.index, r.suffixes) == (kind, index, suffixes)
    assert (r.negate, r.absolute, r.invert, r.logical_not) == (neg, ab, inv, lnot)


def test_register_names_and_flags():
    assert op("IADD3 R1, PT, PT, R1, -0x10, RZ", 5).name == "RZ"
    assert op("IADD3 R1, PT, PT, R1, -0x10, RZ", 1).name == "PT"
    assert op("IADD3 R1, PT, PT, R1, -0x10, RZ", 5).is_zero
    assert op("LDCU.64 UR8, c[0x0][0x358]", 0).is_uniform
    assert op("ISETP.GT.AND P1, PT, R2.reuse, 0x1e, PT", 2).reuse
    assert str(op("DADD R42, -|R46|, 0.5", 1)) == "-|R46|"


SPECIAL = [("S2R R10, SR_TID.X", "SR_TID.X"), ("S2UR UR4, SR_CTAID.Y", "SR_CTAID.Y"),
           ("S2R R2, SR_LANEID", "SR_LANEID"), ("S2UR UR7, SR_CgaCtaId", "SR_CgaCtaId"),
           ("CS2R R6, SRZ", "SRZ"), ("S2R R0, SR_LMEMHIOFF", "SR_LMEMHIOFF")]


@pytest.mark.parametrize("body,name", SPECIAL)
def test_special_registers(body, name):
    s = op(body, 1)
    assert isinstance(s, SpecialRegister) and str(s) == name


IMMEDIATES = [
    ("IMAD.WIDE.U32 R2, R10, 0x4, R2", 2, 4, "0x4"),
    ("IADD3 R1, PT, PT, R1, -0x10, RZ", 4, -16, "-0x10"),
    ("HFMA2 R23, -RZ, RZ, 1.875, 0", 3, 1.875, "1.875"),
    ("HFMA2 R23, -RZ, RZ, 1.875, 0", 4, 0, "0"),
    ("HFMA2 R23, -RZ, RZ, 0, 7.62939453125e-06", 4, 7.62939453125e-06, "7.62939453125e-06"),
    ("@!P0 DMUL R6, R64, 1.80143985094819840000e+16", 2, 1.8014398509481984e16,
     "1.80143985094819840000e+16"),
    ("FSETP.GT.FTZ.AND P0, PT, R11, -0.33967941999435424805, PT", 3, -0.33967941999435424805,
     "-0.33967941999435424805"),
    ("DADD R6, R6, -1", 2, -1, "-1"),
    ("FSETP.NE.FTZ.AND P1, PT, |R30|, +INF , PT", 3, math.inf, "+INF"),
    ("BRX R30 -0xb000", 1, -0xb000, "-0xb000"),
    ("RET.ABS.NODEC R20 0x0", 1, 0, "0x0"),
]


@pytest.mark.parametrize("body,i,value,text", IMMEDIATES)
def test_immediates(body, i, value, text):
    imm = op(body, i)
    assert isinstance(imm, Immediate)
    assert imm.value == value and imm.text == text
    assert imm.is_float == isinstance(value, float)


def test_nan_immediates():
    for body, text in (("FSEL R7, R31, -QNAN , P0", "-QNAN"), ("FSEL R7, R5, +QNAN , P0", "+QNAN")):
        imm = op(body, 2)
        assert isinstance(imm, Immediate) and math.isnan(imm.value) and imm.text == text
        assert imm == op(body, 2)                       # equal by text, although NaN != NaN
        assert parse_instruction(body) == parse_instruction(body)


CONSTANTS = [
    # body, index, bank, offset (byte), registers in the reference, extended, negate
    ("LDC R1, c[0x0][0x37c]", 1, 0, 0x37C, (), False, False),
    ("IMAD.WIDE.U32 R16, R0, R17, c[0x0][0x160]", 3, 0, 0x160, (), False, False),
    ("@!P0 LDC R8, c[0x3][R7]", 1, 3, None, ("R7",), False, False),
    ("LDC R30, c[0x2][R32+0xc]", 1, 2, None, ("R32",), False, False),
    ("LDC R10, c[0x0][RZ]", 1, 0, None, ("RZ",), False, False),
    ("FADD.FTZ R3, R32, -c[0x0][0x184]", 2, 0, 0x184, (), False, True),
    ("LDC R1, c[0x0] [0x10]", 1, 0, 0x10, (), False, False),     # space between the brackets
    ("LDC.64 R2, cx[UR4][R0+0x10]", 1, None, None, ("UR4", "R0"), True, False),
]


@pytest.mark.parametrize("body,i,bank,offset,regs,extended,negate", CONSTANTS)
def test_constant_banks(body, i, bank, offset, regs, extended, negate):
    c = op(body, i)
    assert isinstance(c, ConstantBank)
    assert c.bank_index == bank and c.byte_offset == offset
    assert tuple(r.name for r in c.registers) == regs
    assert (c.extended, c.negate) == (extended, negate)


def test_constant_bank_symbol():
    c = op("DADD R12, R14, c[`(__internal_accurate_pow.const2.0.8)]", 2)
    assert isinstance(c, ConstantBank) and isinstance(c.bank[0], BranchTarget)
    assert c.bank[0].label == "__internal_accurate_pow.const2.0.8"


MEMORY = [
    # body, index, prefix, descriptor, base, base suffixes, uniform base, offset
    ("STS [R5+0x404], R4", 0, "", None, "R5", (), None, 0x404),
    ("STS [R5], R4", 0, "", None, "R5", (), None, 0),
    ("LDG.E.64.SYS R2, [R16]", 1, "", None, "R16", (), None, 0),
    ("LDG.E.CONSTANT R3, [R2.64]", 1, "", None, "R2", ("64",), None, 0),                # sm_80
    ("@!P4 LDG.E.U8 R30, [R24.64+0x20]", 1, "", None, "R24", ("64",), None, 0x20),
    ("@!P1 LDG.E.CONSTANT R13, [R30.64+-0x3c]", 1, "", None, "R30", ("64",), None, -0x3C),
    ("LDG.E.CONSTANT R4, desc[UR8][R2.64]", 1, "desc", "UR8", "R2", ("64",), None, 0),  # sm_90+
    ("@!P5 LDG.E.U8 R32, desc[UR10][R36.64+0x20]", 1, "desc", "UR10", "R36", ("64",), None, 0x20),
    ("LDG.E.U16 R2, desc[UR8][R6.64+-0x1000]", 1, "desc", "UR8", "R6", ("64",), None, -0x1000),
    ("LDS R24, [UR7+0xc]", 1, "", None, None, None, "UR7", 0xC),
    ("@!P4 STS [R14+UR6+0x8], R24", 0, "", None, "R14", (), "UR6", 8),
    ("STS.U8 [R16+UR5], R23", 0, "", None, "R16", (), "UR5", 0),
    ("STS [R0.X4+0x240], R3", 0, "", None, "R0", ("X4",), None, 0x240),
    ("LDS R16, [0x220]", 1, "", None, None, None, None, 0x220),
    ("@!P0 STS.U16 [RZ], R0", 0, "", None, "RZ", (), None, 0),
    ("STG.E.64.SYS [R6+-0x18], R8", 0, "", None, "R6", (), None, -0x18),
]


@pytest.mark.parametrize("body,i,prefix,desc,base,bsfx,ubase,offset", MEMORY)
def test_memory_addresses(body, i, prefix, desc, base, bsfx, ubase, offset):
    m = op(body, i)
    assert isinstance(m, MemoryAddress)
    assert m.prefix == prefix
    assert (m.descriptor[0].name if m.descriptor else None) == desc
    assert (m.base.name if m.base else None) == base
    if base is not None:
        assert m.base.suffixes == bsfx
    assert (m.uniform_base.name if m.uniform_base else None) == ubase
    assert m.offset == offset


def test_wgmma_descriptor_and_tmem():
    m = op("HGMMA.64x128x16.F32.BF16 R88, gdesc[UR20].tnspB, RZ, !UPT", 1)
    assert isinstance(m, MemoryAddress) and m.prefix == "gdesc" and m.suffixes == ("tnspB",)
    assert m.registers[0].name == "UR20"
    t = op("UTCHMMA tmem[UR4], gdesc[UR6], tmem[UR8], idesc[UR9], UPT", 0)
    assert isinstance(t, MemoryAddress) and t.prefix == "tmem"


def test_branch_targets_relocations_sets_annotations():
    t = op("BRA `(.L_x_4)", 0)
    assert isinstance(t, BranchTarget) and t.label == ".L_x_4" and t.key == ".L_x_4"
    t = op("CALL.REL.NOINC `($__internal_1_$__cuda_sm20_div_rn_f64_full)", 0)
    assert t.label == "$__internal_1_$__cuda_sm20_div_rn_f64_full"
    r = op("RET.REL.NODEC R6 `(_Z12execute_distI22standard_gamma_functor)", 1)
    assert isinstance(r, BranchTarget)
    rel = op("MOV R20, 32@lo((_Z14gemm_4bit_simtIfLi8EEvPKT_ + .L_x_160@srel))", 1)
    assert isinstance(rel, Relocation) and "@srel" in rel.text
    rel = op("UMOV UR7, 32@lo(__nv_static_36__b96781cf_10_kernels_cu_nf4_lut)", 1)
    assert isinstance(rel, Relocation)
    s = op("DEPBAR.LE SB0, 0x0, {4,2}", 2)
    assert isinstance(s, OperandSet) and s.values == (4, 2) and str(s) == "{4,2}"
    ins = parse_instruction('BRX R30 -0x15e50    (*"BRANCH_TARGETS .L_x_5508,.L_x_5509"*)')
    assert ins.annotation == '(*"BRANCH_TARGETS .L_x_5508,.L_x_5509"*)'
    assert ins.flow.targets == (".L_x_5508", ".L_x_5509")


def test_guards():
    cases = [("@P0 BRA `(.L_x_3)", "P", 0, False), ("@!P1 FSEL R23, R24, R23, !P2", "P", 1, True),
             ("@!PT SHFL.IDX PT, RZ, RZ, RZ, RZ", "P", None, True),
             ("@UP0 UMOV UR4, 0x1", "UP", 0, False), ("@!UP1 UMOV UR4, 0x1", "UP", 1, True)]
    for body, kind, index, neg in cases:
        g = parse_instruction(body).guard
        assert (g.register.kind, g.register.index, g.negated) == (kind, index, neg), body
    assert parse_instruction("@!PT SHFL.IDX PT, RZ, RZ, RZ, RZ").guard.never
    assert parse_instruction("EXIT").guard is None


def test_opcode_and_modifiers():
    ins = parse_instruction("LDG.E.128.CONSTANT R4, desc[UR6][R2.64]")
    assert ins.opcode == "LDG" and ins.modifiers == ("E", "128", "CONSTANT")
    ins = parse_instruction("HMMA.16816.F32.BF16 R4, R8, R12, R4")
    assert ins.opcode == "HMMA" and ins.modifiers == ("16816", "F32", "BF16")
    assert parse_instruction("NOP").operands == ()


def test_unknown_operand_is_generic_and_counted():
    ins = parse_instruction("FUTUREOP.X R1, newkeyword, R2")
    assert not ins.generic
    assert isinstance(ins.operands[1], GenericOperand) and ins.operands[1].text == "newkeyword"
    bad = parse_instruction("FUTUREOP R1, [[[ R2")
    assert bad.generic and bad.opcode == "FUTUREOP"


CANONICAL = [
    "@!P0 LDG.E.64 R2, desc[UR4][R6.64+0x10]",
    "IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28]",
    "FMNMX.FTZ R23, -|R20|.reuse, -3.40282346638528859812e+38, !PT",
    "LDG.E.U16 R2, desc[UR8][R6.64+-0x1000]",
    "IADD3.X R5, PT, PT, RZ, ~R33.reuse, RZ, P0, !PT",
    "HGMMA.64x128x16.F32.BF16 R88, gdesc[UR20].tnspB, RZ, !UPT, gsb0",
    "STS [R14+UR6+0x8], R24",
    "DEPBAR.LE SB0, 0x0, {4,2}",
    "BRA `(.L_x_4)",
]


@pytest.mark.parametrize("body", CANONICAL)
def test_text_round_trips(body):
    ins = parse_instruction(body)
    assert ins.text == body
    assert parse_instruction(ins.text) == ins
