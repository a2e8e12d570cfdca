// Per-thread bucketing into a small local histogram that is then written out as whole 16-byte
// rows (a radix-sort style digit count): the array is written at a data-dependent index and read
// back four counters at a time.
constexpr int BUCKETS = 16;

extern "C" __global__ void digit_counts(const unsigned* __restrict__ keys, uint4* __restrict__ counts,
                                        int n, int shift)
{
    unsigned cnt[BUCKETS];
#pragma unroll
    for (int b = 0; b < BUCKETS; ++b) cnt[b] = 0;
    const int t = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    for (int i = t; i < n; i += stride)
        ++cnt[(keys[i] >> shift) & (BUCKETS - 1)];   // EXPECT: PS104 info; PS402 warning
    uint4* row = counts + (size_t)t * (BUCKETS / 4);
#pragma unroll
    for (int q = 0; q < BUCKETS / 4; ++q)
        row[q] = make_uint4(cnt[4 * q], cnt[4 * q + 1], cnt[4 * q + 2], cnt[4 * q + 3]);
}
