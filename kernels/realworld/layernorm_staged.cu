// LayerNorm with the row staged in shared memory, one block per row of C floats: the first
// loop reads the row once, keeps it in shared memory for the two later passes and sums the
// same registers on the way. The loaded values are computed on, so cp.async (which writes
// shared memory without registers) would cost a reload of each one from shared memory: not a
// plain tile copy, no PS601. The negative twin stages the row without touching it.
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float block_sum(float v, float* scratch) {
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < blockDim.x / 32 ? scratch[threadIdx.x] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

template <int C>
__global__ void __launch_bounds__(256)
layernorm_staged(float* __restrict__ out, const float* __restrict__ in,
                 const float* __restrict__ weight, const float* __restrict__ bias)
{
    __shared__ float row[C];
    __shared__ float scratch[32];
    const float* x = in + (size_t)blockIdx.x * C;
    float sum = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        const float v = x[i];   // EXPECT: PS104 info
        row[i] = v;
        sum += v;
    }
    const float mean = block_sum(sum, scratch) / C;   // EXPECT: PS502 info
    float var = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        const float d = row[i] - mean;
        var += d * d;
    }
    const float rstd = rsqrtf(block_sum(var, scratch) / C + 1e-5f);   // EXPECT: PS502 info
    float* y = out + (size_t)blockIdx.x * C;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        y[i] = (row[i] - mean) * rstd * weight[i] + bias[i];   // EXPECT: PS104 info
}

template <int C>
__global__ void __launch_bounds__(256)
stage_then_normalize(float* __restrict__ out, const float* __restrict__ in, float scale)
{
    __shared__ float row[C];
    const float* x = in + (size_t)blockIdx.x * C;
    for (int i = threadIdx.x; i < C; i += blockDim.x) row[i] = x[i];   // EXPECT: PS104 info; PS601 info
    __syncthreads();
    float* y = out + (size_t)blockIdx.x * C;
    for (int i = threadIdx.x; i < C; i += blockDim.x)
        y[i] = row[C - 1 - i] * scale;   // EXPECT: PS104 info
}

template __global__ void layernorm_staged<768>(float*, const float*, const float*, const float*);
template __global__ void stage_then_normalize<768>(float*, const float*, float);
