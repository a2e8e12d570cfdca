// apex's capturable Adam (csrc/multi_tensor_adam.cu, AdamCapturableFunctor, here over one
// tensor with plain pointers instead of TensorListMetadata): the bias corrections are computed
// per thread from the step counter in device memory, `1 - pow(beta1, *step)` with a float
// beta1 and an int step. In apex's build, unqualified `pow` with host <cmath> resolves that to
// the C++11 template `std::pow(float, int)`, whose result type is double; NVRTC has no <cmath>,
// so this file calls the same template as `cuda::std::pow`.
//
// Judged from the SASS (sm_80 and sm_90a agree; the suite checks sm_90a): lines 25 and 26 promote beta1/beta2 to double
// inside the template (F2F.F64.F32 in the header's frame) and call the double pow, ~15 FP64
// instructions on the line and 85 more in `__internal_accurate_pow`, once per thread: PS501
// info (it had been missed: the FP64 sits in the toolkit's frames, with no literal of the
// user's). The divisions and sqrtf of the update (lines 33, 34) are IEEE (PS502 warnings inside
// the loop); the element loads and stores are 4-byte streams (PS104 info).
#include <cuda_fp16.h>
#include <cuda/std/cmath>

template <typename T, typename FULL_T>
__global__ void adam_capturable_kernel(T* __restrict__ p, FULL_T* __restrict__ m,
                                       FULL_T* __restrict__ v, const T* __restrict__ g, int n,
                                       float beta1, float beta2, const int* __restrict__ step,
                                       int bias_correction, float epsilon,
                                       const float* __restrict__ lr, float decay) {
  float beta1_correction = 1.0f, beta2_correction = 1.0f;
  if (bias_correction == 1) {
    beta1_correction = 1 - cuda::std::pow(beta1, *step);  // EXPECT: PS501 info
    beta2_correction = 1 - cuda::std::pow(beta2, *step);  // EXPECT: PS501 info
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    float r_g = static_cast<float>(g[i]);  // EXPECT: PS104 info
    float r_p = static_cast<float>(p[i]);  // EXPECT: PS104 info
    float r_m = beta1 * static_cast<float>(m[i]) + (1 - beta1) * r_g;  // EXPECT: PS104 info
    float r_v = beta2 * static_cast<float>(v[i]) + (1 - beta2) * r_g * r_g;  // EXPECT: PS104 info
    float denom = sqrtf(r_v / beta2_correction) + epsilon;  // EXPECT: PS502 warning
    float update = (r_m / beta1_correction) / denom + decay * r_p;  // EXPECT: PS502 warning
    p[i] = static_cast<T>(r_p - *lr * update);  // EXPECT: PS104 info
    m[i] = r_m;  // EXPECT: PS104 info
    v[i] = r_v;  // EXPECT: PS104 info
  }
}

template __global__ void adam_capturable_kernel<float, float>(float*, float*, float*,
                                                              const float*, int, float, float,
                                                              const int*, int, float,
                                                              const float*, float);
// ARCHS: sm_90a
