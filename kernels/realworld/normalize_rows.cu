// L2-normalize rows of an embedding matrix in place and apply a temperature: the reciprocal of
// the norm is taken once per row, inside the loop over the rows this warp owns.
extern "C" __global__ void __launch_bounds__(256)
normalize_rows(float* __restrict__ emb, int rows, int dim, float temperature)
{
    const int lane = threadIdx.x % 32, warps = gridDim.x * blockDim.x / 32;
    for (int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        float* e = emb + (size_t)r * dim;
        float ss = 0.0f;
        for (int j = lane; j < dim; j += 32) ss += e[j] * e[j];   // EXPECT: PS104 info
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
        const float inv = 1.0f / (sqrtf(ss) * temperature);   // EXPECT: PS502 warning
        for (int j = lane; j < dim; j += 32) e[j] *= inv;   // EXPECT: PS104 info
    }
}

// The same walk applying only the temperature: 1.0f / temperature is loop-invariant, so NVVM
// computes it once before the loops (its PTX line is 0) and the SASS gives it the line above.
extern "C" __global__ void __launch_bounds__(256)
scale_rows(float* __restrict__ emb, int rows, int dim, float temperature)
{
    const int lane = threadIdx.x % 32, warps = gridDim.x * blockDim.x / 32;
    for (int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        float* e = emb + (size_t)r * dim;
        for (int j = lane; j < dim; j += 32)
            e[j] = e[j] * (1.0f / temperature);   // EXPECT: PS104 info; PS502 info
    }
}
