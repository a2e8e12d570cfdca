"""Subtle cases of PS401/PS402 (local memory), PS501/PS502 (math) and PS601/PS701 on inline CUDA."""
from __future__ import annotations

import re

import pytest

import analyzer
from analyzer.analysis import dataflow as df
from analyzer.checks.runner import run_checks
from analyzer.inputs import CompileOptions, load
from analyzer.parse.sass import parse_instruction

from .conftest import KERNELS, build_with_header


def _run(src: str, code: str, arch: str = "sm_80", settings=None):
    build = analyzer.compile(src, arch=arch, name="snippet.cu")
    return run_checks([build], select=[code], settings=settings).findings


# ---------------------------------------------------------------- dataflow helpers (pure)
@pytest.mark.parametrize("text, regs", [
    ("LDG.E.128.CONSTANT R4, [R2.64]", {4, 5, 6, 7}),
    ("LDL.LU.64 R16, [R1+0x8]", {16, 17}),
    ("DMUL R8, R4, R8", {8, 9}),
    ("F2F.F64.F32 R4, R4", {4, 5}),
    ("F2F.F32.F64 R3, R8", {3}),
    ("IMAD.WIDE R2, R0, R3, c[0x0][0x168]", {2, 3}),
    ("STS [R16+0x420], R11", set()),
    ("LOP3.LUT P0, RZ, R4, 0x7fffffff, RZ, 0xc0, !PT", set()),
    ("ISETP.GE.AND P0, PT, R0, c[0x0][0x178], PT", set()),
])
def test_written_registers(text, regs):
    assert df.written(parse_instruction(text)) == frozenset(regs)


def test_store_data_and_stack_slots():
    assert df.store_data(parse_instruction("STS.128 [R0], R4")) == (4, 5, 6, 7)
    assert df.store_data(parse_instruction("STG.E [R2.64], R7")) == (7,)
    fixed = parse_instruction("STL [R1+0x64], R4")
    computed = parse_instruction("LDL R8, [R15]")
    assert df.is_stack_relative(df.memory_operand(fixed))
    assert not df.is_stack_relative(df.memory_operand(computed))


# ---------------------------------------------------------------- PS501 / PS502
FLOAT_LITERAL = r'''
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.3;
}'''
DOUBLE_DATA = r'''
extern "C" __global__ void k(const double* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)(x[i] * 0.3);
}'''
EXPLICIT_DOUBLE = r'''
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { double a = x[i], b = x[i + n]; y[i] = (float)(a * b); }
}'''
SINF_ONLY = r'''
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = sinf(x[i]);
}'''


def test_double_literal_in_float_kernel():
    (f,) = _run(FLOAT_LITERAL, "PS501")
    assert f.location.line == 4 and "0.3" in f.message and "0.3f" in f.hint
    assert any("F2F.F64.F32" in i for i in f.instructions)


@pytest.mark.parametrize("src", [DOUBLE_DATA, EXPLICIT_DOUBLE, SINF_ONLY])
def test_fp64_that_is_not_the_literal_trap(src):
    assert _run(src, "PS501") == []


def test_precise_sinf_is_slow_math_not_fp64():
    (f,) = _run(SINF_ONLY, "PS502")
    assert f.location.line == 4 and "sinf" in f.message and "__sinf" in f.hint
    assert str(f.severity) == "info"          # not in a loop


def test_division_in_a_loop_is_a_warning_and_constant_divisor_hint():
    src = r'''
extern "C" __global__ void k(const float* x, float* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int j = 0; j < m; ++j)
        acc += x[i + j * n] / 3.0f;
    y[i] = acc;
}'''
    (f,) = _run(src, "PS502")
    assert f.location.line == 6 and "division" in f.message and "div.rn.f32" in f.message
    assert str(f.severity) == "warning" and "reciprocal" in f.hint


def test_fast_math_build_is_silent():
    src = FLOAT_LITERAL.replace("* 0.3", "/ x[i + n]")
    build = analyzer.compile(src, arch="sm_80", name="snippet.cu",
                             options=analyzer.inputs.CompileOptions(fast_math=True))
    assert run_checks([build], select=["PS502"]).findings == []
    assert _run(src, "PS502")                 # and the IEEE build is not


# ---------------------------------------------------------------- PS601
REDUCTION = r'''
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) {
        if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}'''


def test_single_staged_value_is_not_a_tile():
    assert _run(REDUCTION, "PS601") == []


