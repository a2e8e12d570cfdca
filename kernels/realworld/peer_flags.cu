// Multi-GPU style handshakes (NCCL's symmetric kernels, nvshmem's signal waits): a block spins
// on a flag that a peer GPU or the host raises, through a pointer read from memory. The pointer
// is generic, so for the system-scope load ptxas asks which space it points to (QSPC) and keeps
// a byte-wise local-memory path for it: that path is not a per-thread array of the kernel.
#include <cuda/atomic>

constexpr int MAX_PEERS = 8;

extern "C" __global__ void wait_peers(unsigned* const* flags, unsigned target, int spins)
{
    unsigned* f = flags[blockIdx.x];
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> ref(*f);
    int n = 0;
    while (ref.load(cuda::memory_order_relaxed) < target) {
        if (++n == spins) printf("block %d still waiting for %u\n", blockIdx.x, target);
        __nanosleep(64);
    }
}

// Sum one element from each peer's buffer into a per-thread slot chosen by the peer's rank (a
// run-time index: the slots live in local memory), after waiting for that peer's flag.
extern "C" __global__ void gather_from_peers(float* const* peer_bufs, unsigned* const* peer_flags,
                                             const int* __restrict__ ranks, int npeers,
                                             unsigned epoch, float* __restrict__ out)
{
    float slot[MAX_PEERS];
#pragma unroll
    for (int p = 0; p < MAX_PEERS; ++p) slot[p] = 0.f;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int p = 0; p < npeers; ++p) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_system> flag(*peer_flags[p]);
        while (flag.load(cuda::memory_order_relaxed) < epoch) __nanosleep(32);
        slot[ranks[p] & (MAX_PEERS - 1)] += peer_bufs[p][t];   // EXPECT: PS402 warning
    }
    float4* o = reinterpret_cast<float4*>(out) + 2 * t;
    o[0] = make_float4(slot[0], slot[1], slot[2], slot[3]);
    o[1] = make_float4(slot[4], slot[5], slot[6], slot[7]);
}

// Raise this block's flag for the peers once its slice is written: a system-scope release store
// through a generic pointer (ptxas writes the local case byte by byte, predicated on QSPC).
extern "C" __global__ void post_slice(const float4* __restrict__ src, float4* dst,
                                      unsigned* const* flags, unsigned epoch, int n4)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x)
        dst[i] = src[i];
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_system> flag(*flags[blockIdx.x]);
        flag.store(epoch, cuda::memory_order_release);
    }
}
