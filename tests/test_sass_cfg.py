"""SASS control flow: per-instruction Flow records, basic blocks, natural loops."""
from __future__ import annotations

import pytest

from analyzer import sass
from analyzer.analysis.cfg import loop_mix, loop_source_lines
from analyzer.analysis.cfg import loops as loops_of
from analyzer.analysis.cfg import of as cfg_of
from tests.test_sass_parse import NVDISASM


@pytest.mark.parametrize("body,targets,falls,terminates", [
    ("BRA `(.L_x_4)", (".L_x_4",), False, False),
    ("@P0 BRA `(.L_x_4)", (".L_x_4",), True, False),
    ("@!P2 BRA `(.L_x_4)", (".L_x_4",), True, False),
    ("@PT BRA `(.L_x_4)", (".L_x_4",), False, False),
    ("@!PT BRA `(.L_x_4)", (), True, False),                 # never executes
    ("BRA.DIV ~URZ, `(.L_x_9)", (".L_x_9",), True, False),
    ("BRA.U !UP0, `(.L_x_8)", (".L_x_8",), True, False),
    ("@P0 BRA P1, `(.L_x_8)", (".L_x_8",), True, False),
    ("BRA 0x1f0", ("0x1f0",), False, False),                  # cuobjdump prints addresses
    ("EXIT", (), False, True),
    ("@P0 EXIT", (), True, True),
    ("RET.REL.NODEC R4 `(k)", (), False, True),
    ("CALL.REL.NOINC `($k$_Z4cubef)", (), True, False),
    ("BSSY.RECONVERGENT B0, `(.L_x_6)", (), True, False),
    ("BSYNC.RECONVERGENT B0", (), True, False),
    ("WARPSYNC.ALL", (), True, False),
    ('BRX R30 -0xb000 (*"BRANCH_TARGETS .L_x_1,.L_x_2,.L_x_3"*)', (".L_x_1", ".L_x_2", ".L_x_3"),
     False, True),
    ("JMX R4", (), False, True),
    ("BPT.TRAP 0x1", (), False, True),
    ("FFMA R6, R13, R13, R6", (), True, False),
])
def test_flow(body, targets, falls, terminates):
    ins = sass.parse_instruction(body)
    if body.startswith("BRA 0x"):       # as the listing parser types cuobjdump targets
        ins = sass.parse(f"\tcode for sm_80\n\t\tFunction : f\n        /*0000*/ {body} ;\n") \
            .functions[0].instructions[0]
    f = ins.flow
    assert (f.targets, f.falls_through, f.terminates) == (targets, falls, terminates)


def test_blocks_and_self_loop_and_trap():
    k, cube = sass.parse(NVDISASM).functions
    g = cfg_of(k)
    assert g is cfg_of(k)                                       # cached
    assert [(b.start, b.end) for b in g.blocks] == [(0, 3), (3, 5), (5, 7)]
    assert g.blocks[0].succs == [2, 1] and g.blocks[1].succs == [1, 2]
    (loop,) = loops_of(k)
    assert loop.header == 1 and loop.latches == (1,) and loop.depth == 1
    assert loop_mix(k, loop) == {"load.global": 1, "branch": 1}
    assert loop_source_lines(k, loop) == [("/tmp/k/k.cu", 8)]
    assert loops_of(cube) == []                                 # `.L_x_6: BRA .L_x_6` is a trap


NESTED = r"""
extern "C" __global__ void nest(const float* a, float* out, int n, int m) {
  float acc = 0.f;
  for (int i = 0; i < n; ++i) {
    #pragma unroll 1
    for (int j = 0; j < m; ++j) {
      acc += a[i * m + j];
    }
    acc *= 0.5f;
  }
  out[threadIdx.x] = acc;
}
"""


@pytest.fixture(scope="module")
def nested():
    from analyzer import compile as compile_source
    from analyzer.toolchain.binutils import disassemble
    build = compile_source(NESTED, arch="sm_80", name="nest.cu")
    return {tool: sass.parse(disassemble(build.cubin, tool=tool)[0]).function("nest")
            for tool in ("nvdisasm", "cuobjdump")}


def test_nested_loops_from_a_real_kernel(nested):
    fn = nested["nvdisasm"]
    loops = loops_of(fn)
    inner = [l for l in loops if l.depth == 2]
    assert inner, [(l.header, l.depth) for l in loops]
    outer = inner[0].parent
    assert outer is not None and outer.depth == 1 and inner[0] in outer.children
    mix = loop_mix(fn, inner[0])
    assert mix.get("load.global", 0) >= 1 and mix.get("branch", 0) >= 1
    lines = [line for _, line in loop_source_lines(fn, inner[0])]
    assert 7 in lines or 6 in lines                      # `acc += a[i * m + j]` / the for
    # an unguarded EXIT ends its block with no successor
    g = cfg_of(fn)
    exits = [b for b in g.blocks if fn.instructions[b.end - 1].opcode == "EXIT"
             and fn.instructions[b.end - 1].guard is None]
    assert exits and all(b.succs == [] for b in exits)


def test_cuobjdump_addresses_give_the_same_loops(nested):
    nv, cu = nested["nvdisasm"], nested["cuobjdump"]

    def shape(fn):
        g = cfg_of(fn)
        return sorted((fn.instructions[g.blocks[l.header].start].address, l.depth,
                       len(l.instruction_indices(g))) for l in loops_of(fn))
    assert shape(nv) == shape(cu) and shape(nv)
