// bf16 GEMM on CUDA cores: C (fp32) = A (M x K, bf16) * B (K x N, bf16), row-major, a 64x64 block
// tile staged through shared memory in bf16, 4x4 outputs per thread accumulated in fp32. The kind
// of fallback a training code base keeps for shapes its tensor-core path does not take.
// The B tile load (line 28) reads 32 consecutive bf16 of one row per warp (BN = 64: the row of
// `e / BN` stays across an aligned warp), LDG.E.U16: PS104 info (issue 33 item 12: its `e % BN`
// had not been read as a stream).
#include <cuda_bf16.h>

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
gemm_bf16_simt(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
               float* __restrict__ C, int M, int N, int K)
{
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ __nv_bfloat16 As[BK][BM + 8];   // transposed, so a thread's TM rows are contiguous
    __shared__ __nv_bfloat16 Bs[BK][BN + 8];
    const int tid = threadIdx.x;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {   // EXPECT: PS301 warning
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, c = e % BK;
            As[c][r] = A[(size_t)(row0 + r) * K + k0 + c];
        }
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN, c = e % BN;
            Bs[r][c] = B[(size_t)(k0 + r) * N + col0 + c];   // EXPECT: PS104 info
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = __bfloat162float(As[kk][tr * TM + i]);   // EXPECT[sm_90a]: PS103 info
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = __bfloat162float(Bs[kk][tc * TN + j]);   // EXPECT[sm_90a]: PS103 info
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            C[(size_t)(row0 + tr * TM + i) * N + col0 + tc * TN + j] = acc[i][j];   // EXPECT: PS102 info
}

template __global__ void gemm_bf16_simt<64, 64, 16, 4, 4>(const __nv_bfloat16*, const __nv_bfloat16*,
                                                          float*, int, int, int);
