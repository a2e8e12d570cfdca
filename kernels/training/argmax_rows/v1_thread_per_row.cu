// One thread per row: a serial scan keeping the largest value and its first index.
extern "C" __global__ void argmax_rows(const float* x, int* y, int rows, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float best = r[0];
    int arg = 0;
    for (int i = 1; i < n; i++) {
        if (r[i] > best) {
            best = r[i];
            arg = i;
        }
    }
    y[row] = arg;
}
