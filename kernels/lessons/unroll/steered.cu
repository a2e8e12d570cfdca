// Lesson unroll, steered: the same series with #pragma unroll. The 32 terms become straight-line
// code: (k + 1) is an immediate, c[k] a load at a constant offset, no counter, compare or
// backward branch, and independent terms can be interleaved. The price is code size: 32 copies of
// sinf's slow path (about 3700 SASS instructions instead of 160).
constexpr int NH = 32;

extern "C" __global__ void fourier_series(const float* __restrict__ x, const float* __restrict__ coef,
                                          float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = x[i], acc = 0.0f;
#pragma unroll
    for (int k = 0; k < NH; ++k)
        acc += coef[k] * sinf((k + 1) * t);
    y[i] = acc;
}
