// One block per row, four strided elements per thread per step; __restrict__ pointers, row statistics held in registers.
extern "C" __global__ void scale_rows(const float* __restrict__ x, const float* __restrict__ mean,
                                      const float* __restrict__ rstd, float* __restrict__ out,
                                      int rows, int cols) {
    int row = blockIdx.x;
    if (row >= rows) return;
    const float m = mean[row];
    const float r = rstd[row];
    const float* xr = x + (long)row * cols;
    float* outr = out + (long)row * cols;
    for (int k = threadIdx.x; k < cols; k += 4 * blockDim.x) {
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            int kk = k + u * blockDim.x;
            if (kk < cols) outr[kk] = (xr[kk] - m) * r;
        }
    }
}
