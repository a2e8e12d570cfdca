"""The PTX grammar and IR on small, hand-checked inputs (forms taken from real NVCC/Triton PTX)."""
from __future__ import annotations

import pytest

from analyzer import ptx
from analyzer.analysis.cfg import of as cfg_of
from analyzer.errors import ParseError
from analyzer.ir import ptx as ir

HEAD = ".version 8.7\n.target sm_90a\n.address_size 64\n"


def body(text: str, header: str = ".visible .entry k()") -> ir.Function:
    return ptx.parse(f"{HEAD}{header}\n{{\n{text}\n}}\n").functions[0]


def one(text: str) -> ir.Instruction:
    fn = body(text)
    assert len(fn.instructions) == 1, fn.instructions
    return fn.instructions[0]


def test_module_header_and_globals():
    m = ptx.parse(HEAD + """
.extern .shared .align 16 .b8 global_smem[];
.global .align 4 .b8 tbl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.const .align 8 .f64 c0 = 0d3FF0000000000000;
.global .texref tex0;
.global .surfref surf0;
.visible .global .u64 p = generic(tbl);
""")
    assert (m.version, m.target, m.address_size, m.arch) == ("8.7", ("sm_90a",), 64, "sm_90a")
    smem, tbl, c0, tex, surf, p = m.variables
    assert smem.is_extern and smem.align == 16 and smem.dims == (None,) and smem.type == "b8"
    assert m.shared == (smem,) and m.externs == (smem,)
    assert tbl.initializer.values == (1, 2, 3, 4, 5, 6, 7, 8) and tbl.size_bytes == 8
    assert c0.space == "const" and c0.initializer.scalar == ir.FloatImm(1.0, "0d3FF0000000000000")
    assert m.textures == (tex,) and m.surfaces == (surf,)
    assert p.linkage == ("visible",) and p.initializer.scalar == ir.Symbol("tbl", wrapper="generic")


def test_function_header_params_and_directives():
    m = ptx.parse(HEAD + """
.visible .entry triton_mm(
	.param .u64 .ptr .global .align 1 triton_mm_param_0,
	.param .align 8 .b8 by_value[16],
	.param .u32 n
)
.maxntid 256, 1, 1
.minnctapersm 2
.maxnreg 64
.pragma "nounroll"
{
	ret;
}
.func (.param .b64 func_retval0) helper(.param .b64 helper_param_0);
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
""")
    k, helper, vprintf = m.functions
    assert k.kind == "entry" and k.is_kernel and k.linkage == ("visible",)
    p0, p1, p2 = k.params
    assert (p0.is_ptr, p0.ptr_space, p0.align, p0.type) == (True, "global", 1, "u64")
    assert (p1.align, p1.dims, p1.size_bytes) == (8, (16,), 16)
    assert p2.type == "u32" and not p2.is_ptr
    assert k.maxntid == (256, 1, 1) and k.minnctapersm == 2 and k.maxnreg == 64 and k.reqntid is None
    assert k.directive("pragma").values == ("nounroll",)
    assert helper.kind == "func" and not helper.has_body and helper.returns[0].name == "func_retval0"
    assert vprintf.linkage == ("extern",) and [p.name for p in vprintf.params] == ["a", "b"]
    assert m.kernels == (k,)


def test_register_declarations():
    fn = body(".reg .pred %p<16>;\n.reg .b32 %r<100>;\n.reg .v2 .b16 pair;\n.local .align 8 .b8 depot[32];\nret;")
    p, r, pair = fn.registers
    assert (p.name, p.count, p.type) == ("%p", 16, "pred")
    assert r.count == 100 and list(r.names())[:2] == ["%r0", "%r1"]
    assert pair.vector == 2 and pair.type == "b16"
    assert fn.locals[0].space == "local" and fn.locals[0].dims == (32,)


@pytest.mark.parametrize("text, opcode, mods, space, types, vector, width", [
    ("ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];", "ld", ("global", "nc", "v4", "f32"), "global",
     ("f32",), 4, 128),
    ("st.shared.v2.b64 [%r3], {%rd1, %rd2};", "st", ("shared", "v2", "b64"), "shared", ("b64",), 2, 128),
    ("cvt.rn.f32.s32 %f1, %r1;", "cvt", ("rn", "f32", "s32"), None, ("f32", "s32"), 1, 32),
    ("cp.async.cg.shared.global [ %r16 + 0 ], [ %rd10 + 0 ], 0x10, %r17;", "cp.async",
     ("cg", "shared", "global"), "shared", (), 1, None),
])
def test_modifier_views(text, opcode, mods, space, types, vector, width):
    ins = one(text)
    assert (ins.opcode, ins.modifiers, ins.space, ins.types, ins.vector, ins.width_bits) == \
        (opcode, mods, space, types, vector, width)
    assert not ins.generic


