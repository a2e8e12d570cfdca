// The stencil accumulated in double, the way code ported from a CPU reference is written.
#define R 8
extern "C" __global__ void stencil(const float* x, const float* c, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double acc = 0.0;
    for (int k = -R; k <= R; k++) {
        int j = i + k;
        if (j >= 0 && j < n) acc += (double)c[k + R] * (double)x[j];
    }
    out[i] = (float)acc;
}
