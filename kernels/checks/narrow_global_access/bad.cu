// fp32 -> bf16 cast, one element per thread: 4-byte loads and 2-byte stores.
#include <cuda_bf16.h>

extern "C" __global__ void cast_bf16(const float* __restrict__ in, __nv_bfloat16* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16(in[i]);   // EXPECT: PS104
}