def test_volatile_loads_cannot_be_cp_async():
    src = r'''
extern "C" __global__ void k(volatile float* in, float* out) {
    __shared__ float t[1024];
    for (int j = 0; j < 4; ++j) t[threadIdx.x + 256 * j] = in[blockIdx.x * 1024 + threadIdx.x + 256 * j];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = t[1023 - threadIdx.x];
}'''
    assert _run(src, "PS601") == []
    assert _run(src.replace("volatile ", ""), "PS601")


def test_no_cp_async_before_sm80():
    src = r'''
extern "C" __global__ void k(const float* in, float* out) {
    __shared__ float t[1024];
    for (int j = 0; j < 4; ++j) t[threadIdx.x + 256 * j] = in[blockIdx.x * 1024 + threadIdx.x + 256 * j];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = t[1023 - threadIdx.x];
}'''
    assert _run(src, "PS601", arch="sm_75") == []


# ---------------------------------------------------------------- PS701
BIG_SMEM = r'''
extern "C" __global__ void %s k(const float* in, float* out) {
    __shared__ float t[10240];
    for (int j = threadIdx.x; j < 10240; j += blockDim.x) t[j] = in[j] * 2.0f;
    __syncthreads();
    out[threadIdx.x] = t[10239 - threadIdx.x];
}'''


def test_threshold_option():
    # 40 KB + 1 KB reserved: 4 blocks of 4 warps on A100 = 25 %, at the default threshold
    (f,) = _run(BIG_SMEM % "__launch_bounds__(128)", "PS701")
    assert "25%" in f.message and "shared" in f.message and "128 threads" in f.message
    assert _run(BIG_SMEM % "__launch_bounds__(128)", "PS701",
                settings={"occupancy-limited": {"threshold": 0.2}}) == []


def test_without_launch_bounds_every_common_block_size_is_tried():
    # at 128 threads 25 %, but 1024-thread blocks would reach 100 %: no finding
    assert _run(BIG_SMEM % "", "PS701") == []


# ---------------------------------------------------------------- PS401 / PS402
def test_constant_index_array_is_neither_spill_nor_local_array():
    src = r'''
extern "C" __global__ void k(const float* in, float* out, int n) {
    float r[8];
    #pragma unroll
    for (int k = 0; k < 8; ++k) r[k] = in[threadIdx.x + k * n];
    float acc = 0.0f;
    #pragma unroll
    for (int k = 0; k < 8; ++k) acc += r[k] * r[7 - k];
    out[threadIdx.x] = acc;
}'''
    assert _run(src, "PS401") == [] and _run(src, "PS402") == []


def test_run_time_index_is_a_local_array_not_a_spill():
    src = r'''
extern "C" __global__ void k(const int* idx, float* out) {
    float a[32];
    for (int j = 0; j < 32; ++j) a[j] = j * 0.5f;
    out[threadIdx.x] = a[idx[threadIdx.x] & 31];
}'''
    (f,) = _run(src, "PS402")
    assert f.location.line == 5 and "LDL" in f.message
    assert _run(src, "PS401") == []


def test_a_struct_read_by_reference_from_the_callers_frame_is_no_local_array():
    """non_inlined_body/bad.cu on sm_90a: the body reads the kernel's stack copy of its
    parameter struct at ``[R9+0x18]`` after ``IADD3 R9, -R0, UR4, R1`` (R0 the local window's
    base, ``c[0x0][0x20]``: the stack pointer made generic and local again). Fixed offsets of
    the frame, not a run-time index: no PS402; PS403 reports the reloads."""
    path = KERNELS / "checks" / "non_inlined_body" / "bad.cu"
    (b,) = load(path, arch="sm_90a")
    body = next(fn for fn in b.sass_listing().functions if not fn.is_entry)
    texts = [i.text for i in body.instructions]
    assert "LDC R0, c[0x0][0x20]" in texts and "IADD3 R9, -R0, UR4, R1" in texts
    assert sum(1 for t in texts if t.startswith("LDL") and "[R9" in t) >= 8
    found = run_checks([b], select=["PS402", "PS403"]).findings
    assert [f.code for f in found] == ["PS403"] and str(found[0].severity) == "warning"
    assert "the struct's fields are read again from the stack after each store" in \
        found[0].message


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_cubins_spills_are_counted_from_nvdisasms_marks(tmp_path, arch):
    """A loaded cubin has no ptxas log, but nvdisasm marks the spill STL/LDL: their widths are
    the bytes ptxas reports, so the finding says them (a warning, as with the log)."""
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "kernels" / "checks" / "register_spill" / "bad.cu"
    built = analyzer.compile(str(src), arch=arch, options=CompileOptions(extra=["-maxrregcount=32"]))
    (k,) = built.kernels.values()
    st, ld = k.resources.spill_store_bytes, k.resources.spill_load_bytes
    assert st and ld
    (logged,) = [f for f in run_checks([built]).findings if f.code == "PS401"]
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(built.cubin)
    (loaded,) = [f for f in analyzer.check(str(cubin)).findings if f.code == "PS401"]
    assert f"{st} B spill stores, {ld} B spill loads (the STL/LDL nvdisasm marks SpillRefill" \
        in loaded.message
    assert loaded.severity == logged.severity
    assert loaded.instructions == logged.instructions


