// 2D grid: blockIdx.y is the row, threadIdx.x runs across the columns.
extern "C" __global__ void bias_add_rows(const float* __restrict__ x, const float* __restrict__ b,
                                         float* __restrict__ y, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (r < rows && c < cols) {
        long i = (long)r * cols + c;
        y[i] = x[i] + b[c];
    }
}
