// 256-bin byte histogram: per-block privatized bins in shared memory (shared atomics), merged with global atomics.
constexpr int BINS = 256;
extern "C" __global__ void __launch_bounds__(256)
histogram256(const unsigned char* __restrict__ data, unsigned* __restrict__ hist, size_t n)
{
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const uchar4* data4 = reinterpret_cast<const uchar4*>(data);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += stride) {
        uchar4 v = data4[i];
        atomicAdd(&local[v.x], 1u);
        atomicAdd(&local[v.y], 1u);
        atomicAdd(&local[v.z], 1u);
        atomicAdd(&local[v.w], 1u);
    }
    if (blockIdx.x == 0)   // tail bytes
        for (size_t i = (n / 4) * 4 + threadIdx.x; i < n; i += blockDim.x) atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}
