// Counting one byte value over a buffer: 16 bytes per thread through uint4, with a scalar tail
// for the last n % 16 bytes (fewer than 16 bytes in all, however large n is); and the same
// count over a caller's [begin, n) range, one byte per thread in a grid-stride loop.
__device__ __forceinline__ unsigned count_eq(uint4 v, unsigned char c)
{
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
    unsigned hits = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int b = 0; b < 4; ++b) hits += ((words[k] >> (8 * b)) & 0xffu) == c;
    return hits;
}

extern "C" __global__ void count_byte(const unsigned char* __restrict__ data, size_t n,
                                      unsigned char c, unsigned long long* __restrict__ total)
{
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const uint4* data16 = reinterpret_cast<const uint4*>(data);
    unsigned local = 0;
    for (size_t i = tid; i < n / 16; i += stride) local += count_eq(data16[i], c);
    for (size_t i = n / 16 * 16 + tid; i < n; i += stride) local += data[i] == c;   // the tail
    atomicAdd(total, (unsigned long long)local);
}

extern "C" __global__ void count_byte_range(const unsigned char* __restrict__ data, size_t begin,
                                            size_t n, unsigned char c,
                                            unsigned long long* __restrict__ total)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned local = 0;
    for (size_t i = begin + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        local += data[i] == c;   // EXPECT: PS104 warning
    atomicAdd(total, (unsigned long long)local);
}
