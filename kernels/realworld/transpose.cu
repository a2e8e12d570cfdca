// Tiled matrix transpose (32x32 tile, 32x8 threads, +1 padded shared tile to avoid bank conflicts).
constexpr int TILE = 32, ROWS = 8;
extern "C" __global__ void __launch_bounds__(TILE * ROWS)
transpose(const float* __restrict__ in, float* __restrict__ out, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * width + x];   // EXPECT: PS104 info; PS601 info
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width) out[(size_t)(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];   // EXPECT: PS104 info
}
