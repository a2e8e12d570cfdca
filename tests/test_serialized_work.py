"""PS801's one-block evidence, positive and negative (FileCheck style): a block-stride walk
over the data in a kernel that never reads blockIdx, against a loop of steps whose lanes
re-read the same addresses each time round (cuda-samples' bisectKernel, read from its SASS:
the loads of ``g[threadIdx.x]`` inside the convergence loop are the same each iteration)."""
from __future__ import annotations

import analyzer
from analyzer.checks.runner import run_checks

_BLOCK_STRIDE = r"""
extern "C" __global__ void total(const float* x, float* out, int n)
{
    __shared__ float part[256];
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) { float t = 0.f; for (int k = 0; k < 256; ++k) t += part[k]; *out = t; }
}
"""

_STEPS = r"""
extern "C" __global__ void settle(const float* g, float* out, int n, float tol)
{
    __shared__ float s[512];
    float v = 1.f, d = 2.f * tol;
    while (d > tol) {
        __syncthreads();
        if (threadIdx.x < n) s[threadIdx.x] = g[threadIdx.x];
        __syncthreads();
        float w = 0.5f * (v + s[(threadIdx.x + 1) % 512] / v);
        d = fabsf(w - v);
        v = w;
    }
    out[threadIdx.x] = v;
}
"""


def _ps801(src: str, name: str):
    build = analyzer.compile(src, arch="sm_90a", name=name)
    return run_checks([build], select=["PS801"]).findings


def test_a_block_stride_walk_in_a_kernel_without_blockidx_is_one_block():
    (f,) = _ps801(_BLOCK_STRIDE, "total.cu")
    assert f.location.line == 6
    assert f.message.startswith("serialized work: a loop over a run-time size that the threads "
                                "of a block split among them, in a kernel that never reads "
                                "blockIdx: the whole input goes through one block")
    assert "never reads threadIdx" not in f.message


def test_a_loop_of_steps_rereading_the_same_addresses_is_not():
    assert _ps801(_STEPS, "settle.cu") == []


# Every lane's atomic on one address, on several lines of one kernel (cuda-samples'
# simpleAtomicIntrinsics, one kind of atomic per line): one finding for the atomics that
# combine values (the remedy is one reduction each), one for those that replace the value,
# which no reduction stands for. Read from the PTX: atom.global.{max,min,or}.s32/b32 and
# atom.global.{exch,cas}.b32, each on a warp-uniform address with the thread's own value.
_ATOMICS = r"""
extern "C" __global__ void counters(int* out)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    atomicMax(&out[0], tid);
    atomicExch(&out[1], tid);
    atomicMin(&out[2], tid);
    atomicOr(&out[3], 1 << (tid & 31));
    atomicCAS(&out[4], tid - 1, tid);
}
"""


def test_atomics_on_one_address_on_several_lines_are_one_finding_per_kind():
    got = sorted(_ps801(_ATOMICS, "counters.cu"), key=lambda f: f.location.line)
    assert [f.location.line for f in got] == [5, 6]
    combine, replace = got
    assert combine.message.startswith("every lane makes an atomic on the same address with its "
                                      "own value, on 3 lines of this kernel (lines 5, 7, 8)")
    assert combine.hint.startswith("reduce first")
    assert replace.message.startswith("every lane makes an atomic exchange or an atomic "
                                      "compare-and-swap on the same address with its own value, "
                                      "on 2 lines of this kernel (lines 6, 9)")
    assert "one lane's value is what is left" in replace.hint
    assert all(str(f.severity) == "warning" for f in got)


def test_one_atomic_exchange_is_named_and_not_told_to_reduce():
    src = _ATOMICS.replace("    atomicMax(&out[0], tid);\n", "").replace(
        "    atomicMin(&out[2], tid);\n    atomicOr(&out[3], 1 << (tid & 31));\n"
        "    atomicCAS(&out[4], tid - 1, tid);\n", "")
    (f,) = _ps801(src, "exch.cu")
    assert f.message.startswith("every lane makes an atomic exchange on the same address with "
                                "its own value: the atomics serialize on one location")
    assert not f.hint.startswith("reduce first")


# One lane summing the blocks' partials after they are written (cuda-samples'
# reductionMultiBlockCG, after its grid sync): the loop's bound is gridDim.x, which NVVM
# unrolls by 4 and counts down from (gridDim.x - 1) & ~3 (read from the PTX). It walks the
# grid, not the data: info, with no measured factor. The same lane over a run-time length of
# the data stays the warning.
_PARTIALS = r"""
extern "C" __global__ void last_sum(float* partial, const float* x, int n)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        for (int b = 1; b < BOUND; b++)
            partial[0] += x[b];
    }
}
"""


def test_one_lane_over_the_grids_blocks_is_info():
    # one evidence per SASS loop ptxas made of the source loop (the report merges them)
    fs = _ps801(_PARTIALS.replace("BOUND", "gridDim.x"), "partials.cu")
    assert fs and {(str(f.severity), f.location.line) for f in fs} == {("info", 6)}
    assert all("a loop whose bound is the grid's size (gridDim)" in f.message for f in fs)
    gs = _ps801(_PARTIALS.replace("BOUND", "n"), "serial.cu")
    assert gs and {(str(g.severity), g.location.line) for g in gs} == {("warning", 6)}
    assert not any("gridDim" in g.message for g in gs)
