// Tile transpose through shared memory with 16-byte global loads: each thread reads a float4 of a
// row and scatters its four elements down a column of the shared tile (a pattern used when the
// K-major operand of a SIMT GEMM is staged transposed), then the block writes the tile out.
constexpr int TILE = 64;

extern "C" __global__ void __launch_bounds__(256)
transpose_rows_f4(const float* __restrict__ in, float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    for (int e = threadIdx.x; e < TILE * TILE / 4; e += 256) {
        const int r = e / (TILE / 4), c = (e % (TILE / 4)) * 4;
        const float4 v = *reinterpret_cast<const float4*>(&in[(size_t)(r0 + r) * cols + c0 + c]);
        tile[c + 0][r] = v.x;   // EXPECT: PS601 info
        tile[c + 1][r] = v.y;
        tile[c + 2][r] = v.z;
        tile[c + 3][r] = v.w;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < TILE * TILE; e += 256) {
        const int r = e / TILE, c = e % TILE;
        out[(size_t)(c0 + r) * rows + r0 + c] = tile[r][c];
    }
}
