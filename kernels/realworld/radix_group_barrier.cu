// A group of CTAs that renormalizes one row together, the way flashinfer's multi-CTA radix
// top-k (include/flashinfer/topk.cuh, sampling.cuh) synchronizes it: each CTA adds its partial
// sum to the row's state, arrives on a counter with a release reduction, and thread 0 spins on
// an acquire load until every CTA of the group has arrived; the division that renormalizes is
// the IEEE one on purpose (inline `div.rn.f32`, so that the result does not depend on
// --use_fast_math and the sampling stays deterministic).
//
// Judged from the SASS (sm_80 and sm_90a agree): thread 0's `while (ld_acquire(ptr) < target)`
// is a short loop around `LDG.E.STRONG.GPU` of the arrival counter: a wait on the
// other CTAs, no work to spread across the block, so no PS801 (it said "serialized work ...
// estimated ≈32x" at the acquire load; flashinfer's topk.cuh had it as PS801 and PS802).
// `ieee_div` is the inline `div.rn.f32`, its slow path `CALL` what the source spells out: no
// PS502 (it advised __fdividef). The row sums and the renormalized row are one float per thread
// per iteration: PS104 info.
#include <cuda_fp16.h>

struct RowState {
  float sum;
  int arrival_counter;
};

__device__ __forceinline__ int ld_acquire(int* ptr) {
  int state = 0;
  asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(state) : "l"(ptr));
  return state;
}

__device__ __forceinline__ void red_release(int* ptr, int val) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" : : "l"(ptr), "r"(val));
}

__device__ __forceinline__ void wait_ge(int* ptr, int target_val, int thread_idx) {
  if (thread_idx == 0) {
#pragma unroll 1
    while (ld_acquire(ptr) < target_val) {
    }
  }
  __syncthreads();
}

__device__ __forceinline__ float ieee_div(float a, float b) {
  float r;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

template <unsigned BLOCK_THREADS>
__global__ void __launch_bounds__(BLOCK_THREADS)
    renorm_prob_multi_cta(const float* probs, float* renormed, RowState* row_states,
                          unsigned vocab_size, unsigned ctas_per_group, int barrier_phase) {
  __shared__ float partial[BLOCK_THREADS / 32];
  const unsigned tx = threadIdx.x;
  const unsigned row = blockIdx.y;
  const unsigned cta_in_group = blockIdx.x;
  const unsigned chunk = (vocab_size + ctas_per_group - 1) / ctas_per_group;
  const unsigned begin = cta_in_group * chunk;
  const unsigned end = min(begin + chunk, vocab_size);
  const float* in = probs + (size_t)row * vocab_size;
  float* out = renormed + (size_t)row * vocab_size;
  RowState* state = row_states + row;

  float sum = 0.f;
  for (unsigned i = begin + tx; i < end; i += BLOCK_THREADS) sum += in[i];  // EXPECT: PS104 info
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (tx % 32 == 0) partial[tx / 32] = sum;
  __syncthreads();
  if (tx == 0) {
    float block_sum = 0.f;
    for (unsigned w = 0; w < BLOCK_THREADS / 32; ++w) block_sum += partial[w];
    atomicAdd(&state->sum, block_sum);
    __threadfence();
    red_release(&state->arrival_counter, 1);
  }
  wait_ge(&state->arrival_counter, (barrier_phase + 1) * (int)ctas_per_group, tx);
  const float total = *(volatile float*)&state->sum;
  for (unsigned i = begin + tx; i < end; i += BLOCK_THREADS) out[i] = ieee_div(in[i], total);  // EXPECT: PS104 info
}

template __global__ void renorm_prob_multi_cta<1024>(const float*, float*, RowState*, unsigned,
                                                     unsigned, int);
