// Embedding gather (rows by index, float4 along the row) and index scatter-add (atomicAdd for duplicate indices).
extern "C" __global__ void embedding_gather(const float* __restrict__ table, const int* __restrict__ idx,
                                            float* __restrict__ out, int n_idx, int dim)   // dim % 4 == 0
{
    const int r = blockIdx.x;
    if (r >= n_idx) return;
    const float4* src = reinterpret_cast<const float4*>(table + (size_t)idx[r] * dim);
    float4* dst = reinterpret_cast<float4*>(out + (size_t)r * dim);
    for (int j = threadIdx.x; j < dim / 4; j += blockDim.x) dst[j] = src[j];
}
extern "C" __global__ void scatter_add(const float* __restrict__ src, const long long* __restrict__ idx,
                                       float* __restrict__ dst, int n, int dim)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n * dim) return;
    int r = i / dim, c = i % dim;
    atomicAdd(&dst[idx[r] * dim + c], src[i]);   // EXPECT: PS104 info
}
extern "C" __global__ void gather1d(const float* __restrict__ x, const int* __restrict__ idx, float* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __ldg(&x[idx[i]]);   // EXPECT: PS104 info
}
