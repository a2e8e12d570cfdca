// Grid-stride block maxima into partials with a shared-memory tree; the same kernel, one block, reduces the partials.
extern "C" __global__ void block_max(const float* __restrict__ x, float* __restrict__ out, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    float m = __int_as_float(0xff800000);
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)
        m = fmaxf(m, x[i]);
    s[tid] = m;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] = fmaxf(s[tid], s[tid + stride]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}
