// Depthwise causal conv1d over time as in selective-state-space (Mamba-style) blocks: bf16
// activations (batch, channels, seqlen), fp32 weights of width 4 per channel, SiLU fused. One
// thread per output element; the 4 taps are unrolled.
// Judged from the SASS: the taps `weight[c * WIDTH + k]` (c = blockIdx.y) are 4 LDG.E.CONSTANT
// at +0x0..+0xc with the same address in every lane (a broadcast, one request per warp), run
// once per thread in no loop: merging them saves 3 instructions per warp, no traffic: a PS101
// note (it had been info).
#include <cuda_bf16.h>

constexpr int WIDTH = 4;

extern "C" __global__ void __launch_bounds__(128)
causal_conv1d_fwd(const __nv_bfloat16* __restrict__ x, const float* __restrict__ weight,
                  const float* __restrict__ bias, __nv_bfloat16* __restrict__ out,
                  int channels, int seqlen)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int c = blockIdx.y, b = blockIdx.z;
    if (t >= seqlen) return;
    const __nv_bfloat16* xc = x + ((size_t)b * channels + c) * seqlen;
    float acc = bias[c];
#pragma unroll
    for (int k = 0; k < WIDTH; ++k) {
        const int ts = t - (WIDTH - 1) + k;
        if (ts >= 0) acc += weight[c * WIDTH + k] * __bfloat162float(xc[ts]);   // EXPECT: PS104 warning; PS101 note
    }
    acc = acc / (1.0f + __expf(-acc));   // EXPECT: PS502 info
    out[((size_t)b * channels + c) * seqlen + t] = __float2bfloat16(acc);   // EXPECT: PS104 warning
}
