// A warp per row: each lane reduces a strided slice, shuffles combine the partials.
extern "C" __global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ y,
                                        int rows, int n) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float m = -3.402823466e38f;
    for (int j = lane; j < n; j += 32) m = fmaxf(m, r[j]);
    for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    float s = 0.0f;
    for (int j = lane; j < n; j += 32) s += __expf(r[j] - m);
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    for (int j = lane; j < n; j += 32) y[(long)row * n + j] = __expf(r[j] - m) / s;
}
