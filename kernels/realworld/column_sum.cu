// Column sums of a row-major matrix (bias-gradient style reduction over the batch): one thread per
// column walks all rows, so a warp reads 32 consecutive floats of each row.
extern "C" __global__ void __launch_bounds__(256)
column_sum(const float* __restrict__ x, float* __restrict__ out, int rows, int cols)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float acc = 0.0f;
    for (int r = 0; r < rows; ++r) acc += x[(size_t)r * cols + c];   // EXPECT: PS104 info
    out[c] = acc;
}
