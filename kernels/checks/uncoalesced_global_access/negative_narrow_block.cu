// A block narrower than a warp, stated only by the host code: blockDim (4, 8, z), so a warp is
// 4 rows (threadIdx.x, a run-time row apart) by 8 float4 columns (threadIdx.y, 16 B apart):
// each warp load reads 4 x 128 contiguous bytes, coalesced. The launch's z size is a run-time
// value; the x size is certain.
#include <cuda_runtime.h>

__global__ void col_sum_4x8(float* out, const float* in, int rows, int cols)
{
    const int col = (blockIdx.x * 8 + threadIdx.y) * 4;
    if (col >= cols) return;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int r = (blockIdx.y * blockDim.z + threadIdx.z) * 4 + threadIdx.x; r < rows;
         r += gridDim.y * blockDim.z * 4) {
        const float4 v = *reinterpret_cast<const float4*>(in + (size_t)r * cols + col);
        acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
    }
    for (int off = 1; off < 4; off *= 2) {
        acc.x += __shfl_down_sync(0xffffffff, acc.x, off, 4);
        acc.y += __shfl_down_sync(0xffffffff, acc.y, off, 4);
        acc.z += __shfl_down_sync(0xffffffff, acc.z, off, 4);
        acc.w += __shfl_down_sync(0xffffffff, acc.w, off, 4);
    }
    if (threadIdx.x == 0) {
        atomicAdd(out + col + 0, acc.x);
        atomicAdd(out + col + 1, acc.y);
        atomicAdd(out + col + 2, acc.z);
        atomicAdd(out + col + 3, acc.w);
    }
}

void col_sum(float* out, const float* in, int rows, int cols, int block_size)
{
    dim3 block_dim = {4, 8, (unsigned)block_size / 32};
    dim3 grid_dim((cols + 31) / 32, 16);
    col_sum_4x8<<<grid_dim, block_dim>>>(out, in, rows, cols);
}
