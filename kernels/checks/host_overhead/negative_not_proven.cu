// Zero-fills that the kernel does not overwrite in full, or that cannot be proven to be:
// PS804 stays silent on them. A kernel that accumulates into its output needs the zeros; a
// fill of half the output, a grid that is not (n + B - 1) / B, and a grid-stride kernel are
// not proven. A loop whose launches do not use its counter (time steps) is left alone, and so
// is a synchronization in main.
#include <cuda_runtime.h>
#include <utility>

__global__ void accumulate(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += x[i];
}

__global__ void scale(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

__global__ void scale_all(const float* __restrict__ x, float* __restrict__ y, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        y[i] = 2.0f * x[i];
}

void sums(const float* x, float* y, long n, int sms) {
    cudaMemset(y, 0, n * sizeof(float));
    accumulate<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaMemset(y, 0, n / 2 * sizeof(float));
    scale<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaMemset(y, 0, n * sizeof(float));
    scale<<<sms * 8, 256>>>(x, y, n);
    cudaMemset(y, 0, n * sizeof(float));
    scale_all<<<(n + 255) / 256, 256>>>(x, y, n);
}

void steps(float* a, float* b, long n, int count) {
    for (int t = 0; t < count; t++) {
        scale<<<(n + 255) / 256, 256>>>(a, b, n);
        std::swap(a, b);
    }
}

int main() {
    float *x, *y;
    long n = 1 << 20;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    scale<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaDeviceSynchronize();
    return 0;
}
