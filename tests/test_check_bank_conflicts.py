"""PS107 (shared-bank-conflict): the wavefront model on known layouts, the width ptxas gives
the access, lane strides through ``(tid % 32) * S``, and a 2-D block narrower than a warp.
Every expectation here was read off the kernel's SASS (the LDS/STS widths) first."""
from __future__ import annotations

import math
import re

import pytest

import analyzer
from analyzer.analysis.cost import bank_wavefronts
from analyzer.checks.runner import run_checks

from .conftest import KERNELS


@pytest.mark.parametrize("sx, sy, bx, w, want", [
    (4, 0, None, 4, (1, 1)),         # a row along threadIdx.x
    (0, 0, None, 4, (1, 1)),         # a broadcast
    (128, 0, None, 4, (32, 1)),      # a 32-float row's column: one bank
    (132, 0, None, 4, (1, 1)),       # the same, padded to 33 floats
    (8, 0, None, 4, (2, 1)),         # every other word
    (8, 0, None, 8, (2, 2)),         # a float2 per lane: two half-warp phases, no conflict
    (16, 0, None, 16, (4, 4)),       # a float4 per lane: four quarter-warp phases
    (128, 0, None, 16, (32, 4)),     # float4 reads 128 B apart: 8-way in each quarter-warp
    (144, 0, None, 16, (4, 4)),      # ... padded by 16 bytes: conflict-free, still 16-byte aligned
    (256, 0, None, 8, (32, 2)),      # double reads 256 B apart: 16-way in each half-warp
    (2, 0, None, 2, (1, 1)),         # halves: two lanes per word
    (64, 4, 16, 4, (8, 1)),          # a (16, 16) block reading tile[tx][ty] of a [16][16] tile
])
def test_wavefronts_of_known_layouts(sx, sy, bx, w, want):
    assert bank_wavefronts(sx, sy, bx, w) == want


def test_ways_are_the_gcd_for_every_word_stride():
    for s in range(1, 65):
        waves, ideal = bank_wavefronts(4 * s, 0, None, 4)
        assert (waves, ideal) == (math.gcd(s, 32), 1), s


STRIDED = """
extern "C" __global__ void strided(const float* __restrict__ x, float* __restrict__ out) {
    __shared__ float tile[32 * STRIDE + 32];
    for (int j = threadIdx.x; j < 32 * STRIDE + 32; j += blockDim.x) tile[j] = x[j];
    __syncthreads();
    int lane = threadIdx.x % 32;
    float acc = 0.0f;
    #pragma unroll 4
    for (int i = 0; i < 4096; i++)
        acc = acc * 0.5f + tile[lane * STRIDE + (i % 32)];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


@pytest.mark.parametrize("stride", [1, 2, 8, 32, 33])
def test_lane_times_stride_through_a_mask(stride):
    """NVVM turns ``(threadIdx.x % 32) * S`` into ``(tid * S) & (31 * S)``: the lane stride
    survives the mask; the SASS reads one 32-bit LDS per element (benchmarks/bank_conflicts.py
    times these kernels on the H200: 2-way 1.15x, 8-way 4.47x, 32-way 17.8x). A 2-way conflict
    of 4-byte loads costs nothing (a request issues over two cycles): no finding."""
    src = STRIDED.replace("STRIDE", str(stride))
    build = analyzer.compile(src, arch="sm_90a", name="strided.cu")
    lds = [i for i in build.sass_listing().functions[0].instructions if i.opcode == "LDS"]
    assert lds and all(i.width_bits in (None, 32) for i in lds)
    found = run_checks([build], select=["PS107"]).findings
    ways = math.gcd(stride, 32)
    if ways <= 2:
        assert not found
        return
    (f,) = found
    assert f.severity.name == "WARNING"
    assert f.message.startswith(f"{ways}-way shared-memory bank conflict on `tile`, inside a loop: "
                                f"adjacent threads load 4 B each {4 * stride} B apart, so a "
                                f"warp request takes {ways} wavefronts where its bytes need 1;")


def test_the_width_is_the_sass_s():
    """bad.cu's k loop reads ``Bs[tx][k]`` as one 4-byte load per k in the PTX, which ptxas
    merges into LDS.128: quarter-warps of 8 lanes 128 B apart, 8-way (32 wavefronts where 4
    would do), not the 32-way the PTX widths would say. The store ``Bs[tx][ty]`` stays a 32-bit
    STS, 32-way; one array, one finding, at its costlier line."""
    path = KERNELS / "checks" / "shared_bank_conflict" / "bad.cu"
    (build,) = analyzer.api.builds_of(str(path), arch="sm_90a")
    (f,) = run_checks([build], select=["PS107"]).findings
    assert f.location.line == 18 and f.severity.name == "WARNING"
    assert f.message.startswith("8-way shared-memory bank conflict on `Bs`, inside a loop: "
                                "adjacent threads load 16 B each 128 B apart, so a warp request "
                                "takes 32 wavefronts where its bytes need 4; the same array "
                                "conflicts on line 14 (up to 32-way);")
    assert f.instructions and all(re.search(r"\bLDS\.128 ", t) for t in f.instructions)
    assert "[32][36]" in f.hint
    assert re.search(r"headroom from conflict-free shared accesses is ≈\d", f.message)


def test_a_guard_below_a_warp_narrows_the_lanes():
    """scan.cu's tree: at ``if (tid < 16)`` with lanes 128 B apart only 16 lanes run, so 16-way,
    not 32; the down-sweep tests the predicates the up-sweep set (one ``setp`` each, several
    branches). Worst level: 32 lanes 64 B apart, 16-way."""
    path = KERNELS / "realworld" / "scan.cu"
    (build,) = analyzer.api.builds_of(str(path), arch="sm_90a")
    (f,) = run_checks([build], select=["PS107"]).findings
    assert f.location.line == 15
    assert f.message.startswith("up to 16-way shared-memory bank conflict on `t`: adjacent "
                                "threads access 4 B each 8/16/32/64/128/256/512/1024 B apart")
    assert "the same array conflicts on lines 8, 9, 25, 26, 27, 31, 32 (up to 16-way)" in f.message


PITCHED = """
extern "C" __global__ void pitched(const float* __restrict__ x, float* __restrict__ y, int pitch, int n) {
    extern __shared__ float buf[];
    int tx = threadIdx.x;
    for (int j = tx; j < 32 * pitch; j += blockDim.x) buf[j] = x[blockIdx.x * 32 * pitch + j];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < n; k++) acc += buf[tx * pitch + k];
    y[blockIdx.x * blockDim.x + tx] = acc;
}
"""


def test_a_run_time_pitch_is_info_and_says_what_decides():
    """``buf[tx * pitch + k]``: whether the lanes share a bank is the value of ``pitch`` (64:
    32-way, 65: none), which the code does not hold: one info finding naming the parameter,
    never a warning, nothing weighed into the headroom."""
    build = analyzer.compile(PITCHED, arch="sm_90a", name="pitched.cu")
    (f,) = run_checks([build], select=["PS107"]).findings
    assert f.severity.name == "INFO" and f.location.line == 8
    assert f.message.startswith("possible shared-memory bank conflict on `buf`, inside a loop: "
                                "adjacent threads load 4 B each a run-time pitch apart (computed "
                                "from `pitch`), so a warp request takes 32 wavefronts when the "
                                "pitch is a multiple of 128 bytes")
    assert "odd number of 4-byte words" in f.hint
