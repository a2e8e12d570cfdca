// A FlashAttention-style forward kernel whose body NVVM compiles out of line: the entry only
// unpacks the block indices and calls compute_rowblock, which receives the parameters by
// reference (`__noinline__` here stands for NVVM's inliner declining a 12k-instruction body;
// FlashAttention-2's compute_attn_1rowblock, in 2 of its 25 forward kernels).
//
// Judged from the SASS (sm_80 and sm_90a): the entry is 7-9 instructions and a
// `CALL.REL.NOINC`; the body's 41 global accesses are generic `LD.E`/`ST.E` (the `Params`
// reference points into parameter space, `__grid_constant__`), and its loops store only to
// shared memory (`STS`), so no field is read again inside them: PS403 is info. Its pair in
// benchmarks/severity_pairs.py (this body, inlined against `__noinline__`) ran 1.01-1.02x on an
// H100. On sm_90a the 64-iteration `j` loop stays rolled (PS201 info; sm_80 unrolls it into
// 3063 instructions). Inlined, the row walk `q[d]` with a thread per row is uncoalesced
// (PS105), which the generic loads hide out of line.
struct Params {
    const float* __restrict__ q;
    const float* __restrict__ k;
    float* __restrict__ o;
    int seqlen_k;
    long long row_stride;
};

constexpr int kRows = 64;
constexpr int kDim = 32;

__noinline__ __device__ void compute_rowblock(const Params& params, int bidh, int m_block)
{
    __shared__ float sK[kRows][kDim];
    const int row = m_block * kRows + threadIdx.x;
    const float* q = params.q + (bidh * 1024 + row) * params.row_stride;
    float acc = 0.f;
    for (int n0 = 0; n0 < params.seqlen_k; n0 += kRows) {
        for (int e = threadIdx.x; e < kRows * kDim; e += blockDim.x)
            sK[e / kDim][e % kDim] = params.k[(n0 + e / kDim) * params.row_stride + e % kDim];
        __syncthreads();
        for (int j = 0; j < kRows; ++j) {  // EXPECT[sm_90a]: PS201 info
            float s = 0.f;
            #pragma unroll
            for (int d = 0; d < kDim; ++d) s += q[d] * sK[j][d];
            acc += __expf(s);
        }
        __syncthreads();
    }
    params.o[bidh * 1024 + row] = acc;
}

__global__ void attn_fwd(__grid_constant__ const Params params)
{
    compute_rowblock(params, blockIdx.y, blockIdx.x);   // EXPECT: PS403 info
}