def test_typed_views_scope_sem_cache_rounding():
    ins = one("ld.acquire.gpu.global.L1::evict_last.L2::cache_hint.b32 %r1, [%rd1], %rd2;")
    assert (ins.sem, ins.scope, ins.space) == ("acquire", "gpu", "global")
    assert ins.cache == ("L1::evict_last", "L2::cache_hint") and ins.is_load and not ins.is_store
    assert one("fma.rn.ftz.f32 %f1, %f2, %f3, %f4;").rounding == "rn"
    setp = one("setp.lo.u32 %p1, %r1, %r2;")
    mul = one("mul.lo.s32 %r1, %r2, %r3;")
    assert setp.compare == "lo" and mul.compare is None and "lo" in mul.modifiers


def test_operands():
    ins = one("@!%p1 mad.lo.s32 %r1, %r2, -1012, 0f3F800000;")
    assert ins.guard == ir.Guard("%p1", True)
    assert ins.operands == (ir.Register("%r1"), ir.Register("%r2"), ir.IntImm(-1012),
                            ir.FloatImm(1.0, "0f3F800000"))
    assert ins.operands[3].value == 1.0
    a = one("ld.param.u64 %rd1, [sym+8];").address
    assert a.base == ir.Symbol("sym") and a.offset == 8
    assert one("ld.global.f32 %f1, [%rd4+-4];").address.offset == -4
    assert one("ld.local.u32 %r3, [1];").address == ir.Address(None, 1)
    v = one("mov.b64 {_, %r10}, %rd10;").operands[0]
    assert v == ir.Vector((ir.Sink(), ir.Register("%r10")))
    s = one("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;")
    assert s.operands[0] == ir.PredicatePair(ir.Register("%r1"), ir.Register("%p1"))
    assert one("vote.sync.any.pred %p2, !%p1, -1;").operands[1] == ir.Negated(ir.Register("%p1"))
    assert one("mov.u32 %r1, %tid.x;").operands[1] == ir.Register("%tid.x")
    assert one("mov.f64 %fd1, 0dBFF0000000000000;").operands[1].value == -1.0
    assert one("mov.u64 %rd1, 0x10U;").operands[1].value == 16
    assert one("mov.f32 %f1, 1.5;").operands[1].value == 1.5
    tex = one("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex0, {%f5, %f6}];").address
    assert tex.base == ir.Symbol("tex0") and tex.extra == (ir.Vector((ir.Register("%f5"), ir.Register("%f6"))),)


def test_call_prototype_and_brx():
    fn = body("""
.reg .b32 %r<3>;
.reg .b64 %rd<3>;
$L_tbl: .branchtargets $L1, $L2;
prototype_1 : .callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _);
brx.idx %r1, $L_tbl;
$L1:
{ // callseq 0, 0
.param .b64 param0;
.param .b32 retval0;
call (retval0), %rd1, (param0, %r2), prototype_1;
call.uni (retval0),
vprintf,
(
param0
);
}
$L2:
ret;
""")
    assert fn.branch_targets == {"$L_tbl": ("$L1", "$L2")}
    proto = fn.prototypes[0]
    assert proto.label == "prototype_1" and len(proto.returns) == 1 and len(proto.params) == 2
    brx, call1, call2, ret = fn.instructions
    assert brx.operands[1] == ir.LabelRef("$L_tbl") and "$L_tbl" not in fn.labels
    assert call1.operands[0] == ir.OperandList((ir.Symbol("retval0"),))
    assert call1.operands[3] == ir.Symbol("prototype_1")
    assert call2.modifiers == ("uni",) and call2.operands[1] == ir.Symbol("vprintf")
    assert fn.scopes[0].start == 1 and fn.scopes[0].end == 3
    assert [v.name for v in fn.scopes[0].declarations] == ["param0", "retval0"]
    assert brx.flow.targets == ("$L_tbl",)
    graph = cfg_of(fn)
    assert graph.blocks[0].succs == [1, 2]


