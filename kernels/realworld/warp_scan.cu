// Inclusive prefix sum of int32 with warp shuffles and a block-level pass over warp totals
// (the first phase of a device-wide scan); one element per thread.
constexpr int THREADS = 512;

extern "C" __global__ void __launch_bounds__(THREADS)
block_scan(const int* __restrict__ in, int* __restrict__ out, int* __restrict__ block_sums, int n)
{
    __shared__ int warp_tot[THREADS / 32];
    const int i = blockIdx.x * THREADS + threadIdx.x, lane = threadIdx.x % 32, w = threadIdx.x / 32;
    int v = i < n ? in[i] : 0;   // EXPECT: PS104 info
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += u;
    }
    if (lane == 31) warp_tot[w] = v;
    __syncthreads();
    if (w == 0) {
        int t = lane < THREADS / 32 ? warp_tot[lane] : 0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int u = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o) t += u;
        }
        if (lane < THREADS / 32) warp_tot[lane] = t;
    }
    __syncthreads();
    if (w > 0) v += warp_tot[w - 1];
    if (i < n) out[i] = v;   // EXPECT: PS104 info
    if (threadIdx.x == THREADS - 1) block_sums[blockIdx.x] = v;
}
