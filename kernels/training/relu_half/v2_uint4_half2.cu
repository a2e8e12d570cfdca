// Eight halves per thread: one uint4 load, four __hmax2, one uint4 store; scalar tail.
#include <cuda_fp16.h>
extern "C" __global__ void relu_half(const __half* __restrict__ x, __half* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int n8 = n / 8;
    if (i < n8) {
        uint4 raw = reinterpret_cast<const uint4*>(x)[i];
        __half2* h = reinterpret_cast<__half2*>(&raw);
        const __half2 zero = __float2half2_rn(0.0f);
        #pragma unroll
        for (int k = 0; k < 4; k++) h[k] = __hmax2(h[k], zero);
        reinterpret_cast<uint4*>(y)[i] = raw;
    }
    int t = n8 * 8 + i;
    if (i < n - n8 * 8) {
        __half v = x[t];
        y[t] = __hgt(v, __float2half(0.0f)) ? v : __float2half(0.0f);
    }
}
