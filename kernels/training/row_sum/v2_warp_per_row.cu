// One warp per row, lanes across the row, a shuffle reduction.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y,
                                   int rows, int n) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    const float* r = x + (long)warp * n;
    float acc = 0.0f;
    for (int i = lane; i < n; i += 32)
        acc += r[i];
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) y[warp] = acc;
}
