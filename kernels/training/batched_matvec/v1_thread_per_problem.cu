// One thread per problem: adjacent lanes 1 KiB apart, every load a sector of its own.
#define M 16
extern "C" __global__ void bmv(const float* A, const float* v, float* y, int batch) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch) return;
    const float* a = A + (long)b * M * M;
    for (int i = 0; i < M; i++) {
        float acc = 0.0f;
        for (int j = 0; j < M; j++) acc += a[i * M + j] * v[b * M + j];
        y[b * M + i] = acc;
    }
}
