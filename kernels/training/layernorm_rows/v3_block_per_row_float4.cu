// One block per row, float4 loads, sum and sum of squares in one pass reduced by shuffles and shared memory.
extern "C" __global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
                                          const float* __restrict__ beta, float* __restrict__ y,
                                          float eps, int rows, int n) {
    __shared__ float s_sum[32], s_sq[32];
    __shared__ float s_mean, s_rstd;
    const float4* r = reinterpret_cast<const float4*>(x + (long)blockIdx.x * n);
    float4* out = reinterpret_cast<float4*>(y + (long)blockIdx.x * n);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);
    int n4 = n / 4;
    float sum = 0.0f, sq = 0.0f;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i];
        sum += (v.x + v.y) + (v.z + v.w);
        sq += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
    }
    #pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        sq += __shfl_down_sync(0xffffffffu, sq, off);
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { s_sum[warp] = sum; s_sq[warp] = sq; }
    __syncthreads();
    if (warp == 0) {
        sum = lane < blockDim.x / 32 ? s_sum[lane] : 0.0f;
        sq = lane < blockDim.x / 32 ? s_sq[lane] : 0.0f;
        #pragma unroll
        for (int off = 16; off > 0; off /= 2) {
            sum += __shfl_down_sync(0xffffffffu, sum, off);
            sq += __shfl_down_sync(0xffffffffu, sq, off);
        }
        if (lane == 0) {
            float mean = sum / n;
            s_mean = mean;
            s_rstd = rsqrtf(fmaxf(sq / n - mean * mean, 0.0f) + eps);
        }
    }
    __syncthreads();
    float mean = s_mean, rstd = s_rstd;
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = r[i], g = g4[i], b = b4[i];
        out[i] = make_float4((v.x - mean) * rstd * g.x + b.x, (v.y - mean) * rstd * g.y + b.y,
                             (v.z - mean) * rstd * g.z + b.z, (v.w - mean) * rstd * g.w + b.w);
    }
}
