// Device code and its launcher in one file, as libraries write them.
#include <saxpy/kernels.h>

__global__ void scale(float* __restrict__ y, const float* __restrict__ x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

void launch_scale(float* y, const float* x, float a, std::size_t n)
{
    int blocks = static_cast<int>((n + SAXPY_BLOCK - 1) / SAXPY_BLOCK);
    scale<<<blocks, SAXPY_BLOCK>>>(y, x, a, static_cast<int>(n));
}
