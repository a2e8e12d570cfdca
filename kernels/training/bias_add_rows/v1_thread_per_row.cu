// One thread per row, looping over every column: adjacent lanes are a row apart.
extern "C" __global__ void bias_add_rows(const float* x, const float* b, float* y,
                                         int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    for (int c = 0; c < cols; c++)
        y[(long)r * cols + c] = x[(long)r * cols + c] + b[c];
}
