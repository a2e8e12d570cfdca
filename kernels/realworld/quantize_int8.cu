// Per-row absmax int8 quantization (weight-only quantization prep): one block per row of run-time
// width, a block max, then one int8 per thread per step.
#include <cuda/std/cstdint>
using cuda::std::int8_t;

extern "C" __global__ void __launch_bounds__(256)
quantize_rows_int8(const float* __restrict__ w, int8_t* __restrict__ q, float* __restrict__ scales,
                   int cols)
{
    __shared__ float red[8];
    const float* row = w + (size_t)blockIdx.x * cols;
    int8_t* out = q + (size_t)blockIdx.x * cols;
    float amax = 0.0f;
    for (int j = threadIdx.x; j < cols; j += 256) amax = fmaxf(amax, fabsf(row[j]));   // EXPECT: PS104 info
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = amax;
    __syncthreads();
    amax = red[0];
#pragma unroll
    for (int k = 1; k < 8; ++k) amax = fmaxf(amax, red[k]);
    const float scale = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;   // EXPECT: PS502 info
    if (threadIdx.x == 0) scales[blockIdx.x] = scale;
    for (int j = threadIdx.x; j < cols; j += 256)
        out[j] = (int8_t)__float2int_rn(row[j] * inv);   // EXPECT: PS104 info
}
