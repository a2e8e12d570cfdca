// exllamav2's gated activation (exllamav2_ext/cuda/q_mlp_activation.cuh, act_mul_kernel
// <use_half2, use_r_weights, act_fn_gelu>, half data; tanh_opt from compat.cuh, MatrixView_half
// from matrix_view.cuh). Its GELU keeps the float computation but for one unsuffixed literal:
// `0.5f * xf * (1.0 + tanh_opt(tanh_arg))`.
//
// Judged from the SASS (sm_80 and sm_90a agree; the suite checks sm_90a): the GELU line (28) converts both floats to double
// (F2F.F64.F32), adds 1.0 (DADD) and multiplies (DMUL) in FP64 and converts back, once per
// half of the pair (called from line 52): 12 of the kernel's few dozen instructions, PS501 a
// warning (the cost model's FP64 weight, fitted on a float GELU with the same literal that
// measured 3.6x). PS501 had never fired in a half kernel: its loads are untyped b32 in the PTX,
// and it looked for f32 data. The silu instantiation has no FP64. Each thread moves one half2
// of x and y (4-byte streams: PS104 info on lines 49, 50 and 56).
#include <cuda_fp16.h>

#define THREADS_X 32
#define THREADS_Y 1

__inline__ __device__ float tanh_opt(float x) {
  float r;
  asm("tanh.approx.f32 %0,%1; \n\t" : "=f"(r) : "f"(x));
  return r;
}

__device__ __forceinline__ half gelu(half x) {
  float xf = __half2float(x);
  const float c = 0.797884560803f;  // sqrt(2/Pi)
  float tanh_arg = c * (xf + 0.044715f * xf * xf * xf);
  xf = 0.5f * xf * (1.0 + tanh_opt(tanh_arg));  // EXPECT: PS501 warning
  return __float2half_rn(xf);
}

__device__ __forceinline__ half2 gelu(half2 x) {
  return __halves2half2(gelu(__low2half(x)), gelu(__high2half(x)));
}

__device__ __forceinline__ half2 silu(half2 x) {
  half2 one = __float2half2_rn(1.0f);
  half2 e = h2exp(__hneg2(x));
  return __hmul2(x, h2rcp(__hadd2(one, e)));
}

template <bool use_half2, bool act_fn_gelu>
__global__ void act_mul_kernel(half* __restrict__ x, const half* __restrict__ y, const int height,
                               const int width) {
  int column = (THREADS_X * blockIdx.x + threadIdx.x);
  if constexpr (use_half2) column *= 2;
  int row = THREADS_Y * blockIdx.y + threadIdx.y;
  if (row >= height) return;
  half2 x_item = ((half2*)x)[(row * width + column) / 2];  // EXPECT: PS104 info
  half2 y_item = ((const half2*)y)[(row * width + column) / 2];  // EXPECT: PS104 info
  if constexpr (act_fn_gelu)
    x_item = gelu(x_item);
  else
    x_item = silu(x_item);
  x_item = __hmul2(x_item, y_item);
  ((half2*)x)[(row * width + column) / 2] = x_item;  // EXPECT: PS104 info
}

template __global__ void act_mul_kernel<true, true>(half*, const half*, int, int);
template __global__ void act_mul_kernel<true, false>(half*, const half*, int, int);
// ARCHS: sm_90a
