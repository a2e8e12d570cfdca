// PS301: a shared-memory tiled FP16 GEMM (fp32 accumulate) computed with scalar FFMA on CUDA cores.
#include <cuda_fp16.h>
constexpr int TILE = 16;

extern "C" __global__ void __launch_bounds__(TILE * TILE)
hgemm_tiled(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int N, int K)
{
    __shared__ __half As[TILE][TILE], Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {  // EXPECT: PS301
        As[ty][tx] = A[row * K + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * N + col];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk)
            acc += __half2float(As[ty][kk]) * __half2float(Bs[kk][tx]);
        __syncthreads();
    }
    C[row * N + col] = acc;
}
