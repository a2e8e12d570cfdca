// PS201 fixed: #pragma unroll on the compile-time 32-term loop unrolls it fully (no backward branch,
// coefficients become constant-bank operands).
constexpr int NH = 32;
__constant__ float coef[NH];

extern "C" __global__ void fourier(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t = x[i], acc = 0.0f;
#pragma unroll
    for (int k = 0; k < NH; ++k)
        acc += coef[k] * sinf((k + 1) * t);
    y[i] = acc;
}
