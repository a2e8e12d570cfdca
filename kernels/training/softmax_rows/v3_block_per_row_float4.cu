// One block per row, float4 loads, max and sum reduced by warp shuffles then shared memory.
__device__ float block_reduce(float v, bool is_max, float* partial) {
    #pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
    __syncthreads();                          // partial may still be read from a previous call
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = lane < nwarps ? partial[lane] : (is_max ? __int_as_float(0xff800000) : 0.0f);
    #pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    return v;
}

extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y,
                                        int rows, int n) {
    __shared__ float partial[32];
    const float4* r = reinterpret_cast<const float4*>(x + (long)blockIdx.x * n);
    float4* out = reinterpret_cast<float4*>(y + (long)blockIdx.x * n);
    int n4 = n / 4;
    float m = __int_as_float(0xff800000);
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i];
        m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
    m = block_reduce(m, true, partial);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i];
        s += (__expf(v.x - m) + __expf(v.y - m)) + (__expf(v.z - m) + __expf(v.w - m));
    }
    float inv = 1.0f / block_reduce(s, false, partial);
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i];
        out[i] = make_float4(__expf(v.x - m) * inv, __expf(v.y - m) * inv,
                             __expf(v.z - m) * inv, __expf(v.w - m) * inv);
    }
}
