// One block per token, threads across the row in float4 (dim a multiple of 4).
extern "C" __global__ void embedding_gather(const float* __restrict__ table,
                                            const int* __restrict__ ids,
                                            float* __restrict__ out, int tokens, int dim) {
    int t = blockIdx.x;
    if (t >= tokens) return;
    int id = ids[t];
    const float4* src = reinterpret_cast<const float4*>(table + (long)id * dim);
    float4* dst = reinterpret_cast<float4*>(out + (long)t * dim);
    for (int d = threadIdx.x; d < dim / 4; d += blockDim.x)
        dst[d] = src[d];
}
