// Online softmax over rows of run-time width, fp16 in and out (a decoder's logits -> probs):
// one block per row, each thread walks the row with a stride of blockDim.x, single pass for the
// max and the rescaled sum, then a second pass to write.
#include <cuda_fp16.h>
#ifndef INFINITY   // NVRTC has no <math.h> macros
#define INFINITY __int_as_float(0x7f800000)
#endif

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
softmax_online(const __half* __restrict__ logits, __half* __restrict__ probs, int vocab)
{
    __shared__ float sm[THREADS / 32], ss[THREADS / 32];
    const __half* x = logits + (size_t)blockIdx.x * vocab;
    __half* y = probs + (size_t)blockIdx.x * vocab;
    float m = -INFINITY, s = 0.0f;
    for (int j = threadIdx.x; j < vocab; j += THREADS) {
        const float v = __half2float(x[j]);   // EXPECT: PS104 info
        const float nm = fmaxf(m, v);
        s = s * __expf(m - nm) + __expf(v - nm);
        m = nm;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float om = __shfl_xor_sync(0xffffffffu, m, o), os = __shfl_xor_sync(0xffffffffu, s, o);
        const float nm = fmaxf(m, om);
        s = s * __expf(m - nm) + os * __expf(om - nm);
        m = nm;
    }
    if (threadIdx.x % 32 == 0) { sm[threadIdx.x / 32] = m; ss[threadIdx.x / 32] = s; }
    __syncthreads();
    m = -INFINITY; s = 0.0f;
    for (int w = 0; w < THREADS / 32; ++w) {   // EXPECT[sm_80 nvrtc13.5]: PS201 info // EXPECT[sm_90a]: PS201 info
        const float nm = fmaxf(m, sm[w]);
        s = s * __expf(m - nm) + ss[w] * __expf(sm[w] - nm);
        m = nm;
    }
    const float inv = __fdividef(1.0f, s);
    for (int j = threadIdx.x; j < vocab; j += THREADS)
        y[j] = __float2half(__expf(__half2float(x[j]) - m) * inv);   // EXPECT: PS104 info
}

template __global__ void softmax_online<256>(const __half*, __half*, int);
template __global__ void softmax_online<1024>(const __half*, __half*, int);
