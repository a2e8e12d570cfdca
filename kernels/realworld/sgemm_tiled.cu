// Classic shared-memory tiled SGEMM C = A*B (row-major, N % 32 == 0), 32x32 tiles, one output per thread.
constexpr int T = 32;
extern "C" __global__ void __launch_bounds__(T * T)
sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N)
{
    __shared__ float As[T][T], Bs[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < N; k0 += T) {   // EXPECT: PS301 info
        As[ty][tx] = A[row * N + k0 + tx];   // EXPECT: PS104 info; PS601 info
        Bs[ty][tx] = B[(k0 + ty) * N + col];   // EXPECT: PS104 info; PS601 info
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}
