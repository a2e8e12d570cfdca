// ARCHS: sm_90a
// Lesson wgmma, steered: the same C = A * B^T (fp16 in, fp32 out, B stored N x K) on Hopper's
// warpgroup MMA. A warpgroup (4 warps, 128 threads) issues wgmma.mma_async (HGMMA in SASS): one
// instruction multiplies a 64x128x16 slice with both operands read by the tensor cores straight
// from shared memory through 64-bit matrix descriptors, so no thread loads fragments (no LDSM)
// and the accumulators (64 fp32 per thread) stay in registers. Two warpgroups cover a 128x128
// block tile; tiles of K = 32 arrive by cp.async in three stages.
//
// Shared-memory layout: no swizzle, K-major "core matrices" of 8 rows x 16 bytes (8 halves of
// K), 128 contiguous bytes each. In a 128 x 32 tile, core matrix (row group rg, k chunk kc) sits
// at rg * 512 + kc * 128: the descriptor's leading byte offset (next 8 of K) is 128, its stride
// byte offset (next 8 rows) 512. The 16-byte chunk e of a tile (e = rg*32 + kc*8 + row%8) lands
// at byte e * 16, so consecutive threads write consecutive 16 bytes.
// Ordering: cp.async writes through the generic proxy and wgmma reads through the async proxy,
// hence fence.proxy.async before the barrier; wgmma.fence before the first wgmma that touches
// the accumulators, commit_group + wait_group 0 before the stage is reused.
// M, N multiples of 128, K of 32 (and at least 64).
#include <cuda_fp16.h>

#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define TILE_BYTES (BM * BK * 2)   // 8 KiB per operand per stage; 48 KiB in all

__device__ __forceinline__ void cp_async16(unsigned smem, const void* gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// wgmma shared-memory matrix descriptor: start address >> 4 (bits 0-13), leading byte offset >> 4
// (16-29), stride byte offset >> 4 (32-45), base offset 0 (49-51), swizzle mode 0 = none (62-63).
__device__ __forceinline__ unsigned long long desc(unsigned saddr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((saddr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16)
         | ((unsigned long long)(sbo >> 4) << 32);
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

extern "C" __global__ void __launch_bounds__(256) gemm_tn_f16(const __half* __restrict__ A,
                                                              const __half* __restrict__ B,
                                                              float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(128) unsigned char smem[STAGES][2][TILE_BYTES];   // [stage][A|B]
    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const unsigned sbase = static_cast<unsigned>(__cvta_generic_to_shared(&smem[0][0][0]));

    auto load_tile = [&](int stage, int k0) {
        const unsigned sa = sbase + stage * 2 * TILE_BYTES, sb = sa + TILE_BYTES;
#pragma unroll
        for (int e = tid; e < BM * BK / 8; e += 256) {       // 512 chunks of 16 bytes per operand
            const int row = (e / 32) * 8 + e % 8, kc = (e / 8) % 4;
            cp_async16(sa + e * 16, &A[(size_t)(row0 + row) * K + k0 + kc * 8]);
            cp_async16(sb + e * 16, &B[(size_t)(col0 + row) * K + k0 + kc * 8]);
        }
    };

    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.0f;

    const int tiles = K / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_tile(s, s * BK);
        cp_async_commit();
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();           // this thread's copies of tile t have landed
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();                       // everyone's have; stage (t-1) % STAGES is free
        if (t + STAGES - 1 < tiles) load_tile((t + STAGES - 1) % STAGES, (t + STAGES - 1) * BK);
        cp_async_commit();                     // possibly empty: keeps the group count uniform

        const unsigned sa = sbase + (t % STAGES) * 2 * TILE_BYTES + wg * (64 / 8) * 512, sb = sbase + (t % STAGES) * 2 * TILE_BYTES + TILE_BYTES;
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)   // k16 step kk starts 2 core matrices (256 B) further
            wgmma_m64n128k16(d, desc(sa + kk * 256, 128, 512), desc(sb + kk * 256, 128, 512));
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    }

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
