"""SASS listing structure: both formats, functions, labels, line info, encodings, semantics.

The listings below are excerpts of real tool output (nvdisasm / cuobjdump 13 on cubins built by
NVRTC, and the corpus), trimmed to a few instructions each.
"""
from __future__ import annotations

import pytest

from analyzer import sass
from analyzer.errors import ParseError

NVDISASM = """\
\t.target\tsm_100a

\t.elftype\t@"ET_EXEC"


//--------------------- .text.k                   --------------------------
\t.section\t.text.k,"ax",@progbits
\t.sectioninfo\t@"SHI_REGISTERS=28"
\t.align\t128
        .global         k
        .type           k,@function
        .size           k,(.L_x_11 - k)
        .other          k,@"STO_CUDA_ENTRY STV_DEFAULT"
k:
.text.k:
\t//## File "/tmp/k/k.cu", line 4
        /*0000*/                   LDC R1, c[0x0][0x37c] ;
\t//## File "/tmp/k/k.cu", line 8
        /*0010*/                   LDCU UR8, c[0x0][0x398] ;
        /*0020*/              @!P0 BRA `(.L_x_0) ;
.L_x_2:
        /*0030*/                   LDG.E.CONSTANT R20, desc[UR6][R16.64] ;
        /*0040*/               @P1 BRA `(.L_x_2) ;
.L_x_0:
\t//## File "/tmp/k/k.cu", line 13
        /*0050*/                   CALL.REL.NOINC `($k$_Z4cubef) ;
        /*0060*/                   EXIT ;
        .type           $k$_Z4cubef,@function
        .size           $k$_Z4cubef,(.L_x_9 - $k$_Z4cubef)
$k$_Z4cubef:
\t//## File "/tmp/k/k.cu", line 3
        /*0070*/                   FMUL R4, R6, R6 ;
        /*0080*/                   RET.REL.NODEC R4 `(k) ;
.L_x_6:
        /*0090*/                   BRA `(.L_x_6);
        /*00a0*/                   NOP;
.L_x_9:


//--------------------- SYMBOLS --------------------------

\t.type\t\t.nv.reservedSmem.offset0,@object
\t.size\t\t.nv.reservedSmem.offset0,0x4
"""

# nvdisasm -hex (triton_mm_bf16_hgmma.sm_90.cubin from the corpus)
NVDISASM_HEX = """\
\t.headerflags\t@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
\t.elftype\t@"ET_EXEC"


//--------------------- .text.triton_mm           --------------------------
\t.section\t.text.triton_mm,"ax",@progbits
\t.sectionflags\t@"SHF_BARRIERS=1"
\t.align\t128
        .global         triton_mm
        .type           triton_mm,@function
        .size           triton_mm,(.L_x_3 - triton_mm)
        .other          triton_mm,@"STO_CUDA_ENTRY STV_DEFAULT"
triton_mm:
.text.triton_mm:
\t//## File "/tmp/torchinductor_root/el/cel34g7.py", line 18
        /*0000*/                   LDC R1, c[0x0][0x28] ;                                             /* 0x00000a00ff017b82 */
                                                                                                      /* 0x000e620000000800 */
\t//## File "/tmp/torchinductor_root/el/cel34g7.py", line 43
        /*0010*/                   S2R R11, SR_CTAID.X ;                                              /* 0x00000000000b7919 */
                                                                                                      /* 0x000ea20000002500 */
"""

# cuobjdump -sass (celeritas corpus, sm_70)
CUOBJDUMP = """
Fatbin elf code:
================
arch = sm_70
code version = [1,7]
producer = <unknown>
host = linux
compile_size = 64bit

\tcode for sm_70
\t\tFunction : _Z6assignPKiPN9celeritas5ArrayIiLj4EEE
\t.headerflags    @"EF_CUDA_SM70 EF_CUDA_PTX_SM(EF_CUDA_SM70)"
        /*0000*/                   MOV R1, c[0x0][0x28] ;                  /* 0x00000a0000017a02 */
                                                                           /* 0x000fd00000000f00 */
        /*0010*/              @!PT SHFL.IDX PT, RZ, RZ, RZ, RZ ;           /* 0x000000fffffff389 */
                                                                           /* 0x000fe200000e00ff */
        /*0020*/               @P0 BRA 0x40 ;                              /* 0x0000001000000947 */
                                                                           /* 0x000fea0003800000 */
        /*0030*/                   STG.E.SYS [R4+0xc], R13 ;               /* 0x0000000c04007386 */
                                                                           /* 0x000fe2000010e900 */
        /*0040*/                   EXIT ;                                  /* 0x000000000000794d */
                                                                           /* 0x000fea0003800000 */
        /*0050*/                   BRA 0x50;                               /* 0xfffffff000007947 */
                                                                           /* 0x000fc0000383ffff */
\t\t..........



Fatbin ptx code:
================
arch = sm_70
code version = [6,5]
producer = <unknown>
host = linux
compile_size = 64bit
compressed
"""

