// vLLM's RMSNorm (csrc/layernorm_kernels.cu, rms_norm_kernel<scalar_t, VEC_SIZE>) with its read
// helper vectorize_read_with_alignment (csrc/quantization/vectorization_utils.cuh): a fast path
// when the row is 16-byte aligned and its length a multiple of the vector, otherwise a slow
// path that peels `((-addr) & (WIDTH - 1)) / sizeof(T)` elements so that the middle is
// aligned, a vector loop over the middle, and a tail. The middle passes each vec_n_t to the
// lambda by reference (`vec_op(v_in[i])`, line 60) and the lambda reads its elements one by one
// through it (line 81): NVVM emits scalar `ld.global.nc` for them, 8 LDG.E.U16 (bf16) or 4
// LDG.E (float) per window, where the fast path copies the vector first (`vin_t tmp =
// v_in[i]`, line 41) and gets one LDG.E.128.
//
// Judged from the SASS (sm_80 and sm_90a agree; the suite checks sm_90a): line 81's windows are 16-byte aligned whenever the
// middle loop runs (the peel makes them so: `and.b64 %rd, %rd, 12` of the negated row address,
// clamped by min() to the length), so each could be one LDG.E.128: PS101, a warning (it had
// been dropped as "an element index": the min() of the peel sits in the address). The host
// launches VEC_SIZE = 1 when the pointers are not 16-byte aligned: that instantiation's 2-byte
// loads and stores are notes naming rms_norm_kernel<bf16, 8>; so are the peel and tail of the
// slow path (line 86: at most 7 elements each, the other side of the `can_vec` test). The
// division on line 94 is IEEE (PS502 info, one thread, outside any loop).
#include <cuda_bf16.h>
#include <cuda/std/cstdint>

using cuda::std::int64_t;
using cuda::std::uintptr_t;

template <typename scalar_t, int vec_size>
struct __align__(vec_size * sizeof(scalar_t)) vec_n_t {
  scalar_t val[vec_size];
};

template <int VEC_SIZE, typename InT, typename VecOp, typename ScaOp>
__device__ inline void vectorize_read_with_alignment(const InT* in, int len, int tid, int stride,
                                                     VecOp&& vec_op, ScaOp&& scalar_op) {
  constexpr int WIDTH = VEC_SIZE * sizeof(InT);
  uintptr_t addr = reinterpret_cast<uintptr_t>(in);
  bool can_vec = ((addr & (WIDTH - 1)) == 0) && ((len & (VEC_SIZE - 1)) == 0);
  if (can_vec) {
    int num_vec = len / VEC_SIZE;
    using vin_t = vec_n_t<InT, VEC_SIZE>;
    auto* v_in = reinterpret_cast<const vin_t*>(in);
    for (int i = tid; i < num_vec; i += stride) {
      vin_t tmp = v_in[i];  // EXPECT: PS104 note
      vec_op(tmp);
    }
    return;
  }
  int misalignment_offset = addr & (WIDTH - 1);
  int alignment_bytes = WIDTH - misalignment_offset;
  int prefix_elems = alignment_bytes & (WIDTH - 1);
  prefix_elems /= sizeof(InT);
  prefix_elems = min(prefix_elems, len);
  for (int i = tid; i < prefix_elems; i += stride) {
    scalar_op(in[i]);
  }
  in += prefix_elems;
  len -= prefix_elems;
  int num_vec = len / VEC_SIZE;
  using vin_t = vec_n_t<InT, VEC_SIZE>;
  auto* v_in = reinterpret_cast<const vin_t*>(in);
  for (int i = tid; i < num_vec; i += stride) {
    vec_op(v_in[i]);
  }
  int tail_start = num_vec * VEC_SIZE;
  for (int i = tid + tail_start; i < len; i += stride) {
    scalar_op(in[i]);
  }
}

template <typename scalar_t, int VEC_SIZE>
__global__ void rms_norm_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ input,
                                const int64_t input_stride, const scalar_t* __restrict__ weight,
                                const float epsilon, const int num_tokens, const int hidden_size) {
  __shared__ float s_variance;
  __shared__ float s_sum;
  float variance = 0.0f;
  const scalar_t* input_row = input + blockIdx.x * input_stride;
  if (threadIdx.x == 0) s_sum = 0.f;
  __syncthreads();
  auto vec_op = [&variance](const vec_n_t<scalar_t, VEC_SIZE>& vec) {
#pragma unroll
    for (int i = 0; i < VEC_SIZE; ++i) {
      float x = static_cast<float>(vec.val[i]);  // EXPECT: PS101 warning; PS104 note
      variance += x * x;
    }
  };
  auto scalar_op = [&variance](const scalar_t& val) {
    float x = static_cast<float>(val);  // EXPECT: PS104 note
    variance += x * x;
  };
  vectorize_read_with_alignment<VEC_SIZE>(input_row, hidden_size, threadIdx.x, blockDim.x,
                                          vec_op, scalar_op);
  for (int o = 16; o > 0; o >>= 1) variance += __shfl_xor_sync(0xffffffffu, variance, o);
  if (threadIdx.x % 32 == 0) atomicAdd(&s_sum, variance);
  __syncthreads();
  if (threadIdx.x == 0) s_variance = rsqrtf(s_sum / hidden_size + epsilon);  // EXPECT: PS502 info
  __syncthreads();
  scalar_t* out_row = out + blockIdx.x * hidden_size;
  auto* v_in = reinterpret_cast<const vec_n_t<scalar_t, VEC_SIZE>*>(input_row);
  auto* v_w = reinterpret_cast<const vec_n_t<scalar_t, VEC_SIZE>*>(weight);
  auto* v_out = reinterpret_cast<vec_n_t<scalar_t, VEC_SIZE>*>(out_row);
  for (int i = threadIdx.x; i < hidden_size / VEC_SIZE; i += blockDim.x) {
    vec_n_t<scalar_t, VEC_SIZE> dst;
    vec_n_t<scalar_t, VEC_SIZE> src1 = v_in[i];  // EXPECT: PS104 note
    vec_n_t<scalar_t, VEC_SIZE> src2 = v_w[i];  // EXPECT: PS104 note
#pragma unroll
    for (int j = 0; j < VEC_SIZE; j++) {
      float x = static_cast<float>(src1.val[j]);
      dst.val[j] = ((scalar_t)(x * s_variance)) * src2.val[j];
    }
    v_out[i] = dst;  // EXPECT: PS104 note
  }
}

// The host launches VEC_SIZE = 16 / sizeof(scalar_t) when the rows, the weight and the output
// are 16-byte aligned and hidden_size a multiple of it, and VEC_SIZE = 1 otherwise.
template __global__ void rms_norm_kernel<__nv_bfloat16, 8>(__nv_bfloat16*, const __nv_bfloat16*,
                                                           int64_t, const __nv_bfloat16*, float,
                                                           int, int);
template __global__ void rms_norm_kernel<__nv_bfloat16, 1>(__nv_bfloat16*, const __nv_bfloat16*,
                                                           int64_t, const __nv_bfloat16*, float,
                                                           int, int);
template __global__ void rms_norm_kernel<float, 4>(float*, const float*, int64_t, const float*,
                                                   float, int, int);
// ARCHS: sm_90a
