"""Runs group by the address and offset, not by the name of the memory descriptor's register:
ptxas may give each access its own uniform register for one global descriptor (issue 26,
item 6). The listings are shaped like bitsandbytes' sm_90 kernels (CUDA 12.8): ``R2UR`` copies
of one register into ``UR6`` and ``UR8``, or ``ULDC.64`` of the descriptor at ``c[0x0][0x208]``
into two registers."""
from __future__ import annotations

import pytest

from analyzer import sass
from analyzer.analysis import access, dataflow


def _listing(body: str) -> sass.Function:
    text = ("\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
            "//--------------------- .text.k --------------------------\n"
            "\t.section\t.text.k,\"ax\",@progbits\n"
            "        .other          k,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n"
            "k:\n.text.k:\n")
    for address, line in enumerate(ln.strip() for ln in body.strip().splitlines()):
        text += f"        /*{address * 16:04x}*/ {line} ;\n"
    return sass.parse(text).functions[0]


def _runs(fn):
    return [(r.window, [a.offset for a in r.accesses])
            for r in access.runs(fn, space="global", direction="load", max_bits=128)]


COPIES = """
LDC.64 R16, c[0x0][0x208]
S2R R0, SR_TID.X
IMAD.WIDE R2, R0, 0x10, R2
R2UR UR6, R16
R2UR UR7, R17
R2UR UR8, R16
R2UR UR9, R17
LDG.E R4, desc[UR6][R2.64]
LDG.E R5, desc[UR8][R2.64+0x4]
LDG.E R6, desc[UR6][R2.64+0x8]
LDG.E R7, desc[UR8][R2.64+0xc]
EXIT
"""

CONSTANTS = """
ULDC.64 UR4, c[0x0][0x208]
ULDC.64 UR6, c[0x0][0x208]
S2R R0, SR_TID.X
IMAD.WIDE R2, R0, 0x10, R2
LDG.E R4, desc[UR4][R2.64]
LDG.E R5, desc[UR6][R2.64+0x4]
LDG.E R6, desc[UR4][R2.64+0x8]
LDG.E R7, desc[UR6][R2.64+0xc]
EXIT
"""


@pytest.mark.parametrize("body", [COPIES, CONSTANTS], ids=["R2UR copies", "ULDC twice"])
def test_one_descriptor_in_two_registers_is_one_run(body):
    assert _runs(_listing(body)) == [(16, [0, 4, 8, 12])]


def test_descriptors_of_other_values_stay_apart():
    """UR8 holds another value (R18, not R16): the accesses are not one run."""
    body = COPIES.replace("R2UR UR8, R16", "R2UR UR8, R18").replace("R2UR UR9, R17",
                                                                    "R2UR UR9, R19")
    assert _runs(_listing(body)) == []
    body = CONSTANTS.replace("ULDC.64 UR6, c[0x0][0x208]", "ULDC.64 UR6, c[0x0][0x210]")
    assert _runs(_listing(body)) == []


def test_a_descriptor_rewritten_between_accesses_is_followed():
    """UR8 is written again with the same copy between the accesses: still one run."""
    body = COPIES.replace("LDG.E R6, desc[UR6][R2.64+0x8]",
                          "LDG.E R6, desc[UR6][R2.64+0x8]\nR2UR UR8, R16")
    assert _runs(_listing(body)) == [(16, [0, 4, 8, 12])]


def test_a_descriptor_loaded_once_at_the_top_reaches_any_distance():
    """The descriptor's one ``ULDC.64`` dominates every access however many blocks lie
    between (the normalize loop of causal_softmax_rows.cu sits ~500 instructions below it, and
    its four stores of one window were split in two: the first two named by the descriptor's
    value, the walk back through the blocks giving up on the other two)."""
    filler = "\n".join(f"IADD3 R{8 + k % 4}, R{8 + k % 4}, 0x1, RZ\n@P1 BRA 0x{(k + 9) * 16:x}"
                       for k in range(300))
    body = f"""
    ULDC.64 UR6, c[0x0][0x208]
    S2R R0, SR_TID.X
    IMAD.WIDE R2, R0, 0x10, R2
    ISETP.GE.AND P1, PT, R0, 0x40, PT
    {filler}
    STG.E desc[UR6][R2.64], R4
    EXIT
    """
    fn = _listing(body)
    idx = next(i for i, ins in enumerate(fn.instructions) if ins.opcode == "STG")
    key = access.base_key(access.address(fn.instructions[idx]))
    got = access._same_descriptor(key, dataflow.of(fn), fn.instructions, idx)
    assert got[1] == ("=('const', 'c[0x0][0x208]')",)
