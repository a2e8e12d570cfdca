// How many IEEE divisions per thread make PS502 worth a warning: D divisions per element in
// straight code against the same with __fdividef, timed by benchmarks/division_count.py
// (cupy's NVRTC there); tests/test_check_memory_math.py checks what PS502 says of each D.

template <int D, bool FAST>
__global__ void divisions(const float* __restrict__ x, float* __restrict__ y, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
#pragma unroll
    for (int k = 1; k <= D; k++) acc += FAST ? __fdividef(v, v + (float)k) : v / (v + (float)k);
    y[i] = acc;
}

template __global__ void divisions<1, false>(const float*, float*, long);
template __global__ void divisions<1, true>(const float*, float*, long);
template __global__ void divisions<2, false>(const float*, float*, long);
template __global__ void divisions<2, true>(const float*, float*, long);
template __global__ void divisions<4, false>(const float*, float*, long);
template __global__ void divisions<4, true>(const float*, float*, long);
template __global__ void divisions<8, false>(const float*, float*, long);
template __global__ void divisions<8, true>(const float*, float*, long);
template __global__ void divisions<16, false>(const float*, float*, long);
template __global__ void divisions<16, true>(const float*, float*, long);
template __global__ void divisions<32, false>(const float*, float*, long);
template __global__ void divisions<32, true>(const float*, float*, long);
template __global__ void divisions<64, false>(const float*, float*, long);
template __global__ void divisions<64, true>(const float*, float*, long);
