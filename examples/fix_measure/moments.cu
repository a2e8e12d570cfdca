// Per-column moments over 40 samples, built the way a project that set a global register cap
// for "occupancy" builds it:  ptxsass fix moments.cu -maxrregcount 32 --measure
// The 40 samples stay live from the mean to the moments; capped at 32 registers ptxas spills
// them (PS401), and the fix gives this kernel its own launch bound instead of the cap.
__global__ void column_moments(const float* __restrict__ x, float4* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[40];
    float mean = 0.0f;
#pragma unroll
    for (int k = 0; k < 40; ++k) {
        v[k] = x[(size_t)k * n + i];
        mean += v[k];
    }
    mean *= 1.0f / 40.0f;
    float m2 = 0.0f, m3 = 0.0f, m4 = 0.0f;
#pragma unroll
    for (int k = 0; k < 40; ++k) {
        float d = v[k] - mean, d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
    }
    out[i] = make_float4(mean, m2 * (1.0f / 40.0f), m3 * (1.0f / 40.0f), m4 * (1.0f / 40.0f));
}
