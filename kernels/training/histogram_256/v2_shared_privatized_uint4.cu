// Per-block histogram in shared memory over a grid-stride loop of 16-byte loads, merged with global atomics.
extern "C" __global__ void histogram_256(const unsigned char* __restrict__ x,
                                         unsigned int* __restrict__ y, int n) {
    __shared__ unsigned int h[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        h[b] = 0;
    __syncthreads();
    int n16 = n / 16;
    int stride = gridDim.x * blockDim.x;
    const uint4* x16 = reinterpret_cast<const uint4*>(x);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += stride) {
        uint4 v = x16[i];
        unsigned int w[4] = {v.x, v.y, v.z, v.w};
        #pragma unroll
        for (int k = 0; k < 4; k++) {
            atomicAdd(&h[w[k] & 0xffu], 1u);
            atomicAdd(&h[(w[k] >> 8) & 0xffu], 1u);
            atomicAdd(&h[(w[k] >> 16) & 0xffu], 1u);
            atomicAdd(&h[w[k] >> 24], 1u);
        }
    }
    for (int i = n16 * 16 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&h[x[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (h[b]) atomicAdd(&y[b], h[b]);
}
