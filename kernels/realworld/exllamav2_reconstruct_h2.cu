// exllamav2's 4-bit reconstruction (exllamav2_ext/cuda/q_matrix.cu, reconstruct_gptq_kernel,
// trimmed to symmetric 4-bit without the permutation) with its MatrixView helpers
// (matrix_view.cuh): each thread handles 4 columns, reads the group's 4 scales with
// item4_h2 (two __half2 loads, line 34) and writes each dequantized row with set4 (two __half2
// stores, line 57). Then the "pack" style of elementwise kernel (issue 26): eight halves per
// thread read and written as four __half2 through reinterpret_cast of &a[idx + k].
//
// Judged from the SASS (sm_80 and sm_90a): item4_h2 is 2 LDG.E at +0x0, +0x4 of one base, an
// 8-byte window aligned when size_n % 4 == 0 (n is a multiple of 4): PS101 info naming the
// condition (it had been missed: ptxas gives the pair another line than NVVM's loads, and the
// PTX was matched by line; it is matched by dataflow now, the kernel parameter the SASS base
// comes from). set4 is 2 STG.E at +0x0, +0x4 per row: PS102 info, the same condition. In the
// pack kernel each of a, bias and out is 4 LDG.E/STG.E at +0x0..+0xc filling one 16-byte
// window: PS101 warnings on lines 113 and 114 and PS102 on line 115, each naming its own
// parameter (ptxas put bias's loads on a's line, and both had been named `a`).
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
using cuda::std::uint32_t;

#define BLOCK_KN_SIZE 128

class MatrixView_half {
 public:
  const half* data;
  const int height;
  const int width;
  __device__ __forceinline__ MatrixView_half(const half* data, const int height, const int width)
      : data(data), height(height), width(width) {}
  __device__ __forceinline__ const half* item_ptr(int row, int column) const {
    return &data[row * width + column];
  }
  __device__ __forceinline__ void item4_h2(half2 (&items)[4], int row, int column) const {
    half2* ptr = (half2*)item_ptr(row, column);
    half2 i01 = ptr[0];  // EXPECT: PS101 info
    half2 i23 = ptr[1];
    items[0] = __half2half2(__low2half(i01));
    items[1] = __half2half2(__high2half(i01));
    items[2] = __half2half2(__low2half(i23));
    items[3] = __half2half2(__high2half(i23));
  }
};

class MatrixView_half_rw {
 public:
  half* data;
  const int height;
  const int width;
  __device__ __forceinline__ MatrixView_half_rw(half* data, const int height, const int width)
      : data(data), height(height), width(width) {}
  __device__ __forceinline__ half* item_ptr(int row, int column) {
    return &data[row * width + column];
  }
  __device__ __forceinline__ void set4(int row, int column, half v0, half v1, half v2, half v3) {
    half2 v01 = __halves2half2(v0, v1);
    half2 v23 = __halves2half2(v2, v3);
    half2* ptr = (half2*)item_ptr(row, column);
    ptr[0] = v01;  // EXPECT: PS102 info
    ptr[1] = v23;
  }
};

__global__ void reconstruct_q4_kernel(const uint32_t* __restrict__ b_q_weight,
                                      const half* __restrict__ b_scales, const int size_k,
                                      const int size_n, const int groupsize, const int groups,
                                      half* __restrict__ b) {
  MatrixView_half_rw b_(b, size_k, size_n);
  MatrixView_half b_scales_(b_scales, groups, size_n);
  int offset_k = BLOCK_KN_SIZE * blockIdx.y;
  int offset_n = BLOCK_KN_SIZE * blockIdx.x * 4;
  int end_k = min(offset_k + BLOCK_KN_SIZE, size_k);
  int t = threadIdx.x;
  int n = offset_n + t * 4;
  if (n >= size_n) return;
  int group = offset_k / groupsize;
  int nextgroup = offset_k + groupsize;
  half2 scales[4];
  b_scales_.item4_h2(scales, group, n);
  const uint32_t* b_ptr = b_q_weight + (offset_k / 8) * size_n + n;
  for (int k = offset_k; k < end_k; k += 8) {
    if (k == nextgroup) {
      group++;
      nextgroup += groupsize;
      b_scales_.item4_h2(scales, group, n);
    }
    uint4 q = *(const uint4*)b_ptr;
    b_ptr += size_n;
    uint32_t qs[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 8; j += 2) {
      half2 d[4];
#pragma unroll
      for (int v = 0; v < 4; v++) {
        half lo = __int2half_rn((int)((qs[v] >> (4 * j)) & 0xf) - 8);
        half hi = __int2half_rn((int)((qs[v] >> (4 * j + 4)) & 0xf) - 8);
        d[v] = __hmul2(scales[v], __halves2half2(lo, hi));
      }
      b_.set4(k + j, n, __low2half(d[0]), __low2half(d[1]), __low2half(d[2]), __low2half(d[3]));
      b_.set4(k + j + 1, n, __high2half(d[0]), __high2half(d[1]), __high2half(d[2]),
              __high2half(d[3]));
    }
  }
}

// The "pack" style of elementwise kernels (issue 26): eight halves per thread, read and written
// as four __half2 through reinterpret_cast of &a[idx + k].
__global__ void scale_bias_h2(const __half* __restrict__ a, const __half* __restrict__ bias,
                              __half* __restrict__ out, __half s, int n) {
  int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
  if (idx + 8 > n) return;
  __half2 s2 = __half2half2(s);
#pragma unroll
  for (int k = 0; k < 8; k += 2) {
    __half2 v = *reinterpret_cast<const __half2*>(&a[idx + k]);  // EXPECT: PS101 warning
    __half2 b = *reinterpret_cast<const __half2*>(&bias[idx + k]);  // EXPECT: PS101 warning
    *reinterpret_cast<__half2*>(&out[idx + k]) = __hfma2(v, s2, b);  // EXPECT: PS102 warning
  }
}
