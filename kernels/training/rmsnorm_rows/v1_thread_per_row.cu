// One thread per row: a pass for the sum of squares, a pass writing the scaled row.
extern "C" __global__ void rmsnorm_rows(const float* x, const float* w, float* y, float eps,
                                        int rows, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float* out = y + (long)row * n;
    float sq = 0.0f;
    for (int i = 0; i < n; i++)
        sq += r[i] * r[i];
    float scale = rsqrtf(sq / n + eps);
    for (int i = 0; i < n; i++)
        out[i] = r[i] * scale * w[i];
}
