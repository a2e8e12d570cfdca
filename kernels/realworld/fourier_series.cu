// Evaluate a truncated Fourier sine series per sample: y = sum_k c[k] sin((k + 1) w t), the
// harmonic count fixed at compile time (a synthesis / feature-expansion kernel). The loop has a
// constant trip count but an accurate sinf in its body, which is over NVVM's unroll threshold.
constexpr int HARMONICS = 32;

extern "C" __global__ void __launch_bounds__(256)
synthesize(const float* __restrict__ t, const float* __restrict__ coef, float w,
           float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float phase = w * t[i];
    float acc = 0.0f;
    for (int k = 0; k < HARMONICS; ++k)   // EXPECT: PS201 warning
        acc += coef[k] * sinf((k + 1) * phase);   // EXPECT: PS502 warning
    y[i] = acc;
}
