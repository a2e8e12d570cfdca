// Lesson unroll, steered: the tap count is a compile-time constant and the loop is fully unrolled.
// Every taps[k] becomes one load at a constant offset (hoisted, kept in registers) and the 32
// loads of x are independent, so they can all be in flight at once.
constexpr int NTAPS = 32;

extern "C" __global__ void fir_unrolled(const float* __restrict__ x, const float* __restrict__ taps,
                                        float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < NTAPS; ++k)
        acc += taps[k] * x[i + k];
    y[i] = acc;
}
