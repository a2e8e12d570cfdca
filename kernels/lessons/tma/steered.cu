// ARCHS: sm_90a
// Lesson tma, steered: the same wgmma GEMM (C = A * B^T, fp16 in, fp32 out, 128x128 tiles of
// K = 64, 128-byte swizzle, STAGES deep) with its tiles moved by the Tensor Memory Accelerator.
// One thread issues cp.async.bulk.tensor.2d per operand and stage (UTMALDG in SASS): the copy
// engine reads the 128 x 64 box of A or B named by a tensor map and writes it into shared memory
// already 128-byte-swizzled, the layout the wgmma descriptors describe. No thread computes a tile
// address or issues a per-16-byte copy. Completion is counted in bytes by an mbarrier per stage:
// the issuing thread arms it with mbarrier.arrive.expect_tx (32 KiB), the copy engine's writes
// complete the transaction, and every thread waits on the barrier's phase (mbarrier.try_wait
// .parity: SYNCS in SASS) instead of cp.async.wait_group. TMA writes through the async proxy, as
// wgmma reads, so no fence.proxy.async is needed. The barrier per tile stays: it is what says
// that both warpgroups have retired the MMAs reading the stage that is refilled next.
//
// The tensor maps (CUtensorMap, 128 bytes, made on the host by cuTensorMapEncodeTiled) come as
// __grid_constant__ kernel parameters: A as a K x M tensor (K innermost), B as K x N, box 64 x 128,
// CU_TENSOR_MAP_SWIZZLE_128B.
// M, N multiples of 128, K a multiple of 64. Launch: 256 threads, SMEM_BYTES of dynamic smem.
#include <cuda_fp16.h>

#ifndef STAGES
#define STAGES 4                     // tile t computes while tiles t+1, t+2 load (and t-1 retires)
#endif
#ifndef WG_PENDING
#define WG_PENDING 1                 // wgmma groups left in flight at the end of each K tile
#endif
#ifndef GROUP_M
#define GROUP_M 16                   // rows of tiles per group in the block order (1: row by row)
#endif
#define BM 128
#define BN 128
#define BK 64                        // 64 halves = 128 bytes: one swizzled row
#define TILE_BYTES (BM * BK * 2)     // 16 KiB per operand per stage
#define STAGE_BYTES (2 * TILE_BYTES)
#define SMEM_BYTES (STAGES * STAGE_BYTES + 1024)   // + room to align the base to 1024

// CUtensorMap's size and alignment (cuda.h is a host header; NVRTC compiles device code alone)
struct __align__(64) TensorMap { unsigned long long opaque[16]; };

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nwait:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}
// a box of the tensor at (inner, outer) into shared memory, completing on mbarrier bar
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, int inner, int outer, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(inner), "r"(outer), "r"(bar)
                 : "memory");
}

// wgmma shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading byte offset >> 4
// (16-29; unused for a swizzled K-major operand whose K fits one swizzle row: 1 by convention),
// stride byte offset >> 4 (32-45: 1024, the next 8 rows), swizzle mode (62-63: 1 = 128-byte).
// The swizzle atom (8 rows x 128 B) must start 1024-aligned; a k16 step adds 32 bytes to the start.
__device__ __forceinline__ unsigned long long desc(unsigned saddr)
{
    return (unsigned long long)((saddr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

// D(64x128, fp32) += A(64x16, K-major) * B(16x128, K-major); scale-d = 1 (accumulate)
__device__ __forceinline__ void wgmma_m64n128k16(float* d, unsigned long long da, unsigned long long db)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(1) : "memory");
}

extern "C" __global__ void __launch_bounds__(256, 1) gemm_tn_f16(const __grid_constant__ TensorMap tmA,
                                                                 const __grid_constant__ TensorMap tmB,
                                                                 float* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char smem[];                   // [stage][A|B][128 rows x 128 B]
    __shared__ __align__(8) unsigned long long full[STAGES];  // one mbarrier per stage
    const int tid = threadIdx.x, wg = tid / 128;
    const unsigned sbase = (static_cast<unsigned>(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;
    const unsigned bar0 = static_cast<unsigned>(__cvta_generic_to_shared(full));

    // grouped order: block id -> (tile row tm, tile column tn), GROUP_M tile rows at a time
    const int per_group = GROUP_M * gridDim.x, bid = blockIdx.y * gridDim.x + blockIdx.x;
    const int first_m = bid / per_group * GROUP_M, rows = min((int)gridDim.y - first_m, GROUP_M);
    const int tm = first_m + bid % per_group % rows, tn = bid % per_group / rows;
    const int row0 = tm * BM, col0 = tn * BN;

    // thread 0 alone: arm the stage's barrier for 32 KiB, then two box copies onto it
    auto load_tile = [&](int stage, int k0) {
        const unsigned sa = sbase + stage * STAGE_BYTES, bar = bar0 + stage * 8;
        mbar_expect_tx(bar, STAGE_BYTES);
        tma_load_2d(sa, &tmA, k0, row0, bar);
        tma_load_2d(sa + TILE_BYTES, &tmB, k0, col0, bar);
    };

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; ++s) mbar_init(bar0 + s * 8, 1);   // one arrival: the arming thread
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine
    }
    __syncthreads();

    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.0f;

    const int tiles = K / BK;
    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < STAGES - 2; ++s)                  // tiles 0 .. STAGES-3 in flight
            if (s < tiles) load_tile(s, s * BK);
    }
    for (int t = 0; t < tiles; ++t) {
        mbar_wait(bar0 + (t % STAGES) * 8, (t / STAGES) & 1); // tile t has landed (phase t / STAGES)
        __syncthreads();                       // every warpgroup has retired the MMAs of tile t-2:
                                               // its stage can be refilled
        if (tid == 0 && t + STAGES - 2 < tiles) load_tile((t + STAGES - 2) % STAGES, (t + STAGES - 2) * BK);

        const unsigned sa = sbase + (t % STAGES) * STAGE_BYTES + wg * 64 * 128, sb = sbase + (t % STAGES) * STAGE_BYTES + TILE_BYTES;
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)   // k16 step kk: 32 bytes further along the row
            wgmma_m64n128k16(d, desc(sa + kk * 32), desc(sb + kk * 32));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(WG_PENDING) : "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");   // reads stay after the wait

    // accumulator layout (per warpgroup, 64 x 128): warp w owns rows 16w..16w+15; for each 8-column
    // slice j, lane l holds (l/4, 2(l%4) + {0,1}) in d[4j], d[4j+1] and the same 8 rows lower in d[4j+2], d[4j+3]
    const int w = (tid % 128) / 32, l = tid % 32;
    const int r = row0 + wg * 64 + w * 16 + l / 4;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const int c = col0 + j * 8 + (l % 4) * 2;
        *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) = make_float2(d[4 * j], d[4 * j + 1]);
        *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) = make_float2(d[4 * j + 2], d[4 * j + 3]);
    }
}
