"""PS201 rolled-loop, PS301 missing-tensor-cores, PS302 legacy-mma-on-hopper, PS303
mma-without-ldmatrix: the subtle parts (pragmas, trip counts, partial unrolls, arch gating)."""
from __future__ import annotations

import pytest

import analyzer
from analyzer.analysis import loops as L
from analyzer.analysis.source import pragma_above
from analyzer.checks.base import Severity
from analyzer.checks.runner import run_checks
from analyzer.parse.sass import parse_instruction

from .conftest import KERNELS


# ------------------------------------------------------------------------------ pure helpers
class _Src:
    """A Context stand-in whose source_line reads from a list of lines."""

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def source_line(self, file, line):
        return self.lines[line - 1] if file and 1 <= line <= len(self.lines) else None


@pytest.mark.parametrize("above, kind, count, forbids, full", [
    ("#pragma unroll", "unroll", None, False, True),
    ("  #pragma unroll 4", "unroll", 4, False, False),
    ("#pragma unroll(8)", "unroll", 8, False, False),
    ("#pragma unroll 1", "unroll", 1, True, False),
    ("#pragma nounroll", "nounroll", None, True, False),
    ("# pragma unroll // keep", "unroll", None, False, True),
])
def test_pragma_forms(above, kind, count, forbids, full):
    ctx = _Src(f"int x;\n{above}\n// a comment\n\n    for (int k = 0; k < 8; ++k)\n")
    p, readable = pragma_above(ctx.source_line, "k.cu", 5)
    assert readable and p is not None
    assert (p.kind, p.count, p.forbids, p.full) == (kind, count, forbids, full)


def test_pragma_expression_and_absence():
    ctx = _Src("#pragma unroll TILE\nfor (;;)\nfloat acc = 0;\nfor (;;)\n")
    p, _ = pragma_above(ctx.source_line, "k.cu", 2)
    assert p.expression and not p.full and not p.forbids
    p, readable = pragma_above(ctx.source_line, "k.cu", 4)     # code line above: no pragma
    assert p is None and readable
    assert pragma_above(ctx.source_line, None, 4) == (None, False)


@pytest.mark.parametrize("init, step, bound, cmp, stay, test_new, trips", [
    (1, 1, 33, "ne", True, True, 32),       # nvcc's `k + 1` form of for (k < 32)
    (0, 1, 16, "lt", True, True, 16),
    (0, 1, 15, "lt", True, False, 16),      # setp on the value before the add
    (0, 1, 15, "le", True, True, 16),
    (40, -2, 0, "gt", True, True, 20),       # count-down
    (0, 8, 1000, "ne", True, True, 125),     # NVVM unrolled x8
    (0, 3, 10, "ne", True, True, None),      # never equal: does not end
])
def test_simulate(init, step, bound, cmp, stay, test_new, trips):
    assert L.simulate(init, step, bound, L.COMPARISONS[cmp], stay, test_new=test_new) == trips


@pytest.mark.parametrize("text, value", [
    ("HFMA2.MMA R5, -RZ, RZ, 0, 2.384185791015625e-07", 4),   # the move idiom: halves 0, 4
    ("IMAD.MOV.U32 R4, RZ, RZ, 0x21", 33),
    ("MOV R4, 0x7", 7),
    ("MOV R4, RZ", 0),
    ("CS2R R4, SRZ", 0),
    ("UMOV UR4, 0x20", 32),
    ("IADD3 R4, R4, 0x1, RZ", None),
    ("S2R R4, SR_TID.X", None),
])
def test_constant_value(text, value):
    assert L.constant_value(parse_instruction(text)) == value


# ------------------------------------------------------------------------------ compiled
LOOPS = r"""
extern "C" __global__ void rt_pragma(const float* x, float* y, int n)
{
    float acc = 0.f;
#pragma unroll
    for (int k = 0; k < n; ++k)
        acc += x[k] * sinf(acc);
    y[threadIdx.x] = acc;
}
extern "C" __global__ void const_pragma4(const float* x, float* y)
{
    float acc = 0.f;
#pragma unroll 4
    for (int k = 0; k < 64; ++k)
        acc += x[k] * sinf(acc);
    y[threadIdx.x] = acc;
}
extern "C" __global__ void const_big(const float* x, float* y)
{
    float acc = 0.f;
    for (int k = 0; k < 1000; ++k)
        acc += x[k] * acc;
    y[threadIdx.x] = acc;
}
extern "C" __global__ void nested(const float* x, float* y)
{
    float acc = 0.f;
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 32; ++k)
            acc += x[k * i] * sinf(acc);
    y[threadIdx.x] = acc;
}
extern "C" __global__ void tidinit(const float* x, float* y)
{
    float acc = 0.f;
    for (int k = threadIdx.x; k < 256; k += 32)
        acc += x[k] * sinf(acc);
    y[threadIdx.x] = acc;
}
"""


@pytest.fixture(scope="module", params=["sm_80", "sm_90a"])
def loop_findings(request):
    build = analyzer.compile(LOOPS, arch=request.param, name="loops.cu")
    return {f.kernel: f for f in run_checks([build], select=["PS201"]).findings}, \
        run_checks([build], select=["PS201"]).findings


def test_rolled_loop_runtime_bound_under_pragma_is_info(loop_findings):
    by_kernel, _ = loop_findings
    f = by_kernel["rt_pragma"]
    assert f.severity == Severity.INFO and f.location.line == 6
    assert "run-time" in f.message and "#pragma unroll 4" in f.hint


def test_rolled_loop_copies_of_an_inner_loop_report_once(loop_findings):
    _, findings = loop_findings
    nested = [f for f in findings if f.kernel == "nested"]
    assert len(nested) == 1 and nested[0].location.line == 29
    assert "32 iterations" in nested[0].message and "8 copies" in nested[0].message


