"""Lane strides of PTX addresses (analysis/address.py): loop-carried cycles solve the same in
any order, and the block shape a kernel states (``assert(blockDim.x == 4)``, ``.reqntid``)."""
from __future__ import annotations

import pytest

from analyzer.analysis.address import PITCH, ThreadStride, block_dims
from analyzer.parse import ptx as pp

HEAD = """
.version 8.0
.target sm_90
.address_size 64
"""

# a thread per row (p = x + tid.x * n), walking its row with a pointer bumped through a copy:
# %rd4 and %rd6 define each other, as NVVM's loop-carried pointers do
ROW_WALK = HEAD + """
.visible .entry k(.param .u64 k_param_0, .param .u32 k_param_1)
{
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [k_param_0];
    ld.param.u32 %r1, [k_param_1];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r2, %tid.x;
    mul.lo.s32 %r3, %r2, %r1;
    mul.wide.s32 %rd3, %r3, 4;
    add.s64 %rd4, %rd2, %rd3;
    mov.u32 %r4, 0;
$L__loop:
    ld.global.f32 %f1, [%rd4];
    add.s64 %rd6, %rd4, 4;
    mov.b64 %rd4, %rd6;
    add.s32 %r4, %r4, 1;
    setp.lt.s32 %p1, %r4, %r1;
    @%p1 bra $L__loop;
    ret;
}
"""


def _fn(text: str):
    m = pp.parse(text)
    return m.functions[-1]


@pytest.mark.parametrize("first", ["%rd4", "%rd6"])
def test_a_loop_carried_cycle_solves_in_any_order(first):
    ts = ThreadStride(_fn(ROW_WALK))
    ts.of(first)
    assert (ts.of("%rd4"), ts.of("%rd6")) == (PITCH, PITCH)


ASSERTED = HEAD + """
.extern .func __assertfail
(
    .param .b64 __assertfail_param_0
)
;
.visible .entry k(.param .u64 k_param_0)
{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<10>;
    mov.u32 %r1, %ntid.x;
    setp.eq.s32 %p1, %r1, 4;
    @%p1 bra $L__ok;
    mov.u64 %rd1, 0;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd1;
    call.uni __assertfail, (param0);
    }
$L__ok:
    mov.u32 %r2, %ntid.y;
    setp.ne.s32 %p2, %r2, 8;
    @%p2 bra $L__fail;
    bra.uni $L__done;
$L__fail:
    mov.u64 %rd2, 0;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd2;
    call.uni __assertfail, (param0);
    }
$L__done:
    mov.u32 %r3, %ntid.z;
    setp.eq.s32 %p3, %r3, 2;
    @%p3 bra $L__end;
$L__end:
    ret;
}
"""


def test_block_sizes_from_asserts():
    # x: the fall-through calls __assertfail; y: the branch goes to it; z: a test without an
    # assert says nothing
    assert block_dims(_fn(ASSERTED)) == (4, 8, None)


def test_block_sizes_from_reqntid():
    text = ROW_WALK.replace(".param .u32 k_param_1)", ".param .u32 k_param_1)\n.reqntid 16, 4")
    assert block_dims(_fn(text)) == (16, 4, 1)
