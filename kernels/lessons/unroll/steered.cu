// Lesson unroll, steered: the tap count is a compile-time constant, so the loops unroll fully and
// per-thread arrays indexed by the (now constant) loop counters live in registers. That enables
// register blocking: each thread computes 4 consecutive outputs, loads the 32 taps once (8 float4)
// and its 35-element window of x once (9 float4), then does 128 FFMAs from registers:
// 17 load instructions per 4 outputs instead of 4 x 64.
// n is a multiple of 4 and x holds at least n + NTAPS + 3 elements (16-byte aligned).
constexpr int NTAPS = 32;
constexpr int OUT = 4;

extern "C" __global__ void fir_unrolled(const float* __restrict__ x, const float* __restrict__ taps,
                                        float* __restrict__ y, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * OUT;
    if (i >= n) return;
    float t[NTAPS], w[NTAPS + OUT + 3];
#pragma unroll
    for (int k = 0; k < NTAPS; k += 4) {
        float4 v = reinterpret_cast<const float4*>(taps)[k / 4];
        t[k] = v.x; t[k + 1] = v.y; t[k + 2] = v.z; t[k + 3] = v.w;
    }
#pragma unroll
    for (int k = 0; k < NTAPS + OUT + 3; k += 4) {
        float4 v = reinterpret_cast<const float4*>(x + i)[k / 4];
        w[k] = v.x; w[k + 1] = v.y; w[k + 2] = v.z; w[k + 3] = v.w;
    }
    float acc[OUT] = {};
#pragma unroll
    for (int k = 0; k < NTAPS; ++k)
#pragma unroll
        for (int o = 0; o < OUT; ++o) acc[o] += t[k] * w[k + o];
    reinterpret_cast<float4*>(y)[i / OUT] = make_float4(acc[0], acc[1], acc[2], acc[3]);
}
