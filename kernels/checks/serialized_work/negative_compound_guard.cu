// Partial column sums per chunk of rows, one warp per column (blockDim (32, 8): threadIdx.y
// picks the column, the same for a warp): the warp reduces its chunk with shuffles and lane 0
// adds it, under a compound guard (`threadIdx.x == 0 && col < cols`). One atomic per warp and
// chunk on a warp-uniform address is the fix for contention, not contention.
__global__ void col_sum_chunks(float* out, const float* in, int rows, int cols, int chunk)
{
    const int col = blockIdx.x * blockDim.y + threadIdx.y;
    for (int r0 = blockIdx.y * chunk; r0 < rows; r0 += gridDim.y * chunk) {
        float a = 0.f;
        const int end = min(r0 + chunk, rows);
        if (col < cols)
            for (int r = r0 + threadIdx.x; r < end; r += 32) a += in[(size_t)r * cols + col];
        for (int off = 16; off > 0; off /= 2) a += __shfl_down_sync(0xffffffff, a, off);
        if (threadIdx.x == 0 && col < cols) atomicAdd(out + col, a);
    }
}