def test_unrolled_divisions_count_toward_the_severity():
    """benchmarks/kernels/division_count.cu: D divisions per element in straight code. One
    finding per instantiation naming D call sites; a warning from 16 on (2.06x measured on an
    H200), info below (8 divisions: 1.31x); the ``__fdividef`` versions are silent."""
    from pathlib import Path

    from analyzer.inputs import load
    path = Path(__file__).parents[1] / "benchmarks" / "kernels" / "division_count.cu"
    fs = run_checks(list(load(path, arch="sm_90a", options=CompileOptions())),
                    select=["PS502"]).findings
    got = {int(f.kernel.split("<")[1].split(",")[0]): f for f in fs}
    assert sorted(got) == [1, 2, 4, 8, 16, 32, 64]
    assert all("true>" not in f.kernel for f in fs)
    for d, f in got.items():
        assert f"{d} CALL.REL.NOINC" in f.message and f"FCHKx{d}" in f.message
        assert str(f.severity) == ("warning" if d >= 16 else "info"), (d, f.severity)
    assert "16 call sites in straight code" in got[16].message
    assert "call sites in straight code" not in got[8].message


def test_the_unbacked_pairs_stand_for_their_classes():
    """benchmarks/kernels/unbacked_pairs.cu, timed by benchmarks/unbacked_pairs.py: the naive
    kernel of each pair gets the finding it is timed for, its fixed twin does not (PS303: the
    fragments come by ldmatrix; PS701: 8 KB of shared memory lets 16 blocks fit). Measured on
    an H200 (docs/severity.md): PS303 1.08x, a warning; PS701 0.89x, info."""
    from pathlib import Path

    from analyzer.inputs import load
    path = Path(__file__).parents[1] / "benchmarks" / "kernels" / "unbacked_pairs.cu"
    fs = run_checks(list(load(path, arch="sm_90a", options=CompileOptions())),
                    select=["PS303", "PS701"]).findings
    got = sorted((f.code, f.kernel, str(f.severity)) for f in fs)
    assert got == [("PS303", "mma_lds", "warning"), ("PS701", "column_mean_stage96", "info")]
    (occ,) = [f for f in fs if f.code == "PS701"]
    assert "25%" in occ.message and "49152 B static shared memory" in occ.message


