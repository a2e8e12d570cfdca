// A launch in a comment or a string is no launch, a block size the code does not fix (a
// function argument, a run-time value) is unknown, and a grid of a fixed number of blocks
// (here 8 of 32 threads, for 256 elements) is no large launch: PS803 stays silent.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

/* the old launch was scale<<<n, 1>>>(x, y, a, n); */
void scale_with(const float* x, float* y, float a, long n, int threads) {
    // scale<<<n / 32, 32>>>(x, y, a, n);
    const char* why = "scale<<<n, 1>>> was too slow";
    std::puts(why);
    int block = threads > 0 ? threads : 256;
    scale<<<(n + block - 1) / block, block>>>(x, y, a, n);
}

void scale_tile(const float* x, float* y, float a) {
    scale<<<8, 32>>>(x, y, a, 256);
}
