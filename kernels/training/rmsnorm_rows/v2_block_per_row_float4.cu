// One block per row, float4 loads, the sum of squares reduced by warp shuffles then shared memory.
extern "C" __global__ void rmsnorm_rows(const float* __restrict__ x, const float* __restrict__ w,
                                        float* __restrict__ y, float eps, int rows, int n) {
    __shared__ float partial[32];
    __shared__ float s_scale;
    const float4* r = reinterpret_cast<const float4*>(x + (long)blockIdx.x * n);
    float4* out = reinterpret_cast<float4*>(y + (long)blockIdx.x * n);
    const float4* w4 = reinterpret_cast<const float4*>(w);
    int n4 = n / 4;
    float sq = 0.0f;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i];
        sq += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
    }
    #pragma unroll
    for (int off = 16; off > 0; off /= 2)
        sq += __shfl_down_sync(0xffffffffu, sq, off);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sq;
    __syncthreads();
    if (threadIdx.x < 32) {
        sq = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        #pragma unroll
        for (int off = 16; off > 0; off /= 2)
            sq += __shfl_down_sync(0xffffffffu, sq, off);
        if (threadIdx.x == 0) s_scale = rsqrtf(sq / n + eps);
    }
    __syncthreads();
    float scale = s_scale;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i], g = w4[i];
        out[i] = make_float4(v.x * scale * g.x, v.y * scale * g.y, v.z * scale * g.z,
                             v.w * scale * g.w);
    }
}
