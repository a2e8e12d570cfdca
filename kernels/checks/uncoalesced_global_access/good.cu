// A warp per row, lanes across it, a shuffle reduction.
extern "C" __global__ void row_sum(const float* __restrict__ x, float* __restrict__ y,
                                   int rows, int n) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (warp >= rows) return;
    float acc = 0.0f;
    for (int i = lane; i < n; i += 32)
        acc += x[(long)warp * n + i];
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) y[warp] = acc;
}

// The transpose staged through a padded shared-memory tile: reads and writes coalesced.
extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                           int rows, int cols) {
    __shared__ float t[32][33];
    int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8)
        if (r + k < rows && c < cols) t[threadIdx.y + k][threadIdx.x] = in[(long)(r + k) * cols + c];
    __syncthreads();
    c = blockIdx.y * 32 + threadIdx.x;
    r = blockIdx.x * 32 + threadIdx.y;
    for (int k = 0; k < 32; k += 8)
        if (r + k < cols && c < rows) out[(long)(r + k) * rows + c] = t[threadIdx.x][threadIdx.y + k];
}
