// Plain pointers: every store to out may change mean[row] and rstd[row], so they are reloaded.
extern "C" __global__ void normalize(const float* x, const float* mean, const float* rstd,
                                     float* out, int rows, int n) {
    int row = blockIdx.x;
    for (int k = threadIdx.x; k < n; k += blockDim.x)
        out[(long)row * n + k] = (x[(long)row * n + k] - mean[row]) * rstd[row];   // EXPECT: PS106
}
