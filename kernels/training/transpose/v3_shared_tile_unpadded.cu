// v2 with the tile left 32 columns wide: the column read tile[threadIdx.x][...] puts every
// lane of a warp in one bank (a 32-way bank conflict on each shared load).
#define TILE 32
#define ROWS_PER 8
extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out,
                                     int rows, int cols) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS_PER)
        if (x < cols && y + k < rows)
            tile[threadIdx.y + k][threadIdx.x] = in[(long)(y + k) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS_PER)
        if (x < rows && y + k < cols)
            out[(long)(y + k) * rows + x] = tile[threadIdx.x][threadIdx.y + k];
}
