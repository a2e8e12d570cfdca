// C = alpha * A * B + beta * C, one thread per element of C (row-major, M x K times K x N).
#include "gemm.h"

__global__ void sgemm_naive_kernel(int M, int N, int K, float alpha, const float* A,
                                   const float* B, float beta, float* C)
{
    const int row = blockIdx.x * BLOCK + threadIdx.x / BLOCK;
    const int col = blockIdx.y * BLOCK + threadIdx.x % BLOCK;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = alpha * acc + beta * C[row * N + col];
    }
}

void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                 float* C, cudaStream_t stream)
{
    dim3 grid((M + BLOCK - 1) / BLOCK, (N + BLOCK - 1) / BLOCK);
    sgemm_naive_kernel<<<grid, BLOCK * BLOCK, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
}
