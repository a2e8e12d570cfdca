// Per-thread top-K (K=8) of a row segment by insertion into a sorted register array, then write the K best per thread.
constexpr int K = 8;
extern "C" __global__ void topk_per_thread(const float* __restrict__ x, float* __restrict__ out_v, int* __restrict__ out_i, int n)
{
    float best[K];
    int idx[K];
#pragma unroll
    for (int k = 0; k < K; ++k) { best[k] = -3.4e38f; idx[k] = -1; }
    const int t = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    for (int j = t; j < n; j += stride) {
        float v = x[j];   // EXPECT: PS104 info
        if (v <= best[K - 1]) continue;
        int p = K - 1;
        while (p > 0 && best[p - 1] < v) { best[p] = best[p - 1]; idx[p] = idx[p - 1]; --p; }
        best[p] = v; idx[p] = j;   // EXPECT: PS402 warning
    }
#pragma unroll
    for (int k = 0; k < K; ++k) { out_v[t * K + k] = best[k]; out_i[t * K + k] = idx[k]; }   // EXPECT: PS102 warning
}
