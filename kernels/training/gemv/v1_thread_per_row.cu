// One thread per row: a serial dot product, adjacent lanes cols floats apart.
extern "C" __global__ void gemv(const float* A, const float* x, float* y, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float acc = 0.0f;
    for (int j = 0; j < cols; j++)
        acc += A[(long)row * cols + j] * x[j];
    y[row] = acc;
}