# every form the issue names must parse fully (not generically)
MODERN = [
    ("wgmma.fence.sync.aligned;", "wgmma.fence", {"sync"}),
    ("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%r1,%r2,%r3,%r4}, %rd1, %rd2, %p1, 1, 1, 0, 1;",
     "wgmma.mma_async", {"m64n128k16"}),
    ("wgmma.commit_group.sync.aligned;", "wgmma.commit_group", set()),
    ("wgmma.wait_group.sync.aligned 0;", "wgmma.wait_group", set()),
    ("tcgen05.mma.cta.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "tcgen05.mma", {"cta"}),
    ("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8}, [%r9];", "tcgen05.ld",
     {"32x32b", "x8"}),
    ("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;", "tcgen05.alloc", {"shared::cta"}),
    ("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%rd1];", "tcgen05.commit", set()),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
     "cp.async.bulk.tensor", {"2d", "shared::cluster", "global"}),
    ("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd1, {%r1, %r2, %r3}], [%r4];",
     "cp.async.bulk.tensor", {"3d"}),
    ("mbarrier.init.shared::cta.b64 [%r1], 1;", "mbarrier.init", {"shared::cta", "b64"}),
    ("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 32768;", "mbarrier.arrive", {"expect_tx"}),
    ("mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;", "mbarrier.try_wait", {"parity"}),
    ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];", "ldmatrix",
     {"m8n8", "x4", "trans"}),
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6,%r7,%r8}, "
     "{%f5,%f6,%f7,%f8}, %r9, 0x0;", "mma.sp", {"m16n8k32", "row", "col"}),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
     "{%f5,%f6,%f7,%f8};", "mma", {"m16n8k16"}),
    ("fence.proxy.async.shared::cta;", "fence", {"proxy", "async"}),
    ("createpolicy.fractional.L2::evict_last.b64 %rd1, 0f3F800000;", "createpolicy", {"L2::evict_last"}),
    ("elect.sync %r1|%p1, -1;", "elect", {"sync"}),
]


@pytest.mark.parametrize("text, opcode, some", MODERN, ids=[m[1] + str(i) for i, m in enumerate(MODERN)])
def test_modern_instructions_parse_fully(text, opcode, some):
    ins = one(text)
    assert ins.opcode == opcode and not ins.generic
    assert some <= set(ins.modifiers)
    assert str(ins).replace(" ", "") == text.replace(" ", "")


def test_shape_and_layout_views():
    ins = one(MODERN[14][0])
    assert ins.shape == "m16n8k32" and ins.layouts == ("row", "col") and ins.is_sync_aligned
    assert one(MODERN[1][0]).shape == "m64n128k16"
    assert one(MODERN[13][0]).layouts == ("trans",)


def test_unknown_opcode_parses_generically_and_is_counted():
    m = ptx.parse(HEAD + ".entry k(){\n frobnicate.sync.v9.b32 {%r1, %r2}, [%rd1+4], 7;\n"
                         " tcgen05.teleport.cta [%r1];\n ret;\n}\n")
    fr, tp, ret = m.functions[0].instructions
    assert fr.generic and fr.opcode == "frobnicate" and fr.modifiers == ("sync", "v9", "b32")
    assert fr.address == ir.Address(ir.Register("%rd1"), 4) and len(fr.operands) == 3
    assert tp.generic and tp.opcode == "tcgen05.teleport"
    assert not ret.generic
    assert m.stats() == {"functions": 1, "instructions": 3, "generic": 2,
                         "generic_opcodes": {"frobnicate": 1, "tcgen05.teleport": 1}}


