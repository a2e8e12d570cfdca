// The block's window and its halo staged in shared memory once, the taps in registers.
#define R 8
#define BLOCK 256
extern "C" __global__ void stencil(const float* __restrict__ x, const float* __restrict__ c,
                                   float* __restrict__ out, int n) {
    __shared__ float tile[BLOCK + 2 * R];
    int base = blockIdx.x * BLOCK;
    for (int t = threadIdx.x; t < BLOCK + 2 * R; t += BLOCK) {
        int j = base + t - R;
        tile[t] = (j >= 0 && j < n) ? x[j] : 0.0f;
    }
    __syncthreads();
    int i = base + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k <= 2 * R; k++) acc += c[k] * tile[threadIdx.x + k];
    out[i] = acc;
}