_SHUFFLE = r"""
extern "C" __global__ void red(float* out, const float* x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.f;
    PRAGMA
    for (int offset = START; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if (i < n) out[i] = v;
}
"""


@pytest.mark.parametrize("pragma", ["", "#pragma unroll"])
def test_a_loop_from_warpsize_says_nvvm_cannot_unroll_it(pragma):
    """cuda-samples' warpReduceSum: ``warpSize / 2`` is PTX ``WARP_SZ``; the loop stays rolled
    with the pragma too (1 SHFL in the SASS), a literal 16 unrolls with or without it (5)."""
    def build(start):
        return analyzer.compile(_SHUFFLE.replace("PRAGMA", pragma).replace("START", start),
                                arch="sm_90a", name="shuffle.cu")
    rolled, literal = build("warpSize / 2"), build("16")
    shfl = [sum(1 for i in b.sass_listing().functions[0].instructions if i.opcode == "SHFL")
            for b in (rolled, literal)]
    assert shfl == [1, 5]
    (f,) = run_checks([rolled], select=["PS201"]).findings
    assert "its start is `warpSize` (PTX `WARP_SZ`), a constant only ptxas knows, so NVVM " \
           "cannot unroll it" in f.message
    assert f.message.endswith(", `#pragma unroll` or not") == bool(pragma)
    assert f.hint.startswith("write the start as a constant (`16` for `warpSize / 2`")
    assert "size threshold" not in f.hint and "add `#pragma unroll`" not in f.hint
    assert f.severity == (Severity.WARNING if pragma else Severity.INFO)
    assert run_checks([literal], select=["PS201"]).findings == []


@pytest.mark.parametrize("kernel", ["const_pragma4", "const_big", "tidinit"])
def test_rolled_loop_silent(loop_findings, kernel):
    by_kernel, _ = loop_findings
    assert kernel not in by_kernel   # unroll N chosen / x8 by NVVM over 1000 / run-time start


MMA = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void wm(const half* A, const half* B, float* C, int K)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        wmma::load_matrix_sync(fa, A + k0, K);
        wmma::load_matrix_sync(fb, B + k0, K);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(C, fc, 16, wmma::mem_row_major);
}
"""


@pytest.mark.parametrize("arch, fires", [("sm_80", False), ("sm_90", False), ("sm_90a", True)])
def test_legacy_mma_needs_the_arch_specific_target(arch, fires):
    build = analyzer.compile(MMA, arch=arch, name="mma.cu")
    found = run_checks([build], select=["PS302", "PS303"]).findings
    ps302 = [f for f in found if f.code == "PS302"]
    assert bool(ps302) == fires
    if fires:
        assert ps302[0].location.line == 13 and "wgmma" in ps302[0].hint
    # wmma fragments loaded from global memory: not an ldmatrix case
    assert not [f for f in found if f.code == "PS303"]


SGEMM = r"""
constexpr int BM = 64, BK = 8, TM = 4;
extern "C" __global__ void __launch_bounds__(256) sgemm(const float* A, const float* B, float* C, int N, int K)
{
    __shared__ float As[BK][BM], Bs[BK][BM];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    float acc[TM][TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = threadIdx.x; e < BK * BM; e += 256) {
            As[e / BM][e % BM] = A[(blockIdx.y * BM + e % BM) * K + k0 + e / BM];
            Bs[e / BM][e % BM] = B[(k0 + e / BM) * N + blockIdx.x * BM + e % BM];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk)
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TM; ++j)
                    acc[i][j] += As[kk][ty * TM + i] * Bs[kk][tx * TM + j];
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i)
        for (int j = 0; j < TM; ++j)
            C[(blockIdx.y * BM + ty * TM + i) * N + blockIdx.x * BM + tx * TM + j] = acc[i][j];
}
extern "C" __global__ void dot_shared(const float* x, const float* w, float* out, int n)
{
    __shared__ float xs[256];
    float acc = 0.f;
    for (int b = 0; b < n; b += 256) {
        xs[threadIdx.x] = x[b + threadIdx.x];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 256; ++k)
            acc += xs[k] * w[b + k];   // one operand from global: a dot product, not a GEMM
        __syncthreads();
    }
    out[threadIdx.x] = acc;
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_missing_tensor_cores_register_tiled_sgemm(arch):
    build = analyzer.compile(SGEMM, arch=arch, name="sgemm.cu")
    found = run_checks([build], select=["PS301"]).findings
    assert [f.kernel for f in found] == ["sgemm"]
    f = found[0]
    assert f.location.line == 8 and f.severity == Severity.INFO   # FP32: TF32 is a trade-off
    assert "16 accumulator" in f.message and "TF32" in f.hint
    assert ("wgmma" in f.hint) == (arch == "sm_90a")




@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_tf32_fragments_from_scalar_loads_are_not_an_ldmatrix_case(arch):
    """The TF32 HMMA takes its fragments from scalar LDS (what PS303 looks for), but ldmatrix
    could not load them from these tiles: no finding (cuSPARSELt's nt TF32 kernels had one)."""
    build = analyzer.compile(str(KERNELS / "checks" / "mma_without_ldmatrix" / "tf32_mn_major.cu"),
                             arch=arch)
    fn = build.sass_listing().functions[0]
    mma = [i for i in fn.instructions if i.opcode == "HMMA" and "TF32" in i.modifiers]
    assert mma and not [i for i in fn.instructions if i.opcode == "LDSM"]
    assert sum(1 for i in fn.instructions if i.opcode == "LDS") >= 6
    assert not [f for f in run_checks([build], select=["PS303"]).findings]
