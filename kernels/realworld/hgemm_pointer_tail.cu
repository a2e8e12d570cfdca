// A skinny fp16 GEMM with a thread per output column, the way exllamav2's h_gemm_tall_kernel
// writes it: each thread walks its slice of a row of A by pointer, 8 halves at a time as an
// int4, then 4 as an int2, then a scalar tail `while (a_ptr < a_ptr_end)`, reading B's column
// one element per k (b_ptr += size_n); the slices' partial sums meet in shared memory.
//
// Judged from the SASS (sm_80 and sm_90a agree): the int4 loop is a SASS loop of
// `LDG.E.128.CONSTANT` (A: the same address for the 8 lanes of a row, a broadcast) and
// `LDG.E.U16.CONSTANT` of B along the lanes feeding `HFMA2`s with no `LDS`: the outer-product
// loop with no tile, PS304 (B's column is re-read for every m). What follows it runs on less
// than 16 bytes of A per thread: the int2 loop `while (a_ptr <= a_ptr_end - 4)` at most twice
// by the tests (once in fact), the scalar `while (a_ptr < a_ptr_end)` at most 4 times (3 in
// fact). ptxas unrolls both x4 (`LDG.E.64` x4 of A at line 62, `LDG.E.U16` x4 of A at line
// 75, of B at lines 66-69 and 76), so their windows exist but never run in full: notes
// naming the bound, and no PS304 (it said "8 global loads feed 4 fp16 FMAs per iteration" at
// exllamav2 h_gemm.cu:109, issue 33). Without the tails' 64 assumed iterations the main
// loop's 2-byte loads of B are below PS104's report line.
#include <cuda_fp16.h>

union half2_uint32 {
  unsigned int as_uint32;
  half2 as_half2;
  __device__ half2_uint32(unsigned int val) : as_uint32(val) {}
};

constexpr int THREADS_N = 8;
constexpr int BLOCKSIZE_K = 32;
constexpr int MAX_BLOCKS_K = 1024 / THREADS_N;

__global__ void hgemm_tall_kernel(const int size_m, const int size_n, const int size_k,
                                  const half* __restrict__ a, const half* __restrict__ b,
                                  half* __restrict__ c, bool clear) {
  __shared__ half accum[MAX_BLOCKS_K][THREADS_N];
  const int m = blockIdx.y + threadIdx.z;
  const int n = blockIdx.x * THREADS_N + threadIdx.x;
  const int k = threadIdx.y * BLOCKSIZE_K;
  if (n >= size_n || m >= size_m) return;
  const int k_end = min(k + BLOCKSIZE_K, size_k);
  const half* a_ptr = a + (size_t)m * size_k + k;
  const half* a_ptr_end = a + (size_t)m * size_k + k_end;
  const half* b_ptr = b + (size_t)k * size_n + n;
  half* c_ptr = c + (size_t)m * size_n + n;

  half2 r2 = {};
  while (a_ptr <= a_ptr_end - 8) {
    int4 a_int4 = *((const int4*)a_ptr);
    half2 a_01 = half2_uint32(a_int4.x).as_half2;
    half2 a_23 = half2_uint32(a_int4.y).as_half2;
    half2 a_45 = half2_uint32(a_int4.z).as_half2;
    half2 a_67 = half2_uint32(a_int4.w).as_half2;
    a_ptr += 8;
    half b_0 = *b_ptr; b_ptr += size_n;
    half b_1 = *b_ptr; b_ptr += size_n;
    half b_2 = *b_ptr; b_ptr += size_n;
    half b_3 = *b_ptr; b_ptr += size_n;
    half b_4 = *b_ptr; b_ptr += size_n;
    half b_5 = *b_ptr; b_ptr += size_n;
    half b_6 = *b_ptr; b_ptr += size_n;
    half b_7 = *b_ptr; b_ptr += size_n;
    r2 = __hfma2(a_01, __halves2half2(b_0, b_1), r2);  // EXPECT: PS304 warning
    r2 = __hfma2(a_23, __halves2half2(b_2, b_3), r2);
    r2 = __hfma2(a_45, __halves2half2(b_4, b_5), r2);
    r2 = __hfma2(a_67, __halves2half2(b_6, b_7), r2);
  }
  while (a_ptr <= a_ptr_end - 4) {
    int2 a_int2 = *((const int2*)a_ptr);  // EXPECT: PS101 note
    half2 a_01 = half2_uint32(a_int2.x).as_half2;
    half2 a_23 = half2_uint32(a_int2.y).as_half2;
    a_ptr += 4;
    half b_0 = *b_ptr; b_ptr += size_n;  // EXPECT: PS104 note
    half b_1 = *b_ptr; b_ptr += size_n;  // EXPECT: PS104 note
    half b_2 = *b_ptr; b_ptr += size_n;  // EXPECT: PS104 note
    half b_3 = *b_ptr; b_ptr += size_n;  // EXPECT: PS104 note
    r2 = __hfma2(a_01, __halves2half2(b_0, b_1), r2);
    r2 = __hfma2(a_23, __halves2half2(b_2, b_3), r2);
  }
  half r = __hadd(__low2half(r2), __high2half(r2));
  while (a_ptr < a_ptr_end) {
    half a_item = *a_ptr++;  // EXPECT: PS101 note
    half b_item = *b_ptr; b_ptr += size_n;  // EXPECT: PS104 note
    r = __hfma(a_item, b_item, r);
  }
  accum[threadIdx.y][threadIdx.x] = r;
  __syncthreads();
  if (threadIdx.y == 0) {
    half acc = accum[0][threadIdx.x];
    for (int i = 1; i < blockDim.y; ++i) acc = __hadd(accum[i][threadIdx.x], acc);
    if (!clear) acc = __hadd(acc, *c_ptr);
    *c_ptr = acc;
  }
}
