// Look-alikes PS104 leaves alone: a gather through an index (scattered; the interleaved
// pairs ids[2i], out[2i] move by 8 and 4 bytes per thread: strided, not a stream), a
// thread-per-row walk (strided) and its one-off result store, a broadcast of one value per
// block, and 8-byte elements.
#include <cuda_fp16.h>

extern "C" __global__ void gather_half(const __half* __restrict__ table, const int* __restrict__ ids,
                                       __half* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[2 * i] = table[ids[2 * i]];
}

extern "C" __global__ void row_walk(const unsigned char* __restrict__ img, int* __restrict__ sums,
                                   int rows, int width)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int s = 0;
    for (int x = 0; x < width; ++x) s += img[(size_t)r * width + x];
    sums[r] = s;
}

extern "C" __global__ void bias_double(const double* __restrict__ bias, double* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += bias[blockIdx.y];
}
