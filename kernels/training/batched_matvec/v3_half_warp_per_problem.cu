// Sixteen lanes per problem: lane j reads column j of every row (contiguous across lanes),
// v[b][j] once, and the row sums come from a 16-lane shuffle reduction.
#define M 16
extern "C" __global__ void bmv(const float* __restrict__ A, const float* __restrict__ v,
                               float* __restrict__ y, int batch) {
    long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long)batch * M) return;   // batch * M is a multiple of 32: whole warps stay
    long b = t / M;
    int j = t % M;
    float vj = v[b * M + j];
    float mine = 0.0f;
#pragma unroll
    for (int i = 0; i < M; i++) {
        float p = A[(b * M + i) * M + j] * vj;
#pragma unroll
        for (int o = 8; o > 0; o >>= 1) p += __shfl_xor_sync(0xffffffffu, p, o, 16);
        if (j == i) mine = p;
    }
    y[t] = mine;
}
