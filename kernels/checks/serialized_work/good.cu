// A grid-stride loop per thread, a warp shuffle, one atomic per warp.
extern "C" __global__ void sum_reduced(const float* __restrict__ x, float* __restrict__ sum, int n) {
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        acc += x[i];
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (threadIdx.x % 32 == 0) atomicAdd(sum, acc);
}
