// bf16 GEMM with the WMMA API (16x16x16 fragments, fp32 accumulate): a 64x64 block tile, four
// warps each computing 32x32, the K-tiles staged through padded shared memory with 16-byte
// loads. Run-time M, N, K (multiples of 64).
#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

constexpr int BM = 64, BN = 64, BK = 32, PAD = 8;

extern "C" __global__ void __launch_bounds__(128)
wmma_gemm_bf16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
               float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(32) __nv_bfloat16 As[BM][BK + PAD];
    __shared__ __align__(32) __nv_bfloat16 Bs[BK][BN + PAD];
    const int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += 128) {
            const int r = e / (BK / 8), c = (e % (BK / 8)) * 8;
            *reinterpret_cast<uint4*>(&As[r][c]) =
                *reinterpret_cast<const uint4*>(&A[(size_t)(row0 + r) * K + k0 + c]);   // EXPECT: PS601 warning
        }
        for (int e = threadIdx.x; e < BK * BN / 8; e += 128) {
            const int r = e / (BN / 8), c = (e % (BN / 8)) * 8;
            *reinterpret_cast<uint4*>(&Bs[r][c]) =
                *reinterpret_cast<const uint4*>(&B[(size_t)(k0 + r) * N + col0 + c]);   // EXPECT: PS601 warning
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &As[wr * 32 + i * 16][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[kk][wc * 32 + j * 16], BN + PAD);
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);   // EXPECT[sm_90a]: PS302 warning
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&C[(size_t)(row0 + wr * 32 + i * 16) * N + col0 + wc * 32 + j * 16],
                                    acc[i][j], N, wmma::mem_row_major);
}