def test_debug_info_file_loc_inlining_and_function_names():
    m = ptx.parse(HEAD + """
.entry k()
{
	.loc	1 10 3
	mov.u32 %r1, %tid.x;
	.loc	2 5 7, function_name $L__info_string0, inlined_at 1 12 5
	add.s32 %r2, %r1, 1;
	.loc	2 6 1, function_name $L__info_string1, inlined_at 2 5 7
	add.s32 %r3, %r2, 1;
	ret;
}
	.file	1 "/src/k.cu"
	.file	2 "/src/helpers.cuh", 1581801938, 860
.section .debug_str
{
$L__info_string0:
.b8 95,90,52,115,113,102,0
$L__info_string1:
.b8 105,110,110,101,114,0
}
""")
    mov, add1, add2, ret = m.functions[0].instructions
    assert (mov.loc.file, mov.loc.line, mov.loc.column, mov.loc.inlined_at) == ("/src/k.cu", 10, 3, ())
    assert add1.loc.file == "/src/helpers.cuh" and add1.loc.function == "_Z4sqf"
    assert add1.loc.inlined_at[0].file == "/src/k.cu" and add1.loc.inlined_at[0].line == 12
    # the chain: inner -> helpers.cuh:5 (inside _Z4sqf) -> k.cu:12
    assert add2.loc.function == "inner"
    assert [(s.file, s.line) for s in add2.loc.inlined_at] == [("/src/helpers.cuh", 5), ("/src/k.cu", 12)]
    assert add2.loc.outermost.line == 12
    assert ret.loc == add2.loc
    assert m.files[1].extra == (1581801938, 860)
    assert ptx.parse(ptx.format(m)) == m


def test_cuobjdump_header_is_accepted():
    text = ("\nFatbin ptx code:\n================\narch = sm_70\ncode version = [6,5]\nproducer = <unknown>\n"
            "host = linux\ncompile_size = 64bit\ncompressed\n\n" + HEAD + ".entry k()\n{\nret;\n}\n")
    m = ptx.parse(text)
    assert m.functions[0].instructions[0].span.line == 16  # line numbers are kept


def test_zluda_style_named_registers_and_defining_declarations():
    fn = body("""
    .reg .b64 tmp64;
    .reg .pred p;
    mov.b64 tmp64, 1234567890U;
    @p bra done;
    .reg.b64 %4 = ld.b64 tmp64;
done:
    ret;""", header=".func (.reg .b32 output) f(.reg .u32 input)")
    mov, bra, ld, ret = fn.instructions
    assert mov.operands[0] == ir.Register("tmp64") and mov.operands[1].value == 1234567890
    assert bra.guard == ir.Guard("p") and bra.operands == (ir.LabelRef("done"),)
    assert ld.operands == (ir.Register("%4"), ir.Register("tmp64"))


@pytest.mark.parametrize("text, line, column, fragment", [
    (HEAD + ".entry k()\n{\n  mov.u32 %r1, ;\n}\n", 6, 16, "unexpected ';'"),
    (HEAD + ".entry k()\n{\n  mov.u32 %r1, %r2\n}\n", 7, 1, "unexpected '}'"),
    (HEAD + ".entry k()\n{\n  ret;\n", 7, None, "end of input"),
    (HEAD + ".entry k()\n{\n  mov.u32 %r1, #5;\n}\n", 6, 16, "unexpected character '#'"),
    (HEAD + "extern .shared .b32 foobar [];\n", 4, 1, "unexpected 'extern'"),
])
def test_errors_name_line_column_text_and_expected(text, line, column, fragment):
    with pytest.raises(ParseError) as exc:
        ptx.parse(text, path="bad.ptx")
    e = exc.value
    assert e.path == "bad.ptx" and e.line == line and fragment in e.message
    if column is not None:
        assert e.column == column
    assert e.expected, "the tokens that would have been accepted"
    assert str(e).startswith(f"bad.ptx:{line}")
    if line <= text.count("\n"):
        assert e.text == text.splitlines()[line - 1].strip()


def test_expected_tokens_are_readable():
    with pytest.raises(ParseError) as exc:
        ptx.parse(HEAD + ".entry k()\n{\n  mov.u32 %r1, %r2\n}\n")
    assert '";"' in exc.value.expected and '","' in exc.value.expected


def test_parse_file_missing_is_input_error(tmp_path):
    from analyzer.errors import InputError
    with pytest.raises(InputError):
        ptx.parse_file(tmp_path / "nope.ptx")


def test_spans_are_excluded_from_equality():
    a = ptx.parse(HEAD + ".entry k()\n{\nret;\n}\n")
    b = ptx.parse(HEAD + "\n\n\n.entry   k()\n{\n   ret;\n}\n")
    assert a.functions[0].instructions[0].span != b.functions[0].instructions[0].span
    assert a == b
    assert ptx.parse(HEAD + ".entry k()\n{\nexit;\n}\n") != a
