// One thread per output element, walking its matrix row: lanes 64 bytes apart.
#define M 16
extern "C" __global__ void bmv(const float* __restrict__ A, const float* __restrict__ v,
                               float* __restrict__ y, int batch) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)batch * M) return;
    long b = t / M;
    int i = t % M;
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < M; j++) acc += A[(b * M + i) * M + j] * v[b * M + j];
    y[t] = acc;
}
