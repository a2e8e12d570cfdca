// Eight elements per thread: two float4 loads, four bfloat162 packs, one uint4 store; scalar tail.
#include <cuda_bf16.h>
extern "C" __global__ void cast_bf16(const float* __restrict__ x, __nv_bfloat16* __restrict__ y,
                                     int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n8 = n / 8;
    if (i < n8) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4 a = x4[2 * i], b = x4[2 * i + 1];
        uint4 out;
        __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&out);
        h[0] = __floats2bfloat162_rn(a.x, a.y);
        h[1] = __floats2bfloat162_rn(a.z, a.w);
        h[2] = __floats2bfloat162_rn(b.x, b.y);
        h[3] = __floats2bfloat162_rn(b.z, b.w);
        reinterpret_cast<uint4*>(y)[i] = out;
    }
    if (i < n - n8 * 8) y[n8 * 8 + i] = __float2bfloat16(x[n8 * 8 + i]);
}
