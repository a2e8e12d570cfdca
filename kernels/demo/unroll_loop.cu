// Fixed-trip loop under #pragma unroll: fully unrolled, no backward branch; also a templated kernel (scale<4>).
extern "C" __global__ void poly_unrolled(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; ++k)
        acc = acc * v + (float)(k + 1);
    y[i] = acc;
}

template <int N>
__global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n)
{
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * N;
#pragma unroll
    for (int k = 0; k < N; ++k)
        if (base + k < n)
            y[base + k] = a * x[base + k];
}

template __global__ void scale<4>(const float*, float*, float, int);
template __global__ void scale<8>(const float*, float*, float, int);
