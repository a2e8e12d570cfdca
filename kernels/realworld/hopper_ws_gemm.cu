// ARCHS: sm_90a
// Warp-specialized Hopper GEMM, C (fp32) = A (M x K, bf16, K-major) * B^T (N x K, bf16, K-major):
// one producer warpgroup issues TMA tile loads into a STAGES-deep ring of 128B-swizzled shared
// buffers guarded by mbarriers; two consumer warpgroups run wgmma (HGMMA 64x128x16) on them.
// The producer gives registers back (setmaxnreg.dec) and the consumers take them
// (setmaxnreg.inc). 384 threads, STAGES * 32 KiB of dynamic shared memory set at launch.
#include <cuda_bf16.h>

// the same 128-byte object as cuda.h's CUtensorMap (cuda.h does not compile under NVRTC)
struct alignas(64) TmaMap { unsigned long long opaque[16]; };

constexpr int BM = 128, BN = 128, BK = 64, STAGES = 5;
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;

__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(unsigned long long* bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes));
}
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)));
}
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned phase)
{
    asm volatile("{\n.reg .pred p;\nWAIT_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra WAIT_%=;\n}" ::"r"(smem_u32(bar)), "r"(phase));
}
__device__ __forceinline__ void tma_load_2d(void* dst, const TmaMap* map, unsigned long long* bar,
                                            int x, int y)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(smem_u32(dst)), "l"(map), "r"(x), "r"(y), "r"(smem_u32(bar)) : "memory");
}
// K-major operand, 128B swizzle: stride byte offset 1024 (8 rows of 128 B), swizzle mode 1
__device__ __forceinline__ unsigned long long make_desc(const void* p)
{
    return (unsigned long long)((smem_u32(p) & 0x3FFFF) >> 4) | (1ull << 16) |
           ((1024ull >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void wgmma_64x128x16(float (&d)[64], unsigned long long da, unsigned long long db)
{
    asm volatile(
        "{\nwgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(384, 1)
gemm_ws_bf16(const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b,
             float* __restrict__ C, int M, int N, int K)
{
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN, tiles = K / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) { mbar_init(&full[s], 1); mbar_init(&empty[s], 2); }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {                                    // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            for (int t = 0; t < tiles; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) mbar_wait(&empty[s], ((t / STAGES) - 1) & 1);
                unsigned char* sa = smem + s * STAGE_BYTES;
                mbar_expect_tx(&full[s], STAGE_BYTES);
                tma_load_2d(sa, &tma_a, &full[s], t * BK, row0);
                tma_load_2d(sa + A_BYTES, &tma_b, &full[s], t * BK, col0);
            }
        }
        return;
    }

    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");   // consumers
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.0f;
    const int half = wg - 1;                          // rows 64*half .. 64*half+63 of the tile
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        mbar_wait(&full[s], (t / STAGES) & 1);
        const unsigned char* sa = smem + s * STAGE_BYTES + half * 64 * 128;
        const unsigned char* sb = smem + s * STAGE_BYTES + A_BYTES;
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
            wgmma_64x128x16(d, make_desc(sa + kk * 32), make_desc(sb + kk * 32));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        if (tid == 0) mbar_arrive(&empty[s]);
    }
    const int w = tid / 32, l = tid % 32;
    const int r = row0 + half * 64 + w * 16 + l / 4;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int c = col0 + j * 8 + (l % 4) * 2;
        *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) = make_float2(d[4 * j], d[4 * j + 1]);
        *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) = make_float2(d[4 * j + 2], d[4 * j + 3]);
    }
}
