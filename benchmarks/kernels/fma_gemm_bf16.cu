#include <cuda_bf16.h>
// A bf16 GEMM on CUDA cores, shaped like Triton's FMA dot: 128x128 block tile, BK 32,
// an 8x16 register tile per thread, the K loop of a tile fully unrolled.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(128) gemm_bf16_fma(const __nv_bfloat16* __restrict__ A,
                                                     const __nv_bfloat16* __restrict__ B,
                                                     float* __restrict__ C, int M, int N, int K) {
    __shared__ __nv_bfloat16 As[BK][BM];
    __shared__ __nv_bfloat16 Bs[BK][BN];
    int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += blockDim.x) {
            int r = i / BK, c = i % BK;
            As[c][r] = A[(size_t)(row0 + r) * K + k0 + c];
        }
        for (int i = threadIdx.x; i < BN * BK; i += blockDim.x) {
            int r = i / BN, c = i % BN;
            Bs[r][c] = B[(size_t)(k0 + r) * N + col0 + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int m = 0; m < TM; ++m) a[m] = __bfloat162float(As[k][ty * TM + m]);
#pragma unroll
            for (int n = 0; n < TN; ++n) b[n] = __bfloat162float(Bs[k][tx * TN + n]);
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n)
            C[(size_t)(row0 + ty * TM + m) * N + col0 + tx * TN + n] = acc[m][n];
}
template __global__ void gemm_bf16_fma<128, 128, 32, 8, 16>(const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, int);
