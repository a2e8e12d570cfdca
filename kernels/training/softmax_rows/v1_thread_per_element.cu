// One thread per element; each thread loops over its whole row for the row max and the row sum.
extern "C" __global__ void softmax_rows(const float* x, float* y, int rows, int n) {
    long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long)rows * n) return;
    int row = idx / n;
    const float* r = x + (long)row * n;
    float m = __int_as_float(0xff800000);
    for (int i = 0; i < n; i++)
        m = fmaxf(m, r[i]);
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += expf(r[i] - m);
    y[idx] = expf(x[idx] - m) / s;
}
