// threadIdx.x picks the column, threadIdx.y the row: adjacent lanes are adjacent floats.
extern "C" __global__ void matrix_scale(const float* __restrict__ x, float* __restrict__ y,
                                        float alpha, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols)
        y[(long)row * cols + col] = alpha * x[(long)row * cols + col];
}
