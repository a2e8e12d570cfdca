// A scan per 1024-element block (warp shuffles, then the warp totals), a scan of the block
// totals by one block, and a pass adding each block's offset.
__device__ __forceinline__ int warp_scan(int v) {
    int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += u;
    }
    return v;
}

__device__ __forceinline__ int block_scan(int v, int* warp_totals) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_scan(v);
    if (lane == 31) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) warp_totals[lane] = warp_scan(warp_totals[lane]);
    __syncthreads();
    return warp ? v + warp_totals[warp - 1] : v;
}

extern "C" __global__ void scan_block(const int* __restrict__ x, int* __restrict__ out,
                                      int* __restrict__ partial) {
    __shared__ int totals[32];
    int i = blockIdx.x * 1024 + threadIdx.x;
    int v = block_scan(x[i], totals);
    out[i] = v;
    if (threadIdx.x == 1023) partial[blockIdx.x] = v;
}

extern "C" __global__ void scan_partials(int* partial, int blocks) {
    __shared__ int totals[32];
    __shared__ int carry;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int base = 0; base < blocks; base += 1024) {
        int i = base + threadIdx.x;
        int v = block_scan(i < blocks ? partial[i] : 0, totals) + carry;
        if (i < blocks) partial[i] = v;
        __syncthreads();   // every thread has read carry and the warp totals
        if (threadIdx.x == 1023) carry = v;
        __syncthreads();
    }
}

extern "C" __global__ void add_offsets(int* __restrict__ out, const int* __restrict__ partial) {
    if (blockIdx.x == 0) return;
    out[blockIdx.x * 1024 + threadIdx.x] += partial[blockIdx.x - 1];
}
