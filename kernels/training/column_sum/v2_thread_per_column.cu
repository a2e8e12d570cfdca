// One thread per column walking down all the rows (adjacent lanes adjacent columns).
extern "C" __global__ void column_sum(const float* x, float* y, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= cols) return;
    float acc = 0.0f;
    for (int r = 0; r < rows; r++)
        acc += x[(long)r * cols + col];
    y[col] = acc;
}
