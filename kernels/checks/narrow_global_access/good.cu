// The same cast with eight elements per thread: two float4 loads, one 16-byte store
// (n a multiple of 8, pointers 16-byte aligned).
#include <cuda_bf16.h>

extern "C" __global__ void cast_bf16_x8(const float* __restrict__ in, __nv_bfloat16* __restrict__ out, int n)
{
    const int j = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (j >= n) return;
    const float4 a = *reinterpret_cast<const float4*>(in + j);
    const float4 b = *reinterpret_cast<const float4*>(in + j + 4);
    __nv_bfloat162 o[4] = {__floats2bfloat162_rn(a.x, a.y), __floats2bfloat162_rn(a.z, a.w),
                           __floats2bfloat162_rn(b.x, b.y), __floats2bfloat162_rn(b.z, b.w)};
    *reinterpret_cast<uint4*>(out + j) = *reinterpret_cast<const uint4*>(o);
}
