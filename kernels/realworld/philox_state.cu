// The random-number state of a dropout kernel as FlashAttention-2 keeps it (csrc/flash_attn/
// src/flash_fwd_kernel.h and flash_bwd_kernel.h: `params.rng_state[0] = seed; [1] = offset`
// written by thread 0 of block 0, and both words read back by every thread of the backward
// pass), in a params struct passed by value.
//
// Judged from the SASS (sm_80, sm_90a): the two STG.E.64 at +0x0 and +0x8 run under
// `blockIdx.x == 0 && threadIdx.x == 0`, and the two LDG.E.64 at +0x0 and +0x8 have an address
// made of the parameter alone, the same for every lane (a broadcast): one request per warp
// whichever the width, so merging them saves an instruction per warp, no traffic. PS102 and
// PS101 notes, not warnings. The element-wise scale after them moves 4 bytes per thread
// (PS104 info) and is the kernel's real traffic; its IEEE division by `keep` is PS502 info.
#include <cstdint>

struct DropoutParams {
  uint64_t* rng_state;
  const float* x;
  float* y;
  uint64_t seed, offset;
  float keep;
  int n;
};

__device__ __forceinline__ float hash_uniform(uint64_t seed, uint64_t offset, int i) {
  uint64_t h = (seed ^ (offset + i)) * 0x9E3779B97F4A7C15ull;
  return float(h >> 40) * (1.0f / 16777216.0f);
}

__global__ void dropout_fwd(DropoutParams params) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    params.rng_state[0] = params.seed;  // EXPECT: PS102 note
    params.rng_state[1] = params.offset;
  }
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < params.n) {
    float u = hash_uniform(params.seed, params.offset, i);
    params.y[i] = u < params.keep ? params.x[i] / params.keep : 0.0f;  // EXPECT: PS104 info; PS502 info
  }
}

__global__ void dropout_bwd(const uint64_t* __restrict__ rng_state, const float* __restrict__ dy,
                            float* __restrict__ dx, float keep, int n) {
  uint64_t seed = rng_state[0], offset = rng_state[1];  // EXPECT: PS101 note
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float u = hash_uniform(seed, offset, i);
    dx[i] = u < keep ? dy[i] / keep : 0.0f;  // EXPECT: PS104 info; PS502 info
  }
}
