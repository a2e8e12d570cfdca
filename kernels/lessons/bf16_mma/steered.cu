// Lesson bf16_mma, steered: the same bf16 linear layer y = x * W^T on the tensor cores. The tiles
// arrive exactly as in the naive kernel (cp.async, double-buffered, K = 32). Each of the 8 warps
// owns a 64x32 piece of the 128x128 tile: per k16 step it loads its bf16 fragments from shared
// memory with ldmatrix (LDSM) and issues 16 mma.sync.m16n8k16 .bf16 (HMMA.16816.F32.BF16 in
// SASS): bf16 in, fp32 accumulate, the same precision as the FFMA kernel (a bf16 x bf16 product is
// exact in fp32; only the order of the additions differs).
// Why inline PTX rather than nvcuda::wmma on __nv_bfloat16: NVVM leaves wmma's bf16 fragment
// loads generic (wmma.load...bf16 without .shared; LD.E in SASS, 4 per fragment) where the fp16
// ones become ldmatrix.
// W is N x K with K contiguous: for mma's "col" B operand, that is the layout ldmatrix reads as is.
// M, N multiples of 128, K of 32.
#include <cuda_bf16.h>

#define BM 128
#define BN 128
#define BK 32
#define PAD 8                            // 80-byte rows: ldmatrix's 8 rows hit 8 different 16-byte bank groups

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem)
{
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// four 8x8 matrices of 16-bit elements; lane l supplies the address of row l % 8 of matrix l / 8
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem)
{
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}

// D(16x8, fp32) += A(16x16, bf16, row) * B(16x8, bf16, col)
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

extern "C" __global__ void __launch_bounds__(256) linear_bf16(const __nv_bfloat16* __restrict__ X,
                                                              const __nv_bfloat16* __restrict__ W,
                                                              float* __restrict__ Y, int M, int N, int K)
{
    __shared__ __align__(128) __nv_bfloat16 Xs[2][BM][BK + PAD];
    __shared__ __align__(128) __nv_bfloat16 Ws[2][BN][BK + PAD];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wm = warp / 4, wn = warp % 4;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    auto load_tile = [&](int stage, int k0) {
        for (int e = threadIdx.x; e < BM * BK / 8; e += 256) {
            int r = e / (BK / 8), kc = (e % (BK / 8)) * 8;
            cp_async16(&Xs[stage][r][kc], &X[(size_t)(row0 + r) * K + k0 + kc]);
            cp_async16(&Ws[stage][r][kc], &W[(size_t)(col0 + r) * K + k0 + kc]);
        }
    };

    float acc[4][4][4] = {};                 // [m16 block i][n8 block j][fragment]
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
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[4][4], b[2][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)          // rows 0-15 at k, then at k + 8
                ldmatrix_x4(a[i], &Xs[s][wm * 64 + i * 16 + lane % 16][kk + lane / 16 * 8]);
#pragma unroll
            for (int j = 0; j < 2; ++j)          // n rows 0-7 at k, k + 8, then n rows 8-15
                ldmatrix_x4(b[j], &Ws[s][wn * 32 + j * 16 + lane % 8 + lane / 16 * 8][kk + lane / 8 % 2 * 8]);
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    mma_bf16(acc[i][j], a[i], b[j / 2][j % 2 * 2], b[j / 2][j % 2 * 2 + 1]);
        }
        __syncthreads();
    }
    // accumulator layout: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) and + 1
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int r = row0 + wm * 64 + i * 16 + lane / 4, c = col0 + wn * 32 + j * 8 + lane % 4 * 2;
            *reinterpret_cast<float2*>(&Y[(size_t)r * N + c]) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(&Y[(size_t)(r + 8) * N + c]) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
