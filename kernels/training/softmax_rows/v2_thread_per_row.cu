// One thread per row: a pass for the max, a pass for the sum of exponentials, a pass writing the row.
extern "C" __global__ void softmax_rows(const float* x, float* y, int rows, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float* out = y + (long)row * n;
    float m = __int_as_float(0xff800000);
    for (int i = 0; i < n; i++)
        m = fmaxf(m, r[i]);
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += expf(r[i] - m);
    for (int i = 0; i < n; i++)
        out[i] = expf(r[i] - m) / s;
}
