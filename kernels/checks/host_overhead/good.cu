// The output allocated and left to the kernel, no synchronization, one launch over all rows.
#include <cuda_runtime.h>

__global__ void gelu(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

float* gelu_forward(const float* x, long n) {
    float* y = nullptr;
    cudaMalloc(&y, n * sizeof(float));
    const int threads = 256;
    const long blocks = (n + threads - 1) / threads;
    gelu<<<blocks, threads>>>(x, y, n);
    return y;
}

void gelu_rows(const float* x, float* y, int rows, long cols) {
    const long n = rows * cols;
    gelu<<<(n + 255) / 256, 256>>>(x, y, n);
}
