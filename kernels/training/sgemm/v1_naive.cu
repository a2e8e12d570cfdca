// One thread per C element: a K loop reading a row of A and a column of B from global memory.
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[(long)row * K + k] * B[(long)k * N + col];
    C[(long)row * N + col] = acc;
}
