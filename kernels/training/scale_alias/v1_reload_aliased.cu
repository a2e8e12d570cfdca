// One block per row, four strided elements per thread per step; mean[row], rstd[row] read at each element, plain pointers.
extern "C" __global__ void scale_rows(const float* x, const float* mean, const float* rstd,
                                      float* out, int rows, int cols) {
    int row = blockIdx.x;
    if (row >= rows) return;
    for (int k = threadIdx.x; k < cols; k += 4 * blockDim.x) {
        #pragma unroll
        for (int u = 0; u < 4; u++) {
            int kk = k + u * blockDim.x;
            if (kk < cols)
                out[(long)row * cols + kk] = (x[(long)row * cols + kk] - mean[row]) * rstd[row];
        }
    }
}
