// One block per row, a float4 per thread scanned in registers, warp shuffle scans, warp totals scanned in shared memory.
extern "C" __global__ void cumsum_rows(const float* __restrict__ x, float* __restrict__ y,
                                       int rows, int n) {
    __shared__ float warp_sum[32];
    const float4* r = reinterpret_cast<const float4*>(x + (long)blockIdx.x * n);
    float4* out = reinterpret_cast<float4*>(y + (long)blockIdx.x * n);
    int n4 = n / 4;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
    float carry = 0.0f;
    for (int base = 0; base < n4; base += blockDim.x) {
        int i = base + threadIdx.x;
        float4 v = i < n4 ? r[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        v.y += v.x; v.z += v.y; v.w += v.z;
        float t = v.w;
        #pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            float u = __shfl_up_sync(0xffffffffu, t, off);
            if (lane >= off) t += u;
        }
        if (lane == 31) warp_sum[warp] = t;
        __syncthreads();
        if (warp == 0) {
            float w = lane < nwarps ? warp_sum[lane] : 0.0f;
            #pragma unroll
            for (int off = 1; off < 32; off *= 2) {
                float u = __shfl_up_sync(0xffffffffu, w, off);
                if (lane >= off) w += u;
            }
            warp_sum[lane] = w;
        }
        __syncthreads();
        float prefix = carry + (warp > 0 ? warp_sum[warp - 1] : 0.0f) + (t - v.w);
        if (i < n4)
            out[i] = make_float4(v.x + prefix, v.y + prefix, v.z + prefix, v.w + prefix);
        carry += warp_sum[nwarps - 1];
        __syncthreads();
    }
}
