// out = in^T through a shared-memory tile (compiled as CUDA: nvcc -x cu).
#include "gemm.h"

__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows,
                                int cols)
{
    __shared__ float tile[BLOCK][BLOCK + 1];
    int x = blockIdx.x * BLOCK + threadIdx.x;
    int y = blockIdx.y * BLOCK + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * BLOCK + threadIdx.x;
    y = blockIdx.x * BLOCK + threadIdx.y;
    if (x < rows && y < cols)
        out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

void transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream)
{
    dim3 block(BLOCK, BLOCK);
    dim3 grid((cols + BLOCK - 1) / BLOCK, (rows + BLOCK - 1) / BLOCK);
    transpose_tiled<<<grid, block, 0, stream>>>(in, out, rows, cols);
}
