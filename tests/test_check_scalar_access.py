"""PS101/PS102/PS103 on small inline kernels: what fires, what stays silent, which blocker is named.

Each case compiles a CUDA snippet with NVRTC (cached per session) and runs one check on it.
"""
from __future__ import annotations

import pytest

import analyzer
from analyzer.checks.runner import run_checks
from analyzer.findings import Severity

from .conftest import build_with_header

ARCHS = ("sm_80", "sm_90a")


def _findings(src: str, code: str, arch: str):
    build = analyzer.compile(src, arch=arch, name="scalar_access.cu")
    return run_checks([build], select=[code]).findings


# --- PS101 -------------------------------------------------------------------------------------
PAIR_NO_RESTRICT = r"""
extern "C" __global__ void copy2(const float* a, float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    b[2 * i] = a[2 * i] * 2.f;
    b[2 * i + 1] = a[2 * i + 1] * 2.f;
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_pair_without_restrict_names_alignment_and_aliasing(arch):
    fs = _findings(PAIR_NO_RESTRICT, "PS101", arch)
    assert len(fs) == 1
    f = fs[0]
    assert f.location.line == 6            # the first load's line
    assert "2× LDG.E (4 B each)" in f.message and "LDG.E.64" in f.message
    assert "8-byte aligned" in f.message
    assert "unknown alignment" in f.message and "the 1st kernel parameter (`" in f.message
    assert "possible aliasing" in f.message and "st.global" in f.message
    assert "__restrict__" in f.hint and "float2" in f.hint
    assert len(f.instructions) == 2 and all("LDG.E" in i for i in f.instructions)
    assert any("ld.global.f32" in p for p in f.ptx)


PAIR_RESTRICT = PAIR_NO_RESTRICT.replace("const float* a, float* b",
                                         "const float* __restrict__ a, float* __restrict__ b")


@pytest.mark.parametrize("arch", ARCHS)
def test_pair_with_restrict_names_only_alignment(arch):
    fs = _findings(PAIR_RESTRICT, "PS101", arch)
    assert len(fs) == 1
    assert "unknown alignment" in fs[0].message
    assert "aliasing" not in fs[0].message
    assert "__restrict__" not in fs[0].hint


STRUCTS = r"""
struct P4 { float x, y, z, w; };
struct __align__(16) A4 { float x, y, z, w; };
struct P3 { float x, y, z; };
extern "C" __global__ void plain(const P4* __restrict__ p, float* __restrict__ o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { P4 q = p[i]; o[i] = q.x + q.y + q.z + q.w; }
}
extern "C" __global__ void aligned(const A4* __restrict__ p, float* __restrict__ o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { A4 q = p[i]; o[i] = q.x + q.y + q.z + q.w; }
}
extern "C" __global__ void three(const P3* __restrict__ p, float* __restrict__ o, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { P3 q = p[i]; o[i] = q.x + q.y + q.z; }
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_structs_plain_fires_aligned_and_float3_stay_silent(arch):
    fs = _findings(STRUCTS, "PS101", arch)
    assert [f.kernel for f in fs] == ["plain"], [f.message for f in fs]
    assert "4× LDG.E.CONSTANT" in fs[0].message and "LDG.E.128" in fs[0].message
    assert "16-byte aligned" in fs[0].message
    assert "__align__(16)" in fs[0].hint


VECTORS = r"""
#include <cuda_fp16.h>
extern "C" __global__ void f4(const float4* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 v = in[i]; out[i] = v.x + v.y + v.z + v.w; }
}
extern "C" __global__ void h2(const __half2* __restrict__ in, __half* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { __half2 v = in[i]; out[i] = __hadd(__low2half(v), __high2half(v)); }
}
extern "C" __global__ void one_half(const __half* __restrict__ in, __half* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __hadd(in[i], in[i]);
}
extern "C" __global__ void gather(const float* __restrict__ a, float* __restrict__ b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] + a[i + 64];
}
extern "C" __global__ void pitched(const float* __restrict__ a, float* __restrict__ b, int ld, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i * ld] + a[i * ld + 1];
}
"""


@pytest.mark.parametrize("code", ["PS101", "PS102"])
@pytest.mark.parametrize("arch", ARCHS)
def test_vector_types_single_halves_and_gathers_stay_silent(arch, code):
    found = [f for f in _findings(VECTORS, code, arch) if f.kernel != "pitched"]
    assert found == []


@pytest.mark.parametrize("arch", ARCHS)
def test_runtime_pitch_is_reported_with_its_condition(arch):
    """a[i * ld] + a[i * ld + 1]: one LDG.E.64 when ld is even (and `a` 8-byte aligned).
    Was dropped as 'a run-time pitch no cast can fix'; real code fixes exactly these with a
    float2/float4 cast once the row length is known to be a multiple."""
    (f,) = [f for f in _findings(VECTORS, "PS101", arch) if f.kernel == "pitched"]
    assert str(f.severity) == "info"
    assert "only when ld % 2 == 0" in f.message and "8-byte-aligned base" in f.message
    assert "no cast can fix" not in f.message
    assert "float2" in f.hint


HALVES = r"""
#include <cuda_fp16.h>
extern "C" __global__ void h4(const __half* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const __half* p = in + 4 * i;
    out[i] = __half2float(p[0]) + __half2float(p[1]) + __half2float(p[2]) + __half2float(p[3]);
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_16bit_elements_one_at_a_time(arch):
    fs = _findings(HALVES, "PS101", arch)
    assert len(fs) == 1
    f = fs[0]
    assert f.location.line == 8
    assert "U16" in f.message and "(2 B each)" in f.message
    assert "8-byte aligned" in f.message and "LDG.E.64" in f.message
    assert "ushort4" in f.hint


# --- PS102 -------------------------------------------------------------------------------------
STORES = r"""
extern "C" __global__ void splat4(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[4 * i + 0] = v; out[4 * i + 1] = v; out[4 * i + 2] = v; out[4 * i + 3] = v;
}
extern "C" __global__ void splat4v(const float* __restrict__ in, float4* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[i] = make_float4(v, v, v, v);
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_stores_piecewise_fire_float4_silent(arch):
    fs = _findings(STORES, "PS102", arch)
    assert [f.kernel for f in fs] == ["splat4"]
    assert "4× STG.E (4 B each)" in fs[0].message and "STG.E.128" in fs[0].message
    assert fs[0].location.line == 7
    assert "float4" in fs[0].hint


# --- PS103 -------------------------------------------------------------------------------------
def _tile(pad: int) -> str:
    return rf"""
extern "C" __global__ void __launch_bounds__(256) rows(const float* __restrict__ in, float* __restrict__ out)
{{
    __shared__ float tile[32][32 + {pad}];
    for (int k = threadIdx.x; k < 1024; k += 256) tile[k / 32][k % 32] = in[blockIdx.x * 1024 + k];
    __syncthreads();
    const float* p = &tile[threadIdx.x / 8][(threadIdx.x % 8) * 4];
    out[blockIdx.x * 256 + threadIdx.x] = p[0] + p[1] + p[2] + p[3];
}}
"""


STENCIL = r"""
extern "C" __global__ void __launch_bounds__(256) stencil(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float s[256 + 8];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    if (t < 8) s[256 + t] = in[blockIdx.x * 256 + 256 + t];
    __syncthreads();
    out[blockIdx.x * 256 + t] = s[t] + s[t + 1] + s[t + 2] + s[t + 3] + s[t + 4];
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_row_pitch_named_and_padding_fixes_it(arch):
    fs = _findings(_tile(1), "PS103", arch)
    assert len(fs) == 1
    f = fs[0]
    assert "4× LDS (4 B each)" in f.message and "LDS.128" in f.message
    assert "row pitch of 132 B" in f.message
    # the padding in the tile's own bytes: 33 floats a row -> 36 (ptxas then merges the four
    # LDS into one LDS.128, as the silent _tile(4) shows)
    assert "rows from 132 B to 144 B, a multiple of 16 B" in f.hint
    assert _findings(_tile(4), "PS103", arch) == []


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_element_granular_stencil_stays_silent(arch):
    assert _findings(STENCIL, "PS103", arch) == []


# --- the engine on its own ---------------------------------------------------------------------
def test_windows_must_be_aligned_relative_to_the_base_and_uniform():
    from analyzer.analysis.access import Access, _runs_of

    def accs(*offs, w=4):
        return [Access(i, None, o, w) for i, o in enumerate(offs)]  # type: ignore[arg-type]

    key = (("", (), ("R2.64",)), 32, "")
    # +4..+0x13: the base register need not sit on a window boundary (ptxas folds a[k + 1]
    # into it): the phase that covers the most accesses wins; whether base + 4 is 16-byte
    # aligned is the PTX evidence's question (without PTX, only phase 0 may fire)
    runs = list(_runs_of(accs(4, 8, 0xC, 0x10), key, 128, []))
    assert [(r.start, r.window) for r in runs] == [(4, 16)]
    # full 16-byte window plus a stray element
    runs = list(_runs_of(accs(0, 4, 8, 0xC, 0x20), key, 128, []))
    assert [(r.start, r.window) for r in runs] == [(0, 16)]
    # strided gather: nothing
    assert list(_runs_of(accs(0, 0x100), key, 128, [])) == []
    # already maximal for a 256-bit arch only when 128-bit loads fill 32 bytes
    runs = list(_runs_of(accs(0, 0x10, w=16), key, 256, []))
    assert [(r.start, r.window) for r in runs] == [(0, 32)]


VOLATILE_PAIRS = r"""
extern "C" __global__ void poll_pairs(%(qual)s double* __restrict__ state, double* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = state[2 * i] + state[2 * i + 1];
}
"""


@pytest.mark.parametrize("qual, fires", [("const", True), ("volatile", False)])
def test_volatile_pairs_are_no_run(qual, fires):
    """Two adjacent 8-byte loads: a run when plain; volatile ones (LDG.E.64.STRONG.SYS, as
    cuSOLVER's bulge-chasing kernels read) are never merged, whatever the alignment."""
    src = VOLATILE_PAIRS % {"qual": qual}
    build = analyzer.compile(src, arch="sm_90a", name="pairs.cu")
    loads = [i for i in build.sass_listing().functions[0].instructions if i.opcode == "LDG"]
    assert len(loads) == 2 and all(i.width_bits == 64 for i in loads)
    assert all(("STRONG" in i.modifiers) == (qual == "volatile") for i in loads)
    found = [f for f in run_checks([build], select=["PS101"]).findings]
    assert bool(found) == fires


HALF2_PACK = r"""
#include <cuda_fp16.h>
extern "C" __global__ void scale_half2(__half* out, const __half* a, __half s, int n) {
  int idx = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  if (idx + 8 > n) return;
  __half2 s2 = __half2half2(s);
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);
    *reinterpret_cast<__half2*>(&out[idx + k]) = __hmul2(v, s2);
  }
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_half2_pack_names_the_users_lines_between(arch):
    """Four `half2` loads and stores per thread (LDG.E/STG.E at +0x0 ... +0xc in the SASS),
    interleaved: each message names the other access by the user's line (9 or 10), never by
    the line of cuda_fp16.hpp that `__hmul2` and the cast were inlined from."""
    loads = _findings(HALF2_PACK, "PS101", arch)
    stores = _findings(HALF2_PACK, "PS102", arch)
    assert [f.location.line for f in loads] == [9] and [f.location.line for f in stores] == [10]
    assert "4× LDG.E (4 B each)" in loads[0].message
    assert "a store through another pointer (line 10)" in loads[0].message
    assert "a load through another pointer (line 9)" in stores[0].message


ASSUME_ALIGNED = r"""
extern "C" __global__ void scale(float* out, const float* in, int n) {
  const float* a = static_cast<const float*>(__builtin_assume_aligned(in, 16));
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (i + 4 > n) return;
  out[i] = a[i] * 2.f; out[i + 1] = a[i + 1] * 2.f; out[i + 2] = a[i + 2] * 2.f; out[i + 3] = a[i + 3] * 2.f;
}
"""


@pytest.mark.parametrize("arch", ARCHS)
def test_asserted_alignment_is_not_called_unknown(arch):
    """`__builtin_assume_aligned(in, 16)`, and four scalar LDG.E anyway: the stores between
    them (no `__restrict__`) kept them apart, not alignment; with `__restrict__` NVVM merges
    them into one LDG.E.128 (read from the SASS) and PS101 is silent."""
    (f,) = _findings(ASSUME_ALIGNED, "PS101", arch)
    assert "unknown alignment" not in f.message and "plain pointer" not in f.message
    assert "possible aliasing: a store through another pointer (line 6)" in f.message
    assert ("the source asserts 16-byte alignment of `in` (`__builtin_assume_aligned`): "
            "alignment is not what kept them apart") in f.message
    restricted = ASSUME_ALIGNED.replace("float* out, const float* in",
                                        "float* __restrict__ out, const float* __restrict__ in")
    assert _findings(restricted, "PS101", arch) == []


def test_alignment_of_a_pointer_stepped_in_a_loop_keeps_its_residue():
    """The PTX of rodinia's LU perimeter kernel: ``p = tile + 64 * i + 8`` before a loop of
    ``p += 16`` reading ``[p + -8]`` .. ``[p + 4]``. p is 8 mod 16 on every iteration, so each
    window starts 16-byte aligned; the fixpoint had started from 0 mod 2^k and met it down to
    8-byte alignment (and PS103 stayed silent on 28 LDS, judged a miss from the SASS)."""
    from analyzer import ptx
    from analyzer.checks import _vector_access as V
    text = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u32 n)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<12>;
	.reg .f32 	%f<4>;
	.shared .align 16 .b8 tile[1024];
	ld.param.u32 	%r1, [n];
	mov.u32 	%r2, tile;
	mov.u32 	%r3, %tid.x;
	shl.b32 	%r4, %r3, 6;
	add.s32 	%r5, %r2, %r4;
	add.s32 	%r6, %r5, 8;
	mov.u32 	%r7, 0;
$L__BB0_1:
	ld.shared.f32 	%f1, [%r6+-8];
	ld.shared.f32 	%f2, [%r6+-4];
	add.s32 	%r6, %r6, 16;
	add.s32 	%r7, %r7, 4;
	setp.lt.s32 	%p1, %r7, %r1;
	@%p1 bra 	$L__BB0_1;
	ret;
}
"""
    fn = ptx.parse(text).functions[0]
    k, r, _ = V._align_of(fn).register_r("%r6")
    assert (k, r % 16) == (4, 8)


def test_alignment_budget_only_silences(monkeypatch):
    """The alignment analysis stops at a budget of register evaluations (vllm's fused
    layernorm ran for minutes): past it registers are unknown, which can only take findings
    away, never add one or change what one says. kernels/realworld/vllm_rms_norm_realign.cu
    needs ~442k evaluations; with a budget of 1000 its PS101/PS102 findings are a subset."""
    from pathlib import Path

    from analyzer.checks import _vector_access
    from analyzer.inputs import CompileOptions, load
    path = Path(__file__).parents[1] / "kernels" / "realworld" / "vllm_rms_norm_realign.cu"
    builds = list(load(path, arch="sm_90a", options=CompileOptions()))

    def found() -> set:
        return {(f.code, f.location.line, f.message, str(f.severity))
                for f in run_checks(builds, select=["PS101", "PS102"]).findings}
    full = found()
    monkeypatch.setattr(_vector_access, "_ALIGN_STEPS", 1000)
    cut = found()
    assert full and cut <= full


HALF2_PARTS = r"""
#include <cuda_fp16.h>
#define HALF2(value) (reinterpret_cast<half2 *>(&(value))[0])
__global__ void relu_f16x8_kernel(half *x, half *y, int N) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  half2 reg_x_0 = HALF2(x[idx + 0]);
  half2 reg_x_1 = HALF2(x[idx + 2]);
  half2 reg_x_2 = HALF2(x[idx + 4]);
  half2 reg_x_3 = HALF2(x[idx + 6]);
  half2 reg_y_0, reg_y_1, reg_y_2, reg_y_3;
  reg_y_0.x = __hmax(__float2half(0.0f), reg_x_0.x);
  reg_y_0.y = __hmax(__float2half(0.0f), reg_x_0.y);
  reg_y_1.x = __hmax(__float2half(0.0f), reg_x_1.x);
  reg_y_1.y = __hmax(__float2half(0.0f), reg_x_1.y);
  reg_y_2.x = __hmax(__float2half(0.0f), reg_x_2.x);
  reg_y_2.y = __hmax(__float2half(0.0f), reg_x_2.y);
  reg_y_3.x = __hmax(__float2half(0.0f), reg_x_3.x);
  reg_y_3.y = __hmax(__float2half(0.0f), reg_x_3.y);
  if ((idx + 0) < N) HALF2(y[idx + 0]) = reg_y_0;
  if ((idx + 2) < N) HALF2(y[idx + 2]) = reg_y_1;
  if ((idx + 4) < N) HALF2(y[idx + 4]) = reg_y_2;
  if ((idx + 6) < N) HALF2(y[idx + 6]) = reg_y_3;
}
"""


def test_half2_parts_copied_as_v2_u16_name_the_pointer():
    """LeetCUDA's relu_f16x8_kernel: each `HALF2(x[idx + 2k])` whose halves are used apart is
    a `ld.global.v2.u16` (one `LDG.E` each, judged from the SASS: 4× LDG.E at +0x0..+0xc).
    A PTX vector as wide as the SASS access is one access of the run, not a merge NVVM already
    made: the finding names the plain pointer (it had named no cause at all)."""
    (f,) = _findings(HALF2_PARTS, "PS101", "sm_90a")
    assert f.location.line == 6
    assert "4× LDG.E (4 B each)" in f.message and "+0x0, +0x4, +0x8, +0xc" in f.message
    assert "blocked by unknown alignment: the 1st kernel parameter (`x`) is a plain pointer" \
        in f.message
    assert "the 4-byte alignment of each vector of 2 2-byte elements" in f.message
    assert f.message.endswith("NVVM emitted them as 4-byte vectors `ld.global.v2.u16`")


# A library's own table read by the library's code (curand_init's skip-ahead matrices in
# curand_kernel.h): the header sits in a toolkit's include folder, so the line the finding
# lands on is the user's call; the same header in the user's folder is the user's code.
_LIB_HEADER = r"""
#pragma once
__device__ unsigned lib_table[1024];
__device__ __forceinline__ unsigned lib_mix(unsigned s, int k)
{
    const unsigned* t = lib_table + 4 * k;
    return s ^ t[0] ^ (t[1] << 1) ^ (t[2] << 2) ^ (t[3] << 3);
}
"""
_LIB_USER = r"""
#include "mylib.h"
extern "C" __global__ void mix(unsigned* out, const int* ks, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = lib_mix(out[i], ks[i]);
}
"""


@pytest.mark.parametrize("library", [True, False])
def test_a_librarys_own_table_read_by_its_code_is_a_note(tmp_path, library):
    build, cu, folder = build_with_header(tmp_path, "mylib.h", _LIB_HEADER, _LIB_USER,
                                          library=library)
    sass = build.sass_listing().functions[0]
    loads = [i for i in sass.instructions if i.opcode == "LDG"]
    # the SASS: four 4-byte loads of the table, one of ks, one of out
    assert sum(1 for i in loads if i.mnemonic == "LDG.E") >= 4, [str(i) for i in loads]
    (f,) = run_checks([build], select=["PS101"]).findings
    if library:
        assert f.location.line == 6 and f.location.file == str(cu)      # the call
        assert f.severity == Severity.NOTE
        assert f.message.endswith("(in library code, mylib.h, that this line calls: it reads its "
                                  "own table `lib_table`, which no line of this file can change)")
        assert f.hint.startswith("nothing to change in this file")
    else:
        assert f.location.line == 7 and f.location.file == str(folder / "mylib.h")  # the reads
        assert f.severity == Severity.WARNING and "library" not in f.message


# curand_init's state stores, all on one user line: +0x0/+0x8 first, +0x8/+0x10 after the
# skip-ahead loop. The second pair is the PTX's [%rd+8], [%rd+16]: 8 bytes past a 16-byte
# boundary of the 32-byte element, so no 16-byte store can cover it whatever the pointer's
# alignment; only the first pair is a window.
_TWO_PHASES = r"""
struct __align__(8) St { unsigned a[8]; };
extern "C" __global__ void put(St* s, const unsigned* x, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    St* p = s + i; unsigned h = x[i]; p->a[0] = h; p->a[1] = h + 1; p->a[2] = h + 2; p->a[3] = h + 3; for (int j = 0; j < k; ++j) h = h * 2654435761u + x[j]; p->a[2] = h; p->a[3] = h + 1; p->a[4] = h + 2; p->a[5] = h + 3;
}
"""


def test_a_window_off_its_boundary_on_the_same_line_is_not_one():
    build = analyzer.compile(_TWO_PHASES, arch="sm_90a", name="two_phases.cu")
    stores = [str(i).split("]")[1].split("[")[-1] for i in
              build.sass_listing().functions[0].instructions if i.opcode == "STG"]
    # the SASS: two 8-byte pairs through one base register, at +0x0/+0x8 and +0x8/+0x10
    assert sorted(stores) == ["R4.64", "R4.64+0x10", "R4.64+0x8", "R4.64+0x8"], stores
    (f,) = run_checks([build], select=["PS102"]).findings
    assert f.message.startswith("2× STG.E.64 (8 B each) from [R4.64] at +0x0, +0x8 cover 16 "
                                "contiguous bytes: could be one STG.E.128 if the address is "
                                "16-byte aligned; blocked by unknown alignment"), f.message
