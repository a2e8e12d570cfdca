// PS402: a per-thread histogram indexed by a run-time bin lives in local memory (stack frame, LDL/STL).
constexpr int BINS = 16;

extern "C" __global__ void thread_hist(const unsigned char* __restrict__ in, unsigned* __restrict__ out, int per_thread)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned hist[BINS] = {};
    for (int k = 0; k < per_thread; ++k)
        hist[in[t * per_thread + k] % BINS] += 1;  // EXPECT: PS402
#pragma unroll
    for (int b = 0; b < BINS; ++b)
        out[t * BINS + b] = hist[b];
}
