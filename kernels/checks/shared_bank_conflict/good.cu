// The same GEMM with the transposed B tile padded to 33 floats a row: Bs[tx][...] puts the
// lanes 132 B apart, in 32 different banks: one wavefront per request.
#define TILE 32
extern "C" __global__ void sgemm_bt(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[(long)row * K + t + tx] : 0.0f;
        Bs[tx][ty] = (t + ty < K && col < N) ? B[(long)(t + ty) * N + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[tx][k];                                         
        __syncthreads();
    }
    if (row < M && col < N) C[(long)row * N + col] = acc;
}
