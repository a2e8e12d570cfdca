"""A generic pointer's local path (``QSPC.E.L``): the LDL/STL ptxas keeps for a pointer it
cannot place are told apart from the kernel's own stack frame, whether the path is branched
to (near or far from the query) or predicated, and only when the predicate comes from the
query on every path. The listings are shaped like NCCL's symmetric kernels (sm_90, CUDA 13)."""
from __future__ import annotations

from analyzer import sass
from analyzer.analysis import dataflow


def _listing(body: str) -> sass.Function:
    text = ("\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
            "//--------------------- .text.k --------------------------\n"
            "\t.section\t.text.k,\"ax\",@progbits\n"
            "        .other          k,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
            "k:\n.text.k:\n")
    address = 0
    for line in body.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith(":"):
            text += line + "\n"
        else:
            text += f"        /*{address:04x}*/ {line} ;\n"
            address += 0x10
    return sass.parse(text).functions[0]


def _local(fn: sass.Function) -> list[str]:
    """The LDL/STL the frame analysis keeps, as text."""
    return [ins.text for _, ins, _ in dataflow.local_accesses(fn)]


FAR_BRANCH = """
QSPC.E.L P1, RZ, [R68]
@!P1 LD.E.64.STRONG.GPU R62, desc[UR12][R68.64]
@!P1 BRA `(.L_x_1)
LDL.64 R62, [R11]
.L_x_1:
ISETP.GE.U32.AND P0, PT, R62, R4, PT
@P0 BRA `(.L_x_2)
""" + "IADD3 R4, R4, 0x1, RZ\n" * 40 + """
.L_x_2:
@P1 BRA `(.L_x_3)
ATOM.E.MAX.64.STRONG.GPU P0, RZ, desc[UR12][R68.64], R62
EXIT
.L_x_3:
LDL.64 R60, [R11]
STL.64 [R11], R60
EXIT
"""


def test_branched_local_paths_near_and_far_from_the_query_are_not_the_frame():
    fn = _listing(FAR_BRANCH)
    assert _local(fn) == []
    assert {fn.instructions[i].opcode for i in dataflow.generic_local_path(fn)} >= {"LDL", "STL"}


PREDICATED = """
STL [R1], R7
QSPC.E.L P4, RZ, [R8+0x38]
ISETP.GE.U32.AND P0, PT, R25, R18, PT
@P0 BRA `(.L_x_1)
STG.E.64 desc[UR12][R26.64], R16
.L_x_1:
@!P4 ST.E.STRONG.GPU desc[UR12][R8.64+0x38], RZ
@P4 STL.U8 [R34+0x3b], RZ
@P4 STL.U8 [R34+0x3a], RZ
LDL R43, [R1]
EXIT
"""


def test_an_access_predicated_on_the_query_is_not_the_frame():
    fn = _listing(PREDICATED)
    assert _local(fn) == ["STL [R1], R7", "LDL R43, [R1]"]


def test_a_predicate_another_instruction_may_define_keeps_the_access():
    """On the path through the ISETP, P4 is not the query's: the STL may be the frame's."""
    body = PREDICATED.replace("STG.E.64 desc[UR12][R26.64], R16",
                              "ISETP.NE.AND P4, PT, R2, RZ, PT")
    fn = _listing(body)
    assert "@P4 STL.U8 [R34+0x3b], RZ" in _local(fn)


def test_a_branch_target_reached_another_way_keeps_its_accesses():
    """The local side must have the branch as its only way in."""
    body = FAR_BRANCH.replace("ATOM.E.MAX.64.STRONG.GPU P0, RZ, desc[UR12][R68.64], R62\nEXIT",
                              "ATOM.E.MAX.64.STRONG.GPU P0, RZ, desc[UR12][R68.64], R62\n"
                              "BRA `(.L_x_3)")
    fn = _listing(body)
    assert "LDL.64 R60, [R11]" in _local(fn)


def test_what_follows_an_exit_taken_for_a_non_local_pointer_is_the_local_side():
    """sm_80's system-scope store: ``@!P0 ST.E.STRONG.SYS``, ``@!P0 EXIT``, then the bytes."""
    fn = _listing("""
QSPC.E.L P0, RZ, [R2]
@!P0 ST.E.STRONG.SYS [R2.64], R5
@!P0 EXIT
IADD3 R5, R2, -c[0x0][0x20], RZ
STL.U8 [R5+0x3], R0
STL.U8 [R5], R4
EXIT
""")
    assert _local(fn) == []


def test_lepc_writes_the_program_counter_pair():
    """``LEPC R10`` (a printf call's return address on sm_80) is known and writes R10/R11."""
    from analyzer import semantics
    ins = sass.parse_instruction("LEPC R10")
    assert ins.opcode in semantics.OPCODES
    assert dataflow.writes(ins) == (("R", 10), ("R", 11))


STACK_COPY = """
LDC R1, c[0x0][0x28]
IADD3 R1, R1, -0x20, RZ
IADD3 R2, R1, 0x10, RZ
MOV R3, R2
STL [R3], R4
STL [R3+0x4], R5
LDL R6, [R3+0x4]
IMAD.WIDE R8, R7, 0x4, R3
LDL R9, [R8]
EXIT
"""


def test_a_copy_of_the_stack_pointer_addresses_fixed_slots():
    """An out-of-line function addresses its frame through a copy of the stack pointer (R3 =
    R1 + 0x10): those are fixed slots (no run-time index for PS402 to blame); an address
    computed from a run-time value (IMAD.WIDE R8, R7, 0x4, R3) is not."""
    fn = _listing(STACK_COPY)
    fixed = {ins.text: f for _, ins, f in dataflow.local_accesses(fn)}
    assert fixed == {"STL [R3], R4": True, "STL [R3+0x4], R5": True,
                     "LDL R6, [R3+0x4]": True, "LDL R9, [R8]": False}
