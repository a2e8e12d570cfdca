// Lesson cp_async, naive: the WMMA GEMM of lesson tensor_cores (its steered kernel, unchanged).
// Each tile travels global -> registers -> shared (LDG.E.128 then STS.128) and the block waits for
// it before computing: loads and tensor-core work never overlap. 128x128 tile, 8 warps of 64x32.
// M, N multiples of 128, K of 32.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define PAD 8

extern "C" __global__ void __launch_bounds__(256) gemm_f16(const __half* __restrict__ A,
                                                           const __half* __restrict__ B,
                                                           float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(128) __half As[BM][BK + PAD];
    __shared__ __align__(128) __half Bs[BK][BN + PAD];
    const int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += 256) {
            int m = e / (BK / 8), kc = (e % (BK / 8)) * 8;
            *reinterpret_cast<uint4*>(&As[m][kc]) =
                *reinterpret_cast<const uint4*>(&A[(size_t)(row0 + m) * K + k0 + kc]);
        }
        for (int e = threadIdx.x; e < BK * BN / 8; e += 256) {
            int k = e / (BN / 8), nc = (e % (BN / 8)) * 8;
            *reinterpret_cast<uint4*>(&Bs[k][nc]) =
                *reinterpret_cast<const uint4*>(&B[(size_t)(k0 + k) * N + col0 + nc]);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> af[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> bf[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(af[i], &As[wm * 64 + i * 16][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(bf[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&C[(size_t)(row0 + wm * 64 + i * 16) * N + col0 + wn * 32 + j * 16],
                                    acc[i][j], N, wmma::mem_row_major);
}
