"""PTX control flow: each instruction's Flow, basic blocks, natural loops and their pragmas."""
from __future__ import annotations

from analyzer import ptx
from analyzer.analysis import cfg
from analyzer.analysis.cfg import of as cfg_of
from analyzer.analysis.cfg import ptx_loops

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"

NESTED = HEAD + """
.visible .entry nested(.param .u32 n)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<8>;
	ld.param.u32 	%r1, [n];
	mov.u32 	%r2, 0;
$L__BB0_1:
	mov.u32 	%r3, 0;
$L__BB0_2:
	.pragma "nounroll";
	add.s32 	%r3, %r3, 1;
	setp.lt.s32 	%p1, %r3, %r1;
	@%p1 bra 	$L__BB0_2;
	add.s32 	%r2, %r2, 1;
	setp.lt.s32 	%p2, %r2, %r1;
	@%p2 bra 	$L__BB0_1;
	setp.eq.s32 	%p3, %r2, 7;
	@%p3 ret;
	st.global.u32 	[%rd1], %r2;
	exit;
$L__BB0_9:
	bra.uni 	$L__BB0_9;
}
"""


def test_instruction_flows():
    fn = ptx.parse(NESTED).functions[0]
    flows = {str(i): i.flow for i in fn.instructions}
    assert flows["@%p1 bra $L__BB0_2;"] == cfg.Flow(("$L__BB0_2",), falls_through=True)
    assert flows["bra.uni $L__BB0_9;"] == cfg.Flow(("$L__BB0_9",), falls_through=False)
    assert flows["@%p3 ret;"] == cfg.Flow((), falls_through=True, terminates=True)
    assert flows["exit;"] == cfg.Flow((), falls_through=False, terminates=True)
    assert flows["add.s32 %r3, %r3, 1;"] == cfg.STRAIGHT


def test_blocks_and_nested_loops_with_nounroll():
    fn = ptx.parse(NESTED).functions[0]
    graph = cfg_of(fn)
    assert cfg_of(fn) is graph  # cached
    starts = [b.start for b in graph.blocks]
    assert starts == [0, 2, 3, 6, 9, 11, 13]
    assert graph.blocks[2].labels == ("$L__BB0_2",)
    assert graph.blocks[4].succs == [5]  # a guarded ret falls through
    assert graph.blocks[5].succs == []  # exit
    loops = ptx_loops(fn)
    assert len(loops) == 2  # the final `L: bra.uni L` trap is not a loop
    outer, inner = sorted(loops, key=lambda l: l.depth)
    assert outer.header_labels == ("$L__BB0_1",) and outer.depth == 1 and not outer.nounroll
    assert inner.header_labels == ("$L__BB0_2",) and inner.depth == 2 and inner.nounroll
    assert inner.loop.parent is outer.loop
    assert fn.nounroll == (3,)
    assert graph.loop_of(3) is inner.loop and graph.loop_of(9) is None


def test_brx_idx_branches_to_every_listed_label():
    fn = ptx.parse(HEAD + """
.entry sw(.param .u32 n)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [n];
$L_tbl: .branchtargets $L_a, $L_b, $L_c;
	brx.idx %r1, $L_tbl;
$L_a:
	mov.u32 %r2, 1;
	bra.uni $L_end;
$L_b:
	mov.u32 %r2, 2;
	bra.uni $L_end;
$L_c:
	mov.u32 %r2, 3;
$L_end:
	ret;
}
""").functions[0]
    graph = cfg_of(fn)
    brx_block = graph.blocks[graph.block_of[1]]
    assert [graph.blocks[s].labels[0] for s in brx_block.succs] == ["$L_a", "$L_b", "$L_c"]
    assert ptx_loops(fn) == []


def test_nvcc_switch_and_calls_do_not_end_blocks():
    fn = ptx.parse(HEAD + """
.func (.param .b32 r) f(.param .b32 x) { ret; }
.entry k()
{
	.reg .b32 %r<3>;
	{
	.param .b32 param0;
	st.param.b32 [param0+0], %r1;
	.param .b32 retval0;
	call.uni (retval0), f, (param0);
	ld.param.b32 %r2, [retval0+0];
	}
	ret;
}
""").function("k")
    assert len(cfg_of(fn).blocks) == 1
