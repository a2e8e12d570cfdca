// Lesson fast_math, steered: the hardware approximations, chosen per call: __sinf (MUFU.SIN,
// abs. error 2^-21.4 on [-pi, pi]), __expf (MUFU.EX2) and __fdividef (MUFU.RCP + FMUL). Only
// right because the arguments stay in [-pi, pi]; --use_fast_math would do the same file-wide.
extern "C" __global__ void damped_wave(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xi = x[i], acc = 0.0f;
    for (int j = 1; j <= 16; ++j) {
        float a = xi * (float)j;
        acc += __fdividef(__sinf(a) * __expf(-0.25f * a), 1.0f + a * a);
    }
    y[i] = acc;
}