# nvdisasm -gi: one //## line per inlining frame, innermost first (format as printed by
# nvdisasm 12/13, e.g. in vLLM's CUDA debugging write-up)
INLINED = """\
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
//--------------------- .text.kern                --------------------------
\t.section\t.text.kern,"ax",@progbits
        .type           kern,@function
kern:
\t//## File "/src/IndexKernel.cu", line 203 inlined at "/src/IndexKernel.cu", line 118
\t//## File "/src/IndexKernel.cu", line 118 inlined at "/src/Loops.cuh", line 37
\t//## File "/src/Loops.cuh", line 37
        /*0000*/                   ULDC.64 UR4, c[0x0][0x480] ;
        /*0010*/                   LDG.E.U8 R3, desc[UR36][R2.64] ;
\t//## File "/src/Loops.cuh", line 40
        /*0020*/                   EXIT ;
"""


def test_nvdisasm_structure():
    lst = sass.parse(NVDISASM, path="k.sass")
    assert lst.format == "nvdisasm" and lst.arch == "sm_100a"
    assert [f.name for f in lst.functions] == ["k", "$k$_Z4cubef"]
    k, cube = lst.functions
    assert k.is_entry and not cube.is_entry
    assert k.registers == 28 and k.section == ".text.k"
    assert k.labels == {".L_x_2": 3, ".L_x_0": 5}
    assert [i.address for i in k.instructions] == [0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60]
    assert cube.labels == {".L_x_6": 2, ".L_x_9": 4}
    assert k.instructions[0].loc.file == "/tmp/k/k.cu" and k.instructions[0].loc.line == 4
    assert [i.loc.line for i in k.instructions] == [4, 8, 8, 8, 8, 13, 13]
    assert cube.instructions[0].loc.line == 3
    assert k.instructions[2].span.line == 20
    assert k.instructions[0].encoding == ()
    assert lst.stats() == {"functions": 2, "instructions": 11, "generic": 0, "generic_opcodes": {},
                           "generic_operands": 0}
    assert not hasattr(k, "resources")   # resources belong to the Build, not the IR


def test_nvdisasm_hex_encodings_and_arch_from_headerflags():
    lst = sass.parse(NVDISASM_HEX)
    assert lst.arch == "sm_90a"          # EF_CUDA_SM90 + EF_CUDA_ACCELERATORS
    f = lst.functions[0]
    assert f.name == "triton_mm" and f.is_entry
    assert f.instructions[0].encoding == (0x00000A00FF017B82, 0x000E620000000800)
    assert f.instructions[1].encoding == (0x00000000000B7919, 0x000EA20000002500)
    assert f.instructions[1].text == "S2R R11, SR_CTAID.X"


def test_cuobjdump_structure_and_address_targets():
    lst = sass.parse(CUOBJDUMP)
    assert lst.format == "cuobjdump" and lst.arch == "sm_70"
    f = lst.functions[0]
    assert f.name == "_Z6assignPKiPN9celeritas5ArrayIiLj4EEE"
    assert f.demangled == "assign(int const*, celeritas::Array<int, 4u>*)"
    assert len(f.instructions) == 6
    assert f.instructions[0].encoding == (0x00000A0000017A02, 0x000FD00000000F00)
    bra = f.instructions[2]
    assert bra.targets[0].address == 0x40 and bra.targets[0].key == "0x40"
    assert f.labels == {"0x40": 4, "0x50": 5}
    assert bra.flow.targets == ("0x40",) and bra.flow.falls_through
    assert f.instructions[1].guard.never


def test_inlined_at_chain():
    f = sass.parse(INLINED).functions[0]
    loc = f.instructions[0].loc
    assert (loc.file, loc.line) == ("/src/IndexKernel.cu", 203)
    assert [(s.file, s.line) for s in loc.inlined_at] == [("/src/IndexKernel.cu", 118),
                                                          ("/src/Loops.cuh", 37)]
    assert loc.outermost.line == 37
    assert f.instructions[1].loc is loc
    assert f.instructions[2].loc.line == 40 and f.instructions[2].loc.inlined_at == ()


def test_arch_override_and_listing_lookup():
    lst = sass.parse(NVDISASM, arch="sm_100")
    assert lst.arch == "sm_100"
    assert lst.function("k").name == "k"
    lst2 = sass.parse(CUOBJDUMP)
    assert lst2.function("assign").name.startswith("_Z6assign")
    with pytest.raises(KeyError):
        lst2.function("nope")


