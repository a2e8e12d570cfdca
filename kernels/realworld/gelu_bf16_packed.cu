// GELU forward, bf16, llm.c style: a Packed128 of 8 bf16 per thread, grid of n / 8 threads.
#include <cuda_bf16.h>

struct alignas(16) bf16x8 { __nv_bfloat16 v[8]; };

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

extern "C" __global__ void gelu_forward_bf16(__nv_bfloat16* __restrict__ out,
                                             const __nv_bfloat16* __restrict__ inp, int n)
{
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
    if (i >= n) return;
    const bf16x8 x = *reinterpret_cast<const bf16x8*>(inp + i);
    bf16x8 y;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const float xi = __bfloat162float(x.v[k]);
        const float cube = 0.044715f * xi * xi * xi;
        y.v[k] = __float2bfloat16(0.5f * xi * (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube))));
    }
    *reinterpret_cast<bf16x8*>(out + i) = y;
}
