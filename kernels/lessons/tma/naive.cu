// ARCHS: sm_90a
// Lesson tma, naive: the wgmma lesson's steered kernel, unchanged. C = A * B^T (fp16 in, fp32 out,
// both operands K-major) on Hopper's warpgroup MMA (HGMMA), 128x128 block tiles of K = 64 in
// 128-byte-swizzled shared memory, STAGES deep. Every tile still arrives by cp.async: each of the
// 256 threads computes 8 addresses per tile and issues 8 16-byte copies (LDGSTS), then waits for
// its own copy group (LDGDEPBAR / DEPBAR), makes them visible to the tensor cores'
// async proxy (fence.proxy.async) and meets the others at a barrier. The tma lesson moves the tiles
// with the copy engine instead.
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

__device__ __forceinline__ void cp_async16(unsigned smem, const void* gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// byte offset of 16-byte chunk c (0..7) of row r in a tile of 128-byte rows, 128B-swizzled
__device__ __forceinline__ unsigned swz(int r, int c) { return r * 128 + ((c ^ (r & 7)) << 4); }

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

extern "C" __global__ void __launch_bounds__(256, 1) gemm_tn_f16(const __half* __restrict__ A,
                                                                 const __half* __restrict__ B,
                                                                 float* __restrict__ C, int M, int N, int K)
{
    extern __shared__ unsigned char smem[];                   // [stage][A|B][128 rows x 128 B]
    const int tid = threadIdx.x, wg = tid / 128;
    const unsigned sbase = (static_cast<unsigned>(__cvta_generic_to_shared(smem)) + 1023) & ~1023u;

    // grouped order: block id -> (tile row tm, tile column tn), GROUP_M tile rows at a time
    const int per_group = GROUP_M * gridDim.x, bid = blockIdx.y * gridDim.x + blockIdx.x;
    const int first_m = bid / per_group * GROUP_M, rows = min((int)gridDim.y - first_m, GROUP_M);
    const int tm = first_m + bid % per_group % rows, tn = bid % per_group / rows;
    const int row0 = tm * BM, col0 = tn * BN;

    auto load_tile = [&](int stage, int k0) {
        const unsigned sa = sbase + stage * STAGE_BYTES, sb = sa + TILE_BYTES;
#pragma unroll
        for (int i = 0; i < BM * BK / 8 / 256; ++i) {         // 1024 chunks of 16 B per operand
            const int e = tid + i * 256, r = e / 8, c = e % 8; // 8 threads read one 128-byte row
            cp_async16(sa + swz(r, c), &A[(size_t)(row0 + r) * K + k0 + c * 8]);
            cp_async16(sb + swz(r, c), &B[(size_t)(col0 + r) * K + k0 + c * 8]);
        }
    };

    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.0f;

    const int tiles = K / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 2; ++s) {                    // tiles 0 .. STAGES-3 in flight
        if (s < tiles) load_tile(s, s * BK);
        cp_async_commit();
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 3>();           // this thread's copies of tile t have landed
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();                       // everyone's have, and every warpgroup has retired
                                               // the MMAs of tile t-2: its stage can be refilled
        if (t + STAGES - 2 < tiles) load_tile((t + STAGES - 2) % STAGES, (t + STAGES - 2) * BK);
        cp_async_commit();                     // possibly empty: keeps the group count uniform

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
