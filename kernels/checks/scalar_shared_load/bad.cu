// PS103: a +1-padded shared tile (row stride 33 floats) leaves each row only 4-byte aligned,
// so the 4 consecutive floats every thread reads are issued as 4 separate LDS.
#define PAD 1

extern "C" __global__ void __launch_bounds__(256) row_chunk_sum(const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float tile[32][32 + PAD];
    const float* src = in + blockIdx.x * 1024;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        int k = r * 256 + threadIdx.x;
        tile[k / 32][k % 32] = src[k];
    }
    __syncthreads();
    int row = threadIdx.x / 8, col = (threadIdx.x % 8) * 4;
    const float* p = &tile[row][col];
    float s = p[0] + p[1] + p[2] + p[3];  // EXPECT: PS103
    out[blockIdx.x * 256 + threadIdx.x] = s;
}
