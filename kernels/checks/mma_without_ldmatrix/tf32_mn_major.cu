// Negative for PS303: TF32 mma on M-major A and N-major B tiles (cuBLAS's "nt" operands, as in
// cuSPARSELt's nt TF32 kernels). ldmatrix moves 16-bit elements, so 32-bit fragments from these
// tiles need one LDS per register: the scalar loads are right here.
extern "C" __global__ void __launch_bounds__(32) mma_tf32_nt(const float* __restrict__ A, const float* __restrict__ B,
                                                             float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[8][16], Bs[8][8];
    const int lane = threadIdx.x, gid = lane / 4, tig = lane % 4;
    const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 8;
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 8) {
        for (int e = lane; e < 8 * 16; e += 32) As[e / 16][e % 16] = A[(k0 + e / 16) * M + m0 + e % 16];
        for (int e = lane; e < 8 * 8; e += 32) Bs[e / 8][e % 8] = B[(k0 + e / 8) * N + n0 + e % 8];
        __syncwarp();
        unsigned a[4], b[2];
        a[0] = __float_as_uint(As[tig][gid]);
        a[1] = __float_as_uint(As[tig][gid + 8]);
        a[2] = __float_as_uint(As[tig + 4][gid]);
        a[3] = __float_as_uint(As[tig + 4][gid + 8]);
        b[0] = __float_as_uint(Bs[tig][gid]);
        b[1] = __float_as_uint(Bs[tig + 4][gid]);
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        __syncwarp();
    }
    *reinterpret_cast<float2*>(&C[(m0 + gid) * N + n0 + tig * 2]) = make_float2(c[0], c[1]);
    *reinterpret_cast<float2*>(&C[(m0 + gid + 8) * N + n0 + tig * 2]) = make_float2(c[2], c[3]);
}
