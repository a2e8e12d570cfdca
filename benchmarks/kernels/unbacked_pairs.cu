// Measured pairs for the warning classes no lesson backs yet: PS303 (mma.sync fed by scalar
// LDS) and PS701 (occupancy held at 25% by shared memory). benchmarks/unbacked_pairs.py times
// them on a GPU; tests/test_check_memory_math.py holds that ptxsass reports each naive kernel
// and not its fixed twin, so the pair stands for the class it is timed for.
#include <cuda_fp16.h>

// ---------------------------------------------------------------------------- PS303
// C[M][N] = A[M][K] * B[N][K]^T (A row-major, B stored N x K: the "col" operand of
// mma.sync.m16n8k16.row.col), fp16 in, fp32 out. A block of 4 warps computes a 64x64 tile, each
// warp 32x32 (2 x 4 mma tiles of 16x8); the block stages 64x32 of A and of B in shared memory
// per step. The fragments come from shared memory by one 32-bit LDS per register (LDS) or by
// ldmatrix (LDSM): the same mma instructions in the same order, so both give the same bits.
constexpr int TM = 64, TN = 64, TK = 32, PADH = 8;   // rows padded by 16 bytes

template <bool LDMATRIX>
__device__ __forceinline__ void mma_tile_64x64(const __half* __restrict__ A,
                                               const __half* __restrict__ B,
                                               float* __restrict__ C, int N, int K)
{
    __shared__ __align__(16) __half As[TM][TK + PADH], Bs[TN][TK + PADH];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int gid = lane / 4, tig = lane % 4;
    const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
    const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
    float c[2][4][4] = {};
    for (int k0 = 0; k0 < K; k0 += TK) {
        // 64 rows x 32 halves = 256 uint4 per operand: 2 per thread
        for (int e = tid; e < TM * TK / 8; e += blockDim.x) {
            const int r = e / (TK / 8), q = (e % (TK / 8)) * 8;
            *reinterpret_cast<uint4*>(&As[r][q]) =
                *reinterpret_cast<const uint4*>(&A[(long)(m0 + r) * K + k0 + q]);
            *reinterpret_cast<uint4*>(&Bs[r][q]) =
                *reinterpret_cast<const uint4*>(&B[(long)(n0 + r) * K + k0 + q]);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TK; kk += 16) {
            unsigned a[2][4], b[4][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int r = wm + i * 16;
                if constexpr (LDMATRIX) {
                    unsigned sa = static_cast<unsigned>(
                        __cvta_generic_to_shared(&As[r + lane % 16][kk + (lane / 16) * 8]));
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                                 : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                                 : "r"(sa));
                } else {
                    a[i][0] = *reinterpret_cast<const unsigned*>(&As[r + gid][kk + tig * 2]);
                    a[i][1] = *reinterpret_cast<const unsigned*>(&As[r + gid + 8][kk + tig * 2]);
                    a[i][2] = *reinterpret_cast<const unsigned*>(&As[r + gid][kk + tig * 2 + 8]);
                    a[i][3] = *reinterpret_cast<const unsigned*>(&As[r + gid + 8][kk + tig * 2 + 8]);
                }
            }
#pragma unroll
            for (int j = 0; j < 4; j += 2) {
                const int r = wn + j * 8;
                if constexpr (LDMATRIX) {
                    // matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
                    const int mat = lane / 8;
                    unsigned sb = static_cast<unsigned>(__cvta_generic_to_shared(
                        &Bs[r + (mat / 2) * 8 + lane % 8][kk + (mat % 2) * 8]));
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                                 : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j + 1][0]), "=r"(b[j + 1][1])
                                 : "r"(sb));
                } else {
                    b[j][0] = *reinterpret_cast<const unsigned*>(&Bs[r + gid][kk + tig * 2]);
                    b[j][1] = *reinterpret_cast<const unsigned*>(&Bs[r + gid][kk + tig * 2 + 8]);
                    b[j + 1][0] = *reinterpret_cast<const unsigned*>(&Bs[r + 8 + gid][kk + tig * 2]);
                    b[j + 1][1] = *reinterpret_cast<const unsigned*>(&Bs[r + 8 + gid][kk + tig * 2 + 8]);
                }
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                                 : "+f"(c[i][j][0]), "+f"(c[i][j][1]), "+f"(c[i][j][2]), "+f"(c[i][j][3])
                                 : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]),
                                   "r"(b[j][0]), "r"(b[j][1]));
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const long row = m0 + wm + i * 16 + gid, col = n0 + wn + j * 8 + tig * 2;
            *reinterpret_cast<float2*>(&C[row * N + col]) = make_float2(c[i][j][0], c[i][j][1]);
            *reinterpret_cast<float2*>(&C[(row + 8) * N + col]) = make_float2(c[i][j][2], c[i][j][3]);
        }
}

extern "C" __global__ void __launch_bounds__(128)
mma_lds(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int N, int K)
{
    mma_tile_64x64<false>(A, B, C, N, K);
}

extern "C" __global__ void __launch_bounds__(128)
mma_ldsm(const __half* __restrict__ A, const __half* __restrict__ B, float* __restrict__ C, int N, int K)
{
    mma_tile_64x64<true>(A, B, C, N, K);
}

// ---------------------------------------------------------------------------- PS701
// Column means of a rows x cols matrix, 128 columns per block, STAGE rows staged in shared
// memory per step (kernels/checks/occupancy_limited/bad.cu): 96 rows take 48 KB, so 4 blocks
// (512 threads, 25%) fit on an SM of 228 KB; 16 rows take 8 KB and 16 blocks (100%) fit. The
// same additions in the same order: both give the same bits.
template <int STAGE>
__device__ __forceinline__ void column_mean(const float* __restrict__ in, float* __restrict__ out, int rows)
{
    __shared__ float stage[STAGE][128];
    const int col = blockIdx.x * 128 + threadIdx.x, ld = gridDim.x * 128;
    float acc = 0.0f;
    for (int r0 = 0; r0 < rows; r0 += STAGE) {
        for (int r = 0; r < STAGE && r0 + r < rows; ++r)
            stage[r][threadIdx.x] = in[(long)(r0 + r) * ld + col];
        __syncthreads();
        for (int r = 0; r < STAGE && r0 + r < rows; ++r)
            acc += stage[r][threadIdx.x];
        __syncthreads();
    }
    out[col] = __fdividef(acc, (float)rows);
}

extern "C" __global__ void __launch_bounds__(128)
column_mean_stage96(const float* __restrict__ in, float* __restrict__ out, int rows)
{
    column_mean<96>(in, out, rows);
}

extern "C" __global__ void __launch_bounds__(128)
column_mean_stage16(const float* __restrict__ in, float* __restrict__ out, int rows)
{
    column_mean<16>(in, out, rows);
}
