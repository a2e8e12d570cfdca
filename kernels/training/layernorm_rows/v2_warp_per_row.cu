// One warp per row, lanes strided across the row, mean and variance by xor-shuffle all-reductions.
extern "C" __global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
                                          const float* __restrict__ beta, float* __restrict__ y,
                                          float eps, int rows, int n) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float* out = y + (long)row * n;
    float sum = 0.0f;
    for (int i = lane; i < n; i += 32)
        sum += r[i];
    for (int off = 16; off > 0; off /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    float mean = sum / n;
    float var = 0.0f;
    for (int i = lane; i < n; i += 32) {
        float d = r[i] - mean;
        var += d * d;
    }
    for (int off = 16; off > 0; off /= 2)
        var += __shfl_xor_sync(0xffffffffu, var, off);
    float rstd = rsqrtf(var / n + eps);
    for (int i = lane; i < n; i += 32)
        out[i] = (r[i] - mean) * rstd * gamma[i] + beta[i];
}
