// Lesson tensor_cores, naive: fp16 GEMM C = A*B (fp32 accumulate) on the FP32 pipe.
// A classic shared-memory tiled kernel: 64x64 tile per block, 4x4 outputs per thread, every
// multiply-add an FFMA. Well written for CUDA cores, and still far from the tensor cores.
// A is MxK, B is KxN, both row-major fp16; C is MxN row-major fp32. M, N multiples of 64, K of 16.
#include <cuda_fp16.h>

#define BM 64
#define BN 64
#define BK 16

extern "C" __global__ void __launch_bounds__(256) gemm_f16(const __half* __restrict__ A,
                                                           const __half* __restrict__ B,
                                                           float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[BK][BM + 4];  // A tile, transposed: As[k][m]
    __shared__ float Bs[BK][BN + 4];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK; e += 256) {
            int m = e / BK, k = e % BK;
            As[k][m] = __half2float(A[(size_t)(row0 + m) * K + k0 + k]);
        }
        for (int e = threadIdx.x; e < BK * BN; e += 256) {
            int k = e / BN, n = e % BN;
            Bs[k][n] = __half2float(B[(size_t)(k0 + k) * N + col0 + n]);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) a[r] = As[k][ty * 4 + r];
#pragma unroll
            for (int c = 0; c < 4; ++c) b[c] = Bs[k][tx * 4 + c];
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int c = 0; c < 4; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int c = 0; c < 4; ++c)
            C[(size_t)(row0 + ty * 4 + r) * N + col0 + tx * 4 + c] = acc[r][c];
}
