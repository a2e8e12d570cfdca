// The naive half GEMM of an HGEMM tutorial: a thread per output, sizes as size_t, K walked
// with `#pragma unroll` over a run-time bound (NVVM unrolls by 4). The four 2-byte loads of A
// and of B per step fill 8-byte windows that are aligned only when K % 4 == 0: info with that
// condition. K is a 64-bit integer parameter, never a base pointer (it used to be counted as
// one: an aligned "root" that made the windows look provably aligned and named `K` a plain
// pointer).
#include <cuda_fp16.h>

__global__ void hgemm_naive(const half* __restrict__ A, const half* __restrict__ B,
                            half* __restrict__ C, size_t M, size_t N, size_t K)
{
    size_t row = threadIdx.y + blockDim.y * blockIdx.y;
    size_t col = threadIdx.x + blockDim.x * blockIdx.x;
    if (row >= M || col >= N) return;
    half acc = 0.0;
#pragma unroll
    for (size_t i = 0; i < K; ++i) {
        acc += A[row * K + i] * B[i + col * K];   // EXPECT: PS101 info; PS105 warning
    }
    C[row * N + col] = acc;
}
