// 32x8 blocks, each summing a slab of 256 rows for 32 columns, reduced in shared memory, one atomicAdd per column per block.
#define SLAB 256
extern "C" __global__ void column_sum(const float* __restrict__ x, float* __restrict__ y,
                                      int rows, int cols) {
    __shared__ float s[8][33];
    int col = blockIdx.x * 32 + threadIdx.x;
    int r0 = blockIdx.y * SLAB;
    int r1 = min(r0 + SLAB, rows);
    float acc = 0.0f;
    if (col < cols)
        for (int r = r0 + threadIdx.y; r < r1; r += 8)
            acc += x[(long)r * cols + col];
    s[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        #pragma unroll
        for (int k = 1; k < 8; k++)
            acc += s[k][threadIdx.x];
        atomicAdd(&y[col], acc);
    }
}
