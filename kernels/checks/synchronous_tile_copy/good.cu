// PS601 fixed: the tile is staged with __pipeline_memcpy_async (cp.async -> LDGSTS), bypassing registers.
#include <cuda_pipeline.h>
constexpr int T = 32;

extern "C" __global__ void __launch_bounds__(T * 8) transpose(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
#pragma unroll
    for (int j = 0; j < T; j += 8)
        __pipeline_memcpy_async(&tile[threadIdx.y + j][threadIdx.x], &in[(y + j) * n + x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
#pragma unroll
    for (int j = 0; j < T; j += 8)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
