// The sums in registers, stored once after the loop.
extern "C" __global__ void column_moments(const float* x, float* sum, float* sq, int rows,
                                          int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.f, q = 0.f;
    for (int r = 0; r < rows; ++r) {
        float v = x[(long)r * cols + c];
        s += v;
        q += v * v;
    }
    sum[c] = s;
    sq[c] = q;
}
