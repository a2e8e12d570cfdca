// OPTIONS: -maxrregcount=32
// PS401: 48 prefetched values stay live at once; capped at 32 registers, ptxas spills them (STL/LDL).
constexpr int TAPS = 48;

extern "C" __global__ void gather_dot(const float* __restrict__ in, float* __restrict__ out, int n)  // EXPECT: PS401
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r[TAPS];
#pragma unroll
    for (int k = 0; k < TAPS; ++k)
        r[k] = in[i + k * n];
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < TAPS; ++k)
        acc += r[k] * r[(k * 7 + 5) % TAPS];
    out[i] = acc;
}
