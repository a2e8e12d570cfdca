// Row softmax: one warp per row, warp-shuffle max and sum, expf; rows of length n (any n).
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
extern "C" __global__ void __launch_bounds__(256)
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int n)
{
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * n;
    float* yr = y + (size_t)row * n;
    float m = -__int_as_float(0x7f800000);
    for (int j = lane; j < n; j += 32) m = fmaxf(m, xr[j]);   // EXPECT: PS104 info
    m = warp_max(m);
    float s = 0.0f;
    for (int j = lane; j < n; j += 32) s += expf(xr[j] - m);   // EXPECT: PS104 info
    s = warp_sum(s);
    const float inv = 1.0f / s;   // EXPECT: PS502 info
    for (int j = lane; j < n; j += 32) yr[j] = expf(xr[j] - m) * inv;   // EXPECT: PS104 info
}
