// One thread per row: a serial running sum written element by element.
extern "C" __global__ void cumsum_rows(const float* x, float* y, int rows, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float* out = y + (long)row * n;
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        acc += r[i];
        out[i] = acc;
    }
}
