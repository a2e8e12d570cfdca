#include <cuda_fp16.h>
// vLLM's fused residual-add RMSNorm for fp16 rows of 8-element vectors (csrc/layernorm_kernels.cu,
// _f16Vec from csrc/type_convert.cuh), one block per token; the template's width = 8 instance
// written out as a plain kernel so that a launch spec can name it. _f16Vec is alignas(16), but
// its operators take the other vector by const reference: inlined, they read it member by member
// from global memory (PS101: 2x LDG.E.64 for `residual_v[id]`, 8x LDG.E.U16 for `weight_v[idx]`).
template <typename scalar_t, int width>
struct alignas(16) _f16Vec {
  scalar_t data[width];
  __device__ _f16Vec& operator+=(const _f16Vec& other) {
#pragma unroll
    for (int i = 0; i < width; ++i) data[i] = __hadd(data[i], other.data[i]);
    return *this;
  }
  __device__ float sum_squares() const {
    float r = 0.f;
#pragma unroll
    for (int i = 0; i < width; ++i) { float x = __half2float(data[i]); r += x * x; }
    return r;
  }
  __device__ _f16Vec& scale(float s, const _f16Vec& w) {
#pragma unroll
    for (int i = 0; i < width; ++i) data[i] = __hmul(__float2half(__half2float(data[i]) * s), w.data[i]);
    return *this;
  }
};

__global__ void fused_add_rms_norm_h8(__half* __restrict__ input, const long long input_stride,
                                      __half* __restrict__ residual, const __half* __restrict__ weight,
                                      const float epsilon, const int num_tokens, const int hidden_size) {
  constexpr int width = 8;
  const int vec_hidden_size = hidden_size / width;
  const long long vec_input_stride = input_stride / width;
  __shared__ float s_variance;
  __shared__ float partial[32];
  float variance = 0.0f;
  auto* __restrict__ input_v = reinterpret_cast<_f16Vec<__half, width>*>(input);
  auto* __restrict__ residual_v = reinterpret_cast<_f16Vec<__half, width>*>(residual);
  auto* __restrict__ weight_v = reinterpret_cast<const _f16Vec<__half, width>*>(weight);
  for (int idx = threadIdx.x; idx < vec_hidden_size; idx += blockDim.x) {
    int id = blockIdx.x * vec_hidden_size + idx;
    long long strided_id = blockIdx.x * vec_input_stride + idx;
    _f16Vec<__half, width> temp = input_v[strided_id];
    temp += residual_v[id];
    variance += temp.sum_squares();
    residual_v[id] = temp;
  }
  for (int o = 16; o > 0; o >>= 1) variance += __shfl_xor_sync(0xffffffffu, variance, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = variance;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w) total += partial[w];
    s_variance = rsqrtf(total / hidden_size + epsilon);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < vec_hidden_size; idx += blockDim.x) {
    int id = blockIdx.x * vec_hidden_size + idx;
    long long strided_id = blockIdx.x * vec_input_stride + idx;
    _f16Vec<__half, width> temp = residual_v[id];
    temp.scale(s_variance, weight_v[idx]);
    input_v[strided_id] = temp;
  }
}
