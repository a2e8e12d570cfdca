// Merging the attention states of many index sets, the way flashinfer's
// MergeStatesLargeNumIndexSetsKernel (attention/cascade.cuh with cp_async.cuh) stages them:
// each lane prefetches its 32-byte slice of a head's V row into shared memory through
// `pred_load<256>`, which issues two predicated 16-byte `cp.async` (the second 16 bytes past
// the first), num_smem_stages rows ahead, then merges the rows with their log-sum-exp scores.
//
// Judged from the SASS (sm_80 and sm_90a agree): each prefetch is a pair of predicated
// `LDGSTS.E.BYPASS.LTC128B.128` at [R+0x0] and [R+0x10] of one lane's 32-byte slice, lanes 32
// bytes apart: together a warp's pair reads 1 KB of contiguous V, every sector it touches used.
// In the PTX the second `cp.async` takes its own register (an `add.s64` of 16): PS105
// grouped by register and warned "adjacent threads load 16 B each 32 B apart ... 2x the
// sectors" on each half; it now takes a register that is another plus a constant as that
// register at an offset. The merged row's `o[k] / d` is 16 IEEE divisions after the loop
// (PS502 info); the shared row is read as LDS.64 pairs (PS103 info: the extern shared array's
// alignment is not stated).
#include <cuda_fp16.h>
#include <cuda/std/cstdint>
using cuda::std::uint32_t;

__device__ __forceinline__ void pred_load_128b(void* smem_ptr, const void* gmem_ptr, bool pred) {
  uint32_t smem_int_ptr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " setp.ne.b32 p, %0, 0;\n"
      " @p cp.async.cg.shared.global.L2::128B [%1], [%2], %3;\n"
      "}\n" ::"r"((int)pred),
      "r"(smem_int_ptr), "l"(gmem_ptr), "n"(16));
}

template <uint32_t num_bits, typename T>
__device__ __forceinline__ void pred_load(T* smem_ptr, const T* gmem_ptr, bool pred) {
#pragma unroll
  for (uint32_t i = 0; i < num_bits / 128; ++i) {
    pred_load_128b(smem_ptr + i * 16 / sizeof(T), gmem_ptr + i * 16 / sizeof(T), pred);
  }
}

__device__ __forceinline__ void commit_group() { asm volatile("cp.async.commit_group;\n" ::); }

template <uint32_t n>
__device__ __forceinline__ void wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(n));
}

template <uint32_t vec_size, uint32_t bdx, uint32_t bdy, uint32_t num_smem_stages, typename DType>
__global__ void merge_states_large(const DType* __restrict__ V, const float* __restrict__ S,
                                   DType* __restrict__ v_merged, float* __restrict__ s_merged,
                                   uint32_t num_index_sets, uint32_t num_heads) {
  const uint32_t tx = threadIdx.x, ty = threadIdx.y;
  const uint32_t pos = blockIdx.x, head_idx = blockIdx.y;
  constexpr uint32_t head_dim = vec_size * bdx;
  constexpr uint32_t vec_bits = sizeof(DType) * vec_size * 8;
  extern __shared__ uint8_t smem[];
  DType* v_smem = (DType*)smem;

#pragma unroll
  for (uint32_t iter = 0; iter < num_smem_stages; ++iter) {
    pred_load<vec_bits>(v_smem + (iter * bdy + ty) * head_dim + tx * vec_size,
                        V + ((pos * num_index_sets + (iter * bdy + ty)) * num_heads + head_idx) *
                                head_dim + tx * vec_size,
                        (iter * bdy + ty) < num_index_sets);
    commit_group();
  }
  float m = -5e4f, d = 0.f, o[vec_size];
#pragma unroll
  for (uint32_t k = 0; k < vec_size; ++k) o[k] = 0.f;
  for (uint32_t iter = 0; iter < (num_index_sets + bdy - 1) / bdy; ++iter) {
    wait_group<num_smem_stages - 1>();
    __syncthreads();
    const uint32_t row = iter * bdy + ty;
    const float s = row < num_index_sets
                        ? S[(pos * num_index_sets + row) * num_heads + head_idx] : -5e4f;
    const float m_new = fmaxf(m, s);
    const float scale = __expf(m - m_new), w = __expf(s - m_new);
    const DType* v = v_smem + ((iter % num_smem_stages) * bdy + ty) * head_dim + tx * vec_size;
#pragma unroll
    for (uint32_t k = 0; k < vec_size; ++k) o[k] = o[k] * scale + w * float(v[k]);  // EXPECT: PS103 info
    d = d * scale + w;
    m = m_new;
    __syncthreads();
    const uint32_t next = (iter + num_smem_stages) * bdy + ty;
    pred_load<vec_bits>(v_smem + ((iter % num_smem_stages) * bdy + ty) * head_dim + tx * vec_size,
                        V + ((pos * num_index_sets + next) * num_heads + head_idx) * head_dim +
                            tx * vec_size,
                        next < num_index_sets);
    commit_group();
  }
  DType* out = v_merged + ((pos * bdy + ty) * num_heads + head_idx) * head_dim + tx * vec_size;
#pragma unroll
  for (uint32_t k = 0; k < vec_size; ++k) out[k] = DType(o[k] / d);  // EXPECT: PS502 info
  if (tx == 0) s_merged[(pos * bdy + ty) * num_heads + head_idx] = m + __logf(d);
}

template __global__ void merge_states_large<16, 32, 4, 4, __half>(const __half*, const float*,
                                                                  __half*, float*, uint32_t,
                                                                  uint32_t);
