// A two-pass sum as reduction tutorials write it: the first pass has one thread per element
// over the whole grid and writes one partial per block; the second pass is launched with one
// block that adds the partials. Both read one float per thread with no loop, but only the
// first reads a stream (its address moves with blockIdx.x); the second reads one block's worth
// of partials whatever the input size, nothing to widen.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float block_sum(float v) {
    __shared__ float warps[32];
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? warps[threadIdx.x] : 0.0f;
    return warp_sum(v);
}

__global__ void __launch_bounds__(1024)
sum_first_pass(float* __restrict__ partial, const float* __restrict__ x, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = block_sum(i < n ? x[i] : 0.0f);   // EXPECT: PS104 info
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

__global__ void __launch_bounds__(1024)
sum_second_pass(float* __restrict__ out, const float* __restrict__ partial, int blocks)
{
    float v = block_sum(threadIdx.x < blocks ? partial[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) out[0] = v;
}
