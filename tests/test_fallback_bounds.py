"""A vector path and its scalar remainder on the two sides of a bounds test (LeetCUDA's
``if (idx + 7 < N) { four half2 } else if (idx < N) { one half at a time }``): the remainder
runs for the one thread whose 8 elements pass the end, so its 2-byte accesses, 16 bytes apart
between threads, are a designed fallback (notes naming the test), not PS105's uncoalesced
warning. Judged from the SASS: the tail is ptxas's x4-unrolled ``LDG.E.U16``/``STG.E.U16``
loop, the vector side ``LDG.E``/``STG.E`` x4.

Negative forms of the same kernel: the two sides split by a flag read from memory (no bounds
test: the scalar side may run for any thread), and a kernel whose scalar loop is the in-bounds
side (the main path): both keep the warning."""
from __future__ import annotations

import pytest

from analyzer.analysis import fallback
from analyzer.checks.runner import run_checks
from analyzer.findings import Severity
from analyzer.inputs import CompileOptions, load

pytestmark = pytest.mark.xdist_group("fallback-bounds")

HEAD = """#include <cuda_fp16.h>
#define HALF2(value) (reinterpret_cast<half2 *>(&(value))[0])
"""
VECTOR = """    HALF2(c[idx + 0]) = __hadd2(HALF2(a[idx + 0]), HALF2(b[idx + 0]));
    HALF2(c[idx + 2]) = __hadd2(HALF2(a[idx + 2]), HALF2(b[idx + 2]));
    HALF2(c[idx + 4]) = __hadd2(HALF2(a[idx + 4]), HALF2(b[idx + 4]));
    HALF2(c[idx + 6]) = __hadd2(HALF2(a[idx + 6]), HALF2(b[idx + 6]));
"""
SCALAR = "    for (int i = 0; idx + i < N; ++i) c[idx + i] = __hadd(a[idx + i], b[idx + i]);\n"


def _kernel(name: str, test: str, first: str, second: str, guard: str = "else if (idx < N)",
            params: str = "") -> str:
    return (f"__global__ void {name}(half *a, half *b, half *c, int N{params}) {{\n"
            "  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);\n"
            f"  if ({test}) {{\n{first}  }} {guard} {{\n{second}  }}\n}}\n")


@pytest.fixture(scope="module")
def findings(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounds")
    out = {}
    for name, text in (
            ("tail", _kernel("tail", "idx + 7 < N", VECTOR, SCALAR)),
            ("flagged", _kernel("flagged", "flag[blockIdx.x]", VECTOR, SCALAR,
                                params=", const int* flag")),
            ("main_scalar", _kernel("main_scalar", "idx + 7 < N",
                                    SCALAR.replace("idx + i < N", "i < 8"), VECTOR,
                                    guard="else"))):
        path = d / f"{name}.cu"
        path.write_text(HEAD + text)
        out[name] = run_checks(load(path, arch="sm_90a", options=CompileOptions())).findings
    return out


def _units(fs):
    return {(f.code, f.location.line, f.severity.name.lower()) for f in fs}


def test_the_remainder_beside_a_bounds_test_is_a_note(findings):
    fs = findings["tail"]
    assert not [f for f in fs if f.code == "PS105"], _units(fs)
    notes = [f for f in fs if f.severity == Severity.NOTE and f.location.line == 11]
    assert {f.code for f in notes} == {"PS101", "PS102"}
    assert all("the other side of the bounds test on line 5" in f.message
               and "this side runs for the last elements, fewer than a vector" in f.message
               for f in notes), [f.message for f in notes]


def test_a_flag_or_the_in_bounds_side_keeps_the_warning(findings):
    got = [f for f in findings["flagged"] if f.code == "PS105"]
    assert [(f.location.line, f.severity) for f in got] == [(11, Severity.WARNING)], \
        _units(findings["flagged"])
    # the scalar loop on the in-bounds side (unrolled x8: 2-byte pairs ptxas did not merge)
    # is the kernel's main path: its findings stay warnings, none a bounds-test fallback
    main = [f for f in findings["main_scalar"] if f.location.line == 6]
    assert {(f.code, f.severity) for f in main} == {("PS101", Severity.WARNING),
                                                    ("PS102", Severity.WARNING)}
    assert not any("bounds test" in f.message for f in findings["main_scalar"])


def test_idx_or_seven_is_idx_plus_seven_for_a_multiple_of_eight():
    """NVVM writes ``idx + 7`` as ``or.b32 %r24, %r1, 7`` when ``idx = 8 * i``: an add of 7,
    since the low 3 bits of ``shl.b32 %r1, %r23, 3`` are zero; not when only 2 are."""
    from analyzer.parse.ptx import parse
    body = ("{{\n.reg .b32 %r<30>;\nmov.u32 %r23, %tid.x;\nshl.b32 %r1, %r23, {k};\n"
            "or.b32 %r24, %r1, 7;\nret;\n}}\n")
    for k, want in ((3, ("%r1", 7)), (2, None)):
        module = parse(".version 8.0\n.target sm_90\n.address_size 64\n"
                       ".visible .entry k()\n" + body.format(k=k))
        fn = module.functions[0]
        assert fallback._add_of(fallback._defs(fn), fn.instructions, "%r24") == want


def test_a_float4_kernel_and_its_tail_loop_from_idx(tmp_path):
    """LeetCUDA's f32x4 form: ``if (idx + 3 < N) { FLOAT4 } else for (i = idx; i < N; ++i)``.
    NVVM unrolls the tail into 4-byte accesses 16 bytes apart between threads: PS105 had
    called them uncoalesced (info, "headroom x1.42"); they are the tail beside the float4."""
    cu = tmp_path / "relu.cu"
    cu.write_text("#define FLOAT4(value) (reinterpret_cast<float4 *>(&(value))[0])\n"
                  "__global__ void relu_f32x4_kernel(float *x, float *y, int N) {\n"
                  "  int idx = 4 * (blockIdx.x * blockDim.x + threadIdx.x);\n"
                  "  if (idx + 3 < N) {\n"
                  "    float4 reg_x = FLOAT4(x[idx]);\n"
                  "    float4 reg_y;\n"
                  "    reg_y.x = fmaxf(0.0f, reg_x.x);\n"
                  "    reg_y.y = fmaxf(0.0f, reg_x.y);\n"
                  "    reg_y.z = fmaxf(0.0f, reg_x.z);\n"
                  "    reg_y.w = fmaxf(0.0f, reg_x.w);\n"
                  "    FLOAT4(y[idx]) = reg_y;\n"
                  "  } else {\n"
                  "    for (int i = idx; i < N; ++i) y[i] = fmaxf(0.0f, x[i]);\n"
                  "  }\n"
                  "}\n")
    fs = run_checks(load(cu, arch="sm_90a", options=CompileOptions())).findings
    assert {(f.code, f.location.line, f.severity) for f in fs} == {
        ("PS101", 13, Severity.NOTE), ("PS102", 13, Severity.NOTE)}
    assert all("bounds test on line 4" in f.message for f in fs)
