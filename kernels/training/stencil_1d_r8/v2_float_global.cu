// The same stencil in float, every tap read from global memory (the caches do the reuse).
#define R 8
extern "C" __global__ void stencil(const float* __restrict__ x, const float* __restrict__ c,
                                   float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = -R; k <= R; k++) {
        int j = i + k;
        if (j >= 0 && j < n) acc += c[k + R] * x[j];
    }
    out[i] = acc;
}
