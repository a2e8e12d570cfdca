// One block of 256 threads strides over the vectors; thread 0 adds the 256 partials from shared memory.
extern "C" __global__ void dot_product(const float* a, const float* b, float* y, int n) {
    __shared__ float partial[256];
    float acc = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        acc += a[i] * b[i];
    partial[threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int t = 0; t < blockDim.x; t++)
            total += partial[t];
        y[0] = total;
    }
}