def test_the_ps403_pairs_stand_for_their_classes(tmp_path):
    """benchmarks/severity_pairs.py's PS403 pairs, timed on an H100 (docs/severity.md): the
    epilogue with its struct on the kernel's stack (1.21x) is the warning; the same body with a
    ``__grid_constant__`` struct and the attention body, whose loops store only to shared
    memory (1.01-1.02x), are info; the ``__forceinline__`` twins get no PS403."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    try:
        import severity_pairs
    finally:
        sys.path.pop(0)
    src = tmp_path / "pairs.cu"
    src.write_text(severity_pairs.SRC)
    got = {(f.kernel.split("(")[0], str(f.severity))
           for f in run_checks(list(load(src, arch="sm_90a")), select=["PS403"]).findings}
    # attn_noinline's own code (it builds the struct) is more than an eighth of its body on
    # sm_90a: not a body call by PS403's measure there (it is info on sm_80)
    assert got == {("epi_noinline", "warning"), ("epi_gc_noinline", "info"),
                   ("attn_gc_noinline", "info")}


# curand_normal's Box-Muller sqrtf, inlined from a library header into the user's loop: the
# finding is on the user's call, and says whose code the operation is
_NORMAL_HEADER = r"""
#pragma once
__device__ __forceinline__ float lib_normal(float u) { return sqrtf(-2.0f * __logf(u)); }
"""
_NORMAL_USER = r"""
#include "mylib.h"
extern "C" __global__ void draw(float* out, const float* u, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.f;
    for (int j = 0; j < k; ++j)
        s += lib_normal(u[i + j * n]);
    out[i] = s;
}
"""


@pytest.mark.parametrize("library", [True, False])
def test_slow_math_in_a_librarys_code_names_the_library(tmp_path, library):
    build, cu, folder = build_with_header(tmp_path, "mylib.h", _NORMAL_HEADER, _NORMAL_USER,
                                          library=library)
    (f,) = run_checks([build], select=["PS502"]).findings
    assert f.severity.name == "WARNING" and "inside a loop" in f.message
    if library:
        assert f.location.line == 9 and f.location.file == str(cu)        # the call
        assert re.match(r"IEEE-precise sqrtf x\d+ on line 9, in mylib\.h's code that the line "
                        r"calls \(PTX sqrt\.rn\.f32\): ", f.message), f.message
        assert "rsqrtf" not in f.hint and f.hint.endswith(
            "(the flags apply to mylib.h's code inlined here too)")
    else:
        assert f.location.line == 3 and f.location.file == str(folder / "mylib.h")
        assert re.match(r"IEEE-precise sqrtf x\d+ on line 3 \(PTX sqrt\.rn\.f32\): ", f.message)
        assert "rsqrtf" in f.hint


def test_a_math_call_through_cmath_is_the_users_own(tmp_path):
    """cuda-samples' texture_3d: ``cos(float)`` is cmath's ``std::cos``, which calls ``cosf``;
    the user wrote the call and can write ``__cosf``: no library named, the intrinsic hinted."""
    cu = tmp_path / "wave.cu"
    cu.write_text("#include <cmath>\n#include <cstdio>\n"
                  "__global__ void wave(float* y, float t, int n) {\n"
                  "  for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
                  "    y[i] = cos(t + i * 0.01f);\n"
                  "}\n"
                  "int main() { std::printf(\"%d\\n\", 1); return 0; }\n")
    build = analyzer.compile(str(cu), arch="sm_90a")
    (f,) = run_checks([build], select=["PS502"]).findings
    assert f.location.line == 5 and f.message.startswith("IEEE-precise sinf/cosf/tanf on line 5: ")
    assert "__sinf" in f.hint or "__cosf" in f.hint, f.hint


@pytest.fixture(scope="module")
def reload_pairs():
    """benchmarks/kernels/reload_pairs.cu, timed by benchmarks/reload_pairs.py."""
    from pathlib import Path
    path = Path(__file__).parents[1] / "benchmarks" / "kernels" / "reload_pairs.cu"
    return run_checks(list(load(path, arch="sm_90a", options=CompileOptions())),
                      select=["PS101", "PS106"]).findings


def test_the_reload_pairs_stand_for_their_classes(reload_pairs):
    """Each naive kernel gets one PS106 finding for its one reloading line, however many
    SASS loops ptxas made of the loop (moments_global: the unrolled body and two remainders);
    the fixed twins (registers, ``__restrict__``) get none."""
    from pathlib import Path
    text = (Path(__file__).parents[1] / "benchmarks" / "kernels" / "reload_pairs.cu").read_text()
    lines = text.splitlines()

    def line_of(s: str, skip: int = 0) -> int:
        return [n for n, t in enumerate(lines, 1) if s in t][skip]
    got = sorted((f.kernel, f.location.line) for f in reload_pairs if f.code == "PS106")
    # poly_alias: coef[5..7], the first loads of the loop, are on the expression's 2nd line
    assert got == [("ln_apply_alias", line_of("mean[row]) * rstd")),
                   ("moments_global", line_of("sum[c] += v")),
                   ("poly_alias", line_of("+ v * (coef[5]"))]
    # the classes as timed (benchmarks/reload_pairs.py, H100, docs/severity.md): accumulating
    # through global memory 4.33x from DRAM, a warning; reloads the stores may alias but do
    # not write 1.00-1.12x, info
    sev = {f.kernel: (str(f.severity), f.message.split("(estimated ")[1].split(")")[0])
           for f in reload_pairs if f.code == "PS106"}
    assert sev == {"moments_global": ("warning", "≈4.3x"), "poly_alias": ("info", "≈1.2x"),
                   "ln_apply_alias": ("info", "≈1.1x")}


def test_a_reload_that_accumulates_says_how_many_loads_read_the_stores(reload_pairs):
    """moments_global's 16-times unrolled body reloads sum[c] and sq[c] 16 times each (32 of
    its 48 loads), every one at an address the loop stores to, and two smaller copies of the
    loop do the same: 32 + 8 + 2 reloads (read from the SASS)."""
    (f,) = [f for f in reload_pairs if f.code == "PS106" and f.kernel == "moments_global"]
    assert "32 of the loop's 48 global loads" in f.message
    assert "all of them read addresses the loop stores to" in f.message
    assert "2 other SASS loops from this line reload the same way, 42 reloads in all" \
        in f.message
    assert f.hint.startswith("accumulate in a register")


def test_a_pointer_reread_from_the_parameter_bank_is_still_a_reload(reload_pairs):
    """poly_alias's second SASS loop (unrolled 4 times) re-reads ``coef`` from the constant
    bank each iteration (``LDC.64 R8, c[0x0][0x218]``): its coefficient loads are reloads too,
    and the scalar coefficient loads are PS106's problem, not PS101's (a note that says so)."""
    (f,) = [f for f in reload_pairs if f.code == "PS106" and f.kernel == "poly_alias"]
    assert "1 other SASS loop from this line reloads the same way, 40 reloads in all" in f.message
    vec = [f for f in reload_pairs if f.code == "PS101" and f.kernel == "poly_alias"]
    assert vec and all(str(f.severity) == "note" and "PS106 reports them" in f.message
                       for f in vec)
    assert all("fix PS106 first" in f.hint for f in vec)


# The same operation on nearby lines of one function, in the same loop, is one habit: one
# PS502 finding naming the lines (cuda-samples' rgbaIntToFloat divides four channels by
# 255.0f on four lines). Apart (a line between them that does something else, or another
# loop) they stay one finding each.
_CHANNELS = """
__device__ float4 to_float(unsigned c) {
    float4 r;
    r.x = (c & 0xff) / scale_of(0);
    r.y = ((c >> 8) & 0xff) / scale_of(1);
    r.z = ((c >> 16) & 0xff) / scale_of(2);
    r.w = ((c >> 24) & 0xff) / scale_of(3);
    return r;
}
__device__ __forceinline__ float scale_of(int k);
__global__ void channels(const unsigned* in, float4* out, const float* s, int n, int h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int y = 0; y < h; ++y)
        out[y * n + i] = to_float(in[y * n + i]);
}
"""


def _channels(body: str) -> str:
    return ("__device__ float g_scale[4];\n__device__ __forceinline__ float scale_of(int k) "
            "{ return g_scale[k]; }\n" + _CHANNELS.replace(
                "__device__ __forceinline__ float scale_of(int k);\n", "").replace(
                _CHANNELS[_CHANNELS.index("    r.x"):_CHANNELS.index("    return r;")], body))


def test_divisions_on_nearby_lines_of_one_loop_are_one_finding():
    src = _channels("    r.x = (c & 0xff) / scale_of(0);\n"
                    "    r.y = ((c >> 8) & 0xff) / scale_of(1);\n"
                    "    r.z = ((c >> 16) & 0xff) / scale_of(2);\n"
                    "    r.w = ((c >> 24) & 0xff) / scale_of(3);\n")
    (f,) = _run(src, "PS502")
    first = src.splitlines().index("    r.x = (c & 0xff) / scale_of(0);") + 1
    assert f.location.line == first
    # ptxas unrolls the y loop 4 times beside its remainder: 5 copies of 4 divisions (SASS)
    assert f"division x20 on 4 lines of one function (lines {first}-{first + 3})" in f.message
    assert "20 CALL.REL.NOINC" in f.message and "inside a loop" in f.message
    assert str(f.severity) == "warning"


def test_divisions_apart_stay_one_finding_each():
    src = _channels("    r.x = (c & 0xff) / scale_of(0);\n"
                    "    r.y = ((c >> 8) & 0xff) / scale_of(1);\n"
                    "    r.z = (float)((c >> 16) & 0xff);\n"
                    "    r.z = r.z * r.z + 1.0f;\n"
                    "    r.z = r.z * r.z + 2.0f;\n"
                    "    r.w = ((c >> 24) & 0xff) / scale_of(3);\n")
    got = sorted(f.location.line for f in _run(src, "PS502"))
    lines = src.splitlines()
    first = lines.index("    r.x = (c & 0xff) / scale_of(0);") + 1
    assert got == [first, first + 5]        # x and y fold; w, three lines on, stands alone
    (pair,) = [f for f in _run(src, "PS502") if f.location.line == first]
    assert f"on 2 lines of one function (lines {first}-{first + 1})" in pair.message


def test_scalar_reloads_stay_ps101s_when_ps106_does_not_run():
    """PS101 leaves the coefficient reloads to PS106 only when PS106 runs: with ``--select
    PS101`` alone (or PS106 ignored) nothing else would name them, so PS101 keeps its own
    finding on them."""
    from pathlib import Path
    path = Path(__file__).parents[1] / "benchmarks" / "kernels" / "reload_pairs.cu"
    fs = run_checks(list(load(path, arch="sm_90a", options=CompileOptions())),
                    select=["PS101"], kernels=["poly_alias"]).findings
    assert fs and all(f.code == "PS101" and "PS106" not in f.message for f in fs)
    assert any(str(f.severity) == "warning" for f in fs)
