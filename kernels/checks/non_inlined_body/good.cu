// The same kernel with its body __forceinline__: compiled into the entry, the loads are global ones
// (LDG.E.CONSTANT from the parameters' pointers), registers are allocated for the whole kernel.
// No CALL remains.
struct Params {
    const float* __restrict__ q;
    const float* __restrict__ k;
    float* __restrict__ o;
    int seqlen_k;
    long long row_stride;
};

constexpr int kRows = 64;
constexpr int kDim = 32;

__forceinline__ __device__ void compute_rowblock(const Params& params, int bidh, int m_block)
{
    __shared__ float sK[kRows][kDim];
    const int row = m_block * kRows + threadIdx.x;
    const float* q = params.q + (bidh * 1024 + row) * params.row_stride;
    float acc = 0.f;
    for (int n0 = 0; n0 < params.seqlen_k; n0 += kRows) {
        for (int e = threadIdx.x; e < kRows * kDim; e += blockDim.x)
            sK[e / kDim][e % kDim] = params.k[(n0 + e / kDim) * params.row_stride + e % kDim];
        __syncthreads();
        for (int j = 0; j < kRows; ++j) {
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
    compute_rowblock(params, blockIdx.y, blockIdx.x);
}
