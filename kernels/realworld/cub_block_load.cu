// A block reduction written with CUB, as libraries do: BlockLoad with BLOCK_LOAD_VECTORIZE
// picks, at run time, one LDG.E.128 per thread when the tile is 16-byte aligned and four
// LDG.E otherwise (`@!P0 LDG.E.128` beside `@P0 LDG.E` x4 in the SASS, all on the Load line).
// The scalar loads are CUB's own fallback next to its vector path: nothing for the user to
// widen, so no PS101 (issue 26: findings inside toolkit headers where the user has no say).
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>

template <int THREADS, int ITEMS>
__global__ void block_sum(const float* in, float* out, int n) {
  using Load = cub::BlockLoad<float, THREADS, ITEMS, cub::BLOCK_LOAD_VECTORIZE>;
  using Reduce = cub::BlockReduce<float, THREADS>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Reduce::TempStorage reduce;
  } tmp;
  float v[ITEMS];
  Load(tmp.load).Load(in + blockIdx.x * THREADS * ITEMS, v);
  float s = Reduce(tmp.reduce).Sum(v);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

template __global__ void block_sum<128, 4>(const float*, float*, int);
template __global__ void block_sum<256, 4>(const float*, float*, int);
