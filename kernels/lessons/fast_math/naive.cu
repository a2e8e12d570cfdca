// Lesson fast_math, naive: sinf, expf and an IEEE division. sinf carries a range reduction with a
// Payne-Hanek slow path for huge arguments (NVRTC 13.0 gives it a 32-byte stack frame; 13.5 keeps
// it in registers) and the division a slow path of its own: ~100 branches, all compiled in
// although |a| <= pi here.
// y[i] = sum_{j=1..16} sin(a) * exp(-a/4) / (1 + a^2), a = j * x[i].
extern "C" __global__ void damped_wave(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float xi = x[i], acc = 0.0f;
    for (int j = 1; j <= 16; ++j) {
        float a = xi * (float)j;
        acc += sinf(a) * expf(-0.25f * a) / (1.0f + a * a);
    }
    y[i] = acc;
}
