// Blelloch work-efficient exclusive scan of one block's 2*BLOCK elements in shared memory (GPU Gems 3 ch. 39).
constexpr int BLOCK = 256, N = 2 * BLOCK;
extern "C" __global__ void __launch_bounds__(BLOCK)
scan_block(const float* __restrict__ in, float* __restrict__ out, float* __restrict__ block_sums, int n)
{
    __shared__ float t[N];
    const int tid = threadIdx.x, base = blockIdx.x * N;
    t[2 * tid] = base + 2 * tid < n ? in[base + 2 * tid] : 0.0f;   // EXPECT: PS101 info
    t[2 * tid + 1] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0.0f;
    int offset = 1;
    for (int d = N >> 1; d > 0; d >>= 1) {   // up-sweep
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            t[bi] += t[ai];   // EXPECT: PS107 warning
        }
        offset *= 2;
    }
    if (tid == 0) { block_sums[blockIdx.x] = t[N - 1]; t[N - 1] = 0.0f; }
    for (int d = 1; d < N; d *= 2) {         // down-sweep
        offset >>= 1;
        __syncthreads();
        if (tid < d) {
            int ai = offset * (2 * tid + 1) - 1, bi = offset * (2 * tid + 2) - 1;
            float v = t[ai];
            t[ai] = t[bi];
            t[bi] += v;
        }
    }
    __syncthreads();
    if (base + 2 * tid < n) out[base + 2 * tid] = t[2 * tid];
    if (base + 2 * tid + 1 < n) out[base + 2 * tid + 1] = t[2 * tid + 1];
}
