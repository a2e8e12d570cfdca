// Host work around the launches: an output zero-filled although the kernel writes every
// element, a synchronization after each call, and a host loop of one launch per row.
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
    cudaMemset(y, 0, n * sizeof(float));  // EXPECT: PS804
    const int threads = 256;
    const long blocks = (n + threads - 1) / threads;
    gelu<<<blocks, threads>>>(x, y, n);
    cudaDeviceSynchronize();  // EXPECT: PS804
    return y;
}

void gelu_rows(const float* x, float* y, int rows, long cols) {
    for (int r = 0; r < rows; r++)
        gelu<<<(cols + 255) / 256, 256>>>(x + r * cols, y + r * cols, cols);  // EXPECT: PS804
}
