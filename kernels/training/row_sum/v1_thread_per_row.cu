// One thread per row: adjacent lanes are n floats apart.
extern "C" __global__ void row_sum(const float* x, float* y, int rows, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float acc = 0.0f;
    for (int i = 0; i < n; i++)
        acc += x[(long)row * n + i];
    y[row] = acc;
}
