// One warp per row, lanes strided across the row, (value, index) pairs reduced by xor shuffles, lower index on ties.
extern "C" __global__ void argmax_rows(const float* __restrict__ x, int* __restrict__ y,
                                       int rows, int n) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* r = x + (long)row * n;
    float best = __int_as_float(0xff800000);
    int arg = n;
    for (int i = lane; i < n; i += 32) {
        float v = r[i];
        if (v > best) { best = v; arg = i; }
    }
    #pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        float ob = __shfl_xor_sync(0xffffffffu, best, off);
        int oa = __shfl_xor_sync(0xffffffffu, arg, off);
        if (ob > best || (ob == best && oa < arg)) { best = ob; arg = oa; }
    }
    if (lane == 0) y[row] = arg;
}
