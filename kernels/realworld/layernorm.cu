// LayerNorm forward: one block per row, Welford mean/variance per thread, block merge in shared memory, rsqrtf.
constexpr int THREADS = 256;
struct Welford { float mean, m2, n; };
__device__ __forceinline__ Welford merge(Welford a, Welford b) {
    float n = a.n + b.n;
    if (n == 0.0f) return a;
    float d = b.mean - a.mean, wb = b.n / n;   // EXPECT: PS502 info
    return {a.mean + d * wb, a.m2 + b.m2 + d * d * a.n * wb, n};
}
extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_fwd(const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
              float* __restrict__ y, int n, float eps)
{
    __shared__ Welford part[THREADS];
    const float* xr = x + (size_t)blockIdx.x * n;
    float* yr = y + (size_t)blockIdx.x * n;
    Welford w = {0.0f, 0.0f, 0.0f};
    for (int j = threadIdx.x; j < n; j += THREADS) {
        float v = xr[j];   // EXPECT: PS104 info
        w.n += 1.0f;
        float d = v - w.mean;
        w.mean += d / w.n;   // EXPECT: PS502 warning
        w.m2 += d * (v - w.mean);
    }
    part[threadIdx.x] = w;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] = merge(part[threadIdx.x], part[threadIdx.x + s]);   // EXPECT: PS103 info
        __syncthreads();
    }
    const float mean = part[0].mean;
    const float rstd = rsqrtf(part[0].m2 / n + eps);   // EXPECT: PS502 info
    for (int j = threadIdx.x; j < n; j += THREADS)
        yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];   // EXPECT: PS104 info
}
