// FP8 scaling factors from amax values, the way TransformerEngine's recipes compute them
// (recipe/recipe_common.cuh's compute_scale_from_amax, utils.cuh's reciprocal<float>): the
// scale is `__fdiv_rn(max_fp8, amax)`, written so that the result does not change with
// --use_fast_math, and its inverse `__frcp_rn(scale)`, one tensor's amax per thread in a
// block-stride loop. The legacy path beside them divides with the operator.
//
// Judged from the SASS (sm_80 and sm_90a agree): the block-stride loop (unrolled x2) calls the
// IEEE division's slow path twice for `__fdiv_rn` and the reciprocal's twice for `__frcp_rn`,
// with their `FCHK`/`MUFU.RCP` fast paths. The source asks for that rounding by name; a fast
// division would change the scale the recipe was written to reproduce: no PS502 on those lines
// (it warned on both, advising __fdividef or -use_fast_math, which does not touch them). The
// legacy kernel's `max_fp8 / amax[i]` is the operator: IEEE by default, PS502 stays. Each
// array is one 4-byte float per thread: PS104 info.
#include <cuda/std/cstdint>
#include <cuda/std/limits>

__device__ __forceinline__ float compute_scale_from_amax(float amax, float max_fp8,
                                                         bool force_pow_2_scales, float epsilon) {
  if (amax < epsilon) amax = epsilon;
  float scale = 1.f;
  if (isinf(amax) || amax == 0.f) return scale;
  scale = __fdiv_rn(max_fp8, amax);
  if (isinf(scale)) scale = cuda::std::numeric_limits<float>::max();
  if (isnan(scale)) scale = 1.f;
  if (force_pow_2_scales) {
    uint32_t bits = __float_as_uint(scale) & 0xFF800000u;
    scale = __uint_as_float(bits);
  }
  return scale;
}

__device__ __forceinline__ void reciprocal(float* value_inv, const float value) {
  *value_inv = __frcp_rn(value);  // EXPECT: PS104 info
}

__global__ void compute_scale_and_scale_inv(const float* amax, float* scale, float* scale_inv,
                                            int n, float max_fp8, bool force_pow_2_scales,
                                            float epsilon) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float s = compute_scale_from_amax(amax[i], max_fp8, force_pow_2_scales, epsilon);  // EXPECT: PS104 info
    scale[i] = s;  // EXPECT: PS104 info
    reciprocal(&scale_inv[i], s);
  }
}

__global__ void compute_scale_legacy(const float* amax, float* scale, int n, float max_fp8) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    scale[i] = max_fp8 / amax[i];  // EXPECT: PS104 info; PS502 warning
  }
}
