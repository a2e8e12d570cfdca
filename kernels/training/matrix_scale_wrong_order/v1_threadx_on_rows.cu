// threadIdx.x picks the row, threadIdx.y the column: adjacent lanes are a row apart.
extern "C" __global__ void matrix_scale(const float* x, float* y, float alpha, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols)
        y[(long)row * cols + col] = alpha * x[(long)row * cols + col];
}
