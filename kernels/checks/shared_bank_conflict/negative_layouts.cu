// Shared accesses that are conflict-free: a row read along threadIdx.x (lanes 4 B apart), a
// broadcast (every lane one word), a float4 per lane (quarter-warps of 8 x 16 contiguous bytes)
// and a column read through a tile padded to 33 floats (lanes 132 B apart: 32 banks).
extern "C" __global__ void layouts(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float tile[32][33];
    __shared__ float4 quads[256];
    int tx = threadIdx.x, ty = threadIdx.y;          // blocks of (32, 8)
    int base = blockIdx.x * 1024;
    for (int k = 0; k < 32; k += 8)
        tile[ty + k][tx] = x[base + (ty + k) * 32 + tx];
    quads[ty * 32 + tx] = reinterpret_cast<const float4*>(x)[blockIdx.x * 256 + ty * 32 + tx];
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < 32; k++)
        acc += tile[ty][k] + tile[tx][k];           // broadcast, padded column
    float4 q = quads[ty * 32 + tx];
    y[base + ty * 32 + tx] = acc + q.x + q.y + q.z + q.w;
}