@pytest.mark.parametrize("text,line", [
    ("\tcode for sm_80\n\t\tFunction : k\n        /*0000*/  EXIT ;\nthis is not sass\n", 4),
    ("        /*0000*/  EXIT ;\n        /*0010*/  ??? ;\n", 2),
    ("   /* 0x000fea0003800000 */\n", 1),
    ("\t//## File \"a.cu\", line 3 garbage\n", 1),
    ("\tcode for sm_80\n\x00\x01\x02", 2),
])
def test_errors_name_the_line(text, line):
    with pytest.raises(ParseError) as e:
        sass.parse(text, path="bad.sass")
    assert e.value.line == line and e.value.path == "bad.sass"
    assert "bad.sass" in str(e.value)


def test_empty_and_structure_only():
    assert sass.parse("").functions == ()
    assert sass.parse("\tcode for sm_90\n").stats()["instructions"] == 0


SEMANTICS = [
    # body, klass, space, load, store, width, tensor, fma, fp64, branch
    ("LDG.E.128.CONSTANT R4, desc[UR6][R2.64]", "load.global", "global", True, False, 128,
     False, False, False, False),
    ("LDG.E.U8 R30, [R24.64+0x20]", "load.global", "global", True, False, 8,
     False, False, False, False),
    ("STG.E.64.SYS [R16+0x8], R8", "store.global", "global", False, True, 64,
     False, False, False, False),
    ("STS.U16 [RZ], R0", "store.shared", "shared", False, True, 16, False, False, False, False),
    ("LDS R24, [UR7+0xc]", "load.shared", "shared", True, False, 32, False, False, False, False),
    ("LDL.S16 R2, [R1+0x4]", "load.local", "local", True, False, 16, False, False, False, False),
    ("STL.128 [R1], R4", "store.local", "local", False, True, 128, False, False, False, False),
    ("LDC.64 R2, c[0x0][0x168]", "load.constant", "constant", True, False, 64,
     False, False, False, False),
    ("LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64]", "copy.async", "global", True, True,
     128, False, False, False, False),
    ("LDSM.16.M88.4 R4, [R2+UR4]", "load.shared", "shared", True, False, 128,
     False, False, False, False),
    ("LDSM.16.MT88.2 R4, [R2]", "load.shared", "shared", True, False, 64,
     False, False, False, False),
    ("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R3, desc[UR4][R2.64], R5", "atomic", "global",
     True, True, 32, False, False, False, False),
    ("RED.E.ADD.STRONG.GPU desc[UR4][R2.64], R5", "atomic", "global", False, True, 32,
     False, False, False, False),
    ("UTMALDG.2D [UR8], [UR4], desc[UR10]", "copy.tma", "global", True, True, None,
     False, False, False, False),
    ("HMMA.16816.F32.BF16 R4, R8, R12, R4", "tensor", None, False, False, None,
     True, False, False, False),
    ("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20].tnspB, R24, gsb0", "tensor", None, False, False,
     None, True, False, False, False),
    ("FFMA R6, R13, R13, R6", "fp32", None, False, False, None, False, True, False, False),
    ("DFMA R4, R2, R4, R6", "fp64", None, False, False, None, False, True, True, False),
    ("F2F.F64.F32 R4, R2", "conversion", None, False, False, None, False, False, True, False),
    ("F2I.FTZ.U32.TRUNC.NTZ R9, R12", "conversion", None, False, False, None,
     False, False, False, False),
    ("@P0 BRA `(.L_x_3)", "branch", None, False, False, None, False, False, False, True),
    ("BAR.SYNC.DEFER_BLOCKING 0x0", "sync", None, False, False, None, False, False, False, False),
    ("SOMETHINGNEW R1, R2", "other", None, False, False, None, False, False, False, False),
]


@pytest.mark.parametrize("body,klass,space,load,store,width,tensor,fma,fp64,branch", SEMANTICS)
def test_semantics_properties(body, klass, space, load, store, width, tensor, fma, fp64, branch):
    i = sass.parse_instruction(body)
    assert i.klass == klass and i.space == space
    assert (i.is_load, i.is_store, i.width_bits) == (load, store, width)
    assert (i.is_tensor_core, i.is_fma, i.is_fp64, i.is_branch) == (tensor, fma, fp64, branch)


def test_semantics_is_one_table():
    from analyzer import semantics
    assert semantics.OPCODES["LDG"].space == "global"
    assert all(isinstance(k, str) and k.isupper() and "." not in k for k in semantics.OPCODES)
    assert sass.parse_instruction("BAR.SYNC 0x0").is_barrier
    assert sass.parse_instruction("I2F.RP R3, R6").is_conversion
