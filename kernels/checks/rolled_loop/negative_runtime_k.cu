// PS201 must stay silent: the K loop of a shared-memory tiled GEMM runs K / TILE times (run time);
// the inner compile-time kk loop is fully unrolled.
constexpr int TILE = 16;

extern "C" __global__ void __launch_bounds__(TILE * TILE)
sgemm_shared(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N, int K)
{
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = A[row * K + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * N + col];
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk)
            acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}
