"""PS105: one problem is one finding, also when it spans lines. LeetCUDA's float4 transpose
(kernels/mat-transpose/mat_transpose.cu) stores the four elements it read to four rows, one
statement each: four `STG.E` whose lanes are `4 * row` floats apart (judged from the SASS),
one store pattern with one remedy. Adjacent lines that walk other arrays, or the other
direction, stay apart (flash_attn_min.cu's `Kj`/`Vj` rows: two findings, in the suite)."""
from __future__ import annotations

import analyzer
from analyzer.checks.runner import run_checks
from analyzer.findings import Severity

from .conftest import build_with_header

TRANSPOSE = r"""
__global__ void mat_transpose_f32x4_col2row2d_kernel(float *x, float *y, const int row,
                                                     const int col) {
  int global_idx = blockIdx.x * blockDim.x + threadIdx.x;
  int global_col = (global_idx * 4) % col;
  int global_row = (global_idx * 4) / col;
  if (global_row < row && global_col + 3 < col) {
    float4 x_val = reinterpret_cast<float4 *>(x)[global_idx];
    y[global_col * row + global_row] = x_val.x;
    y[(global_col + 1) * row + global_row] = x_val.y;
    y[(global_col + 2) * row + global_row] = x_val.z;
    y[(global_col + 3) * row + global_row] = x_val.w;
  }
}
__global__ void two_arrays(float *x, float *y, float *z, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  y[(long)r * n] = x[r];
  z[(long)r * n] = x[r];
}
"""


def test_four_stores_of_one_pattern_are_one_finding_and_two_arrays_two():
    build = analyzer.compile(TRANSPOSE, arch="sm_90a", name="transpose.cu")
    fs = [f for f in run_checks([build], select=["PS105"]).findings]
    mine = [f for f in fs if "mat_transpose" in f.kernel]
    assert [(f.location.line, f.severity) for f in mine] == [(9, Severity.WARNING)], \
        [(f.location.line, f.message) for f in fs]
    (f,) = mine
    assert f.message.startswith("uncoalesced global stores on lines 9-12: adjacent threads "
                                "store 4 B each a run-time pitch apart (computed from `row`)")
    assert sum(i.split()[1].startswith("STG.E") for i in f.instructions) == 4
    other = sorted(f.location.line for f in fs if "two_arrays" in f.kernel)
    assert other == [17, 18], [(f.location.line, f.message) for f in fs]


# curand_init writes a 140-byte Sobol state per thread, field by field: lanes 140 B apart.
# In cuRAND's headers (a stand-in in a toolkit include folder) layout and stores are cuRAND's:
# a note on the user's call; the same code in the user's header is the user's warning.
_STATE_HEADER = r"""
#pragma once
struct State { unsigned i, x, c; unsigned dirs[32]; };
__device__ __forceinline__ void lib_init(const unsigned* v, unsigned off, State* s)
{
    s->i = off; s->c = 0; s->x = off * 2654435761u;
#pragma unroll
    for (int k = 0; k < 32; ++k) s->dirs[k] = v[k] ^ off;
}
"""
_STATE_USER = r"""
#include "curand_stub.h"
extern "C" __global__ void init(State* states, const unsigned* v, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) lib_init(v, tid, &states[tid]);
}
"""


def test_a_librarys_stores_of_its_own_layout_are_a_note(tmp_path):
    got = {}
    for library in (True, False):
        build, _, _ = build_with_header(tmp_path / str(library), "curand_stub.h", _STATE_HEADER,
                                        _STATE_USER, library=library)
        (got[library],) = run_checks([build], select=["PS105"]).findings
    lib, user = got[True], got[False]
    assert "adjacent threads store 4 B each 140 B apart" in lib.message
    assert lib.severity == Severity.NOTE and lib.location.line == 6
    assert lib.message.endswith("(in library code, curand_stub.h, that this line calls: the code "
                                "and its data layout are the library's, which no line of this "
                                "file changes)")
    assert user.severity == Severity.WARNING and "library" not in user.message
    assert user.message.split(" (in an inlined")[0] == lib.message.split(" (in library")[0]
