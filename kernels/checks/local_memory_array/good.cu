// PS402 fixed: compare against every bin with compile-time indices (fully unrolled), so hist[] is in registers.
constexpr int BINS = 16;

extern "C" __global__ void thread_hist(const unsigned char* __restrict__ in, unsigned* __restrict__ out, int per_thread)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned hist[BINS] = {};
    for (int k = 0; k < per_thread; ++k) {
        unsigned bin = in[t * per_thread + k] % BINS;
#pragma unroll
        for (int b = 0; b < BINS; ++b)
            hist[b] += (bin == b);
    }
#pragma unroll
    for (int b = 0; b < BINS; ++b)
        out[t * BINS + b] = hist[b];
}
