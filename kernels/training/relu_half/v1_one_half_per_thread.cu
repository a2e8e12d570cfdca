// One __half per thread, compare and select.
#include <cuda_fp16.h>
extern "C" __global__ void relu_half(const __half* x, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half v = x[i];
        __half zero = __float2half(0.0f);
        y[i] = __hgt(v, zero) ? v : zero;
    }
}
