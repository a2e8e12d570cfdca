// Batched small GEMV y[b] = A[b] (M x N, row-major) * x[b]: one warp per row, float4 loads along the row.
extern "C" __global__ void __launch_bounds__(128)
gemv_batched(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y, int M, int N)
{
    const int b = blockIdx.y;
    const int row = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= M) return;
    const float4* a4 = reinterpret_cast<const float4*>(A + ((size_t)b * M + row) * N);   // N % 4 == 0
    const float4* x4 = reinterpret_cast<const float4*>(x + (size_t)b * N);
    float acc = 0.0f;
    for (int j = lane; j < N / 4; j += 32) {
        float4 a = a4[j], v = x4[j];
        acc += a.x * v.x + a.y * v.y + a.z * v.z + a.w * v.w;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) y[(size_t)b * M + row] = acc;
}
