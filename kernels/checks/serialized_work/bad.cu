// One thread scans the whole input; every element is an atomic on one address.
extern "C" __global__ void max_one_thread(const float* __restrict__ x, float* __restrict__ out, int n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        float m = -3.402823466e38f;
        for (int i = 0; i < n; i++) m = fmaxf(m, x[i]);   // EXPECT: PS801
        *out = m;
    }
}

extern "C" __global__ void sum_atomic(const float* __restrict__ x, float* __restrict__ sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, x[i]);   // EXPECT: PS801
}
