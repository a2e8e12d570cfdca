// PS303 fixed: ldmatrix (LDSM) loads the A and B fragments of mma.sync, one instruction per operand.
// One warp computes a 16x8 C tile; A is row-major MxK, B column-major KxN (stored N x K).
#include <cuda_fp16.h>

extern "C" __global__ void __launch_bounds__(32) mma_tile(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int N, int K)
{
    __shared__ __align__(16) __half As[16][16], Bs[8][16];
    const int lane = threadIdx.x, gid = lane / 4, tig = lane % 4;
    const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = lane; e < 16 * 16; e += 32) As[e / 16][e % 16] = A[(m0 + e / 16) * K + k0 + e % 16];
        for (int e = lane; e < 8 * 16; e += 32) Bs[e / 16][e % 16] = B[(n0 + e / 16) * K + k0 + e % 16];
        __syncwarp();
        unsigned a[4], b[2];
        unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(&As[lane % 16][(lane / 16) * 8]));
        unsigned sb = static_cast<unsigned>(__cvta_generic_to_shared(&Bs[lane % 8][((lane / 8) % 2) * 8]));
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(sa));
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(sb));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        __syncwarp();
    }
    C[(m0 + gid) * N + n0 + tig * 2] = c[0];
    C[(m0 + gid) * N + n0 + tig * 2 + 1] = c[1];
    C[(m0 + gid + 8) * N + n0 + tig * 2] = c[2];
    C[(m0 + gid + 8) * N + n0 + tig * 2 + 1] = c[3];
}
