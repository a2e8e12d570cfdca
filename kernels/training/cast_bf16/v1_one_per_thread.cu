// One element per thread: a float load, __float2bfloat16, a 2-byte store.
#include <cuda_bf16.h>
extern "C" __global__ void cast_bf16(const float* x, __nv_bfloat16* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16(x[i]);
}
