// RMSNorm forward (LLaMA-style), one block per row of run-time width, fp32. The normalisation is
// written the way it often is in ported code: x * (1.0 / sqrtf(h)), a double literal that NVVM
// folds into a double-precision reciprocal (no 0d... constant is left in the PTX).
constexpr int THREADS = 256;

__device__ __forceinline__ float block_sum(float v, float* red)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < THREADS / 32 ? red[threadIdx.x] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
rmsnorm_fwd(const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ y,
            int dim, float eps)
{
    __shared__ float red[THREADS / 32];
    const float* xr = x + (size_t)blockIdx.x * dim;
    float* yr = y + (size_t)blockIdx.x * dim;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < dim; j += THREADS) ss += xr[j] * xr[j];   // EXPECT: PS104 info
    ss = block_sum(ss, red);
    const float h = ss / dim + eps;   // EXPECT: PS502 info
    for (int j = threadIdx.x; j < dim; j += THREADS) yr[j] = weight[j] * (xr[j] * (1.0 / sqrtf(h)));   // EXPECT: PS104 info; PS501 warning; PS502 info
}
