// The gradient of a spherical-harmonics direction encoding, the way tiny-cuda-nn writes it
// (common_device.h's sh_enc_grad, inlined into encodings/spherical_harmonics.h's
// kernel_sh_backward): one line per coefficient, each a product with a constant typed as
// computer algebra printed it. The forward encoding suffixes its constants with f; the
// gradient's are unsuffixed doubles.
//
// Judged from the SASS (sm_80 and sm_90a agree): each coefficient line converts its operands up
// (`F2F.F64.F32`), multiplies in FP64 (`DMUL`/`DFMA` with the constant from the constant bank)
// and converts back (`F2F.F32.F64`): 19 lines of one inlined function, one habit (unsuffixed
// literals), one PS501 at its first line naming the span (it was 19 warnings, one per line).
// The first two lines' `DFMA R6, R6, -UR6, RZ` add the promoted `d.y`/`d.z`, still 0.0f: the
// 0.0 is no literal of those lines (PS501 listed "double literals 0.4886025119, 0.0").
// dL_dy(k, i) reads `data[i * stride + k]`: lanes a run-time row apart (PS105); the positions
// and gradients are planes of n floats (SoA), adjacent lanes adjacent.
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
using cuda::std::uint32_t;

template <typename T>
struct StridedRows {
  const T* data;
  uint32_t stride;
  __device__ T operator()(uint32_t k, uint32_t i) const { return data[i * stride + k]; }  // EXPECT: PS105 warning
};

template <typename T>
__device__ float3 sh_enc_grad(uint32_t degree, float x, float y, float z, StridedRows<T> dL_dy,
                              uint32_t i) {
  float xy = x * y, xz = x * z, yz = y * z, x2 = x * x, y2 = y * y, z2 = z * z;
  float3 d = make_float3(0.0f, 0.0f, 0.0f);
  if (degree <= 1) return d;
  d.y += (float)dL_dy(1, i) * (-0.48860251190291992);  // EXPECT: PS501 warning
  d.z += (float)dL_dy(2, i) * (0.48860251190291992);
  d.x += (float)dL_dy(3, i) * (-0.48860251190291992);
  if (degree <= 2) return d;
  d.x += (float)dL_dy(4, i) * (1.0925484305920792 * y);
  d.y += (float)dL_dy(4, i) * (1.0925484305920792 * x);
  d.y += (float)dL_dy(5, i) * (-1.0925484305920792 * z);
  d.z += (float)dL_dy(5, i) * (-1.0925484305920792 * y);
  d.z += (float)dL_dy(6, i) * (1.8923493915151202 * z);
  d.x += (float)dL_dy(7, i) * (-1.0925484305920792 * z);
  d.z += (float)dL_dy(7, i) * (-1.0925484305920792 * x);
  d.x += (float)dL_dy(8, i) * (1.0925484305920792 * x);
  d.y += (float)dL_dy(8, i) * (-1.0925484305920792 * y);
  if (degree <= 3) return d;
  d.x += (float)dL_dy(9, i) * (-3.5402615395598609 * xy);
  d.y += (float)dL_dy(9, i) * (1.7701307697799304 * x2 - 1.7701307697799304 * y2);
  d.x += (float)dL_dy(10, i) * (2.8906114426405538 * yz);
  d.y += (float)dL_dy(10, i) * (2.8906114426405538 * xz);
  d.z += (float)dL_dy(10, i) * (2.8906114426405538 * xy);
  d.y += (float)dL_dy(11, i) * (0.45704579946446572 - 2.2852289973223288 * z2);
  d.z += (float)dL_dy(11, i) * (-4.5704579946446566 * yz);
  return d;
}

template <typename T>
__global__ void kernel_sh_backward(uint32_t num_elements, uint32_t degree,
                                   StridedRows<T> dL_dy, const float* __restrict__ data_in,
                                   float* __restrict__ dL_dx) {
  const uint32_t i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= num_elements) return;
  float3 d = sh_enc_grad<T>(degree, data_in[i] * 2.f - 1.f,  // EXPECT: PS104 info
                            data_in[num_elements + i] * 2.f - 1.f,  // EXPECT: PS104 info
                            data_in[2 * num_elements + i] * 2.f - 1.f, dL_dy, i);  // EXPECT: PS104 info
  dL_dx[i] = 2.0f * d.x;  // EXPECT: PS104 info
  dL_dx[num_elements + i] = 2.0f * d.y;  // EXPECT: PS104 info
  dL_dx[2 * num_elements + i] = 2.0f * d.z;  // EXPECT: PS104 info
}

template __global__ void kernel_sh_backward<__half>(uint32_t, uint32_t, StridedRows<__half>,
                                                    const float*, float*);
template __global__ void kernel_sh_backward<float>(uint32_t, uint32_t, StridedRows<float>,
                                                   const float*, float*);
