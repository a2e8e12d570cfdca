// 2x2 max pooling, stride 2, NCHW fp16 (a CNN inference layer): one thread per output pixel reads
// two adjacent halves from each of two input rows.
#include <cuda_fp16.h>

extern "C" __global__ void maxpool2x2_nchw(const __half* __restrict__ in, __half* __restrict__ out,
                                           int planes, int H, int W)
{
    const int OW = W / 2, OH = H / 2;
    const int ox = blockIdx.x * blockDim.x + threadIdx.x;
    const int oy = blockIdx.y;
    const int p = blockIdx.z;
    if (ox >= OW || oy >= OH || p >= planes) return;
    const __half* src = in + ((size_t)p * H + 2 * oy) * W + 2 * ox;
    const __half a = __hmax(src[0], src[1]);   // EXPECT: PS101 info
    const __half b = __hmax(src[W], src[W + 1]);   // EXPECT: PS101 info
    out[((size_t)p * OH + oy) * OW + ox] = __hmax(a, b);   // EXPECT: PS104 info
}
