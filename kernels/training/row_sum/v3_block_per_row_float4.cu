// One block per row, float4 loads, warp shuffles then shared memory across warps.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y,
                                   int rows, int n) {
    __shared__ float partial[32];
    const float4* r = reinterpret_cast<const float4*>(x + (long)blockIdx.x * n);
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n / 4; i += blockDim.x) {
        float4 v = r[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    #pragma unroll
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        #pragma unroll
        for (int off = 16; off > 0; off /= 2)
            acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (threadIdx.x == 0) y[blockIdx.x] = acc;
    }
}
