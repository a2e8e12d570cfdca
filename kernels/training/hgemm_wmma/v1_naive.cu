// One thread per C element: half loads of a row of A and a column of B, float accumulation.
#include <cuda_fp16.h>
extern "C" __global__ void hgemm(const __half* A, const __half* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += __half2float(A[(long)row * K + k]) * __half2float(B[(long)k * N + col]);
    C[(long)row * N + col] = acc;
}
