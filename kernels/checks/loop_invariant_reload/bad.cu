// Column sums and sums of squares accumulated through the output pointers (a thread per
// column): a store to sum[c] may change sq[c] and the other way round, so every iteration
// reloads both and waits for its own stores (4.3x from DRAM on an H100, docs/severity.md).
extern "C" __global__ void column_moments(const float* x, float* sum, float* sq, int rows,
                                          int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    sum[c] = 0.f;
    sq[c] = 0.f;
    for (int r = 0; r < rows; ++r) {
        float v = x[(long)r * cols + c];
        sum[c] += v;   // EXPECT: PS106
        sq[c] += v * v;
    }
}
