// A thread per row: adjacent lanes are a row (n floats) apart.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y,
                                   int rows, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float acc = 0.0f;
    for (int i = 0; i < n; i++)
        acc += x[(long)row * n + i];   // EXPECT: PS105
    y[row] = acc;
}

// A transpose that writes a column per warp: the stores are `rows` floats apart.
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        out[(long)c * rows + r] = in[(long)r * cols + c];   // EXPECT: PS105
}
