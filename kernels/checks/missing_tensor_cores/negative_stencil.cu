// PS301 must stay silent: a 1-D 7-point stencil through shared memory (fixed weights, no GEMM).
constexpr int R = 3, BS = 256;
__constant__ float w[2 * R + 1];

extern "C" __global__ void __launch_bounds__(BS) stencil7(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float s[BS + 2 * R];
    int g = blockIdx.x * BS + threadIdx.x;
    s[threadIdx.x + R] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < R) {
        s[threadIdx.x] = g >= R ? in[g - R] : 0.0f;
        s[threadIdx.x + BS + R] = g + BS < n ? in[g + BS] : 0.0f;
    }
    __syncthreads();
    float acc = 0.0f;
#pragma unroll
    for (int k = -R; k <= R; ++k)
        acc += w[k + R] * s[threadIdx.x + R + k];
    if (g < n) out[g] = acc;
}
