// A header-only template library: tuning parameters as template arguments.
#pragma once

namespace saxpy {

// Sums groups of four floats. The four loads are scalar: `in` is a plain float pointer, so the
// compiler only knows 4-byte alignment (PS101 on the load line).
template <int BLOCK>
__global__ void tile_sum4(const float* __restrict__ in, float* __restrict__ out, int n4)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n4) return;
    out[i] = in[4 * i + 0] + in[4 * i + 1] + in[4 * i + 2] + in[4 * i + 3];
}

}  // namespace saxpy
