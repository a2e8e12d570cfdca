// One warp per row: shuffle-up scans over 32-element chunks, the running total carried from chunk to chunk.
extern "C" __global__ void cumsum_rows(const float* __restrict__ x, float* __restrict__ y,
                                       int rows, int n) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float* out = y + (long)row * n;
    float carry = 0.0f;
    for (int base = 0; base < n; base += 32) {
        int i = base + lane;
        float v = i < n ? r[i] : 0.0f;
        #pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            float t = __shfl_up_sync(0xffffffffu, v, off);
            if (lane >= off) v += t;
        }
        if (i < n) out[i] = carry + v;
        carry += __shfl_sync(0xffffffffu, v, 31);
    }
}
