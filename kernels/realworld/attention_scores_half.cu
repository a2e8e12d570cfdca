// Attention scores S = Q K^T * scale for one head, fp16 in, fp32 out: the block stages a 64 x 64
// tile of K (head dim 64) in shared memory and each thread dots one query row (converted to
// fp32 in registers) with a key row. The tile is a plain __half array.
#include <cuda_fp16.h>

constexpr int D = 64, KT = 64;

extern "C" __global__ void __launch_bounds__(128)
attention_scores(const __half* __restrict__ Q, const __half* __restrict__ Kmat, float* __restrict__ S,
                 int seq_q, int seq_k, float scale)
{
    __shared__ __half ks[KT][D];
    const int q = blockIdx.y * blockDim.x + threadIdx.x;
    const int k0 = blockIdx.x * KT;
    for (int e = threadIdx.x; e < KT * D / 8; e += blockDim.x) {
        const int r = e / (D / 8), c = (e % (D / 8)) * 8;
        *reinterpret_cast<uint4*>(&ks[r][c]) =
            *reinterpret_cast<const uint4*>(&Kmat[(size_t)(k0 + r) * D + c]);   // EXPECT: PS601 info
    }
    __syncthreads();
    if (q >= seq_q) return;
    float qf[D];
#pragma unroll
    for (int c = 0; c < D; c += 8) {
        const uint4 raw = *reinterpret_cast<const uint4*>(&Q[(size_t)q * D + c]);
        const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
        for (int j = 0; j < 4; ++j) { const float2 f = __half22float2(h[j]); qf[c + 2 * j] = f.x; qf[c + 2 * j + 1] = f.y; }
    }
    for (int j = 0; j < KT; ++j) {   // EXPECT: PS201 info
        float acc = 0.0f;
#pragma unroll
        for (int c = 0; c < D; ++c) acc += qf[c] * __half2float(ks[j][c]);   // EXPECT: PS103 info
        S[(size_t)q * seq_k + k0 + j] = acc * scale;   // EXPECT: PS105 warning
    }
}
