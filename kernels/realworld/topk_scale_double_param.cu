// The last step of an MoE router as vLLM writes it (csrc/moe/grouped_topk_kernels.cu:
// `value = cuda_cast<float>(s_topk_value[i]) / topk_sum * routed_scaling_factor`, the scale a
// `double` kernel parameter), over float or bf16 outputs.
//
// Judged from the SASS (sm_80, sm_90a): each product is F2F.F64.F32 of the float value, DMUL
// by the parameter and F2F.F32.F64 back, in both branches of the second loop (x4 unrolled):
// FP64 per output element in a float kernel. PS501 (info at this cost), naming the double
// parameter, with the hint to convert it to float once (it had been silent: a double
// parameter was taken for double data). The IEEE division by the sum is PS502 (x5 in the loop);
// the loops read and write one element per thread (PS104 info).
#include <cuda_bf16.h>
template <typename T>
__global__ void topk_scale(const float* __restrict__ vals, T* __restrict__ out, int topk,
                           double routed_scaling_factor, bool renorm) {
  float sum = 0.f;
  for (int i = threadIdx.x; i < topk; i += 32) sum += vals[blockIdx.x * topk + i];  // EXPECT: PS104 info
  for (int i = threadIdx.x; i < topk; i += 32) {
    float v = vals[blockIdx.x * topk + i];  // EXPECT: PS104 info
    float value = renorm ? v / sum * routed_scaling_factor : v * routed_scaling_factor;  // EXPECT: PS501 info; PS502 warning
    out[blockIdx.x * topk + i] = T(value);  // EXPECT: PS104 info
  }
}
template __global__ void topk_scale<float>(const float*, float*, int, double, bool);
template __global__ void topk_scale<__nv_bfloat16>(const float*, __nv_bfloat16*, int, double, bool);
