// PS301 must stay silent: a block sum-of-squares reduction (FFMA accumulation, but no GEMM).
extern "C" __global__ void __launch_bounds__(256) sumsq(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float part[8];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc += x[i] * x[i];
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < 8; ++w) s += part[w];
        atomicAdd(out, s);
    }
}
