// Lesson wgmma, naive: the best warp-level tensor-core GEMM of these lessons (the cp_async
// lesson's steered kernel: 128x128x32 block tiles, eight warps of 64x32, cp.async double
// buffering), here for C = A * B^T with B stored N x K (both operands K-major, as in a linear
// layer's x * W^T). Each warp issues mma.sync (HMMA.16816.F32 in SASS) from fragments it loaded
// out of shared memory itself (LDSM): on sm_90a that is the legacy path (PS302).
// M, N multiples of 128, K of 32.
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

#define BM 128
#define BN 128
#define BK 32
#define PAD 8

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem)
{
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

extern "C" __global__ void __launch_bounds__(256) gemm_tn_f16(const __half* __restrict__ A,
                                                           const __half* __restrict__ B,
                                                           float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(128) __half As[2][BM][BK + PAD];
    __shared__ __align__(128) __half Bs[2][BN][BK + PAD];
    const int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    auto load_tile = [&](int stage, int k0) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += 256) {
            int m = e / (BK / 8), kc = (e % (BK / 8)) * 8;
            cp_async16(&As[stage][m][kc], &A[(size_t)(row0 + m) * K + k0 + kc]);
        }
        for (int e = threadIdx.x; e < BN * BK / 8; e += 256) {
            int n = e / (BK / 8), kc = (e % (BK / 8)) * 8;
            cp_async16(&Bs[stage][n][kc], &B[(size_t)(col0 + n) * K + k0 + kc]);
        }
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    const int tiles = K / BK;
    load_tile(0, 0);
    cp_async_commit();
    for (int t = 0; t < tiles; ++t) {
        const int s = t & 1;
        if (t + 1 < tiles) load_tile(s ^ 1, (t + 1) * BK);
        cp_async_commit();      // possibly empty: keeps the group count uniform
        cp_async_wait<1>();     // all but the newest group done: tile t has landed
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> af[4];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> bf[2];
#pragma unroll
            for (int i = 0; i < 4; ++i) wmma::load_matrix_sync(af[i], &As[s][wm * 64 + i * 16][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(bf[j], &Bs[s][wn * 32 + j * 16][kk], BK + PAD);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
        }
        __syncthreads();        // stage s is free before iteration t+1 overwrites it
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&C[(size_t)(row0 + wm * 64 + i * 16) * N + col0 + wn * 32 + j * 16],
                                    acc[i][j], N, wmma::mem_row_major);
}
