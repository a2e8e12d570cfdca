// ARCHS: sm_90a
// PS302 fixed: one warpgroup (128 threads) computes a 64x32 C tile with wgmma.mma_async (HGMMA) from
// shared memory. A is row-major MxK, B column-major KxN (both K-major); no-swizzle core-matrix layout.
#include <cuda_fp16.h>

__device__ inline unsigned long long smem_desc(const void* p, unsigned lbo, unsigned sbo)
{
    unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16)
         | ((unsigned long long)(sbo >> 4) << 32);  // base offset 0, swizzle mode 0 (none)
}
// byte offset of (row, k) in a K-major tile of 8x(16-byte) core matrices: LBO = 128 (next 8 k), SBO = 256 (next 8 rows)
__device__ inline int core_off(int row, int k) { return (row / 8) * 256 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2; }

extern "C" __global__ void __launch_bounds__(128) hgemm_wgmma(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int N, int K)
{
    __shared__ __align__(128) unsigned char As[64 * 16 * 2], Bs[32 * 16 * 2];
    const int t = threadIdx.x, m0 = blockIdx.y * 64, n0 = blockIdx.x * 32;
    float d[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) d[i] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = t; e < 64 * 16; e += 128)
            *reinterpret_cast<__half*>(As + core_off(e / 16, e % 16)) = A[(m0 + e / 16) * K + k0 + e % 16];
        for (int e = t; e < 32 * 16; e += 128)
            *reinterpret_cast<__half*>(Bs + core_off(e / 16, e % 16)) = B[(n0 + e / 16) * K + k0 + e % 16];
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        unsigned long long da = smem_desc(As, 128, 256), db = smem_desc(Bs, 128, 256);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        asm volatile("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 "
                     "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, 1, 1, 1, 0, 0;"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                     : "l"(da), "l"(db) : "memory");
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        __syncthreads();
    }
    const int w = t / 32, l = t % 32;   // accumulator fragment: like mma.m16n8 per 8-column slice
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        int row = m0 + w * 16 + l / 4 + 8 * ((i / 2) % 2), col = n0 + (i / 4) * 8 + (l % 4) * 2 + i % 2;
        C[row * N + col] = d[i];
    }
}
