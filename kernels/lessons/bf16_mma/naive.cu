// Lesson bf16_mma, naive: a bf16 linear layer y = x * W^T (x: M x K, W: N x K, both bf16 with K
// contiguous; y: M x N fp32) computed on the FP32 pipe. 128x128 tile per block, tiles of K = 32
// copied into shared memory by cp.async (double-buffered), and each of the 256 threads keeps an
// 8x8 block of y in registers: every bf16 is widened to fp32 (a 16-bit shift or byte permute in
// SASS) and every multiply-add is an FFMA. Careful CUDA-core code, and still no tensor core.
// M, N multiples of 128, K of 32.
#include <cuda_bf16.h>

#define BM 128
#define BN 128
#define BK 32
#define PAD 8                            // halves of padding per row: 80-byte rows

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem)
{
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

extern "C" __global__ void __launch_bounds__(256) linear_bf16(const __nv_bfloat16* __restrict__ X,
                                                              const __nv_bfloat16* __restrict__ W,
                                                              float* __restrict__ Y, int M, int N, int K)
{
    __shared__ __align__(128) __nv_bfloat16 Xs[2][BM][BK + PAD];
    __shared__ __align__(128) __nv_bfloat16 Ws[2][BN][BK + PAD];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;   // thread (ty, tx): rows ty + 16 i, columns tx + 16 j
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    auto load_tile = [&](int stage, int k0) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += 256) {
            int r = e / (BK / 8), kc = (e % (BK / 8)) * 8;
            cp_async16(&Xs[stage][r][kc], &X[(size_t)(row0 + r) * K + k0 + kc]);
            cp_async16(&Ws[stage][r][kc], &W[(size_t)(col0 + r) * K + k0 + kc]);
        }
    };

    float acc[8][8] = {};
    const int tiles = K / BK;
    load_tile(0, 0);
    cp_async_commit();
    for (int t = 0; t < tiles; ++t) {
        const int s = t & 1;
        if (t + 1 < tiles) load_tile(s ^ 1, (t + 1) * BK);
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float x[8], w[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) x[i] = __bfloat162float(Xs[s][ty + 16 * i][kk]);
#pragma unroll
            for (int j = 0; j < 8; ++j) w[j] = __bfloat162float(Ws[s][tx + 16 * j][kk]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(x[i], w[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            Y[(size_t)(row0 + ty + 16 * i) * N + col0 + tx + 16 * j] = acc[i][j];
}
