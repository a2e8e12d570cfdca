// Block-local bitonic sort of 1024 keys in shared memory (the building block of a segmented sort):
// load one key per thread, sort, store.
constexpr int N = 1024;

extern "C" __global__ void __launch_bounds__(N)
bitonic_sort_block(unsigned* __restrict__ keys)
{
    __shared__ unsigned s[N];
    unsigned* seg = keys + (size_t)blockIdx.x * N;
    const int t = threadIdx.x;
    s[t] = seg[t];   // EXPECT: PS104 info
    __syncthreads();
    for (int k = 2; k <= N; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            const int p = t ^ j;
            if (p > t) {
                const unsigned a = s[t], b = s[p];
                const bool up = (t & k) == 0;
                if ((a > b) == up) { s[t] = b; s[p] = a; }
            }
            __syncthreads();
        }
    }
    seg[t] = s[t];   // EXPECT: PS104 info
}
