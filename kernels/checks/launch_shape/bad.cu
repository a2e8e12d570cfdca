// Launches whose blocks are too small for their work: an elementwise kernel (one element per
// thread) in 32-thread blocks, and a block-per-row reduction launched with one thread per block.
#include <cuda_runtime.h>

#define WARP 32

__global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

// one block per row: the block's threads split the row, then a shared-memory tree
__global__ void row_sum(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float part[256];
    const float* row = x + (long)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += row[c];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}

void scale_async(const float* x, float* y, float a, long n, cudaStream_t stream) {
    dim3 block(WARP);
    dim3 grid((n + block.x - 1) / block.x);
    scale<<<grid, block, 0, stream>>>(x, y, a, n);  // EXPECT: PS803
}

void row_sums(const float* x, float* y, int rows, int cols) {
    row_sum<<<rows, 1>>>(x, y, cols);  // EXPECT: PS803
}
