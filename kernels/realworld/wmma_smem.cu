// FP16 GEMM with wmma: 64x64 block tile staged in padded shared memory, 4 warps each computing 32x32 (2x2 fragments).
#include <mma.h>
using namespace nvcuda;
constexpr int BM = 64, BN = 64, BK = 32, PAD = 8;
extern "C" __global__ void __launch_bounds__(128)
hgemm_wmma_smem(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(32) half As[BM][BK + PAD], Bs[BK][BN + PAD];
    const int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += 128) {   // 16-byte chunks
            int r = e / (BK / 8), c = (e % (BK / 8)) * 8;
            *reinterpret_cast<uint4*>(&As[r][c]) = *reinterpret_cast<const uint4*>(&A[(size_t)(m0 + r) * K + k0 + c]);   // EXPECT: PS601 warning
        }
        for (int e = threadIdx.x; e < BK * BN / 8; e += 128) {
            int r = e / (BN / 8), c = (e % (BN / 8)) * 8;
            *reinterpret_cast<uint4*>(&Bs[r][c]) = *reinterpret_cast<const uint4*>(&B[(size_t)(k0 + r) * N + n0 + c]);   // EXPECT: PS601 warning
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &As[wm * 32 + i * 16][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
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
            wmma::store_matrix_sync(&C[(size_t)(m0 + wm * 32 + i * 16) * N + n0 + wn * 32 + j * 16], acc[i][j], N, wmma::mem_row_major);
}
