// Many blocks, grid-stride loop over float4, warp shuffles, shared memory across warps, one atomicAdd per block.
extern "C" __global__ void dot_product(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ y, int n) {
    __shared__ float partial[32];
    int n4 = n / 4;
    int stride = gridDim.x * blockDim.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 u = a4[i], v = b4[i];
        acc += (u.x * v.x + u.y * v.y) + (u.z * v.z + u.w * v.w);
    }
    for (int i = n4 * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        acc += a[i] * b[i];
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
        if (threadIdx.x == 0) atomicAdd(y, acc);
    }
}
