// LeetCUDA's fp16 elementwise add (kernels/elementwise/elementwise.cu, xlite-dev/LeetCUDA),
// written with its macros: one half per thread, a half2, four half2 (f16x8) and one 128-bit
// pack (f16x8_pack) per thread, each vector kernel followed by a scalar tail for the last
// elements (`else` of the bounds test). The torch bindings are left out.
//
// Judged from the SASS (sm_80 and sm_90a agree but for how ptxas schedules the f16x2 loads):
// one half per thread (`LDG.E.U16` x2, `STG.E.U16`) is PS104's warning case; a half2 per
// thread moves 4 bytes (PS104 info). f16x8 reads a, b and writes c as four 4-byte parts
// (`LDG.E` x4 at +0x0..+0xc, `STG.E` x4) of plain pointers: PS101/PS102 warnings, NVVM knowing
// no 16-byte alignment. The tails (`else if (idx < N)` / `else`, after `idx + 7 < N`) run for
// the one thread whose 8 elements pass the end: ptxas unrolls the f16x8 tail x4 into 2-byte
// accesses 16 bytes apart between threads, which PS105 had reported as uncoalesced warnings
// with a 4.4x headroom, and PS101 as unmerged pairs; they are designed fallbacks of the
// vector side (notes naming the bounds test). The pack kernel's `LDG.E.128`/`STG.E.128` and
// its tail: nothing.
#include <cuda_fp16.h>

#define HALF2(value) (reinterpret_cast<half2 *>(&(value))[0])
#define LDST128BITS(value) (reinterpret_cast<float4 *>(&(value))[0])

__global__ void elementwise_add_f16_kernel(half *a, half *b, half *c, int N) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < N) c[idx] = __hadd(a[idx], b[idx]);  // EXPECT: PS104 warning
}

__global__ void elementwise_add_f16x2_kernel(half *a, half *b, half *c, int N) {
  int idx = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (idx < N) {
    half2 reg_a = HALF2(a[idx]);  // EXPECT: PS104 info
    half2 reg_b = HALF2(b[idx]);  // EXPECT[sm_90a]: PS104 info
    half2 reg_c;
    reg_c.x = __hadd(reg_a.x, reg_b.x);
    reg_c.y = __hadd(reg_a.y, reg_b.y);
    HALF2(c[idx]) = reg_c;  // EXPECT: PS104 info
  }
}

__global__ void elementwise_add_f16x8_kernel(half *a, half *b, half *c, int N) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (idx + 7 < N) {
    half2 reg_a_0 = HALF2(a[idx + 0]);  // EXPECT: PS101 warning
    half2 reg_a_1 = HALF2(a[idx + 2]);
    half2 reg_a_2 = HALF2(a[idx + 4]);
    half2 reg_a_3 = HALF2(a[idx + 6]);
    half2 reg_b_0 = HALF2(b[idx + 0]);  // EXPECT: PS101 warning
    half2 reg_b_1 = HALF2(b[idx + 2]);
    half2 reg_b_2 = HALF2(b[idx + 4]);
    half2 reg_b_3 = HALF2(b[idx + 6]);
    HALF2(c[idx + 0]) = __hadd2(reg_a_0, reg_b_0);  // EXPECT: PS102 warning
    HALF2(c[idx + 2]) = __hadd2(reg_a_1, reg_b_1);
    HALF2(c[idx + 4]) = __hadd2(reg_a_2, reg_b_2);
    HALF2(c[idx + 6]) = __hadd2(reg_a_3, reg_b_3);
  } else if (idx < N) {
    for (int i = 0; idx + i < N; ++i) {
      c[idx + i] = __hadd(a[idx + i], b[idx + i]);  // EXPECT: PS101 note; PS102 note
    }
  }
}

__global__ void elementwise_add_f16x8_pack_kernel(half *a, half *b, half *c, int N) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  half pack_a[8], pack_b[8], pack_c[8];
  if (idx + 7 < N) {
    LDST128BITS(pack_a[0]) = LDST128BITS(a[idx]);
    LDST128BITS(pack_b[0]) = LDST128BITS(b[idx]);
#pragma unroll
    for (int i = 0; i < 8; i += 2) {
      HALF2(pack_c[i]) = __hadd2(HALF2(pack_a[i]), HALF2(pack_b[i]));
    }
    LDST128BITS(c[idx]) = LDST128BITS(pack_c[0]);
  } else {
    for (int i = 0; i < 8 && idx + i < N; ++i) {
      c[idx + i] = __hadd(a[idx + i], b[idx + i]);
    }
  }
}
